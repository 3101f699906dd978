/**
 * `MCPTransport`: the transports of an MCP server's `transport` option, by
 * the names `@tambo-ai/client` gives them.
 *
 * @since 0.2.0
 */
import type { McpTransport } from "@tambo-effect/core/Mcp"

/**
 * The transports an MCP server is reached by: `MCPTransport.HTTP`
 * (Streamable HTTP, the default) and `MCPTransport.SSE` (the older
 * HTTP+SSE transport). Their values are the strings `transport` also takes.
 *
 * @example
 * ```ts
 * const client = new TamboClient({
 *   apiKey, userKey: "user-1",
 *   mcpServers: [{ url: "https://mcp.example.com/sse", transport: MCPTransport.SSE }]
 * })
 * ```
 *
 * @since 0.2.0
 * @category Constants
 */
export const MCPTransport: { readonly SSE: "sse"; readonly HTTP: "http" } = { SSE: "sse", HTTP: "http" }

/**
 * @since 0.2.0
 * @category Models
 */
export type MCPTransport = McpTransport
