/**
 * The names `@tambo-ai/client` (and `@tambo-ai/react`) give shapes this
 * package has under names of its own: code that names them compiles against
 * this package unchanged. Each is an alias of the shape this package
 * returns or takes, or, for the API's older tool form, the shape itself.
 *
 * @since 0.2.0
 */
import type {
  ElicitationHandler,
  ElicitationRequestedSchema as CoreElicitationRequestedSchema,
  ElicitationResult,
  McpConnectionStatus as CoreMcpConnectionStatus,
  McpHandlers,
  McpResourceContents,
  McpResourceSpec,
  McpServerInfo,
  McpToolResult,
  McpToolSpec,
  McpTransport,
  PrimitiveSchemaDefinition as CorePrimitiveSchemaDefinition,
  ResourceSource as CoreResourceSource,
  SamplingHandler
} from "@tambo-effect/core/Mcp"
import type { ApiError } from "@tambo-effect/core/TamboError"
import type { ToolAnnotations as CoreToolAnnotations } from "@tambo-effect/core/Tool"
import type { TamboThread, TamboThreadMessage } from "@tambo-effect/core/Types"
import type { TamboClientError } from "./errors.js"
import type { ContextHelperFn, Suggestion, ThreadPage } from "./TamboClient.js"

/**
 * Context helpers by name, as the client's `contextHelpers` option takes them.
 *
 * @since 0.2.0
 * @category Models
 */
export type ContextHelpers = Readonly<Record<string, ContextHelperFn>>

/**
 * A resource of the app's own, as `listResources` returns it.
 *
 * @since 0.2.0
 * @category Models
 */
export type ListResourceItem = McpResourceSpec

/**
 * A resource's contents, as `getResource` returns them.
 *
 * @since 0.2.0
 * @category Models
 */
export type ReadResourceResult = McpResourceContents

/**
 * The app's own resources: a static list, and/or a source that lists and reads them.
 *
 * @since 0.2.0
 * @category Models
 */
export type ResourceSource = CoreResourceSource

/**
 * An MCP server's settings with its transport and server key resolved.
 *
 * @since 0.2.0
 * @category Models
 */
export type NormalizedMcpServerInfo = McpServerInfo & { readonly transport: McpTransport; readonly serverKey: string }

/**
 * Where an MCP server's connection is: `connecting`, `connected`, `reconnecting`, `failed`.
 *
 * @since 0.2.0
 * @category Models
 */
export type McpConnectionStatus = CoreMcpConnectionStatus

/**
 * Answers an MCP server's elicitation: `(request, context)`, where
 * `request.params` holds the `message` and the form (`requestedSchema`) and
 * `context.signal` aborts when the server gives up on it.
 *
 * @since 0.2.0
 * @category MCP
 */
export type MCPElicitationHandler = ElicitationHandler

/**
 * Answers an MCP server's sampling request (`sampling/createMessage`).
 *
 * @since 0.2.0
 * @category MCP
 */
export type MCPSamplingHandler = SamplingHandler

/**
 * A server's own handlers, as `McpServerInfo.handlers` takes them (each optional there).
 *
 * @since 0.2.0
 * @category MCP
 */
export type MCPHandlers = McpHandlers

/**
 * The form an elicitation asks to fill: an object of primitive fields.
 *
 * @since 0.2.0
 * @category MCP
 */
export type ElicitationRequestedSchema = CoreElicitationRequestedSchema

/**
 * A field of an elicitation's form.
 *
 * @since 0.2.0
 * @category MCP
 */
export type PrimitiveSchemaDefinition = CorePrimitiveSchemaDefinition

/**
 * An elicitation shown to the user: its message, its form, and a signal
 * that aborts when the server gives up on it.
 *
 * @since 0.2.0
 * @category MCP
 */
export interface TamboElicitationRequest {
  readonly message: string
  readonly requestedSchema: CoreElicitationRequestedSchema
  readonly signal?: AbortSignal | undefined
}

/**
 * The user's answer to an elicitation: `accept` with the form's `content`,
 * `decline`, or `cancel`.
 *
 * @since 0.2.0
 * @category MCP
 */
export type TamboElicitationResponse = ElicitationResult

/**
 * The elicitation waiting for the user, if any, and the function that
 * answers it.
 *
 * @since 0.2.0
 * @category MCP
 */
export interface ElicitationContextState {
  readonly elicitation: TamboElicitationRequest | null
  readonly resolveElicitation: ((response: TamboElicitationResponse) => void) | null
}

/**
 * A tool of an MCP server, as it lists it.
 *
 * @since 0.2.0
 * @category MCP
 */
export type MCPToolSpec = McpToolSpec

/**
 * What an MCP server's tool answers.
 *
 * @since 0.2.0
 * @category MCP
 */
export type MCPToolCallResult = McpToolResult

/**
 * What a tool does, for the model and the client (read-only, destructive,
 * idempotent, open-world hints; `tamboStreamableHint`).
 *
 * @since 0.2.0
 * @category Models
 */
export type ToolAnnotations = CoreToolAnnotations

/**
 * A parameter of a tool, in the API's older form (name, type, whether
 * required), with its JSON Schema. No function of this package takes or
 * returns it: it names the shape for code written against upstream.
 *
 * @since 0.2.0
 * @category Models
 */
export interface ParameterSpec {
  readonly name: string
  readonly type: string
  readonly description: string
  readonly isRequired: boolean
  readonly enumValues?: ReadonlyArray<string> | undefined
  readonly items?: { readonly type: string } | undefined
  readonly schema?: unknown
}

/**
 * A tool's description in the API's older form (see {@link ParameterSpec}).
 *
 * @since 0.2.0
 * @category Models
 */
export interface ComponentContextToolMetadata {
  readonly name: string
  readonly description: string
  readonly parameters: ReadonlyArray<ParameterSpec>
  /** How many times a run may call it. */
  readonly maxCalls?: number | undefined
  readonly annotations?: ToolAnnotations | undefined
}

/**
 * A thread as the API answers its creation.
 *
 * @since 0.2.0
 * @category Models
 */
export type ThreadCreateResponse = TamboThread

/**
 * A thread as the API answers its read (`fetchThread`).
 *
 * @since 0.2.0
 * @category Models
 */
export type ThreadRetrieveResponse = TamboThread

/**
 * One page of the user's threads (`listThreadsPage`).
 *
 * @since 0.2.0
 * @category Models
 */
export type ThreadListResponse = ThreadPage

/**
 * A message as the API answers its read.
 *
 * @since 0.2.0
 * @category Models
 */
export type MessageGetResponse = TamboThreadMessage

/**
 * One page of a thread's messages.
 *
 * @since 0.2.0
 * @category Models
 */
export interface MessageListResponse {
  readonly messages: ReadonlyArray<TamboThreadMessage>
  readonly hasMore: boolean
  readonly nextCursor?: string | undefined
}

/**
 * What `generateSuggestions` takes besides the message.
 *
 * @since 0.2.0
 * @category Models
 */
export interface SuggestionGenerateParams {
  /** At most this many suggestions (the API allows 1 to 10). */
  readonly maxSuggestions?: number | undefined
}

/**
 * What `generateSuggestions` returns.
 *
 * @since 0.2.0
 * @category Models
 */
export type SuggestionGenerateResponse = ReadonlyArray<Suggestion>

/**
 * What `listSuggestions` returns.
 *
 * @since 0.2.0
 * @category Models
 */
export type SuggestionListResponse = ReadonlyArray<Suggestion>

/**
 * Any error the client rejects with (upstream names the typescript-sdk's
 * base error so).
 *
 * @since 0.2.0
 * @category Errors
 */
export type TamboAIError = TamboClientError

/**
 * The API answered with an error status, or a run ended with `RUN_ERROR`.
 *
 * @since 0.2.0
 * @category Errors
 */
export type APIError = ApiError

/**
 * The API refused for too many requests: an `ApiError` with `reason`
 * `"RateLimited"` (status 429), its `retryAfter` in milliseconds when the
 * API said.
 *
 * @since 0.2.0
 * @category Errors
 */
export type RateLimitError = ApiError & { readonly reason: "RateLimited" }
