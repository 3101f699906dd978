import { describe, expect, it } from "@effect/vitest"
import { HoldingProxy, Script } from "@tambo-effect/testing"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import { isLocalThreadId, PLACEHOLDER_THREAD_ID } from "../src/ClientState.js"
import * as Tambo from "../src/Tambo.js"
import * as Transport from "../src/TamboTransport.js"
import type { TamboError } from "../src/TamboError.js"
import * as ThreadStore from "../src/ThreadStore.js"
import * as Tool from "../src/Tool.js"
import * as ToolExecutor from "../src/ToolExecutor.js"
import { expectStoreEqualsServer, fields, resetTool, runAll, suspended, tamboLayer, tamboOver, textsOf, until, useServer } from "./helpers.js"

const server = useServer()

let weatherCalls: Array<unknown> = []
const weather = Tool.make({
  name: "get_weather",
  description: "Current weather in a city",
  input: Schema.Struct({ city: Schema.String }),
  output: Schema.Struct({ city: Schema.String, temperature: Schema.Number }),
  execute: (args) =>
    Effect.sync(() => {
      weatherCalls.push(args)
      return { city: args.city, temperature: 21 }
    })
})

const transfer = Tool.make({
  name: "transfer",
  description: "Moves money",
  input: Schema.Struct({ amount: Schema.Number }),
  needsApproval: ({ amount }) => amount > 100,
  execute: ({ amount }) => Effect.succeed(`moved ${amount}`)
})

/** Asks for a tool once, then quotes every result it receives. */
const toolThenQuote = (name: string, args: unknown, id?: string) => (request: Script.RunRequest) =>
  request.toolResults.length === 0
    ? [Script.toolCall(name, args, id === undefined ? undefined : { id })]
    : [Script.text(request.toolResults.map((r) => `${r.isError ? "error" : "ok"}: ${r.text}`).join("; "))]

const runsOf = (threadId: string) => server().requests.filter((r) => r.path === `/v1/threads/${threadId}/runs`)


/** Asks for two weather calls, `c1` and `c2`, then quotes the results it receives. */
const twoCallsThenQuote = (request: Script.RunRequest) =>
  request.toolResults.length === 0
    ? [Script.toolCall("get_weather", { city: "Oslo" }, { id: "c1" }), Script.toolCall("get_weather", { city: "Rome" }, { id: "c2" })]
    : [Script.text(request.toolResults.map((r) => `${r.toolUseId}: ${r.text}`).join("; "))]
const oslo = { toolCallId: "c1", result: { city: "Oslo", temperature: 1 } }
const rome = { toolCallId: "c2", result: { city: "Rome", temperature: 2 } }
/** The API's 409 for results whose calls changed between its read of the thread and its lock. */
const pendingChanged = { code: "CONCURRENT_RUN", message: "Thread pending tool call state changed; please retry" }
/** A lock the paused step keeps after its end (`Script.keepLock(kept.released)`) until `kept.letGo()`. */
const keptLock = () => {
  let letGo!: () => void
  const released = new Promise<void>((resolve) => (letGo = resolve))
  return { released, letGo }
}
/**
 * The results `send` sends on `threadId`, refused by the server twice while the paused step keeps
 * its lock (each refusal held at the proxy until the next came), then the lock let go of.
 */
const refusedTwiceWhileLocked = <A, E, R>(
  proxy: HoldingProxy.HoldingProxy,
  threadId: string,
  lock: ReturnType<typeof keptLock>,
  send: Effect.Effect<A, E, R>
) =>
  Effect.gen(function* () {
    const isRound = (r: HoldingProxy.ProxiedRequest) => r.method === "POST" && r.path === `/v1/threads/${threadId}/runs`
    const first = proxy.holdResponse(isRound)
    const sent = yield* send
    yield* Effect.promise(() => first.arrived)
    const second = proxy.holdResponse(isRound)
    first.release()
    yield* Effect.promise(() => second.arrived)
    lock.letGo()
    second.release()
    return sent
  })
/** The tool results the server stored on `threadId`. */
const storedResults = (threadId: string) =>
  server().threads.get(threadId)?.messages.flatMap((m) => m.content.filter((c) => c.type === "tool_result"))
/** Another client of the same user (another tab) reads the thread and answers both calls. */
const otherTabAnswers = (threadId: string, options?: Tambo.RunOptions) =>
  Effect.gen(function* () {
    const other = yield* Tambo.Tambo
    yield* other.fetchThread(threadId)
    yield* Stream.runDrain(other.continueRun(threadId, [oslo, rome], options))
  }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] })))

/**
 * Another tab answers both calls, its run holding the thread on the server (its model at work)
 * until the effect returned lets it end, and waits for it.
 */
const otherTabAnswering = (threadId: string, reply: (request: Script.RunRequest) => ReadonlyArray<Script.Step>) =>
  Effect.gen(function* () {
    const started = yield* Deferred.make<void>()
    const answered = yield* Deferred.make<void>()
    server().setScript(async (request: Script.RunRequest) => {
      Deferred.unsafeDone(started, Effect.void)
      await Effect.runPromise(Deferred.await(answered))
      return [...reply(request)]
    })
    const other = yield* Effect.fork(otherTabAnswers(threadId))
    yield* Deferred.await(started)
    return Effect.zipRight(Deferred.succeed(answered, undefined), Fiber.join(other))
  })

describe("manual tool execution", () => {
  it.live("the run ends with the pending calls, parsed and validated; continueRun sends the results", () =>
    Effect.gen(function* () {
      weatherCalls = []
      server().setScript(toolThenQuote("get_weather", { city: "Oslo" }))
      const tambo = yield* Tambo.Tambo
      const events = yield* runAll("weather?", { autoExecuteTools: false })
      const last = events.at(-1)!
      expect(last.event.type).toBe("CLIENT_AWAITING_TOOL_RESULTS")
      const pending = last.event.type === "CLIENT_AWAITING_TOOL_RESULTS" ? last.event.pendingToolCalls : []
      expect(pending).toHaveLength(1)
      expect(pending[0]).toMatchObject({ toolName: "get_weather", args: { city: "Oslo" }, needsApproval: false })
      expect(weatherCalls).toEqual([])
      const threadId = last.threadId
      const listed = yield* tambo.getPendingToolCalls(threadId)
      expect(listed.map((p) => p.toolCallId)).toEqual([pending[0]!.toolCallId])

      const rest = yield* Stream.runCollect(
        tambo.continueRun(threadId, [{ toolCallId: pending[0]!.toolCallId, result: { city: "Oslo", temperature: -3 } }])
      )
      const final = [...rest].at(-1)!
      const text = final.snapshot.messages.at(-1)!.content[0]!
      expect(text.type === "text" && text.text).toBe('ok: {"city":"Oslo","temperature":-3}')
      expect(yield* tambo.getPendingToolCalls(threadId)).toEqual([])
      expect(weatherCalls).toEqual([])
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  it.live("continueRun run by the run's own consumer as it takes the run's CLIENT_AWAITING_TOOL_RESULTS: the rest of the run streams, and the paused run completes", () =>
    Effect.gen(function* () {
      server().setScript(toolThenQuote("get_weather", { city: "Oslo" }))
      const tambo = yield* Tambo.Tambo
      let rest: ReadonlyArray<Tambo.RunEvent> = []
      yield* Stream.runForEach(tambo.run("weather?", { autoExecuteTools: false }), (e) =>
        e.event.type === "CLIENT_AWAITING_TOOL_RESULTS"
          ? Effect.map(
            Stream.runCollect(tambo.continueRun(e.threadId, e.event.pendingToolCalls.map((call) => ({
              toolCallId: call.toolCallId,
              result: { city: "Oslo", temperature: -3 }
            })))),
            (events) => (rest = [...events])
          )
          : Effect.void).pipe(
          Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("the continuation waited for its own caller") })
        )
      const text = rest.at(-1)!.snapshot.messages.at(-1)!.content[0]!
      expect(text.type === "text" && text.text).toBe('ok: {"city":"Oslo","temperature":-3}')
      const threadId = rest.at(-1)!.threadId
      expect((yield* tambo.state).threadMap[threadId]!.thread.lastRunCancelled).not.toBe(true)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  it.live("a result for an unknown or already-answered call, or one failing the output schema, is a typed error and nothing is sent", () =>
    Effect.gen(function* () {
      server().setScript(toolThenQuote("get_weather", { city: "Rome" }))
      const tambo = yield* Tambo.Tambo
      const events = yield* runAll("weather?", { autoExecuteTools: false })
      const threadId = events.at(-1)!.threadId
      const [call] = yield* tambo.getPendingToolCalls(threadId)
      const sentBefore = runsOf(threadId).length

      const unknown = yield* Stream.runDrain(tambo.continueRun(threadId, [{ toolCallId: "nope", result: 1 }])).pipe(
        Effect.flip,
        Effect.map(fields)
      )
      expect(unknown).toMatchObject({ _tag: "ToolError", reason: "UnknownToolCall" })
      const invalid = yield* Stream.runDrain(
        tambo.continueRun(threadId, [{ toolCallId: call!.toolCallId, result: { city: 3 } }])
      ).pipe(Effect.flip, Effect.map(fields))
      expect(invalid).toMatchObject({ _tag: "ToolError", reason: "InvalidResult" })
      expect(runsOf(threadId).length).toBe(sentBefore)

      yield* Stream.runDrain(
        tambo.continueRun(threadId, [{ toolCallId: call!.toolCallId, result: "failed upstream", isError: true }])
      )
      const again = yield* Stream.runDrain(
        tambo.continueRun(threadId, [{ toolCallId: call!.toolCallId, result: { city: "Rome", temperature: 1 } }])
      ).pipe(Effect.flip, Effect.map(fields))
      expect(again).toMatchObject({ _tag: "ToolError", reason: "AlreadyAnswered" })
      expect(runsOf(threadId).length).toBe(sentBefore + 1)
      const body = runsOf(threadId).at(-1)!.body as { message: { content: Array<{ isError?: boolean }> } }
      expect(body.message.content[0]!.isError).toBe(true)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  it.live("a result that cannot be sent as JSON (a BigInt, a cycle) is a ToolError (InvalidResult), nothing is sent, and the call stays answerable", () =>
    Effect.gen(function* () {
      server().setScript(toolThenQuote("get_weather", { city: "Rome" }))
      const tambo = yield* Tambo.Tambo
      const events = yield* runAll("weather?", { autoExecuteTools: false })
      const threadId = events.at(-1)!.threadId
      const [call] = yield* tambo.getPendingToolCalls(threadId)
      const sentBefore = runsOf(threadId).length
      const cycle: Record<string, unknown> = {}
      cycle.self = cycle
      for (const result of [{ toolCallId: call!.toolCallId, result: 10n, isError: true }, { toolCallId: call!.toolCallId, result: cycle, isError: true }]) {
        const error = yield* Stream.runDrain(tambo.continueRun(threadId, [result])).pipe(Effect.flip)
        expect(fields(error)).toMatchObject({ _tag: "ToolError", reason: "InvalidResult", toolCallId: call!.toolCallId })
        expect(error.message).toMatch(/JSON/)
      }
      expect(runsOf(threadId).length).toBe(sentBefore)
      expect(yield* tambo.getPendingToolCalls(threadId)).toMatchObject([{ toolCallId: call!.toolCallId }])
      const rest = yield* Stream.runCollect(
        tambo.continueRun(threadId, [{ toolCallId: call!.toolCallId, result: { city: "Rome", temperature: 1 } }])
      )
      expect([...rest].at(-1)!.event.type).toBe("RUN_FINISHED")
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  /** A run paused on two weather calls, `c1` and `c2`: its thread. */
  const pausedOnTwo = Effect.gen(function* () {
    server().setScript(twoCallsThenQuote)
    const events = yield* runAll("weather?", { autoExecuteTools: false })
    return events.at(-1)!.threadId
  })

  it.scopedLive("results sent while the paused step still holds the API's lock, which refuses them with 409 CONCURRENT_RUN more than once: they are sent again while the 409s last (up to 3 s), and the run goes on", () =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const lock = keptLock()
        server().setScript((request) =>
          request.toolResults.length === 0 ? [...twoCallsThenQuote(request), Script.keepLock(lock.released)] : twoCallsThenQuote(request)
        )
        const threadId = (yield* runAll("weather?", { autoExecuteTools: false })).at(-1)!.threadId
        const resumed = yield* refusedTwiceWhileLocked(proxy, threadId, lock, Effect.fork(Stream.runCollect(tambo.continueRun(threadId, [oslo, rome]))))
        expect([...yield* Fiber.join(resumed)].at(-1)!.event.type).toBe("RUN_FINISHED")
        expect(storedResults(threadId)).toHaveLength(2)
        expect(yield* textsOf(tambo, threadId)).toContain(`c1: ${JSON.stringify(oslo.result)}; c2: ${JSON.stringify(rome.result)}`)
        expect(yield* tambo.getPendingToolCalls(threadId)).toEqual([])
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather], tamboUrl: proxy.url })))
    }))

  it.live("a run paused for the caller's tools whose step the API still holds the lock of as the run's end reads the thread: the store shows the thread idle, its calls pending, not a run still going", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const lock = keptLock()
      server().setScript((request) =>
        request.toolResults.length === 0 ? [...twoCallsThenQuote(request), Script.keepLock(lock.released)] : twoCallsThenQuote(request)
      )
      const threadId = (yield* runAll("weather?", { autoExecuteTools: false })).at(-1)!.threadId
      expect(server().threads.get(threadId)?.runStatus).toBe("streaming")
      expect((yield* tambo.state).threadMap[threadId]!.thread.status).toBe("idle")
      expect((yield* tambo.getPendingToolCalls(threadId)).map((call) => call.toolCallId)).toEqual(["c1", "c2"])
      lock.letGo()
      yield* until(() => server().threads.get(threadId)?.runStatus === "idle")
      // The server's letting go changed the thread's time of change, which a read brings.
      yield* tambo.fetchThread(threadId)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  it.live("results for some of the pending calls only: the server's 400 MISSING_RESULTS, both calls still pending, and a complete continueRun goes on", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* pausedOnTwo
      const refused = yield* Stream.runDrain(tambo.continueRun(threadId, [oslo])).pipe(Effect.flip)
      expect(fields(refused)).toMatchObject({ _tag: "ApiError", reason: "BadRequest", status: 400, code: "MISSING_RESULTS" })
      expect(refused.message).toContain("c2")
      expect((yield* tambo.getPendingToolCalls(threadId)).map((call) => call.toolCallId)).toEqual(["c1", "c2"])
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      const rest = [...yield* Stream.runCollect(tambo.continueRun(threadId, [oslo, rome]))]
      expect(rest.at(-1)!.event.type).toBe("RUN_FINISHED")
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  it.live("results for calls another tab answered meanwhile: refused once, the read of the thread showing no call they answer sends nothing more, and the store shows the thread as the server has it, the other tab's answer in it", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* pausedOnTwo
      // Another tab of the same user answers both calls first.
      yield* otherTabAnswers(threadId)
      const sentBefore = runsOf(threadId).length
      const refused = yield* Stream.runDrain(tambo.continueRun(threadId, [oslo, rome])).pipe(Effect.flip)
      expect(fields(refused)).toMatchObject({ _tag: "ApiError", reason: "BadRequest", status: 400, code: "EXTRA_RESULTS" })
      expect(refused.message).toContain("c1, c2")
      // The first request, refused as following a run the thread moved on from; nothing after the read.
      expect(runsOf(threadId).length).toBe(sentBefore + 1)
      expect(yield* tambo.getPendingToolCalls(threadId)).toEqual([])
      const answers = server().threads.get(threadId)!.messages.flatMap((m) => m.content).filter((c) => c.type === "tool_result")
      expect(answers).toHaveLength(2)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  it.scopedLive("results for calls another tab answered as the API took the lock, which refuses them with 409 CONCURRENT_RUN: the read of the thread showing no call they answer sends nothing more, and the run fails with EXTRA_RESULTS saying another client answered them", () =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const threadId = yield* pausedOnTwo
        yield* otherTabAnswers(threadId)
        proxy.holdRequest((r) => r.method === "POST" && r.path === `/v1/threads/${threadId}/runs`).fail(409, pendingChanged)
        const sentBefore = runsOf(threadId).length
        const refused = yield* Stream.runDrain(tambo.continueRun(threadId, [oslo, rome])).pipe(Effect.flip)
        expect(fields(refused)).toMatchObject({ _tag: "ApiError", status: 400, code: "EXTRA_RESULTS" })
        expect(refused.message).toContain("c1, c2")
        expect(refused.message).toMatch(/another client answered/)
        expect(runsOf(threadId).length).toBe(sentBefore)
        expect(yield* tambo.getPendingToolCalls(threadId)).toEqual([])
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather], tamboUrl: proxy.url })))
    }))

  it.scopedLive("results refused with 409 CONCURRENT_RUN while the server still waits on their calls: sent once more, after the thread's last run, and the run goes on", () =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const threadId = yield* pausedOnTwo
        proxy.holdRequest((r) => r.method === "POST" && r.path === `/v1/threads/${threadId}/runs`).fail(409, pendingChanged)
        const events = yield* Stream.runCollect(tambo.continueRun(threadId, [oslo, rome]))
        expect(Chunk.last(events).pipe(Option.map((e) => e.event.type))).toEqual(Option.some("RUN_FINISHED"))
        expect(runsOf(threadId)).toHaveLength(1)
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather], tamboUrl: proxy.url })))
    }))

  it.live("results for calls another tab answered, its run paused since on a call of its own: the API's MISSING_RESULTS naming that call, nothing sent again, and the store shows the thread as the server has it", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* pausedOnTwo
      server().setScript((request: Script.RunRequest) =>
        request.toolResults.some((r) => r.toolUseId === "c1")
          ? [Script.toolCall("get_weather", { city: "Lima" }, { id: "c3" })]
          : twoCallsThenQuote(request)
      )
      // The other tab leaves its call to its user.
      yield* otherTabAnswers(threadId, { autoExecuteTools: false })
      const sentBefore = runsOf(threadId).length
      const refused = yield* Stream.runDrain(tambo.continueRun(threadId, [oslo, rome])).pipe(Effect.flip)
      expect(fields(refused)).toMatchObject({ _tag: "ApiError", reason: "BadRequest", status: 400, code: "MISSING_RESULTS" })
      expect(refused.message).toContain("c3")
      expect(refused.message).toMatch(/another client answered c1, c2/)
      expect(runsOf(threadId).length).toBe(sentBefore + 1)
      expect((yield* tambo.getPendingToolCalls(threadId)).map((call) => call.toolCallId)).toEqual(["c3"])
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  it.live("results for calls another tab's run on the server is answering: refused, and the store shows that run as the server has it", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* pausedOnTwo
      const finishOther = yield* otherTabAnswering(threadId, (request) => [
        Script.text(request.toolResults.map((r) => r.toolUseId).join("; "))
      ])
      const refused = yield* Stream.runDrain(tambo.continueRun(threadId, [oslo, rome])).pipe(Effect.flip)
      expect(fields(refused)).toMatchObject({ _tag: "ApiError", reason: "BadRequest", status: 400, code: "EXTRA_RESULTS" })
      expect(yield* tambo.getPendingToolCalls(threadId)).toEqual([])
      expect((yield* tambo.state).threadMap[threadId]!.thread.status).toBe("streaming")
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      yield* finishOther
      yield* tambo.fetchThread(threadId)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  /** `Tambo` over an executor the test reaches too: its ledger of the steps' results. */
  const withExecutor = () => tamboOver(server(), Transport.layer)


  it.live("a deleted thread's tool results are let go of: the server takes none of them, and the executor no longer holds them", () =>
    Effect.gen(function* () {
      weatherCalls = []
      // The round's request is refused: the thread still waits on the call, whose result is held.
      server().setScript((request) =>
        request.toolResults.length === 0 ? [Script.toolCall("get_weather", { city: "Oslo" }, { id: "c1" })] : [Script.httpError(503)]
      )
      const tambo = yield* Tambo.Tambo
      const executor = yield* ToolExecutor.ToolExecutor
      yield* tambo.registerTool(weather)
      yield* runAll("weather?").pipe(Effect.flip)
      const threadId = (yield* tambo.state).currentThreadId
      const step = { threadId, runId: (yield* tambo.state).threadMap[threadId]!.lastCompletedRunId! }
      const call = { toolCallId: "c1", toolName: "get_weather", args: { city: "Oslo" } }
      expect(weatherCalls).toHaveLength(1)
      // While the thread is there, the step's result is held: executing its call again runs no tool.
      yield* executor.execute([call], step)
      expect(weatherCalls).toHaveLength(1)
      yield* tambo.deleteThread(threadId)
      yield* executor.execute([call], step)
      expect(weatherCalls).toHaveLength(2)
    }).pipe(Effect.provide(withExecutor())))

  it.live("a result given twice in one continueRun: the last one answers the call, as the server keeps it", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* pausedOnTwo
      const rest = [...yield* Stream.runCollect(
        tambo.continueRun(threadId, [{ toolCallId: "c1", result: "first", isError: true }, rome, oslo])
      )]
      const text = rest.at(-1)!.snapshot.messages.at(-1)!.content[0]!
      expect(text.type === "text" && text.text).toBe(`c1: ${JSON.stringify(oslo.result)}; c2: ${JSON.stringify(rome.result)}`)
      const results = rest.at(-1)!.snapshot.messages.flatMap((m) => m.content.filter((block) => block.type === "tool_result"))
      expect(results.map((block) => block.toolUseId)).toEqual(["c1", "c2"])
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  it.live("pending calls survive a reload: a new client finds them on the server's thread and continues", () =>
    Effect.gen(function* () {
      server().setScript(toolThenQuote("get_weather", { city: "Lima" }))
      const threadId = yield* runAll("weather?", { autoExecuteTools: false }).pipe(
        Effect.map((events) => events.at(-1)!.threadId),
        Effect.provide(tamboLayer(server(), { tools: [weather] }))
      )
      // A fresh client: nothing in its store.
      const resumed = yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const pending = yield* tambo.getPendingToolCalls(threadId)
        expect(pending).toMatchObject([{ toolName: "get_weather", args: { city: "Lima" } }])
        return yield* Stream.runCollect(
          tambo.continueRun(threadId, [{ toolCallId: pending[0]!.toolCallId, result: { city: "Lima", temperature: 18 } }])
        )
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] })))
      const text = [...resumed].at(-1)!.snapshot.messages.at(-1)!.content[0]!
      expect(text.type === "text" && text.text).toContain("Lima")
    }))
})

describe("an automatic tool round whose calls another tab answered meanwhile", () => {
  /** The run's tools at work: each call tells `started`, then waits for `release`. */
  const heldWeather = Effect.gen(function* () {
    const started = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    let calls = 0
    const tool = Tool.make({
      name: "get_weather",
      description: "Current weather in a city",
      input: Schema.Struct({ city: Schema.String }),
      execute: ({ city }) =>
        Effect.sync(() => calls++).pipe(
          Effect.zipRight(Deferred.succeed(started, undefined)),
          Effect.zipRight(Deferred.await(release)),
          Effect.as({ city, temperature: 21 })
        )
    })
    return { tool, started, release, calls: () => calls }
  })

  /** A run paused on `c1` and `c2` by `script`, its tools at work: its fiber, thread, and the release of its tools. */
  const toolsAtWorkOn = (script: Script.ScriptFn) => Effect.gen(function* () {
    server().setScript(script)
    const tambo = yield* Tambo.Tambo
    const { calls, release, started, tool } = yield* heldWeather
    yield* tambo.registerTool(tool)
    const run = yield* Effect.fork(runAll("weather?"))
    yield* Deferred.await(started)
    const threadId = (yield* tambo.state).currentThreadId
    return { run, threadId, release: Deferred.succeed(release, undefined), calls }
  })
  const toolsAtWork = toolsAtWorkOn(twoCallsThenQuote)

  /** What the client sent besides reads. */
  const sent = () => server().requests.filter((request) => request.method !== "GET")

  it.live("another tab's run took its answer and finished: the run fails with EXTRA_RESULTS saying the calls were answered elsewhere, sends nothing more, and the store shows the thread as the server has it", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const { release, run, threadId } = yield* toolsAtWork
      yield* otherTabAnswers(threadId)
      const sentBefore = sent().length
      yield* release
      const refused = yield* Fiber.join(run).pipe(Effect.flip)
      expect(fields(refused)).toMatchObject({ _tag: "ApiError", reason: "BadRequest", status: 400, code: "EXTRA_RESULTS" })
      expect(refused.message).toContain("c1, c2")
      expect(refused.message).toMatch(/another client answered/)
      // The round's request, refused; nothing after the read of the thread.
      expect(sent().slice(sentBefore).map((request) => request.method)).toEqual(["POST"])
      expect(yield* tambo.getPendingToolCalls(threadId)).toEqual([])
      expect(yield* textsOf(tambo, threadId)).toContain(`c1: ${JSON.stringify(oslo.result)}; c2: ${JSON.stringify(rome.result)}`)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("another tab's run took its answer and still streams: the run fails with EXTRA_RESULTS saying so, sends nothing more, and the store shows that run as the server has it", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const { release, run, threadId } = yield* toolsAtWork
      const finishOther = yield* otherTabAnswering(threadId, twoCallsThenQuote)
      const sentBefore = sent().length
      yield* release
      const refused = yield* Fiber.join(run).pipe(Effect.flip)
      expect(fields(refused)).toMatchObject({ _tag: "ApiError", reason: "BadRequest", status: 400, code: "EXTRA_RESULTS" })
      expect(refused.message).toMatch(/another client answered/)
      expect(sent().slice(sentBefore).map((request) => request.method)).toEqual(["POST"])
      expect(yield* tambo.getPendingToolCalls(threadId)).toEqual([])
      expect((yield* tambo.state).threadMap[threadId]!.thread.status).toBe("streaming")
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      yield* finishOther
      yield* tambo.fetchThread(threadId)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("another tab answered: the executor lets go of the round's results, which the server will never take", () =>
    Effect.gen(function* () {
      const executor = yield* ToolExecutor.ToolExecutor
      const { calls, release, run, threadId } = yield* toolsAtWork
      yield* otherTabAnswers(threadId)
      yield* release
      yield* Fiber.join(run).pipe(Effect.flip)
      expect(calls()).toBe(2)
      // The step the round's results followed: the run the tools were asked for in.
      const runId = (runsOf(threadId).at(-1)!.body as { previousRunId: string }).previousRunId
      yield* executor.execute([{ toolCallId: "c1", toolName: "get_weather", args: { city: "Oslo" } }], { threadId, runId })
      expect(calls()).toBe(3)
    }).pipe(Effect.provide(tamboOver(server(), Transport.layer))))

  it.scopedLive.each([
    { refusal: "as following another run (400 INVALID_PREVIOUS_RUN)", status: 400, body: { code: "INVALID_PREVIOUS_RUN", message: "previousRunId does not match last completed run" } },
    { refusal: "with 409 CONCURRENT_RUN", status: 409, body: pendingChanged }
  ])("refused $refusal while the server still waits on its calls: the results go once more, after the thread's last run, and the run goes on", ({ body, status }) =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const { release, run, threadId } = yield* toolsAtWork
        proxy.holdRequest((r) => r.method === "POST" && r.path === `/v1/threads/${threadId}/runs`).fail(status, body)
        yield* release
        const events = yield* Fiber.join(run)
        expect(events.at(-1)!.event.type).toBe("RUN_FINISHED")
        // The refused request never reached the server: it took the results once.
        expect(runsOf(threadId)).toHaveLength(1)
        const weatherOf = (city: string) => JSON.stringify({ city, temperature: 21 })
        expect(yield* textsOf(tambo, threadId)).toContain(`c1: ${weatherOf("Oslo")}; c2: ${weatherOf("Rome")}`)
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url })))
    }))

  it.scopedLive("the round's own step still holding the API's lock, which refuses the round with 409 CONCURRENT_RUN more than once: the results are sent again while the 409s last (up to 3 s), and the run goes on", () =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const lock = keptLock()
        const { release, run, threadId } = yield* toolsAtWorkOn((request) =>
          request.toolResults.length === 0 ? [...twoCallsThenQuote(request), Script.keepLock(lock.released)] : twoCallsThenQuote(request)
        )
        yield* refusedTwiceWhileLocked(proxy, threadId, lock, release)
        const events = yield* Fiber.join(run)
        expect(events.at(-1)?.event.type).toBe("RUN_FINISHED")
        const rounds = runsOf(threadId)
        expect(rounds.length).toBeGreaterThan(2)
        // Refused while the lock lasted, then taken once: one run followed the paused step.
        const paused = (rounds[0]!.body as { previousRunId: string }).previousRunId
        expect(rounds.every((r) => (r.body as { previousRunId: string }).previousRunId === paused)).toBe(true)
        expect(server().threads.get(threadId)?.lastCompletedRunId).not.toBe(paused)
        expect(storedResults(threadId)).toHaveLength(2)
        expect(yield* textsOf(tambo, threadId)).toContain(`c1: ${JSON.stringify({ city: "Oslo", temperature: 21 })}; c2: ${JSON.stringify({ city: "Rome", temperature: 21 })}`)
        expect(yield* tambo.getPendingToolCalls(threadId)).toEqual([])
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url })))
    }))

  it.scopedLive("another tab answered as the API took the lock, which refuses the round with 409 CONCURRENT_RUN: the run fails with EXTRA_RESULTS saying another client answered them, sends nothing more, and the executor lets go of the results", () =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const executor = yield* ToolExecutor.ToolExecutor
        const { calls, release, run, threadId } = yield* toolsAtWork
        yield* otherTabAnswers(threadId)
        proxy.holdRequest((r) => r.method === "POST" && r.path === `/v1/threads/${threadId}/runs`).fail(409, pendingChanged)
        const sentBefore = sent().length
        yield* release
        const refused = yield* Fiber.join(run).pipe(Effect.flip)
        expect(fields(refused)).toMatchObject({ _tag: "ApiError", status: 400, code: "EXTRA_RESULTS" })
        expect(refused.message).toMatch(/another client answered/)
        // The refused round never reached the server; nothing after the read of the thread.
        expect(sent().slice(sentBefore)).toEqual([])
        expect(yield* tambo.getPendingToolCalls(threadId)).toEqual([])
        yield* expectStoreEqualsServer(tambo, server(), threadId)
        const runId = (runsOf(threadId).at(-1)!.body as { previousRunId: string }).previousRunId
        yield* executor.execute([{ toolCallId: "c1", toolName: "get_weather", args: { city: "Oslo" } }], { threadId, runId })
        expect(calls()).toBe(3)
      }).pipe(Effect.provide(tamboOver(server(), Transport.layer, proxy.url)))
    }))
})

describe("the executor's results of an automatic tool round", () => {
  /** Asks for the weather in Oslo (`c1`), then the time (`c2`), then quotes the last result. */
  const weatherThenTime = (request: Script.RunRequest) =>
    request.toolResults.length === 0
      ? [Script.toolCall("get_weather", { city: "Oslo" }, { id: "c1" })]
      : request.toolResults[0]!.toolUseId === "c1"
      ? [Script.toolCall("get_time", {}, { id: "c2" })]
      : [Script.text(`done: ${request.toolResults[0]!.text}`)]
  const oslo = { toolCallId: "c1", toolName: "get_weather", args: { city: "Oslo" } }

  let timeCalls = 0
  /** `get_time`, counted in `timeCalls`, which tells `started` and waits for `release` (when given) before it answers. */
  const timeTool = (held?: { readonly started: Deferred.Deferred<void>; readonly release: Deferred.Deferred<void> }) =>
    Tool.make({
      name: "get_time",
      description: "The time",
      input: Schema.Struct({}),
      execute: () =>
        Effect.zipRight(
          Effect.sync(() => timeCalls++),
          held === undefined
            ? Effect.succeed("noon")
            : Effect.zipRight(Deferred.succeed(held.started, undefined), Deferred.await(held.release)).pipe(Effect.as("noon"))
        )
    })

  /** The step each round's results followed, in order: the `previousRunId` of the thread's continuations. */
  const stepsOf = (threadId: string) => runsOf(threadId).map((request) => (request.body as { previousRunId: string }).previousRunId)

  /** Whether the executor still holds the result of Oslo's call in `step`: executing it again runs no tool. */
  const holdsOslo = (threadId: string, step: string) =>
    Effect.gen(function* () {
      const executor = yield* ToolExecutor.ToolExecutor
      const before = weatherCalls.length
      yield* executor.execute([oslo], { threadId, runId: step })
      return weatherCalls.length === before
    })

  const registered = Effect.gen(function* () {
    weatherCalls = []
    timeCalls = 0
    server().setScript(weatherThenTime)
    const tambo = yield* Tambo.Tambo
    yield* tambo.registerTool(weather)
    return tambo
  })

  it.live("a run that finished: the executor lets go of every round's results, which the server took", () =>
    Effect.gen(function* () {
      const tambo = yield* registered
      yield* tambo.registerTool(timeTool())
      const events = yield* runAll("weather, then time?")
      expect(events.at(-1)!.event.type).toBe("RUN_FINISHED")
      const threadId = events.at(-1)!.threadId
      expect([weatherCalls.length, timeCalls]).toEqual([1, 1])
      const [first, last] = stepsOf(threadId)
      expect(yield* holdsOslo(threadId, first!)).toBe(false)
      // The last round's results too, which the run's last step followed.
      const executor = yield* ToolExecutor.ToolExecutor
      yield* executor.execute([{ toolCallId: "c2", toolName: "get_time", args: {} }], { threadId, runId: last! })
      expect(timeCalls).toBe(2)
    }).pipe(Effect.provide(tamboOver(server(), Transport.layer))))

  it.live("a run paused again after a round: the executor lets go of that round's results while the next round's tools work", () =>
    Effect.gen(function* () {
      const tambo = yield* registered
      const held = { started: yield* Deferred.make<void>(), release: yield* Deferred.make<void>() }
      yield* tambo.registerTool(timeTool(held))
      const run = yield* Effect.fork(runAll("weather, then time?"))
      yield* Deferred.await(held.started)
      const threadId = (yield* tambo.state).currentThreadId
      expect(yield* holdsOslo(threadId, stepsOf(threadId)[0]!)).toBe(false)
      yield* Deferred.succeed(held.release, undefined)
      expect((yield* Fiber.join(run)).at(-1)!.event.type).toBe("RUN_FINISHED")
    }).pipe(Effect.provide(tamboOver(server(), Transport.layer))))

  /** A round's request, the run's request on its thread: its first one goes to `/v1/threads/runs`. */
  const isRound = (request: { readonly method: string; readonly path: string }) =>
    request.method === "POST" && /^\/v1\/threads\/[^/]+\/runs$/.test(request.path)

  it.scopedLive("a round whose answer was lost once the server took its results: the run's end reads the thread, and the executor lets go of them", () =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      yield* Effect.gen(function* () {
        const tambo = yield* registered
        proxy.holdResponse(isRound).reset()
        const failed = yield* runAll("weather?").pipe(Effect.flip)
        expect(fields(failed)).toMatchObject({ _tag: "TransportError" })
        const threadId = (yield* tambo.state).currentThreadId
        expect(runsOf(threadId)).toHaveLength(1)
        expect(yield* tambo.getPendingToolCalls(threadId)).toEqual([])
        expect(yield* holdsOslo(threadId, stepsOf(threadId)[0]!)).toBe(false)
      }).pipe(Effect.provide(tamboOver(server(), Transport.layer, proxy.url)))
    }))

  it.scopedLive("a round the server refused: the calls still wait on its results, which the executor keeps", () =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      yield* Effect.gen(function* () {
        const tambo = yield* registered
        const refused = proxy.holdRequest(isRound)
        refused.fail(503, { message: "down" })
        const failed = yield* runAll("weather?").pipe(Effect.flip)
        expect(fields(failed)).toMatchObject({ _tag: "ApiError", status: 503 })
        const threadId = (yield* tambo.state).currentThreadId
        expect((yield* tambo.getPendingToolCalls(threadId)).map((call) => call.toolCallId)).toEqual(["c1"])
        const step = (yield* tambo.state).threadMap[threadId]!.lastCompletedRunId!
        expect(yield* holdsOslo(threadId, step)).toBe(true)
      }).pipe(Effect.provide(tamboOver(server(), Transport.layer, proxy.url)))
    }))
})

describe("approvals", () => {
  const transferred: Array<number> = []
  const recordedTransfer = Tool.make({
    name: "transfer",
    description: "Moves money",
    input: Schema.Struct({ amount: Schema.Number }),
    needsApproval: true,
    execute: ({ amount }) => Effect.sync(() => transferred.push(amount))
  })

  const approvalOf = (fiberEvents: Array<Tambo.RunEvent>) =>
    Effect.gen(function* () {
      while (!fiberEvents.some((e) => e.event.type === "CLIENT_APPROVAL_REQUESTED")) yield* Effect.sleep("5 millis")
      const event = fiberEvents.find((e) => e.event.type === "CLIENT_APPROVAL_REQUESTED")!.event
      return event.type === "CLIENT_APPROVAL_REQUESTED" ? event : undefined
    }).pipe(Effect.timeout("5 seconds"))

  const runCollecting = (message: string, seen: Array<Tambo.RunEvent>, options?: Tambo.RunOptions) =>
    Effect.flatMap(Tambo.Tambo, (tambo) =>
      tambo.run(message, options).pipe(
        Stream.runForEach((e) => Effect.sync(() => seen.push(e))),
        Effect.fork
      ))

  const lastText = (seen: ReadonlyArray<Tambo.RunEvent>) => {
    const block = seen.at(-1)!.snapshot.messages.at(-1)!.content[0]!
    return block.type === "text" ? block.text : ""
  }

  it.live("a call that needs approval waits, then runs once approved", () =>
    Effect.gen(function* () {
      server().setScript(toolThenQuote("transfer", { amount: 500 }))
      const tambo = yield* Tambo.Tambo
      const seen: Array<Tambo.RunEvent> = []
      const fiber = yield* runCollecting("pay", seen)
      const request = (yield* approvalOf(seen))!
      expect(request).toMatchObject({ toolName: "transfer", args: { amount: 500 }, needsApproval: true })
      // Waiting holds no connection: the paused run finished on the server.
      expect(server().threads.get(request.threadId)!.runStatus).toBe("idle")
      yield* tambo.approveToolCall(request.toolCallId)
      yield* Fiber.join(fiber)
      expect(lastText(seen)).toBe("ok: moved 500")
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [transfer] }))))

  it.live("approved with edited arguments: they are validated and used", () =>
    Effect.gen(function* () {
      server().setScript(toolThenQuote("transfer", { amount: 500 }))
      const tambo = yield* Tambo.Tambo
      const seen: Array<Tambo.RunEvent> = []
      const fiber = yield* runCollecting("pay", seen)
      const request = (yield* approvalOf(seen))!
      yield* tambo.approveToolCall(request.toolCallId, { args: { amount: 150 } })
      yield* Fiber.join(fiber)
      expect(lastText(seen)).toBe("ok: moved 150")
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [transfer] }))))

  it.live("a denial goes back to the model as an error result with the reason", () =>
    Effect.gen(function* () {
      server().setScript(toolThenQuote("transfer", { amount: 500 }))
      const tambo = yield* Tambo.Tambo
      const seen: Array<Tambo.RunEvent> = []
      const fiber = yield* runCollecting("pay", seen)
      const request = (yield* approvalOf(seen))!
      yield* tambo.denyToolCall(request.toolCallId, "too much")
      yield* Fiber.join(fiber)
      expect(lastText(seen)).toMatch(/^error: .*denied.*too much/)
      const stale = yield* tambo.approveToolCall(request.toolCallId).pipe(Effect.flip, Effect.map(fields))
      expect(stale).toMatchObject({ _tag: "ToolError", reason: "NotPending" })
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [transfer] }))))

  it.live("two threads waiting at once for approval of call_0: each is decided by its thread; without one, the id is ambiguous", () =>
    Effect.gen(function* () {
      // A provider that counts: every response's first call is call_0.
      server().setScript((request) =>
        request.toolResults.length === 0
          ? [Script.toolCall("transfer", { amount: Number(request.text) }, { id: "call_0" })]
          : [Script.text(request.toolResults.map((r) => `${r.isError ? "error" : "ok"}: ${r.text}`).join("; "))]
      )
      const tambo = yield* Tambo.Tambo
      const seenA: Array<Tambo.RunEvent> = []
      const seenB: Array<Tambo.RunEvent> = []
      const fiberA = yield* runCollecting("500", seenA, { threadId: "placeholder" })
      const a = (yield* approvalOf(seenA))!
      const fiberB = yield* runCollecting("700", seenB, { threadId: "placeholder" })
      const b = (yield* approvalOf(seenB))!
      expect([a.toolCallId, b.toolCallId]).toEqual(["call_0", "call_0"])
      expect(a.threadId).not.toBe(b.threadId)

      // Without a thread, neither is picked: the caller is told to name it.
      for (const decide of [tambo.approveToolCall("call_0"), tambo.denyToolCall("call_0", "no")]) {
        const ambiguous = yield* decide.pipe(Effect.flip, Effect.map(fields))
        expect(ambiguous).toMatchObject({ _tag: "ToolError", reason: "Ambiguous", toolCallId: "call_0" })
        expect(ambiguous.message).toContain(a.threadId)
        expect(ambiguous.message).toContain(b.threadId)
        expect(ambiguous.message).toMatch(/threadId/)
      }
      // A thread where the id waits for nothing.
      const elsewhere = yield* tambo.approveToolCall("call_0", { threadId: "thr_other" }).pipe(Effect.flip, Effect.map(fields))
      expect(elsewhere).toMatchObject({ _tag: "ToolError", reason: "NotPending", toolCallId: "call_0", threadId: "thr_other" })

      yield* tambo.approveToolCall("call_0", { threadId: a.threadId })
      yield* tambo.denyToolCall("call_0", "too much", { threadId: b.threadId })
      yield* Fiber.join(fiberA)
      yield* Fiber.join(fiberB)
      expect(lastText(seenA)).toBe("ok: moved 500")
      expect(lastText(seenB)).toMatch(/^error: .*denied.*too much/)
      // Decided: nothing waits any more.
      const stale = yield* tambo.approveToolCall("call_0", { threadId: a.threadId }).pipe(Effect.flip, Effect.map(fields))
      expect(stale).toMatchObject({ _tag: "ToolError", reason: "NotPending" })
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [transfer] }))))

  it.live("an id waiting in one thread only is decided without the thread, also while another thread waits on another id", () =>
    Effect.gen(function* () {
      server().setScript((request) =>
        request.toolResults.length === 0
          ? [Script.toolCall("transfer", { amount: Number(request.text) }, { id: `call_${request.text}` })]
          : [Script.text(request.toolResults.map((r) => `${r.isError ? "error" : "ok"}: ${r.text}`).join("; "))]
      )
      const tambo = yield* Tambo.Tambo
      const seenA: Array<Tambo.RunEvent> = []
      const seenB: Array<Tambo.RunEvent> = []
      const fiberA = yield* runCollecting("500", seenA, { threadId: "placeholder" })
      yield* approvalOf(seenA)
      const fiberB = yield* runCollecting("700", seenB, { threadId: "placeholder" })
      yield* approvalOf(seenB)
      yield* tambo.approveToolCall("call_700")
      yield* tambo.approveToolCall("call_500", { args: { amount: 150 } })
      yield* Fiber.join(fiberA)
      yield* Fiber.join(fiberB)
      expect(lastText(seenA)).toBe("ok: moved 150")
      expect(lastText(seenB)).toBe("ok: moved 700")
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [transfer] }))))

  it.live("a consumer that stops at the approval request takes the approval back: a late decision is NotPending", () =>
    Effect.gen(function* () {
      server().setScript(toolThenQuote("transfer", { amount: 500 }, "call_0"))
      const tambo = yield* Tambo.Tambo
      const events = yield* tambo.run("pay").pipe(
        Stream.takeUntil((e) => e.event.type === "CLIENT_APPROVAL_REQUESTED"),
        Stream.runCollect
      )
      expect([...events].at(-1)!.event.type).toBe("CLIENT_APPROVAL_REQUESTED")
      const late = yield* Effect.either(tambo.approveToolCall("call_0"))
      expect(late._tag === "Left" ? fields(late.left) : "accepted").toMatchObject({ _tag: "ToolError", reason: "NotPending" })
      expect(server().requests.filter((request) => request.method === "POST")).toHaveLength(1)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [transfer] }))))

  it.live("a run that stopped at its approval request leaves the call id to the next run waiting on it, in another thread", () =>
    Effect.gen(function* () {
      // Providers reuse call ids: both runs' calls are call_0.
      server().setScript(toolThenQuote("transfer", { amount: 500 }, "call_0"))
      const tambo = yield* Tambo.Tambo
      yield* tambo.run("pay", { threadId: "placeholder" }).pipe(
        Stream.takeUntil((e) => e.event.type === "CLIENT_APPROVAL_REQUESTED"),
        Stream.runDrain
      )
      const seen: Array<Tambo.RunEvent> = []
      const fiber = yield* runCollecting("pay again", seen, { threadId: "placeholder" })
      const request = (yield* approvalOf(seen))!
      expect(request.toolCallId).toBe("call_0")
      // The only call waiting is this run's: decided without naming its thread.
      yield* tambo.approveToolCall("call_0")
      yield* Fiber.join(fiber)
      expect(lastText(seen)).toBe("ok: moved 500")
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [transfer] }))))

  it.live("a decision sent once cancelRun was called, before the run ended, is refused as NotPending and the tool does not run", () =>
    Effect.gen(function* () {
      server().setScript(toolThenQuote("transfer", { amount: 500 }, "call_0"))
      const tambo = yield* Tambo.Tambo
      transferred.length = 0
      const seen: Array<Tambo.RunEvent> = []
      const fiber = yield* runCollecting("pay", seen)
      const request = (yield* approvalOf(seen))!
      yield* tambo.cancelRun(request.threadId)
      for (const decide of [tambo.approveToolCall("call_0"), tambo.denyToolCall("call_0", "no")]) {
        const refused = yield* Effect.either(decide)
        expect(refused._tag === "Left" ? fields(refused.left) : "accepted").toMatchObject({
          _tag: "ToolError",
          reason: "NotPending",
          toolCallId: "call_0"
        })
      }
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(fields(error)).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
      expect(transferred).toEqual([])
      expect(server().requests.filter((r) => r.method === "POST")).toHaveLength(1)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [recordedTransfer] }))))

  it.live("a call under the threshold needs no approval; an onApproval handler decides for the rest", () =>
    Effect.gen(function* () {
      server().setScript(toolThenQuote("transfer", { amount: 50 }))
      const small = yield* runAll("small")
      expect(small.some((e) => e.event.type === "CLIENT_APPROVAL_REQUESTED")).toBe(false)
      server().setScript(toolThenQuote("transfer", { amount: 5000 }))
      const decided: Array<unknown> = []
      const big = yield* runAll("big", {
        onApproval: (call) => {
          decided.push(call.args)
          return Promise.resolve({ approved: false, reason: "policy" } as const)
        }
      })
      expect(decided).toEqual([{ amount: 5000 }])
      const text = big.at(-1)!.snapshot.messages.at(-1)!.content[0]!
      expect(text.type === "text" && text.text).toMatch(/policy/)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [transfer] }))))

  for (const blank of ["  ", "\n"]) {
    it.live(`a call with blank arguments (${JSON.stringify(blank)}) of a tool that needs approval is asked about with {} and runs once approved`, () => {
      const { reset, resets } = resetTool()
      return Effect.gen(function* () {
        server().setScript(toolThenQuote("reset", blank))
        const asked: Array<unknown> = []
        const events = yield* runAll("reset it", {
          onApproval: (call) => {
            asked.push(call.args)
            return Promise.resolve({ approved: true } as const)
          }
        })
        expect(asked).toEqual([{}])
        expect(resets).toEqual([{}])
        const { threadId } = events.at(-1)!
        const tambo = yield* Tambo.Tambo
        const thread = (yield* tambo.state).threadMap[threadId]!
        expect(thread.anomalies).toEqual([])
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [reset] })))
    })
  }
})

describe("an approval predicate that answers differently when asked again", () => {
  /** A tool whose `needsApproval` gives `answers` in turn (the last one from then on), and what it was asked and ran with. */
  const fickle = (answers: ReadonlyArray<boolean>) => {
    const asked: Array<unknown> = []
    const ran: Array<unknown> = []
    const tool = Tool.make({
      name: "wire",
      description: "Wires money",
      input: Schema.Struct({ amount: Schema.Number }),
      needsApproval: (args) => {
        asked.push(args)
        return answers[Math.min(asked.length, answers.length) - 1]!
      },
      execute: (args) => Effect.sync(() => ran.push(args)).pipe(Effect.as("wired"))
    })
    return { tool, asked, ran }
  }

  it.live("first it needs approval, then not: asked once per call, the handler decides, the call runs once approved", () => {
    const { asked, ran, tool } = fickle([true, false])
    return Effect.gen(function* () {
      server().setScript(toolThenQuote("wire", { amount: 10 }))
      const decided: Array<unknown> = []
      yield* runAll("wire it", {
        onApproval: (call) => {
          decided.push(call.args)
          return Promise.resolve({ approved: true } as const)
        }
      })
      expect(decided).toEqual([{ amount: 10 }])
      expect(asked).toEqual([{ amount: 10 }])
      expect(ran).toEqual([{ amount: 10 }])
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [tool] })))
  })

  it.live("first it needs no approval, then it does: asked once per call, the call runs on the first answer", () => {
    const { asked, ran, tool } = fickle([false, true])
    return Effect.gen(function* () {
      server().setScript(toolThenQuote("wire", { amount: 10 }))
      const events = yield* runAll("wire it")
      expect(events.some((e) => e.event.type === "CLIENT_APPROVAL_REQUESTED")).toBe(false)
      expect(asked).toEqual([{ amount: 10 }])
      expect(ran).toEqual([{ amount: 10 }])
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [tool] })))
  })
})

describe("an approval predicate that never answers", () => {
  let asked: () => void = () => {}
  /** The app's policy, asked whether a call needs approval, never answers. */
  const stuckPolicy: Tool.TamboTool<{ amount: number }, string> = {
    name: "transfer",
    description: "Moves money",
    inputSchema: Schema.Struct({ amount: Schema.Number }),
    needsApproval: () => {
      asked()
      return new Promise<boolean>(() => {})
    },
    tool: ({ amount }) => `moved ${amount}`
  }

  it.live("cancelRun stops the round waiting on it: the run fails cancelled and nothing is sent", () =>
    Effect.gen(function* () {
      server().setScript(toolThenQuote("transfer", { amount: 500 }))
      const tambo = yield* Tambo.Tambo
      const waiting = new Promise<void>((resolve) => {
        asked = resolve
      })
      const fiber = yield* Effect.fork(Stream.runDrain(tambo.run("pay")))
      yield* Effect.promise(() => waiting)
      yield* tambo.cancelRun()
      const error = yield* Fiber.join(fiber).pipe(Effect.timeout("5 seconds"), Effect.flip)
      expect(fields(error)).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
      expect(server().requests.filter((request) => request.method === "POST")).toHaveLength(1)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [stuckPolicy] }))))
})

describe("sending while busy", () => {
  /**
   * A thread whose run "slow" streams until `finish` (its first chunk sent): the test says when
   * it ends, not a number of milliseconds.
   */
  const busyThread = Effect.gen(function* () {
    server().setScript([Script.text("first")])
    const threadId = (yield* runAll("first")).at(-1)!.threadId
    const streaming = yield* Deferred.make<void>()
    let finish!: () => void
    const finished = new Promise<void>((resolve) => (finish = resolve))
    // Settles with `finished`; tells `streaming` once the run reached it.
    const untilFinished: PromiseLike<void> = {
      then: (onFinished, onNever) => {
        Deferred.unsafeDone(streaming, Exit.void)
        return finished.then(onFinished, onNever)
      }
    }
    server().setScript((request) =>
      request.text === "slow"
        ? [Script.text("slow..."), Script.hold(untilFinished), Script.text("done")]
        : [Script.text(`re: ${request.text}`)]
    )
    const tambo = yield* Tambo.Tambo
    const slow = yield* Effect.fork(Stream.runCollect(tambo.run("slow", { threadId })))
    yield* Deferred.await(streaming)
    return { threadId, slow, finish: Effect.sync(finish) }
  })

  it.live("reject (the default) fails with RunConflictError", () =>
    Effect.gen(function* () {
      const { finish, slow, threadId } = yield* busyThread
      const error = yield* runAll("now", { threadId }).pipe(Effect.flip, Effect.map(fields))
      expect(error).toMatchObject({ _tag: "RunConflictError", reason: "ActiveInClient" })
      yield* finish
      yield* Fiber.join(slow)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("queue runs the message after the current run", () =>
    Effect.gen(function* () {
      const { finish, slow, threadId } = yield* busyThread
      const next = yield* Effect.fork(runAll("next", { threadId, onBusy: "queue" }))
      yield* suspended(next)
      yield* finish
      const queued = yield* Fiber.join(next)
      const first = yield* Fiber.join(slow)
      expect([...first].at(-1)!.event.type).toBe("RUN_FINISHED")
      const texts = queued.at(-1)!.snapshot.messages.flatMap((m) =>
        m.content.flatMap((c) => (c.type === "text" ? [c.text] : []))
      )
      expect(texts.slice(-4)).toEqual(["slow", "slow...done", "next", "re: next"])
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("cancelRun of the thread also ends the runs queued behind its run: they fail cancelled and send nothing", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("first")])
      const threadId = (yield* runAll("first")).at(-1)!.threadId
      server().setScript((request) => request.text === "slow" ? [Script.text("slow..."), Script.hang()] : [Script.text(`re: ${request.text}`)])
      const tambo = yield* Tambo.Tambo
      const slow = yield* Effect.fork(Effect.flip(runAll("slow", { threadId })))
      yield* Effect.gen(function* () {
        while (server().threads.get(threadId)?.runStatus !== "streaming") yield* Effect.sleep("5 millis")
      })
      const queued = yield* Effect.fork(Effect.flip(runAll("next", { threadId, onBusy: "queue" })))
      const queuedToo = yield* Effect.fork(Effect.flip(runAll("after", { threadId, onBusy: "queue" })))
      yield* suspended(queued)
      yield* suspended(queuedToo)
      yield* tambo.cancelRun(threadId)
      for (const fiber of [slow, queued, queuedToo]) {
        expect(fields(yield* Fiber.join(fiber))).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
      }
      // Only the cancelled run's request went; the queued messages are nowhere.
      expect(runsOf(threadId)).toHaveLength(1)
      const texts = (yield* tambo.state).threadMap[threadId]!.thread.messages.flatMap((m) =>
        m.content.flatMap((c) => (c.type === "text" ? [c.text] : []))
      )
      expect(texts).not.toContain("next")
      expect(texts).not.toContain("after")
      // The thread is free: the next message runs.
      const again = yield* runAll("again", { threadId })
      expect(again.at(-1)!.event.type).toBe("RUN_FINISHED")
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("cancelRun while an interrupting run waits for the run it displaces to be named: both end cancelled, and the new message is not sent", () =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      yield* Effect.gen(function* () {
        server().setScript([Script.text("first")])
        const threadId = (yield* runAll("first")).at(-1)!.threadId
        server().setScript((request) => request.text === "slow" ? [Script.text("slow..."), Script.hang()] : [Script.text(`re: ${request.text}`)])
        const tambo = yield* Tambo.Tambo
        // The slow run's answer is held: it is not named, and a cancellation waits for its name.
        const answer = proxy.holdResponse((r) => r.method === "POST" && r.path === `/v1/threads/${threadId}/runs`)
        const slow = yield* Effect.fork(Effect.flip(runAll("slow", { threadId })))
        yield* Effect.promise(() => answer.arrived)
        const instead = yield* Effect.fork(Effect.flip(runAll("instead", { threadId, onBusy: "interrupt" })))
        yield* suspended(instead)
        const cancelling = yield* Effect.fork(tambo.cancelRun(threadId))
        expect(fields(yield* Fiber.join(instead))).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
        answer.release()
        yield* Fiber.join(cancelling)
        expect(fields(yield* Fiber.join(slow))).toMatchObject({ _tag: "RunCancelledError" })
        expect(runsOf(threadId)).toHaveLength(1)
        expect(server().cancels.map((c) => c.threadId)).toEqual([threadId])
        expect(yield* textsOf(tambo, threadId)).not.toContain("instead")
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url })))
    }).pipe(Effect.scoped))

  /** The thread's slow run, streaming behind `proxy`, and its thread. */
  const slowBehind = (proxy: HoldingProxy.HoldingProxy) =>
    Effect.gen(function* () {
      server().setScript([Script.text("first")])
      const threadId = (yield* runAll("first")).at(-1)!.threadId
      server().setScript((request) => request.text === "slow" ? [Script.text("slow..."), Script.hang()] : [Script.text(`re: ${request.text}`)])
      const slow = yield* Effect.fork(Effect.flip(runAll("slow", { threadId })))
      yield* Effect.gen(function* () {
        while (server().threads.get(threadId)?.runStatus !== "streaming") yield* Effect.sleep("5 millis")
      })
      // The cancellation of it waits before it reaches the server.
      const deleting = proxy.holdRequest((r) => r.method === "DELETE" && r.path.startsWith(`/v1/threads/${threadId}/runs/`))
      return { threadId, slow, deleting }
    })

  /** `body` with a client behind a holding proxy, given the slow run on its thread (`slowBehind`). */
  const withSlowRun = <E, R>(
    body: (
      tambo: Tambo.Tambo.Service,
      slow: Effect.Effect.Success<ReturnType<typeof slowBehind>>,
      proxy: HoldingProxy.HoldingProxy
    ) => Effect.Effect<void, E, R>
  ) =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        yield* body(tambo, yield* slowBehind(proxy), proxy)
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url })))
    }).pipe(Effect.scoped)

  /** The server took one cancellation of the thread's run, from the user; its thread is idle, and the store equals it. */
  const cancelledOnceByTheUser = (tambo: Tambo.Tambo.Service, threadId: string) =>
    Effect.gen(function* () {
      expect(server().cancels.map((c) => [c.threadId, c.reason])).toEqual([[threadId, "user_cancelled"]])
      expect(server().threads.get(threadId)?.runStatus).toBe("idle")
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    })

  it.live("a second cancelRun while the first's cancellation is on its way waits for the server to take it: the run's end then reads the thread idle, as the server has it", () =>
    withSlowRun((tambo, { deleting, slow, threadId }, proxy) =>
      Effect.gen(function* () {
        const read = proxy.holdRequest((r) => r.method === "GET" && r.path === `/v1/threads/${threadId}`)
        const first = yield* Effect.fork(tambo.cancelRun(threadId))
        yield* Effect.promise(() => deleting.arrived)
        const second = yield* Effect.fork(tambo.cancelRun(threadId))
        // The run's end reads its thread only once the server took the cancellation: no read comes meanwhile.
        const readEarly = yield* Effect.promise(() => read.arrived).pipe(
          Effect.timeoutTo({ duration: "300 millis", onTimeout: () => false, onSuccess: () => true })
        )
        expect(readEarly).toBe(false)
        expect(Option.isNone(yield* Fiber.poll(second))).toBe(true)
        deleting.release()
        read.release()
        yield* Fiber.join(first)
        yield* Fiber.join(second)
        expect(fields(yield* Fiber.join(slow))).toMatchObject({ _tag: "RunCancelledError" })
        yield* cancelledOnceByTheUser(tambo, threadId)
      })
    ))

  it.live("cancelRun while an interrupting run's cancellation of the thread's run is on its way: both end cancelled, the new message is not sent, and the thread ends idle", () =>
    withSlowRun((tambo, { deleting, slow, threadId }) =>
      Effect.gen(function* () {
        const instead = yield* Effect.fork(Effect.flip(runAll("instead", { threadId, onBusy: "interrupt" })))
        yield* Effect.promise(() => deleting.arrived)
        const stopping = yield* Effect.fork(tambo.cancelRun(threadId))
        deleting.release()
        yield* Fiber.join(stopping)
        expect(fields(yield* Fiber.join(instead))).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
        expect(fields(yield* Fiber.join(slow))).toMatchObject({ _tag: "RunCancelledError" })
        expect(runsOf(threadId)).toHaveLength(1)
        expect(yield* textsOf(tambo, threadId)).not.toContain("instead")
        yield* cancelledOnceByTheUser(tambo, threadId)
      })
    ))

  it.live("an interrupting run its caller gives up on while its cancellation of the thread's run is on its way: that run still ends cancelled, on the server too, and the thread ends idle", () =>
    withSlowRun((tambo, { deleting, slow, threadId }) =>
      Effect.gen(function* () {
        const instead = yield* Effect.fork(runAll("instead", { threadId, onBusy: "interrupt" }))
        yield* Effect.promise(() => deleting.arrived)
        yield* Fiber.interrupt(instead)
        deleting.release()
        expect(fields(yield* Fiber.join(slow).pipe(Effect.timeout("5 seconds")))).toMatchObject({ _tag: "RunCancelledError" })
        expect(runsOf(threadId)).toHaveLength(1)
        expect(yield* textsOf(tambo, threadId)).not.toContain("instead")
        yield* cancelledOnceByTheUser(tambo, threadId)
      })
    ))

  /**
   * Gives a held request whose client went the time to be seen gone by the proxy (which then never
   * lets it on); one still on its way is released as it is.
   */
  const abandonedOrOnItsWay = (proxy: HoldingProxy.HoldingProxy) =>
    Effect.gen(function* () {
      while (proxy.abandoned() === 0) yield* Effect.sleep("5 millis")
    }).pipe(Effect.timeoutTo({ duration: "300 millis", onTimeout: () => undefined, onSuccess: () => undefined }))

  it.live.each([
    ["", false],
    [", then another", true]
  ] as const)(
    "a cancelRun its caller interrupts while its DELETE is on its way%s: the run still ends cancelled, on the server too, and the thread ends idle",
    ([_, again]) =>
      withSlowRun((tambo, { deleting, slow, threadId }, proxy) =>
        Effect.gen(function* () {
          const stopping = yield* Effect.fork(tambo.cancelRun(threadId))
          yield* Effect.promise(() => deleting.arrived)
          yield* Fiber.interrupt(stopping)
          yield* abandonedOrOnItsWay(proxy)
          deleting.release()
          if (again) yield* tambo.cancelRun(threadId)
          expect(fields(yield* Fiber.join(slow).pipe(Effect.timeout("5 seconds")))).toMatchObject({ _tag: "RunCancelledError" })
          yield* cancelledOnceByTheUser(tambo, threadId)
        })
      )
  )

  /** Replies to each message, recording the order the server started them in. */
  const recordStarts = () => {
    const starts: Array<string> = []
    server().setScript((request) => {
      starts.push(request.text)
      return [Script.text(`re: ${request.text}`)]
    })
    return starts
  }

  it.live("an interrupting run, then a queued one, waiting for the run it displaces: the interrupting run starts once it ended, the queued one after it, each once", () =>
    withSlowRun((tambo, { deleting, slow, threadId }) =>
      Effect.gen(function* () {
        const starts = recordStarts()
        const instead = yield* Effect.fork(runAll("instead", { threadId, onBusy: "interrupt" }))
        yield* Effect.promise(() => deleting.arrived)
        const next = yield* Effect.fork(runAll("next", { threadId, onBusy: "queue" }))
        yield* suspended(next)
        deleting.release()
        expect(fields(yield* Fiber.join(slow))).toMatchObject({ _tag: "RunCancelledError" })
        expect((yield* Fiber.join(instead)).at(-1)!.event.type).toBe("RUN_FINISHED")
        expect((yield* Fiber.join(next)).at(-1)!.event.type).toBe("RUN_FINISHED")
        expect(starts).toEqual(["instead", "next"])
        expect((yield* textsOf(tambo, threadId)).slice(-4)).toEqual(["instead", "re: instead", "next", "re: next"])
        yield* cancelledOnceByTheUser(tambo, threadId)
      })
    ))

  it.live("an interrupting run and a queued one asked for at once: the interrupting run starts once the run it displaces ended, the queued one after it", () =>
    withSlowRun((tambo, { deleting, slow, threadId }) =>
      Effect.gen(function* () {
        const starts = recordStarts()
        const [instead, next] = yield* Effect.all([
          Effect.fork(runAll("instead", { threadId, onBusy: "interrupt" })),
          Effect.fork(runAll("next", { threadId, onBusy: "queue" }))
        ])
        yield* Effect.promise(() => deleting.arrived)
        deleting.release()
        expect(fields(yield* Fiber.join(slow))).toMatchObject({ _tag: "RunCancelledError" })
        expect((yield* Fiber.join(instead)).at(-1)!.event.type).toBe("RUN_FINISHED")
        expect((yield* Fiber.join(next)).at(-1)!.event.type).toBe("RUN_FINISHED")
        expect(starts).toEqual(["instead", "next"])
        yield* cancelledOnceByTheUser(tambo, threadId)
      })
    ))

  it.live("two queued runs waiting for the thread start in the order they were asked for, each once", () =>
    withSlowRun((tambo, { deleting, slow, threadId }) =>
      Effect.gen(function* () {
        const starts = recordStarts()
        const first = yield* Effect.fork(runAll("first queued", { threadId, onBusy: "queue" }))
        const second = yield* Effect.fork(runAll("second queued", { threadId, onBusy: "queue" }))
        yield* suspended(first)
        yield* suspended(second)
        // Only the slow run, once the client knows it: the runs waiting for the thread go on once it ended.
        const runId = server().threads.get(threadId)!.currentRunId!
        while ((yield* tambo.state).threadMap[threadId]?.streaming.runId !== runId) yield* Effect.sleep("5 millis")
        const stopping = yield* Effect.fork(tambo.cancelRun(threadId, { runId }))
        yield* Effect.promise(() => deleting.arrived)
        deleting.release()
        yield* Fiber.join(stopping)
        expect(fields(yield* Fiber.join(slow))).toMatchObject({ _tag: "RunCancelledError" })
        expect((yield* Fiber.join(first)).at(-1)!.event.type).toBe("RUN_FINISHED")
        expect((yield* Fiber.join(second)).at(-1)!.event.type).toBe("RUN_FINISHED")
        expect(starts).toEqual(["first queued", "second queued"])
        expect((yield* textsOf(tambo, threadId)).slice(-4)).toEqual([
          "first queued",
          "re: first queued",
          "second queued",
          "re: second queued"
        ])
        yield* cancelledOnceByTheUser(tambo, threadId)
      })
    ))

  it.live.each([
    ["a queued run", "queue"],
    ["an interrupting run", "interrupt"]
  ] as const)(
    "%s, then an interrupting one, waiting for the run they displace: the earlier one ends cancelled having sent nothing, and the interrupting one starts once the displaced run ended",
    ([_, onBusy]) =>
      withSlowRun((tambo, { deleting, slow, threadId }) =>
        Effect.gen(function* () {
          const starts = recordStarts()
          const earlier = yield* Effect.fork(Effect.flip(runAll("earlier", { threadId, onBusy })))
          yield* suspended(earlier)
          const instead = yield* Effect.fork(runAll("instead", { threadId, onBusy: "interrupt" }))
          yield* Effect.promise(() => deleting.arrived)
          expect(fields(yield* Fiber.join(earlier))).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
          deleting.release()
          expect(fields(yield* Fiber.join(slow))).toMatchObject({ _tag: "RunCancelledError" })
          expect((yield* Fiber.join(instead)).at(-1)!.event.type).toBe("RUN_FINISHED")
          expect(starts).toEqual(["instead"])
          expect((yield* textsOf(tambo, threadId)).slice(-2)).toEqual(["instead", "re: instead"])
          expect(yield* textsOf(tambo, threadId)).not.toContain("earlier")
          yield* cancelledOnceByTheUser(tambo, threadId)
        })
      )
  )

  it.live.each([
    ["both wait their turn", "queue", "queue"],
    ["the second conflicts", "reject", "reject"]
  ] as const)(
    "two runs on a thread the client has not read yet, whose read for the first answers last, start in the order they were asked for: %s",
    ([_, firstBusy, secondBusy]) =>
      Effect.gen(function* () {
        const proxy = yield* HoldingProxy.scoped(server())
        const threadId = server().threads.create({ userKey: "user-1", name: "Unread" }).id
        const starts = recordStarts()
        yield* Effect.gen(function* () {
          const read = proxy.holdResponse((r) => r.method === "GET" && r.path === `/v1/threads/${threadId}`)
          const first = yield* Effect.fork(Effect.either(runAll("first", { threadId, onBusy: firstBusy })))
          yield* Effect.promise(() => read.arrived)
          const second = yield* Effect.fork(Effect.either(runAll("second", { threadId, onBusy: secondBusy })))
          // Time for the second run to go ahead of the first, were it let to.
          yield* Fiber.await(second).pipe(Effect.timeoutTo({ duration: "1 second", onTimeout: () => undefined, onSuccess: () => undefined }))
          read.release()
          const firstEnded = yield* Fiber.join(first)
          const secondEnded = yield* Fiber.join(second)
          expect(firstEnded._tag === "Right" && firstEnded.right.at(-1)!.event.type).toBe("RUN_FINISHED")
          if (secondBusy === "reject") {
            expect(secondEnded._tag === "Left" && fields(secondEnded.left)).toMatchObject({ _tag: "RunConflictError" })
            expect(starts).toEqual(["first"])
          } else {
            expect(secondEnded._tag === "Right" && secondEnded.right.at(-1)!.event.type).toBe("RUN_FINISHED")
            expect(starts).toEqual(["first", "second"])
          }
          const tambo = yield* Tambo.Tambo
          yield* expectStoreEqualsServer(tambo, server(), threadId)
        }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url })))
      }).pipe(Effect.scoped)
  )

  it.live("a run whose read of a thread the client has not read yet is interrupted leaves the read to the run waiting for it, which sends it again and starts", () =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      const threadId = server().threads.create({ userKey: "user-1", name: "Unread" }).id
      const isRead = (r: { readonly method: string; readonly path: string }) =>
        r.method === "GET" && r.path === `/v1/threads/${threadId}`
      const starts = recordStarts()
      yield* Effect.gen(function* () {
        const read = proxy.holdResponse(isRead)
        const first = yield* Effect.fork(runAll("first", { threadId, onBusy: "queue" }))
        yield* Effect.promise(() => read.arrived)
        const second = yield* Effect.fork(runAll("second", { threadId, onBusy: "queue" }))
        yield* suspended(second)
        yield* Fiber.interrupt(first)
        expect((yield* Fiber.join(second)).at(-1)!.event.type).toBe("RUN_FINISHED")
        expect(starts).toEqual(["second"])
        expect(server().requests.filter(isRead).length).toBeGreaterThanOrEqual(2)
        yield* expectStoreEqualsServer(yield* Tambo.Tambo, server(), threadId)
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url })))
    }).pipe(Effect.scoped))

  it.live("interrupt cancels the current run and starts the new one", () =>
    Effect.gen(function* () {
      const { threadId, slow } = yield* busyThread
      const replaced = yield* runAll("instead", { threadId, onBusy: "interrupt" })
      const error = yield* Fiber.join(slow).pipe(Effect.flip, Effect.map(fields))
      expect(error).toMatchObject({ _tag: "RunCancelledError" })
      expect(server().cancels.map((c) => c.threadId)).toContain(threadId)
      const last = replaced.at(-1)!.snapshot.messages.at(-1)!.content[0]!
      expect(last.type === "text" && last.text).toBe("re: instead")
    }).pipe(Effect.provide(tamboLayer(server()))))
})

describe("onThreadId", () => {
  it.live("is called once with a new conversation's thread, before the store shows it", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      server().setScript([Script.text("hello")])
      const told: Array<readonly [string, string]> = []
      const events = yield* runAll("hi", {
        onThreadId: (threadId) => told.push([threadId, tambo.store.getSnapshot().currentThreadId])
      })
      const threadId = events.at(-1)!.threadId
      expect(told).toEqual([[threadId, PLACEHOLDER_THREAD_ID]])
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("is called once with the thread of a run stopped before any of its events came, as it ends; a throw does not change how the run ends", () =>
    Effect.gen(function* () {
      let open!: () => void
      const opened = new Promise<void>((resolve) => (open = resolve))
      // Its headers too wait for the script: the run learns nothing of the server before its end.
      server().setScript(Script.beforeResponse(async (request) => {
        if (request.text === "again") await opened
        return [Script.text(`re: ${request.text}`)]
      }))
      const threadId = (yield* runAll("hi")).at(-1)!.threadId
      const told: Array<string> = []
      const run = yield* Effect.fork(Effect.either(runAll("again", {
        threadId,
        onThreadId: (id) => {
          told.push(id)
          throw new Error("the app's listener broke")
        }
      })))
      yield* Effect.repeat(Effect.sync(() => server().requests.filter((r) => r.method === "POST").length), {
        until: (posts) => posts === 2,
        schedule: Schedule.spaced("5 millis")
      })
      expect(told).toEqual([])
      const ended = yield* Fiber.interrupt(run)
      open()
      expect(Exit.isInterrupted(ended)).toBe(true)
      expect(told).toEqual([threadId])
    }).pipe(Effect.provide(tamboLayer(server()))))
})

describe("sending on a new conversation before the server names its thread", () => {
  /**
   * A run on a new conversation whose answer is held until `open()`: the server has its request,
   * the client no name for its thread yet. `script` is its answer once opened; a later run's, a reply.
   */
  const firstHeld = (script: (request: Script.RunRequest) => Script.Script = (request) => [Script.text(`re: ${request.text}`)]) =>
    Effect.gen(function* () {
      let open!: () => void
      const opened = new Promise<void>((resolve) => (open = resolve))
      const received = new Set<string>()
      server().setScript(Script.beforeResponse(async (request) => {
        received.add(request.text)
        if (request.text !== "first") return [Script.text(`re: ${request.text}`)]
        await opened
        return script(request)
      }))
      const first = yield* Effect.fork(Effect.either(runAll("first")))
      yield* Effect.repeat(Effect.sync(() => received.has("first")), { until: (has) => has, schedule: Schedule.spaced("5 millis") })
      return { first, open }
    })
  const created = () => server().requests.filter((r) => r.method === "POST" && r.path === "/v1/threads/runs")
  const textsOn = (threadId: string) =>
    Effect.map(Effect.flatMap(Tambo.Tambo, (tambo) => tambo.state), (state) =>
      state.threadMap[threadId]!.thread.messages.flatMap((m) => m.content.flatMap((c) => (c.type === "text" ? [c.text] : []))))

  it.live("reject (the default) fails the second message with RunConflictError, as on a named thread, and creates no second thread; the first keeps the conversation", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const { first, open } = yield* firstHeld()
      const error = yield* runAll("second").pipe(Effect.flip, Effect.map(fields))
      expect(error).toMatchObject({ _tag: "RunConflictError", reason: "ActiveInClient" })
      // The refused run left the first one the conversation's: a message queued after it still follows it.
      const third = yield* Effect.fork(runAll("third", { onBusy: "queue" }))
      yield* suspended(third)
      open()
      const ended = yield* Fiber.join(first)
      const threadId = Either.getOrThrow(ended).at(-1)!.threadId
      expect((yield* Fiber.join(third)).at(-1)!.threadId).toBe(threadId)
      expect(created()).toHaveLength(1)
      expect(yield* textsOn(threadId)).toEqual(["first", "re: first", "third", "re: third"])
      const state = yield* tambo.state
      expect(state.currentThreadId).toBe(threadId)
      expect(Object.keys(state.threadMap).filter((id) => id !== threadId && id !== "placeholder")).toEqual([])
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("queue sends the second message on the thread the server named for the first, once the first ended", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const { first, open } = yield* firstHeld()
      const second = yield* Effect.fork(runAll("second", { onBusy: "queue" }))
      yield* suspended(second)
      open()
      const threadId = Either.getOrThrow(yield* Fiber.join(first)).at(-1)!.threadId
      expect((yield* Fiber.join(second)).at(-1)!.threadId).toBe(threadId)
      expect(created()).toHaveLength(1)
      expect(runsOf(threadId)).toHaveLength(1)
      expect(yield* textsOn(threadId)).toEqual(["first", "re: first", "second", "re: second"])
      expect((yield* tambo.state).currentThreadId).toBe(threadId)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("interrupt cancels the first run and sends the second message on the thread the server named for it", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const { first, open } = yield* firstHeld(() => [Script.text("first..."), Script.hang()])
      const second = yield* Effect.fork(runAll("second", { onBusy: "interrupt" }))
      yield* suspended(second)
      open()
      const threadId = (yield* Fiber.join(second)).at(-1)!.threadId
      expect(created()).toHaveLength(1)
      const ended = yield* Fiber.join(first)
      expect(Either.isLeft(ended) && fields(ended.left)).toMatchObject({ _tag: "RunCancelledError" })
      expect(server().cancels.map((c) => c.threadId)).toEqual([threadId])
      expect((yield* textsOn(threadId)).slice(-2)).toEqual(["second", "re: second"])
      expect((yield* textsOn(threadId))[0]).toBe("first")
      expect((yield* tambo.state).currentThreadId).toBe(threadId)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("queue after a first run that ended before the server named a thread: the second message creates the thread", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const { first, open } = yield* firstHeld(() => [Script.httpError(500)])
      const second = yield* Effect.fork(runAll("second", { onBusy: "queue" }))
      yield* suspended(second)
      open()
      expect(Either.isLeft(yield* Fiber.join(first))).toBe(true)
      const threadId = (yield* Fiber.join(second)).at(-1)!.threadId
      expect(created()).toHaveLength(2)
      expect((yield* textsOn(threadId)).slice(-2)).toEqual(["second", "re: second"])
      expect((yield* tambo.state).currentThreadId).toBe(threadId)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a Stop of the thread the server named ends the message queued before it was named, which sends nothing", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const { first, open } = yield* firstHeld(() => [Script.text("first..."), Script.hang()])
      const second = yield* Effect.fork(Effect.either(runAll("second", { onBusy: "queue" })))
      yield* suspended(second)
      open()
      yield* Effect.repeat(Effect.map(tambo.state, (state) => state.currentThreadId), {
        until: (id) => !isLocalThreadId(id),
        schedule: Schedule.spaced("5 millis")
      })
      const threadId = (yield* tambo.state).currentThreadId
      yield* tambo.cancelRun(threadId)
      const waited = yield* Fiber.join(second)
      expect(Either.isLeft(waited) && fields(waited.left)).toMatchObject({ _tag: "RunCancelledError" })
      const ended = yield* Fiber.join(first)
      expect(Either.isLeft(ended) && fields(ended.left)).toMatchObject({ _tag: "RunCancelledError" })
      expect(created()).toHaveLength(1)
      expect(runsOf(threadId)).toHaveLength(0)
      expect(yield* textsOn(threadId)).toEqual(["first", "first..."])
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a Stop of the placeholder ends the message queued behind its run, which sends nothing", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const { first, open } = yield* firstHeld(() => [Script.text("first..."), Script.hang()])
      const second = yield* Effect.fork(Effect.either(runAll("second", { onBusy: "queue" })))
      yield* suspended(second)
      yield* tambo.cancelRun(PLACEHOLDER_THREAD_ID)
      const waited = yield* Fiber.join(second)
      expect(Either.isLeft(waited) && fields(waited.left)).toMatchObject({ _tag: "RunCancelledError" })
      open()
      const ended = yield* Fiber.join(first)
      expect(Either.isLeft(ended) && fields(ended.left)).toMatchObject({ _tag: "RunCancelledError" })
      expect(server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs"))).toHaveLength(1)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a Stop of the new placeholder after startNewThread leaves the message queued behind the run that left it, which goes on that run's thread", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const { first, open } = yield* firstHeld()
      const second = yield* Effect.fork(runAll("second", { onBusy: "queue" }))
      yield* suspended(second)
      yield* tambo.startNewThread
      yield* tambo.cancelRun(PLACEHOLDER_THREAD_ID)
      open()
      const threadId = Either.getOrThrow(yield* Fiber.join(first)).at(-1)!.threadId
      expect((yield* Fiber.join(second)).at(-1)!.threadId).toBe(threadId)
      expect(yield* textsOn(threadId)).toEqual(["first", "re: first", "second", "re: second"])
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  /**
   * A tracer whose run spans tell `named` as the run takes the thread the server named (its
   * RUN_STARTED), before the store shows that name: it publishes at most once per turn.
   */
  const tellingNamed = (named: Deferred.Deferred<string>) =>
    Effect.map(Effect.tracer, (native) =>
      Tracer.make({
        context: native.context,
        span: (...args) => {
          const span = native.span(...args)
          const attribute = span.attribute.bind(span)
          return Object.assign(span, {
            attribute: (key: string, value: unknown) => {
              attribute(key, value)
              if (key === "tambo.thread_id" && typeof value === "string" && value.startsWith("thr_")) {
                Deferred.unsafeDone(named, Exit.succeed(value))
              }
            }
          })
        }
      }))

  /**
   * The first run on the new conversation, its reply held until `open`: returned once it took the
   * thread the server named (`threadId`), before the store shows that name.
   */
  const firstNamedHeld = () =>
    Effect.gen(function* () {
      let open!: () => void
      const opened = new Promise<void>((resolve) => (open = resolve))
      server().setScript(async (request) => {
        if (request.text === "first") await opened
        return [Script.text(`re: ${request.text}`)]
      })
      const named = yield* Deferred.make<string>()
      const tracer = yield* tellingNamed(named)
      const first = yield* Effect.fork(Effect.either(runAll("first").pipe(Effect.withTracer(tracer))))
      return { first, open, threadId: yield* Deferred.await(named) }
    })

  for (const onBusy of ["reject", "queue", "interrupt"] as const) {
    it.live(`a message sent (${onBusy}) as the server names the first run's thread, before the store shows the name, is a second run of that thread`, () =>
      Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const { first, open, threadId } = yield* firstNamedHeld()
        expect((yield* tambo.state).currentThreadId).toBe(PLACEHOLDER_THREAD_ID)
        const second = yield* Effect.fork(Effect.either(runAll("second", { onBusy })))
        if (onBusy !== "reject") yield* suspended(second)
        // The server takes the cancellation before the run it interrupts ends: one it ended first is not cancelled.
        if (onBusy === "interrupt") yield* until(() => server().cancels.length === 1)
        open()
        const ended = yield* Fiber.join(first)
        const sent = yield* Fiber.join(second)
        expect(created()).toHaveLength(1)
        if (onBusy === "reject") {
          expect(Either.isLeft(sent) && fields(sent.left)).toMatchObject({ _tag: "RunConflictError" })
          expect(yield* textsOn(threadId)).toEqual(["first", "re: first"])
        } else if (onBusy === "queue") {
          expect(Either.getOrThrow(sent).at(-1)!.threadId).toBe(threadId)
          expect(yield* textsOn(threadId)).toEqual(["first", "re: first", "second", "re: second"])
        } else {
          expect(Either.isLeft(ended) && fields(ended.left)).toMatchObject({ _tag: "RunCancelledError" })
          expect(Either.getOrThrow(sent).at(-1)!.threadId).toBe(threadId)
          expect(server().requests.filter((r) => r.method === "DELETE").map((r) => r.path)).toEqual([
            expect.stringMatching(new RegExp(`^/v1/threads/${threadId}/runs/`))
          ])
          expect((yield* textsOn(threadId)).slice(-2)).toEqual(["second", "re: second"])
        }
        expect((yield* tambo.state).currentThreadId).toBe(threadId)
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      }).pipe(Effect.provide(tamboLayer(server()))))
  }

  it.live("a Stop of the placeholder as the server names the first run's thread, before the store shows the name, ends the message queued behind it, which sends nothing", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const { first, open, threadId } = yield* firstNamedHeld()
      // The second run's span says when it follows the first to its thread: it waits there then.
      const following = yield* Deferred.make<string>()
      const followingTracer = yield* tellingNamed(following)
      const second = yield* Effect.fork(Effect.either(runAll("second", { onBusy: "queue" }).pipe(Effect.withTracer(followingTracer))))
      expect(yield* Deferred.await(following)).toBe(threadId)
      yield* suspended(second)
      expect((yield* tambo.state).currentThreadId).toBe(PLACEHOLDER_THREAD_ID)
      yield* tambo.cancelRun(PLACEHOLDER_THREAD_ID)
      open()
      const waited = yield* Fiber.join(second)
      expect(Either.isLeft(waited) && fields(waited.left)).toMatchObject({ _tag: "RunCancelledError" })
      const ended = yield* Fiber.join(first)
      expect(Either.isLeft(ended) && fields(ended.left)).toMatchObject({ _tag: "RunCancelledError" })
      expect(created()).toHaveLength(1)
      expect(runsOf(threadId)).toHaveLength(0)
      expect(yield* textsOn(threadId)).not.toContain("second")
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("startNewThread as the server names the first run's thread, before the store shows the name: the next message creates another thread, and the first run's keeps its messages", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      server().setScript((request) => [Script.text(`re: ${request.text}`)])
      const named = yield* Deferred.make<string>()
      const tracer = yield* tellingNamed(named)
      const first = yield* Effect.fork(runAll("first").pipe(Effect.withTracer(tracer)))
      const firstThread = yield* Deferred.await(named)
      yield* tambo.startNewThread
      const secondThread = (yield* runAll("second", { onBusy: "queue" })).at(-1)!.threadId
      yield* Fiber.join(first)
      expect(secondThread).not.toBe(firstThread)
      expect(created()).toHaveLength(2)
      expect(yield* textsOn(firstThread)).toEqual(["first", "re: first"])
      expect(yield* textsOn(secondThread)).toEqual(["second", "re: second"])
      expect((yield* tambo.state).currentThreadId).toBe(secondThread)
      yield* expectStoreEqualsServer(tambo, server(), firstThread)
      yield* expectStoreEqualsServer(tambo, server(), secondThread)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a message sent after startNewThread still creates another thread, whatever its onBusy", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const { first, open } = yield* firstHeld()
      yield* tambo.startNewThread
      const second = yield* Effect.fork(runAll("second"))
      open()
      const firstThread = Either.getOrThrow(yield* Fiber.join(first)).at(-1)!.threadId
      const secondThread = (yield* Fiber.join(second)).at(-1)!.threadId
      expect(secondThread).not.toBe(firstThread)
      expect(created()).toHaveLength(2)
      expect(yield* textsOn(firstThread)).toEqual(["first", "re: first"])
      expect(yield* textsOn(secondThread)).toEqual(["second", "re: second"])
    }).pipe(Effect.provide(tamboLayer(server()))))
})

describe("cancelling a run whose last event came", () => {
  /** Waits until `fiber` waits on something, or is done. */
  const waitingOrDone = <A, E>(fiber: Fiber.RuntimeFiber<A, E>): Effect.Effect<void> =>
    Effect.flatMap(Fiber.status(fiber), (status) =>
      status._tag === "Running" ? Effect.zipRight(Effect.yieldNow(), waitingOrDone(fiber)) : Effect.void)

  /** A thread the server knows, with a first run done, and the script of the next run. */
  const threadWithARun = Effect.gen(function* () {
    server().setScript([Script.text("first")])
    const threadId = (yield* runAll("first")).at(-1)!.threadId
    server().setScript([Script.text("second")])
    return threadId
  })

  /** Nothing was cancelled on the server, and the store shows the thread idle, not cancelled, with `texts`. */
  const notCancelled = (tambo: Tambo.Tambo.Service, threadId: string, texts: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      expect(server().cancels).toEqual([])
      expect(server().threads.get(threadId)?.runStatus).toBe("idle")
      const held = (yield* tambo.state).threadMap[threadId]!
      expect(held.streaming.status).toBe("idle")
      expect(held.thread.lastRunCancelled).toBe(false)
      expect(held.thread.messages.flatMap((m) => m.content.flatMap((c) => (c.type === "text" ? [c.text] : []))))
        .toEqual(texts)
    })

  /** The thread's second run completed as the server has it: see `notCancelled`, and the store equals the server. */
  const completedAsTheServerHasIt = (tambo: Tambo.Tambo.Service, threadId: string, texts = ["first", "first", "second", "second"]) =>
    Effect.zipRight(notCancelled(tambo, threadId, texts), expectStoreEqualsServer(tambo, server(), threadId))

  it.live("cancelRun once the caller read RUN_FINISHED, before it reads on: the run completes, nothing is sent to the server, and the thread is not cancelled", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* threadWithARun
      const atFinish = yield* Deferred.make<void>()
      const goOn = yield* Deferred.make<void>()
      const running = yield* Effect.fork(Stream.runCollect(tambo.run("second", { threadId }).pipe(
        Stream.tap((e) =>
          e.event.type === "RUN_FINISHED" ? Effect.zipRight(Deferred.succeed(atFinish, undefined), Deferred.await(goOn)) : Effect.void
        )
      )))
      yield* Deferred.await(atFinish)
      const cancelling = yield* Effect.fork(tambo.cancelRun(threadId))
      yield* waitingOrDone(cancelling)
      yield* Deferred.succeed(goOn, undefined)
      yield* Fiber.join(cancelling)
      const events = [...yield* Fiber.join(running)]
      expect(events.at(-1)!.event.type).toBe("RUN_FINISHED")
      yield* completedAsTheServerHasIt(tambo, threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  /**
   * A message `text` on a thread with a run (the server answering with `script`, if given), and
   * `cancelRun` of its run while the run's end reads the thread, which `proxy` holds: `cancelRun`
   * waits for the read, and resolves once it was let go.
   */
  const cancelledWhileTheEndReads = (
    proxy: HoldingProxy.HoldingProxy,
    text: string,
    options: { readonly autoExecuteTools?: boolean; readonly script?: Script.ScriptSource } = {}
  ) =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* threadWithARun
      if (options.script !== undefined) server().setScript(options.script)
      const read = proxy.holdRequest((r) => r.method === "GET" && r.path === `/v1/threads/${threadId}`)
      const running = yield* Effect.fork(runAll(text, {
        threadId,
        ...(options.autoExecuteTools === undefined ? {} : { autoExecuteTools: options.autoExecuteTools })
      }))
      yield* Effect.promise(() => read.arrived)
      const cancelling = yield* Effect.fork(tambo.cancelRun(threadId))
      yield* waitingOrDone(cancelling)
      // The run's end waits for the read, and so does cancelRun.
      expect(Option.isNone(yield* Fiber.poll(cancelling))).toBe(true)
      read.release()
      yield* Fiber.join(cancelling)
      return { running, tambo, threadId }
    })

  it.live("cancelRun while the run reads its thread at its end: the run completes, nothing is sent to the server, and cancelRun resolves once the run ended", () =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      yield* Effect.gen(function* () {
        const { running, tambo, threadId } = yield* cancelledWhileTheEndReads(proxy, "second")
        yield* completedAsTheServerHasIt(tambo, threadId)
        expect((yield* Fiber.join(running)).at(-1)!.event.type).toBe("RUN_FINISHED")
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url })))
    }).pipe(Effect.scoped))

  it.live("a run sent with onBusy interrupt while the thread's run reads its thread at its end: that run completes, nothing is cancelled on the server, and the new one runs after it", () =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const threadId = yield* threadWithARun
        server().setScript((request) => [Script.text(request.text)])
        const read = proxy.holdRequest((r) => r.method === "GET" && r.path === `/v1/threads/${threadId}`)
        const running = yield* Effect.fork(runAll("second", { threadId }))
        yield* Effect.promise(() => read.arrived)
        const instead = yield* Effect.fork(runAll("third", { threadId, onBusy: "interrupt" }))
        yield* waitingOrDone(instead)
        read.release()
        expect((yield* Fiber.join(running)).at(-1)!.event.type).toBe("RUN_FINISHED")
        expect((yield* Fiber.join(instead)).at(-1)!.event.type).toBe("RUN_FINISHED")
        yield* completedAsTheServerHasIt(tambo, threadId, ["first", "first", "second", "second", "third", "third"])
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url })))
    }).pipe(Effect.scoped))

  it.live("cancelRun while a new thread's run reads its thread at its end and the thread is being named: the run completes, nothing is cancelled on the server, and the name comes", () =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        server().setScript([Script.text("named")])
        const named = proxy.holdResponse((r) => r.method === "POST" && r.path.endsWith("/generate-name"))
        const read = proxy.holdRequest((r) => r.method === "GET" && /^\/v1\/threads\/[^/]+$/.test(r.path))
        // Released whatever the test finds: the client would otherwise end waiting on the held naming.
        yield* Effect.gen(function* () {
          const threadId = yield* Deferred.make<string>()
          const running = yield* Effect.fork(runAll("name me", { onThreadId: (id) => Deferred.unsafeDone(threadId, Exit.succeed(id)) }))
          yield* Effect.promise(() => Promise.all([named.arrived, read.arrived]))
          const id = yield* Deferred.await(threadId)
          const cancelling = yield* Effect.fork(tambo.cancelRun(id))
          yield* waitingOrDone(cancelling)
          expect(Option.isNone(yield* Fiber.poll(cancelling))).toBe(true)
          read.release()
          yield* Fiber.join(cancelling)
          yield* notCancelled(tambo, id, ["name me", "named"])
          expect((yield* Fiber.join(running)).at(-1)!.event.type).toBe("RUN_FINISHED")
          named.release()
          const store = yield* ThreadStore.ThreadStore
          yield* Stream.runHead(Stream.filter(store.changes, (state) => state.threadMap[id]?.thread.name !== undefined))
          yield* expectStoreEqualsServer(tambo, server(), id)
        }).pipe(Effect.ensuring(Effect.sync(() => {
          named.release()
          read.release()
        })))
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url, autoGenerateThreadName: true, autoGenerateNameThreshold: 2 })))
    }).pipe(Effect.scoped))

  it.live("a caller that stops reading once it read RUN_FINISHED: the run completes, and the thread is not marked cancelled, also with no read of it at the end", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* threadWithARun
      const atFinish = yield* Deferred.make<void>()
      const running = yield* Effect.fork(Stream.runDrain(tambo.run("second", { threadId }).pipe(
        Stream.tap((e) => e.event.type === "RUN_FINISHED" ? Effect.zipRight(Deferred.succeed(atFinish, undefined), Effect.never) : Effect.void)
      )))
      yield* Deferred.await(atFinish)
      yield* Fiber.interrupt(running)
      yield* notCancelled(tambo, threadId, ["first", "first", "second", "second"])
    }).pipe(Effect.provide(tamboLayer(server(), { reconcileAfterRun: false }))))

  /**
   * A run of the weather tool on a thread with a run, `cancelRun` of it once its caller read the
   * step's RUN_FINISHED (the pause) and while the caller holds that event: the run ends cancelled.
   */
  const cancelledOnceTheCallerReadThePause = (options: { readonly autoExecuteTools?: boolean }) =>
    Effect.gen(function* () {
      weatherCalls = []
      const tambo = yield* Tambo.Tambo
      const threadId = yield* threadWithARun
      server().setScript(toolThenQuote("get_weather", { city: "Oslo" }))
      const atPause = yield* Deferred.make<void>()
      const goOn = yield* Deferred.make<void>()
      const running = yield* Effect.fork(Effect.flip(Stream.runCollect(tambo.run("weather?", { threadId, ...options }).pipe(
        Stream.tap((e) =>
          e.event.type === "RUN_FINISHED" ? Effect.zipRight(Deferred.succeed(atPause, undefined), Deferred.await(goOn)) : Effect.void
        )
      ))))
      yield* Deferred.await(atPause)
      const cancelling = yield* Effect.fork(tambo.cancelRun(threadId))
      yield* waitingOrDone(cancelling)
      yield* Deferred.succeed(goOn, undefined)
      yield* Fiber.join(cancelling)
      expect(fields(yield* Fiber.join(running))).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
      return { tambo, threadId }
    })

  it.live("a step paused for client tools is not the run's last event: cancelRun once the caller read its RUN_FINISHED still cancels the run, the tool does not run, its call stays pending, and the thread is as the server has it", () =>
    Effect.gen(function* () {
      const { tambo, threadId } = yield* cancelledOnceTheCallerReadThePause({})
      expect(weatherCalls).toEqual([])
      expect((yield* tambo.getPendingToolCalls(threadId)).map((call) => call.toolName)).toEqual(["get_weather"])
      // Its run on the server had ended, paused: the thread is as the server has it.
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  /**
   * A second run on a thread whose answer's body the proxy holds while the server ends the run
   * (`RUN_FINISHED`, or `RUN_ERROR` as `script` says), and `cancelRun` of it, whose `DELETE` the
   * server answers 404: the run is no longer its current one. `go` decides when the events come.
   */
  const cancelledAfterTheServerEndedIt = <A>(
    script: Script.ScriptSource,
    go: (
      body: HoldingProxy.HeldBody,
      deleted: HoldingProxy.Held,
      cancelling: Fiber.RuntimeFiber<void, unknown>,
      read: () => boolean
    ) => Effect.Effect<void>,
    end: (tambo: Tambo.Tambo.Service, threadId: string, running: Fiber.RuntimeFiber<ReadonlyArray<Tambo.RunEvent>, TamboError>) => Effect.Effect<A, unknown>,
    options: Tambo.RunOptions = {}
  ) =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      return yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const threadId = yield* threadWithARun
        server().setScript(script)
        const body = proxy.holdBody((r) => r.method === "POST" && r.path === `/v1/threads/${threadId}/runs`)
        const deleted = proxy.holdResponse((r) => r.method === "DELETE")
        const running = yield* Effect.fork(runAll("second", { ...options, threadId }))
        yield* Effect.promise(() => body.arrived)
        yield* until(() => server().threads.get(threadId)?.runStatus === "idle")
        const cancelling = yield* Effect.fork(tambo.cancelRun(threadId))
        yield* Effect.promise(() => deleted.arrived)
        // The store shows the run's last event read.
        const read = () => tambo.store.getSnapshot().threadMap[threadId]?.streaming.status === "idle"
        yield* go(body, deleted, cancelling, read)
        return yield* end(tambo, threadId, running)
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url, tools: [weather] })))
    }).pipe(Effect.scoped)

  /** The 404 reaches the client first, then the run's events. */
  const answerThenEvents = (body: HoldingProxy.HeldBody, deleted: HoldingProxy.Held) =>
    Effect.sync(() => {
      deleted.release()
      body.release()
    })

  it.live("cancelRun of a run the server ended while its RUN_FINISHED was on its way (the DELETE answers 404): the run reads on and completes, and the thread is not cancelled", () =>
    cancelledAfterTheServerEndedIt([Script.text("second")], answerThenEvents, (tambo, threadId, running) =>
      Effect.gen(function* () {
        expect((yield* Fiber.join(running)).at(-1)!.event.type).toBe("RUN_FINISHED")
        yield* completedAsTheServerHasIt(tambo, threadId)
      })))

  it.live("cancelRun of a new conversation's run the server ended while its RUN_FINISHED was on its way resolves once the run's consumer took that event: a caller that stops reading then finds the run completed", () =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        server().setScript([Script.text("done")])
        const body = proxy.holdBody((r) => r.method === "POST" && r.path === "/v1/threads/runs")
        const deleted = proxy.holdResponse((r) => r.method === "DELETE")
        const seen: Array<string> = []
        const running = yield* Effect.fork(Stream.runForEach(tambo.run("hi"), (e) => Effect.sync(() => seen.push(e.event.type))))
        yield* Effect.promise(() => body.arrived)
        yield* until(() => server().threads.list()[0]?.runStatus === "idle")
        const cancelling = yield* Effect.fork(tambo.cancelRun())
        yield* Effect.promise(() => deleted.arrived)
        yield* answerThenEvents(body, deleted)
        yield* Fiber.join(cancelling)
        expect(seen.at(-1)).toBe("RUN_FINISHED")
        yield* Fiber.interrupt(running)
        yield* completedAsTheServerHasIt(tambo, server().threads.list()[0]!.id, ["hi", "done"])
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url })))
    }).pipe(Effect.scoped))

  it.live("cancelRun whose DELETE answers 404 once the run read its RUN_FINISHED: the run completes, the thread is not cancelled", () =>
    cancelledAfterTheServerEndedIt(
      [Script.text("second")],
      (body, deleted, cancelling, read) =>
        Effect.gen(function* () {
          body.release()
          // The run's end waits for the cancellation's answer: until then it may be a cancellation.
          yield* until(read)
          deleted.release()
          yield* Fiber.join(cancelling).pipe(Effect.orDie)
        }),
      (tambo, threadId, running) =>
        Effect.gen(function* () {
          expect((yield* Fiber.join(running)).at(-1)!.event.type).toBe("RUN_FINISHED")
          yield* completedAsTheServerHasIt(tambo, threadId)
        })
    ))

  it.live("cancelRun of a run the server failed while its RUN_ERROR was on its way (the DELETE answers 404): the run fails with the server's error, not cancelled", () =>
    cancelledAfterTheServerEndedIt(
      [Script.text("so far"), Script.runError({ message: "down", code: "DOWN" })],
      answerThenEvents,
      (tambo, threadId, running) =>
        Effect.gen(function* () {
          expect(fields(yield* Effect.flip(Fiber.join(running)))).toMatchObject({ _tag: "ApiError", reason: "RunError", code: "DOWN" })
          expect(server().cancels).toEqual([])
          const held = (yield* tambo.state).threadMap[threadId]!
          expect(held.thread.lastRunCancelled).toBe(false)
          yield* expectStoreEqualsServer(tambo, server(), threadId)
        })
    ))

  it.live("cancelRun whose DELETE answers 404 while the server sends nothing more and keeps the connection open: the run is aborted after the bound and ends cancelled, the thread as the server has it", () =>
    cancelledAfterTheServerEndedIt(
      [Script.text("second")],
      (_body, deleted) => Effect.sync(() => deleted.release()),
      (tambo, threadId, running) =>
        Effect.gen(function* () {
          expect(fields(yield* Effect.flip(Fiber.join(running)))).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
          expect(server().cancels).toEqual([])
          yield* expectStoreEqualsServer(tambo, server(), threadId)
        })
    ))

  it.live("a caller that stops reading while the run's RUN_FINISHED is on its way, of a run the server ended (its DELETE answers 404): the thread is not marked cancelled, also with no read of it at the end, and the next message runs", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* threadWithARun
      // The server sends its headers and RUN_STARTED at once, the rest once `answer` resolves.
      let answer!: () => void
      server().setScript(() => new Promise((resolve) => (answer = () => resolve([Script.text("second")]))))
      const started = yield* Deferred.make<void>()
      const running = yield* Effect.fork(Stream.runDrain(tambo.run("second", { threadId }).pipe(
        Stream.tap((e) => e.event.type === "RUN_STARTED" ? Effect.zipRight(Deferred.succeed(started, undefined), Effect.never) : Effect.void)
      )))
      yield* Deferred.await(started)
      answer()
      yield* until(() => server().threads.get(threadId)?.runStatus === "idle")
      yield* Fiber.interrupt(running)
      expect(server().cancels).toEqual([])
      const held = (yield* tambo.state).threadMap[threadId]!
      expect(held.streaming.status).toBe("idle")
      expect(held.thread.lastRunCancelled).toBe(false)
      server().setScript([Script.text("third")])
      expect((yield* runAll("third", { threadId })).at(-1)!.event.type).toBe("RUN_FINISHED")
    }).pipe(Effect.provide(tamboLayer(server(), { reconcileAfterRun: false }))))

  /**
   * A run of "second" whose own consumer, reading its RUN_STARTED, runs `act` once the server
   * `ended` that run or not: the rest of its events come once `answer` is called; a message
   * "again" is answered at once. A consumer that waited on itself fails the test rather than hang
   * it. What the consumer read, and how the run ended.
   */
  const readByItsConsumer = <E>(
    threadId: string,
    ended: boolean,
    act: (started: { readonly runId: string }) => Effect.Effect<void, E, Tambo.Tambo>
  ) =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      let answer!: () => void
      server().setScript((request) =>
        request.text === "again"
          ? [Script.text("again")]
          : new Promise((resolve) => (answer = () => resolve([Script.text("second")])))
      )
      const seen: Array<string> = []
      const exit = yield* Effect.exit(Stream.runForEach(tambo.run("second", { threadId }), (e) =>
        Effect.gen(function* () {
          seen.push(e.event.type)
          if (e.event.type !== "RUN_STARTED") return
          if (ended) {
            answer()
            yield* until(() => server().threads.get(threadId)?.runStatus === "idle")
          }
          yield* act(e.event)
        })).pipe(
          // Around the whole: a timeout runs what it bounds in a fiber of its own, which reads no run.
          Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("the run waited for its own caller") })
        ))
      if (!ended) answer()
      return { seen, exit }
    })

  /** `readByItsConsumer`, whose consumer runs `cancelRun` of the run (`byRunId`: of its run id). */
  const cancelledByItsConsumer = (threadId: string, ended: boolean, byRunId = false) =>
    readByItsConsumer(threadId, ended, (started) =>
      Effect.flatMap(Tambo.Tambo, (tambo) => tambo.cancelRun(threadId, byRunId ? { runId: started.runId } : undefined)))

  it.live("cancelRun run by the run's own consumer, of a run the server ended meanwhile (its DELETE answers 404): it resolves without waiting for that consumer to read on, and the run completes as the server ended it", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* threadWithARun
      for (const byRunId of [false, true]) {
        const { exit, seen } = yield* cancelledByItsConsumer(threadId, true, byRunId)
        expect(exit).toStrictEqual(Exit.void)
        expect(seen.at(-1)).toBe("RUN_FINISHED")
        yield* completedAsTheServerHasIt(tambo, threadId, byRunId
          ? ["first", "first", "second", "second", "second", "second"]
          : ["first", "first", "second", "second"])
      }
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("cancelRun run by the run's own consumer, of a run the server still runs: the run is cancelled there and ends cancelled", () =>
    Effect.gen(function* () {
      const threadId = yield* threadWithARun
      const { exit, seen } = yield* cancelledByItsConsumer(threadId, false)
      expect(seen).toEqual(["RUN_STARTED"])
      expect(fields(yield* Effect.flip(exit))).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
      expect(server().cancels).toHaveLength(1)
      yield* expectStoreEqualsServer(yield* Tambo.Tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  /**
   * `readByItsConsumer`, whose consumer runs a run of the same thread with `onBusy: "interrupt"`
   * to its end; that run's events too.
   */
  const interruptedByItsConsumer = (threadId: string, ended: boolean) =>
    Effect.gen(function* () {
      let again: ReadonlyArray<Tambo.RunEvent> = []
      const { exit, seen } = yield* readByItsConsumer(threadId, ended, () =>
        Effect.flatMap(Tambo.Tambo, (tambo) => Stream.runCollect(tambo.run("again", { threadId, onBusy: "interrupt" }))).pipe(
          Effect.map((events) => {
            again = [...events]
          })
        ))
      return { seen, again, exit }
    })

  it.live("a run with onBusy: \"interrupt\" started by the consumer of the thread's run, as it reads: it cancels that run and runs, and that run ends cancelled", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* threadWithARun
      const { again, exit, seen } = yield* interruptedByItsConsumer(threadId, false)
      expect(again.at(-1)!.event.type).toBe("RUN_FINISHED")
      expect(seen).toEqual(["RUN_STARTED"])
      expect(fields(yield* Effect.flip(exit))).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
      expect(server().cancels).toHaveLength(1)
      expect(yield* textsOf(tambo, threadId)).toEqual(["first", "first", "second", "again", "again"])
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a run with onBusy: \"interrupt\" started by the consumer of the thread's run, of a run the server ended meanwhile (its DELETE answers 404): it runs, and the thread is not marked cancelled", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* threadWithARun
      const { again, exit } = yield* interruptedByItsConsumer(threadId, true)
      expect(again.at(-1)!.event.type).toBe("RUN_FINISHED")
      expect(Exit.isFailure(exit) && Cause.squash(exit.cause)).toMatchObject({ _tag: "RunCancelledError" })
      expect(server().cancels).toEqual([])
      const held = (yield* tambo.state).threadMap[threadId]!
      expect(held.thread.lastRunCancelled).toBe(false)
      expect(yield* textsOf(tambo, threadId)).toEqual(["first", "first", "second", "second", "again", "again"])
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a run with onBusy: \"queue\" started by the consumer of the thread's run, as it reads: it cannot wait for that run (its end needs that consumer) and fails with RunConflictError, sending nothing; that run completes", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* threadWithARun
      let refused: unknown
      const seen = yield* Stream.runCollect(tambo.run("second", { threadId }).pipe(
        Stream.tap((e) =>
          e.event.type === "RUN_STARTED"
            ? Effect.map(Effect.flip(Stream.runDrain(tambo.run("again", { threadId, onBusy: "queue" }))), (error) => (refused = error))
            : Effect.void
        )
      )).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("the run waited for its own caller") }))
      expect(fields(refused as TamboError)).toMatchObject({ _tag: "RunConflictError", reason: "ActiveInClient" })
      expect([...seen].at(-1)!.event.type).toBe("RUN_FINISHED")
      expect(runsOf(threadId)).toHaveLength(1)
      yield* completedAsTheServerHasIt(tambo, threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("cancelRun whose DELETE fails otherwise (500): the run is aborted at once and ends cancelled, as before", () =>
    cancelledAfterTheServerEndedIt(
      [Script.text("second")],
      (body, deleted, cancelling) =>
        Effect.gen(function* () {
          deleted.fail(500, { message: "down" })
          yield* Fiber.join(cancelling).pipe(Effect.orDie)
          body.release()
        }),
      (tambo, threadId, running) =>
        Effect.gen(function* () {
          expect(fields(yield* Effect.flip(Fiber.join(running)))).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
          yield* expectStoreEqualsServer(tambo, server(), threadId)
        })
    ))

  /**
   * The thread's run paused for its caller's results is over on the server, which let go of the
   * thread and waits for them (the API, as the testing server: its lock is released at the pause):
   * nothing was cancelled or sent, no tool ran, and the store shows the call pending, as the server
   * has it.
   */
  const pausedAsTheServerHasIt = (tambo: Tambo.Tambo.Service, threadId: string) =>
    Effect.gen(function* () {
      expect(server().cancels).toEqual([])
      expect(server().requests.filter((r) => r.method === "DELETE")).toEqual([])
      expect(weatherCalls).toEqual([])
      const pending = yield* tambo.getPendingToolCalls(threadId)
      expect(pending.map((call) => call.toolName)).toEqual(["get_weather"])
      expect(server().threads.get(threadId)?.pendingToolCallIds).toEqual(pending.map((call) => call.toolCallId))
      expect((yield* tambo.state).threadMap[threadId]!.streaming.status).toBe("idle")
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    })

  it.live("a run paused for its caller (autoExecuteTools false), cancelled while it reads its thread at its end: nothing is sent (the server's run is over, paused), cancelRun resolves once the run's end is recorded, and the call stays pending, as the server has it", () =>
    Effect.gen(function* () {
      const proxy = yield* HoldingProxy.scoped(server())
      yield* Effect.gen(function* () {
        weatherCalls = []
        const { running, tambo, threadId } = yield* cancelledWhileTheEndReads(proxy, "weather?", {
          autoExecuteTools: false,
          script: toolThenQuote("get_weather", { city: "Oslo" })
        })
        yield* pausedAsTheServerHasIt(tambo, threadId)
        expect((yield* Fiber.join(running)).at(-1)!.event.type).toBe("CLIENT_AWAITING_TOOL_RESULTS")
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url, tools: [weather] })))
    }).pipe(Effect.scoped))

  it.live("a run paused for its caller (autoExecuteTools false), cancelled once the caller read its RUN_FINISHED, before the calls were handed over: the run ends cancelled, nothing is sent, and the call stays pending, as the server has it", () =>
    Effect.gen(function* () {
      const { tambo, threadId } = yield* cancelledOnceTheCallerReadThePause({ autoExecuteTools: false })
      yield* pausedAsTheServerHasIt(tambo, threadId)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  it.live("a run paused for its caller (autoExecuteTools false) once the server ended it paused, before its events came, with the DELETE answering 404: a pause is no end, the run ends cancelled and the call stays pending, as the server has it", () => {
    weatherCalls = []
    return cancelledAfterTheServerEndedIt(
      toolThenQuote("get_weather", { city: "Oslo" }),
      answerThenEvents,
      (tambo, threadId, running) =>
        Effect.gen(function* () {
          expect(fields(yield* Effect.flip(Fiber.join(running)))).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
          expect(server().cancels).toEqual([])
          expect(weatherCalls).toEqual([])
          expect((yield* tambo.getPendingToolCalls(threadId)).map((call) => call.toolName)).toEqual(["get_weather"])
          yield* expectStoreEqualsServer(tambo, server(), threadId)
        }),
      { autoExecuteTools: false }
    )
  })

  it.live("cancelRun once the caller read a RUN_ERROR, before it reads on: the run fails with that error, as the server ended it, and nothing is sent to the server", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* threadWithARun
      server().setScript([Script.text("so far"), Script.runError({ message: "down", code: "DOWN" })])
      const atError = yield* Deferred.make<void>()
      const goOn = yield* Deferred.make<void>()
      const running = yield* Effect.fork(Effect.flip(Stream.runDrain(tambo.run("second", { threadId }).pipe(
        Stream.tap((e) =>
          e.event.type === "RUN_ERROR" ? Effect.zipRight(Deferred.succeed(atError, undefined), Deferred.await(goOn)) : Effect.void
        )
      ))))
      yield* Deferred.await(atError)
      const cancelling = yield* Effect.fork(tambo.cancelRun(threadId))
      yield* waitingOrDone(cancelling)
      yield* Deferred.succeed(goOn, undefined)
      yield* Fiber.join(cancelling)
      expect(fields(yield* Fiber.join(running))).toMatchObject({ _tag: "ApiError", reason: "RunError", code: "DOWN" })
      expect(server().cancels).toEqual([])
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))
})
