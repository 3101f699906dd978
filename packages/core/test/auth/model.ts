// The model-based test of Auth (../Auth.model.test.ts): its commands, the model, the real service
// over a scripted token endpoint, and the checks every command ends with.
//
// The model is the documented behaviour written plainly: one slot (nothing, an exchange in flight,
// a token, a refusal); a request uses a token until its refresh time (30 s before expiry, or half
// its lifetime when shorter, counted from the start of the exchange), and past it starts the
// refresh and uses the token meanwhile until it expires (so does every request while that refresh
// is in flight, unless the token was forgotten); it waits for the exchange in
// flight, fails at once with a refusal, or starts an exchange that concurrent requests share;
// a token's refresh is scheduled when it arrives (at least 1 s later); an exchange's outcome
// lands only if the slot still waits for it (a replaced user token's does not); a refresh (on
// schedule, or by a request past the refresh time) that fails for a reason worth trying again
// (not a refusal) while the token it refreshes has not expired keeps that token: the requests
// waiting on it get it, the state says identified, and the token is handed out until the next
// try (after the Retry-After of a 429 or 503, at most maxRetryAfter, when it sent one, else 1 s
// later, doubled after each failure up to 8 s; never past its expiry); an exchange that fails
// for such a reason with no token that works held fails requests at once, without asking the
// endpoint, until its next try is due (the same Retry-After, else 1 s doubled after each such
// failure in a row up to 8 s), and the first request after that exchanges again; a 401 to a
// call (or to a stream before its first element) forgets the token it carried and the call runs
// once more with the next credentials. The state says exchanging only while no token that
// still works is held: a refresh of one that works stays identified, and says exchanging once
// that token expires with the refresh still in flight.
// Requests woken by an exchange run in the order they asked, before an exchange one of them starts.
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as fc from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Supervisor from "effect/Supervisor"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import * as Auth from "../../src/Auth.js"
import { ApiError, AuthError, type TamboError, TransportError } from "../../src/TamboError.js"
import type { AccessToken, Credentials } from "../../src/TamboTransport.js"
import { config, transport } from "./endpoint.js"

// -----------------------------------------------------------------------------
// Commands
// -----------------------------------------------------------------------------

/**
 * How the token endpoint answers an exchange: a token lasting `lifetime` seconds, a refusal
 * (final: a 4xx other than 408 / 429), or a failure worth asking again (408, 429, 5xx, or no
 * answer at all: `status` null).
 */
export type Outcome =
  | { readonly _tag: "ok"; readonly lifetime: number }
  | { readonly _tag: "refuse"; readonly status: 400 | 401 | 403 }
  | {
    readonly _tag: "fail"
    readonly status: 408 | 429 | 500 | 503 | null
    /** A 429's or 503's `Retry-After`, in seconds. */
    readonly retryAfter?: number | undefined
  }

/** The endpoint's answer to the exchanges from now on; `hang`: each waits until released. */
export type Answer = Outcome | { readonly _tag: "hang" }

/**
 * A request: `credentials`, a call through `withCredentials` that succeeds or answers 401 once,
 * or a stream through `withCredentialsStream` that emits or fails with 401 before emitting, once.
 */
export type Ask = "credentials" | "call" | "call401" | "stream" | "stream401"

const answers401 = (a: Ask) => a === "call401" || a === "stream401"

/** Which subject token a `setUserToken` sets. */
export type Which = "new" | "same" | "previous"

export type Command =
  /** One request, or several at once. */
  | { readonly kind: "ask"; readonly asks: ReadonlyArray<Ask> }
  | { readonly kind: "advance"; readonly millis: number }
  /** Time passes until the next scheduled refresh is due (a second when none is). */
  | { readonly kind: "untilRefresh" }
  | { readonly kind: "answer"; readonly answer: Answer }
  /** The next exchange alone fails for a reason worth trying again; the ones after it answer as before. */
  | { readonly kind: "blip"; readonly status: 429 | 503 | null; readonly retryAfter?: number | undefined }
  /** The oldest hung exchange answers. */
  | { readonly kind: "release"; readonly outcome: Outcome }
  /** A new subject token, the current one again, or the one before it. */
  | { readonly kind: "setUserToken"; readonly which: "new" | "same" | "previous" }
  /**
   * Two `setUserToken` in one synchronous step, no fiber running in between: the second comes
   * while the first one's exchange is being forked (it has not asked the endpoint yet).
   */
  | { readonly kind: "setUserTokens"; readonly which: readonly [Which, Which] }
  /** Forgets the latest token issued, the first one, or whatever is cached (no argument). */
  | { readonly kind: "invalidate"; readonly which: "latest" | "first" | "all" }
  /** The oldest request still waiting gives up (its fiber is interrupted). */
  | { readonly kind: "cancel" }

/** How the endpoint answers the first exchange, then the commands. */
export interface Sequence {
  readonly initial: Answer
  readonly commands: ReadonlyArray<Command>
}

/** A `Retry-After` in seconds, or none: 0, below the backoff's cap, or past `maxRetryAfter` (5 s here). */
const retryAfter: fc.Arbitrary<number | undefined> = fc.constantFrom(undefined, undefined, 0, 3, 20)

const outcome: fc.Arbitrary<Outcome> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(10, 40, 61, 3600).map((lifetime) => ({ _tag: "ok" as const, lifetime })) },
  { weight: 1, arbitrary: fc.constantFrom(400 as const, 401 as const, 403 as const).map((status) => ({ _tag: "refuse" as const, status })) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom(408 as const, 429 as const, 500 as const, 503 as const, null), retryAfter).map((
      [status, after]
    ) => ({
      _tag: "fail" as const,
      status,
      ...(after !== undefined && (status === 429 || status === 503) ? { retryAfter: after } : {})
    }))
  }
)

const answer: fc.Arbitrary<Answer> = fc.oneof(
  { weight: 3, arbitrary: outcome },
  { weight: 2, arbitrary: fc.constant({ _tag: "hang" as const }) }
)

const ask: fc.Arbitrary<Ask> = fc.constantFrom("credentials", "credentials", "call", "call401", "stream", "stream401")

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: ask.map((a) => ({ kind: "ask" as const, asks: [a] })) },
  { weight: 2, arbitrary: fc.array(ask, { minLength: 2, maxLength: 4 }).map((asks) => ({ kind: "ask" as const, asks })) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(500, 999, 1000, 5000, 15_000, 29_000, 30_000, 31_000, 90_000).map((millis) => ({
      kind: "advance" as const,
      millis
    }))
  },
  { weight: 3, arbitrary: answer.map((a) => ({ kind: "answer" as const, answer: a })) },
  { weight: 3, arbitrary: outcome.map((o) => ({ kind: "release" as const, outcome: o })) },
  {
    weight: 3,
    arbitrary: fc.constantFrom("new" as const, "new" as const, "same" as const, "previous" as const).map((which) => ({
      kind: "setUserToken" as const,
      which
    }))
  },
  {
    weight: 1,
    arbitrary: fc.tuple(
      fc.constantFrom<Which>("new", "new", "same", "previous"),
      fc.constantFrom<Which>("new", "new", "same", "previous")
    ).map((which) => ({ kind: "setUserTokens" as const, which }))
  },
  { weight: 2, arbitrary: fc.constant({ kind: "cancel" as const }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom("latest" as const, "first" as const, "all" as const).map((which) => ({
      kind: "invalidate" as const,
      which
    }))
  }
)

/** A refresh that fails for a reason worth trying again: the endpoint fails once, and the refresh comes due. */
const failedRefresh: fc.Arbitrary<ReadonlyArray<Command>> = fc.tuple(
  fc.constantFrom(429 as const, 503 as const, null),
  retryAfter
).map(([status, after]) => [
  { kind: "blip" as const, status, ...(after !== undefined && status !== null ? { retryAfter: after } : {}) },
  { kind: "untilRefresh" as const }
])

/**
 * A refresh that hangs, a request meanwhile, and time until the token it refreshes expires (when
 * it lasts no longer than a minute).
 */
const hungRefresh: fc.Arbitrary<ReadonlyArray<Command>> = ask.map((a) => [
  { kind: "answer" as const, answer: { _tag: "hang" as const } },
  { kind: "untilRefresh" as const },
  { kind: "ask" as const, asks: [a] },
  { kind: "advance" as const, millis: 31_000 }
])

/** Sequences of up to `maxCommands` commands. */
export const commandsArbitrary = (maxCommands: number): fc.Arbitrary<Sequence> =>
  fc.record({
    initial: answer,
    commands: fc.array(
      fc.oneof(
        { weight: 12, arbitrary: command.map((c) => [c]) },
        { weight: 1, arbitrary: failedRefresh },
        { weight: 1, arbitrary: hungRefresh }
      ),
      { maxLength: maxCommands, size: "max" }
    ).map((groups) => groups.flat().slice(0, maxCommands))
  })

// -----------------------------------------------------------------------------
// The model
// -----------------------------------------------------------------------------

const REFRESH_MARGIN = 30_000
const MINIMUM_REFRESH_DELAY = 1_000
const REFRESH_RETRY_BASE = 1_000
const REFRESH_RETRY_CAP = 8_000
/** The test configuration's `maxRetryAfter`. */
const MAX_RETRY_AFTER = 5_000

type Status = Auth.AuthState["status"]

/** A published state: its status, and the HTTP status of an error's exchange. */
interface Published {
  readonly status: Status
  readonly errorStatus?: number | undefined
}

interface ModelExchange {
  readonly n: number
  readonly subject: string
  readonly startedAt: number
  /** Known once answered (at once, or when released). */
  outcome: Outcome | undefined
  hung: boolean
  waiters: Array<ModelRequest>
}

interface ModelRequest {
  readonly ask: Ask
  /** The exchanges whose tokens it was handed, in order. */
  readonly tokens: Array<number>
  /** Done: with the last token handed, failed with the outcome of exchange `n`, or given up. */
  result:
    | { readonly _tag: "ok" }
    | { readonly _tag: "failed"; readonly n: number }
    | { readonly _tag: "interrupted" }
    | undefined
}

/** The token of exchange `n`, handed out until `refreshAt`; how many refreshes of it failed. */
interface Ready {
  readonly _tag: "Ready"
  readonly n: number
  readonly refreshAt: number
  readonly failedRefreshes: number
}

type Slot =
  | { readonly _tag: "Empty" }
  /** `refreshing`: the token it refreshes; `failures`: the failed exchanges in a row before it. */
  | { readonly _tag: "Exchanging"; readonly n: number; readonly refreshing: Ready | undefined; readonly failures: number }
  | Ready
  | { readonly _tag: "Refused"; readonly n: number }
  /** Exchange `n` failed with no token held: requests fail with it until `retryAt`. */
  | { readonly _tag: "Failed"; readonly n: number; readonly retryAt: number; readonly failures: number }

const errorStatusOf = (o: Outcome): number | undefined => (o._tag === "ok" ? undefined : o.status ?? undefined)

export class Model {
  now = 0
  subject = "subject-1"
  previous: string | undefined = undefined
  answer: Answer
  /** How the next exchange alone answers. */
  blip: Outcome | undefined
  slot: Slot = { _tag: "Empty" }
  readonly published: Array<Published> = [{ status: "exchanging" }]
  readonly exchanges: Array<ModelExchange> = []
  readonly requests: Array<ModelRequest> = []
  /** The refresh of the latest token held: when, and of which. */
  timer: { readonly at: number; readonly slot: Ready } | undefined = undefined
  /** Exchanges answered but not yet settled (they run after the requests they woke). */
  readonly queue: Array<number> = []
  /** How often each kind of step came up (what the coverage test counts). */
  readonly counts = new Map<string, number>()
  #subjects = 1

  constructor(initial: Answer) {
    this.answer = initial
    this.blip = undefined
    this.start()
    this.drain()
  }

  count(label: string): void {
    this.counts.set(label, (this.counts.get(label) ?? 0) + 1)
  }

  exchange(n: number): ModelExchange {
    return this.exchanges[n - 1]!
  }

  refreshAt(n: number): number {
    const e = this.exchange(n)
    const lifetime = e.outcome!._tag === "ok" ? e.outcome!.lifetime * 1000 : 0
    return e.startedAt + Math.max(lifetime - REFRESH_MARGIN, lifetime / 2)
  }

  expiresAt(n: number): number {
    const e = this.exchange(n)
    return e.startedAt + (e.outcome!._tag === "ok" ? e.outcome!.lifetime * 1000 : 0)
  }

  /** Holds `slot` and schedules its refresh. */
  hold(slot: Ready): void {
    this.slot = slot
    this.publish({ status: "identified" })
    this.timer = { at: this.now + Math.max(slot.refreshAt - this.now, MINIMUM_REFRESH_DELAY), slot }
  }

  publish(p: Published): void {
    this.published.push(p)
  }

  /** Starts an exchange of the current subject (refreshing a token or not); the slot waits for it. */
  start(refreshing?: Ready, failures = 0): number {
    const n = this.exchanges.length + 1
    const e: ModelExchange = { n, subject: this.subject, startedAt: this.now, outcome: undefined, hung: false, waiters: [] }
    this.exchanges.push(e)
    this.slot = { _tag: "Exchanging", n, refreshing, failures }
    // While the token it refreshes works, the state stays identified.
    if (this.usable() === undefined) this.publish({ status: "exchanging" })
    const answer = this.blip ?? this.answer
    this.blip = undefined
    if (answer._tag === "hang") {
      e.hung = true
      this.count("hung")
    } else {
      e.outcome = answer
      this.queue.push(n)
    }
    return n
  }

  /** The token of the slot that still works: the one held, or the one an exchange in flight refreshes. */
  usable(): number | undefined {
    const held = this.slot._tag === "Ready" ? this.slot : this.slot._tag === "Exchanging" ? this.slot.refreshing : undefined
    return held !== undefined && this.now < this.expiresAt(held.n) ? held.n : undefined
  }

  /** When the token an exchange in flight refreshes expires, if it has not yet. */
  expiry(): number | undefined {
    if (this.slot._tag !== "Exchanging" || this.slot.refreshing === undefined) return undefined
    const at = this.expiresAt(this.slot.refreshing.n)
    return at > this.now ? at : undefined
  }

  drain(): void {
    for (let n = this.queue.shift(); n !== undefined; n = this.queue.shift()) this.settle(n)
  }

  settle(n: number): void {
    const e = this.exchange(n)
    e.hung = false
    const o = e.outcome!
    // The token the waiters get instead of a failure.
    let kept: number | undefined
    if (this.slot._tag === "Exchanging" && this.slot.n === n) {
      const refreshing = this.slot.refreshing
      switch (o._tag) {
        case "ok": {
          this.hold({ _tag: "Ready", n, refreshAt: this.refreshAt(n), failedRefreshes: 0 })
          break
        }
        case "refuse":
          this.slot = { _tag: "Refused", n }
          this.publish({ status: "error", errorStatus: errorStatusOf(o) })
          this.count("refused")
          break
        case "fail":
          this.count("failed")
          if (refreshing !== undefined && this.now < this.expiresAt(refreshing.n)) {
            const backoff = o.retryAfter !== undefined
              ? Math.min(o.retryAfter * 1000, MAX_RETRY_AFTER)
              : Math.min(REFRESH_RETRY_BASE * 2 ** refreshing.failedRefreshes, REFRESH_RETRY_CAP)
            if (o.retryAfter !== undefined) this.count("retried after Retry-After")
            this.hold({
              _tag: "Ready",
              n: refreshing.n,
              refreshAt: Math.min(this.now + backoff, this.expiresAt(refreshing.n)),
              failedRefreshes: refreshing.failedRefreshes + 1
            })
            kept = refreshing.n
            this.count("kept through a failed refresh")
            break
          }
          {
            const failures = this.slot.failures
            const backoff = o.retryAfter !== undefined
              ? Math.min(o.retryAfter * 1000, MAX_RETRY_AFTER)
              : Math.min(REFRESH_RETRY_BASE * 2 ** failures, REFRESH_RETRY_CAP)
            this.slot = { _tag: "Failed", n, retryAt: this.now + backoff, failures: failures + 1 }
          }
          this.publish({ status: "error", errorStatus: errorStatusOf(o) })
          break
      }
    } else if (e.waiters.length > 0) {
      this.count("stale old waiter")
    }
    const waiters = e.waiters
    e.waiters = []
    for (const r of waiters) {
      if (kept !== undefined) this.hand(r, kept)
      else if (o._tag === "ok") this.hand(r, n)
      else r.result = { _tag: "failed", n }
    }
  }

  /** Request `r` gets the token of exchange `n`. */
  hand(r: ModelRequest, n: number): void {
    r.tokens.push(n)
    if (answers401(r.ask) && r.tokens.length === 1) {
      this.count("retried after 401")
      this.invalidate(n)
      this.decide(r)
      return
    }
    r.result = { _tag: "ok" }
  }

  /** What request `r` does about the slot. */
  decide(r: ModelRequest): void {
    switch (this.slot._tag) {
      case "Ready":
        if (this.now < this.slot.refreshAt) {
          this.count(this.slot.failedRefreshes > 0 ? "served after a failed refresh" : "served from cache")
          return this.hand(r, this.slot.n)
        }
      {
        // Due for refresh: this request's exchange refreshes it, and the token serves meanwhile while it works.
        const held = this.slot
        const n = this.start(held)
        if (this.now < this.expiresAt(held.n)) {
          this.count("served during a refresh")
          return this.hand(r, held.n)
        }
        this.exchange(n).waiters.push(r)
        return
      }
      case "Exchanging":
        if (this.slot.refreshing !== undefined && this.now < this.expiresAt(this.slot.refreshing.n)) {
          this.count("served during a refresh")
          return this.hand(r, this.slot.refreshing.n)
        }
        this.count("waited")
        this.exchange(this.slot.n).waiters.push(r)
        return
      case "Refused":
        r.result = { _tag: "failed", n: this.slot.n }
        return
      case "Failed":
        if (this.now < this.slot.retryAt) {
          this.count("failed fast after a failed exchange")
          r.result = { _tag: "failed", n: this.slot.n }
          return
        }
        this.count("exchanged again after a failed exchange")
        this.exchange(this.start(undefined, this.slot.failures)).waiters.push(r)
        return
    }
    this.exchange(this.start()).waiters.push(r)
  }

  ask(asks: ReadonlyArray<Ask>): void {
    for (const a of asks) {
      const r: ModelRequest = { ask: a, tokens: [], result: undefined }
      const alone = a === "stream" || a === "stream401"
      // A stream starts alone (see runSequence).
      if (alone) this.drain()
      this.requests.push(r)
      this.decide(r)
      if (alone) this.drain()
    }
    this.drain()
  }

  /** Forgets the token of exchange `n` if it is the one held; without one, anything but an exchange in flight. */
  invalidate(n: number | undefined): void {
    if (this.slot._tag === "Exchanging") {
      // The token a refresh in flight replaces is no longer handed out: requests wait for the refresh.
      if (this.slot.refreshing !== undefined && (n === undefined || this.slot.refreshing.n === n)) {
        this.slot = { ...this.slot, refreshing: undefined }
        this.publish({ status: "exchanging" })
        this.count("forgotten during a refresh")
      }
    } else if (n === undefined) {
      this.slot = { _tag: "Empty" }
    } else if (this.slot._tag === "Ready" && this.slot.n === n) {
      this.slot = { _tag: "Empty" }
    }
  }

  /** The exchange whose token `which` names (0: none issued yet). */
  tokenFor(which: "latest" | "first"): number {
    const issued = this.exchanges.filter((e) => e.outcome?._tag === "ok" && !e.hung)
    return (which === "latest" ? issued.at(-1) : issued[0])?.n ?? 0
  }

  /** The subject token `which` names. */
  subjectFor(which: "new" | "same" | "previous"): string {
    if (which === "same") return this.subject
    if (which === "previous") return this.previous ?? this.subject
    return `subject-${++this.#subjects}`
  }

  /** The subject tokens two `setUserToken` in a row set, `which` naming each as it comes. */
  subjectsFor(which: readonly [Which, Which]): readonly [string, string] {
    const first = this.subjectFor(which[0])
    const changed = first !== this.subject
    const second = which[1] === "same"
      ? first
      : which[1] === "previous"
      ? changed ? this.subject : this.previous ?? this.subject
      : this.subjectFor("new")
    return [first, second]
  }

  setUserToken(next: string): void {
    this.replaceSubject(next)
    this.drain()
  }

  /**
   * Two user tokens set in one step: the first one's exchange starts (its subject read as it
   * starts) and only then, once the second's started too, do the exchanges run.
   */
  setUserTokens([first, second]: readonly [string, string]): void {
    const before = this.exchanges.length
    this.replaceSubject(first)
    this.replaceSubject(second)
    if (this.exchanges.length - before === 2) this.count("set twice in one step")
    this.drain()
  }

  replaceSubject(next: string): void {
    if (next === this.subject) return
    if (this.exchanges.some((e) => e.hung)) this.count("rotated while hung")
    this.previous = this.subject
    this.subject = next
    this.start()
  }

  /** The oldest request still waiting gives up; the exchange it waits for goes on for the others. */
  cancel(): void {
    const r = this.requests.find((x) => x.result === undefined)
    if (r === undefined) return
    for (const e of this.exchanges) e.waiters = e.waiters.filter((x) => x !== r)
    r.result = { _tag: "interrupted" }
    this.count("gave up")
  }

  release(o: Outcome): void {
    const e = this.exchanges.find((x) => x.hung)
    if (e === undefined) return
    e.outcome = o
    this.queue.push(e.n)
    this.drain()
  }

  advance(millis: number): void {
    const end = this.now + millis
    for (;;) {
      // The token a hung refresh refreshes expires: the state says exchanging from then on.
      const expiry = this.expiry()
      if (expiry !== undefined && expiry <= end && (this.timer === undefined || expiry < this.timer.at)) {
        this.now = expiry
        this.publish({ status: "exchanging" })
        this.count("expired while refreshing")
        continue
      }
      if (this.timer === undefined || this.timer.at > end) break
      const { at, slot } = this.timer
      this.timer = undefined
      this.now = at
      if (this.slot === slot) {
        this.count("refresh")
        this.start(slot)
        this.drain()
      }
    }
    this.now = end
  }
}

// -----------------------------------------------------------------------------
// The token endpoint
// -----------------------------------------------------------------------------

interface Call {
  readonly n: number
  readonly subject: string
  /**
   * The index of the user token it was started for (the test's count of setUserToken): the
   * latest one with its subject among those current since the command it came in began.
   */
  readonly epoch: number
  readonly startedAt: number
  /** Set while the call hangs. */
  gate: Deferred.Deferred<Outcome> | undefined
  done: boolean
  /** When it answered with a token, and how long that lasts (ms). */
  issued: { readonly at: number; readonly lifetime: number } | undefined
}

const unauthorized = new ApiError({ reason: "Unauthorized", message: "Token has expired", status: 401, retryable: false })

const retryAfterOf = (o: Outcome): { readonly retryAfter?: number } =>
  o._tag === "fail" && o.retryAfter !== undefined ? { retryAfter: o.retryAfter * 1000 } : {}

/** What the endpoint fails with for a refusal or a failure. */
const errorOf = (o: Exclude<Outcome, { readonly _tag: "ok" }>): TamboError => {
  switch (o.status) {
    case null:
      return new TransportError({ reason: "Connect", message: "connect ECONNREFUSED" })
    case 401:
      return unauthorized
    case 400:
      return new ApiError({ reason: "BadRequest", message: "Invalid subject token", status: 400, retryable: false })
    case 403:
      return new ApiError({ reason: "Forbidden", message: "Not allowed", status: 403, retryable: false })
    case 408:
      return new ApiError({ reason: "Unknown", message: "Request timeout", status: 408, retryable: true })
    case 429:
      return new ApiError({ reason: "RateLimited", message: "Slow down", status: 429, retryable: true, ...retryAfterOf(o) })
    default:
      return new ApiError({ reason: "ServerError", message: "Unavailable", status: o.status, retryable: true, ...retryAfterOf(o) })
  }
}

/** A token endpoint that answers as the test says: at once, or when released. Issues `access-<n>`. */
const makeEndpoint = (initial: Answer) => {
  const endpoint = {
    answer: initial,
    blip: undefined as Outcome | undefined,
    /** The subject tokens set, in order, and the index of the current one. */
    subjects: ["subject-1"],
    epoch: 0,
    /** The index of the user token current as the command in progress began. */
    since: 0,
    calls: [] as Array<Call>
  }
  /** The latest user token since the command began with `subject`; -1 when none had it. */
  const epochOf = (subject: string) => {
    for (let e = endpoint.epoch; e >= endpoint.since; e--) if (endpoint.subjects[e] === subject) return e
    return -1
  }
  const exchangeToken = (subject: Redacted.Redacted<string>): Effect.Effect<AccessToken, TamboError> =>
    Effect.gen(function* () {
      const call: Call = {
        n: endpoint.calls.length + 1,
        subject: Redacted.value(subject),
        epoch: epochOf(Redacted.value(subject)),
        startedAt: yield* Clock.currentTimeMillis,
        gate: undefined,
        done: false,
        issued: undefined
      }
      endpoint.calls.push(call)
      const answer = endpoint.blip ?? endpoint.answer
      endpoint.blip = undefined
      const o: Outcome = answer._tag === "hang"
        ? yield* Effect.flatMap(Deferred.make<Outcome>(), (gate) => {
          call.gate = gate
          return Deferred.await(gate)
        }).pipe(Effect.ensuring(Effect.sync(() => (call.done = true))))
        : answer
      call.done = true
      if (o._tag !== "ok") return yield* Effect.fail(errorOf(o))
      call.issued = { at: yield* Clock.currentTimeMillis, lifetime: o.lifetime * 1000 }
      return { token: Redacted.make(`access-${call.n}`), expiresInSeconds: o.lifetime }
    })
  return { endpoint, layer: transport(exchangeToken) }
}

// -----------------------------------------------------------------------------
// Running a sequence
// -----------------------------------------------------------------------------

/** A failed invariant, named. */
export class InvariantError extends Error {
  constructor(readonly invariant: string, detail: string) {
    super(`invariant "${invariant}" failed: ${detail}`)
  }
}

/** The invariants checked: all, or those `MODEL_INVARIANTS` lists (a comma list, to explore some alone). */
const checking = process.env.MODEL_INVARIANTS?.split(",")

const invariant = (name: string, holds: boolean, detail: () => string): void => {
  if (!holds && (checking === undefined || checking.includes(name))) throw new InvariantError(name, detail())
}

const json = (u: unknown) => JSON.stringify(u)

const tokenOf = (c: Credentials) => (c._tag === "Bearer" ? Redacted.value(c.token) : `userKey:${c.userKey}`)
const nOf = (token: string) => Number(token.replace("access-", ""))

interface RealRequest {
  readonly ask: Ask
  /** The index of the user token current when it asked. */
  readonly epoch: number
  /** The tokens it was handed, in order. */
  readonly handed: Array<string>
  readonly fiber: Fiber.RuntimeFiber<unknown, unknown>
  checked: boolean
}

/** Lets forked fibers run until they wait on something. */
const settle = Effect.repeatN(Effect.yieldNow(), 40)

const dedupe = (states: ReadonlyArray<Published>): Array<Published> =>
  states.filter((s, i) => i === 0 || json(s) !== json(states[i - 1]))

const publishedOf = (state: Auth.AuthState): Published =>
  state.status === "error" ? { status: "error", errorStatus: state.error.status } : { status: state.status }

/** `command` with the time it lets pass known: how long until the model's next refresh. */
const resolve = (model: Model, command: Command): Command =>
  command.kind === "untilRefresh"
    ? { kind: "advance", millis: model.timer === undefined ? 1000 : Math.max(model.timer.at - model.now, 0) }
    : command

/** Applies `command` to the model alone. */
const step = (
  model: Model,
  command: Command,
  subject: string | undefined,
  invalidated: number | undefined,
  pair?: readonly [string, string]
) => {
  switch (command.kind) {
    case "ask":
      return model.ask(command.asks)
    case "advance":
      return model.advance(command.millis)
    case "answer":
      model.answer = command.answer
      return
    case "blip":
      model.blip = { _tag: "fail", status: command.status, retryAfter: command.retryAfter }
      return
    case "release":
      return model.release(command.outcome)
    case "setUserToken":
      return model.setUserToken(subject!)
    case "setUserTokens":
      return model.setUserTokens(pair!)
    case "invalidate":
      return model.invalidate(invalidated)
    case "cancel":
      return model.cancel()
  }
}

/**
 * Plays `sequence` against the real service and the model, checking after every command;
 * fails with an InvariantError at the first difference. `modelOnly`: plays the model alone and
 * returns how often each kind of step came up.
 */
export const runSequence = (
  sequence: Sequence,
  options: { readonly modelOnly?: boolean } = {}
): Effect.Effect<Map<string, number>> => {
  if (options.modelOnly) {
    return Effect.sync(() => {
      const model = new Model(sequence.initial)
      for (const command of sequence.commands) {
        const c = resolve(model, command)
        const subject = c.kind === "setUserToken" ? model.subjectFor(c.which) : undefined
        const pair = c.kind === "setUserTokens" ? model.subjectsFor(c.which) : undefined
        const n = c.kind === "invalidate" && c.which !== "all" ? model.tokenFor(c.which) : undefined
        step(model, c, subject, n, pair)
      }
      return model.counts
    })
  }
  return Effect.gen(function* () {
    const { endpoint, layer } = makeEndpoint(sequence.initial)
    const supervisor = yield* Supervisor.track
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(
      Auth.layer.pipe(Layer.provide(Layer.merge(config({ userToken: "subject-1" }), layer))),
      scope
    ).pipe(Effect.supervised(supervisor))
    const auth = Context.get(context, Auth.Auth)
    const changes: Array<Published> = []
    yield* Effect.forkIn(Stream.runForEach(auth.changes, (s) => Effect.sync(() => changes.push(publishedOf(s)))), scope)
    const model = new Model(sequence.initial)
    const subjects = endpoint.subjects
    const requests: Array<RealRequest> = []

    const fork = (a: Ask) => {
      const handed: Array<string> = []
      // Each time it is handed credentials: answers 401 the first time if it says so.
      const answer = (c: Credentials) => {
        handed.push(tokenOf(c))
        return answers401(a) && handed.length === 1
      }
      const effect: Effect.Effect<unknown, unknown> = a === "credentials"
        ? Effect.map(auth.credentials, answer)
        : a === "call" || a === "call401"
        ? Auth.withCredentials(auth, (c) => Effect.suspend(() => answer(c) ? Effect.fail(unauthorized) : Effect.succeed("done")))
        : Stream.runCollect(
          Auth.withCredentialsStream(auth, (c) => Stream.suspend(() => answer(c) ? Stream.fail(unauthorized) : Stream.make("done")))
        )
      return Effect.map(
        Effect.supervised(Effect.fork(effect), supervisor),
        (fiber) => requests.push({ ask: a, epoch: subjects.length - 1, handed, fiber, checked: false })
      )
    }

    const check = (after: string) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const where = () => ` (after ${after}, at ${now} ms)`
        const calls = endpoint.calls
        const inFlight = calls.filter((c) => !c.done)
        const state = publishedOf(yield* auth.state)

        // The invariants, each by itself.
        for (const c of calls) {
          invariant("exchanges-current-user-token", c.epoch >= 0, () =>
            `exchange ${c.n} was of ${c.subject} while ${subjects.at(-1)} was current${where()}`)
        }
        const ofCurrent = inFlight.filter((c) => c.epoch === endpoint.epoch)
        invariant("one-exchange-in-flight", ofCurrent.length <= 1, () =>
          `${ofCurrent.length} exchanges of the current user token in flight: ${json(ofCurrent.map((c) => c.n))}${where()}`)
        for (const [i, r] of requests.entries()) {
          const exit = r.fiber.unsafePoll()
          if (exit === null || r.checked) continue
          r.checked = true
          for (const token of r.handed) {
            // Asked after setUserToken(new): never a token of an older user token.
            const call = calls[nOf(token) - 1]!
            invariant("handed-current-user-token", call.epoch >= r.epoch, () =>
              `request ${i} asked while ${subjects[r.epoch]} was current and was handed ${token} of ${call.subject}${where()}`)
          }
          const last = r.handed.at(-1)
          if (Exit.isSuccess(exit) && last !== undefined) {
            const issued = calls[nOf(last) - 1]!.issued!
            invariant("handed-unexpired", issued.at + issued.lifetime > now, () =>
              `request ${i} was handed ${last}, which expired at ${issued.at + issued.lifetime}${where()}`)
          }
          if (r.ask !== "credentials" && Exit.isSuccess(exit)) {
            invariant("one-retry-after-401", r.handed.length === (answers401(r.ask) ? 2 : 1), () =>
              `call ${i} (${r.ask}) ran ${r.handed.length} times${where()}`)
          }
          if (Exit.isFailure(exit) && !Exit.isInterrupted(exit)) {
            const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
            invariant("refusal-is-typed", error instanceof AuthError && error.reason === "ExchangeFailed", () =>
              `request ${i} (${r.ask}) ended ${json(exit)}${where()}`)
          }
        }
        invariant("state-is-published", state.status !== "exchanging" || inFlight.length > 0, () =>
          `the state says exchanging with no exchange in flight${where()}`)
        // A refresh does not flicker: exchanging only while no token that works is held.
        const usable = model.usable()
        invariant("exchanging-only-without-a-usable-token", usable === undefined || state.status === "identified", () =>
          `the state is ${json(state)} while access-${usable} still works${where()}`)

        // Everything as the model says.
        invariant("clock", now === model.now, () => `the clock says ${now}, the model ${model.now}${where()}`)
        const asked = calls.map((c) => ({ n: c.n, subject: c.subject, startedAt: c.startedAt }))
        const expected = model.exchanges.map((e) => ({ n: e.n, subject: e.subject, startedAt: e.startedAt }))
        invariant("exchanges-as-modelled", json(asked) === json(expected), () =>
          `the endpoint was asked ${json(asked)}, the model says ${json(expected)}${where()}`)
        const hung = model.exchanges.filter((e) => e.hung).map((e) => e.n)
        invariant("in-flight-as-modelled", json(inFlight.map((c) => c.n)) === json(hung), () =>
          `in flight: ${json(inFlight.map((c) => c.n))}, the model says ${json(hung)}${where()}`)
        const last = model.published.at(-1)!
        invariant("state-as-modelled", json(state) === json(last), () =>
          `the state is ${json(state)}, the model says ${json(last)}${where()}`)
        const seen = dedupe(changes)
        const said = dedupe(model.published)
        invariant(
          "changes-as-modelled",
          seen.length > 0 && json(seen) === json(said.slice(said.length - seen.length)),
          () => `changes published ${json(seen)}, the model says ${json(said)}${where()}`
        )
        for (const [i, r] of requests.entries()) {
          const m = model.requests[i]!
          const exit = r.fiber.unsafePoll()
          const handed = m.tokens.map((n) => `access-${n}`)
          invariant("handed-as-modelled", json(r.handed) === json(handed), () =>
            `request ${i} (${r.ask}) was handed ${json(r.handed)}, the model says ${json(handed)}${where()}`)
          invariant("done-as-modelled", (exit !== null) === (m.result !== undefined), () =>
            `request ${i} (${r.ask}) is ${exit === null ? "waiting" : "done"}, the model says ${
              m.result === undefined ? "waiting" : "done"
            }${where()}`)
          if (exit === null) continue
          const result = m.result!
          const status = result._tag === "failed" ? errorStatusOf(model.exchange(result.n).outcome!) : undefined
          const error = Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
          invariant(
            "outcome-as-modelled",
            result._tag === "ok"
              ? Exit.isSuccess(exit)
              : result._tag === "interrupted"
              ? Exit.isInterrupted(exit)
              : error instanceof AuthError && error.status === status,
            () => `request ${i} (${r.ask}) ended ${json(exit)}, the model says ${json(m.result)} (status ${status})${where()}`
          )
        }
      })

    yield* settle
    yield* check("start")
    for (const [index, command] of sequence.commands.entries()) {
      const c = resolve(model, command)
      const subject = c.kind === "setUserToken" ? model.subjectFor(c.which) : undefined
      const pair = c.kind === "setUserTokens" ? model.subjectsFor(c.which) : undefined
      const invalidated = c.kind === "invalidate" && c.which !== "all" ? model.tokenFor(c.which) : undefined
      endpoint.since = endpoint.epoch
      switch (c.kind) {
        case "ask":
          for (const a of c.asks) {
            // A stream reaches its credentials, and its retry, over several turns of the
            // scheduler, where the model runs each request to its first wait before the next
            // starts: a stream starts alone.
            const alone = a === "stream" || a === "stream401"
            if (alone) yield* settle
            yield* fork(a)
            if (alone) yield* settle
          }
          break
        case "advance":
          yield* TestClock.adjust(c.millis)
          break
        case "answer":
          endpoint.answer = c.answer
          break
        case "blip":
          endpoint.blip = { _tag: "fail", status: c.status, retryAfter: c.retryAfter }
          break
        case "release": {
          const gate = endpoint.calls.find((call) => !call.done)?.gate
          if (gate !== undefined) yield* Deferred.succeed(gate, c.outcome)
          break
        }
        case "setUserToken":
          if (subject !== subjects.at(-1)) {
            subjects.push(subject!)
            endpoint.epoch = subjects.length - 1
          }
          // A userToken service: setUserToken cannot fail here.
          yield* Effect.orDie(auth.setUserToken(Redacted.make(subject!)))
          break
        case "setUserTokens": {
          const set = (next: string) =>
            Effect.suspend(() => {
              if (next !== subjects.at(-1)) {
                subjects.push(next)
                endpoint.epoch = subjects.length - 1
              }
              return Effect.orDie(auth.setUserToken(Redacted.make(next)))
            })
          // One synchronous step: no fiber runs between the two.
          yield* Effect.zipRight(set(pair![0]), set(pair![1]))
          break
        }
        case "cancel": {
          const waiting = requests.find((r) => r.fiber.unsafePoll() === null)
          if (waiting !== undefined) yield* Fiber.interrupt(waiting.fiber)
          break
        }
        case "invalidate":
          yield* auth.invalidate(
            invalidated === undefined ? undefined : { _tag: "Bearer", token: Redacted.make(`access-${invalidated}`) }
          )
          break
      }
      step(model, c, subject, invalidated, pair)
      yield* settle
      yield* check(`command ${index} ${json(c)}`)
    }

    // Closing the scope leaves no fiber and no refresh timer behind.
    yield* Scope.close(scope, Exit.void)
    yield* settle
    const left = (yield* supervisor.value).filter((fiber) => fiber.unsafePoll() === null)
    invariant("nothing-left-on-close", left.length === 0, () => `${left.length} fibers still run after the scope closed`)
    invariant("nothing-left-on-close", endpoint.calls.every((call) => call.done), () => "an exchange is still in flight")
    invariant(
      "nothing-left-on-close",
      requests.every((r) => r.fiber.unsafePoll() !== null),
      () => "a request still waits after the scope closed"
    )
    const asked = endpoint.calls.length
    yield* TestClock.adjust("1 day")
    yield* settle
    invariant("nothing-left-on-close", endpoint.calls.length === asked, () => "an exchange ran after the scope closed")
    return model.counts
  }).pipe(Effect.scoped, Effect.provide(TestContext.TestContext))
}
