/**
 * The set of connections: one per server key (URL, transport, headers),
 * started once, awaited by every caller, stopped on disconnect and when the
 * layer closes.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type { McpConnection, McpHandlers, McpLogLevel, McpServerInfo } from "../../Mcp.js"
import { McpError } from "../../TamboError.js"
import type { Entry, Env } from "./env.js"
import { publish } from "./env.js"
import * as Support from "./support.js"

/**
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const uniqueKey = (server: Pick<McpServerInfo, "url" | "transport" | "customHeaders">): string =>
  Support.uniqueKey(server.url, server.transport ?? "http", server.customHeaders)

/**
 * @internal
 * @since 0.2.0
 * @category Models
 */
export interface Deps {
  /** Connects the entry in the background; its `ready` tells the outcome. */
  readonly establish: (entry: Entry) => Effect.Effect<void>
  /** Makes the registry hold the tools of the connected servers; run under the lock. */
  readonly syncTools: Effect.Effect<void>
  /** Registers the tools of one entry again, under the same names; run under the lock. */
  readonly reregisterTools: (entry: Entry) => Effect.Effect<void>
  /** Keeps a new log level for the entry and shows it, and sends it to its server in the background when connected. */
  readonly applyLogLevel: (entry: Entry, level: McpLogLevel) => Effect.Effect<void>
}

/**
 * @internal
 * @since 0.2.0
 * @category Constructors
 */
export const make = (env: Env, { applyLogLevel, establish, reregisterTools, syncTools }: Deps) => {
  /** The server's key, or one derived from its URL; `-2`, `-3`, ... when it is taken. */
  const serverKeyFor = (server: McpServerInfo): string => {
    const base = Support.sanitizeKey(server.serverKey ?? Support.deriveServerKey(server.url))
    const taken = new Set(Array.from(env.entries.values(), (entry) => entry.serverKey))
    if (!taken.has(base)) return base
    for (let n = 2;; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`
  }

  /**
   * A connect of a known server that gives `toolTimeout` or `maxToolTime`: the model's next calls
   * of its tools take the new bounds (what it does not give stays), checked already. Run under the lock.
   */
  const applyToolBounds = (entry: Entry, given: McpServerInfo, bounds: Support.ToolBounds | undefined): Effect.Effect<void> =>
    Effect.gen(function*() {
      const next = {
        toolTimeout: given.toolTimeout ?? entry.server.toolTimeout,
        maxToolTime: given.maxToolTime ?? entry.server.maxToolTime
      }
      if (next.toolTimeout === entry.server.toolTimeout && next.maxToolTime === entry.server.maxToolTime) return
      entry.server = { ...entry.server, ...next }
      // The same durations written another way (an app's inline `Duration.seconds(5)` on each render).
      if (Support.sameToolBounds(entry.toolBounds, bounds)) return
      const wasBounded = entry.toolBounds !== undefined
      entry.toolBounds = bounds
      // Its tools' definitions say whether the run's tool timeout applies.
      if (wasBounded === (bounds !== undefined)) yield* publish(env)
      else yield* reregisterTools(entry)
    })

  /**
   * Starts connecting, unless connected or connecting; the entry's `ready` tells the outcome.
   * Fails with `Disconnected` once the service is closing.
   */
  const start = (server: McpServerInfo): Effect.Effect<Entry, McpError> =>
    env.locked(Effect.gen(function*() {
      if (env.closing) {
        return yield* Effect.fail(
          new McpError({
            reason: "Disconnected",
            message: `MCP server "${server.serverKey ?? Support.deriveServerKey(server.url)}" is not connected: ` +
              "the MCP service is closed"
          })
        )
      }
      const key = uniqueKey(server)
      const existing = env.entries.get(key)
      if (existing !== undefined && existing.status !== "failed") {
        // A bound no timer can wait refuses the whole connect: nothing it gives is taken.
        const bounds = Support.toolBounds({
          toolTimeout: server.toolTimeout ?? existing.server.toolTimeout,
          maxToolTime: server.maxToolTime ?? existing.server.maxToolTime
        })
        if (Either.isLeft(bounds)) {
          return yield* Effect.fail(
            new McpError({
              reason: "Connect",
              message: `MCP server "${existing.serverKey}" is left as it is: ${bounds.left}`,
              serverKey: existing.serverKey
            })
          )
        }
        // The handlers given last answer the server's next requests.
        if (server.handlers !== undefined && existing.server.handlers !== server.handlers) {
          existing.server = { ...existing.server, handlers: server.handlers }
          yield* publish(env)
        }
        if (server.toolTimeout !== undefined || server.maxToolTime !== undefined) {
          yield* applyToolBounds(existing, server, bounds.right)
        }
        if (server.logLevel !== undefined && existing.logLevel !== server.logLevel) {
          existing.server = { ...existing.server, logLevel: server.logLevel }
          yield* applyLogLevel(existing, server.logLevel)
        }
        return existing
      }
      if (existing !== undefined) {
        env.entries.delete(key)
        // A server that failed keeps its own handlers (as given, or replaced since) unless others are given.
        if (server.handlers === undefined && existing.server.handlers !== undefined) {
          server = { ...server, handlers: existing.server.handlers }
        }
      }
      const serverKey = serverKeyFor(server)
      // Bounds no timer can wait fail the connection before it opens (`establish`).
      const bounds = Support.toolBounds(server)
      const entry: Entry = {
        key,
        server,
        serverKey,
        transport: server.transport ?? "http",
        // Closed by `stop` (disconnect, the layer's finalizer) or a failed first connection, never by the
        // layer's scope directly: a session closed before its entry is stopped would look like a drop.
        scope: yield* Scope.make(ExecutionStrategy.sequential),
        ready: yield* Deferred.make<McpConnection, McpError>(),
        fiber: undefined,
        sessionScope: undefined,
        ending: undefined,
        status: "connecting",
        error: undefined,
        session: undefined,
        handle: undefined,
        tools: [],
        watch: undefined,
        promptsVersion: 0,
        resourcesVersion: 0,
        logLevel: server.logLevel,
        toolBounds: Either.getOrUndefined(bounds)
      }
      env.entries.set(key, entry)
      yield* publish(env)
      entry.fiber = yield* FiberSet.run(env.fibers, establish(entry))
      return entry
    }))

  /** Stops an entry that is no longer in `entries`: its attempt, its session, its waiters. */
  const stop = (entry: Entry): Effect.Effect<void> =>
    Effect.gen(function*() {
      if (entry.fiber !== undefined) yield* Fiber.interrupt(entry.fiber)
      if (entry.ending !== undefined) yield* Fiber.join(entry.ending)
      yield* Scope.close(entry.scope, Exit.void)
      yield* Deferred.fail(
        entry.ready,
        new McpError({
          reason: "Disconnected",
          message: `MCP server "${entry.serverKey}" was disconnected`,
          serverKey: entry.serverKey
        })
      )
    })

  const connect = (server: McpServerInfo): Effect.Effect<McpConnection, McpError> =>
    Effect.gen(function*() {
      const entry = yield* start(server)
      const connection = yield* Deferred.await(entry.ready)
      // The tool names may have changed since (other servers connected).
      const current = (yield* SubscriptionRef.get(env.connections))[entry.key]
      // A connection that dropped since is returned as it is now (`reconnecting`).
      return current !== undefined && (current.status === "connected" || current.status === "reconnecting")
        ? current
        : connection
    })

  /**
   * Takes the entry out of `entries` and stops it, and waits for that. The stop runs in
   * `endings`, started with the entry taken: a caller that gives up meanwhile (a thread switch)
   * does not cut it short, which would leave the session open, and the service's close waits for it.
   * The caller's span covers the wait.
   */
  const disconnect = (keyOrServer: string | McpServerInfo): Effect.Effect<void> =>
    disconnectIf(typeof keyOrServer === "string" ? keyOrServer : uniqueKey(keyOrServer), () => true)

  /**
   * `disconnect` of the connection `entry` only: nothing once it was disconnected, also when the
   * server was connected again since (a later entry under the same key).
   */
  const disconnectEntry = (entry: Entry): Effect.Effect<void> => disconnectIf(entry.key, (known) => known === entry)

  const disconnectIf = (key: string, which: (entry: Entry) => boolean): Effect.Effect<void> =>
    Effect.gen(function*() {
      const stopping = yield* env.locked(Effect.uninterruptible(Effect.gen(function*() {
        const entry = env.entries.get(key)
        if (entry === undefined || !which(entry)) return undefined
        env.entries.delete(key)
        entry.status = "failed"
        entry.session = undefined
        entry.handle = undefined
        yield* Effect.annotateCurrentSpan("mcp.server", entry.serverKey)
        yield* syncTools
        return env.runEnding(stop(entry))
      })))
      if (stopping !== undefined) yield* Fiber.join(stopping)
    }).pipe(Effect.withSpan("Mcp.disconnect"))

  /**
   * Replaces the handlers of a known server, under the lock; never starts a connection (a failed
   * one keeps them for its next connect); nothing for an unknown one.
   */
  const updateHandlers = (
    key: string,
    update: (handlers: Partial<McpHandlers>) => Partial<McpHandlers>
  ): Effect.Effect<void> =>
    env.locked(Effect.suspend(() => {
      const entry = env.entries.get(key)
      if (entry === undefined) return Effect.void
      entry.server = { ...entry.server, handlers: update(entry.server.handlers ?? {}) }
      return publish(env)
    }))

  /**
   * Closes every connection (their tools leave the registry first); no connection starts after.
   * Then waits for the handshakes given up to be ended: each is given a short while from now to
   * be answered (a late answer names the session to end on its server), then closed, so the
   * service's close is not held up by a server that does not answer.
   */
  const closeAll: Effect.Effect<void> = Effect.gen(function*() {
    const all = yield* env.locked(Effect.gen(function*() {
      env.closing = true
      yield* Deferred.succeed(env.closed, undefined)
      const all = Array.from(env.entries.values())
      env.entries.clear()
      for (const entry of all) {
        entry.status = "failed"
        entry.session = undefined
      }
      yield* syncTools
      return all
    }))
    yield* Effect.forEach(all, stop, { concurrency: "unbounded", discard: true })
    yield* FiberSet.awaitEmpty(env.endings)
  })

  return { start, connect, disconnect, disconnectEntry, updateHandlers, closeAll }
}
