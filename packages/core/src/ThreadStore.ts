/**
 * Where the client's state lives: every thread the client knows, and which
 * one is current. Changes go through the pure reducer in `ClientState`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
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
    /** Applies a batch of actions as one update: subscribers see one change. */
    readonly apply: (actions: ReadonlyArray<ClientState.Action>) => Effect.Effect<ClientState.ClientState>
    /** The current state, then every change. */
    readonly changes: Stream.Stream<ClientState.ClientState>
    /** A plain listener called after every change; returns the unsubscribe function. */
    readonly subscribe: (listener: () => void) => () => void
  }
}

/**
 * An in-memory store.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (
  initial: ClientState.ClientState = ClientState.initial
): Effect.Effect<ThreadStore.Service> =>
  Effect.gen(function* () {
    const ref = yield* SubscriptionRef.make(initial)
    // Mirrors the ref so synchronous readers need no runtime.
    let current = initial
    const listeners = new Set<() => void>()
    return ThreadStore.of({
      get: Effect.sync(() => current),
      unsafeGet: () => current,
      apply: (actions) =>
        actions.length === 0
          ? Effect.sync(() => current)
          : SubscriptionRef.updateAndGet(ref, (state) => ClientState.reduce(state, actions)).pipe(
            Effect.tap((next) =>
              Effect.sync(() => {
                if (next === current) return
                current = next
                for (const listener of listeners) listener()
              })
            )
          ),
      changes: ref.changes,
      subscribe: (listener) => {
        listeners.add(listener)
        return () => {
          listeners.delete(listener)
        }
      }
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
  return ThreadStore.of({
    get: Effect.sync(read),
    unsafeGet: read,
    apply: (actions) =>
      Effect.sync(() => {
        const before = store.getState()
        const next = ClientState.reduce(before, actions)
        if (next !== before) store.setState(next)
        return next
      }),
    changes: Stream.concat(
      Stream.sync(read),
      Stream.async<ClientState.ClientState>((emit) => {
        const unsubscribe = store.subscribe(() => {
          void emit.single(store.getState())
        })
        return Effect.sync(unsubscribe)
      })
    ),
    subscribe: (listener) => store.subscribe(listener)
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
