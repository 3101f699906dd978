/**
 * The `TamboUsers` service: an `RcMap` from user key to the `Tambo`
 * service of `Tambo.layer` for that user, built in the entry's scope.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RcMap from "effect/RcMap"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Tambo from "../Tambo.js"
import * as TamboConfig from "../TamboConfig.js"
import { ConfigError, type ToolDefinitionError } from "../TamboError.js"
import type { Options, TamboUsers } from "../TamboUsers.js"
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

/** @internal */
export const make = (
  options: Options
): Effect.Effect<TamboUsers.Service, ConfigError | ToolDefinitionError, Scope.Scope> =>
  Effect.gen(function*() {
    const { idleTimeToLive, ...shared } = options
    yield* check(shared)
    const services = yield* RcMap.make({
      lookup: (userKey: string) =>
        Effect.map(Layer.build(Tambo.layer({ ...shared, userKey })), Context.get(Tambo.Tambo)),
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
    const get = (userKey: string) =>
      userKey.trim() === ""
        ? Effect.fail(new ConfigError({ reason: "InvalidOption", message: "A userKey must not be empty" }))
        : RcMap.get(services, userKey)
    return {
      get,
      run: (userKey, message, runOptions) =>
        Stream.unwrapScoped(
          Effect.zipRight(
            Effect.acquireRelease(SubscriptionRef.update(runs, (n) => n + 1), () => SubscriptionRef.update(runs, (n) => n - 1)),
            Effect.map(get(userKey), (tambo) => tambo.run(message, runOptions))
          )
        ).pipe(Stream.interruptWhen(Deferred.await(closing))),
      invalidate: (userKey) => RcMap.invalidate(services, userKey),
      users: RcMap.keys(services)
    }
  })
