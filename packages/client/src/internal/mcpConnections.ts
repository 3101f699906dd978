/**
 * The facade's view of core's MCP connections: the same records, with each
 * connected server's `client` calling through the client's runtime as
 * Promises. Each record and each connection is converted once, so that
 * `getMcpClients()` returns the same object until something changed (what
 * `useSyncExternalStore` needs).
 *
 * @internal
 */
import type * as Mcp from "@tambo-effect/core/Mcp"
import type { McpError } from "@tambo-effect/core/TamboError"
import type * as Effect from "effect/Effect"
import type { McpConnectionInfo, McpConnections } from "../TamboClient.js"
import type { ClientRuntime } from "./runtime.js"

/** @internal */
export class McpConnectionsView {
  readonly #records = new WeakMap<Mcp.McpConnections, McpConnections>()
  readonly #connections = new WeakMap<Mcp.McpConnection, McpConnectionInfo>()
  #updates: Promise<void> = Promise.resolve()
  /** The replacements of handlers asked for and not applied yet. */
  #pending = 0

  constructor(readonly runtime: ClientRuntime) {}

  /** The record as the facade shows it. */
  record(connections: Mcp.McpConnections): McpConnections {
    let shown = this.#records.get(connections)
    if (shown === undefined) {
      shown = Object.fromEntries(Object.entries(connections).map(([key, connection]) => [key, this.connection(connection)]))
      this.#records.set(connections, shown)
    }
    return shown
  }

  /** One connection as the facade shows it. */
  connection(connection: Mcp.McpConnection): McpConnectionInfo {
    let shown = this.#connections.get(connection)
    if (shown === undefined) {
      const { client: handle, ...rest } = connection
      shown = handle === undefined ? rest : {
        ...rest,
        client: {
          listTools: () => this.runtime.promise(handle.listTools).then((tools) => [...tools]),
          callTool: (name, args = {}, meta, options) =>
            this.runtime.promise(handle.callTool(name, args, { meta, onProgress: options?.onProgress })),
          getServerVersion: () => connection.serverVersion,
          getServerCapabilities: () => connection.capabilities,
          getInstructions: () => connection.instructions,
          updateElicitationHandler: (handler) => this.#setHandler(handle, "elicitation", handler),
          updateSamplingHandler: (handler) => this.#setHandler(handle, "sampling", handler),
          updateUrlElicitationHandler: (handler) => this.#setHandler(handle, "urlElicitation", handler),
          close: () => this.runtime.promise(handle.disconnect)
        }
      }
      this.#connections.set(connection, shown)
    }
    return shown
  }

  /**
   * Replaces one of a server's own handlers, on the session of `handle` (see
   * `Mcp.McpClientHandle.updateHandlers`), from the handlers it has then. Never a connection, and
   * nothing once that session is no longer the server's: disconnected (also when a disconnect
   * comes first while this waits), or replaced by a later connection or a reconnection, whose
   * handlers stay as they are.
   */
  #setHandler<K extends keyof Mcp.McpHandlers>(
    handle: Mcp.McpClientHandle,
    kind: K,
    handler: Mcp.McpHandlers[K] | undefined
  ): void {
    void this.#inOrder(handle.updateHandlers((current) => {
      const { [kind]: _replaced, ...others } = current
      return handler === undefined ? others : { ...others, [kind]: handler }
    })).catch(() => undefined)
  }

  /**
   * Replaces a server's own handlers with what `update` makes of them, after every replacement
   * asked before (by a connection's client or by `updateMcpServerHandlers`): the one asked last is
   * in force.
   */
  updateHandlers(key: string, update: (current: Partial<Mcp.McpHandlers>) => Partial<Mcp.McpHandlers>): Promise<void> {
    return this.#inOrder(this.runtime.mcp.updateMcpServerHandlers(key, update))
  }

  /** Runs a replacement of handlers after every one asked before. */
  #inOrder(effect: Effect.Effect<void, McpError>): Promise<void> {
    const done = this.afterUpdates(() => this.runtime.promise(effect))
    this.#pending++
    this.#updates = done.catch(() => undefined).finally(() => {
      this.#pending--
    })
    return done
  }

  /**
   * Runs `start` once the handler replacements asked before it are applied (at once when none
   * waits), so that what it replaces comes after them; the replacements asked after it wait for it
   * to have started.
   */
  afterUpdates<A>(start: () => Promise<A>): Promise<A> {
    return this.#pending === 0 ? start() : this.#updates.then(start)
  }
}
