/**
 * Connections to MCP (Model Context Protocol) servers, whose tools the model
 * may then call like any client-side tool.
 *
 * Each connection is a scoped resource of the `Mcp` layer: it is closed by
 * `disconnectMcpServer`, and when the layer's scope closes. A connection
 * given up before its server answered the handshake is let finish up to 5
 * seconds (on Effect's clock), so that the session the server may have
 * opened is ended there too; closing the layer waits for that up to 2
 * seconds, then closes what is still waiting. Its status
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
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as Auth from "./Auth.js"
import * as internal from "./internal/mcp/service.js"
import * as TamboMcp from "./internal/tamboMcp.js"
import type { ConfigError, McpError, TamboError } from "./TamboError.js"
import type { TamboConfig } from "./TamboConfig.js"
import type { TamboTransport } from "./TamboTransport.js"
import type { ThreadStore } from "./ThreadStore.js"
import type * as Tool from "./Tool.js"
import type { ToolRegistry } from "./ToolRegistry.js"
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
  /**
   * Handlers for this server's requests, instead of the service-wide ones.
   * A later connect of the same server that gives `handlers` replaces them
   * (`{}` leaves the server to the service-wide ones). The sampling
   * capability is announced when the connection opens, so a sampling
   * handler given only later is never asked.
   */
  readonly handlers?: Partial<McpHandlers> | undefined
  /**
   * For a server that answers 401 with OAuth metadata: this client registers
   * itself, has the user authorize it (authorization code with PKCE) and
   * refreshes its tokens. Without it, such a server fails to connect.
   */
  readonly oauth?: McpOAuthOptions | undefined
  /**
   * The least severe log message the server is asked to send (`logging/setLevel`,
   * sent on each connection when the server offers logging). Without it, the
   * server sends what it chooses. `Mcp.Service.setMcpLogLevel` changes it;
   * a later connect of the same server that gives `logLevel` does too.
   * The messages come out of `Mcp.Service.logs`.
   *
   * @since 0.2.0
   */
  readonly logLevel?: McpLogLevel | undefined
  /**
   * How long the model's call of one of the server's tools may go without a
   * word from the server: each progress notice it sends starts the wait
   * again, so a long tool that tells its progress runs as long as it needs,
   * up to `maxToolTime`. A call cut by it is an error result the model
   * sees (`ToolCallError` reason `Timeout`), as for any tool. Without it,
   * the call is bounded by the run's tool timeout from its start, progress
   * or not. A later connect of the same server that gives `toolTimeout` or
   * `maxToolTime` changes them for the calls that start after it (to drop
   * them, disconnect the server and connect it again).
   * Positive and at most 2^31 − 1 ms (about 24.8 days, the longest a timer
   * waits), or `Infinity` (never cut): else the connect fails with an
   * `McpError` (`Connect`) that names it, before anything is opened (a later
   * connect of a known server changes nothing of it, its connection neither).
   *
   * @since 0.2.0
   */
  readonly toolTimeout?: Duration.DurationInput | undefined
  /**
   * With `toolTimeout`: the longest the model's call of one of the server's
   * tools may take in all, progress or not. Default 10 minutes. Checked as
   * `toolTimeout` is, also when given without it.
   *
   * @since 0.2.0
   */
  readonly maxToolTime?: Duration.DurationInput | undefined
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
   * `authorizationUrl` carries a new `state` each time: answer only with
   * the code of a request back whose `state` is the same (another is an
   * answer to a sign-in this client did not start; `mcpOAuthRedirect` in
   * the React package checks it so).
   */
  readonly onAuthorize: (authorizationUrl: string, context: McpRequestContext) => HandlerResult<string>
  /**
   * How long `onAuthorize` may take (the user reads the consent page, logs
   * in, ...). Past it, the connection fails with an `McpError` (`Connect`)
   * and the handler's `context.signal` is aborted (as when `onAuthorize`
   * fails or the connection is dropped meanwhile). Default 10 minutes.
   * Positive and at most 2^31 − 1 ms (about 24.8 days, the longest a timer
   * waits): else the connect fails with an `McpError` (`Connect`) that names
   * it, before the user is asked.
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
   * connecting. Used once: but a code whose exchange failed before the
   * authorization server answered about it (it could not be reached, or
   * failed with a 5xx) is exchanged by the next connect of that server in
   * this service. A function is asked for the code of the connection with
   * that key (several servers share one redirect back).
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
export const uniqueKey: (server: Pick<McpServerInfo, "url" | "transport" | "customHeaders">) => string =
  internal.uniqueKey

/**
 * The server key a server gets by default: the most specific meaningful
 * label of its URL's host (`https://mcp.linear.app/mcp` → `linear`; IP
 * addresses give `mcp`).
 *
 * @since 0.1.0
 * @category Utils
 */
export const deriveServerKey: (url: string) => string = internal.deriveServerKey

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
export const REGISTRY_SERVER_KEY: "registry" = internal.REGISTRY_SERVER_KEY

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
  readonly properties: Readonly<Record<string, PrimitiveSchemaDefinition>>
  readonly required?: ReadonlyArray<string> | undefined
}

/**
 * A field of an elicitation's form, as the MCP specification allows them:
 * a string (`enum` or `oneOf` make it a choice; `enumNames` labels an
 * `enum`), a number or integer, a boolean, or an array of strings chosen
 * from `items` (a multiple choice).
 *
 * @since 0.2.0
 * @category Elicitation
 */
export type PrimitiveSchemaDefinition =
  | {
    readonly type: "string"
    readonly title?: string | undefined
    readonly description?: string | undefined
    readonly minLength?: number | undefined
    readonly maxLength?: number | undefined
    readonly format?: "email" | "uri" | "date" | "date-time" | undefined
    readonly enum?: ReadonlyArray<string> | undefined
    readonly enumNames?: ReadonlyArray<string> | undefined
    readonly oneOf?: ReadonlyArray<{ readonly const: string; readonly title: string }> | undefined
    readonly default?: string | undefined
  }
  | {
    readonly type: "number" | "integer"
    readonly title?: string | undefined
    readonly description?: string | undefined
    readonly minimum?: number | undefined
    readonly maximum?: number | undefined
    readonly default?: number | undefined
  }
  | {
    readonly type: "boolean"
    readonly title?: string | undefined
    readonly description?: string | undefined
    readonly default?: boolean | undefined
  }
  | {
    readonly type: "array"
    readonly title?: string | undefined
    readonly description?: string | undefined
    readonly minItems?: number | undefined
    readonly maxItems?: number | undefined
    readonly items: {
      readonly type?: "string" | undefined
      readonly enum?: ReadonlyArray<string> | undefined
      readonly anyOf?: ReadonlyArray<{ readonly const: string; readonly title: string }> | undefined
    }
    readonly default?: ReadonlyArray<string> | undefined
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
 * A server asks the user to go to a URL (`elicitation/create`, URL mode):
 * to sign in to a third party, pay, or enter what must not pass through
 * this client. The handler shows `message` and the whole `url` and asks
 * the user's consent: it must never open the URL without it. Only `http`
 * and `https` URLs reach a handler; others are declined.
 *
 * @since 0.2.0
 * @category Elicitation
 */
export interface UrlElicitationRequest {
  readonly method: "elicitation/create"
  readonly params: {
    readonly mode: "url"
    readonly message: string
    readonly url: string
    /** Names this elicitation; `Mcp.Service.elicitationCompletions` tells when the server saw it finish. */
    readonly elicitationId: string
  }
}

/**
 * The user's answer to a URL elicitation: `accept` (they agreed to go to
 * the URL; the interaction goes on there), `decline`, or `cancel`
 * (dismissed).
 *
 * @since 0.2.0
 * @category Elicitation
 */
export interface UrlElicitationResult {
  readonly action: "accept" | "decline" | "cancel"
}

/**
 * A server said a URL elicitation finished (`notifications/elicitation/complete`):
 * what the user did at the URL is done, and a UI waiting on it may move on.
 *
 * @since 0.2.0
 * @category Elicitation
 */
export interface McpElicitationComplete {
  /** {@link uniqueKey} of the server. */
  readonly key: string
  readonly serverKey: string
  readonly elicitationId: string
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
 * Answers a server's URL elicitation, with the user's consent. A server is
 * told the client takes URL elicitations only when it connects while a
 * URL handler is set (its own or the service's): without one it never
 * sends them.
 *
 * @since 0.2.0
 * @category Elicitation
 */
export type UrlElicitationHandler = (
  request: UrlElicitationRequest,
  context: McpRequestContext
) => HandlerResult<UrlElicitationResult>

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
  /**
   * Answers the server's URL elicitations (not in `@tambo-ai/client`'s
   * shape).
   *
   * @since 0.2.0
   */
  readonly urlElicitation?: UrlElicitationHandler | undefined
}

// ---------------------------------------------------------------------------
// Logging, progress, completions, roots
// ---------------------------------------------------------------------------

/**
 * The severity of a server's log message, from the least severe to the most
 * (the syslog levels MCP uses).
 *
 * @since 0.2.0
 * @category Models
 */
export type McpLogLevel = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency"

/**
 * A log message a connected server sent (`notifications/message`).
 *
 * @since 0.2.0
 * @category Models
 */
export interface McpLogMessage {
  /** {@link uniqueKey} of the server. */
  readonly key: string
  readonly serverKey: string
  readonly level: McpLogLevel
  /** The name of the server's logger, when it gave one. */
  readonly logger?: string | undefined
  /** What the server logged: any JSON value. */
  readonly data: unknown
}

/**
 * How far a server has come with a request (`notifications/progress`):
 * `progress` grows with each notice; `total`, when the server knows it, is
 * what `progress` reaches at the end.
 *
 * @since 0.2.0
 * @category Models
 */
export interface McpProgress {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

/**
 * The progress a server tells of one of the model's calls of its tools.
 *
 * @since 0.2.0
 * @category Models
 */
export interface McpToolProgress extends McpProgress {
  /** {@link uniqueKey} of the server. */
  readonly key: string
  readonly serverKey: string
  /** The tool's name on the server. */
  readonly tool: string
  /** The tool's name in the registry: the name the model called. */
  readonly registeredName: string
  /** The id of the model's call, as the thread's `tool_use` block has it. */
  readonly toolCallId: string
}

/**
 * What a completion is for: an argument of a server's prompt, or a variable
 * of one of its resource templates (`uri` is the template).
 *
 * @since 0.2.0
 * @category Models
 */
export type McpCompletionRef =
  | { readonly type: "ref/prompt"; readonly name: string }
  | { readonly type: "ref/resource"; readonly uri: string }

/**
 * The values a server suggests for an argument (at most 100), and, when it
 * says so, how many there are in all and whether there are more than it sent.
 *
 * @since 0.2.0
 * @category Models
 */
export interface McpCompletion {
  readonly values: ReadonlyArray<string>
  readonly total?: number | undefined
  readonly hasMore?: boolean | undefined
}

/**
 * A root: a place (a `file://` URI, for most servers) the application lets
 * servers work in. Servers ask for the roots (`roots/list`) and are told
 * when they change.
 *
 * @since 0.2.0
 * @category Models
 */
export interface McpRoot {
  readonly uri: string
  readonly name?: string | undefined
}

// ---------------------------------------------------------------------------
// Connections
// ---------------------------------------------------------------------------

/**
 * `connecting` (the first time), `connected`, `reconnecting` (the server
 * went away; it is tried again with backoff and its tools are withdrawn
 * meanwhile), `failed` (the first connection failed, the reconnect schedule
 * ran out, or it was closed; a later connect of the server tries again).
 *
 * @since 0.1.0
 * @category Models
 */
export type McpConnectionStatus = "connecting" | "connected" | "reconnecting" | "failed"

/**
 * What a server says it offers in its handshake: tools, prompts, resources
 * (and whether one may subscribe to them), whether it says when their
 * lists change, logging, completions.
 *
 * @since 0.2.0
 * @category Models
 */
export interface McpServerCapabilities {
  readonly tools?: { readonly listChanged?: boolean | undefined } | undefined
  readonly prompts?: { readonly listChanged?: boolean | undefined } | undefined
  readonly resources?: { readonly subscribe?: boolean | undefined; readonly listChanged?: boolean | undefined } | undefined
  readonly logging?: object | undefined
  readonly completions?: object | undefined
  readonly experimental?: Readonly<Record<string, object>> | undefined
  readonly [key: string]: unknown
}

/**
 * Direct access to a connected server.
 *
 * @since 0.1.0
 * @category Models
 */
export interface McpClientHandle {
  /**
   * Calls a tool by its name on the server. An `isError` result is a success
   * here. With `onProgress`, the server is asked to tell its progress, and
   * each notice restarts the request's timeout (`MakeOptions.requestTimeout`),
   * so a long call that makes progress is not cut. `meta` goes with the
   * request as its `_meta` (a trace id, what the server's docs ask for).
   *
   * A request the server answers 404 to the session's id (it forgot the
   * session: it restarted, and did not take the request) waits for the
   * reconnection, within the request timeout, and is sent once more on the
   * new session; so are the listings, prompts, resource reads and
   * completions. Any other way the server goes away fails it with
   * `Disconnected`, as does a second 404, a reconnection that fails for
   * good, or a disconnect meanwhile.
   */
  readonly callTool: (
    name: string,
    args?: Readonly<Record<string, unknown>>,
    options?: McpCallOptions
  ) => Effect.Effect<McpToolResult, McpError>
  /** Lists the server's tools again (all pages). */
  readonly listTools: Effect.Effect<ReadonlyArray<McpToolSpec>, McpError>
  /**
   * Replaces the server's own handlers with what `update` makes of the ones
   * it has now, on this session, as `Mcp.Service.updateMcpServerHandlers`
   * does. A handle kept from an earlier session (the server was
   * disconnected and connected again, or reconnected after a drop) fails
   * with `NotConnected`, as its `callTool` does, and leaves the handlers of
   * the later connection as they are: that one's own `client` replaces them.
   *
   * @since 0.2.0
   */
  readonly updateHandlers: (
    update: (handlers: Partial<McpHandlers>) => Partial<McpHandlers>
  ) => Effect.Effect<void, McpError>
  /**
   * Disconnects the server, as `Mcp.Service.disconnectMcpServer` does,
   * also while it reconnects after a drop. Nothing once this connection was
   * disconnected: a later connection of the server under the same key is
   * left as it is.
   *
   * @since 0.2.0
   */
  readonly disconnect: Effect.Effect<void>
}

/**
 * What a call through {@link McpClientHandle.callTool} may take besides its
 * arguments.
 *
 * @since 0.2.0
 * @category Models
 */
export interface McpCallOptions {
  /** Hears the server's progress notices; each restarts the request's timeout. */
  readonly onProgress?: ((progress: McpProgress) => void) | undefined
  /** Sent as the request's `_meta`. */
  readonly meta?: Readonly<Record<string, unknown>> | undefined
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
  /**
   * The server's tools, once connected. A server that says its tools
   * changed (`notifications/tools/list_changed`) has them listed again, one
   * listing at a time, and once more after it when it said so again
   * meanwhile: they are the latest the server listed.
   */
  readonly tools: ReadonlyArray<McpTool>
  /**
   * How many times the server said its prompts changed
   * (`notifications/prompts/list_changed`) since it was first connected: a
   * new value means its prompts are worth listing again. React's
   * `useTamboMcpPromptList` does.
   */
  readonly promptsVersion: number
  /**
   * How many times the server said its resources changed
   * (`notifications/resources/list_changed`) since it was first connected.
   * React's `useTamboMcpResourceList` lists them again then.
   */
  readonly resourcesVersion: number
  /** The name and version the server reported. */
  readonly serverVersion?: { readonly name: string; readonly version: string } | undefined
  /**
   * The level its server is asked to log at (`McpServerInfo.logLevel`, or
   * as `setMcpLogLevel` set it since), asked for again on each session.
   *
   * @since 0.2.0
   */
  readonly logLevel?: McpLogLevel | undefined
  /** What the server said it offers, while connected. @since 0.2.0 */
  readonly capabilities?: McpServerCapabilities | undefined
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
     * Connects to a server, lists its tools and registers them. Over
     * Streamable HTTP the tools are listed once the session's event stream
     * is open (or the server said it offers none), so a change of its tools
     * is never said to no one; a server that takes over 2 seconds to open
     * it has its tools listed then, and again once it opens. A server
     * already connected is returned as it is (with `handlers` given, those
     * answer its next requests instead of its earlier ones), a connection in
     * progress is awaited, and a failed one is tried again (with its own
     * handlers, as given or replaced since, unless `handlers` are given). Fails with an `McpError`
     * (reason `Connect`) when the server cannot be reached, the handshake
     * fails or takes longer than the connect timeout, or the server goes
     * away before the tools are listed; the connection's status is then
     * `failed` with that error. Once the service is closing (its scope
     * closes) it fails with reason `Disconnected`: a connection in progress
     * then is cancelled, and a later connect opens nothing. Interrupting the
     * caller does not cancel the connection (`disconnectMcpServer` does).
     */
    readonly connectMcpServer: (server: McpServerInfo) => Effect.Effect<McpConnection, McpError>
    /**
     * Closes a connection (or cancels it while connecting), unregisters its
     * tools and forgets it. Takes the connection's key or its server. An
     * unknown key does nothing. Over Streamable HTTP the session is ended on
     * the server (a `DELETE`), waiting at most 2 seconds for its answer; by
     * the time this returns, the calls still in flight to the server have
     * ended with an `McpError` and its requests in flight (an elicitation,
     * a sampling) have their `signal` aborted.
     */
    readonly disconnectMcpServer: (keyOrServer: string | McpServerInfo) => Effect.Effect<void>
    /**
     * Replaces the handlers of a known server (connecting, connected or
     * reconnecting) with what `update` makes of the ones it has now: they
     * answer its next requests, on the same session. Unlike a connect with
     * `handlers`, it never starts a connection: a server that is unknown or
     * disconnected is left as it is, also when it is disconnected while
     * this is under way (the two are decided one after the other), and one
     * that failed keeps them for its next connect.
     *
     * @since 0.2.0
     */
    readonly updateMcpServerHandlers: (
      key: string,
      update: (handlers: Partial<McpHandlers>) => Partial<McpHandlers>
    ) => Effect.Effect<void>
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
     * Sets (or with `undefined` removes) the URL elicitation handler of
     * every server without one of its own. Servers are told the client
     * takes URL elicitations when they connect while one is set; a server
     * told so whose handler is gone since has its URL elicitations declined.
     *
     * @since 0.2.0
     */
    readonly setUrlElicitationHandler: (handler: UrlElicitationHandler | undefined) => Effect.Effect<void>
    /**
     * The URL elicitations servers said finished, from when the stream
     * starts (a UI that showed "continue in your browser" may move on).
     *
     * @since 0.2.0
     */
    readonly elicitationCompletions: Stream.Stream<McpElicitationComplete>
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
     * A resource's contents, then its contents again each time its server
     * says it changed (`resources/subscribe`, then
     * `notifications/resources/updated`), for as long as the stream runs:
     * the subscription on the server ends with it (one subscription a
     * resource, however many watch it). A server that does not offer
     * subscriptions, and the application's own resources, give the contents
     * once. Fails with an `McpError` as `readMcpResource` does, and with
     * `Disconnected` when the server goes away (watch again once it is
     * reconnected).
     *
     * @since 0.2.0
     */
    readonly watchMcpResource: (serverKey: string, uri: string) => Stream.Stream<McpResourceContents, McpError>
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
    /**
     * The values a connected server suggests for an argument of one of its
     * prompts or resource templates, given what was typed so far
     * (`argument.value`) and the arguments already chosen (`context`). A
     * server that does not offer completions suggests nothing. Fails with an
     * `McpError`: `NotConnected` for a server key that is not connected,
     * `CallFailed` when the server refuses (an unknown prompt).
     *
     * @since 0.2.0
     */
    readonly completeMcpArgument: (
      serverKey: string,
      ref: McpCompletionRef,
      argument: { readonly name: string; readonly value: string },
      context?: Readonly<Record<string, string>>
    ) => Effect.Effect<McpCompletion, McpError>
    /**
     * Asks a connected server to send log messages of `level` and above,
     * now and after each reconnection. A server that does not offer logging
     * sends none: the level is kept and nothing is sent. Fails with an
     * `McpError`: `NotConnected` for a server key that is not connected,
     * `CallFailed` when the server refuses, `Disconnected` when it is gone
     * (the level is kept for its next session). A server that forgot the
     * session (Streamable HTTP's 404) is asked again on the next one.
     *
     * @since 0.2.0
     */
    readonly setMcpLogLevel: (serverKey: string, level: McpLogLevel) => Effect.Effect<void, McpError>
    /**
     * The log messages of every connected server, from when the stream
     * starts. A subscriber that falls over 1,000 messages behind loses the
     * oldest.
     *
     * @since 0.2.0
     */
    readonly logs: Stream.Stream<McpLogMessage>
    /**
     * The progress servers tell of the model's calls of their tools, from
     * when the stream starts (a UI shows it beside the call's `tool_use`
     * block, by `toolCallId`). A subscriber that falls over 1,000 notices
     * behind loses the oldest.
     *
     * @since 0.2.0
     */
    readonly toolProgress: Stream.Stream<McpToolProgress>
    /**
     * The latest progress a server told of the model's call `toolCallId`
     * while that call runs; `None` before its first notice and once it
     * ended. With `toolProgress`, a UI that appears in the middle of
     * a call shows where it is at once: read this, then follow the stream.
     *
     * @since 0.2.0
     */
    readonly currentToolProgress: (toolCallId: string) => Effect.Effect<Option.Option<McpToolProgress>>
    /**
     * Sets the roots servers are given (or with `undefined` stops offering
     * them), and tells each connected server that was offered roots that
     * they changed; a server still connecting (or reconnecting) is told once
     * connected, when the roots changed since it began. The roots capability
     * is announced to servers connected while roots are set, so a server
     * connected before any were set is not told of them until it reconnects.
     *
     * @since 0.2.0
     */
    readonly setMcpRoots: (roots: ReadonlyArray<McpRoot> | undefined) => Effect.Effect<void>
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
   * Answers servers' URL elicitations (see `Mcp.Service.setUrlElicitationHandler`).
   *
   * @since 0.2.0
   */
  readonly urlElicitationHandler?: UrlElicitationHandler | undefined
  /**
   * The roots servers are given (see `Mcp.Service.setMcpRoots`).
   *
   * @since 0.2.0
   */
  readonly roots?: ReadonlyArray<McpRoot> | undefined
  /**
   * How long connecting and listing the tools may take. Default 30 seconds.
   * The time a user spends authorizing the client (OAuth) does not count.
   * Positive and at most 2^31 − 1 ms (about 24.8 days, the longest a timer
   * waits): else building the service fails with a `ConfigError`
   * (`InvalidOption`) that names it.
   */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /**
   * How long a request to a connected server may take: listing its tools,
   * prompts and resources, reading one, a call through a connection's
   * `client`. Default 60 seconds. A tool call of the model is bounded by
   * the run's tool timeout (`toolTimeout`, or the tool's own) instead, so a
   * long-running MCP tool runs as long as that allows. Positive and at most
   * 2^31 − 1 ms: else building the service fails with a `ConfigError`
   * (`InvalidOption`) that names it.
   */
  readonly requestTimeout?: Duration.DurationInput | undefined
  /** How this client introduces itself to servers. Default `tambo-effect` `0.1.0`. */
  readonly clientInfo?: { readonly name: string; readonly version: string } | undefined
  /**
   * When to try again to reach a server that went away (each attempt bounded
   * by the connect timeout). Default: exponential from 500 ms, at most 30 s
   * apart, jittered, for as long as the server is not disconnected. A
   * schedule that ends without reaching the server leaves its connection
   * `failed` with the last attempt's error; a later `connectMcpServer` tries
   * again.
   */
  readonly reconnectSchedule?: Schedule.Schedule<unknown, McpError> | undefined
  /** The application's own resources, listed and read under {@link REGISTRY_SERVER_KEY}. */
  readonly resources?: ReadonlyArray<McpResourceSpec> | undefined
  /** Lists the application's resources (with the search string given to `listMcpResources`). */
  readonly listResources?: ResourceSource["listResources"]
  /** Reads one of the application's resources. */
  readonly getResource?: ResourceSource["getResource"]
}

/**
 * The service, with options; a timeout in them that no timer can wait fails
 * it with a `ConfigError` (`InvalidOption`).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeWith: (
  options?: MakeOptions
) => Effect.Effect<Mcp.Service, ConfigError, ToolRegistry | TamboTransport | Auth.Auth | Scope.Scope> =
  internal.makeWith

/**
 * The service, with the default options.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make: Effect.Effect<Mcp.Service, never, ToolRegistry | TamboTransport | Auth.Auth | Scope.Scope> =
  // The defaults are valid options.
  Effect.orDie(makeWith())

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
): Layer.Layer<Mcp, ConfigError, ToolRegistry | TamboTransport | Auth.Auth> => Layer.scoped(Mcp, makeWith(options))

/**
 * The service without the Tambo API, for an application that talks to MCP
 * servers itself: connections, handlers, prompts and resources as
 * {@link makeWith} has them, the servers' tools in a registry of the
 * service's own (a connection's `client` calls them), and `getMcpToken`
 * failing with a `ConfigError`, as there is no Tambo API to ask. The
 * facade's `MCPClient` is one server on it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Mcp } from "@tambo-effect/core"
 *
 * const sum = Effect.scoped(Effect.gen(function*() {
 *   const mcp = yield* Mcp.makeStandalone()
 *   const server = yield* mcp.connectMcpServer({ url: "http://localhost:8123/mcp" })
 *   return yield* server.client!.callTool("add", { a: 2, b: 40 })
 * }))
 * ```
 *
 * @since 0.2.0
 * @category Constructors
 */
export const makeStandalone: (options?: MakeOptions) => Effect.Effect<Mcp.Service, ConfigError, Scope.Scope> =
  internal.makeStandalone

/**
 * {@link makeStandalone} as a Layer with no requirements: its connections
 * close when the layer's scope closes.
 *
 * @since 0.2.0
 * @category Layers
 */
export const layerStandalone = (options: MakeOptions = {}): Layer.Layer<Mcp, ConfigError> =>
  Layer.scoped(Mcp, makeStandalone(options))

/**
 * The name of the connection to Tambo's own MCP server (see
 * {@link followTamboServer}), the one `@tambo-ai/react` gives it.
 *
 * @since 0.2.0
 * @category Constants
 */
export const TAMBO_SERVER_NAME: "__tambo_internal_mcp_server__" = "__tambo_internal_mcp_server__"

/**
 * Connects Tambo's own MCP server (`<tamboUrl>/mcp`, server key `"tambo"`:
 * the prompts and resources of the project's MCP servers) for as long as
 * the scope is open, with an MCP access token for the current thread, or
 * for `contextKey` while no thread is current (none without either, nor
 * when the project has no MCP servers). A new current thread, or a token
 * near its expiry, connects it again with a new token; the scope's end
 * disconnects it. What `Tambo.layer`'s `tamboMcpServer` option does for
 * the layer's life.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const followTamboServer = (
  options: { readonly contextKey?: string | undefined } = {}
): Effect.Effect<void, never, Mcp | ThreadStore | TamboConfig | Scope.Scope> => TamboMcp.follow(options)
