import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import type * as Script from "../Script.js"
import type { RecordedRequest, TestServer, TestServerOptions, TestServerThreads, ThreadSeed } from "../TestServer.js"
import type * as Wire from "../Wire.js"
import { corsHeaders, flattenHeaders, parseBody, readBody, sendFailure, sendJson, type RequestContext } from "./http.js"
import { HttpFailure, nestError } from "./httpError.js"
import { handleMcp } from "./mcpEndpoint.js"
import { dispatch } from "./routes.js"
import { ServerState } from "./state.js"
import { threadWithMessagesToDto, byCreation } from "./store.js"

/** The API answers every preflight itself (NestJS's `cors: true`), before any guard. */
const answerPreflight = (req: IncomingMessage, res: ServerResponse): void => {
  const requested = req.headers["access-control-request-headers"]
  res.writeHead(204, {
    ...corsHeaders,
    "Access-Control-Allow-Methods": "GET,HEAD,PUT,PATCH,POST,DELETE",
    ...(requested !== undefined ? { "Access-Control-Allow-Headers": requested } : {}),
    Vary: "Access-Control-Request-Headers",
    "Content-Length": "0"
  })
  res.end()
}

const handle = async (state: ServerState, req: IncomingMessage, res: ServerResponse): Promise<void> => {
  // A client that goes away mid-response must not take the server down.
  res.on("error", () => undefined)
  req.on("error", () => undefined)
  const method = (req.method ?? "GET").toUpperCase()
  const url = new URL(req.url ?? "/", "http://localhost")
  let raw = ""
  let bytes: Buffer = Buffer.alloc(0)
  let failure: HttpFailure | undefined
  let body: unknown
  try {
    bytes = await readBody(req)
    raw = bytes.toString("utf8")
    if (raw !== "") body = parseBody(raw, req.headers["content-type"])
  } catch (error) {
    failure = error instanceof HttpFailure ? error : nestError(400, "Bad request body")
  }
  const recorded: RecordedRequest = {
    method,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    url: `${url.pathname}${url.search}`,
    headers: flattenHeaders(req),
    body,
    rawBody: raw,
    time: state.now()
  }
  state.requests.push(recorded)
  if (method === "OPTIONS") return answerPreflight(req, res)
  if (failure !== undefined) return sendFailure(res, failure)
  if (url.pathname === "/mcp") {
    try {
      return await handleMcp(state, req, res, body)
    } catch (error) {
      if (!res.headersSent) sendJson(res, 500, { statusCode: 500, message: "Internal server error" })
      return
    }
  }
  const ctx: RequestContext = {
    req,
    res,
    method,
    path: url.pathname,
    query: url.searchParams,
    body: body ?? {},
    rawBytes: bytes,
    params: {},
    bearer: undefined
  }
  try {
    await dispatch(state, ctx)
  } catch (error) {
    if (error instanceof HttpFailure) {
      if (res.headersSent) res.end()
      else sendFailure(res, error)
      return
    }
    console.error(`[@tambo-effect/testing] ${method} ${url.pathname} failed:`, error)
    if (res.headersSent) res.end()
    else sendJson(res, 500, { statusCode: 500, message: "Internal server error" })
  }
}

const makeThreads = (state: ServerState): TestServerThreads => ({
  get: (threadId) => {
    const thread = state.store.threads.get(threadId)
    return thread === undefined ? undefined : threadWithMessagesToDto(thread)
  },
  list: () => [...state.store.threads.values()].sort(byCreation).map(threadWithMessagesToDto),
  create: (seed: ThreadSeed) => {
    const thread = state.store.createThread(seed.userKey, { name: seed.name, metadata: seed.metadata })
    for (const message of seed.messages ?? []) {
      const content: Array<Wire.Content> = typeof message.content === "string"
        ? [{ type: "text", text: message.content }]
        : [...message.content]
      state.store.addMessage(thread, message.role, content, { metadata: message.metadata })
    }
    return threadWithMessagesToDto(thread)
  }
})

export const start = async (options: TestServerOptions): Promise<TestServer> => {
  const state = new ServerState(options)
  const sockets = new Set<Socket>()
  const server = createServer((req, res) => {
    void handle(state, req, res)
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.once("close", () => sockets.delete(socket))
  })
  const host = options.host ?? "127.0.0.1"
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject)
      resolve()
    })
  })
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("the test server is not listening on a TCP port")
  const urlHost = address.family === "IPv6" ? `[${address.address}]` : address.address
  const url = `http://${urlHost}:${address.port}`

  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      for (const run of state.activeRuns.values()) {
        run.cancelled = true
        run.controller.abort()
      }
      server.close(() => resolve())
      // Destroying the sockets ends streams and keep-alive connections, so close() settles now.
      for (const socket of sockets) socket.destroy()
    })
    return closing
  }

  return {
    url,
    port: address.port,
    apiKey: state.apiKey,
    get requests() {
      return state.requests
    },
    get cancels() {
      return state.cancels
    },
    get mcpRequests() {
      return state.mcpRequests
    },
    get transcriptions() {
      return state.transcriptions
    },
    threads: makeThreads(state),
    setScript: (script: Script.ScriptSource) => {
      state.script = script
    },
    reset: () => state.reset(),
    close
  }
}
