/**
 * Update strategies for streamed runs: which of a run's snapshots reach the
 * screen, and when.
 *
 * A run emits one {@link Tambo.RunEvent} per event, each with the thread as it
 * stands after that event. Rendering every one of them re-renders on every
 * token; {@link snapshots} reads the whole run and lets through only the
 * snapshots a {@link Strategy} picks:
 *
 * ```ts
 * tambo.run("Hi").pipe(
 *   SnapshotStrategy.snapshots(
 *     SnapshotStrategy.any(SnapshotStrategy.wordBoundary, SnapshotStrategy.throttle("100 millis"))
 *   ),
 *   Stream.runForEach((thread) => render(thread))
 * )
 * ```
 *
 * **The model.** Every event the strategy has not yet published is
 * *pending*. Whenever an event arrives (and whenever a timer the strategy set
 * expires), the newest pending event the strategy *accepts* is published:
 * its snapshot is emitted and every pending event up to it is settled.
 *
 * - Event rules look at one event, once, when it arrives:
 *   {@link wordBoundary}, {@link punctuation}, {@link custom}
 *   ({@link immediate} accepts every event).
 * - {@link everyN} accepts an event at least `n` events after the last
 *   published one.
 * - Time rules are gates over all pending events: {@link throttle} is open
 *   once its duration has passed since the last emitted snapshot (leading and
 *   trailing edges); {@link debounce} is open once its duration has passed
 *   since the last event. While a gate is closed and events are pending, a
 *   timer wakes the stream when it opens.
 * - {@link any} accepts an event when one of its members does; {@link all}
 *   when every member does. So `any(wordBoundary, throttle(d))` publishes at
 *   word boundaries and, between them, at least every `d` while text flows;
 *   `all(wordBoundary, throttle(d))` publishes at most every `d`, and only
 *   snapshots taken at a word boundary (the trailing edge publishes the latest
 *   boundary, which may be a few events old).
 *
 * **Always.** The last event's snapshot is always emitted last when the
 * source ends — also when the source fails: everything received is shown,
 * then the failure is propagated unchanged. Snapshots are conflated (when
 * several are due at once only the newest is emitted) and never repeated (a
 * snapshot reference equal to the last one emitted is skipped; the events of
 * one chunk of a run share one snapshot).
 *
 * A snapshot belongs to the chunk of events it arrived with, so a snapshot
 * published for a word boundary may already hold the first letters of the
 * next word when the network delivered them together.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type * as Tambo from "./Tambo.js"
import type * as Types from "./Types.js"

// ---------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------

/**
 * Decides which snapshots of a run are published. Build one with the
 * constructors ({@link immediate}, {@link everyN}, ...) and combine with
 * {@link any} and {@link all}.
 *
 * @since 0.1.0
 * @category Models
 */
export type Strategy = Immediate | EveryN | WordBoundary | Punctuation | Throttle | Debounce | Any | All | Custom

/**
 * Publishes every snapshot.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Immediate {
  readonly _tag: "Immediate"
}

/**
 * Publishes an event's snapshot when it is at least the `n`-th event since
 * the last published one. Counts every event.
 *
 * @since 0.1.0
 * @category Models
 */
export interface EveryN {
  readonly _tag: "EveryN"
  readonly n: number
}

/**
 * Holds text back until a word is complete; every other event passes.
 *
 * @since 0.1.0
 * @category Models
 */
export interface WordBoundary {
  readonly _tag: "WordBoundary"
}

/**
 * Holds text back until a clause ends; every other event passes.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Punctuation {
  readonly _tag: "Punctuation"
}

/**
 * At most one snapshot per `duration`, leading and trailing.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Throttle {
  readonly _tag: "Throttle"
  readonly duration: Duration.DurationInput
}

/**
 * Publishes once the run has been quiet for `duration`.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Debounce {
  readonly _tag: "Debounce"
  readonly duration: Duration.DurationInput
}

/**
 * Publishes what any member would publish. With no members, only the final
 * snapshot is published.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Any {
  readonly _tag: "Any"
  readonly strategies: ReadonlyArray<Strategy>
}

/**
 * Publishes what every member would publish. With no members, it is
 * {@link immediate}.
 *
 * @since 0.1.0
 * @category Models
 */
export interface All {
  readonly _tag: "All"
  readonly strategies: ReadonlyArray<Strategy>
}

/**
 * Publishes an event's snapshot when `shouldPublish` says so.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Custom {
  readonly _tag: "Custom"
  /**
   * Called once per event, when it arrives. `sinceLastPublished` counts the
   * events since the last published one, this one included (so it is at
   * least 1). Must not throw: a throw is a defect of the stream.
   */
  readonly shouldPublish: (event: Tambo.RunEvent, sinceLastPublished: number) => boolean
}

// ---------------------------------------------------------------------------
// Constructors
// ---------------------------------------------------------------------------

/**
 * Publishes every snapshot (each distinct one once).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const immediate: Strategy = { _tag: "Immediate" }

/**
 * Publishes every `n`-th event's snapshot, counting every event. `n` below
 * 1 (or not a number) counts as 1; fractions are rounded down.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const everyN = (n: number): Strategy => ({ _tag: "EveryN", n: n >= 1 ? Math.floor(n) : 1 })

/**
 * Publishes when a word is complete. A text delta (`TEXT_MESSAGE_CONTENT`,
 * or thinking and reasoning content) ends a word when it ends with
 * whitespace; a delta that starts with whitespace — how model tokens usually
 * come, `" world"` — shows that the text before it ended a word, so the
 * previous event is published. Every event that is not a text delta (message
 * start and end, tool calls, components, the run's end, ...) passes.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const wordBoundary: Strategy = { _tag: "WordBoundary" }

/**
 * Publishes when a clause ends: a text delta ending with `.` `,` `;` `:`
 * `!` `?` (or their full-width forms) or a newline, optionally followed by
 * closing quotes or brackets and whitespace. Every event that is not a text
 * delta passes, as with {@link wordBoundary}.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const punctuation: Strategy = { _tag: "Punctuation" }

/**
 * At most one snapshot per `duration`: the first event after a quiet period
 * is published at once (leading edge); events within `duration` of the last
 * emitted snapshot wait until it has passed, then the newest one is
 * published (trailing edge).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const throttle = (duration: Duration.DurationInput): Strategy => ({ _tag: "Throttle", duration })

/**
 * Publishes the newest snapshot once no event has arrived for `duration`.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const debounce = (duration: Duration.DurationInput): Strategy => ({ _tag: "Debounce", duration })

/**
 * Publishes an event's snapshot when `shouldPublish(event, sinceLastPublished)`
 * returns `true`; it sees every event, once, when it arrives.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const custom = (shouldPublish: Custom["shouldPublish"]): Strategy => ({ _tag: "Custom", shouldPublish })

// ---------------------------------------------------------------------------
// Combinators
// ---------------------------------------------------------------------------

/**
 * Publishes when any of `strategies` would: the union. A time member bounds
 * how stale the shown snapshot can get (`any(everyN(20), debounce(d))`:
 * every 20 events, and whatever is left once the run pauses for `d`).
 *
 * @since 0.1.0
 * @category Combinators
 */
export const any = (...strategies: ReadonlyArray<Strategy>): Strategy => ({ _tag: "Any", strategies })

/**
 * Publishes the newest event every one of `strategies` accepts: the
 * intersection. A time member acts as a gate (`all(wordBoundary,
 * throttle(d))`: word boundaries, at most one per `d`).
 *
 * @since 0.1.0
 * @category Combinators
 */
export const all = (...strategies: ReadonlyArray<Strategy>): Strategy => ({ _tag: "All", strategies })

// ---------------------------------------------------------------------------
// Compilation: a strategy becomes a monotone boolean formula over per-event
// flags (event rules, computed once on arrival) and gates (time rules,
// computed from the clock when deciding).
// ---------------------------------------------------------------------------

type Node =
  | { readonly _tag: "Always" }
  | { readonly _tag: "Flag"; readonly bit: number }
  | { readonly _tag: "Gate"; readonly gate: number }
  /** At least `n` events since the last published one, counted when deciding. */
  | { readonly _tag: "Count"; readonly n: number }
  | { readonly _tag: "Or"; readonly nodes: ReadonlyArray<Node> }
  | { readonly _tag: "And"; readonly nodes: ReadonlyArray<Node> }

type FlagRule =
  | { readonly _tag: "WordBoundary" }
  | { readonly _tag: "Punctuation" }
  | { readonly _tag: "Custom"; readonly shouldPublish: Custom["shouldPublish"] }

interface GateRule {
  readonly _tag: "Throttle" | "Debounce"
  readonly millis: number
}

interface Plan {
  readonly root: Node
  readonly flags: ReadonlyArray<FlagRule>
  readonly gates: ReadonlyArray<GateRule>
  /** The flag set retroactively on the previous event when a delta starts with whitespace. */
  readonly wordBoundaryBit: number | undefined
}

const always: Node = { _tag: "Always" }

const compile = (strategy: Strategy): Plan => {
  const flags: Array<FlagRule> = []
  const flagBits = new Map<unknown, number>()
  const gates: Array<GateRule> = []
  const gateIndexes = new Map<string, number>()

  // Equal rules share a flag or gate, so the pending set stays small.
  const flag = (key: unknown, rule: FlagRule): Node => {
    let bit = flagBits.get(key)
    if (bit === undefined) {
      bit = flags.length
      flags.push(rule)
      flagBits.set(key, bit)
    }
    return { _tag: "Flag", bit }
  }
  const gate = (rule: GateRule): Node => {
    const key = `${rule._tag}:${rule.millis}`
    let index = gateIndexes.get(key)
    if (index === undefined) {
      index = gates.length
      gates.push(rule)
      gateIndexes.set(key, index)
    }
    return { _tag: "Gate", gate: index }
  }
  const millisOf = (input: Duration.DurationInput): number => {
    const millis = Duration.toMillis(Duration.decode(input))
    return millis > 0 ? millis : 0
  }

  const go = (s: Strategy): Node => {
    switch (s._tag) {
      case "Immediate":
        return always
      case "EveryN": {
        const n = s.n >= 1 ? Math.floor(s.n) : 1
        return n === 1 ? always : { _tag: "Count", n }
      }
      case "WordBoundary":
        return flag("WordBoundary", { _tag: "WordBoundary" })
      case "Punctuation":
        return flag("Punctuation", { _tag: "Punctuation" })
      case "Custom":
        return flag(s.shouldPublish, { _tag: "Custom", shouldPublish: s.shouldPublish })
      case "Throttle": {
        const millis = millisOf(s.duration)
        return millis === 0 ? always : gate({ _tag: "Throttle", millis })
      }
      case "Debounce": {
        const millis = millisOf(s.duration)
        return millis === 0 ? always : gate({ _tag: "Debounce", millis })
      }
      case "Any": {
        const nodes = s.strategies.map(go)
        return nodes.length === 1 ? nodes[0]! : { _tag: "Or", nodes }
      }
      case "All": {
        const nodes = s.strategies.map(go).filter((node) => node !== always)
        return nodes.length === 0 ? always : nodes.length === 1 ? nodes[0]! : { _tag: "And", nodes }
      }
    }
  }

  const root = go(strategy)
  return { root, flags, gates, wordBoundaryBit: flagBits.get("WordBoundary") }
}

/** A pending event: its position in the run, its snapshot, its flags. */
interface Entry {
  readonly index: number
  readonly snapshot: Types.TamboThread
  readonly mask: string
}

/** A mask is one character per flag, "1" when the flag holds. */
const ONE = 49

/** Whether `node` accepts the pending `entry`, `since` events after the last published one. */
const accepts = (node: Node, entry: Entry, since: number, gatesOpen: ReadonlyArray<boolean>): boolean => {
  switch (node._tag) {
    case "Always":
      return true
    case "Flag":
      return entry.mask.charCodeAt(node.bit) === ONE
    case "Gate":
      return gatesOpen[node.gate]!
    case "Count":
      return since >= node.n
    case "Or":
      return node.nodes.some((child) => accepts(child, entry, since, gatesOpen))
    case "And":
      return node.nodes.every((child) => accepts(child, entry, since, gatesOpen))
  }
}

// ---------------------------------------------------------------------------
// Text rules
// ---------------------------------------------------------------------------

const textDelta = (event: Tambo.RunEvent["event"]): string | undefined => {
  switch (event.type) {
    case "TEXT_MESSAGE_CONTENT":
    case "THINKING_TEXT_MESSAGE_CONTENT":
    case "REASONING_MESSAGE_CONTENT":
    case "REASONING_MESSAGE_CHUNK":
      return event.delta
    default:
      return undefined
  }
}

const startsWithSpace = /^\s/u
const endsWithSpace = /\s$/u
const endsClause = /[.,;:!?\n\u3001\u3002\uFF01\uFF0C\uFF0E\uFF1A\uFF1B\uFF1F]["'\u2019\u201D)\]]*\s*$/u

const holds = (rule: FlagRule, runEvent: Tambo.RunEvent, text: string | undefined, since: number): boolean => {
  switch (rule._tag) {
    case "WordBoundary":
      return text === undefined || endsWithSpace.test(text)
    case "Punctuation":
      return text === undefined || endsClause.test(text)
    case "Custom":
      return rule.shouldPublish(runEvent, since)
  }
}

// ---------------------------------------------------------------------------
// The publisher: one per run of the stream, mutable, no effects inside.
// ---------------------------------------------------------------------------

class Publisher {
  /** Events seen. */
  private count = 0
  private lastPublishedIndex = 0
  private lastEmitted: Types.TamboThread | undefined = undefined
  private lastEmittedAt: number | undefined = undefined
  private lastEventAt = 0
  private latest: Entry | undefined = undefined
  /**
   * The newest pending event per mask. The formula is monotone (in the flags,
   * the gates and the event count) and the newest accepted event is the one
   * published, so an older event with the same flags is never chosen: at
   * most 2^flags entries, however long the wait.
   */
  private readonly pending = new Map<string, Entry>()
  private readonly gatesOpen: Array<boolean>

  constructor(private readonly plan: Plan) {
    this.gatesOpen = plan.gates.map(() => false)
  }

  arrive(runEvent: Tambo.RunEvent, now: number): Types.TamboThread | undefined {
    const index = ++this.count
    const since = index - this.lastPublishedIndex
    const { flags, wordBoundaryBit } = this.plan
    const text = textDelta(runEvent.event)
    if (wordBoundaryBit !== undefined && text !== undefined && startsWithSpace.test(text)) {
      this.markPrevious(wordBoundaryBit)
    }
    let mask = ""
    for (let bit = 0; bit < flags.length; bit++) {
      mask += holds(flags[bit]!, runEvent, text, since) ? "1" : "0"
    }
    const entry: Entry = { index, snapshot: runEvent.snapshot, mask }
    this.pending.set(mask, entry)
    this.latest = entry
    this.lastEventAt = now
    return this.publishDue(now)
  }

  tick(now: number): Types.TamboThread | undefined {
    return this.publishDue(now)
  }

  /** The last event's snapshot, unless it was the last one emitted. */
  finish(): Types.TamboThread | undefined {
    this.pending.clear()
    this.lastPublishedIndex = this.count
    const snapshot = this.latest?.snapshot
    if (snapshot === undefined || snapshot === this.lastEmitted) return undefined
    this.lastEmitted = snapshot
    return snapshot
  }

  /** When a closed gate opens, if events are pending; strictly after `now`. */
  nextWake(now: number): number | undefined {
    if (this.pending.size === 0) return undefined
    let wake: number | undefined
    for (const rule of this.plan.gates) {
      const opensAt = rule._tag === "Throttle"
        ? (this.lastEmittedAt === undefined ? undefined : this.lastEmittedAt + rule.millis)
        : this.lastEventAt + rule.millis
      if (opensAt !== undefined && opensAt > now && Number.isFinite(opensAt) && (wake === undefined || opensAt < wake)) {
        wake = opensAt
      }
    }
    return wake
  }

  /** The previous event, if still pending, gets `bit` (its word ended). */
  private markPrevious(bit: number): void {
    const previous = this.latest
    if (previous === undefined || previous.index <= this.lastPublishedIndex) return
    if (previous.mask.charCodeAt(bit) === ONE) return
    const mask = previous.mask.slice(0, bit) + "1" + previous.mask.slice(bit + 1)
    const marked: Entry = { index: previous.index, snapshot: previous.snapshot, mask }
    if (this.pending.get(previous.mask) === previous) this.pending.delete(previous.mask)
    this.pending.set(mask, marked)
    this.latest = marked
  }

  private publishDue(now: number): Types.TamboThread | undefined {
    if (this.pending.size === 0) return undefined
    const { gates, root } = this.plan
    for (let i = 0; i < gates.length; i++) {
      const rule = gates[i]!
      this.gatesOpen[i] = rule._tag === "Throttle"
        ? this.lastEmittedAt === undefined || now - this.lastEmittedAt >= rule.millis
        : now - this.lastEventAt >= rule.millis
    }
    let chosen: Entry | undefined
    for (const entry of this.pending.values()) {
      if (
        (chosen === undefined || entry.index > chosen.index) &&
        accepts(root, entry, entry.index - this.lastPublishedIndex, this.gatesOpen)
      ) {
        chosen = entry
      }
    }
    if (chosen === undefined) return undefined
    this.lastPublishedIndex = chosen.index
    for (const [mask, entry] of this.pending) {
      if (entry.index <= chosen.index) this.pending.delete(mask)
    }
    return this.emit(chosen.snapshot, now)
  }

  private emit(snapshot: Types.TamboThread, now: number): Types.TamboThread | undefined {
    if (snapshot === this.lastEmitted) return undefined
    this.lastEmitted = snapshot
    this.lastEmittedAt = now
    return snapshot
  }
}

// ---------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------

/** Emits the final snapshot after the source, also before its failure. */
const withFinal = <E, R>(
  published: Stream.Stream<Types.TamboThread, E, R>,
  publisher: Publisher
): Stream.Stream<Types.TamboThread, E, R> => {
  const final = Stream.suspend(() => {
    const snapshot = publisher.finish()
    return snapshot === undefined ? Stream.empty : Stream.succeed(snapshot)
  })
  return published.pipe(
    Stream.catchAllCause((cause) => Stream.concat(final, Stream.failCause(cause))),
    Stream.concat(final)
  )
}

const untimed = <E, R>(
  source: Stream.Stream<Tambo.RunEvent, E, R>,
  plan: Plan
): Stream.Stream<Types.TamboThread, E, R> =>
  Stream.suspend(() => {
    const publisher = new Publisher(plan)
    const published = Stream.mapChunks(source, (chunk) => {
      const out: Array<Types.TamboThread> = []
      for (const runEvent of chunk) {
        const snapshot = publisher.arrive(runEvent, 0)
        if (snapshot !== undefined) out.push(snapshot)
      }
      return Chunk.unsafeFromArray(out)
    })
    return withFinal(published, publisher)
  })

const sleepUntil = (at: number) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sleep(Duration.millis(Math.max(0, at - now))))

/** What the publisher of a timed strategy reacts to, in arrival order. */
type Signal<E> =
  | { readonly _tag: "Events"; readonly events: Chunk.Chunk<Tambo.RunEvent> }
  | { readonly _tag: "Tick" }
  | { readonly _tag: "End" }
  | { readonly _tag: "Halt"; readonly cause: Cause.Cause<E> }

const tickSignal: Signal<never> = { _tag: "Tick" }
const endSignal: Signal<never> = { _tag: "End" }

/**
 * The source and a timer feed one queue, read by the publisher. Unlike
 * `Stream.merge`, which forks a fiber per chunk, this costs one offer per
 * chunk and one take per batch of what arrived meanwhile; the timer fiber
 * only restarts when an earlier wake-up is needed.
 */
const timed = <E, R>(
  source: Stream.Stream<Tambo.RunEvent, E, R>,
  plan: Plan
): Stream.Stream<Types.TamboThread, E, R> =>
  Stream.unwrapScoped(Effect.gen(function* () {
    const signals = yield* Effect.acquireRelease(Queue.bounded<Signal<E>>(16), Queue.shutdown)
    const wakeups = yield* Effect.acquireRelease(Queue.sliding<number>(1), Queue.shutdown)
    yield* source.pipe(
      // A run's stream writes an empty chunk after each one (see Tambo.run): nothing to signal.
      Stream.runForEachChunk((events) =>
        Chunk.isEmpty(events) ? Effect.void : Queue.offer(signals, { _tag: "Events", events })
      ),
      Effect.matchCauseEffect({
        onSuccess: () => Queue.offer(signals, endSignal),
        onFailure: (cause) => Queue.offer(signals, { _tag: "Halt", cause })
      }),
      Effect.forkScoped
    )
    // A new, earlier wake-up interrupts the sleep in progress.
    yield* Stream.fromQueue(wakeups).pipe(
      Stream.flatMap((at) => Stream.fromEffect(sleepUntil(at)), { switch: true }),
      Stream.runForEach(() => Queue.offer(signals, tickSignal)),
      Effect.forkScoped
    )

    const publisher = new Publisher(plan)
    // The time the timer sleeps until; a later wake-up is requested once it fires.
    let armedAt: number | undefined
    /** Emits what was published, after asking the timer for the next wake-up if it is earlier. */
    const emit = (out: Array<Types.TamboThread>, now: number) => {
      const published = Chunk.unsafeFromArray(out)
      if (armedAt !== undefined && armedAt <= now) armedAt = undefined
      const wake = publisher.nextWake(now)
      if (wake === undefined || (armedAt !== undefined && armedAt <= wake)) return Effect.succeed(published)
      armedAt = wake
      return Effect.as(Queue.offer(wakeups, wake), published)
    }
    // Set once the source has ended; the published snapshots before it go out first.
    let ended: Cause.Cause<Option.Option<E>> | undefined
    /** Everything that arrived since the last pull, at one clock reading. */
    const react = (signals: Chunk.Chunk<Signal<E>>, now: number) => {
      const out: Array<Types.TamboThread> = []
      for (const signal of signals) {
        switch (signal._tag) {
          case "Events": {
            for (const runEvent of signal.events) {
              const snapshot = publisher.arrive(runEvent, now)
              if (snapshot !== undefined) out.push(snapshot)
            }
            break
          }
          case "Tick": {
            const snapshot = publisher.tick(now)
            if (snapshot !== undefined) out.push(snapshot)
            break
          }
          case "End":
            ended = Cause.fail(Option.none())
            break
          case "Halt":
            ended = Cause.map(signal.cause, Option.some)
            break
        }
        if (ended !== undefined) break
      }
      return ended !== undefined && out.length === 0 ? Effect.failCause(ended) : emit(out, now)
    }
    const pull = Effect.suspend(() =>
      ended !== undefined
        ? Effect.failCause(ended)
        : Effect.flatMap(Queue.takeBetween(signals, 1, 64), (batch) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => react(batch, now)))
    )
    return withFinal(Stream.repeatEffectChunkOption(pull), publisher)
  }))

/**
 * Reads a run's events to the end and emits only the snapshots `strategy`
 * publishes, each a `TamboThread`, always ending with the last event's
 * snapshot (also when the source fails: the snapshot, then the failure).
 * Conflated: the newest due snapshot only, and never the same reference
 * twice in a row. Strategies without time rules add no fibers or timers and
 * read the source as it is pulled. With time rules the source is read by a
 * fiber of its own, at most 16 chunks ahead (timers must fire while no event
 * comes), both ended with the stream; time comes from `Clock`, so `TestClock`
 * drives them in tests.
 *
 * @example
 * ```ts
 * tambo.run("Hi").pipe(SnapshotStrategy.snapshots(SnapshotStrategy.throttle("50 millis")))
 * ```
 *
 * @since 0.1.0
 * @category Combinators
 */
export const snapshots: {
  (strategy: Strategy): <E, R>(self: Stream.Stream<Tambo.RunEvent, E, R>) => Stream.Stream<Types.TamboThread, E, R>
  <E, R>(self: Stream.Stream<Tambo.RunEvent, E, R>, strategy: Strategy): Stream.Stream<Types.TamboThread, E, R>
} = dual(
  2,
  <E, R>(self: Stream.Stream<Tambo.RunEvent, E, R>, strategy: Strategy): Stream.Stream<Types.TamboThread, E, R> => {
    const plan = compile(strategy)
    return plan.gates.length === 0 ? untimed(self, plan) : timed(self, plan)
  }
)
