/**
 * One MCP server, connected on its own, without a Tambo client: upstream
 * `@tambo-ai/client`'s `MCPClient`, by its name and methods, over core's
 * standalone MCP service (`Mcp.makeStandalone`). So it has what a
 * `TamboClient`'s servers have: a connect timeout, bounded requests, OAuth
 * (`options.oauth`), typed errors, and a server that drops is reconnected
 * with backoff (a call meanwhile fails with an `McpError`, `NotConnected`).
 *
 * Upstream's `client` (the MCP SDK's own `Client`) is not offered: this
 * package keeps the MCP SDK behind its own types.
 *
 * @since 0.2.0
 */
import * as Mcp from "@tambo-effect/core/Mcp"
import { type ConfigError, McpError } from "@tambo-effect/core/TamboError"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { NotSupportedError } from "./errors.js"
import * as CallSite from "./internal/callSite.js"
import { fromCause } from "./internal/toClientError.js"
import type { MCPTransport } from "./UpstreamMcp.js"
import type { MCPHandlers, MCPToolCallResult, MCPToolSpec } from "./UpstreamNames.js"

/**
 * What `MCPClient.create` takes besides upstream's arguments.
 *
 * @since 0.2.0
 * @category Models
 */
export interface MCPClientOptions {
  /**
   * How long connecting and listing the tools may take. Default 30 seconds.
   * Positive and at most 2^31 − 1 ms (the longest a timer waits), as is
   * `requestTimeout`: else `create` rejects with a `ConfigError`
   * (`InvalidOption`) that names it.
   */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** How long a request to the server may take. Default 60 seconds. */
  readonly requestTimeout?: Duration.DurationInput | undefined
  /** How the client introduces itself to the server. Default `tambo-effect` `0.1.0`. */
  readonly clientInfo?: { readonly name: string; readonly version: string } | undefined
  /** OAuth, for a server that asks for it: where upstream takes the MCP SDK's `authProvider`. */
  readonly oauth?: Mcp.McpOAuthOptions | undefined
}

/** What a call on a closed client, or one in flight when it closed, rejects with. */
const closed = () => new McpError({ reason: "NotConnected", message: "The MCP client was closed" })

const unsupported = (method: string, message: string) =>
  new NotSupportedError({ reason: "UnsupportedOption", message, method })

/**
 * A connection to one MCP server.
 *
 * @example
 * ```ts
 * import { MCPClient, MCPTransport } from "@tambo-effect/client"
 *
 * const mcp = await MCPClient.create("http://localhost:8123/mcp", MCPTransport.HTTP)
 * const tools = await mcp.listTools()
 * const result = await mcp.callTool("add", { a: 2, b: 40 })
 * await mcp.close()
 * ```
 *
 * @since 0.2.0
 * @category Constructors
 */
export class MCPClient {
  readonly #runtime: ManagedRuntime.ManagedRuntime<Mcp.Mcp, ConfigError>
  readonly #mcp: Mcp.Mcp.Service
  readonly #key: string
  #handlers: Partial<MCPHandlers>
  /**
   * The session the sampling handler was removed on: it opened while there was one, so the
   * server was told the client samples, and a handler may come back on it. A session opened
   * since (a reconnect) was told the client does not.
   */
  #samplingSession: Mcp.McpClientHandle | undefined
  #closing: Promise<void> | undefined

  /**
   * Upstream's id of a resumable session. Sessions here are not resumed
   * (a server that drops gets a new one), so it is always `undefined`.
   */
  readonly sessionId: string | undefined = undefined

  private constructor(
    runtime: ManagedRuntime.ManagedRuntime<Mcp.Mcp, ConfigError>,
    mcp: Mcp.Mcp.Service,
    key: string,
    handlers: Partial<MCPHandlers>
  ) {
    this.#runtime = runtime
    this.#mcp = mcp
    this.#key = key
    this.#handlers = handlers
  }

  /**
   * Connects to the server at `endpoint` and lists its tools; rejects with
   * an `McpError` (`Connect`) when it cannot, and with a `ConfigError`
   * (`InvalidOption`) for a timeout in `options` no timer can wait. `handlers` answer the server's
   * elicitations and sampling requests; the client tells the server it
   * samples only when a sampling handler is given here. `authProvider` and
   * `sessionId` are upstream's and must be left `undefined` (a
   * `NotSupportedError` otherwise): OAuth is `options.oauth`.
   */
  static async create(
    endpoint: string,
    transportType: MCPTransport = "http",
    headers?: Readonly<Record<string, string>> | undefined,
    authProvider?: undefined,
    sessionId?: undefined,
    handlers: Partial<MCPHandlers> = {},
    options: MCPClientOptions = {}
  ): Promise<MCPClient> {
    const site = CallSite.capture(MCPClient.create)
    if (authProvider !== undefined) {
      throw CallSite.attach(
        unsupported("MCPClient.create", "An MCP SDK authProvider is not taken here: give options.oauth instead"),
        site
      )
    }
    if (sessionId !== undefined) {
      throw CallSite.attach(
        unsupported("MCPClient.create", "Sessions are not resumed here: leave sessionId undefined for a new session"),
        site
      )
    }
    const runtime = ManagedRuntime.make(Mcp.layerStandalone({
      connectTimeout: options.connectTimeout,
      requestTimeout: options.requestTimeout,
      clientInfo: options.clientInfo
    }))
    const server: Mcp.McpServerInfo = {
      url: endpoint,
      transport: transportType,
      ...(headers === undefined ? {} : { customHeaders: headers }),
      ...(options.oauth === undefined ? {} : { oauth: options.oauth }),
      handlers
    }
    const exit = await runtime.runPromiseExit(
      Effect.flatMap(Mcp.Mcp, (mcp) => Effect.map(mcp.connectMcpServer(server), (connection) => ({ mcp, connection })))
    )
    if (Exit.isFailure(exit)) {
      await runtime.dispose()
      throw CallSite.attach(fromCause(exit.cause), site)
    }
    return new MCPClient(runtime, exit.value.mcp, exit.value.connection.key, handlers)
  }

  /** The connection as it is now; `undefined` once closed. */
  #connection(): Mcp.McpConnection | undefined {
    if (this.#closing !== undefined) return undefined
    return this.#runtime.runSync(this.#mcp.getMcpClients)[this.#key]
  }

  /** Runs a request on the connected server, rejecting with the facade's error. */
  #request<A>(above: Function, request: (client: Mcp.McpClientHandle) => Effect.Effect<A, McpError>): Promise<A> {
    const site = CallSite.capture(above)
    const connection = this.#connection()
    const client = connection?.client
    if (this.#closing !== undefined) return Promise.reject(CallSite.attach(closed(), site))
    if (client === undefined) {
      const serverKey = connection?.serverKey
      return Promise.reject(CallSite.attach(
        new McpError({
          reason: "NotConnected",
          message: `The MCP server "${serverKey}" is not connected (${connection?.status ?? "closed"})`,
          ...(serverKey === undefined ? {} : { serverKey })
        }),
        site
      ))
    }
    return this.#runtime.runPromiseExit(request(client)).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      // Closed meanwhile: the call ended because the client did, not because the server went away.
      throw CallSite.attach(this.#closing !== undefined ? closed() : fromCause(exit.cause), site)
    })
  }

  /** The server's tools, every page of them. */
  listTools(): Promise<Array<MCPToolSpec>> {
    return this.#request(this.listTools, (client) => Effect.map(client.listTools, (tools) => [...tools]))
  }

  /**
   * Calls a tool of the server. A result with `isError` is a result, not a
   * rejection; a server that fails the call rejects with an `McpError`
   * (`CallFailed`), and a call `close` cuts short with one (`NotConnected`,
   * the server told to cancel it). `_meta` goes with the request, as
   * upstream sends it. With `onProgress` (ours, not upstream's), the server
   * is asked to tell its progress, and each notice restarts the request's
   * timeout.
   */
  callTool(
    name: string,
    args: Readonly<Record<string, unknown>> = {},
    _meta?: Readonly<Record<string, unknown>>,
    options?: { readonly onProgress?: ((progress: Mcp.McpProgress) => void) | undefined }
  ): Promise<MCPToolCallResult> {
    return this.#request(this.callTool, (client) => client.callTool(name, args, { meta: _meta, onProgress: options?.onProgress }))
  }

  /** What the server said it offers, while connected. */
  getServerCapabilities(): Mcp.McpServerCapabilities | undefined {
    return this.#connection()?.capabilities
  }

  /** The server's name and version, while connected. */
  getServerVersion(): { readonly name: string; readonly version: string } | undefined {
    return this.#connection()?.serverVersion
  }

  /** The server's instructions, while connected. */
  getInstructions(): string | undefined {
    return this.#connection()?.instructions
  }

  /**
   * Replaces (or with `undefined` removes) the elicitation handler: it
   * answers the server's next elicitations. Without one, they are declined.
   */
  updateElicitationHandler(handler: MCPHandlers["elicitation"] | undefined): void {
    if (handler === this.#handlers.elicitation) return
    const { elicitation: _, ...rest } = this.#handlers
    this.#setHandlers(handler === undefined ? rest : { ...rest, elicitation: handler })
  }

  /**
   * Replaces (or with `undefined` removes) the sampling handler. Each
   * session is told as it opens whether the client samples (it does when a
   * handler is set then), so a handler can be replaced or removed, and
   * given again on the session it was removed on, but not added to a
   * session told otherwise: throws a `NotSupportedError`
   * (`UnsupportedOption`) when `create` had none, or when the server was
   * reconnected (or is reconnecting) since the handler was removed.
   */
  updateSamplingHandler(handler: MCPHandlers["sampling"] | undefined): void {
    if (handler === this.#handlers.sampling) return
    const session = this.#connection()?.client
    if (handler === undefined) {
      this.#samplingSession = session
    } else if (this.#handlers.sampling === undefined && (session === undefined || session !== this.#samplingSession)) {
      throw CallSite.attach(
        unsupported(
          "MCPClient.updateSamplingHandler",
          "A sampling handler must be given to MCPClient.create, or given back on the session it was removed on: this session was told the client does not sample"
        ),
        CallSite.capture(this.updateSamplingHandler)
      )
    }
    const { sampling: _, ...rest } = this.#handlers
    this.#setHandlers(handler === undefined ? rest : { ...rest, sampling: handler })
  }

  #setHandlers(handlers: Partial<MCPHandlers>): void {
    this.#handlers = handlers
    if (this.#closing !== undefined) return
    // Replaces the handlers on the same session; never a connection (see `Mcp.Service.updateMcpServerHandlers`).
    this.#runtime.runFork(this.#mcp.updateMcpServerHandlers(this.#key, () => handlers))
  }

  /** Ends the session (on the server too, over Streamable HTTP) and releases everything. */
  close(): Promise<void> {
    this.#closing ??= this.#runtime.dispose()
    return this.#closing
  }
}
