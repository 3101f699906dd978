/**
 * The reading of a run's body from a fetch response's web stream: each
 * network read decoded as it arrives (eventDecoder.ts), within the
 * first-byte deadline until the first event, the idle timeout after it, and
 * a short linger once the run has all it waits for.
 *
 * @internal
 */
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Channel from "effect/Channel"
import type * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type DecodeError, TransportError } from "../../TamboError.js"
import type { RunStreamEvent } from "../../TamboTransport.js"
import { describeConnectionFailure, displayUrl, hasConnectionCode, scrubUrls } from "../http/connectionFailure.js"
import { safeCause } from "../http/safeCause.js"
import { makeEventDecoder } from "./eventDecoder.js"

/**
 * The web `ReadableStream` under a response from a fetch-based `HttpClient`,
 * if it has one: read directly, a run's events are decoded in the same stage
 * that reads the bytes. `@effect/platform`'s fetch client keeps the web
 * `Response` as `source`; that field is not part of the `HttpClientResponse`
 * interface, so it is checked for what it is, and any other response goes
 * through its byte stream.
 */
export const webBodyOf = (response: HttpClientResponse.HttpClientResponse): ReadableStream<Uint8Array> | undefined => {
  const source: unknown = (response as { readonly source?: unknown }).source
  return typeof Response === "function" && source instanceof Response && source.body !== null
    ? source.body
    : undefined
}

/**
 * How long each read of a run's body may wait: until the first event, what is
 * left of the first-byte timeout; after it, the idle timeout, per network read.
 */
export interface ReadTimeouts {
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
export const decodeSseBody = <E>(
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


/** The read timeouts of a run's body: the first-byte deadline of its opening, then the configured idle timeout. @internal */
export const readTimeouts = (
  idle: Duration.Duration,
  shownUrl: string,
  opening: { readonly firstEventBy: () => number; readonly firstByteTimeout: () => TransportError },
  finished: (() => boolean) | undefined
): ReadTimeouts => ({
  finished,
  firstEventBy: opening.firstEventBy,
  firstByte: opening.firstByteTimeout,
  idle,
  idleTimeout: () =>
    new TransportError({
      reason: "Timeout",
      message: `The run's stream got nothing for idleTimeout (${Duration.toMillis(idle)} ms) from ${shownUrl}`,
      method: "POST",
      url: shownUrl
    })
})

/** The error of a body whose connection broke. @internal */
export const disconnected = (error: { readonly message: string }, url: string): TransportError =>
  new TransportError({
    reason: "Disconnected",
    // undici says only "terminated"; a system error's code under it says why.
    message: `The run's stream broke: ${
      hasConnectionCode(error) ? describeConnectionFailure(error, url).message : scrubUrls(error.message)
    }`,
    method: "POST",
    url: displayUrl(url),
    cause: safeCause(error)
  })
