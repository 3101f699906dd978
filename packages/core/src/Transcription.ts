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
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import type * as Auth from "./Auth.js"
import * as internal from "./internal/transcription.js"
import type { TamboConfig } from "./TamboConfig.js"
import type { TamboError, TranscriptionError } from "./TamboError.js"

/**
 * The largest audio file the API transcribes: 25 MB.
 *
 * @since 0.2.0
 * @category Constants
 */
export const MAX_AUDIO_BYTES: number = internal.MAX_AUDIO_BYTES

/**
 * The media types the API transcribes (MP3, WAV, MP4, M4A, WebM).
 *
 * @since 0.2.0
 * @category Constants
 */
export const SUPPORTED_TYPES: ReadonlyArray<string> = internal.SUPPORTED_TYPES

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
export const mediaTypeOf: (audio: Blob, filename: string | undefined) => string = internal.mediaTypeOf

/**
 * Checks `audio` as the API would: not empty, at most 25 MB, a supported
 * type. Returns the type it is sent as.
 *
 * @since 0.2.0
 * @category Utils
 */
export const validate: (audio: Blob, filename?: string) => Either.Either<string, TranscriptionError> =
  internal.validate

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
export const transcribe: (
  audio: Blob,
  options?: TranscribeOptions
) => Effect.Effect<string, TamboError, TamboConfig | Auth.Auth> = internal.transcribe
