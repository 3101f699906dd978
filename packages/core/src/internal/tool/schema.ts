/**
 * The three kinds of schema a tool or component may declare (Effect Schema,
 * Standard Schema, JSON Schema): telling them apart, and converting them to
 * the JSON Schema the API needs.
 *
 * @internal
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec"
import * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { ToolDefinitionError } from "../../TamboError.js"
import type { JsonObject, JsonSchema, SchemaKind, SupportedSchema } from "../../Tool.js"
import { dereference, findRecord, isPlainJson, type JsonRecord } from "../jsonSchema.js"
import { describeError } from "../toolSupport.js"

/**
 * A schema, by kind.
 *
 * @internal
 * @since 0.2.0
 * @category Models
 */
export type Classified =
  | { readonly _tag: "EffectSchema"; readonly schema: Schema.Schema.AnyNoContext }
  | { readonly _tag: "StandardSchema"; readonly schema: StandardSchemaV1 }
  | { readonly _tag: "JsonSchema"; readonly schema: JsonRecord }

/**
 * The context of an Effect Schema is not observable at runtime; the public
 * types only admit context-free schemas (`EffectSchema`).
 *
 * @internal
 * @since 0.2.0
 * @category Guards
 */
export const isEffectSchema = (u: unknown): u is Schema.Schema.AnyNoContext => Schema.isSchema(u)

/**
 * @internal
 * @since 0.2.0
 * @category Guards
 */
export const isStandardSchema = (u: unknown): u is StandardSchemaV1 => {
  if ((typeof u !== "object" && typeof u !== "function") || u === null || !("~standard" in u)) return false
  const props = u["~standard"]
  return Predicate.isRecord(props) && props["version"] === 1 && typeof props["vendor"] === "string" &&
    typeof props["validate"] === "function"
}

const isJsonSchemaConverter = (u: unknown): u is StandardJSONSchemaV1.Converter =>
  Predicate.isRecord(u) && typeof u["input"] === "function" && typeof u["output"] === "function"

const isJsonRecord = (u: unknown): u is JsonRecord => Predicate.isRecord(u) && isPlainJson(u)

/**
 * @internal
 * @since 0.2.0
 * @category Guards
 */
export const isJsonSchema = (u: unknown): u is JsonSchema => isJsonRecord(u)

/**
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const classify = (u: unknown): Classified | undefined => {
  // Effect first: `Schema.standardSchemaV1(s)` is both.
  if (isEffectSchema(u)) return { _tag: "EffectSchema", schema: u }
  if (isStandardSchema(u)) return { _tag: "StandardSchema", schema: u }
  if (isJsonRecord(u)) return { _tag: "JsonSchema", schema: u }
  return undefined
}

/**
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const schemaKind = (u: unknown): SchemaKind | undefined => classify(u)?._tag

/**
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const unsupportedSchema = (what: string, name: string | undefined) =>
  new ToolDefinitionError({
    reason: "UnsupportedSchema",
    message: `${what} is not an Effect Schema, a Standard Schema (Zod 4, Valibot, ArkType) or a plain JSON Schema object`,
    ...(name === undefined ? {} : { definitionName: name })
  })

const isEmptyStruct = (schema: Schema.Schema.AnyNoContext): boolean => {
  const ast = SchemaAST.encodedAST(schema.ast)
  return ast._tag === "TypeLiteral" && ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0
}

const emptyObjectSchema: JsonObject = {
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  properties: {},
  additionalProperties: false
}

/** The Standard Schema's own JSON Schema, draft-07 preferred. */
const convertStandard = (
  schema: StandardSchemaV1,
  side: "input" | "output",
  fail: (reason: ToolDefinitionError["reason"], message: string, cause?: unknown) => Effect.Effect<never, ToolDefinitionError>
): Effect.Effect<JsonObject, ToolDefinitionError> =>
  Effect.suspend(() => {
    const props: StandardSchemaV1.Props = schema["~standard"]
    const converter = "jsonSchema" in props ? props.jsonSchema : undefined
    if (!isJsonSchemaConverter(converter)) {
      return fail(
        "UnsupportedSchema",
        `is a Standard Schema of "${props.vendor}" that cannot be converted to JSON Schema: it does not ` +
          `implement Standard JSON Schema (\`~standard.jsonSchema\`). Use a version of the library that ` +
          `does (Zod >= 4.2 does), or declare the schema as a JSON Schema object`
      )
    }
    let lastError: unknown
    for (const target of ["draft-07", "draft-2020-12"]) {
      try {
        const json: unknown = converter[side]({ target })
        if (Predicate.isRecord(json)) return Effect.succeed(json)
      } catch (error) {
        lastError = error
      }
    }
    return fail(
      "UnconvertibleSchema",
      `cannot be converted to JSON Schema by "${props.vendor}"` +
        (lastError === undefined ? "" : `: ${describeError(lastError)}`),
      lastError
    )
  })

/**
 * A schema as JSON Schema: Effect Schemas with `JSONSchema.make` (the
 * encoded side), Standard Schemas with their converter, JSON Schemas as
 * they are. `what` names the schema in errors.
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const convert = (
  classified: Classified,
  side: "input" | "output",
  what: string,
  name: string | undefined
): Effect.Effect<JsonObject, ToolDefinitionError> => {
  const fail = (reason: ToolDefinitionError["reason"], message: string, cause?: unknown) =>
    Effect.fail(
      new ToolDefinitionError({
        reason,
        message: `${what} ${message}`,
        ...(name === undefined ? {} : { definitionName: name }),
        ...(cause === undefined ? {} : { cause })
      })
    )
  switch (classified._tag) {
    case "JsonSchema":
      return Effect.succeed(classified.schema)
    case "EffectSchema":
      return Effect.suspend(() => {
        // `JSONSchema.make` renders `Struct({})` as "object or array"; as a
        // tool's input it means "no arguments".
        if (isEmptyStruct(classified.schema)) return Effect.succeed(emptyObjectSchema)
        try {
          const json: unknown = JSONSchema.make(classified.schema)
          return Predicate.isRecord(json) ? Effect.succeed(json) : fail("UnconvertibleSchema", "did not convert to a JSON object")
        } catch (error) {
          return fail("UnconvertibleSchema", `cannot be converted to JSON Schema: ${describeError(error)}`, error)
        }
      })
    case "StandardSchema":
      return convertStandard(classified.schema, side, fail)
  }
}

/**
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const toJsonSchema = (
  schema: SupportedSchema,
  options?: { readonly side?: "input" | "output" | undefined }
): Effect.Effect<JsonObject, ToolDefinitionError> => {
  const classified = classify(schema)
  return classified === undefined
    ? Effect.fail(unsupportedSchema("The schema", undefined))
    : convert(classified, options?.side ?? "input", "The schema", undefined)
}

/**
 * @internal
 * @since 0.2.0
 * @category Validation
 */
export const checkNoRecord = (
  schema: JsonSchema | JsonObject,
  what = "The schema",
  name?: string
): Effect.Effect<void, ToolDefinitionError> => {
  const path = findRecord(schema)
  return path === undefined ? Effect.void : Effect.fail(
    new ToolDefinitionError({
      reason: "UnsupportedSchema",
      message: `${what} has a record (an object whose keys are not named) at "${path}". ` +
        `The Tambo API keeps only the named properties of every object, so the model could never fill it. ` +
        `Name its keys as properties, or make it an array of key/value objects.`,
      ...(name === undefined ? {} : { definitionName: name })
    })
  )
}

const typeAlternatives = ["anyOf", "oneOf", "allOf", "not", "enum", "const", "items", "prefixItems", "if"]

/**
 * The input schema as the API needs it: every local `$ref` inlined (the
 * API stores each parameter's schema on its own) and an object at the root
 * (the API reads the parameters from its `properties`).
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const toolInputJsonSchema = (
  json: JsonObject,
  name: string
): Effect.Effect<JsonObject, ToolDefinitionError> => {
  const fail = (message: string) =>
    Effect.fail(
      new ToolDefinitionError({ reason: "UnsupportedSchema", message: `Tool "${name}": ${message}`, definitionName: name })
    )
  const result = dereference(json)
  switch (result._tag) {
    case "Cycle":
      return fail(`the input schema is recursive (${result.ref}); the Tambo API needs self-contained parameters`)
    case "Unresolvable":
      return fail(`the input schema refers to ${result.ref}, which cannot be resolved`)
    case "TooLarge":
      return fail("the input schema is too large once its references are inlined")
    case "Ok": {
      const schema = result.schema
      if (schema["type"] === "object") return Effect.succeed(schema)
      // No type and nothing that would allow another one (`{}`, or just
      // `properties`): the object is implied.
      if (schema["type"] === undefined && !typeAlternatives.some((key) => key in schema)) {
        return Effect.succeed({ ...schema, type: "object" })
      }
      const got = schema["type"] === undefined ? "a schema without a type" : JSON.stringify(schema["type"])
      return fail(`the input schema must describe an object (type "object"), got ${got}`)
    }
  }
}

/**
 * Dereferenced when possible; recursive schemas are kept with their `$defs`.
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const bestEffortDereference = (json: JsonObject): JsonObject => {
  const result = dereference(json)
  return result._tag === "Ok" ? result.schema : json
}
