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
import type { StandardSchemaV1 } from "@standard-schema/spec"
import type {
  JsonSchema,
  SupportedSchema,
  TamboTool,
  ToolAnnotations as CoreToolAnnotations
} from "@tambo-effect/core/Tool"
import type { TamboThread, TamboThreadMessage } from "@tambo-effect/core/Types"
import type { TamboClientError } from "./errors.js"
import type { ComponentRegistration, ContextHelperFn, Suggestion, ThreadPage } from "./TamboClient.js"

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
 * required), with its JSON Schema, as `getParametersFromToolSchema` lists
 * them.
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
 * A JSON Schema, as a tool's schemas may be written.
 *
 * @since 0.2.0
 * @category Models
 */
export type JSONSchemaLite = JsonSchema

/** A value, or a promise of it. */
type MaybeAsync<T> = T | PromiseLike<T>

/**
 * A tool whose schemas are JSON Schemas, typed by its function's
 * parameters (`Args`) and result.
 *
 * @since 0.2.0
 * @category Models
 */
export type TamboToolJSONSchema<Args extends Array<unknown> = Array<unknown>, Returns = unknown> =
  & Omit<TamboTool<Args, Returns>, "tool" | "inputSchema" | "outputSchema">
  & {
    readonly tool: (...args: Args) => MaybeAsync<Returns>
    readonly inputSchema: JSONSchemaLite
    readonly outputSchema: JSONSchemaLite
  }

/**
 * A tool whose schemas are Standard Schemas (Zod 4, Valibot, ArkType): its
 * function takes what `Input` decodes to and returns what `Output` describes.
 *
 * @since 0.2.0
 * @category Models
 */
export type TamboToolStandardSchema<
  Input extends StandardSchemaV1 = StandardSchemaV1,
  Output extends StandardSchemaV1 = StandardSchemaV1
> =
  & Omit<
    TamboTool<StandardSchemaV1.InferOutput<Input>, StandardSchemaV1.InferOutput<Output>>,
    "tool" | "inputSchema" | "outputSchema"
  >
  & {
    readonly tool: (args: StandardSchemaV1.InferOutput<Input>) => MaybeAsync<StandardSchemaV1.InferOutput<Output>>
    readonly inputSchema: Input
    readonly outputSchema: Output
  }

/**
 * A tool whose schemas' kind is not known to the type checker.
 *
 * @since 0.2.0
 * @category Models
 */
export type TamboToolUnknown =
  & Omit<TamboTool, "tool" | "inputSchema" | "outputSchema">
  & {
    readonly tool: (...args: Array<unknown>) => MaybeAsync<unknown>
    readonly inputSchema: SupportedSchema
    readonly outputSchema: SupportedSchema
  }

/**
 * A tool in the form upstream deprecated (`toolSchema`, no `inputSchema`).
 * Named here so that code naming it compiles; registering one fails with a
 * `ToolDefinitionError`, as it has no input schema.
 *
 * @since 0.2.0
 * @category Models
 */
export type UnsupportedSchemaTamboTool =
  & Omit<TamboTool, "tool" | "inputSchema" | "outputSchema">
  & {
    /** @deprecated Give `inputSchema` and `outputSchema` instead. */
    readonly toolSchema: unknown
    readonly tool: (...args: Array<any>) => MaybeAsync<any>
    readonly inputSchema?: never
    readonly outputSchema?: never
  }

/**
 * Tools by name.
 *
 * @since 0.2.0
 * @category Models
 */
export type TamboToolRegistry = Record<string, TamboTool>

/**
 * For each component's name, the names of the tools that come with it.
 *
 * @since 0.2.0
 * @category Models
 */
export type TamboToolAssociations = Record<string, Array<string>>

/**
 * Registers a tool (the shape of a registry's `registerTool`).
 *
 * @since 0.2.0
 * @category Models
 */
export type RegisterToolFn = (tool: TamboTool, warnOnOverwrite?: boolean) => void

/**
 * Registers tools (the shape of a registry's `registerTools`).
 *
 * @since 0.2.0
 * @category Models
 */
export type RegisterToolsFn = (tools: ReadonlyArray<TamboTool>, warnOnOverwrite?: boolean) => void

/**
 * Types a tool from its schemas and returns it as it is (the shape of
 * `@tambo-effect/react`'s `defineTool`).
 *
 * @since 0.2.0
 * @category Models
 */
export interface DefineToolFn {
  <Input extends StandardSchemaV1, Output extends StandardSchemaV1>(
    tool: TamboToolStandardSchema<Input, Output>
  ): TamboToolStandardSchema<Input, Output>
  <Args extends Array<unknown>, Returns = unknown>(
    tool: TamboToolJSONSchema<Args, Returns>
  ): TamboToolJSONSchema<Args, Returns>
  <Tool extends TamboTool>(tool: Tool): Tool
}

/**
 * A component registered under a name (what `registerComponent(name,
 * component)` takes), with the fields of the API's older component form.
 * `name` and `contextTools` are not used: the name is the one given, and
 * the API no longer takes context tools.
 *
 * @since 0.2.0
 * @category Models
 */
export interface RegisteredComponent extends ComponentRegistration {
  readonly name?: string | undefined
  readonly contextTools?: ReadonlyArray<ComponentContextToolMetadata> | undefined
}

/**
 * Registered components by name.
 *
 * @since 0.2.0
 * @category Models
 */
export type ComponentRegistry = Record<string, RegisteredComponent>

/**
 * A generative component, framework-agnostic: what the model is told
 * (`name`, `description`, `propsSchema`), what renders it (`component`,
 * `loadingComponent`: the UI layer's business, `unknown` here) and the tools
 * that come with it.
 *
 * @since 0.2.0
 * @category Models
 */
export interface TamboComponent {
  readonly name: string
  readonly description: string
  readonly component: unknown
  readonly propsSchema?: SupportedSchema | undefined
  /** @deprecated Give `propsSchema` instead. */
  readonly propsDefinition?: unknown
  readonly loadingComponent?: unknown
  readonly associatedTools?: ReadonlyArray<TamboTool> | undefined
  readonly annotations?: ToolAnnotations | undefined
}

/**
 * A context tool of the API's older component form: a function that gives
 * the model context, and its description.
 *
 * @since 0.2.0
 * @category Models
 */
export interface ComponentContextTool {
  readonly getComponentContext: (...args: Array<any>) => Promise<any>
  readonly definition: ComponentContextToolMetadata
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
