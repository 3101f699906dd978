/**
 * A run request's stream: the POST (same-origin 307/308 followed with its
 * body, retried only before its first event), then its SSE body decoded into
 * run events as each network read arrives, within the first-byte, idle and
 * linger timeouts. The caller's hooks get the ids in the response headers and
 * the request's abort.
 *
 * @internal
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Events from "../../Events.js"
import type { Resolved } from "../../TamboConfig.js"
import { DecodeError, type TamboError, TransportError } from "../../TamboError.js"
import type { RunHooks, RunStreamEvent } from "../../TamboTransport.js"
import { errorFromStatus } from "../http/apiError.js"
import { describeConnectionFailure, displayUrl, hasConnectionCode } from "../http/connectionFailure.js"
import { decideRedirect, isRedirect, redirectError } from "../http/redirects.js"
import { parseRetryAfter } from "../http/retryAfter.js"
import { safeCause } from "../http/safeCause.js"
import { makeSseDecoder } from "./sse.js"

/** What run requests share: the configuration, the client and the retry policy. @internal */
export interface Deps {
  readonly config: Resolved
  /** Each request in a scope of its own, which closing aborts (`HttpClient.withScope`). */
  readonly client: HttpClient.HttpClient.With<HttpClientError.HttpClientError, Scope.Scope>
  readonly schedule: Schedule.Schedule<unknown, TamboError>
  /** Whether a failed attempt may be sent again (a REST call's rule; a run adds its own). */
  readonly retryable: (error: TamboError) => boolean
}

/** Runs `effect` with the fetch client (if it is the one) told not to follow redirects. */
const manualRedirects = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(
    Effect.serviceOption(FetchHttpClient.RequestInit),
    (init) => Effect.provideService(effect, FetchHttpClient.RequestInit, { ...Option.getOrUndefined(init), redirect: "manual" })
  )

/** Timeouts of our own: a server that let one pass is not asked again. */
const ownTimeouts = new WeakSet<TamboError>()

/** A run request (`POST` to `path`), as its stream of events. @internal */
export const openRun = (
  deps: Deps,
  headers: Record<string, string>,
  path: string,
  body: Record<string, unknown>,
  threadId: string | undefined,
  hooks: RunHooks | undefined
): Stream.Stream<RunStreamEvent, TamboError> => {
  const { client, config } = deps
  const url = `${config.baseUrl}${path}`
  const shownUrl = displayUrl(url)
  const request = HttpClientRequest.post(url).pipe(
    HttpClientRequest.setHeaders({
      "x-api-key": Redacted.value(config.apiKey),
      accept: "text/event-stream",
      ...headers
    }),
    HttpClientRequest.bodyUnsafeJson(body)
  )
  // The first-byte deadline runs from the last attempt's start; a retry's wait is not in it.
  let openedAt = 0
  const firstByteTimeout = (): TransportError => {
    const error = new TransportError({
      reason: "Timeout",
      message: `No response within firstByteTimeout (${Duration.toMillis(config.firstByteTimeout)} ms) from ${shownUrl}`,
      method: "POST",
      url: shownUrl
    })
    ownTimeouts.add(error)
    return error
  }
  // Sent with redirects left to us (a fetch client would follow them to any origin, and
  // fails a 307 with a body): same-origin 307/308 are sent again, the others refused.
  const send = (
    request: HttpClientRequest.HttpClientRequest,
    hops: number
  ): Effect.Effect<HttpClientResponse.HttpClientResponse, TamboError, Scope.Scope> =>
    manualRedirects(client.execute(request)).pipe(
      Effect.mapError((error) => {
        // The platform's message is only "Transport error (...)": what failed is in its cause.
        if (error._tag !== "RequestError" || error.reason !== "Transport") {
          return new TransportError({ reason: "Connect", message: error.message, method: "POST", url, cause: safeCause(error) })
        }
        const failure = describeConnectionFailure(error, url)
        return new TransportError({ reason: failure.reason, message: failure.message, method: "POST", url: failure.url, cause: safeCause(error) })
      }),
      Effect.flatMap((response) => {
        if (!isRedirect(response.status) && response.status !== 0) return Effect.succeed(response)
        const decision = decideRedirect(response.status, response.headers["location"], request.url, "POST", hops)
        return decision._tag === "Follow"
          ? send(HttpClientRequest.setUrl(request, decision.url), hops + 1)
          : Effect.fail(redirectError(decision, "POST", url))
      })
    )
  const attempt: Effect.Effect<HttpClientResponse.HttpClientResponse, TamboError, Scope.Scope> = Effect.zipRight(
    Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => openedAt = now)),
    send(request, 0).pipe(
      Effect.flatMap((response) =>
        response.status >= 200 && response.status < 300
          ? Effect.sync(() => {
            if (hooks?.onOpen !== undefined) {
              // Each read of `headers` converts the response's headers anew.
              const headers = response.headers
              hooks.onOpen({ threadId: headers["x-thread-id"], runId: headers["x-run-id"] })
            }
            return response
          })
          : response.json.pipe(
            Effect.orElseSucceed(() => undefined),
            Effect.zip(Clock.currentTimeMillis),
            Effect.flatMap(([errorBody, now]) =>
              Effect.fail(errorFromStatus(response.status, errorBody, {
                method: "POST",
                url,
                threadId,
                retryAfter: parseRetryAfter(response.headers["retry-after"], now)
              }))
            )
          )
      ),
      Effect.timeoutFail({ duration: config.firstByteTimeout, onTimeout: firstByteTimeout })
    )
  )
  // A run may be retried only before it produced anything: the status comes first. A server
  // that let our own timeout pass is not asked again (the run may have started there).
  const open = Effect.retry(attempt, {
    schedule: deps.schedule,
    while: (error) => deps.retryable(error) && !ownTimeouts.has(error)
  })
  const timeouts: ReadTimeouts = {
    finished: hooks?.finished,
    firstEventBy: () => openedAt + Duration.toMillis(config.firstByteTimeout),
    firstByte: firstByteTimeout,
    idle: config.idleTimeout,
    idleTimeout: () =>
      new TransportError({
        reason: "Timeout",
        message: `The run's stream got nothing for idleTimeout (${Duration.toMillis(config.idleTimeout)} ms) from ${shownUrl}`,
        method: "POST",
        url: shownUrl
      })
  }
  const broke = (error: { readonly message: string }) =>
    new TransportError({
      reason: "Disconnected",
      // undici says only "terminated"; a system error's code under it says why.
      message: `The run's stream broke: ${
        hasConnectionCode(error) ? describeConnectionFailure(error, url).message : error.message
      }`,
      method: "POST",
      url,
      cause: safeCause(error)
    })
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
        if (hooks?.registerAbort !== undefined) yield* hooks.registerAbort(Scope.close(requestScope, Exit.void))
        // The body's reader is let go after the request is aborted (finalizers run last added,
        // first run): a read waiting for bytes fails as the connection's end, not as a body's.
        let release: Effect.Effect<void> = Effect.void
        yield* Scope.addFinalizer(requestScope, Effect.suspend(() => release))
        // The request in its own scope, with the step's span as its parent.
        const span = hooks?.span
        const scoped = Scope.extend(open, requestScope)
        const response = yield* (span === undefined ? scoped : Effect.withParentSpan(scoped, span))
        const body = webBodyOf(response)
        if (body === undefined) {
          // Any other HttpClient: each read is bounded by the idle timeout.
          const bytes = response.stream.pipe(
            Stream.mapError(broke),
            Stream.timeoutFail(timeouts.idleTimeout, config.idleTimeout)
          )
          return Stream.toChannel(decodeSse(bytes, config.maxFrameBytes).pipe(
            Stream.onEnd(Effect.sync(end))
          ))
        }
        const decoded = decodeSseBody(
          body,
          (cause) => broke(cause instanceof Error ? cause : { message: String(cause) }),
          end,
          config.maxFrameBytes,
          timeouts
        )
        release = decoded.release
        return Stream.toChannel(decoded.events)
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

/**
 * The web `ReadableStream` under a response from a fetch-based `HttpClient`,
 * if it has one: read directly, a run's events are decoded in the same stage
 * that reads the bytes. `@effect/platform`'s fetch client keeps the web
 * `Response` as `source`; that field is not part of the `HttpClientResponse`
 * interface, so it is checked for what it is, and any other response goes
 * through its byte stream.
 */
const webBodyOf = (response: HttpClientResponse.HttpClientResponse): ReadableStream<Uint8Array> | undefined => {
  const source: unknown = (response as { readonly source?: unknown }).source
  return typeof Response === "function" && source instanceof Response && source.body !== null
    ? source.body
    : undefined
}

/**
 * How long each read of a run's body may wait: until the first event, what is
 * left of the first-byte timeout; after it, the idle timeout, per network read.
 */
interface ReadTimeouts {
  /** Whether the run has all it waits for: the rest of the body gets `lingerMillis`. */
  readonly finished: (() => boolean) | undefined
  /** When the first event is due (Clock milliseconds). */
  readonly firstEventBy: () => number
  readonly firstByte: () => TransportError
  readonly idle: Duration.Duration
  readonly idleTimeout: () => TransportError
}

/** How long a body is read once its run finished: the API ends it right after `RUN_FINISHED`. */
const lingerMillis = 1_000

const lingeredTooLong = (): TransportError =>
  new TransportError({
    reason: "Timeout",
    message: "The server kept the run's stream open after RUN_FINISHED"
  })

/**
 * Decodes a web byte stream into run events in one stage: each read is
 * decoded as it arrives, with no byte stream in between. `onEnd` is called
 * once the body has ended. `release` cancels the reader unless the body
 * ended: the caller runs it when it is done with the events, however that
 * happens.
 */
const decodeSseBody = <E>(
  body: ReadableStream<Uint8Array>,
  onError: (cause: unknown) => E,
  onEnd: () => void,
  maxFrameBytes: number,
  timeouts: ReadTimeouts
): {
  readonly events: Stream.Stream<RunStreamEvent, E | DecodeError | TransportError>
  readonly release: Effect.Effect<void>
} => {
  const decoder = makeEventDecoder(maxFrameBytes)
  const reader = body.getReader()
  let ended = false
  let sawEvent = false
  // A plain timer per read, on real time (Effect.timeoutFail races a fiber per read: see the
  // bench notes).
  const readWithin = (millis: number, onTimeout: () => TransportError) =>
    Effect.async<ReadableStreamReadResult<Uint8Array>, E | TransportError>((resume) => {
      const timer = setTimeout(() => resume(Effect.fail(onTimeout())), millis)
      reader.read().then(
        (result) => {
          clearTimeout(timer)
          resume(Effect.succeed(result))
        },
        (cause) => {
          clearTimeout(timer)
          resume(Effect.fail(onError(cause)))
        }
      )
      return Effect.sync(() => clearTimeout(timer))
    })
  const idleMillis = Duration.toMillis(timeouts.idle)
  const idleRead = readWithin(idleMillis, timeouts.idleTimeout)
  const lingerRead = readWithin(lingerMillis, lingeredTooLong)
  const firstRead = Effect.flatMap(
    Clock.currentTimeMillis,
    (now) => readWithin(Math.max(0, timeouts.firstEventBy() - now), timeouts.firstByte)
  )
  const loop: Channel.Channel<
    Chunk.Chunk<RunStreamEvent>,
    unknown,
    E | DecodeError | TransportError,
    unknown,
    void,
    unknown
  > = Channel.flatMap(Channel.fromEffect(Effect.suspend(() =>
    !sawEvent ? firstRead : timeouts.finished?.() === true ? lingerRead : idleRead
  )), (result) => {
    if (result.done) {
      ended = true
      onEnd()
      return Channel.suspend(decoder.end)
    }
    decoder.push(result.value)
    if (!sawEvent) sawEvent = decoder.hasEvents()
    return decoder.emit(loop)
  })
  return {
    events: Stream.fromChannel(loop),
    release: Effect.suspend(() => ended ? Effect.void : Effect.promise(() => reader.cancel().catch(() => undefined)))
  }
}

/** An empty chunk, written after each chunk of events (see `decodeSse`). */
const writeEmpty = Channel.write(Chunk.empty<never>())

/**
 * The decoding shared by both readers: bytes in, events out per network
 * chunk, the first undecodable frame failing the stream after what came
 * before it.
 */
/** @internal */
export const makeEventDecoder = (maxFrameBytes = 16 * 1024 * 1024) => {
  const decoder = makeSseDecoder({ maxFrameLength: maxFrameBytes })
  let failure: DecodeError | undefined
  // A fresh array per network chunk, handed on as is. Made at its first event, not when the
  // previous chunk is handed on: an array that waits for the network outlives young
  // collections, and V8 then allocates every array of this site old, where each one keeps
  // its young events alive through every young collection until the next full one.
  let out: Array<RunStreamEvent> | undefined
  const onData = (data: string) => {
    if (failure !== undefined) return
    const decoded = Events.decodeFrame(data)
    if (decoded._tag === "Left") failure = decoded.left
    else if (out === undefined) out = [decoded.right]
    else out.push(decoded.right)
  }
  return {
    /** Whether the reads so far completed an event not yet emitted. */
    hasEvents: () => out !== undefined,
    push: (bytes: Uint8Array) => {
      // A frame over the limit fails the stream before it fills memory: the decoder let go of it.
      if (!decoder.push(bytes, onData) && failure === undefined) {
        failure = new DecodeError({
          reason: "FrameTooLarge",
          message: `An event of the run's stream is larger than maxFrameBytes (${maxFrameBytes}); it begins ${
            JSON.stringify(decoder.overLimitPrefix())
          }`
        })
      }
    },
    /** Writes what the last chunks completed, then goes on with `next` (or fails). */
    emit: <In, E, InE>(
      next: Channel.Channel<Chunk.Chunk<RunStreamEvent>, In, E | DecodeError, InE, unknown, unknown>
    ): Channel.Channel<Chunk.Chunk<RunStreamEvent>, In, E | DecodeError, InE, unknown, unknown> => {
      const events = out
      out = undefined
      if (failure !== undefined) {
        // Deliver what decoded before the bad frame, then fail.
        const error = failure
        return events !== undefined
          ? Channel.zipRight(Channel.write(Chunk.unsafeFromArray(events)), Channel.fail(error))
          : Channel.fail(error)
      }
      // The empty chunk lets go of the events before the next read (see decodeSse).
      return events !== undefined
        ? Channel.zipRight(Channel.write(Chunk.unsafeFromArray(events)), Channel.zipRight(writeEmpty, next))
        : next
    },
    end: (): Channel.Channel<Chunk.Chunk<RunStreamEvent>, unknown, DecodeError> => {
      const { pending } = decoder.end()
      if (pending === undefined) return Channel.void
      // A final event without its blank line: decode it rather than lose it.
      const decoded = Events.decodeFrame(pending)
      return decoded._tag === "Left" ? Channel.fail(decoded.left) : Channel.write(Chunk.of(decoded.right))
    }
  }
}

/** `TamboTransport.decodeSse`. @internal */
export const decodeSse = <E>(bytes: Stream.Stream<Uint8Array, E>, maxFrameBytes?: number | undefined): Stream.Stream<RunStreamEvent, E | DecodeError | TransportError> =>
  Stream.suspend(() => {
    const decoder = makeEventDecoder(maxFrameBytes)
    // One synchronous step per network chunk, written as a plain read loop: an effectful
    // mapping stage (`mapChunksEffect`) here made the events of every chunk outlive their
    // young generation (scratchpad/bench/NOTES.md).
    const loop: Channel.Channel<
      Chunk.Chunk<RunStreamEvent>,
      Chunk.Chunk<Uint8Array>,
      E | DecodeError,
      E,
      unknown,
      unknown
    > = Channel.readWithCause({
      onInput: (chunk: Chunk.Chunk<Uint8Array>) => {
        for (const piece of chunk) decoder.push(piece)
        return decoder.emit(loop)
      },
      onFailure: Channel.failCause,
      onDone: () => Channel.suspend(decoder.end)
    })
    return Stream.fromChannel(Channel.pipeTo(Stream.toChannel(bytes), loop))
  })
