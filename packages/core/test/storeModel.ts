// The harness of the store's model-based test (store.model.test.ts) and of its counterexamples
// (store.counterexamples.test.ts): commands played against a REAL ThreadStore (in memory, or kept
// in step with an app's store) and the run writer the runs publish through, checked after every
// command against a reference built with the pure `ClientState.reduce`.
//
// When the store and the reference must agree. Every change reaches the store at one moment:
// what the app does through the store (`apply`, `update`, `modify`) or writes to its own store,
// at once; what runs record (chunks of events, a user's message), when the writer publishes it.
// The reference folds each change, batch by batch, in that order: the app's at its command, the
// runs' chunks (in the order they were recorded) at the publication, which the harness sees as a
// change of the store no command made (its own listener, which never reads the state). A chunk
// that changes nothing on its thread as the run last saw it is done when recorded: the writer
// keeps nothing of it. So after EVERY command the store equals the reference; after a `turn`
// command (the event loop came round) nothing recorded is left unpublished.
//
// After every command, the invariants:
//   state          the store's state (read without handing it out) equals the reference's
//   handed-out     every state handed out (get, getSnapshot, a `changes` reader's value, a
//                  listener's read, the app's store) is as it was when handed out
//   readers        after a turn, each `changes` reader's last value is the state
//   listeners      each `subscribe` listener was called since the state last changed, and what it
//                  read then is the state
//   external       the app's store holds the store's state (both ways)
//   write-result   a run's `write` resumes with its thread as the reference has it
//   tool-inputs    a call of the runs' declared tool never shows the `null` its optional parameter
//                  was sent in strict mode, partial arguments included (read back at every batch)
import { FastCheck as fc } from "effect"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ClientState from "../src/ClientState.js"
import type * as Events from "../src/Events.js"
import type * as Tool from "../src/Tool.js"
import * as OwnedStore from "../src/internal/ownedStore.js"
import * as RunWriter from "../src/internal/runWriter.js"
import * as ThreadStore from "../src/ThreadStore.js"

// -----------------------------------------------------------------------------
// Commands
// -----------------------------------------------------------------------------

/** What a run's chunk holds, read against the run's own progress (ids are made per run). */
export type Spec =
  | { readonly kind: "text"; readonly msg: number; readonly delta: string }
  | { readonly kind: "endText"; readonly msg: number }
  | { readonly kind: "tool"; readonly call: number }
  /** A call's first arguments, the optional parameter sent as `null`, its end left for a later `tool`. */
  | { readonly kind: "toolStart"; readonly call: number }
  | { readonly kind: "component"; readonly comp: number; readonly msg: number }
  | { readonly kind: "props"; readonly comp: number; readonly key: string; readonly value: number }
  | { readonly kind: "endComponent"; readonly comp: number }
  | { readonly kind: "pause"; readonly call: number }
  | { readonly kind: "finish" }
  /** More deltas than the writer's drafts hold before it publishes without waiting for the event loop. */
  | { readonly kind: "flood"; readonly msg: number }

/** A run: on thread t1, on t2, or a new thread started from the placeholder. */
export type Slot = "t1" | "t2" | "new"

/** The threads the app's actions name. */
export type Target = "t1" | "t2" | "t3" | "placeholder" | "new"

/** An action of the app's, as data. */
export type AppAction =
  | { readonly kind: "rename"; readonly thread: Target; readonly name: string }
  | { readonly kind: "remove"; readonly thread: Target }
  | { readonly kind: "setCurrent"; readonly thread: Target }
  | { readonly kind: "startNew"; readonly thread: Target }
  | { readonly kind: "init"; readonly thread: Target }
  | { readonly kind: "reconcile"; readonly thread: Target }
  | { readonly kind: "lastRun"; readonly thread: Target; readonly runId: string }

/**
 * How a run hands a chunk to the writer: as a run's step does (`record`, else `write`), as its
 * start does (`recordOrWrite`, the same), or `write`, which waits for the publication either way.
 */
export type Via = "record" | "recordOrWrite" | "write"

export type Command =
  | { readonly kind: "chunk"; readonly slot: Slot; readonly specs: ReadonlyArray<Spec>; readonly via: Via }
  | { readonly kind: "userMessage"; readonly slot: Slot }
  | { readonly kind: "turn" }
  | { readonly kind: "apply"; readonly actions: ReadonlyArray<AppAction> }
  | { readonly kind: "update"; readonly actions: ReadonlyArray<AppAction>; readonly how: "update" | "modify" }
  /** The app writes its own store (external), else `update` (in memory). */
  | { readonly kind: "appWrite"; readonly actions: ReadonlyArray<AppAction> }
  /** The app writes a deep copy of the state (a rehydrated store): same values, new identities. */
  | { readonly kind: "appRehydrate" }
  /** The app puts back a state it was handed earlier (an undo), the i-th (modulo their number). */
  | { readonly kind: "restore"; readonly which: number }
  | { readonly kind: "read"; readonly how: "get" | "getSnapshot" | "getThread" }
  /** A reader of `changes`, or of one thread's changes (`threadChanges`). */
  | { readonly kind: "subscribeChanges"; readonly thread?: "t1" }
  | { readonly kind: "unsubscribeChanges" }
  /** A listener; one that throws each time, or that subscribes itself again each time it is called. */
  | { readonly kind: "listen"; readonly reads: boolean; readonly how?: "throws" | "resubscribes" }
  | { readonly kind: "unlisten" }

const small = fc.nat(1)

const spec: fc.Arbitrary<Spec> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("text" as const), msg: small, delta: fc.constantFrom("a", "b", "c") }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("endText" as const), msg: small }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("tool" as const), call: small }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("toolStart" as const), call: small }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("component" as const), comp: small, msg: small }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("props" as const), comp: small, key: fc.constantFrom("a", "b"), value: fc.nat(9) })
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("endComponent" as const), comp: small }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("pause" as const), call: small }) },
  { weight: 1, arbitrary: fc.constant({ kind: "finish" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("flood" as const), msg: small }) }
)

const slot = fc.constantFrom<Slot>("t1", "t2", "new")
const target = fc.constantFrom<Target>("t1", "t2", "t3", "placeholder", "new")

const appAction: fc.Arbitrary<AppAction> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("rename" as const), thread: target, name: fc.constantFrom("x", "y") }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("remove" as const), thread: target }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("setCurrent" as const), thread: target }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("startNew" as const), thread: target }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("init" as const), thread: target }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("reconcile" as const), thread: target }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("lastRun" as const), thread: target, runId: fc.constantFrom("r-x", "r-y") }) }
)

const appActions = fc.array(appAction, { minLength: 1, maxLength: 2 })

export const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constant("chunk" as const),
      slot,
      specs: fc.array(spec, { minLength: 1, maxLength: 3 }),
      via: fc.constantFrom<Via>("record", "record", "record", "recordOrWrite", "write")
    })
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("userMessage" as const), slot }) },
  { weight: 6, arbitrary: fc.constant({ kind: "turn" as const }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("apply" as const), actions: appActions }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("update" as const), actions: appActions, how: fc.constantFrom("update" as const, "modify" as const) })
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("appWrite" as const), actions: appActions }) },
  { weight: 1, arbitrary: fc.constant({ kind: "appRehydrate" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("restore" as const), which: fc.nat(7) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("read" as const), how: fc.constantFrom("get" as const, "getSnapshot" as const, "getThread" as const) }) },
  { weight: 2, arbitrary: fc.constant({ kind: "subscribeChanges" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "subscribeChanges" as const, thread: "t1" as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: "unsubscribeChanges" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("listen" as const), reads: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("listen" as const),
      reads: fc.boolean(),
      how: fc.constantFrom("throws" as const, "resubscribes" as const)
    })
  },
  { weight: 1, arbitrary: fc.constant({ kind: "unlisten" as const }) }
)

/** Sequences of commands. */
export const commandsArbitrary = (maxLength: number): fc.Arbitrary<ReadonlyArray<Command>> =>
  fc.array(commandArbitrary, { minLength: 1, maxLength, size: "max" })

// -----------------------------------------------------------------------------
// Deep comparison, with the path of the first difference
// -----------------------------------------------------------------------------

const show = (value: unknown): string => {
  try {
    const text = JSON.stringify(value, (_, v) => (v instanceof Map ? Object.fromEntries(v) : v))
    return text === undefined ? String(value) : text.length > 300 ? `${text.slice(0, 300)}…` : text
  } catch {
    return String(value)
  }
}

/** Where `a` and `b` first differ (a path and both values), or undefined when they are equal. */
export const difference = (a: unknown, b: unknown, path = "$"): string | undefined => {
  if (Object.is(a, b)) return undefined
  const mismatch = () => `${path}: ${show(a)} ≠ ${show(b)}`
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return mismatch()
  if (a instanceof Map || b instanceof Map) {
    if (!(a instanceof Map && b instanceof Map) || a.size !== b.size) return mismatch()
    for (const [key, value] of a) {
      if (!b.has(key)) return `${path}: key ${show(key)} only on the left`
      const inner = difference(value, b.get(key), `${path}.get(${show(key)})`)
      if (inner !== undefined) return inner
    }
    return undefined
  }
  if (Array.isArray(a) !== Array.isArray(b)) return mismatch()
  const keysA = Object.keys(a)
  const keysB = Object.keys(b)
  if (keysA.length !== keysB.length || keysA.some((key) => !Object.hasOwn(b, key))) {
    return `${path}: keys ${show(keysA)} ≠ ${show(keysB)}`
  }
  for (const key of keysA) {
    const inner = difference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}.${key}`)
    if (inner !== undefined) return inner
  }
  return undefined
}

// -----------------------------------------------------------------------------
// Running a sequence
// -----------------------------------------------------------------------------

export type StoreKind = "memory" | "external"

export type Invariant = "state" | "handed-out" | "readers" | "listeners" | "external" | "write-result" | "tool-inputs"

/** A failed invariant, named, after which command. */
export class InvariantError extends Error {
  constructor(readonly invariant: Invariant, detail: string) {
    super(`invariant "${invariant}" failed: ${detail}`)
  }
}

const fail = (invariant: Invariant, detail: string): never => {
  throw new InvariantError(invariant, detail)
}

/** An app's store (Zustand's vanilla contract). */
const appStore = (): ThreadStore.ExternalStore<ClientState.ClientState> & { writes: number } => {
  let state = ClientState.initial
  const listeners = new Set<() => void>()
  const store = {
    writes: 0,
    getState: () => state,
    setState: (next: ClientState.ClientState) => {
      state = next
      store.writes++
      for (const listener of listeners) listener()
    },
    subscribe: (listener: () => void) => {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    }
  }
  return store
}

/** A run's progress, as the harness tracks it to make its events. */
interface RunSlot {
  /** The thread the run writes (a new thread's id once its run started). */
  thread: string | undefined
  started: boolean
  runNo: number
  readonly openMessages: Set<number>
  /** Calls whose arguments `toolStart` began and no `tool` ended yet. */
  readonly openCalls: Set<number>
}

/** The tool the runs declare: `n` required, `note` and `tag` optional (sent as `null` in strict mode). */
const probeTools: ReadonlyArray<Tool.ApiTool> = [{
  name: "probe",
  description: "Probes",
  inputSchema: {
    type: "object",
    properties: { n: { type: "number" }, note: { type: "string" }, tag: { type: "string" } },
    required: ["n"]
  }
}]

/** Where a call of the declared tool shows a `null`, if anywhere. */
const strictNullIn = (state: ClientState.ClientState): string | undefined => {
  for (const [threadId, thread] of Object.entries(state.threadMap)) {
    for (const message of thread.thread.messages) {
      for (const block of message.content) {
        if (block.type === "tool_use" && block.name === "probe" && Object.values(block.input).includes(null)) {
          return `${threadId}, call ${block.id}: ${JSON.stringify(block.input)}`
        }
      }
    }
  }
  return undefined
}

interface Reader {
  readonly fiber: Fiber.RuntimeFiber<void>
  /** A reader of one thread's changes; else of the state's. */
  readonly thread: string | undefined
  last: unknown
  received: boolean
}

interface Listener {
  readonly reads: boolean
  calls: number
  lastRead: ClientState.ClientState | undefined
  unsubscribe: () => void
}

/** One handed-out state and a deep copy taken then. */
interface Handed {
  /** A state, or a thread handed to a run (wrapped in a state of its own). */
  readonly whole: boolean
  readonly state: ClientState.ClientState
  readonly copy: ClientState.ClientState
  readonly how: string
  readonly at: number
}

/** Deltas in a flood: past the 1,024 events the writer's drafts hold before publishing at once. */
const FLOOD = 1_100

const nextImmediate = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * Plays `commands` against a fresh store of `kind` and its run writer, checking every invariant
 * after each command; throws an InvariantError at the first that fails.
 */
export const runSequence = async (kind: StoreKind, commands: ReadonlyArray<Command>): Promise<void> => {
  const scope = Effect.runSync(Scope.make())
  const app = kind === "external" ? appStore() : undefined
  const store = Effect.runSync(
    (app === undefined ? ThreadStore.make() : Scope.extend(ThreadStore.makeExternal(app), scope)).pipe(
      // A listener that throws is logged as a warning: not in the test's output.
      Effect.provide(Logger.replace(Logger.defaultLogger, Logger.none))
    )
  )
  // Reads the state without handing it out, as the writer does: the checks must not change what they check.
  const peek = OwnedStore.of(store)!.peek
  const writer = Effect.runSync(RunWriter.make(store))

  // The reference, and what runs recorded that it folds at the next publication.
  let reference = ClientState.initial
  let pending: Array<ReadonlyArray<ClientState.Action>> = []
  // Whether a change of the store now is one a command makes (else it is a publication).
  let commanding = false
  // The reference after each publication seen, and the thread each run last had from `record`
  // since the last one (its draft, if the writer holds one).
  const publications: Array<ClientState.ClientState> = []
  const lastRecorded = new Map<string, ClientState.ThreadState>()
  const publish = () => {
    for (const batch of pending) reference = ClientState.reduce(reference, batch)
    pending = []
    lastRecorded.clear()
  }
  const ownListener = store.subscribe(() => {
    if (commanding) return
    publish()
    publications.push(reference)
  })
  /** A change the command makes, to the store and to the reference. */
  const commandChange = (actions: ReadonlyArray<ClientState.Action>, change: () => void) => {
    commanding = true
    try {
      change()
    } finally {
      commanding = false
    }
    reference = ClientState.reduce(reference, actions)
  }

  const handed: Array<Handed> = []
  const handedSet = new WeakSet<object>()
  let step = 0
  const hand = (state: ClientState.ClientState, how: string, whole = true) => {
    if (handedSet.has(state)) return
    handedSet.add(state)
    handed.push({ whole, state, copy: structuredClone(state), how, at: step })
  }
  /** A thread handed to a run (what it emits as its snapshot): it must not change either. */
  const handThread = (thread: ClientState.ThreadState | undefined, how: string) => {
    if (thread === undefined || handedSet.has(thread)) return
    handedSet.add(thread)
    hand({ threadMap: { [thread.thread.id]: thread }, currentThreadId: "" }, how, false)
  }

  const readers: Array<Reader> = []
  const listeners: Array<Listener> = []
  const writeResults: Array<string> = []
  const writes: Array<{ readonly threadId: string; readonly fiber: Fiber.RuntimeFiber<ClientState.ThreadState | undefined> }> = []
  const slots: Record<Slot, RunSlot> = {
    t1: { thread: "t1", started: false, runNo: 0, openMessages: new Set(), openCalls: new Set() },
    t2: { thread: "t2", started: false, runNo: 0, openMessages: new Set(), openCalls: new Set() },
    new: { thread: undefined, started: false, runNo: 0, openMessages: new Set(), openCalls: new Set() }
  }
  let newThreads = 0
  let at = 1

  const threadOf = (target: Target): string =>
    target === "new" ? (slots.new.thread ?? `n${newThreads + 1}`) : target

  const toAction = (a: AppAction): ClientState.Action | undefined => {
    const threadId = threadOf(a.thread)
    switch (a.kind) {
      case "rename":
        return { type: "UPDATE_THREAD", threadId, patch: { name: a.name } }
      case "remove":
        return { type: "REMOVE_THREAD", threadId }
      case "setCurrent":
        return { type: "SET_CURRENT_THREAD", threadId }
      case "startNew":
        return { type: "START_NEW_THREAD", threadId, at }
      case "init":
        return { type: "INIT_THREAD", threadId, at }
      case "lastRun":
        return { type: "SET_LAST_COMPLETED_RUN_ID", threadId, runId: a.runId }
      case "reconcile": {
        // The server's copy: the thread as the reference has it, renamed by the server.
        const thread = ClientState.getThread(reference, threadId)
        if (thread === undefined) return undefined
        return {
          type: "RECONCILE_THREAD",
          threadId,
          thread: { ...structuredClone(thread), name: "server" },
          pendingToolCallIds: []
        }
      }
    }
  }
  const toActions = (actions: ReadonlyArray<AppAction>) =>
    actions.flatMap((a) => {
      const action = toAction(a)
      return action === undefined ? [] : [action]
    })

  /** A run's chunk as the run's step makes it: a RUN_STARTED first when its run has not started. */
  const chunkOf = (s: Slot, specs: ReadonlyArray<Spec>): { threadId: string; action: ClientState.Action } => {
    const run = slots[s]
    const events: Array<Events.TamboEvent> = []
    // A new thread's run writes from the placeholder until its RUN_STARTED names the thread.
    let from = run.thread ?? ClientState.PLACEHOLDER_THREAD_ID
    if (!run.started) {
      run.started = true
      run.runNo++
      run.openMessages.clear()
      run.openCalls.clear()
      if (s === "new") {
        from = ClientState.PLACEHOLDER_THREAD_ID
        run.thread = `n${++newThreads}`
      }
      events.push({ type: "RUN_STARTED", threadId: run.thread!, runId: `${run.thread}-r${run.runNo}` })
    }
    const threadId = run.thread!
    const runId = `${threadId}-r${run.runNo}`
    const id = (what: string, n: number) => `${runId}-${what}${n}`
    for (const x of specs) {
      switch (x.kind) {
        case "text":
          if (!run.openMessages.has(x.msg)) {
            run.openMessages.add(x.msg)
            events.push({ type: "TEXT_MESSAGE_START", messageId: id("m", x.msg), role: "assistant" })
          }
          events.push({ type: "TEXT_MESSAGE_CONTENT", messageId: id("m", x.msg), delta: x.delta })
          break
        case "endText":
          events.push({ type: "TEXT_MESSAGE_END", messageId: id("m", x.msg) })
          break
        case "toolStart":
          if (run.openCalls.has(x.call)) break
          run.openCalls.add(x.call)
          events.push(
            { type: "TOOL_CALL_START", toolCallId: id("call", x.call), toolCallName: "probe", parentMessageId: id("m", 0) },
            { type: "TOOL_CALL_ARGS", toolCallId: id("call", x.call), delta: `{"n":${x.call},"note":null` }
          )
          break
        case "tool":
          // Ends the call `toolStart` began, or makes one whole.
          if (run.openCalls.delete(x.call)) {
            events.push(
              { type: "TOOL_CALL_ARGS", toolCallId: id("call", x.call), delta: `,"tag":null}` },
              { type: "TOOL_CALL_END", toolCallId: id("call", x.call) }
            )
            break
          }
          events.push(
            { type: "TOOL_CALL_START", toolCallId: id("call", x.call), toolCallName: "probe", parentMessageId: id("m", 0) },
            { type: "TOOL_CALL_ARGS", toolCallId: id("call", x.call), delta: `{"n":${x.call},"note":null}` },
            { type: "TOOL_CALL_END", toolCallId: id("call", x.call) }
          )
          break
        case "component":
          events.push({
            type: "CUSTOM",
            name: "tambo.component.start",
            value: { messageId: id("m", x.msg), componentId: id("c", x.comp), componentName: "Card" }
          })
          break
        case "props":
          events.push({
            type: "CUSTOM",
            name: "tambo.component.props_delta",
            value: { componentId: id("c", x.comp), operations: [{ op: "add", path: `/${x.key}`, value: x.value }] }
          })
          break
        case "endComponent":
          events.push({ type: "CUSTOM", name: "tambo.component.end", value: { componentId: id("c", x.comp) } })
          break
        case "pause":
          events.push({
            type: "CUSTOM",
            name: "tambo.run.awaiting_input",
            value: { pendingToolCalls: [{ toolCallId: id("call", x.call), toolName: "probe", arguments: "{}" }] }
          })
          break
        case "flood":
          if (!run.openMessages.has(x.msg)) {
            run.openMessages.add(x.msg)
            events.push({ type: "TEXT_MESSAGE_START", messageId: id("m", x.msg), role: "assistant" })
          }
          for (let i = 0; i < FLOOD; i++) events.push({ type: "TEXT_MESSAGE_CONTENT", messageId: id("m", x.msg), delta: "." })
          break
        case "finish":
          events.push({ type: "RUN_FINISHED", threadId, runId })
          run.started = false
          if (s === "new") run.thread = undefined
          break
      }
    }
    return { threadId, action: { type: "EVENTS", threadId: from, events, at, tools: probeTools } }
  }

  /** What a run hands the writer: recorded into its draft, or written (resumed at the publication). */
  /**
   * What a run hands the writer. `record` first, as a run's step does: into the run's draft, or
   * `undefined` and then written (`write`), the run waiting for the publication while others go
   * on. `write` (as a run's start does) is the same `record`, then a wait for the thread's draft.
   */
  const runRecords = (threadId: string, actions: ReadonlyArray<ClientState.Action>, via: Via) => {
    pending.push(actions)
    const seen = lastRecorded.get(threadId) ?? ClientState.getThreadState(peek(), threadId)
    const recorded = writer.record(threadId, actions)
    if (recorded !== undefined) {
      handThread(recorded, "record")
      lastRecorded.set(threadId, recorded)
      // The chunk changed nothing on its thread as the run saw it: done, the writer keeps nothing of it.
      if (recorded === seen && pending.at(-1) === actions) pending.pop()
      if (via !== "write") return
    }
    const calledAt = step
    const publicationsBefore = publications.length
    const referenceBefore = reference
    const fiber = Effect.runFork(writer.write(threadId, recorded === undefined ? actions : []))
    // It resumes once its batch is in the store, with its thread as it is then: after the first
    // publication seen since, or one that changed nothing (not seen: the state with what was
    // pending), or at once when nothing of its thread was pending.
    fiber.addObserver((exit) => {
      if (!Exit.isSuccess(exit)) return
      const unchanged = pending.reduce(ClientState.reduce, reference)
      const candidates = publications.length > publicationsBefore
        ? [publications[publicationsBefore]!]
        : [unchanged, referenceBefore]
      const diffs = candidates.map((state) => difference(exit.value, ClientState.getThreadState(state, threadId)))
      if (diffs.every((diff) => diff !== undefined)) {
        writeResults.push(`a write of thread ${threadId} at command #${calledAt} resumed with ${diffs[0]}`)
      }
      handThread(exit.value, "write")
    })
    writes.push({ threadId, fiber })
  }


  const checkAll = async (command: Command, afterTurn: boolean) => {
    const now = peek()
    const where = `after command #${step} ${JSON.stringify(command)}`
    if (writeResults.length > 0) fail("write-result", writeResults[0]!)
    const stateDiff = difference(now, reference)
    if (stateDiff !== undefined) fail("state", `${where}: store vs reference at ${stateDiff}`)
    for (const h of handed) {
      const diff = difference(h.state, h.copy)
      if (diff !== undefined) {
        fail("handed-out", `${where}: the state handed out by ${h.how} at command #${h.at} changed at ${diff}`)
      }
    }
    const shown = strictNullIn(now)
    if (shown !== undefined) fail("tool-inputs", `${where}: ${shown}`)
    if (app !== undefined && app.getState() !== now) {
      fail("external", `${where}: the app's store does not hold the store's state`)
    }
    for (const listener of listeners) {
      if (listener.reads && listener.calls > 0 && listener.lastRead !== now) {
        fail("listeners", `${where}: a listener's last read is not the state`)
      }
    }
    if (afterTurn) {
      for (const reader of readers) {
        const expected = reader.thread === undefined ? now : ClientState.getThreadState(now, reader.thread)
        if (reader.last !== expected) {
          fail("readers", `${where}: a ${reader.thread === undefined ? "changes" : "threadChanges"} reader's last value is not the state's`)
        }
      }
    }
  }

  try {
    // Two threads the runs on t1 and t2 write.
    const setup: ReadonlyArray<ClientState.Action> = [
      { type: "INIT_THREAD", threadId: "t1", at: 0 },
      { type: "INIT_THREAD", threadId: "t2", at: 0 }
    ]
    commandChange(setup, () => Effect.runSync(store.apply(setup)))
    if (app !== undefined) hand(app.getState(), "the app's store")
    for (const command of commands) {
      step++
      at++
      const stateBefore = peek()
      const callsBefore = listeners.map((l) => l.calls)
      let afterTurn = false
      switch (command.kind) {
        case "chunk": {
          const { threadId, action } = chunkOf(command.slot, command.specs)
          runRecords(threadId, [action], command.via)
          break
        }
        case "userMessage": {
          const run = slots[command.slot]
          const threadId = run.thread ?? ClientState.PLACEHOLDER_THREAD_ID
          const action: ClientState.Action = {
            type: "USER_MESSAGE",
            threadId,
            message: { id: `u${step}`, role: "user", content: [{ type: "text", text: `hi ${step}` }] },
            at
          }
          runRecords(threadId, [action], "recordOrWrite")
          break
        }
        case "turn": {
          await nextImmediate()
          for (const { fiber, threadId } of writes.splice(0)) {
            const exit = await Effect.runPromise(Fiber.await(fiber))
            if (!Exit.isSuccess(exit)) fail("write-result", `a write of thread ${threadId} failed: ${String(exit)}`)
          }
          // The readers' fibers take what was published.
          await nextImmediate()
          await nextImmediate()
          // Nothing recorded is left after a turn: what made no change was folded by no publication.
          publish()
          afterTurn = true

          break
        }
        case "apply": {
          const actions = toActions(command.actions)
          commandChange(actions, () => Effect.runSync(store.apply(actions)))
          break
        }
        case "update": {
          const actions = toActions(command.actions)
          commandChange(actions, () =>
            Effect.runSync(
              command.how === "update"
                ? store.update((state) => ClientState.reduce(state, actions))
                : store.modify((state) => [undefined, ClientState.reduce(state, actions)] as const)
            ))
          break
        }
        case "appWrite": {
          const actions = toActions(command.actions)
          commandChange(actions, () => {
            if (app === undefined) Effect.runSync(store.update((state) => ClientState.reduce(state, actions)))
            else app.setState(ClientState.reduce(app.getState(), actions))
          })
          if (app !== undefined) hand(app.getState(), "the app's store")
          break
        }
        case "appRehydrate": {
          if (app === undefined) break
          commandChange([], () => app.setState(structuredClone(app.getState())))
          hand(app.getState(), "the app's store")
          break
        }
        case "restore": {
          const states = handed.filter((h) => h.whole)
          if (states.length === 0) break
          const { state, copy } = states[command.which % states.length]!
          commanding = true
          try {
            if (app === undefined) Effect.runSync(store.update(() => state))
            else app.setState(state)
          } finally {
            commanding = false
          }
          // Its value as handed out (the handed-out invariant holds it so).
          reference = structuredClone(copy)
          break
        }
        case "read": {
          if (command.how === "getThread") handThread(Effect.runSync(store.getThread("t1")), "getThread")
          else hand(command.how === "get" ? Effect.runSync(store.get) : store.getSnapshot(), command.how)
          break
        }
        case "subscribeChanges": {
          if (readers.length >= 2) break
          const thread = command.thread
          const seen = (value: unknown) =>
            Effect.sync(() => {
              reader.last = value
              reader.received = true
              if (thread === undefined) hand(value as ClientState.ClientState, "a changes reader")
              else handThread(value as ClientState.ThreadState | undefined, "a threadChanges reader")
            })
          const reader: Reader = {
            fiber: Effect.runFork(
              thread === undefined
                ? Stream.runForEach(store.changes, seen)
                : Stream.runForEach(ThreadStore.threadChanges(store, thread), seen)
            ),
            thread,
            last: undefined,
            received: false
          }
          readers.push(reader)
          // Subscribed once it has the state (the writer's turn may come meanwhile, and is seen as such).
          for (let i = 0; i < 20 && !reader.received; i++) await nextImmediate()
          if (!reader.received) fail("readers", "a new changes reader got no state")
          break
        }
        case "unsubscribeChanges": {
          const reader = readers.shift()
          if (reader !== undefined) await Effect.runPromise(Fiber.interrupt(reader.fiber))
          break
        }
        case "listen": {
          if (listeners.length >= 2) break
          const heard = () => {
            listener.calls++
            if (listener.reads) {
              // As useSyncExternalStore does: the snapshot, read in the listener.
              listener.lastRead = store.getSnapshot()
              hand(listener.lastRead, "a listener")
            }
            if (command.how === "resubscribes") {
              listener.unsubscribe()
              listener.unsubscribe = store.subscribe(heard)
            }
            if (command.how === "throws") throw new Error("a listener broke")
          }
          const listener: Listener = { reads: command.reads, calls: 0, lastRead: undefined, unsubscribe: () => undefined }
          listener.unsubscribe = store.subscribe(heard)
          listeners.push(listener)
          break
        }
        case "unlisten": {
          listeners.shift()?.unsubscribe()
          callsBefore.shift()
          break
        }
      }
      // Listeners were told of a change the command saw (those added by it excepted), once for a
      // change made at once.
      const once = command.kind === "apply" || command.kind === "update" || command.kind === "appWrite" ||
        command.kind === "appRehydrate" || command.kind === "restore" ||
        (command.kind === "chunk" && !command.specs.some((x) => x.kind === "flood"))
      listeners.forEach((listener, i) => {
        if (i >= callsBefore.length) return
        const where = `after command #${step} ${JSON.stringify(command)}`
        if (peek() !== stateBefore && listener.calls === callsBefore[i]) fail("listeners", `${where}: a listener was not called after a change`)
        if (once && listener.calls > callsBefore[i]! + 1) fail("listeners", `${where}: a listener was called ${listener.calls - callsBefore[i]!} times for one change`)
      })
      await checkAll(command, afterTurn)
    }
  } finally {
    ownListener()
    for (const listener of listeners) listener.unsubscribe()
    for (const reader of readers) await Effect.runPromise(Fiber.interrupt(reader.fiber))
    // Let what the writer still holds be published before the store goes.
    await nextImmediate()
    for (const { fiber } of writes) await Effect.runPromise(Fiber.interrupt(fiber))
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
