/**
 * Where the client's state lives: every thread the client knows, and which
 * one is current. Changes go through the pure reducer in `ClientState`, in
 * batches: the actions applied within one microtask are reduced together and
 * published once.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as ClientState from "./ClientState.js"

/**
 * Any store with `getState`, `setState` and `subscribe`: a Zustand vanilla
 * store, or one of the facade's.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ExternalStore<T> {
  readonly getState: () => T
  readonly setState: (state: T) => void
  readonly subscribe: (listener: () => void) => () => void
}

/**
 * @since 0.1.0
 * @category Context
 */
export class ThreadStore extends Context.Tag("@tambo-effect/core/ThreadStore")<ThreadStore, ThreadStore.Service>() {}

/**
 * @since 0.1.0
 */
export declare namespace ThreadStore {
  /**
   * @since 0.1.0
   * @category Models
   */
  export interface Service {
    readonly get: Effect.Effect<ClientState.ClientState>
    /** The current state, synchronously (for `useSyncExternalStore`-style readers). */
    readonly unsafeGet: () => ClientState.ClientState
    /** Applies a batch of actions as one update, at once: subscribers see one change. */
    readonly apply: (actions: ReadonlyArray<ClientState.Action>) => Effect.Effect<ClientState.ClientState>
    /**
     * `apply`, synchronously: for a stream stage that must stay a plain
     * function (a run applies each network chunk this way).
     */
    readonly unsafeApply: (actions: ReadonlyArray<ClientState.Action>) => ClientState.ClientState
    /**
     * Applies actions with the others applied before the next microtask, in one
     * update (concurrent runs share it). Resumes with the state after that update.
     */
    readonly applyBatched: (actions: ReadonlyArray<ClientState.Action>) => Effect.Effect<ClientState.ClientState>
    /** The current state, then every change. */
    readonly changes: Stream.Stream<ClientState.ClientState>
    /** A plain listener called after every change; returns the unsubscribe function. */
    readonly subscribe: (listener: () => void) => () => void
  }
}

/**
 * Applies actions in batches: every `apply` made before the next microtask is
 * reduced in one `ClientState.reduce` call and written once. Concurrent runs
 * thus share one copy of the thread map instead of one each per chunk.
 */
const coalescing = (
  read: () => ClientState.ClientState,
  write: (next: ClientState.ClientState) => void
): Pick<ThreadStore.Service, "apply" | "unsafeApply" | "applyBatched"> => {
  let queue: Array<{
    readonly actions: ReadonlyArray<ClientState.Action>
    readonly resume: (effect: Effect.Effect<ClientState.ClientState>) => void
  }> = []
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (queue.length === 0) return
    const batch = queue
    queue = []
    const actions = batch.length === 1 ? batch[0]!.actions : batch.flatMap((entry) => entry.actions)
    const before = read()
    // The reducer is total: nothing here can throw past it.
    const next = ClientState.reduce(before, actions)
    if (next !== before) write(next)
    const done = Effect.succeed(next)
    for (const entry of batch) entry.resume(done)
  }
  // What is queued goes first: actions stay in the order they were applied.
  const unsafeApply = (actions: ReadonlyArray<ClientState.Action>): ClientState.ClientState => {
    flush()
    const before = read()
    const next = ClientState.reduce(before, actions)
    if (next !== before) write(next)
    return next
  }
  return {
    apply: (actions) => Effect.sync(() => unsafeApply(actions)),
    unsafeApply,
    applyBatched: (actions) =>
      actions.length === 0
        ? Effect.sync(read)
        : Effect.async<ClientState.ClientState>((resume) => {
          queue.push({ actions, resume })
          if (!scheduled) {
            scheduled = true
            queueMicrotask(flush)
          }
        })
  }
}

/** The current state, then each new one (conflated: a slow reader sees the latest). */
const changesOf = (
  read: () => ClientState.ClientState,
  subscribe: (listener: () => void) => () => void
): Stream.Stream<ClientState.ClientState> =>
  Stream.async<ClientState.ClientState>((emit) => {
    const unsubscribe = subscribe(() => void emit.single(read()))
    void emit.single(read())
    return Effect.sync(unsubscribe)
  }, { bufferSize: 1, strategy: "sliding" })

/**
 * An in-memory store.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (
  initial: ClientState.ClientState = ClientState.initial
): Effect.Effect<ThreadStore.Service> =>
  Effect.sync(() => {
    let current = initial
    const listeners = new Set<() => void>()
    const read = () => current
    const subscribe = (listener: () => void) => {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    }
    return ThreadStore.of({
      get: Effect.sync(read),
      unsafeGet: read,
      ...coalescing(read, (next) => {
        current = next
        for (const listener of listeners) listener()
      }),
      changes: changesOf(read, subscribe),
      subscribe
    })
  })

/**
 * Adapts an external store (Zustand-compatible) as the source of truth.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeExternal = (store: ExternalStore<ClientState.ClientState>): ThreadStore.Service => {
  const read = () => store.getState()
  const subscribe = (listener: () => void) => store.subscribe(listener)
  return ThreadStore.of({
    get: Effect.sync(read),
    unsafeGet: read,
    ...coalescing(read, (next) => store.setState(next)),
    changes: changesOf(read, subscribe),
    subscribe
  })
}

/**
 * The changes of one thread: its state each time it changed (by identity).
 *
 * @since 0.1.0
 * @category Combinators
 */
export const threadChanges = (
  store: ThreadStore.Service,
  threadId: string
): Stream.Stream<ClientState.ThreadState | undefined> =>
  store.changes.pipe(
    Stream.map((state) => state.threadMap[threadId]),
    Stream.changesWith((a, b) => a === b)
  )

/**
 * An in-memory store.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer: Layer.Layer<ThreadStore> = Layer.effect(ThreadStore, make())

/**
 * A store kept in an external store (Zustand-compatible).
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerExternal = (store: ExternalStore<ClientState.ClientState>): Layer.Layer<ThreadStore> =>
  Layer.succeed(ThreadStore, makeExternal(store))
