/**
 * One `Tambo` service per user, for a backend that acts for many users
 * with one API key. A user's service (its store of threads, its tools, its
 * MCP connections) is made the first time something is done for that user,
 * shared by everything done for them meanwhile, and released once nothing
 * used it for `idleTimeToLive`: what a long-lived process holds is bounded
 * by the users it served lately, not by every user it ever served; with
 * `maxUsers`, by a number too.
 *
 * ```ts
 * const users = yield* TamboUsers.TamboUsers
 * // In a request handler, for the signed-in user of the request:
 * yield* users.run(request.userId, "What's the weather in Paris?").pipe(Stream.runForEach(send))
 * // Or, for a user who signed in with your identity provider, with their token:
 * yield* users.run({ id: request.userId, userToken: request.idToken }, "Hi").pipe(Stream.runForEach(send))
 * ```
 *
 * A run holds its user's service until its stream ends, so neither idleness
 * nor `invalidate` cuts it.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as internal from "./internal/tamboUsers.js"
import type * as Tambo from "./Tambo.js"
import type { ConfigError, TamboError, ToolDefinitionError } from "./TamboError.js"
import type * as Transport from "./TamboTransport.js"

/**
 * A user the pool acts for: a `userKey` (the API trusts the API key's
 * owner to name its users), or the `id` of a user who acts with a
 * `userToken` from your identity provider (exchanged for an access token,
 * as `Tambo.layer`'s `userToken` is). The latest token given for an id is
 * the one its service uses: a rotated token is taken in place.
 *
 * @since 0.2.0
 * @category Models
 */
export type User = string | { readonly id: string; readonly userToken: string | Redacted.Redacted<string> }

/**
 * A user as the pool names them: a `userKey`, or `{ id }` of a user acting
 * with a token.
 *
 * @since 0.2.0
 * @category Models
 */
export type UserName = string | { readonly id: string }

/**
 * @since 0.2.0
 * @category Context
 */
export class TamboUsers extends Context.Tag("@tambo-effect/core/TamboUsers")<TamboUsers, TamboUsers.Service>() {}

/**
 * @since 0.2.0
 */
export declare namespace TamboUsers {
  /**
   * The users' services.
   *
   * @since 0.2.0
   * @category Models
   */
  export interface Service {
    /**
     * The user's `Tambo` service, made if the user has none, held until the
     * scope closes (and for `idleTimeToLive` after, if nothing else holds
     * it). A user given with a new token has their service take it. Fails
     * with a `ConfigError` (`InvalidOption`) for an empty `userKey`, id or
     * token, which the API refuses.
     */
    readonly get: (user: User) => Effect.Effect<Tambo.Tambo.Service, ConfigError | ToolDefinitionError, Scope.Scope>
    /** A run for the user: `get`, then the service's `run`, held for as long as the stream runs. */
    readonly run: (
      user: User,
      message: string | Transport.InputMessage,
      options?: Tambo.RunOptions
    ) => Stream.Stream<Tambo.RunEvent, TamboError>
    /**
     * Forgets the user's service: the next call for the user makes a new
     * one. What holds it (a run in flight) keeps it until done; then it is
     * released.
     */
    readonly invalidate: (user: UserName) => Effect.Effect<void>
    /** The users that have a service now. */
    readonly users: Effect.Effect<ReadonlyArray<UserName>>
  }
}

/**
 * What every user's service is made with: `Tambo.layer`'s options but the
 * user (`userKey`, `userToken`), and how long an unused service is kept.
 *
 * @since 0.2.0
 * @category Models
 */
export interface Options extends Omit<Tambo.Options, "userKey" | "userToken"> {
  /** How long a service nothing holds is kept for its user's next call. Default 5 minutes. */
  readonly idleTimeToLive?: Duration.DurationInput | undefined
  /**
   * At most this many users' services at once. Past it, a user without a
   * service takes the place of the user idle the longest (released as
   * `invalidate` releases it); while every service is in use, the call
   * waits until one is let go (interrupt it to give up). Default: no bound
   * but `idleTimeToLive`. A positive integer, else a `ConfigError`.
   *
   * @since 0.2.0
   */
  readonly maxUsers?: number | undefined
}

/**
 * The service, in the enclosing scope. Closing it interrupts the runs in
 * flight (each is cancelled on the server as any interrupted run is) and
 * waits for them to end, up to 5 seconds, then releases every user's
 * service (their MCP connections closed; the services no one holds close
 * together, so a server slow to end one session holds up no other). The
 * shared options are checked
 * here, so a bad API key or an invalid tool fails at once rather than at
 * each user's first call.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const make: (
  options: Options
) => Effect.Effect<TamboUsers.Service, ConfigError | ToolDefinitionError, Scope.Scope> = internal.make

/**
 * A layer of {@link make}.
 *
 * @since 0.2.0
 * @category Layers
 */
export const layer = (options: Options): Layer.Layer<TamboUsers, ConfigError | ToolDefinitionError> =>
  Layer.scoped(TamboUsers, make(options))
