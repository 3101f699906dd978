/**
 * The one module that imports `@modelcontextprotocol/sdk`. `load.ts` loads it
 * with a dynamic `import()` when it connects to a server, so applications
 * that never connect one never load the MCP SDK (bundlers put this module
 * and the SDK in a chunk of their own).
 *
 * It speaks Promises and plain data; the other modules here own the Effect side.
 *
 * @internal
 */
import { type OAuthClientProvider, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport, SseError } from "@modelcontextprotocol/sdk/client/sse.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens
} from "@modelcontextprotocol/sdk/shared/auth.js"
import {
  type CallToolResult,
  CallToolResultSchema,
  type CreateMessageRequest,
  CreateMessageRequestSchema,
  type CreateMessageResult,
  ElicitRequestSchema,
  type ElicitResult,
  ElicitationCompleteNotificationSchema,
  ErrorCode,
  type GetPromptResult,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError as SdkMcpError,
  type RequestId,
  ResourceUpdatedNotificationSchema,
  type Tool as SdkTool
} from "@modelcontextprotocol/sdk/types.js"
import type {
  ElicitationRequest,
  ElicitationResult,
  McpCompletion,
  McpCompletionRef,
  McpLogLevel,
  McpProgress,
  McpPromptArgument,
  McpPromptResult,
  McpPromptSpec,
  McpResourceContents,
  McpResourceSpec,
  McpResourceTemplateSpec,
  McpRoot,
  McpServerCapabilities,
  McpToolResult,
  McpToolSpec,
  McpTransport,
  PrimitiveSchemaDefinition,
  SamplingRequest,
  SamplingResult,
  UrlElicitationRequest,
  UrlElicitationResult
} from "../../Mcp.js"
import * as Tool from "../../Tool.js"
import { fetchRetryingStaleGet, isStaleConnection, watchEventStream } from "./fetch.js"
import { isBoolean, isRecord, isString } from "effect/Predicate"

/**
 * What the OAuth client of a server keeps between connections: the client
 * registration, the tokens, the PKCE verifier of an authorization in progress.
 *
 * @internal
 */
export interface OAuthStore {
  clientInformation: OAuthClientInformationMixed | undefined
  tokens: OAuthTokens | undefined
  codeVerifier: string | undefined
}

/** @internal */
export interface OAuthOptions {
  readonly redirectUrl: string
  readonly clientName: string
  readonly scope: string | undefined
  readonly store: OAuthStore
  /** Called after the store changed (to persist it); awaited before the SDK goes on. */
  readonly persist: () => Promise<void>
  /** The code of an authorization begun earlier (before a page reload): exchanged before connecting. */
  readonly authorizationCode: string | undefined
  /** Takes the user to the authorization URL; resolves with the code the redirect back carries. */
  readonly authorize: (authorizationUrl: URL, signal: AbortSignal) => Promise<string>
  /** Told of a code the authorization server did not judge (it could not be reached, or failed): still good. */
  readonly keepCode: (code: string) => void
}

/** @internal */
export interface ConnectOptions {
  readonly url: URL
  readonly transport: McpTransport
  readonly headers: Readonly<Record<string, string>>
  readonly clientInfo: { readonly name: string; readonly version: string }
  /** How long each request of the session may take, but the tool calls said unbounded. */
  readonly requestTimeoutMs: number
  /** OAuth for servers that answer 401 with OAuth metadata. */
  readonly oauth: OAuthOptions | undefined
  /** Whether to advertise the sampling capability. */
  readonly sampling: boolean
  /** Whether to advertise the roots capability (and that it tells when they change). */
  readonly roots: boolean
  /** Whether to advertise URL-mode elicitation. */
  readonly urlElicitation: boolean
  /** Aborts the connection attempt (and closes what it opened). */
  readonly signal: AbortSignal
  readonly onElicit: (request: ElicitationRequest, signal: AbortSignal) => Promise<ElicitationResult>
  readonly onSample: (request: SamplingRequest, signal: AbortSignal) => Promise<SamplingResult>
  /** Only when `urlElicitation` is advertised. */
  readonly onElicitUrl: (request: UrlElicitationRequest, signal: AbortSignal) => Promise<UrlElicitationResult>
  /** The server said a URL elicitation finished. */
  readonly onElicitationComplete: (elicitationId: string) => void
  /** The server asked for the roots (only when `roots` is advertised). */
  readonly onListRoots: () => Promise<ReadonlyArray<McpRoot>>
  /** The server sent a log message (`notifications/message`). */
  readonly onLog: (message: { readonly level: McpLogLevel; readonly logger?: string; readonly data: unknown }) => void
  /** The server said its tool list changed. */
  readonly onToolsChanged: () => void
  /** The server said its prompt list changed. */
  readonly onPromptsChanged: () => void
  /** The server said its resource list changed. */
  readonly onResourcesChanged: () => void
  /** The server said a resource this session subscribed to changed. */
  readonly onResourceUpdated: (uri: string) => void
  /** The transport closed (also after `close()`), or its event stream dropped and could not resume. */
  readonly onClose: () => void
  /**
   * Told of a handshake that will not be handed out: given up (`signal` aborted, told at once) or
   * failed. Its server may already hold a session that only the answer to `initialize` names: the
   * caller lets the handshake finish a while, then ends it (`terminate`, then `close`), on its clock.
   */
  readonly onAbandoned: (abandoned: Abandoned) => void
}

/** @internal */
export interface Abandoned {
  /** Settles once the handshake has, however it went. Never rejects. */
  readonly handshake: Promise<void>
  /** Ends the session on the server if the handshake opened one (see `Session.terminate`). */
  readonly terminate: () => Promise<void>
  /** Closes the client, which aborts what is still in flight (see `Session.close`). Never rejects. */
  readonly close: () => Promise<void>
}

/** @internal */
export interface Session {
  readonly serverVersion: { readonly name: string; readonly version: string } | undefined
  /** What the server said it offers in the handshake. */
  readonly capabilities: McpServerCapabilities
  readonly instructions: string | undefined
  readonly listTools: (signal: AbortSignal) => Promise<ReadonlyArray<McpToolSpec>>
  /**
   * `bounded: false`: no bound but the caller's own (the MCP SDK would cut it after `requestTimeoutMs`).
   * With `onProgress`, the server is asked to tell its progress, and each notice restarts the bound.
   * `meta` goes with the request as its `_meta`.
   */
  readonly callTool: (
    name: string,
    args: Readonly<Record<string, unknown>>,
    signal: AbortSignal,
    bounded: boolean,
    onProgress?: (progress: McpProgress) => void,
    meta?: Readonly<Record<string, unknown>>
  ) => Promise<McpToolResult>
  /** The server's prompts (all pages); none when it does not offer prompts. */
  readonly listPrompts: (signal: AbortSignal) => Promise<ReadonlyArray<McpPromptSpec>>
  readonly getPrompt: (
    name: string,
    args: Readonly<Record<string, string>>,
    signal: AbortSignal
  ) => Promise<McpPromptResult>
  /** The server's resources (all pages); none when it does not offer resources. */
  readonly listResources: (signal: AbortSignal) => Promise<ReadonlyArray<McpResourceSpec>>
  readonly listResourceTemplates: (signal: AbortSignal) => Promise<ReadonlyArray<McpResourceTemplateSpec>>
  readonly readResource: (uri: string, signal: AbortSignal) => Promise<McpResourceContents>
  /** Whether the server tells of changes of the resources one subscribes to. */
  readonly subscribesResources: boolean
  readonly subscribeResource: (uri: string, signal: AbortSignal) => Promise<void>
  readonly unsubscribeResource: (uri: string, signal: AbortSignal) => Promise<void>
  /** Completions of an argument of a prompt or resource template; none when the server offers no completions. */
  readonly complete: (
    ref: McpCompletionRef,
    argument: { readonly name: string; readonly value: string },
    context: Readonly<Record<string, string>> | undefined,
    signal: AbortSignal
  ) => Promise<McpCompletion>
  /** Whether the server sends log messages (and takes a level). */
  readonly offersLogging: boolean
  /** Asks the server to send log messages of `level` and above. */
  readonly setLoggingLevel: (level: McpLogLevel, signal: AbortSignal) => Promise<void>
  /** Whether the roots capability was advertised on this session. */
  readonly announcesRoots: boolean
  /** Tells the server that the roots changed. */
  readonly sendRootsListChanged: () => Promise<void>
  /**
   * Ends the session on the server when the transport can (Streamable HTTP: a `DELETE`); settles
   * with its answer, however it went. Unbounded: the caller bounds it, then calls `close`, which
   * aborts it. Never rejects.
   */
  readonly terminate: () => Promise<void>
  /** Closes the client, which ends the requests in flight and aborts the server's (and `terminate`). Never rejects. */
  readonly close: () => Promise<void>
  /**
   * Whether a failed request means the server is gone (the connection
   * failed or closed, or the server forgot the session), rather than that
   * it answered with an error or with something malformed.
   */
  readonly isDisconnection: (error: unknown) => boolean
  /**
   * Whether a failed request was answered 404 to the session's id: the server forgot the
   * session (it restarted) and did not take the request, which a new session may send again.
   * Streamable HTTP only, whose session management says so. The HTTP+SSE transport's session is
   * its event stream: a server that restarted ends it (a drop), and the protocol gives its `POST`s
   * no meaning for a session its server no longer has (the MCP SDK's examples answer 404 or 400,
   * a proxy what it likes), and the stream it reads answers on may still be the old one, so such
   * an answer is a drop (`isDisconnection`, the session closed and reconnected), never a request
   * to send again.
   */
  readonly isSessionForgotten: (error: unknown) => boolean
}

/** More pages than any real server lists; guards against a cursor loop. */
const MAX_PAGES = 100

/** Every page of a paginated list: `list` fetches a page, `items` reads its items. */
const allPages = async <R extends { readonly nextCursor?: string | undefined }, A>(
  list: (params: { cursor?: string }) => Promise<R>,
  items: (response: R) => ReadonlyArray<A>
): Promise<ReadonlyArray<A>> => {
  const all: Array<A> = []
  let cursor: string | undefined
  for (let n = 0; n < MAX_PAGES; n++) {
    const response = await list(cursor === undefined ? {} : { cursor })
    all.push(...items(response))
    cursor = response.nextCursor
    if (cursor === undefined) break
  }
  return all
}

/** Copies the optional fields of `source` that are present with the type `is` admits. */
const fieldsOf = <K extends string, A>(
  source: Readonly<Record<string, unknown>>,
  fields: ReadonlyArray<K>,
  is: (u: unknown) => u is A
): { [P in K]?: A } => {
  const out: { [P in K]?: A } = {}
  for (const field of fields) {
    const value = source[field]
    if (is(value)) out[field] = value
  }
  return out
}

/** Copies the optional string fields of `source` that are present. */
const strings = <K extends string>(source: Readonly<Record<string, unknown>>, fields: ReadonlyArray<K>) =>
  fieldsOf(source, fields, isString)

const promptArgument = (arg: { readonly name: string; readonly description?: string | undefined; readonly required?: boolean | undefined }): McpPromptArgument => ({
  name: arg.name,
  ...(arg.description === undefined ? {} : { description: arg.description }),
  ...(arg.required === undefined ? {} : { required: arg.required })
})

const promptResult = (result: GetPromptResult): McpPromptResult => ({
  ...(result.description === undefined ? {} : { description: result.description }),
  messages: result.messages.map((message) => ({ role: message.role, content: message.content }))
})

const jsonSchema = (u: unknown): Tool.JsonSchema | undefined => (Tool.isJsonSchema(u) ? u : undefined)

const toolAnnotations = (annotations: NonNullable<SdkTool["annotations"]>): Tool.ToolAnnotations => ({
  ...strings(annotations, ["title"]),
  ...fieldsOf(annotations, ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"], isBoolean)
})

const promptSpec = (prompt: {
  readonly name: string
  readonly arguments?: ReadonlyArray<Parameters<typeof promptArgument>[0]> | undefined
}): McpPromptSpec => ({
  name: prompt.name,
  ...strings(prompt, ["title", "description"]),
  arguments: (prompt.arguments ?? []).map(promptArgument)
})

const resourceSpec = (resource: { readonly uri: string; readonly name: string }): McpResourceSpec => ({
  uri: resource.uri,
  name: resource.name,
  ...strings(resource, ["title", "description", "mimeType"])
})

const templateSpec = (template: { readonly uriTemplate: string; readonly name: string }): McpResourceTemplateSpec => ({
  uriTemplate: template.uriTemplate,
  name: template.name,
  ...strings(template, ["title", "description", "mimeType"])
})

const toolSpec = (tool: SdkTool): McpToolSpec => {
  const inputSchema = jsonSchema(tool.inputSchema) ?? { type: "object" }
  const outputSchema = jsonSchema(tool.outputSchema)
  const annotations = tool.annotations
  return {
    name: tool.name,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    ...(tool.description === undefined ? {} : { description: tool.description }),
    inputSchema,
    ...(outputSchema === undefined ? {} : { outputSchema }),
    ...(annotations === undefined ? {} : { annotations: toolAnnotations(annotations) })
  }
}

const progressOf = (notice: { readonly progress: number; readonly total?: number | undefined; readonly message?: string | undefined }): McpProgress => ({
  progress: notice.progress,
  ...(notice.total === undefined ? {} : { total: notice.total }),
  ...(notice.message === undefined ? {} : { message: notice.message })
})

const callResult = (result: CallToolResult): McpToolResult => ({
  content: result.content,
  structuredContent: result.structuredContent,
  isError: result.isError
})

const elicitationRequest = (params: {
  readonly message: string
  readonly requestedSchema?: {
    readonly properties: Readonly<Record<string, PrimitiveSchemaDefinition>>
    readonly required?: ReadonlyArray<string> | undefined
  }
}): ElicitationRequest => ({
  method: "elicitation/create",
  params: {
    mode: "form",
    message: params.message,
    requestedSchema: {
      type: "object",
      properties: params.requestedSchema?.properties ?? {},
      ...(params.requestedSchema?.required === undefined ? {} : { required: params.requestedSchema.required })
    }
  }
})

const elicitResult = (result: ElicitationResult): ElicitResult => {
  if (result.content === undefined) return { action: result.action }
  const content: Record<string, string | number | boolean | Array<string>> = {}
  for (const [key, value] of Object.entries(result.content)) {
    content[key] = typeof value === "object" ? [...value] : value
  }
  return { action: result.action, content }
}

const samplingRequest = (params: CreateMessageRequest["params"]): SamplingRequest => ({
  method: "sampling/createMessage",
  params: {
    messages: params.messages.map((message) => ({ role: message.role, content: message.content })),
    maxTokens: params.maxTokens,
    systemPrompt: params.systemPrompt,
    temperature: params.temperature,
    stopSequences: params.stopSequences,
    includeContext: params.includeContext,
    modelPreferences: params.modelPreferences,
    metadata: isRecord(params.metadata) ? params.metadata : undefined
  }
})

const samplingResult = (result: SamplingResult): CreateMessageResult => ({
  model: result.model,
  role: result.role,
  content: result.content.type === "text"
    ? { type: "text", text: result.content.text }
    : { type: result.content.type, data: result.content.data, mimeType: result.content.mimeType },
  ...(result.stopReason === undefined ? {} : { stopReason: result.stopReason })
})

/**
 * Whether a request failed because the server is gone: the connection closed (or was never
 * there), the network failed (`fetch` rejects with a `TypeError`), the event stream failed, or
 * the server forgot the session (HTTP 404). Anything else (an error the server answered, a
 * malformed answer, a timeout) is the request's own failure.
 */
const isDisconnection = (error: unknown): boolean => {
  if (error instanceof SdkMcpError) return error.code === ErrorCode.ConnectionClosed
  if (error instanceof StreamableHTTPError) return error.code === 404
  if (error instanceof SseError || error instanceof TypeError) return true
  if (!(error instanceof Error)) return false
  // The MCP SDK's client and SSE transport, once closed; the SSE transport's POST to a session
  // its server no longer has.
  return error.message === "Not connected" || error.message.startsWith("Error POSTing to endpoint (HTTP 404)")
}

type AnyTransport = StreamableHTTPClientTransport | SSEClientTransport

const makeTransport = (
  options: ConnectOptions,
  authProvider: OAuthClientProvider | undefined,
  watchingFetch: FetchLike = fetchRetryingStaleGet
): AnyTransport => {
  const requestInit: RequestInit = { headers: { ...options.headers } }
  const auth = authProvider === undefined ? {} : { authProvider }
  return options.transport === "sse"
    ? new SSEClientTransport(options.url, { requestInit, ...auth, fetch: fetchRetryingStaleGet })
    : new StreamableHTTPClientTransport(options.url, {
      requestInit,
      ...auth,
      fetch: watchingFetch,
      // A dropped event stream is not resumed here: the caller reconnects the whole session with its own backoff.
      reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 0, maxReconnectionDelay: 0, reconnectionDelayGrowFactor: 1 }
    })
}

/** Exchanges an authorization code for tokens, through a transport made for that only. */
const finishAuth = (options: ConnectOptions, authProvider: OAuthClientProvider, code: string): Promise<void> =>
  makeTransport(options, authProvider).finishAuth(code).catch((error: unknown) => {
    if (!judgesCode(error)) options.oauth?.keepCode(code)
    throw error
  })

/**
 * Whether the authorization server answered about the code (refused it, or the client): an OAuth
 * error but `server_error` (also what a 5xx without an OAuth body reads as) and
 * `temporarily_unavailable`. Otherwise it was not reached, and the code may still be exchanged.
 */
const judgesCode = (error: unknown): boolean => {
  const code = isRecord(error) ? error["errorCode"] : undefined
  return isString(code) && code !== "server_error" && code !== "temporarily_unavailable"
}

/**
 * The OAuth client of one server (authorization code with PKCE, dynamic
 * client registration, refresh), over state its caller keeps, so that a
 * reconnection reuses the tokens. The authorization URL is held for the
 * caller instead of redirecting.
 */
class ClientAuth implements OAuthClientProvider {
  #authorizationUrl: URL | undefined
  constructor(private readonly options: OAuthOptions) {}

  get redirectUrl(): string {
    return this.options.redirectUrl
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      redirect_uris: [this.options.redirectUrl],
      client_name: this.options.clientName,
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...(this.options.scope === undefined ? {} : { scope: this.options.scope })
    }
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.options.store.clientInformation
  }

  saveClientInformation(information: OAuthClientInformationMixed): Promise<void> {
    this.options.store.clientInformation = information
    return this.options.persist()
  }

  tokens(): OAuthTokens | undefined {
    return this.options.store.tokens
  }

  saveTokens(tokens: OAuthTokens): Promise<void> {
    this.options.store.tokens = tokens
    return this.options.persist()
  }

  /**
   * A new `state` for each authorization (RFC 6749 §10.12): the redirect
   * back must carry it, so the app can tell an answer to its own request
   * from one started elsewhere.
   */
  state(): string {
    const bytes = crypto.getRandomValues(new Uint8Array(16))
    return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.#authorizationUrl = authorizationUrl
  }

  takeAuthorizationUrl(): URL | undefined {
    const url = this.#authorizationUrl
    this.#authorizationUrl = undefined
    return url
  }

  saveCodeVerifier(codeVerifier: string): Promise<void> {
    this.options.store.codeVerifier = codeVerifier
    return this.options.persist()
  }

  codeVerifier(): string {
    const verifier = this.options.store.codeVerifier
    if (verifier === undefined) throw new Error("No PKCE code verifier was saved")
    return verifier
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    const store = this.options.store
    if (scope === "all" || scope === "client") store.clientInformation = undefined
    if (scope === "all" || scope === "tokens") store.tokens = undefined
    if (scope === "all" || scope === "verifier") store.codeVerifier = undefined
    return this.options.persist()
  }
}

/**
 * The signal a handler of a server's request is given. The SDK ignores a `notifications/cancelled`
 * for request id 0 (a falsy id to it), which is the first request a server sends on a session:
 * that request's signal is also aborted by the transport's cancel of it, read before the SDK reads
 * it (the client calls the `onmessage` set before `connect` first).
 */
const cancelsFirstRequest = (transport: Transport) => {
  let first: AbortController | undefined
  transport.onmessage = (message) => {
    if (
      "method" in message && message.method === "notifications/cancelled" && !("id" in message) &&
      message.params?.["requestId"] === 0
    ) {
      // Made here when the handler has not run yet: it is then given an aborted signal.
      first ??= new AbortController()
      first.abort(message.params["reason"])
    }
  }
  return (extra: { readonly signal: AbortSignal; readonly requestId: RequestId }): AbortSignal => {
    if (extra.requestId !== 0) return extra.signal
    const controller = first ??= new AbortController()
    if (extra.signal.aborted) controller.abort(extra.signal.reason)
    else extra.signal.addEventListener("abort", () => controller.abort(extra.signal.reason), { once: true })
    return controller.signal
  }
}

/** Opens a transport and a client on it, and initialises the session. */
const open = async (
  options: ConnectOptions,
  authProvider: OAuthClientProvider | undefined
): Promise<{ readonly client: Client; readonly terminate: () => Promise<void>; readonly close: () => Promise<void> }> => {
  // The SSE transport opens its event stream before the handshake; Streamable HTTP opens it after.
  const eventStream = options.transport === "sse" ? undefined : watchEventStream()
  const transport = makeTransport(options, authProvider, eventStream?.fetch)
  const client = new Client(
    { name: options.clientInfo.name, version: options.clientInfo.version },
    {
      capabilities: {
        elicitation: { form: {}, ...(options.urlElicitation ? { url: {} } : {}) },
        ...(options.sampling ? { sampling: {} } : {}),
        ...(options.roots ? { roots: { listChanged: true } } : {})
      },
      // `autoRefresh: false`: the caller lists again (all pages) what it needs.
      listChanged: {
        tools: { autoRefresh: false, debounceMs: 100, onChanged: () => options.onToolsChanged() },
        prompts: { autoRefresh: false, debounceMs: 100, onChanged: () => options.onPromptsChanged() },
        resources: { autoRefresh: false, debounceMs: 100, onChanged: () => options.onResourcesChanged() }
      }
    }
  )
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    options.onResourceUpdated(notification.params.uri)
  })
  client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
    options.onLog({
      level: params.level,
      ...(params.logger === undefined ? {} : { logger: params.logger }),
      data: params.data
    })
  })
  if (options.roots) {
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: (await options.onListRoots()).map((root) => ({
        uri: root.uri,
        ...(root.name === undefined ? {} : { name: root.name })
      }))
    }))
  }
  const signalOf = cancelsFirstRequest(transport)
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    const params = request.params
    if (params.mode === "url") {
      // The SDK rejects URL-mode requests before this unless URL mode is advertised.
      if (!options.urlElicitation) throw new SdkMcpError(ErrorCode.InvalidParams, "URL-mode elicitation is not supported")
      const { action } = await options.onElicitUrl({
        method: "elicitation/create",
        params: { mode: "url", message: params.message, url: params.url, elicitationId: params.elicitationId }
      }, signalOf(extra))
      return { action }
    }
    return elicitResult(await options.onElicit(elicitationRequest(params), signalOf(extra)))
  })
  if (options.urlElicitation) {
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, ({ params }) => {
      options.onElicitationComplete(params.elicitationId)
    })
  }
  if (options.sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) =>
      samplingResult(await options.onSample(samplingRequest(request.params), signalOf(extra))))
  }

  let terminating: Promise<void> | undefined
  const terminate = (): Promise<void> => {
    terminating ??= transport instanceof StreamableHTTPClientTransport
      ? transport.terminateSession().catch(() => undefined)
      : Promise.resolve()
    return terminating
  }
  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= client.close().catch(() => undefined)
    return closing
  }
  // Not aborted with the caller: the server may already have opened a session whose id only its
  // answer to `initialize` carries. An abandoned handshake is handed to the caller, which lets it
  // finish a while, so that `terminate` can end that session on the server.
  // The session is handed out once its event stream is open (or known not offered): what the
  // server says before then (a `tools/list_changed`) has nowhere to go, so the caller lists the
  // tools after it. A server gone before its event stream opened fails the attempt, rather than
  // looking connected until the next call.
  const handshake = client.connect(transport).then(async () => {
    const outcome = await eventStream?.outcome(EVENT_STREAM_WAIT_MS)
    if (outcome?._tag === "Failed") throw outcome.error
    if (outcome?._tag === "Late") {
      // A server slow to answer its event stream's `GET` is not failed for it: its tools are
      // listed now, and again once the stream opens (a change said before then went nowhere); a
      // stream that then fails is a close.
      void outcome.eventual.then((late) => {
        if (late._tag === "Open") options.onToolsChanged()
        if (late._tag === "Failed") options.onClose()
      })
    }
  })
  let abandoned = false
  const abandon = () => {
    if (abandoned) return
    abandoned = true
    options.onAbandoned({ handshake: handshake.then(() => undefined, () => undefined), terminate, close })
  }
  try {
    // Told at the abort itself, so that whoever aborts knows of it before the abort is over.
    await untilAborted(handshake, options.signal, abandon)
  } catch (error) {
    if (!options.signal.aborted) abandon()
    throw error
  }
  return { client, terminate, close }
}

/** The longest a timer waits (a longer one fires at once): the MCP SDK's timeout when the caller bounds a request. */
const LONGEST_TIMER_MS = 2 ** 31 - 1

/** How long the session waits for its event stream to open before listing the tools anyway. */
const EVENT_STREAM_WAIT_MS = 2_000

/** `promise`, or a rejection once `signal` aborts (`onAbort` is called then, within the abort). */
const untilAborted = <A>(promise: Promise<A>, signal: AbortSignal, onAbort: () => void): Promise<A> =>
  new Promise((resolve, reject) => {
    const abort = () => {
      onAbort()
      reject(signal.reason)
    }
    if (signal.aborted) return abort()
    signal.addEventListener("abort", abort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort))
  })

/** `open`, once more on a fresh connection when the first went out on a stale one. */
const openFresh = (options: ConnectOptions, authProvider: OAuthClientProvider | undefined) =>
  open(options, authProvider).catch((error: unknown) =>
    isStaleConnection(error) && !options.signal.aborted ? open(options, authProvider) : Promise.reject(error)
  )

/**
 * Connects and initialises a session. Rejects when the server cannot be
 * reached or the handshake fails; whatever was opened is closed then.
 *
 * @internal
 */
export const connect = async (options: ConnectOptions): Promise<Session> => {
  const authProvider = options.oauth === undefined ? undefined : new ClientAuth(options.oauth)
  // The user comes back from an authorization started before (the page reloaded in between).
  const pendingCode = options.oauth?.authorizationCode
  if (authProvider !== undefined && pendingCode !== undefined && options.oauth?.store.codeVerifier !== undefined) {
    await finishAuth(options, authProvider, pendingCode)
  }
  const opened = await openFresh(options, authProvider).catch(async (error: unknown) => {
    if (authProvider === undefined || options.oauth === undefined || !(error instanceof UnauthorizedError)) throw error
    const authorizationUrl = authProvider.takeAuthorizationUrl()
    if (authorizationUrl === undefined) throw error
    // The server wants the user to authorize this client: the app takes them there and back
    // with a code, which is exchanged for tokens (PKCE); then the connection is opened again.
    const code = await options.oauth.authorize(authorizationUrl, options.signal)
    await finishAuth(options, authProvider, code)
    return open(options, authProvider)
  })
  const { client, close, terminate } = opened
  // Set after connecting: `connect` replaces the transport's callbacks with the client's own.
  const previousOnClose = client.onclose
  client.onclose = () => {
    previousOnClose?.()
    options.onClose()
  }
  // When the event stream drops (Streamable HTTP: and cannot resume, no retries here, see above;
  // SSE: its session is gone with it), the server is gone: that is a close for the caller.
  const previousOnError = client.onerror
  client.onerror = (error) => {
    previousOnError?.(error)
    if (error instanceof SseError || (error instanceof Error && error.message.startsWith("Maximum reconnection attempts"))) {
      options.onClose()
    }
  }
  const capabilities = client.getServerCapabilities() ?? {}
  const bounded = (signal: AbortSignal) => ({ signal, timeout: options.requestTimeoutMs })

  return {
    serverVersion: client.getServerVersion(),
    capabilities,
    instructions: client.getInstructions(),
    listTools: async (signal) =>
      capabilities.tools === undefined
        ? []
        : allPages((params) => client.listTools(params, bounded(signal)), (response) => response.tools.map(toolSpec)),
    callTool: async (name, args, signal, isBounded, onProgress, meta) => {
      const result = await client.callTool(
        { name, arguments: { ...args }, ...(meta === undefined ? {} : { _meta: { ...meta } }) },
        undefined,
        {
          ...(isBounded ? bounded(signal) : { signal, timeout: LONGEST_TIMER_MS }),
          ...(onProgress === undefined ? {} : { onprogress: (notice) => onProgress(progressOf(notice)), resetTimeoutOnProgress: true })
        }
      )
      // Servers of the pre-2024-11 protocol answer `{ toolResult }` instead.
      const current = CallToolResultSchema.safeParse(result)
      return current.success
        ? callResult(current.data)
        : { content: [{ type: "text", text: JSON.stringify(result["toolResult"] ?? null) }] }
    },
    listPrompts: async (signal) =>
      capabilities.prompts === undefined
        ? []
        : allPages((params) => client.listPrompts(params, bounded(signal)), (response) => response.prompts.map(promptSpec)),
    getPrompt: async (name, args, signal) =>
      promptResult(await client.getPrompt({ name, arguments: { ...args } }, bounded(signal))),
    listResources: async (signal) =>
      capabilities.resources === undefined
        ? []
        : allPages((params) => client.listResources(params, bounded(signal)), (response) => response.resources.map(resourceSpec)),
    listResourceTemplates: async (signal) =>
      capabilities.resources === undefined
        ? []
        : allPages(
          (params) => client.listResourceTemplates(params, bounded(signal)),
          (response) => response.resourceTemplates.map(templateSpec)
        ),
    subscribesResources: capabilities.resources?.subscribe === true,
    subscribeResource: async (uri, signal) => {
      await client.subscribeResource({ uri }, bounded(signal))
    },
    unsubscribeResource: async (uri, signal) => {
      await client.unsubscribeResource({ uri }, bounded(signal))
    },
    readResource: async (uri, signal) => {
      const response = await client.readResource({ uri }, bounded(signal))
      return {
        contents: response.contents.map((content) =>
          "text" in content
            ? { uri: content.uri, ...strings(content, ["mimeType"]), text: content.text }
            : { uri: content.uri, ...strings(content, ["mimeType"]), blob: content.blob }
        )
      }
    },
    complete: async (ref, argument, context, signal) => {
      if (capabilities.completions === undefined) return { values: [] }
      const { completion } = await client.complete(
        {
          ref: ref.type === "ref/prompt" ? { type: "ref/prompt", name: ref.name } : { type: "ref/resource", uri: ref.uri },
          argument: { name: argument.name, value: argument.value },
          ...(context === undefined ? {} : { context: { arguments: { ...context } } })
        },
        bounded(signal)
      )
      return {
        values: completion.values,
        ...(completion.total === undefined ? {} : { total: completion.total }),
        ...(completion.hasMore === undefined ? {} : { hasMore: completion.hasMore })
      }
    },
    offersLogging: capabilities.logging !== undefined,
    setLoggingLevel: async (level, signal) => {
      await client.setLoggingLevel(level, bounded(signal))
    },
    announcesRoots: options.roots,
    sendRootsListChanged: () => client.sendRootsListChanged(),
    terminate,
    close,
    isDisconnection,
    isSessionForgotten: (error) =>
      error instanceof StreamableHTTPError && error.code === 404 &&
      client.transport instanceof StreamableHTTPClientTransport && client.transport.sessionId !== undefined
  }
}
