// Tambo's own MCP server at `/mcp`, as the API serves it: guarded by an MCP access token from
// `POST /auth/mcp/access-token` (`Authorization: Bearer <token>`: 401 when missing, malformed,
// unknown or expired), stateless Streamable HTTP with JSON responses, one `McpServer` per request.
// The MCP SDK is loaded on the first request to `/mcp`, so servers that never see one never load it.
import type { IncomingMessage, ServerResponse } from "node:http"
import type { McpEndpointContext } from "../TestServer.js"
import type { ServerState } from "./state.js"

const unauthorized = (res: ServerResponse): void => {
  res.writeHead(401, { "content-type": "text/plain; charset=utf-8" }).end("Unauthorized")
}

/** The thread or context key a valid MCP access token stands for. */
const authenticate = (state: ServerState, req: IncomingMessage): McpEndpointContext | undefined => {
  const authorization = req.headers.authorization
  if (authorization === undefined || !authorization.toLowerCase().startsWith("bearer ")) return undefined
  const claims = state.issuer.verify(authorization.slice(7).trim(), state.nowSeconds(), "tambo:mcp")
  if (claims === undefined) return undefined
  // The token endpoint signs a thread's id, or a context key, as the subject.
  return state.store.threads.has(claims.sub) ? { threadId: claims.sub } : { contextKey: claims.sub }
}

export const handleMcp = async (
  state: ServerState,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown
): Promise<void> => {
  // As the API's `cors` middleware on `/mcp`: browsers may call it from any origin.
  res.setHeader("Access-Control-Allow-Origin", "*")
  res.setHeader("Access-Control-Expose-Headers", "mcp-session-id, last-event-id, mcp-protocol-version")
  const context = authenticate(state, req)
  if (context === undefined) return unauthorized(res)
  state.mcpRequests.push({ method: req.method ?? "GET", ...context })
  // Stateless: no standalone event stream to open, no session to end.
  if (req.method !== "POST") {
    res.writeHead(405, { allow: "POST", "content-type": "text/plain; charset=utf-8" }).end("Method Not Allowed")
    return
  }
  const [{ McpServer }, { StreamableHTTPServerTransport }] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/mcp.js"),
    import("@modelcontextprotocol/sdk/server/streamableHttp.js")
  ])
  const server = new McpServer({ name: "tambo-service", version: "1.0.0" })
  state.mcpSetup?.(server, context)
  // Without a session id generator the transport is stateless, as the API's is.
  const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true })
  res.on("close", () => {
    void transport.close().then(() => server.close()).catch(() => undefined)
  })
  await server.connect(transport)
  await transport.handleRequest(req, res, body)
}
