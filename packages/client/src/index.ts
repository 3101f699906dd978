/**
 * `@tambo-effect/client`: a Promise API over `@tambo-effect/core` for Node
 * scripts, Vue, Svelte and anyone who does not write Effect. Its surface is
 * `@tambo-ai/client`'s.
 *
 * @since 0.1.0
 */

export {
  /**
   * @since 0.2.0
   * @category Models
   */
  type AgentClientOptions,
  /**
   * @since 0.2.0
   * @category Models
   */
  type AgentConnection,
  /**
   * @since 0.1.0
   * @category Models
   */
  type ApprovalDecision,
  /**
   * @since 0.1.0
   * @category Models
   */
  type ApprovalHandler,
  /**
   * @since 0.1.0
   * @category Models
   */
  type AvailableComponent,
  /**
   * @since 0.1.0
   * @category Models
   */
  type BeforeRun,
  /**
   * @since 0.1.0
   * @category Models
   */
  type BeforeRunContext,
  /**
   * @since 0.1.0
   * @category Models
   */
  type BusyPolicy,
  /**
   * @since 0.1.0
   * @category Models
   */
  type ComponentRegistration,
  /**
   * @since 0.1.0
   * @category Models
   */
  type ContextHelperFn,
  /**
   * @since 0.2.0
   * @category Models
   */
  type ContextHelperRun,
  /**
   * @since 0.1.0
   * @category Models
   */
  type InputMessage,
  /**
   * @since 0.2.0
   * @category Models
   */
  type McpConnectionInfo,
  /**
   * @since 0.2.0
   * @category Models
   */
  type McpConnections,
  /**
   * @since 0.2.0
   * @category Models
   */
  type McpServerClient,
  /**
   * @since 0.1.0
   * @category Models
   */
  type McpServerInfo,
  /**
   * @since 0.1.0
   * @category Models
   */
  type PendingToolCallInfo,
  /**
   * @since 0.1.0
   * @category Models
   */
  type RunOptions,
  /**
   * @since 0.1.0
   * @category Models
   */
  type RunSnapshot,
  /**
   * @since 0.2.0
   * @category Models
   */
  type TranscribeOptions,
  /**
   * @since 0.1.0
   * @category Models
   */
  type SubscribeToSnapshotsOptions,
  /**
   * @since 0.1.0
   * @category Models
   */
  type Suggestion,
  /**
   * @since 0.1.0
   * @category Models
   */
  type ThreadPage,
  /**
   * @since 0.1.0
   * @category Models
   */
  type TamboAuthState,
  /**
   * @since 0.1.0
   * @category Models
   */
  TamboClient,
  /**
   * @since 0.1.0
   * @category Models
   */
  type TamboClientOptions,
  /**
   * @since 0.2.0
   * @category Models
   */
  type TamboApiClientOptions,
  /**
   * @since 0.2.0
   * @category Models
   */
  type TamboOnlyOption,
  /**
   * @since 0.1.0
   * @category Models
   */
  type ToolCallResult,
  /**
   * @since 0.2.0
   * @category Models
   */
  type ToolCallParameter,
  /**
   * @since 0.1.0
   * @category Models
   */
  type ToolDefinition,
  /**
   * @since 0.2.0
   * @category Models
   */
  type UnregisteredToolHandler
} from "./TamboClient.js"

export {
  /**
   * @since 0.1.0
   * @category Constants
   */
  EVENT_BUFFER,
  /**
   * @since 0.1.0
   * @category Models
   */
  type SnapshotsOptions,
  /**
   * @since 0.1.0
   * @category Models
   */
  type StreamEvent,
  /**
   * @since 0.1.0
   * @category Models
   */
  TamboStream
} from "./TamboStream.js"

/**
 * Update strategies for streamed runs (core's `SnapshotStrategy`): which
 * snapshots `stream.snapshots({ strategy })` and `subscribeToSnapshots`
 * publish, and when.
 *
 * @since 0.1.0
 * @category Modules
 */
export * as SnapshotStrategy from "./SnapshotStrategy.js"

export {
  /**
   * @since 0.1.0
   * @category Models
   */
  type ClientState,
  /**
   * @since 0.1.0
   * @category Constructors
   */
  createInitialState,
  /**
   * @since 0.1.0
   * @category Constructors
   */
  InMemoryStore,
  /**
   * @since 0.1.0
   * @category Models
   */
  type TamboStore
} from "./Store.js"

export {
  /**
   * @since 0.1.0
   * @category Errors
   */
  AbortError,
  /**
   * @since 0.1.0
   * @category Models
   */
  type AbortReason,
  /**
   * A failure of AG-UI's own, against an AG-UI agent (`agent` option): a
   * conversation, context or state that cannot be sent as a `RunAgentInput`
   * (`InvalidInput`: the run rejects before anything is sent), a refused
   * `STATE_DELTA` (`InvalidStateDelta`), a `MESSAGES_SNAPSHOT` that is not
   * AG-UI messages (`InvalidMessages`). Its `message` says what, and why.
   *
   * @since 0.2.0
   * @category Errors
   */
  AgUiError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  ApiError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  AuthError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  CallbackError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  ConfigError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  DecodeError,
  /**
   * @since 0.1.0
   * @category Models
   */
  type ErrorTag,
  /**
   * @since 0.1.0
   * @category Guards
   */
  isAbortError,
  /**
   * @since 0.2.0
   * @category Guards
   */
  isNotSupportedError,
  /**
   * @since 0.1.0
   * @category Guards
   */
  isTamboClientError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  MaxStepsExceededError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  McpError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  NotSupportedError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  RunCancelledError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  RunConflictError,
  /**
   * @since 0.1.0
   * @category Models
   */
  type TamboClientError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  ToolCallError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  ToolDefinitionError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  ToolError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  TranscriptionError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  TransportError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  UnknownError
} from "./errors.js"

export {
  /**
   * @since 0.1.0
   * @category Guards
   */
  isPlaceholderThreadId,
  /**
   * The id of the thread a new conversation lives in until its first run.
   *
   * @since 0.1.0
   * @category Constants
   */
  PLACEHOLDER_THREAD_ID,
  /**
   * @since 0.1.0
   * @category Models
   */
  type ThreadState
} from "@tambo-effect/core/ClientState"

export {
  /**
   * @since 0.2.0
   * @category Utils
   */
  getMcpServerUniqueKey,
  /**
   * @since 0.2.0
   * @category Guards
   */
  hasRequestedSchema,
  /**
   * @since 0.2.0
   * @category Constants
   */
  MCPTransport,
  /**
   * @since 0.2.0
   * @category Constants
   */
  REGISTRY_SERVER_KEY,
  /**
   * @since 0.2.0
   * @category Constants
   */
  ServerType,
  /**
   * @since 0.2.0
   * @category Utils
   */
  toElicitationRequestedSchema
} from "./UpstreamMcp.js"

export {
  /**
   * @since 0.2.0
   * @category Constructors
   */
  MCPClient,
  /**
   * @since 0.2.0
   * @category Models
   */
  type MCPClientOptions
} from "./MCPClient.js"

export {
  /**
   * @since 0.2.0
   * @category Utils
   */
  asTamboCustomEvent,
  /**
   * @since 0.2.0
   * @category Models
   */
  type ComponentEndEvent,
  /**
   * @since 0.2.0
   * @category Models
   */
  type ComponentPropsDeltaEvent,
  /**
   * @since 0.2.0
   * @category Models
   */
  type ComponentStartEvent,
  /**
   * @since 0.2.0
   * @category Models
   */
  type ComponentStateDeltaEvent,
  /**
   * @since 0.2.0
   * @category Guards
   */
  isTamboCustomEvent,
  /**
   * @since 0.2.0
   * @category Models
   */
  type MessageParentEvent,
  /**
   * @since 0.2.0
   * @category Models
   */
  type PendingToolCallEvent,
  /**
   * @since 0.2.0
   * @category Models
   */
  type RunAwaitingInputEvent,
  /**
   * @since 0.2.0
   * @category Models
   */
  type TamboCustomEvent
} from "./UpstreamEvents.js"

export type {
  /**
   * @since 0.1.0
   * @category Models
   */
  RunStreamEvent,
  /**
   * What `updateComponentState` takes: the whole state, or JSON Patch operations.
   *
   * @since 0.2.0
   * @category Models
   */
  ComponentStateUpdate
} from "@tambo-effect/core/TamboTransport"

export type {
  /**
   * @since 0.1.0
   * @category Models
   */
  ClientEvent
} from "@tambo-effect/core/Tambo"

export type {
  /**
   * @since 0.1.0
   * @category Models
   */
  SupportedSchema,
  /**
   * @since 0.1.0
   * @category Models
   */
  TamboTool,
  /**
   * @since 0.1.0
   * @category Models
   */
  ToolCallContext
} from "@tambo-effect/core/Tool"

export type {
  /**
   * @since 0.1.0
   * @category Models
   */
  ComponentStreamingState,
  /**
   * A message that opens a new thread (`initialMessages`).
   *
   * @since 0.2.0
   * @category Models
   */
  InitialInputMessage,
  /**
   * @since 0.1.0
   * @category Models
   */
  Content,
  /**
   * @since 0.1.0
   * @category Models
   */
  MessageRole,
  /**
   * @since 0.1.0
   * @category Models
   */
  ResourceContent,
  /**
   * @since 0.1.0
   * @category Models
   */
  RunStatus,
  /**
   * @since 0.1.0
   * @category Models
   */
  StreamingState,
  /**
   * @since 0.1.0
   * @category Models
   */
  TamboComponentContent,
  /**
   * @since 0.1.0
   * @category Models
   */
  TamboThread,
  /**
   * @since 0.1.0
   * @category Models
   */
  TamboThreadMessage,
  /**
   * @since 0.1.0
   * @category Models
   */
  TamboToolUseContent,
  /**
   * What a tool call shows while it runs and once done (`tamboDisplayProps` of its block).
   *
   * @since 0.2.0
   * @category Models
   */
  TamboToolDisplayProps,
  /**
   * @since 0.1.0
   * @category Models
   */
  TextContent,
  /**
   * @since 0.1.0
   * @category Models
   */
  ToolChoice,
  /**
   * @since 0.1.0
   * @category Models
   */
  ToolResultContent
} from "@tambo-effect/core/Types"

export {
  /**
   * @since 0.2.0
   * @category Schemas
   */
  assertNoRecordSchema,
  /**
   * @since 0.2.0
   * @category Constants
   */
  CLIENT_VERSION,
  /**
   * @since 0.2.0
   * @category Schemas
   */
  getParametersFromToolSchema,
  /**
   * @since 0.2.0
   * @category Schemas
   */
  isStandardSchema,
  /**
   * @since 0.2.0
   * @category Schemas
   */
  looksLikeJSONSchema,
  /**
   * @since 0.2.0
   * @category Schemas
   */
  makeJsonSchemaPartial,
  /**
   * @since 0.2.0
   * @category Schemas
   */
  safeSchemaToJsonSchema,
  /**
   * @since 0.2.0
   * @category Schemas
   */
  schemaToJsonSchema
} from "./UpstreamSchema.js"

// The names @tambo-ai/client gives these shapes, each documented where it is declared.
export type * from "./UpstreamNames.js"
