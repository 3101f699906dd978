/**
 * Speech to text, behind `Transcription`: the audio limits and media types
 * the API accepts, the check made before anything is sent, and the
 * multipart request to `POST /audio/transcribe` with the reading of its
 * answer.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Auth from "../Auth.js"
import { TamboConfig } from "../TamboConfig.js"
import { DecodeError, type TamboError, TranscriptionError, TransportError } from "../TamboError.js"
import type { Credentials } from "../TamboTransport.js"
import type { TranscribeOptions } from "../Transcription.js"
import { errorFromStatus } from "./http/apiError.js"
import { describeConnectionFailure, displayUrl } from "./http/connectionFailure.js"
import { redirectError, RedirectRefused, sameOriginFetch } from "./http/redirects.js"
import { parseRetryAfter } from "./http/retryAfter.js"
import { safeCause } from "./http/safeCause.js"

/** The largest audio file the API transcribes: 25 MB. */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024

/** The media types the API transcribes. */
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

/** The media type the API sees: the blob's without parameters, else the file name's extension's. */
export const mediaTypeOf = (audio: Blob, filename: string | undefined): string => {
  const declared = audio.type.split(";")[0]!.trim().toLowerCase()
  if (declared !== "") return declared
  const extension = filename?.split(".").pop()?.toLowerCase()
  return extension === undefined ? "" : byExtension[extension] ?? ""
}

/** The type `audio` is sent as, or why the API would refuse it. */
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

/** What the request brought back, read whole. */
interface Answer {
  readonly status: number
  readonly type: string
  readonly retryAfter: string | null
  readonly text: string
}

/** Posts the form; a connection that fails or a redirect elsewhere is a `TransportError`. */
const post = (
  url: string,
  apiKey: Redacted.Redacted<string>,
  credentials: Credentials,
  form: FormData
): Effect.Effect<Answer, TamboError> =>
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
      if (cause instanceof RedirectRefused) return redirectError(cause, "POST", url)
      const failure = describeConnectionFailure(cause, url)
      return new TransportError({ reason: failure.reason, message: failure.message, method: "POST", url: failure.url, cause: safeCause(cause) })
    }
  })

const decodeJsonTranscript = Schema.decodeUnknownEither(Schema.parseJson(Schema.String))

/** The transcript in an answer, or the API's refusal. */
const transcriptOf = (url: string, answer: Answer): Effect.Effect<string, TamboError> => {
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
}

/** The transcript, unless it is empty (the audio may be silent). */
const nonEmpty = (text: string): Effect.Effect<string, TranscriptionError> =>
  text.trim() === ""
    ? Effect.fail(new TranscriptionError({ reason: "EmptyTranscript", message: "The transcription is empty: the audio may be silent" }))
    : Effect.succeed(text)

/** Transcribes `audio` through the API, checked first; succeeds with the transcript. */
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
      return post(url, config.apiKey, credentials, form).pipe(
        Effect.flatMap((answer) => transcriptOf(url, answer)),
        Effect.flatMap(nonEmpty)
      )
    }).pipe(
      Effect.timeoutFail({
        duration: config.requestTimeout,
        onTimeout: () =>
          new TransportError({ reason: "Timeout", message: `request timed out at ${shown}`, method: "POST", url: shown })
      }),
      Effect.withSpan("Transcription.transcribe", { attributes: { "http.method": "POST", "url.path": "/audio/transcribe" } })
    )
  })
