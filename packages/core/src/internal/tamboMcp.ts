/**
 * Tambo's own MCP server (`<tamboUrl>/mcp`, which offers the prompts and
 * resources of the project's MCP servers), connected like any other with an
 * MCP access token: for the current thread when there is one, else for the
 * context key given (as `@tambo-ai/react` does); none without either, or
 * when the project has no MCP servers (the token endpoint gives no token).
 * The token is fetched again, and the server reconnected with it, when the
 * current thread changes and before the token expires.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ClientState from "../ClientState.js"
import * as Mcp from "../Mcp.js"
import { TamboConfig } from "../TamboConfig.js"
import { ThreadStore } from "../ThreadStore.js"

/**
 * The options of Tambo's MCP server: `contextKey` gets a token while no
 * thread is current.
 *
 * @internal
 */
export interface Options {
  readonly contextKey?: string | undefined
}

/** The key its prompts and resources are listed under. */
export const SERVER_KEY = "tambo"

/** How long before its expiry a token is replaced (at most: halfway through its life for short ones). */
const REFRESH_MARGIN = Duration.minutes(1)

/** Retries of a failed token request (the API unreachable, a thread just deleted). */
const TOKEN_RETRY = Schedule.exponential("1 second").pipe(Schedule.union(Schedule.spaced("1 minute")))

type Target =
  | { readonly _tag: "Thread"; readonly threadId: string }
  | { readonly _tag: "Context"; readonly contextKey: string }
  | { readonly _tag: "None" }

const sameTarget = (a: Target, b: Target): boolean =>
  a._tag === "Thread" ? b._tag === "Thread" && a.threadId === b.threadId
  : a._tag === "Context" ? b._tag === "Context" && a.contextKey === b.contextKey
  : b._tag === "None"

/**
 * Follows the current thread for as long as the scope is open.
 *
 * @internal
 */
export const follow = (
  options: Options
): Effect.Effect<void, never, Mcp.Mcp | ThreadStore | TamboConfig | Scope.Scope> =>
  Effect.gen(function*() {
    const mcp = yield* Mcp.Mcp
    const store = yield* ThreadStore
    const config = yield* TamboConfig
    const url = `${config.baseUrl}/mcp`
    // The key of the connection made with the latest token.
    const connected = yield* Ref.make<string | undefined>(undefined)

    const targetOf = (state: ClientState.ClientState): Target =>
      !ClientState.isLocalThreadId(state.currentThreadId)
        ? { _tag: "Thread", threadId: state.currentThreadId }
        : options.contextKey !== undefined
        ? { _tag: "Context", contextKey: options.contextKey }
        : { _tag: "None" }

    // The key is let go of once its connection is gone: a thread switch that cuts the disconnect
    // short (waiting for the service's lock) leaves it to the next one.
    const disconnect = Effect.flatMap(
      Ref.get(connected),
      (key) => (key === undefined ? Effect.void : Effect.zipRight(mcp.disconnectMcpServer(key), Ref.set(connected, undefined)))
    )

    /** Connects with a token for the target, and again with a fresh one before it expires. */
    const serve = (target: Target): Effect.Effect<void> => {
      if (target._tag === "None") return disconnect
      const token = (target._tag === "Thread"
        ? mcp.getMcpToken(undefined, target.threadId)
        : mcp.getMcpToken(target.contextKey)).pipe(
          Effect.tapError((error) => Effect.logDebug(`Tambo's MCP token: ${error.message}`)),
          Effect.retry(TOKEN_RETRY),
          Effect.orDie
        )
      const once = Effect.gen(function*() {
        const { expiresAt, token: value } = yield* token
        yield* disconnect
        // No token: the project has no MCP servers, so nothing to connect.
        if (Option.isNone(value)) return Option.none<number>()
        const server: Mcp.McpServerInfo = {
          url,
          name: Mcp.TAMBO_SERVER_NAME,
          serverKey: SERVER_KEY,
          customHeaders: { Authorization: `Bearer ${Redacted.value(value.value)}` }
        }
        yield* Ref.set(connected, Mcp.uniqueKey(server))
        // A failure shows in the connection's status; the runs go on without it.
        yield* Effect.ignore(mcp.connectMcpServer(server))
        return expiresAt
      })
      return Effect.gen(function*() {
        while (true) {
          const expiresAt = yield* once
          if (Option.isNone(expiresAt)) return yield* Effect.never
          const remaining = expiresAt.value - (yield* Clock.currentTimeMillis)
          // A minute before it expires; for short-lived tokens, halfway.
          yield* Effect.sleep(Duration.millis(Math.max(remaining - Duration.toMillis(REFRESH_MARGIN), remaining / 2, 0)))
        }
      })
    }

    // Runs after the fiber below is interrupted (finalizers run in reverse order): nothing connects again.
    yield* Effect.addFinalizer(() => disconnect)
    yield* store.changes.pipe(
      Stream.map(targetOf),
      Stream.changesWith(sameTarget),
      Stream.flatMap((target) => Stream.fromEffect(serve(target)), { switch: true }),
      Stream.runDrain,
      Effect.withSpan("Mcp.tamboServer"),
      Effect.forkScoped
    )
  })
