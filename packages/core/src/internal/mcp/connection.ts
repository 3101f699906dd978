/**
 * The life of one connection: a session opened (within the connect
 * timeout, OAuth time aside) and its tools registered; a server that goes
 * away withdrawn and reconnected with backoff; a server whose tools change
 * listed again.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as PubSub from "effect/PubSub"
import * as RcMap from "effect/RcMap"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import type { McpConnection, McpLogLevel, McpRoot, McpToolSpec } from "../../Mcp.js"
import { McpError } from "../../TamboError.js"
import type * as McpClient from "./client.js"
import * as Deadline from "./deadline.js"
import { connectFailure, connectionOf, type Entry, type Env, isCurrent, publish, type ResourceWatch } from "./env.js"
import * as Handlers from "./handlers.js"
import { loadClient } from "./load.js"
import type { Logging } from "./logging.js"
import type * as OAuth from "./oauth.js"
import type { Requests } from "./requests.js"
import * as Support from "./support.js"

/** How long the server may take to end its session before the client closes anyway. */
const TERMINATE_TIMEOUT = Duration.seconds(2)

/** Guards against a close of the client that never settles. */
const CLOSE_TIMEOUT = Duration.seconds(5)

/** How long a handshake given up may go on, so that the session it may have opened can be ended. */
const HANDSHAKE_GRACE = Duration.seconds(5)

/**
 * Waits for `promise` at most `duration`. The wait itself is interruptible, so the bound holds
 * also where this runs uninterruptibly (a scope's finalizer, an `onInterrupt`): there,
 * `Effect.timeout` alone would wait for the promise however long it takes.
 */
const awaitAtMost = (promise: () => Promise<unknown>, duration: Duration.Duration): Effect.Effect<void> =>
  Effect.promise(promise).pipe(Effect.interruptible, Effect.timeout(duration), Effect.ignore)

const closeClient = (session: Pick<McpClient.Session, "close">) => awaitAtMost(() => session.close(), CLOSE_TIMEOUT)

/**
 * Ends a session: waits a bounded time for the server to end it, then closes the client (ending
 * the calls in flight, and the server's answer still awaited). Both bounds are on Effect's clock.
 */
const closeSession = (session: Pick<McpClient.Session, "terminate" | "close">) =>
  Effect.zipRight(awaitAtMost(() => session.terminate(), TERMINATE_TIMEOUT), closeClient(session))

/** How long a handshake given up may go on once the service is closing: its close is not held up longer. */
const CLOSING_GRACE = Duration.seconds(2)

/**
 * Ends a handshake given up: lets it finish a bounded time (shorter once the service is closing;
 * then the client is closed, which ends the handshake unanswered), then ends the session it may
 * have opened as any other. Interrupted, it closes the client (which aborts the handshake).
 */
const endAbandoned = (abandoned: McpClient.Abandoned, closed: Deferred.Deferred<void>): Effect.Effect<void> =>
  Effect.promise(() => abandoned.handshake).pipe(
    Effect.timeout(HANDSHAKE_GRACE),
    Effect.ignore,
    Effect.race(Effect.zipRight(Deferred.await(closed), Effect.delay(closeClient(abandoned), CLOSING_GRACE))),
    Effect.zipRight(closeSession(abandoned)),
    Effect.onInterrupt(() => closeClient(abandoned))
  )

/**
 * One attempt to open a session: the session once its tools are listed, whether it closed before,
 * whether it is the entry's, and whether the server said its tools changed before it was.
 */
interface Attempt {
  session: McpClient.Session | undefined
  closed: boolean
  installed: boolean
  toolsChanged: boolean
  /** What the server says of the resources the session subscribed to. */
  readonly updates: PubSub.PubSub<string>
}

/**
 * A session, the scope that holds it, the tools it listed, its watched resources, and the attempt
 * that opened it.
 */
interface Opened {
  readonly session: McpClient.Session
  readonly scope: Scope.CloseableScope
  readonly tools: ReadonlyArray<McpToolSpec>
  readonly watch: ResourceWatch
  readonly attempt: Attempt
  /** The log level its server was asked for while it opened. */
  readonly logLevel: McpLogLevel | undefined
  /** The roots set when it opened: what its server may have read before it was installed. */
  readonly roots: ReadonlyArray<McpRoot> | undefined
}

/**
 * @internal
 * @since 0.2.0
 * @category Models
 */
export interface Deps {
  readonly oauth: ReturnType<typeof OAuth.make>
  readonly requests: Requests
  readonly logging: Logging
  /** Makes the registry hold the tools of the connected servers; run under the lock. */
  readonly syncTools: Effect.Effect<void>
}

/**
 * @internal
 * @since 0.2.0
 * @category Constructors
 */
export const make = (env: Env, { logging, oauth, requests, syncTools }: Deps) => {
  /**
   * A connected server went away: its tools are withdrawn, its session
   * closed, and it is reconnected with backoff. Ignored when `session` is
   * no longer the entry's (a late close of an old session). The session is
   * ended by the reconnecting fiber, before it reconnects, and not under the
   * lock: a server slow to answer its `DELETE` holds up no other connection.
   */
  const markDropped = (entry: Entry, session: McpClient.Session, error: McpError): Effect.Effect<void> =>
    env.locked(Effect.gen(function*() {
      if (!isCurrent(env, entry) || entry.session !== session || entry.status !== "connected") return
      entry.status = "reconnecting"
      entry.error = error
      entry.session = undefined
      entry.handle = undefined
      entry.watch = undefined
      entry.tools = []
      yield* syncTools
      const sessionScope = entry.sessionScope
      entry.sessionScope = undefined
      // A fiber of its own, not cut short by a disconnect, which then waits for it (the calls on the
      // session ended); its bounds on the server's answer hold even then.
      const ending = sessionScope === undefined ? undefined : env.runEnding(Scope.close(sessionScope, Exit.void))
      entry.ending = ending
      const ended = ending === undefined ? Effect.void : Fiber.join(ending)
      entry.fiber = yield* FiberSet.run(env.fibers, Effect.zipRight(ended, reconnect(entry)))
    }))

  /** Lists the tools of the entry's session once, and registers them. */
  const listToolsOnce = (entry: Entry): Effect.Effect<void> =>
    Effect.gen(function*() {
      const session = entry.session
      if (session === undefined || !isCurrent(env, entry)) return
      const tools = yield* requests.listTools(entry, session)
      yield* env.locked(Effect.gen(function*() {
        if (!isCurrent(env, entry) || entry.session !== session) return
        entry.tools = tools
        yield* syncTools
      }))
    }).pipe(
      Effect.catchAll((error) => Effect.logWarning(`Refreshing the tools of MCP server "${entry.serverKey}": ${error.message}`)),
      Effect.withSpan("Mcp.refreshTools", { attributes: { "mcp.server": entry.serverKey } })
    )

  /** The entries whose tools are being listed again, each with whether a change was said since it began. */
  const refreshing = new WeakMap<Entry, { again: boolean }>()

  /**
   * Lists the tools again and registers them. One listing at a time per entry: a change said
   * while one is in progress lists them once more after it, so the latest listing is the last
   * registered (an older answer that comes last never overwrites a newer one).
   */
  const refreshTools = (entry: Entry): Effect.Effect<void> =>
    Effect.suspend(() => {
      const running = refreshing.get(entry)
      if (running !== undefined) {
        running.again = true
        return Effect.void
      }
      const state = { again: false }
      refreshing.set(entry, state)
      const loop: Effect.Effect<void> = Effect.zipRight(
        listToolsOnce(entry),
        Effect.suspend(() => {
          if (!state.again) {
            refreshing.delete(entry)
            return Effect.void
          }
          state.again = false
          return loop
        })
      )
      return Effect.ensuring(
        loop,
        Effect.sync(() => {
          if (refreshing.get(entry) === state) refreshing.delete(entry)
        })
      )
    })

  /** The server of an installed session said a list changed: the connection shows a new version. */
  const listChanged = (entry: Entry, attempt: Attempt, version: "promptsVersion" | "resourcesVersion") =>
    env.locked(Effect.suspend(() => {
      if (!isCurrent(env, entry) || attempt.session === undefined || entry.session !== attempt.session) return Effect.void
      entry[version]++
      return publish(env)
    }))

  /**
   * What the MCP client is given for the entry's server. `attempt.session`
   * is set once the tools are listed: a close before the session is the
   * entry's fails the attempt itself (`attempt.closed`, read by `open` and
   * under the lock by `install`), a close after it is a drop.
   */
  const connectOptions = (
    entry: Entry,
    url: URL,
    oauthOptions: McpClient.OAuthOptions | undefined,
    capabilities: { readonly sampling: boolean; readonly roots: boolean; readonly urlElicitation: boolean },
    attempt: Attempt
  ): Omit<McpClient.ConnectOptions, "signal"> => ({
    url,
    transport: entry.transport,
    headers: entry.server.customHeaders ?? {},
    oauth: oauthOptions,
    clientInfo: env.clientInfo,
    requestTimeoutMs: Duration.toMillis(env.requestTimeout),
    sampling: capabilities.sampling,
    roots: capabilities.roots,
    urlElicitation: capabilities.urlElicitation,
    onElicit: Handlers.elicit(env, entry),
    onSample: Handlers.sample(env, entry),
    onElicitUrl: Handlers.elicitUrl(env, entry),
    onElicitationComplete: (elicitationId) =>
      void env.elicitationCompletions.unsafeOffer({ key: entry.key, serverKey: entry.serverKey, elicitationId }),
    onListRoots: Handlers.listRoots(env),
    onLog: logging.onLog(entry),
    // Before the session is the entry's, a refresh would find nothing to refresh: `install` does it.
    onToolsChanged: () => {
      if (attempt.installed) void env.runFork(refreshTools(entry))
      else attempt.toolsChanged = true
    },
    onPromptsChanged: () => void env.runFork(listChanged(entry, attempt, "promptsVersion")),
    onResourceUpdated: (uri) => void attempt.updates.unsafeOffer(uri),
    onResourcesChanged: () => void env.runFork(listChanged(entry, attempt, "resourcesVersion")),
    onClose: () => {
      attempt.closed = true
      const session = attempt.session
      if (session === undefined) return
      // Nothing before `install` made the session the entry's: `install` sees `attempt.closed` then.
      void env.runFork(markDropped(
        entry,
        session,
        new McpError({
          reason: "Disconnected",
          message: `The connection to MCP server "${entry.serverKey}" closed`,
          serverKey: entry.serverKey
        })
      ))
    },
    // In the service's scope, on its clock: its close waits for these.
    onAbandoned: (abandoned) => void env.runEnding(endAbandoned(abandoned, env.closed))
  })

  /**
   * Opens a session in a scope of its own and lists the tools, within the
   * connect timeout; on failure, closes what it opened.
   */
  const open = (entry: Entry): Effect.Effect<Opened, McpError> =>
    Effect.gen(function*() {
      const client = yield* loadClient
      const url = yield* Effect.try({ try: () => new URL(entry.server.url), catch: (error) => connectFailure(entry, error) })
      const sampling = yield* Handlers.samples(env, entry)
      const roots = yield* Handlers.offersRoots(env)
      // Read before the server can ask for them: a change after this is announced once installed.
      const rootsAtOpen = (yield* Ref.get(env.handlers)).roots
      const urlElicitation = yield* Handlers.elicitsUrls(env, entry)
      const deadline = yield* Deadline.make(env.connectTimeout)
      // The app's storage and code functions may throw: a defect here would leave `ready` waiting forever.
      const oauthOptions = yield* oauth.optionsFor(entry, deadline).pipe(
        Effect.catchAllDefect((defect) => Effect.fail(connectFailure(entry, defect)))
      )
      const scope = yield* Scope.fork(entry.scope, ExecutionStrategy.sequential)
      const updates = yield* PubSub.unbounded<string>()
      yield* Scope.addFinalizer(scope, PubSub.shutdown(updates))
      const attempt: Attempt = { session: undefined, closed: false, installed: false, toolsChanged: false, updates }
      const options = connectOptions(entry, url, oauthOptions, { sampling, roots, urlElicitation }, attempt)
      return yield* Effect.gen(function*() {
        const session = yield* Effect.uninterruptibleMask((restore) =>
          restore(
            Effect.tryPromise({
              try: (signal) => client.connect({ ...options, signal }),
              catch: (error) => connectFailure(entry, error)
            })
          ).pipe(Effect.tap((session) => Scope.addFinalizer(scope, closeSession(session))))
        )
        const tools = yield* Effect.tryPromise({
          try: (signal) => session.listTools(signal),
          catch: (error) => connectFailure(entry, error)
        })
        // Its event stream dropped while the tools were listed: the server went away.
        if (attempt.closed) return yield* Effect.fail(connectFailure(entry, "the connection closed while connecting"))
        attempt.session = session
        yield* Effect.annotateCurrentSpan("mcp.tools", tools.length)
        // One subscription on the server per resource, while someone watches it; ended with the session.
        const subscriptions = yield* RcMap.make({
          lookup: (uri: string) =>
            Effect.acquireRelease(
              requests.request(entry, session, `Subscribing to the resource "${uri}"`, (signal) =>
                session.subscribeResource(uri, signal)),
              () =>
                requests.request(entry, session, `Unsubscribing from the resource "${uri}"`, (signal) =>
                  session.unsubscribeResource(uri, signal)).pipe(Effect.ignore)
            )
        }).pipe(Scope.extend(scope))
        const logLevel = yield* logging.opened(entry, session)
        return { session, scope, tools, watch: { updates, subscriptions }, attempt, logLevel, roots: rootsAtOpen }
      }).pipe(
        // A defect must not leave the callers waiting for `ready` forever.
        Effect.catchAllDefect((defect) => Effect.fail(connectFailure(entry, defect))),
        // Network time only: not the time the user spends authorizing.
        (self) =>
          deadline.bound(self, () => connectFailure(entry, `no answer within ${Duration.format(env.connectTimeout)}`)),
        Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Scope.close(scope, Exit.void)))
      )
    }).pipe(
      Effect.withSpan("Mcp.connect", {
        attributes: { "mcp.server": entry.serverKey, "mcp.transport": entry.transport }
      })
    )

  /**
   * Makes an opened session the entry's and registers its tools, then lists them again if the
   * server said they changed meanwhile, and tells it the roots changed if they did since it
   * opened (`setRoots` tells only the sessions installed); `undefined` when the entry is gone.
   * A session that closed since its tools were listed (its event stream dropped while the log
   * level was asked for) fails as a connect that closed: it is never the entry's.
   */
  const install = (
    entry: Entry,
    { attempt, logLevel, roots, scope, session, tools, watch }: Opened
  ): Effect.Effect<McpConnection | undefined, McpError> =>
    Effect.flatMap(
      env.locked(Effect.gen(function*() {
        if (!isCurrent(env, entry)) return undefined
        if (attempt.closed) return yield* Effect.fail(connectFailure(entry, "the connection closed while connecting"))
        entry.session = session
        entry.sessionScope = scope
        entry.handle = requests.handleOf(entry, session)
        entry.watch = watch
        entry.tools = tools
        entry.status = "connected"
        entry.error = undefined
        entry.fiber = undefined
        attempt.installed = true
        // The level may have changed while the session opened.
        yield* logging.installed(entry, session, logLevel)
        // `setRoots` tells the installed sessions: from here on, a change reaches this one.
        if (session.announcesRoots && (yield* Ref.get(env.handlers)).roots !== roots) {
          env.runFork(Effect.promise(() => session.sendRootsListChanged().catch(() => undefined)))
        }
        yield* syncTools
        return connectionOf(env, entry)
      })),
      (connection) =>
        connection === undefined
          ? Effect.as(Scope.close(scope, Exit.void), undefined)
          : attempt.toolsChanged
          ? Effect.as(Effect.sync(() => env.runFork(refreshTools(entry))), connection)
          : Effect.succeed(connection)
    ).pipe(Effect.tapError(() => Scope.close(scope, Exit.void)))

  /**
   * Connects, lists the tools and registers them; on failure (tool bounds no timer can wait, before
   * anything is opened), records it. The entry's `ready` tells the outcome.
   */
  const establish = (entry: Entry): Effect.Effect<void> =>
    Effect.gen(function*() {
      const bounds = Support.toolBounds(entry.server)
      if (Either.isLeft(bounds)) return yield* Effect.fail(connectFailure(entry, bounds.left))
      const opened = yield* open(entry)
      const connection = yield* install(entry, opened)
      if (connection !== undefined) yield* Deferred.succeed(entry.ready, connection)
    }).pipe(
      Effect.catchAll((error) =>
        Effect.gen(function*() {
          yield* env.locked(Effect.gen(function*() {
            if (!isCurrent(env, entry)) return
            entry.status = "failed"
            entry.error = error
            yield* publish(env)
          }))
          yield* Scope.close(entry.scope, Exit.void)
          yield* Deferred.fail(entry.ready, error)
        })
      )
    )

  /**
   * The reconnect schedule ran out: the entry is `failed` with the last error, so that a later
   * connect replaces it, and what it still holds is closed.
   */
  const giveUp = (entry: Entry, error: McpError): Effect.Effect<void> =>
    Effect.gen(function*() {
      const failed = yield* env.locked(Effect.gen(function*() {
        if (!isCurrent(env, entry) || entry.status !== "reconnecting") return false
        entry.status = "failed"
        entry.error = error
        entry.fiber = undefined
        yield* publish(env)
        return true
      }))
      if (failed) yield* Scope.close(entry.scope, Exit.void)
    })

  /**
   * Tries to reach a server that went away again, until it answers, is disconnected, or the
   * reconnect schedule gives up (then it is `failed`).
   */
  const reconnect = (entry: Entry): Effect.Effect<void> =>
    open(entry).pipe(
      Effect.flatMap((opened) => install(entry, opened)),
      Effect.tapError((error) =>
        env.locked(Effect.suspend(() => {
          if (!isCurrent(env, entry) || entry.status !== "reconnecting") return Effect.void
          entry.error = error
          return publish(env)
        }))
      ),
      Effect.retry({ schedule: env.reconnectSchedule, while: () => isCurrent(env, entry) }),
      Effect.matchEffect({
        onFailure: (error) => giveUp(entry, error),
        onSuccess: () => Effect.void
      }),
      Effect.withSpan("Mcp.reconnect", { attributes: { "mcp.server": entry.serverKey } })
    )

  return { establish, markDropped }
}
