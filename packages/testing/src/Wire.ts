/**
 * The shapes the Tambo v1 API puts on the wire, as this test server produces and accepts them.
 *
 * They mirror the API's DTOs field for field (optional fields are omitted, never `null`), so a
 * snapshot taken with `server.threads.get(id)` equals what `GET /v1/threads/{id}` answers.
 *
 * @since 0.1.0
 */

/**
 * A JSON object as it appears on the wire.
 *
 * @since 0.1.0
 * @category Models
 */
export type JsonObject = { readonly [key: string]: unknown }

/**
 * @since 0.1.0
 * @category Content
 */
export interface TextContent {
  readonly type: "text"
  readonly text: string
}

/**
 * A resource block (`uri`, `text`, `blob`, `mimeType`, `name`, ...) passed through as sent.
 *
 * @since 0.1.0
 * @category Content
 */
export interface ResourceContent {
  readonly type: "resource"
  readonly resource: JsonObject
}

/**
 * @since 0.1.0
 * @category Content
 */
export interface ToolUseContent {
  readonly type: "tool_use"
  readonly id: string
  readonly name: string
  readonly input: JsonObject
}

/**
 * @since 0.1.0
 * @category Content
 */
export interface ToolResultContent {
  readonly type: "tool_result"
  readonly toolUseId: string
  readonly content: ReadonlyArray<TextContent | ResourceContent>
  readonly isError?: boolean
}

/**
 * @since 0.1.0
 * @category Content
 */
export interface ComponentContent {
  readonly type: "component"
  readonly id: string
  readonly name: string
  readonly props: JsonObject
  readonly state?: JsonObject
}

/**
 * Any content block of a stored message.
 *
 * @since 0.1.0
 * @category Content
 */
export type Content = TextContent | ResourceContent | ToolUseContent | ToolResultContent | ComponentContent

/**
 * The content blocks a user message may carry in a run request.
 *
 * @since 0.1.0
 * @category Content
 */
export type InputContent = TextContent | ResourceContent | ToolResultContent

/**
 * The `message` of a run request.
 *
 * @since 0.1.0
 * @category Requests
 */
export interface InputMessage {
  readonly role: "user"
  readonly content: ReadonlyArray<InputContent>
  readonly metadata?: JsonObject
  readonly additionalContext?: JsonObject
}

/**
 * A client-side tool declared in a run request.
 *
 * @since 0.1.0
 * @category Requests
 */
export interface Tool {
  readonly name: string
  readonly description: string
  readonly inputSchema: JsonObject
  readonly outputSchema?: JsonObject
  readonly strict?: boolean
  readonly maxCalls?: number
}

/**
 * A UI component declared in a run request.
 *
 * @since 0.1.0
 * @category Requests
 */
export interface AvailableComponent {
  readonly name: string
  readonly description: string
  readonly propsSchema: JsonObject
  readonly stateSchema?: JsonObject
}

/**
 * How the model should use tools, as sent by the client.
 *
 * @since 0.1.0
 * @category Requests
 */
export type ToolChoice = "auto" | "required" | "none" | { readonly name?: string }

/**
 * A stored message. Tool results the client sent are stored as messages of role `assistant`
 * holding one `tool_result` block: the API maps its internal `tool` role that way.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Message {
  readonly id: string
  readonly role: "user" | "assistant" | "system"
  readonly content: ReadonlyArray<Content>
  readonly createdAt: string
  readonly metadata?: JsonObject
  readonly parentMessageId?: string
  readonly isCancelled?: boolean
}

/**
 * @since 0.1.0
 * @category Models
 */
export type RunStatus = "idle" | "waiting" | "streaming"

/**
 * A thread as `GET /v1/threads` lists it.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Thread {
  readonly id: string
  readonly name?: string
  readonly userKey?: string
  readonly runStatus: RunStatus
  readonly currentRunId?: string
  readonly statusMessage?: string
  readonly lastRunCancelled?: boolean
  readonly lastRunError?: { readonly code?: string; readonly message: string }
  readonly pendingToolCallIds?: ReadonlyArray<string>
  readonly lastCompletedRunId?: string
  readonly metadata?: JsonObject
  readonly createdAt: string
  readonly updatedAt: string
}

/**
 * A thread with its messages, as `GET /v1/threads/{id}` answers it.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ThreadWithMessages extends Thread {
  readonly messages: ReadonlyArray<Message>
}

/**
 * @since 0.1.0
 * @category Models
 */
export interface Suggestion {
  readonly id: string
  readonly messageId: string
  readonly title: string
  readonly description: string
  readonly detailedSuggestion: string
  /** @since 0.2.0 */
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
  readonly createdAt: string
}

/**
 * A tool call the run left for the client to execute (`tambo.run.awaiting_input`).
 *
 * @since 0.1.0
 * @category Events
 */
export interface PendingToolCall {
  readonly toolCallId: string
  readonly toolName: string
  readonly arguments: string
}

/**
 * An RFC 6902 JSON Patch operation.
 *
 * @since 0.1.0
 * @category Models
 */
export type JsonPatchOperation =
  | { readonly op: "add" | "replace" | "test"; readonly path: string; readonly value: unknown }
  | { readonly op: "remove"; readonly path: string }
  | { readonly op: "move" | "copy"; readonly from: string; readonly path: string }

/**
 * Per-prop streaming status carried by `tambo.component.props_delta`.
 *
 * @since 0.1.0
 * @category Events
 */
export type PropStreamingStatus = "started" | "streaming" | "done"
