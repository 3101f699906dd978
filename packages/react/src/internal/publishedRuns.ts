import type { RunSnapshot, SnapshotStrategy, TamboStream, TamboThread } from "@tambo-effect/client"
import { Batcher, type ClientHandle } from "./clientHandle.js"

/**
 * The snapshots a strategy published for each run of the client in flight:
 * an external store for `useSyncExternalStore`. It observes the client
 * (`subscribeToSnapshots`) only while someone listens; changes reach React
 * batched like the client's state (the provider's `updates`).
 *
 * A run is held from its first event (always published) until its final
 * thread arrives; then it is dropped and the client's state, which by then
 * holds the same thread, shows again.
 *
 * @since 0.1.0
 * @category Internal
 */
export class PublishedRuns {
  readonly #handle: ClientHandle
  readonly #strategy: SnapshotStrategy.Strategy
  readonly #runs = new Map<TamboStream, TamboThread>()
  readonly #listeners = new Set<() => void>()
  readonly #batcher: Batcher
  #stop: (() => void) | undefined

  constructor(handle: ClientHandle, strategy: SnapshotStrategy.Strategy) {
    this.#handle = handle
    this.#strategy = strategy
    this.#batcher = new Batcher(() => handle.notifyMode, this.#emit)
  }

  /** The last snapshot published for a run in flight on `threadId`. */
  threadFor(threadId: string): TamboThread | undefined {
    for (const thread of this.#runs.values()) if (thread.id === threadId) return thread
    return undefined
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    if (this.#listeners.size === 0) {
      const release = this.#handle.retain()
      const unsubscribe = this.#handle.client().subscribeToSnapshots(this.#onSnapshot, { strategy: this.#strategy })
      this.#stop = () => {
        unsubscribe()
        release()
      }
    }
    this.#listeners.add(listener)
    return () => {
      if (!this.#listeners.delete(listener) || this.#listeners.size > 0) return
      this.#stop?.()
      this.#stop = undefined
      this.#batcher.cancel()
      // Nothing observes the runs any more: what is held would go stale.
      this.#runs.clear()
    }
  }

  readonly #onSnapshot = ({ final, stream, thread }: RunSnapshot): void => {
    if (final) this.#runs.delete(stream)
    else this.#runs.set(stream, thread)
    this.#batcher.schedule()
  }

  readonly #emit = (): void => {
    for (const listener of [...this.#listeners]) listener()
  }
}
