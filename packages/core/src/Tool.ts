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
import type { StandardSchemaV1 } from "@standard-schema/spec"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import { undoStrictMode as undoStrictModeIn } from "./internal/jsonSchema.js"
import * as definitions from "./internal/tool/definition.js"
import * as resolution from "./internal/tool/resolve.js"
import * as results from "./internal/tool/result.js"
import * as schemas from "./internal/tool/schema.js"
import * as validation from "./internal/tool/validate.js"
import type { ToolCallError, ToolDefinitionError } from "./TamboError.js"
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
export const TypeId: unique symbol = definitions.TypeId

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
export const isJsonSchema: (u: unknown) => u is JsonSchema = schemas.isJsonSchema

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
 * content parts sent back: empty texts are left out, and no parts at all are
 * sent as one text, `""`, as a result `""` is (the API refuses an empty text
 * and takes a result without parts as none, which drops the call from the
 * model's history); anything but an array answers the call with an error
 * result (`ToolCallError`, `InvalidResult`).
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
  /**
   * Overrides the executor's per-call timeout (the run's `toolTimeout`), as
   * {@link MakeOptions.timeout} does. Not in `@tambo-ai/client`'s shape,
   * which has no timeout.
   *
   * @since 0.2.0
   */
  readonly timeout?: Duration.DurationInput | undefined
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
export const isTool: (u: unknown) => u is Tool<unknown, unknown, unknown> = definitions.isTool

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
export const make: <A, R = unknown, E = never>(options: MakeOptions<A, R, E>) => Tool<A, R, E> = definitions.make

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

/**
 * A successful result.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const toolResult: (toolUseId: string, content: ReadonlyArray<ToolResultPart>) => ToolResultContent =
  results.toolResult

/**
 * An error result: `message` tells the model what went wrong.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const errorResult: (toolUseId: string, message: string) => ToolResultContent = results.errorResult

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

/**
 * Which kind of schema a value is, if any.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const schemaKind: (u: unknown) => SchemaKind | undefined = schemas.schemaKind

/**
 * Whether a value implements Standard Schema v1 (`~standard` with
 * `version: 1`, a `vendor` and a `validate` function): Zod 4, Valibot,
 * ArkType (whose schemas are functions), or an Effect Schema wrapped with
 * `Schema.standardSchemaV1`.
 *
 * @since 0.2.0
 * @category Schemas
 */
export const isStandardSchema: (u: unknown) => u is StandardSchemaV1 = schemas.isStandardSchema

/**
 * A value as its schema wrote it, from what a model in the Tambo API's
 * strict mode sent. The API gives the model every object with all its
 * properties required, the optional ones nullable, so the model sends `null`
 * for those it means to leave out: guided by the JSON Schema, such a `null`
 * (for an optional property whose schema does not take `null`) is removed,
 * or replaced by the property's `default`, through nested objects and
 * arrays; a string sent where the schema wants an object is read as the JSON
 * object it holds. Everything else is left for validation to judge. Never
 * mutates its input. Tools' arguments are read so before they are decoded
 * ({@link ResolvedTool.decodeArgs}).
 *
 * @since 0.2.0
 * @category Validation
 */
export const undoStrictMode: (schema: JsonSchema | JsonObject, value: unknown) => unknown = undoStrictModeIn

/**
 * Fails with an `UnsupportedSchema` {@link ToolDefinitionError} when a JSON
 * Schema holds a record: an object whose keys are not named (an
 * `additionalProperties` that is itself a schema, as `Schema.Record` and
 * `z.record` give). The Tambo API keeps only the named properties of each
 * object a tool or component schema describes, so the model could never fill
 * a record. The message names where it is, as a dotted path of property
 * names (`(root)` for the schema itself, `[]` for array items), after `what`
 * (default `"The schema"`). {@link resolve} and {@link toApiComponent} make
 * this check.
 *
 * @since 0.2.0
 * @category Validation
 */
export const checkNoRecord: (
  schema: JsonSchema | JsonObject,
  what?: string
) => Effect.Effect<void, ToolDefinitionError> = schemas.checkNoRecord

/**
 * Converts a schema to JSON Schema: Effect Schemas with `JSONSchema.make`
 * (describing the encoded side, which is what the model sends), Standard
 * Schemas with their Standard JSON Schema converter (`~standard.jsonSchema`,
 * draft-07 preferred), JSON Schemas as they are.
 *
 * @since 0.1.0
 * @category Conversions
 */
export const toJsonSchema: (
  schema: SupportedSchema,
  options?: { readonly side?: "input" | "output" | undefined }
) => Effect.Effect<JsonObject, ToolDefinitionError> = schemas.toJsonSchema

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

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
  return validation.validate(schema, value)
}

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
   * server's `_tambo_*` display properties, undoes the server's strict mode
   * (a `null` in an optional parameter is removed, or replaced by the
   * parameter's `default`; an object sent as a JSON string is parsed), then
   * decodes with the input schema.
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

/**
 * Validates a tool definition and prepares it for the API and the executor:
 * its name (letters, digits, `_`, `-`), description, `maxCalls`, and its
 * input schema — converted to JSON Schema (with local `$ref`s inlined, an
 * object at the root, and no record: see {@link checkNoRecord}). The output
 * schema is sent when it converts, and silently left out otherwise (e.g.
 * `z.void()`).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const resolve: (definition: Definition) => Effect.Effect<ResolvedTool, ToolDefinitionError> =
  resolution.resolve

/**
 * Validates a component and converts its schemas to the API's
 * `availableComponents` entry. Local `$ref`s are inlined unless the schema
 * is recursive (then it is sent with its `$defs`). The props may not hold a
 * record (see {@link checkNoRecord}); the state, which the model does not fill,
 * may.
 *
 * @since 0.1.0
 * @category Conversions
 */
export const toApiComponent: (component: AvailableComponent) => Effect.Effect<ApiComponent, ToolDefinitionError> =
  resolution.toApiComponent
