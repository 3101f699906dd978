/**
 * A small MCP server for the example app (Streamable HTTP, one session per
 * client, CORS open so the browser can reach it): a tool (`roll_dice`), a
 * prompt (`weather_report`, argument `city`), a resource
 * (`docs://weather-guide`), and a tool that asks the user through an
 * elicitation (`ask_units`).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as z from "zod"

export const WEATHER_GUIDE = "Celsius for Europe, Fahrenheit for the US; wind in km/h."

const setup = (server: McpServer) => {
  server.registerTool(
    "roll_dice",
    { description: "Rolls a die with the given number of sides", inputSchema: { sides: z.number().int().min(2) } },
    async ({ sides }) => ({ content: [{ type: "text", text: String(1 + Math.floor(Math.random() * sides)) }] })
  )
  server.registerTool("ask_units", { description: "Asks the user which units they prefer", inputSchema: {} }, async () => {
    const answer = await server.server.elicitInput({
      mode: "form",
      message: "Which units do you prefer?",
      requestedSchema: { type: "object", properties: { units: { type: "string", title: "Units" } }, required: ["units"] }
    })
    const units = answer.action === "accept" ? String(answer.content?.["units"]) : `none (${answer.action})`
    return { content: [{ type: "text", text: `Units: ${units}` }] }
  })
  server.registerPrompt(
    "weather_report",
    { description: "Asks for a short weather report", argsSchema: { city: z.string().optional() } },
    ({ city }) => ({
      messages: [{ role: "user", content: { type: "text", text: `Give me a short weather report for ${city ?? "Paris"}.` } }]
    })
  )
  server.registerResource(
    "weather-guide",
    "docs://weather-guide",
    { title: "Weather guide", description: "Which units to use where", mimeType: "text/plain" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: WEATHER_GUIDE }] })
  )
}

const CORS = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers": "mcp-session-id, mcp-protocol-version"
}

/** Starts the server on 127.0.0.1 (`port` 0: a free one); its endpoint is `<url>`. */
export const startExampleMcpServer = async (port = 0) => {
  const sessions = new Map<string, StreamableHTTPServerTransport>()
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    for (const [name, value] of Object.entries(CORS)) res.setHeader(name, value)
    if (req.method === "OPTIONS") {
      res.writeHead(204, {
        "Access-Control-Allow-Methods": "GET, POST, DELETE",
        "Access-Control-Allow-Headers": req.headers["access-control-request-headers"] ?? "*"
      }).end()
      return
    }
    if (new URL(req.url ?? "/", "http://localhost").pathname !== "/mcp") return void res.writeHead(404).end()
    const id = req.headers["mcp-session-id"]
    const existing = typeof id === "string" ? sessions.get(id) : undefined
    if (existing !== undefined) return existing.handleRequest(req, res)
    if (typeof id === "string" || req.method !== "POST") return void res.writeHead(404).end()
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport)
    })
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
    }
    const server = new McpServer({ name: "react-chat-example", version: "1.0.0" })
    setup(server)
    await server.connect(transport)
    await transport.handleRequest(req, res)
  }
  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error))
    })
  })
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject)
    http.listen(port, "127.0.0.1", () => resolve())
  })
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: async () => {
      for (const transport of sessions.values()) await transport.close().catch(() => undefined)
      await new Promise<void>((resolve) => {
        http.close(() => resolve())
        http.closeAllConnections()
      })
    }
  }
}
