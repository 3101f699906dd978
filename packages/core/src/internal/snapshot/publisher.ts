/**
 * The publisher: which pending snapshot is due, one per run of the stream,
 * mutable, no effects inside; and the final snapshot every stream of
 * snapshots ends with.
 *
 * @internal
 */
import * as Stream from "effect/Stream"
import type * as Tambo from "../../Tambo.js"
import type * as Types from "../../Types.js"
import { holds, startsWithSpace, textDelta } from "./flags.js"
import { accepts, type Entry, ONE, type Plan } from "./plan.js"

/** Decides, event by event and tick by tick, which snapshots of a run a plan publishes. */
export class Publisher {
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

/** Emits the final snapshot after the source, also before its failure. */
export const withFinal = <E, R>(
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
