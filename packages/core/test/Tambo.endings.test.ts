import { describe, expect, it } from "@effect/vitest"
import { Script } from "@tambo-effect/testing"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Tambo from "../src/Tambo.js"
import * as Tool from "../src/Tool.js"
import type * as Types from "../src/Types.js"
import { runAll, serverShape, shape, tamboLayer, threadOf, useServer } from "./helpers.js"

const server = useServer()

const runPosts = (threadId?: string) =>
  server().requests.filter((r) =>
    r.method === "POST" && (threadId === undefined ? r.path.endsWith("/runs") : r.path === `/v1/threads/${threadId}/runs`)
  )

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

const lastText = (thread: Types.TamboThread) => {
  const block = thread.messages.at(-1)?.content.at(-1)
  return block?.type === "text" ? block.text : undefined
}

describe("a tool round that ends early leaves its thread usable", () => {
  it.live("cancelled while its tools run: the calls stay pending, continueRun answers them", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      server().setScript(waitThenQuote)
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const fiber = yield* Effect.fork(Stream.runDrain(tambo.run("go")))
        yield* Deferred.await(started)
        const threadId = (yield* tambo.state).currentThreadId
        yield* tambo.cancelRun(threadId)
        yield* Fiber.join(fiber).pipe(Effect.flip)
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
        const fiber = yield* Effect.fork(Stream.runDrain(tambo.run("go")))
        yield* Deferred.await(started)
        const threadId = (yield* tambo.state).currentThreadId
        yield* tambo.cancelRun(threadId)
        yield* Fiber.join(fiber).pipe(Effect.flip)
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
      const weather = Tool.make({
        name: "get_weather",
        description: "weather",
        input: Schema.Struct({ city: Schema.String }),
        execute: () => Effect.succeed("sunny")
      })
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const error = yield* runAll("loop", { maxSteps: 1 }).pipe(Effect.flip)
        expect(error._tag).toBe("MaxStepsExceededError")
        const threadId = (yield* tambo.state).currentThreadId
        const pending = yield* tambo.getPendingToolCalls(threadId)
        expect(pending).toHaveLength(1)
        expect(server().threads.get(threadId)!.pendingToolCallIds).toEqual([pending[0]!.toolCallId])
        const events = yield* runAll("next", { threadId })
        expect(lastText(events.at(-1)!.snapshot)).toBe("fine")
        expect(shape(threadOf(yield* tambo.state, threadId).thread.messages)).toEqual(serverShape(server(), threadId))
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] })))
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
      const weather = Tool.make({
        name: "get_weather",
        description: "weather",
        input: Schema.Struct({ city: Schema.String }),
        execute: () => Effect.succeed("sunny")
      })
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const error = yield* runAll("weather?").pipe(Effect.flip)
        expect(error).toMatchObject({ _tag: "ApiError", status: 500 })
        const threadId = (yield* tambo.state).currentThreadId
        const pending = yield* tambo.getPendingToolCalls(threadId)
        expect(pending.map((p) => p.toolName)).toEqual(["get_weather"])
        expect(server().threads.get(threadId)!.pendingToolCallIds).toEqual([pending[0]!.toolCallId])
        const events = yield* runAll("next", { threadId })
        expect(lastText(events.at(-1)!.snapshot)).toBe("ok: sunny")
        expect(shape(threadOf(yield* tambo.state, threadId).thread.messages)).toEqual(serverShape(server(), threadId))
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] })))
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
