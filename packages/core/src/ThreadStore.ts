/**
 * Where the client's state lives: every thread the client knows, and which
 * one is current. Changes go through the pure reducer in `ClientState`, in
 * batches: what runs record while the event loop handles one round of I/O is
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
    /**
     * The state as written, synchronously (for `useSyncExternalStore`-style
     * readers, told of each write by `subscribe`).
     */
    readonly unsafeGet: () => ClientState.ClientState
    /** Applies a batch of actions as one update, at once: subscribers see one change. */
    readonly apply: (actions: ReadonlyArray<ClientState.Action>) => Effect.Effect<ClientState.ClientState>
    /**
     * `apply`, synchronously: for a stream stage that must stay a plain
     * function.
     */
    readonly unsafeApply: (actions: ReadonlyArray<ClientState.Action>) => ClientState.ClientState
    /**
     * Applies actions about one thread and returns that thread's new state at
     * once; the store is written with the next batch, once the I/O already
     * waiting is handled (`get` and `apply` see it at once). A run records each
     * network chunk this way: the cost does not grow with the number of
     * threads. Actions that reach beyond the thread are written at once,
     * in one write with what is pending.
     */
    readonly unsafeRecord: (threadId: string, actions: ReadonlyArray<ClientState.Action>) => ClientState.ThreadState
    /**
     * `unsafeRecord` when that costs what the actions touch, and nothing
     * otherwise: actions about one thread are always recorded; actions that
     * reach beyond it (a chunk that moves a run to its thread) only while the
     * store can write its thread map in place (see {@link make}). Returns the
     * state of thread `threadId` after the actions, or `undefined` when it
     * recorded nothing: `recordBatched` then shares the write, a copy of the
     * thread map, with whatever else is recorded in the same round of the
     * event loop. A run's stage stays a plain function either way it goes:
     * one that waits for the batch holds its chunk, and every concurrent
     * run's, through young collections.
     */
    readonly tryRecord: (
      threadId: string,
      actions: ReadonlyArray<ClientState.Action>
    ) => ClientState.ThreadState | undefined
    /**
     * Applies actions with the others applied in the same round of the event
     * loop, in one update (concurrent runs share it). Resumes with the state
     * after that update. With no actions, waits for what is pending to be
     * written (at once if nothing is).
     */
    readonly applyBatched: (actions: ReadonlyArray<ClientState.Action>) => Effect.Effect<ClientState.ClientState>
    /**
     * `applyBatched`, resuming with one thread's state after the update
     * (`undefined` if there is no such thread). With no actions, waits for
     * what is pending to be written. Unlike the whole state, a thread handed
     * out costs the in-memory store nothing (see {@link make}).
     */
    readonly recordBatched: (
      threadId: string,
      actions: ReadonlyArray<ClientState.Action>
    ) => Effect.Effect<ClientState.ThreadState | undefined>
    /** One thread's state, with everything applied so far (`undefined` if there is no such thread). */
    readonly getThread: (threadId: string) => Effect.Effect<ClientState.ThreadState | undefined>
    /** The current thread's id, with everything applied so far. */
    readonly currentThreadId: Effect.Effect<string>
    /** The current state, then every change. */
    readonly changes: Stream.Stream<ClientState.ClientState>
    /** A plain listener called after every change; returns the unsubscribe function. */
    readonly subscribe: (listener: () => void) => () => void
  }
}

/**
 * Runs `f` once the I/O already waiting has been handled (Node's
 * `setImmediate`; a message to itself in browsers): the chunks of concurrent
 * runs that arrive together are written together. A microtask would flush
 * after every single network read.
 */
const later: (f: () => void) => void = typeof setImmediate === "function"
  ? (f) => void setImmediate(f)
  : typeof MessageChannel === "function"
  ? (() => {
    const waiting: Array<() => void> = []
    const channel = new MessageChannel()
    channel.port1.onmessage = () => {
      for (const f of waiting.splice(0, waiting.length)) f()
    }
    return (f: () => void) => {
      waiting.push(f)
      if (waiting.length === 1) channel.port2.postMessage(null)
    }
  })()
  : (f) => void setTimeout(f, 0)

/**
 * Events recorded before the store writes them even if the event loop has not
 * come round: at least this many, and more for a store that copies a map of
 * many threads per write. Held events (a result keeps its actions, in case
 * another writer changed its thread meanwhile) that wait over many chunks
 * outlive young collections and are copied to the old generation: 64 chunks
 * of component patches put 8% of a run's time into the collector, about 1,000
 * events 1-2%. A write that copies the thread map waits for proportionally
 * more events: the copy costs at most a fraction of a key per event.
 */
const MIN_PENDING_EVENTS = 1_024
const PENDING_EVENTS_PER_THREAD = 4

/**
 * Applies actions in batches: what is applied with `applyBatched`,
 * `recordBatched` or `unsafeRecord` while the event loop handles one round of
 * I/O is written once, so concurrent runs share one update of the thread map
 * instead of one each per chunk.
 * Anything that reads or applies at once (`get`, `apply`, `getThread`) first
 * writes what is pending, so the order of actions is kept and nobody reads a
 * stale state; `unsafeGet` and subscribers see the state as written.
 *
 * A store that `owns` its state (the in-memory one) keeps track of whether the
 * thread map it last made has been handed out (`get`, `unsafeGet`, `apply`,
 * `applyBatched`, a subscriber's read): until it has, nobody can tell the map
 * apart from a copy, so a write changes it in place and costs what the batch
 * touches. Once handed out, the next write copies it. Threads are immutable
 * whatever happens: handing one out costs nothing.
 */
const coalescing = (
  read: () => ClientState.ClientState,
  write: (next: ClientState.ClientState) => void,
  owns: boolean
): Omit<ThreadStore.Service, "changes" | "subscribe"> => {
  // What is pending, in order: actions, and thread results computed ahead.
  let queue: Array<ClientState.Action | ClientState.ThreadResult> = []
  // Who waits for the next write (applyBatched, recordBatched), with the state it made.
  let waiting: Array<(state: ClientState.ClientState) => void> = []
  // Whether one of them takes the whole state (applyBatched).
  let waitingForState = false
  // The latest computed state of each thread with pending results.
  const pendingThreads = new Map<string, ClientState.ThreadState>()
  let scheduled = false
  // Events held by the queue's results, and how many may be before a write (once counted).
  let pendingEvents = 0
  let pendingLimit: number | undefined
  // The written state's thread map was made by this store, and nobody has seen it since.
  let unseen = false

  const schedule = () => {
    if (!scheduled) {
      scheduled = true
      later(flush)
    }
  }
  /** Applies entries to the state as written, and writes the result; `handedOut`: the caller gives it away. */
  const commit = (
    entries: ReadonlyArray<ClientState.Action | ClientState.ThreadResult>,
    handedOut: boolean
  ): ClientState.ClientState => {
    const before = read()
    const next = ClientState.reduceRecorded(before, entries, { reuseThreadMap: unseen })
    if (handedOut) unseen = false
    else if (owns && next.threadMap !== before.threadMap) unseen = true
    // Subscribers told of the write read the state: they see it, and it is not changed in place after.
    if (next !== before) write(next)
    return next
  }
  const flush = () => {
    scheduled = false
    if (queue.length === 0) return
    const batch = queue
    const resumes = waiting
    const handedOut = waitingForState
    queue = []
    waiting = []
    waitingForState = false
    pendingEvents = 0
    pendingLimit = undefined
    pendingThreads.clear()
    // One batch: one update of the thread map, whatever the queue holds.
    const state = commit(batch, handedOut)
    for (const resume of resumes) resume(state)
  }
  /** The state as written, handed out: from now on it is not changed in place. */
  const unsafeGet = (): ClientState.ClientState => {
    unseen = false
    return read()
  }
  /** The state with everything applied, handed out. */
  const current = (): ClientState.ClientState => {
    flush()
    return unsafeGet()
  }
  /** The state with everything applied, for a read that hands out none of it. */
  const latest = (): ClientState.ClientState => {
    flush()
    return read()
  }
  const thread = (threadId: string): ClientState.ThreadState | undefined =>
    ClientState.getThreadState(latest(), threadId)
  const unsafeApply = (actions: ReadonlyArray<ClientState.Action>): ClientState.ClientState => {
    flush()
    return commit(actions, true)
  }
  /**
   * Actions about one known thread, computed against it alone and queued as its
   * result; `undefined` (nothing done) if they may touch anything else.
   */
  const recordAlone = (
    threadId: string,
    actions: ReadonlyArray<ClientState.Action>
  ): ClientState.ThreadState | undefined => {
    for (const action of actions) if (action.threadId !== threadId) return undefined
    const committed = read()
    const base = pendingThreads.get(threadId) ?? ClientState.getThreadState(committed, threadId)
    if (base === undefined) return undefined
    // The thread alone: its result costs nothing per other thread. Its map is this call's own,
    // changed in place, and made without a prototype: V8 keeps such an object as a dictionary,
    // where an object literal keyed by each thread's id would make a new hidden class per thread.
    const threadMap: Record<string, ClientState.ThreadState> = Object.create(null)
    threadMap[threadId] = base
    const alone: ClientState.ClientState = { threadMap, currentThreadId: committed.currentThreadId }
    const after = ClientState.reduceRecorded(alone, actions, { reuseThreadMap: true })
    if (after === alone) return base
    const keys = Object.keys(after.threadMap)
    const next = after.threadMap[threadId]
    if (
      after.currentThreadId !== alone.currentThreadId || keys.length !== 1 || keys[0] !== threadId ||
      next === undefined
    ) return undefined
    pendingThreads.set(threadId, next)
    queue.push({ type: "THREAD_RESULT", threadId, base, next, actions })
    // A stream that never waits for I/O (bytes already buffered) would queue without end,
    // holding every chunk's events: written every so many events then.
    for (const action of actions) pendingEvents += action.type === "EVENTS" ? action.events.length : 1
    // Counted once per write, when it may be due; the threads only if the write copies them.
    if (pendingEvents >= MIN_PENDING_EVENTS) {
      pendingLimit ??= unseen ? MIN_PENDING_EVENTS : Math.max(
        MIN_PENDING_EVENTS,
        PENDING_EVENTS_PER_THREAD * Object.keys(committed.threadMap).length
      )
    }
    if (pendingLimit !== undefined && pendingEvents >= pendingLimit) flush()
    else schedule()
    return next
  }
  /** Writes what is pending and `actions` after it, in one write; the thread `threadId` after them. */
  const recordAll = (threadId: string, actions: ReadonlyArray<ClientState.Action>): ClientState.ThreadState => {
    for (const action of actions) queue.push(action)
    flush()
    return ClientState.getThreadState(read(), threadId) ?? ClientState.makeThreadState(threadId, 0)
  }
  const unsafeRecord = (threadId: string, actions: ReadonlyArray<ClientState.Action>): ClientState.ThreadState =>
    recordAlone(threadId, actions) ?? recordAll(threadId, actions)
  // A write in place costs what it touches: nothing to share with a batch.
  const tryRecord = (threadId: string, actions: ReadonlyArray<ClientState.Action>) =>
    recordAlone(threadId, actions) ?? (unseen ? recordAll(threadId, actions) : undefined)
  /** Queues actions for the next write; `resume` is called with the state it made. */
  const batched = (
    actions: ReadonlyArray<ClientState.Action>,
    resume: (state: ClientState.ClientState) => void
  ) => {
    for (const action of actions) queue.push(action)
    waiting.push(resume)
    schedule()
  }
  return {
    get: Effect.sync(current),
    unsafeGet,
    apply: (actions) => Effect.sync(() => unsafeApply(actions)),
    unsafeApply,
    unsafeRecord,
    tryRecord,
    applyBatched: (actions) =>
      Effect.async<ClientState.ClientState>((resume) => {
        // Nothing to add and nothing pending: the state as written is the answer.
        if (actions.length === 0 && queue.length === 0) return resume(Effect.sync(current))
        waitingForState = true
        batched(actions, (state) => resume(Effect.succeed(state)))
      }),
    recordBatched: (threadId, actions) =>
      Effect.async<ClientState.ThreadState | undefined>((resume) => {
        if (actions.length === 0 && queue.length === 0) return resume(Effect.sync(() => thread(threadId)))
        batched(actions, (state) => resume(Effect.succeed(ClientState.getThreadState(state, threadId))))
      }),
    getThread: (threadId) => Effect.sync(() => thread(threadId)),
    currentThreadId: Effect.sync(() => latest().currentThreadId)
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
 * An in-memory store. While nobody has read its whole state since it last
 * wrote it (no subscriber, no `get`), a write updates the thread map in
 * place: runs that only read their own thread (as `Tambo.run` does) cost the
 * same with ten threads in the store or ten thousand. Any state handed out
 * stays as it was; the write after it copies the map.
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
    const subscribe = (listener: () => void) => {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    }
    const store = coalescing(() => current, (next) => {
      current = next
      for (const listener of listeners) listener()
    }, true)
    return ThreadStore.of({ ...store, changes: changesOf(store.unsafeGet, subscribe), subscribe })
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
    // The store's owner decides who sees its state: every write is a new one.
    ...coalescing(read, (next) => store.setState(next), false),
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
