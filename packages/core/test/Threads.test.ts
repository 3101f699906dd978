import { HoldingProxy, HostileServer, Script, type RecordedRequest } from "@tambo-effect/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { isRecord } from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as ClientState from "../src/ClientState.js"
import * as Tambo from "../src/Tambo.js"
import * as Transport from "../src/TamboTransport.js"
import type { TamboError } from "../src/TamboError.js"
import type * as Types from "../src/Types.js"
import * as Tool from "../src/Tool.js"
import { expectStoreEqualsServer, fields, runAll, runInLocalThread, tamboLayer, tamboOver, until, useServer, useTickingServer, weather } from "./helpers.js"

const server = useServer()

const ticking = useTickingServer()

/** Where a request names its user: `userKey` in the query or body, or the legacy `contextKey`. */
const userKeyOf = (request: RecordedRequest): string | undefined => {
  if (request.query.userKey !== undefined) return request.query.userKey
  if (request.query.contextKey !== undefined) return request.query.contextKey
  const body = request.body
  if (typeof body !== "object" || body === null) return undefined
  if ("userKey" in body && typeof body.userKey === "string") return body.userKey
  if ("thread" in body && typeof body.thread === "object" && body.thread !== null && "userKey" in body.thread) {
    return typeof body.thread.userKey === "string" ? body.thread.userKey : undefined
  }
  return undefined
}

/** Every request so far acted for `user-1`. */
const expectUserKeyOnEveryRequest = () => {
  const requests = server().requests
  expect(requests.length).toBeGreaterThan(0)
  expect(requests.map((r) => [`${r.method} ${r.path}`, userKeyOf(r)])).toEqual(
    requests.map((r) => [`${r.method} ${r.path}`, "user-1"])
  )
}

/** Waits until what `held` holds came: the request itself, or the server's answer to it. */
const arrived = (held: HoldingProxy.Held) => Effect.promise(() => held.arrived)

/** Plays `body` with a client whose requests go through a holding proxy in front of the testing server. */
const throughProxy = <A, E>(body: (proxy: HoldingProxy.HoldingProxy) => Effect.Effect<A, E, Tambo.Tambo>) =>
  Effect.scoped(
    Effect.flatMap(HoldingProxy.scoped(server()), (proxy) =>
      Effect.provide(body(proxy), tamboLayer(server(), { tamboUrl: proxy.url })))
  )

/** Sends a read of `threadId` (`fetchThread`) whose answer the proxy holds back; its fiber and the held answer, once the server answered. */
const heldReadOf = (proxy: HoldingProxy.HoldingProxy, threadId: string) =>
  Effect.gen(function* () {
    const held = proxy.holdResponse((request) => request.method === "GET" && request.url.startsWith(`/v1/threads/${threadId}?`))
    const read = yield* Effect.fork(Effect.flatMap(Tambo.Tambo, (tambo) => tambo.fetchThread(threadId)))
    yield* arrived(held)
    return { read, held }
  })

/** The store holds the server's copy of the thread, and so does what a held read gave back. */
const expectServersCopy = (read: Types.TamboThread, threadId: string) =>
  Effect.gen(function* () {
    const ids = server().threads.get(threadId)!.messages.map((m) => m.id)
    const stored = Option.getOrThrow(yield* Effect.flatMap(Tambo.Tambo, (tambo) => tambo.getThread(threadId)))
    expect(stored.messages.map((m) => m.id)).toEqual(ids)
    expect(read.messages.map((m) => m.id)).toEqual(ids)
  })

/** A run on the thread goes, after its third: it names the last run the server completed. */
const thirdRunGoes = (threadId: string) =>
  Effect.gen(function* () {
    yield* runAll("three", { threadId })
    expect(server().threads.get(threadId)!.messages).toHaveLength(6)
  })

const seed = (name: string, userKey = "user-1") =>
  server().threads.create({
    userKey,
    name,
    messages: [
      { role: "user", content: `question of ${name}` },
      { role: "assistant", content: `answer of ${name}` }
    ]
  })


/**
 * The latches of a transport whose next read of a thread, once armed, hands its answer back only
 * once a rename the server took since is on its way back, and that rename's answer goes on only
 * as the read's answer comes back: the two meet at the read's end.
 */
const makeEndReadGate = () => ({
  armed: false,
  readAnswered: Deferred.unsafeMake<void>(FiberId.none),
  renameTaken: Deferred.unsafeMake<void>(FiberId.none),
  readBack: Deferred.unsafeMake<void>(FiberId.none)
})

/** The service over the testing server, its transport's reads and renames ordered by `gate`. */
const gatedLayer = (gate: ReturnType<typeof makeEndReadGate>) => {
  const gated = Layer.effect(
    Transport.TamboTransport,
    Effect.map(Transport.TamboTransport, (transport): Transport.TamboTransport.Service => ({
      ...transport,
      retrieveThread: (c, threadId) =>
        Effect.tap(transport.retrieveThread(c, threadId), () => {
          if (!gate.armed) return Effect.void
          gate.armed = false
          return Effect.zipRight(
            Effect.zipRight(Deferred.succeed(gate.readAnswered, undefined), Deferred.await(gate.renameTaken)),
            Deferred.succeed(gate.readBack, undefined)
          )
        }),
      updateThread: (c, threadId, patch) =>
        transport.updateThread(c, threadId, patch).pipe(
          Effect.tap(() => Deferred.succeed(gate.renameTaken, undefined)),
          Effect.tap(() => Deferred.await(gate.readBack))
        )
    }))
  ).pipe(Layer.provide(Transport.layer))
  return tamboOver(server(), gated)
}

/** The error of a call that needs a saved thread, given a new conversation's id the server has not saved yet. */
const unsaved = (method: string, threadId: string) => ({
  _tag: "ConfigError",
  reason: "InvalidOption",
  message: `${method}: "${threadId}" is a new conversation the server has not saved yet: its first message gets it a thread`
})

/** The error of a call about a thread, given a local id whose thread the client no longer holds. */
const noLongerHeld = (method: string, threadId: string) => ({
  _tag: "ConfigError",
  reason: "InvalidOption",
  message: `${method}: the client holds no thread of "${threadId}": a new conversation's local id names its thread only while the client holds it (not once it was forgotten or deleted, nor if its run ended without one); use the thread's own id`
})

/** A client tool the threads of the pending-call tests wait on. */
describe("threads", () => {
  it.live("listThreads pages through every thread of the user, newest first, without duplicates", () =>
    Effect.gen(function* () {
      const mine = Array.from({ length: 25 }, (_, i) => seed(`thread ${i}`))
      seed("someone else's", "user-2")
      const tambo = yield* Tambo.Tambo
      const pages: Array<ReadonlyArray<string>> = []
      let cursor: string | undefined
      for (let guard = 0; guard < 10; guard++) {
        const page = yield* tambo.listThreads({ cursor, limit: 10 })
        pages.push(page.threads.map((t) => t.id))
        if (!page.hasMore) {
          expect(page.nextCursor).toBeUndefined()
          break
        }
        expect(page.nextCursor).toBeDefined()
        cursor = page.nextCursor
      }
      expect(pages.map((p) => p.length)).toEqual([10, 10, 5])
      const ids = pages.flat()
      expect(new Set(ids).size).toBe(25)
      expect(ids).toEqual(mine.map((t) => t.id).reverse())

      const lists = server().requests.filter((r) => r.path === "/v1/threads")
      expect(lists.map((r) => r.query.limit)).toEqual(["10", "10", "10"])
      expect(lists[0]!.query.cursor).toBeUndefined()
      expect(lists.slice(1).every((r) => r.query.cursor !== undefined)).toBe(true)
      expectUserKeyOnEveryRequest()
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("fetchThread loads a thread and its messages into the store, leaving the current thread", () =>
    Effect.gen(function* () {
      const remote = seed("remote")
      const tambo = yield* Tambo.Tambo
      const thread = yield* tambo.fetchThread(remote.id)
      expect(thread.id).toBe(remote.id)
      expect(thread.name).toBe("remote")
      expect(thread.messages.map((m) => [m.role, m.content])).toEqual([
        ["user", [{ type: "text", text: "question of remote" }]],
        ["assistant", [{ type: "text", text: "answer of remote" }]]
      ])
      expect(thread.messages.map((m) => m.id)).toEqual(remote.messages.map((m) => m.id))
      const state = yield* tambo.state
      expect(state.threadMap[remote.id]?.thread).toEqual(thread)
      expect(state.currentThreadId).toBe(ClientState.PLACEHOLDER_THREAD_ID)
      expectUserKeyOnEveryRequest()
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("fetchThread of a thread the store holds takes the server's copy: what another client changed shows", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      server().setScript([Script.component("Card", { title: "hi" }, { id: "comp_card" })])
      const [first] = yield* runAll("show a card")
      const threadId = first!.threadId
      // Another client (another tab) renames the thread, sets the component's state, and cancels a
      // run of its own on it.
      yield* Effect.gen(function* () {
        const other = yield* Tambo.Tambo
        yield* other.updateThreadName(threadId, "renamed elsewhere")
        yield* other.updateComponentState(threadId, "comp_card", { state: { favourite: true } })
        server().setScript([Script.text("partial"), Script.hang()])
        const run = yield* Effect.fork(runAll("two", { threadId }))
        yield* Effect.repeat(Effect.sync(() => server().threads.get(threadId)!.messages.length), {
          until: (n) => n >= 3,
          schedule: Schedule.spaced("5 millis")
        })
        yield* other.cancelRun(threadId)
        yield* Fiber.await(run)
      }).pipe(Effect.provide(tamboLayer(server())))
      const fetched = yield* tambo.fetchThread(threadId)
      expect(fetched.name).toBe("renamed elsewhere")
      expect(fetched.lastRunCancelled).toBe(true)
      expect(fetched.messages.flatMap((m) => m.content).find((block) => block.type === "component")?.state)
        .toEqual({ favourite: true })
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  describe("a read while another client's run streams on the thread", () => {
    /** The thread's reply as the server holds it now: the text of its last message. */
    const serverText = (threadId: string) => {
      const last = server().threads.get(threadId)?.messages.at(-1)
      return last?.role === "assistant" && last.content[0]?.type === "text" ? last.content[0].text : undefined
    }
    /**
     * Another client runs `script` on the thread; once the server holds `until` of its reply,
     * `during` runs, then the other client cancels its run.
     */
    const otherRun = <A, E>(threadId: string, script: Script.Script, until: string, during: Effect.Effect<A, E>) =>
      Effect.gen(function* () {
        const other = yield* Tambo.Tambo
        server().setScript(script)
        const run = yield* Effect.fork(runAll("two", { threadId }))
        yield* Effect.repeat(Effect.sync(() => serverText(threadId)), {
          until: (text) => text === until,
          schedule: Schedule.spaced("5 millis")
        })
        const result = yield* during
        yield* other.cancelRun(threadId)
        yield* Fiber.await(run)
        return result
      }).pipe(Effect.provide(tamboLayer(server())))

    it.live("shows the reply as streamed so far; once the run ended, the next read shows it as the server kept it, once", () =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        server().setScript([Script.text("first")])
        const threadId = (yield* runAll("one"))[0]!.threadId
        const during = yield* otherRun(threadId, [Script.text(["Hel", "lo"]), Script.hang()], "Hello", tambo.fetchThread(threadId))
        expect(during.messages.map((m) => m.content)).toEqual([
          [{ type: "text", text: "one" }],
          [{ type: "text", text: "first" }],
          [{ type: "text", text: "two" }],
          [{ type: "text", text: "Hello" }]
        ])
        yield* tambo.fetchThread(threadId)
        yield* expectStoreEqualsServer(tambo, server(), threadId)
        // And a run of this client goes on from it.
        server().setScript([Script.text("third")])
        yield* runAll("three", { threadId })
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      }).pipe(Effect.provide(tamboLayer(server()))))

    it.live("a read while its next run starts, before the server stored that run's message, shows the run but the reply a read showed streaming as done", () =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        server().setScript([Script.text("first")])
        const threadId = (yield* runAll("one"))[0]!.threadId
        const lastBlocks = (thread: Types.TamboThread) => thread.messages.at(-1)?.content ?? []
        const answered = yield* Deferred.make<void>()
        yield* Effect.gen(function* () {
          const other = yield* Tambo.Tambo
          // The other client's reply: its component is stored, and the server holds the run.
          server().setScript([Script.text("Here:"), Script.component("Card", { title: "old" }), Script.hang()])
          const first = yield* Effect.fork(runAll("two", { threadId }))
          yield* Effect.repeat(Effect.sync(() => server().threads.get(threadId)?.messages.at(-1)?.content ?? []), {
            until: (content) => content.some((block) => block.type === "component"),
            schedule: Schedule.spaced("5 millis")
          })
          const during = yield* tambo.fetchThread(threadId)
          expect(lastBlocks(during).find((block) => block.type === "component")).toMatchObject({ streamingState: "streaming" })
          yield* other.cancelRun(threadId)
          yield* Fiber.await(first)

          // Its next run: the server took it, and holds it before storing its user message.
          server().setScript(Script.beforeUserMessage(() => Effect.runPromise(Deferred.await(answered)).then(() => [Script.text("New")])))
          const next = yield* Effect.fork(runAll("three", { threadId }))
          yield* Effect.repeat(Effect.sync(() => server().threads.get(threadId)?.runStatus), {
            until: (status) => status === "streaming",
            schedule: Schedule.spaced("5 millis")
          })
          const gap = yield* tambo.fetchThread(threadId)
          expect(gap.status).toBe("streaming")
          expect(lastBlocks(gap).find((block) => block.type === "component")).toMatchObject({ streamingState: "done" })
          yield* Deferred.succeed(answered, undefined)
          yield* Fiber.join(next)
        }).pipe(Effect.provide(tamboLayer(server())))
        yield* tambo.fetchThread(threadId)
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      }).pipe(Effect.provide(tamboLayer(server()))))

    it.live("a run of this client while another client's run streams fails with RunConflictError; the store equals the server once both ended", () =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        server().setScript([Script.text("first")])
        const threadId = (yield* runAll("one"))[0]!.threadId
        const refused = yield* otherRun(
          threadId,
          [Script.component("Card", [{ title: "ha" }, { title: "half" }], { id: "comp_half" }), Script.hang()],
          " ",
          // This client's run, refused by the server (409): the other client's run holds the thread.
          Effect.flip(Stream.runDrain(tambo.run("mine", { threadId })))
        )
        expect(refused._tag).toBe("RunConflictError")
        server().setScript([Script.text("third")])
        yield* runAll("three", { threadId })
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      }).pipe(Effect.provide(tamboLayer(server()))))

    it.live("cancelRun of a thread a read shows another client running on cancels that run on the server; that run ends, and the store equals the server", () =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        server().setScript([Script.text("first")])
        const threadId = (yield* runAll("one"))[0]!.threadId
        const cancelled = server().cancels.length
        const otherExit = yield* Effect.gen(function* () {
          server().setScript([Script.text(["Hel", "lo"]), Script.hang()])
          const run = yield* Effect.fork(Effect.exit(runAll("two", { threadId })))
          yield* Effect.repeat(Effect.sync(() => serverText(threadId)), {
            until: (text) => text === "Hello",
            schedule: Schedule.spaced("5 millis")
          })
          // This client has no run on the thread: the run its read shows, and it cancels, is the other client's.
          expect((yield* tambo.fetchThread(threadId)).status).toBe("streaming")
          yield* tambo.cancelRun(threadId)
          expect(server().cancels.slice(cancelled)).toMatchObject([{ threadId, reason: "user_cancelled" }])
          return yield* Fiber.join(run)
        }).pipe(Effect.provide(tamboLayer(server())))
        expect(Exit.isFailure(otherExit)).toBe(true)
        expect(server().threads.get(threadId)?.runStatus).toBe("idle")
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      }).pipe(Effect.provide(tamboLayer(server()))))

    it.live("a read answered after a later read of the thread is not applied: the store keeps the later one, not the other client's ended run", () =>
      throughProxy((proxy) =>
        Effect.gen(function* () {
          const tambo = yield* Tambo.Tambo
          server().setScript([Script.text("first")])
          const threadId = (yield* runAll("one"))[0]!.threadId
          // This client's read, answered while the other client's run streams; its answer waits.
          const held = proxy.holdResponse((request) => request.method === "GET" && request.url.startsWith(`/v1/threads/${threadId}?`))
          const read = yield* otherRun(threadId, [Script.text(["Hel", "lo"]), Script.hang()], "Hello", Effect.gen(function* () {
            const read = yield* Effect.fork(tambo.fetchThread(threadId))
            yield* arrived(held)
            return read
          }))
          // Once the other client's run ended, a later read answers first; the earlier one comes last.
          expect((yield* tambo.fetchThread(threadId)).status).toBe("idle")
          held.release()
          // It resolves with what the store holds, as a read the store did not take does.
          const older = yield* Fiber.join(read)
          expect(older.status).toBe("idle")
          expect(Option.getOrThrow(yield* tambo.getThread(threadId)).status).toBe("idle")
          yield* expectStoreEqualsServer(tambo, server(), threadId)
        })
      ))

    it.live("a run's end that reads the thread while another client's run streams on it: the next run leaves the store equal to the server", () =>
      throughProxy((proxy) =>
        Effect.gen(function* () {
          const tambo = yield* Tambo.Tambo
          server().setScript([Script.text("first")])
          // The end's read of the thread waits until the other client's reply streams.
          const held = proxy.holdRequest((request) => request.method === "GET" && request.path.startsWith("/v1/threads/"))
          const first = yield* Effect.fork(runAll("one"))
          yield* arrived(held)
          const threadId = server().threads.list()[0]!.id
          yield* otherRun(threadId, [Script.text(["Hel", "lo"]), Script.hang()], "Hello", Effect.gen(function* () {
            held.release()
            yield* Fiber.join(first)
          }))
          const stored = Option.getOrThrow(yield* tambo.getThread(threadId))
          expect(stored.messages.map((m) => m.content)).toEqual([
            [{ type: "text", text: "one" }],
            [{ type: "text", text: "first" }],
            [{ type: "text", text: "two" }],
            [{ type: "text", text: "Hello" }]
          ])
          server().setScript([Script.text("third")])
          yield* runAll("three", { threadId })
          yield* expectStoreEqualsServer(tambo, server(), threadId)
        })
      ))
  })

  it.live("switchThread to a thread the client has not seen loads it and makes it current", () =>
    Effect.gen(function* () {
      const remote = seed("elsewhere")
      const tambo = yield* Tambo.Tambo
      yield* tambo.switchThread(remote.id)
      const state = yield* tambo.state
      expect(state.currentThreadId).toBe(remote.id)
      const current = yield* tambo.getThread()
      expect(Option.map(current, (t) => t.messages.length)).toEqual(Option.some(2))
      expect(server().requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /v1/threads/${remote.id}`])
      // Switching to a thread the client knows asks nothing.
      yield* tambo.startNewThread
      yield* tambo.switchThread(remote.id)
      expect(server().requests).toHaveLength(1)
      // A run continues it, with its last run: the thread is loaded, not replaced.
      server().setScript([Script.text("more")])
      const events = yield* runAll("follow-up")
      expect(events.at(-1)!.threadId).toBe(remote.id)
      expect(events.at(-1)!.snapshot.messages).toHaveLength(4)
      expectUserKeyOnEveryRequest()
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("switchThread to a thread that does not exist fails, and the current thread stays", () =>
    Effect.gen(function* () {
      const known = seed("known")
      const tambo = yield* Tambo.Tambo
      yield* tambo.switchThread(known.id)
      const error = yield* Effect.flip(tambo.switchThread("thr_missing"))
      expect(error._tag === "ApiError" && error.status).toBe(403)
      const state = yield* tambo.state
      expect(state.currentThreadId).toBe(known.id)
      expect(state.threadMap["thr_missing"]).toBeUndefined()
      // A thread of another user is as missing as one that does not exist.
      const theirs = seed("theirs", "user-2")
      const forbidden = yield* Effect.flip(tambo.switchThread(theirs.id))
      expect(forbidden._tag === "ApiError" && forbidden.status).toBe(403)
      expect((yield* tambo.state).currentThreadId).toBe(known.id)
      expectUserKeyOnEveryRequest()
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("an empty thread id fails each call about a thread with a ConfigError (InvalidOption), and sends nothing", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const before = yield* tambo.state
      const calls: ReadonlyArray<readonly [string, (threadId: string) => Effect.Effect<unknown, TamboError>]> = [
        ["fetchThread", tambo.fetchThread],
        ["switchThread", tambo.switchThread],
        ["deleteThread", tambo.deleteThread],
        ["updateThreadName", (threadId) => tambo.updateThreadName(threadId, "name")],
        ["generateThreadName", tambo.generateThreadName],
        ["getPendingToolCalls", tambo.getPendingToolCalls],
        ["listSuggestions", (threadId) => tambo.listSuggestions(threadId, "msg_1")],
        ["generateSuggestions", (threadId) => tambo.generateSuggestions(threadId, "msg_1")],
        ["updateComponentState", (threadId) => tambo.updateComponentState(threadId, "comp_card", { state: {} })]
      ]
      for (const [method, call] of calls) {
        for (const threadId of ["", undefined as unknown as string]) {
          const error = yield* Effect.flip(call(threadId))
          expect(fields(error)).toMatchObject({
            _tag: "ConfigError",
            reason: "InvalidOption",
            message: `${method}: the thread id must be a non-empty string`
          })
        }
      }
      expect(server().requests).toEqual([])
      expect(yield* tambo.state).toBe(before)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a call that needs a thread the server saved fails for a new conversation's id with a ConfigError (InvalidOption), and sends nothing", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      yield* tambo.startNewThread
      const before = yield* tambo.state
      expect(before.threadMap[ClientState.PLACEHOLDER_THREAD_ID]).toBeDefined()
      const calls: ReadonlyArray<readonly [string, (threadId: string) => Effect.Effect<unknown, TamboError>]> = [
        ["fetchThread", tambo.fetchThread],
        ["deleteThread", tambo.deleteThread],
        ["updateThreadName", (threadId) => tambo.updateThreadName(threadId, "name")],
        ["generateThreadName", tambo.generateThreadName],
        ["listSuggestions", (threadId) => tambo.listSuggestions(threadId, "msg_1")],
        ["generateSuggestions", (threadId) => tambo.generateSuggestions(threadId, "msg_1")],
        ["updateComponentState", (threadId) => tambo.updateComponentState(threadId, "comp_card", { state: {} })]
      ]
      for (const [method, call] of calls) {
        expect(fields(yield* Effect.flip(call(ClientState.PLACEHOLDER_THREAD_ID)))).toMatchObject(unsaved(method, ClientState.PLACEHOLDER_THREAD_ID))
        // A local id the store shows no thread of names none the client could save.
        const stale = `${ClientState.LOCAL_THREAD_PREFIX}1`
        expect(fields(yield* Effect.flip(call(stale)))).toMatchObject(noLongerHeld(method, stale))
      }
      expect(server().requests).toEqual([])
      expect(yield* tambo.state).toBe(before)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a call with a new conversation's local thread id, once the server named that thread, acts on the thread the server named", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      server().setScript([Script.component("Card", { title: "hi" }, { id: "comp_card" })])
      const { localId, release, run } = yield* runInLocalThread("show a card")
      yield* release
      const threadId = (yield* Fiber.join(run)).at(-1)!.threadId
      expect(threadId).not.toBe(localId)

      expect((yield* tambo.fetchThread(localId)).id).toBe(threadId)
      yield* tambo.updateThreadName(localId, "named")
      expect(server().threads.get(threadId)!.name).toBe("named")
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      yield* tambo.updateComponentState(localId, "comp_card", { state: { favourite: true } })
      const reply = server().threads.get(threadId)!.messages.at(-1)!
      expect(reply.content.find((block) => block.type === "component")).toMatchObject({ state: { favourite: true } })
      yield* tambo.listSuggestions(localId, reply.id)
      expect(yield* tambo.getPendingToolCalls(localId)).toEqual([])
      yield* tambo.switchThread(localId)
      expect((yield* tambo.state).currentThreadId).toBe(threadId)
      yield* tambo.startNewThread
      yield* tambo.deleteThread(localId)
      expect(server().threads.get(threadId)).toBeUndefined()
      expect((yield* tambo.state).threadMap[threadId]).toBeUndefined()
      expect(server().requests.filter((r) => r.url.includes(localId))).toEqual([])
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("getThread, forgetThread, the pending calls and the agent state of a new conversation's local thread id, once the server named that thread, are that thread's; once it left the store the id names none", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      server().setScript([Script.text("First.")])
      const { localId, release, run } = yield* runInLocalThread("first")
      // Still waiting for the server: the store holds the local thread, unsaved.
      expect(fields(yield* Effect.flip(tambo.fetchThread(localId)))).toMatchObject(unsaved("fetchThread", localId))
      yield* release
      const threadId = (yield* Fiber.join(run)).at(-1)!.threadId
      expect(Option.map(yield* tambo.getThread(localId), (thread) => thread.id)).toEqual(Option.some(threadId))
      expect(yield* tambo.setAgentState(localId, { step: 1 })).toEqual({ step: 1 })
      expect(yield* tambo.getAgentState(localId)).toEqual({ step: 1 })
      expect(yield* tambo.forgetThread(localId)).toBe(true)
      expect((yield* tambo.state).threadMap[threadId]).toBeUndefined()
      expect(yield* tambo.getThread(localId)).toEqual(Option.none())
      expect(fields(yield* Effect.flip(tambo.fetchThread(localId)))).toMatchObject(noLongerHeld("fetchThread", localId))
      expect(fields(yield* Effect.flip(tambo.getPendingToolCalls(localId)))).toMatchObject(
        noLongerHeld("getPendingToolCalls", localId)
      )
      expect(server().requests.filter((r) => r.url.includes(localId))).toEqual([])
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a run asked for with a new conversation's local thread id, once the server named that thread, goes on that thread", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      server().setScript([Script.text("First."), Script.text("Second.")])
      const { localId, release, run } = yield* runInLocalThread("first")
      yield* release
      const threadId = (yield* Fiber.join(run)).at(-1)!.threadId
      const second = yield* runAll("second", { threadId: localId })
      expect(second.at(-1)!.threadId).toBe(threadId)
      expect(server().threads.list().length).toBe(1)
      expect(server().threads.get(threadId)!.messages).toHaveLength(4)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      expect(server().requests.filter((r) => r.url.includes(localId))).toEqual([])
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a run asked for with a new conversation's local thread id whose named thread was forgotten or deleted fails saying the client holds no thread of it, sending nothing, instead of starting a new conversation", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const leavings: ReadonlyArray<readonly [string, (threadId: string) => Effect.Effect<unknown, unknown>]> = [
        ["forgotten", (threadId) => tambo.forgetThread(threadId)],
        ["deleted", (threadId) => tambo.deleteThread(threadId)]
      ]
      for (const [name, leave] of leavings) {
        server().reset()
        server().setScript([Script.text("First."), Script.text("Not to be sent.")])
        const { localId, release, run } = yield* runInLocalThread(name)
        yield* release
        const threadId = (yield* Fiber.join(run)).at(-1)!.threadId
        yield* leave(threadId)
        const before = server().requests.length
        const refused = yield* Effect.flip(runAll("again", { threadId: localId }))
        expect(fields(refused), name).toMatchObject(noLongerHeld("run", localId))
        expect(server().requests.length, name).toBe(before)
        expect(Object.values((yield* tambo.state).threadMap).flatMap((t) => t.thread.messages), name).toEqual([])
      }
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a run asked for with a new conversation's local thread id whose run ended without a thread starts a new conversation", () =>
    Effect.gen(function* () {
      server().setScript(Script.beforeResponse((request) => request.text === "first" ? [Script.httpError(500)] : [Script.text("Hi.")]))
      const { localId, release, run } = yield* runInLocalThread("first")
      yield* release
      expect(Exit.isFailure(yield* Fiber.await(run))).toBe(true)
      const again = yield* runAll("again", { threadId: localId })
      const threadId = again.at(-1)!.threadId
      expect(ClientState.isLocalThreadId(threadId)).toBe(false)
      expect(server().threads.get(threadId)!.messages.map((m) => m.role)).toEqual(["user", "assistant"])
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a run asked for with a new conversation's local thread id while its first run creates the thread goes on the thread that run creates", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      server().setScript([Script.text("First."), Script.text("Second.")])
      const { localId, release, run } = yield* runInLocalThread("first")
      // A second run there is a second run of the thread its first run creates: it waits for it.
      const second = yield* Effect.fork(runAll("second", { threadId: localId, onBusy: "queue" }))
      yield* release
      const threadId = (yield* Fiber.join(run)).at(-1)!.threadId
      expect((yield* Fiber.join(second)).at(-1)!.threadId).toBe(threadId)
      expect(server().threads.list().length).toBe(1)
      expect(server().threads.get(threadId)!.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"])
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("continueRun with a new conversation's local thread id, once the server named that thread, answers the calls its run waits on there", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      server().setScript([Script.toolCall("get_weather", { city: "Oslo" }, { id: "call_oslo" }), Script.text("Sunny.")])
      const { localId, release, run } = yield* runInLocalThread("weather?", { autoExecuteTools: false })
      yield* release
      const threadId = (yield* Fiber.join(run)).at(-1)!.threadId
      const continued = yield* Stream.runCollect(tambo.continueRun(localId, [{ toolCallId: "call_oslo", result: "sunny" }]))
      expect(Chunk.toReadonlyArray(continued).at(-1)!.threadId).toBe(threadId)
      expect(server().threads.get(threadId)!.pendingToolCallIds ?? []).toEqual([])
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  it.live("cancelRun of a new conversation's local thread id cancels the run creating that thread", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      server().setScript([Script.text("First.")])
      const before = yield* runInLocalThread("first")
      yield* tambo.cancelRun(before.localId)
      yield* before.release
      const cancelled = yield* Effect.exit(Fiber.join(before.run))
      expect(Exit.isFailure(cancelled) && Cause.squash(cancelled.cause)).toMatchObject({ _tag: "RunCancelledError" })
      expect(server().threads.list().length).toBe(0)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a switch that fails after the user switched on leaves the thread switched to last current", () =>
    Effect.gen(function* () {
      const known = seed("known")
      const later = seed("later")
      const tambo = yield* Tambo.Tambo
      yield* tambo.switchThread(known.id)
      yield* tambo.fetchThread(later.id)
      // Loading the missing thread takes a request; meanwhile the user switches to another.
      const missing = yield* Effect.fork(tambo.switchThread("thr_missing"))
      yield* Effect.yieldNow()
      expect((yield* tambo.state).currentThreadId).toBe("thr_missing")
      yield* tambo.switchThread(later.id)
      const exit = yield* Fiber.await(missing)
      expect(Exit.isFailure(exit)).toBe(true)
      expect((yield* tambo.state).currentThreadId).toBe(later.id)
    }).pipe(Effect.provide(tamboLayer(server()))))

  /**
   * A proxy on loopback in front of the testing server that holds the first read of `threadId`
   * (`arrived` once it came) and answers it with a 503 on `fail`; everything else goes through.
   */
  const firstReadFails = (threadId: string) =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      const read = proxy.holdRequest((request) => request.method === "GET" && request.path === `/v1/threads/${threadId}`)
      const tambo = yield* Effect.provide(Tambo.Tambo, tamboLayer(server(), { tamboUrl: proxy.url }))
      return { tambo, arrived: arrived(read), fail: () => read.fail(503) }
    })

  it.live("two switches to one thread: the first failing after the second loaded it leaves that thread current", () =>
    Effect.gen(function* () {
      const previous = seed("previous")
      const target = seed("target")
      const { arrived, fail, tambo } = yield* firstReadFails(target.id)
      yield* tambo.switchThread(previous.id)
      const first = yield* Effect.fork(tambo.switchThread(target.id))
      yield* arrived
      yield* tambo.switchThread(target.id)
      fail()
      const error = yield* Effect.flip(Fiber.join(first))
      expect(fields(error)).toMatchObject({ _tag: "ApiError", status: 503 })
      const state = yield* tambo.state
      expect(state.currentThreadId).toBe(target.id)
      expect(state.threadMap[target.id]?.thread.name).toBe("target")
    }).pipe(Effect.scoped))

  it.live("a switch failing after a run on the thread switched to loaded it leaves that thread current", () =>
    Effect.gen(function* () {
      const previous = seed("previous")
      const target = seed("target")
      const { arrived, fail, tambo } = yield* firstReadFails(target.id)
      yield* tambo.switchThread(previous.id)
      const switched = yield* Effect.fork(tambo.switchThread(target.id))
      yield* arrived
      // The user writes in the thread switched to: the run reads the thread itself.
      server().setScript([Script.text("Here.")])
      yield* Stream.runDrain(tambo.run("still there?"))
      fail()
      const error = yield* Effect.flip(Fiber.join(switched))
      expect(fields(error)).toMatchObject({ _tag: "ApiError", status: 503 })
      const state = yield* tambo.state
      expect(state.currentThreadId).toBe(target.id)
      expect(state.threadMap[target.id]?.thread.messages).toHaveLength(4)
    }).pipe(Effect.scoped))

  it.live("a switch interrupted while it loads the thread (a timeout, a caller that gave up) leaves the thread current before", () =>
    Effect.gen(function* () {
      const previous = seed("previous")
      const target = seed("target")
      const { arrived, tambo } = yield* firstReadFails(target.id)
      yield* tambo.switchThread(previous.id)
      const switched = yield* Effect.fork(tambo.switchThread(target.id))
      yield* arrived
      yield* Fiber.interrupt(switched)
      const state = yield* tambo.state
      expect(state.currentThreadId).toBe(previous.id)
      expect(state.threadMap[target.id]).toBeUndefined()
      // Switched to again, the thread loads and stays current.
      yield* tambo.switchThread(target.id)
      expect((yield* tambo.state).threadMap[(yield* tambo.state).currentThreadId]?.thread.name).toBe("target")
    }).pipe(Effect.scoped))

  it.live("a switch that fails after the thread current before left the store (forgotten, deleted) makes a new conversation current", () =>
    throughProxy((proxy) =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const leaves = [
          (threadId: string) => Effect.asVoid(tambo.forgetThread(threadId)),
          (threadId: string) => tambo.deleteThread(threadId)
        ]
        for (const leave of leaves) {
          const previous = seed("previous")
          yield* tambo.switchThread(previous.id)
          const held = proxy.holdResponse((request) => request.method === "GET" && request.url.startsWith("/v1/threads/thr_missing?"))
          const missing = yield* Effect.fork(tambo.switchThread("thr_missing"))
          yield* arrived(held)
          yield* leave(previous.id)
          held.release()
          const error = yield* Effect.flip(Fiber.join(missing))
          expect(fields(error)).toMatchObject({ _tag: "ApiError", status: 403 })
          const state = yield* tambo.state
          expect(state.threadMap[previous.id]).toBeUndefined()
          expect(state.currentThreadId).toBe(ClientState.PLACEHOLDER_THREAD_ID)
          expect(state.threadMap[state.currentThreadId]).toBeDefined()
        }
      })))

  it.live("a read of a thread that answers after a run on it ended does not take the store back", () =>
    throughProxy((proxy) =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        server().setScript([Script.text("first")])
        const [first] = yield* runAll("one")
        const threadId = first!.threadId
        // The read is answered as the thread is now, and the answer held back while a run goes.
        const { read, held } = yield* heldReadOf(proxy, threadId)
        server().setScript([Script.text("second")])
        yield* runAll("two", { threadId })
        expect(Option.getOrThrow(yield* tambo.getThread(threadId)).messages).toHaveLength(4)
        held.release()
        const returned = yield* Fiber.join(read)
        // The store keeps the newer copy, and the read gives that back.
        yield* expectServersCopy(returned, threadId)
        expect((yield* tambo.state).threadMap[threadId]!.lastCompletedRunId).toBe(server().threads.get(threadId)!.lastCompletedRunId)
        // The next run names the last run the server completed.
        server().setScript([Script.text("third")])
        yield* thirdRunGoes(threadId)
      })))

  it.live("a read sent while a run is on the thread, answered after the run ended, does not take the store back", () =>
    throughProxy((proxy) =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        server().setScript([Script.text("first")])
        const [first] = yield* runAll("one")
        const threadId = first!.threadId
        let readAnswered!: () => void
        const answered = new Promise<void>((resolve) => (readAnswered = resolve))
        server().setScript([Script.text("sec"), Script.hold(answered), Script.text("ond")])
        const run = yield* Effect.fork(runAll("two", { threadId }))
        // Once the run streams on the thread (its first chunk took it), a read is sent, answered as
        // the thread is then, and the answer held back until the run ended.
        yield* Effect.repeat(
          Effect.map(tambo.getThread(threadId), (thread) => JSON.stringify(Option.getOrThrow(thread).messages).includes("sec")),
          { until: (streaming) => streaming, schedule: Schedule.spaced("5 millis") }
        )
        const { read, held } = yield* heldReadOf(proxy, threadId)
        expect(server().threads.get(threadId)!.runStatus).toBe("streaming")
        readAnswered()
        yield* Fiber.join(run)
        yield* expectStoreEqualsServer(tambo, server(), threadId)
        held.release()
        yield* Fiber.join(read)
        yield* expectStoreEqualsServer(tambo, server(), threadId)
        // The next run names the last run the server completed.
        server().setScript([Script.text("third")])
        yield* thirdRunGoes(threadId)
      })))

  it.live("a read sent before forgetThread, answered after runs took the thread again, does not take the store back", () =>
    throughProxy((proxy) =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        server().setScript((request) =>
          request.text.startsWith("fail") ? [Script.httpError(400)] : [Script.text(`re: ${request.text}`)]
        )
        const [first] = yield* runAll("one")
        const threadId = first!.threadId
        yield* runAll("two", { threadId })
        yield* tambo.startNewThread
        // The read is answered as the thread is now (two runs), and the answer held back.
        const { read, held } = yield* heldReadOf(proxy, threadId)
        // The app drops the thread meanwhile, and the user goes on with it: as many runs take it
        // again as had taken it when the read was sent.
        expect(yield* tambo.forgetThread(threadId)).toBe(true)
        yield* runAll("three", { threadId })
        yield* Effect.either(runAll("fail", { threadId }))
        yield* expectStoreEqualsServer(tambo, server(), threadId)
        held.release()
        const returned = yield* Fiber.join(read)
        // The store keeps its newer copy, and the read gives that back.
        yield* expectServersCopy(returned, threadId)
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      })))

  it.live("a read sent before a run and forgetThread, answered after both, does not bring the older copy back", () =>
    throughProxy((proxy) =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        server().setScript((request) => [Script.text(`re: ${request.text}`)])
        const [first] = yield* runAll("one")
        const threadId = first!.threadId
        yield* tambo.startNewThread
        const { read, held } = yield* heldReadOf(proxy, threadId)
        yield* runAll("two", { threadId })
        expect(yield* tambo.forgetThread(threadId)).toBe(true)
        held.release()
        // The caller gets the copy it asked for; the store stays without the thread.
        expect((yield* Fiber.join(read)).messages).toHaveLength(2)
        expect(Option.isNone(yield* tambo.getThread(threadId))).toBe(true)
        // The next run reads the thread as the server has it, and follows its last run.
        yield* thirdRunGoes(threadId)
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      })))

  it.live("a read answered before a component's state changed, delivered after, does not take the state back", () =>
    throughProxy((proxy) =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        server().setScript([Script.component("Card", { title: "hi" }, { id: "comp_card" })])
        const [first] = yield* runAll("show a card")
        const threadId = first!.threadId
        const { read, held } = yield* heldReadOf(proxy, threadId)
        yield* tambo.updateComponentState(threadId, "comp_card", { state: { favourite: true } })
        held.release()
        const returned = yield* Fiber.join(read)
        const stateOf = (thread: Types.TamboThread) =>
          thread.messages.flatMap((m) => m.content).find((block) => block.type === "component")?.state
        expect(stateOf(Option.getOrThrow(yield* tambo.getThread(threadId)))).toEqual({ favourite: true })
        expect(stateOf(returned)).toEqual({ favourite: true })
        yield* expectServersCopy(returned, threadId)
      })))

  it.live("a read answered before a rename, delivered after, does not take the name back", () =>
    throughProxy((proxy) =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const threadId = seed("old name").id
        yield* tambo.fetchThread(threadId)
        const { read, held } = yield* heldReadOf(proxy, threadId)
        yield* tambo.updateThreadName(threadId, "new name")
        held.release()
        const returned = yield* Fiber.join(read)
        expect(Option.getOrThrow(yield* tambo.getThread(threadId)).name).toBe("new name")
        expect(returned.name).toBe("new name")
        expect(server().threads.get(threadId)!.name).toBe("new name")
      })))

  /** A run on a thread the store holds ("old name"), forked, its end's read of the thread held by `proxy`. */
  const aRunWhoseEndReadIsHeld = (proxy: HoldingProxy.HoldingProxy) =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = seed("old name").id
      yield* tambo.fetchThread(threadId)
      // The store holds the thread: the run reads it only at its end.
      const read = proxy.holdResponse((request) => request.method === "GET" && request.url.startsWith(`/v1/threads/${threadId}?`))
      server().setScript([Script.text("Here.")])
      const run = yield* Effect.fork(runAll("still there?", { threadId }))
      yield* arrived(read)
      return { tambo, threadId, read, run }
    })

  describe("a run's end reading its thread, answered before the server took a name, delivered after", () => {
    const namings: ReadonlyArray<readonly [string, (tambo: Tambo.Tambo.Service, threadId: string) => Effect.Effect<unknown, TamboError>]> = [
      ["updateThreadName", (tambo, threadId) => tambo.updateThreadName(threadId, "new name")],
      ["generateThreadName", (tambo, threadId) => tambo.generateThreadName(threadId)]
    ]
    for (const [call, name] of namings) {
      it.live(`${call}: the read does not take the name back`, () =>
        throughProxy((proxy) =>
          Effect.gen(function* () {
            const { read, run, tambo, threadId } = yield* aRunWhoseEndReadIsHeld(proxy)
            yield* name(tambo, threadId)
            read.release()
            yield* Fiber.join(run)
            expect(server().threads.get(threadId)!.name).not.toBe("old name")
            yield* expectStoreEqualsServer(tambo, server(), threadId)
          })))
    }
  })

  it.live("a rename the server took after a run's end read the thread, answered once that read was written: the store ends with the name", () =>
    throughProxy((proxy) =>
      Effect.gen(function* () {
        // The server answered the end read with the old name, then takes the rename.
        const { read, run, tambo, threadId } = yield* aRunWhoseEndReadIsHeld(proxy)
        const renamed = proxy.holdResponse((request) => request.method === "PATCH")
        const rename = yield* Effect.fork(tambo.updateThreadName(threadId, "new name"))
        yield* arrived(renamed)
        // The read is written first, with the name the server had then.
        read.release()
        yield* Fiber.join(run)
        expect(Option.getOrThrow(yield* tambo.getThread(threadId)).name).toBe("old name")
        renamed.release()
        yield* Fiber.join(rename)
        expect(server().threads.get(threadId)!.name).toBe("new name")
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      })))

  it.live("a rename the server took after a run's end read the thread, answered as that read's answer comes back: the store ends with the name", () =>
    Effect.suspend(() => {
      const gate = makeEndReadGate()
      return Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const threadId = seed("old name").id
        yield* tambo.fetchThread(threadId)
        server().setScript([Script.text("Here.")])
        gate.armed = true
        const run = yield* Effect.fork(runAll("still there?", { threadId }))
        // The server answered the end read with the old name; then it takes the rename, whose answer
        // goes on only as the read's answer comes back to the run's end.
        yield* Deferred.await(gate.readAnswered)
        const rename = yield* Effect.fork(tambo.updateThreadName(threadId, "new name"))
        yield* Fiber.join(run)
        yield* Fiber.join(rename)
        expect(server().threads.get(threadId)!.name).toBe("new name")
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      }).pipe(Effect.provide(gatedLayer(gate)))
    }))

  it.live("getPendingToolCalls of a thread renamed while it is read answers with the calls the server waits on", () => {
    return Effect.scoped(Effect.flatMap(HoldingProxy.scoped(server()), (proxy) =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        server().setScript([Script.toolCall("get_weather", { city: "Oslo" }, { id: "call_oslo" })])
        const events = yield* runAll("weather?", { autoExecuteTools: false })
        const threadId = events.at(-1)!.threadId
        yield* tambo.startNewThread
        expect(yield* tambo.forgetThread(threadId)).toBe(true)
        const held = proxy.holdResponse((request) => request.method === "GET" && request.url.startsWith(`/v1/threads/${threadId}?`))
        const listed = yield* Effect.fork(tambo.getPendingToolCalls(threadId))
        yield* arrived(held)
        // The read is older than the rename: the store does not take its copy.
        yield* tambo.updateThreadName(threadId, "renamed")
        held.release()
        const calls = yield* Fiber.join(listed)
        expect(calls).toEqual([
          { toolCallId: "call_oslo", toolName: "get_weather", args: { city: "Oslo" }, needsApproval: false, threadId }
        ])
        // The store stays without the thread, as the read left it.
        expect(Option.isNone(yield* tambo.getThread(threadId))).toBe(true)
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url, tools: [weather] })))))
  })

  it.live("continueRun on a thread renamed while it is read answers the calls the server waits on, and the run goes on", () => {
    return Effect.scoped(Effect.flatMap(HoldingProxy.scoped(server()), (proxy) =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        server().setScript([
          Script.toolCall("get_weather", { city: "Oslo" }, { id: "call_oslo" }),
          Script.text("Oslo is mild.")
        ])
        const events = yield* runAll("weather?", { autoExecuteTools: false })
        const threadId = events.at(-1)!.threadId
        yield* tambo.startNewThread
        expect(yield* tambo.forgetThread(threadId)).toBe(true)
        const held = proxy.holdResponse((request) => request.method === "GET" && request.url.startsWith(`/v1/threads/${threadId}?`))
        const continued = yield* Effect.fork(
          Stream.runDrain(tambo.continueRun(threadId, [{ toolCallId: "call_oslo", result: { temperature: 12 } }]))
        )
        yield* arrived(held)
        // The read is older than the rename: the store does not take its copy.
        yield* tambo.updateThreadName(threadId, "renamed")
        held.release()
        yield* Fiber.join(continued)
        const thread = Option.getOrThrow(yield* tambo.getThread(threadId))
        expect(thread.name).toBe("renamed")
        expect(thread.messages.at(-1)!.content).toEqual([{ type: "text", text: "Oslo is mild." }])
        expect(server().threads.get(threadId)!.pendingToolCallIds ?? []).toEqual([])
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url, tools: [weather] })))))
  })

  it.live("continueRun on a thread deleted while it is read fails with a ToolError (UnknownToolCall), not a defect", () =>
    throughProxy((proxy) =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const remote = seed("doomed")
        const held = proxy.holdResponse((request) => request.method === "GET" && request.url.startsWith(`/v1/threads/${remote.id}?`))
        const continued = yield* Effect.fork(
          Stream.runDrain(tambo.continueRun(remote.id, [{ toolCallId: "call_1", result: "done" }]))
        )
        yield* arrived(held)
        yield* tambo.deleteThread(remote.id)
        held.release()
        const error = yield* Effect.flip(Fiber.join(continued))
        expect(fields(error)).toMatchObject({ _tag: "ToolError", reason: "UnknownToolCall", toolCallId: "call_1" })
        expect((yield* tambo.state).threadMap[remote.id]).toBeUndefined()
      })))

  it.live("continueRun on a thread deleted while it is read, with a call pending, fails as a run on a deleted thread does (403) and sends no run", () => {
    return Effect.scoped(Effect.flatMap(HoldingProxy.scoped(server()), (proxy) =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        server().setScript([Script.toolCall("get_weather", { city: "Oslo" }, { id: "call_oslo" })])
        const threadId = (yield* runAll("weather?", { autoExecuteTools: false })).at(-1)!.threadId
        yield* tambo.startNewThread
        expect(yield* tambo.forgetThread(threadId)).toBe(true)
        const runsBefore = server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs")).length
        const held = proxy.holdResponse((request) => request.method === "GET" && request.url.startsWith(`/v1/threads/${threadId}?`))
        const continued = yield* Effect.fork(
          Stream.runDrain(tambo.continueRun(threadId, [{ toolCallId: "call_oslo", result: "done" }]))
        )
        yield* arrived(held)
        yield* tambo.deleteThread(threadId)
        held.release()
        // The read said the server waited on the call; the run's own read finds the thread gone.
        const error = yield* Effect.flip(Fiber.join(continued))
        expect(fields(error)).toMatchObject({ _tag: "ApiError", status: 403 })
        expect(server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs")).length).toBe(runsBefore)
        expect((yield* tambo.state).threadMap[threadId]).toBeUndefined()
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url, tools: [weather] })))))
  })

  it.live("a read sent before deleteThread does not bring the deleted thread back", () =>
    throughProxy((proxy) =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const remote = seed("doomed")
        yield* tambo.fetchThread(remote.id)
        const { read, held } = yield* heldReadOf(proxy, remote.id)
        yield* tambo.deleteThread(remote.id)
        held.release()
        yield* Fiber.join(read)
        expect((yield* tambo.state).threadMap[remote.id]).toBeUndefined()
      })))

  /**
   * Two renames of one thread at once, through the proxy: the first one's answer is held until
   * `second` (the second rename, as the test makes it) ended; then the names the server and the
   * store hold.
   */
  const renamesAtOnce = <E>(
    second: (proxy: HoldingProxy.HoldingProxy, rename: Effect.Effect<void, TamboError>) => Effect.Effect<void, E>
  ) =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      return yield* Effect.gen(function* () {
        const remote = seed("old name")
        const tambo = yield* Tambo.Tambo
        yield* tambo.fetchThread(remote.id)
        const held = proxy.holdResponse((request) => request.method === "PATCH")
        const first = yield* Effect.fork(tambo.updateThreadName(remote.id, "first"))
        yield* arrived(held)
        yield* second(proxy, tambo.updateThreadName(remote.id, "second"))
        held.release()
        yield* Fiber.join(first)
        return {
          server: server().threads.get(remote.id)!.name,
          store: Option.getOrThrow(yield* tambo.getThread(remote.id)).name
        }
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url })))
    }).pipe(Effect.scoped)

  it.live("two renames at once: the store keeps the name sent last, as the server does, whichever answer comes last", () =>
    Effect.gen(function* () {
      const names = yield* renamesAtOnce((_, rename) => rename)
      expect(names).toEqual({ server: "second", store: "second" })
    }))

  it.live("two renames at once, the later refused: the store shows the earlier, which the server took", () =>
    Effect.gen(function* () {
      const names = yield* renamesAtOnce((proxy, rename) => {
        proxy.holdRequest((request) => request.method === "PATCH").fail()
        return Effect.flatMap(Effect.flip(rename), (refused) => Effect.sync(() => expect(refused._tag).toBe("ApiError")))
      })
      expect(names).toEqual({ server: "first", store: "first" })
    }))

  it.live("updateThreadName renames the thread on the server and in the store", () =>
    Effect.gen(function* () {
      const remote = seed("old name")
      const tambo = yield* Tambo.Tambo
      yield* tambo.fetchThread(remote.id)
      yield* tambo.updateThreadName(remote.id, "new name")
      expect(server().threads.get(remote.id)!.name).toBe("new name")
      const thread = yield* tambo.getThread(remote.id)
      expect(Option.map(thread, (t) => t.name)).toEqual(Option.some("new name"))
      const patch = server().requests.find((r) => r.method === "PATCH")!
      expect(patch.body).toMatchObject({ name: "new name" })
      expectUserKeyOnEveryRequest()
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("updateThreadName: the store takes the time the server changed the thread at with the name", () =>
    Effect.gen(function* () {
      const remote = ticking().threads.create({ userKey: "user-1", name: "old name", messages: [{ role: "user", content: "hi" }] })
      const tambo = yield* Tambo.Tambo
      yield* tambo.fetchThread(remote.id)
      yield* tambo.updateThreadName(remote.id, "new name")
      yield* expectStoreEqualsServer(tambo, ticking(), remote.id)
    }).pipe(Effect.provide(tamboLayer(ticking()))))

  it.live("generateThreadName: the store takes the time the server changed the thread at with the name", () =>
    Effect.gen(function* () {
      const remote = ticking().threads.create({ userKey: "user-1", messages: [{ role: "user", content: "hi" }] })
      const tambo = yield* Tambo.Tambo
      yield* tambo.fetchThread(remote.id)
      yield* tambo.generateThreadName(remote.id)
      yield* expectStoreEqualsServer(tambo, ticking(), remote.id)
    }).pipe(Effect.provide(tamboLayer(ticking()))))

  it.live("the automatic name after a run, made once the run's end read the thread: the store takes the time the server changed the thread at with it", () =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(ticking())
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const naming = proxy.holdRequest((request) => request.path.endsWith("/generate-name"))
        ticking().setScript([Script.text("Paris is sunny.")])
        const threadId = (yield* runAll("What is the weather in Paris?")).at(-1)!.threadId
        yield* Effect.promise(() => naming.arrived)
        naming.release()
        yield* tambo.store.changes.pipe(
          Stream.filter((state) => (state.threadMap[threadId]?.thread.name ?? "") !== ""),
          Stream.runHead
        )
        yield* expectStoreEqualsServer(tambo, ticking(), threadId)
      }).pipe(Effect.provide(tamboLayer(ticking(), { tamboUrl: proxy.url, autoGenerateThreadName: true, autoGenerateNameThreshold: 2 })))
    }).pipe(Effect.scoped))

  it.live("generateThreadName names a thread after its conversation", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("Paris is sunny.")])
      const events = yield* runAll("What is the weather in Paris?")
      const threadId = events.at(-1)!.threadId
      const tambo = yield* Tambo.Tambo
      const name = yield* tambo.generateThreadName(threadId)
      expect(Option.isSome(name)).toBe(true)
      expect(name).toEqual(Option.some(server().threads.get(threadId)!.name))
      const thread = yield* tambo.getThread(threadId)
      expect(Option.map(thread, (t) => t.name)).toEqual(name)
      const request = server().requests.find((r) => r.path.endsWith("/generate-name"))!
      expect(request.path).toBe(`/threads/${threadId}/generate-name`)
      expectUserKeyOnEveryRequest()
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a rename while generateThreadName's answer is on its way wins, in the store and on the server", () =>
    throughProxy((proxy) =>
      Effect.gen(function* () {
        server().setScript([Script.text("Paris is sunny.")])
        const threadId = (yield* runAll("What is the weather in Paris?")).at(-1)!.threadId
        const tambo = yield* Tambo.Tambo
        // The server stored the generated name; its answer is held while the user renames.
        const held = proxy.holdResponse((request) => request.method === "POST" && request.url.includes("/generate-name"))
        const generated = yield* Effect.fork(tambo.generateThreadName(threadId))
        yield* arrived(held)
        yield* tambo.updateThreadName(threadId, "my own name")
        held.release()
        expect(yield* Fiber.join(generated)).toEqual(Option.some("What is the weather in Paris?"))
        expect(server().threads.get(threadId)!.name).toBe("my own name")
        expect(Option.map(yield* tambo.getThread(threadId), (t) => t.name)).toEqual(Option.some("my own name"))
      })))

  it.live("deleteThread removes the thread on the server and from the store", () =>
    Effect.gen(function* () {
      const keep = seed("keep")
      const drop = seed("drop")
      const tambo = yield* Tambo.Tambo
      yield* tambo.fetchThread(keep.id)
      yield* tambo.fetchThread(drop.id)
      yield* tambo.deleteThread(drop.id)
      expect(server().threads.get(drop.id)).toBeUndefined()
      expect(server().threads.get(keep.id)).toBeDefined()
      const state = yield* tambo.state
      expect(state.threadMap[drop.id]).toBeUndefined()
      expect(state.threadMap[keep.id]).toBeDefined()
      expect((yield* tambo.listThreads()).threads.map((t) => t.id)).toEqual([keep.id])
      // Deleting it again: the API no longer knows it.
      const error = yield* Effect.flip(tambo.deleteThread(drop.id))
      expect(error._tag).toBe("ApiError")
      expectUserKeyOnEveryRequest()
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("deleteThread of a thread a run streams on cancels the run first: the thread does not come back", () =>
    Effect.gen(function* () {
      const drop = seed("drop")
      server().setScript([Script.text("Partial"), Script.hang()])
      const tambo = yield* Tambo.Tambo
      const streaming = yield* Deferred.make<void>()
      const running = yield* tambo.run("wait forever", { threadId: drop.id }).pipe(
        Stream.tap(({ event }) => event.type === "TEXT_MESSAGE_CONTENT" ? Deferred.succeed(streaming, undefined) : Effect.void),
        Stream.runDrain,
        Effect.fork
      )
      yield* Deferred.await(streaming)
      yield* tambo.deleteThread(drop.id)
      const exit = yield* Fiber.await(running)
      expect(Exit.isFailure(exit) && Option.map(Cause.failureOption(exit.cause), (e) => e._tag)).toEqual(
        Option.some("RunCancelledError")
      )
      // A Stop waits for the end of a run that is still recording it: whatever the run still had to
      // publish is in once it returns, and the thread stays gone.
      yield* tambo.cancelRun(drop.id)
      expect((yield* tambo.state).threadMap[drop.id]).toBeUndefined()
      expect(server().threads.get(drop.id)).toBeUndefined()
      // The thread went on the server first; the run's cancellation followed.
      const deleted = server().requests.filter((r) => r.method === "DELETE").map((r) => r.path)
      expect(deleted[0]).toMatch(new RegExp(`/threads/${drop.id}$`))
      expect(deleted.slice(1).some((path) => path.includes(`/threads/${drop.id}/runs/`))).toBe(true)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("deleteThread from a tool of the run on that thread: the run is cancelled, and the thread still goes", () => {
    const drop = seed("drop")
    // The tool deletes the thread its own run streams on (a "forget this conversation" tool),
    // through the service the app holds.
    let service: Tambo.Tambo.Service | undefined
    const forget = Tool.make({
      name: "forget",
      description: "deletes this conversation",
      input: Schema.Struct({}),
      execute: () => Effect.suspend(() => Effect.as(service!.deleteThread(drop.id), "forgotten"))
    })
    return Effect.gen(function* () {
      server().setScript([Script.toolCall("forget", {})])
      const tambo = yield* Tambo.Tambo
      service = tambo
      const exit = yield* Effect.exit(Stream.runDrain(tambo.run("forget this", { threadId: drop.id })))
      expect(Exit.isFailure(exit) && Option.map(Cause.failureOption(exit.cause), (e) => e._tag)).toEqual(
        Option.some("RunCancelledError")
      )
      // The deletion goes on once the run has let go of the thread.
      yield* until(() => server().threads.get(drop.id) === undefined)
      expect(server().threads.get(drop.id)).toBeUndefined()
      expect((yield* tambo.state).threadMap[drop.id]).toBeUndefined()
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [forget] })))
  })

  describe("a change its caller gave up on once the server took it", () => {
    /** Waits until the store shows `holds` of `threadId`'s state (undefined: not in the store). */
    const storeShows = (threadId: string, holds: (thread: ClientState.ThreadState | undefined) => boolean) =>
      Effect.flatMap(Tambo.Tambo, (tambo) =>
        tambo.store.changes.pipe(
          Stream.filter((state) => holds(state.threadMap[threadId])),
          Stream.runHead,
          Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`the store never showed what the server has of ${threadId}`) })
        ))

    /**
     * Forks `change` of a thread the store holds, with its answer held at the proxy once the server
     * acted; interrupts it (a caller's timeout or interruption), then lets the answer go on.
     */
    const interruptedOnceTaken = (
      proxy: HoldingProxy.HoldingProxy,
      method: string,
      threadId: string,
      change: Effect.Effect<unknown, TamboError>
    ) =>
      Effect.gen(function* () {
        const held = proxy.holdResponse((request) => request.method === method && request.url.includes(threadId))
        const fiber = yield* Effect.fork(change)
        yield* arrived(held)
        expect(Exit.isInterrupted(yield* Fiber.interrupt(fiber))).toBe(true)
        held.release()
      })

    it.live("an interrupted updateThreadName leaves the store with the name the server took", () =>
      throughProxy((proxy) =>
        Effect.gen(function* () {
          const thread = seed("old name")
          const tambo = yield* Tambo.Tambo
          yield* tambo.fetchThread(thread.id)
          yield* interruptedOnceTaken(proxy, "PATCH", thread.id, tambo.updateThreadName(thread.id, "new name"))
          expect(server().threads.get(thread.id)!.name).toBe("new name")
          yield* storeShows(thread.id, (held) => held?.thread.name === "new name")
          yield* expectStoreEqualsServer(tambo, server(), thread.id)
        })))

    it.live("an interrupted generateThreadName leaves the store with the name the server made", () =>
      throughProxy((proxy) =>
        Effect.gen(function* () {
          const thread = server().threads.create({ userKey: "user-1", messages: [{ role: "user", content: "name me" }] })
          const tambo = yield* Tambo.Tambo
          yield* tambo.fetchThread(thread.id)
          yield* interruptedOnceTaken(proxy, "POST", thread.id, tambo.generateThreadName(thread.id))
          const name = server().threads.get(thread.id)!.name
          expect(name).toBe("name me")
          yield* storeShows(thread.id, (held) => held?.thread.name === name)
          yield* expectStoreEqualsServer(tambo, server(), thread.id)
        })))

    it.live("an interrupted updateComponentState leaves the store with the state the server took", () =>
      throughProxy((proxy) =>
        Effect.gen(function* () {
          const tambo = yield* Tambo.Tambo
          server().setScript([Script.component("Card", { title: "hi" }, { id: "comp_card" })])
          const [first] = yield* runAll("show a card")
          const threadId = first!.threadId
          yield* interruptedOnceTaken(
            proxy,
            "POST",
            threadId,
            tambo.updateComponentState(threadId, "comp_card", { state: { favourite: true } })
          )
          const stateOf = (held: ClientState.ThreadState | undefined) =>
            held?.thread.messages.flatMap((m) => m.content).find((block) => block.type === "component")?.state
          yield* storeShows(threadId, (held) => {
            const state = stateOf(held)
            return isRecord(state) && state.favourite === true
          })
          const stored = server().threads.get(threadId)!.messages.flatMap((m) => m.content)
            .find((block) => block.type === "component")
          expect(stored?.type === "component" && stored.state).toEqual({ favourite: true })
          expect(stateOf((yield* tambo.state).threadMap[threadId])).toEqual({ favourite: true })
        })))

    it.live("an interrupted deleteThread leaves the store without the thread the server deleted", () =>
      throughProxy((proxy) =>
        Effect.gen(function* () {
          const thread = seed("drop")
          const tambo = yield* Tambo.Tambo
          yield* tambo.fetchThread(thread.id)
          yield* interruptedOnceTaken(proxy, "DELETE", thread.id, tambo.deleteThread(thread.id))
          expect(server().threads.get(thread.id)).toBeUndefined()
          yield* storeShows(thread.id, (held) => held === undefined)
        })))
  })

  describe("a thread another client deleted leaves the store", () => {
    /** Another client of the same user, on the same server: a second tab, another device. */
    const otherClientDeletes = (threadId: string) =>
      Effect.flatMap(Tambo.Tambo, (other) => other.deleteThread(threadId)).pipe(Effect.provide(tamboLayer(server())))

    const failureOf = (exit: Exit.Exit<unknown, unknown>) =>
      Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined

    // The API's thread guard answers 403 for a thread that is not there (as the testing server does).
    for (const call of ["fetchThread", "deleteThread"] as const) {
      it.live(`${call} fails as the API answers (403), and the store forgets the thread`, () =>
        Effect.gen(function* () {
          const gone = seed("gone")
          const tambo = yield* Tambo.Tambo
          yield* tambo.switchThread(gone.id)
          yield* otherClientDeletes(gone.id)
          const error = yield* Effect.flip(tambo[call](gone.id))
          expect(fields(error)).toMatchObject({ _tag: "ApiError", reason: "Forbidden", status: 403 })
          const state = yield* tambo.state
          expect(state.threadMap[gone.id]).toBeUndefined()
          // What was shown is gone: the next message starts a new conversation.
          expect(state.currentThreadId).toBe(ClientState.PLACEHOLDER_THREAD_ID)
        }).pipe(Effect.provide(tamboLayer(server()))))
    }

    it.live("a run on it fails, and the store forgets the thread; the client goes on", () =>
      Effect.gen(function* () {
        const gone = seed("gone")
        const tambo = yield* Tambo.Tambo
        yield* tambo.fetchThread(gone.id)
        yield* otherClientDeletes(gone.id)
        const exit = yield* Effect.exit(Stream.runDrain(tambo.run("still there?", { threadId: gone.id })))
        expect(failureOf(exit)).toMatchObject({ _tag: "ApiError", status: 403 })
        expect((yield* tambo.state).threadMap[gone.id]).toBeUndefined()
        server().setScript([Script.text("Hello again.")])
        const events = yield* runAll("hello")
        expect(events.at(-1)!.snapshot.messages.map((m) => m.role)).toEqual(["user", "assistant"])
      }).pipe(Effect.provide(tamboLayer(server()))))

    it.live("deleted between two rounds of a run: the run fails, and the store forgets the thread", () => {
      const gone = seed("gone")
      const ask = Tool.make({
        name: "ask_elsewhere",
        description: "meanwhile, the thread is deleted in another tab",
        input: Schema.Struct({}),
        execute: () => Effect.as(otherClientDeletes(gone.id), "done")
      })
      return Effect.gen(function* () {
        server().setScript([Script.toolCall("ask_elsewhere", {}), Script.text("never sent")])
        const tambo = yield* Tambo.Tambo
        const exit = yield* Effect.exit(Stream.runDrain(tambo.run("go", { threadId: gone.id })))
        expect(failureOf(exit)).toMatchObject({ _tag: "ApiError", status: 403 })
        expect(server().threads.get(gone.id)).toBeUndefined()
        expect((yield* tambo.state).threadMap[gone.id]).toBeUndefined()
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [ask] })))
    })

    it.scoped("only a thread the API no longer has is forgotten: a 403 counts only when the credentials still work", () =>
      Effect.gen(function* () {
        const kept = seed("kept")
        const hostile = yield* HostileServer.scoped
        const problem = (status: number) =>
          HostileServer.status(status, {
            headers: { "content-type": "application/problem+json" },
            body: JSON.stringify({ status, title: "refused", detail: `refused with ${status}` })
          })
        const thread = HostileServer.status(200, {
          headers: { "content-type": "application/json" },
          body: JSON.stringify(server().threads.get(kept.id))
        })
        const list = HostileServer.status(200, {
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ threads: [], hasMore: false })
        })
        const tambo = yield* Effect.provide(Tambo.Tambo, tamboLayer({ ...server(), url: hostile.url }))
        const held = Effect.map(tambo.state, (state) => state.threadMap[kept.id] !== undefined)
        const fetchAfter = (...answers: ReadonlyArray<HostileServer.Fault>) =>
          Effect.gen(function* () {
            hostile.respond(thread, ...answers)
            yield* tambo.fetchThread(kept.id)
            return yield* Effect.flip(tambo.fetchThread(kept.id))
          })
        // A server error: kept.
        expect(fields(yield* fetchAfter(problem(500)))).toMatchObject({ reason: "ServerError" })
        expect(yield* held).toBe(true)
        // A 403 while the credentials are refused too (a revoked API key): kept.
        expect(fields(yield* fetchAfter(problem(403), problem(403)))).toMatchObject({ reason: "Forbidden" })
        expect(yield* held).toBe(true)
        // A 403 while the credentials work: gone.
        expect(fields(yield* fetchAfter(problem(403), list))).toMatchObject({ reason: "Forbidden" })
        expect(yield* held).toBe(false)
        // A 404: gone.
        expect(fields(yield* fetchAfter(problem(404)))).toMatchObject({ reason: "NotFound" })
        expect(yield* held).toBe(false)
      }))
  })

  it.live("suggestions: generated for a run's reply, then listed", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("It is sunny in Paris.")])
      const events = yield* runAll("weather?")
      const last = events.at(-1)!
      const reply = last.snapshot.messages.at(-1)!
      expect(reply.role).toBe("assistant")
      // The client knows the reply by the id the server stored it under.
      expect(server().threads.get(last.threadId)!.messages.map((m) => m.id)).toContain(reply.id)
      const tambo = yield* Tambo.Tambo
      expect(yield* tambo.listSuggestions(last.threadId, reply.id)).toEqual([])
      const generated = yield* tambo.generateSuggestions(last.threadId, reply.id, { maxSuggestions: 2 })
      expect(generated).toHaveLength(2)
      for (const suggestion of generated) {
        expect(suggestion.title.length).toBeGreaterThan(0)
        expect(suggestion.detailedSuggestion.length).toBeGreaterThan(0)
      }
      const listed = yield* tambo.listSuggestions(last.threadId, reply.id)
      expect(listed.map((s) => s.id)).toEqual(generated.map((s) => s.id))
      const create = server().requests.find((r) => r.method === "POST" && r.path.endsWith("/suggestions"))!
      expect(create.body).toMatchObject({ maxSuggestions: 2 })
      // An unknown message is the API's 404.
      const error = yield* Effect.flip(tambo.listSuggestions(last.threadId, "msg_unknown"))
      expect(error._tag === "ApiError" && error.status).toBe(404)
      expectUserKeyOnEveryRequest()
    }).pipe(Effect.provide(tamboLayer(server()))))
})

describe("resources from the API", () => {
  it.live("a stored resource block is decoded to the client's shape, unknown fields dropped", () =>
    Effect.gen(function* () {
      const seeded = server().threads.create({
        userKey: "user-1",
        messages: [{
          role: "user",
          content: [{ type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "hi" } }]
        }]
      })
      const tambo = yield* Tambo.Tambo
      const thread = yield* tambo.fetchThread(seeded.id)
      expect(thread.messages[0]!.content).toEqual([
        { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "hi" } }
      ])
    }).pipe(Effect.provide(tamboLayer(server()))))
})
