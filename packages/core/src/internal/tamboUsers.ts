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

/** A user the map holds a service for, and how many calls use it now. */
interface Slot {
  readonly id: string
  readonly key: Key
  holders: number
  /** Made, and not yet taken by the call it was made for: not to be evicted in between. */
  fresh: boolean
}

const slotId = (key: Key): string => `${key.kind}:${key.id}`

/** @internal */
export const make = (
  options: Options
): Effect.Effect<TamboUsers.Service, ConfigError | ToolDefinitionError, Scope.Scope> =>
  Effect.gen(function*() {
    const { idleTimeToLive, maxUsers, ...shared } = options
    if (maxUsers !== undefined && !(Number.isInteger(maxUsers) && maxUsers > 0)) {
      return yield* Effect.fail(invalid(`maxUsers must be a positive integer, not ${maxUsers}`))
    }
    yield* check(shared)
    // The users the map holds a service for, the one idle the longest first (a user let go by its
    // last call moves to the end); services no one can take any more but still there: held (after
    // `invalidate`) or closing, until released; users let in past the bound whose service is
    // being made. Together, what `maxUsers` bounds.
    const slots = new Map<string, Slot>()
    const retiring = new Set<Slot>()
    const admitted = new Set<string>()
    // Users a call is evicting another user for, until it is let in.
    const evicting = new Set<string>()
    // Changed when a service is let go or released: calls waiting for room look again.
    const room = yield* SubscriptionRef.make(0)
    const roomChanged = SubscriptionRef.update(room, (n) => n + 1)
    const services = yield* RcMap.make({
      lookup: (key: Key) => {
        const identity = key.kind === "UserKey" ? { userKey: key.id } : { userToken: key.userToken }
        const slot = Effect.acquireRelease(
          Effect.sync(() => {
            const id = slotId(key)
            const previous = slots.get(id)
            if (previous !== undefined) retiring.add(previous)
            const made: Slot = { id, key, holders: 0, fresh: true }
            slots.set(id, made)
            admitted.delete(id)
            return made
          }),
          (made) =>
            Effect.zipRight(
              Effect.sync(() => {
                if (slots.get(made.id) === made) slots.delete(made.id)
                retiring.delete(made)
              }),
              roomChanged
            )
        )
        // Built interruptibly, though callers take services uninterruptibly (see `serviceOf`): the
        // fibers the layer forks (MCP connections, Tambo's MCP server followed) inherit it, and an
        // uninterruptible one would hold the release of the service, and the close, forever.
        return Effect.interruptible(Effect.flatMap(slot, (made) =>
          Effect.map(
            Layer.build(Tambo.layer({ ...shared, ...identity })),
            (context): Services => ({ tambo: Context.get(context, Tambo.Tambo), auth: Context.get(context, Auth.Auth) })
          ).pipe(
            // Run first when the service is released: while it closes (its MCP sessions end) it is
            // no one's to take or evict, and still counts, so its user's next service waits for room.
            Effect.zipLeft(Effect.addFinalizer(() =>
              Effect.sync(() => {
                if (slots.get(made.id) !== made) return
                slots.delete(made.id)
                retiring.add(made)
              })
            ))
          )))
      },
      idleTimeToLive: idleTimeToLive ?? DEFAULT_IDLE_TIME_TO_LIVE
    })

    // Added after the map's own finalizer, so run before it (and after the runs in flight let go,
    // below): the services no one holds close together, so a server slow to end one session holds
    // up no other. The map's finalizer closes the rest, one after the other.
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() =>
        Effect.forEach(
          Array.from(slots.values()).filter((slot) => slot.holders === 0 && !slot.fresh),
          (slot) => RcMap.invalidate(services, slot.key),
          { concurrency: "unbounded", discard: true }
        )
      )
    )

    /** Once `room` changed from what it is now. */
    const waitForRoom = Effect.flatMap(
      SubscriptionRef.get(room),
      (now) => room.changes.pipe(Stream.filter((n) => n !== now), Stream.runHead)
    )

    /**
     * Lets a user without a service in under `maxUsers`: at once when there is room, else in the
     * place of the user idle the longest, else once a service is let go.
     */
    const admit = (id: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (maxUsers === undefined || slots.has(id) || admitted.has(id)) return Effect.void
        // Another call for the user is making room for them: this one waits for it, rather than
        // evicting a second user.
        if (evicting.has(id)) return Effect.zipRight(waitForRoom, admit(id))
        if (slots.size + retiring.size + admitted.size < maxUsers) {
          admitted.add(id)
          return Effect.void
        }
        for (const slot of slots.values()) {
          if (slot.holders === 0 && !slot.fresh) {
            evicting.add(id)
            return RcMap.invalidate(services, slot.key).pipe(
              Effect.zipRight(Effect.suspend(() => {
                evicting.delete(id)
                return admit(id)
              })),
              // Admitted (or given up): the calls for the same user waiting meanwhile look again.
              Effect.ensuring(Effect.suspend(() => {
                evicting.delete(id)
                return roomChanged
              }))
            )
          }
        }
        return Effect.zipRight(waitForRoom, admit(id))
      })

    /**
     * The user's service, held (and counted as in use) until the scope closes. Only the wait for
     * room can be interrupted: a service made is always counted as taken, so it can be evicted.
     */
    const serviceOf = (key: Key): Effect.Effect<Services, ConfigError | ToolDefinitionError, Scope.Scope> => {
      const id = slotId(key)
      return Effect.uninterruptibleMask((restore) => restore(admit(id)).pipe(
        Effect.zipRight(RcMap.get(services, key)),
        Effect.tap(() =>
          Effect.acquireRelease(
            Effect.sync(() => {
              const slot = slots.get(id)
              if (slot !== undefined) {
                slot.holders++
                slot.fresh = false
              }
              return slot
            }),
            (slot) =>
              slot === undefined ? Effect.void : Effect.suspend(() => {
                slot.holders--
                // Idle now: the newest idle user, the last to be evicted.
                if (slot.holders === 0 && slots.get(id) === slot) {
                  slots.delete(id)
                  slots.set(id, slot)
                }
                return roomChanged
              })
          )
        ),
        Effect.ensuring(Effect.sync(() => admitted.delete(id)))
      ))
    }
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
          : Effect.map(serviceOf(new Key("UserKey", user, undefined)), (s) => s.tambo)
      }
      const token = Redacted.isRedacted(user.userToken) ? user.userToken : Redacted.make(user.userToken)
      if (user.id.trim() === "") return Effect.fail(invalid("A user's id must not be empty"))
      if (Redacted.value(token).trim() === "") return Effect.fail(invalid("A userToken must not be empty"))
      return Effect.flatMap(serviceOf(new Key("UserToken", user.id, token)), (s) =>
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
      invalidate: (user) => {
        const key = typeof user === "string" ? new Key("UserKey", user, undefined) : new Key("UserToken", user.id, undefined)
        return Effect.zipRight(
          // A service in use stays until let go, and counts until then; the user's next call makes a new one.
          Effect.sync(() => {
            const slot = slots.get(slotId(key))
            if (slot !== undefined && slot.holders > 0) {
              slots.delete(slot.id)
              retiring.add(slot)
            }
          }),
          RcMap.invalidate(services, key)
        )
      },
      users: Effect.map(RcMap.keys(services), (keys) => keys.map((key) => (key.kind === "UserKey" ? key.id : { id: key.id })))
    }
  })
