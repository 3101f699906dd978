/**
 * Who the client acts for, and the credentials each request carries.
 *
 * A `userKey` is sent as is. A `userToken` is exchanged for an access token
 * (RFC 8693) before the first request, refreshed before it expires, and
 * exchanged again once when the API answers 401.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { TamboConfig } from "./TamboConfig.js"
import { AuthError, type TamboError } from "./TamboError.js"
import { type Credentials, TamboTransport } from "./TamboTransport.js"

/**
 * The authentication state, as `@tambo-ai/client` names it.
 *
 * @since 0.1.0
 * @category Models
 */
export type AuthState =
  | { readonly status: "unauthenticated" }
  | { readonly status: "identified"; readonly source: "userKey" | "tokenExchange" }
  | { readonly status: "exchanging" }
  | { readonly status: "error"; readonly error: AuthError }
  | { readonly status: "invalid" }

/**
 * @since 0.1.0
 * @category Context
 */
export class Auth extends Context.Tag("@tambo-effect/core/Auth")<Auth, Auth.Service>() {}

/**
 * @since 0.1.0
 */
export declare namespace Auth {
  /**
   * @since 0.1.0
   * @category Models
   */
  export interface Service {
    readonly state: Effect.Effect<AuthState>
    /** The current state, then every change. */
    readonly changes: Stream.Stream<AuthState>
    /** The credentials for the next request; waits for a token exchange in flight. */
    readonly credentials: Effect.Effect<Credentials, AuthError>
    /** Forgets the access token: the next `credentials` exchanges again. */
    readonly invalidate: Effect.Effect<void>
  }
}

/** Refresh this long before the token expires. */
const refreshMargin = Duration.seconds(30)

/**
 * @since 0.1.0
 * @category Constructors
 */
export const make: Effect.Effect<Auth.Service, never, TamboConfig | TamboTransport | import("effect/Scope").Scope> = Effect
  .gen(function* () {
    const config = yield* TamboConfig
    const transport = yield* TamboTransport

    if (Option.isSome(config.userKey)) {
      const credentials: Credentials = { _tag: "UserKey", userKey: config.userKey.value }
      const state: AuthState = { status: "identified", source: "userKey" }
      const ref = yield* SubscriptionRef.make<AuthState>(state)
      return Auth.of({
        state: SubscriptionRef.get(ref),
        changes: ref.changes,
        credentials: Effect.succeed(credentials),
        invalidate: Effect.void
      })
    }

    if (Option.isNone(config.userToken)) {
      const ref = yield* SubscriptionRef.make<AuthState>({ status: "unauthenticated" })
      return Auth.of({
        state: SubscriptionRef.get(ref),
        changes: ref.changes,
        credentials: Effect.fail(
          new AuthError({
            reason: "Unauthenticated",
            message: "No userKey or userToken is configured: the v1 API needs one of them"
          })
        ),
        invalidate: Effect.void
      })
    }

    const userToken = config.userToken.value
    const ref = yield* SubscriptionRef.make<AuthState>({ status: "unauthenticated" })
    const lock = yield* Effect.makeSemaphore(1)
    let current: { readonly credentials: Credentials; readonly expiresAt: number } | undefined

    const exchange = Effect.gen(function* () {
      yield* SubscriptionRef.set(ref, { status: "exchanging" })
      const token = yield* transport.exchangeToken(userToken).pipe(
        Effect.mapError((error): AuthError =>
          error._tag === "AuthError"
            ? error
            : new AuthError({ reason: "ExchangeFailed", message: `Token exchange failed: ${error.message}` })
        ),
        Effect.tapError((error) => SubscriptionRef.set(ref, { status: "error", error }))
      )
      const now = yield* Clock.currentTimeMillis
      current = { credentials: { _tag: "Bearer", token: token.token }, expiresAt: now + token.expiresInSeconds * 1000 }
      yield* SubscriptionRef.set(ref, { status: "identified", source: "tokenExchange" })
      return current
    }).pipe(Effect.withSpan("Auth.exchange"))

    const fresh = (now: number) =>
      current !== undefined && current.expiresAt - Duration.toMillis(refreshMargin) > now ? current : undefined

    const credentials = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const valid = fresh(now)
      if (valid !== undefined) return valid.credentials
      // One exchange at a time: concurrent runs wait for it rather than racing.
      return yield* lock.withPermits(1)(
        Effect.flatMap(Clock.currentTimeMillis, (at) => {
          const again = fresh(at)
          return again !== undefined ? Effect.succeed(again.credentials) : Effect.map(exchange, (c) => c.credentials)
        })
      )
    })

    // Refreshes ahead of expiry, so a run rarely waits for an exchange.
    yield* Effect.gen(function* () {
      while (true) {
        const now = yield* Clock.currentTimeMillis
        const wait = current === undefined
          ? Duration.seconds(1)
          : Duration.millis(Math.max(0, current.expiresAt - Duration.toMillis(refreshMargin) - now))
        yield* Effect.sleep(wait)
        if (current !== undefined) {
          const at = yield* Clock.currentTimeMillis
          if (fresh(at) === undefined) {
            yield* lock.withPermits(1)(Effect.ignore(exchange))
          }
        }
      }
    }).pipe(Effect.interruptible, Effect.forkScoped)

    return Auth.of({
      state: SubscriptionRef.get(ref),
      changes: ref.changes,
      credentials,
      invalidate: Effect.sync(() => {
        current = undefined
      })
    })
  })

/**
 * Runs `f` with the current credentials; on a 401, exchanges the token again
 * and retries once.
 *
 * @since 0.1.0
 * @category Combinators
 */
export const withCredentials = <A, E extends TamboError, R>(
  auth: Auth.Service,
  f: (credentials: Credentials) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | AuthError, R> =>
  Effect.flatMap(auth.credentials, (credentials) =>
    f(credentials).pipe(
      Effect.catchIf(
        (error) => credentials._tag === "Bearer" && error._tag === "ApiError" && error.status === 401,
        () => Effect.zipRight(auth.invalidate, Effect.flatMap(auth.credentials, f))
      )
    ))

/**
 * @since 0.1.0
 * @category Layers
 */
export const layer: Layer.Layer<Auth, never, TamboConfig | TamboTransport> = Layer.scoped(Auth, make)
