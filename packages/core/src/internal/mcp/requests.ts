/**
 * Requests to a connected server: tool calls (the model's, through the
 * registry, and the application's, through `McpConnection.client`) and
 * listings. A request that finds the server gone reports it (`dropped`), so
 * that the connection is withdrawn and reconnected.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { isRecord } from "effect/Predicate"
import type { McpClientHandle, McpHandlers, McpProgress, McpToolProgress, McpToolSpec } from "../../Mcp.js"
import { McpError, ToolCallError } from "../../TamboError.js"
import type * as Tool from "../../Tool.js"
import { describeError } from "../toolSupport.js"
import type * as McpClient from "./client.js"
import { type Entry, type Env, isCurrent, publish } from "./env.js"
import * as Support from "./support.js"

/**
 * What to do when a request finds its session's server gone.
 *
 * @internal
 * @since 0.2.0
 * @category Models
 */
export type Dropped = (entry: Entry, session: McpClient.Session, error: McpError) => Effect.Effect<void>

/**
 * @internal
 * @since 0.2.0
 * @category Constructors
 */
export const make = (env: Env, dropped: Dropped, disconnect: (entry: Entry) => Effect.Effect<void>) => {
  const disconnected = (entry: Entry, message: string) =>
    new McpError({ reason: "Disconnected", message, serverKey: entry.serverKey })

  /** Sends on `session` while it is the entry's; fails with the SDK's error as it is. */
  const sendOn = <A>(
    entry: Entry,
    session: McpClient.Session,
    send: (signal: AbortSignal) => Promise<A>
  ): Effect.Effect<A, unknown> =>
    Effect.suspend(() =>
      isCurrent(env, entry) && entry.session === session
        ? Effect.tryPromise({ try: send, catch: (error) => error })
        : Effect.fail(
          new McpError({
            reason: "NotConnected",
            message: `The MCP server "${entry.serverKey}" is no longer connected`,
            serverKey: entry.serverKey
          })
        )
    )

  /** A failed request as an `McpError`; a server found gone is reported to `dropped`. */
  const failure = (entry: Entry, session: McpClient.Session, what: string) => (error: unknown): Effect.Effect<never, McpError> => {
    if (error instanceof McpError) return Effect.fail(error)
    if (session.isDisconnection(error)) {
      const failure = disconnected(entry, `The MCP server "${entry.serverKey}" is unreachable: ${describeError(error)}`)
      return Effect.zipRight(dropped(entry, session, failure), Effect.fail(failure))
    }
    return Effect.fail(
      new McpError({
        reason: "CallFailed",
        message: `${what} failed on MCP server "${entry.serverKey}": ${describeError(error)}`,
        serverKey: entry.serverKey
      })
    )
  }

  /**
   * A request to the server on `session`, failing with an `McpError`:
   * `NotConnected` when the session is no longer the entry's, `Disconnected`
   * when the server is gone (reported to `dropped`), `CallFailed` otherwise.
   */
  const request = <A>(
    entry: Entry,
    session: McpClient.Session,
    what: string,
    send: (signal: AbortSignal) => Promise<A>
  ): Effect.Effect<A, McpError> => Effect.catchAll(sendOn(entry, session, send), failure(entry, session, what))

  /**
   * The session that replaces `old` once the entry is connected again, within the request
   * timeout; `Disconnected` when it is disconnected or fails for good first.
   */
  const nextSession = (entry: Entry, old: McpClient.Session): Effect.Effect<McpClient.Session, McpError> =>
    env.connections.changes.pipe(
      Stream.filterMap((): Option.Option<Either.Either<McpClient.Session, McpError>> => {
        if (!isCurrent(env, entry)) {
          return Option.some(Either.left(disconnected(entry, `MCP server "${entry.serverKey}" was disconnected`)))
        }
        if (entry.status === "failed") {
          return Option.some(Either.left(disconnected(
            entry,
            `The MCP server "${entry.serverKey}" forgot the session and could not be reconnected` +
              (entry.error === undefined ? "" : `: ${entry.error.message}`)
          )))
        }
        const session = entry.session
        return entry.status === "connected" && session !== undefined && session !== old
          ? Option.some(Either.right(session))
          : Option.none()
      }),
      Stream.runHead,
      Effect.flatMap(Option.match({
        // The changes end only with the service.
        onNone: () => Effect.fail(disconnected(entry, `MCP server "${entry.serverKey}" was disconnected`)),
        onSome: (next) => next
      })),
      Effect.timeoutFail({
        duration: env.requestTimeout,
        onTimeout: () =>
          disconnected(
            entry,
            `The MCP server "${entry.serverKey}" forgot the session and was not reconnected within ${Duration.format(env.requestTimeout)}`
          )
      })
    )

  /**
   * `request`, sent once more on the next session when the server answers 404 to the session's
   * id: it forgot the session (it restarted) and did not take the request, so the request waits
   * for the reconnection (MCP's Streamable HTTP session management). Only once: a second 404 is
   * `Disconnected`, as is any other way the server is gone (a request it may have taken). Over
   * HTTP+SSE nothing is sent again: that transport has no such answer (see
   * `Session.isSessionForgotten`), its 404 is a drop.
   */
  const requestResent = <A>(
    entry: Entry,
    session: McpClient.Session,
    what: string,
    send: (session: McpClient.Session, signal: AbortSignal) => Promise<A>
  ): Effect.Effect<A, McpError> =>
    sendOn(entry, session, (signal) => send(session, signal)).pipe(
      Effect.catchAll((error) =>
        error instanceof McpError || !session.isSessionForgotten(error)
          ? failure(entry, session, what)(error)
          : Effect.zipRight(
            dropped(
              entry,
              session,
              disconnected(entry, `The MCP server "${entry.serverKey}" forgot the session: ${describeError(error)}`)
            ),
            Effect.flatMap(nextSession(entry, session), (next) => request(entry, next, what, (signal) => send(next, signal)))
          )
      )
    )

  /**
   * `bounded`: by `MakeOptions.requestTimeout`; the model's calls are bounded by the executor's
   * timeout instead. With `onProgress`, the server is asked to tell its progress; `meta` is sent
   * as the request's `_meta`.
   */
  const callTool = (
    entry: Entry,
    session: McpClient.Session,
    name: string,
    args: Readonly<Record<string, unknown>>,
    bounded: boolean,
    onProgress?: (progress: McpProgress) => void,
    meta?: Readonly<Record<string, unknown>>
  ) =>
    requestResent(
      entry,
      session,
      `The tool "${name}"`,
      (session, signal) => session.callTool(name, args, signal, bounded, onProgress, meta)
    )

  /** The tools of the server on `session` (all pages). */
  const listTools = (entry: Entry, session: McpClient.Session) =>
    request(entry, session, "Listing the tools", session.listTools)

  /**
   * A call of the model, through the registry: an MCP error (an `isError`
   * result, a failed or unreachable server) is a `ToolCallError`, which
   * the executor sends back as an error result. The progress the server
   * tells of goes to `toolProgress`, with the call's id.
   */
  const callForModel = (
    entry: Entry,
    spec: McpToolSpec,
    registeredName: string,
    args: unknown,
    toolCallId: string
  ): Effect.Effect<ReadonlyArray<Tool.ToolResultPart>, Tool.ToolCallError> =>
    Effect.gen(function*() {
      const session = entry.session
      if (session === undefined || entry.status !== "connected") {
        return yield* Effect.fail(
          new ToolCallError({
            reason: "Failed",
            message: `The MCP server "${entry.serverKey}" of tool "${registeredName}" is not connected.`,
            toolName: registeredName
          })
        )
      }
      const bounds = entry.toolBounds
      // With a server timeout, each progress notice also restarts it.
      const ticks = bounds === undefined ? undefined : yield* Queue.sliding<void>(1)
      let latest: McpToolProgress | undefined
      const onProgress = (progress: McpProgress) => {
        const notice: McpToolProgress = latest = {
          key: entry.key,
          serverKey: entry.serverKey,
          tool: spec.name,
          registeredName,
          toolCallId,
          ...progress
        }
        env.callsInProgress.set(toolCallId, notice)
        env.toolProgress.unsafeOffer(notice)
        ticks?.unsafeOffer(undefined)
      }
      const call = callTool(entry, session, spec.name, isRecord(args) ? args : {}, false, onProgress).pipe(
        Effect.mapError((error) =>
          new ToolCallError({ reason: "Failed", message: error.message, toolName: registeredName })
        )
      )
      const result = yield* (bounds === undefined || ticks === undefined
        ? call
        : withinBounds(call, ticks, bounds, registeredName)).pipe(
          // A later call under the same id keeps its own.
          Effect.ensuring(Effect.sync(() => {
            if (latest !== undefined && env.callsInProgress.get(toolCallId) === latest) env.callsInProgress.delete(toolCallId)
          }))
        )
      if (result.isError === true) {
        yield* Effect.annotateCurrentSpan("mcp.is_error", true)
        return yield* Effect.fail(
          new ToolCallError({
            reason: "Failed",
            message: Support.errorText(result),
            toolName: registeredName
          })
        )
      }
      return Support.resultParts(result)
    }).pipe(
      Effect.withSpan("Mcp.callTool", {
        attributes: { "mcp.server": entry.serverKey, "tool.name": registeredName, "mcp.tool": spec.name }
      })
    )

  /**
   * The model's call of a tool of a server with `toolTimeout`: cut when the server says nothing
   * (no progress notice on `ticks`, no answer) for `idle`, or when it took `max` in all.
   */
  const withinBounds = <A>(
    call: Effect.Effect<A, ToolCallError>,
    ticks: Queue.Dequeue<void>,
    bounds: Support.ToolBounds,
    registeredName: string
  ): Effect.Effect<A, ToolCallError> => {
    const timedOut = (message: string) => new ToolCallError({ reason: "Timeout", message, toolName: registeredName })
    const silence = Stream.fromQueue(ticks).pipe(
      Stream.timeoutFail(
        () =>
          timedOut(
            `Tool "${registeredName}" said nothing for ${Duration.format(bounds.idle)} (no answer, no progress) and was stopped.`
          ),
        bounds.idle
      ),
      Stream.runDrain,
      Effect.zipRight(Effect.never)
    )
    return Effect.raceFirst(call, silence).pipe(
      Effect.timeoutFail({
        duration: bounds.max,
        onTimeout: () => timedOut(`Tool "${registeredName}" did not finish within ${Duration.format(bounds.max)} and was stopped.`)
      })
    )
  }

  /** The application's `onProgress`, whose throw is logged: the call goes on. */
  const appCallback = (
    entry: Entry,
    name: string,
    onProgress: ((progress: McpProgress) => void) | undefined
  ) =>
    onProgress === undefined ? undefined : (progress: McpProgress) => {
      try {
        onProgress(progress)
      } catch (error) {
        env.runFork(Effect.logWarning(
          `The onProgress of a call of tool "${name}" on MCP server "${entry.serverKey}" threw: ${describeError(error)}`
        ))
      }
    }

  /**
   * Replaces the entry's handlers, under the lock, while `session` is still the entry's: a handle
   * kept from an earlier session (the server disconnected and connected again, or reconnected)
   * fails as its calls do, and leaves the handlers of the later one as they are.
   */
  const updateHandlersOn = (
    entry: Entry,
    session: McpClient.Session,
    update: (handlers: Partial<McpHandlers>) => Partial<McpHandlers>
  ): Effect.Effect<void, McpError> =>
    env.locked(Effect.suspend(() => {
      if (!isCurrent(env, entry) || entry.session !== session) {
        return Effect.fail(
          new McpError({
            reason: "NotConnected",
            message: `The MCP server "${entry.serverKey}" is no longer connected on this session: its handlers are left as they are`,
            serverKey: entry.serverKey
          })
        )
      }
      entry.server = { ...entry.server, handlers: update(entry.server.handlers ?? {}) }
      return publish(env)
    }))

  /** The application's direct access to the server on `session`. */
  const handleOf = (entry: Entry, session: McpClient.Session): McpClientHandle => ({
    callTool: (name, args = {}, options) =>
      callTool(entry, session, name, args, true, appCallback(entry, name, options?.onProgress), options?.meta).pipe(
        Effect.withSpan("Mcp.callTool", { attributes: { "mcp.server": entry.serverKey, "mcp.tool": name } })
      ),
    listTools: requestResent(entry, session, "Listing the tools", (session, signal) => session.listTools(signal)),
    updateHandlers: (update) => updateHandlersOn(entry, session, update),
    disconnect: disconnect(entry)
  })

  return { request, requestResent, listTools, callForModel, handleOf }
}

/**
 * @internal
 * @since 0.2.0
 * @category Models
 */
export type Requests = ReturnType<typeof make>
