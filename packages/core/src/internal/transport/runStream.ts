/**
 * A run request's stream: the request opened (runRequest.ts: redirects,
 * retries before the first event, the first-byte timeout), then its SSE body
 * decoded into run events as each network read arrives (runBody.ts,
 * eventDecoder.ts), within the first-byte, idle and linger timeouts. The
 * caller's hooks get the ids in the response headers and the request's
 * abort.
 *
 * @internal
 */
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Channel from "effect/Channel"
import type * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Resolved } from "../../TamboConfig.js"
import { DecodeError, type TamboError, TransportError } from "../../TamboError.js"
import type { RunHooks, RunStreamEvent } from "../../TamboTransport.js"
import { decodeSse } from "./eventDecoder.js"
import { decodeSseBody, disconnected, readTimeouts, type ReadTimeouts, webBodyOf } from "./runBody.js"
import { type Deps, opening, targetOf } from "./runRequest.js"

export type { Deps } from "./runRequest.js"
export { decodeSse } from "./eventDecoder.js"

type EventChannel = Channel.Channel<Chunk.Chunk<RunStreamEvent>, unknown, TamboError, unknown, unknown, unknown>

/**
 * The events of an opened response's body, each read bounded by `timeouts`; `end` is called once
 * the body has ended, and `release` set to what lets go of its reader.
 */
const bodyEvents = (
  config: Resolved,
  response: HttpClientResponse.HttpClientResponse,
  timeouts: ReadTimeouts,
  broke: (error: { readonly message: string }) => TransportError,
  end: () => void,
  setRelease: (release: Effect.Effect<void>) => void
): EventChannel => {
  const body = webBodyOf(response)
  if (body === undefined) {
    // Any other HttpClient: each read is bounded by the idle timeout.
    const bytes = response.stream.pipe(
      Stream.mapError(broke),
      Stream.timeoutFail(timeouts.idleTimeout, config.idleTimeout)
    )
    return Stream.toChannel(decodeSse(bytes, config.maxFrameBytes).pipe(Stream.onEnd(Effect.sync(end))))
  }
  const decoded = decodeSseBody(
    body,
    (cause) => broke(cause instanceof Error ? cause : { message: String(cause) }),
    end,
    config.maxFrameBytes,
    timeouts
  )
  setRelease(decoded.release)
  return Stream.toChannel(decoded.events)
}

/**
 * A successful answer that says it is JSON or HTML is no event stream: a gateway's error, or a
 * `tamboUrl` that is not the API. It fails with what it is and how it begins, rather than as a
 * stream that ended before RUN_FINISHED. Shared with the AG-UI transport. @internal
 */
export const notAnEventStream = (
  response: HttpClientResponse.HttpClientResponse,
  shownUrl: string
): Effect.Effect<never, DecodeError> | undefined => {
  const type = (response.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
  if (type !== "application/json" && !type.endsWith("+json") && type !== "text/html") return undefined
  return Effect.flatMap(
    // How it begins, if it comes soon: the answer may never end.
    Effect.option(Effect.timeout(response.text, EXCERPT_WAIT)),
    (text) => {
      const begins = text._tag === "Some" && text.value.trim().length > 0
        ? `, which begins ${JSON.stringify(text.value.trim().slice(0, EXCERPT_LENGTH))}`
        : ""
      return new DecodeError({
        reason: "InvalidResponse",
        message: `The run's answer from ${shownUrl} is not an event stream: status ${response.status}, ${type}${begins}`
      })
    }
  )
}

const EXCERPT_WAIT = Duration.seconds(1)
const EXCERPT_LENGTH = 200

/** The error of a run request its caller aborted before the response came. */
const abortedBeforeAnswer = (shownUrl: string): TransportError =>
  new TransportError({
    reason: "Disconnected",
    message: `The run's request to ${shownUrl} was aborted before its answer`,
    method: "POST",
    url: shownUrl
  })

/** A run request (`POST` to `path`), as its stream of events. @internal */
export const openRun = (
  deps: Deps,
  headers: Record<string, string>,
  path: string,
  body: Record<string, unknown>,
  threadId: string | undefined,
  hooks: RunHooks | undefined
): Stream.Stream<RunStreamEvent, TamboError> => {
  const { config } = deps
  const target = targetOf(config, path)
  const request = opening(deps, target, headers, body, threadId, hooks)
  const timeouts = readTimeouts(config.idleTimeout, target.shownUrl, request, hooks?.finished)
  const broke = (error: { readonly message: string }) => disconnected(error, target.url)
  // The request lives in a scope of its own, which closing aborts (HttpClient.withScope):
  // the stream closes it with its exit, and the caller may close it sooner (registerAbort).
  // A body read to its end has nothing left to abort: its scope, whose finalizers would
  // only abort the finished request (which builds an error object and signals the fetch's
  // own controller) and let go of an ended reader, is dropped unclosed (scratchpad/bench/NOTES.md).
  return Stream.fromChannel(Channel.unwrap(Effect.map(Scope.make(), (requestScope) => {
    let ended = false
    const end = () => {
      ended = true
    }
    return Channel.ensuringWith(
      Channel.unwrap(Effect.gen(function* () {
        let opening: Effect.Effect<HttpClientResponse.HttpClientResponse, TamboError, Scope.Scope> = request.open
        if (hooks?.registerAbort !== undefined) {
          // An abort while the request is opened ends the opening too: a retry's wait, or the
          // retry of the aborted attempt, would keep the stream going.
          const aborted = yield* Deferred.make<never, TamboError>()
          yield* hooks.registerAbort(
            Effect.zipRight(Deferred.fail(aborted, abortedBeforeAnswer(target.shownUrl)), Scope.close(requestScope, Exit.void))
          )
          opening = request.openUntil(aborted)
        }
        // The body's reader is let go after the request is aborted (finalizers run last added,
        // first run): a read waiting for bytes fails as the connection's end, not as a body's.
        let release: Effect.Effect<void> = Effect.void
        yield* Scope.addFinalizer(requestScope, Effect.suspend(() => release))
        // The request in its own scope, with the step's span as its parent.
        const span = hooks?.span
        const scoped = Scope.extend(opening, requestScope)
        const response = yield* (span === undefined ? scoped : Effect.withParentSpan(scoped, span))
        const refused = notAnEventStream(response, target.shownUrl)
        if (refused !== undefined) return yield* refused
        return bodyEvents(config, response, timeouts, broke, end, (r) => {
          release = r
        })
      })),
      (exit) =>
        ended
          ? Effect.void
          : hooks?.beforeAbort === undefined
          ? Scope.close(requestScope, exit)
          : Effect.zipRight(hooks.beforeAbort, Scope.close(requestScope, exit))
    )
  })))
}
