/**
 * The `Auth` service built from the configuration: a fixed one for a
 * `userKey`, for no identity or for both, and the exchanging one
 * (exchanging.ts) for a `userToken`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type { Auth, AuthState } from "../../Auth.js"
import { TamboConfig } from "../../TamboConfig.js"
import { AuthError } from "../../TamboError.js"
import { type Credentials, TamboTransport } from "../../TamboTransport.js"
import { exchanging } from "./exchanging.js"

/** A service whose state never changes: `userKey`, nothing configured, or both. */
const fixed = (
  state: AuthState,
  credentials: Effect.Effect<Credentials, AuthError>
): Effect.Effect<Auth.Service> =>
  Effect.map(SubscriptionRef.make<AuthState>(state), (ref) => ({
    state: SubscriptionRef.get(ref),
    changes: ref.changes,
    credentials,
    invalidate: () => Effect.void,
    setUserToken: () =>
      Effect.fail(
        new AuthError({
          reason: "InvalidCredentials",
          message: "setUserToken needs a client configured with a userToken, not a userKey or no identity"
        })
      )
  }))

/** The service for the configured identity. */
export const make: Effect.Effect<Auth.Service, never, TamboConfig | TamboTransport | Scope.Scope> = Effect.gen(
  function* () {
    const config = yield* TamboConfig
    if (Option.isSome(config.userKey) && Option.isSome(config.userToken)) {
      return yield* fixed(
        { status: "invalid" },
        Effect.fail(
          new AuthError({
            reason: "InvalidCredentials",
            message: "Both a userKey and a userToken are configured: give only one of them"
          })
        )
      )
    }
    if (Option.isSome(config.userKey)) {
      return yield* fixed(
        { status: "identified", source: "userKey" },
        Effect.succeed({ _tag: "UserKey", userKey: config.userKey.value })
      )
    }
    if (Option.isNone(config.userToken)) {
      return yield* fixed(
        { status: "unauthenticated" },
        Effect.fail(
          new AuthError({
            reason: "Unauthenticated",
            message: "No userKey or userToken is configured: the v1 API needs one of them"
          })
        )
      )
    }
    return yield* exchanging(config.userToken.value, yield* TamboTransport, config.maxRetryAfter, config.deferTokenExchange !== true)
  }
)
