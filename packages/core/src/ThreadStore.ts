/**
 * Where the client's state lives: every thread the client knows, and which
 * one is current, in a `SubscriptionRef`. It changes through `ClientState`'s
 * reducer (`apply`) or any function of the state (`update`, `modify`);
 * `changes` streams it, and `getSnapshot` with `subscribe` serve synchronous
 * readers such as React's `useSyncExternalStore`.
 *
 * An app that keeps its state in a store of its own (Zustand, or the one a
 * `TamboClient` is given) hands it to {@link layerExternal}: each change is
 * written to it, and what the app writes to it comes back.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as ClientState from "./ClientState.js"
import * as internal from "./internal/threadStore.js"

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
   * The state as a `SubscriptionRef` (`get`, `update`, `modify`, `changes`),
   * with the reducer's `apply`, two reads of it, and a synchronous view.
   *
   * @since 0.1.0
   * @category Models
   */
  export interface Service {
    readonly get: Effect.Effect<ClientState.ClientState>
    /** Replaces the state with `f` of it; concurrent changes are applied one after the other. */
    readonly update: (f: (state: ClientState.ClientState) => ClientState.ClientState) => Effect.Effect<void>
    /** `update`, returning a value computed with the new state. */
    readonly modify: <A>(
      f: (state: ClientState.ClientState) => readonly [A, ClientState.ClientState]
    ) => Effect.Effect<A>
    /** The current state, then each new one (a slow reader skips to the latest). */
    readonly changes: Stream.Stream<ClientState.ClientState>
    /** Folds actions into the state with `ClientState.reduce`, as one change; the state after them. */
    readonly apply: (actions: ReadonlyArray<ClientState.Action>) => Effect.Effect<ClientState.ClientState>
    /** One thread's state (`undefined` if there is no such thread). */
    readonly getThread: (threadId: string) => Effect.Effect<ClientState.ThreadState | undefined>
    /** The current thread's id. */
    readonly currentThreadId: Effect.Effect<string>
    /** The state, synchronously: `getSnapshot` for `useSyncExternalStore`. */
    readonly getSnapshot: () => ClientState.ClientState
    /**
     * A plain listener called after every change; returns the unsubscribe
     * function. A change calls the listeners subscribed when it was made,
     * each once, none after its unsubscribe. A listener that throws is
     * logged as a warning: the change stands and the other listeners are
     * called all the same.
     */
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
): Effect.Effect<ThreadStore.Service> => internal.make(initial)

/**
 * A store kept in step with an external one (Zustand-compatible), both ways:
 * every change is written to it with `setState`, and what the app writes to
 * it is the store's new state. Listens to it until the scope closes. A
 * `setState` that throws (a subscriber of the app's store that throws) is
 * logged as a warning: the change stands.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeExternal: (
  store: ExternalStore<ClientState.ClientState>
) => Effect.Effect<ThreadStore.Service, never, Scope.Scope> = internal.makeExternal

/**
 * The changes of one thread: its state each time it changed (by identity).
 *
 * @since 0.1.0
 * @category Combinators
 */
export const threadChanges: (
  store: ThreadStore.Service,
  threadId: string
) => Stream.Stream<ClientState.ThreadState | undefined> = internal.threadChanges

/**
 * An in-memory store.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer: Layer.Layer<ThreadStore> = Layer.effect(ThreadStore, make())

/**
 * A store kept in step with an external one (Zustand-compatible), both ways.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerExternal = (store: ExternalStore<ClientState.ClientState>): Layer.Layer<ThreadStore> =>
  Layer.scoped(ThreadStore, makeExternal(store))
