/**
 * The `ThreadStore` service over a `SubscriptionRef<ClientState>`. Beside the
 * ref it keeps a synchronous view (the current state, plain listeners, an
 * app's store to write to), updated inside the ref's changes so it never
 * shows them out of order; and it lets the run writer (runWriter.ts) publish
 * through `OwnedStore` without the ref while nobody reads `changes`, changing
 * the thread map in place while nobody but the store has seen it.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as ClientState from "../ClientState.js"
import type { ExternalStore, ThreadStore } from "../ThreadStore.js"
import * as OwnedStore from "./ownedStore.js"
import { describeError } from "./toolSupport.js"

/** The synchronous side of a store, changed one change at a time. */
interface View {
  current: ClientState.ClientState
  readonly listeners: Set<() => void>
  /** Writes each new state to an app's store (`makeExternal`). */
  readonly written: ((state: ClientState.ClientState) => void) | undefined
  // The readers of `changes`, and whether the ref is behind `current`: while there are none,
  // the run writer publishes without the ref (OwnedStore), which catches up for the next one.
  readers: number
  refBehind: boolean
  // Whether anyone but the store may hold the current thread map: the writer changes it in
  // place only while nobody does (OwnedStore).
  exposed: boolean
  /** Logs what a listener, or an app's store, threw: the change goes on all the same. */
  readonly report: (what: string, error: unknown) => void
}

const notify = (view: View): void => {
  if (view.listeners.size === 0) return
  // The listeners of this change: a Set's iterator would also visit one added (or removed and
  // added again) by a listener meanwhile, and a listener that subscribes itself again would loop.
  for (const listener of Array.from(view.listeners)) {
    if (!view.listeners.has(listener)) continue
    try {
      listener()
    } catch (error) {
      view.report("A listener of the ThreadStore threw", error)
    }
  }
}

const publish = (view: View, next: ClientState.ClientState): void => {
  if (next !== view.current) {
    view.current = next
    if (view.written !== undefined) {
      try {
        view.written(next)
      } catch (error) {
        view.report("The app's store threw on setState", error)
      }
    }
    notify(view)
  }
}

/** The current state, handed out: from now on someone else may hold its thread map. */
const handOut = (view: View): ClientState.ClientState => {
  view.exposed = true
  return view.current
}

/** The ref's `changes`, counting their readers; the first reader finds the ref caught up. */
const changesOf = (
  ref: SubscriptionRef.SubscriptionRef<ClientState.ClientState>,
  view: View
): Stream.Stream<ClientState.ClientState> =>
  Stream.unwrapScoped(
    Effect.as(
      Effect.acquireRelease(
        Effect.suspend(() => {
          view.readers++
          if (!view.refBehind) return Effect.void
          view.refBehind = false
          // The reader is handed the current state: its thread map is no longer the store's alone.
          view.exposed = true
          return SubscriptionRef.update(ref, () => view.current)
        }),
        () => Effect.sync(() => view.readers--)
      ),
      ref.changes
    )
  ).pipe(
    Stream.changesWith((a, b) => a === b),
    Stream.buffer({ capacity: 1, strategy: "sliding" })
  )

/** What the run writer may do with this store beyond its service (see ownedStore.ts). */
const ownedOf = (view: View): OwnedStore.OwnedStore => ({
  peek: () => view.current,
  modifyNow: (f) => {
    if (view.readers > 0) return false
    const before = view.current
    const next = f(before, !view.exposed && view.written === undefined)
    // A new map is the writer's own: nobody else has seen it yet.
    if (next.threadMap !== before.threadMap) view.exposed = view.written !== undefined
    if (next !== before) view.refBehind = true
    publish(view, next)
    return true
  }
})

/** A state written from outside (an app's store): shown at once, and published by the ref. */
const receive = (view: View, state: ClientState.ClientState): boolean => {
  if (state === view.current) return false
  view.exposed = true
  view.current = state
  notify(view)
  return true
}

/**
 * The service over `ref`. Every change goes through the ref, one at a time;
 * the synchronous view is updated inside it.
 */
const fromRef = (
  ref: SubscriptionRef.SubscriptionRef<ClientState.ClientState>,
  view: View
): ThreadStore.Service => {
  // Computed from `current`: the state an app's store wrote last is the one changed.
  const modify = <A>(f: (state: ClientState.ClientState) => readonly [A, ClientState.ClientState]): Effect.Effect<A> =>
    SubscriptionRef.modify(ref, () => {
      const result = f(view.current)
      view.exposed = true
      publish(view, result[1])
      return result
    })
  const service: ThreadStore.Service = {
    get: Effect.sync(() => handOut(view)),
    update: (f) => modify((state) => [undefined, f(state)]),
    modify,
    changes: changesOf(ref, view),
    apply: (actions) =>
      modify((state) => {
        const next = ClientState.reduce(state, actions)
        return [next, next]
      }),
    getThread: (threadId) => Effect.sync(() => ClientState.getThreadState(view.current, threadId)),
    currentThreadId: Effect.sync(() => view.current.currentThreadId),
    getSnapshot: () => handOut(view),
    subscribe: (listener) => {
      view.listeners.add(listener)
      return () => {
        view.listeners.delete(listener)
      }
    }
  }
  OwnedStore.register(service, ownedOf(view))
  return service
}

/** A view whose reports are warnings logged by `runtime`. */
const viewOf = (
  initial: ClientState.ClientState,
  written: View["written"],
  runtime: Runtime.Runtime<never>
): View => ({
  current: initial,
  listeners: new Set(),
  written,
  readers: 0,
  refBehind: false,
  exposed: true,
  report: (what, error) => void Runtime.runFork(runtime)(Effect.logWarning(`${what}: ${describeError(error)}`))
})

/** An in-memory store. @internal */
export const make = (initial: ClientState.ClientState): Effect.Effect<ThreadStore.Service> =>
  Effect.zipWith(
    SubscriptionRef.make(initial),
    Effect.runtime<never>(),
    (ref, runtime) => fromRef(ref, viewOf(initial, undefined, runtime))
  )

/** A store kept in step with an external one, both ways, until the scope closes. @internal */
export const makeExternal = (
  store: ExternalStore<ClientState.ClientState>
): Effect.Effect<ThreadStore.Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const initial = store.getState()
    const ref = yield* SubscriptionRef.make(initial)
    const view = viewOf(initial, (next) => store.setState(next), yield* Effect.runtime<never>())
    const service = fromRef(ref, view)
    // An app's write is seen at once; the ref publishes it from a fiber of its own.
    const received = yield* Queue.sliding<void>(1)
    yield* Effect.acquireRelease(
      Effect.sync(() =>
        store.subscribe(() => {
          if (receive(view, store.getState())) received.unsafeOffer(undefined)
        })
      ),
      (unsubscribe) => Effect.sync(unsubscribe)
    )
    yield* Effect.forkScoped(
      Effect.forever(Effect.zipRight(Queue.take(received), Effect.suspend(() => SubscriptionRef.set(ref, view.current))))
    )
    return service
  })

/** The changes of one thread: its state each time it changed (by identity). @internal */
export const threadChanges = (
  store: ThreadStore.Service,
  threadId: string
): Stream.Stream<ClientState.ThreadState | undefined> =>
  store.changes.pipe(
    Stream.map((state) => ClientState.getThreadState(state, threadId)),
    Stream.changesWith((a, b) => a === b)
  )
