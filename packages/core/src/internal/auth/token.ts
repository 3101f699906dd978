/**
 * An exchanged access token and the rules around it: what the service holds
 * for a `userToken`, when a token is refreshed, which failed exchanges are
 * final, and how a failed exchange reads as an `AuthError`.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import type * as Deferred from "effect/Deferred"
import * as Redacted from "effect/Redacted"
import { AuthError, type TamboError } from "../../TamboError.js"
import type { Credentials } from "../../TamboTransport.js"

/** An exchanged access token and when to replace it. */
export interface Token {
  readonly credentials: Extract<Credentials, { readonly _tag: "Bearer" }>
  /** From then on, `credentials` exchanges again rather than hand it out. */
  readonly refreshAt: number
  readonly expiresAt: number
  /** How many refreshes of it failed in a row for a reason worth trying again. */
  readonly failedRefreshes: number
}

/** What the service holds for a `userToken`. */
export type Slot =
  | { readonly _tag: "Empty" }
  | {
    readonly _tag: "Exchanging"
    readonly deferred: Deferred.Deferred<Token, AuthError>
    /** The token it refreshes: kept, until it expires, if the exchange fails for a reason worth trying again. */
    readonly refreshing?: Token | undefined
    /** How many exchanges before it failed in a row, with no token held, for a reason worth trying again. */
    readonly failures?: number | undefined
  }
  | { readonly _tag: "Ready"; readonly token: Token }
  /** A refusal that asking again would not change (a 4xx other than 408 / 429). */
  | { readonly _tag: "Refused"; readonly error: AuthError }
  /**
   * An exchange that failed for a reason worth trying again, with no token that works held:
   * requests fail with its error until `retryAt`, then the first one exchanges again.
   */
  | { readonly _tag: "Failed"; readonly error: AuthError; readonly retryAt: number; readonly failures: number }

/**
 * Why an exchange ran: at start, on schedule, because a request found no
 * usable token, or because the user token was replaced.
 */
export type Trigger = "initial" | "refresh" | "request" | "newUserToken"

/** Refresh this long before the token expires, or at half its lifetime when it is shorter. */
const refreshMargin = Duration.seconds(30)
/** The soonest a refresh is scheduled after an exchange, so a zero lifetime cannot spin. */
const minimumRefreshDelay = Duration.seconds(1)
/**
 * After a failed refresh (or exchange), the next one is tried this long later, doubled after each
 * failure, up to the cap.
 */
const refreshRetryBase = Duration.seconds(1)
const refreshRetryCap = Duration.seconds(8)

const refreshDelayMillis = (lifetimeMillis: number): number =>
  Math.max(lifetimeMillis - Duration.toMillis(refreshMargin), lifetimeMillis / 2)

/**
 * The token an exchange that started at `startedAt` obtained, valid for
 * `expiresInSeconds` (a negative lifetime counts as none).
 */
export const tokenOf = (
  token: Redacted.Redacted<string>,
  expiresInSeconds: number,
  startedAt: number
): Token => {
  const lifetime = Math.max(0, expiresInSeconds * 1000)
  return {
    credentials: { _tag: "Bearer", token },
    refreshAt: startedAt + refreshDelayMillis(lifetime),
    expiresAt: startedAt + lifetime,
    failedRefreshes: 0
  }
}

/**
 * `token` kept after a refresh failed at `now` for a reason worth trying
 * again: handed out until the next try, or nothing when it has expired.
 * The next try comes after the endpoint's `Retry-After` when it sent one
 * (at most `maxRetryAfter`), else after a backoff; never later than the
 * token's expiry.
 */
export const keptAfterFailedRefresh = (
  token: Token,
  now: number,
  error: AuthError,
  maxRetryAfter: Duration.Duration
): Token | undefined => {
  if (now >= token.expiresAt) return undefined
  const wait = retryDelay(error, token.failedRefreshes, maxRetryAfter)
  return {
    ...token,
    refreshAt: Math.min(now + wait, token.expiresAt),
    failedRefreshes: token.failedRefreshes + 1
  }
}

/**
 * How long to wait after an exchange failed for a reason worth trying again, `failures` failed
 * before it: the endpoint's `Retry-After` when it sent one (at most `maxRetryAfter`), else the
 * backoff.
 */
const retryDelay = (error: AuthError, failures: number, maxRetryAfter: Duration.Duration): number =>
  error.retryAfter !== undefined
    ? Math.min(error.retryAfter, Duration.toMillis(maxRetryAfter))
    : Math.min(Duration.toMillis(refreshRetryBase) * 2 ** failures, Duration.toMillis(refreshRetryCap))

/**
 * What the slot holds after an exchange failed at `now` for a reason worth trying again with no
 * token that works: the failure, until the next try.
 */
export const failedWithoutToken = (
  error: AuthError,
  failures: number,
  now: number,
  maxRetryAfter: Duration.Duration
): Slot => ({ _tag: "Failed", error, retryAt: now + retryDelay(error, failures, maxRetryAfter), failures: failures + 1 })

/** How long from `now` until `token` is refreshed: never sooner than the minimum delay. */
export const untilRefresh = (token: Token, now: number): Duration.Duration =>
  Duration.max(Duration.millis(token.refreshAt - now), minimumRefreshDelay)

/** Whether a failed exchange is final: a 4xx other than 408 / 429. */
export const isRefusal = (error: AuthError): boolean =>
  error.status !== undefined && error.status >= 400 && error.status < 500 && error.status !== 408 &&
  error.status !== 429

/** A failed exchange as an `AuthError`, keeping the status and `Retry-After` of an API error. */
export const toAuthError = (error: TamboError): AuthError =>
  error._tag === "AuthError"
    ? error
    : new AuthError({
      reason: "ExchangeFailed",
      // Only the message: a transport error's cause may hold the request.
      message: `Token exchange failed: ${error.message}`,
      ...("status" in error && typeof error.status === "number" ? { status: error.status } : {}),
      ...(error._tag === "ApiError" && error.retryAfter !== undefined ? { retryAfter: error.retryAfter } : {})
    })

/** Whether two credentials are the same bearer token. */
export const sameToken = (a: Credentials, b: Credentials): boolean =>
  a._tag === "Bearer" && b._tag === "Bearer" && Redacted.value(a.token) === Redacted.value(b.token)
