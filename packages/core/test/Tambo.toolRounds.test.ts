import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { z } from "zod"
import * as Tambo from "../src/Tambo.js"
import * as Tool from "../src/Tool.js"
import type * as Types from "../src/Types.js"
import { runAll, serverShape, shape, tamboLayer, threadOf, useServer } from "./helpers.js"

// Tool rounds against the testing server when the provider reuses tool call ids, as the many
// OpenAI-compatible ones that count do (`call_0` in every response).
const server = useServer()

/** A weather tool that records the city of each call it runs. */
const recordingWeather = () => {
  const cities: Array<string> = []
  const tool = Tool.make({
    name: "get_weather",
    description: "Current weather in a city",
    input: Schema.Struct({ city: Schema.String }),
    execute: ({ city }) => Effect.sync(() => cities.push(city)).pipe(Effect.as({ city, temperature: 21 }))
  })
  return { cities, tool }
}

const toolResultsOf = (messages: ReadonlyArray<Types.TamboThreadMessage>) =>
  messages.flatMap((m) => m.content.filter((c) => c.type === "tool_result"))

const toolUsesOf = (messages: ReadonlyArray<Types.TamboThreadMessage>) =>
  messages.flatMap((m) => m.content.flatMap((c) => (c.type === "tool_use" ? [{ id: c.id, input: c.input }] : [])))

const lastText = (messages: ReadonlyArray<Types.TamboThreadMessage>) => {
  const block = messages.at(-1)?.content[0]
  return block?.type === "text" ? block.text : undefined
}

/** The store's thread equals the server's. */
const expectSameAsServer = (threadId: string) =>
  Effect.gen(function* () {
    const state = yield* (yield* Tambo.Tambo).state
    expect(shape(threadOf(state, threadId).thread.messages)).toEqual(serverShape(server(), threadId))
  })

/** Two rounds, both calling `call_0` (Paris, then Lyon), then a reply quoting the last result. */
const twoRoundsOfCall0: Script.ScriptFn = (request) =>
  request.toolResults.length === 0
    ? [Script.toolCall("get_weather", { city: "Paris" }, { id: "call_0" })]
    : request.toolResults[0]!.text.includes("Paris")
    ? [Script.toolCall("get_weather", { city: "Lyon" }, { id: "call_0" })]
    : [Script.text(`It is ${request.toolResults[0]!.text}`)]

describe("Tambo.run tool rounds", () => {
  it.live("runs of two threads that both call call_0 each run the tool with their own arguments and get their own result", () => {
    const { cities, tool } = recordingWeather()
    return Effect.gen(function* () {
      server().setScript((request) =>
        request.toolResults.length === 0
          ? [Script.toolCall("get_weather", { city: request.text }, { id: "call_0" })]
          : [Script.text(`It is ${request.toolResults[0]!.text}`)]
      )
      const paris = yield* runAll("Paris", { threadId: "placeholder" })
      const lima = yield* runAll("Lima", { threadId: "placeholder" })
      expect(cities).toEqual(["Paris", "Lima"])
      for (const [events, city] of [[paris, "Paris"], [lima, "Lima"]] as const) {
        const { snapshot, threadId } = events.at(-1)!
        const results = toolResultsOf(snapshot.messages)
        expect(results).toHaveLength(1)
        expect(JSON.stringify(results[0])).toContain(city)
        expect(lastText(snapshot.messages)).toContain(city)
        yield* expectSameAsServer(threadId)
      }
      expect(paris.at(-1)!.threadId).not.toBe(lima.at(-1)!.threadId)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [tool] })))
  })

  it.live("two rounds of one run that both call call_0 both run the tool", () => {
    const { cities, tool } = recordingWeather()
    return Effect.gen(function* () {
      server().setScript(twoRoundsOfCall0)
      const events = yield* runAll("weather?")
      expect(cities).toEqual(["Paris", "Lyon"])
      const { snapshot, threadId } = events.at(-1)!
      const results = toolResultsOf(snapshot.messages).map((c) => JSON.stringify(c))
      expect(results).toHaveLength(2)
      expect(results[0]).toContain("Paris")
      expect(results[1]).toContain("Lyon")
      expect(lastText(snapshot.messages)).toContain("Lyon")
      // What the server stored: each round's call answered with its own result.
      const stored = toolResultsOf(server().threads.get(threadId)!.messages as ReadonlyArray<Types.TamboThreadMessage>)
      expect(stored.map((c) => JSON.stringify(c))).toEqual(results)
      // The store holds each round's call, with its own input, as the server's thread does.
      const state = yield* (yield* Tambo.Tambo).state
      expect(toolUsesOf(threadOf(state, threadId).thread.messages)).toEqual([
        { id: "call_0", input: { city: "Paris" } },
        { id: "call_0", input: { city: "Lyon" } }
      ])
      expect(threadOf(state, threadId).anomalies).toEqual([])
      yield* expectSameAsServer(threadId)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [tool] })))
  })

  it.live("a paused second round that reuses call_0 is pending with its own arguments, also for a fresh client", () => {
    const { tool } = recordingWeather()
    const layer = () => tamboLayer(server(), { tools: [tool] })
    return Effect.gen(function* () {
      server().setScript(twoRoundsOfCall0)
      const threadId = yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const first = yield* runAll("weather?", { autoExecuteTools: false })
        const threadId = first.at(-1)!.threadId
        yield* Stream.runDrain(
          tambo.continueRun(threadId, [{ toolCallId: "call_0", result: { city: "Paris", temperature: 21 } }], {
            autoExecuteTools: false
          })
        )
        expect(yield* tambo.getPendingToolCalls(threadId)).toMatchObject([{ toolCallId: "call_0", args: { city: "Lyon" } }])
        return threadId
      }).pipe(Effect.provide(layer()))
      // A fresh client reads the thread from the server.
      const pending = yield* Effect.flatMap(Tambo.Tambo, (tambo) => tambo.getPendingToolCalls(threadId)).pipe(
        Effect.provide(layer())
      )
      expect(pending).toMatchObject([{ toolCallId: "call_0", args: { city: "Lyon" } }])
    })
  })

  for (const reconcileAfterRun of [true, false]) {
    it.live(`arguments in the API's strict mode: the tool gets them, and the store shows them, as the server stores them (read at the end: ${reconcileAfterRun})`, () => {
      const received: Array<unknown> = []
      const search: Tool.TamboTool = {
        name: "search",
        description: "Searches",
        inputSchema: z.object({
          query: z.string(),
          limit: z.number().int().default(10),
          filter: z.object({ from: z.string().optional(), to: z.string().optional() }).optional(),
          tags: z.array(z.string()).optional()
        }),
        tool: (args: unknown) => {
          received.push(args)
          return "found"
        }
      }
      return Effect.gen(function* () {
        let sent: unknown
        server().setScript((request) => {
          if (request.toolResults.length > 0) {
            return [Script.text(`${request.toolResults[0]!.isError}: ${request.toolResults[0]!.text}`)]
          }
          const declared = request.tools.find((tool) => tool.name === "search")!.inputSchema
          sent = Script.strictArgs(declared, { query: "tambo", filter: { from: "2024" } })
          return [Script.toolCall("search", sent, { chunkSize: 7 })]
        })
        const events = yield* runAll("search")
        // What the model sent: every parameter, null where it meant none.
        expect(sent).toEqual({ query: "tambo", limit: null, filter: { from: "2024", to: null }, tags: null })
        const stored = { query: "tambo", limit: 10, filter: { from: "2024" } }
        expect(received).toEqual([stored])
        // While the arguments stream, and once complete, the store never shows the nulls.
        for (const { snapshot } of events) {
          for (const use of toolUsesOf(snapshot.messages)) {
            expect(Object.values(use.input as Record<string, unknown>)).not.toContain(null)
            expect(JSON.stringify(use.input)).not.toContain("null")
          }
        }
        const ended = events.find((e) => e.event.type === "TOOL_CALL_END")!
        expect(toolUsesOf(ended.snapshot.messages).map((use) => use.input)).toEqual([stored])
        expect(lastText(events.at(-1)!.snapshot.messages)).toBe("false: found")
        const { snapshot, threadId } = events.at(-1)!
        // Without the read, the streamed store already holds the calls as the server stored them.
        const onServer = serverShape(server(), threadId).flatMap((m) => m.content)
          .filter((c): c is { type: "tool_use"; id: string; input: unknown } => (c as { type: string }).type === "tool_use")
        expect(toolUsesOf(snapshot.messages)).toEqual(onServer.map(({ id, input }) => ({ id, input })))
        if (reconcileAfterRun) yield* expectSameAsServer(threadId)
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [search], reconcileAfterRun })))
    })
  }

  it.live("maxCalls counts across the rounds of one run, and the next run counts again", () => {
    let executions = 0
    const limited = Tool.make({
      name: "limited",
      description: "may be called once per run",
      input: Schema.Struct({}),
      maxCalls: 1,
      execute: () => Effect.sync(() => ++executions)
    })
    return Effect.gen(function* () {
      // Calls the tool again as long as it answers; ends with the refusal.
      server().setScript((request) =>
        request.toolResults.length === 0 || !request.toolResults[0]!.isError
          ? [Script.toolCall("limited", {})]
          : [Script.text(`refused: ${request.toolResults[0]!.text}`)]
      )
      const refusal = "refused: Tool \"limited\" may be called at most 1 time(s) in this run. It was not run."
      const first = yield* runAll("call it")
      expect(executions).toBe(1)
      expect(lastText(first.at(-1)!.snapshot.messages)).toBe(refusal)
      const second = yield* runAll("call it again")
      expect(executions).toBe(2)
      expect(lastText(second.at(-1)!.snapshot.messages)).toBe(refusal)
      const starts = second.filter((e) => e.event.type === "RUN_STARTED")
      expect(starts).toHaveLength(3)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [limited] })))
  })

  it.live("a tool whose transformToContent gives no content answers its call with the text \"\", which the server takes, and the model reads", () => {
    const empty = (parts: ReadonlyArray<Tool.ContentPartLike>): Tool.TamboTool => ({
      name: "nothing",
      description: "answers with nothing",
      inputSchema: { type: "object", properties: {} },
      tool: () => "ignored",
      transformToContent: () => parts
    })
    return Effect.forEach([[], [{ type: "text", text: "" }]] as const, (parts) =>
      Effect.gen(function* () {
        server().setScript((request) =>
          request.toolResults.length === 0
            ? [Script.toolCall("nothing", {}, { id: "call_0" })]
            : [Script.text(`got ${request.toolResults[0]!.text}`)]
        )
        const events = yield* runAll("go")
        const { snapshot, threadId } = events.at(-1)!
        const answer = { type: "tool_result", toolUseId: "call_0", content: [{ type: "text", text: "\"\"" }] }
        expect(toolResultsOf(snapshot.messages)).toMatchObject([answer])
        expect(toolResultsOf(server().threads.get(threadId)!.messages as ReadonlyArray<Types.TamboThreadMessage>)).toMatchObject([answer])
        expect(lastText(snapshot.messages)).toBe("got \"\"")
        yield* expectSameAsServer(threadId)
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [empty(parts)] }))), { discard: true })
  })
})
