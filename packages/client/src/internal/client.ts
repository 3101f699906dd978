/**
 * A client's parts, wired from its options (what `new TamboClient` does),
 * and their release (what `destroy()` does).
 *
 * @internal
 */
import type * as Mcp from "@tambo-effect/core/Mcp"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import type { TamboClientError } from "../errors.js"
import { createInitialState, InMemoryStore } from "../Store.js"
import type { ContextHelperFn, McpServerInfo, TamboClientOptions } from "../TamboClient.js"
import type * as Agent from "./agent.js"
import { Approvals } from "./approvals.js"
import { McpConnectionsView } from "./mcpConnections.js"
import { Notifier } from "./notifier.js"
import { Runs } from "./runs.js"
import * as ClientRuntime from "./runtime.js"
import { SnapshotSubscriptions } from "./snapshots.js"
import type { CoreError } from "./toClientError.js"

/** @internal */
export interface Parts {
  readonly runtime: ClientRuntime.ClientRuntime
  readonly notifier: Notifier
  readonly approvals: Approvals
  readonly snapshots: SnapshotSubscriptions
  readonly runs: Runs
  readonly mcpServers: ReadonlyArray<McpServerInfo>
  /** The context helpers, as registered: core keeps them for runs, this copy is for `getContextHelpers`. */
  readonly contextHelpers: Map<string, ContextHelperFn>
  /** `getMcpClients()`'s records, with Promise clients. */
  readonly mcpConnections: McpConnectionsView
  /** The `tamboMcpServer` option is set: the runtime follows Tambo's MCP server for its life. */
  readonly followsTamboMcp: boolean
  /** The calls of `followTamboMcpServer` not yet stopped, and how to stop the following they share. */
  tamboMcp: { count: number; readonly stop: () => void } | undefined
  /** The handler set last with `setMcpElicitationHandler`. */
  mcpElicitationHandler: Mcp.ElicitationHandler | undefined
  /** The handler set last with `setMcpSamplingHandler`. */
  mcpSamplingHandler: Mcp.SamplingHandler | undefined
  /** The handler set last with `setMcpUrlElicitationHandler`. */
  mcpUrlElicitationHandler: Mcp.UrlElicitationHandler | undefined
  /** `subscribeToDestroy`'s listeners, told once `destroy()` is done. */
  readonly destroyListeners: Set<() => void>
  /** `destroy()` is done. */
  destroyed: boolean
  /** What `start` still has to start (the `deferStart` option); `undefined` once started, or with nothing held back. */
  held: { readonly userToken: boolean; readonly tamboMcp: TamboClientOptions["tamboMcpServer"] } | undefined
}

/**
 * The parts of a client with these options, or the error its constructor
 * throws (a `ConfigError`, a `ToolDefinitionError`).
 *
 * @internal
 */
export const make = (options: TamboClientOptions): Either.Either<Parts, TamboClientError> =>
  Either.map(ClientRuntime.make(options, options.store ?? new InMemoryStore(createInitialState())), (runtime) => {
    const notifier = new Notifier(
      runtime.store,
      (error) => void runtime.runtime.runFork(Effect.logWarning(`A listener of subscribe threw: ${String(error)}`))
    )
    const approvals = new Approvals(runtime, notifier)
    const snapshots = new SnapshotSubscriptions()
    return {
      runtime,
      notifier,
      approvals,
      snapshots,
      runs: new Runs(runtime, notifier, approvals, snapshots, options.initialMessages),
      mcpServers: options.mcpServers ?? [],
      contextHelpers: new Map(Object.entries(options.contextHelpers ?? {})),
      mcpConnections: new McpConnectionsView(runtime),
      followsTamboMcp: options.tamboMcpServer !== undefined && options.tamboMcpServer !== false,
      tamboMcp: undefined,
      mcpElicitationHandler: undefined,
      mcpSamplingHandler: undefined,
      mcpUrlElicitationHandler: options.mcpUrlElicitationHandler,
      destroyListeners: new Set(),
      destroyed: false,
      held: options.deferStart === true
        ? { userToken: options.userToken !== undefined, tamboMcp: options.tamboMcpServer }
        : undefined
    }
  })

/**
 * Starts what `deferStart` held back, once: the token exchange, the
 * servers of `mcpServers` and Tambo's MCP server. Their failures show where
 * they always do (the auth state, each connection's status).
 *
 * @internal
 */
export const start = (parts: Parts): void => {
  const held = parts.held
  if (held === undefined) return
  parts.held = undefined
  const runtime = parts.runtime
  const quietly = (effect: Effect.Effect<unknown, CoreError, Agent.Services>) =>
    void runtime.watch(Stream.fromEffect(Effect.ignore(effect)), () => undefined, undefined)
  if (held.userToken) quietly(runtime.auth.credentials)
  for (const server of parts.mcpServers) quietly(runtime.mcp.connectMcpServer(server))
  if (held.tamboMcp !== undefined && held.tamboMcp !== false) {
    runtime.followTamboMcp(held.tamboMcp === true ? {} : held.tamboMcp)
  }
}

/**
 * Cancels the runs in flight, stops notifying listeners and releases the
 * runtime. Once: later calls get the same Promise.
 *
 * @internal
 */
export const destroy = (parts: Parts): Promise<void> =>
  parts.runtime.destroying ??= (async () => {
    try {
      parts.notifier.close()
      parts.snapshots.close()
      parts.runtime.lifetime.abort()
      await parts.runs.abortAll()
      // Before the services close: what a watcher holds (Tambo's MCP server it follows) is let go while they work.
      await parts.runtime.stopWatching()
      await parts.runtime.runtime.dispose()
    } finally {
      parts.destroyed = true
      const listeners = [...parts.destroyListeners]
      parts.destroyListeners.clear()
      for (const listener of listeners) {
        try {
          listener()
        } catch {
          // One listener's throw does not keep the others from hearing of the end.
        }
      }
    }
  })()

/**
 * `subscribeToDestroy`: `listener` is called once `destroy()` is done (in a
 * microtask if it already is); returns the unsubscribe function.
 *
 * @internal
 */
export const subscribeToDestroy = (parts: Parts, listener: () => void): (() => void) => {
  let active = true
  const once = () => {
    if (!active) return
    active = false
    listener()
  }
  if (parts.destroyed) queueMicrotask(once)
  else parts.destroyListeners.add(once)
  return () => {
    active = false
    parts.destroyListeners.delete(once)
  }
}
