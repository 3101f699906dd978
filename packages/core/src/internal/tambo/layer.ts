/**
 * The Layers `Tambo` is built on: the services its `make` takes from the
 * context (transport, auth, the store, the tool registry and executor, MCP),
 * and Tambo's own MCP server followed when the options ask for it.
 *
 * @internal
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Layer from "effect/Layer"
import * as Auth from "../../Auth.js"
import type * as ClientState from "../../ClientState.js"
import * as Mcp from "../../Mcp.js"
import type { Options } from "../../Tambo.js"
import type * as TamboConfig from "../../TamboConfig.js"
import * as Transport from "../../TamboTransport.js"
import * as ThreadStore from "../../ThreadStore.js"
import * as ToolExecutor from "../../ToolExecutor.js"
import * as ToolRegistry from "../../ToolRegistry.js"
import * as TamboMcp from "../tamboMcp.js"

/** The options of `layerWithoutConfig`. */
export type LayerOptions = Omit<Options, keyof TamboConfig.Options> & {
  readonly store?: ThreadStore.ExternalStore<ClientState.ClientState> | undefined
}

/** Every service `Tambo.make` needs, over a configuration and an `HttpClient`. */
export const services = (options: LayerOptions) => {
  const transport = Transport.layer
  const auth = Auth.layer.pipe(Layer.provide(transport))
  const store = options.store === undefined ? ThreadStore.layer : ThreadStore.layerExternal(options.store)
  const tools = ToolExecutor.layer.pipe(Layer.provideMerge(ToolRegistry.layer))
  const base = Layer.mergeAll(transport, auth, store, tools)
  // MCP servers connect in the background; the MCP SDK loads only when one is listed or connected.
  return Mcp.layerWith({
    servers: options.mcpServers ?? [],
    resources: options.resources,
    listResources: options.listResources,
    getResource: options.getResource,
    roots: options.mcpRoots,
    urlElicitationHandler: options.mcpUrlElicitationHandler
  }).pipe(
    // Given no timeouts, it has none to refuse.
    Layer.orDie,
    Layer.provideMerge(base)
  )
}

/** `layer`, following Tambo's own MCP server when the options ask for it (`tamboMcpServer`). */
export const withTamboMcp = <A, E>(
  options: LayerOptions,
  layer: Layer.Layer<A | Mcp.Mcp | ThreadStore.ThreadStore, E, TamboConfig.TamboConfig | HttpClient.HttpClient>
): Layer.Layer<A | Mcp.Mcp | ThreadStore.ThreadStore, E, TamboConfig.TamboConfig | HttpClient.HttpClient> => {
  const tamboMcp = options.tamboMcpServer
  if (tamboMcp === undefined || tamboMcp === false) return layer
  return Layer.scopedDiscard(TamboMcp.follow(tamboMcp === true ? {} : tamboMcp)).pipe(Layer.provideMerge(layer))
}
