/**
 * `@tambo-ai/client`'s schema helpers, under its names and with its
 * signatures, over core's own conversion (`Tool.toJsonSchema`) and checks:
 * code that calls them keeps working after the import is switched. They
 * take Effect Schemas too. A failure throws core's `ToolDefinitionError`.
 *
 * @since 0.2.0
 */
import type { StandardSchemaV1 } from "@standard-schema/spec"
import type { ToolDefinitionError } from "@tambo-effect/core/TamboError"
import * as Tool from "@tambo-effect/core/Tool"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Predicate from "effect/Predicate"
import * as CallSite from "./internal/callSite.js"
import type { ParameterSpec } from "./UpstreamNames.js"

/**
 * This package's version.
 *
 * @since 0.2.0
 * @category Constants
 */
export const CLIENT_VERSION = "0.1.0"

/**
 * Whether a value implements Standard Schema v1 (Zod 4, Valibot, ArkType).
 *
 * @since 0.2.0
 * @category Schemas
 */
export const isStandardSchema: (u: unknown) => u is StandardSchemaV1 = Tool.isStandardSchema

const jsonSchemaTypes: ReadonlySet<unknown> = new Set(["object", "array", "string", "number", "integer", "boolean", "null"])

const isTypeKeyword = (type: unknown): boolean =>
  jsonSchemaTypes.has(type) || (Array.isArray(type) && type.every((name) => jsonSchemaTypes.has(name)))

/**
 * Whether a value looks like a JSON Schema at its top level: a plain object
 * with a `type`, `properties`, `items`, `enum`, `const` or `$ref`, and
 * well-formed `type`, `properties` and `required` where present. A heuristic,
 * not a validation of the whole schema.
 *
 * @since 0.2.0
 * @category Schemas
 */
export const looksLikeJSONSchema = (u: unknown): u is Tool.JsonSchema => {
  if (!Tool.isJsonSchema(u)) return false
  const schema = u as Tool.JsonObject
  if ("type" in schema && !isTypeKeyword(schema["type"])) return false
  if ("properties" in schema && !Predicate.isRecord(schema["properties"])) return false
  if ("required" in schema && !(Array.isArray(schema["required"]) && schema["required"].every(Predicate.isString))) {
    return false
  }
  return ["type", "properties", "items", "enum", "const", "$ref"].some((key) => key in schema)
}

/** Runs a conversion of core's; its failure is thrown with the caller's stack. */
const runOrThrow = <A>(effect: Effect.Effect<A, ToolDefinitionError>, above: Function): A => {
  const result = Effect.runSync(Effect.either(effect))
  if (Either.isRight(result)) return result.right
  throw CallSite.attach(result.left, CallSite.capture(above))
}

/**
 * A schema as JSON Schema: a JSON Schema as it is, an Effect Schema or a
 * Standard Schema converted (Standard Schemas through their Standard JSON
 * Schema converter, `~standard.jsonSchema`). Throws a `ToolDefinitionError`
 * when the schema cannot be converted.
 *
 * @since 0.2.0
 * @category Schemas
 */
export const schemaToJsonSchema = (schema: Tool.SupportedSchema): Tool.JsonSchema =>
  Tool.isJsonSchema(schema) ? schema : runOrThrow(Tool.toJsonSchema(schema), schemaToJsonSchema) as Tool.JsonSchema

/**
 * {@link schemaToJsonSchema}, or `undefined` for no schema or one that cannot
 * be converted; `onError` is given the reason.
 *
 * @since 0.2.0
 * @category Schemas
 */
export const safeSchemaToJsonSchema = (
  schema: Tool.SupportedSchema | undefined | null,
  onError?: (error: unknown) => void
): Tool.JsonSchema | undefined => {
  if (schema === undefined || schema === null) return undefined
  try {
    return schemaToJsonSchema(schema)
  } catch (error) {
    onError?.(error)
    return undefined
  }
}

/**
 * The schema without its top-level `required`: every property optional.
 *
 * @since 0.2.0
 * @category Schemas
 */
export const makeJsonSchemaPartial = (schema: Tool.JsonSchema): Tool.JsonSchema => {
  const { required: _required, ...rest } = schema
  return rest
}

/**
 * A tool's parameters as the API's older tool form lists them: one entry
 * per property of its input schema, with the property's `type` (`"object"`
 * when it has none), `description`, whether it is required, and its schema.
 * An input schema of no known kind gives none.
 *
 * @since 0.2.0
 * @category Schemas
 */
export const getParametersFromToolSchema = (tool: Pick<Tool.TamboTool, "inputSchema">): Array<ParameterSpec> => {
  if (Tool.schemaKind(tool.inputSchema) === undefined) return []
  const schema = schemaToJsonSchema(tool.inputSchema)
  const required = schema.required ?? []
  return Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const described = Predicate.isRecord(property) ? property : {}
    return {
      name,
      type: typeof described["type"] === "string" ? described["type"] : "object",
      description: typeof described["description"] === "string" ? described["description"] : "",
      isRequired: required.includes(name),
      schema: described
    }
  })
}

/**
 * Throws a `ToolDefinitionError` (reason `UnsupportedSchema`) when a schema
 * holds a record, an object whose keys are not named: the Tambo API keeps
 * only the named properties of each object a tool or component schema
 * describes, so the model could never fill it (core's `Tool.checkNoRecord`).
 * `contextName` says which schema in the message. Registering a tool or a
 * component makes this check already; a schema that cannot be converted is
 * not judged here.
 *
 * @since 0.2.0
 * @category Schemas
 */
export const assertNoRecordSchema = (schema: unknown, contextName = "schema"): void => {
  if (Tool.schemaKind(schema) === undefined) return
  const converted = Effect.runSync(Effect.either(Tool.toJsonSchema(schema as Tool.SupportedSchema)))
  if (Either.isRight(converted)) runOrThrow(Tool.checkNoRecord(converted.right, `The ${contextName}`), assertNoRecordSchema)
}
