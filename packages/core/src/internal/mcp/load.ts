/**
 * The MCP client module (and with it `@modelcontextprotocol/sdk`), loaded
 * the first time a server is connected: applications that never connect
 * one do not load it, and bundlers leave it out of their main chunk.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { McpError } from "../../TamboError.js"
import { describeError } from "../toolSupport.js"
import type * as McpClient from "./client.js"

/**
 * The MCP client module. `import()` caches it, so later connections do not
 * load it again.
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const loadClient: Effect.Effect<typeof McpClient, McpError> = Effect.tryPromise({
  try: () => import("./client.js"),
  catch: (error) =>
    new McpError({
      reason: "Connect",
      message: `The MCP client could not be loaded (${describeError(error)}). ` +
        `Install "@modelcontextprotocol/sdk" to connect to MCP servers.`
    })
}).pipe(Effect.withSpan("Mcp.loadClient"))
