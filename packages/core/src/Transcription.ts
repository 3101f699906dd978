/**
 * Speech to text: `POST /audio/transcribe` of the Tambo API, a multipart
 * upload of one audio file (field `file`) answered with the transcript as
 * the body.
 *
 * Audio the API would refuse (empty, over 25 MB, a format it does not
 * transcribe) fails here with a `TranscriptionError` before anything is
 * sent. The request carries the API key and, with a user token, the
 * exchanged bearer token; like every REST call it is bounded by
 * `requestTimeout`, follows only same-origin redirects and is aborted when
 * interrupted. It is not retried: the API pays for each transcription.
 *
 * @since 0.2.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Auth from "./Auth.js"
import { describeConnectionFailure, displayUrl } from "./internal/connectionFailure.js"
import { RedirectRefused, sameOriginFetch } from "./internal/redirects.js"
import { parseRetryAfter } from "./internal/retryAfter.js"
import { safeCause } from "./internal/safeCause.js"
import { TamboConfig } from "./TamboConfig.js"
import { DecodeError, type TamboError, TranscriptionError, TransportError } from "./TamboError.js"
import { errorFromStatus } from "./internal/apiError.js"
import type { Credentials } from "./TamboTransport.js"

/**
 * The largest audio file the API transcribes: 25 MB.
 *
 * @since 0.2.0
 * @category Constants
 */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024

/**
 * The media types the API transcribes (MP3, WAV, MP4, M4A, WebM).
 *
 * @since 0.2.0
 * @category Constants
 */
export const SUPPORTED_TYPES: ReadonlyArray<string> = [
  "audio/mpeg",
  "audio/mp3",
  "audio/wav",
  "audio/wave",
  "audio/mp4",
  "audio/m4a",
  "audio/x-m4a",
  "audio/webm",
  "video/mp4"
]

const byExtension: Readonly<Record<string, string>> = {
  mp3: "audio/mpeg",
  mpeg: "audio/mpeg",
  mpga: "audio/mpeg",
  wav: "audio/wav",
  m4a: "audio/m4a",
  mp4: "audio/mp4",
  webm: "audio/webm"
}

/**
 * What to transcribe: the audio (a `Blob` or `File`, e.g. what a
 * `MediaRecorder` recorded) and the file name it is sent under.
 *
 * @since 0.2.0
 * @category Models
 */
export interface TranscribeOptions {
  /** Default: the `File`'s own name, else `recording.<ext>` after the type. */
  readonly filename?: string | undefined
}

/**
 * The media type the API sees for `audio`: the blob's type without its
 * parameters (a `MediaRecorder` says `audio/webm;codecs=opus`, which the API
 * refuses as such), else the one the file name's extension implies.
 *
 * @since 0.2.0
 * @category Utils
 */
export const mediaTypeOf = (audio: Blob, filename: string | undefined): string => {
  const declared = audio.type.split(";")[0]!.trim().toLowerCase()
  if (declared !== "") return declared
  const extension = filename?.split(".").pop()?.toLowerCase()
  return extension === undefined ? "" : byExtension[extension] ?? ""
}

/**
 * Checks `audio` as the API would: not empty, at most 25 MB, a supported
 * type. Returns the type it is sent as.
 *
 * @since 0.2.0
 * @category Utils
 */
export const validate = (audio: Blob, filename?: string): Either.Either<string, TranscriptionError> => {
  if (audio.size === 0) {
    return Either.left(new TranscriptionError({ reason: "EmptyAudio", message: "The audio is empty: nothing was recorded" }))
  }
  if (audio.size > MAX_AUDIO_BYTES) {
    return Either.left(
      new TranscriptionError({
        reason: "TooLarge",
        message: `The audio is ${audio.size} bytes; the API transcribes at most ${MAX_AUDIO_BYTES} (25 MB)`
      })
    )
  }
  const type = mediaTypeOf(audio, filename)
  if (!SUPPORTED_TYPES.includes(type)) {
    return Either.left(
      new TranscriptionError({
        reason: "UnsupportedType",
        message: `Audio of type ${type === "" ? "(none)" : type} cannot be transcribed; supported: ${SUPPORTED_TYPES.join(", ")}`
      })
    )
  }
  return Either.right(type)
}

const extensionOf = (type: string): string =>
  Object.entries(byExtension).find(([, candidate]) => candidate === type)?.[0] ?? type.split("/")[1] ?? "audio"

const decodeJsonTranscript = Schema.decodeUnknownEither(Schema.parseJson(Schema.String))

const send = (
  url: string,
  apiKey: Redacted.Redacted<string>,
  credentials: Credentials,
  form: FormData
): Effect.Effect<string, TamboError> =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await sameOriginFetch()(url, {
        method: "POST",
        headers: {
          "x-api-key": Redacted.value(apiKey),
          ...(credentials._tag === "Bearer" ? { authorization: `Bearer ${Redacted.value(credentials.token)}` } : {})
        },
        body: form,
        signal
      })
      return { status: response.status, type: response.headers.get("content-type") ?? "", retryAfter: response.headers.get("retry-after"), text: await response.text() }
    },
    catch: (cause): TamboError => {
      if (cause instanceof RedirectRefused) {
        return new TransportError({
          reason: "Redirect",
          message: cause.decision.message,
          method: "POST",
          url: displayUrl(url),
          status: cause.decision.status,
          ...(cause.decision.location === undefined ? {} : { location: cause.decision.location })
        })
      }
      const failure = describeConnectionFailure(cause, url)
      return new TransportError({ reason: failure.reason, message: failure.message, method: "POST", url: failure.url, cause: safeCause(cause) })
    }
  }).pipe(
    Effect.flatMap((answer): Effect.Effect<string, TamboError> => {
      if (answer.status < 200 || answer.status >= 300) {
        let body: unknown
        try {
          body = JSON.parse(answer.text)
        } catch {
          body = undefined
        }
        return Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.fail(errorFromStatus(answer.status, body, { method: "POST", url, retryAfter: parseRetryAfter(answer.retryAfter, now) })))
      }
      // The API answers with the transcript as the body; a JSON string is taken too.
      if (!answer.type.includes("json")) return Effect.succeed(answer.text)
      return Either.match(decodeJsonTranscript(answer.text), {
        onLeft: (error) =>
          Effect.fail(new DecodeError({ reason: "InvalidResponse", message: `transcribe: ${error.message}` })),
        onRight: Effect.succeed
      })
    }),
    Effect.flatMap((text) =>
      text.trim() === ""
        ? Effect.fail(new TranscriptionError({ reason: "EmptyTranscript", message: "The transcription is empty: the audio may be silent" }))
        : Effect.succeed(text)
    )
  )

/**
 * Transcribes `audio` through the API; succeeds with the transcript.
 *
 * Fails with a `TranscriptionError` for audio the API would refuse (checked
 * before sending) or an empty transcript, an `ApiError` for the API's own
 * refusal, a `TransportError` for a connection that failed or timed out
 * (`requestTimeout`), an `AuthError` when a user token cannot be exchanged.
 *
 * @example
 * ```ts
 * const text = yield* Transcription.transcribe(new Blob([bytes], { type: "audio/webm" }))
 * ```
 *
 * @since 0.2.0
 * @category Functions
 */
export const transcribe = (
  audio: Blob,
  options: TranscribeOptions = {}
): Effect.Effect<string, TamboError, TamboConfig | Auth.Auth> =>
  Effect.gen(function* () {
    const ownName = typeof File !== "undefined" && audio instanceof File && audio.name !== "" ? audio.name : undefined
    const requestedName = options.filename ?? ownName
    const type = yield* validate(audio, requestedName)
    const config = yield* TamboConfig
    const auth = yield* Auth.Auth
    const filename = requestedName ?? `recording.${extensionOf(type)}`
    const url = `${config.baseUrl}/audio/transcribe`
    const shown = displayUrl(url)
    return yield* Auth.withCredentials(auth, (credentials) => {
      // A fresh form per attempt: a retry after a 401 sends the audio again.
      const form = new FormData()
      form.append("file", new Blob([audio], { type }), filename)
      return send(url, config.apiKey, credentials, form)
    }).pipe(
      Effect.timeoutFail({
        duration: config.requestTimeout,
        onTimeout: () =>
          new TransportError({ reason: "Timeout", message: `request timed out at ${shown}`, method: "POST", url: shown })
      }),
      Effect.withSpan("Transcription.transcribe", { attributes: { "http.method": "POST", "url.path": "/audio/transcribe" } })
    )
  })
