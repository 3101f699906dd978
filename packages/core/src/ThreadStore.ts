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
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as ClientState from "./ClientState.js"
import * as OwnedStore from "./internal/ownedStore.js"

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
    /** A plain listener called after every change; returns the unsubscribe function. */
    readonly subscribe: (listener: () => void) => () => void
  }
}

/**
 * The service over `ref`. Every change goes through the ref, one at a time;
 * the synchronous view (`current`, the listeners, the external store) is
 * updated inside it, so it never shows the changes out of order.
 */
const fromRef = (
  ref: SubscriptionRef.SubscriptionRef<ClientState.ClientState>,
  initial: ClientState.ClientState,
  written: ((state: ClientState.ClientState) => void) | undefined
) => {
  let current = initial
  const listeners = new Set<() => void>()
  const notify = () => {
    for (const listener of listeners) listener()
  }
  const publish = (next: ClientState.ClientState) => {
    if (next !== current) {
      current = next
      written?.(next)
      notify()
    }
  }
  // Computed from `current`: the state an app's store wrote last is the one changed.
  const modify = <A>(f: (state: ClientState.ClientState) => readonly [A, ClientState.ClientState]): Effect.Effect<A> =>
    SubscriptionRef.modify(ref, () => {
      const result = f(current)
      exposed = true
      publish(result[1])
      return result
    })
  // The readers of `changes`, and whether the ref is behind `current`: while there are none,
  // the run writer publishes without the ref (OwnedStore), which catches up for the next one.
  let readers = 0
  let refBehind = false
  // Whether anyone but the store may hold the current thread map: the writer changes it in
  // place only while nobody does (OwnedStore).
  let exposed = true
  const get = () => {
    exposed = true
    return current
  }
  const service: ThreadStore.Service = ThreadStore.of({
    get: Effect.sync(get),
    update: (f) => modify((state) => [undefined, f(state)]),
    modify,
    changes: Stream.unwrapScoped(
      Effect.as(
        Effect.acquireRelease(
          Effect.suspend(() => {
            readers++
            if (!refBehind) return Effect.void
            refBehind = false
            return SubscriptionRef.update(ref, () => current)
          }),
          () => Effect.sync(() => readers--)
        ),
        ref.changes
      )
    ).pipe(
      Stream.changesWith((a, b) => a === b),
      Stream.buffer({ capacity: 1, strategy: "sliding" })
    ),
    apply: (actions) =>
      modify((state) => {
        const next = ClientState.reduce(state, actions)
        return [next, next]
      }),
    getThread: (threadId) => Effect.sync(() => ClientState.getThreadState(current, threadId)),
    currentThreadId: Effect.sync(() => current.currentThreadId),
    getSnapshot: get,
    subscribe: (listener) => {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    }
  })
  OwnedStore.register(service, {
    peek: () => current,
    modifyNow: (f) => {
      if (readers > 0) return false
      const before = current
      const next = f(before, !exposed && written === undefined)
      // A new map is the writer's own: nobody else has seen it yet.
      if (next.threadMap !== before.threadMap) exposed = written !== undefined
      if (next !== before) refBehind = true
      publish(next)
      return true
    }
  })
  /** A state written from outside (an app's store): shown at once, and published by the ref. */
  const receive = (state: ClientState.ClientState): boolean => {
    if (state === current) return false
    exposed = true
    current = state
    notify()
    return true
  }
  return { service, receive, current: () => current }
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
  Effect.map(SubscriptionRef.make(initial), (ref) => fromRef(ref, initial, undefined).service)

/**
 * A store kept in step with an external one (Zustand-compatible), both ways:
 * every change is written to it with `setState`, and what the app writes to
 * it is the store's new state. Listens to it until the scope closes.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeExternal = (
  store: ExternalStore<ClientState.ClientState>
): Effect.Effect<ThreadStore.Service, never, Scope.Scope> =>
  Effect.gen(function* () {
    const initial = store.getState()
    const ref = yield* SubscriptionRef.make(initial)
    const view = fromRef(ref, initial, (next) => store.setState(next))
    // An app's write is seen at once; the ref publishes it from a fiber of its own.
    const received = yield* Queue.sliding<void>(1)
    yield* Effect.acquireRelease(
      Effect.sync(() =>
        store.subscribe(() => {
          if (view.receive(store.getState())) received.unsafeOffer(undefined)
        })
      ),
      (unsubscribe) => Effect.sync(unsubscribe)
    )
    yield* Effect.forkScoped(
      Effect.forever(Effect.zipRight(Queue.take(received), Effect.suspend(() => SubscriptionRef.set(ref, view.current()))))
    )
    return view.service
  })

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
    Stream.map((state) => ClientState.getThreadState(state, threadId)),
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
 * A store kept in step with an external one (Zustand-compatible), both ways.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerExternal = (store: ExternalStore<ClientState.ClientState>): Layer.Layer<ThreadStore> =>
  Layer.scoped(ThreadStore, makeExternal(store))
