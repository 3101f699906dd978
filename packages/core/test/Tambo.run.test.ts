import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as ClientState from "../src/ClientState.js"
import * as Tambo from "../src/Tambo.js"
import type * as TamboTransport from "../src/TamboTransport.js"
import * as Tool from "../src/Tool.js"
import {
  aliveWhileWaiting,
  expectStoreEqualsServer,
  externalStore,
  fields,
  readWeakly,
  runAll,
  serverShape,
  shape,
  tamboLayer,
  threadOf,
  together,
  until,
  useServer,
  weather
} from "./helpers.js"

const server = useServer()

/** After every end-to-end run, the store's thread equals the server's. */
const expectSameAsServer = (threadId: string) =>
  Effect.gen(function* () {
    const tambo = yield* Tambo.Tambo
    const state = yield* tambo.state
    expect(shape(threadOf(state, threadId).thread.messages)).toEqual(serverShape(server(), threadId))
  })

describe("Tambo.run", () => {
  it.live("streams text into a new thread and ends idle", () =>
    Effect.gen(function* () {
      server().setScript([Script.text(["Hel", "lo ", "there"])])
      const events = yield* runAll("hi")
      const types = events.map((e) => e.event.type)
      expect(types[0]).toBe("RUN_STARTED")
      expect(types.at(-1)).toBe("RUN_FINISHED")
      const last = events.at(-1)!
      const threadId = last.threadId
      expect(threadId).not.toBe("placeholder")
      expect(last.snapshot.messages.map((m) => m.role)).toEqual(["user", "assistant"])
      expect(last.snapshot.messages[1]!.content).toEqual([{ type: "text", text: "Hello there" }])
      // Each element is a plain record of the three fields, whatever builds it: spread and JSON keep them.
      expect(Object.keys(last)).toEqual(["event", "threadId", "snapshot"])
      expect({ ...last }).toEqual({ event: last.event, threadId, snapshot: last.snapshot })
      const tambo = yield* Tambo.Tambo
      const state = yield* tambo.state
      expect(state.currentThreadId).toBe(threadId)
      expect(threadOf(state, threadId).streaming.status).toBe("idle")
      expect(threadOf(state, threadId).lastCompletedRunId).toBeDefined()
      yield* expectSameAsServer(threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("continues the current thread with previousRunId on the next run", () =>
    Effect.gen(function* () {
      server().setScript((request) => [Script.text(`echo: ${request.text}`)])
      const first = yield* runAll("one")
      const second = yield* runAll("two")
      const threadId = first.at(-1)!.threadId
      expect(second.at(-1)!.threadId).toBe(threadId)
      const runs = server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs"))
      expect(runs.map((r) => r.path)).toEqual(["/v1/threads/runs", `/v1/threads/${threadId}/runs`])
      const body = runs[1]!.body as { previousRunId?: string; userKey?: string }
      const started = first[0]!.event
      expect(started.type === "RUN_STARTED" && body.previousRunId).toBe(started.type === "RUN_STARTED" && started.runId)
      expect(body.userKey).toBe("user-1")
      yield* expectSameAsServer(threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("keeps reasoning, under its legacy and its AG-UI 1.0 names", () =>
    Effect.gen(function* () {
      server().setScript([Script.reasoning(["think", "ing"]), Script.text("done")])
      const legacy = yield* runAll("why?")
      const message = legacy.at(-1)!.snapshot.messages.at(-1)!
      expect(message.reasoning).toEqual(["thinking"])
      expect(message.reasoningDurationMS).toBeTypeOf("number")

      const tambo = yield* Tambo.Tambo
      yield* tambo.startNewThread
      server().setScript([
        Script.event({ type: "REASONING_START", messageId: "r1" }),
        Script.event({ type: "REASONING_MESSAGE_START", messageId: "r1", role: "assistant" }),
        Script.event({ type: "REASONING_MESSAGE_CONTENT", messageId: "r1", delta: "new names" }),
        Script.event({ type: "REASONING_MESSAGE_END", messageId: "r1" }),
        Script.event({ type: "REASONING_END", messageId: "r1" }),
        Script.text("ok")
      ])
      const modern = yield* runAll("why again?")
      expect(modern.at(-1)!.snapshot.messages.at(-1)!.reasoning).toEqual(["new names"])
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("runs client-side tools round after round, and the results reach the server", () =>
    Effect.gen(function* () {
      server().setScript((request) =>
        request.toolResults.length === 0
          ? [Script.text("Let me check. "), Script.toolCall("get_weather", { city: "Paris" }, { chunkSize: 5 })]
          : request.toolResults[0]!.text.includes("Paris") && request.history.length < 4
          ? [Script.toolCall("get_weather", { city: "Lyon" })]
          : [Script.text(`It is ${request.toolResults[0]!.text}`)]
      )
      const events = yield* runAll("weather?")
      const threadId = events.at(-1)!.threadId
      const starts = events.filter((e) => e.event.type === "RUN_STARTED")
      expect(starts).toHaveLength(3)
      const continuations = server().requests.filter((r) => r.path === `/v1/threads/${threadId}/runs`)
      expect(continuations).toHaveLength(2)
      const sent = continuations[0]!.body as { message: { content: Array<{ type: string; toolUseId: string }> } }
      expect(sent.message.content[0]!.type).toBe("tool_result")
      const final = events.at(-1)!.snapshot
      // One user message: continuations never duplicate it.
      expect(final.messages.filter((m) => m.role === "user" && m.content[0]?.type === "text")).toHaveLength(1)
      // Text before the tool call stays in the same assistant message, as the server stores it.
      const firstAssistant = final.messages.find((m) => m.role === "assistant")!
      expect(firstAssistant.content.map((c) => c.type)).toEqual(["text", "tool_use"])
      const toolUse = firstAssistant.content[1]!
      expect(toolUse.type === "tool_use" && toolUse.input).toEqual({ city: "Paris" })
      const lastText = final.messages.at(-1)!.content[0]!
      expect(lastText.type === "text" && lastText.text).toContain("Lyon")
      const server_ = server()
      const stored = server_.threads.get(threadId)!
      expect(stored.messages.some((m) => m.content.some((c) => c.type === "tool_result"))).toBe(true)
      yield* expectSameAsServer(threadId)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  it.live("streams a component's props to their final value", () =>
    Effect.gen(function* () {
      server().setScript([
        Script.text("Here: "),
        Script.component("WeatherCard", [{ city: "Par" }, { city: "Paris" }, { city: "Paris", temperature: 21 }])
      ])
      const events = yield* runAll("card please")
      const component = events.at(-1)!.snapshot.messages.at(-1)!.content.find((c) => c.type === "component")
      expect(component).toMatchObject({
        type: "component",
        name: "WeatherCard",
        props: { city: "Paris", temperature: 21 },
        streamingState: "done"
      })
      yield* expectSameAsServer(events.at(-1)!.threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("fails with MaxStepsExceededError past maxSteps, keeping the state", () =>
    Effect.gen(function* () {
      server().setScript(() => [Script.toolCall("get_weather", { city: "Paris" })])
      const result = yield* runAll("loop", { maxSteps: 2 }).pipe(Effect.either)
      expect(Either.isLeft(result) && result.left._tag).toBe("MaxStepsExceededError")
      const tambo = yield* Tambo.Tambo
      const state = yield* tambo.state
      const thread = threadOf(state, state.currentThreadId)
      expect(thread.thread.messages.filter((m) => m.content.some((c) => c.type === "tool_use"))).toHaveLength(3)
      expect(thread.streaming.status).toBe("idle")
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  it.live("interrupting the stream aborts the request and cancels the run on the server", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("partial"), Script.hang()])
      const tambo = yield* Tambo.Tambo
      const fiber = yield* tambo.run("hang").pipe(
        Stream.tap((e) => e.event.type === "TEXT_MESSAGE_CONTENT" ? Effect.never.pipe(Effect.timeout("1 millis"), Effect.ignore) : Effect.void),
        Stream.runCollect,
        Effect.fork
      )
      // Wait until the server streamed the text, then interrupt.
      yield* until(() => {
        const state = tambo.store.getSnapshot()
        return state.threadMap[state.currentThreadId]?.streaming.status === "streaming"
      })
      yield* Fiber.interrupt(fiber)
      const state = yield* tambo.state
      const thread = threadOf(state, state.currentThreadId)
      expect(thread.thread.lastRunCancelled).toBe(true)
      expect(thread.streaming.error).toBeUndefined()
      expect(thread.streaming.status).toBe("idle")
      yield* until(() => server().cancels.length > 0)
      expect(server().cancels[0]!.threadId).toBe(state.currentThreadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a run waiting for the server holds none of the events already read", () =>
    Effect.gen(function* () {
      server().setScript([Script.text(["a", "b", "c"]), Script.hang()])
      const tambo = yield* Tambo.Tambo
      // The elements and their events; their snapshots are the store's to keep.
      const { read, fiber } = yield* readWeakly(tambo.run("wait"), 5, (element) => [element, element.event])
      expect(read).toHaveLength(10)
      expect(yield* aliveWhileWaiting(read)).toBe(0)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a consumer that stops reading early ends the run on the server", () =>
    Effect.gen(function* () {
      server().setScript([Script.text(["a", "b", "c"]), Script.hang()])
      const tambo = yield* Tambo.Tambo
      const taken = yield* Stream.runCollect(Stream.take(tambo.run("take two"), 2))
      expect(taken.length).toBe(2)
      yield* until(() => server().cancels.length > 0)
      const state = yield* tambo.state
      expect(threadOf(state, state.currentThreadId).thread.lastRunCancelled).toBe(true)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a server RUN_ERROR fails the run with its code, and the thread records it", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("so far"), Script.runError({ message: "provider down", code: "LLM_SERVER_ERROR", status: 502 })])
      const result = yield* runAll("fail").pipe(Effect.either)
      expect(Either.isLeft(result)).toBe(true)
      const error = Either.isLeft(result) ? result.left : undefined
      expect(error).toMatchObject({ _tag: "ApiError", reason: "RunError", code: "LLM_SERVER_ERROR", status: 502, retryable: false })
      const tambo = yield* Tambo.Tambo
      const state = yield* tambo.state
      const thread = threadOf(state, state.currentThreadId)
      expect(thread.streaming.error).toMatchObject({ message: "provider down", code: "LLM_SERVER_ERROR", status: 502 })
      expect(thread.streaming.status).toBe("idle")
      expect(thread.thread.lastRunCancelled).toBe(false)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("HTTP 500 is a non-retryable ApiError; 503 is retried before the first event", () =>
    Effect.gen(function* () {
      server().setScript([Script.httpError(500)])
      const failed = yield* runAll("500").pipe(Effect.flip, Effect.map(fields))
      expect(failed).toMatchObject({ _tag: "ApiError", reason: "ServerError", status: 500, retryable: false })

      let calls = 0
      server().setScript(() => (++calls === 1 ? [Script.httpError(503)] : [Script.text("second try")]))
      const events = yield* runAll("503").pipe(
        Effect.provide(tamboLayer(server(), { maxRetries: 2 }))
      )
      expect(calls).toBe(2)
      expect(events.at(-1)!.event.type).toBe("RUN_FINISHED")
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a wrong API key is a Forbidden ApiError (403)", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("never")])
      const error = yield* runAll("hi").pipe(
        Effect.provide(tamboLayer(server(), { apiKey: "wrong-key" })),
        Effect.flip,
        Effect.map(fields)
      )
      expect(error).toMatchObject({ _tag: "ApiError", reason: "Forbidden", status: 403 })
    }))

  it.live("a 401 is an Unauthorized ApiError", () =>
    Effect.gen(function* () {
      server().setScript([Script.httpError(401, { statusCode: 401, message: "Unauthorized" })])
      const error = yield* runAll("hi").pipe(Effect.flip, Effect.map(fields))
      expect(error).toMatchObject({ _tag: "ApiError", reason: "Unauthorized", status: 401, message: "Unauthorized" })
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a second run on a busy thread is a RunConflictError, in the client and on the server", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("first")])
      const first = yield* runAll("first")
      const threadId = first.at(-1)!.threadId
      server().setScript([Script.text("slow"), Script.hang()])
      const tambo = yield* Tambo.Tambo
      const running = yield* Effect.fork(Stream.runDrain(tambo.run("busy", { threadId })))
      yield* until(() => server().threads.get(threadId)?.runStatus === "streaming")
      const local = yield* runAll("again", { threadId }).pipe(Effect.flip, Effect.map(fields))
      expect(local).toMatchObject({ _tag: "RunConflictError", reason: "ActiveInClient", threadId })
      // Another client on the same thread meets the server's 409.
      const remote = yield* runAll("again", { threadId }).pipe(
        Effect.provide(tamboLayer(server())),
        Effect.flip,
        Effect.map(fields)
      )
      expect(remote).toMatchObject({ _tag: "RunConflictError", reason: "ActiveOnServer", status: 409 })
      yield* Fiber.interrupt(running)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a malformed frame is a DecodeError carrying the frame", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("ok"), Script.frame("data: {not json\n\n")])
      const error = yield* runAll("bad").pipe(Effect.flip, Effect.map(fields))
      expect(error).toMatchObject({ _tag: "DecodeError", reason: "InvalidJson", frame: "{not json" })
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("an event of an unknown type is kept and ignored", () =>
    Effect.gen(function* () {
      server().setScript([Script.event({ type: "SOMETHING_NEW", payload: 1 }), Script.text("fine")])
      const events = yield* runAll("new")
      expect(events.some((e) => e.event.type === "UNKNOWN" && e.event.eventType === "SOMETHING_NEW")).toBe(true)
      expect(events.at(-1)!.event.type).toBe("RUN_FINISHED")
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a connection dropped mid-stream is a TransportError, and the thread records it", () =>
    Effect.gen(function* () {
      server().setScript([Script.text(["a", "b", "c", "d"]), Script.dropAfter(3)])
      const error = yield* runAll("drop").pipe(Effect.flip, Effect.map(fields))
      expect(error).toMatchObject({ _tag: "TransportError", reason: "Disconnected" })
      const tambo = yield* Tambo.Tambo
      const state = yield* tambo.state
      const thread = threadOf(state, state.currentThreadId)
      expect(thread.streaming.status).toBe("idle")
      expect(thread.streaming.error?.message).toBeDefined()
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a throwing, an invalid-arguments and a hanging tool become error results; the run goes on", () =>
    Effect.gen(function* () {
      const throwing: Tool.TamboTool = {
        name: "explode",
        description: "throws",
        inputSchema: { type: "object", properties: {} },
        tool: () => {
          throw new Error("boom")
        }
      }
      const hanging = Tool.make({
        name: "hang",
        description: "never returns",
        input: Schema.Struct({}),
        execute: () => Effect.never
      })
      server().setScript((request) =>
        request.toolResults.length === 0
          ? [
            Script.toolCall("explode", {}),
            Script.toolCall("get_weather", { town: 3 }),
            Script.toolCall("hang", {})
          ]
          : [Script.text(request.toolResults.map((r) => `${r.isError}:${r.text}`).join(" | "))]
      )
      const events = yield* runAll("tools", { toolTimeout: "200 millis" }).pipe(
        Effect.provide(tamboLayer(server(), { tools: [weather, throwing, hanging] }))
      )
      const results = server().requests.filter((r) => r.path.endsWith("/runs")).at(-1)!.body as {
        message: { content: Array<{ isError?: boolean; content: Array<{ text: string }> }> }
      }
      expect(results.message.content.map((c) => c.isError)).toEqual([true, true, true])
      const texts = results.message.content.map((c) => c.content[0]!.text)
      expect(texts[0]).toContain("boom")
      expect(texts[1]).toMatch(/city|town/)
      expect(texts[2]).toMatch(/within 200ms/)
      expect(events.at(-1)!.event.type).toBe("RUN_FINISHED")
    }))

  it.live("a hostile JSON Patch path is refused and Object.prototype stays clean", () =>
    Effect.gen(function* () {
      server().setScript([
        Script.component("Card", [{ title: "x" }], {
          operations: [
            [{ op: "add", path: "/__proto__/polluted", value: true }],
            [{ op: "add", path: "/constructor/prototype/polluted", value: true }],
            [{ op: "add", path: "/title", value: "safe" }]
          ]
        })
      ])
      const events = yield* runAll("attack")
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      expect(Object.prototype).not.toHaveProperty("polluted")
      const tambo = yield* Tambo.Tambo
      const state = yield* tambo.state
      const thread = threadOf(state, events.at(-1)!.threadId)
      const component = thread.thread.messages.at(-1)!.content.find((c) => c.type === "component")
      expect(component).toMatchObject({ props: { title: "safe" } })
      expect(thread.anomalies.length).toBeGreaterThanOrEqual(2)
      // What the stream did: the script stores other props than its operations stream.
    }).pipe(Effect.provide(tamboLayer(server(), { reconcileAfterRun: false }))))

  it.live("cancelRun cancels a run that is creating its thread", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("slow"), Script.hang()])
      const tambo = yield* Tambo.Tambo
      const fiber = yield* Effect.fork(Stream.runDrain(tambo.run("new thread")))
      yield* until(() => {
        const state = tambo.store.getSnapshot()
        return state.currentThreadId !== "placeholder" && state.threadMap[state.currentThreadId]?.streaming.status === "streaming"
      })
      yield* tambo.cancelRun()
      const error = yield* Fiber.join(fiber).pipe(Effect.flip, Effect.map(fields))
      expect(error).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
      expect(server().cancels).toHaveLength(1)
      const state = yield* tambo.state
      expect(threadOf(state, state.currentThreadId).thread.lastRunCancelled).toBe(true)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("cancelRun before the run's request is sent: the request never leaves, and the thread is as the server has it", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("first")])
      const first = yield* runAll("one")
      const threadId = first.at(-1)!.threadId
      const tambo = yield* Tambo.Tambo
      const entered = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(Stream.runDrain(tambo.run("two", {
        threadId,
        beforeRun: () => Effect.zipRight(Deferred.succeed(entered, undefined), Deferred.await(release))
      })))
      yield* Deferred.await(entered)
      yield* tambo.cancelRun(threadId)
      yield* Deferred.succeed(release, undefined)
      const error = yield* Fiber.join(fiber).pipe(Effect.flip, Effect.map(fields))
      expect(error).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient", threadId })
      expect(server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs"))).toHaveLength(1)
      // The server never heard of the run: the store drops its message and cancels nothing.
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      const thread = threadOf(yield* tambo.state, threadId)
      expect(thread.thread.messages.map((m) => m.role)).toEqual(["user", "assistant"])
      expect(thread.thread.lastRunCancelled).toBe(false)
      expect(thread.streaming.status).toBe("idle")
      expect(thread.streaming.error).toBeUndefined()
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("cancelRun while a tool of the run is running: the tool is interrupted, nothing more is sent, the thread is as the server has it", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const waiting = Tool.make({
        name: "wait",
        description: "waits until interrupted",
        input: Schema.Struct({}),
        execute: () =>
          Effect.zipRight(Deferred.succeed(started, undefined), Effect.never).pipe(
            Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
          )
      })
      server().setScript([Script.toolCall("wait", {})])
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const fiber = yield* Effect.fork(Stream.runDrain(tambo.run("wait for it")))
        yield* Deferred.await(started)
        const threadId = (yield* tambo.state).currentThreadId
        yield* tambo.cancelRun(threadId)
        const error = yield* Fiber.join(fiber).pipe(Effect.flip, Effect.map(fields))
        expect(error).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient", threadId })
        yield* Deferred.await(interrupted).pipe(Effect.timeout("5 seconds"))
        // The paused run had ended on the server: no DELETE, and no tool results sent.
        expect(server().cancels).toHaveLength(0)
        expect(server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs"))).toHaveLength(1)
        // The server's run had ended (paused for the tool): it cancelled nothing, and still waits
        // for the call's result, as the store shows.
        yield* expectStoreEqualsServer(tambo, server(), threadId)
        const thread = threadOf(yield* tambo.state, threadId)
        expect(thread.thread.lastRunCancelled).toBe(false)
        expect(thread.pendingToolCalls.map((call) => call.toolName)).toEqual(["wait"])
        expect(thread.streaming.status).toBe("idle")
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [waiting] })))
    }))

  it.live("thread calls carry the userKey", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("hello")])
      const events = yield* runAll("hi")
      const tambo = yield* Tambo.Tambo
      const list = yield* tambo.listThreads()
      expect(list.threads.map((t) => t.id)).toContain(events.at(-1)!.threadId)
      const fetched = yield* tambo.fetchThread(events.at(-1)!.threadId)
      expect(fetched.messages).toHaveLength(2)
      expect(server().requests.filter((r) => r.method === "GET").every((r) => r.query.userKey === "user-1")).toBe(true)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("concurrent runs that each create a thread keep their messages apart", () =>
    Effect.gen(function* () {
      const bothStarted = together(2)
      server().setScript((request) => [Script.hold(bothStarted()), Script.text(`answer to ${request.text}`)])
      const tambo = yield* Tambo.Tambo
      const [a, b] = yield* Effect.all(
        [runAll("alpha", { threadId: "placeholder" }), runAll("beta", { threadId: "placeholder" })],
        { concurrency: 2 }
      )
      const threadA = a.at(-1)!.threadId
      const threadB = b.at(-1)!.threadId
      expect(threadA).not.toBe(threadB)
      const state = yield* tambo.state
      for (const [threadId, word] of [[threadA, "alpha"], [threadB, "beta"]] as const) {
        const messages = threadOf(state, threadId).thread.messages
        expect(shape(messages)).toEqual([
          { role: "user", content: [{ type: "text", text: word }] },
          { role: "assistant", content: [{ type: "text", text: `answer to ${word}` }] }
        ])
        yield* expectSameAsServer(threadId)
      }
      expect(Object.keys(state.threadMap).filter((id) => id.startsWith("local:"))).toEqual([])
    }).pipe(Effect.provide(tamboLayer(server()))))

  // A store nobody reads writes a run's first chunk at once; one read after every write (as a
  // UI does), or one the app owns, has it wait for the batch it shares with concurrent runs.
  const concurrentNewThreads = Effect.gen(function* () {
    const allStarted = together(3)
    server().setScript((request) => [Script.hold(allStarted()), Script.text(["answer ", "to ", request.text])])
    const runs = yield* Effect.all(
      ["alpha", "beta", "gamma"].map((word) => runAll(word, { threadId: "placeholder" })),
      { concurrency: "unbounded" }
    )
    const state = yield* (yield* Tambo.Tambo).state
    for (const [i, word] of ["alpha", "beta", "gamma"].entries()) {
      const last = runs[i]!.at(-1)!
      expect(shape(last.snapshot.messages)).toEqual([
        { role: "user", content: [{ type: "text", text: word }] },
        { role: "assistant", content: [{ type: "text", text: `answer to ${word}` }] }
      ])
      // Once the run ended, the store's thread is the server's merged in (ids, timestamps): the
      // blocks that did not change keep their identity.
      expect(threadOf(state, last.threadId).thread.messages[1]!.content[0]).toBe(last.snapshot.messages[1]!.content[0])
      yield* expectSameAsServer(last.threadId)
    }
  })

  it.live("concurrent new-thread runs on a store read after every write end as the server's threads", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const seen: Array<readonly [ClientState.ClientState, ReadonlyArray<string>]> = []
      const unsubscribe = tambo.store.subscribe(() => {
        const state = tambo.store.getSnapshot()
        seen.push([state, Object.keys(state.threadMap)])
      })
      yield* concurrentNewThreads
      unsubscribe()
      expect(seen.length).toBeGreaterThan(0)
      // What the listener was handed was never changed after.
      for (const [state, keys] of seen) expect(Object.keys(state.threadMap)).toEqual(keys)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("concurrent new-thread runs on an app's own store end as the server's threads", () => {
    const store = externalStore()
    return Effect.gen(function* () {
      yield* concurrentNewThreads
      expect(Object.keys(store.getState().threadMap)).toHaveLength(4)
    }).pipe(Effect.provide(tamboLayer(server(), { store })))
  })

  it.live("a new-thread run gives the placeholder back however it ends: the next one records there again", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      // Only a run recorded in the placeholder makes its new thread the current one.
      const recordsInPlaceholder = (text: string) =>
        Effect.gen(function* () {
          yield* tambo.startNewThread
          server().setScript([Script.text(text)])
          const events = yield* runAll(text, { threadId: "placeholder" })
          expect((yield* tambo.state).currentThreadId).toBe(events.at(-1)!.threadId)
        })
      // Refused before any event.
      server().setScript([Script.httpError(400)])
      yield* Effect.flip(runAll("refused", { threadId: "placeholder" }))
      yield* recordsInPlaceholder("after a refusal")
      // Stopped early while streaming.
      yield* tambo.startNewThread
      server().setScript([Script.text("partial"), Script.hang()])
      yield* tambo.run("stopped", { threadId: "placeholder" }).pipe(Stream.take(2), Stream.runDrain)
      yield* recordsInPlaceholder("after an early stop")
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("startNewThread before a new thread's run recorded its message: the run records in a thread of its own, the new conversation stays empty", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      server().setScript((request) => [Script.text(`re: ${request.text}`)])
      const entered = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const first = yield* Effect.fork(runAll("first", {
        threadId: "placeholder",
        beforeRun: () => Effect.zipRight(Deferred.succeed(entered, undefined), Deferred.await(release))
      }))
      // The run holds the placeholder and has recorded nothing yet.
      yield* Deferred.await(entered)
      yield* tambo.startNewThread
      yield* Deferred.succeed(release, undefined)
      const threadId = (yield* Fiber.join(first)).at(-1)!.threadId
      const state = yield* tambo.state
      expect(state.currentThreadId).toBe("placeholder")
      expect(threadOf(state, "placeholder").thread.messages).toEqual([])
      expect(shape(threadOf(state, threadId).thread.messages)).toEqual([
        { role: "user", content: [{ type: "text", text: "first" }] },
        { role: "assistant", content: [{ type: "text", text: "re: first" }] }
      ])
      yield* expectSameAsServer(threadId)
      expect(Object.keys(state.threadMap).filter((id) => id.startsWith("local:"))).toEqual([])
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("cancelRun on a new conversation cancels its own run, not the one that left the placeholder before the server named its thread", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      let open!: () => void
      const opened = new Promise<void>((resolve) => (open = resolve))
      const received = new Set<string>()
      server().setScript(Script.beforeResponse(async (request) => {
        received.add(request.text)
        await opened
        // The second run goes on until cancelled: one the server ended first would not be.
        return request.text === "second" ? [Script.text(`re: ${request.text}`), Script.hang()] : [Script.text(`re: ${request.text}`)]
      }))
      const receivedBy = (text: string) =>
        Effect.repeat(Effect.sync(() => received.has(text)), { until: (has) => has, schedule: Schedule.spaced("5 millis") })
      const first = yield* Effect.fork(runAll("first", { threadId: "placeholder" }))
      yield* receivedBy("first")
      yield* tambo.startNewThread
      const second = yield* Effect.fork(runAll("second"))
      yield* receivedBy("second")
      // The placeholder is the second run's: cancelRun (of the current thread) finds that one.
      const cancel = yield* Effect.fork(tambo.cancelRun())
      open()
      yield* Fiber.join(cancel)
      const [firstEnd, secondEnd] = [yield* Fiber.await(first), yield* Fiber.await(second)]
      expect(Exit.isSuccess(firstEnd)).toBe(true)
      expect(Exit.isFailure(secondEnd) ? fields(Cause.squash(secondEnd.cause) as Error) : "succeeded")
        .toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
      const threadId = (yield* Fiber.join(first)).at(-1)!.threadId
      expect(shape(threadOf(yield* tambo.state, threadId).thread.messages)).toEqual([
        { role: "user", content: [{ type: "text", text: "first" }] },
        { role: "assistant", content: [{ type: "text", text: "re: first" }] }
      ])
      yield* expectSameAsServer(threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a continuation retried after a 503 does not run the tool twice", () =>
    Effect.gen(function* () {
      let executions = 0
      const counted = Tool.make({
        name: "count",
        description: "counts its calls",
        input: Schema.Struct({}),
        execute: () => Effect.sync(() => ++executions)
      })
      let continuations = 0
      server().setScript((request) =>
        request.toolResults.length === 0
          ? [Script.toolCall("count", {})]
          : ++continuations === 1
          ? [Script.httpError(503)]
          : [Script.text(`result ${request.toolResults[0]!.text}`)]
      )
      const events = yield* runAll("count").pipe(
        Effect.provide(tamboLayer(server(), { tools: [counted], maxRetries: 2 }))
      )
      expect(continuations).toBe(2)
      expect(executions).toBe(1)
      const last = events.at(-1)!.snapshot.messages.at(-1)!.content[0]!
      expect(last.type === "text" && last.text).toBe("result 1")
    }))

  it.live("toolChoice and the context of helpers reach every request of the run", () =>
    Effect.gen(function* () {
      server().setScript((request) =>
        request.toolResults.length === 0 ? [Script.toolCall("get_weather", { city: "Paris" })] : [Script.text("done")]
      )
      const tambo = yield* Tambo.Tambo
      yield* tambo.addContextHelper("page", () => Promise.resolve({ path: "/weather" }))
      yield* runAll("weather", { toolChoice: { name: "get_weather" }, additionalContext: { locale: "fr" } })
      const runs = server().requests.filter((r) => r.path.endsWith("/runs"))
      expect(runs).toHaveLength(2)
      for (const request of runs) {
        const body = request.body as { toolChoice?: unknown; message: { additionalContext?: unknown } }
        expect(body.toolChoice).toEqual({ name: "get_weather" })
        expect(body.message.additionalContext).toEqual({ page: { path: "/weather" }, locale: "fr" })
      }
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))
})

describe("a run whose own input cannot be sent as JSON", () => {
  const cycle = (): Record<string, unknown> => {
    const node: Record<string, unknown> = { name: "loop" }
    node.self = node
    return node
  }
  /** Each way the caller's input can hold what JSON cannot carry, as the arguments of `run`. */
  const inputs: ReadonlyArray<readonly [string, () => readonly [string | TamboTransport.InputMessage, Tambo.RunOptions], RegExp]> = [
    ["the message's metadata holds a BigInt", () => [{ role: "user", content: [{ type: "text", text: "hi" }], metadata: { n: 1n } }, {}], /BigInt/],
    ["the message's additionalContext holds a cycle", () => [{ role: "user", content: [{ type: "text", text: "hi" }], additionalContext: { graph: cycle() } }, {}], /circular/i],
    ["the run's additionalContext has a throwing toJSON", () => ["hi", { additionalContext: { when: { toJSON: () => { throw new Error("no date") } } } }], /no date/]
  ]

  /** Nothing recorded or sent, the thread idle and as it was, the next run fine. */
  const expectUntouched = (threadId: string, messagesBefore: number, requestsBefore: number) =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      expect(server().requests.length).toBe(requestsBefore)
      const state = (yield* tambo.state).threadMap[threadId]
      expect(state?.thread.messages.length ?? 0).toBe(messagesBefore)
      expect(state?.streaming.status ?? "idle").toBe("idle")
      const next = yield* runAll("again", { threadId })
      expect(next.at(-1)!.event.type).toBe("RUN_FINISHED")
    })

  it.live.each(inputs)("%s, on a new thread: a ConfigError (InvalidOption), nothing recorded or sent, the placeholder let go", ([, input, why]) =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      server().setScript((request) => [Script.text(`re: ${request.text}`)])
      const [message, options] = input()
      const error = yield* Stream.runDrain(tambo.run(message, options)).pipe(Effect.flip)
      expect(fields(error)).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
      expect(error.message).toMatch(/JSON/)
      expect(error.message).toMatch(why)
      yield* expectUntouched("placeholder", 0, 0)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live.each(inputs)("%s, on a thread: a ConfigError (InvalidOption), nothing recorded or sent, the thread unlocked", ([, input, why]) =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      server().setScript((request) => [Script.text(`re: ${request.text}`)])
      const threadId = (yield* runAll("first")).at(-1)!.threadId
      const requests = server().requests.length
      const [message, options] = input()
      const error = yield* Stream.runDrain(tambo.run(message, { ...options, threadId })).pipe(Effect.flip)
      expect(fields(error)).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
      expect(error.message).toMatch(why)
      yield* expectUntouched(threadId, 2, requests)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("continueRun with an additionalContext that cannot be sent: a ConfigError (InvalidOption), nothing sent, the call still answerable", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      server().setScript([Script.toolCall("get_weather", { city: "Paris" })])
      const events = yield* runAll("weather?", { autoExecuteTools: false })
      const threadId = events.at(-1)!.threadId
      const [call] = yield* tambo.getPendingToolCalls(threadId)
      const requests = server().requests.length
      const error = yield* Stream.runDrain(
        tambo.continueRun(threadId, [{ toolCallId: call!.toolCallId, result: "sunny" }], { additionalContext: { n: 1n } })
      ).pipe(Effect.flip)
      expect(fields(error)).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
      expect(server().requests.length).toBe(requests)
      expect((yield* tambo.getPendingToolCalls(threadId)).map((c) => c.toolCallId)).toEqual([call!.toolCallId])
      server().setScript([Script.text("done")])
      const after = yield* Stream.runCollect(tambo.continueRun(threadId, [{ toolCallId: call!.toolCallId, result: "sunny" }]))
      expect(Array.from(after).at(-1)!.event.type).toBe("RUN_FINISHED")
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))
})
