/**
 * The `@tambo-ai/typescript-sdk` client every REST call goes through, and
 * what its failures become: a `TransportError` for a timeout, a refused
 * redirect, a connection that failed or anything unexpected, the `ApiError`
 * of the status for an answer the server refused.
 *
 * @internal
 */
import TamboAI from "@tambo-ai/typescript-sdk"
import * as Duration from "effect/Duration"
import * as Redacted from "effect/Redacted"
import type { Resolved } from "../../TamboConfig.js"
import { type TamboError, TransportError } from "../../TamboError.js"
import { errorFromStatus } from "../http/apiError.js"
import { describeConnectionFailure, displayUrl } from "../http/connectionFailure.js"
import { redirectError, RedirectRefused, sameOriginFetch } from "../http/redirects.js"
import { parseRetryAfter } from "../http/retryAfter.js"
import { safeCause } from "../http/safeCause.js"

/** The SDK client for a configuration; retries are ours (`Effect.retry`), not the SDK's. */
export const makeSdk = (config: Resolved): TamboAI =>
  new TamboAI({
    apiKey: Redacted.value(config.apiKey),
    baseURL: config.baseUrl,
    maxRetries: 0,
    timeout: Duration.toMillis(config.requestTimeout),
    // No credential is sent to another origin: redirects are followed only on the API's own.
    fetch: sameOriginFetch()
  })

/** The redirect our fetch refused, wherever the SDK wrapped it in its causes. */
const refusedRedirectIn = (cause: unknown): RedirectRefused | undefined => {
  for (let current = cause, depth = 0; typeof current === "object" && current !== null && depth < 8; depth++) {
    if (current instanceof RedirectRefused) return current
    current = (current as { readonly cause?: unknown }).cause
  }
  return undefined
}

/** The error of a failed SDK call to `url`; `now` dates an HTTP-date `Retry-After`. */
export const mapSdkError = (method: string, url: string, now: number) => (cause: unknown): TamboError => {
  if (cause instanceof TamboAI.APIConnectionTimeoutError) {
    const shown = displayUrl(url)
    return new TransportError({ reason: "Timeout", message: `request timed out at ${shown}`, method, url: shown, cause: safeCause(cause) })
  }
  const refused = refusedRedirectIn(cause)
  if (refused !== undefined) return redirectError(refused, method, url)
  if (cause instanceof TamboAI.APIConnectionError) {
    // The SDK's own message is only "Connection error.": what failed is in its cause.
    const failure = describeConnectionFailure(cause, url)
    return new TransportError({ reason: failure.reason, message: failure.message, method, url: failure.url, cause: safeCause(cause) })
  }
  if (cause instanceof TamboAI.APIError && typeof cause.status === "number") {
    const retryAfter = parseRetryAfter(cause.headers?.get("retry-after"), now)
    return errorFromStatus(cause.status, cause.error, { method, url, retryAfter })
  }
  const safe = safeCause(cause)
  return new TransportError({
    reason: "Protocol",
    message: safe instanceof Error ? safe.message : String(safe),
    method,
    url: displayUrl(url),
    cause: safe
  })
}
