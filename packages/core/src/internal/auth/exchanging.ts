/**
 * The `Auth` service for a `userToken`: it exchanges the token as soon as it
 * starts, hands out the access token to requests, forgets one the API
 * rejected, and takes a rotated user token in place.
 *
 * @internal
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type { Auth } from "../../Auth.js"
import type { Credentials, TamboTransport } from "../../TamboTransport.js"
import { type Env, makeEnv, publish, restart } from "./exchange.js"
import { credentials } from "./request.js"
import { sameToken, type Slot } from "./token.js"

/**
 * Forgets the token the API rejected (or, without one, whatever is cached
 * other than an exchange in flight). A token a refresh in flight replaces
 * is no longer handed out: requests wait for the refresh.
 */
const invalidate = (env: Env) => (rejected?: Credentials | undefined): Effect.Effect<void> =>
  Effect.flatMap(
    Ref.modify(env.slot, (current): readonly [boolean, Slot] => {
      if (current._tag === "Exchanging") {
        const forget = current.refreshing !== undefined &&
          (rejected === undefined || sameToken(current.refreshing.credentials, rejected))
        return forget ? [true, { ...current, refreshing: undefined }] : [false, current]
      }
      if (rejected === undefined) return [false, { _tag: "Empty" }]
      return current._tag === "Ready" && sameToken(current.token.credentials, rejected)
        ? [false, { _tag: "Empty" }]
        : [false, current]
    }),
    (forgotten) => forgotten ? publish(env, { status: "exchanging" }) : Effect.void
  )

/** Replaces the user token and exchanges the new one at once; the same token again changes nothing. */
const setUserToken = (env: Env) => (next: Redacted.Redacted<string>): Effect.Effect<void> =>
  // Synchronous (the facade runs it with runSync). The old token's scheduled refresh
  // finds it gone and does nothing; the new token's replaces its timer.
  Effect.uninterruptible(Effect.flatMap(
    Ref.modify(env.userToken, (current): readonly [boolean, Redacted.Redacted<string>] =>
      Redacted.value(next) === Redacted.value(current) ? [false, current] : [true, next]),
    (replaced) => replaced ? restart(env, "newUserToken") : Effect.void
  ))

/**
 * The service for `userToken`, exchanging it right away (unless `atStart` is false: then at the
 * first request that needs it); the scope bounds the exchanges and refreshes.
 */
export const exchanging = (
  userToken: Redacted.Redacted<string>,
  transport: TamboTransport.Service,
  maxRetryAfter: Duration.Duration,
  atStart = true
): Effect.Effect<Auth.Service, never, Scope.Scope> =>
  Effect.gen(function* () {
    const env = yield* makeEnv(userToken, transport, maxRetryAfter)
    // Exchange right away: the first run then rarely waits.
    if (atStart) yield* restart(env, "initial")
    return {
      state: SubscriptionRef.get(env.state),
      changes: env.state.changes,
      credentials: credentials(env),
      invalidate: invalidate(env),
      setUserToken: setUserToken(env)
    }
  })
