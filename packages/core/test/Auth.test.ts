import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Auth from "../src/Auth.js"
import * as TamboConfig from "../src/TamboConfig.js"
import { ApiError, AuthError, type TamboError, TransportError } from "../src/TamboError.js"
import type { AccessToken, Credentials } from "../src/TamboTransport.js"
import { config, transport } from "./auth/endpoint.js"
import { fields } from "./helpers.js"

const USER_TOKEN = "subject-token-of-user-1"

/**
 * A token endpoint double: issues `token-1`, `token-2`, ... lasting
 * `expiresInSeconds`, records the subject tokens it was given, and answers
 * the n-th exchange with `outcomes[n]` when given.
 */
const makeIssuer = (options: {
  readonly expiresInSeconds?: number
  readonly outcomes?: ReadonlyArray<"ok" | AuthError | ApiError | TransportError | { readonly defect: unknown }>
  readonly gate?: Deferred.Deferred<void>
  /** The first exchange that waits for `gate`; default 1. */
  readonly gatedFrom?: number
  /** The last exchange that waits for `gate`; default all. */
  readonly gatedTo?: number
} = {}) => {
  const subjects: Array<string> = []
  const exchangeToken = (subject: Redacted.Redacted<string>): Effect.Effect<AccessToken, TamboError> =>
    Effect.suspend(() => {
      subjects.push(Redacted.value(subject))
      const n = subjects.length
      const outcome = options.outcomes?.[n - 1] ?? "ok"
      const answer: Effect.Effect<AccessToken, TamboError> = outcome === "ok"
        ? Effect.succeed({ token: Redacted.make(`token-${n}`), expiresInSeconds: options.expiresInSeconds ?? 3600 })
        : "defect" in outcome
        ? Effect.die(outcome.defect)
        : Effect.fail(outcome)
      return options.gate === undefined || n < (options.gatedFrom ?? 1) || n > (options.gatedTo ?? Infinity)
        ? answer
        : Effect.zipRight(Deferred.await(options.gate), answer)
    })
  return { subjects, layer: transport(exchangeToken) }
}

const authLayer = (
  identity: { readonly userKey?: string; readonly userToken?: string },
  issuer: ReturnType<typeof makeIssuer>
) => Auth.layer.pipe(Layer.provide(Layer.merge(config(identity), issuer.layer)))

const tokenOf = (credentials: Credentials) =>
  credentials._tag === "Bearer" ? Redacted.value(credentials.token) : `userKey:${credentials.userKey}`

const current = Effect.flatMap(Auth.Auth, (auth) => Effect.map(auth.credentials, tokenOf))

const unauthorized = new ApiError({ reason: "Unauthorized", message: "Invalid bearer token", status: 401, retryable: false })

/** A state in a word (an error's cause is too deep for a readable diff). */
const sourceOf = (state: Auth.AuthState) =>
  state.status === "identified" ? `identified by ${state.source}` : state.status === "error" ? `error: ${state.error.message}` : state.status

/** Lets forked fibers run until they wait on something. */
const settle = Effect.repeatN(Effect.yieldNow(), 20)

/**
 * A service whose token-1 lasts 100 s, with its refresh, due at 70 s, in flight and held until
 * `release`: `test` runs from then on.
 */
const duringHeldRefresh = <A, E>(
  test: (held: { readonly issuer: ReturnType<typeof makeIssuer>; readonly release: Effect.Effect<boolean> }) => Effect.Effect<A, E, Auth.Auth>
) =>
  Effect.gen(function* () {
    const gate = yield* Deferred.make<void>()
    const issuer = makeIssuer({ expiresInSeconds: 100, gate, gatedFrom: 2 })
    return yield* Effect.gen(function* () {
      expect(yield* current).toBe("token-1")
      yield* TestClock.adjust(Duration.seconds(70))
      yield* settle
      expect(issuer.subjects).toHaveLength(2)
      return yield* test({ issuer, release: Deferred.succeed(gate, undefined) })
    }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
  })

describe("Auth", () => {
  describe("fixed identities", () => {
    it.effect("a userKey identifies at once and never exchanges", () => {
      const issuer = makeIssuer()
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        expect(yield* auth.state).toEqual({ status: "identified", source: "userKey" })
        expect(yield* auth.credentials).toEqual({ _tag: "UserKey", userKey: "user-1" })
        expect(issuer.subjects).toEqual([])
      }).pipe(Effect.provide(authLayer({ userKey: "user-1" }, issuer)))
    })

    it.effect("without an identity it is unauthenticated and requests fail with AuthError", () => {
      const issuer = makeIssuer()
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        expect(yield* auth.state).toEqual({ status: "unauthenticated" })
        const error = yield* Effect.flip(auth.credentials)
        expect(error).toBeInstanceOf(AuthError)
        expect(error.reason).toBe("Unauthenticated")
        expect(issuer.subjects).toEqual([])
      }).pipe(Effect.provide(authLayer({}, issuer)))
    })

    it.effect("both a userKey and a userToken are invalid: no exchange, requests fail", () => {
      const issuer = makeIssuer()
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        expect(yield* auth.state).toEqual({ status: "invalid" })
        const error = yield* Effect.flip(auth.credentials)
        expect(error.reason).toBe("InvalidCredentials")
        expect(issuer.subjects).toEqual([])
      }).pipe(Effect.provide(authLayer({ userKey: "user-1", userToken: USER_TOKEN }, issuer)))
    })

    it.effect("TamboConfig refuses both before Auth sees them", () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(TamboConfig.make({ apiKey: "k", userKey: "u", userToken: "t" }))
        expect(error._tag).toBe("ConfigError")
        expect(error.reason).toBe("ConflictingIdentity")
      }))
  })

  describe("token exchange", () => {
    it.effect("exchanges the user token at start: exchanging, then identified", () =>
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        const issuer = makeIssuer({ gate })
        yield* Effect.gen(function* () {
          const auth = yield* Auth.Auth
          const changes = yield* Effect.fork(Stream.runCollect(Stream.take(auth.changes, 2)))
          yield* settle
          expect(yield* auth.state).toEqual({ status: "exchanging" })
          expect(issuer.subjects).toEqual([USER_TOKEN])
          yield* Deferred.succeed(gate, undefined)
          expect(yield* current).toBe("token-1")
          expect(Chunk.toReadonlyArray(yield* Fiber.join(changes))).toEqual([
            { status: "exchanging" },
            { status: "identified", source: "tokenExchange" }
          ])
          expect(yield* auth.state).toEqual({ status: "identified", source: "tokenExchange" })
        }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
      }))

    it.effect("requests wait for the exchange in flight and share it", () =>
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        const issuer = makeIssuer({ gate })
        yield* Effect.gen(function* () {
          const waiting = yield* Effect.fork(
            Effect.all(Array.from({ length: 10 }, () => current), { concurrency: "unbounded" })
          )
          yield* settle
          expect(waiting.unsafePoll()).toBeNull()
          yield* Deferred.succeed(gate, undefined)
          expect(yield* Fiber.join(waiting)).toEqual(Array.from({ length: 10 }, () => "token-1"))
          expect(issuer.subjects).toHaveLength(1)
        }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
      }))

    it.effect("refreshes 30 seconds before expiry, on schedule", () => {
      const issuer = makeIssuer({ expiresInSeconds: 3600 })
      return Effect.gen(function* () {
        expect(yield* current).toBe("token-1")
        yield* TestClock.adjust(Duration.seconds(3569))
        expect(issuer.subjects).toHaveLength(1)
        expect(yield* current).toBe("token-1")
        yield* TestClock.adjust(Duration.seconds(1))
        yield* settle
        expect(issuer.subjects).toHaveLength(2)
        expect(yield* current).toBe("token-2")
        // The next refresh counts from the new token.
        yield* TestClock.adjust(Duration.seconds(3569))
        expect(issuer.subjects).toHaveLength(2)
        yield* TestClock.adjust(Duration.seconds(1))
        yield* settle
        expect(yield* current).toBe("token-3")
        expect(issuer.subjects).toEqual([USER_TOKEN, USER_TOKEN, USER_TOKEN])
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("a short-lived token is refreshed at half its lifetime", () => {
      const issuer = makeIssuer({ expiresInSeconds: 40 })
      return Effect.gen(function* () {
        expect(yield* current).toBe("token-1")
        yield* TestClock.adjust(Duration.seconds(19))
        expect(issuer.subjects).toHaveLength(1)
        yield* TestClock.adjust(Duration.seconds(1))
        yield* settle
        expect(issuer.subjects).toHaveLength(2)
        expect(yield* current).toBe("token-2")
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("a request during a refresh gets the token held while it works, and waits for the refresh once it expired", () =>
      duringHeldRefresh(({ issuer, release }) =>
        Effect.gen(function* () {
          // token-1 works until 100 s.
          expect(yield* current).toBe("token-1")
          yield* TestClock.adjust(Duration.seconds(29))
          expect(yield* current).toBe("token-1")
          yield* TestClock.adjust(Duration.seconds(1))
          const request = yield* Effect.fork(current)
          yield* settle
          expect(request.unsafePoll()).toBeNull()
          yield* release
          expect(yield* Fiber.join(request)).toBe("token-2")
          expect(issuer.subjects).toHaveLength(2)
        })))

    it.effect("a 401 to the token held during a refresh waits for the refresh and retries with its token", () =>
      duringHeldRefresh(({ issuer, release }) =>
        Effect.gen(function* () {
          const auth = yield* Auth.Auth
          const seen: Array<string> = []
          const call = yield* Effect.fork(Auth.withCredentials(auth, (c) => {
            seen.push(tokenOf(c))
            return tokenOf(c) === "token-1" ? Effect.fail(unauthorized) : Effect.succeed("ok")
          }))
          yield* settle
          expect(call.unsafePoll()).toBeNull()
          expect(yield* auth.state).toEqual({ status: "exchanging" })
          yield* release
          expect(yield* Fiber.join(call)).toBe("ok")
          expect(seen).toEqual(["token-1", "token-2"])
          expect(issuer.subjects).toHaveLength(2)
        })))

    it.effect("a refresh of a token that still works stays identified: nothing is published until a token lands", () =>
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        const issuer = makeIssuer({ expiresInSeconds: 100, gate, gatedFrom: 2 })
        yield* Effect.gen(function* () {
          const auth = yield* Auth.Auth
          expect(yield* current).toBe("token-1")
          const seen: Array<string> = []
          yield* Effect.fork(Stream.runForEach(Stream.drop(auth.changes, 1), (s) => Effect.sync(() => seen.push(sourceOf(s)))))
          yield* settle
          // The refresh at 70 s hangs: the token held works until 100 s.
          yield* TestClock.adjust(Duration.seconds(70))
          yield* settle
          expect(issuer.subjects).toHaveLength(2)
          expect(sourceOf(yield* auth.state)).toBe("identified by tokenExchange")
          yield* TestClock.adjust(Duration.seconds(29))
          yield* settle
          expect(sourceOf(yield* auth.state)).toBe("identified by tokenExchange")
          yield* Deferred.succeed(gate, undefined)
          yield* settle
          expect(sourceOf(yield* auth.state)).toBe("identified by tokenExchange")
          expect(seen).toEqual([])
        }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
      }))

    it.effect("a refresh still in flight when the token held expires says exchanging from then on", () =>
      duringHeldRefresh(({ release }) =>
        Effect.gen(function* () {
          const auth = yield* Auth.Auth
          expect(sourceOf(yield* auth.state)).toBe("identified by tokenExchange")
          yield* TestClock.adjust(Duration.seconds(30))
          yield* settle
          expect(yield* auth.state).toEqual({ status: "exchanging" })
          yield* release
          expect(yield* current).toBe("token-2")
          expect(yield* auth.state).toEqual({ status: "identified", source: "tokenExchange" })
        })))

    it.effect("a request that gives up does not abort the exchange the others wait for", () =>
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        const issuer = makeIssuer({ gate })
        yield* Effect.gen(function* () {
          const impatient = yield* Effect.fork(current)
          const patient = yield* Effect.fork(current)
          yield* settle
          yield* Fiber.interrupt(impatient)
          yield* Deferred.succeed(gate, undefined)
          expect(yield* Fiber.join(patient)).toBe("token-1")
          expect(yield* current).toBe("token-1")
          expect(issuer.subjects).toHaveLength(1)
        }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
      }))

    it.effect("closing the layer interrupts an exchange in flight", () =>
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        const issuer = makeIssuer({ gate })
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(authLayer({ userToken: USER_TOKEN }, issuer), scope)
        const waiting = yield* Effect.fork(Effect.provide(current, context))
        yield* settle
        yield* Scope.close(scope, Exit.void)
        const exit = yield* Fiber.await(waiting)
        expect(Exit.isInterrupted(exit)).toBe(true)
      }))

    it.effect("closing the layer stops the scheduled refresh", () => {
      const issuer = makeIssuer({ expiresInSeconds: 60 })
      return Effect.gen(function* () {
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(authLayer({ userToken: USER_TOKEN }, issuer), scope)
        expect(yield* Effect.provide(current, context)).toBe("token-1")
        yield* Scope.close(scope, Exit.void)
        yield* TestClock.adjust(Duration.hours(2))
        yield* settle
        expect(issuer.subjects).toHaveLength(1)
      })
    })
  })

  describe("failed exchanges", () => {
    const refused = new AuthError({
      reason: "ExchangeFailed",
      message: "Token exchange failed: Token has expired",
      status: 401
    })

    it.effect("a refused exchange is an AuthError with its reason, and later requests fail at once", () => {
      const issuer = makeIssuer({ outcomes: [refused] })
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const error = yield* Effect.flip(auth.credentials)
        expect(fields(error)).toEqual(fields(refused))
        const state = yield* auth.state
        expect(state.status === "error" && fields(state.error)).toEqual(fields(refused))
        // Fails fast: the API is not asked again.
        expect(fields(yield* Effect.flip(auth.credentials))).toEqual(fields(refused))
        expect(issuer.subjects).toHaveLength(1)
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    // A failed connection, or a defect under the transport (the SDK threw): the same typed ending.
    const failures = [
      {
        what: "a failed connection is an AuthError too",
        outcome: new TransportError({ reason: "Connect", message: "connect ECONNREFUSED" }),
        says: "connect ECONNREFUSED"
      },
      {
        what: "an exchange that dies (a defect under the transport) is an AuthError, published",
        outcome: { defect: new Error("the SDK threw") },
        says: "the SDK threw"
      }
    ]
    for (const { outcome, says, what } of failures) {
      it.effect(`${what}, and the first request a second later exchanges again`, () => {
        const issuer = makeIssuer({ outcomes: [outcome] })
        return Effect.gen(function* () {
          const auth = yield* Auth.Auth
          const error = yield* Effect.flip(auth.credentials)
          expect(error).toBeInstanceOf(AuthError)
          expect(error.reason).toBe("ExchangeFailed")
          expect(error.message).toContain(says)
          expect((yield* auth.state).status).toBe("error")
          yield* TestClock.adjust(Duration.seconds(1))
          expect(yield* current).toBe("token-2")
          expect(yield* auth.state).toEqual({ status: "identified", source: "tokenExchange" })
          expect(issuer.subjects).toHaveLength(2)
        }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
      })
    }

    const unavailable = new ApiError({ reason: "ServerError", message: "Unavailable", status: 503, retryable: true })

    it.effect("with no token held, a 503 fails requests at once with its AuthError for a backoff, without asking the endpoint again", () => {
      const issuer = makeIssuer({ outcomes: [unavailable, unavailable, "ok"] })
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const first = yield* Effect.flip(auth.credentials)
        expect(first.status).toBe(503)
        // Retried UIs and many components asking at once: the endpoint is not asked again.
        const again = yield* Effect.all([Effect.flip(auth.credentials), Effect.flip(auth.credentials)], { concurrency: "unbounded" })
        expect(again).toEqual([first, first])
        expect(issuer.subjects).toHaveLength(1)
        const state = yield* auth.state
        expect(state.status === "error" && state.error).toBe(first)
        // A second later the first request exchanges again; it fails too: the next wait is twice as long.
        yield* TestClock.adjust(Duration.seconds(1))
        const second = yield* Effect.flip(auth.credentials)
        expect(second.status).toBe(503)
        expect(second).not.toBe(first)
        expect(issuer.subjects).toHaveLength(2)
        yield* TestClock.adjust(Duration.seconds(1))
        expect(yield* Effect.flip(auth.credentials)).toBe(second)
        expect(issuer.subjects).toHaveLength(2)
        yield* TestClock.adjust(Duration.seconds(1))
        expect(yield* current).toBe("token-3")
        expect(yield* auth.state).toEqual({ status: "identified", source: "tokenExchange" })
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("with no token held, a 429's Retry-After holds requests off until then, at most maxRetryAfter", () => {
      const slowDown = (seconds: number) =>
        new ApiError({ reason: "RateLimited", message: "Slow down", status: 429, retryable: true, retryAfter: seconds * 1000 })
      // The test configuration's maxRetryAfter is 5 s.
      const issuer = makeIssuer({ outcomes: [slowDown(3), slowDown(60), "ok"] })
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const first = yield* Effect.flip(auth.credentials)
        expect(first.retryAfter).toBe(3000)
        yield* TestClock.adjust(Duration.seconds(2))
        expect(yield* Effect.flip(auth.credentials)).toBe(first)
        expect(issuer.subjects).toHaveLength(1)
        yield* TestClock.adjust(Duration.seconds(1))
        expect((yield* Effect.flip(auth.credentials)).retryAfter).toBe(60_000)
        expect(issuer.subjects).toHaveLength(2)
        yield* TestClock.adjust(Duration.seconds(4))
        expect((yield* Effect.flip(auth.credentials)).status).toBe(429)
        expect(issuer.subjects).toHaveLength(2)
        yield* TestClock.adjust(Duration.seconds(1))
        expect(yield* current).toBe("token-3")
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("a new user token, or invalidate, during the backoff of a failed exchange exchanges again at once", () => {
      const issuer = makeIssuer({ outcomes: [unavailable, "ok", unavailable, "ok"] })
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        expect((yield* Effect.flip(auth.credentials)).status).toBe(503)
        yield* auth.setUserToken(Redacted.make("subject-token-of-user-1-rotated"))
        expect(yield* current).toBe("token-2")
        yield* auth.invalidate()
        expect((yield* Effect.flip(auth.credentials)).status).toBe(503)
        yield* auth.invalidate()
        expect(yield* current).toBe("token-4")
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("a refresh that times out keeps the token that still works; the next try replaces it", () => {
      const issuer = makeIssuer({ expiresInSeconds: 100, outcomes: ["ok", new TransportError({ reason: "Timeout", message: "timed out" })] })
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        expect(yield* current).toBe("token-1")
        // Refreshed at 70 s; it fails.
        yield* TestClock.adjust(Duration.seconds(70))
        yield* settle
        expect(issuer.subjects).toHaveLength(2)
        expect(sourceOf(yield* auth.state)).toBe("identified by tokenExchange")
        expect(yield* current).toBe("token-1")
        // Requests do not ask the endpoint again: the refresh is tried again on its own, a little later.
        expect(issuer.subjects).toHaveLength(2)
        yield* TestClock.adjust(Duration.seconds(1))
        yield* settle
        expect(issuer.subjects).toHaveLength(3)
        expect(yield* current).toBe("token-3")
        expect(sourceOf(yield* auth.state)).toBe("identified by tokenExchange")
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("a request during a refresh that fails with a 503 gets the token that still works without waiting", () =>
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        const issuer = makeIssuer({ expiresInSeconds: 100, outcomes: ["ok", unavailable], gate, gatedFrom: 2, gatedTo: 2 })
        yield* Effect.gen(function* () {
          const auth = yield* Auth.Auth
          expect(yield* current).toBe("token-1")
          yield* TestClock.adjust(Duration.seconds(70))
          yield* settle
          expect(issuer.subjects).toHaveLength(2)
          expect(yield* current).toBe("token-1")
          yield* Deferred.succeed(gate, undefined)
          yield* settle
          expect(yield* current).toBe("token-1")
          expect(sourceOf(yield* auth.state)).toBe("identified by tokenExchange")
          expect(issuer.subjects).toHaveLength(2)
        }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
      }))

    it.effect("while the refresh keeps failing the token is used until it expires, then requests fail with the AuthError", () => {
      const issuer = makeIssuer({ expiresInSeconds: 100, outcomes: ["ok", ...Array.from({ length: 20 }, () => unavailable)] })
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        expect(yield* current).toBe("token-1")
        yield* TestClock.adjust(Duration.seconds(70))
        yield* settle
        // Tried again with a backoff, on the clock, never past the expiry.
        for (let second = 70; second < 99; second++) {
          expect(yield* current).toBe("token-1")
          yield* TestClock.adjust(Duration.seconds(1))
          yield* settle
        }
        const tries = issuer.subjects.length - 1
        expect(tries).toBeGreaterThan(2)
        expect(tries).toBeLessThan(10)
        expect(yield* current).toBe("token-1")
        // Expired at 100 s: the last try fails, and so do requests.
        yield* TestClock.adjust(Duration.seconds(1))
        yield* settle
        const state = yield* auth.state
        expect(state.status === "error" && state.error.status).toBe(503)
        const error = yield* Effect.flip(auth.credentials)
        expect(error).toBeInstanceOf(AuthError)
        expect(error.status).toBe(503)
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("through a refresh outage the state stays identified until the token expires", () => {
      const issuer = makeIssuer({ expiresInSeconds: 100, outcomes: ["ok", ...Array.from({ length: 20 }, () => unavailable)] })
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        expect(yield* current).toBe("token-1")
        const seen: Array<string> = []
        yield* Effect.fork(Stream.runForEach(Stream.drop(auth.changes, 1), (s) => Effect.sync(() => seen.push(s.status))))
        yield* settle
        for (let second = 0; second < 100; second++) {
          yield* TestClock.adjust(Duration.seconds(1))
          yield* settle
        }
        expect(issuer.subjects.length).toBeGreaterThan(3)
        // At 100 s the token held expired: the last try has nothing to fall back on.
        expect(seen).toEqual(["exchanging", "error"])
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("a refresh answered 429 with Retry-After is tried again when the server said, at most maxRetryAfter later", () => {
      const slowDown = (seconds: number) =>
        new ApiError({ reason: "RateLimited", message: "Slow down", status: 429, retryable: true, retryAfter: seconds * 1000 })
      // The test configuration's maxRetryAfter is 5 s.
      const issuer = makeIssuer({ expiresInSeconds: 100, outcomes: ["ok", slowDown(3), slowDown(60)] })
      return Effect.gen(function* () {
        expect(yield* current).toBe("token-1")
        yield* TestClock.adjust(Duration.seconds(70))
        yield* settle
        expect(issuer.subjects).toHaveLength(2)
        // Not 1 s later (the backoff) but 3 s, as the server asked.
        yield* TestClock.adjust(Duration.seconds(2))
        yield* settle
        expect(issuer.subjects).toHaveLength(2)
        yield* TestClock.adjust(Duration.seconds(1))
        yield* settle
        expect(issuer.subjects).toHaveLength(3)
        // It asks for 60 s: waited for 5 s only.
        yield* TestClock.adjust(Duration.seconds(4))
        yield* settle
        expect(issuer.subjects).toHaveLength(3)
        expect(yield* current).toBe("token-1")
        yield* TestClock.adjust(Duration.seconds(1))
        yield* settle
        expect(issuer.subjects).toHaveLength(4)
        expect(yield* current).toBe("token-4")
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("a Retry-After past the token's expiry is tried again when the token expires", () => {
      const slowDown = new ApiError({ reason: "ServerError", message: "Unavailable", status: 503, retryable: true, retryAfter: 5000 })
      // Refreshed at 19 s of a 38 s token; tried again 1, 2, 4, 8 s later (at 34 s), which asks for 5 s.
      const issuer = makeIssuer({ expiresInSeconds: 38, outcomes: ["ok", unavailable, unavailable, unavailable, unavailable, slowDown] })
      return Effect.gen(function* () {
        expect(yield* current).toBe("token-1")
        for (const [second, tries] of [[19, 2], [20, 3], [22, 4], [26, 5], [34, 6], [37, 6], [38, 7]] as const) {
          yield* TestClock.setTime(second * 1000)
          yield* settle
          expect(issuer.subjects, `at ${second} s`).toHaveLength(tries)
        }
        expect(yield* current).toBe("token-7")
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("a refresh refused with a 401 drops the token at once: requests fail with the refusal", () => {
      const issuer = makeIssuer({ expiresInSeconds: 100, outcomes: ["ok", refused] })
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        expect(yield* current).toBe("token-1")
        yield* TestClock.adjust(Duration.seconds(70))
        yield* settle
        const state = yield* auth.state
        expect(state.status === "error" && fields(state.error)).toEqual(fields(refused))
        expect(fields(yield* Effect.flip(auth.credentials))).toEqual(fields(refused))
        yield* TestClock.adjust(Duration.seconds(60))
        yield* settle
        expect(issuer.subjects).toHaveLength(2)
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("a token kept through a failed refresh is still dropped by a 401 and by a new user token", () => {
      const issuer = makeIssuer({ expiresInSeconds: 100, outcomes: ["ok", unavailable] })
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        expect(yield* current).toBe("token-1")
        yield* TestClock.adjust(Duration.seconds(70))
        yield* settle
        const seen: Array<string> = []
        const result = yield* Auth.withCredentials(auth, (c) => {
          seen.push(tokenOf(c))
          return tokenOf(c) === "token-1" ? Effect.fail(unauthorized) : Effect.succeed("ok")
        })
        expect(result).toBe("ok")
        expect(seen).toEqual(["token-1", "token-3"])
        yield* auth.setUserToken(Redacted.make("subject-token-of-user-1-rotated"))
        expect(yield* current).toBe("token-4")
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })
  })

  describe("setUserToken", () => {
    const NEW_TOKEN = "subject-token-of-user-1-rotated"

    it.effect("drops the old access token at once; the next request waits for the new subject's exchange", () =>
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        const issuer = makeIssuer({ gate, gatedFrom: 2 })
        yield* Effect.gen(function* () {
          const auth = yield* Auth.Auth
          expect(yield* current).toBe("token-1")
          yield* auth.setUserToken(Redacted.make(NEW_TOKEN))
          expect(yield* auth.state).toEqual({ status: "exchanging" })
          const request = yield* Effect.fork(current)
          yield* settle
          expect(request.unsafePoll()).toBeNull()
          expect(issuer.subjects).toEqual([USER_TOKEN, NEW_TOKEN])
          yield* Deferred.succeed(gate, undefined)
          expect(yield* Fiber.join(request)).toBe("token-2")
          expect(yield* auth.state).toEqual({ status: "identified", source: "tokenExchange" })
          // Refreshes and re-exchanges after a 401 use the new subject token too.
          yield* auth.invalidate()
          expect(yield* current).toBe("token-3")
          expect(issuer.subjects).toEqual([USER_TOKEN, NEW_TOKEN, NEW_TOKEN])
        }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
      }))

    it.effect("the same subject token again changes nothing", () => {
      const issuer = makeIssuer()
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        expect(yield* current).toBe("token-1")
        yield* auth.setUserToken(Redacted.make(USER_TOKEN))
        expect(yield* current).toBe("token-1")
        expect(issuer.subjects).toEqual([USER_TOKEN])
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("an exchange of the old subject still in flight does not replace the new one", () =>
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        // The first exchange (old subject) waits; the second (new subject) answers at once.
        const issuer = makeIssuer({ gate, gatedTo: 1 })
        yield* Effect.gen(function* () {
          const auth = yield* Auth.Auth
          yield* settle
          expect(issuer.subjects).toEqual([USER_TOKEN])
          yield* auth.setUserToken(Redacted.make(NEW_TOKEN))
          expect(yield* current).toBe("token-2")
          yield* Deferred.succeed(gate, undefined)
          yield* settle
          expect(issuer.subjects).toEqual([USER_TOKEN, NEW_TOKEN])
          expect(yield* current).toBe("token-2")
          expect(yield* auth.state).toEqual({ status: "identified", source: "tokenExchange" })
        }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
      }))

    it.effect("two subject tokens set in one step: each is exchanged for itself, and the last one's token is held", () => {
      const issuer = makeIssuer()
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        expect(yield* current).toBe("token-1")
        // No fiber runs in between: the first one's exchange has not started when the second comes.
        yield* Effect.zipRight(auth.setUserToken(Redacted.make(NEW_TOKEN)), auth.setUserToken(Redacted.make(`${NEW_TOKEN}-again`)))
        expect(yield* current).toBe("token-3")
        yield* settle
        expect(issuer.subjects).toEqual([USER_TOKEN, NEW_TOKEN, `${NEW_TOKEN}-again`])
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("a new subject token recovers from a refused exchange", () => {
      const refused = new AuthError({ reason: "ExchangeFailed", message: "Token has expired", status: 401 })
      const issuer = makeIssuer({ outcomes: [refused] })
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        expect((yield* Effect.flip(auth.credentials)).reason).toBe("ExchangeFailed")
        yield* auth.setUserToken(Redacted.make(NEW_TOKEN))
        expect(yield* current).toBe("token-2")
        expect(yield* auth.state).toEqual({ status: "identified", source: "tokenExchange" })
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("the scheduled refresh of the old access token does not run", () => {
      const issuer = makeIssuer({ expiresInSeconds: 100 })
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        expect(yield* current).toBe("token-1")
        yield* TestClock.adjust(Duration.seconds(30))
        yield* auth.setUserToken(Redacted.make(NEW_TOKEN))
        expect(yield* current).toBe("token-2")
        // token-1 would have been refreshed at 70 s, token-2 is due at 100 s.
        yield* TestClock.adjust(Duration.seconds(45))
        yield* settle
        expect(issuer.subjects).toEqual([USER_TOKEN, NEW_TOKEN])
        yield* TestClock.adjust(Duration.seconds(30))
        yield* settle
        expect(issuer.subjects).toEqual([USER_TOKEN, NEW_TOKEN, NEW_TOKEN])
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("without a configured userToken it fails with an AuthError and changes nothing", () => {
      const issuer = makeIssuer()
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const error = yield* Effect.flip(auth.setUserToken(Redacted.make(NEW_TOKEN)))
        expect(error).toBeInstanceOf(AuthError)
        expect(error.reason).toBe("InvalidCredentials")
        expect(yield* auth.credentials).toEqual({ _tag: "UserKey", userKey: "user-1" })
        expect(issuer.subjects).toEqual([])
      }).pipe(Effect.provide(authLayer({ userKey: "user-1" }, issuer)))
    })
  })

  describe("withCredentials", () => {
    it.effect("a 401 exchanges the token again and retries once", () => {
      const issuer = makeIssuer()
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const seen: Array<string> = []
        const result = yield* Auth.withCredentials(auth, (c) => {
          seen.push(tokenOf(c))
          return tokenOf(c) === "token-1" ? Effect.fail(unauthorized) : Effect.succeed("ok")
        })
        expect(result).toBe("ok")
        expect(seen).toEqual(["token-1", "token-2"])
        expect(issuer.subjects).toHaveLength(2)
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("only once: a second 401 fails with the ApiError", () => {
      const issuer = makeIssuer()
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        let calls = 0
        const error = yield* Effect.flip(
          Auth.withCredentials(auth, () => Effect.suspend(() => (calls++, Effect.fail(unauthorized))))
        )
        expect(error).toBe(unauthorized)
        expect(calls).toBe(2)
        expect(issuer.subjects).toHaveLength(2)
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("concurrent 401s on the same token share one new exchange", () => {
      const issuer = makeIssuer()
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        yield* auth.credentials
        const results = yield* Effect.all(
          Array.from({ length: 5 }, () =>
            Auth.withCredentials(auth, (c) =>
              tokenOf(c) === "token-1" ? Effect.fail(unauthorized) : Effect.succeed(tokenOf(c)))),
          { concurrency: "unbounded" }
        )
        expect(results).toEqual(Array.from({ length: 5 }, () => "token-2"))
        expect(issuer.subjects).toHaveLength(2)
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("a 401 with a userKey is not retried", () => {
      const issuer = makeIssuer()
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        let calls = 0
        const error = yield* Effect.flip(
          Auth.withCredentials(auth, () => Effect.suspend(() => (calls++, Effect.fail(unauthorized))))
        )
        expect(error).toBe(unauthorized)
        expect(calls).toBe(1)
      }).pipe(Effect.provide(authLayer({ userKey: "user-1" }, issuer)))
    })

    it.effect("other failures are not retried", () => {
      const issuer = makeIssuer()
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        let calls = 0
        const forbidden = new ApiError({ reason: "Forbidden", message: "no", status: 403, retryable: false })
        const error = yield* Effect.flip(
          Auth.withCredentials(auth, () => Effect.suspend(() => (calls++, Effect.fail(forbidden))))
        )
        expect(error).toBe(forbidden)
        expect(calls).toBe(1)
        expect(issuer.subjects).toHaveLength(1)
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("streams: a 401 before the first element reopens the stream once with a new token", () => {
      const issuer = makeIssuer()
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        const opened: Array<string> = []
        const out = yield* Stream.runCollect(
          Auth.withCredentialsStream(auth, (c) => {
            opened.push(tokenOf(c))
            return tokenOf(c) === "token-1" ? Stream.fail(unauthorized) : Stream.make(1, 2, 3)
          })
        )
        expect(Chunk.toReadonlyArray(out)).toEqual([1, 2, 3])
        expect(opened).toEqual(["token-1", "token-2"])
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("streams: a 401 after elements is not retried", () => {
      const issuer = makeIssuer()
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        let opened = 0
        const result = yield* Stream.runCollect(
          Auth.withCredentialsStream(auth, () => {
            opened++
            return Stream.concat(Stream.make(1), Stream.fail(unauthorized))
          })
        ).pipe(Effect.either)
        expect(Either.isLeft(result) && result.left).toBe(unauthorized)
        expect(opened).toBe(1)
        expect(issuer.subjects).toHaveLength(1)
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })

    it.effect("invalidate without an argument forgets the token; with another token it does nothing", () => {
      const issuer = makeIssuer()
      return Effect.gen(function* () {
        const auth = yield* Auth.Auth
        expect(yield* current).toBe("token-1")
        yield* auth.invalidate({ _tag: "Bearer", token: Redacted.make("someone-else") })
        expect(yield* current).toBe("token-1")
        yield* auth.invalidate()
        expect(yield* current).toBe("token-2")
      }).pipe(Effect.provide(authLayer({ userToken: USER_TOKEN }, issuer)))
    })
  })
})
