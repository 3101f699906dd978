/**
 * How a run writes its thread to the store. While a run is active it is the
 * only writer of its thread (one active run per thread), so it reduces each
 * chunk into a draft of that thread alone and reads the result at once; the
 * drafts of all runs on a store are published together, in one update, once
 * the I/O already waiting has been handled (at most once per turn of the
 * event loop).
 *
 * Someone else may still write a run's thread meanwhile (a rename, a
 * deletion): when a draft's thread changed under it, everything recorded
 * since the last publication is applied again, action by action and in the
 * order recorded, on the state as it now is, so nothing is lost either way.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Runtime from "effect/Runtime"
import * as ClientState from "../ClientState.js"
import type * as ThreadStore from "../ThreadStore.js"
import * as OwnedStore from "./ownedStore.js"
import { copyRecord, getOwn, setOwn } from "./state/common.js"

/** How runs write their threads. */
export interface RunWriter {
  /**
   * Applies actions about thread `threadId` to its draft and returns the
   * thread after them, or `undefined` (nothing done) when they reach beyond
   * it, or the store does not know it: {@link RunWriter.write} takes those.
   */
  readonly record: (threadId: string, actions: ReadonlyArray<ClientState.Action>) => ClientState.ThreadState | undefined
  /**
   * Records `actions` (into the draft of thread `threadId` where they stay on
   * it, else after everything pending) and waits until they are in the store,
   * published with whatever else runs record in this turn; thread `threadId`
   * then. With no actions, waits for that thread's pending draft, if any.
   */
  readonly write: (
    threadId: string,
    actions: ReadonlyArray<ClientState.Action>
  ) => Effect.Effect<ClientState.ThreadState | undefined>
  /** `record` where it can, else `write`. */
  readonly recordOrWrite: (
    threadId: string,
    actions: ReadonlyArray<ClientState.Action>
  ) => Effect.Effect<ClientState.ThreadState | undefined>
  /**
   * The store's state, to be read at once and not kept: unlike the store's
   * `get`, it does not hand the thread map out, which the writer may then go
   * on changing in place.
   */
  readonly peek: () => ClientState.ClientState
}

/** What a run recorded since the store last took its thread. */
interface Draft {
  readonly threadId: string
  /** The thread in the store when the draft began. */
  readonly base: ClientState.ThreadState
  next: ClientState.ThreadState
}

/**
 * Runs `f` once the I/O already waiting has been handled (Node's
 * `setImmediate`; a message to itself in browsers): the chunks of concurrent
 * runs that arrive together are published together. A microtask would
 * publish after every single network read.
 */
const later: (f: () => void) => void = typeof setImmediate === "function"
  ? (f) => void setImmediate(f)
  : typeof MessageChannel === "function"
  ? (f) => {
    const channel = new MessageChannel()
    channel.port1.onmessage = () => {
      channel.port1.close()
      f()
    }
    channel.port2.postMessage(null)
  }
  : (f) => void setTimeout(f, 0)

/**
 * The state with every draft in it, each replacing its thread, or `undefined`
 * when a draft's thread is no longer its base: what was recorded must then be
 * applied again, in order. The thread map is changed `inPlace` where the
 * store allows it, else copied.
 */
const withDrafts = (
  state: ClientState.ClientState,
  drafts: ReadonlyMap<string, Draft>,
  inPlace: boolean
): ClientState.ClientState | undefined => {
  if (drafts.size === 0) return state
  // Checked before anything is written: the map may be the store's own.
  for (const draft of drafts.values()) {
    if (getOwn(state.threadMap, draft.threadId) !== draft.base) return undefined
  }
  const threadMap = inPlace ? state.threadMap as Record<string, ClientState.ThreadState> : copyRecord(state.threadMap)
  for (const draft of drafts.values()) setOwn(threadMap, draft.threadId, draft.next)
  return { threadMap, currentThreadId: state.currentThreadId }
}

/** Events the drafts may hold before they are published without waiting for the event loop. */
const MAX_HELD_EVENTS = 1_024

/**
 * The threads an action may touch: its own, and for a run's start, the thread
 * it names and the placeholder its messages may move from.
 */
const touched = (action: ClientState.Action, into: Set<string>): void => {
  into.add(action.threadId)
  const events = action.type === "EVENTS" ? action.events : action.type === "EVENT" ? [action.event] : []
  for (const event of events) {
    if (event.type === "RUN_STARTED") {
      into.add(event.threadId)
      into.add(ClientState.PLACEHOLDER_THREAD_ID)
    }
  }
}

/**
 * The writer of the runs on `store`. What runs record is published by a fiber
 * of the runtime it is made in, in one update per turn of the event loop.
 */
export const make = (store: ThreadStore.ThreadStore.Service): Effect.Effect<RunWriter> =>
  Effect.map(Effect.runtime<never>(), (runtime) => {
    // The in-memory store, read without handing its thread map out: it lets the writer change
    // that map in place rather than copy every thread per publication (scratchpad/bench/NOTES.md).
    const owned = OwnedStore.of(store)
    const peek = owned?.peek ?? store.getSnapshot
    // The drafts not yet published, by thread: one per active run.
    let drafts = new Map<string, Draft>()
    // Actions that reach beyond one thread, in order, applied after the drafts, and the
    // threads they touch: what is recorded for one of those joins them, to keep the order.
    let beyond: Array<ClientState.Action> = []
    let beyondThreads = new Set<string>()
    // Everything recorded or written since the last publication, in order: applied again when a
    // draft's thread changed under it (a draft's actions alone, applied after the others, could
    // meet a placeholder another run's later actions had already changed).
    let recorded: Array<ClientState.Action> = []
    // Who waits for the next update, resumed with its outcome.
    let waiting: Array<(exit: Exit.Exit<ClientState.ClientState>) => void> = []
    let scheduled = false
    // Events the drafts hold, to be applied again should their thread change, and whether a
    // publication they made is under way.
    let heldEvents = 0
    let publishingNow = false

    const publishing = (state: ClientState.ClientState, inPlace: boolean): ClientState.ClientState => {
      const taken = drafts
      const actions = beyond
      const all = recorded
      drafts = new Map()
      beyond = []
      beyondThreads = new Set()
      recorded = []
      heldEvents = 0
      const next = withDrafts(state, taken, inPlace)
      if (next === undefined) return ClientState.reduce(state, all)
      return actions.length === 0 ? next : ClientState.reduce(next, actions)
    }
    const publish = Effect.suspend(() => {
      let resumes: Array<(exit: Exit.Exit<ClientState.ClientState>) => void> = []
      return Effect.onExit(
        store.modify((state) => {
          resumes = waiting
          waiting = []
          const next = publishing(state, false)
          return [next, next] as const
        }),
        (exit) =>
          Effect.sync(() => {
            for (const resume of resumes) resume(exit)
          })
      )
    })
    // Published at once where the store allows it, not by a fiber per turn (scratchpad/bench/NOTES.md).
    const publishNow = (): boolean => {
      if (owned === undefined) return false
      let resumes: Array<(exit: Exit.Exit<ClientState.ClientState>) => void> = []
      const done = owned.modifyNow((state, inPlace) => {
        resumes = waiting
        waiting = []
        return publishing(state, inPlace)
      })
      if (done && resumes.length > 0) {
        const exit = Exit.succeed(peek())
        for (const resume of resumes) resume(exit)
      }
      return done
    }
    const publishLater = () => {
      scheduled = false
      if ((drafts.size > 0 || beyond.length > 0 || waiting.length > 0) && !publishNow()) {
        Runtime.runFork(runtime)(publish)
      }
    }
    const schedule = () => {
      if (!scheduled) {
        scheduled = true
        later(publishLater)
      }
    }

    const record = (threadId: string, actions: ReadonlyArray<ClientState.Action>) => {
      if (beyondThreads.has(threadId)) return undefined
      for (const action of actions) if (action.threadId !== threadId) return undefined
      const draft = drafts.get(threadId)
      const state = peek()
      const base = draft?.next ?? ClientState.getThreadState(state, threadId)
      if (base === undefined) return undefined
      // The thread alone: the cost is what the actions touch, whatever else the store holds.
      // Its map made without a prototype: V8 keeps it as a dictionary, where a literal keyed by
      // each thread's id would make a new hidden class per thread.
      const threadMap: Record<string, ClientState.ThreadState> = Object.create(null)
      threadMap[threadId] = base
      const alone: ClientState.ClientState = { threadMap, currentThreadId: state.currentThreadId }
      const after = ClientState.reduce(alone, actions)
      if (after === alone) return base
      const next = getOwn(after.threadMap, threadId)
      if (next === undefined || Object.keys(after.threadMap).length !== 1 || after.currentThreadId !== alone.currentThreadId) {
        return undefined
      }
      if (draft === undefined) drafts.set(threadId, { threadId, base, next })
      else draft.next = next
      for (const action of actions) recorded.push(action)
      for (const action of actions) heldEvents += action.type === "EVENTS" ? action.events.length : 1
      // Runs reading bytes already received do not let the event loop come round: their
      // drafts would hold every event until then. They are published without waiting.
      if (heldEvents >= MAX_HELD_EVENTS && !publishingNow) {
        if (!publishNow()) {
          publishingNow = true
          Runtime.runFork(runtime)(Effect.ensuring(publish, Effect.sync(() => (publishingNow = false))))
        }
      } else {
        schedule()
      }
      return next
    }

    const write = (threadId: string, actions: ReadonlyArray<ClientState.Action>) =>
      Effect.async<ClientState.ThreadState | undefined>((resume) => {
        if (actions.length > 0 && record(threadId, actions) === undefined) {
          for (const action of actions) {
            beyond.push(action)
            recorded.push(action)
            touched(action, beyondThreads)
          }
        }
        // Nothing of this thread waits to be published: the store has it.
        if (!beyondThreads.has(threadId) && !drafts.has(threadId)) {
          return resume(Effect.sync(() => ClientState.getThreadState(peek(), threadId)))
        }
        waiting.push((exit) => resume(Exit.map(exit, (state) => ClientState.getThreadState(state, threadId))))
        schedule()
      })

    return {
      record,
      write,
      peek,
      recordOrWrite: (threadId, actions) =>
        Effect.suspend(() => {
          const recorded = record(threadId, actions)
          return recorded === undefined ? write(threadId, actions) : Effect.succeed(recorded)
        })
    }
  })
