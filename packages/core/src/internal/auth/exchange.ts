/**
 * The token exchange of a `userToken` service and its refresh loop: the state
 * every part shares (`Env`), one exchange against the API, and how its
 * outcome lands in the slot, the published state and the refresh timer.
 * An exchange runs in the service's scope, so a request that gives up does
 * not abort it for the others waiting on it.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberHandle from "effect/FiberHandle"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type { AuthState } from "../../Auth.js"
import { AuthError } from "../../TamboError.js"
import type { TamboTransport } from "../../TamboTransport.js"
import { failedWithoutToken, isRefusal, keptAfterFailedRefresh, type Slot, type Token, tokenOf, toAuthError, type Trigger, untilRefresh } from "./token.js"

/** What the parts of a `userToken` service share. */
export interface Env {
  readonly transport: TamboTransport.Service
  /** The longest a failed refresh waits for the token endpoint's `Retry-After`. */
  readonly maxRetryAfter: Duration.Duration
  /** Bounds the exchanges in flight and the refresh timer. */
  readonly scope: Scope.Scope
  readonly state: SubscriptionRef.SubscriptionRef<AuthState>
  readonly slot: Ref.Ref<Slot>
  /** The subject token each exchange starts with (setUserToken replaces it). */
  readonly userToken: Ref.Ref<Redacted.Redacted<string>>
  /** At most one scheduled refresh: a new token replaces the previous one's timer. */
  readonly refreshTimer: FiberHandle.FiberHandle<void, never>
}

/** The shared state of a service for `userToken`, before its first exchange. */
export const makeEnv = (
  userToken: Redacted.Redacted<string>,
  transport: TamboTransport.Service,
  maxRetryAfter: Duration.Duration
): Effect.Effect<Env, never, Scope.Scope> =>
  Effect.all({
    transport: Effect.succeed(transport),
    maxRetryAfter: Effect.succeed(maxRetryAfter),
    scope: Effect.scope,
    state: SubscriptionRef.make<AuthState>({ status: "exchanging" }),
    slot: Ref.make<Slot>({ _tag: "Empty" }),
    userToken: Ref.make(userToken),
    refreshTimer: FiberHandle.make<void, never>()
  })

/** What an exchange that died says: the defect's message only (it may come from any code). */
const unexpected = (defect: unknown): AuthError =>
  new AuthError({
    reason: "ExchangeFailed",
    message: `Token exchange failed unexpectedly: ${defect instanceof Error ? defect.message : String(defect)}`
  })

/** One exchange of `userToken` for an access token. */
const exchange = (env: Env, trigger: Trigger, userToken: Redacted.Redacted<string>): Effect.Effect<Token, AuthError> =>
  Effect.gen(function* () {
    // Measured before the request: the token may be a little older than it says.
    const startedAt = yield* Clock.currentTimeMillis
    const token = yield* env.transport.exchangeToken(userToken).pipe(
      Effect.mapError(toAuthError),
      // A defect under the transport fails the requests waiting on it, typed, not as a defect.
      Effect.catchAllDefect((defect) => Effect.fail(unexpected(defect)))
    )
    return tokenOf(token.token, token.expiresInSeconds, startedAt)
  }).pipe(
    // A scheduled refresh belongs to no request: it starts a trace of its own.
    Effect.withSpan("Auth.exchange", { attributes: { "tambo.auth.trigger": trigger }, root: trigger === "refresh" })
  )

/**
 * Puts the outcome of the exchange `deferred` stands for in the slot if
 * the slot still waits for that exchange: one of a replaced user token
 * must not overwrite its successor's. Whether it did.
 */
export const putIfCurrent = (
  env: Env,
  deferred: Deferred.Deferred<Token, AuthError>,
  next: Slot
): Effect.Effect<boolean> =>
  Ref.modify(env.slot, (current): readonly [boolean, Slot] =>
    current._tag === "Exchanging" && current.deferred === deferred ? [true, next] : [false, current])

const sameState = (a: AuthState, b: AuthState): boolean =>
  a.status === b.status &&
  (a.status !== "identified" || b.status !== "identified" || a.source === b.source) &&
  (a.status !== "error" || b.status !== "error" || a.error === b.error)

/** Publishes `next` unless the state already says so: a token replaced in the background changes nothing a UI shows. */
export const publish = (env: Env, next: AuthState): Effect.Effect<void> =>
  Effect.flatMap(
    SubscriptionRef.get(env.state),
    (current) => sameState(current, next) ? Effect.void : SubscriptionRef.set(env.state, next)
  )

/** Publishes the token the slot now holds and schedules its refresh. */
const hold = (env: Env, token: Token, now: number): Effect.Effect<void> =>
  Effect.zipRight(
    publish(env, { status: "identified", source: "tokenExchange" }),
    FiberHandle.run(
      env.refreshTimer,
      Effect.interruptible(Effect.delay(refresh(env, token), untilRefresh(token, now)))
    )
  )

/** Holds a new token, publishes it, and schedules its refresh. */
const settleToken = (env: Env, deferred: Deferred.Deferred<Token, AuthError>, token: Token): Effect.Effect<void> =>
  Effect.gen(function* () {
    if (!(yield* putIfCurrent(env, deferred, { _tag: "Ready", token }))) return
    const now = yield* Clock.currentTimeMillis
    yield* hold(env, token, now)
    yield* Effect.logDebug("Tambo access token obtained").pipe(
      Effect.annotateLogs({ "tambo.auth.expires_in_ms": token.expiresAt - now })
    )
  })

/**
 * Holds a failed exchange and publishes it; what the requests waiting on it
 * get. A refusal is final. A refresh that failed for another reason keeps
 * the token it refreshes while that still works (the requests waiting get
 * it, and the refresh is tried again later); otherwise requests fail with it
 * until the next try is due (see `failedWithoutToken`), and the first one
 * after that exchanges again.
 */
const settleError = (
  env: Env,
  deferred: Deferred.Deferred<Token, AuthError>,
  error: AuthError
): Effect.Effect<Exit.Exit<Token, AuthError>> =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const next = yield* Ref.modify(env.slot, (current): readonly [Slot | undefined, Slot] => {
      if (current._tag !== "Exchanging" || current.deferred !== deferred) return [undefined, current]
      const refusal = isRefusal(error)
      const kept = refusal || current.refreshing === undefined
        ? undefined
        : keptAfterFailedRefresh(current.refreshing, now, error, env.maxRetryAfter)
      const slot: Slot = kept !== undefined
        ? { _tag: "Ready", token: kept }
        : refusal
        ? { _tag: "Refused", error }
        : failedWithoutToken(error, current.failures ?? 0, now, env.maxRetryAfter)
      return [slot, slot]
    })
    const annotations = { "tambo.auth.reason": error.reason, "tambo.auth.error": error.message }
    if (next?._tag === "Ready") {
      yield* hold(env, next.token, now)
      yield* Effect.logDebug("Tambo token refresh failed; the current token is kept until it expires").pipe(
        Effect.annotateLogs({ ...annotations, "tambo.auth.retry_in_ms": next.token.refreshAt - now })
      )
      return Exit.succeed(next.token)
    }
    if (next !== undefined) {
      yield* publish(env, { status: "error", error })
      yield* Effect.logDebug("Tambo token exchange failed").pipe(Effect.annotateLogs(annotations))
    }
    return Exit.fail(error)
  })

/** Records the outcome of an exchange, publishes it, and schedules the next refresh; what its waiters get. */
const settle = (
  env: Env,
  deferred: Deferred.Deferred<Token, AuthError>,
  exit: Exit.Exit<Token, AuthError>
): Effect.Effect<Exit.Exit<Token, AuthError>> =>
  Exit.matchEffect(exit, {
    onSuccess: (token) => Effect.as(settleToken(env, deferred, token), exit),
    onFailure: (cause) =>
      Option.match(Cause.failureOption(cause), {
        // Interrupted: the service is closing.
        onNone: () => Effect.as(putIfCurrent(env, deferred, { _tag: "Empty" }), exit),
        onSome: (error) => settleError(env, deferred, error)
      })
  })

/**
 * `exchange` of a token that works for `usableFor` more milliseconds:
 * `exchanging` is published once it has expired, if the exchange is still
 * in flight and the slot still waits for it.
 */
const exchangeWhileHeld = (
  env: Env,
  deferred: Deferred.Deferred<Token, AuthError>,
  trigger: Trigger,
  userToken: Redacted.Redacted<string>,
  usableFor: number
): Effect.Effect<Token, AuthError> => {
  const expired = Effect.flatMap(Ref.get(env.slot), (slot) =>
    slot._tag === "Exchanging" && slot.deferred === deferred ? publish(env, { status: "exchanging" }) : Effect.void)
  return Effect.flatMap(
    Effect.fork(Effect.delay(expired, usableFor)),
    // Stopped before the outcome is settled, so it cannot publish over it.
    (expiry) => Effect.ensuring(exchange(env, trigger, userToken), Fiber.interrupt(expiry))
  )
}

/**
 * Runs an exchange in the service's scope, so a caller that gives up
 * does not abort it for the others waiting on `deferred`. Closing the
 * scope interrupts it. `refreshing`: the token it replaces; while that
 * works, the state stays `identified`.
 */
export const startExchange = (
  env: Env,
  deferred: Deferred.Deferred<Token, AuthError>,
  trigger: Trigger,
  refreshing?: Token | undefined
): Effect.Effect<void> =>
  Effect.flatMap(Effect.zip(Clock.currentTimeMillis, Ref.get(env.userToken)), ([now, userToken]) => {
    // The user token as the exchange starts, read before the fork: a setUserToken before the
    // forked fiber runs starts its own exchange of its token.
    const usableFor = refreshing === undefined ? 0 : refreshing.expiresAt - now
    // Published before the fork: setUserToken is synchronous and says exchanging at once.
    const published = usableFor > 0 ? Effect.void : publish(env, { status: "exchanging" })
    return Effect.zipRight(
      published,
      (usableFor > 0 ? exchangeWhileHeld(env, deferred, trigger, userToken, usableFor) : exchange(env, trigger, userToken)).pipe(
        Effect.exit,
        Effect.flatMap((exit) =>
          Effect.uninterruptible(
            Effect.flatMap(settle(env, deferred, exit), (outcome) => Deferred.done(deferred, outcome))
          )
        ),
        Effect.onInterrupt(() =>
          Effect.zipRight(putIfCurrent(env, deferred, { _tag: "Empty" }), Deferred.interrupt(deferred))
        ),
        Effect.interruptible,
        Effect.forkIn(env.scope),
        Effect.asVoid
      )
    )
  })

/**
 * Starts an exchange whatever the slot holds: the first one, and the first
 * one of a replaced user token. Requests from now on wait for it.
 */
export const restart = (env: Env, trigger: Trigger): Effect.Effect<void> =>
  // Uninterruptible: a slot marked Exchanging must get its exchange, or every request would hang.
  Effect.uninterruptible(Effect.flatMap(Deferred.make<Token, AuthError>(), (deferred) =>
    Effect.zipRight(Ref.set(env.slot, { _tag: "Exchanging", deferred }), startExchange(env, deferred, trigger))))

/** The scheduled refresh of `token`; does nothing when the slot holds another by then. */
const refresh = (env: Env, token: Token): Effect.Effect<void> =>
  // Uninterruptible: a slot marked Exchanging must get its exchange, or every request would hang.
  Effect.uninterruptible(Effect.gen(function* () {
    const deferred = yield* Deferred.make<Token, AuthError>()
    const start = yield* Ref.modify(env.slot, (current): readonly [boolean, Slot] =>
      current._tag === "Ready" && current.token === token
        ? [true, { _tag: "Exchanging", deferred, refreshing: token }]
        : [false, current])
    if (start) yield* startExchange(env, deferred, "refresh", token)
  }))
