/**
 * The `TamboUsers` service: an `RcMap` from a user to the services of
 * `Tambo.layer` for that user, built in the entry's scope. A user named by
 * a string acts with it as `userKey`; one given with a user token is keyed
 * by its id, made with the first token given, and rotated to each new one.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Hash from "effect/Hash"
import * as Layer from "effect/Layer"
import * as RcMap from "effect/RcMap"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Auth from "../Auth.js"
import * as Tambo from "../Tambo.js"
import * as TamboConfig from "../TamboConfig.js"
import { ConfigError, type ToolDefinitionError } from "../TamboError.js"
import type { Options, TamboUsers, User } from "../TamboUsers.js"
import * as Tool from "../Tool.js"

const DEFAULT_IDLE_TIME_TO_LIVE = Duration.minutes(5)

/** How long closing waits for the interrupted runs to end (their cancellations are bounded to 3 s). */
const CLOSE_WAIT = Duration.seconds(5)

/** Fails as the shared options would for every user: the configuration, the tools, the components. */
const check = (options: Omit<Options, "idleTimeToLive">): Effect.Effect<void, ConfigError | ToolDefinitionError> =>
  Effect.all([
    // Any valid user stands in: the user is all that differs from one user's layer to the next.
    TamboConfig.make({ ...options, userKey: "user" }),
    Effect.forEach(options.tools ?? [], Tool.resolve, { discard: true }),
    Effect.forEach(options.components ?? [], Tool.toApiComponent, { discard: true })
  ], { discard: true })

/**
 * A user's entry in the map: a user key, or the id of a user who acts with a token. Equal by
 * kind and id only: the token is what the first call for the user gave, for making the service.
 */
class Key implements Equal.Equal {
  constructor(
    readonly kind: "UserKey" | "UserToken",
    readonly id: string,
    readonly userToken: Redacted.Redacted<string> | undefined
  ) {}
  [Equal.symbol](that: Equal.Equal): boolean {
    return that instanceof Key && that.kind === this.kind && that.id === this.id
  }
  [Hash.symbol](): number {
    return Hash.cached(this, Hash.string(`${this.kind}:${this.id}`))
  }
}

/** What a user's entry holds: their `Tambo` service, and its auth to give it a rotated token. */
interface Services {
  readonly tambo: Tambo.Tambo.Service
  readonly auth: Auth.Auth.Service
}

const invalid = (message: string) => new ConfigError({ reason: "InvalidOption", message })

/** @internal */
export const make = (
  options: Options
): Effect.Effect<TamboUsers.Service, ConfigError | ToolDefinitionError, Scope.Scope> =>
  Effect.gen(function*() {
    const { idleTimeToLive, ...shared } = options
    yield* check(shared)
    const services = yield* RcMap.make({
      lookup: (key: Key) => {
        const identity = key.kind === "UserKey" ? { userKey: key.id } : { userToken: key.userToken }
        return Effect.map(
          Layer.build(Tambo.layer({ ...shared, ...identity })),
          (context): Services => ({ tambo: Context.get(context, Tambo.Tambo), auth: Context.get(context, Auth.Auth) })
        )
      },
      idleTimeToLive: idleTimeToLive ?? DEFAULT_IDLE_TIME_TO_LIVE
    })
    // Added after the map's own finalizer, so run before it: the runs in flight are interrupted and
    // let go of their services (each run's cancellation on the server included), then the map
    // releases every service.
    const runs = yield* SubscriptionRef.make(0)
    const closing = yield* Deferred.make<void>()
    yield* Effect.addFinalizer(() =>
      Deferred.interrupt(closing).pipe(
        Effect.zipRight(runs.changes.pipe(Stream.takeUntil((active) => active === 0), Stream.runDrain)),
        Effect.timeout(CLOSE_WAIT),
        Effect.ignore
      )
    )

    // The API refuses an empty user key: refused here, before a service is made for it.
    const get = (user: User): Effect.Effect<Tambo.Tambo.Service, ConfigError | ToolDefinitionError, Scope.Scope> => {
      if (typeof user === "string") {
        return user.trim() === ""
          ? Effect.fail(invalid("A userKey must not be empty"))
          : Effect.map(RcMap.get(services, new Key("UserKey", user, undefined)), (s) => s.tambo)
      }
      const token = Redacted.isRedacted(user.userToken) ? user.userToken : Redacted.make(user.userToken)
      if (user.id.trim() === "") return Effect.fail(invalid("A user's id must not be empty"))
      if (Redacted.value(token).trim() === "") return Effect.fail(invalid("A userToken must not be empty"))
      return Effect.flatMap(RcMap.get(services, new Key("UserToken", user.id, token)), (s) =>
        // The same token again changes nothing; a new one is exchanged before the next request.
        // A service made with a token always takes another: the failure cannot happen.
        Effect.as(Effect.orDie(s.auth.setUserToken(token)), s.tambo))
    }

    return {
      get,
      run: (user, message, runOptions) =>
        Stream.unwrapScoped(
          Effect.zipRight(
            Effect.acquireRelease(SubscriptionRef.update(runs, (n) => n + 1), () => SubscriptionRef.update(runs, (n) => n - 1)),
            Effect.map(get(user), (tambo) => tambo.run(message, runOptions))
          )
        ).pipe(Stream.interruptWhen(Deferred.await(closing))),
      invalidate: (user) =>
        RcMap.invalidate(
          services,
          typeof user === "string" ? new Key("UserKey", user, undefined) : new Key("UserToken", user.id, undefined)
        ),
      users: Effect.map(RcMap.keys(services), (keys) => keys.map((key) => (key.kind === "UserKey" ? key.id : { id: key.id })))
    }
  })
