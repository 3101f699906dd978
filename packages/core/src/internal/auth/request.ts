/**
 * What a request of a `userToken` service gets: the token it holds while it
 * is fresh (and, while a refresh of it is in flight, until it expires), the
 * exchange in flight, the refusal of the last one, the failure of the last
 * one until its next try is due, or a new exchange that concurrent requests
 * share.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type { AuthError } from "../../TamboError.js"
import type { Credentials } from "../../TamboTransport.js"
import { type Env, startExchange } from "./exchange.js"
import type { Slot, Token } from "./token.js"

/** What a request does about the slot it found. */
type Decision =
  | { readonly _tag: "Use"; readonly token: Token }
  | { readonly _tag: "Fail"; readonly error: AuthError }
  | { readonly _tag: "Wait"; readonly deferred: Deferred.Deferred<Token, AuthError> }
  | {
    readonly _tag: "Start"
    readonly deferred: Deferred.Deferred<Token, AuthError>
    readonly refreshing?: Token | undefined
  }

/** A failed exchange's error while its next try is not due yet. */
const stillFailing = (slot: Extract<Slot, { readonly _tag: "Failed" }>, now: number): AuthError | undefined =>
  now < slot.retryAt ? slot.error : undefined

/** Joins the exchange in flight, or starts one unless a fresh token arrived meanwhile. */
const obtain = (env: Env): Effect.Effect<Token, AuthError> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const deferred = yield* Deferred.make<Token, AuthError>()
      const decision = yield* Ref.modify(env.slot, (current): readonly [Decision, Slot] => {
        switch (current._tag) {
          case "Ready": {
            if (now < current.token.refreshAt) return [{ _tag: "Use", token: current.token }, current]
            // Due for refresh: this request starts it, and uses the token meanwhile while it works
            // (kept besides if the refresh fails for a reason worth trying again).
            const slot: Slot = { _tag: "Exchanging", deferred, refreshing: current.token }
            return [{ _tag: "Start", deferred, refreshing: current.token }, slot]
          }
          case "Exchanging":
            return current.refreshing !== undefined && now < current.refreshing.expiresAt
              ? [{ _tag: "Use", token: current.refreshing }, current]
              : [{ _tag: "Wait", deferred: current.deferred }, current]
          case "Refused":
            return [{ _tag: "Fail", error: current.error }, current]
          case "Failed": {
            const error = stillFailing(current, now)
            if (error !== undefined) return [{ _tag: "Fail", error }, current]
            return [{ _tag: "Start", deferred }, { _tag: "Exchanging", deferred, failures: current.failures }]
          }
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
          yield* startExchange(env, decision.deferred, "request", decision.refreshing)
          return decision.refreshing !== undefined && now < decision.refreshing.expiresAt
            ? decision.refreshing
            : yield* restore(Deferred.await(decision.deferred))
      }
    })
  )

/**
 * The credentials for the next request: the fresh token held (or the one a
 * refresh in flight replaces, until it expires), else the exchange in
 * flight, else a new one; the refusal of the last exchange, or its failure
 * until the next try is due.
 */
export const credentials = (env: Env): Effect.Effect<Credentials, AuthError> =>
  Effect.gen(function* () {
    const current = yield* Ref.get(env.slot)
    switch (current._tag) {
      case "Ready": {
        const now = yield* Clock.currentTimeMillis
        if (now < current.token.refreshAt) return current.token.credentials
        break
      }
      case "Exchanging": {
        // A refresh in flight: the token it replaces serves until it expires.
        const now = yield* Clock.currentTimeMillis
        if (current.refreshing !== undefined && now < current.refreshing.expiresAt) return current.refreshing.credentials
        return (yield* Deferred.await(current.deferred)).credentials
      }
      case "Refused":
        return yield* Effect.fail(current.error)
      case "Failed": {
        // The token endpoint failed and its next try is not due: not asked again before then.
        const error = stillFailing(current, yield* Clock.currentTimeMillis)
        if (error !== undefined) return yield* Effect.fail(error)
        break
      }
    }
    return (yield* obtain(env)).credentials
  })
