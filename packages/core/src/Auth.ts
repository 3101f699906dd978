/**
 * Who the client acts for, and the credentials each request carries.
 *
 * A `userKey` is sent as is. A `userToken` is exchanged for an access token
 * (RFC 8693, `POST /oauth/token`) as soon as the service starts, refreshed
 * before it expires, and exchanged again once when the API answers 401.
 * Requests made while an exchange is in flight wait for it; concurrent
 * requests share one exchange. A refused exchange is an `AuthError` that
 * later requests fail with at once, without asking the API again.
 *
 * Identity providers rotate user tokens: `setUserToken` takes the new one
 * in place, without rebuilding anything (see there).
 *
 * Tokens are `Redacted` everywhere: they never reach logs, spans or error
 * messages.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberHandle from "effect/FiberHandle"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { TamboConfig } from "./TamboConfig.js"
import { AuthError, type TamboError } from "./TamboError.js"
import { type Credentials, TamboTransport } from "./TamboTransport.js"

/**
 * The authentication state, as `@tambo-ai/client` names it:
 *
 * - `unauthenticated`: neither `userKey` nor `userToken` is configured;
 * - `identified`: requests can be made, with the `userKey` or an exchanged token;
 * - `exchanging`: a token exchange is in flight (the first one, a scheduled
 *   refresh, or one after a 401); requests wait for it;
 * - `error`: the last token exchange failed, with the reason;
 * - `invalid`: both `userKey` and `userToken` are configured.
 *
 * `TamboConfig.make` already refuses a configuration with both a `userKey`
 * and a `userToken` (a `ConfigError`), so `invalid` is only reached when a
 * `TamboConfig` is provided directly.
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
    /** The current state. */
    readonly state: Effect.Effect<AuthState>
    /** The current state, then every change. */
    readonly changes: Stream.Stream<AuthState>
    /**
     * The credentials for the next request. Waits for a token exchange in
     * flight (or starts one); fails with the `AuthError` of a refused exchange.
     */
    readonly credentials: Effect.Effect<Credentials, AuthError>
    /**
     * Forgets an access token the API rejected, so the next `credentials`
     * exchanges the user token again. Credentials other than the current
     * token are ignored (a token already replaced is not forgotten twice).
     * Without an argument, forgets whatever token or refused exchange is
     * cached.
     */
    readonly invalidate: (rejected?: Credentials | undefined) => Effect.Effect<void>
    /**
     * Replaces the user token (the subject token of the exchange), as an
     * identity provider rotates it. The same token again changes nothing.
     * Otherwise the access token of the old one is dropped at once and the
     * new one is exchanged right away: every request that asks for
     * credentials from now on (a new run, a REST call, the next tool round
     * of a run in flight) waits for that exchange and carries its token.
     * What is already under way is left alone: a run's open stream goes
     * on, and requests already waiting on an exchange of the old token get
     * its outcome. A refused exchange of the old token is forgotten.
     *
     * Fails with an `AuthError` (`InvalidCredentials`) when the service was
     * not configured with a `userToken` (a `userKey`, or no identity).
     *
     * @since 0.1.0
     */
    readonly setUserToken: (userToken: Redacted.Redacted<string>) => Effect.Effect<void, AuthError>
  }
}

/** An exchanged access token and when to replace it. */
interface Token {
  readonly credentials: Extract<Credentials, { readonly _tag: "Bearer" }>
  /** From then on, `credentials` exchanges again rather than hand it out. */
  readonly refreshAt: number
  readonly expiresAt: number
}

/** What the service holds for a `userToken`. */
type Slot =
  | { readonly _tag: "Empty" }
  | { readonly _tag: "Exchanging"; readonly deferred: Deferred.Deferred<Token, AuthError> }
  | { readonly _tag: "Ready"; readonly token: Token }
  /** A refusal that asking again would not change (a 4xx other than 408 / 429). */
  | { readonly _tag: "Refused"; readonly error: AuthError }

/** Refresh this long before the token expires, or at half its lifetime when it is shorter. */
const refreshMargin = Duration.seconds(30)
/** The soonest a refresh is scheduled after an exchange, so a zero lifetime cannot spin. */
const minimumRefreshDelay = Duration.seconds(1)

const refreshDelayMillis = (lifetimeMillis: number): number =>
  Math.max(lifetimeMillis - Duration.toMillis(refreshMargin), lifetimeMillis / 2)

const isRefusal = (error: AuthError): boolean =>
  error.status !== undefined && error.status >= 400 && error.status < 500 && error.status !== 408 &&
  error.status !== 429

const toAuthError = (error: TamboError): AuthError =>
  error._tag === "AuthError"
    ? error
    : new AuthError({
      reason: "ExchangeFailed",
      // Only the message: a transport error's cause may hold the request.
      message: `Token exchange failed: ${error.message}`,
      ...("status" in error && typeof error.status === "number" ? { status: error.status } : {})
    })

const sameToken = (a: Credentials, b: Credentials): boolean =>
  a._tag === "Bearer" && b._tag === "Bearer" && Redacted.value(a.token) === Redacted.value(b.token)

/** A service whose state never changes: `userKey`, nothing configured, or both. */
const fixed = (state: AuthState, credentials: Effect.Effect<Credentials, AuthError>) =>
  Effect.map(SubscriptionRef.make<AuthState>(state), (ref) =>
    Auth.of({
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

/**
 * Why an exchange ran: at start, on schedule, because a request found no
 * usable token, or because the user token was replaced.
 */
type Trigger = "initial" | "refresh" | "request" | "newUserToken"

const exchanging = (
  initialUserToken: Redacted.Redacted<string>,
  transport: TamboTransport.Service
): Effect.Effect<Auth.Service, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const state = yield* SubscriptionRef.make<AuthState>({ status: "exchanging" })
    const slot = yield* Ref.make<Slot>({ _tag: "Empty" })
    // The subject token each exchange starts with (setUserToken replaces it).
    let userToken = initialUserToken
    // At most one scheduled refresh: a new token replaces the previous one's timer.
    const refreshTimer = yield* FiberHandle.make<void, never>()

    const exchange = (trigger: Trigger): Effect.Effect<Token, AuthError> =>
      Effect.gen(function* () {
        // Measured before the request: the token may be a little older than it says.
        const startedAt = yield* Clock.currentTimeMillis
        const token = yield* Effect.mapError(transport.exchangeToken(userToken), toAuthError)
        const lifetime = Math.max(0, token.expiresInSeconds * 1000)
        return {
          credentials: { _tag: "Bearer", token: token.token },
          refreshAt: startedAt + refreshDelayMillis(lifetime),
          expiresAt: startedAt + lifetime
        } satisfies Token
      }).pipe(
        // A scheduled refresh belongs to no request: it starts a trace of its own.
        Effect.withSpan("Auth.exchange", { attributes: { "tambo.auth.trigger": trigger }, root: trigger === "refresh" })
      )

    // Uninterruptible: a slot marked Exchanging must get its exchange, or every request would hang.
    const refresh = (token: Token): Effect.Effect<void> =>
      Effect.uninterruptible(Effect.gen(function* () {
        const deferred = yield* Deferred.make<Token, AuthError>()
        const start = yield* Ref.modify(slot, (current): readonly [boolean, Slot] =>
          current._tag === "Ready" && current.token === token
            ? [true, { _tag: "Exchanging", deferred }]
            : [false, current])
        if (start) yield* startExchange(deferred, "refresh")
      }))

    /**
     * Puts the outcome of the exchange `deferred` stands for in the slot if
     * the slot still waits for that exchange: one of a replaced user token
     * must not overwrite its successor's. Whether it did.
     */
    const putIfCurrent = (deferred: Deferred.Deferred<Token, AuthError>, next: Slot): Effect.Effect<boolean> =>
      Ref.modify(slot, (current): readonly [boolean, Slot] =>
        current._tag === "Exchanging" && current.deferred === deferred ? [true, next] : [false, current])

    /** Records the outcome of an exchange, publishes it, and schedules the next refresh. */
    const settle = (deferred: Deferred.Deferred<Token, AuthError>, exit: Exit.Exit<Token, AuthError>): Effect.Effect<void> =>
      Exit.matchEffect(exit, {
        onSuccess: (token) =>
          Effect.gen(function* () {
            if (!(yield* putIfCurrent(deferred, { _tag: "Ready", token }))) return
            yield* SubscriptionRef.set(state, { status: "identified", source: "tokenExchange" })
            const now = yield* Clock.currentTimeMillis
            const delay = Duration.max(Duration.millis(token.refreshAt - now), minimumRefreshDelay)
            yield* FiberHandle.run(refreshTimer, Effect.interruptible(Effect.delay(refresh(token), delay)))
            yield* Effect.logDebug("Tambo access token obtained").pipe(
              Effect.annotateLogs({ "tambo.auth.expires_in_ms": token.expiresAt - now })
            )
          }),
        onFailure: (cause) =>
          Option.match(Cause.failureOption(cause), {
            // Interrupted: the service is closing.
            onNone: () => putIfCurrent(deferred, { _tag: "Empty" }),
            onSome: (error) =>
              Effect.gen(function* () {
                // A refusal is final; anything else is tried again by the next request.
                const next: Slot = isRefusal(error) ? { _tag: "Refused", error } : { _tag: "Empty" }
                if (!(yield* putIfCurrent(deferred, next))) return
                yield* SubscriptionRef.set(state, { status: "error", error })
                yield* Effect.logDebug("Tambo token exchange failed").pipe(
                  Effect.annotateLogs({ "tambo.auth.reason": error.reason, "tambo.auth.error": error.message })
                )
              })
          })
      })

    /**
     * Runs an exchange in the service's scope, so a caller that gives up
     * does not abort it for the others waiting on `deferred`. Closing the
     * scope interrupts it.
     */
    const startExchange = (deferred: Deferred.Deferred<Token, AuthError>, trigger: Trigger): Effect.Effect<void> =>
      Effect.zipRight(
        SubscriptionRef.set(state, { status: "exchanging" }),
        exchange(trigger).pipe(
          Effect.exit,
          Effect.flatMap((exit) =>
            Effect.uninterruptible(Effect.zipRight(settle(deferred, exit), Deferred.done(deferred, exit)))
          ),
          Effect.onInterrupt(() =>
            Effect.zipRight(putIfCurrent(deferred, { _tag: "Empty" }), Deferred.interrupt(deferred))
          ),
          Effect.interruptible,
          Effect.forkIn(scope),
          Effect.asVoid
        )
      )

    /** Joins the exchange in flight, or starts one unless a fresh token arrived meanwhile. */
    const obtain: Effect.Effect<Token, AuthError> = Effect.uninterruptibleMask((restore) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const deferred = yield* Deferred.make<Token, AuthError>()
        const decision = yield* Ref.modify(slot, (current): readonly [Decision, Slot] => {
          switch (current._tag) {
            case "Ready":
              if (now < current.token.refreshAt) return [{ _tag: "Use", token: current.token }, current]
              break
            case "Exchanging":
              return [{ _tag: "Wait", deferred: current.deferred }, current]
            case "Refused":
              return [{ _tag: "Fail", error: current.error }, current]
          }
          return [{ _tag: "Start", deferred }, { _tag: "Exchanging", deferred }]
        })
        switch (decision._tag) {
          case "Use":
            return decision.token
          case "Fail":
            return yield* Effect.fail(decision.error)
          case "Wait":
            return yield* restore(Deferred.await(decision.deferred))
          case "Start":
            yield* startExchange(decision.deferred, "request")
            return yield* restore(Deferred.await(decision.deferred))
        }
      }))

    const credentials: Effect.Effect<Credentials, AuthError> = Effect.gen(function* () {
      const current = yield* Ref.get(slot)
      switch (current._tag) {
        case "Ready": {
          const now = yield* Clock.currentTimeMillis
          if (now < current.token.refreshAt) return current.token.credentials
          break
        }
        case "Exchanging":
          return (yield* Deferred.await(current.deferred)).credentials
        case "Refused":
          return yield* Effect.fail(current.error)
      }
      return (yield* obtain).credentials
    })

    // Exchange right away: the first run then rarely waits.
    yield* Effect.uninterruptible(Effect.flatMap(Deferred.make<Token, AuthError>(), (deferred) =>
      Effect.zipRight(Ref.set(slot, { _tag: "Exchanging", deferred }), startExchange(deferred, "initial"))))

    return Auth.of({
      state: SubscriptionRef.get(state),
      changes: state.changes,
      credentials,
      invalidate: (rejected) =>
        Ref.update(slot, (current): Slot => {
          if (rejected === undefined) return current._tag === "Exchanging" ? current : { _tag: "Empty" }
          return current._tag === "Ready" && sameToken(current.token.credentials, rejected)
            ? { _tag: "Empty" }
            : current
        }),
      setUserToken: (next) =>
        Effect.uninterruptible(Effect.suspend(() => {
          if (Redacted.value(next) === Redacted.value(userToken)) return Effect.void
          userToken = next
          // Synchronous (the facade runs it with runSync). The old token's scheduled refresh
          // finds it gone and does nothing; the new token's replaces its timer.
          return Effect.gen(function* () {
            const deferred = yield* Deferred.make<Token, AuthError>()
            yield* Ref.set(slot, { _tag: "Exchanging", deferred })
            yield* startExchange(deferred, "newUserToken")
          })
        }))
    })
  })

type Decision =
  | { readonly _tag: "Use"; readonly token: Token }
  | { readonly _tag: "Fail"; readonly error: AuthError }
  | { readonly _tag: "Wait"; readonly deferred: Deferred.Deferred<Token, AuthError> }
  | { readonly _tag: "Start"; readonly deferred: Deferred.Deferred<Token, AuthError> }

/**
 * Builds the service from the configuration: a `userKey` is used as is, a
 * `userToken` is exchanged in the background right away (and refreshed in
 * the scope's lifetime).
 *
 * @since 0.1.0
 * @category Constructors
 */
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
    return yield* exchanging(config.userToken.value, yield* TamboTransport)
  }
)

const isUnauthorized = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "ApiError" &&
  "status" in error && error.status === 401

/**
 * Runs `f` with the current credentials; when the API answers 401 to an
 * exchanged token, exchanges the user token again and retries once.
 *
 * @since 0.1.0
 * @category Combinators
 */
export const withCredentials = <A, E extends TamboError, R>(
  auth: Auth.Service,
  f: (credentials: Credentials) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | AuthError, R> =>
  Effect.flatMap(auth.credentials, (credentials) =>
    credentials._tag === "Bearer"
      ? Effect.catchIf(
        f(credentials),
        isUnauthorized,
        () => Effect.zipRight(auth.invalidate(credentials), Effect.flatMap(auth.credentials, f))
      )
      : f(credentials))

/**
 * Like {@link withCredentials} for a stream: a 401 that comes before the
 * stream emitted anything (the API checks the token before it starts a run)
 * exchanges the user token again and opens the stream once more.
 *
 * @since 0.1.0
 * @category Combinators
 */
export const withCredentialsStream = <A, E extends TamboError, R>(
  auth: Auth.Service,
  f: (credentials: Credentials) => Stream.Stream<A, E, R>
): Stream.Stream<A, E | AuthError, R> =>
  Stream.unwrap(Effect.map(auth.credentials, (credentials): Stream.Stream<A, E | AuthError, R> => {
    if (credentials._tag !== "Bearer") return f(credentials)
    return Stream.suspend(() => {
      let emitted = false
      return f(credentials).pipe(
        Stream.mapChunks((chunk) => {
          emitted = true
          return chunk
        }),
        Stream.catchAll((error): Stream.Stream<A, E | AuthError, R> =>
          !emitted && isUnauthorized(error)
            ? Stream.unwrap(
              Effect.zipRight(auth.invalidate(credentials), Effect.map(auth.credentials, f))
            )
            : Stream.fail(error)
        )
      )
    })
  }))

/**
 * The service, from `TamboConfig` and `TamboTransport`; its scope bounds the
 * background exchange and refreshes.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer: Layer.Layer<Auth, never, TamboConfig | TamboTransport> = Layer.scoped(Auth, make)
