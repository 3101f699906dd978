/**
 * Connections to MCP (Model Context Protocol) servers, whose tools the model
 * may then call like any client-side tool.
 *
 * Each connection is a scoped resource of the `Mcp` layer: it is closed by
 * `disconnectMcpServer`, and when the layer's scope closes. Its status
 * (`connecting`, `connected`, `reconnecting`, `failed`) is observable; a
 * server that goes away is reconnected with backoff (its tools leave the
 * registry meanwhile), and a server behind OAuth is authorized through the
 * app (`McpServerInfo.oauth`). The servers' prompts and resources are
 * listed and read here, and a message that names an MCP resource is sent
 * with its contents. The tools a server
 * lists are registered in the {@link ToolRegistry} under their own names
 * while one server is connected, and as `<serverKey>__<name>` while several
 * are (as `@tambo-ai/react` names them); a call goes to the server that
 * listed the tool, and an MCP error (an `isError` result, a failed or
 * unreachable server) becomes an error tool result.
 *
 * The MCP client (`@modelcontextprotocol/sdk`, an optional peer dependency)
 * is loaded with a dynamic `import()` the first time a server is connected:
 * applications that never connect one do not load it, and bundlers leave it
 * out of their main chunk.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import { identity } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { isRecord } from "effect/Predicate"
import type * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Auth from "./Auth.js"
import { callApp } from "./internal/callbacks.js"
import * as Deadline from "./internal/mcpDeadline.js"
import type * as McpClient from "./internal/mcpClient.js"
import * as Resources from "./internal/mcpResources.js"
import * as Support from "./internal/mcpSupport.js"
import { describeError } from "./internal/toolSupport.js"
import { McpError, type TamboError } from "./TamboError.js"
import { TamboTransport } from "./TamboTransport.js"
import * as Tool from "./Tool.js"
import { ToolRegistry } from "./ToolRegistry.js"
import type * as Types from "./Types.js"

// ---------------------------------------------------------------------------
// Servers
// ---------------------------------------------------------------------------

/**
 * How to reach an MCP server: Streamable HTTP (`"http"`, the default) or
 * the older HTTP+SSE transport (`"sse"`).
 *
 * @since 0.1.0
 * @category Models
 */
export type McpTransport = "http" | "sse"

/**
 * The transports by name, for code written against `@tambo-ai/client`'s
 * `MCPTransport` enum (`McpTransport.HTTP`, `McpTransport.SSE`).
 *
 * @since 0.1.0
 * @category Models
 */
export const McpTransport: { readonly HTTP: "http"; readonly SSE: "sse" } = { HTTP: "http", SSE: "sse" }

/**
 * An MCP server to connect to, in the shape of `@tambo-ai/client`'s
 * `McpServerInfo`.
 *
 * @since 0.1.0
 * @category Models
 */
export interface McpServerInfo {
  /** The server's endpoint: the Streamable HTTP endpoint, or the SSE stream's URL. */
  readonly url: string
  readonly name?: string | undefined
  readonly description?: string | undefined
  /** Default `"http"`. */
  readonly transport?: McpTransport | undefined
  /** Sent with every request to the server (e.g. `Authorization`). */
  readonly customHeaders?: Readonly<Record<string, string>> | undefined
  /**
   * A short name that prefixes the server's tools while several servers are
   * connected (`<serverKey>__<tool>`). Default: derived from the URL's host
   * (`https://mcp.linear.app/mcp` → `linear`). Characters outside letters,
   * digits, `_` and `-` become `_`; a key already in use gets `-2`, `-3`, ...
   */
  readonly serverKey?: string | undefined
  /** Handlers for this server's requests, instead of the service-wide ones. */
  readonly handlers?: Partial<McpHandlers> | undefined
  /**
   * For a server that answers 401 with OAuth metadata: this client registers
   * itself, has the user authorize it (authorization code with PKCE) and
   * refreshes its tokens. Without it, such a server fails to connect.
   */
  readonly oauth?: McpOAuthOptions | undefined
}

/**
 * How this client is authorized by an MCP server's authorization server.
 * The tokens are kept in memory for the life of the service, so
 * reconnections and later connections to the same server reuse them.
 *
 * @since 0.1.0
 * @category Models
 */
export interface McpOAuthOptions {
  /** Where the authorization server sends the user back with a code: the client's redirect URI. */
  readonly redirectUrl: string
  /**
   * Takes the user to `authorizationUrl` (opens a browser, prints it, ...)
   * and answers with the `code` query parameter of the request that comes
   * back to `redirectUrl`. The time it takes is not the server's: the
   * connect timeout is suspended meanwhile, and `authorizeTimeout` bounds it.
   */
  readonly onAuthorize: (authorizationUrl: string, context: McpRequestContext) => HandlerResult<string>
  /**
   * How long `onAuthorize` may take (the user reads the consent page, logs
   * in, ...). Past it, the connection fails with an `McpError` (`Connect`).
   * Default 10 minutes.
   */
  readonly authorizeTimeout?: Duration.DurationInput | undefined
  /** The client's name at the authorization server. Default: the client info's name. */
  readonly clientName?: string | undefined
  /** The scope to ask for. Default: the server's. */
  readonly scope?: string | undefined
  /**
   * Where the client registration, tokens and PKCE verifier are kept, as
   * JSON by connection key (e.g. over `localStorage`), so that they survive
   * a page reload: an authorization by full-page redirect. Default: memory.
   */
  readonly storage?: McpOAuthStorage | undefined
  /**
   * The `code` of the redirect back from an authorization started before
   * the page reloaded: exchanged (with the verifier from `storage`) before
   * connecting. Used once. A function is asked for the code of the
   * connection with that key (several servers share one redirect back).
   */
  readonly authorizationCode?: string | ((key: string) => string | undefined) | undefined
}

/**
 * Persistent storage for {@link McpOAuthOptions}: `set(key, undefined)`
 * removes the key.
 *
 * @since 0.1.0
 * @category Models
 */
export interface McpOAuthStorage {
  readonly get: (key: string) => HandlerResult<string | undefined>
  readonly set: (key: string, value: string | undefined) => HandlerResult<void>
}

/**
 * The key that identifies a connection: its URL, transport and headers
 * (header names compared case-insensitively, in any order). Connecting the
 * same server twice gives the same connection. Header values enter the key
 * hashed, so a key can be logged without leaking a token.
 *
 * @since 0.1.0
 * @category Utils
 */
export const uniqueKey = (server: Pick<McpServerInfo, "url" | "transport" | "customHeaders">): string =>
  Support.uniqueKey(server.url, server.transport ?? "http", server.customHeaders)

/**
 * The server key a server gets by default: the most specific meaningful
 * label of its URL's host (`https://mcp.linear.app/mcp` → `linear`; IP
 * addresses give `mcp`).
 *
 * @since 0.1.0
 * @category Utils
 */
export const deriveServerKey = (url: string): string => Support.deriveServerKey(url)

// ---------------------------------------------------------------------------
// Tools and results
// ---------------------------------------------------------------------------

/**
 * A tool as the MCP server lists it.
 *
 * @since 0.1.0
 * @category Models
 */
export interface McpToolSpec {
  /** The tool's name on the server. */
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly inputSchema: Tool.JsonSchema
  readonly outputSchema?: Tool.JsonSchema | undefined
  readonly annotations?: Tool.ToolAnnotations | undefined
}

/**
 * A tool of a connected server, and the name it is registered under.
 *
 * @since 0.1.0
 * @category Models
 */
export interface McpTool extends McpToolSpec {
  /**
   * The name the model calls it by. `undefined` when it is not registered:
   * an application tool has that name, or its schema is not usable.
   */
  readonly registeredName: string | undefined
}

/**
 * A content block of an MCP tool result.
 *
 * @since 0.1.0
 * @category Models
 */
export type McpContentBlock =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image" | "audio"; readonly data: string; readonly mimeType: string }
  | {
    readonly type: "resource_link"
    readonly uri: string
    readonly name: string
    readonly mimeType?: string | undefined
    readonly description?: string | undefined
  }
  | {
    readonly type: "resource"
    readonly resource:
      | { readonly uri: string; readonly mimeType?: string | undefined; readonly text: string }
      | { readonly uri: string; readonly mimeType?: string | undefined; readonly blob: string }
  }
  | { readonly type: string }

/**
 * What an MCP tool call returns.
 *
 * @since 0.1.0
 * @category Models
 */
export interface McpToolResult {
  readonly content: ReadonlyArray<McpContentBlock>
  readonly structuredContent?: Readonly<Record<string, unknown>> | undefined
  /** The tool failed; `content` says why. */
  readonly isError?: boolean | undefined
}

// ---------------------------------------------------------------------------
// Prompts and resources
// ---------------------------------------------------------------------------

/**
 * An argument a prompt takes (its value is a string).
 *
 * @since 0.1.0
 * @category Prompts
 */
export interface McpPromptArgument {
  readonly name: string
  readonly description?: string | undefined
  readonly required?: boolean | undefined
}

/**
 * A prompt as the MCP server lists it.
 *
 * @since 0.1.0
 * @category Prompts
 */
export interface McpPromptSpec {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly arguments: ReadonlyArray<McpPromptArgument>
}

/**
 * A prompt of a connected server, with the key of that server.
 *
 * @since 0.1.0
 * @category Prompts
 */
export interface McpPrompt extends McpPromptSpec {
  readonly serverKey: string
}

/**
 * A message of a fetched prompt. `content` is an MCP content block (text,
 * image, audio, an embedded resource or a resource link).
 *
 * @since 0.1.0
 * @category Prompts
 */
export interface McpPromptMessage {
  readonly role: "user" | "assistant"
  readonly content: McpContentBlock
}

/**
 * A prompt fetched with its arguments.
 *
 * @since 0.1.0
 * @category Prompts
 */
export interface McpPromptResult {
  readonly description?: string | undefined
  readonly messages: ReadonlyArray<McpPromptMessage>
}

/**
 * A resource as the MCP server lists it.
 *
 * @since 0.1.0
 * @category Resources
 */
export interface McpResourceSpec {
  readonly uri: string
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly mimeType?: string | undefined
}

/**
 * A resource of a connected server (or of the application, with the server
 * key {@link REGISTRY_SERVER_KEY}).
 *
 * @since 0.1.0
 * @category Resources
 */
export interface McpResource extends McpResourceSpec {
  readonly serverKey: string
}

/**
 * A family of resources a server offers, named by an RFC 6570 URI template.
 *
 * @since 0.1.0
 * @category Resources
 */
export interface McpResourceTemplateSpec {
  readonly uriTemplate: string
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly mimeType?: string | undefined
}

/**
 * A resource template of a connected server.
 *
 * @since 0.1.0
 * @category Resources
 */
export interface McpResourceTemplate extends McpResourceTemplateSpec {
  readonly serverKey: string
}

/**
 * One part of a resource's contents: text, or base64 `blob` data.
 *
 * @since 0.1.0
 * @category Resources
 */
export type McpResourceContent =
  | { readonly uri: string; readonly mimeType?: string | undefined; readonly text: string }
  | { readonly uri: string; readonly mimeType?: string | undefined; readonly blob: string }

/**
 * What reading a resource gives.
 *
 * @since 0.1.0
 * @category Resources
 */
export interface McpResourceContents {
  readonly contents: ReadonlyArray<McpResourceContent>
}

/**
 * The server key of the application's own resources (the `resources`,
 * `listResources` and `getResource` options), as upstream names it.
 *
 * @since 0.1.0
 * @category Resources
 */
export const REGISTRY_SERVER_KEY: "registry" = Resources.REGISTRY_SERVER_KEY

/**
 * The application's own resources: a static list, and/or a source that
 * lists (optionally filtered by a search string) and reads them.
 *
 * @since 0.1.0
 * @category Resources
 */
export interface ResourceSource {
  readonly resources?: ReadonlyArray<McpResourceSpec> | undefined
  readonly listResources?: ((search?: string) => HandlerResult<ReadonlyArray<McpResourceSpec>>) | undefined
  readonly getResource?: ((uri: string) => HandlerResult<McpResourceContents>) | undefined
}

// ---------------------------------------------------------------------------
// Elicitation and sampling
// ---------------------------------------------------------------------------

/**
 * The form an elicitation asks the user to fill: a flat object of
 * primitive fields.
 *
 * @since 0.1.0
 * @category Elicitation
 */
export interface ElicitationRequestedSchema {
  readonly type: "object"
  readonly properties: Readonly<Record<string, Readonly<Record<string, unknown>>>>
  readonly required?: ReadonlyArray<string> | undefined
}

/**
 * A server asks the user for input (`elicitation/create`, form mode).
 *
 * @since 0.1.0
 * @category Elicitation
 */
export interface ElicitationRequest {
  readonly method: "elicitation/create"
  readonly params: {
    readonly mode: "form"
    readonly message: string
    readonly requestedSchema: ElicitationRequestedSchema
  }
}

/**
 * The user's answer to an elicitation: `accept` with the form's `content`,
 * `decline`, or `cancel` (dismissed).
 *
 * @since 0.1.0
 * @category Elicitation
 */
export interface ElicitationResult {
  readonly action: "accept" | "decline" | "cancel"
  readonly content?: Readonly<Record<string, string | number | boolean | ReadonlyArray<string>>> | undefined
}

/**
 * A message of a sampling request. `content` is an MCP content block (text,
 * image, audio, or tool use / tool result blocks).
 *
 * @since 0.1.0
 * @category Sampling
 */
export interface SamplingMessage {
  readonly role: "user" | "assistant"
  readonly content: unknown
}

/**
 * A server asks the client's model for a completion
 * (`sampling/createMessage`).
 *
 * @since 0.1.0
 * @category Sampling
 */
export interface SamplingRequest {
  readonly method: "sampling/createMessage"
  readonly params: {
    readonly messages: ReadonlyArray<SamplingMessage>
    readonly maxTokens: number
    readonly systemPrompt?: string | undefined
    readonly temperature?: number | undefined
    readonly stopSequences?: ReadonlyArray<string> | undefined
    readonly includeContext?: "none" | "thisServer" | "allServers" | undefined
    readonly modelPreferences?: Readonly<Record<string, unknown>> | undefined
    readonly metadata?: Readonly<Record<string, unknown>> | undefined
  }
}

/**
 * The completion a sampling handler answers with.
 *
 * @since 0.1.0
 * @category Sampling
 */
export interface SamplingResult {
  readonly model: string
  readonly role: "assistant"
  readonly content:
    | { readonly type: "text"; readonly text: string }
    | { readonly type: "image" | "audio"; readonly data: string; readonly mimeType: string }
  readonly stopReason?: string | undefined
}

/**
 * What a handler is told besides the request: which server asks, and a
 * signal aborted when the server cancels the request.
 *
 * @since 0.1.0
 * @category Models
 */
export interface McpRequestContext {
  readonly key: string
  readonly serverKey: string
  readonly server: McpServerInfo
  readonly signal: AbortSignal
}

/**
 * What a handler may return: the answer, a Promise of it, or an Effect. A
 * failure is sent to the server as an error.
 *
 * @since 0.1.0
 * @category Models
 */
export type HandlerResult<A> = A | PromiseLike<A> | Effect.Effect<A, unknown>

/**
 * Answers a server's elicitation. Without one, elicitations are declined.
 *
 * @since 0.1.0
 * @category Elicitation
 */
export type ElicitationHandler = (
  request: ElicitationRequest,
  context: McpRequestContext
) => HandlerResult<ElicitationResult>

/**
 * Answers a server's sampling request.
 *
 * @since 0.1.0
 * @category Sampling
 */
export type SamplingHandler = (
  request: SamplingRequest,
  context: McpRequestContext
) => HandlerResult<SamplingResult>

/**
 * Per-server handlers, as `McpServerInfo.handlers` takes them.
 *
 * @since 0.1.0
 * @category Models
 */
export interface McpHandlers {
  readonly elicitation: ElicitationHandler
  readonly sampling: SamplingHandler
}

// ---------------------------------------------------------------------------
// Connections
// ---------------------------------------------------------------------------

/**
 * `connecting` (the first time), `connected`, `reconnecting` (the server
 * went away; it is tried again with backoff and its tools are withdrawn
 * meanwhile), `failed` (the first connection failed, or it was closed).
 *
 * @since 0.1.0
 * @category Models
 */
export type McpConnectionStatus = "connecting" | "connected" | "reconnecting" | "failed"

/**
 * Direct access to a connected server.
 *
 * @since 0.1.0
 * @category Models
 */
export interface McpClientHandle {
  /** Calls a tool by its name on the server. An `isError` result is a success here. */
  readonly callTool: (
    name: string,
    args?: Readonly<Record<string, unknown>>
  ) => Effect.Effect<McpToolResult, McpError>
  /** Lists the server's tools again (all pages). */
  readonly listTools: Effect.Effect<ReadonlyArray<McpToolSpec>, McpError>
}

/**
 * A connection and its state.
 *
 * @since 0.1.0
 * @category Models
 */
export interface McpConnection {
  /** {@link uniqueKey} of the server: what `disconnectMcpServer` takes. */
  readonly key: string
  /** The short key its tools are prefixed with while several servers are connected. */
  readonly serverKey: string
  readonly server: McpServerInfo
  readonly status: McpConnectionStatus
  /** Why it failed, when it did. */
  readonly error?: McpError | undefined
  /** The server's tools, once connected. */
  readonly tools: ReadonlyArray<McpTool>
  /** The name and version the server reported. */
  readonly serverVersion?: { readonly name: string; readonly version: string } | undefined
  readonly instructions?: string | undefined
  /** Present while connected. */
  readonly client?: McpClientHandle | undefined
}

/**
 * Every known connection, by key, in the order they were first connected.
 *
 * @since 0.1.0
 * @category Models
 */
export type McpConnections = Readonly<Record<string, McpConnection>>

/**
 * An MCP access token for Tambo's own MCP server.
 *
 * @since 0.1.0
 * @category Models
 */
export interface McpToken {
  readonly token: Option.Option<Redacted.Redacted<string>>
  /** Epoch milliseconds. */
  readonly expiresAt: Option.Option<number>
}

// ---------------------------------------------------------------------------
// Service
// ---------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category Context
 */
export class Mcp extends Context.Tag("@tambo-effect/core/Mcp")<Mcp, Mcp.Service>() {}

/**
 * @since 0.1.0
 */
export declare namespace Mcp {
  /**
   * @since 0.1.0
   * @category Models
   */
  export interface Service {
    /**
     * Connects to a server, lists its tools and registers them. A server
     * already connected is returned as it is, a connection in progress is
     * awaited, and a failed one is tried again. Fails with an `McpError`
     * (reason `Connect`) when the server cannot be reached, the handshake
     * fails or takes longer than the connect timeout; the connection's
     * status is then `failed` with that error. Interrupting the caller does
     * not cancel the connection (`disconnectMcpServer` does).
     */
    readonly connectMcpServer: (server: McpServerInfo) => Effect.Effect<McpConnection, McpError>
    /**
     * Closes a connection (or cancels it while connecting), unregisters its
     * tools and forgets it. Takes the connection's key or its server. An
     * unknown key does nothing.
     */
    readonly disconnectMcpServer: (keyOrServer: string | McpServerInfo) => Effect.Effect<void>
    /** Every known connection, by key. */
    readonly getMcpClients: Effect.Effect<McpConnections>
    /** The connections now, then after every change. */
    readonly changes: Stream.Stream<McpConnections>
    /** Sets (or with `undefined` removes) the handler of every server without one of its own. */
    readonly setElicitationHandler: (handler: ElicitationHandler | undefined) => Effect.Effect<void>
    /**
     * Sets (or removes) the sampling handler of every server without one of
     * its own. The sampling capability is announced to servers connected
     * while a sampling handler is set (service-wide or their own).
     */
    readonly setSamplingHandler: (handler: SamplingHandler | undefined) => Effect.Effect<void>
    /**
     * An MCP access token for Tambo's MCP server: for a thread (session
     * bound), or for a context key (default: the configured `userKey`).
     */
    readonly getMcpToken: (contextKey?: string, threadId?: string) => Effect.Effect<McpToken, TamboError>
    /**
     * The prompts of every connected server. A server whose listing fails
     * is left out.
     */
    readonly listMcpPrompts: Effect.Effect<ReadonlyArray<McpPrompt>>
    /**
     * Fetches a prompt of a connected server, with its arguments. Fails with
     * an `McpError`: `NotConnected` for a server key that is not connected,
     * `CallFailed` when the server refuses (an unknown prompt, a missing
     * argument).
     */
    readonly getMcpPrompt: (
      serverKey: string,
      name: string,
      args?: Readonly<Record<string, string>>
    ) => Effect.Effect<McpPromptResult, McpError>
    /**
     * The resources of every connected server, then the application's own
     * (server key {@link REGISTRY_SERVER_KEY}; `search` is passed to its
     * `listResources`). A source whose listing fails is left out.
     */
    readonly listMcpResources: (search?: string) => Effect.Effect<ReadonlyArray<McpResource>>
    /** The resource templates of every connected server. */
    readonly listMcpResourceTemplates: Effect.Effect<ReadonlyArray<McpResourceTemplate>>
    /**
     * Reads a resource of a connected server, or of the application (server
     * key {@link REGISTRY_SERVER_KEY}). Fails with an `McpError`:
     * `NotConnected` for a server key that is not connected, `CallFailed`
     * when the server (or `getResource`) fails.
     */
    readonly readMcpResource: (serverKey: string, uri: string) => Effect.Effect<McpResourceContents, McpError>
    /**
     * The message with every resource block that names an MCP resource
     * (`{ type: "resource", resource: { uri, serverKey } }`) replaced by the
     * resource's contents, one block per part, in the form the API accepts
     * (`uri`, `mimeType`, `text` or `blob`, and the `name` given). Fails
     * with an `McpError` when a resource cannot be read.
     */
    readonly resolveResources: <M extends { readonly content: ReadonlyArray<Types.TextContent | Types.ResourceContent | Types.ToolResultContent> }>(
      message: M
    ) => Effect.Effect<M, McpError>
  }
}

/**
 * The options of {@link makeWith} and {@link layerWith}.
 *
 * @since 0.1.0
 * @category Models
 */
export interface MakeOptions {
  /** Connected in the background when the service starts; failures show in their status. */
  readonly servers?: Iterable<McpServerInfo> | undefined
  readonly elicitationHandler?: ElicitationHandler | undefined
  readonly samplingHandler?: SamplingHandler | undefined
  /**
   * How long connecting and listing the tools may take. Default 30 seconds.
   * The time a user spends authorizing the client (OAuth) does not count.
   */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** How this client introduces itself to servers. Default `tambo-effect` `0.1.0`. */
  readonly clientInfo?: { readonly name: string; readonly version: string } | undefined
  /**
   * When to try again to reach a server that went away (each attempt bounded
   * by the connect timeout). Default: exponential from 500 ms, at most 30 s
   * apart, jittered, for as long as the server is not disconnected.
   */
  readonly reconnectSchedule?: Schedule.Schedule<unknown, McpError> | undefined
  /** The application's own resources, listed and read under {@link REGISTRY_SERVER_KEY}. */
  readonly resources?: ReadonlyArray<McpResourceSpec> | undefined
  /** Lists the application's resources (with the search string given to `listMcpResources`). */
  readonly listResources?: ResourceSource["listResources"]
  /** Reads one of the application's resources. */
  readonly getResource?: ResourceSource["getResource"]
}

const DEFAULT_CONNECT_TIMEOUT = Duration.seconds(30)
const DEFAULT_AUTHORIZE_TIMEOUT = Duration.minutes(10)
const CLOSE_TIMEOUT = Duration.seconds(5)
const DEFAULT_CLIENT_INFO = { name: "tambo-effect", version: "0.1.0" }
const DEFAULT_RECONNECT_SCHEDULE: Schedule.Schedule<unknown, McpError> = Schedule.exponential("500 millis").pipe(
  Schedule.union(Schedule.spaced("30 seconds")),
  Schedule.jittered
)

type ClientModule = typeof McpClient

/**
 * The MCP client module, loaded on first use. `import()` caches it, so
 * later connections do not load it again.
 */
const loadClient: Effect.Effect<ClientModule, McpError> = Effect.tryPromise({
  try: () => import("./internal/mcpClient.js"),
  catch: (error) =>
    new McpError({
      reason: "Connect",
      message: `The MCP client could not be loaded (${describeError(error)}). ` +
        `Install "@modelcontextprotocol/sdk" to connect to MCP servers.`
    })
}).pipe(Effect.withSpan("Mcp.loadClient"))

interface Entry {
  readonly key: string
  readonly server: McpServerInfo
  readonly serverKey: string
  readonly transport: McpTransport
  /** Holds the sessions; closed on disconnect, failure, and with the layer. */
  readonly scope: Scope.CloseableScope
  readonly ready: Deferred.Deferred<McpConnection, McpError>
  /** The attempt in progress: the first connection, or a reconnection. */
  fiber: Fiber.RuntimeFiber<void> | undefined
  /** Holds the current session: closed when it drops. */
  sessionScope: Scope.CloseableScope | undefined
  status: McpConnectionStatus
  error: McpError | undefined
  session: McpClient.Session | undefined
  handle: McpClientHandle | undefined
  tools: ReadonlyArray<McpToolSpec>
}

interface Registration {
  readonly definition: Tool.Definition
  readonly entry: Entry
  readonly spec: McpToolSpec
}

interface Handlers {
  readonly elicitation: ElicitationHandler | undefined
  readonly sampling: SamplingHandler | undefined
}

/** The OAuth state saved by `McpOAuthOptions.storage`; what is not an object of the expected fields is dropped. */
const decodeOAuthState = (json: string): Partial<McpClient.OAuthStore> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(json)
  } catch {
    return {}
  }
  if (!isRecord(parsed)) return {}
  return {
    ...(isRecord(parsed["tokens"]) && typeof parsed["tokens"]["access_token"] === "string"
      ? { tokens: { ...parsed["tokens"], access_token: parsed["tokens"]["access_token"], token_type: String(parsed["tokens"]["token_type"] ?? "bearer") } }
      : {}),
    ...(isRecord(parsed["clientInformation"]) && typeof parsed["clientInformation"]["client_id"] === "string"
      ? { clientInformation: { ...parsed["clientInformation"], client_id: parsed["clientInformation"]["client_id"] } }
      : {}),
    ...(typeof parsed["codeVerifier"] === "string" ? { codeVerifier: parsed["codeVerifier"] } : {})
  }
}

/** Runs a user handler, whatever it returns; what goes wrong in it is its failure. */
const runHandler = <A>(call: () => HandlerResult<A>): Effect.Effect<A, unknown> => callApp(call, identity)

/** Fails once `signal` is aborted. */
const aborted = (signal: AbortSignal): Effect.Effect<never, McpError> =>
  Effect.async<never, McpError>((resume) => {
    const onAbort = () =>
      resume(Effect.fail(new McpError({ reason: "CallFailed", message: "The server cancelled the request" })))
    if (signal.aborted) return onAbort()
    signal.addEventListener("abort", onAbort, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", onAbort))
  })

/**
 * The service, with options.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeWith = (
  options: MakeOptions = {}
): Effect.Effect<Mcp.Service, never, ToolRegistry | TamboTransport | Auth.Auth | Scope.Scope> =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const transport = yield* TamboTransport
    const auth = yield* Auth.Auth
    const connectTimeout = options.connectTimeout === undefined
      ? DEFAULT_CONNECT_TIMEOUT
      : Duration.decode(options.connectTimeout)
    const clientInfo = options.clientInfo ?? DEFAULT_CLIENT_INFO
    const reconnectSchedule = options.reconnectSchedule ?? DEFAULT_RECONNECT_SCHEDULE

    const handlers = yield* Ref.make<Handlers>({
      elicitation: options.elicitationHandler,
      sampling: options.samplingHandler
    })
    const connections = yield* SubscriptionRef.make<McpConnections>({})
    // Connection attempts, event handling and server requests run here: all
    // of them are interrupted when the layer's scope closes.
    const fibers = yield* FiberSet.make<unknown, unknown>()
    const runFork = yield* FiberSet.runtime(fibers)<never>()
    const runPromise = yield* FiberSet.runtimePromise(fibers)<never>()

    // Every change of `entries`, of an entry and of `registered` happens under the lock.
    const lock = yield* Effect.makeSemaphore(1)
    const locked = lock.withPermits(1)
    const entries = new Map<string, Entry>()
    const registered = new Map<string, Registration>()

    // The reverse of `registered`, for the connections' tool lists.
    const nameOfSpec = new WeakMap<McpToolSpec, string>()
    // The OAuth state of each server, by key: kept across its sessions.
    const oauthStores = new Map<string, McpClient.OAuthStore>()
    // Authorization codes already exchanged: a code is good once.
    const usedCodes = new Set<string>()

    const oauthOf = (entry: Entry, deadline: Deadline.Deadline): Effect.Effect<McpClient.OAuthOptions | undefined, McpError> =>
      Effect.gen(function*() {
        const oauth = entry.server.oauth
        if (oauth === undefined) return undefined
        const storage = oauth.storage
        let store = oauthStores.get(entry.key)
        if (store === undefined) {
          store = { clientInformation: undefined, tokens: undefined, codeVerifier: undefined }
          if (storage !== undefined) {
            const saved = yield* runHandler(() => storage.get(entry.key)).pipe(
              Effect.mapError((error) => connectFailure(entry, `reading the OAuth storage: ${describeError(error)}`))
            )
            if (typeof saved === "string") Object.assign(store, decodeOAuthState(saved))
          }
          oauthStores.set(entry.key, store)
        }
        const given = typeof oauth.authorizationCode === "function"
          ? oauth.authorizationCode(entry.key)
          : oauth.authorizationCode
        const code = given !== undefined && !usedCodes.has(given) ? given : undefined
        if (code !== undefined) usedCodes.add(code)
        return oauthClient(entry, oauth, store, code, deadline)
      })

    const oauthClient = (
      entry: Entry,
      oauth: McpOAuthOptions,
      store: McpClient.OAuthStore,
      authorizationCode: string | undefined,
      deadline: Deadline.Deadline
    ): McpClient.OAuthOptions => {
      const storage = oauth.storage
      const authorizeTimeout = oauth.authorizeTimeout === undefined
        ? DEFAULT_AUTHORIZE_TIMEOUT
        : Duration.decode(oauth.authorizeTimeout)
      return {
        redirectUrl: oauth.redirectUrl,
        clientName: oauth.clientName ?? clientInfo.name,
        scope: oauth.scope,
        store,
        authorizationCode,
        persist: () =>
          storage === undefined
            ? Promise.resolve()
            : runPromise(runHandler(() => storage.set(entry.key, JSON.stringify(store))).pipe(Effect.ignore)),
        authorize: (authorizationUrl, signal) =>
          serve(entry, "Mcp.authorize", signal, (context) =>
            Effect.flatMap(runHandler(() => oauth.onAuthorize(authorizationUrl.href, context)), (code) =>
              typeof code === "string" && code.length > 0
                ? Effect.succeed(code)
                : Effect.fail(new McpError({ reason: "Connect", message: "onAuthorize gave no authorization code" }))).pipe(
                Effect.timeoutFail({
                  duration: authorizeTimeout,
                  onTimeout: () =>
                    new McpError({
                      reason: "Connect",
                      message: `The user did not authorize within authorizeTimeout (${Duration.format(authorizeTimeout)})`,
                      serverKey: entry.serverKey
                    })
                }),
                deadline.suspendDuring
              ))
      }
    }

    const connectionOf = (entry: Entry): McpConnection => ({
      key: entry.key,
      serverKey: entry.serverKey,
      server: entry.server,
      status: entry.status,
      ...(entry.error === undefined ? {} : { error: entry.error }),
      tools: entry.tools.map((spec) => ({ ...spec, registeredName: nameOfSpec.get(spec) })),
      ...(entry.session === undefined ? {} : {
        serverVersion: entry.session.serverVersion,
        instructions: entry.session.instructions
      }),
      ...(entry.handle === undefined ? {} : { client: entry.handle })
    })

    const publish = Effect.suspend(() => {
      const snapshot: Record<string, McpConnection> = {}
      for (const entry of entries.values()) snapshot[entry.key] = connectionOf(entry)
      return SubscriptionRef.set(connections, snapshot)
    })

    const isCurrent = (entry: Entry) => entries.get(entry.key) === entry

    // -- tools ---------------------------------------------------------------

    const unregisterIfOurs = (name: string, definition: Tool.Definition) =>
      Effect.flatMap(registry.get(name), (found) =>
        Option.isSome(found) && found.value.definition === definition
          ? Effect.asVoid(registry.unregister(name))
          : Effect.void)

    /**
     * Makes the registry hold exactly the tools of the connected servers,
     * under the names the current number of servers calls for, then
     * publishes the connections. Run under the lock.
     */
    const syncTools: Effect.Effect<void> = Effect.gen(function*() {
      const connected = Array.from(entries.values()).filter((entry) => entry.status === "connected")
      const prefixed = connected.length > 1
      const desired = new Map<string, { readonly entry: Entry; readonly spec: McpToolSpec }>()
      for (const entry of connected) {
        for (const spec of entry.tools) {
          const name = Support.distinctName(
            Support.registeredToolName(entry.serverKey, spec.name, prefixed),
            (candidate) => desired.has(candidate)
          )
          desired.set(name, { entry, spec })
        }
      }
      for (const [name, registration] of Array.from(registered)) {
        if (desired.get(name)?.spec === registration.spec) continue
        registered.delete(name)
        if (nameOfSpec.get(registration.spec) === name) nameOfSpec.delete(registration.spec)
        yield* unregisterIfOurs(name, registration.definition)
      }
      for (const [name, { entry, spec }] of desired) {
        if (registered.has(name)) continue
        if (Option.isSome(yield* registry.get(name))) {
          yield* Effect.logWarning(
            `The tool "${spec.name}" of MCP server "${entry.serverKey}" is not registered: ` +
              `a tool named "${name}" is already registered`
          )
          continue
        }
        const definition = toolDefinition(name, entry, spec)
        yield* registry.register(definition).pipe(
          Effect.zipRight(Effect.sync(() => {
            registered.set(name, { definition, entry, spec })
            nameOfSpec.set(spec, name)
          })),
          Effect.catchAll((error) =>
            Effect.logWarning(
              `The tool "${spec.name}" of MCP server "${entry.serverKey}" is not registered: ${error.message}`
            )
          )
        )
      }
      yield* publish
    })

    const describeTool = (entry: Entry, spec: McpToolSpec) => {
      const description = spec.description?.trim() ?? ""
      if (description.length > 0) return description
      const title = spec.title?.trim() ?? ""
      return title.length > 0 ? title : `The "${spec.name}" tool of the MCP server "${entry.serverKey}"`
    }

    const toolDefinition = (name: string, entry: Entry, spec: McpToolSpec): Tool.TamboTool<unknown, unknown> => ({
      name,
      description: describeTool(entry, spec),
      ...(spec.title === undefined ? {} : { title: spec.title }),
      ...(spec.annotations === undefined ? {} : { annotations: spec.annotations }),
      inputSchema: spec.inputSchema,
      ...(spec.outputSchema === undefined ? {} : { outputSchema: spec.outputSchema }),
      // The executor runs a returned Effect in the calling fiber: the call is
      // interrupted with it and its span is a child of the executor's.
      tool: (args: unknown) => callForModel(entry, spec, name, args),
      transformToContent: (parts: unknown) => (Array.isArray(parts) ? parts : [])
    })

    // -- calls -------------------------------------------------------------

    /**
     * A request to the server. A failure that means the server is gone marks
     * the connection failed (its tools are unregistered; connecting again
     * reconnects).
     */
    const request = <A>(
      entry: Entry,
      session: McpClient.Session,
      what: string,
      send: (signal: AbortSignal) => Promise<A>
    ): Effect.Effect<A, McpError> =>
      Effect.suspend(() =>
        isCurrent(entry) && entry.session === session
          ? Effect.tryPromise({ try: send, catch: (error) => error })
          : Effect.fail(
            new McpError({
              reason: "NotConnected",
              message: `The MCP server "${entry.serverKey}" is no longer connected`,
              serverKey: entry.serverKey
            })
          )
      ).pipe(
        Effect.catchAll((error) => {
          if (error instanceof McpError) return Effect.fail(error)
          if (session.isDisconnection(error)) {
            const failure = new McpError({
              reason: "Disconnected",
              message: `The MCP server "${entry.serverKey}" is unreachable: ${describeError(error)}`,
              serverKey: entry.serverKey
            })
            return Effect.zipRight(markDropped(entry, session, failure), Effect.fail(failure))
          }
          return Effect.fail(
            new McpError({
              reason: "CallFailed",
              message: `${what} failed on MCP server "${entry.serverKey}": ${describeError(error)}`,
              serverKey: entry.serverKey
            })
          )
        })
      )

    const callTool = (entry: Entry, session: McpClient.Session, name: string, args: Readonly<Record<string, unknown>>) =>
      request(entry, session, `The tool "${name}"`, (signal) => session.callTool(name, args, signal))

    const callForModel = (
      entry: Entry,
      spec: McpToolSpec,
      registeredName: string,
      args: unknown
    ): Effect.Effect<ReadonlyArray<Tool.ToolResultPart>, Tool.ToolCallError> =>
      Effect.gen(function*() {
        const session = entry.session
        if (session === undefined || entry.status !== "connected") {
          return yield* Effect.fail(
            new Tool.ToolCallError({
              reason: "Failed",
              message: `The MCP server "${entry.serverKey}" of tool "${registeredName}" is not connected.`,
              toolName: registeredName
            })
          )
        }
        const result = yield* callTool(entry, session, spec.name, isRecord(args) ? args : {}).pipe(
          Effect.mapError((error) =>
            new Tool.ToolCallError({ reason: "Failed", message: error.message, toolName: registeredName })
          )
        )
        if (result.isError === true) {
          yield* Effect.annotateCurrentSpan("mcp.is_error", true)
          return yield* Effect.fail(
            new Tool.ToolCallError({
              reason: "Failed",
              message: Support.errorText(result),
              toolName: registeredName
            })
          )
        }
        return Support.resultParts(result)
      }).pipe(
        Effect.withSpan("Mcp.callTool", {
          attributes: { "mcp.server": entry.serverKey, "tool.name": registeredName, "mcp.tool": spec.name }
        })
      )

    const handleOf = (entry: Entry, session: McpClient.Session): McpClientHandle => ({
      callTool: (name, args = {}) =>
        callTool(entry, session, name, args).pipe(
          Effect.withSpan("Mcp.callTool", { attributes: { "mcp.server": entry.serverKey, "mcp.tool": name } })
        ),
      listTools: request(entry, session, "Listing the tools", session.listTools)
    })

    // -- lifecycle -----------------------------------------------------------

    /**
     * A connected server went away: its tools are withdrawn, its session
     * closed, and it is reconnected with backoff. Ignored when `session` is
     * no longer the entry's (a late close of an old session).
     */
    const markDropped = (entry: Entry, session: McpClient.Session, error: McpError): Effect.Effect<void> =>
      locked(Effect.gen(function*() {
        if (!isCurrent(entry) || entry.session !== session || entry.status !== "connected") return
        entry.status = "reconnecting"
        entry.error = error
        entry.session = undefined
        entry.handle = undefined
        entry.tools = []
        yield* syncTools
        const sessionScope = entry.sessionScope
        entry.sessionScope = undefined
        if (sessionScope !== undefined) yield* Scope.close(sessionScope, Exit.void)
        entry.fiber = yield* FiberSet.run(fibers, reconnect(entry))
      }))

    const closeSession = (session: McpClient.Session) =>
      Effect.promise(() => session.close()).pipe(Effect.timeout(CLOSE_TIMEOUT), Effect.ignore)

    const refreshTools = (entry: Entry): Effect.Effect<void> =>
      Effect.gen(function*() {
        const session = entry.session
        if (session === undefined || !isCurrent(entry)) return
        const tools = yield* request(entry, session, "Listing the tools", session.listTools)
        yield* locked(Effect.gen(function*() {
          if (!isCurrent(entry) || entry.session !== session) return
          entry.tools = tools
          yield* syncTools
        }))
      }).pipe(
        Effect.catchAll((error) => Effect.logWarning(`Refreshing the tools of MCP server "${entry.serverKey}": ${error.message}`)),
        Effect.withSpan("Mcp.refreshTools", { attributes: { "mcp.server": entry.serverKey } })
      )

    const requestContext = (entry: Entry, signal: AbortSignal): McpRequestContext => ({
      key: entry.key,
      serverKey: entry.serverKey,
      server: entry.server,
      signal
    })

    /** Runs a handler for a server's request, as a Promise the MCP client awaits. */
    const serve = <A>(
      entry: Entry,
      span: string,
      signal: AbortSignal,
      body: (context: McpRequestContext) => Effect.Effect<A, unknown>
    ): Promise<A> =>
      runPromise(
        Effect.raceFirst(body(requestContext(entry, signal)), aborted(signal)).pipe(
          Effect.withSpan(span, { attributes: { "mcp.server": entry.serverKey } })
        )
      )

    const connectFailure = (entry: Entry, error: unknown) =>
      new McpError({
        reason: "Connect",
        message: `Connecting to MCP server "${entry.serverKey}" (${entry.server.url}) failed: ${describeError(error)}`,
        serverKey: entry.serverKey
      })

    interface Opened {
      readonly session: McpClient.Session
      readonly scope: Scope.CloseableScope
      readonly tools: ReadonlyArray<McpToolSpec>
    }

    /**
     * Opens a session in a scope of its own and lists the tools, within the
     * connect timeout; on failure, closes what it opened.
     */
    const open = (entry: Entry): Effect.Effect<Opened, McpError> =>
      Effect.gen(function*() {
        const client = yield* loadClient
        const url = yield* Effect.try({ try: () => new URL(entry.server.url), catch: (error) => connectFailure(entry, error) })
        const sampling = entry.server.handlers?.sampling !== undefined ||
          (yield* Ref.get(handlers)).sampling !== undefined
        const deadline = yield* Deadline.make(connectTimeout)
        // The app's storage and code functions may throw: a defect here would leave `ready` waiting forever.
        const oauth = yield* oauthOf(entry, deadline).pipe(
          Effect.catchAllDefect((defect) => Effect.fail(connectFailure(entry, defect)))
        )
        const scope = yield* Scope.fork(entry.scope, ExecutionStrategy.sequential)
        // Set once the handshake is done: a close before it fails the attempt itself.
        let opened: McpClient.Session | undefined
        return yield* Effect.gen(function*() {
          const session = yield* Effect.uninterruptibleMask((restore) =>
            restore(
              Effect.tryPromise({
                try: (signal) =>
                  client.connect({
                    url,
                    transport: entry.transport,
                    headers: entry.server.customHeaders ?? {},
                    oauth,
                    clientInfo,
                    sampling,
                    signal,
                    onElicit: (request, signal) =>
                      serve(entry, "Mcp.elicitation", signal, (context) =>
                        Effect.flatMap(Ref.get(handlers), (current) => {
                          const handler = entry.server.handlers?.elicitation ?? current.elicitation
                          return handler === undefined
                            ? Effect.succeed<ElicitationResult>({ action: "decline" })
                            : runHandler(() => handler(request, context))
                        })),
                    onSample: (request, signal) =>
                      serve(entry, "Mcp.sampling", signal, (context) =>
                        Effect.flatMap(Ref.get(handlers), (current) => {
                          const handler = entry.server.handlers?.sampling ?? current.sampling
                          return handler === undefined
                            ? Effect.fail(new McpError({ reason: "CallFailed", message: "No sampling handler is set" }))
                            : runHandler(() => handler(request, context))
                        })),
                    onToolsChanged: () => void runFork(refreshTools(entry)),
                    onClose: () => {
                      if (opened === undefined) return
                      void runFork(markDropped(
                        entry,
                        opened,
                        new McpError({
                          reason: "Disconnected",
                          message: `The connection to MCP server "${entry.serverKey}" closed`,
                          serverKey: entry.serverKey
                        })
                      ))
                    }
                  }),
                catch: (error) => connectFailure(entry, error)
              })
            ).pipe(Effect.tap((session) => Scope.addFinalizer(scope, closeSession(session))))
          )
          const tools = yield* Effect.tryPromise({
            try: (signal) => session.listTools(signal),
            catch: (error) => connectFailure(entry, error)
          })
          opened = session
          yield* Effect.annotateCurrentSpan("mcp.tools", tools.length)
          return { session, scope, tools }
        }).pipe(
          // A defect must not leave the callers waiting for `ready` forever.
          Effect.catchAllDefect((defect) => Effect.fail(connectFailure(entry, defect))),
          // Network time only: not the time the user spends authorizing.
          (self) => deadline.bound(self, () => connectFailure(entry, `no answer within ${Duration.format(connectTimeout)}`)),
          Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Scope.close(scope, Exit.void)))
        )
      }).pipe(
        Effect.withSpan("Mcp.connect", {
          attributes: { "mcp.server": entry.serverKey, "mcp.transport": entry.transport }
        })
      )

    /** Makes an opened session the entry's and registers its tools; `undefined` when the entry is gone. */
    const install = (entry: Entry, { scope, session, tools }: Opened): Effect.Effect<McpConnection | undefined> =>
      Effect.flatMap(
        locked(Effect.gen(function*() {
          if (!isCurrent(entry)) return undefined
          entry.session = session
          entry.sessionScope = scope
          entry.handle = handleOf(entry, session)
          entry.tools = tools
          entry.status = "connected"
          entry.error = undefined
          entry.fiber = undefined
          yield* syncTools
          return connectionOf(entry)
        })),
        (connection) => (connection === undefined ? Effect.as(Scope.close(scope, Exit.void), undefined) : Effect.succeed(connection))
      )

    /** Connects, lists the tools and registers them; on failure, records it. */
    const establish = (entry: Entry): Effect.Effect<void> =>
      Effect.gen(function*() {
        const opened = yield* open(entry)
        const connection = yield* install(entry, opened)
        if (connection !== undefined) yield* Deferred.succeed(entry.ready, connection)
      }).pipe(
        Effect.catchAll((error) =>
          Effect.gen(function*() {
            yield* locked(Effect.gen(function*() {
              if (!isCurrent(entry)) return
              entry.status = "failed"
              entry.error = error
              yield* publish
            }))
            yield* Scope.close(entry.scope, Exit.void)
            yield* Deferred.fail(entry.ready, error)
          })
        )
      )

    /** Tries to reach a server that went away again, until it answers or is disconnected. */
    const reconnect = (entry: Entry): Effect.Effect<void> =>
      open(entry).pipe(
        Effect.tapError((error) =>
          locked(Effect.suspend(() => {
            if (!isCurrent(entry) || entry.status !== "reconnecting") return Effect.void
            entry.error = error
            return publish
          }))
        ),
        Effect.retry({ schedule: reconnectSchedule, while: () => isCurrent(entry) }),
        Effect.flatMap((opened) => install(entry, opened)),
        Effect.ignore,
        Effect.withSpan("Mcp.reconnect", { attributes: { "mcp.server": entry.serverKey } })
      )

    const serverKeyFor = (server: McpServerInfo): string => {
      const base = Support.sanitizeKey(server.serverKey ?? Support.deriveServerKey(server.url))
      const taken = new Set(Array.from(entries.values(), (entry) => entry.serverKey))
      if (!taken.has(base)) return base
      for (let n = 2;; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`
    }

    /** Starts connecting, unless connected or connecting; the entry's `ready` tells the outcome. */
    const start = (server: McpServerInfo): Effect.Effect<Entry> =>
      locked(Effect.gen(function*() {
        const key = uniqueKey(server)
        const existing = entries.get(key)
        if (existing !== undefined && existing.status !== "failed") return existing
        if (existing !== undefined) entries.delete(key)
        const entry: Entry = {
          key,
          server,
          serverKey: serverKeyFor(server),
          transport: server.transport ?? "http",
          // Closed by `stop` (disconnect, the layer's finalizer) or a failed first connection, never by the
          // layer's scope directly: a session closed before its entry is stopped would look like a drop.
          scope: yield* Scope.make(ExecutionStrategy.sequential),
          ready: yield* Deferred.make<McpConnection, McpError>(),
          fiber: undefined,
          sessionScope: undefined,
          status: "connecting",
          error: undefined,
          session: undefined,
          handle: undefined,
          tools: []
        }
        entries.set(key, entry)
        yield* publish
        entry.fiber = yield* FiberSet.run(fibers, establish(entry))
        return entry
      }))

    /** Stops an entry that is no longer in `entries`: its attempt, its session, its waiters. */
    const stop = (entry: Entry): Effect.Effect<void> =>
      Effect.gen(function*() {
        if (entry.fiber !== undefined) yield* Fiber.interrupt(entry.fiber)
        yield* Scope.close(entry.scope, Exit.void)
        yield* Deferred.fail(
          entry.ready,
          new McpError({
            reason: "Disconnected",
            message: `MCP server "${entry.serverKey}" was disconnected`,
            serverKey: entry.serverKey
          })
        )
      })

    const connectMcpServer = (server: McpServerInfo): Effect.Effect<McpConnection, McpError> =>
      Effect.gen(function*() {
        const entry = yield* start(server)
        const connection = yield* Deferred.await(entry.ready)
        // The tool names may have changed since (other servers connected).
        const current = (yield* SubscriptionRef.get(connections))[entry.key]
        // A connection that dropped since is returned as it is now (`reconnecting`).
        return current !== undefined && (current.status === "connected" || current.status === "reconnecting")
          ? current
          : connection
      })

    const disconnectMcpServer = (keyOrServer: string | McpServerInfo): Effect.Effect<void> =>
      Effect.gen(function*() {
        const key = typeof keyOrServer === "string" ? keyOrServer : uniqueKey(keyOrServer)
        const entry = yield* locked(Effect.gen(function*() {
          const entry = entries.get(key)
          if (entry === undefined) return undefined
          entries.delete(key)
          entry.status = "failed"
          entry.session = undefined
          entry.handle = undefined
          yield* syncTools
          return entry
        }))
        if (entry !== undefined) {
          yield* stop(entry).pipe(
            Effect.withSpan("Mcp.disconnect", { attributes: { "mcp.server": entry.serverKey } })
          )
        }
      })

    // Registered last, so it runs first when the layer closes: the
    // connections close (and their tools leave the registry) before the
    // fibers and the registry go.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        const all = yield* locked(Effect.gen(function*() {
          const all = Array.from(entries.values())
          entries.clear()
          for (const entry of all) {
            entry.status = "failed"
            entry.session = undefined
          }
          yield* syncTools
          return all
        }))
        yield* Effect.forEach(all, stop, { concurrency: "unbounded", discard: true })
      })
    )

    // -- prompts and resources (see internal/mcpResources.ts) ------------------

    const resources = Resources.make({
      connected: () =>
        Array.from(entries.values()).flatMap((entry) =>
          entry.status === "connected" && entry.session !== undefined ? [{ entry, session: entry.session }] : []
        ),
      request,
      options
    })

    for (const server of options.servers ?? []) yield* start(server)

    return Mcp.of({
      connectMcpServer,
      disconnectMcpServer,
      getMcpClients: SubscriptionRef.get(connections),
      changes: connections.changes,
      setElicitationHandler: (handler) => Ref.update(handlers, (current) => ({ ...current, elicitation: handler })),
      setSamplingHandler: (handler) => Ref.update(handlers, (current) => ({ ...current, sampling: handler })),
      getMcpToken: (contextKey, threadId) =>
        Auth.withCredentials(auth, (credentials) => {
          // A sessionless token needs a context key: a user key is one.
          const key = contextKey ?? (threadId === undefined && credentials._tag === "UserKey"
            ? credentials.userKey
            : undefined)
          return transport.getMcpToken(credentials, {
            ...(key === undefined ? {} : { contextKey: key }),
            ...(threadId === undefined ? {} : { threadId })
          })
        }).pipe(Effect.withSpan("Mcp.getMcpToken")),
      ...resources
    })
  })

/**
 * The service, with the default options.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make: Effect.Effect<Mcp.Service, never, ToolRegistry | TamboTransport | Auth.Auth | Scope.Scope> =
  makeWith()

/**
 * The service, over the registry, transport and auth of the context (e.g.
 * `Mcp.layer.pipe(Layer.provideMerge(Tambo.layer(options)))`). Its
 * connections close when the layer's scope closes.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer: Layer.Layer<Mcp, never, ToolRegistry | TamboTransport | Auth.Auth> = Layer.scoped(Mcp, make)

/**
 * Like {@link layer}, with options: servers to connect at start, handlers,
 * the connect timeout.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerWith = (
  options: MakeOptions
): Layer.Layer<Mcp, never, ToolRegistry | TamboTransport | Auth.Auth> => Layer.scoped(Mcp, makeWith(options))
