// Arguments reach a tool as plain own properties only: a "__proto__" key never sets a prototype.
import { describe, expect, it } from "@effect/vitest"
import { Script } from "@tambo-effect/testing"
import { Effect, Layer, Schema } from "effect"
import { z } from "zod"
import * as Tool from "../src/Tool.js"
import * as Executor from "../src/ToolExecutor.js"
import * as Registry from "../src/ToolRegistry.js"
import { runAll, tamboLayer, useServer } from "./helpers.js"

const hostile = "{\"city\":\"Oslo\",\"__proto__\":{\"approved\":true}}"
const nested = "{\"city\":\"Oslo\",\"options\":[{\"__proto__\":{\"approved\":true}}]}"

/** What each tool was called with. */
const seen: Array<unknown> = []
const record = (args: unknown) => {
  seen.push(args)
  return "ok"
}

const tools: ReadonlyArray<Tool.Definition> = [
  Tool.make({
    name: "effect_tool",
    description: "d",
    input: Schema.Struct({ city: Schema.String, options: Schema.optional(Schema.Array(Schema.Object)) }),
    execute: (args) => Effect.sync(() => record(args))
  }),
  {
    name: "zod_tool",
    description: "d",
    tool: record,
    inputSchema: z.object({ city: z.string(), options: z.array(z.object({})).optional() }).strict()
  },
  {
    name: "json_tool",
    description: "d",
    tool: record,
    inputSchema: {
      type: "object",
      properties: { city: { type: "string" }, options: { type: "array" } },
      required: ["city"],
      additionalProperties: false
    }
  }
]

const setup = Effect.gen(function*() {
  const registry = yield* Registry.make
  yield* Effect.orDie(registry.registerMany(tools))
  return yield* Executor.makeWith().pipe(Effect.provideService(Registry.ToolRegistry, registry))
})

describe("__proto__ in tool arguments", () => {
  it.effect.each(["effect_tool", "zod_tool", "json_tool"])("%s: an own __proto__ key, at any depth, is an invalid-arguments result; the tool is not called", (name) =>
    Effect.gen(function*() {
      seen.length = 0
      const executor = yield* setup
      const results = yield* executor.execute([
        { toolCallId: "c1", toolName: name, args: hostile },
        { toolCallId: "c2", toolName: name, args: nested },
        // Already parsed (JSON.parse makes __proto__ an own property).
        { toolCallId: "c3", toolName: name, args: JSON.parse(hostile) }
      ])
      expect(results.map((r) => r.isError)).toEqual([true, true, true])
      for (const result of results) {
        const part = result.content[0]
        expect(part?.type === "text" && part.text).toMatch(new RegExp(`^Invalid arguments for tool "${name}": .*"__proto__"`))
      }
      expect(seen).toEqual([])
      // A clean call still gets plain objects.
      const [ok] = yield* executor.execute([{ toolCallId: "c4", toolName: name, args: "{\"city\":\"Oslo\",\"options\":[{}]}" }])
      expect(ok?.isError).toBeUndefined()
      expect(seen).toHaveLength(1)
      const args = seen[0] as { readonly approved?: unknown; readonly options: ReadonlyArray<object> }
      expect(Object.getPrototypeOf(args)).toBe(Object.prototype)
      expect(Object.getPrototypeOf(args.options[0])).toBe(Object.prototype)
      expect(args.approved).toBeUndefined()
    }))
})

describe("__proto__ in tool arguments, through a run", () => {
  const server = useServer()
  it.live("the model gets the error result, the tool never runs", () =>
    Effect.gen(function*() {
      seen.length = 0
      server().setScript((request) =>
        request.toolResults.length === 0
          ? [Script.toolCall("json_tool", hostile)]
          : [Script.text(request.toolResults.map((r) => `${r.isError ? "error" : "ok"}: ${r.text}`).join("; "))]
      )
      const events = yield* runAll("hi")
      expect(seen).toEqual([])
      const continued = server().requests.filter((r) => r.method === "POST").at(-1)
      expect(continued?.rawBody).toContain("__proto__")
      expect(JSON.stringify(events.at(-1))).toBeDefined()
      const toolResult = (continued?.body as { message: { content: Array<{ type: string; isError?: boolean }> } }).message.content[0]
      expect(toolResult).toMatchObject({ type: "tool_result", isError: true })
    }).pipe(Effect.provide(Layer.suspend(() => tamboLayer(server(), { tools: [tools[2]!] })))))
})
