/**
 * The client's `subscribe`: listeners called at most once per microtask
 * after a change of the store's state or of what the client keeps beside
 * it (the pending approvals, the runs in flight). The store is listened to
 * only while someone listens to the client.
 *
 * @internal
 */
import type { ClientState, TamboStore } from "../Store.js"

/** @internal */
export class Notifier {
  readonly #store: TamboStore<ClientState>
  readonly #listeners = new Set<() => void>()
  #unsubscribeStore: (() => void) | undefined
  #scheduled = false
  #closed = false
  #lastNotified: ClientState | undefined
  /** Bumped by `changed()`: listeners hear of it like of a state change. */
  #version = 0
  #lastNotifiedVersion = 0

  readonly #onListenerError: (error: unknown) => void

  /** `onListenerError` hears of a listener's throw: the other listeners are called all the same. */
  constructor(store: TamboStore<ClientState>, onListenerError: (error: unknown) => void) {
    this.#store = store
    this.#onListenerError = onListenerError
  }

  /** Calls `listener` after changes; returns the unsubscribe function. Once closed, the listener is never called. */
  subscribe(listener: () => void): () => void {
    if (this.#closed) return () => {}
    if (this.#listeners.size === 0) {
      this.#lastNotified = this.#store.getState()
      this.#lastNotifiedVersion = this.#version
      this.#unsubscribeStore = this.#store.subscribe(this.#onStoreChange)
    }
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
      if (this.#listeners.size === 0) this.#stopListening()
    }
  }

  /** Something listeners can see changed besides the store's state. */
  changed(): void {
    this.#version++
    if (this.#listeners.size > 0 && !this.#closed) this.#onStoreChange()
  }

  /** Forgets every listener and stops listening to the store, for good. */
  close(): void {
    this.#closed = true
    this.#listeners.clear()
    this.#stopListening()
  }

  readonly #onStoreChange = () => {
    if (this.#scheduled) return
    this.#scheduled = true
    queueMicrotask(this.#notify)
  }

  readonly #notify = () => {
    this.#scheduled = false
    const state = this.#store.getState()
    if (state === this.#lastNotified && this.#version === this.#lastNotifiedVersion) return
    this.#lastNotified = state
    this.#lastNotifiedVersion = this.#version
    for (const listener of [...this.#listeners]) {
      // Unsubscribed (or the client closed) by a listener called before it.
      if (!this.#listeners.has(listener)) continue
      try {
        listener()
      } catch (error) {
        this.#onListenerError(error)
      }
    }
  }

  #stopListening() {
    this.#unsubscribeStore?.()
    this.#unsubscribeStore = undefined
  }
}
