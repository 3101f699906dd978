import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import type { TamboTool as UpstreamTamboTool, TamboToolJSONSchema as UpstreamJsonSchemaTool } from "@tambo-ai/client"
import type { RunCreateParams } from "@tambo-ai/typescript-sdk/resources/threads/runs"
import type { ToolResultContent as SdkToolResultContent } from "@tambo-ai/typescript-sdk/resources/threads/threads"
import { Effect, Either, Schema } from "effect"
import { z } from "zod"
import * as Tool from "../src/Tool.js"

// A tool exactly as written for @tambo-ai/client 1.1.3.
const upstreamWeather: UpstreamTamboTool<{ location: string }, { celsius: number }> = {
  name: "get_weather",
  description: "Current weather for a location",
  title: "Weather",
  maxCalls: 2,
  annotations: { readOnlyHint: true, tamboStreamableHint: false },
  tool: async ({ location }) => ({ celsius: location.length }),
  inputSchema: z.object({ location: z.string().describe("City name") }),
  outputSchema: z.object({ celsius: z.number() }),
  transformToContent: (result) => [{ type: "text", text: `It is ${result.celsius}°C` }]
}

const upstreamJsonTool: UpstreamJsonSchemaTool = {
  name: "echo",
  description: "Echoes its input",
  tool: (input) => input,
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  outputSchema: { type: "object" }
}

describe("TamboTool (the @tambo-ai/client shape)", () => {
  it("accepts tools typed with @tambo-ai/client's types as they are", () => {
    // Type-level: these assignments are the test.
    const asOurs: Tool.TamboTool<{ location: string }, { celsius: number }> = upstreamWeather
    const asDefinition: Tool.Definition = upstreamWeather
    const jsonAsDefinition: Tool.Definition = upstreamJsonTool
    expect([asOurs, asDefinition, jsonAsDefinition]).toHaveLength(3)
  })

  it("accepts code written for @tambo-ai/client with the import switched", () => {
    // The untyped destructuring compiles because, as upstream, the type
    // parameters default to `any`.
    const tool: Tool.TamboTool = {
      name: "lookup",
      description: "Looks something up",
      tool: async ({ query }) => `result for ${query}`,
      inputSchema: z.object({ query: z.string() }),
      outputSchema: z.string()
    }
    const typed: Tool.TamboTool<{ query: string }, string> = {
      name: "lookup",
      description: "Looks something up",
      tool: ({ query }, { signal }) => (signal.aborted ? "aborted" : query),
      inputSchema: { type: "object", properties: { query: { type: "string" } } }
    }
    expectTypeOf(typed.tool).parameter(0).toEqualTypeOf<{ query: string }>()
    expect(tool.name).toBe("lookup")
  })

  it.effect("resolves to the API payload", () =>
    Effect.gen(function*() {
      const resolved = yield* Tool.resolve(upstreamWeather)
      expect(resolved.inputSchemaKind).toBe("StandardSchema")
      expect(resolved.api).toEqual({
        name: "get_weather",
        description: "Current weather for a location",
        inputSchema: {
          $schema: "http://json-schema.org/draft-07/schema#",
          type: "object",
          properties: { location: { type: "string", description: "City name" } },
          required: ["location"]
        },
        outputSchema: {
          $schema: "http://json-schema.org/draft-07/schema#",
          type: "object",
          properties: { celsius: { type: "number" } },
          required: ["celsius"],
          additionalProperties: false
        },
        maxCalls: 2
      })
      // The payload is what the typescript-sdk's run params accept.
      const payload: RunCreateParams.Tool = resolved.api
      expect(payload.name).toBe("get_weather")
    }))

  it.effect("runs the tool and applies transformToContent", () =>
    Effect.gen(function*() {
      const resolved = yield* Tool.resolve(upstreamWeather)
      const args = yield* resolved.decodeArgs({ location: "Paris" })
      expect(args).toEqual({ location: "Paris" })
      expect(yield* resolved.run(args, { toolCallId: "c1" })).toEqual([{ type: "text", text: "It is 5°C" }])
    }))

  it.effect("passes the context only to functions that declare a second parameter", () =>
    Effect.gen(function*() {
      const seen: Array<number> = []
      const variadic = yield* Tool.resolve({
        name: "variadic",
        description: "Counts its arguments",
        tool: (...args: Array<unknown>) => {
          seen.push(args.length)
          return args.length
        },
        inputSchema: { type: "object" }
      })
      yield* variadic.run({}, { toolCallId: "c1" })
      const withContext = yield* Tool.resolve({
        name: "with_context",
        description: "Reads its context",
        tool: (_args: unknown, context: Tool.ToolCallContext) => context.toolCallId,
        inputSchema: { type: "object" }
      })
      expect(seen).toEqual([1])
      expect(yield* withContext.run({}, { toolCallId: "call-7" })).toEqual([{ type: "text", text: "call-7" }])
    }))

  it.effect("keeps `this` for method-style tools", () =>
    Effect.gen(function*() {
      const tool = {
        name: "counter",
        description: "Counts",
        count: 41,
        tool(this: { count: number }) {
          return this.count + 1
        },
        inputSchema: { type: "object" as const }
      }
      const resolved = yield* Tool.resolve(tool)
      expect(yield* resolved.run({}, { toolCallId: "c" })).toEqual([{ type: "text", text: "42" }])
    }))
})

describe("Tool.make", () => {
  const Input = Schema.Struct({ a: Schema.Number, b: Schema.Number })

  it("infers argument, result and error types", () => {
    class Overflow extends Schema.TaggedError<Overflow>()("Overflow", {}) {}
    const add = Tool.make({
      name: "add",
      description: "Adds two numbers",
      input: Input,
      execute: ({ a, b }) => (a + b > 100 ? Effect.fail(new Overflow()) : Effect.succeed(a + b))
    })
    expectTypeOf(add).toEqualTypeOf<Tool.Tool<{ readonly a: number; readonly b: number }, number, Overflow>>()

    const fromPromise = Tool.make({
      name: "p",
      description: "Promise",
      input: z.object({ q: z.string() }),
      execute: async ({ q }) => q.length
    })
    expectTypeOf(fromPromise).toEqualTypeOf<Tool.Tool<{ q: string }, number, never>>()

    const plain = Tool.make({
      name: "v",
      description: "Value",
      input: { type: "object" },
      execute: (args) => ({ got: args })
    })
    expectTypeOf(plain).toEqualTypeOf<Tool.Tool<unknown, { got: unknown }, never>>()

    // Every typed tool is a Definition.
    const definitions: ReadonlyArray<Tool.Definition> = [add, fromPromise, plain]
    expect(definitions).toHaveLength(3)
  })

  it.effect("execute returns an Effect for every kind of implementation", () =>
    Effect.gen(function*() {
      const effect = Tool.make({ name: "e", description: "d", input: Input, execute: ({ a, b }) => Effect.succeed(a + b) })
      const promise = Tool.make({ name: "p", description: "d", input: Input, execute: async ({ a, b }) => a * b })
      const value = Tool.make({ name: "v", description: "d", input: Input, execute: ({ a, b }) => a - b })
      const throws = Tool.make({
        name: "t",
        description: "d",
        input: Input,
        execute: (): number => {
          throw new Error("boom")
        }
      })
      expect(yield* effect.execute({ a: 2, b: 3 })).toBe(5)
      expect(yield* promise.execute({ a: 2, b: 3 })).toBe(6)
      expect(yield* value.execute({ a: 2, b: 3 })).toBe(-1)
      const error = yield* Effect.flip(throws.execute({ a: 2, b: 3 }))
      expect(error).toBeInstanceOf(Tool.ToolCallError)
      expect(error).toMatchObject({ reason: "Threw", message: "Tool \"t\" threw an error: boom" })
    }))

  it.effect("encodes the result with an Effect output schema", () =>
    Effect.gen(function*() {
      const when = Tool.make({
        name: "when",
        description: "A date",
        input: Schema.Struct({}),
        output: Schema.Struct({ at: Schema.Date }),
        execute: () => ({ at: new Date("2024-01-02T03:04:05.000Z") })
      })
      const resolved = yield* Tool.resolve(when)
      expect(resolved.api.outputSchema).toMatchObject({
        properties: { at: { type: "string", description: "a string to be decoded into a Date" } }
      })
      expect(yield* resolved.run({}, { toolCallId: "c" })).toEqual([
        { type: "text", text: "{\"at\":\"2024-01-02T03:04:05.000Z\"}" }
      ])
    }))

  it("needsApproval accepts a boolean or a predicate", () => {
    const base = { description: "d", input: Input, execute: () => 1 }
    expect(Tool.make({ ...base, name: "a" }).needsApproval({ a: 1, b: 1 })).toBe(false)
    expect(Tool.make({ ...base, name: "b", needsApproval: true }).needsApproval({ a: 1, b: 1 })).toBe(true)
    const big = Tool.make({ ...base, name: "c", needsApproval: ({ a }) => a > 10 })
    expect([big.needsApproval({ a: 1, b: 0 }), big.needsApproval({ a: 11, b: 0 })]).toEqual([false, true])
  })
})

describe("JSON Schema conversion", () => {
  it.effect("Effect Schema: JSONSchema.make, encoded side, $refs inlined", () =>
    Effect.gen(function*() {
      const tool = Tool.make({
        name: "schedule",
        description: "Schedules",
        input: Schema.Struct({
          count: Schema.NumberFromString.annotations({ description: "How many" }),
          at: Schema.Date,
          note: Schema.optional(Schema.String)
        }),
        maxCalls: 1,
        execute: () => "ok"
      })
      const resolved = yield* Tool.resolve(tool)
      expect(resolved.inputSchemaKind).toBe("EffectSchema")
      expect(resolved.api).toEqual({
        name: "schedule",
        description: "Schedules",
        inputSchema: {
          $schema: "http://json-schema.org/draft-07/schema#",
          type: "object",
          required: ["count", "at"],
          properties: {
            count: { type: "string", description: "How many" },
            at: { type: "string", description: "a string to be decoded into a Date" },
            note: { type: "string" }
          },
          additionalProperties: false
        },
        maxCalls: 1
      })
    }))

  it.effect("an identified Effect Schema at the root is inlined to an object", () =>
    Effect.gen(function*() {
      const input = Schema.Struct({ q: Schema.String }).annotations({ identifier: "Query" })
      const resolved = yield* Tool.resolve(Tool.make({ name: "q", description: "d", input, execute: () => 1 }))
      expect(resolved.api.inputSchema).toEqual({
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        required: ["q"],
        properties: { q: { type: "string" } },
        additionalProperties: false
      })
    }))

  it.effect("Zod 4 through Standard JSON Schema; JSON Schema as is", () =>
    Effect.gen(function*() {
      expect(yield* Tool.toJsonSchema(z.object({ a: z.string(), b: z.number().optional() }))).toEqual({
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        properties: { a: { type: "string" }, b: { type: "number" } },
        required: ["a"]
      })
      const json = { type: "object", properties: { a: { type: "string" } } } as const
      expect(yield* Tool.toJsonSchema(json)).toBe(json)
    }))

  it.effect("an output schema that does not convert is left out", () =>
    Effect.gen(function*() {
      const resolved = yield* Tool.resolve({
        name: "side_effect",
        description: "Returns nothing",
        tool: () => undefined,
        inputSchema: z.object({}),
        outputSchema: z.void()
      })
      expect(resolved.api).not.toHaveProperty("outputSchema")
      expect(yield* resolved.run({}, { toolCallId: "c" })).toEqual([{ type: "text", text: "null" }])
    }))

  it.effect("fails clearly for schemas that cannot be sent", () =>
    Effect.gen(function*() {
      const failure = (definition: Tool.Definition) => Effect.flip(Tool.resolve(definition))
      const base = { description: "d", tool: () => 1 }

      const unconvertible = yield* failure({ ...base, name: "a", inputSchema: Schema.Struct({ d: Schema.DateFromSelf }) })
      expect(unconvertible).toMatchObject({ reason: "UnconvertibleSchema", definitionName: "a" })
      expect(unconvertible.message).toContain("Missing annotation")

      const noConverter: Tool.SupportedSchema = {
        "~standard": { version: 1, vendor: "acme", validate: (value) => ({ value }) }
      }
      const unsupported = yield* failure({ ...base, name: "b", inputSchema: noConverter })
      expect(unsupported.reason).toBe("UnsupportedSchema")
      expect(unsupported.message).toContain("\"acme\"")
      expect(unsupported.message).toContain("~standard.jsonSchema")

      const notASchema = yield* failure({ ...base, name: "c", inputSchema: { type: "object", parse: () => 1 } as never })
      expect(notASchema.reason).toBe("UnsupportedSchema")

      const recursive = yield* failure({
        ...base,
        name: "d",
        inputSchema: {
          type: "object",
          properties: { node: { $ref: "#/$defs/node" } },
          $defs: { node: { type: "object", properties: { kids: { type: "array", items: { $ref: "#/$defs/node" } } } } }
        }
      })
      expect(recursive).toMatchObject({ reason: "UnsupportedSchema" })
      expect(recursive.message).toContain("recursive")

      const notAnObject = yield* failure({ ...base, name: "e", inputSchema: z.string() })
      expect(notAnObject.message).toContain("must describe an object")
    }))

  it.effect("refuses records, which the API's strict mode would empty, in every kind of schema", () =>
    Effect.gen(function*() {
      const failure = (inputSchema: Tool.SupportedSchema) =>
        Effect.flip(Tool.resolve({ name: "label", description: "d", tool: () => 1, inputSchema }))
      const effect = yield* failure(
        Schema.Struct({ id: Schema.String, labels: Schema.Record({ key: Schema.String, value: Schema.String }) })
      )
      expect(effect).toMatchObject({ _tag: "ToolDefinitionError", reason: "UnsupportedSchema", definitionName: "label" })
      expect(effect.message).toBe(
        "The input schema of tool \"label\" has a record (an object whose keys are not named) at \"labels\". " +
          "The Tambo API keeps only the named properties of every object, so the model could never fill it. " +
          "Name its keys as properties, or make it an array of key/value objects."
      )
      const zod = yield* failure(z.object({ rows: z.array(z.object({ cells: z.record(z.string(), z.number()) })) }))
      expect(zod.message).toContain("at \"rows.[].cells\"")
      const json = yield* failure({ type: "object", additionalProperties: { type: "number" } })
      expect(json.message).toContain("at \"(root)\"")
      // The check on its own, for a schema converted elsewhere.
      const alone = yield* Effect.flip(Tool.checkNoRecord({ type: "object", additionalProperties: { type: "number" } }))
      expect(alone.message).toMatch(/^The schema has a record \(an object whose keys are not named\) at "\(root\)"/)
      // Named keys, closed or open, are fine.
      yield* Tool.resolve({
        name: "ok",
        description: "d",
        tool: () => 1,
        inputSchema: { type: "object", properties: { a: { type: "string" } }, additionalProperties: true }
      })
    }))

  it.effect("validates names, descriptions and maxCalls", () =>
    Effect.gen(function*() {
      const base = { description: "d", tool: () => 1, inputSchema: { type: "object" } as const }
      const badName = yield* Effect.flip(Tool.resolve({ ...base, name: "get weather" }))
      expect(badName).toMatchObject({ _tag: "ToolDefinitionError", reason: "InvalidName" })
      const noDescription = yield* Effect.flip(Tool.resolve({ ...base, name: "x", description: " " }))
      expect(noDescription.reason).toBe("InvalidDefinition")
      const badMax = yield* Effect.flip(Tool.resolve({ ...base, name: "x", maxCalls: 0 }))
      expect(badMax.message).toContain("maxCalls")
      const { inputSchema: _none, ...noInput } = base
      expect((yield* Effect.flip(Tool.resolve({ ...noInput, name: "x" } as never))).message).toBe(
        "Tool \"x\" needs an `inputSchema`"
      )
      // Upstream's deprecated form: said as such.
      const deprecated = yield* Effect.flip(Tool.resolve({ ...noInput, name: "x", toolSchema: z.function() } as never))
      expect(deprecated).toMatchObject({ reason: "InvalidDefinition" })
      expect(deprecated.message).toContain("gives `toolSchema`, the form @tambo-ai/react deprecated")
    }))
})

describe("Tool.validate", () => {
  it.effect("decodes with an Effect Schema", () =>
    Effect.gen(function*() {
      const schema = Schema.Struct({ n: Schema.NumberFromString })
      const decoded = yield* Tool.validate(schema, { n: "42", extra: true })
      expectTypeOf(decoded).toEqualTypeOf<{ readonly n: number }>()
      expect(decoded).toEqual({ n: 42 })
      const error = yield* Effect.flip(Tool.validate(schema, { n: 1 }))
      expect(error).toMatchObject({ reason: "InvalidArguments" })
      expect(error.message).toContain("n: Expected string, actual 1")
    }))

  it.effect("validates with a Standard Schema, async ones included", () =>
    Effect.gen(function*() {
      const schema = z.object({ n: z.number().int() }).refine(async (v) => v.n !== 13, { message: "unlucky" })
      expect(yield* Tool.validate(schema, { n: 1 })).toEqual({ n: 1 })
      const typeIssue = yield* Effect.flip(Tool.validate(schema, { n: "1" }))
      expect(typeIssue.message).toMatch(/^n: /)
      const refined = yield* Effect.flip(Tool.validate(schema, { n: 13 }))
      expect(refined.message).toBe("(root): unlucky")
    }))

  it.effect("validates with a JSON Schema", () =>
    Effect.gen(function*() {
      const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } as const
      expect(yield* Tool.validate(schema, { n: 1 })).toEqual({ n: 1 })
      const error = yield* Effect.flip(Tool.validate(schema, {}))
      expect(error.message).toBe("n: is required")
    }))

  it.effect("decodeArgs drops _tambo_ properties and strict-mode nulls before validating", () =>
    Effect.gen(function*() {
      const resolved = yield* Tool.resolve({
        name: "search",
        description: "Searches",
        tool: () => 1,
        inputSchema: z.object({ q: z.string(), limit: z.number().optional(), from: z.string().nullable() })
      })
      expect(yield* resolved.decodeArgs({ q: "x", limit: null, from: null, _tambo_statusMessage: "Searching" })).toEqual(
        { q: "x", from: null }
      )
      // A default in place of a null; an object the model sent as a JSON string.
      const defaults = yield* Tool.resolve({
        name: "plot",
        description: "Plots",
        tool: () => 1,
        inputSchema: z.object({ kind: z.enum(["bar", "line"]).default("bar"), range: z.object({ from: z.number() }) })
      })
      expect(yield* defaults.decodeArgs({ kind: null, range: "{\"from\":1}" })).toEqual({ kind: "bar", range: { from: 1 } })
      const error = yield* Effect.flip(resolved.decodeArgs({ q: null }))
      expect(error.message).toMatch(/^Invalid arguments for tool "search":\nq: /)
    }))
})

describe("components", () => {
  it.effect("converts props and state schemas of every kind", () =>
    Effect.gen(function*() {
      const api = yield* Tool.toApiComponent({
        name: "WeatherCard",
        description: "Shows the weather",
        propsSchema: Schema.Struct({ celsius: Schema.Number }),
        stateSchema: z.object({ open: z.boolean() })
      })
      expect(api).toEqual({
        name: "WeatherCard",
        description: "Shows the weather",
        propsSchema: {
          $schema: "http://json-schema.org/draft-07/schema#",
          type: "object",
          required: ["celsius"],
          properties: { celsius: { type: "number" } },
          additionalProperties: false
        },
        stateSchema: {
          $schema: "http://json-schema.org/draft-07/schema#",
          type: "object",
          properties: { open: { type: "boolean" } },
          required: ["open"]
        }
      })
      const payload: RunCreateParams.AvailableComponent = api
      expect(payload.name).toBe("WeatherCard")
      const invalid = yield* Effect.either(
        Tool.toApiComponent({ name: "", description: "d", propsSchema: { type: "object" } })
      )
      expect(Either.isLeft(invalid) && invalid.left.reason).toBe("InvalidName")
    }))

  it.effect("refuses a record in the props, which the model could never fill; the state may have one", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Tool.toApiComponent({
        name: "Table",
        description: "A table",
        propsSchema: z.object({ totals: z.record(z.string(), z.number()) })
      }))
      expect(error).toMatchObject({ reason: "UnsupportedSchema", definitionName: "Table" })
      expect(error.message).toContain("The propsSchema of component \"Table\" has a record (an object whose keys are not named) at \"totals\"")
      const api = yield* Tool.toApiComponent({
        name: "Table",
        description: "A table",
        propsSchema: z.object({ title: z.string() }),
        stateSchema: z.object({ widths: z.record(z.string(), z.number()) })
      })
      expect(api.stateSchema).toBeDefined()
    }))
})

describe("result blocks", () => {
  it("match the API's tool_result content", () => {
    const ok = Tool.toolResult("call_1", [{ type: "text", text: "42" }])
    const failed = Tool.errorResult("call_2", "boom")
    // The typescript-sdk's `ToolResultContent` (what the API accepts) takes them as they are.
    const wire: ReadonlyArray<SdkToolResultContent> = [ok, failed]
    expect(wire).toEqual([
      { type: "tool_result", toolUseId: "call_1", content: [{ type: "text", text: "42" }] },
      { type: "tool_result", toolUseId: "call_2", content: [{ type: "text", text: "boom" }], isError: true }
    ])
    expect(ok).not.toHaveProperty("isError")
  })
})
