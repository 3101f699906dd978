/**
 * The MCP values `@tambo-ai/client` exports, by its names: the transports,
 * the kinds of server, the registry's server key, the key of a server's
 * connection, and the helpers of an elicitation's form. Their types are in
 * the client's other upstream names.
 *
 * @since 0.2.0
 */
import * as Mcp from "@tambo-effect/core/Mcp"

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
export type MCPTransport = Mcp.McpTransport

/**
 * The kinds of MCP server: one of the app's (`browser-side`), Tambo's own
 * (`tambo-internal`, at `<tamboUrl>/mcp`), and the app's own resources
 * (`tambo-registry`).
 *
 * @since 0.2.0
 * @category Constants
 */
export const ServerType: {
  readonly BROWSER_SIDE: "browser-side"
  readonly TAMBO_INTERNAL: "tambo-internal"
  readonly TAMBO_REGISTRY: "tambo-registry"
} = { BROWSER_SIDE: "browser-side", TAMBO_INTERNAL: "tambo-internal", TAMBO_REGISTRY: "tambo-registry" }

/**
 * @since 0.2.0
 * @category Models
 */
export type ServerType = (typeof ServerType)[keyof typeof ServerType]

/**
 * The server key the app's own resources are listed under.
 *
 * @since 0.2.0
 * @category Constants
 */
export const REGISTRY_SERVER_KEY: "registry" = Mcp.REGISTRY_SERVER_KEY

/**
 * The key of a server's connection (what `disconnectMcpServer` and
 * `getMcpClients()` use): equal for the same URL, transport and headers.
 *
 * @since 0.2.0
 * @category Utils
 */
export const getMcpServerUniqueKey: (
  server: Pick<Mcp.McpServerInfo, "url" | "transport" | "customHeaders">
) => string = Mcp.uniqueKey

/**
 * An elicitation's form, as its request carries it (kept for code written
 * against upstream, where it narrows the MCP SDK's type).
 *
 * @since 0.2.0
 * @category Utils
 */
export const toElicitationRequestedSchema = (value: Mcp.ElicitationRequestedSchema): Mcp.ElicitationRequestedSchema =>
  value

/**
 * Whether an elicitation's parameters carry a form (`requestedSchema`), as
 * every elicitation this client accepts does.
 *
 * @since 0.2.0
 * @category Guards
 */
export const hasRequestedSchema = <P extends object>(
  params: P
): params is P & { readonly requestedSchema: Mcp.ElicitationRequestedSchema } => "requestedSchema" in params
