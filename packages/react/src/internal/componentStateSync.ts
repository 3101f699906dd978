/**
 * What `useTamboComponentState` shows.
 *
 * @since 0.2.0
 * @category Internal
 */
export interface ComponentStateSnapshot<S> {
  readonly value: S
  /** A change is waiting for its debounce or for the server's answer. */
  readonly isPending: boolean
  readonly error: Error | undefined
}

/** Structural equality of JSON values: the server answers with copies. */
export const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (Object.is(a, b)) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  for (const key of ka) {
    if (!Object.hasOwn(b, key) || !jsonEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) {
      return false
    }
  }
  return true
}

/**
 * One value of a component's state, kept locally and sent to the server a
 * debounce after the last change. A tiny external store, so the hook is
 * `useSyncExternalStore` over it. One send at a time: a change made while
 * one is on its way goes once it ended, so the server takes them in order
 * and ends with the last, and the error shown is the last send's. The
 * server's value (the store's block, after a run or a reload) replaces the
 * local one only while no local change is on its way: a user's change is
 * never overwritten by an older state.
 *
 * @since 0.2.0
 * @category Internal
 */
export class ComponentStateSync<S> {
  #snapshot: ComponentStateSnapshot<S>
  /** Changed locally and not sent yet. */
  #dirty = false
  #inFlight = false
  #timer: ReturnType<typeof setTimeout> | undefined
  readonly #listeners = new Set<() => void>()
  /**
   * Keeps what sends alive (the provider's client) until the returned
   * function is called: held from a send until the last one ended, so a
   * change sent as the provider unmounts reaches the server.
   */
  retain: (() => () => void) | undefined
  /**
   * What a send waits for before it holds the client and goes (a run in
   * flight on the thread, which the server takes no state during): a
   * Promise, or `undefined` to go at once. The change is pending meanwhile.
   */
  ready: (() => Promise<void> | undefined) | undefined
  /**
   * Whether a send failed because its client went (one the app destroyed to
   * give another): the change is then not the user's error, and waits,
   * pending, for the next `send` (see {@link resume}).
   */
  clientGone: ((error: unknown) => boolean) | undefined
  /** The send whose client went under a change still to store. */
  #stranded: ((value: S) => Promise<unknown>) | undefined

  constructor(
    initial: S,
    /** Sends a value; read at each send, so it may change (a thread that got its id). */
    public send: ((value: S) => Promise<unknown>) | undefined,
    public debounceMs: number
  ) {
    this.#snapshot = { value: initial, isPending: false, error: undefined }
  }

  readonly getSnapshot = (): ComponentStateSnapshot<S> => this.#snapshot

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /** A local change: shown at once, sent after the debounce. */
  set(value: S): void {
    if (this.send === undefined) return this.#set({ value })
    this.#dirty = true
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = setTimeout(this.flush, this.debounceMs)
    this.#set({ value, isPending: true })
  }

  /** Sends a waiting change now, or once the send on its way ended. */
  readonly flush = (): void => {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
    const send = this.send
    if (!this.#dirty || send === undefined || this.#inFlight) return
    this.#dirty = false
    this.#inFlight = true
    let waiting: Promise<void> | undefined
    try {
      waiting = this.ready?.()
    } catch {
      waiting = undefined
    }
    if (waiting === undefined) return this.#go(send)
    // The newest value goes once ready, by the send of then (a thread that got its id).
    void waiting.then(() => this.#go(this.send ?? send), () => this.#go(this.send ?? send))
  }

  #go(send: (value: S) => Promise<unknown>): void {
    const value = this.#snapshot.value
    this.#dirty = false
    let release: (() => void) | undefined
    let sent: Promise<unknown>
    try {
      release = this.retain?.()
      sent = send(value)
    } catch (error) {
      sent = Promise.reject(error)
    }
    sent.then(
      () => this.#settled(undefined),
      (error: unknown) => {
        if (this.clientGone?.(error) === true) return this.#strand(send)
        this.#settled(error instanceof Error ? error : new Error(String(error)))
      }
    ).finally(release)
  }

  /** The change stays to store, by the next client's send: at once if it came meanwhile. */
  #strand(send: (value: S) => Promise<unknown>): void {
    this.#inFlight = false
    this.#dirty = true
    this.#stranded = send
    this.#set({ isPending: true })
    this.resume()
  }

  /**
   * Sends a change whose client went, now that `send` is another's (a new
   * client); nothing otherwise.
   */
  readonly resume = (): void => {
    const stranded = this.#stranded
    if (stranded === undefined || this.send === undefined || this.send === stranded) return
    this.#stranded = undefined
    // A change made since whose debounce still runs goes with it.
    if (this.#dirty && !this.#inFlight) this.flush()
  }

  /** The server's value, as the store has it now. */
  server(value: S | undefined): void {
    if (value === undefined || this.#dirty || this.#inFlight) return
    // The server holds what is shown now: a failed send's error is over.
    this.#set({ ...(jsonEqual(value, this.#snapshot.value) ? {} : { value }), error: undefined })
  }

  #settled(error: Error | undefined): void {
    this.#inFlight = false
    this.#stranded = undefined
    this.#set({ isPending: this.#dirty, error })
    // A change made meanwhile goes now, unless its debounce still runs.
    if (this.#dirty && this.#timer === undefined) this.flush()
  }

  #set(patch: Partial<ComponentStateSnapshot<S>>): void {
    const next = { ...this.#snapshot, ...patch }
    if (next.value === this.#snapshot.value && next.isPending === this.#snapshot.isPending && next.error === this.#snapshot.error) {
      return
    }
    this.#snapshot = next
    for (const listener of [...this.#listeners]) listener()
  }
}
