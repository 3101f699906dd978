/**
 * Who the client acts for, and the credentials each request carries.
 *
 * A `userKey` is sent as is. A `userToken` is exchanged for an access token
 * (RFC 8693, `POST /oauth/token`) as soon as the service starts, refreshed
 * before it expires (30 s before, or at half its lifetime when that is
 * shorter), and exchanged again once when the API answers 401.
 * While the token held is refreshed, requests carry it until it expires
 * (as `@tambo-ai/react` does: the API accepts it until then), so a slow
 * token endpoint holds nothing up. Requests wait for an exchange in flight
 * only when no token that still works is held (the first exchange, one
 * after a 401 or a new user token, a refresh still in flight when the
 * token expired); concurrent requests share one exchange. A 401 to the
 * token a refresh replaces makes the retry wait for that refresh. A
 * refused exchange (a 4xx other than 408 /
 * 429) is an `AuthError` that later requests fail with at once, without
 * asking the API again; it drops the access token held.
 *
 * A refresh that fails otherwise (a 5xx, a 408 or 429, a timeout, no
 * connection) keeps the access token while it has not expired: requests
 * go on getting it, and the refresh is tried again after the token
 * endpoint's `Retry-After` when it sent one (at most `maxRetryAfter`; the
 * `AuthError` carries it as `retryAfter`), else 1 s later, then after
 * twice as long each time (at most 8 s); never later than the token's
 * expiry. With no token that still works held (none yet, or it expired), a
 * failed exchange fails the requests waiting on it with its `AuthError`,
 * and later requests fail with that same error at once, without asking the
 * token endpoint again, until its next try is due (its `Retry-After`, at
 * most `maxRetryAfter`, else the same backoff): the first request after
 * that exchanges again. `setUserToken` and `invalidate()` end the wait.
 *
 * Identity providers rotate user tokens: `setUserToken` takes the new one
 * in place, without rebuilding anything (see there).
 *
 * Tokens are `Redacted` everywhere: they never reach logs, spans or error
 * messages.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as internal from "./internal/auth/service.js"
import * as unauthorized from "./internal/auth/unauthorized.js"
import type { TamboConfig } from "./TamboConfig.js"
import type { AuthError, TamboError } from "./TamboError.js"
import type { Credentials, TamboTransport } from "./TamboTransport.js"

/**
 * The authentication state, as `@tambo-ai/client` names it:
 *
 * - `unauthenticated`: neither `userKey` nor `userToken` is configured;
 * - `identified`: requests can be made, with the `userKey` or an exchanged token
 *   (also while that token is refreshed in the background, or a refresh that
 *   failed for a passing reason is tried again, and the token still works);
 * - `exchanging`: a token exchange is in flight and no token that still works
 *   is held (the first exchange, one after a 401 or a new user token, or a
 *   refresh still in flight when the token held expired); requests wait for it;
 *   with `TamboConfig`'s `deferTokenExchange`, also before the first exchange
 *   starts (the first request that needs a token starts it);
 * - `error`: the last token exchange failed, with the reason, and no token
 *   that still works is held;
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
     * The credentials for the next request: the token held while it works
     * (also while it is refreshed). Without one, waits for the token exchange
     * in flight (or starts one); fails with the `AuthError` of a refused
     * exchange, or of a failed one until its next try is due.
     */
    readonly credentials: Effect.Effect<Credentials, AuthError>
    /**
     * Forgets an access token the API rejected, so the next `credentials`
     * exchanges the user token again. Credentials other than the current
     * token are ignored (a token already replaced is not forgotten twice);
     * the token a refresh in flight replaces is current: once forgotten,
     * requests wait for that refresh. Without an argument, forgets whatever
     * token, refused or failed exchange is cached.
     */
    readonly invalidate: (rejected?: Credentials | undefined) => Effect.Effect<void>
    /**
     * Replaces the user token (the subject token of the exchange), as an
     * identity provider rotates it. The same token again changes nothing.
     * Otherwise the access token of the old one is dropped at once and the
     * new one is exchanged right away: every request that asks for
     * credentials from now on (a new run, a REST call) waits for that
     * exchange and carries its token. What is already under way is left
     * alone: a run in flight goes on as the user it started for, its
     * requests (a tool round's continuation, its cancellation, its end's
     * read of the thread) carrying the credentials it started with until
     * the API refuses them as expired; requests already waiting on an
     * exchange of the old token get its outcome. A refused exchange of the
     * old token is forgotten. Threads in the store stay: to act for another
     * user, make a new client rather than switch its token.
     *
     * Fails with an `AuthError` (`InvalidCredentials`) when the service was
     * not configured with a `userToken` (a `userKey`, or no identity).
     *
     * @since 0.1.0
     */
    readonly setUserToken: (userToken: Redacted.Redacted<string>) => Effect.Effect<void, AuthError>
  }
}

/**
 * Builds the service from the configuration: a `userKey` is used as is, a
 * `userToken` is exchanged in the background right away (and refreshed in
 * the scope's lifetime).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make: Effect.Effect<Auth.Service, never, TamboConfig | TamboTransport | Scope.Scope> = internal.make

/**
 * Runs `f` with the current credentials; when the API answers 401 to an
 * exchanged token, exchanges the user token again and retries once.
 *
 * @since 0.1.0
 * @category Combinators
 */
export const withCredentials: <A, E extends TamboError, R>(
  auth: Auth.Service,
  f: (credentials: Credentials) => Effect.Effect<A, E, R>
) => Effect.Effect<A, E | AuthError, R> = unauthorized.withCredentials

/**
 * Like {@link withCredentials} for a stream: a 401 that comes before the
 * stream emitted anything (the API checks the token before it starts a run)
 * exchanges the user token again and opens the stream once more.
 *
 * @since 0.1.0
 * @category Combinators
 */
export const withCredentialsStream: <A, E extends TamboError, R>(
  auth: Auth.Service,
  f: (credentials: Credentials) => Stream.Stream<A, E, R>
) => Stream.Stream<A, E | AuthError, R> = unauthorized.withCredentialsStream

/**
 * The service, from `TamboConfig` and `TamboTransport`; its scope bounds the
 * background exchange and refreshes.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer: Layer.Layer<Auth, never, TamboConfig | TamboTransport> = Layer.scoped(Auth, make)
