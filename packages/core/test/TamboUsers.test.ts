import { type RecordedRequest, Script } from "@tambo-effect/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as ClientState from "../src/ClientState.js"
import * as TamboUsers from "../src/TamboUsers.js"
import * as Tool from "../src/Tool.js"
import { useServer } from "./helpers.js"
import { eventually, gatedMcpServer } from "./mcp/server.js"
import { calculator } from "./mcp/tools.js"

const server = useServer()

const options = (extra: Partial<TamboUsers.Options> = {}): TamboUsers.Options => ({
  apiKey: server().apiKey,
  tamboUrl: server().url,
  maxRetries: 0,
  ...extra
})

/** An unsigned JWT for `sub` that expires at `exp` (seconds): the testing server exchanges it without verifying it. */
const jwtFor = (sub: string, exp: number) =>
  [
    Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url"),
    Buffer.from(JSON.stringify({ sub, iss: "https://issuer.example", exp })).toString("base64url"),
    "signature"
  ].join(".")

/** The expiry of the access token a request carried: it tells which user token it was exchanged for. */
const bearerExpiry = (request: RecordedRequest): number =>
  JSON.parse(Buffer.from(request.headers.authorization!.replace(/^Bearer /, "").split(".")[1]!, "base64url").toString("utf8")).exp

/** The messages of the user's current thread, as their service holds them. */
const messagesOf = (users: TamboUsers.TamboUsers.Service, user: TamboUsers.User) =>
  Effect.scoped(Effect.flatMap(users.get(user), (tambo) =>
    Effect.map(tambo.state, (state) => ClientState.getMessages(state, state.currentThreadId).map((m) => m.role))))

describe("TamboUsers", () => {
  it.scoped("each user has a service of their own: their runs, their threads, their store", () =>
    Effect.gen(function*() {
      server().setScript((request) => [Script.text(`re: ${request.text}`)])
      const users = yield* TamboUsers.make(options())
      yield* Stream.runDrain(users.run("alice", "hi from alice"))
      yield* Stream.runDrain(users.run("bob", "hi from bob"))
      expect([...(yield* users.users)].sort()).toEqual(["alice", "bob"])

      const threadsOf = (userKey: string) =>
        Effect.scoped(Effect.flatMap(users.get(userKey), (tambo) => tambo.listThreads()))
      const alice = yield* threadsOf("alice")
      const bob = yield* threadsOf("bob")
      expect(alice.threads).toHaveLength(1)
      expect(bob.threads).toHaveLength(1)
      expect(alice.threads[0]!.id).not.toBe(bob.threads[0]!.id)
      const runs = server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs"))
      expect(runs).toHaveLength(2)
    }))

  it.scoped("a user's service is shared while it lives: a second run goes on the thread the first one made", () =>
    Effect.gen(function*() {
      server().setScript([Script.text("ok")])
      const users = yield* TamboUsers.make(options())
      const first = yield* Effect.scoped(users.get("alice"))
      yield* Stream.runDrain(users.run("alice", "one"))
      yield* Stream.runDrain(users.run("alice", "two"))
      expect(yield* Effect.scoped(users.get("alice"))).toBe(first)
      expect(yield* messagesOf(users, "alice")).toEqual(["user", "assistant", "user", "assistant"])
    }))

  it.scoped("a run that fails or drops mid-stream leaves its user's service usable: the next run goes on the same thread", () =>
    Effect.gen(function*() {
      const users = yield* TamboUsers.make(options())
      server().setScript([Script.text("first")])
      yield* Stream.runDrain(users.run("alice", "one"))
      const service = yield* Effect.scoped(users.get("alice"))
      server().setScript([Script.httpError(500)])
      expect(yield* Effect.flip(Stream.runDrain(users.run("alice", "two")))).toMatchObject({ _tag: "ApiError", status: 500 })
      server().setScript([Script.text("half", { close: false }), Script.drop()])
      expect((yield* Effect.flip(Stream.runDrain(users.run("alice", "three"))))._tag).toBe("TransportError")
      server().setScript([Script.text("fourth")])
      yield* Stream.runDrain(users.run("alice", "four"))
      expect(yield* Effect.scoped(users.get("alice"))).toBe(service)
      // The store holds what the server stored: the refused run left nothing, the dropped one its message.
      const thread = yield* Effect.scoped(Effect.flatMap(users.get("alice"), (tambo) => tambo.getThread()))
      const remote = yield* Effect.scoped(Effect.flatMap(users.get("alice"), (tambo) => tambo.fetchThread(thread.pipe(Option.getOrThrow).id)))
      expect(Option.getOrThrow(thread).messages.map((m) => m.id)).toEqual(remote.messages.map((m) => m.id))
    }))

  it.scoped("a service unused for idleTimeToLive is released; the user's next call gets a new one", () =>
    Effect.gen(function*() {
      server().setScript([Script.text("ok")])
      const users = yield* TamboUsers.make(options({ idleTimeToLive: "1 minute" }))
      yield* Stream.runDrain(users.run("alice", "one"))
      const before = yield* Effect.scoped(users.get("alice"))
      yield* TestClock.adjust("59 seconds")
      expect(yield* users.users).toEqual(["alice"])
      yield* TestClock.adjust("1 second")
      expect(yield* users.users).toEqual([])
      expect(yield* messagesOf(users, "alice")).toEqual([])
      expect(yield* Effect.scoped(users.get("alice"))).not.toBe(before)
    }))

  it.scoped("a run holds its user's service: invalidated or idle meanwhile, it finishes; then the service is released", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      const wait = Tool.make({
        name: "wait",
        description: "Waits to be released",
        input: Schema.Struct({}),
        execute: () => Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release))
      })
      server().setScript((request) =>
        request.toolResults.length === 0 ? [Script.toolCall("wait", {})] : [Script.text("done")]
      )
      const users = yield* TamboUsers.make(options({ tools: [wait], idleTimeToLive: "1 minute" }))
      const run = yield* Effect.fork(Stream.runCollect(users.run("alice", "wait for it")))
      yield* Deferred.await(started)
      yield* users.invalidate("alice")
      yield* TestClock.adjust("10 minutes")
      expect(yield* users.users).toEqual([])
      yield* Deferred.succeed(release, undefined)
      const events = yield* Fiber.join(run)
      expect(Array.from(events, (e) => e.event.type)).toContain("RUN_FINISHED")
      // A new service for the user: the one the run held was let go.
      expect(yield* messagesOf(users, "alice")).toEqual([])
    }))

  it.scopedLive("a user acting with a token: their service exchanges it, and takes a rotated one in place", () =>
    Effect.gen(function*() {
      server().setScript((request) => [Script.text(`re: ${request.text}`)])
      const nowSeconds = Math.floor(Date.now() / 1000)
      const first = jwtFor("carol", nowSeconds + 1_000)
      const rotated = jwtFor("carol", nowSeconds + 2_000)
      const users = yield* TamboUsers.make(options())
      yield* Stream.runDrain(users.run({ id: "carol", userToken: first }, "one"))
      const service = yield* Effect.scoped(users.get({ id: "carol", userToken: first }))
      yield* Stream.runDrain(users.run({ id: "carol", userToken: rotated }, "two"))
      // The same service, now with the rotated token: the same user, on the same thread.
      expect(yield* Effect.scoped(users.get({ id: "carol", userToken: rotated }))).toBe(service)
      expect(yield* messagesOf(users, { id: "carol", userToken: rotated })).toEqual(["user", "assistant", "user", "assistant"])
      const exchanged = server().requests.filter((r) => r.path === "/oauth/token")
        .map((r) => (r.body as { readonly subject_token: string }).subject_token)
      expect(exchanged).toEqual([first, rotated])
      const runs = server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs"))
      expect(runs.map((r) => bearerExpiry(r))).toEqual([nowSeconds + 1_000, nowSeconds + 2_000])
      // A user key and a token user of the same name are two users.
      yield* Stream.runDrain(users.run("carol", "three"))
      expect(yield* users.users).toEqual([{ id: "carol" }, "carol"])
      yield* users.invalidate({ id: "carol" })
      expect(yield* users.users).toEqual(["carol"])
      expect(yield* Effect.flip(Effect.scoped(users.get({ id: "carol", userToken: "" })))).toMatchObject({
        _tag: "ConfigError",
        reason: "InvalidOption"
      })
    }))

  it.effect("shared options that no user could use fail at once: a missing API key, an invalid tool", () =>
    Effect.gen(function*() {
      const noKey = yield* Effect.flip(Effect.scoped(TamboUsers.make({ apiKey: "", tamboUrl: "http://127.0.0.1:1" })))
      expect(noKey).toMatchObject({ _tag: "ConfigError", reason: "MissingApiKey" })
      const badTool = yield* Effect.flip(Effect.scoped(TamboUsers.make(options({
        tools: [{ name: "bad name!", description: "x", inputSchema: Schema.Struct({}), tool: () => "x" }]
      }))))
      expect(badTool._tag).toBe("ToolDefinitionError")
    }))

  it.scoped("an empty user key fails with a ConfigError, and leaves no service", () =>
    Effect.gen(function*() {
      const users = yield* TamboUsers.make(options())
      const error = yield* Effect.flip(Effect.scoped(users.get(" ")))
      expect(error).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
      expect(yield* Effect.flip(Stream.runDrain(users.run("", "hi")))).toMatchObject({ _tag: "ConfigError" })
      expect(yield* users.users).toEqual([])
    }))

  it.live("closing the scope interrupts a streaming run, which is cancelled on the server before the close ends", () =>
    Effect.gen(function*() {
      server().setScript([Script.text("a reply that stops half", { close: false }), Script.hang()])
      const scope = yield* Scope.make()
      const users = yield* Scope.extend(TamboUsers.make(options()), scope)
      const firstText = yield* Deferred.make<void>()
      const run = yield* Effect.fork(Stream.runDrain(users.run("alice", "talk").pipe(
        Stream.tap((e) => e.event.type === "TEXT_MESSAGE_CONTENT" ? Deferred.succeed(firstText, undefined) : Effect.void)
      )))
      yield* Deferred.await(firstText)
      yield* Scope.close(scope, Exit.void)
      // Already sent when the close ends: it waited for the run to wind down.
      expect(server().requests.filter((r) => r.method === "DELETE" || r.path.endsWith("/cancel"))).toHaveLength(1)
      expect(Exit.isInterrupted(yield* Fiber.await(run))).toBe(true)
    }))

  it.scopedLive("a user's service with an MCP connection is released, invalidated or closed: its session ends on the server", () =>
    Effect.gen(function*() {
      const mcp = yield* gatedMcpServer(calculator)
      const scope = yield* Scope.make()
      const users = yield* Scope.extend(TamboUsers.make(options({ mcpServers: [{ url: mcp.url }] })), scope)
      yield* Effect.scoped(users.get("ann"))
      yield* eventually("ann's session listed", () => mcp.listed() === 1)
      yield* users.invalidate("ann")
      expect(mcp.deletes()).toBe(1)
      yield* Effect.scoped(users.get("ben"))
      yield* eventually("ben's session listed", () => mcp.listed() === 2)
      yield* Scope.close(scope, Exit.void)
      expect(mcp.deletes()).toBe(2)
    }), 20_000)

  it.scopedLive("closing the pool ends its users' MCP sessions together: a server slow to end one holds up no other", () =>
    Effect.gen(function*() {
      const mcp = yield* gatedMcpServer(calculator)
      const scope = yield* Scope.make()
      const users = yield* Scope.extend(TamboUsers.make(options({ mcpServers: [{ url: mcp.url }] })), scope)
      yield* Effect.scoped(users.get("ann"))
      yield* Effect.scoped(users.get("ben"))
      yield* eventually("both sessions listed", () => mcp.listed() === 2)
      mcp.hold()
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      yield* eventually("both sessions' DELETEs held", () => mcp.held() === 2)
      // The second was sent while the first was held, not once its client gave up waiting for it.
      expect(mcp.abandoned()).toBe(0)
      expect(closing.unsafePoll()).toBeNull()
      mcp.release()
      yield* Fiber.join(closing)
      yield* eventually("both sessions ended", () => mcp.server.sessions.closed === 2)
    }), 20_000)

  it.effect("closing the scope releases every user's service: a run in flight is interrupted", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const hang = Tool.make({
        name: "hang",
        description: "Never answers",
        input: Schema.Struct({}),
        execute: () => Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)
      })
      server().setScript([Script.toolCall("hang", {})])
      const scope = yield* Scope.make()
      const users = yield* Scope.extend(TamboUsers.make(options({ tools: [hang] })), scope)
      const run = yield* Effect.fork(Stream.runDrain(users.run("alice", "hang")))
      yield* Deferred.await(started)
      yield* Scope.close(scope, Exit.void)
      const exit = yield* Fiber.await(run)
      expect(Exit.isInterrupted(exit)).toBe(true)
    }))
})

describe("TamboUsers with maxUsers", () => {
  const sorted = (users: TamboUsers.TamboUsers.Service) => Effect.map(users.users, (names) => [...names].sort())

  it.scoped("a new user past the bound takes the place of the user idle the longest; that user starts afresh", () =>
    Effect.gen(function*() {
      server().setScript([Script.text("ok")])
      const users = yield* TamboUsers.make(options({ maxUsers: 2 }))
      const ann = yield* Effect.scoped(users.get("ann"))
      yield* Stream.runDrain(users.run("ann", "one"))
      yield* Stream.runDrain(users.run("ben", "one"))
      // ann was used last: ben is the one idle the longest.
      yield* Stream.runDrain(users.run("ann", "two"))
      yield* Stream.runDrain(users.run("cy", "one"))
      expect(yield* sorted(users)).toEqual(["ann", "cy"])
      expect(yield* Effect.scoped(users.get("ann"))).toBe(ann)
      // ben comes back with a new, empty service, in the place of the one idle the longest (cy).
      expect(yield* messagesOf(users, "ben")).toEqual([])
      expect(yield* sorted(users)).toEqual(["ann", "ben"])
    }))

  it.scoped("while every service is in use a new user waits, and gets in once one is let go", () =>
    Effect.gen(function*() {
      const users = yield* TamboUsers.make(options({ maxUsers: 2 }))
      const annScope = yield* Scope.make()
      yield* Scope.extend(users.get("ann"), annScope)
      const benScope = yield* Scope.make()
      yield* Scope.extend(users.get("ben"), benScope)
      const cy = yield* Effect.fork(Effect.scoped(users.get("cy")))
      yield* Effect.yieldNow({ priority: 1_000 })
      expect(cy.unsafePoll()).toBeNull()
      expect(yield* sorted(users)).toEqual(["ann", "ben"])
      yield* Scope.close(annScope, Exit.void)
      yield* Fiber.join(cy)
      expect(yield* sorted(users)).toEqual(["ben", "cy"])
      yield* Scope.close(benScope, Exit.void)
    }))

  it.scoped("a waiting call that gives up takes no room: the bound holds for the next user", () =>
    Effect.gen(function*() {
      const users = yield* TamboUsers.make(options({ maxUsers: 2 }))
      const held = yield* Scope.make()
      yield* Scope.extend(Effect.all([users.get("ann"), users.get("ben")]), held)
      const cy = yield* Effect.fork(Effect.scoped(users.get("cy")))
      yield* Effect.yieldNow({ priority: 1_000 })
      yield* Fiber.interrupt(cy)
      yield* Scope.close(held, Exit.void)
      yield* Effect.scoped(users.get("dee"))
      expect((yield* users.users).length).toBe(2)
      expect(yield* sorted(users)).toContain("dee")
    }))

  it.scoped("a service invalidated while in use counts until it is let go: the user's new one waits for it", () =>
    Effect.gen(function*() {
      const users = yield* TamboUsers.make(options({ maxUsers: 1 }))
      const held = yield* Scope.make()
      const old = yield* Scope.extend(users.get("ann"), held)
      yield* users.invalidate("ann")
      const again = yield* Effect.fork(Effect.scoped(users.get("ann")))
      yield* Effect.yieldNow({ priority: 1_000 })
      expect(again.unsafePoll()).toBeNull()
      yield* Scope.close(held, Exit.void)
      expect(yield* Fiber.join(again)).not.toBe(old)
      expect(yield* users.users).toEqual(["ann"])
    }))

  it.scopedLive("a service still closing counts until it is closed: its user's next call waits for it", () =>
    Effect.gen(function*() {
      // The user's MCP session ends with a DELETE, which the server holds: the old service is closing meanwhile.
      const mcp = yield* gatedMcpServer(calculator)
      const users = yield* TamboUsers.make(options({ maxUsers: 1, mcpServers: [{ url: mcp.url }] }))
      const old = yield* Effect.scoped(users.get("ann"))
      yield* eventually("ann's session listed", () => mcp.listed() === 1)
      mcp.hold()
      const invalidated = yield* Effect.fork(users.invalidate("ann"))
      yield* eventually("ann's session closing", () => mcp.held() === 1)
      const again = yield* Effect.fork(Effect.scoped(users.get("ann")))
      for (let i = 0; i < 50 && again.unsafePoll() === null; i++) yield* Effect.yieldNow()
      expect(again.unsafePoll()).toBeNull()
      mcp.release()
      yield* Fiber.join(invalidated)
      expect(yield* Fiber.join(again)).not.toBe(old)
      expect(yield* users.users).toEqual(["ann"])
    }), 20_000)

  it.scopedLive("two calls for a new user while the user they evict is closing evict one user, not two", () =>
    Effect.gen(function*() {
      const mcp = yield* gatedMcpServer(calculator)
      const users = yield* TamboUsers.make(options({ maxUsers: 2, mcpServers: [{ url: mcp.url }] }))
      yield* Effect.scoped(users.get("ann"))
      yield* Effect.scoped(users.get("ben"))
      yield* eventually("both sessions listed", () => mcp.listed() === 2)
      mcp.hold()
      // cy's first call evicts ann, the user idle the longest, and waits while her service closes.
      const first = yield* Effect.fork(Effect.scoped(users.get("cy")))
      yield* eventually("ann's session closing", () => mcp.held() === 1)
      const second = yield* Effect.fork(Effect.scoped(users.get("cy")))
      for (let i = 0; i < 50 && second.unsafePoll() === null; i++) yield* Effect.yieldNow()
      mcp.release()
      const [a, b] = [yield* Fiber.join(first), yield* Fiber.join(second)]
      expect(a).toBe(b)
      expect(yield* sorted(users)).toEqual(["ben", "cy"])
      expect(mcp.deletes()).toBe(1)
    }), 20_000)

  it.effect("maxUsers that is not a positive integer is a ConfigError", () =>
    Effect.gen(function*() {
      for (const maxUsers of [0, -1, 1.5, Number.NaN]) {
        const error = yield* Effect.flip(Effect.scoped(TamboUsers.make(options({ maxUsers }))))
        expect(error).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
      }
    }))
})
