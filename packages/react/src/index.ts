/**
 * `@tambo-effect/react`: React bindings for `@tambo-effect/client`. A
 * provider holds one `TamboClient`; hooks read its state through
 * `useSyncExternalStore` with selectors; generative components render from
 * streamed props. The client does all the work: runs, tools, threads.
 *
 * @since 0.1.0
 */

export {
  /**
   * @since 0.1.0
   * @category Components
   */
  TamboProvider,
  /**
   * @since 0.1.0
   * @category Models
   */
  type TamboProviderBaseProps,
  /**
   * @since 0.1.0
   * @category Models
   */
  type TamboProviderProps,
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboClient,
  /**
   * @since 0.2.0
   * @category Hooks
   */
  useTamboConfig,
  /**
   * @since 0.2.0
   * @category Components
   */
  TamboClientProvider,
  /**
   * @since 0.2.0
   * @category Components
   */
  TamboContextHelpersProvider,
  /**
   * @since 0.2.0
   * @category Components
   */
  TamboRegistryProvider,
  /**
   * @since 0.2.0
   * @category Models
   */
  type TamboRegistryProviderProps
} from "./TamboProvider.js"

export {
  /**
   * @since 0.1.0
   * @category Components
   */
  ComponentRenderer,
  /**
   * @since 0.1.0
   * @category Models
   */
  type ComponentRendererProps,
  /**
   * @since 0.1.0
   * @category Models
   */
  type TamboCurrentComponent,
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboCurrentComponent,
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboCurrentMessage,
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboStreamStatus,
  /**
   * @since 0.2.0
   * @category Components
   */
  ComponentContentProvider,
  /**
   * @since 0.2.0
   * @category Models
   */
  type ComponentContentContext,
  /**
   * @since 0.2.0
   * @category Hooks
   */
  useComponentContent,
  /**
   * @since 0.2.0
   * @category Components
   */
  TamboMessageProvider,
  /**
   * @since 0.2.0
   * @category Models
   */
  type TamboMessageProviderProps
} from "./TamboComponentRenderer.js"

export {
  /**
   * @since 0.1.0
   * @category Models
   */
  type PropStatus,
  /**
   * @since 0.1.0
   * @category Models
   */
  type StreamStatus
} from "./types.js"

export {
  /**
   * @since 0.1.0
   * @category Models
   */
  type QueryState,
  /**
   * @since 0.2.0
   * @category Models
   */
  type TamboQueryOptions
} from "./types.js"

export {
  /**
   * @since 0.1.0
   * @category Models
   */
  type NotifyMode
} from "./types.js"

export {
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTambo,
  /**
   * @since 0.1.0
   * @category Models
   */
  type UseTamboReturn
} from "./useTambo.js"

export {
  /**
   * @since 0.1.0
   * @category Utils
   */
  messageKey
} from "./messageKey.js"

export {
  /**
   * @since 0.1.0
   * @category Utils
   */
  shallowEqual,
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboSelector
} from "./useTamboSelector.js"

export {
  /**
   * @since 0.2.0
   * @category Models
   */
  type UseTamboAgentStateReturn,
  /**
   * @since 0.2.0
   * @category Hooks
   */
  useTamboAgentState
} from "./useTamboAgentState.js"

export {
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboThread,
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboThreadList,
  /**
   * @since 0.1.0
   * @category Models
   */
  type UseTamboThreadListOptions,
  /**
   * @since 0.1.0
   * @category Models
   */
  type UseTamboThreadListReturn,
  /**
   * @since 0.1.0
   * @category Models
   */
  type UseTamboThreadReturn
} from "./threads.js"

export {
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboStreamingMessages,
  /**
   * @since 0.1.0
   * @category Models
   */
  type UseTamboStreamingMessagesOptions,
  /**
   * @since 0.1.0
   * @category Models
   */
  type UseTamboStreamingMessagesReturn
} from "./useTamboStreamingMessages.js"

export {
  /**
   * @since 0.1.0
   * @category Models
   */
  type TamboPendingApproval,
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboPendingApprovals,
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboPendingToolCalls,
  /**
   * @since 0.1.0
   * @category Models
   */
  type UseTamboPendingToolCallsReturn
} from "./toolCalls.js"

export {
  /**
   * @since 0.1.0
   * @category Models
   */
  type SubmitOptions,
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboThreadInput,
  /**
   * @since 0.1.0
   * @category Models
   */
  type UseTamboThreadInputReturn,
  /**
   * @since 0.2.0
   * @category Components
   */
  TamboThreadInputProvider,
  /**
   * @since 0.2.0
   * @category Models
   */
  type TamboThreadInputContextProps
} from "./useTamboThreadInput.js"

export {
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboSuggestions,
  /**
   * @since 0.1.0
   * @category Models
   */
  type UseTamboSuggestionsOptions,
  /**
   * @since 0.1.0
   * @category Models
   */
  type UseTamboSuggestionsReturn
} from "./useTamboSuggestions.js"

export {
  /**
   * @since 0.2.0
   * @category Hooks
   */
  useTamboRunStatus
} from "./useTamboRunStatus.js"

export {
  /**
   * @since 0.2.0
   * @category Hooks
   */
  useTamboVoice,
  /**
   * @since 0.2.0
   * @category Models
   */
  type UseTamboVoiceReturn
} from "./useTamboVoice.js"

export {
  /**
   * @since 0.1.0
   * @category Models
   */
  type Content,
  /**
   * @since 0.1.0
   * @category Models
   */
  type ReactTamboThreadMessage,
  /**
   * @since 0.1.0
   * @category Models
   */
  type TamboComponent,
  /**
   * @since 0.1.0
   * @category Models
   */
  type TamboComponentContent
} from "./types.js"

export {
  /**
   * @since 0.1.0
   * @category Errors
   */
  AbortError,
  /**
   * @since 0.2.0
   * @category Models
   */
  type AbortReason,
  /**
   * A failure of AG-UI's own, against an AG-UI agent: a conversation that
   * cannot be sent (`InvalidInput`), a refused state delta, an invalid
   * messages snapshot. Core's class itself.
   *
   * @since 0.2.0
   * @category Errors
   */
  AgUiError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  ApiError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  AuthError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  CallbackError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  ConfigError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  DecodeError,
  /**
   * @since 0.2.0
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
   * @since 0.2.0
   * @category Errors
   */
  MaxStepsExceededError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  McpError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  NotSupportedError,
  /**
   * @since 0.1.0
   * @category Constants
   */
  PLACEHOLDER_THREAD_ID,
  /**
   * @since 0.2.0
   * @category Errors
   */
  RunCancelledError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  RunConflictError,
  /**
   * Update strategies for streamed text (core's `SnapshotStrategy`), for
   * `useTamboStreamingMessages({ strategy })`.
   *
   * @since 0.1.0
   * @category Modules
   */
  SnapshotStrategy,
  /**
   * @since 0.1.0
   * @category Models
   */
  TamboClient,
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
   * @since 0.2.0
   * @category Errors
   */
  ToolDefinitionError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  ToolError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  TranscriptionError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  TransportError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  UnknownError
} from "@tambo-effect/client"

export type {
  /**
   * @since 0.1.0
   * @category Models
   */
  ApprovalDecision,
  /**
   * @since 0.1.0
   * @category Models
   */
  ApprovalHandler,
  /**
   * @since 0.1.0
   * @category Models
   */
  BusyPolicy,
  /**
   * @since 0.1.0
   * @category Models
   */
  PendingToolCallInfo,
  /**
   * @since 0.1.0
   * @category Models
   */
  RunSnapshot,
  /**
   * @since 0.1.0
   * @category Models
   */
  ToolCallResult,
  /**
   * @since 0.1.0
   * @category Models
   */
  ClientState,
  /**
   * @since 0.1.0
   * @category Models
   */
  ComponentStreamingState,
  /**
   * @since 0.1.0
   * @category Models
   */
  ContextHelperFn,
  /**
   * @since 0.2.0
   * @category Models
   */
  ContextHelperRun,
  /**
   * @since 0.2.0
   * @category Models
   */
  InitialInputMessage,
  /**
   * @since 0.1.0
   * @category Models
   */
  InputMessage,
  /**
   * @since 0.1.0
   * @category Models
   */
  McpServerInfo,
  /**
   * @since 0.1.0
   * @category Models
   */
  RunOptions,
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
  Suggestion,
  /**
   * @since 0.1.0
   * @category Models
   */
  SupportedSchema,
  /**
   * @since 0.2.0
   * @category Models
   */
  AgentConnection,
  /**
   * @since 0.1.0
   * @category Models
   */
  TamboClientOptions,
  /**
   * @since 0.1.0
   * @category Models
   */
  TamboStream,
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
  TamboTool,
  /**
   * @since 0.1.0
   * @category Models
   */
  TamboToolUseContent,
  /**
   * @since 0.1.0
   * @category Models
   */
  TextContent,
  /**
   * @since 0.1.0
   * @category Models
   */
  ThreadState,
  /**
   * @since 0.1.0
   * @category Models
   */
  ToolDefinition,
  /**
   * @since 0.1.0
   * @category Models
   */
  ToolResultContent
} from "@tambo-effect/client"

export {
  /**
   * @since 0.1.0
   * @category Models
   */
  type PendingElicitation,
  /**
   * @since 0.2.0
   * @category Models
   */
  type PendingUrlElicitation,
  /**
   * @since 0.2.0
   * @category Hooks
   */
  useTamboMcpCompletion,
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboMcpElicitation,
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboMcpPrompt,
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboMcpPromptList,
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboMcpResource,
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboMcpResourceList,
  /**
   * @since 0.1.0
   * @category Hooks
   */
  useTamboMcpServers,
  /**
   * @since 0.2.0
   * @category Hooks
   */
  useTamboMcpToolProgress,
  /**
   * @since 0.2.0
   * @category Hooks
   */
  useTamboMcpUrlElicitation,
  /**
   * @since 0.1.0
   * @category Models
   */
  type UseTamboMcpElicitationReturn,
  /**
   * @since 0.2.0
   * @category Models
   */
  type UseTamboMcpUrlElicitationReturn
} from "./mcp.js"

export {
  /**
   * @since 0.2.0
   * @category Hooks
   */
  useTamboComponentState,
  /**
   * @since 0.2.0
   * @category Models
   */
  type UseTamboComponentStateReturn
} from "./useTamboComponentState.js"

export {
  /**
   * @since 0.2.0
   * @category Models
   */
  type StagedImage
} from "./types.js"

export {
  /**
   * @since 0.2.0
   * @category Models
   */
  type MessageImage,
  /**
   * @since 0.2.0
   * @category Utils
   */
  messageImages,
  /**
   * @since 0.2.0
   * @category Hooks
   */
  useMessageImages
} from "./useMessageImages.js"

export {
  /**
   * @since 0.2.0
   * @category Models
   */
  type AdditionalContext,
  /**
   * @since 0.2.0
   * @category Context helpers
   */
  currentPageContextHelper,
  /**
   * @since 0.2.0
   * @category Context helpers
   */
  currentTimeContextHelper,
  /**
   * @since 0.2.0
   * @category Hooks
   */
  useTamboContextAttachment,
  /**
   * @since 0.2.0
   * @category Hooks
   */
  useTamboContextHelpers,
  /**
   * @since 0.2.0
   * @category Models
   */
  type UseTamboContextAttachmentReturn,
  /**
   * @since 0.2.0
   * @category Models
   */
  type UseTamboContextHelpersReturn
} from "./contextHelpers.js"

export {
  /**
   * @since 0.2.0
   * @category Models
   */
  type ContextAttachment
} from "./types.js"

export {
  /**
   * @since 0.2.0
   * @category MCP
   */
  mcpOAuthRedirect,
  /**
   * @since 0.2.0
   * @category Models
   */
  type McpOAuthRedirectOptions,
  /**
   * @since 0.2.0
   * @category Models
   */
  type McpOAuthWebStorage
} from "./mcpOAuth.js"

export {
  /**
   * @since 0.2.0
   * @category Models
   */
  type InteractableConfig,
  /**
   * @since 0.2.0
   * @category Models
   */
  type TamboInteractableContext,
  /**
   * @since 0.2.0
   * @category Hooks
   */
  useCurrentInteractablesSnapshot,
  /**
   * @since 0.2.0
   * @category Hooks
   */
  useTamboInteractable,
  /**
   * @since 0.2.0
   * @category Models
   */
  type WithTamboInteractableProps,
  /**
   * @since 0.2.0
   * @category Components
   */
  withTamboInteractable
} from "./interactables.js"

export {
  /**
   * An interactable component as `useTamboInteractable` lists it (upstream's
   * `InteractableComponent`).
   *
   * @since 0.2.0
   * @category Models
   */
  type InteractableComponent,
  /**
   * @since 0.2.0
   * @category Models
   */
  type InteractableContextEntry,
  /**
   * @since 0.2.0
   * @category Models
   */
  type NewInteractableComponent
} from "./types.js"

export {
  /**
   * @since 0.2.0
   * @category Components
   */
  TamboStubProvider,
  /**
   * @since 0.2.0
   * @category Models
   */
  type TamboStubProviderProps
} from "./TamboStubProvider.js"

export {
  /**
   * @since 0.2.0
   * @category Hooks
   */
  useIsTamboTokenUpdating
} from "./useIsTamboTokenUpdating.js"

export {
  /**
   * @since 0.2.0
   * @category Utils
   */
  defineTool,
  /**
   * @since 0.2.0
   * @category Models
   */
  type DefineToolOptions,
  /**
   * @since 0.2.0
   * @category Models
   */
  type InferSchema
} from "./defineTool.js"

export type {
  /**
   * @since 0.2.0
   * @category Models
   */
  ToolCallParameter,
  /**
   * @since 0.2.0
   * @category Models
   */
  UnregisteredToolHandler
} from "@tambo-effect/client"

// The names `@tambo-ai/react` 1.3 gives these shapes (those of `@tambo-ai/client` come from ours).
export type {
  /**
   * @since 0.2.0
   * @category Models
   */
  AcceptSuggestionOptions,
  /**
   * @since 0.2.0
   * @category Models
   */
  ComponentRegistry,
  /**
   * @since 0.2.0
   * @category Models
   */
  RegisteredComponent,
  /**
   * @since 0.2.0
   * @category Models
   */
  TamboConfig
} from "./types.js"

export type {
  /**
   * @since 0.2.0
   * @category Models
   */
  ComponentContextToolMetadata,
  /**
   * @since 0.2.0
   * @category Models
   */
  ContextHelpers,
  /**
   * @since 0.2.0
   * @category Models
   */
  ListResourceItem,
  /**
   * @since 0.2.0
   * @category Models
   */
  MessageGetResponse,
  /**
   * @since 0.2.0
   * @category Models
   */
  MessageListResponse,
  /**
   * @since 0.2.0
   * @category Models
   */
  NormalizedMcpServerInfo,
  /**
   * @since 0.2.0
   * @category Models
   */
  ParameterSpec,
  /**
   * @since 0.2.0
   * @category Models
   */
  ReadResourceResult,
  /**
   * @since 0.2.0
   * @category Models
   */
  ResourceSource,
  /**
   * @since 0.2.0
   * @category Models
   */
  SuggestionGenerateParams,
  /**
   * @since 0.2.0
   * @category Models
   */
  SuggestionGenerateResponse,
  /**
   * @since 0.2.0
   * @category Models
   */
  SuggestionListResponse,
  /**
   * @since 0.2.0
   * @category Models
   */
  ThreadCreateResponse,
  /**
   * @since 0.2.0
   * @category Models
   */
  ThreadListResponse,
  /**
   * @since 0.2.0
   * @category Models
   */
  ThreadRetrieveResponse,
  /**
   * @since 0.2.0
   * @category Errors
   */
  APIError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  RateLimitError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  TamboAIError
} from "@tambo-effect/client"

export {
  /**
   * @since 0.2.0
   * @category Constants
   */
  MCPTransport
} from "@tambo-effect/client"

export type {
  /**
   * @since 0.2.0
   * @category Models
   */
  MessageRole,
  /**
   * @since 0.2.0
   * @category Models
   */
  ResourceContent,
  /**
   * @since 0.2.0
   * @category Models
   */
  TamboAuthState,
  /**
   * @since 0.2.0
   * @category Models
   */
  ToolAnnotations,
  /**
   * @since 0.2.0
   * @category Models
   */
  TamboToolDisplayProps,
  /**
   * @since 0.2.0
   * @category Models
   */
  ToolChoice
} from "@tambo-effect/client"

