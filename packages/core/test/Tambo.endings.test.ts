import { describe, expect, it } from "@effect/vitest"
import { HoldingProxy, Script, startTestServer, type TestServer } from "@tambo-effect/testing"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as ClientState from "../src/ClientState.js"
import * as Tambo from "../src/Tambo.js"
import * as Tool from "../src/Tool.js"
import type * as Types from "../src/Types.js"
import { expectStoreEqualsServer, fields, runAll, serverShape, shape, tamboLayer, threadOf, until, useServer } from "./helpers.js"

const server = useServer()

/**
 * A server of the test's own: its first DELETE needs a connection of its own, which a closed
 * connection racing it would beat unless the client waits for the DELETE before it closes.
 */
const ownServer = Effect.acquireRelease(
  Effect.promise(() => startTestServer()),
  (s) => Effect.promise(() => s.close())
)
/** Checked once the client closed: a second DELETE, had it sent one, would be at the server by then. */
const userCancelled = (s: TestServer) =>
  Effect.gen(function* () {
    yield* until(() => s.cancels.length > 0)
    expect(s.cancels.map((c) => c.reason)).toEqual(["user_cancelled"])
    expect(s.requests.filter((r) => r.method === "DELETE")).toHaveLength(1)
  })

const runPosts = (threadId?: string) =>
  server().requests.filter((r) =>
    r.method === "POST" && (threadId === undefined ? r.path.endsWith("/runs") : r.path === `/v1/threads/${threadId}/runs`)
  )
const deletes = () => server().requests.filter((r) => r.method === "DELETE")

/** A tool that signals it started and then waits until interrupted. */
const waitingTool = (started: Deferred.Deferred<void>) =>
  Tool.make({
    name: "wait",
    description: "waits until interrupted",
    input: Schema.Struct({}),
    execute: () => Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)
  })

/** Calls `wait` for a message with no tool results, else quotes what it received. */
const waitThenQuote = (request: Script.RunRequest) =>
  request.toolResults.length === 0 && request.text !== "next"
    ? [Script.toolCall("wait", {})]
    : [
      Script.text(
        [request.text, ...request.toolResults.map((r) => `${r.isError ? "error" : "ok"}: ${r.text}`)].join(" | ")
      )
    ]

/** A client tool that answers at once. */
const sunnyWeather = Tool.make({
  name: "get_weather",
  description: "weather",
  input: Schema.Struct({ city: Schema.String }),
  execute: () => Effect.succeed("sunny")
})

const lastText = (thread: Types.TamboThread) => {
  const block = thread.messages.at(-1)?.content.at(-1)
  return block?.type === "text" ? block.text : undefined
}

/**
 * The current thread holds one `get_weather` call pending, in the store and on the server; a new
 * message ("next") on it ends with `reply` last, and the store's messages are the server's.
 */
const nextAnswersTheCall = (tambo: Tambo.Tambo.Service, reply: string) =>
  Effect.gen(function* () {
    const threadId = (yield* tambo.state).currentThreadId
    const pending = yield* tambo.getPendingToolCalls(threadId)
    expect(pending.map((p) => p.toolName)).toEqual(["get_weather"])
    expect(server().threads.get(threadId)!.pendingToolCallIds).toEqual([pending[0]!.toolCallId])
    const events = yield* runAll("next", { threadId })
    expect(lastText(events.at(-1)!.snapshot)).toBe(reply)
    expect(shape(threadOf(yield* tambo.state, threadId).thread.messages)).toEqual(serverShape(server(), threadId))
  })

/** Runs "go", cancels it once its tool started, and returns its thread once the run failed. */
const cancelledWhileToolRuns = (tambo: Tambo.Tambo.Service, started: Deferred.Deferred<void>) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(Stream.runDrain(tambo.run("go")))
    yield* Deferred.await(started)
    const threadId = (yield* tambo.state).currentThreadId
    yield* tambo.cancelRun(threadId)
    yield* Fiber.join(fiber).pipe(Effect.flip)
    return threadId
  })

describe("a tool round that ends early leaves its thread usable", () => {
  it.live("cancelled while its tools run: the calls stay pending, continueRun answers them", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      server().setScript(waitThenQuote)
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const threadId = yield* cancelledWhileToolRuns(tambo, started)
        const pending = yield* tambo.getPendingToolCalls(threadId)
        expect(pending.map((p) => p.toolName)).toEqual(["wait"])
        expect(server().threads.get(threadId)!.pendingToolCallIds).toEqual([pending[0]!.toolCallId])
        const rest = yield* Stream.runCollect(tambo.continueRun(threadId, [{ toolCallId: pending[0]!.toolCallId, result: "done" }]))
        expect(lastText(Chunk.toReadonlyArray(rest).at(-1)!.snapshot)).toBe(" | ok: done")
        expect(yield* tambo.getPendingToolCalls(threadId)).toEqual([])
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [waitingTool(started)] })))
    }))

  it.live("cancelled while its tools run: a new message sends the unanswered calls as cancelled results with it", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      server().setScript(waitThenQuote)
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const threadId = yield* cancelledWhileToolRuns(tambo, started)
        const [call] = yield* tambo.getPendingToolCalls(threadId)

        const events = yield* runAll("next", { threadId })
        expect(events.at(-1)!.event.type).toBe("RUN_FINISHED")
        const body = runPosts(threadId).at(-1)!.body as { message: { content: Array<Record<string, unknown>> } }
        // The results first, then the user's own content, in one user message.
        expect(body.message.content).toEqual([
          {
            type: "tool_result",
            toolUseId: call!.toolCallId,
            isError: true,
            content: [{ type: "text", text: "This call of wait was cancelled before it returned a result." }]
          },
          { type: "text", text: "next" }
        ])
        expect(lastText(events.at(-1)!.snapshot)).toBe(
          "next | error: This call of wait was cancelled before it returned a result."
        )
        const state = yield* tambo.state
        expect(threadOf(state, threadId).pendingToolCalls).toEqual([])
        expect(shape(threadOf(state, threadId).thread.messages)).toEqual(serverShape(server(), threadId))
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [waitingTool(started)] })))
    }))

  it.live("past maxSteps: the calls of the round not run stay pending, and a new message answers them as cancelled", () =>
    Effect.gen(function* () {
      server().setScript((request) =>
        request.text === "next" ? [Script.text("fine")] : [Script.toolCall("get_weather", { city: "Oslo" })]
      )
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const error = yield* runAll("loop", { maxSteps: 1 }).pipe(Effect.flip)
        expect(error._tag).toBe("MaxStepsExceededError")
        yield* nextAnswersTheCall(tambo, "fine")
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [sunnyWeather] })))
    }))

  it.live("a refused continuation: the calls stay pending, and a new message sends the results the tools gave", () =>
    Effect.gen(function* () {
      server().setScript((request) =>
        request.text === "next"
          ? [Script.text(request.toolResults.map((r) => `${r.isError ? "error" : "ok"}: ${r.text}`).join("; "))]
          : request.toolResults.length === 0
          ? [Script.toolCall("get_weather", { city: "Oslo" })]
          : [Script.httpError(500)]
      )
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const error = yield* runAll("weather?").pipe(Effect.flip)
        expect(error).toMatchObject({ _tag: "ApiError", status: 500 })
        yield* nextAnswersTheCall(tambo, "ok: sunny")
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [sunnyWeather] })))
    }))

  it.live("manual execution: a new message instead of continueRun answers the calls as cancelled", () =>
    Effect.gen(function* () {
      server().setScript(waitThenQuote)
      const started = yield* Deferred.make<void>()
      yield* Effect.gen(function* () {
        const first = yield* runAll("go", { autoExecuteTools: false })
        const threadId = first.at(-1)!.threadId
        const events = yield* runAll("next", { threadId })
        expect(lastText(events.at(-1)!.snapshot)).toBe(
          "next | error: This call of wait was cancelled before it returned a result."
        )
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [waitingTool(started)] })))
    }))
})

describe("a new message and the calls the server waits on", () => {
  it.live("the store does not know of them (another client paused the thread): the server's are answered as cancelled", () =>
    Effect.gen(function* () {
      server().setScript(waitThenQuote)
      const started = yield* Deferred.make<void>()
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const first = yield* runAll("go", { autoExecuteTools: false })
        const threadId = first.at(-1)!.threadId
        yield* tambo.store.apply([{ type: "UPDATE_THREAD", threadId, patch: { pendingToolCalls: [] } }])
        const events = yield* runAll("next", { threadId })
        expect(lastText(events.at(-1)!.snapshot)).toBe(
          "next | error: This call of wait was cancelled before it returned a result."
        )
        expect(server().threads.get(threadId)!.pendingToolCallIds ?? []).toEqual([])
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [waitingTool(started)] })))
    }))

  it.live("a continuation interrupted before its answer, which the server took anyway: the next message still goes", () =>
    Effect.gen(function* () {
      let open: () => void = () => {}
      const gate = new Promise<void>((resolve) => {
        open = resolve
      })
      server().setScript(async (request) => {
        if (request.text === "next") return [Script.text("next")]
        if (request.toolResults.length === 0) return [Script.toolCall("get_weather", { city: "Oslo" })]
        await gate
        return [Script.text("too late")]
      })
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const fiber = yield* Effect.fork(Stream.runDrain(tambo.run("weather?")))
        yield* until(() => runPosts().length === 2)
        const threadId = (yield* tambo.state).currentThreadId
        const before = server().threads.get(threadId)!.lastCompletedRunId
        yield* Fiber.interrupt(fiber)
        // The server took the results; the closed connection cancels the continuation's run, so
        // its thread moves on without this client.
        yield* until(() => {
          const thread = server().threads.get(threadId)!
          return thread.runStatus === "idle" && thread.lastCompletedRunId !== before
        })
        open()
        expect(server().threads.get(threadId)!).toMatchObject({ lastRunCancelled: true })
        expect(server().threads.get(threadId)!.pendingToolCallIds ?? []).toEqual([])
        const events = yield* runAll("next", { threadId })
        expect(lastText(events.at(-1)!.snapshot)).toBe("next")
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [sunnyWeather] })))
    }))

  it.live("the store holds calls the server does not wait on: the message goes without their results", () =>
    Effect.gen(function* () {
      server().setScript(waitThenQuote)
      const first = yield* runAll("next")
      const threadId = first.at(-1)!.threadId
      const tambo = yield* Tambo.Tambo
      yield* tambo.store.apply([{
        type: "UPDATE_THREAD",
        threadId,
        patch: { pendingToolCalls: [{ toolCallId: "call_gone", toolName: "wait" }] }
      }])
      const events = yield* runAll("next", { threadId })
      expect(lastText(events.at(-1)!.snapshot)).toBe("next")
      const body = runPosts(threadId).at(-1)!.body as { message: { content: Array<Record<string, unknown>> } }
      expect(body.message.content).toEqual([{ type: "text", text: "next" }])
    }).pipe(Effect.provide(tamboLayer(server()))))
})

describe("cancelRun on a run still creating its thread", () => {
  it.live("cancels it before RUN_STARTED: the run fails cancelled, the server is told once it names the run", () =>
    Effect.gen(function* () {
      let open: () => void = () => {}
      const gate = new Promise<void>((resolve) => {
        open = resolve
      })
      server().setScript(Script.beforeResponse(async () => {
        await gate
        return [Script.text("slow"), Script.hang()]
      }))
      const tambo = yield* Tambo.Tambo
      const fiber = yield* Effect.fork(Stream.runDrain(tambo.run("new thread")))
      yield* until(() => runPosts().length === 1)
      expect((yield* tambo.state).currentThreadId).toBe("placeholder")
      const cancelling = yield* Effect.fork(tambo.cancelRun())
      // The Stop is decided once it waits for the server to name the run: only then may it answer.
      while ((yield* Fiber.status(cancelling))._tag !== "Suspended") yield* Effect.sleep("1 millis")
      open()
      yield* Fiber.join(cancelling)
      const error = yield* Fiber.join(fiber).pipe(Effect.timeout("5 seconds"), Effect.flip, Effect.map(fields))
      expect(error).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
      yield* until(() => server().cancels.length > 0)
      expect(server().cancels.map((c) => c.reason)).toEqual(["user_cancelled"])
      expect(deletes()).toHaveLength(1)
      const state = yield* tambo.state
      const thread = threadOf(state, state.currentThreadId)
      expect(thread.thread.lastRunCancelled).toBe(true)
      expect(thread.streaming.error).toBeUndefined()
      expect(thread.streaming.status).toBe("idle")
    }).pipe(Effect.provide(tamboLayer(server()))))
})

describe("cancelRun after the response's headers named a new thread, before its RUN_STARTED", () => {
  it.live("the thread the server made is the store's: the user's message under the server's id, as the server has it", () =>
    Effect.scoped(Effect.gen(function* () {
      server().setScript([Script.text("never seen"), Script.hang()])
      const proxy = yield* HoldingProxy.scoped(server())
      // The run's answer: its status and headers at once, its events held until the client goes.
      const body = proxy.holdBody((request) => request.method === "POST" && request.path.endsWith("/runs"))
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const fiber = yield* Effect.fork(Stream.runDrain(tambo.run("hello")))
        yield* Effect.promise(() => body.arrived)
        yield* tambo.cancelRun()
        const error = yield* Fiber.join(fiber).pipe(Effect.timeout("5 seconds"), Effect.flip, Effect.map(fields))
        expect(error).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
        const [serverThread] = server().threads.list()
        expect(serverThread).toBeDefined()
        const state = yield* tambo.state
        expect(state.currentThreadId).toBe(serverThread!.id)
        expect(Object.keys(state.threadMap).filter((id) => id.startsWith("local:"))).toEqual([])
        const thread = threadOf(state, serverThread!.id)
        expect(thread.thread.lastRunCancelled).toBe(true)
        expect(thread.streaming.status).toBe("idle")
        yield* expectStoreEqualsServer(tambo, server(), serverThread!.id)
        // The next message goes on the same thread.
        server().setScript([Script.text("again")])
        yield* runAll("next")
        expect((yield* tambo.state).currentThreadId).toBe(serverThread!.id)
        expect(serverShape(server(), serverThread!.id).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"])
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url })))
    })))
})

describe("a RUN_ERROR or RUN_FINISHED ends the run", () => {
  it.live("the first RUN_ERROR is the last event: the run fails with it, nothing after it is emitted or applied", () =>
    Effect.gen(function* () {
      server().setScript([
        Script.text("so far"),
        Script.event({ type: "RUN_ERROR", message: "first", code: "FIRST" }),
        Script.text(" and late"),
        Script.runError({ message: "second", code: "SECOND" })
      ])
      const tambo = yield* Tambo.Tambo
      const seen = yield* Ref.make<Array<string>>([])
      const error = yield* Stream.runForEach(tambo.run("fail"), (e) => Ref.update(seen, (a) => [...a, e.event.type])).pipe(
        Effect.flip
      )
      expect(error).toMatchObject({ _tag: "ApiError", reason: "RunError", code: "FIRST" })
      const types = yield* Ref.get(seen)
      expect(types.at(-1)).toBe("RUN_ERROR")
      expect(types.filter((t) => t === "RUN_ERROR")).toHaveLength(1)
      const state = yield* tambo.state
      const thread = threadOf(state, state.currentThreadId)
      expect(lastText(thread.thread)).toBe("so far")
      expect(thread.streaming.error).toMatchObject({ message: "first", code: "FIRST" })
      // What the stream applied: the reconciliation would bring what this script's server stored.
    }).pipe(Effect.provide(tamboLayer(server(), { reconcileAfterRun: false }))))

  it.live("the API's two RUN_ERRORs: one is emitted", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("so far"), Script.runError({ message: "down", code: "DOWN", twice: true })])
      const tambo = yield* Tambo.Tambo
      const seen = yield* Ref.make<Array<string>>([])
      const error = yield* Stream.runForEach(tambo.run("fail"), (e) => Ref.update(seen, (a) => [...a, e.event.type])).pipe(
        Effect.flip
      )
      expect(error).toMatchObject({ _tag: "ApiError", code: "DOWN" })
      expect((yield* Ref.get(seen)).filter((t) => t === "RUN_ERROR")).toHaveLength(1)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("nothing after RUN_FINISHED is emitted or applied", () =>
    Effect.gen(function* () {
      server().setScript((request) => [
        Script.text("done"),
        Script.event({ type: "RUN_FINISHED", threadId: request.threadId, runId: request.runId }),
        Script.text(" and late")
      ])
      const events = yield* runAll("finish")
      const types = events.map((e) => e.event.type)
      expect(types.at(-1)).toBe("RUN_FINISHED")
      expect(types.filter((t) => t === "RUN_FINISHED")).toHaveLength(1)
      const tambo = yield* Tambo.Tambo
      const state = yield* tambo.state
      expect(lastText(threadOf(state, state.currentThreadId).thread)).toBe("done")
      // What the stream applied: the reconciliation would bring what this script's server stored.
    }).pipe(Effect.provide(tamboLayer(server(), { reconcileAfterRun: false }))))
})

describe("cancelling tells the server before closing the connection", () => {
  it.live("interrupting the stream: the server records user_cancelled, one DELETE", () =>
    Effect.gen(function* () {
      const s = yield* ownServer
      s.setScript([Script.text("partial"), Script.hang()])
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const fiber = yield* Effect.fork(Stream.runDrain(tambo.run("hang")))
        yield* until(() => {
          const state = tambo.store.getSnapshot()
          return state.threadMap[state.currentThreadId]?.streaming.status === "streaming"
        })
        yield* Fiber.interrupt(fiber)
      }).pipe(Effect.provide(tamboLayer(s)))
      yield* userCancelled(s)
    }).pipe(Effect.scoped))

  it.live("a consumer that stops reading: user_cancelled, one DELETE", () =>
    Effect.gen(function* () {
      const s = yield* ownServer
      s.setScript([Script.text(["a", "b", "c"]), Script.hang()])
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        yield* Stream.runDrain(Stream.take(tambo.run("take two"), 2))
      }).pipe(Effect.provide(tamboLayer(s)))
      yield* userCancelled(s)
    }).pipe(Effect.scoped))

  it.live("cancelRun with a runId cancels only that run: another run on the thread goes on", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("hi")])
      const threadId = (yield* runAll("one")).at(-1)!.threadId
      server().setScript([Script.text("partial"), Script.hang()])
      const tambo = yield* Tambo.Tambo
      const started = yield* Deferred.make<string>()
      const fiber = yield* tambo.run("two", { threadId }).pipe(
        Stream.runForEach(({ event }) =>
          event.type === "RUN_STARTED" ? Deferred.succeed(started, event.runId) : Effect.void
        ),
        Effect.fork
      )
      const runId = yield* Deferred.await(started)
      yield* tambo.cancelRun(threadId, { runId: "run_before" })
      expect(deletes()).toHaveLength(0)
      expect(fiber.unsafePoll()).toBeNull()
      yield* tambo.cancelRun(threadId, { runId })
      const error = yield* Fiber.join(fiber).pipe(Effect.flip)
      expect(error).toMatchObject({ _tag: "RunCancelledError", runId })
      expect(deletes()).toHaveLength(1)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("cancelRun of a run the server already ended (404) succeeds silently", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("hi")])
      const first = yield* runAll("one")
      const threadId = first.at(-1)!.threadId
      const tambo = yield* Tambo.Tambo
      // The store shows a run the server does not have (another tab's, ended since).
      yield* tambo.store.apply([{
        type: "EVENTS",
        threadId,
        events: [{ type: "RUN_STARTED", threadId, runId: "run_gone", timestamp: 1 }] as unknown as ClientState.Action extends
          { readonly type: "EVENTS"; readonly events: infer E } ? E : never,
        at: 1
      }])
      const logs = yield* Ref.make<Array<unknown>>([])
      const logger = Logger.make(({ message }) => Effect.runSync(Ref.update(logs, (a) => [...a, message])))
      const result = yield* tambo.cancelRun(threadId).pipe(
        Effect.either,
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      expect(Either.isRight(result)).toBe(true)
      expect(deletes()).toHaveLength(1)
      expect(yield* Ref.get(logs)).toEqual([])
    }).pipe(Effect.provide(tamboLayer(server()))))
})

describe("a dropped connection", () => {
  it.live("is a TransportError, and the next run on the thread works; the DELETE after it fails silently", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("hello")])
      const first = yield* runAll("one")
      const threadId = first.at(-1)!.threadId
      server().setScript((request) =>
        request.text === "drop" ? [Script.text(["a", "b", "c", "d"]), Script.dropAfter(3)] : [Script.text("back")]
      )
      const logs = yield* Ref.make<Array<unknown>>([])
      const logger = Logger.make(({ message }) => Effect.runSync(Ref.update(logs, (a) => [...a, message])))
      const error = yield* runAll("drop", { threadId }).pipe(
        Effect.flip,
        Effect.map(fields),
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      expect(error).toMatchObject({ _tag: "TransportError", reason: "Disconnected" })
      // The server saw the connection drop before the client's DELETE came: that one found no run.
      expect(server().cancels.map((c) => c.reason)).toEqual(["connection_closed"])
      expect(yield* Ref.get(logs)).toEqual([])
      const dropped = server().threads.get(threadId)!
      const events = yield* runAll("again", { threadId })
      expect(lastText(events.at(-1)!.snapshot)).toBe("back")
      const posts = runPosts(threadId)
      expect((posts.at(-1)!.body as { previousRunId?: string }).previousRunId).toBe(dropped.lastCompletedRunId)
      expect(deletes()).toHaveLength(1)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("during a continuation, after the tools ran: the next run on the thread works", () =>
    Effect.gen(function* () {
      server().setScript((request) =>
        request.text === "again"
          ? [Script.text("back")]
          : request.toolResults.length === 0
          ? [Script.toolCall("get_weather", { city: "Oslo" })]
          : [Script.text(["a", "b", "c", "d"]), Script.dropAfter(3)]
      )
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const error = yield* runAll("weather?").pipe(Effect.flip, Effect.map(fields))
        expect(error).toMatchObject({ _tag: "TransportError", reason: "Disconnected" })
        const threadId = (yield* tambo.state).currentThreadId
        expect(yield* tambo.getPendingToolCalls(threadId)).toEqual([])
        const events = yield* runAll("again", { threadId })
        expect(lastText(events.at(-1)!.snapshot)).toBe("back")
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [sunnyWeather] })))
    }))
})
