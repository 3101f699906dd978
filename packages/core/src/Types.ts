/**
 * The public thread, message and content shapes.
 *
 * They are defined here, not imported, so that core never needs
 * `@tambo-ai/client` at runtime; a type test keeps them assignable both ways
 * to that package's types, so code written against it compiles unchanged.
 * Arrays are mutable on purpose: upstream declares them mutable, and a
 * `ReadonlyArray` would not be assignable back to it.
 *
 * @since 0.1.0
 */

/**
 * A block of plain text.
 *
 * @since 0.1.0
 * @category Content
 */
export interface TextContent {
  text: string
  type: "text"
}

/**
 * Hints about who a resource is for and how important it is.
 *
 * @since 0.1.0
 * @category Content
 */
export interface ResourceAnnotations {
  audience?: Array<string>
  priority?: number
}

/**
 * A file, URL or inline data, as the API describes it (MCP-style resource).
 *
 * @since 0.1.0
 * @category Content
 */
export interface Resource {
  annotations?: ResourceAnnotations
  blob?: string
  description?: string
  mimeType?: string
  name?: string
  text?: string
  uri?: string
  /**
   * In a message the client sends: the key of the MCP server (or
   * `"registry"` for the app's own resources) `uri` is read from. The SDK
   * reads it before sending and sends its contents instead.
   */
  serverKey?: string
}

/**
 * A block carrying a resource.
 *
 * @since 0.1.0
 * @category Content
 */
export interface ResourceContent {
  resource: Resource
  type: "resource"
}

/**
 * The answer to a tool call: text and resource blocks, flagged when the tool
 * failed.
 *
 * @since 0.1.0
 * @category Content
 */
export interface ToolResultContent {
  content: Array<TextContent | ResourceContent>
  toolUseId: string
  type: "tool_result"
  isError?: boolean
}

/**
 * A component block as the API returns it.
 *
 * @since 0.1.0
 * @category Content
 */
export interface ComponentContent {
  id: string
  name: string
  props: unknown
  type: "component"
  state?: unknown
}

/**
 * A tool call as the API returns it.
 *
 * @since 0.1.0
 * @category Content
 */
export interface ToolUseContent {
  id: string
  input: unknown
  name: string
  type: "tool_use"
}

/**
 * Lifecycle of a component's streamed props.
 *
 * @since 0.1.0
 * @category Content
 */
export type ComponentStreamingState = "started" | "streaming" | "done"

/**
 * A component block with its streaming lifecycle. Messages loaded from the
 * API may lack `streamingState`; treat that as `"done"`.
 *
 * @since 0.1.0
 * @category Content
 */
export interface TamboComponentContent extends ComponentContent {
  streamingState?: ComponentStreamingState
  /** Per prop, as the API last reported it (`started`, `streaming`, `done`). */
  streamingStatus?: Readonly<Record<string, string>>
}

/**
 * Display hints a tool call may carry in its input.
 *
 * @since 0.1.0
 * @category Content
 */
export interface TamboToolDisplayProps {
  _tambo_statusMessage?: string
  _tambo_completionStatusMessage?: string
}

/**
 * A tool call block. `input` holds the arguments parsed so far while they
 * stream, and the complete arguments once the call ended. The optional
 * fields are computed by UI layers, never by the accumulator.
 *
 * @since 0.1.0
 * @category Content
 */
export interface TamboToolUseContent extends Omit<ToolUseContent, "input"> {
  input: Record<string, unknown>
  hasCompleted?: boolean
  statusMessage?: string
  tamboDisplayProps?: TamboToolDisplayProps
}

/**
 * Who wrote a message.
 *
 * @since 0.1.0
 * @category Messages
 */
export type MessageRole = "user" | "assistant" | "system"

/**
 * Any content block of a message.
 *
 * @since 0.1.0
 * @category Content
 */
export type Content =
  | TextContent
  | TamboToolUseContent
  | ToolResultContent
  | TamboComponentContent
  | ResourceContent

/**
 * A message of a thread.
 *
 * `reasoning` and `reasoningDurationMS` exist only while the message was
 * streamed in this client; the API does not store them.
 *
 * @since 0.1.0
 * @category Messages
 */
export interface TamboThreadMessage {
  id: string
  role: MessageRole
  content: Array<Content>
  createdAt?: string
  metadata?: Record<string, unknown>
  parentMessageId?: string
  reasoning?: Array<string>
  reasoningDurationMS?: number
  /**
   * Set when the run streaming this message was cancelled: the message holds
   * what the server kept of it.
   *
   * @since 0.1.0
   */
  isCancelled?: boolean
  /**
   * A stable identity for rendering (a React `key`): the id the message was
   * first shown under, when the server's id later replaced a local one (the
   * user's message, a reply with no text before its tool call). Absent
   * otherwise: use `key ?? id`. Never sent to the API.
   *
   * @since 0.1.0
   */
  key?: string
}

/**
 * Where a thread's run lifecycle is: `waiting` means paused for client-side
 * tools.
 *
 * @since 0.1.0
 * @category Threads
 */
export type RunStatus = "idle" | "waiting" | "streaming"

/**
 * A conversation.
 *
 * @since 0.1.0
 * @category Threads
 */
export interface TamboThread {
  id: string
  name?: string
  messages: Array<TamboThreadMessage>
  status: RunStatus
  metadata?: Record<string, unknown>
  createdAt: string
  updatedAt: string
  /** Whether the last run was cancelled; reset when a run starts. */
  lastRunCancelled: boolean
  /**
   * Why the last run failed, as the server stored it (after a run ended, see
   * the client's reconciliation); absent when it did not fail.
   *
   * @since 0.1.0
   */
  lastRunError?: { code?: string; message: string }
  /**
   * The AG-UI agent's shared state for this thread: what its `STATE_SNAPSHOT`
   * and `STATE_DELTA` events made it, or what the app set
   * (`Tambo.setAgentState`). Sent with the thread's next run to an AG-UI
   * agent; absent until either sets it (`{}` is sent then).
   *
   * @since 0.2.0
   */
  state?: unknown
}

/**
 * Progress of the thread's current (or last) run.
 *
 * @since 0.1.0
 * @category Threads
 */
export interface StreamingState {
  status: RunStatus
  runId?: string
  /** The message being streamed, if any. */
  messageId?: string
  /** Epoch milliseconds. */
  startTime?: number
  /** Epoch milliseconds; the start of the run's first reasoning chunk. */
  reasoningStartTime?: number
  /** Why the last run failed; absent when it succeeded or was cancelled. */
  error?: {
    message: string
    code?: string
    category?: "client_error" | "server_error"
    isRetryable?: boolean
    status?: number
  }
}

/**
 * How the model may pick tools.
 *
 * @since 0.1.0
 * @category Runs
 */
export type ToolChoice = "auto" | "required" | "none" | { name: string }

/**
 * A message the client sends to start or continue a run.
 *
 * @since 0.1.0
 * @category Runs
 */
export interface InputMessage {
  content: Array<TextContent | ResourceContent | ToolResultContent>
  role: "user"
  additionalContext?: unknown
  metadata?: unknown
}

/**
 * A message that seeds a new thread.
 *
 * @since 0.1.0
 * @category Runs
 */
export interface InitialInputMessage {
  content: Array<TextContent | ResourceContent>
  role: "user" | "system" | "assistant"
  metadata?: unknown
}
