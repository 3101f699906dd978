/**
 * Real MCP servers on loopback, built with the MCP SDK's `McpServer`, for
 * the tests of the `Mcp` module: Streamable HTTP (one session per client)
 * or the older HTTP+SSE transport, plus plain HTTP servers that are not MCP
 * servers at all.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import { randomUUID } from "node:crypto"
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { all, gate } from "./tools.js"

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
}

export interface TestMcpServer {
  /** What to connect to: the Streamable HTTP endpoint, or the SSE stream. */
  readonly url: string
  readonly transport: "http" | "sse"
  /** Every HTTP request received, in order. */
  readonly requests: ReadonlyArray<RecordedRequest>
  /** MCP sessions opened and closed so far. */
  readonly sessions: { readonly opened: number; readonly closed: number }
  /** HTTP requests received and not yet answered to their end (e.g. an open event stream). */
  readonly openRequests: number
  /** `POST`s answered to their end (the handshake's two, then one per request or notification). */
  readonly postsAnswered: number
  /** Stops abruptly, as a crashed server would: open connections are destroyed, nothing is said. */
  readonly kill: () => Promise<void>
  /** After `kill`: listens again on the same address, with no sessions (a restarted server). */
  readonly restart: () => Promise<void>
  /**
   * Forgets its sessions, as a server restarted behind a proxy would: their requests are answered
   * 404 from now on. With `keepStreams` their event streams stay open (nothing tells the client);
   * otherwise the sessions are closed, which ends their streams.
   */
  readonly forget: (options: { readonly keepStreams: boolean }) => Promise<void>
  /** Closes the sessions, then the server. */
  readonly close: () => Promise<void>
}

export interface McpServerOptions {
  readonly transport?: "http" | "sse" | undefined
  readonly name?: string | undefined
  /** Registers the tools of each session's `McpServer`. */
  readonly setup: (server: McpServer) => void
  /** Streamable HTTP: runs when a request of an open session arrives, before the session answers it. */
  readonly beforeSessionRequest?:
    | ((request: IncomingMessage, session: StreamableHTTPServerTransport) => Promise<void>)
    | undefined
  /**
   * Whether the server forgets the session (as a restarted server would) at this message of one
   * of its `POST`s, which it then answers 404 without taking it. HTTP+SSE: its event streams stay
   * open.
   */
  readonly forgets?: ((message: unknown) => boolean) | undefined
  /**
   * Streamable HTTP: runs when a `POST` that opens a session (`initialize`) arrives, before the
   * server answers it; a hook that answers it itself (ends the response) refuses the session.
   */
  readonly beforeInitialize?: ((request: IncomingMessage, response: ServerResponse) => Promise<void>) | undefined
}

interface Session {
  readonly transport: StreamableHTTPServerTransport | SSEServerTransport
  readonly server: McpServer
}

const listen = (server: Server, port = 0): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))
  })

const stop = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    if (!server.listening) return resolve()
    server.close(() => resolve())
    server.closeAllConnections()
  })

const notFound = (res: ServerResponse) => {
  res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not found" }))
}

export const startMcpServer = async (options: McpServerOptions): Promise<TestMcpServer> => {
  const transport = options.transport ?? "http"
  const requests: Array<RecordedRequest> = []
  const sessions = new Map<string, Session>()
  const stats = { opened: 0, closed: 0 }

  const open = async (sessionTransport: StreamableHTTPServerTransport | SSEServerTransport) => {
    const server = new McpServer({ name: options.name ?? "test-mcp-server", version: "1.0.0" })
    options.setup(server)
    sessionTransport.onclose = () => {
      stats.closed++
      if (sessionTransport.sessionId !== undefined) sessions.delete(sessionTransport.sessionId)
    }
    await server.connect(sessionTransport)
    stats.opened++
    return server
  }

  const handleHttp = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (path !== "/mcp") return notFound(res)
    const header = req.headers["mcp-session-id"]
    const sessionId = typeof header === "string" ? header : undefined
    const existing = sessionId === undefined ? undefined : sessions.get(sessionId)
    if (existing !== undefined && existing.transport instanceof StreamableHTTPServerTransport) {
      await options.beforeSessionRequest?.(req, existing.transport)
      if (options.forgets === undefined || req.method !== "POST") return existing.transport.handleRequest(req, res)
      const chunks: Array<Buffer> = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      const message: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      if (!options.forgets(message)) return existing.transport.handleRequest(req, res, message)
      sessions.clear()
      return notFound(res)
    }
    if (sessionId !== undefined || req.method !== "POST") return notFound(res)
    await options.beforeInitialize?.(req, res)
    if (res.writableEnded) return
    const sessionTransport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport: sessionTransport, server })
      }
    })
    const server = await open(sessionTransport)
    return sessionTransport.handleRequest(req, res)
  }

  const handleSse = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    if (req.method === "GET" && url.pathname === "/sse") {
      const sessionTransport = new SSEServerTransport("/messages", res)
      const server = await open(sessionTransport)
      sessions.set(sessionTransport.sessionId, { transport: sessionTransport, server })
      return
    }
    if (req.method === "POST" && url.pathname === "/messages") {
      const session = sessions.get(url.searchParams.get("sessionId") ?? "")
      if (session === undefined || !(session.transport instanceof SSEServerTransport)) return notFound(res)
      if (options.forgets === undefined) return session.transport.handlePostMessage(req, res)
      const chunks: Array<Buffer> = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      const message: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      if (!options.forgets(message)) return session.transport.handlePostMessage(req, res, message)
      // Its event streams stay open: a server behind a proxy that lost track of them.
      sessions.clear()
      return notFound(res)
    }
    return notFound(res)
  }

  let openRequests = 0
  let postsAnswered = 0
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    requests.push({ method: req.method ?? "GET", path: url.pathname, headers: req.headers })
    openRequests++
    res.once("close", () => openRequests--)
    if (req.method === "POST") res.once("finish", () => postsAnswered++)
    // Browsers (and happy-dom) call it cross-origin.
    res.setHeader("Access-Control-Allow-Origin", "*")
    res.setHeader("Access-Control-Expose-Headers", "mcp-session-id, mcp-protocol-version")
    // For tests that run the server in another process.
    if (url.pathname === "/__stats") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(stats))
      return
    }
    if (req.method === "OPTIONS") {
      res.writeHead(204, {
        "Access-Control-Allow-Methods": "GET, POST, DELETE",
        "Access-Control-Allow-Headers": req.headers["access-control-request-headers"] ?? "*"
      }).end()
      return
    }
    const handled = transport === "http" ? handleHttp(req, res, url.pathname) : handleSse(req, res, url)
    handled.catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error))
    })
  }
  let http = createServer(handle)
  const port = await listen(http)

  let closed: Promise<void> | undefined
  return {
    url: `http://127.0.0.1:${port}${transport === "http" ? "/mcp" : "/sse"}`,
    transport,
    requests,
    get sessions() {
      return { ...stats }
    },
    get openRequests() {
      return openRequests
    },
    get postsAnswered() {
      return postsAnswered
    },
    kill: () => (closed ??= stop(http)),
    restart: async () => {
      await (closed ??= stop(http))
      sessions.clear()
      http = createServer(handle)
      await listen(http, port)
      closed = undefined
    },
    forget: async ({ keepStreams }) => {
      const forgotten = Array.from(sessions.values())
      sessions.clear()
      if (!keepStreams) for (const session of forgotten) await session.server.close().catch(() => undefined)
    },
    close: () =>
      (closed ??= (async () => {
        for (const session of Array.from(sessions.values())) await session.server.close().catch(() => undefined)
        await stop(http)
      })())
  }
}

/** An MCP server for the enclosing scope. */
export const mcpServer = (options: McpServerOptions): Effect.Effect<TestMcpServer, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(() => startMcpServer(options)), (server) => Effect.promise(() => server.close()))

export interface PlainServer {
  readonly url: string
  readonly requests: ReadonlyArray<RecordedRequest>
}

/** A plain HTTP server (not an MCP server) for the enclosing scope. */
export const plainServer = (
  handle: (req: IncomingMessage, res: ServerResponse) => void
): Effect.Effect<PlainServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const requests: Array<RecordedRequest> = []
      const http = createServer((req, res) => {
        requests.push({ method: req.method ?? "GET", path: req.url ?? "/", headers: req.headers })
        handle(req, res)
      })
      const port = await listen(http)
      return { http, server: { url: `http://127.0.0.1:${port}/mcp`, requests } }
    }),
    ({ http }) => Effect.promise(() => stop(http))
  ).pipe(Effect.map(({ server }) => server))

/** A loopback URL nothing listens on. */
export const unusedUrl: Effect.Effect<string> = Effect.promise(async () => {
  const http = createServer()
  const port = await listen(http)
  await stop(http)
  return `http://127.0.0.1:${port}/mcp`
})

/** Until `condition` holds, looked at again every few milliseconds of real time; a defect naming `what` past `bound`. */
export const eventually = (what: string, condition: () => boolean, bound = 10_000): Effect.Effect<void> =>
  Effect.promise(async () => {
    const deadline = Date.now() + bound
    while (!condition()) {
      if (Date.now() > deadline) return false
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    return true
  }).pipe(Effect.flatMap((held) => (held ? Effect.void : Effect.dieMessage(`still waiting for: ${what}`))))

/**
 * An MCP server whose `wait` holds each call until `open` (see `gate`), with the tools of `more`
 * beside it: `arrived` is done once a call reached it, `ended` with how its first call ended
 * there, so a test goes on when the server says so rather than after a number of milliseconds.
 */
export const waitServer = (...more: ReadonlyArray<(server: McpServer) => void>) =>
  Effect.gen(function*() {
    let open!: () => void
    const opened = new Promise<void>((resolve) => (open = resolve))
    const arrived = yield* Deferred.make<void>()
    const ended = yield* Deferred.make<"opened" | "cancelled">()
    const server = yield* mcpServer({
      setup: all(
        gate(opened, () => Deferred.unsafeDone(arrived, Exit.void), (ending) => Deferred.unsafeDone(ended, Exit.succeed(ending))),
        ...more
      )
    })
    return { server, open, arrived: Deferred.await(arrived), ended: Deferred.await(ended) }
  })

/**
 * A Streamable HTTP server whose sessions' `DELETE`s (how a client ends its session) can be held
 * at a gate: while held, what closes a client waits for the answer (a closing service).
 */
export interface GatedMcpServer {
  readonly server: TestMcpServer
  readonly url: string
  /** Sessions whose tools their client listed (the handshake's notification, then `tools/list`): it holds them. */
  readonly listed: () => number
  /** Sessions listed whose client has not sent their `DELETE` yet. */
  readonly listedOpen: () => number
  /** `DELETE`s received, held or not. */
  readonly deletes: () => number
  /** `DELETE`s waiting at the gate now. */
  readonly held: () => number
  /** `DELETE`s the client gave up on while they were held (it waits for the answer only so long). */
  readonly abandoned: () => number
  /** From now on, `DELETE`s wait at the gate until `release`. */
  readonly hold: () => void
  /** Answers the `DELETE`s held, and those to come. */
  readonly release: () => void
}

/** A {@link GatedMcpServer} for the enclosing scope, its gate opened when the scope closes. */
export const gatedMcpServer = (setup: (server: McpServer) => void): Effect.Effect<GatedMcpServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    let gate: { readonly opened: Promise<void>; readonly open: () => void } | undefined
    const posts = new Map<string, number>()
    const deleted = new Set<string>()
    const counts = { listed: 0, deletes: 0, held: 0, abandoned: 0 }
    const release = () => {
      gate?.open()
      gate = undefined
    }
    yield* Effect.addFinalizer(() => Effect.sync(release))
    const server = yield* mcpServer({
      setup,
      beforeSessionRequest: async (request) => {
        const id = String(request.headers["mcp-session-id"])
        if (request.method === "POST") {
          posts.set(id, (posts.get(id) ?? 0) + 1)
          if (posts.get(id) === 2) counts.listed++
        }
        if (request.method !== "DELETE") return
        counts.deletes++
        deleted.add(id)
        if (gate === undefined) return
        counts.held++
        let waiting = true
        request.socket.once("close", () => {
          if (waiting) counts.abandoned++
        })
        await gate.opened
        waiting = false
        counts.held--
      }
    })
    return {
      server,
      url: server.url,
      listed: () => counts.listed,
      listedOpen: () => Array.from(posts).filter(([id, n]) => n >= 2 && !deleted.has(id)).length,
      deletes: () => counts.deletes,
      held: () => counts.held,
      abandoned: () => counts.abandoned,
      hold: () => {
        if (gate !== undefined) return
        let open: () => void = () => undefined
        const opened = new Promise<void>((resolve) => (open = resolve))
        gate = { opened, open }
      },
      release
    }
  })
