import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schema } from "effect"
import { z } from "zod"
import * as Tool from "../src/Tool.js"
import { ToolRegistry } from "../src/ToolRegistry.js"
import * as Registry from "../src/ToolRegistry.js"

const add = Tool.make({
  name: "add",
  description: "Adds two numbers",
  input: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  execute: ({ a, b }) => a + b
})

const shout: Tool.TamboTool = {
  name: "shout",
  description: "Upper-cases text",
  tool: ({ text }) => String(text).toUpperCase(),
  inputSchema: z.object({ text: z.string() }),
  outputSchema: z.string(),
  maxCalls: 3
}

const echo: Tool.TamboTool = {
  name: "echo",
  description: "Echoes",
  tool: (args) => args,
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
}

describe("ToolRegistry", () => {
  it.effect("registers tools of every kind and builds the tools payload", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      yield* registry.register(add)
      yield* registry.registerMany([shout, echo])
      expect((yield* registry.list).map((tool) => [tool.name, tool.inputSchemaKind])).toEqual([
        ["add", "EffectSchema"],
        ["shout", "StandardSchema"],
        ["echo", "JsonSchema"]
      ])
      expect(yield* registry.toApiTools).toEqual([
        {
          name: "add",
          description: "Adds two numbers",
          inputSchema: {
            $schema: "http://json-schema.org/draft-07/schema#",
            type: "object",
            required: ["a", "b"],
            properties: { a: { type: "number" }, b: { type: "number" } },
            additionalProperties: false
          }
        },
        {
          name: "shout",
          description: "Upper-cases text",
          inputSchema: {
            $schema: "http://json-schema.org/draft-07/schema#",
            type: "object",
            properties: { text: { type: "string" } },
            required: ["text"]
          },
          outputSchema: { $schema: "http://json-schema.org/draft-07/schema#", type: "string" },
          maxCalls: 3
        },
        {
          name: "echo",
          description: "Echoes",
          inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
        }
      ])
      const found = yield* registry.get("shout")
      expect(Option.map(found, (tool) => tool.definition)).toEqual(Option.some(shout))
      expect(yield* registry.get("nope")).toEqual(Option.none())
      expect(Object.keys(yield* registry.toolMap)).toEqual(["add", "shout", "echo"])
    }).pipe(Effect.provide(Registry.layer)))

  it.effect("replaces a tool registered again under the same name, in place", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      yield* registry.registerMany([add, echo])
      yield* registry.register({ ...echo, description: "Echoes, again" })
      expect((yield* registry.list).map((tool) => `${tool.name}: ${tool.description}`)).toEqual([
        "add: Adds two numbers",
        "echo: Echoes, again"
      ])
    }).pipe(Effect.provide(Registry.layer)))

  it.effect("rejects an invalid tool with a typed error and registers nothing of the batch", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const badName = yield* Effect.flip(registry.register({ ...echo, name: "no spaces" }))
      expect(badName).toBeInstanceOf(Tool.ToolDefinitionError)
      expect(badName.reason).toBe("InvalidName")

      const unconvertible = Tool.make({
        name: "when",
        description: "d",
        input: Schema.Struct({ at: Schema.DateFromSelf }),
        execute: () => 1
      })
      const error = yield* Effect.flip(registry.registerMany([add, unconvertible]))
      expect(error).toMatchObject({ reason: "UnconvertibleSchema", definitionName: "when" })
      expect(yield* registry.list).toEqual([])
    }).pipe(Effect.provide(Registry.layer)))

  it.effect("unregisters", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      yield* registry.registerMany([add, echo])
      expect(yield* registry.unregister("add")).toBe(true)
      expect(yield* registry.unregister("add")).toBe(false)
      expect((yield* registry.toApiTools).map((tool) => tool.name)).toEqual(["echo"])
    }).pipe(Effect.provide(Registry.layer)))

  it.effect("registers components and builds the availableComponents payload", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const card: Tool.AvailableComponent = {
        name: "WeatherCard",
        description: "Shows the weather",
        propsSchema: { type: "object", properties: { celsius: { type: "number" } }, required: ["celsius"] }
      }
      const chart: Tool.AvailableComponent = {
        name: "Chart",
        description: "A chart",
        propsSchema: z.object({ points: z.array(z.number()) }),
        stateSchema: Schema.Struct({ zoom: Schema.Number })
      }
      yield* registry.registerComponent(card)
      yield* registry.registerComponents([chart])
      expect(yield* registry.listComponents).toEqual([card, chart])
      expect(yield* registry.toApiComponents).toEqual([
        {
          name: "WeatherCard",
          description: "Shows the weather",
          propsSchema: { type: "object", properties: { celsius: { type: "number" } }, required: ["celsius"] }
        },
        {
          name: "Chart",
          description: "A chart",
          propsSchema: {
            $schema: "http://json-schema.org/draft-07/schema#",
            type: "object",
            properties: { points: { type: "array", items: { type: "number" } } },
            required: ["points"]
          },
          stateSchema: {
            $schema: "http://json-schema.org/draft-07/schema#",
            type: "object",
            required: ["zoom"],
            properties: { zoom: { type: "number" } },
            additionalProperties: false
          }
        }
      ])
      const invalid = yield* Effect.flip(registry.registerComponent({ ...card, description: "" }))
      expect(invalid.reason).toBe("InvalidDefinition")
      expect(yield* registry.unregisterComponent("Chart")).toBe(true)
      expect((yield* registry.listComponents).map((c) => c.name)).toEqual(["WeatherCard"])
    }).pipe(Effect.provide(Registry.layer)))
})
