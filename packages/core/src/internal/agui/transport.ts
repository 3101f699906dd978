/**
 * One AG-UI run over HTTP: POST a `RunAgentInput` to the agent's URL and
 * decode its Server-Sent Events with the same chunk-level decoder as Tambo's
 * runs (`TamboTransport.decodeSse`, over `internal/transport/sse.ts`): a `Stream` of
 * schema-decoded events, one output chunk per network read.
 *
 * - 4xx / 5xx: `ApiError` (status, the body's message), as for the Tambo API;
 * - no connection: `TransportError` (`Connect`); a redirect is not followed
 *   (the headers may carry the app's credentials): `TransportError`
 *   (`Redirect`);
 * - a 429 / 502 / 503 / 504 or a connection that failed before the request
 *   went out (refused, no such host) is sent again with the Tambo
 *   transport's policy (`internal/http/retryPolicy.ts`: backoff, the
 *   answer's `Retry-After` up to `maxRetryAfter`, at most `maxRetries`
 *   times), never once the body is being read;
 * - a connection that broke once the request went out (reset, closed), or no
 *   answer within `firstByteTimeout`: the agent may have taken the request
 *   and started its run, so it is not sent again: `TransportError` with
 *   `mayHaveReachedServer: true`;
 * - a 2xx that says it is JSON or HTML, not an event stream: `DecodeError`
 *   (`InvalidResponse`), with how it begins;
 * - a body that breaks or ends before `RUN_FINISHED` / `RUN_ERROR`:
 *   `TransportError` (`Disconnected`); no answer, or no first event, within
 *   `firstByteTimeout` of the last attempt's start, or a read that waits
 *   longer than `idleTimeout`: `TransportError` (`Timeout`); the first
 *   attempt's deadline counts from before `headers` are read, and headers
 *   still unread at it fail with a `CallbackError` (`Headers`);
 * - `RUN_ERROR`: the event is emitted, then the stream fails with `ApiError`
 *   (`RunError`) carrying the agent's message and code;
 * - `TEXT_MESSAGE_CHUNK`, `TOOL_CALL_CHUNK` and `REASONING_MESSAGE_CHUNK` are
 *   expanded into start / content / end events as `@ag-ui/client` does
 *   (`chunks.ts`);
 * - `RUN_FINISHED` ends the stream: nothing after it is read;
 * - interrupting the stream (or ending it early) aborts the request.
 *
 * @since 0.2.0
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as Events from "../../Events.js"
import {
  ApiError,
  CallbackError,
  type DecodeError,
  type RunConflictError,
  TransportError
} from "../../TamboError.js"
import { decodeSse, type RunStreamEvent } from "../../TamboTransport.js"
import { errorFromStatus } from "../http/apiError.js"
import { displayUrl } from "../http/connectionFailure.js"
import { parseRetryAfter } from "../http/retryAfter.js"
import { isRetryable, retrySchedule, withinRetryAfter } from "../http/retryPolicy.js"
import { disconnected } from "../transport/runBody.js"
import { runConnectError } from "../transport/runRequest.js"
import { notAnEventStream } from "../transport/runStream.js"
import { expandChunks } from "./chunks.js"
import { type AgentHeaders, resolveHeaders } from "./headers.js"
import type * as Wire from "./wire.js"

/**
 * One run request.
 *
 * @since 0.2.0
 * @category Models
 */
export interface AgUiRunRequest {
  /** The agent's endpoint. */
  readonly url: string
  /**
   * Sent with the request (credentials, for instance); `content-type` and
   * `accept` are set. An Effect or a function is run once per request, before
   * its first attempt.
   */
  readonly headers?: AgentHeaders | undefined
  readonly input: Wire.RunAgentInput
  /** The largest event, in characters of its data; a larger one fails the stream. Default 16 MiB. */
  readonly maxFrameBytes?: number | undefined
  /**
   * How long to wait for the response's status and headers, and for its first event, counted
   * from the request's start: reading `headers` is part of it (one that does not settle in time
   * fails with a `CallbackError` (`Headers`)); a retry counts anew from its own start. Default 60 s.
   */
  readonly firstByteTimeout?: Duration.DurationInput | undefined
  /** How long any read of the body after its first event may wait (until then, `firstByteTimeout` applies). Default 120 s. */
  readonly idleTimeout?: Duration.DurationInput | undefined
  /** How many times a 429/502/503/504 or a connection that failed before the request went out is sent again. Default 2. */
  readonly maxRetries?: number | undefined
  /** The longest `Retry-After` waited for; an answer asking for more is not retried. Default 60 s. */
  readonly maxRetryAfter?: Duration.DurationInput | undefined
}

/**
 * What a run's stream fails with.
 *
 * @since 0.2.0
 * @category Models
 */
export type AgUiRunError = ApiError | RunConflictError | TransportError | DecodeError | CallbackError

const isTerminal = (event: RunStreamEvent): event is Events.RunFinishedEvent | Events.RunErrorEvent =>
  event.type === "RUN_FINISHED" || event.type === "RUN_ERROR"

/**
 * The response when it opens the run's stream (2xx); a redirect, which is not followed (a status
 * 0 is what a manual redirect looks like to fetch), or an error status as its typed failure.
 */
const checkStatus = (
  response: HttpClientResponse.HttpClientResponse,
  shownUrl: string
): Effect.Effect<HttpClientResponse.HttpClientResponse, TransportError | ApiError | RunConflictError> =>
  Effect.gen(function*() {
    if ((response.status >= 300 && response.status < 400) || response.status === 0) {
      return yield* new TransportError({
        reason: "Redirect",
        message: `The agent at ${shownUrl} answered with a redirect (${response.status}), which is not followed`,
        method: "POST",
        url: shownUrl,
        status: response.status
      })
    }
    if (response.status < 200 || response.status >= 300) {
      const body = yield* response.json.pipe(Effect.orElse(() => response.text), Effect.orElseSucceed(() => undefined))
      const now = yield* Clock.currentTimeMillis
      return yield* errorFromStatus(response.status, body, {
        method: "POST",
        url: shownUrl,
        retryAfter: parseRetryAfter(response.headers["retry-after"], now)
      })
    }
    return response
  })

/**
 * What the stream ends with once its events are read: nothing after `RUN_FINISHED`, the agent's
 * `RUN_ERROR` as an `ApiError` (`RunError`), and a `TransportError` (`Disconnected`) when the
 * body ended before either.
 */
const endingOf = (
  terminal: Events.RunFinishedEvent | Events.RunErrorEvent | undefined,
  shownUrl: string
): Stream.Stream<never, TransportError | ApiError> => {
  if (terminal === undefined) {
    return Stream.fail(
      new TransportError({
        reason: "Disconnected",
        message: `The agent's stream from ${shownUrl} ended before RUN_FINISHED or RUN_ERROR`,
        method: "POST",
        url: shownUrl
      })
    )
  }
  if (terminal.type === "RUN_FINISHED") return Stream.empty
  return Stream.fail(
    new ApiError({
      reason: "RunError",
      message: terminal.message,
      ...(terminal.code === undefined ? {} : { code: terminal.code }),
      ...(terminal.status === undefined ? {} : { status: terminal.status }),
      ...(terminal.category === "client_error" || terminal.category === "server_error"
        ? { category: terminal.category }
        : {}),
      retryable: terminal.isRetryable ?? false,
      method: "POST",
      url: shownUrl
    })
  )
}

/**
 * Runs the agent once: its events, in order, up to `RUN_FINISHED` (see the
 * module's notes for how each failure is typed).
 *
 * @since 0.2.0
 * @category Constructors
 */
export const runAgent = (
  request: AgUiRunRequest
): Stream.Stream<RunStreamEvent, AgUiRunError, HttpClient.HttpClient> => {
  const url = request.url
  const shownUrl = displayUrl(url)
  const firstByteTimeout = Duration.decode(request.firstByteTimeout ?? Duration.seconds(60))
  const idleTimeout = Duration.decode(request.idleTimeout ?? Duration.seconds(120))
  const maxRetries = request.maxRetries ?? 2
  const maxRetryAfter = Duration.decode(request.maxRetryAfter ?? Duration.seconds(60))
  const timedOut = (message: string) => new TransportError({ reason: "Timeout", message, method: "POST", url: shownUrl })
  const broke = (error: { readonly message: string }) => disconnected(error, url)

  // A retry is sent only before any byte of the body was read: the status decides. A timeout
  // of our own is not retried (the agent may have started the run).
  const firstByteTimedOut = (what: string) =>
    new TransportError({
      reason: "Timeout",
      message: `No ${what} within firstByteTimeout (${Duration.toMillis(firstByteTimeout)} ms) from ${shownUrl}`,
      method: "POST",
      url: shownUrl,
      mayHaveReachedServer: true
    })
  const schedule = retrySchedule(maxRetries)
  const inBounds = withinRetryAfter(maxRetryAfter)
  const retryable = (error: AgUiRunError) => isRetryable(error) && inBounds(error)

  const open = Effect.gen(function*() {
    // Scoped: closing the stream's scope aborts the request.
    const client = HttpClient.withScope(yield* HttpClient.HttpClient)
    const init = yield* Effect.serviceOption(FetchHttpClient.RequestInit)
    // The first attempt's deadline runs from here: the app's headers may never settle.
    let deadline = (yield* Clock.currentTimeMillis) + Duration.toMillis(firstByteTimeout)
    const headers = yield* resolveHeaders(request.headers).pipe(
      Effect.timeoutFail({
        duration: firstByteTimeout,
        onTimeout: () =>
          new CallbackError({
            reason: "Headers",
            message: `The agent's headers were not read within firstByteTimeout (${Duration.toMillis(firstByteTimeout)} ms)`
          })
      })
    )
    const post = HttpClientRequest.post(url).pipe(
      HttpClientRequest.setHeaders({ ...headers, accept: "text/event-stream" }),
      HttpClientRequest.bodyUnsafeJson(request.input)
    )
    // The first event is due within firstByteTimeout of the last attempt's start (the first
    // attempt's counts from before the headers were read).
    let attempts = 0
    const attempt = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      if (attempts++ > 0) deadline = now + Duration.toMillis(firstByteTimeout)
      return yield* client.execute(post).pipe(
        // Redirects are ours to refuse: fetch would follow them with the app's headers.
        Effect.provideService(FetchHttpClient.RequestInit, { ...Option.getOrUndefined(init), redirect: "manual" }),
        Effect.mapError((error) => runConnectError(error, url)),
        // An error's body is read within the deadline too: it may never end.
        Effect.flatMap((response) => checkStatus(response, shownUrl)),
        Effect.timeoutFail({ duration: Math.max(0, deadline - now), onTimeout: () => firstByteTimedOut("response") })
      )
    })
    const response = yield* Effect.retry(attempt, { schedule, while: retryable })
    const refused = notAnEventStream(response, shownUrl)
    if (refused !== undefined) return yield* refused
    let terminal: Events.RunFinishedEvent | Events.RunErrorEvent | undefined
    // Until the first event, reads wait for the first-byte deadline alone (below); then each has idleTimeout.
    let sawEvent = false
    const pullBytes = yield* Stream.toPull(Stream.mapError(response.stream, broke))
    const idleRead = pullBytes.pipe(Effect.timeoutFail({
      duration: idleTimeout,
      onTimeout: () =>
        Option.some(
          timedOut(`The agent's stream got nothing for idleTimeout (${Duration.toMillis(idleTimeout)} ms) from ${shownUrl}`)
        )
    }))
    const bytes = Stream.repeatEffectChunkOption(Effect.suspend(() => sawEvent ? idleRead : pullBytes))
    // The first event is due within what is left of firstByteTimeout (headers and then nothing,
    // or only comments, is no answer); after it, each read within idleTimeout.
    const pull = yield* Stream.toPull(expandChunks(decodeSse(bytes, { maxFrameBytes: request.maxFrameBytes })))
    const left = deadline - (yield* Clock.currentTimeMillis)
    const first = yield* pull.pipe(
      Effect.timeoutFail({
        duration: Math.max(0, left),
        onTimeout: (): Option.Option<TransportError | DecodeError> => Option.some(firstByteTimedOut("event"))
      }),
      Effect.catchAll(Option.match({
        onNone: () => Effect.succeed(Chunk.empty<RunStreamEvent>()),
        onSome: (error) => Effect.fail(error)
      }))
    )
    sawEvent = true
    const events = Stream.concat(Stream.fromChunk(first), Stream.repeatEffectChunkOption(pull)).pipe(
      // The run settles at its terminal event, not at the connection's end.
      Stream.takeUntil((event) => {
        if (!isTerminal(event)) return false
        terminal = event
        return true
      })
    )
    return Stream.concat(events, Stream.suspend(() => endingOf(terminal, shownUrl)))
  })
  // The request lives in the stream's scope: closing it (interruption, an early end) aborts it.
  return Stream.unwrapScoped(open)
}
