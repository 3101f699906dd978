import { type ClientState, createInitialState, type TamboClient } from "@tambo-effect/client"

/**
 * How store changes reach React: at most once per animation frame, or as
 * the client notifies (at most once per microtask).
 *
 * @since 0.1.0
 * @category Models
 */
export type NotifyMode = "animationFrame" | "microtask"

/** Fallback when frames do not come (a hidden tab), in milliseconds. */
const FRAME_FALLBACK_MS = 100

const initialState: ClientState = createInitialState()

/**
 * The provider's hold on its client.
 *
 * The client is created on first use, not on render: reading the state needs
 * no client (the initial state is a constant), so server rendering and
 * renders React throws away create nothing. Whatever uses the client
 * (the provider's mount, every store subscription) retains it; when the
 * last one lets go it is destroyed a microtask later, unless someone
 * retained it again meanwhile — which is what StrictMode's
 * unmount-and-remount of effects does, so it keeps one client. A client
 * given by the app is never created nor destroyed here.
 *
 * @since 0.1.0
 * @category Internal
 */
export class ClientHandle {
  readonly #given: TamboClient | undefined
  readonly #create: () => TamboClient
  readonly #notify: NotifyMode
  #owned: TamboClient | undefined
  #refs = 0
  readonly #listeners = new Set<() => void>()
  #unsubscribe: (() => void) | undefined
  #frame: number | undefined
  #fallback: ReturnType<typeof setTimeout> | undefined

  constructor(source: TamboClient | (() => TamboClient), notify: NotifyMode) {
    if (typeof source === "function") {
      this.#given = undefined
      this.#create = source
    } else {
      this.#given = source
      this.#create = () => source
    }
    this.#notify = notify
  }

  /** The client, created if needed. */
  readonly client = (): TamboClient => this.#given ?? (this.#owned ??= this.#create())

  /** The state, without creating a client. Usable as `getServerSnapshot`. */
  readonly getState = (): ClientState => (this.#given ?? this.#owned)?.getState() ?? initialState

  /** Keeps the client alive until the returned function is called (once). */
  retain(): () => void {
    this.#refs++
    this.client()
    let released = false
    return () => {
      if (released) return
      released = true
      this.#refs--
      if (this.#refs === 0) queueMicrotask(this.#collect)
    }
  }

  readonly #collect = (): void => {
    const client = this.#owned
    if (this.#refs > 0 || client === undefined) return
    this.#owned = undefined
    void client.destroy()
  }

  /** `useSyncExternalStore`'s subscribe: one client subscription fanned out, batched per frame. */
  readonly subscribe = (listener: () => void): (() => void) => {
    const release = this.retain()
    this.#listeners.add(listener)
    this.#unsubscribe ??= this.client().subscribe(this.#onChange)
    return () => {
      this.#listeners.delete(listener)
      if (this.#listeners.size === 0) this.#stopListening()
      release()
    }
  }

  readonly #onChange = (): void => {
    if (this.#notify === "microtask" || typeof requestAnimationFrame !== "function") return this.#emit()
    if (this.#frame !== undefined) return
    this.#frame = requestAnimationFrame(this.#emit)
    this.#fallback = setTimeout(this.#emit, FRAME_FALLBACK_MS)
  }

  readonly #emit = (): void => {
    this.#cancelFrame()
    for (const listener of [...this.#listeners]) listener()
  }

  #cancelFrame() {
    if (this.#frame !== undefined) cancelAnimationFrame(this.#frame)
    if (this.#fallback !== undefined) clearTimeout(this.#fallback)
    this.#frame = undefined
    this.#fallback = undefined
  }

  #stopListening() {
    this.#cancelFrame()
    this.#unsubscribe?.()
    this.#unsubscribe = undefined
  }
}
