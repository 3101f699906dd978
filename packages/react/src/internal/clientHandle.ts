import {
  type ClientState,
  createInitialState,
  type InitialInputMessage,
  isAbortError,
  type McpConnections,
  type PendingToolCallInfo,
  type TamboAuthState,
  type TamboClient,
  type TamboStore,
  type ToolDefinition
} from "@tambo-effect/client"
import { isLocalThreadId } from "@tambo-effect/core/ClientState"
import type { McpToolProgress } from "@tambo-effect/core/Mcp"
import { useEffect, useLayoutEffect, useSyncExternalStore } from "react"
import type { NotifyMode } from "../types.js"

/** Fallback when frames do not come (a hidden tab), in milliseconds. */
const FRAME_FALLBACK_MS = 100

const initialState: ClientState = createInitialState()
const NO_APPROVALS: ReadonlyArray<PendingToolCallInfo> = []
const NO_MCP_CLIENTS: McpConnections = {}

/**
 * Calls `emit` at most once per animation frame (with a timer as fallback
 * when frames do not come), or at once in `"microtask"` mode and where
 * there are no frames (the client already batches per microtask). The mode
 * is read at each change, so it may change.
 *
 * @since 0.1.0
 * @category Internal
 */
export class Batcher {
  readonly #mode: () => NotifyMode
  readonly #emit: () => void
  #frame: number | undefined
  #fallback: ReturnType<typeof setTimeout> | undefined

  constructor(mode: () => NotifyMode, emit: () => void) {
    this.#mode = mode
    this.#emit = emit
  }

  readonly schedule = (): void => {
    if (this.#mode() === "microtask" || typeof requestAnimationFrame !== "function") {
      // A frame asked for before the mode changed is not needed any more.
      this.cancel()
      return this.#emit()
    }
    if (this.#frame !== undefined) return
    this.#frame = requestAnimationFrame(this.#fire)
    this.#fallback = setTimeout(this.#fire, FRAME_FALLBACK_MS)
  }

  readonly #fire = (): void => {
    this.cancel()
    this.#emit()
  }

  cancel(): void {
    if (this.#frame !== undefined) cancelAnimationFrame(this.#frame)
    if (this.#fallback !== undefined) clearTimeout(this.#fallback)
    this.#frame = undefined
    this.#fallback = undefined
  }
}

/** The auth state of a destroyed client, and by default of a client not made yet. */
const NOT_YET: TamboAuthState = { status: "unauthenticated" }

/**
 * What a client made from these options says before it starts: a `userKey` (or an agent, which
 * needs no user) identifies at once, a `userToken` is `exchanging` until exchanged.
 */
export const authStateBefore = (options: {
  readonly userKey?: string | undefined
  readonly userToken?: string | undefined
  readonly agent?: unknown
}): TamboAuthState =>
  options.userKey !== undefined && options.userToken !== undefined
    ? { status: "invalid" }
    : options.userKey !== undefined || options.agent !== undefined
    ? { status: "identified", source: "userKey" }
    : options.userToken !== undefined
    ? { status: "exchanging" }
    : NOT_YET

/** A destroyed client acts for no one: its calls throw. */
const authStateOf = (client: TamboClient): TamboAuthState => {
  try {
    return client.getAuthState()
  } catch {
    return NOT_YET
  }
}

const sameAuthState = (a: TamboAuthState, b: TamboAuthState): boolean =>
  a.status === b.status &&
  (a.status !== "identified" || b.status !== "identified" || a.source === b.source) &&
  (a.status !== "error" || b.status !== "error" || a.error === b.error)

/**
 * The provider's hold on its client.
 *
 * The client is created on first use, not on render: reading the state needs
 * no client (the initial state is a constant), so server rendering and
 * renders React throws away create nothing. Whatever uses the client
 * (the provider's mount, every store subscription) retains it; when the
 * last one lets go it is destroyed a microtask later, unless someone
 * retained it again meanwhile — which is what StrictMode's
 * unmount-and-remount of effects does, so it keeps one client. A client a
 * render asked for (`useTamboClient()`) is destroyed the same way unless
 * the provider's mount retained it by then, which it does in the commit's
 * layout phase. A client made here starts its network work (the token
 * exchange, the MCP connections) only once retained, or at its first run:
 * one a render made and nobody kept requested nothing. A client given by
 * the app is never created nor destroyed here.
 *
 * The state outlives the clients made here: each is made on the same
 * store, so a tree hidden (React's `<Activity>`, a router keeping a page
 * it left), whose effects are cleaned up as at an unmount, finds its
 * threads again when it shows, in a new client.
 *
 * @since 0.1.0
 * @category Internal
 */
export class ClientHandle {
  readonly #given: TamboClient | undefined
  readonly #create: () => TamboClient
  /** How changes reach React: the provider's `updates`, which may change without a new client. */
  notifyMode: NotifyMode
  readonly #store: TamboStore<ClientState> | undefined
  #owned: TamboClient | undefined
  /** The client made here was held (a committed tree's), not only asked for by a render. */
  #ownedHeld = false
  /** The tools the app registered through the hooks, while the client holds them. */
  readonly #appTools = new Map<string, ToolDefinition>()
  /** A client went since the app's tools were last given back. */
  #appToolsLeft = false
  #refs = 0
  readonly #listeners = new Set<() => void>()
  #unsubscribe: (() => void) | undefined
  readonly #batcher: Batcher
  /** Who a client made from `source` acts for before it is made. */
  readonly #before: TamboAuthState

  /**
   * `store`: where the clients made from `source` keep their state (their `store` option);
   * `before`: who they act for before one is made (see {@link authStateBefore}).
   */
  constructor(
    source: TamboClient | (() => TamboClient),
    notify: NotifyMode,
    store?: TamboStore<ClientState>,
    before: TamboAuthState = NOT_YET
  ) {
    this.#store = store
    this.#before = before
    if (typeof source === "function") {
      this.#given = undefined
      this.#create = source
    } else {
      this.#given = source
      this.#create = () => source
    }
    this.notifyMode = notify
    this.#batcher = new Batcher(() => this.notifyMode, this.#emit)
  }

  /**
   * The client, created if needed. One created while nothing retains it (by
   * a render) is destroyed a microtask later unless retained by then: a
   * render React throws away, or a server render, whose effects never run,
   * leaves no client behind.
   */
  readonly client = (): TamboClient => {
    if (this.#given !== undefined) return this.#given
    if (this.#owned === undefined) {
      this.#owned = this.#create()
      if (this.#refs === 0) queueMicrotask(this.#collect)
    }
    return this.#owned
  }

  /**
   * The client to register the provider's tools, components and context
   * helpers with: `undefined` for one the app gave and destroyed (a tree
   * rendering again before the app gives its next client), which takes
   * nothing any more; the next client, a new handle, gets them all.
   */
  readonly liveClient = (): TamboClient | undefined => {
    const client = this.client()
    if (client !== this.#given) return client
    try {
      client.getTools()
      return client
    } catch (error) {
      // Its calls refuse once it is destroyed; anything else is not ours to hide.
      if (isAbortError(error) && error.reason === "ClientDestroyed") return undefined
      throw error
    }
  }

  /**
   * `useSyncExternalStore`'s subscribe for the client itself: keeps it while
   * subscribed. A retained client is never replaced, so there is nothing to
   * tell the listener; a render whose client was destroyed before it
   * committed reads the snapshot again at commit and gets the one kept.
   */
  readonly subscribeToClient = (_listener: () => void): (() => void) => this.retain()

  /** The client, if there is one now: none is created. */
  readonly currentClient = (): TamboClient | undefined => this.#given ?? this.#owned

  /** The state, without creating a client. Usable as `getServerSnapshot`. */
  readonly getState = (): ClientState =>
    (this.#given ?? this.#owned)?.getState() ?? this.#store?.getState() ?? initialState

  /** The client's pending approvals, without creating a client. */
  readonly getPendingApprovals = (): ReadonlyArray<PendingToolCallInfo> =>
    (this.#given ?? this.#owned)?.getPendingApprovals() ?? NO_APPROVALS

  /** The client's MCP connections, without creating a client (none once it is destroyed). */
  readonly getMcpClients = (): McpConnections => {
    const client = this.#given ?? this.#owned
    if (client === undefined) return NO_MCP_CLIENTS
    try {
      return client.getMcpClients()
    } catch {
      return NO_MCP_CLIENTS
    }
  }

  /** The latest progress of the model's call `toolCallId` while it runs, without creating a client. */
  readonly getMcpToolProgress = (toolCallId: string): McpToolProgress | undefined => {
    const client = this.#given ?? this.#owned
    if (client === undefined) return undefined
    try {
      return client.getMcpToolProgress(toolCallId)
    } catch {
      return undefined
    }
  }

  /** `useSyncExternalStore`'s subscribe for the MCP connections. */
  readonly subscribeToMcpClients = (listener: () => void): (() => void) => {
    const release = this.retain()
    const unsubscribe = this.client().subscribeToMcpClients(listener)
    return () => {
      unsubscribe()
      release()
    }
  }

  /**
   * The initial messages a thread opens with (the client's), or `fallback`
   * for a new conversation while there is no client.
   */
  readonly getInitialMessages = (
    threadId: string,
    fallback: ReadonlyArray<InitialInputMessage> | undefined
  ): ReadonlyArray<InitialInputMessage> | undefined => {
    const known = (this.#given ?? this.#owned)?.getInitialMessages(threadId)
    return known ?? (isLocalThreadId(threadId) ? fallback : undefined)
  }

  /** Whether requests wait for a token exchange (none that works is held), without creating a client. */
  readonly isUpdatingToken = (): boolean => {
    const client = this.#given ?? this.#owned
    if (client === undefined) return false
    try {
      return client.getAuthState().status === "exchanging"
    } catch {
      return false
    }
  }

  #authState: TamboAuthState | undefined

  /**
   * Who the client acts for, without creating a client (a client not made yet says what it will
   * start as, one the app gave and destroyed is taken as unauthenticated); the same object until
   * it changes, as `useSyncExternalStore` needs.
   */
  readonly authState = (): TamboAuthState => {
    const client = this.#given ?? this.#owned
    const next = client === undefined ? this.#before : authStateOf(client)
    const last = this.#authState
    if (last !== undefined && sameAuthState(last, next)) return last
    this.#authState = next
    return next
  }

  /** `useSyncExternalStore`'s subscribe for the auth state. */
  readonly subscribeToAuthState = (listener: () => void): (() => void) => {
    const release = this.retain()
    const unsubscribe = this.client().subscribeToAuthState(listener)
    return () => {
      unsubscribe()
      release()
    }
  }

  /**
   * The id under which the state holds the thread `threadId` names: a new conversation's local
   * thread id is, once the server named its thread, that thread (as the client's `getThread` has
   * it); any other id, or any id while there is no client, is itself.
   */
  readonly threadIdOf = (threadId: string): string =>
    (this.#given ?? this.#owned)?.getThread(threadId)?.id ?? threadId

  /** Whether the client has a run in flight on the thread, without creating a client. */
  readonly hasActiveRun = (threadId: string): boolean =>
    (this.#given ?? this.#owned)?.hasActiveRun(threadId) ?? false

  /** Keeps the client alive until the returned function is called (once). */
  retain(): () => void {
    this.#refs++
    // Held: its token exchange and its MCP connections start (a client made here defers them).
    this.client().start()
    this.#ownedHeld = true
    let released = false
    return () => {
      if (released) return
      released = true
      this.#refs--
      if (this.#refs === 0) queueMicrotask(this.#collect)
    }
  }

  /**
   * Registers tools the app gives at runtime (`useTambo().registerTool`).
   * A client made after this one went (the tree was hidden) gets back
   * those it still held, and those given while none was held: see
   * {@link takeAppTools}.
   */
  registerTools(tools: ReadonlyArray<ToolDefinition>): void {
    // A client nothing holds (a hidden tree's, or one a render made) goes: the next one held gets them.
    const held = this.#given !== undefined || this.#refs > 0
    if (held) this.client().registerTools(tools)
    for (const tool of tools) this.#appTools.set(tool.name, tool)
    if (!held) this.#appToolsLeft = true
  }

  /**
   * The app's tools to register again on a client made after the last one
   * went, once, after the provider registered its own: of a name the
   * provider also has, the app's is the one the last client held.
   */
  takeAppTools(): ReadonlyArray<ToolDefinition> {
    if (!this.#appToolsLeft) return []
    this.#appToolsLeft = false
    return [...this.#appTools.values()]
  }

  /**
   * Resolves once no run of the client is in flight on the thread, or once
   * the client went (its runs cancelled, the cancels recorded on the
   * server); `undefined` when none is in flight now. Holds no client.
   */
  noRunOn(threadId: string): Promise<void> | undefined {
    const client = this.#given ?? this.#owned
    if (client === undefined || !client.hasActiveRun(threadId)) return undefined
    return new Promise((resolve) => {
      const done = () => {
        unsubscribe()
        unsubscribeFromDestroy()
        resolve()
      }
      const unsubscribe = client.subscribe(() => {
        if (!client.hasActiveRun(threadId)) done()
      })
      // Whoever destroys it, the app too (a client it gave): its listeners are not told of the runs' end.
      const unsubscribeFromDestroy = client.subscribeToDestroy(done)
    })
  }

  readonly #collect = (): void => {
    const client = this.#owned
    if (this.#refs > 0 || client === undefined) return
    this.#owned = undefined
    if (this.#ownedHeld) this.#keepHeldAppTools(client)
    this.#ownedHeld = false
    // Nobody awaits this release: a failure of it (a store or an MCP session that would not close)
    // is told as the client tells a listener's throw, a warning, not left an unhandled rejection.
    client.destroy().catch((error: unknown) => console.warn("[tambo] The provider's client did not close cleanly:", error))
  }

  /** Forgets the app's tools the client no longer holds (withdrawn, or registered over since). */
  #keepHeldAppTools(client: TamboClient): void {
    if (this.#appTools.size === 0) return
    const held = client.getTools()
    for (const [name, tool] of this.#appTools) if (held[name] !== tool) this.#appTools.delete(name)
    this.#appToolsLeft = this.#appTools.size > 0
  }

  /** `useSyncExternalStore`'s subscribe: one client subscription fanned out, batched per frame. */
  readonly subscribe = (listener: () => void): (() => void) => {
    const release = this.retain()
    this.#listeners.add(listener)
    this.#unsubscribe ??= this.client().subscribe(this.#batcher.schedule)
    return () => {
      this.#listeners.delete(listener)
      if (this.#listeners.size === 0) this.#stopListening()
      release()
    }
  }

  readonly #emit = (): void => {
    for (const listener of [...this.#listeners]) listener()
  }

  #stopListening() {
    this.#batcher.cancel()
    this.#unsubscribe?.()
    this.#unsubscribe = undefined
  }
}

/**
 * `useLayoutEffect`, but `useEffect` where there is no DOM (server rendering
 * runs neither, and React 18 warns of the former there).
 *
 * @since 0.2.0
 * @category Internal
 */
export const useIsomorphicLayoutEffect: typeof useEffect = typeof window === "undefined" ? useEffect : useLayoutEffect

/**
 * Keeps the handle's client from the commit on, before any effect of the
 * tree runs: a client a render asked for is then still the handle's.
 *
 * @since 0.2.0
 * @category Internal
 */
export const useRetainedHandle = (handle: ClientHandle): void => useIsomorphicLayoutEffect(() => handle.retain(), [handle])

/**
 * The handle's client for a render: the one the handle keeps once the
 * component is committed (one destroyed before the commit, a render that
 * took too long, is read again and replaced).
 *
 * @since 0.2.0
 * @category Internal
 */
export const useHandleClient = (handle: ClientHandle): TamboClient =>
  useSyncExternalStore(handle.subscribeToClient, handle.client, handle.client)
