import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Script } from "@tambo-effect/testing"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Auth from "../src/Auth.js"
import * as Tambo from "../src/Tambo.js"
import type { TamboError, ToolDefinitionError, ToolError } from "../src/TamboError.js"
import * as Tool from "../src/Tool.js"
import { tamboLayer, useServer, weather } from "./helpers.js"

const server = useServer()

const transfer = Tool.make({
  name: "transfer",
  description: "Moves money",
  input: Schema.Struct({ amount: Schema.Number }),
  needsApproval: () => true,
  execute: ({ amount }) => Effect.succeed(`moved ${amount}`)
})

/** Asks for a tool once, then quotes every result it receives. */
const toolThenQuote = (name: string, args: unknown) => (request: Script.RunRequest) =>
  request.toolResults.length === 0
    ? [Script.toolCall(name, args)]
    : [Script.text(request.toolResults.map((r) => `${r.isError ? "error" : "ok"}: ${r.text}`).join("; "))]

const lastText = (events: ReadonlyArray<Tambo.RunEvent>) => {
  const block = events.at(-1)!.snapshot.messages.at(-1)!.content[0]!
  return block.type === "text" ? block.text : ""
}

const collect = <A, E, R>(stream: Stream.Stream<A, E, R>) =>
  Effect.map(Stream.runCollect(stream), Chunk.toReadonlyArray)

describe("module accessors (Tambo.run, Tambo.getThread, ...) use the Tambo service of the context", () => {
  it("their types require Tambo", () => {
    expectTypeOf(Tambo.run("hi")).toEqualTypeOf<Stream.Stream<Tambo.RunEvent, TamboError, Tambo.Tambo>>()
    expectTypeOf(Tambo.continueRun("t", [])).toEqualTypeOf<Stream.Stream<Tambo.RunEvent, TamboError, Tambo.Tambo>>()
    expectTypeOf(Tambo.authChanges).toEqualTypeOf<Stream.Stream<Auth.AuthState, never, Tambo.Tambo>>()
    expectTypeOf(Tambo.getThread()).toEqualTypeOf<Effect.Effect<Option.Option<import("../src/Types.js").TamboThread>, never, Tambo.Tambo>>()
    expectTypeOf(Tambo.approveToolCall("c")).toEqualTypeOf<Effect.Effect<void, ToolError, Tambo.Tambo>>()
    expectTypeOf(Tambo.registerTool(weather)).toEqualTypeOf<Effect.Effect<void, ToolDefinitionError, Tambo.Tambo>>()
    // @ts-expect-error a run needs the Tambo service: it cannot run without it
    const _unprovided: Effect.Effect<unknown, unknown, never> = Stream.runDrain(Tambo.run("hi"))
  })

  it.live("run, state, getThread, listThreads, fetchThread, switchThread, startNewThread", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("Hello there")])
      const events = yield* collect(Tambo.run("hi"))
      expect(lastText(events)).toBe("Hello there")
      const threadId = events.at(-1)!.threadId
      expect((yield* Tambo.state).currentThreadId).toBe(threadId)
      expect(Option.map(yield* Tambo.getThread(threadId), (t) => t.id)).toEqual(Option.some(threadId))
      expect((yield* Tambo.listThreads()).threads.map((t) => t.id)).toEqual([threadId])
      const other = server().threads.create({ userKey: "user-1", name: "other", messages: [] })
      expect((yield* Tambo.fetchThread(other.id)).id).toBe(other.id)
      yield* Tambo.switchThread(other.id)
      expect((yield* Tambo.state).currentThreadId).toBe(other.id)
      const fresh = yield* Tambo.startNewThread
      expect((yield* Tambo.state).currentThreadId).toBe(fresh)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("updateThreadName, generateThreadName, generateSuggestions, listSuggestions, deleteThread", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("Paris is sunny.")])
      const events = yield* collect(Tambo.run("weather in Paris?"))
      const { threadId, snapshot } = events.at(-1)!
      yield* Tambo.updateThreadName(threadId, "renamed")
      expect(server().threads.get(threadId)!.name).toBe("renamed")
      const generated = yield* Tambo.generateThreadName(threadId)
      expect(generated).toEqual(Option.some(server().threads.get(threadId)!.name))
      const reply = snapshot.messages.at(-1)!
      const suggestions = yield* Tambo.generateSuggestions(threadId, reply.id, { maxSuggestions: 2 })
      expect(suggestions).toHaveLength(2)
      expect((yield* Tambo.listSuggestions(threadId, reply.id)).map((s) => s.id)).toEqual(suggestions.map((s) => s.id))
      yield* Tambo.deleteThread(threadId)
      expect(server().threads.get(threadId)).toBeUndefined()
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("registerTool, registerTools, registerComponent, addContextHelper, removeContextHelper reach the run request", () =>
    Effect.gen(function* () {
      const seen: Array<Script.RunRequest> = []
      server().setScript((request) => {
        seen.push(request)
        return [Script.text("ok")]
      })
      const echo = Tool.make({ name: "echo", description: "Echoes", input: Schema.Struct({ text: Schema.String }), execute: ({ text }) => text })
      yield* Tambo.registerTool(weather)
      yield* Tambo.registerTools([echo])
      yield* Tambo.registerComponent({
        name: "WeatherCard",
        description: "Shows the weather",
        propsSchema: Schema.Struct({ city: Schema.String })
      })
      yield* Tambo.addContextHelper("page", () => ({ path: "/weather" }))
      yield* collect(Tambo.run("first"))
      yield* Tambo.removeContextHelper("page")
      yield* collect(Tambo.run("second"))
      expect(seen[0]!.tools.map((t) => t.name).sort()).toEqual(["echo", "get_weather"])
      expect(seen[0]!.availableComponents.map((c) => c.name)).toEqual(["WeatherCard"])
      expect(seen[0]!.additionalContext).toEqual({ page: { path: "/weather" } })
      expect(seen[1]!.additionalContext?.["page"]).toBeUndefined()
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("getPendingToolCalls and continueRun", () =>
    Effect.gen(function* () {
      server().setScript(toolThenQuote("get_weather", { city: "Oslo" }))
      const paused = yield* collect(Tambo.run("weather?", { autoExecuteTools: false }))
      const threadId = paused.at(-1)!.threadId
      const [pending] = yield* Tambo.getPendingToolCalls(threadId)
      expect(pending).toMatchObject({ toolName: "get_weather", args: { city: "Oslo" } })
      const rest = yield* collect(Tambo.continueRun(threadId, [{ toolCallId: pending!.toolCallId, result: "cold" }]))
      expect(lastText(rest)).toBe("ok: cold")
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] }))))

  it.live("approveToolCall and denyToolCall", () =>
    Effect.gen(function* () {
      const decide = (decision: (toolCallId: string) => Effect.Effect<void, ToolError, Tambo.Tambo>) =>
        Effect.gen(function* () {
          server().setScript(toolThenQuote("transfer", { amount: 500 }))
          const requested = yield* Deferred.make<string>()
          const fiber = yield* Tambo.run("pay").pipe(
            Stream.tap(({ event }) =>
              event.type === "CLIENT_APPROVAL_REQUESTED" ? Deferred.succeed(requested, event.toolCallId) : Effect.void
            ),
            Stream.runCollect,
            Effect.fork
          )
          yield* decision(yield* Deferred.await(requested))
          return lastText(Chunk.toReadonlyArray(yield* Fiber.join(fiber)))
        })
      expect(yield* decide((id) => Tambo.approveToolCall(id))).toBe("ok: moved 500")
      expect(yield* decide((id) => Tambo.denyToolCall(id, "too much"))).toMatch(/^error: .*too much/)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [transfer] }))))

  it.live("cancelRun", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("Partial"), Script.hang()])
      const started = yield* Deferred.make<string>()
      const running = yield* Tambo.run("wait forever").pipe(
        Stream.tap(({ event }) => event.type === "RUN_STARTED" ? Deferred.succeed(started, event.threadId) : Effect.void),
        Stream.runDrain,
        Effect.fork
      )
      yield* Tambo.cancelRun(yield* Deferred.await(started))
      const exit = yield* Fiber.await(running)
      expect(Exit.isFailure(exit) && Option.map(Cause.failureOption(exit.cause), (e) => e._tag)).toEqual(
        Option.some("RunCancelledError")
      )
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("authState and authChanges", () =>
    Effect.gen(function* () {
      expect(yield* Tambo.authState).toMatchObject({ status: "identified" })
      const [first] = yield* collect(Stream.take(Tambo.authChanges, 1))
      expect(first).toMatchObject({ status: "identified" })
    }).pipe(Effect.provide(tamboLayer(server()))))
})
