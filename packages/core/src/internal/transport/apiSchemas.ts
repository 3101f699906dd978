/**
 * Schemas of the REST responses of the Tambo v1 API: every response is
 * decoded at the boundary, never cast.
 */
import * as Schema from "effect/Schema"

const Json = Schema.Unknown

export const TextContent = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })

/** Decoded to the client's `Resource` shape: no cast is needed downstream. */
const Resource = Schema.Struct({
  annotations: Schema.optionalWith(
    Schema.Struct({
      audience: Schema.optionalWith(Schema.mutable(Schema.Array(Schema.String)), { exact: true }),
      priority: Schema.optionalWith(Schema.Number, { exact: true })
    }),
    { exact: true }
  ),
  blob: Schema.optionalWith(Schema.String, { exact: true }),
  description: Schema.optionalWith(Schema.String, { exact: true }),
  mimeType: Schema.optionalWith(Schema.String, { exact: true }),
  name: Schema.optionalWith(Schema.String, { exact: true }),
  text: Schema.optionalWith(Schema.String, { exact: true }),
  uri: Schema.optionalWith(Schema.String, { exact: true })
})

export const ResourceContent = Schema.Struct({
  type: Schema.Literal("resource"),
  resource: Resource
})

export const ToolUseContent = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: Json
})

export const ToolResultContent = Schema.Struct({
  type: Schema.Literal("tool_result"),
  toolUseId: Schema.String,
  content: Schema.Array(Schema.Union(TextContent, ResourceContent)),
  isError: Schema.optional(Schema.Boolean)
})

export const ComponentContent = Schema.Struct({
  type: Schema.Literal("component"),
  id: Schema.String,
  name: Schema.String,
  props: Json,
  state: Schema.optional(Json)
})

export const Content = Schema.Union(TextContent, ResourceContent, ToolUseContent, ToolResultContent, ComponentContent)

export const Message = Schema.Struct({
  id: Schema.String,
  role: Schema.Literal("user", "assistant", "system"),
  content: Schema.Array(Content),
  createdAt: Schema.optional(Schema.String),
  isCancelled: Schema.optional(Schema.Boolean),
  metadata: Schema.optional(Json),
  parentMessageId: Schema.optional(Schema.String)
})
export type Message = typeof Message.Type

export const RunError = Schema.Struct({ message: Schema.String, code: Schema.optional(Schema.String) })

const threadFields = {
  id: Schema.String,
  createdAt: Schema.String,
  updatedAt: Schema.String,
  runStatus: Schema.Literal("idle", "waiting", "streaming"),
  currentRunId: Schema.optional(Schema.String),
  lastCompletedRunId: Schema.optional(Schema.String),
  lastRunCancelled: Schema.optional(Schema.Boolean),
  lastRunError: Schema.optional(RunError),
  metadata: Schema.optional(Json),
  name: Schema.optional(Schema.String),
  pendingToolCallIds: Schema.optional(Schema.Array(Schema.String)),
  statusMessage: Schema.optional(Schema.String),
  userKey: Schema.optional(Schema.String)
}

export const ThreadSummary = Schema.Struct(threadFields)
export type ThreadSummary = typeof ThreadSummary.Type

export const ThreadWithMessages = Schema.Struct({ ...threadFields, messages: Schema.Array(Message) })
export type ThreadWithMessages = typeof ThreadWithMessages.Type

export const ThreadList = Schema.Struct({
  threads: Schema.Array(ThreadSummary),
  hasMore: Schema.Boolean,
  nextCursor: Schema.optional(Schema.String)
})
export type ThreadList = typeof ThreadList.Type

export const MessageList = Schema.Struct({
  messages: Schema.Array(Message),
  hasMore: Schema.Boolean,
  nextCursor: Schema.optional(Schema.String)
})
export type MessageList = typeof MessageList.Type

export const Suggestion = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  detailedSuggestion: Schema.String,
  description: Schema.optional(Schema.String),
  messageId: Schema.optional(Schema.String),
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
export type Suggestion = typeof Suggestion.Type

export const SuggestionList = Schema.Struct({
  suggestions: Schema.Array(Suggestion),
  hasMore: Schema.optional(Schema.Boolean),
  nextCursor: Schema.optional(Schema.String)
})

export const ComponentStateResponse = Schema.Struct({
  state: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

export const GenerateNameResponse = Schema.Struct({
  name: Schema.optional(Schema.NullOr(Schema.String)),
  updatedAt: Schema.optional(Schema.String)
})

export const McpToken = Schema.Struct({
  mcpAccessToken: Schema.optional(Schema.String),
  expiresAt: Schema.optional(Schema.Number),
  hasSession: Schema.optional(Schema.Boolean)
})

export const TokenExchange = Schema.Struct({
  access_token: Schema.String,
  expires_in: Schema.Number,
  token_type: Schema.String,
  issued_token_type: Schema.optional(Schema.String)
})

/** An error body: RFC 9457 problem details, or NestJS's default shape. */
export const ErrorBody = Schema.Struct({
  type: Schema.optional(Schema.String),
  title: Schema.optional(Schema.String),
  detail: Schema.optional(Schema.String),
  code: Schema.optional(Schema.String),
  status: Schema.optional(Schema.Number),
  statusCode: Schema.optional(Schema.Number),
  message: Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.String)))
})
