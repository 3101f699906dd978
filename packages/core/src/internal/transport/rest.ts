/**
 * One REST call through the typescript-sdk: abortable, timed by the SDK, its
 * failure mapped to ours (sdk.ts), its body decoded by the response's schema,
 * retried when sending it twice does no harm, and spanned with the thread
 * and run it is about. Also the small helpers the calls' parameters share.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import type * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { DecodeError, type TamboError } from "../../TamboError.js"
import type { Credentials } from "../../TamboTransport.js"
import { headersOf } from "./credentials.js"
import { mapSdkError } from "./sdk.js"

/** A REST call: what it is, and how the SDK sends it. */
export interface Call<S extends Schema.Schema.AnyNoContext> {
  /** The service member that makes it: names its span and its decode failures. */
  readonly name: string
  readonly method: string
  /** Under the base URL; for the error's URL and the span's attributes. */
  readonly path: string
  /** The response body's schema. */
  readonly schema: S
  /** Whether sending it twice does no harm: only then is a retryable failure retried. */
  readonly idempotent: boolean
  /** Whether the response holds a secret (a token): a decode failure then names where, never what. */
  readonly holdsSecret?: boolean
  /** The SDK call, aborted by `signal` when the effect is interrupted. */
  readonly send: (options: { readonly signal: AbortSignal }) => PromiseLike<unknown>
}

/** Makes a REST call: its decoded response, or a `TamboError`. */
export type Rest = <S extends Schema.Schema.AnyNoContext>(call: Call<S>) => Effect.Effect<Schema.Schema.Type<S>, TamboError>

/** Where a response did not have its schema's shape, without the values found there. */
const withoutValues = (error: ParseResult.ParseError): string => {
  const paths = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) =>
    issue.path.length === 0 ? "the body" : issue.path.map((key) => JSON.stringify(String(key))).join(".")
  )
  return `the response does not have the expected shape (at ${[...new Set(paths)].join(", ")})`
}

/** The thread (and run) a call is about, from its path: traces are searched by them. */
const threadAndRunIds = /^\/(?:v1\/)?threads\/([^/]+)(?:\/runs\/([^/]+))?/

/** The REST calls of a transport on `baseUrl`, retried on `schedule` while `retryable`. */
export const make = (
  baseUrl: string,
  schedule: Schedule.Schedule<unknown, TamboError>,
  retryable: (error: TamboError) => boolean
): Rest =>
(call) => {
  const { method, name, path } = call
  const url = `${baseUrl}${path}`
  const attempt = Effect.tryPromise({
    try: (signal) => call.send({ signal }),
    catch: (cause) => cause
  }).pipe(
    // The clock is read only on failure: an HTTP-date Retry-After is relative to it.
    Effect.catchAll((cause) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(mapSdkError(method, url, now)(cause)))
    ),
    Effect.flatMap((body) =>
      Schema.decodeUnknown(call.schema)(body).pipe(
        Effect.mapError((error) =>
          new DecodeError({
            reason: "InvalidResponse",
            message: `${name}: ${call.holdsSecret === true ? withoutValues(error) : error.message}`
          })
        )
      )
    )
  )
  const retried = call.idempotent ? Effect.retry(attempt, { schedule, while: retryable }) : attempt
  const ids = threadAndRunIds.exec(path)
  return retried.pipe(
    Effect.withSpan(`TamboTransport.${name}`, {
      attributes: {
        "http.method": method,
        "url.path": path,
        ...(ids?.[1] === undefined ? {} : { "tambo.thread_id": ids[1] }),
        ...(ids?.[2] === undefined ? {} : { "tambo.run_id": ids[2] })
      }
    })
  )
}

/** The SDK's request options: the abort signal and the credentials' headers. */
export const requestOptions = (credentials: Credentials, signal: AbortSignal) => ({
  signal,
  headers: headersOf(credentials)
})

/** The schema of a response whose body is not read. */
export const AnyBody = Schema.Unknown

/** Drops undefined fields: the SDK would otherwise send `key=undefined`-like noise. */
export const definedOnly = <A extends Record<string, unknown>>(
  params: A
): { [K in keyof A]?: Exclude<A[K], undefined> } => {
  const out: Record<string, unknown> = {}
  for (const key in params) {
    if (params[key] !== undefined) out[key] = params[key]
  }
  return out as { [K in keyof A]?: Exclude<A[K], undefined> }
}
