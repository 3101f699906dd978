import { HoldingProxy, HostileServer, Script, startTestServer, type RecordedRequest } from "@tambo-effect/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as HashMap from "effect/HashMap"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Auth from "../src/Auth.js"
import * as Tambo from "../src/Tambo.js"
import * as ThreadStore from "../src/ThreadStore.js"
import * as Tool from "../src/Tool.js"
import type { Credentials } from "../src/TamboTransport.js"
import { contextKeyOf, fields, runAll, serverShape, shape, suspended, until, useServer } from "./helpers.js"
import { storeEqualsServer } from "./storeEqualsServer.js"

/** The server's clock runs this far ahead of the client's: how tests expire tokens server-side. */
const serverClock = { offsetMillis: 0 }
const server = useServer({ now: () => Date.now() + serverClock.offsetMillis })

const USER_TOKEN = "opaque-subject-token-of-alice"

const tokenLayer = (userToken: string, options: Partial<Tambo.Options> = {}) =>
  Tambo.layer({ apiKey: server().apiKey, tamboUrl: server().url, userToken, maxRetries: 0, ...options })


const exchanges = () => server().requests.filter((r) => r.path === "/oauth/token")
const apiCalls = () => server().requests.filter((r) => r.path !== "/oauth/token")
const paths = () => server().requests.map((r) => `${r.method} ${r.path}`)

const hasUserKey = (r: RecordedRequest) =>
  r.query.userKey !== undefined ||
  (typeof r.body === "object" && r.body !== null && ("userKey" in r.body || "thread" in r.body))

/** A JWT whose `exp` is long past: the API refuses to exchange it (401 "Token has expired"). */
const expiredJwt = [
  Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url"),
  Buffer.from(JSON.stringify({ sub: "bob", iss: "https://issuer.example", exp: 1_000 })).toString("base64url"),
  "signature"
].join(".")

/** An unsigned JWT for `sub` that expires at `exp` (seconds): the server exchanges it without verifying it. */
const jwtFor = (sub: string, exp: number) =>
  [
    Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url"),
    Buffer.from(JSON.stringify({ sub, iss: "https://issuer.example", exp })).toString("base64url"),
    "signature"
  ].join(".")

/** The claims of an access token a request carried. */
const bearerClaims = (request: RecordedRequest): { readonly sub: string; readonly exp: number } => {
  const token = request.headers.authorization!.replace(/^Bearer /, "")
  return JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8"))
}

/**
 * A testing server issuing tokens for 120 s, whose clock follows the TestClock from the real time
 * the test starts: `advance` moves both.
 */
/** A thread with one finished run ("hi"). */
const aThread = Effect.gen(function* () {
  server().setScript([Script.text("hi")])
  return (yield* runAll("one")).at(-1)!.threadId
})

const serverOnTestClock = Effect.gen(function* () {
  const start = Date.now()
  const virtual = { millis: 0 }
  const advance = (duration: Duration.DurationInput) =>
    Effect.suspend(() => {
      virtual.millis += Duration.toMillis(duration)
      return TestClock.adjust(duration)
    })
  const local = yield* Effect.acquireRelease(
    Effect.promise(() =>
      startTestServer({ tokenTtlSeconds: 120, now: () => start + virtual.millis, script: [Script.text("hi")] })
    ),
    (s) => Effect.promise(() => s.close())
  )
  return { advance, local }
})

/**
 * `body` with a Tambo service for `USER_TOKEN` that reaches the server through a `HoldingProxy`
 * (the server's clock set back to now), scoped to the test.
 */
const throughProxy = <A, E>(
  body: (proxy: HoldingProxy.HoldingProxy) => Effect.Effect<A, E, Tambo.Tambo | ThreadStore.ThreadStore | Auth.Auth>
) =>
  Effect.gen(function* () {
    serverClock.offsetMillis = 0
    const proxy = yield* HoldingProxy.scoped(server())
    return yield* body(proxy).pipe(
      Effect.provide(Tambo.layer({ apiKey: server().apiKey, tamboUrl: proxy.url, userToken: USER_TOKEN, maxRetries: 0 }))
    )
  }).pipe(Effect.scoped)

describe("Auth against the testing server", () => {
  it.live("a userToken is exchanged once; runs and thread calls carry the access token as its user", () =>
    Effect.gen(function* () {
      serverClock.offsetMillis = 0
      server().setScript((request) => [Script.text(`echo: ${request.text}`)])
      // The run starts while the exchange is in flight: it waits for it.
      const first = yield* runAll("one")
      const second = yield* runAll("two")
      const threadId = first.at(-1)!.threadId
      expect(second.at(-1)!.threadId).toBe(threadId)
      const tambo = yield* Tambo.Tambo
      const list = yield* tambo.listThreads()
      expect(list.threads.map((t) => t.id)).toEqual([threadId])
      expect(yield* tambo.authState).toEqual({ status: "identified", source: "tokenExchange" })

      expect(exchanges()).toHaveLength(1)
      expect(exchanges()[0]!.body).toMatchObject({
        grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
        subject_token: USER_TOKEN,
        subject_token_type: "urn:ietf:params:oauth:token-type:access_token"
      })
      const calls = apiCalls()
      // Each run ends with one read of its thread (reconciliation), with the same credentials.
      expect(calls.map((r) => `${r.method} ${r.path}`)).toEqual([
        "POST /v1/threads/runs",
        `GET /v1/threads/${threadId}`,
        `POST /v1/threads/${threadId}/runs`,
        `GET /v1/threads/${threadId}`,
        "GET /v1/threads"
      ])
      for (const call of calls) {
        expect(call.headers.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/)
        expect(hasUserKey(call)).toBe(false)
      }
      // The thread belongs to the token's user.
      expect(server().threads.get(threadId)!.userKey).toBe(contextKeyOf(USER_TOKEN))
    }).pipe(Effect.provide(tokenLayer(USER_TOKEN))))

  it.live("threads are scoped to the token's user: another user neither lists nor reads them", () =>
    Effect.gen(function* () {
      serverClock.offsetMillis = 0
      server().setScript([Script.text("hi")])
      const threadId = yield* runAll("mine").pipe(
        Effect.map((events) => events.at(-1)!.threadId),
        Effect.provide(tokenLayer(USER_TOKEN))
      )
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        expect((yield* tambo.listThreads()).threads).toEqual([])
        const error = yield* Effect.flip(tambo.fetchThread(threadId))
        expect(error._tag === "ApiError" && error.status).toBe(403)
      }).pipe(Effect.provide(tokenLayer("opaque-subject-token-of-mallory")))
    }))

  it.live("an access token the API no longer accepts: 401, one new exchange, and the run succeeds", () =>
    Effect.gen(function* () {
      serverClock.offsetMillis = 0
      server().setScript((request) => [Script.text(`echo: ${request.text}`)])
      const first = yield* runAll("one")
      const threadId = first.at(-1)!.threadId
      // The server's clock passes the token's hour; the client's does not.
      serverClock.offsetMillis = Duration.toMillis(Duration.hours(1)) + 1_000
      const second = yield* runAll("two")
      expect(second.at(-1)!.snapshot.messages.at(-1)!.content).toEqual([{ type: "text", text: "echo: two" }])
      expect(paths()).toEqual([
        "POST /oauth/token",
        "POST /v1/threads/runs",
        `GET /v1/threads/${threadId}`, // the run's reconciliation
        `POST /v1/threads/${threadId}/runs`, // 401
        "POST /oauth/token",
        `POST /v1/threads/${threadId}/runs`,
        `GET /v1/threads/${threadId}`
      ])
      const runs = server().requests.filter((r) => r.path === `/v1/threads/${threadId}/runs`)
      expect(runs[0]!.headers.authorization).not.toBe(runs[1]!.headers.authorization)

      // REST calls recover the same way.
      serverClock.offsetMillis += Duration.toMillis(Duration.hours(1)) + 1_000
      const tambo = yield* Tambo.Tambo
      const thread = yield* tambo.fetchThread(threadId)
      expect(thread.messages).toHaveLength(4)
      expect(paths().slice(7)).toEqual([
        `GET /v1/threads/${threadId}`, // 401
        "POST /oauth/token",
        `GET /v1/threads/${threadId}`
      ])
    }).pipe(Effect.provide(tokenLayer(USER_TOKEN))))

  it.live("concurrent runs share one exchange, and one re-exchange after a 401", () =>
    Effect.gen(function* () {
      serverClock.offsetMillis = 0
      server().setScript([Script.delay(20), Script.text("hi")])
      const tambo = yield* Tambo.Tambo
      const runOnNewThreads = (n: number) =>
        Effect.all(
          Array.from({ length: n }, (_, i) => runAll(`run ${i}`, { threadId: "placeholder" })),
          { concurrency: "unbounded" }
        )
      const first = yield* runOnNewThreads(5)
      expect(new Set(first.map((events) => events.at(-1)!.threadId)).size).toBe(5)
      expect(exchanges()).toHaveLength(1)

      serverClock.offsetMillis = Duration.toMillis(Duration.hours(1)) + 1_000
      yield* runOnNewThreads(5)
      expect(exchanges()).toHaveLength(2)
      expect(server().requests.filter((r) => r.path === "/v1/threads/runs")).toHaveLength(15)
      expect((yield* tambo.listThreads({ limit: 50 })).threads).toHaveLength(10)
    }).pipe(Effect.provide(tokenLayer(USER_TOKEN))))

  it.live("a refused exchange fails runs fast with an AuthError, without asking again", () =>
    Effect.gen(function* () {
      serverClock.offsetMillis = 0
      const tambo = yield* Tambo.Tambo
      const error = yield* Effect.flip(runAll("hi"))
      expect(error._tag).toBe("AuthError")
      expect(error._tag === "AuthError" && fields(error)).toMatchObject({
        reason: "ExchangeFailed",
        status: 401,
        message: expect.stringContaining("Token has expired")
      })
      const state = yield* tambo.authState
      expect(state.status === "error" && state.error.reason).toBe("ExchangeFailed")
      // Fails fast: no run request, no second exchange.
      const again = yield* Effect.flip(runAll("hi again"))
      expect(again._tag).toBe("AuthError")
      expect(paths()).toEqual(["POST /oauth/token"])
      // Nothing of the failed runs was recorded.
      const clientState = yield* tambo.state
      expect(Object.values(clientState.threadMap).flatMap((t) => t.thread.messages)).toEqual([])
    }).pipe(Effect.provide(tokenLayer(expiredJwt))))

  it.live("a wrong API key fails the exchange with a 403 AuthError", () =>
    Effect.gen(function* () {
      serverClock.offsetMillis = 0
      const error = yield* Effect.flip(runAll("hi"))
      expect(error._tag === "AuthError" && fields(error)).toMatchObject({ reason: "ExchangeFailed", status: 403 })
      expect(paths()).toEqual(["POST /oauth/token"])
    }).pipe(Effect.provide(tokenLayer(USER_TOKEN, { apiKey: "not-the-api-key" }))))

  it.effect("a scheduled refresh (TestClock) replaces the token before the server expires it", () =>
    Effect.gen(function* () {
      const { advance, local } = yield* serverOnTestClock
      yield* Effect.gen(function* () {
        const auth = yield* Auth.Auth
        yield* runAll("one")
        // Refreshes at 90 s (30 s before the 120 s expiry).
        yield* advance(Duration.seconds(91))
        yield* auth.credentials
        // Past the first token's expiry on the server: the refreshed token is still good.
        yield* advance(Duration.seconds(40))
        yield* runAll("two")
        const seen = local.requests.map((r) => `${r.method} ${r.path}`)
        expect(seen.filter((p) => p === "POST /oauth/token")).toHaveLength(2)
        // The refresh came before the second run, and that run needed no retry (then read its thread).
        expect(seen.slice(-3)).toEqual([
          "POST /oauth/token",
          expect.stringMatching(/^POST \/v1\/threads\/[^/]+\/runs$/),
          expect.stringMatching(/^GET \/v1\/threads\/[^/]+$/)
        ])
        expect(seen.filter((p) => p.endsWith("/runs"))).toHaveLength(2)
      }).pipe(
        Effect.provide(
          Tambo.layer({ apiKey: local.apiKey, tamboUrl: local.url, userToken: USER_TOKEN, maxRetries: 0 })
        )
      )
    }).pipe(Effect.scoped))

  it.effect("a refresh the token endpoint answers with a 503 keeps the access token: runs go on with it until the next try", () =>
    Effect.gen(function* () {
      const { advance, local } = yield* serverOnTestClock
      const proxy = yield* HoldingProxy.scoped(local)
      // Told when the failed refresh, then the next token, has been taken in (the state does not
      // change meanwhile: the token held still works).
      const refreshFailed = yield* Deferred.make<void>()
      const refreshed = yield* Deferred.make<void>()
      let failed = false
      const watcher = Logger.make(({ message }) => {
        const text = String(message)
        if (text.includes("refresh failed")) {
          failed = true
          Deferred.unsafeDone(refreshFailed, Exit.void)
        } else if (failed && text.includes("token obtained")) Deferred.unsafeDone(refreshed, Exit.void)
      })
      yield* Effect.gen(function* () {
        const auth = yield* Auth.Auth
        yield* runAll("one")
        // The refresh at 90 s (30 s before the 120 s expiry) is held, then gets a 503.
        const refresh = proxy.holdRequest((request) => request.path === "/oauth/token")
        yield* advance(Duration.seconds(90))
        yield* Effect.promise(() => refresh.arrived)
        // A run while the refresh is held goes on with the token that still works.
        yield* runAll("two")
        expect(yield* auth.state).toEqual({ status: "identified", source: "tokenExchange" })
        refresh.fail(503)
        yield* Deferred.await(refreshFailed)
        expect(yield* auth.state).toEqual({ status: "identified", source: "tokenExchange" })
        yield* runAll("three")
        // The next try, a little later, gets a new token.
        yield* advance(Duration.seconds(1))
        yield* Deferred.await(refreshed)
        yield* runAll("four")
        const runs = local.requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs"))
        expect(runs).toHaveLength(4)
        expect(runs[1]!.headers.authorization).toBe(runs[0]!.headers.authorization)
        expect(runs[2]!.headers.authorization).toBe(runs[0]!.headers.authorization)
        expect(runs[3]!.headers.authorization).not.toBe(runs[0]!.headers.authorization)
        // The server saw the first exchange and the second try; the failed one never reached it.
        expect(local.requests.filter((r) => r.path === "/oauth/token")).toHaveLength(2)
      }).pipe(
        Effect.provide(
          Tambo.layer({ apiKey: local.apiKey, tamboUrl: proxy.url, userToken: USER_TOKEN, maxRetries: 0 })
        ),
        Effect.provide(Logger.add(watcher)),
        Logger.withMinimumLogLevel(LogLevel.Debug)
      )
    }).pipe(Effect.scoped))

  it.effect("a refresh the token endpoint answers 429 with Retry-After is tried again when the server said", () =>
    Effect.gen(function* () {
      const endpoint = yield* HostileServer.scoped
      const token = (name: string) =>
        HostileServer.status(200, {
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ access_token: name, expires_in: 100, token_type: "Bearer" })
        })
      endpoint.respond(
        token("access-1"),
        HostileServer.status(429, {
          headers: { "content-type": "application/json", "retry-after": "3" },
          body: JSON.stringify({ message: "Slow down" })
        }),
        token("access-2")
      )
      // Told when the failed refresh, then the next token, has been taken in.
      const refreshFailed = yield* Deferred.make<void>()
      const refreshed = yield* Deferred.make<void>()
      let failed = false
      let retryIn: unknown
      const watcher = Logger.make(({ annotations, message }) => {
        const text = String(message)
        if (text.includes("refresh failed")) {
          failed = true
          retryIn = Option.getOrUndefined(HashMap.get(annotations, "tambo.auth.retry_in_ms"))
          Deferred.unsafeDone(refreshFailed, Exit.void)
        } else if (failed && text.includes("token obtained")) Deferred.unsafeDone(refreshed, Exit.void)
      })
      const bearer = (credentials: Credentials) => credentials._tag === "Bearer" ? Redacted.value(credentials.token) : ""
      yield* Effect.gen(function* () {
        const auth = yield* Auth.Auth
        expect(bearer(yield* auth.credentials)).toBe("access-1")
        // Refreshed at 70 s (30 s before the 100 s expiry): 429, Retry-After: 3.
        yield* TestClock.adjust(Duration.seconds(70))
        yield* Deferred.await(refreshFailed)
        expect(retryIn).toBe(3000)
        expect(endpoint.requests).toHaveLength(2)
        expect(bearer(yield* auth.credentials)).toBe("access-1")
        // Not after the 1 s backoff: after the 3 s the server asked for.
        yield* TestClock.adjust(Duration.seconds(2))
        expect(endpoint.requests).toHaveLength(2)
        yield* TestClock.adjust(Duration.seconds(1))
        yield* Deferred.await(refreshed)
        expect(endpoint.requests).toHaveLength(3)
        expect(bearer(yield* auth.credentials)).toBe("access-2")
      }).pipe(
        Effect.provide(Tambo.layer({ apiKey: "test-key", tamboUrl: endpoint.url, userToken: USER_TOKEN, maxRetries: 0 })),
        Effect.provide(Logger.add(watcher)),
        Logger.withMinimumLogLevel(LogLevel.Debug)
      )
    }).pipe(Effect.scoped))

  it.effect("a token endpoint answering 503 with Retry-After and no token held: calls fail at once with its AuthError, and it is asked again when it said", () =>
    Effect.gen(function* () {
      const endpoint = yield* HostileServer.scoped
      endpoint.respond(
        HostileServer.status(503, {
          headers: { "content-type": "application/json", "retry-after": "2" },
          body: JSON.stringify({ message: "Down for maintenance" })
        }),
        HostileServer.status(200, {
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ access_token: "access-1", expires_in: 100, token_type: "Bearer" })
        })
      )
      yield* Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const tambo = yield* Tambo.Tambo
        const first = yield* Effect.flip(auth.credentials)
        expect(fields(first)).toMatchObject({ reason: "ExchangeFailed", status: 503, retryAfter: 2000 })
        // Several components loading threads, a UI retrying: none of them asks the endpoint.
        const errors = yield* Effect.all([Effect.flip(tambo.listThreads()), Effect.flip(tambo.listThreads())], {
          concurrency: "unbounded"
        })
        expect(endpoint.requests).toHaveLength(1)
        expect(errors.map((error) => error === first)).toEqual([true, true])
        const state = yield* auth.state
        expect(state.status === "error" && state.error === first).toBe(true)
        yield* TestClock.adjust(Duration.seconds(2))
        const credentials = yield* auth.credentials
        expect(credentials._tag === "Bearer" && Redacted.value(credentials.token)).toBe("access-1")
        expect(endpoint.requests).toHaveLength(2)
      }).pipe(
        Effect.provide(Tambo.layer({ apiKey: "test-key", tamboUrl: endpoint.url, userToken: USER_TOKEN, maxRetries: 0 }))
      )
    }).pipe(Effect.scoped))

  it.live("setUserToken during a run: the run goes on with the token it started with, and with the new subject's once that one expires", () => {
    // A rotation by the identity provider: the same user, a later expiry.
    const nowSeconds = Math.floor(Date.now() / 1000)
    const oldToken = jwtFor("alice", nowSeconds + 1_000)
    const newToken = jwtFor("alice", nowSeconds + 2_000)
    return Effect.gen(function* () {
      serverClock.offsetMillis = 0
      const auth = yield* Auth.Auth
      const tambo = yield* Tambo.Tambo
      let rotations = 0
      yield* tambo.registerTool(Tool.make({
        name: "rotate",
        description: "Rotates the user token while the run waits for this tool",
        input: Schema.Struct({}),
        execute: () =>
          Effect.suspend(() => {
            // The second round: the server's clock passes the old token's expiry.
            if (++rotations === 2) serverClock.offsetMillis = 1_500_000
            return Effect.as(auth.setUserToken(Redacted.make(newToken)), "rotated")
          })
      }))
      server().setScript(() => rotations < 2 ? [Script.toolCall("rotate", {})] : [Script.text("done")])
      const events = yield* runAll("rotate, please")
      const threadId = events.at(-1)!.threadId
      expect(events.at(-1)!.snapshot.messages.at(-1)!.content).toEqual([{ type: "text", text: "done" }])
      // The new token's exchange starts with setUserToken, beside the round the run sends with the
      // token it started with: either may reach the server first.
      const calls = paths()
      expect(calls.filter((path) => path !== "POST /oauth/token")).toEqual([
        "POST /v1/threads/runs",
        `POST /v1/threads/${threadId}/runs`,
        `POST /v1/threads/${threadId}/runs`, // 401: the run's token expired
        `POST /v1/threads/${threadId}/runs`,
        // The reconciliation's read, with the token the run took last.
        `GET /v1/threads/${threadId}`
      ])
      expect(calls[0]).toBe("POST /oauth/token")
      expect(calls.lastIndexOf("POST /oauth/token")).toBeGreaterThan(calls.indexOf("POST /v1/threads/runs"))
      expect(calls.lastIndexOf("POST /oauth/token")).toBeLessThan(calls.lastIndexOf(`POST /v1/threads/${threadId}/runs`))
      expect(exchanges().map((r) => (r.body as { subject_token: string }).subject_token)).toEqual([oldToken, newToken])
      // The issued token never outlives its subject token: its expiry tells which subject it came from.
      expect(apiCalls().map((r) => bearerClaims(r))).toEqual([
        expect.objectContaining({ sub: "alice", exp: nowSeconds + 1_000 }),
        expect.objectContaining({ sub: "alice", exp: nowSeconds + 1_000 }),
        expect.objectContaining({ sub: "alice", exp: nowSeconds + 1_000 }),
        expect.objectContaining({ sub: "alice", exp: nowSeconds + 2_000 }),
        expect.objectContaining({ sub: "alice", exp: nowSeconds + 2_000 })
      ])
      // Same user: the thread is still theirs.
      expect((yield* tambo.fetchThread(threadId)).messages.length).toBeGreaterThan(0)
    }).pipe(Effect.provide(tokenLayer(oldToken)))
  })

  it.live("a 401 whose new exchange is refused fails the run with AuthError, and the thread keeps no message the server never got", () => {
    const nowSeconds = Math.floor(Date.now() / 1000)
    return Effect.gen(function* () {
      serverClock.offsetMillis = 0
      const tambo = yield* Tambo.Tambo
      server().setScript((request) => [Script.text(`echo: ${request.text}`)])
      const threadId = (yield* runAll("one")).at(-1)!.threadId
      // The server's clock passes the user token's expiry: the access token gets a 401, and the
      // user token is refused at the new exchange.
      serverClock.offsetMillis = 2_000_000
      const error = yield* Effect.flip(runAll("two", { threadId }))
      expect(error._tag === "AuthError" && fields(error)).toMatchObject({ reason: "ExchangeFailed", status: 401 })
      expect(paths().slice(-2)).toEqual([`POST /v1/threads/${threadId}/runs`, "POST /oauth/token"])
      const thread = (yield* tambo.state).threadMap[threadId]!
      expect(shape(thread.thread.messages)).toEqual(serverShape(server(), threadId))
      expect(thread.streaming.error).toMatchObject({ code: "AuthError", status: 401 })
      // With a token that works again, the next message goes on the same thread.
      yield* (yield* Auth.Auth).setUserToken(Redacted.make(jwtFor("carol", nowSeconds + 1_000_000)))
      yield* runAll("two again", { threadId })
      const after = (yield* tambo.state).threadMap[threadId]!
      expect(shape(after.thread.messages)).toEqual(serverShape(server(), threadId))
      expect(shape(after.thread.messages).map((m) => m.content)).toEqual([
        [{ type: "text", text: "one" }],
        [{ type: "text", text: "echo: one" }],
        [{ type: "text", text: "two again" }],
        [{ type: "text", text: "echo: two again" }]
      ])
    }).pipe(Effect.provide(tokenLayer(jwtFor("carol", nowSeconds + 1_000))))
  })

  it.live("a 401 on a tool round's continuation whose new exchange is refused: the results stay with the pending calls, not in the thread", () => {
    const nowSeconds = Math.floor(Date.now() / 1000)
    return Effect.gen(function* () {
      serverClock.offsetMillis = 0
      const tambo = yield* Tambo.Tambo
      yield* tambo.registerTool(Tool.make({
        name: "lookup",
        description: "Looks something up while the user's token expires",
        input: Schema.Struct({}),
        execute: () =>
          Effect.sync(() => {
            serverClock.offsetMillis = 2_000_000
            return "found"
          })
      }))
      server().setScript((request) =>
        request.toolResults.length === 0 ? [Script.toolCall("lookup", {})] : [Script.text("done")]
      )
      const events: Array<Tambo.RunEvent> = []
      const error = yield* Effect.flip(Stream.runForEach(tambo.run("look it up"), (event) => Effect.sync(() => events.push(event))))
      expect(error._tag === "AuthError" && fields(error)).toMatchObject({ reason: "ExchangeFailed", status: 401 })
      const threadId = events.at(-1)!.threadId
      const stored = server().threads.get(threadId)!
      const thread = (yield* tambo.state).threadMap[threadId]!
      // The server holds no result: neither does the thread; the call waits with the tool's result.
      expect(shape(thread.thread.messages).map((m) => m.content.map((c: any) => c.type))).toEqual([["text"], ["tool_use"]])
      expect(thread.pendingToolCalls.map((call) => call.toolCallId)).toEqual(stored.pendingToolCallIds)
      expect(thread.pendingToolCalls[0]!.result).toMatchObject({ type: "tool_result", content: [{ type: "text", text: "found" }] })
      // With a token that works again, a new message sends the result the tool gave.
      yield* (yield* Auth.Auth).setUserToken(Redacted.make(jwtFor("dave", nowSeconds + 1_000_000)))
      yield* runAll("and now?", { threadId })
      const after = (yield* tambo.state).threadMap[threadId]!
      expect(shape(after.thread.messages)).toEqual(serverShape(server(), threadId))
      expect(after.pendingToolCalls).toEqual([])
      expect(JSON.stringify(serverShape(server(), threadId))).toContain("found")
    }).pipe(Effect.provide(tokenLayer(jwtFor("dave", nowSeconds + 1_000))))
  })

  it.live("another user's token while a run streams: Stop cancels the run on the server, and its thread stays as the server has it", () => {
    const nowSeconds = Math.floor(Date.now() / 1000)
    return Effect.gen(function* () {
      serverClock.offsetMillis = 0
      const tambo = yield* Tambo.Tambo
      server().setScript([Script.text("partial"), Script.hang()])
      const streaming = yield* Deferred.make<string>()
      const fiber = yield* Effect.fork(Effect.flip(Stream.runForEach(
        tambo.run("a long answer, please"),
        (element) => element.event.type === "TEXT_MESSAGE_CONTENT" ? Deferred.succeed(streaming, element.threadId) : Effect.void
      )))
      const threadId = yield* Deferred.await(streaming)
      yield* (yield* Auth.Auth).setUserToken(Redacted.make(jwtFor("bob", nowSeconds + 1_000)))
      yield* tambo.cancelRun(threadId)
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("RunCancelledError")
      // The server heard the user's Stop (not only a closed connection), from the run's own user.
      expect(server().cancels.map((cancel) => cancel.reason)).toEqual(["user_cancelled"])
      const deletes = server().requests.filter((r) => r.method === "DELETE")
      expect(deletes.map((r) => bearerClaims(r).sub)).toEqual(["alice"])
      // The run's end read its thread as its user: the store keeps it, as the server has it.
      const thread = (yield* tambo.state).threadMap[threadId]
      expect(thread).toBeDefined()
      expect(shape(thread!.thread.messages)).toEqual(serverShape(server(), threadId))
      expect(thread!.thread.lastRunCancelled).toBe(true)
    }).pipe(Effect.provide(tokenLayer(jwtFor("alice", nowSeconds + 1_000))))
  })

  it.live("another user's token while a run's tools run: the run goes on as the user it started for, and finishes", () => {
    const nowSeconds = Math.floor(Date.now() / 1000)
    return Effect.gen(function* () {
      serverClock.offsetMillis = 0
      const auth = yield* Auth.Auth
      const tambo = yield* Tambo.Tambo
      yield* tambo.registerTool(Tool.make({
        name: "switch",
        description: "Another user signs in while the run waits for this tool",
        input: Schema.Struct({}),
        execute: () => Effect.as(auth.setUserToken(Redacted.make(jwtFor("bob", nowSeconds + 1_000))), "switched")
      }))
      server().setScript((request) =>
        request.toolResults.length === 0 ? [Script.toolCall("switch", {})] : [Script.text("done")]
      )
      const events = yield* runAll("switch, please")
      const threadId = events.at(-1)!.threadId
      expect(events.at(-1)!.snapshot.messages.at(-1)!.content).toEqual([{ type: "text", text: "done" }])
      const runs = apiCalls().filter((r) => r.method === "POST")
      expect(runs.map((r) => bearerClaims(r).sub)).toEqual(["alice", "alice"])
      const thread = (yield* tambo.state).threadMap[threadId]!
      expect(shape(thread.thread.messages)).toEqual(serverShape(server(), threadId))
      // Requests made after the switch, outside the run, are the new user's.
      expect((yield* tambo.listThreads()).threads).toEqual([])
    }).pipe(Effect.provide(tokenLayer(jwtFor("alice", nowSeconds + 1_000))))
  })

  it.live("Stop while a 401's new exchange is held: the run ends cancelled at once, and the thread drops the message the server never got, without waiting to read it", () =>
    throughProxy((proxy) =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const threadId = yield* aThread
        serverClock.offsetMillis = Duration.toMillis(Duration.hours(1)) + 1_000
        const exchange = proxy.holdRequest((request) => request.path === "/oauth/token")
        const fiber = yield* Effect.fork(Effect.flip(runAll("two", { threadId })))
        yield* Effect.promise(() => exchange.arrived)
        yield* tambo.cancelRun(threadId)
        // The exchange is still held: the run ended all the same.
        expect((yield* Fiber.join(fiber))._tag).toBe("RunCancelledError")
        // Its end knew without a read that the server took nothing of "two".
        const thread = (yield* tambo.state).threadMap[threadId]!
        expect(shape(thread.thread.messages)).toEqual(serverShape(server(), threadId))
        expect(shape(thread.thread.messages).map((m) => m.content)).toEqual([
          [{ type: "text", text: "one" }],
          [{ type: "text", text: "hi" }]
        ])
        expect(thread.streaming.status).toBe("idle")
        const state = yield* tambo.state
        yield* Effect.promise(() => storeEqualsServer(state, server(), threadId, contextKeyOf(USER_TOKEN)))
        exchange.release()
        // With the new token, the next message goes on the same thread.
        yield* runAll("two again", { threadId })
        const after = (yield* tambo.state).threadMap[threadId]!
        expect(shape(after.thread.messages)).toEqual(serverShape(server(), threadId))
      })
    ))

  it.live("a 401 to the request sent with the new token too fails the run with that ApiError, and the thread keeps no message the server never got", () =>
    throughProxy((proxy) =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const threadId = yield* aThread
        // The API refuses every token from now on: the run's request, its retry with a new token,
        // and the reads of the thread.
        const refused = { message: "Invalid bearer token" }
        for (const matches of [
          (r: HoldingProxy.ProxiedRequest) => r.method === "POST" && r.path === `/v1/threads/${threadId}/runs`,
          (r: HoldingProxy.ProxiedRequest) => r.method === "GET" && r.path === `/v1/threads/${threadId}`
        ]) {
          proxy.holdRequest(matches).fail(401, refused)
          proxy.holdRequest(matches).fail(401, refused)
        }
        const error = yield* Effect.flip(runAll("two", { threadId }))
        expect(error._tag === "ApiError" && error.status).toBe(401)
        const thread = (yield* tambo.state).threadMap[threadId]!
        expect(shape(thread.thread.messages)).toEqual(serverShape(server(), threadId))
      })
    ))

  it.live("Stop while a tool round's continuation waits for a new token after a 401: the run ends cancelled at once, and once the exchange lands the store takes the server's thread", () =>
    throughProxy((proxy) =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const store = yield* ThreadStore.ThreadStore
        const exchange = Effect.runSync(Deferred.make<HoldingProxy.Held>())
        yield* tambo.registerTool(Tool.make({
          name: "lookup",
          description: "Looks something up while the access token expires",
          input: Schema.Struct({}),
          execute: () =>
            Effect.sync(() => {
              serverClock.offsetMillis = Duration.toMillis(Duration.hours(1)) + 1_000
              Deferred.unsafeDone(exchange, Exit.succeed(proxy.holdRequest((request) => request.path === "/oauth/token")))
              return "found"
            })
        }))
        server().setScript((request) =>
          request.toolResults.length === 0 ? [Script.toolCall("lookup", {})] : [Script.text("done")]
        )
        const started = yield* Deferred.make<string>()
        const fiber = yield* Effect.fork(Effect.flip(Stream.runForEach(
          tambo.run("look it up"),
          (element) => element.event.type === "RUN_STARTED" ? Deferred.succeed(started, element.threadId) : Effect.void
        )))
        const threadId = yield* Deferred.await(started)
        const held = yield* Deferred.await(exchange)
        // The continuation got its 401: the new exchange is held.
        yield* Effect.promise(() => held.arrived)
        yield* tambo.cancelRun(threadId)
        expect((yield* Fiber.join(fiber))._tag).toBe("RunCancelledError")
        // The server took no result: the thread shows none, the call waits with the tool's result.
        const ended = (yield* tambo.state).threadMap[threadId]!
        expect(ended.thread.messages.flatMap((message) => message.content.map((block) => block.type))).not.toContain("tool_result")
        expect(ended.pendingToolCalls[0]!.result).toMatchObject({ content: [{ type: "text", text: "found" }] })
        held.release()
        // With the new token the thread is read: the store holds the messages under the server's ids.
        const serverIds = () => server().threads.get(threadId)!.messages.map((message) => message.id)
        yield* store.changes.pipe(
          Stream.filter((state) =>
            JSON.stringify(state.threadMap[threadId]?.thread.messages.map((message) => message.id)) ===
              JSON.stringify(serverIds())
          ),
          Stream.runHead,
          Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("the store never took the server's thread") })
        )
        const state = yield* tambo.state
        yield* Effect.promise(() => storeEqualsServer(state, server(), threadId, contextKeyOf(USER_TOKEN)))
        // The call still waits with the result its tool gave.
        expect(state.threadMap[threadId]!.pendingToolCalls[0]!.result).toMatchObject({ content: [{ type: "text", text: "found" }] })
      })
    ))
})

describe("cancelRun of a run still waiting for its first credentials", () => {
  it.live("a new user token's exchange is held: the run ends cancelled, sends nothing, and the thread stays as it was", () =>
    throughProxy((proxy) =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const threadId = yield* aThread
        const before = (yield* tambo.state).threadMap[threadId]
        const exchange = proxy.holdRequest((request) => request.path === "/oauth/token")
        yield* (yield* Auth.Auth).setUserToken(Redacted.make("opaque-subject-token-of-alice-rotated"))
        const sent = server().requests.length
        const fiber = yield* Effect.fork(Effect.flip(runAll("two", { threadId })))
        yield* Effect.promise(() => exchange.arrived)
        yield* suspended(fiber)
        yield* tambo.cancelRun(threadId)
        exchange.release()
        const error = yield* Fiber.join(fiber)
        expect(error._tag).toBe("RunCancelledError")
        yield* (yield* Auth.Auth).credentials
        // Nothing went but the exchange; the thread is as it was.
        expect(server().requests.slice(sent).map((r) => `${r.method} ${r.path}`)).toEqual(["POST /oauth/token"])
        expect((yield* tambo.state).threadMap[threadId]).toEqual(before)
      })
    ))

  it.live("on a thread a read shows another client's run on: the run ends cancelled, and the other client's run goes on", () => {
    // Both clients are the same user; this one's token is rotated (a later expiry), and its exchange held.
    const nowSeconds = Math.floor(Date.now() / 1000)
    const aliceLayer = (tamboUrl: string) =>
      Tambo.layer({ apiKey: server().apiKey, tamboUrl, userToken: jwtFor("alice", nowSeconds + 1_000), maxRetries: 0 })
    return Effect.gen(function* () {
      serverClock.offsetMillis = 0
      const proxy = yield* HoldingProxy.scoped(server())
      const threadId = yield* Effect.provide(aThread, aliceLayer(server().url))
      server().setScript([Script.text("working"), Script.hang()])
      const other = yield* Effect.fork(Effect.either(Effect.provide(runAll("two", { threadId }), aliceLayer(server().url))))
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        yield* until(() => server().threads.get(threadId)?.runStatus === "streaming")
        // The store shows the other client's run.
        expect((yield* tambo.fetchThread(threadId)).status).not.toBe("idle")
        const exchange = proxy.holdRequest((request) => request.path === "/oauth/token")
        yield* (yield* Auth.Auth).setUserToken(Redacted.make(jwtFor("alice", nowSeconds + 2_000)))
        const fiber = yield* Effect.fork(Effect.flip(runAll("mine", { threadId })))
        yield* Effect.promise(() => exchange.arrived)
        yield* suspended(fiber)
        const cancelling = yield* Effect.fork(tambo.cancelRun(threadId))
        expect((yield* Fiber.join(fiber))._tag).toBe("RunCancelledError")
        exchange.release()
        yield* Fiber.join(cancelling)
        expect(server().cancels).toEqual([])
        expect(server().threads.get(threadId)?.runStatus).toBe("streaming")
      }).pipe(Effect.provide(aliceLayer(proxy.url)))
      yield* Fiber.interrupt(other)
    }).pipe(Effect.scoped)
  })

  it.live.each(["INVALID_PREVIOUS_RUN", "MISSING_RESULTS"])(
    "a first request refused %s, whose read of the thread is refused 401 while the new exchange is held: Stop ends the run at once, sends nothing more, and the thread stays as it was",
    (code) =>
      throughProxy((proxy) =>
        Effect.gen(function* () {
          const tambo = yield* Tambo.Tambo
          const threadId = yield* aThread
          const before = (yield* tambo.state).threadMap[threadId]
          const sent = server().requests.length
          // The server refuses the run's request before any work, and its read of the thread 401.
          proxy.holdRequest((r) => r.method === "POST" && r.path === `/v1/threads/${threadId}/runs`)
            .fail(400, { code, message: "refused" })
          proxy.holdRequest((r) => r.method === "GET" && r.path === `/v1/threads/${threadId}`)
            .fail(401, { message: "Token has expired" })
          const exchange = proxy.holdRequest((r) => r.path === "/oauth/token")
          const fiber = yield* Effect.fork(Effect.flip(runAll("two", { threadId })))
          yield* Effect.promise(() => exchange.arrived)
          yield* suspended(fiber)
          yield* tambo.cancelRun(threadId)
          // Ended with the exchange still held.
          const error = yield* Fiber.join(fiber)
          expect(error._tag).toBe("RunCancelledError")
          expect((yield* tambo.state).threadMap[threadId]).toEqual(before)
          exchange.release()
          yield* (yield* Auth.Auth).credentials
          // Nothing reached the server but the exchange; the thread is still as it was.
          expect(server().requests.slice(sent).map((r) => `${r.method} ${r.path}`)).toEqual(["POST /oauth/token"])
          expect((yield* tambo.state).threadMap[threadId]).toEqual(before)
        })
      )
  )

  it.live("a first request refused INVALID_PREVIOUS_RUN whose read of the thread is slow: Stop ends the run without waiting for the read, and the store takes the server's thread", () =>
    throughProxy((proxy) =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const threadId = yield* aThread
        const sent = server().requests.length
        proxy.holdRequest((r) => r.method === "POST" && r.path === `/v1/threads/${threadId}/runs`)
          .fail(400, { code: "INVALID_PREVIOUS_RUN", message: "refused" })
        const read = proxy.holdResponse((r) => r.method === "GET" && r.path === `/v1/threads/${threadId}`)
        const fiber = yield* Effect.fork(Effect.flip(runAll("two", { threadId })))
        yield* Effect.promise(() => read.arrived)
        yield* tambo.cancelRun(threadId)
        // Ended with the read's answer still held; the run's end read the thread again.
        const error = yield* Fiber.join(fiber)
        expect(error._tag).toBe("RunCancelledError")
        read.release()
        expect(server().requests.slice(sent).map((r) => `${r.method} ${r.path}`))
          .toEqual([`GET /v1/threads/${threadId}`, `GET /v1/threads/${threadId}`])
        const state = yield* tambo.state
        yield* Effect.promise(() => storeEqualsServer(state, server(), threadId, contextKeyOf(USER_TOKEN)))
      })
    ))

  it.live("the first exchange is held: a new conversation's run ends cancelled by cancelRun of the placeholder, and nothing is sent", () =>
    Effect.gen(function* () {
      serverClock.offsetMillis = 0
      const proxy = yield* HoldingProxy.scoped(server())
      const exchange = proxy.holdRequest((request) => request.path === "/oauth/token")
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        server().setScript([Script.text("hi")])
        const before = yield* tambo.state
        const fiber = yield* Effect.fork(Effect.flip(runAll("hello")))
        yield* Effect.promise(() => exchange.arrived)
        yield* suspended(fiber)
        yield* tambo.cancelRun()
        exchange.release()
        const error = yield* Fiber.join(fiber)
        expect(error._tag).toBe("RunCancelledError")
        yield* (yield* Auth.Auth).credentials
        expect(paths()).toEqual(["POST /oauth/token"])
        expect(yield* tambo.state).toEqual(before)
      }).pipe(
        Effect.provide(Tambo.layer({ apiKey: server().apiKey, tamboUrl: proxy.url, userToken: USER_TOKEN, maxRetries: 0 }))
      )
    }).pipe(Effect.scoped))
})
