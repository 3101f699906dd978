/**
 * When a failed request is sent again, shared by the Tambo transport (its
 * REST calls and run requests) and the AG-UI transport (`internal/agui/transport.ts`):
 * a bounded, jittered exponential backoff that waits at least as long as the
 * server's `Retry-After`, and gives up at once when the server asks for more
 * than the caller allows.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Schedule from "effect/Schedule"
import type { TamboError } from "../../TamboError.js"
import { mayHaveReachedServer } from "./connectionFailure.js"

/**
 * Whether the failure may go away on its own: a 429/502/503/504, no connection, a timeout. Not a
 * request that may have reached the server (`TransportError.mayHaveReachedServer`: a run's request
 * whose connection broke once it went out, or whose first byte did not come in time): the server,
 * or the agent, may have taken it and started its run, and sending it again may run it twice.
 *
 * @internal
 * @since 0.2.0
 * @category Guards
 */
export const isRetryable = (error: TamboError): boolean =>
  (error._tag === "ApiError" && error.retryable) ||
  (error._tag === "TransportError" && (error.reason === "Connect" || error.reason === "Timeout") &&
    !mayHaveReachedServer(error))

const retryAfterOf = (error: TamboError): number | undefined =>
  error._tag === "ApiError" ? error.retryAfter : undefined

/**
 * Backoff, or the server's `Retry-After` when it asks for longer; at most
 * `maxRetries` retries. An answer asking for more than `maxRetryAfter` is not
 * retried (see {@link withinRetryAfter}).
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const retrySchedule = (maxRetries: number): Schedule.Schedule<unknown, TamboError> =>
  Schedule.exponential(Duration.millis(200), 2).pipe(
    Schedule.jittered,
    Schedule.intersect(Schedule.recurs(maxRetries)),
    Schedule.intersect(Schedule.identity<TamboError>()),
    Schedule.modifyDelay(([, error], delay) => {
      const after = retryAfterOf(error)
      return after === undefined ? delay : Duration.max(delay, Duration.millis(after))
    })
  )

/**
 * Whether the server asked to wait no longer than `maxRetryAfter` (or did not say).
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const withinRetryAfter = (maxRetryAfter: Duration.Duration) => {
  const max = Duration.toMillis(maxRetryAfter)
  return (error: TamboError): boolean => (retryAfterOf(error) ?? 0) <= max
}
