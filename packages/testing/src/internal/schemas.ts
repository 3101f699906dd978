// Request bodies and queries, decoded at the boundary. Validation failures become the 400 the
// API's ValidationPipe answers: `{ message: string[], error: "Bad Request", statusCode: 400 }`,
// with class-validator style messages ("<path> <problem>").
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as Wire from "../Wire.js"
import { badRequest } from "./httpError.js"

const isJsonObject = (u: unknown): u is Wire.JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

const JsonObject = Schema.declare(isJsonObject).annotations({ message: () => "must be an object" })
const Str = Schema.String.annotations({ message: () => "must be a string" })
const NonEmptyStr = Str.pipe(Schema.filter((s) => s.length > 0, { message: () => "should not be empty" }))
const Bool = Schema.Boolean.annotations({ message: () => "must be a boolean value" })
const Num = Schema.Number.annotations({ message: () => "must be a number conforming to the specified constraints" })
/** A closed set of strings, reported the way class-validator's `@IsIn` does. */
const oneOf = <const Values extends ReadonlyArray<string>>(...values: Values) =>
  Schema.declare((u: unknown): u is Values[number] => typeof u === "string" && values.includes(u)).annotations({
    message: () => `must be one of the following values: ${values.join(", ")}`
  })

const between = (min: number, max: number) =>
  Num.pipe(
    Schema.filter((n) => n >= min, { message: () => `must not be less than ${min}` }),
    Schema.filter((n) => n <= max, { message: () => `must not be greater than ${max}` })
  )

const opt = <A, I, R>(schema: Schema.Schema<A, I, R>) => Schema.optionalWith(schema, { exact: true })

const TextContent = Schema.Struct({ type: Schema.Literal("text"), text: NonEmptyStr })
const ResourceContent = Schema.Struct({ type: Schema.Literal("resource"), resource: JsonObject })
const ToolResultContent = Schema.Struct({
  type: Schema.Literal("tool_result"),
  toolUseId: NonEmptyStr,
  content: Schema.Array(
    Schema.Union(TextContent, ResourceContent).annotations({ message: () => "must be a text or resource block" })
  ),
  isError: opt(Bool)
})

const InputContent = Schema.Union(TextContent, ResourceContent, ToolResultContent).annotations({
  message: () => "must be a text, resource or tool_result block"
})

const nonEmptyArray = <A, I, R>(item: Schema.Schema<A, I, R>) =>
  Schema.Array(item)
    .annotations({ message: () => "must be an array" })
    .pipe(Schema.filter((items) => items.length > 0, { message: () => "should not be empty" }))

const InputMessage = Schema.Struct({
  role: Schema.Literal("user").annotations({ message: () => "must be one of the following values: user" }),
  content: nonEmptyArray(InputContent),
  metadata: opt(JsonObject),
  additionalContext: opt(JsonObject)
})

const InitialMessage = Schema.Struct({
  role: oneOf("user", "system", "assistant"),
  content: nonEmptyArray(Schema.Union(TextContent, ResourceContent).annotations({ message: () => "must be a text or resource block" })),
  metadata: opt(JsonObject)
})

const Tool = Schema.Struct({
  name: NonEmptyStr,
  description: NonEmptyStr,
  inputSchema: JsonObject,
  outputSchema: opt(JsonObject),
  strict: opt(Bool),
  maxCalls: opt(Schema.Int.annotations({ message: () => "must be an integer number" }).pipe(
    Schema.filter((n) => n >= 1, { message: () => "must not be less than 1" })
  ))
})

const AvailableComponent = Schema.Struct({
  name: NonEmptyStr,
  description: NonEmptyStr,
  propsSchema: JsonObject,
  stateSchema: opt(JsonObject)
})

const ToolChoice = Schema.Union(
  Schema.Literal("auto", "required", "none"),
  Schema.Struct({ name: opt(Str) })
).annotations({ message: () => "must be \"auto\", \"required\", \"none\" or { name }" })

const runFields = {
  message: InputMessage,
  userKey: opt(Str),
  availableComponents: opt(Schema.Array(AvailableComponent)),
  tools: opt(Schema.Array(Tool)),
  toolChoice: opt(ToolChoice),
  previousRunId: opt(Str),
  model: opt(Str),
  maxTokens: opt(Num.pipe(Schema.filter((n) => n >= 1, { message: () => "must not be less than 1" }))),
  temperature: opt(between(0, 2)),
  runMetadata: opt(JsonObject)
}

export const RunBody = Schema.Struct(runFields)
export type RunBody = typeof RunBody.Type

export const CreateRunBody = Schema.Struct({
  ...runFields,
  thread: opt(Schema.Struct({
    userKey: opt(Str),
    metadata: opt(JsonObject),
    initialMessages: opt(Schema.Array(InitialMessage))
  })),
  threadMetadata: opt(JsonObject)
})
export type CreateRunBody = typeof CreateRunBody.Type

export const CreateThreadBody = Schema.Struct({
  userKey: opt(Str),
  metadata: opt(JsonObject),
  initialMessages: opt(Schema.Array(InitialMessage))
})

export type InitialMessage = typeof InitialMessage.Type

export const UpdateThreadBody = Schema.Struct({ name: opt(Str), metadata: opt(JsonObject) })

export const GenerateSuggestionsBody = Schema.Struct({
  userKey: opt(Str),
  maxSuggestions: opt(between(1, 10)),
  availableComponents: opt(Schema.Array(AvailableComponent))
})

const JsonPatchOperation = Schema.Struct({
  op: oneOf("add", "remove", "replace", "move", "copy", "test"),
  path: Str,
  value: Schema.optionalWith(Schema.Unknown, { exact: true }),
  from: opt(Str)
})
export type JsonPatchOperationBody = typeof JsonPatchOperation.Type

export const ComponentStateBody = Schema.Struct({
  userKey: opt(Str),
  state: opt(JsonObject),
  patch: opt(Schema.Array(JsonPatchOperation))
})

export const OAuthTokenBody = Schema.Struct({
  grant_type: NonEmptyStr,
  subject_token: NonEmptyStr,
  subject_token_type: NonEmptyStr,
  audience: opt(Str),
  scope: opt(Str)
})

export const McpTokenBody = Schema.Struct({ threadId: opt(NonEmptyStr), contextKey: opt(NonEmptyStr) })

/** Query numbers arrive as strings (class-transformer's `@Type(() => Number)`). */
const QueryInt = (min: number, max: number) =>
  Schema.NumberFromString.annotations({ message: () => "must be an integer number" }).pipe(
    Schema.filter((n) => Number.isInteger(n), { message: () => "must be an integer number" }),
    Schema.filter((n) => n >= min, { message: () => `must not be less than ${min}` }),
    Schema.filter((n) => n <= max, { message: () => `must not be greater than ${max}` })
  )

export const ThreadsQuery = Schema.Struct({ limit: opt(QueryInt(1, 100)), cursor: opt(Str), userKey: opt(Str) })

export const MessagesQuery = Schema.Struct({
  limit: opt(QueryInt(1, 100)),
  cursor: opt(Str),
  order: opt(oneOf("asc", "desc"))
})

export const SuggestionsQuery = Schema.Struct({ limit: opt(QueryInt(1, 100)), cursor: opt(Str) })

/** One message per property (a union reports every member it tried). */
const formatIssues = (error: ParseResult.ParseError): Array<string> => {
  const byPath = new Map<string, string>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const path = issue.path.map(String).join(".")
    if (byPath.has(path)) continue
    const problem = issue._tag === "Missing" ? "should not be empty" : issue.message
    byPath.set(path, path === "" ? problem : `${path} ${problem}`)
  }
  return [...byPath.values()]
}

/** class-validator's `@IsOptional()` treats a `null` property like a missing one. */
const withoutNullProperties = (input: unknown): unknown => {
  if (Array.isArray(input)) return input.map(withoutNullProperties)
  if (typeof input !== "object" || input === null) return input
  const out: { [key: string]: unknown } = {}
  for (const [key, value] of Object.entries(input)) {
    if (value !== null) out[key] = withoutNullProperties(value)
  }
  return out
}

/** Decodes `input` or throws the API's validation 400. */
export const decodeOrFail = <A, I>(schema: Schema.Schema<A, I, never>, input: unknown): A => {
  const result = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "ignore" })(withoutNullProperties(input))
  if (Either.isRight(result)) return result.right
  throw badRequest(formatIssues(result.left))
}
