/**
 * The connect timeout of an MCP connection, which counts network time only:
 * while the user authorizes the client (OAuth), it is suspended, and each
 * stretch of network time between authorizations gets the whole timeout.
 * The authorization has a bound of its own (`McpOAuthOptions.authorizeTimeout`).
 *
 * @internal
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"

/** @internal */
export interface Deadline {
  /** Suspends the deadline while `self` runs. */
  readonly suspendDuring: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Fails `self` with `onTimeout()` once it has run for `timeout` outside `suspendDuring`. */
  readonly bound: <A, E, R>(self: Effect.Effect<A, E, R>, onTimeout: () => E) => Effect.Effect<A, E, R>
}

/** @internal */
export const make = (timeout: Duration.Duration): Effect.Effect<Deadline> =>
  Effect.map(SubscriptionRef.make(0), (suspensions): Deadline => {
    // Completes once `timeout` passed with no suspension in progress; a suspension restarts it.
    const expired = suspensions.changes.pipe(
      Stream.map((n) => n === 0),
      Stream.changes,
      Stream.flatMap((running) => (running ? Stream.fromEffect(Effect.sleep(timeout)) : Stream.empty), { switch: true }),
      Stream.runHead,
      Effect.flatMap(Option.match({ onNone: () => Effect.never, onSome: () => Effect.void }))
    )
    return {
      suspendDuring: (self) =>
        Effect.acquireUseRelease(
          SubscriptionRef.update(suspensions, (n) => n + 1),
          () => self,
          () => SubscriptionRef.update(suspensions, (n) => n - 1)
        ),
      bound: (self, onTimeout) => Effect.raceFirst(self, Effect.zipRight(expired, Effect.fail(onTimeout())))
    }
  })
