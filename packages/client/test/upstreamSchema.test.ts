// `@tambo-ai/client`'s schema helpers, and the values it exports that this package does not.
import { Schema } from "effect"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import * as Client from "../src/index.js"
import {
  assertNoRecordSchema,
  CLIENT_VERSION,
  getParametersFromToolSchema,
  isStandardSchema,
  looksLikeJSONSchema,
  makeJsonSchemaPartial,
  safeSchemaToJsonSchema,
  schemaToJsonSchema,
  ToolDefinitionError
} from "../src/index.js"
import { makeClient, useServer } from "./helpers.js"

const server = useServer()

/** A Standard Schema with no JSON Schema converter: it cannot be sent. */
const noConverter = { "~standard": { version: 1 as const, vendor: "acme", validate: (value: unknown) => ({ value }) } }

describe("@tambo-ai/client's schema helpers", () => {
  it("CLIENT_VERSION is the package's version", () => {
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
    expect(CLIENT_VERSION).toBe(manifest.version)
  })

  it("isStandardSchema tells Standard Schemas, callable ones included, from the rest", () => {
    const callable = Object.assign(() => undefined, noConverter)
    expect([
      isStandardSchema(z.string()),
      isStandardSchema(callable),
      isStandardSchema(Schema.standardSchemaV1(Schema.String)),
      isStandardSchema(Schema.String),
      isStandardSchema({ type: "string" }),
      isStandardSchema({ "~standard": { version: 2, vendor: "x", validate: () => undefined } }),
      isStandardSchema(null)
    ]).toEqual([true, true, true, false, false, false, false])
  })

  it.each([
    [{ type: "object", properties: { a: { type: "string" } }, required: ["a"] }, true],
    [{ type: ["string", "null"] }, true],
    [{ enum: [1, 2] }, true],
    [{ $ref: "#/$defs/a" }, true],
    [{ items: { type: "string" } }, true],
    [{}, false],
    [{ description: "only a description" }, false],
    [{ type: "text" }, false],
    [{ type: "object", required: "a" }, false],
    [{ type: "object", properties: [] }, false],
    [z.object({}), false],
    ["object", false]
  ])("looksLikeJSONSchema(%j) is %s", (value, expected) => {
    expect(looksLikeJSONSchema(value)).toBe(expected)
  })

  it("schemaToJsonSchema returns a JSON Schema as it is and converts Zod and Effect Schemas", () => {
    const json = { type: "object", properties: { a: { type: "string" } } } as const
    expect(schemaToJsonSchema(json)).toBe(json)
    expect(schemaToJsonSchema(z.object({ a: z.string() }))).toMatchObject({
      type: "object",
      properties: { a: { type: "string" } },
      required: ["a"]
    })
    expect(schemaToJsonSchema(Schema.Struct({ n: Schema.Number }))).toMatchObject({
      type: "object",
      properties: { n: { type: "number" } }
    })
  })

  it("schemaToJsonSchema throws core's ToolDefinitionError, with the caller's stack", () => {
    let thrown: unknown
    try {
      schemaToJsonSchema(noConverter)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(ToolDefinitionError)
    expect(thrown).toMatchObject({ reason: "UnsupportedSchema" })
    expect((thrown as Error).stack).toContain("upstreamSchema.test.ts")
  })

  it("safeSchemaToJsonSchema gives undefined for no schema or one that does not convert, and says why", () => {
    const reasons: Array<unknown> = []
    expect(safeSchemaToJsonSchema(undefined)).toBeUndefined()
    expect(safeSchemaToJsonSchema(null)).toBeUndefined()
    expect(safeSchemaToJsonSchema(noConverter, (error) => reasons.push(error))).toBeUndefined()
    expect(reasons).toHaveLength(1)
    expect(reasons[0]).toBeInstanceOf(ToolDefinitionError)
    expect(safeSchemaToJsonSchema(z.string())).toMatchObject({ type: "string" })
  })

  it("makeJsonSchemaPartial drops the top-level required list only", () => {
    const schema = {
      type: "object",
      properties: { a: { type: "object", properties: { b: { type: "string" } }, required: ["b"] } },
      required: ["a"]
    } as const
    expect(makeJsonSchemaPartial(schema)).toEqual({ type: "object", properties: schema.properties })
    expect(schema.required).toEqual(["a"])
  })

  it("getParametersFromToolSchema lists a tool's parameters in the API's older form", () => {
    const tool = {
      inputSchema: z.object({
        city: z.string().describe("City name"),
        days: z.number().optional(),
        where: z.object({ lat: z.number() })
      })
    }
    expect(getParametersFromToolSchema(tool)).toEqual([
      { name: "city", type: "string", description: "City name", isRequired: true, schema: { type: "string", description: "City name" } },
      { name: "days", type: "number", description: "", isRequired: false, schema: { type: "number" } },
      {
        name: "where",
        type: "object",
        description: "",
        isRequired: true,
        schema: expect.objectContaining({ type: "object", properties: { lat: { type: "number" } } })
      }
    ])
    expect(getParametersFromToolSchema({ inputSchema: { properties: { any: {} } } })).toEqual([
      { name: "any", type: "object", description: "", isRequired: false, schema: {} }
    ])
    expect(getParametersFromToolSchema({ inputSchema: "not a schema" as never })).toEqual([])
  })

  it("assertNoRecordSchema throws for a record, names where it is, and lets other schemas be", () => {
    expect(() => assertNoRecordSchema(z.object({ scores: z.record(z.string(), z.number()) }), "inputSchema of tool \"rank\""))
      .toThrow(
        "The inputSchema of tool \"rank\" has a record (an object whose keys are not named) at \"scores\""
      )
    expect(() => assertNoRecordSchema({ type: "object", additionalProperties: { type: "string" } })).toThrow(
      "The schema has a record (an object whose keys are not named) at \"(root)\""
    )
    expect(() => assertNoRecordSchema(z.object({ a: z.array(z.string()) }))).not.toThrow()
    // Nothing to judge: no schema, or one that cannot be converted.
    expect(() => assertNoRecordSchema(undefined)).not.toThrow()
    expect(() => assertNoRecordSchema(noConverter)).not.toThrow()
  })

  it("registering a tool or component with a record throws the same error, and registers nothing", async () => {
    server().setScript([])
    const client = makeClient(server())
    const rank = {
      name: "rank",
      description: "Ranks",
      tool: () => 1,
      inputSchema: z.object({ scores: z.record(z.string(), z.number()) })
    }
    expect(() => client.registerTool(rank)).toThrow(ToolDefinitionError)
    expect(() => client.registerComponent("Scores", { description: "Scores", propsSchema: z.record(z.string(), z.number()) }))
      .toThrow("The propsSchema of component \"Scores\" has a record")
    expect(Object.keys(client.getTools())).not.toContain("rank")
    await client.destroy()
  })
})

describe("the values @tambo-ai/client exports", () => {
  // Its reducer, stream and tool-round plumbing: this client does these its own way (core's run),
  // and offers the outcomes (threads, streams, typed tools) rather than the machinery.
  const notOffered = [
    "ToolCallTracker",
    "UnreachableCaseError",
    "applyJsonPatch",
    "canBeNull",
    "createInitialStateWithMessages",
    "createInitialThreadState",
    "createKeyedThrottle",
    "createRunStream",
    "createThrottledStreamableExecutor",
    "dispatchToolResults",
    "dispatchUserMessage",
    "executeAllPendingTools",
    "executeClientTool",
    "executeStreamableToolCall",
    "executeToolsAndContinue",
    "findComponentContent",
    "handleEventStream",
    "streamReducer",
    "toAvailableComponent",
    "toAvailableComponents",
    "toAvailableTool",
    "toAvailableTools",
    "unstrictifyToolCallParamsFromSchema"
  ]

  it("are all exported here, but for its reducer and run plumbing", async () => {
    const upstream = await import("@tambo-ai/client")
    // `default` is the CommonJS module itself, as Node's ES import of it adds.
    const missing = Object.keys(upstream).filter((name) => name !== "default" && !(name in Client)).sort()
    expect(missing).toEqual(notOffered)
  })
})
