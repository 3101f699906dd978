/**
 * The servers' log messages: the level each server is asked to log at (kept
 * per connection, sent again on each session) and the messages they send,
 * published to `Mcp.Service.logs`.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { McpLogLevel } from "../../Mcp.js"
import { McpError } from "../../TamboError.js"
import { describeError } from "../toolSupport.js"
import type * as McpClient from "./client.js"
import { type Entry, type Env, publish } from "./env.js"
import type { Requests } from "./requests.js"

/** How long a new session's server is waited for to take the log level before the connection goes on. */
const LEVEL_WAIT = Duration.seconds(2)

/**
 * @internal
 * @since 0.2.0
 * @category Constructors
 */
export const make = (env: Env, { request, requestResent }: Pick<Requests, "request" | "requestResent">) => {
  /**
   * Asks the server of `session` for `level`; nothing for a server that does not offer logging.
   * Two asks at once may reach the server in either order: once one is answered, a level set
   * since (the entry's now) is asked for again, so the server ends at the last one.
   */
  const send = (entry: Entry, session: McpClient.Session, level: McpLogLevel): Effect.Effect<void, McpError> =>
    session.offersLogging
      ? request(entry, session, `Setting the log level to "${level}"`, (signal) => session.setLoggingLevel(level, signal))
        .pipe(
          Effect.zipRight(Effect.suspend(() => {
            const latest = entry.logLevel
            return latest !== undefined && latest !== level && entry.session === session
              ? send(entry, session, latest)
              : Effect.void
          }))
        )
      : Effect.void

  /**
   * `send` for the application, which waits for its answer: a server that forgot the session is
   * asked once more on the next one (`Requests.requestResent`), as the application's other
   * requests are; a level set since is then asked for by that session's opening.
   */
  const sendResent = (entry: Entry, session: McpClient.Session, level: McpLogLevel): Effect.Effect<void, McpError> =>
    Effect.suspend(() => {
      if (!session.offersLogging) return Effect.void
      let sentOn = session
      return requestResent(entry, session, `Setting the log level to "${level}"`, (next, signal) => {
        sentOn = next
        return next.setLoggingLevel(level, signal)
      }).pipe(
        // As `send`: a level set since, on the session this one reached.
        Effect.zipRight(Effect.suspend(() => {
          const latest = entry.logLevel
          return latest !== undefined && latest !== level && entry.session === sentOn ? send(entry, sentOn, latest) : Effect.void
        }))
      )
    })

  /** `send`, where a refusal is logged: the connection goes on at the server's own level. */
  const sendQuietly = (entry: Entry, session: McpClient.Session, level: McpLogLevel): Effect.Effect<void> =>
    send(entry, session, level).pipe(Effect.catchAll((error) => Effect.logWarning(error.message)))

  /**
   * Keeps a new level for the entry and shows it; when it is connected, the
   * server is told in the background (this runs under the service's lock).
   */
  const apply = (entry: Entry, level: McpLogLevel): Effect.Effect<void> =>
    Effect.suspend(() => {
      entry.logLevel = level
      const session = entry.session
      if (session !== undefined && entry.status === "connected") env.runFork(sendQuietly(entry, session, level))
      return publish(env)
    })

  /**
   * A session was made the entry's: its server is asked for the entry's level, unless the attempt
   * that opened the session already asked for that one.
   */
  const installed = (entry: Entry, session: McpClient.Session, sent: McpLogLevel | undefined): Effect.Effect<void> =>
    Effect.sync(() => {
      const level = entry.logLevel
      if (level !== undefined && level !== sent) env.runFork(sendQuietly(entry, session, level))
    })

  /**
   * Asks a new session's server for the entry's level before the session is
   * the entry's (so that `request`, which only serves the entry's session,
   * does not apply), so that the connection is handed out logging at it;
   * the level sent, if any. A server that does not answer within
   * `LEVEL_WAIT` is asked again once the session is installed, in the
   * background: it does not hold up or fail the connection.
   */
  const opened = (entry: Entry, session: McpClient.Session): Effect.Effect<McpLogLevel | undefined> => {
    const level = entry.logLevel
    if (level === undefined || !session.offersLogging) return Effect.succeed(level)
    return Effect.tryPromise((signal) => session.setLoggingLevel(level, signal)).pipe(
      Effect.as<McpLogLevel | undefined>(level),
      Effect.timeout(LEVEL_WAIT),
      Effect.catchTag("TimeoutException", () => Effect.succeed(undefined)),
      Effect.catchAll((error) =>
        Effect.as(
          Effect.logWarning(
            `Setting the log level of MCP server "${entry.serverKey}" to "${level}" failed: ${describeError(error.error)}`
          ),
          level
        )
      )
    )
  }

  const setMcpLogLevel = (serverKey: string, level: McpLogLevel): Effect.Effect<void, McpError> =>
    env.locked(Effect.suspend(() => {
      const entry = Array.from(env.entries.values()).find((candidate) => candidate.serverKey === serverKey)
      if (entry === undefined || entry.status === "failed") return Effect.succeed(undefined)
      entry.logLevel = level
      // Connecting or reconnecting: the next session's server is asked for it.
      return Effect.as(publish(env), { entry, session: entry.status === "connected" ? entry.session : undefined })
    })).pipe(
      Effect.flatMap((found) =>
        found === undefined
          ? Effect.fail(
            new McpError({
              reason: "NotConnected",
              message: `No MCP server with the key "${serverKey}" is connected`,
              serverKey
            })
          )
          : found.session === undefined
          ? Effect.void
          : sendResent(found.entry, found.session, level)
      ),
      Effect.withSpan("Mcp.setLogLevel", { attributes: { "mcp.server": serverKey, "mcp.log_level": level } })
    )

  /** What the MCP client calls with each of the server's log messages. */
  const onLog = (entry: Entry) => (message: { readonly level: McpLogLevel; readonly logger?: string; readonly data: unknown }) => {
    env.logs.unsafeOffer({ key: entry.key, serverKey: entry.serverKey, ...message })
  }

  return { apply, installed, opened, setMcpLogLevel, onLog }
}

/**
 * @internal
 * @since 0.2.0
 * @category Models
 */
export type Logging = ReturnType<typeof make>
