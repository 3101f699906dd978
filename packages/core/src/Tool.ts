/**
 * The tool model: client-side tools the model may call, and the UI
 * components it may render.
 *
 * Two ways to write a tool:
 *
 * - a {@link TamboTool}, the `@tambo-ai/client` shape, accepted as is: an
 *   `inputSchema` that is an Effect Schema, any Standard Schema (Zod 4,
 *   Valibot, ArkType) or a plain JSON Schema, and a `tool` function that
 *   returns a value or a Promise;
 * - {@link make}, the typed constructor for Effect users, whose `execute` may
 *   return an `Effect`, a Promise or a value.
 *
 * {@link resolve} turns either into a {@link ResolvedTool}: its schemas
 * converted to JSON Schema once (the API `tools` payload), an argument
 * decoder, and a `run` that never throws.
 *
 * @since 0.1.0
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { dereference, isPlainJson, type JsonRecord, stripStrictNulls } from "./internal/jsonSchema.js"
import * as JsonSchemaValidator from "./internal/jsonSchemaValidate.js"
import { callApp } from "./internal/callbacks.js"
import { describeError, resultText } from "./internal/toolSupport.js"
import { ToolCallError, ToolDefinitionError } from "./TamboError.js"
import type * as Types from "./Types.js"

// ---------------------------------------------------------------------------
// Type ids
// ---------------------------------------------------------------------------

/**
 * Marks the tools built by {@link make}.
 *
 * @since 0.1.0
 * @category Type IDs
 */
export const TypeId: unique symbol = Symbol.for("@tambo-effect/core/Tool")

/**
 * @since 0.1.0
 * @category Type IDs
 */
export type TypeId = typeof TypeId

// ---------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------

/**
 * The primitive type names of JSON Schema.
 *
 * @since 0.1.0
 * @category JSON Schema
 */
export type JsonSchemaTypeName = "string" | "number" | "integer" | "boolean" | "object" | "array" | "null"

/**
 * A JSON Schema or a boolean schema (`true` accepts anything, `false`
 * nothing).
 *
 * @since 0.1.0
 * @category JSON Schema
 */
export type JsonSchemaDefinition = JsonSchema | boolean

/**
 * A JSON Schema (draft-07, plus `prefixItems` and OpenAPI's `nullable`).
 * Every `JSONSchema7` of `@types/json-schema` is one, so schemas written for
 * `@tambo-ai/client` are accepted as they are.
 *
 * @since 0.1.0
 * @category JSON Schema
 */
export interface JsonSchema {
  readonly $id?: string | undefined
  readonly $ref?: string | undefined
  readonly $schema?: string | undefined
  readonly $comment?: string | undefined
  readonly $defs?: { readonly [key: string]: JsonSchemaDefinition } | undefined
  readonly definitions?: { readonly [key: string]: JsonSchemaDefinition } | undefined
  readonly type?: JsonSchemaTypeName | ReadonlyArray<JsonSchemaTypeName> | undefined
  readonly enum?: ReadonlyArray<unknown> | undefined
  readonly const?: unknown
  readonly multipleOf?: number | undefined
  readonly maximum?: number | undefined
  readonly exclusiveMaximum?: number | boolean | undefined
  readonly minimum?: number | undefined
  readonly exclusiveMinimum?: number | boolean | undefined
  readonly maxLength?: number | undefined
  readonly minLength?: number | undefined
  readonly pattern?: string | undefined
  readonly format?: string | undefined
  readonly items?: JsonSchemaDefinition | ReadonlyArray<JsonSchemaDefinition> | undefined
  readonly prefixItems?: ReadonlyArray<JsonSchemaDefinition> | undefined
  readonly additionalItems?: JsonSchemaDefinition | undefined
  readonly maxItems?: number | undefined
  readonly minItems?: number | undefined
  readonly uniqueItems?: boolean | undefined
  readonly contains?: JsonSchemaDefinition | undefined
  readonly maxProperties?: number | undefined
  readonly minProperties?: number | undefined
  readonly required?: ReadonlyArray<string> | undefined
  readonly properties?: { readonly [key: string]: JsonSchemaDefinition } | undefined
  readonly patternProperties?: { readonly [key: string]: JsonSchemaDefinition } | undefined
  readonly additionalProperties?: JsonSchemaDefinition | undefined
  readonly dependencies?: { readonly [key: string]: JsonSchemaDefinition | ReadonlyArray<string> } | undefined
  readonly propertyNames?: JsonSchemaDefinition | undefined
  readonly if?: JsonSchemaDefinition | undefined
  readonly then?: JsonSchemaDefinition | undefined
  readonly else?: JsonSchemaDefinition | undefined
  readonly allOf?: ReadonlyArray<JsonSchemaDefinition> | undefined
  readonly anyOf?: ReadonlyArray<JsonSchemaDefinition> | undefined
  readonly oneOf?: ReadonlyArray<JsonSchemaDefinition> | undefined
  readonly not?: JsonSchemaDefinition | undefined
  readonly nullable?: boolean | undefined
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly default?: unknown
  readonly readOnly?: boolean | undefined
  readonly writeOnly?: boolean | undefined
  readonly examples?: unknown
  readonly contentMediaType?: string | undefined
  readonly contentEncoding?: string | undefined
}

/**
 * A JSON object, as sent to the API (a converted JSON Schema).
 *
 * @since 0.1.0
 * @category JSON Schema
 */
export type JsonObject = { readonly [key: string]: unknown }

/**
 * Whether a value can be used as a JSON Schema: a plain JSON object (no
 * functions, no class instances). Use it to admit JSON Schemas of unknown
 * origin, e.g. an MCP server's `inputSchema`.
 *
 * @since 0.1.0
 * @category JSON Schema
 */
export const isJsonSchema = (u: unknown): u is JsonSchema => Predicate.isRecord(u) && isPlainJson(u)

/**
 * An Effect Schema without requirements whose decoded type is `A`.
 *
 * @since 0.1.0
 * @category Schemas
 */
export type EffectSchema<A> = Schema.Schema.AnyNoContext & { readonly Type: A }

/**
 * What a tool's input (or output, or a component's props) may be declared
 * with: an Effect Schema, any Standard Schema (Zod 4, Valibot, ArkType), or a
 * plain JSON Schema.
 *
 * @since 0.1.0
 * @category Schemas
 */
export type SupportedSchema<A = unknown> = EffectSchema<A> | StandardSchemaV1<unknown, A> | JsonSchema

/**
 * Which of the three kinds a {@link SupportedSchema} is.
 *
 * @since 0.1.0
 * @category Schemas
 */
export type SchemaKind = "EffectSchema" | "StandardSchema" | "JsonSchema"

// ---------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------

/**
 * Hints about a tool's behaviour: MCP's tool annotations plus Tambo's
 * `tamboStreamableHint` (safe to call repeatedly with partial arguments
 * while they stream).
 *
 * @since 0.1.0
 * @category Models
 */
export interface ToolAnnotations {
  readonly title?: string | undefined
  readonly readOnlyHint?: boolean | undefined
  readonly destructiveHint?: boolean | undefined
  readonly idempotentHint?: boolean | undefined
  readonly openWorldHint?: boolean | undefined
  readonly tamboStreamableHint?: boolean | undefined
}

/**
 * The second argument of a tool function: the id of the call being answered
 * and a signal aborted when the call is interrupted (timed out, or the run
 * cancelled). A {@link TamboTool}'s `tool` receives it only if it declares
 * a second parameter, so one-parameter functions are called exactly as
 * `@tambo-ai/client` calls them.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ToolCallContext {
  readonly toolCallId: string
  readonly signal: AbortSignal
}

/**
 * A content part a {@link TamboTool}'s `transformToContent` may return.
 * Text parts and `{ type: "resource", resource }` parts are sent as they
 * are; anything else is sent as its JSON text.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ContentPartLike {
  readonly type: string
}

/**
 * A tool in the shape of `@tambo-ai/client`'s `TamboTool`, accepted as is.
 *
 * The `any` defaults mirror upstream's so that code written against it —
 * e.g. an untyped `tool: ({ city }) => …` — keeps compiling; {@link make} is
 * the fully typed alternative.
 *
 * `outputSchema` describes the result to the model and is not checked at
 * runtime. `transformToContent`, when given, turns the result into the
 * content parts sent back.
 *
 * @since 0.1.0
 * @category Models
 */
export interface TamboTool<Params = any, Returns = any> {
  readonly name: string
  readonly description: string
  readonly title?: string | undefined
  /** At most this many calls per response; sent to the API, and enforced per run by the executor. */
  readonly maxCalls?: number | undefined
  readonly annotations?: ToolAnnotations | undefined
  tool(params: Params, context: ToolCallContext): Returns | PromiseLike<Returns>
  readonly inputSchema: SupportedSchema<Params>
  readonly outputSchema?: SupportedSchema<Returns> | undefined
  transformToContent?(result: Returns): ReadonlyArray<ContentPartLike> | PromiseLike<ReadonlyArray<ContentPartLike>>
  /**
   * Ask for approval before running: always (`true`), or per call, from
   * the decoded arguments (a function, which may answer with a promise).
   * As {@link MakeOptions.needsApproval}.
   */
  readonly needsApproval?: boolean | ApprovalPredicate<Params> | undefined
}

/**
 * Whether a call with these arguments needs approval. Its parameter is
 * checked like a method's (bivariantly), as `tool`'s is: a tool typed for
 * its own arguments stays a `TamboTool<unknown>`.
 *
 * @since 0.1.0
 * @category Models
 */
export type ApprovalPredicate<Params> = {
  bivarianceHack(params: Params): boolean | PromiseLike<boolean>
}["bivarianceHack"]

/**
 * A tool built by {@link make}. `execute` always returns an `Effect`: a
 * throwing or rejecting implementation fails with a {@link ToolCallError}.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Tool<A, R = unknown, E = never> {
  readonly [TypeId]: TypeId
  readonly name: string
  readonly description: string
  readonly title: string | undefined
  readonly annotations: ToolAnnotations | undefined
  readonly maxCalls: number | undefined
  /** Overrides the executor's per-call timeout. */
  readonly timeout: Duration.Duration | undefined
  readonly input: SupportedSchema<A>
  readonly output: SupportedSchema<R> | undefined
  execute(args: A, options?: { readonly toolCallId?: string | undefined }): Effect.Effect<R, E | ToolCallError>
  /** Whether this call must be approved before it runs. */
  needsApproval(args: A): boolean
}

/**
 * Any tool built by {@link make}.
 *
 * @since 0.1.0
 * @category Models
 */
export type Any = Tool<unknown, unknown, unknown>

/**
 * Anything the registry accepts as a tool.
 *
 * @since 0.1.0
 * @category Models
 */
export type Definition = Any | TamboTool<unknown, unknown>

/**
 * @since 0.1.0
 * @category Guards
 */
export const isTool = (u: unknown): u is Tool<unknown, unknown, unknown> => Predicate.hasProperty(u, TypeId)

/**
 * The options of {@link make}.
 *
 * @since 0.1.0
 * @category Constructors
 */
export interface MakeOptions<A, R, E> {
  /** Letters, digits, `_` and `-`. */
  readonly name: string
  readonly description: string
  readonly title?: string | undefined
  readonly annotations?: ToolAnnotations | undefined
  /** An integer ≥ 1. */
  readonly maxCalls?: number | undefined
  /** Overrides the executor's per-call timeout. */
  readonly timeout?: Duration.DurationInput | undefined
  /** Must describe an object (the model always calls with named arguments). */
  readonly input: SupportedSchema<A>
  /**
   * Describes the result to the model. An Effect Schema also encodes the
   * result before it is serialised (e.g. a `Date` becomes its ISO string);
   * a result it rejects becomes an error result.
   */
  readonly output?: SupportedSchema<R> | undefined
  /** Ask for approval before running (always, or per call). */
  readonly needsApproval?: boolean | ((args: A) => boolean) | undefined
  readonly execute: (args: A, context: ToolCallContext) => Effect.Effect<R, E> | PromiseLike<R> | R
}

/**
 * Builds a typed tool.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import * as Tool from "@tambo-effect/core/Tool"
 *
 * const weather = Tool.make({
 *   name: "get_weather",
 *   description: "Current weather for a city",
 *   input: Schema.Struct({ city: Schema.String }),
 *   output: Schema.Struct({ celsius: Schema.Number }),
 *   execute: ({ city }) => Effect.succeed({ celsius: city.length })
 * })
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = <A, R = unknown, E = never>(options: MakeOptions<A, R, E>): Tool<A, R, E> => {
  const { execute, name, needsApproval } = options
  return {
    [TypeId]: TypeId,
    name,
    description: options.description,
    title: options.title,
    annotations: options.annotations,
    maxCalls: options.maxCalls,
    timeout: options.timeout === undefined ? undefined : Duration.decode(options.timeout),
    input: options.input,
    output: options.output,
    execute: (args, executeOptions) =>
      callUser(name, (signal) => execute(args, { toolCallId: executeOptions?.toolCallId ?? "", signal })),
    needsApproval: (args) => typeof needsApproval === "function" ? needsApproval(args) : needsApproval === true
  }
}

// ---------------------------------------------------------------------------
// Components
// ---------------------------------------------------------------------------

/**
 * A UI component the model may render (metadata only: rendering is the UI
 * layer's business).
 *
 * @since 0.1.0
 * @category Models
 */
export interface AvailableComponent {
  readonly name: string
  readonly description: string
  readonly propsSchema: SupportedSchema
  readonly stateSchema?: SupportedSchema | undefined
}

// ---------------------------------------------------------------------------
// Wire shapes
// ---------------------------------------------------------------------------

/**
 * One entry of a run request's `tools` (the API's `Tool` DTO).
 *
 * @since 0.1.0
 * @category Wire
 */
export interface ApiTool {
  readonly name: string
  readonly description: string
  readonly inputSchema: JsonObject
  readonly outputSchema?: JsonObject
  readonly maxCalls?: number
}

/**
 * One entry of a run request's `availableComponents` (the API's
 * `V1AvailableComponent` DTO).
 *
 * @since 0.1.0
 * @category Wire
 */
export interface ApiComponent {
  readonly name: string
  readonly description: string
  readonly propsSchema: JsonObject
  readonly stateSchema?: JsonObject
}

/**
 * A content block a tool result may contain: text or a resource.
 *
 * @since 0.1.0
 * @category Wire
 */
export type ToolResultPart = Types.TextContent | Types.ResourceContent

/**
 * The `tool_result` content block that answers a tool call (the project's
 * shared `Types.ToolResultContent`): `{ type: "tool_result", toolUseId,
 * content: [text | resource blocks], isError? }`, sent in the `content` of
 * the user message that continues a run. `toolUseId` is the call's id;
 * `isError` marks a failed call.
 *
 * @since 0.1.0
 * @category Wire
 */
export type ToolResultContent = Types.ToolResultContent

// Decodes the content parts a `transformToContent` returns (untrusted).
const ToolResultPartSchema = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
  Schema.Struct({
    type: Schema.Literal("resource"),
    resource: Schema.Struct({
      uri: Schema.optionalWith(Schema.String, { exact: true }),
      text: Schema.optionalWith(Schema.String, { exact: true }),
      blob: Schema.optionalWith(Schema.String, { exact: true }),
      mimeType: Schema.optionalWith(Schema.String, { exact: true }),
      name: Schema.optionalWith(Schema.String, { exact: true }),
      description: Schema.optionalWith(Schema.String, { exact: true }),
      annotations: Schema.optionalWith(Schema.Struct({
        audience: Schema.optionalWith(Schema.mutable(Schema.Array(Schema.String)), { exact: true }),
        priority: Schema.optionalWith(Schema.Number, { exact: true })
      }), { exact: true })
    })
  })
)

/**
 * A successful result.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const toolResult = (toolUseId: string, content: ReadonlyArray<ToolResultPart>): ToolResultContent => ({
  type: "tool_result",
  toolUseId,
  content: [...content]
})

/**
 * An error result: `message` tells the model what went wrong.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const errorResult = (toolUseId: string, message: string): ToolResultContent => ({
  type: "tool_result",
  toolUseId,
  content: [{ type: "text", text: message.length > 0 ? message : "The tool call failed." }],
  isError: true
})

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

export {
  /**
   * The same class as `TamboError.ToolCallError`, kept here for
   * compatibility.
   *
   * @since 0.1.0
   * @category Errors
   */
  ToolCallError,
  /**
   * The same class as `TamboError.ToolDefinitionError`, kept here for
   * compatibility.
   *
   * @since 0.1.0
   * @category Errors
   */
  ToolDefinitionError
} from "./TamboError.js"

// ---------------------------------------------------------------------------
// Schema kinds
// ---------------------------------------------------------------------------

type Classified =
  | { readonly _tag: "EffectSchema"; readonly schema: Schema.Schema.AnyNoContext }
  | { readonly _tag: "StandardSchema"; readonly schema: StandardSchemaV1 }
  | { readonly _tag: "JsonSchema"; readonly schema: JsonRecord }

// The context of an Effect Schema is not observable at runtime; the public
// types only admit context-free schemas (`EffectSchema`).
const isEffectSchema = (u: unknown): u is Schema.Schema.AnyNoContext => Schema.isSchema(u)

const isStandardSchema = (u: unknown): u is StandardSchemaV1 => {
  if ((typeof u !== "object" && typeof u !== "function") || u === null || !("~standard" in u)) return false
  const props = u["~standard"]
  return Predicate.isRecord(props) && props["version"] === 1 && typeof props["vendor"] === "string" &&
    typeof props["validate"] === "function"
}

const isJsonSchemaConverter = (u: unknown): u is StandardJSONSchemaV1.Converter =>
  Predicate.isRecord(u) && typeof u["input"] === "function" && typeof u["output"] === "function"

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

const classify = (u: unknown): Classified | undefined => {
  // Effect first: `Schema.standardSchemaV1(s)` is both.
  if (isEffectSchema(u)) return { _tag: "EffectSchema", schema: u }
  if (isStandardSchema(u)) return { _tag: "StandardSchema", schema: u }
  if (Predicate.isRecord(u) && isPlainJson(u)) return { _tag: "JsonSchema", schema: u }
  return undefined
}

/**
 * Which kind of schema a value is, if any.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const schemaKind = (u: unknown): SchemaKind | undefined => classify(u)?._tag

const unsupportedSchema = (what: string, name: string | undefined) =>
  new ToolDefinitionError({
    reason: "UnsupportedSchema",
    message: `${what} is not an Effect Schema, a Standard Schema (Zod 4, Valibot, ArkType) or a plain JSON Schema object`,
    ...(name === undefined ? {} : { definitionName: name })
  })

const convert = (
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
      return Effect.suspend(() => {
        const props: StandardSchemaV1.Props = classified.schema["~standard"]
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
  }
}

/**
 * Converts a schema to JSON Schema: Effect Schemas with `JSONSchema.make`
 * (describing the encoded side, which is what the model sends), Standard
 * Schemas with their Standard JSON Schema converter (`~standard.jsonSchema`,
 * draft-07 preferred), JSON Schemas as they are.
 *
 * @since 0.1.0
 * @category Conversions
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

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

interface Issue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const invalid = (issues: ReadonlyArray<Issue>): ToolCallError =>
  new ToolCallError({ reason: "InvalidArguments", message: JsonSchemaValidator.formatIssues(issues.slice(0, 10)) })

const validateClassified = (classified: Classified, value: unknown): Effect.Effect<unknown, ToolCallError> => {
  switch (classified._tag) {
    case "EffectSchema":
      return Schema.decodeUnknown(classified.schema, { errors: "all", onExcessProperty: "ignore" })(value).pipe(
        Effect.mapError((error) => invalid(ParseResult.ArrayFormatter.formatErrorSync(error)))
      )
    case "StandardSchema": {
      const validator = classified.schema["~standard"]
      return callApp<StandardSchemaV1.Result<unknown>, never, ToolCallError>(
        () => validator.validate(value),
        (defect) =>
          new ToolCallError({
            reason: "InvalidArguments",
            message: `the "${validator.vendor}" validator failed: ${describeError(defect)}`,
            cause: defect
          })
      ).pipe(
        Effect.flatMap((result) =>
          result.issues === undefined
            ? Effect.succeed(result.value)
            : Effect.fail(
              invalid(result.issues.map((issue) => ({
                path: (issue.path ?? []).map((segment) => typeof segment === "object" ? segment.key : segment),
                message: issue.message
              })))
            )
        )
      )
    }
    case "JsonSchema": {
      const schema = classified.schema
      return Effect.suspend(() => {
        const issues = JsonSchemaValidator.validate(schema, value)
        return issues.length === 0 ? Effect.succeed(value) : Effect.fail(invalid(issues))
      })
    }
  }
}

/**
 * Decodes / validates a value with a schema of any kind: Effect Schema
 * (`decodeUnknown`, excess properties ignored), Standard Schema
 * (`~standard.validate`, possibly async), JSON Schema (a built-in validator
 * for the keywords tool schemas use; `format` is ignored). Fails with an
 * `InvalidArguments` {@link ToolCallError} whose message lists the issues,
 * one `path: problem` per line.
 *
 * @since 0.1.0
 * @category Validation
 */
export function validate<A>(
  schema: EffectSchema<A> | StandardSchemaV1<unknown, A>,
  value: unknown
): Effect.Effect<A, ToolCallError>
export function validate(schema: SupportedSchema, value: unknown): Effect.Effect<unknown, ToolCallError>
export function validate(schema: SupportedSchema, value: unknown): Effect.Effect<unknown, ToolCallError> {
  const classified = classify(schema)
  return classified === undefined
    ? Effect.fail(
      new ToolCallError({
        reason: "InvalidArguments",
        message: "the schema is not an Effect Schema, a Standard Schema or a JSON Schema"
      })
    )
    : validateClassified(classified, value)
}

// ---------------------------------------------------------------------------
// Running user code
// ---------------------------------------------------------------------------

/**
 * Calls a tool implementation with an `AbortSignal` that is aborted when the
 * returned Effect is interrupted. A synchronous throw and a rejection become
 * `Threw` / `Rejected` errors; a returned Effect runs as it is.
 */
const callUser = <R, E>(
  toolName: string,
  implementation: (signal: AbortSignal) => Effect.Effect<R, E> | PromiseLike<R> | R
): Effect.Effect<R, E | ToolCallError> =>
  callApp(
    implementation,
    (thrown) =>
      new ToolCallError({
        reason: "Threw",
        message: `Tool "${toolName}" threw an error: ${describeError(thrown)}`,
        toolName,
        cause: thrown
      }),
    (rejection) =>
      new ToolCallError({
        reason: "Rejected",
        message: `Tool "${toolName}" failed: ${describeError(rejection)}`,
        toolName,
        cause: rejection
      })
  )

// ---------------------------------------------------------------------------
// Resolution
// ---------------------------------------------------------------------------

/**
 * A registered tool: its definition as given, its API payload (schemas
 * converted once, at registration), and the operations the executor needs.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ResolvedTool {
  readonly name: string
  readonly description: string
  readonly definition: Definition
  readonly inputSchemaKind: SchemaKind
  readonly maxCalls: number | undefined
  readonly timeout: Duration.Duration | undefined
  readonly annotations: ToolAnnotations | undefined
  /** The entry of the API's `tools` payload. */
  readonly api: ApiTool
  /**
   * Prepares and validates raw (already JSON-parsed) arguments: drops the
   * server's `_tambo_*` display properties, removes the `null`s the server's
   * strict mode puts in optional parameters, then decodes with the input
   * schema.
   */
  readonly decodeArgs: (args: unknown) => Effect.Effect<unknown, ToolCallError>
  readonly needsApproval: (args: unknown) => Effect.Effect<boolean, ToolCallError>
  /**
   * Runs the tool with decoded arguments and serialises its result into
   * content parts. Failures (throw, rejection, failed Effect, invalid
   * result) are `ToolCallError`s; defects stay defects.
   */
  readonly run: (args: unknown, context: { readonly toolCallId: string }) => Effect.Effect<
    ReadonlyArray<ToolResultPart>,
    ToolCallError
  >
}

const NAME_PATTERN = /^[A-Za-z0-9_-]+$/

const validateName = (name: unknown, what: string): Effect.Effect<string, ToolDefinitionError> =>
  typeof name === "string" && NAME_PATTERN.test(name)
    ? Effect.succeed(name)
    : Effect.fail(
      new ToolDefinitionError({
        reason: "InvalidName",
        message: typeof name === "string"
          ? `${what} name ${JSON.stringify(name)} is invalid: use one or more letters, digits, "_" or "-"`
          : `${what} name must be a string, got ${name === null ? "null" : typeof name}`,
        ...(typeof name === "string" ? { definitionName: name } : {})
      })
    )

const invalidDefinition = (name: string, message: string) =>
  new ToolDefinitionError({ reason: "InvalidDefinition", message, definitionName: name })

const validateDescription = (description: unknown, what: string, name: string) =>
  typeof description === "string" && description.trim().length > 0
    ? Effect.succeed(description)
    : Effect.fail(invalidDefinition(name, `${what} "${name}" needs a non-empty description`))

const validateMaxCalls = (maxCalls: unknown, name: string): Effect.Effect<number | undefined, ToolDefinitionError> => {
  if (maxCalls === undefined) return Effect.succeed(undefined)
  return typeof maxCalls === "number" && Number.isInteger(maxCalls) && maxCalls >= 1
    ? Effect.succeed(maxCalls)
    : Effect.fail(invalidDefinition(name, `Tool "${name}": maxCalls must be an integer >= 1`))
}

/**
 * The input schema as the API needs it: every local `$ref` inlined (the
 * API stores each parameter's schema on its own) and an object at the root
 * (the API reads the parameters from its `properties`).
 */
const toolInputJsonSchema = (
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

const typeAlternatives = ["anyOf", "oneOf", "allOf", "not", "enum", "const", "items", "prefixItems", "if"]

/** Dereferenced when possible; recursive schemas are kept with their `$defs`. */
const bestEffortDereference = (json: JsonObject): JsonObject => {
  const result = dereference(json)
  return result._tag === "Ok" ? result.schema : json
}

const stripTamboProperties = (args: unknown): unknown => {
  if (!Predicate.isRecord(args)) return args
  const keys = Object.keys(args)
  if (!keys.some((key) => key.startsWith("_tambo_"))) return args
  const out: Record<string, unknown> = {}
  for (const key of keys) if (!key.startsWith("_tambo_")) out[key] = args[key]
  return out
}

const serialise = (
  toolName: string,
  result: unknown
): Effect.Effect<ReadonlyArray<ToolResultPart>, ToolCallError> => {
  const text = resultText(result)
  return text._tag === "Ok"
    ? Effect.succeed([{ type: "text", text: text.text }])
    : Effect.fail(
      new ToolCallError({
        reason: "InvalidResult",
        message: `Tool "${toolName}" returned a result that cannot be sent as JSON: ${text.reason}`,
        toolName
      })
    )
}

const decodePart = Schema.decodeUnknownOption(ToolResultPartSchema)

const normaliseParts = (parts: unknown): ReadonlyArray<ToolResultPart> => {
  if (!Array.isArray(parts)) return []
  const out: Array<ToolResultPart> = []
  for (const part of parts) {
    const decoded = decodePart(part)
    if (decoded._tag === "Some") {
      if (decoded.value.type === "text" && decoded.value.text.length === 0) continue
      out.push(decoded.value)
    } else {
      const text = resultText(part)
      out.push({ type: "text", text: text._tag === "Ok" ? text.text : String(part) })
    }
  }
  return out
}

/**
 * Upstream's executor calls `tool(args)`: the context is passed only to
 * functions that declare a second parameter, so variadic implementations see
 * exactly the arguments they saw before.
 */
const callTamboTool = (tool: TamboTool<unknown, unknown>, args: unknown, context: ToolCallContext): unknown =>
  tool.tool.length >= 2 ? tool.tool(args, context) : Reflect.apply(tool.tool, tool, [args])

interface Normalised
  extends Pick<Tool<unknown>, "name" | "description" | "title" | "annotations" | "maxCalls" | "timeout">
{
  readonly input: unknown
  readonly output: unknown
  readonly needsApproval: (args: unknown) => boolean | PromiseLike<boolean>
  readonly execute: (args: unknown, toolCallId: string) => Effect.Effect<unknown, unknown>
  readonly toContent: (result: unknown) => Effect.Effect<ReadonlyArray<ToolResultPart>, ToolCallError>
}

const normalise = (definition: Definition): Effect.Effect<Normalised, ToolDefinitionError> =>
  Effect.gen(function*() {
    if (!Predicate.isRecord(definition) && !isTool(definition)) {
      return yield* Effect.fail(
        new ToolDefinitionError({ reason: "InvalidDefinition", message: "A tool must be an object" })
      )
    }
    const name = yield* validateName(definition.name, "Tool")
    const description = yield* validateDescription(definition.description, "Tool", name)
    const maxCalls = yield* validateMaxCalls(definition.maxCalls, name)
    if (isTool(definition)) {
      const tool = definition
      const encode = isEffectSchema(tool.output)
        ? Schema.encodeUnknown(tool.output)
        : undefined
      return {
        name,
        description,
        title: tool.title,
        annotations: tool.annotations,
        maxCalls,
        timeout: tool.timeout,
        input: tool.input,
        output: tool.output,
        needsApproval: (args) => tool.needsApproval(args),
        execute: (args, toolCallId) => tool.execute(args, { toolCallId }),
        toContent: (result) =>
          encode === undefined
            ? serialise(name, result)
            : encode(result).pipe(
              Effect.mapError((error) =>
                new ToolCallError({
                  reason: "InvalidResult",
                  message: `Tool "${name}" returned a result that does not match its output schema: ${
                    ParseResult.TreeFormatter.formatErrorSync(error)
                  }`,
                  toolName: name
                })
              ),
              Effect.flatMap((encoded) => serialise(name, encoded))
            )
      }
    }
    const tambo = definition
    if (typeof tambo.tool !== "function") {
      return yield* Effect.fail(invalidDefinition(name, `Tool "${name}" needs a \`tool\` function`))
    }
    if (tambo.inputSchema === undefined || tambo.inputSchema === null) {
      return yield* Effect.fail(invalidDefinition(name, `Tool "${name}" needs an \`inputSchema\``))
    }
    const transform = tambo.transformToContent
    const needsApproval: unknown = tambo.needsApproval
    if (needsApproval !== undefined && typeof needsApproval !== "boolean" && typeof needsApproval !== "function") {
      return yield* Effect.fail(
        invalidDefinition(name, `Tool "${name}": \`needsApproval\` must be a boolean or a function of the arguments`)
      )
    }
    return {
      name,
      description,
      title: tambo.title,
      annotations: tambo.annotations,
      maxCalls,
      timeout: undefined,
      input: tambo.inputSchema,
      output: tambo.outputSchema,
      needsApproval: (args) =>
        typeof needsApproval === "function" ? Reflect.apply(needsApproval, tambo, [args]) : needsApproval === true,
      execute: (args, toolCallId) => callUser(name, (signal) => callTamboTool(tambo, args, { toolCallId, signal })),
      toContent: (result) =>
        typeof transform === "function"
          ? callUser<ReadonlyArray<ContentPartLike>, never>(name, () => transform.call(tambo, result)).pipe(
            Effect.map(normaliseParts)
          )
          : serialise(name, result)
    }
  })

/**
 * Validates a tool definition and prepares it for the API and the executor:
 * its name (letters, digits, `_`, `-`), description, `maxCalls`, and its
 * input schema — converted to JSON Schema (with local `$ref`s inlined and an
 * object at the root, as the API needs). The output schema is sent when it
 * converts, and silently left out otherwise (e.g. `z.void()`).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const resolve = (definition: Definition): Effect.Effect<ResolvedTool, ToolDefinitionError> =>
  Effect.gen(function*() {
    const tool = yield* normalise(definition)
    const { name } = tool
    const input = classify(tool.input)
    if (input === undefined) return yield* Effect.fail(unsupportedSchema(`The input schema of tool "${name}"`, name))
    const converted = yield* convert(input, "input", `The input schema of tool "${name}"`, name)
    const inputJson = yield* toolInputJsonSchema(converted, name)
    const output = tool.output === undefined ? undefined : classify(tool.output)
    const outputJson = output === undefined
      ? undefined
      : yield* convert(output, "output", `The output schema of tool "${name}"`, name).pipe(
        Effect.map(bestEffortDereference),
        Effect.option,
        Effect.map((option) => option._tag === "Some" ? option.value : undefined)
      )
    // JSON Schema tools are validated against the dereferenced schema.
    const validator: Classified = input._tag === "JsonSchema" ? { _tag: "JsonSchema", schema: inputJson } : input
    const api: ApiTool = {
      name,
      description: tool.description,
      inputSchema: inputJson,
      ...(outputJson === undefined ? {} : { outputSchema: outputJson }),
      ...(tool.maxCalls === undefined ? {} : { maxCalls: tool.maxCalls })
    }
    const resolved: ResolvedTool = {
      name,
      description: tool.description,
      definition,
      inputSchemaKind: input._tag,
      maxCalls: tool.maxCalls,
      timeout: tool.timeout,
      annotations: tool.annotations,
      api,
      decodeArgs: (args) =>
        Effect.suspend(() => validateClassified(validator, stripStrictNulls(inputJson, stripTamboProperties(args))))
          .pipe(
            Effect.mapError((error) =>
              new ToolCallError({
                reason: "InvalidArguments",
                message: `Invalid arguments for tool "${name}":\n${error.message}`,
                toolName: name,
                ...(error.cause === undefined ? {} : { cause: error.cause })
              })
            )
          ),
      needsApproval: (args) => {
        const failed = (thrown: unknown) =>
          new ToolCallError({
            reason: "Threw",
            message: `Tool "${name}": deciding whether the call needs approval failed: ${describeError(thrown)}`,
            toolName: name,
            cause: thrown
          })
        return callApp(() => tool.needsApproval(args), failed)
      },
      run: (args, { toolCallId }) =>
        tool.execute(args, toolCallId).pipe(
          Effect.catchAll((error) =>
            Effect.fail(
              error instanceof ToolCallError
                ? error
                : new ToolCallError({
                  reason: "Failed",
                  message: `Tool "${name}" failed: ${describeError(error)}`,
                  toolName: name,
                  cause: error
                })
            )
          ),
          Effect.flatMap(tool.toContent)
        )
    }
    return resolved
  })

/**
 * Validates a component and converts its schemas to the API's
 * `availableComponents` entry. Local `$ref`s are inlined unless the schema
 * is recursive (then it is sent with its `$defs`).
 *
 * @since 0.1.0
 * @category Conversions
 */
export const toApiComponent = (component: AvailableComponent): Effect.Effect<ApiComponent, ToolDefinitionError> =>
  Effect.gen(function*() {
    if (!Predicate.isRecord(component)) {
      return yield* Effect.fail(
        new ToolDefinitionError({ reason: "InvalidDefinition", message: "A component must be an object" })
      )
    }
    const name = yield* validateName(component.name, "Component")
    const description = yield* validateDescription(component.description, "Component", name)
    const schemaOf = (schema: unknown, what: string) => {
      const classified = classify(schema)
      return classified === undefined
        ? Effect.fail(unsupportedSchema(`The ${what} of component "${name}"`, name))
        : convert(classified, "input", `The ${what} of component "${name}"`, name).pipe(
          Effect.map(bestEffortDereference)
        )
    }
    const propsSchema = yield* schemaOf(component.propsSchema, "propsSchema")
    const stateSchema = component.stateSchema === undefined
      ? undefined
      : yield* schemaOf(component.stateSchema, "stateSchema")
    return {
      name,
      description,
      propsSchema,
      ...(stateSchema === undefined ? {} : { stateSchema })
    }
  })
