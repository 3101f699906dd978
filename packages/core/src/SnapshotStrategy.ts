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
import type * as Duration from "effect/Duration"
import { dual } from "effect/Function"
import type * as Stream from "effect/Stream"
import * as internal from "./internal/snapshot/snapshots.js"
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
// Streams
// ---------------------------------------------------------------------------

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
} = dual(2, internal.snapshots)
