/**
 * AG-UI 1.0's request and message shapes, as Effect Schemas: what a run
 * request carries (`RunAgentInput`) and what a `MESSAGES_SNAPSHOT` holds.
 * Only the fields this SDK reads or writes are declared; other fields are
 * kept (structs are not exact), as the protocol grows.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"

const Json = Schema.Unknown

/**
 * A function call of an assistant message.
 *
 * @since 0.2.0
 * @category Schemas
 */
export const ToolCall = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("function"),
  function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
})
/** @since 0.2.0 @category Models */
export type ToolCall = typeof ToolCall.Type

const Source = Schema.Union(
  Schema.Struct({ type: Schema.Literal("data"), value: Schema.String, mimeType: Schema.String }),
  Schema.Struct({ type: Schema.Literal("url"), value: Schema.String, mimeType: Schema.optional(Schema.String) })
)

/**
 * One part of a multimodal user message (text, or media by data or URL).
 *
 * @since 0.2.0
 * @category Schemas
 */
export const ContentPart = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("image", "audio", "video", "document"), source: Source })
)
/** @since 0.2.0 @category Models */
export type ContentPart = typeof ContentPart.Type

/**
 * One message of an AG-UI conversation.
 *
 * @since 0.2.0
 * @category Schemas
 */
export const Message = Schema.Union(
  Schema.Struct({ id: Schema.String, role: Schema.Literal("developer", "system"), content: Schema.String }),
  Schema.Struct({
    id: Schema.String,
    role: Schema.Literal("user"),
    content: Schema.Union(Schema.String, Schema.Array(ContentPart))
  }),
  Schema.Struct({
    id: Schema.String,
    role: Schema.Literal("assistant"),
    content: Schema.optional(Schema.String),
    toolCalls: Schema.optional(Schema.Array(ToolCall))
  }),
  Schema.Struct({
    id: Schema.String,
    role: Schema.Literal("tool"),
    toolCallId: Schema.String,
    content: Schema.Union(Schema.String, Schema.Array(ContentPart)),
    error: Schema.optional(Schema.String)
  }),
  Schema.Struct({ id: Schema.String, role: Schema.Literal("reasoning"), content: Schema.String }),
  Schema.Struct({
    id: Schema.String,
    role: Schema.Literal("activity"),
    activityType: Schema.String,
    content: Schema.Record({ key: Schema.String, value: Json })
  })
)
/** @since 0.2.0 @category Models */
export type Message = typeof Message.Type

/**
 * A tool the client offers (a frontend tool): name, description, JSON Schema.
 *
 * @since 0.2.0
 * @category Schemas
 */
export const Tool = Schema.Struct({ name: Schema.String, description: Schema.String, parameters: Json })
/** @since 0.2.0 @category Models */
export type Tool = typeof Tool.Type

/**
 * A piece of context the client sends with a run.
 *
 * @since 0.2.0
 * @category Schemas
 */
export const Context = Schema.Struct({ description: Schema.String, value: Schema.String })
/** @since 0.2.0 @category Models */
export type Context = typeof Context.Type

/**
 * The body of a run request.
 *
 * @since 0.2.0
 * @category Schemas
 */
export const RunAgentInput = Schema.Struct({
  threadId: Schema.String,
  runId: Schema.String,
  parentRunId: Schema.optional(Schema.String),
  state: Json,
  messages: Schema.Array(Message),
  tools: Schema.Array(Tool),
  context: Schema.Array(Context),
  forwardedProps: Json
})
/** @since 0.2.0 @category Models */
export type RunAgentInput = typeof RunAgentInput.Type
