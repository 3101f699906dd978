/**
 * The listeners of `subscribeToSnapshots`: each observes every run of the
 * client through its strategy (core's `SnapshotStrategy.snapshots`), from
 * the run's first event to its final thread.
 *
 * @internal
 */
import * as SnapshotStrategy from "@tambo-effect/core/SnapshotStrategy"
import type { RunSnapshot, SubscribeToSnapshotsOptions } from "../TamboClient.js"
import type { RunEntry } from "./runs.js"

/** A listener, and the runs it observes. */
interface Subscription {
  readonly strategy: SnapshotStrategy.Strategy
  readonly listener: (snapshot: RunSnapshot) => void
  readonly stops: Map<RunEntry, () => void>
}

/** @internal */
export class SnapshotSubscriptions {
  readonly #subscriptions = new Set<Subscription>()
  #closed = false

  /** Adds a listener that observes `runs` (those in flight) and every run after. */
  add(
    listener: (snapshot: RunSnapshot) => void,
    options: SubscribeToSnapshotsOptions,
    runs: Iterable<RunEntry>
  ): () => void {
    if (this.#closed) return () => undefined
    const subscription: Subscription = {
      strategy: options.strategy ?? SnapshotStrategy.immediate,
      listener,
      stops: new Map()
    }
    this.#subscriptions.add(subscription)
    for (const entry of runs) observe(subscription, entry)
    return () => {
      if (!this.#subscriptions.delete(subscription)) return
      stopAll(subscription)
    }
  }

  /** A run started: every listener observes it. */
  runStarted(entry: RunEntry): void {
    for (const subscription of this.#subscriptions) observe(subscription, entry)
  }

  /** Stops every observation, for good (no run is cancelled). */
  close(): void {
    this.#closed = true
    for (const subscription of this.#subscriptions) stopAll(subscription)
    this.#subscriptions.clear()
  }
}

const stopAll = (subscription: Subscription) => {
  for (const stop of subscription.stops.values()) stop()
  subscription.stops.clear()
}

const observe = (subscription: Subscription, entry: RunEntry) => {
  const { listener, stops } = subscription
  // The run's first event is always delivered: a UI learns at once that the run started.
  let first = true
  const firstEvent = SnapshotStrategy.custom(() => {
    const isFirst = first
    first = false
    return isFirst
  })
  let ended = false
  const stop = entry.run.observe(SnapshotStrategy.any(subscription.strategy, firstEvent), {
    onSnapshot: (thread) => listener({ stream: entry.stream, threadId: thread.id, thread, final: false }),
    onEnd: (thread) => {
      ended = true
      stops.delete(entry)
      if (thread !== undefined) listener({ stream: entry.stream, threadId: thread.id, thread, final: true })
    }
  })
  if (!ended) stops.set(entry, stop)
}
