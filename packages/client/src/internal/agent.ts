/**
 * The runtime of a client made with `agent`: core's `AgUi.layer` (the `Tambo`
 * service against an AG-UI agent) with the client's MCP servers, in place of
 * `Tambo.layer`.
 */
import * as AgUi from "@tambo-effect/core/AgUi"
import type * as Auth from "@tambo-effect/core/Auth"
import type * as ClientState from "@tambo-effect/core/ClientState"
import * as Mcp from "@tambo-effect/core/Mcp"
import type * as Tambo from "@tambo-effect/core/Tambo"
import { ConfigError } from "@tambo-effect/core/TamboError"
import type * as ThreadStore from "@tambo-effect/core/ThreadStore"
import type * as Tool from "@tambo-effect/core/Tool"
import type * as ToolRegistry from "@tambo-effect/core/ToolRegistry"
import * as Layer from "effect/Layer"

/** What the facade's runtime holds, whichever the backend. */
export type Services = Tambo.Tambo | Mcp.Mcp | Auth.Auth | ToolRegistry.ToolRegistry

/** The agent's options and the facade's options that apply to an agent, in core's terms. */
export interface AgentLayerOptions extends AgUi.Options {
  /** The client's options as given: those of the Tambo API must not be there. */
  readonly given: Readonly<Partial<Record<TamboConnectionOption, unknown>>>
  readonly mcpServers?: ReadonlyArray<Mcp.McpServerInfo> | undefined
  readonly resources?: Mcp.MakeOptions["resources"]
  readonly listResources?: Mcp.MakeOptions["listResources"]
  readonly getResource?: Mcp.MakeOptions["getResource"]
  readonly mcpRoots?: Mcp.MakeOptions["roots"]
  readonly mcpUrlElicitationHandler?: Mcp.MakeOptions["urlElicitationHandler"]
  readonly store: ThreadStore.ExternalStore<ClientState.ClientState>
}

/** What says which Tambo API and user: meaningless, so refused, beside an agent. */
const TAMBO_CONNECTION = ["apiKey", "tamboUrl", "environment", "userKey", "userToken"] as const
type TamboConnectionOption = typeof TAMBO_CONNECTION[number]

/**
 * The runtime's Layer for an agent. Fails, as the client's constructor throws,
 * with a `ConfigError` for an `apiKey` or user beside the agent, and (from
 * core's `AgUi.layer`) for a URL that is not http(s) or bounds that cannot work.
 */
export const layer = (options: AgentLayerOptions): Layer.Layer<Services, ConfigError | Tool.ToolDefinitionError> => {
  const conflicting = TAMBO_CONNECTION.filter((name) => options.given[name] !== undefined)
  if (conflicting.length > 0) {
    return Layer.fail(
      new ConfigError({
        reason: "InvalidOption",
        message: `Give either the Tambo API's options (${conflicting.join(", ")}) or agent (an AG-UI agent), not both`
      })
    )
  }
  // MCP servers the app lists run in the client: their tools are offered to the agent like the app's.
  const mcp = Mcp.layerWith({
    servers: options.mcpServers ?? [],
    resources: options.resources,
    listResources: options.listResources,
    getResource: options.getResource,
    roots: options.mcpRoots,
    urlElicitationHandler: options.mcpUrlElicitationHandler
  })
  return mcp.pipe(Layer.provideMerge(AgUi.layer(options)))
}
