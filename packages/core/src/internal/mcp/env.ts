/**
 * What every part of the MCP service shares: the services it uses, its
 * options with their defaults, the connections (one `Entry` each) and the
 * tools registered for them, the lock that guards both, and the fibers
 * everything runs in.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import * as PubSub from "effect/PubSub"
import type * as RcMap from "effect/RcMap"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { isRecord } from "effect/Predicate"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type {
  ElicitationHandler,
  MakeOptions,
  McpClientHandle,
  McpConnection,
  McpConnections,
  McpConnectionStatus,
  McpElicitationComplete,
  McpLogLevel,
  McpLogMessage,
  McpRoot,
  McpServerInfo,
  McpToolProgress,
  McpToolSpec,
  McpTransport,
  SamplingHandler,
  UrlElicitationHandler
} from "../../Mcp.js"
import { type ConfigError, McpError } from "../../TamboError.js"
import type * as Tool from "../../Tool.js"
import { ToolRegistry } from "../../ToolRegistry.js"
import { positiveDuration } from "../config.js"
import { describeError } from "../toolSupport.js"
import type * as McpClient from "./client.js"
import type * as Support from "./support.js"

const DEFAULT_CONNECT_TIMEOUT = Duration.seconds(30)
const DEFAULT_REQUEST_TIMEOUT = Duration.seconds(60)
const DEFAULT_CLIENT_INFO = { name: "tambo-effect", version: "0.1.0" }
const DEFAULT_RECONNECT_SCHEDULE: Schedule.Schedule<unknown, McpError> = Schedule.exponential("500 millis").pipe(
  Schedule.union(Schedule.spaced("30 seconds")),
  Schedule.jittered
)

/**
 * A server the service knows: connecting, connected, reconnecting, or failed.
 *
 * @internal
 * @since 0.2.0
 * @category Models
 */
export interface Entry {
  readonly key: string
  /** As given last: a connect of the same server replaces its `handlers`. */
  server: McpServerInfo
  readonly serverKey: string
  readonly transport: McpTransport
  /** Holds the sessions; closed on disconnect, failure, and with the layer. */
  readonly scope: Scope.CloseableScope
  readonly ready: Deferred.Deferred<McpConnection, McpError>
  /** The attempt in progress: the first connection, or a reconnection. */
  fiber: Fiber.RuntimeFiber<void> | undefined
  /** Holds the current session: closed when it drops. */
  sessionScope: Scope.CloseableScope | undefined
  /** The end of the session that dropped last, in `endings`: a reconnection and a disconnect wait for it. */
  ending: Fiber.RuntimeFiber<void> | undefined
  status: McpConnectionStatus
  error: McpError | undefined
  session: McpClient.Session | undefined
  handle: McpClientHandle | undefined
  tools: ReadonlyArray<McpToolSpec>
  /** The resources of the current session watched, and the changes its server tells of. */
  watch: ResourceWatch | undefined
  /** How many times its servers said their prompts changed (`McpConnection.promptsVersion`). */
  promptsVersion: number
  /** How many times its servers said their resources changed (`McpConnection.resourcesVersion`). */
  resourcesVersion: number
  /** The level its server is asked to log at, on each session: `McpServerInfo.logLevel`, or as set since. */
  logLevel: McpLogLevel | undefined
  /** The bounds of the model's calls of its tools, from `McpServerInfo.toolTimeout` (none: the run's), as given last. */
  toolBounds: Support.ToolBounds | undefined
}

/**
 * A session's watched resources: the URIs its server says changed (shut down with the session),
 * and one subscription on the server per URI, for as long as someone watches it.
 *
 * @internal
 * @since 0.2.0
 * @category Models
 */
export interface ResourceWatch {
  readonly updates: PubSub.PubSub<string>
  readonly subscriptions: RcMap.RcMap<string, void, McpError>
}

/**
 * A tool of a server, as registered in the `ToolRegistry`.
 *
 * @internal
 * @since 0.2.0
 * @category Models
 */
export interface Registration {
  readonly definition: Tool.Definition
  readonly entry: Entry
  readonly spec: McpToolSpec
}

/**
 * The service-wide handlers of servers' requests.
 *
 * @internal
 * @since 0.2.0
 * @category Models
 */
export interface Handlers {
  readonly elicitation: ElicitationHandler | undefined
  readonly sampling: SamplingHandler | undefined
  readonly urlElicitation: UrlElicitationHandler | undefined
  /** The roots servers are given; announced to the servers connected while set. */
  readonly roots: ReadonlyArray<McpRoot> | undefined
}

/** How far behind a subscriber of `logs`, `toolProgress` or `elicitationCompletions` may fall before it loses the oldest. */
const NOTICES_KEPT = 1_000

/**
 * @internal
 * @since 0.2.0
 * @category Models
 */
export interface Env {
  readonly registry: ToolRegistry.Service
  readonly options: MakeOptions
  readonly connectTimeout: Duration.Duration
  /** `MakeOptions.requestTimeout`. */
  readonly requestTimeout: Duration.Duration
  readonly clientInfo: { readonly name: string; readonly version: string }
  readonly reconnectSchedule: Schedule.Schedule<unknown, McpError>
  readonly handlers: Ref.Ref<Handlers>
  /** The servers' log messages, for `Mcp.Service.logs`. */
  readonly logs: PubSub.PubSub<McpLogMessage>
  /** The progress of the model's calls, for `Mcp.Service.toolProgress`. */
  readonly toolProgress: PubSub.PubSub<McpToolProgress>
  /** The latest progress of each model's call still running, by `toolCallId`, for `currentToolProgress`. */
  readonly callsInProgress: Map<string, McpToolProgress>
  /** The URL elicitations servers said finished, for `Mcp.Service.elicitationCompletions`. */
  readonly elicitationCompletions: PubSub.PubSub<McpElicitationComplete>
  /** What `getMcpClients` and `changes` show; written by `publish`. */
  readonly connections: SubscriptionRef.SubscriptionRef<McpConnections>
  /** Connection attempts, event handling and server requests: all interrupted when the layer closes. */
  readonly fibers: FiberSet.FiberSet<unknown, unknown>
  /** Runs an effect in `fibers`, for the MCP client's callbacks. */
  readonly runFork: <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>
  /** The endings of handshakes given up (their sessions ended on their servers): the service's close waits for them. */
  readonly endings: FiberSet.FiberSet<void>
  /** Runs an ending in `endings`, from the MCP client's callback. */
  readonly runEnding: (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>
  /** Done once the service started closing: the endings then wait a short while only. */
  readonly closed: Deferred.Deferred<void>
  readonly runPromise: <A, E>(effect: Effect.Effect<A, E>) => Promise<A>
  /** Every change of `entries`, of an entry and of `registered` happens under this, in the order asked. */
  readonly locked: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly entries: Map<string, Entry>
  /** Set under the lock once the service started closing: no connection starts after. */
  closing: boolean
  readonly registered: Map<string, Registration>
  /** The reverse of `registered`, for the connections' tool lists. */
  readonly nameOfSpec: WeakMap<McpToolSpec, string>
}

/**
 * A lock taken in the order asked. Effect's semaphore wakes its waiters on a later turn, so a
 * taker that comes as it is let go goes before them: a replacement of handlers asked last could be
 * applied before one asked earlier, which would then be in force. Each taker waits for the one
 * asked before it; one interrupted while it waits hands its turn on to the one after it.
 */
const fairLock = (): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> => {
  let last = Deferred.unsafeMake<void>(FiberId.none)
  Deferred.unsafeDone(last, Effect.void)
  return (self) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        const before = last
        const mine = Deferred.unsafeMake<void>(FiberId.none)
        last = mine
        return Effect.matchCauseEffect(restore(Deferred.await(before)), {
          onFailure: (cause) => Effect.zipRight(Deferred.completeWith(mine, Deferred.await(before)), Effect.failCause(cause)),
          onSuccess: () => Effect.ensuring(restore(self), Deferred.succeed(mine, undefined))
        })
      })
    )
}

/**
 * The shared state; a `connectTimeout` or `requestTimeout` no timer can wait is a `ConfigError`
 * (`InvalidOption`) naming it.
 *
 * @internal
 * @since 0.2.0
 * @category Constructors
 */
export const make = (
  options: MakeOptions
): Effect.Effect<Env, ConfigError, ToolRegistry | Scope.Scope> =>
  Effect.gen(function*() {
    const connectTimeout = yield* positiveDuration("connectTimeout", options.connectTimeout, DEFAULT_CONNECT_TIMEOUT)
    const requestTimeout = yield* positiveDuration("requestTimeout", options.requestTimeout, DEFAULT_REQUEST_TIMEOUT)
    const fibers = yield* FiberSet.make<unknown, unknown>()
    const endings = yield* FiberSet.make<void>()
    return {
      registry: yield* ToolRegistry,
      options,
      connectTimeout,
      requestTimeout,
      clientInfo: options.clientInfo ?? DEFAULT_CLIENT_INFO,
      reconnectSchedule: options.reconnectSchedule ?? DEFAULT_RECONNECT_SCHEDULE,
      handlers: yield* Ref.make<Handlers>({
        elicitation: options.elicitationHandler,
        sampling: options.samplingHandler,
        urlElicitation: options.urlElicitationHandler,
        roots: options.roots
      }),
      logs: yield* Effect.acquireRelease(PubSub.sliding<McpLogMessage>(NOTICES_KEPT), PubSub.shutdown),
      toolProgress: yield* Effect.acquireRelease(PubSub.sliding<McpToolProgress>(NOTICES_KEPT), PubSub.shutdown),
      elicitationCompletions: yield* Effect.acquireRelease(
        PubSub.sliding<McpElicitationComplete>(NOTICES_KEPT),
        PubSub.shutdown
      ),
      callsInProgress: new Map(),
      connections: yield* SubscriptionRef.make<McpConnections>({}),
      fibers,
      runFork: yield* FiberSet.runtime(fibers)<never>(),
      runPromise: yield* FiberSet.runtimePromise(fibers)<never>(),
      endings,
      runEnding: yield* FiberSet.runtime(endings)<never>(),
      closed: yield* Deferred.make<void>(),
      locked: fairLock(),
      entries: new Map(),
      closing: false,
      registered: new Map(),
      nameOfSpec: new WeakMap()
    }
  })

/**
 * Whether the entry is still the one known under its key (not disconnected, not replaced).
 *
 * @internal
 * @since 0.2.0
 * @category Guards
 */
export const isCurrent = (env: Env, entry: Entry): boolean => env.entries.get(entry.key) === entry

/**
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const connectionOf = (env: Env, entry: Entry): McpConnection => ({
  key: entry.key,
  serverKey: entry.serverKey,
  server: entry.server,
  status: entry.status,
  ...(entry.error === undefined ? {} : { error: entry.error }),
  tools: entry.tools.map((spec) => ({ ...spec, registeredName: env.nameOfSpec.get(spec) })),
  promptsVersion: entry.promptsVersion,
  resourcesVersion: entry.resourcesVersion,
  ...(entry.logLevel === undefined ? {} : { logLevel: entry.logLevel }),
  ...(entry.session === undefined ? {} : {
    serverVersion: entry.session.serverVersion,
    capabilities: entry.session.capabilities,
    instructions: entry.session.instructions
  }),
  ...(entry.handle === undefined ? {} : { client: entry.handle })
})

/**
 * Shows every entry as it is now in `connections`.
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const publish = (env: Env): Effect.Effect<void> =>
  Effect.suspend(() => {
    const snapshot: Record<string, McpConnection> = {}
    for (const entry of env.entries.values()) snapshot[entry.key] = connectionOf(env, entry)
    return SubscriptionRef.set(env.connections, snapshot)
  })

/**
 * Connecting to the entry's server failed (unreachable, refused, timed out, not authorized).
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const connectFailure = (entry: Entry, error: unknown): McpError => {
  const status = httpStatusOf(error)
  return new McpError({
    reason: "Connect",
    message: `Connecting to MCP server "${entry.serverKey}" (${entry.server.url}) failed: ` +
      `${status === undefined ? "" : `HTTP ${status}: `}${describeError(error)}`,
    serverKey: entry.serverKey
  })
}

/** The HTTP status the MCP SDK's transport errors carry as `code` (not a system error's `ECONNREFUSED`). */
const httpStatusOf = (error: unknown): number | undefined =>
  isRecord(error) && typeof error["code"] === "number" && error["code"] >= 100 && error["code"] < 600
    ? error["code"]
    : undefined
