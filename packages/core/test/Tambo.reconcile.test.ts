// After a run ends, however it ends, the thread in the store equals the server's (see
// expectStoreEqualsServer for what the comparison leaves out, and why).
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as ClientState from "../src/ClientState.js"
import * as Tambo from "../src/Tambo.js"
import { expectStoreEqualsServer, fields, runAll, tamboLayer, threadOf, useServer, weather } from "./helpers.js"

const server = useServer()

/** Waits until the current thread streams (its run started and sent something). */
const untilStreaming = (tambo: Tambo.Tambo.Service) =>
  Effect.gen(function* () {
    while (true) {
      const state = yield* tambo.state
      const thread = state.threadMap[state.currentThreadId]
      if (state.currentThreadId !== "placeholder" && thread?.streaming.status === "streaming" && thread.thread.messages.length > 1) {
        return state.currentThreadId
      }
      yield* Effect.sleep("5 millis")
    }
  }).pipe(Effect.timeout("5 seconds"))

const threadReads = (threadId: string) =>
  server().requests.filter((request) => request.method === "GET" && request.path === `/v1/threads/${threadId}`)

describe("the store after a run equals the server's thread", () => {
  it.live("after a finished text run: the user's message has the server's id, keyed by its local one", () =>
    Effect.gen(function* () {
      server().setScript([Script.text(["Hel", "lo there "])])
      const events = yield* runAll("hi")
      const threadId = events.at(-1)!.threadId
      // One read per run.
      expect(threadReads(threadId)).toHaveLength(1)
      const tambo = yield* Tambo.Tambo
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      const [user] = threadOf(yield* tambo.state, threadId).thread.messages
      expect(user!.id).toBe(server().threads.get(threadId)!.messages[0]!.id)
      expect(user!.key).toMatch(/^local_user_/)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("after a tool round trip whose reply began with the tool call", () =>
    Effect.gen(function* () {
      server().setScript((request) =>
        request.toolResults.length === 0
          ? [Script.toolCall("get_weather", { city: "Paris" })]
          : [Script.text("It is 21 in Paris.")]
      )
      const events = yield* runAll("weather?")
      const threadId = events.at(-1)!.threadId
      const tambo = yield* Tambo.Tambo
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      const messages = threadOf(yield* tambo.state, threadId).thread.messages
      // The reply that began with the call holds the server's leading " " text block.
      expect(messages[1]!.content.map((block) => block.type)).toEqual(["text", "tool_use"])
      expect(messages[1]!.key).toBeDefined()
      expect(messages[2]!.key).toMatch(/^msg_tool_result_/)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  it.live("after a component run: props as stored, every prop done", () =>
    Effect.gen(function* () {
      server().setScript([
        Script.text("Here: "),
        Script.component("WeatherCard", [
          { _tambo_statusMessage: "Drawing" },
          { _tambo_statusMessage: "Drawing", city: "Paris" },
          { _tambo_statusMessage: "Drawing", city: "Paris", temperature: 21 }
        ])
      ])
      const events = yield* runAll("card please")
      const threadId = events.at(-1)!.threadId
      const tambo = yield* Tambo.Tambo
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      const component = threadOf(yield* tambo.state, threadId).thread.messages[1]!.content.find((c) => c.type === "component")
      expect(component).toMatchObject({
        props: { city: "Paris", temperature: 21 },
        streamingState: "done",
        streamingStatus: { _tambo_statusMessage: "done", city: "done", temperature: "done" }
      })
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("what only the client saw stays: reasoning and its duration, also on a reply that began with a tool call", () =>
    Effect.gen(function* () {
      server().setScript((request) =>
        request.toolResults.length === 0
          ? [Script.reasoning(["Paris ", "is in France"]), Script.toolCall("get_weather", { city: "Paris" })]
          : [Script.reasoning("Got it"), Script.text("It is 21 in Paris.")]
      )
      const events = yield* runAll("weather?")
      const threadId = events.at(-1)!.threadId
      const tambo = yield* Tambo.Tambo
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      const messages = threadOf(yield* tambo.state, threadId).thread.messages
      expect(messages[1]).toMatchObject({ reasoning: ["Paris is in France"], reasoningDurationMS: expect.any(Number) })
      // Every message keeps the reasoning the stream gave it.
      const streamed = events.at(-1)!.snapshot.messages
      expect(messages.map((m) => [m.reasoning, m.reasoningDurationMS])).toEqual(streamed.map((m) => [m.reasoning, m.reasoningDurationMS]))
      expect(messages.flatMap((m) => m.reasoning ?? [])).toEqual(["Paris is in France", "Got it"])
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  it.live("after a run failed by RUN_ERROR: the thread holds the server's lastRunError", () =>
    Effect.gen(function* () {
      server().setScript([
        Script.text("so far"),
        Script.runError({ message: "provider down", code: "LLM_SERVER_ERROR", status: 502, storedMessage: "502 Bad Gateway" })
      ])
      const error = yield* runAll("fail").pipe(Effect.flip, Effect.map(fields))
      expect(error).toMatchObject({ _tag: "ApiError", code: "LLM_SERVER_ERROR" })
      const tambo = yield* Tambo.Tambo
      const threadId = (yield* tambo.state).currentThreadId
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      const thread = threadOf(yield* tambo.state, threadId)
      expect(thread.thread.lastRunError).toEqual({ code: "LLM_SERVER_ERROR", message: "502 Bad Gateway" })
      // The streamed error stays what the run failed with.
      expect(thread.streaming.error).toMatchObject({ message: "provider down", code: "LLM_SERVER_ERROR" })
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("after a cancelled run: the reply is marked cancelled and holds the text the server kept", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("Partial "), Script.hang()])
      const tambo = yield* Tambo.Tambo
      const fiber = yield* Effect.fork(Stream.runDrain(tambo.run("hang")))
      const threadId = yield* untilStreaming(tambo)
      yield* tambo.cancelRun(threadId)
      const error = yield* Fiber.join(fiber).pipe(Effect.flip, Effect.map(fields))
      expect(error).toMatchObject({ _tag: "RunCancelledError" })
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      const thread = threadOf(yield* tambo.state, threadId).thread
      expect(thread.lastRunCancelled).toBe(true)
      expect(thread.messages[1]).toMatchObject({ isCancelled: true, content: [{ type: "text", text: "Partial" }] })
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("after an interrupted run", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("Partial"), Script.hang()])
      const tambo = yield* Tambo.Tambo
      const fiber = yield* Effect.fork(Stream.runDrain(tambo.run("hang")))
      const threadId = yield* untilStreaming(tambo)
      yield* Fiber.interrupt(fiber)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      expect(threadOf(yield* tambo.state, threadId).thread.messages[1]!.isCancelled).toBe(true)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("after a dropped connection", () =>
    Effect.gen(function* () {
      server().setScript([Script.text(["a", "b", "c", "d"]), Script.dropAfter(3)])
      const error = yield* runAll("drop").pipe(Effect.flip, Effect.map(fields))
      expect(error).toMatchObject({ _tag: "TransportError", reason: "Disconnected" })
      const tambo = yield* Tambo.Tambo
      const threadId = (yield* tambo.state).currentThreadId
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("concurrent runs read their thread once each", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("ok")])
      const tambo = yield* Tambo.Tambo
      const threadIds = yield* Effect.forEach(
        ["one", "two", "three"],
        (message) => Effect.map(runAll(message), (events) => events.at(-1)!.threadId),
        { concurrency: "unbounded" }
      )
      for (const threadId of threadIds) expect(threadReads(threadId)).toHaveLength(1)
      for (const threadId of threadIds) yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a consumer that stops at RUN_FINISHED: the thread is read once, nothing is cancelled", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("done")])
      const tambo = yield* Tambo.Tambo
      let threadId = ""
      yield* Stream.runDrain(Stream.takeUntil(tambo.run("hi"), (event) => {
        threadId = event.threadId
        return event.event.type === "RUN_FINISHED"
      }))
      expect(threadReads(threadId)).toHaveLength(1)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      expect(server().cancels).toEqual([])
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a run with a tool round reads its thread once, at its end, not at the pause", () =>
    Effect.gen(function* () {
      server().setScript((request) =>
        request.toolResults.length === 0
          ? [Script.toolCall("get_weather", { city: "Paris" })]
          : [Script.text("It is 21 in Paris.")]
      )
      const tambo = yield* Tambo.Tambo
      let threadId = ""
      let readsAtPause = -1
      yield* Stream.runForEach(tambo.run("weather?"), (event) =>
        Effect.sync(() => {
          threadId = event.threadId
          if (event.event.type === "RUN_FINISHED" && readsAtPause < 0) readsAtPause = threadReads(threadId).length
        }))
      expect(readsAtPause).toBe(0)
      expect(threadReads(threadId)).toHaveLength(1)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))
})

describe("reconciliation is best effort, and can be turned off", () => {
  it.live("a thread deleted while its run goes on: the run still finishes, and the thread leaves the store", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("Hello"), Script.delay(200)])
      const tambo = yield* Tambo.Tambo
      const fiber = yield* Effect.fork(runAll("hi"))
      const threadId = yield* untilStreaming(tambo)
      const deleted = yield* Effect.promise(() =>
        fetch(`${server().url}/v1/threads/${threadId}?userKey=user-1`, { method: "DELETE", headers: { "x-api-key": server().apiKey } })
      )
      expect(deleted.status).toBe(204)
      const events = yield* Fiber.join(fiber)
      expect(events.at(-1)!.event.type).toBe("RUN_FINISHED")
      expect(threadReads(threadId)).toHaveLength(1)
      // The store holds what the server holds: not that thread.
      const state = yield* tambo.state
      expect(state.threadMap[threadId]).toBeUndefined()
      expect(state.currentThreadId).toBe(ClientState.PLACEHOLDER_THREAD_ID)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("reconcileAfterRun: false reads nothing and leaves the thread as streamed", () =>
    Effect.gen(function* () {
      server().setScript([Script.toolCall("get_weather", { city: "Paris" })])
      const events = yield* runAll("weather?", { autoExecuteTools: false })
      const threadId = events.at(-1)!.threadId
      const tambo = yield* Tambo.Tambo
      expect(threadReads(threadId)).toHaveLength(0)
      const messages = threadOf(yield* tambo.state, threadId).thread.messages
      expect(messages[0]!.id).toMatch(/^local_user_/)
      expect(messages[1]!.content.map((block) => block.type)).toEqual(["tool_use"])
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather], reconcileAfterRun: false }))))

  it.live("a paused run's pending calls are the server's", () =>
    Effect.gen(function* () {
      server().setScript([Script.toolCall("get_weather", { city: "Paris" }, { id: "call_paris" })])
      const events = yield* runAll("weather?", { autoExecuteTools: false })
      const threadId = events.at(-1)!.threadId
      const tambo = yield* Tambo.Tambo
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      expect(threadOf(yield* tambo.state, threadId).pendingToolCalls).toEqual([{ toolCallId: "call_paris", toolName: "get_weather" }])
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))
})
