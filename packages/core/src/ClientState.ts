/**
 * The client's view of its threads, and the pure accumulator that folds run
 * events and local actions into it.
 *
 * `reduce(state, actions)` is pure and total: no clock, no randomness, no
 * exceptions. Time comes from each action's `at` (the caller reads Effect's
 * `Clock`); an event that references something unknown is recorded in the
 * thread's `anomalies` and skipped.
 *
 * Cost model: one `reduce` call is a batch. Within a batch a touched thread's
 * messages array, each touched message and each touched content block are
 * copied at most once, then mutated in place; untouched threads and messages
 * keep their identity. Content blocks are found through an index, never by
 * scanning messages.
 *
 * @since 0.1.0
 */
import type * as Events from "./Events.js"
import { applyPatch, deepEqual, parsePointer } from "./internal/jsonPatch.js"
import { parsePartialJson } from "./internal/partialJson.js"
import { mergePendingToolCalls, mergeThread } from "./internal/reconcile.js"
import type {
  Content,
  ResourceContent,
  StreamingState,
  TamboComponentContent,
  TamboThread,
  TamboThreadMessage,
  TextContent,
  ToolResultContent
} from "./Types.js"

/**
 * The id of the thread a new conversation lives in until its first run
 * starts and the server names it.
 *
 * @since 0.1.0
 * @category Constants
 */
export const PLACEHOLDER_THREAD_ID = "placeholder"

/**
 * @since 0.1.0
 * @category Guards
 */
export const isPlaceholderThreadId = (threadId: string | null | undefined): boolean =>
  threadId === PLACEHOLDER_THREAD_ID

/**
 * Prefix of the temporary thread a new-thread run uses while the placeholder
 * is busy with another one: concurrent new threads never share messages.
 *
 * @since 0.1.0
 * @category Constants
 */
export const LOCAL_THREAD_PREFIX = "local:"

/**
 * A thread that exists only in this client until its run starts: the
 * placeholder or a temporary one.
 *
 * @since 0.1.0
 * @category Guards
 */
export const isLocalThreadId = (threadId: string | null | undefined): boolean =>
  threadId === PLACEHOLDER_THREAD_ID || (typeof threadId === "string" && threadId.startsWith(LOCAL_THREAD_PREFIX))

/**
 * A tool call the run is waiting on.
 *
 * @since 0.1.0
 * @category Models
 */
export interface PendingToolCall {
  readonly toolCallId: string
  readonly toolName: string
  /**
   * The result this client's tools gave, when the server has not taken it
   * yet (the run ended before a continuation carrying it was accepted): the
   * next message on the thread sends it.
   */
  readonly result?: ToolResultContent | undefined
}

/**
 * Something the accumulator skipped: an event referencing an unknown
 * message, tool call or component, a patch that failed, and the like.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Anomaly {
  readonly eventType: string
  readonly reason: string
  /** Epoch milliseconds of the action that caused it. */
  readonly at: number
}

/**
 * How many anomalies a thread keeps (the most recent ones).
 *
 * @since 0.1.0
 * @category Constants
 */
export const MAX_ANOMALIES = 50

/**
 * Where a tool call or component block sits.
 *
 * @since 0.1.0
 * @category Internal
 */
export interface BlockPosition {
  readonly message: number
  readonly block: number
}

/**
 * Tool arguments received so far, and how long they were when last parsed.
 *
 * @since 0.1.0
 * @category Internal
 */
export interface ToolArgs {
  readonly raw: string
  readonly parsedLength: number
}

/**
 * The accumulator's bookkeeping. Not part of the public shape of a thread;
 * treat it as opaque. It is rebuilt from the messages whenever it does not
 * match them (for example after a state was serialised and restored).
 *
 * @since 0.1.0
 * @category Internal
 */
export interface ThreadInternal {
  /** Message id → position in `thread.messages`. */
  readonly messageIndex: ReadonlyMap<string, number>
  /** `t<toolCallId>` / `c<componentId>` → position of the block. */
  readonly blockIndex: ReadonlyMap<string, BlockPosition>
  /** How many messages the indexes describe. */
  readonly indexedCount: number
  /** Tool calls whose arguments are still streaming. */
  readonly toolArgs: ReadonlyMap<string, ToolArgs>
  /** Components whose props are still streaming. */
  readonly openComponents: ReadonlyArray<string>
  /** An assistant message created to hold reasoning before its text started. */
  readonly ephemeralMessageId?: string
  /** On the placeholder: where its run went once the server named the thread. */
  readonly redirectTo?: string
  /**
   * Messages added locally (USER_MESSAGE, TOOL_RESULTS) under local ids; a
   * later LOAD_THREAD_MESSAGES swaps each for the server's copy.
   */
  readonly optimisticMessageIds?: ReadonlyArray<string>
  /**
   * Position of the user message that opened the current turn. A message the
   * server names with an id from before it belongs to an earlier reply.
   */
  readonly turnStart?: number
  /** Ids the server reused from an earlier turn → the message of this turn that holds their events. */
  readonly messageAliases?: ReadonlyMap<string, string>
}

/**
 * One thread and the progress of its run.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ThreadState {
  readonly thread: TamboThread
  readonly streaming: StreamingState
  /** The run to pass as `previousRunId` when continuing the thread. */
  readonly lastCompletedRunId?: string
  /**
   * Tool calls the server is waiting on (from `tambo.run.awaiting_input`).
   * Kept through the paused run's `RUN_FINISHED` so the caller can answer
   * them; removed as results are sent, cleared when a run starts, ends in
   * error, or finishes without pausing. A run that ends here before the
   * server accepted their results puts back the ones the server waits on.
   */
  readonly pendingToolCalls: ReadonlyArray<PendingToolCall>
  /** The last {@link MAX_ANOMALIES} things the accumulator skipped. */
  readonly anomalies: ReadonlyArray<Anomaly>
  readonly internal: ThreadInternal
}

/**
 * Every thread the client tracks, and the one the UI shows.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ClientState {
  readonly threadMap: Readonly<Record<string, ThreadState>>
  readonly currentThreadId: string
}

/**
 * What the accumulator folds into the state. Every action that can create
 * something carries `at`, epoch milliseconds read by the caller from
 * Effect's `Clock`.
 *
 * @since 0.1.0
 * @category Models
 */
export type Action =
  | {
    readonly type: "EVENT"
    readonly threadId: string
    readonly event: Events.TamboEvent | Events.UnknownEvent
    readonly at: number
  }
  | {
    /** A chunk of a run's events, in order; a `RUN_STARTED` among them moves the rest to its thread. */
    readonly type: "EVENTS"
    readonly threadId: string
    readonly events: ReadonlyArray<Events.TamboEvent | Events.UnknownEvent>
    readonly at: number
  }
  /** The user's message, shown before the server echoes anything. */
  | { readonly type: "USER_MESSAGE"; readonly threadId: string; readonly message: TamboThreadMessage; readonly at: number }
  /** Creates the thread if it does not exist. */
  | {
    readonly type: "INIT_THREAD"
    readonly threadId: string
    readonly initialThread?: Partial<TamboThread>
    readonly at: number
  }
  | { readonly type: "SET_CURRENT_THREAD"; readonly threadId: string }
  /** Creates (or resets) the thread and makes it current. */
  | { readonly type: "START_NEW_THREAD"; readonly threadId: string; readonly at: number }
  /**
   * Merges messages fetched from the API: existing ids are kept as they are,
   * and optimistic local messages are replaced by their server copies.
   */
  | {
    readonly type: "LOAD_THREAD_MESSAGES"
    readonly threadId: string
    readonly messages: ReadonlyArray<TamboThreadMessage>
    readonly skipIfStreaming?: boolean
  }
  | { readonly type: "SET_LAST_COMPLETED_RUN_ID"; readonly threadId: string; readonly runId: string }
  | {
    readonly type: "UPDATE_THREAD"
    readonly threadId: string
    readonly patch: {
      readonly name?: string
      readonly metadata?: Record<string, unknown>
      readonly pendingToolCalls?: ReadonlyArray<PendingToolCall>
    }
  }
  | { readonly type: "REMOVE_THREAD"; readonly threadId: string }
  /** The client aborted the run, or the transport failed. */
  | {
    readonly type: "RUN_ENDED_LOCALLY"
    readonly threadId: string
    readonly outcome: "cancelled" | "error"
    readonly error?: StreamingState["error"]
    /**
     * The tool calls the server still waits on once the run ended here (a run
     * that ended between a pause and a continuation the server accepted);
     * absent: none.
     */
    readonly pendingToolCalls?: ReadonlyArray<PendingToolCall>
    readonly at: number
  }
  /**
   * The server's copy of a thread, read once a run ended: merged into the
   * thread (the server's messages, ids and fields; what only the client saw
   * stays, and a message whose local id is replaced keeps it as its `key`).
   * Ignored while a run streams on the thread.
   */
  | {
    readonly type: "RECONCILE_THREAD"
    readonly threadId: string
    readonly thread: TamboThread
    readonly pendingToolCallIds: ReadonlyArray<string>
    readonly lastCompletedRunId?: string
  }
  /**
   * Tool results the client sends back: one message each, as the API stores
   * them (role "assistant", one `tool_result` block).
   */
  | {
    readonly type: "TOOL_RESULTS"
    readonly threadId: string
    readonly results: ReadonlyArray<ToolResultContent>
    readonly at: number
  }

// ---------------------------------------------------------------------------
// Small pure helpers
// ---------------------------------------------------------------------------

const pad = (n: number, width: number): string => String(n).padStart(width, "0")

/** The character code of the decimal digit of `n` at `place` (1, 10, 100, ...). */
const digit = (n: number, place: number): number => 48 + (Math.floor(n / place) % 10)
const DASH = 45
const DOT = 46
const COLON = 58
const LETTER_T = 84
const LETTER_Z = 90

/**
 * Epoch milliseconds → ISO 8601, like `Date#toISOString` but total (a
 * non-finite input maps to the epoch) and without touching `Date`.
 */
const isoFromEpochMs = (epochMs: number): string => {
  const ms = Number.isFinite(epochMs) ? Math.trunc(epochMs) : 0
  const days = Math.floor(ms / 86_400_000)
  let rest = ms - days * 86_400_000
  const hours = Math.floor(rest / 3_600_000)
  rest -= hours * 3_600_000
  const minutes = Math.floor(rest / 60_000)
  rest -= minutes * 60_000
  const seconds = Math.floor(rest / 1000)
  const millis = rest - seconds * 1000
  // Days since the epoch → proleptic Gregorian date (H. Hinnant's civil_from_days).
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const dayOfEra = z - era * 146_097
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365
  )
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const monthIndex = Math.floor((5 * dayOfYear + 2) / 153)
  const day = dayOfYear - Math.floor((153 * monthIndex + 2) / 5) + 1
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
  if (year < 0 || year > 9999) {
    // Years outside 0000-9999 (never a clock's): the extended form, as Date writes it.
    const time = `${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}.${pad(millis, 3)}Z`
    return `${year < 0 ? "-" : "+"}${pad(Math.abs(year), 6)}-${pad(month, 2)}-${pad(day, 2)}T${time}`
  }
  // Written as character codes, the result is one flat string. Built from parts (a template),
  // it is a chain of a dozen joined strings, about 330 bytes where a flat one takes about 40:
  // the store keeps these timestamps as long as their messages and threads.
  return String.fromCharCode(
    digit(year, 1000),
    digit(year, 100),
    digit(year, 10),
    digit(year, 1),
    DASH,
    digit(month, 10),
    digit(month, 1),
    DASH,
    digit(day, 10),
    digit(day, 1),
    LETTER_T,
    digit(hours, 10),
    digit(hours, 1),
    COLON,
    digit(minutes, 10),
    digit(minutes, 1),
    COLON,
    digit(seconds, 10),
    digit(seconds, 1),
    DOT,
    digit(millis, 100),
    digit(millis, 10),
    digit(millis, 1),
    LETTER_Z
  )
}

/**
 * Epoch milliseconds as the ISO 8601 string the state stores.
 *
 * @since 0.1.0
 * @category Utils
 */
export const toIsoString: (epochMs: number) => string = isoFromEpochMs

const EPOCH_ISO = isoFromEpochMs(0)

const getOwn = <A>(record: Readonly<Record<string, A>>, key: string): A | undefined =>
  Object.hasOwn(record, key) ? record[key] : undefined

// Plain assignment of "__proto__" would replace the prototype of the map.
const setOwn = <A>(record: Record<string, A>, key: string, value: A): void => {
  if (key === "__proto__") {
    Object.defineProperty(record, key, { value, writable: true, enumerable: true, configurable: true })
  } else {
    record[key] = value
  }
}

/**
 * A copy of a thread map, made once per batch that changes it. Key by key
 * rather than a spread: a map of a few dozen threads or more is a dictionary
 * in V8, which a spread copies two to five times slower.
 */
const copyRecord = <A>(record: Readonly<Record<string, A>>): Record<string, A> => {
  const copy: Record<string, A> = {}
  const keys = Object.keys(record)
  for (let i = 0; i < keys.length; i++) setOwn(copy, keys[i]!, record[keys[i]!]!)
  return copy
}

const isPlainObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const toolKey = (toolCallId: string): string => `t${toolCallId}`
const componentKey = (componentId: string): string => `c${componentId}`

const emptyIndex: ReadonlyMap<never, never> = new Map<never, never>()

const emptyInternal: ThreadInternal = {
  messageIndex: emptyIndex,
  blockIndex: emptyIndex,
  indexedCount: 0,
  toolArgs: emptyIndex,
  openComponents: []
}

const idleStreaming: StreamingState = { status: "idle" }

const freshThreadState = (threadId: string, createdAt: string): ThreadState => ({
  thread: {
    id: threadId,
    messages: [],
    status: "idle",
    createdAt,
    updatedAt: createdAt,
    lastRunCancelled: false
  },
  streaming: idleStreaming,
  pendingToolCalls: [],
  anomalies: [],
  internal: emptyInternal
})

/**
 * An empty, idle thread created at `at`.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeThreadState = (threadId: string, at: number): ThreadState =>
  freshThreadState(threadId, isoFromEpochMs(at))

/**
 * The state a client starts with: an empty placeholder thread, current,
 * stamped with the epoch so that it is the same value every time.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const initial: ClientState = {
  threadMap: { [PLACEHOLDER_THREAD_ID]: freshThreadState(PLACEHOLDER_THREAD_ID, EPOCH_ISO) },
  currentThreadId: PLACEHOLDER_THREAD_ID
}

/**
 * @since 0.1.0
 * @category Getters
 */
export const getThreadState = (state: ClientState, threadId: string): ThreadState | undefined =>
  getOwn(state.threadMap, threadId)

/**
 * @since 0.1.0
 * @category Getters
 */
export const getThread = (state: ClientState, threadId: string): TamboThread | undefined =>
  getOwn(state.threadMap, threadId)?.thread

/**
 * The thread's messages; empty when the thread is unknown.
 *
 * @since 0.1.0
 * @category Getters
 */
export const getMessages = (state: ClientState, threadId: string): ReadonlyArray<TamboThreadMessage> =>
  getOwn(state.threadMap, threadId)?.thread.messages ?? []

/**
 * @since 0.1.0
 * @category Getters
 */
export const getCurrentThreadState = (state: ClientState): ThreadState | undefined =>
  getOwn(state.threadMap, state.currentThreadId)

/**
 * @since 0.1.0
 * @category Getters
 */
export const getCurrentThread = (state: ClientState): TamboThread | undefined =>
  getOwn(state.threadMap, state.currentThreadId)?.thread

// Partial tool arguments are reparsed at the end of a batch while short, or
// once they grew by a quarter: a geometric schedule, so the total parsing
// work stays linear in the arguments' length however the events are batched.
const MAX_OPTIMISTIC = 50

const REPARSE_ALWAYS_BELOW = 8 * 1024
const REPARSE_GROWTH = 1.25

const toolResultContentFromEvent = (content: string | ReadonlyArray<unknown>): Array<TextContent | ResourceContent> => {
  if (typeof content === "string") return [{ type: "text", text: content }]
  // AG-UI 1.0 content parts: keep the text parts; anything else is kept as JSON.
  const out: Array<TextContent | ResourceContent> = []
  for (const part of content) {
    if (isPlainObject(part) && part.type === "text" && typeof part.text === "string") {
      out.push({ type: "text", text: part.text })
    } else {
      out.push({ type: "text", text: JSON.stringify(part) ?? "null" })
    }
  }
  return out
}

const errorCategory = (u: unknown): "client_error" | "server_error" | undefined =>
  u === "client_error" || u === "server_error" ? u : undefined

// ---------------------------------------------------------------------------
// Per-batch, per-thread draft
// ---------------------------------------------------------------------------

/**
 * A thread being changed by one batch. Everything it holds is either the
 * batch's input (shared, never mutated) or a copy it made (tracked in
 * `owned`, mutated freely until the batch ends).
 */
class ThreadDraft {
  changed: boolean
  thread: TamboThread
  private threadOwned = false
  private messagesOwned = false
  streaming: StreamingState
  private streamingOwned = false
  messageIndex: ReadonlyMap<string, number>
  blockIndex: ReadonlyMap<string, BlockPosition>
  /** This batch's copy of the indexes, once made. */
  private indexCopy: { readonly messages: Map<string, number>; readonly blocks: Map<string, BlockPosition> } | undefined
  toolArgs: ReadonlyMap<string, ToolArgs>
  private toolArgsCopy: Map<string, ToolArgs> | undefined
  openComponents: ReadonlyArray<string>
  ephemeralMessageId: string | undefined
  redirectTo: string | undefined
  optimisticMessageIds: ReadonlyArray<string>
  turnStart: number | undefined
  messageAliases: ReadonlyMap<string, string>
  lastCompletedRunId: string | undefined
  pendingToolCalls: ReadonlyArray<PendingToolCall>
  anomalies: ReadonlyArray<Anomaly>
  private anomaliesCopy: Array<Anomaly> | undefined
  /** Tool calls whose arguments grew in this batch. */
  readonly touchedToolCalls = new Set<string>()
  private lastComponentId: string | undefined = undefined
  private lastComponentKey: string | undefined = undefined
  /** The `at` of the action being applied (undefined for actions without one). */
  currentAt: number | undefined = undefined
  /** The `at` of the last change to the thread itself: becomes `updatedAt`. */
  private lastAt: number | undefined = undefined

  constructor(readonly base: ThreadState, readonly owned: Set<object>, isNew: boolean) {
    this.changed = isNew
    this.thread = base.thread
    // States restored from storage or built by hand may lack what the
    // reducer adds; fall back rather than fail.
    this.streaming = base.streaming ?? idleStreaming
    const internal: Partial<ThreadInternal> = base.internal ?? {}
    this.messageIndex = internal.messageIndex ?? emptyIndex
    this.blockIndex = internal.blockIndex ?? emptyIndex
    this.toolArgs = internal.toolArgs ?? emptyIndex
    this.openComponents = internal.openComponents ?? []
    this.ephemeralMessageId = internal.ephemeralMessageId
    this.redirectTo = internal.redirectTo
    this.optimisticMessageIds = Array.isArray(internal.optimisticMessageIds) ? internal.optimisticMessageIds : []
    this.turnStart = typeof internal.turnStart === "number" ? internal.turnStart : undefined
    this.messageAliases = internal.messageAliases instanceof Map ? internal.messageAliases : emptyIndex
    this.lastCompletedRunId = base.lastCompletedRunId
    this.pendingToolCalls = Array.isArray(base.pendingToolCalls) ? base.pendingToolCalls : []
    this.anomalies = Array.isArray(base.anomalies) ? base.anomalies : []
    if (
      !(internal.messageIndex instanceof Map) ||
      !(internal.blockIndex instanceof Map) ||
      !(internal.toolArgs instanceof Map) ||
      !Array.isArray(internal.openComponents) ||
      internal.indexedCount !== base.thread.messages.length
    ) {
      // Bookkeeping that does not describe these messages (restored from
      // storage, or messages edited outside the reducer): rebuild it.
      this.rebuildIndex()
      if (!(internal.toolArgs instanceof Map)) {
        this.toolArgsCopy = new Map()
        this.toolArgs = this.toolArgsCopy
      }
      if (!Array.isArray(internal.openComponents)) this.openComponents = []
    }
  }

  get messages(): ReadonlyArray<TamboThreadMessage> {
    return this.thread.messages
  }

  // -- copy-on-write accessors ------------------------------------------------

  ownThread(): TamboThread {
    this.changed = true
    if (this.currentAt !== undefined) this.lastAt = this.currentAt
    if (!this.threadOwned) {
      this.thread = { ...this.thread }
      this.threadOwned = true
    }
    return this.thread
  }

  ownMessages(): Array<TamboThreadMessage> {
    const thread = this.ownThread()
    if (!this.messagesOwned) {
      thread.messages = thread.messages.slice()
      this.messagesOwned = true
    }
    return thread.messages
  }

  ownMessage(index: number): TamboThreadMessage {
    const messages = this.ownMessages()
    let message = messages[index]!
    if (!this.owned.has(message)) {
      message = { ...message }
      this.owned.add(message)
      messages[index] = message
    }
    return message
  }

  ownContent(index: number): Array<Content> {
    const message = this.ownMessage(index)
    if (!this.owned.has(message.content)) {
      message.content = message.content.slice()
      this.owned.add(message.content)
    }
    return message.content
  }

  ownBlock(position: BlockPosition): Content {
    const content = this.ownContent(position.message)
    let block = content[position.block]!
    if (!this.owned.has(block)) {
      block = { ...block }
      this.owned.add(block)
      content[position.block] = block
    }
    return block
  }

  ownReasoning(index: number): Array<string> {
    const message = this.ownMessage(index)
    if (message.reasoning === undefined) {
      message.reasoning = []
      this.owned.add(message.reasoning)
    } else if (!this.owned.has(message.reasoning)) {
      message.reasoning = message.reasoning.slice()
      this.owned.add(message.reasoning)
    }
    return message.reasoning
  }

  ownStreaming(): StreamingState {
    this.changed = true
    if (!this.streamingOwned) {
      this.streaming = { ...this.streaming }
      this.streamingOwned = true
    }
    return this.streaming
  }

  replaceStreaming(streaming: StreamingState): void {
    this.changed = true
    this.streaming = streaming
    this.streamingOwned = true
  }

  private ownIndex(): { readonly messages: Map<string, number>; readonly blocks: Map<string, BlockPosition> } {
    this.changed = true
    if (this.indexCopy === undefined) {
      this.indexCopy = { messages: new Map(this.messageIndex), blocks: new Map(this.blockIndex) }
      this.messageIndex = this.indexCopy.messages
      this.blockIndex = this.indexCopy.blocks
    }
    return this.indexCopy
  }

  ownToolArgs(): Map<string, ToolArgs> {
    this.changed = true
    if (this.toolArgsCopy === undefined) {
      this.toolArgsCopy = new Map(this.toolArgs)
      this.toolArgs = this.toolArgsCopy
    }
    return this.toolArgsCopy
  }

  setPendingToolCalls(calls: ReadonlyArray<PendingToolCall>): void {
    if (calls.length === 0 && this.pendingToolCalls.length === 0) return
    this.changed = true
    this.pendingToolCalls = calls
  }

  removePendingToolCall(toolCallId: string): void {
    if (!this.pendingToolCalls.some((call) => call.toolCallId === toolCallId)) return
    this.setPendingToolCalls(this.pendingToolCalls.filter((call) => call.toolCallId !== toolCallId))
  }

  setOpenComponents(ids: ReadonlyArray<string>): void {
    this.changed = true
    this.openComponents = ids
  }

  setEphemeral(id: string | undefined): void {
    if (this.ephemeralMessageId === id) return
    this.changed = true
    this.ephemeralMessageId = id
  }

  setRedirect(threadId: string | undefined): void {
    if (this.redirectTo === threadId) return
    this.changed = true
    this.redirectTo = threadId
  }

  setOptimisticMessageIds(ids: ReadonlyArray<string>): void {
    if (ids.length === 0 && this.optimisticMessageIds.length === 0) return
    this.changed = true
    // Bounded: ids the server never returned should not pile up forever.
    this.optimisticMessageIds = ids.length > MAX_OPTIMISTIC ? ids.slice(-MAX_OPTIMISTIC) : ids
  }

  setLastCompletedRunId(runId: string | undefined): void {
    if (this.lastCompletedRunId === runId) return
    this.changed = true
    this.lastCompletedRunId = runId
  }

  anomaly(eventType: string, reason: string, at: number): void {
    this.changed = true
    if (this.anomaliesCopy === undefined) {
      this.anomaliesCopy = this.anomalies.slice(-(MAX_ANOMALIES - 1))
      this.anomalies = this.anomaliesCopy
    }
    const anomalies = this.anomaliesCopy
    anomalies.push({ eventType, reason, at })
    if (anomalies.length > MAX_ANOMALIES) anomalies.splice(0, anomalies.length - MAX_ANOMALIES)
  }

  // -- index ---------------------------------------------------------------

  rebuildIndex(): void {
    const messages = new Map<string, number>()
    const blocks = new Map<string, BlockPosition>()
    const list = this.thread.messages
    for (let i = 0; i < list.length; i++) {
      const message = list[i]!
      messages.set(message.id, i)
      const content = message.content
      for (let j = 0; j < content.length; j++) {
        const block = content[j]!
        if (block.type === "tool_use") blocks.set(toolKey(block.id), { message: i, block: j })
        else if (block.type === "component") blocks.set(componentKey(block.id), { message: i, block: j })
      }
    }
    this.indexCopy = { messages, blocks }
    this.messageIndex = messages
    this.blockIndex = blocks
    this.changed = true
  }

  /** Position of a message (or of the message this turn gave its reused id), or -1. */
  findMessage(messageId: string): number {
    const id = this.resolveMessageId(messageId)
    const index = this.messageIndex.get(id)
    if (index === undefined) return -1
    if (this.thread.messages[index]?.id === id) return index
    // The index went stale (messages changed outside the reducer): rebuild once.
    this.rebuildIndex()
    return this.messageIndex.get(id) ?? -1
  }

  findBlock(kind: "tool_use" | "component", id: string): BlockPosition | undefined {
    let key: string
    if (kind === "component") {
      // Patches stream to one component at a time: its key is built once, not per event.
      if (id !== this.lastComponentId) {
        this.lastComponentId = id
        this.lastComponentKey = componentKey(id)
      }
      key = this.lastComponentKey!
    } else {
      key = toolKey(id)
    }
    const position = this.blockIndex.get(key)
    if (position === undefined) return undefined
    const block = this.thread.messages[position.message]?.content[position.block]
    if (block !== undefined && block.type === kind && block.id === id) return position
    this.rebuildIndex()
    return this.blockIndex.get(key)
  }

  appendMessage(message: TamboThreadMessage): number {
    const messages = this.ownMessages()
    this.owned.add(message)
    this.owned.add(message.content)
    const index = messages.length
    messages.push(message)
    const { blocks, messages: byId } = this.ownIndex()
    byId.set(message.id, index)
    const content = message.content
    for (let j = 0; j < content.length; j++) {
      const block = content[j]!
      if (block.type === "tool_use") blocks.set(toolKey(block.id), { message: index, block: j })
      else if (block.type === "component") blocks.set(componentKey(block.id), { message: index, block: j })
    }
    return index
  }

  appendBlock(messageIndex: number, block: Content): BlockPosition {
    const content = this.ownContent(messageIndex)
    this.owned.add(block)
    const position: BlockPosition = { message: messageIndex, block: content.length }
    content.push(block)
    if (block.type === "tool_use") this.ownIndex().blocks.set(toolKey(block.id), position)
    else if (block.type === "component") this.ownIndex().blocks.set(componentKey(block.id), position)
    return position
  }

  renameMessage(index: number, id: string): void {
    const message = this.ownMessage(index)
    const { messages } = this.ownIndex()
    messages.delete(message.id)
    message.id = id
    messages.set(id, index)
  }

  /** Takes a whole thread made outside the batch (reconciliation): the index is rebuilt. */
  replaceThread(thread: TamboThread): void {
    this.changed = true
    this.thread = thread
    this.threadOwned = false
    this.messagesOwned = false
    this.forgetTurn()
    this.rebuildIndex()
  }

  /** Replaces all messages (load, migration): positions change, so the index is rebuilt. */
  replaceMessages(messages: Array<TamboThreadMessage>): void {
    const thread = this.ownThread()
    thread.messages = messages
    this.messagesOwned = true
    this.forgetTurn()
    this.rebuildIndex()
  }

  /** The id this turn's events under `id` are held under (see `claimMessageId`). */
  resolveMessageId(id: string): string {
    return this.messageAliases.size === 0 ? id : this.messageAliases.get(id) ?? id
  }

  setMessageAlias(id: string, alias: string): void {
    this.changed = true
    this.messageAliases = new Map(this.messageAliases).set(id, alias)
  }

  /** A user message opens a turn: ids from before it are an earlier reply's. */
  startTurn(userMessageIndex: number): void {
    this.changed = true
    this.turnStart = userMessageIndex
    if (this.messageAliases.size > 0) this.messageAliases = emptyIndex
  }

  /** New messages from the server: positions and ids are its own again. */
  private forgetTurn(): void {
    this.turnStart = undefined
    this.messageAliases = emptyIndex
  }

  uniqueMessageId(candidate: string): string {
    if (this.findMessage(candidate) < 0) return candidate
    for (let n = 2; ; n++) {
      const id = `${candidate}_${n}`
      if (this.findMessage(id) < 0) return id
    }
  }

  // -- tool arguments ------------------------------------------------------

  setToolInput(toolCallId: string, input: Record<string, unknown>): void {
    const position = this.findBlock("tool_use", toolCallId)
    if (position === undefined) return
    const block = this.ownBlock(position)
    if (block.type === "tool_use") block.input = input
  }

  /** Runs the scheduled partial parses of this batch. */
  flushToolArgs(): void {
    if (this.touchedToolCalls.size === 0) return
    for (const toolCallId of this.touchedToolCalls) {
      const args = this.toolArgs.get(toolCallId)
      if (args === undefined) continue
      const length = args.raw.length
      if (length >= REPARSE_ALWAYS_BELOW && length < args.parsedLength * REPARSE_GROWTH) continue
      this.ownToolArgs().set(toolCallId, { raw: args.raw, parsedLength: length })
      const parsed = parsePartialJson(args.raw)
      if (isPlainObject(parsed)) this.setToolInput(toolCallId, parsed)
    }
    this.touchedToolCalls.clear()
  }

  // -- result --------------------------------------------------------------

  finish(): ThreadState {
    this.flushToolArgs()
    if (!this.changed) return this.base
    const lastAt = this.lastAt
    if (lastAt !== undefined) {
      this.currentAt = lastAt
      this.ownThread().updatedAt = isoFromEpochMs(lastAt)
    }
    const internal: ThreadInternal = {
      messageIndex: this.messageIndex,
      blockIndex: this.blockIndex,
      indexedCount: this.thread.messages.length,
      toolArgs: this.toolArgs,
      openComponents: this.openComponents,
      ...(this.ephemeralMessageId === undefined ? {} : { ephemeralMessageId: this.ephemeralMessageId }),
      ...(this.redirectTo === undefined ? {} : { redirectTo: this.redirectTo }),
      ...(this.optimisticMessageIds.length === 0 ? {} : { optimisticMessageIds: this.optimisticMessageIds }),
      ...(this.turnStart === undefined ? {} : { turnStart: this.turnStart }),
      ...(this.messageAliases.size === 0 ? {} : { messageAliases: this.messageAliases })
    }
    return {
      thread: this.thread,
      streaming: this.streaming,
      ...(this.lastCompletedRunId === undefined ? {} : { lastCompletedRunId: this.lastCompletedRunId }),
      pendingToolCalls: this.pendingToolCalls,
      anomalies: this.anomalies,
      internal
    }
  }
}

// ---------------------------------------------------------------------------
// Event handlers
// ---------------------------------------------------------------------------

type EventOf<T extends Events.TamboEvent["type"]> = Extract<Events.TamboEvent, { readonly type: T }>

const handleRunStarted = (d: ThreadDraft, event: EventOf<"RUN_STARTED">, at: number): void => {
  const thread = d.ownThread()
  thread.status = "streaming"
  thread.lastRunCancelled = false
  if (thread.lastRunError !== undefined) delete thread.lastRunError
  d.replaceStreaming({ status: "streaming", runId: event.runId, startTime: at })
  d.setPendingToolCalls([])
  d.setEphemeral(undefined)
  if (d.toolArgs.size > 0) d.ownToolArgs().clear()
  d.touchedToolCalls.clear()
}

const isCancelledOutcome = (outcome: unknown): boolean => isPlainObject(outcome) && outcome.type === "cancelled"

const handleRunFinished = (d: ThreadDraft, event: EventOf<"RUN_FINISHED">): void => {
  const paused = d.streaming.status === "waiting"
  d.setLastCompletedRunId(event.runId)
  const thread = d.ownThread()
  thread.status = "idle"
  if (isCancelledOutcome(event.outcome)) thread.lastRunCancelled = true
  d.ownStreaming().status = "idle"
  // A run that paused for client tools finishes right after saying so; its
  // pending calls stay until answered.
  if (!paused) d.setPendingToolCalls([])
}

const handleRunError = (d: ThreadDraft, event: EventOf<"RUN_ERROR">): void => {
  const cancelled = event.code === "CANCELLED"
  // The API releases a failed or cancelled run like a finished one: the next
  // run's previousRunId must name it.
  if (d.streaming.runId !== undefined) d.setLastCompletedRunId(d.streaming.runId)
  const thread = d.ownThread()
  thread.status = "idle"
  thread.lastRunCancelled = cancelled
  const streaming = d.ownStreaming()
  streaming.status = "idle"
  if (cancelled) {
    delete streaming.error
  } else {
    const category = errorCategory(event.category)
    streaming.error = {
      message: event.message,
      ...(event.code === undefined ? {} : { code: event.code }),
      ...(category === undefined ? {} : { category }),
      ...(event.isRetryable === undefined ? {} : { isRetryable: event.isRetryable }),
      ...(event.status === undefined ? {} : { status: event.status })
    }
  }
  d.setPendingToolCalls([])
}

/**
 * Where a run's event that names message `messageId` puts it: its position,
 * or -1 when the message is new. An id from before the turn's user message
 * is an earlier reply's, reused by the server: the event opens a message of
 * this turn, which the id's later events then find (an anomaly, never more
 * text in history).
 */
const claimMessageId = (d: ThreadDraft, messageId: string, eventType: string, at: number): number => {
  const index = d.findMessage(messageId)
  if (index < 0 || d.turnStart === undefined || index >= d.turnStart) return index
  const alias = d.uniqueMessageId(messageId)
  d.anomaly(eventType, `message ${messageId} is from an earlier turn; this turn's message is ${alias}`, at)
  d.setMessageAlias(messageId, alias)
  return -1
}

const handleTextMessageStart = (d: ThreadDraft, event: EventOf<"TEXT_MESSAGE_START">, at: number): void => {
  const isAssistant = event.role !== "user"
  const existing = isAssistant ? claimMessageId(d, event.messageId, event.type, at) : d.findMessage(event.messageId)
  const messageId = d.resolveMessageId(event.messageId)
  if (isAssistant && existing < 0 && d.ephemeralMessageId !== undefined) {
    // Reasoning arrived before the text: its message takes the real id.
    const ephemeral = d.findMessage(d.ephemeralMessageId)
    const reasoning = ephemeral < 0 ? undefined : d.messages[ephemeral]!.reasoning
    if (reasoning !== undefined && reasoning.length > 0) {
      d.renameMessage(ephemeral, messageId)
      d.setEphemeral(undefined)
      d.ownStreaming().messageId = messageId
      return
    }
  }
  if (existing < 0) {
    d.appendMessage({
      id: messageId,
      role: isAssistant ? "assistant" : "user",
      content: [],
      createdAt: isoFromEpochMs(at)
    })
  } else {
    d.ownThread()
  }
  d.ownStreaming().messageId = messageId
}

const handleTextMessageContent = (d: ThreadDraft, event: EventOf<"TEXT_MESSAGE_CONTENT">, at: number): void =>
  appendText(d, event.messageId, event.delta, 1, at)

/** Appends `delta`, the text of `count` consecutive deltas, to a message's last text block. */
const appendText = (d: ThreadDraft, messageId: string, delta: string, count: number, at: number): void => {
  const index = d.findMessage(messageId)
  if (index < 0) {
    for (let i = 0; i < count; i++) d.anomaly("TEXT_MESSAGE_CONTENT", `unknown message ${messageId}`, at)
    return
  }
  const content = d.ownContent(index)
  const last = content[content.length - 1]
  if (last !== undefined && last.type === "text") {
    if (d.owned.has(last)) {
      last.text += delta
    } else {
      const block: TextContent = { ...last, text: last.text + delta }
      d.owned.add(block)
      content[content.length - 1] = block
    }
  } else {
    const block: TextContent = { type: "text", text: delta }
    d.owned.add(block)
    content.push(block)
  }
}

const handleTextMessageEnd = (d: ThreadDraft, event: EventOf<"TEXT_MESSAGE_END">, at: number): void => {
  const active = d.streaming.messageId
  if (active !== undefined && active !== d.resolveMessageId(event.messageId)) {
    return d.anomaly(event.type, `message ${event.messageId} ended while ${active} is streaming`, at)
  }
  if (active !== undefined) delete d.ownStreaming().messageId
}

const hasToolResult = (message: TamboThreadMessage): boolean => message.content.some((block) => block.type === "tool_result")

/**
 * The message a tool call belongs to. The API names a temporary id as the
 * parent when text preceded the call, yet stores text and call in one
 * assistant message: so an unknown (or absent) parent means the message
 * being streamed, else the last assistant message — never one holding tool
 * results, which the API stores as messages of their own.
 */
const toolCallMessage = (d: ThreadDraft, parentMessageId: string | undefined): number => {
  if (parentMessageId !== undefined) {
    const parent = d.findMessage(parentMessageId)
    if (parent >= 0) return parent
  }
  const open = d.streaming.messageId
  if (open !== undefined) {
    const index = d.findMessage(open)
    if (index >= 0 && d.messages[index]!.role === "assistant" && !hasToolResult(d.messages[index]!)) return index
  }
  const last = d.messages.length - 1
  if (last >= 0 && d.messages[last]!.role === "assistant" && !hasToolResult(d.messages[last]!)) return last
  return -1
}

/**
 * A call is identified within its message: providers that count reuse
 * `call_0` in every round, so an id already used in an earlier message opens
 * a block of its own, which the index then names (the latest block of an id
 * is the one its deltas, end and result refer to). Started again in the same
 * message, it is an anomaly.
 */
const handleToolCallStart = (d: ThreadDraft, event: EventOf<"TOOL_CALL_START">, at: number): void => {
  const index = toolCallMessage(d, event.parentMessageId)
  const earlier = d.findBlock("tool_use", event.toolCallId)
  if (earlier !== undefined && earlier.message === index) {
    return d.anomaly(event.type, `tool call ${event.toolCallId} started twice`, at)
  }
  // The earlier call, still open, keeps the arguments it had.
  if (earlier !== undefined) closeToolArgs(d, event.toolCallId)
  const block: Content = { type: "tool_use", id: event.toolCallId, name: event.toolCallName, input: {} }
  if (index >= 0) {
    d.appendBlock(index, block)
  } else {
    const id = d.uniqueMessageId(event.parentMessageId ?? `msg_tool_${event.toolCallId}`)
    d.appendMessage({ id, role: "assistant", content: [block], createdAt: isoFromEpochMs(at) })
    d.ownStreaming().messageId = id
  }
  d.ownToolArgs().set(event.toolCallId, { raw: "", parsedLength: 0 })
}

const handleToolCallArgs = (d: ThreadDraft, event: EventOf<"TOOL_CALL_ARGS">, at: number): void =>
  appendToolArgs(d, event.toolCallId, event.delta, 1, at)

/** Appends `delta`, the text of `count` consecutive argument deltas, to a tool call's raw arguments. */
const appendToolArgs = (d: ThreadDraft, toolCallId: string, delta: string, count: number, at: number): void => {
  const args = d.toolArgs.get(toolCallId)
  if (args === undefined) {
    const known = d.findBlock("tool_use", toolCallId) !== undefined
    const reason = known ? `arguments for tool call ${toolCallId} after it ended` : `unknown tool call ${toolCallId}`
    for (let i = 0; i < count; i++) d.anomaly("TOOL_CALL_ARGS", reason, at)
    return
  }
  d.ownToolArgs().set(toolCallId, { raw: args.raw + delta, parsedLength: args.parsedLength })
  d.touchedToolCalls.add(toolCallId)
}

/**
 * Where a run of consecutive deltas to the same target (text of one message,
 * arguments of one tool call) starting at `start` ends. Within one batch no
 * snapshot is taken between them, so they apply as one joined delta: one
 * lookup and one string append per network chunk instead of per event.
 */
const deltaRunEnd = (events: ReadonlyArray<Events.TamboEvent | Events.UnknownEvent>, start: number): number => {
  const first = events[start]!
  let end = start + 1
  if (first.type === "TEXT_MESSAGE_CONTENT") {
    while (end < events.length) {
      const next = events[end]!
      if (next.type !== "TEXT_MESSAGE_CONTENT" || next.messageId !== first.messageId) break
      end++
    }
  } else if (first.type === "TOOL_CALL_ARGS") {
    while (end < events.length) {
      const next = events[end]!
      if (next.type !== "TOOL_CALL_ARGS" || next.toolCallId !== first.toolCallId) break
      end++
    }
  }
  return end
}

const joinDeltas = (events: ReadonlyArray<Events.TamboEvent | Events.UnknownEvent>, start: number, end: number): string => {
  const parts: Array<string> = new Array(end - start)
  for (let i = start; i < end; i++) parts[i - start] = (events[i] as { readonly delta: string }).delta
  return parts.join("")
}

const parseToolArgs = (raw: string): { readonly input: Record<string, unknown> | undefined; readonly complete: boolean } => {
  try {
    const parsed: unknown = JSON.parse(raw)
    return { input: isPlainObject(parsed) ? parsed : undefined, complete: true }
  } catch {
    const partial = parsePartialJson(raw)
    return { input: isPlainObject(partial) ? partial : undefined, complete: false }
  }
}

const handleToolCallEnd = (d: ThreadDraft, event: EventOf<"TOOL_CALL_END">, at: number): void => {
  const args = d.toolArgs.get(event.toolCallId)
  if (args === undefined) {
    if (d.findBlock("tool_use", event.toolCallId) === undefined) {
      d.anomaly(event.type, `unknown tool call ${event.toolCallId}`, at)
    }
    return
  }
  d.ownToolArgs().delete(event.toolCallId)
  d.touchedToolCalls.delete(event.toolCallId)
  // No arguments at all: the input stays {}.
  if (args.raw === "") return
  const { complete, input } = parseToolArgs(args.raw)
  if (!complete) d.anomaly(event.type, `arguments of tool call ${event.toolCallId} are not valid JSON`, at)
  else if (input === undefined) d.anomaly(event.type, `arguments of tool call ${event.toolCallId} are not an object`, at)
  if (input !== undefined) d.setToolInput(event.toolCallId, input)
}

/** Ends a call's streaming arguments without its TOOL_CALL_END: what they parse to stays its input. */
const closeToolArgs = (d: ThreadDraft, toolCallId: string): void => {
  const args = d.toolArgs.get(toolCallId)
  if (args === undefined) return
  d.ownToolArgs().delete(toolCallId)
  d.touchedToolCalls.delete(toolCallId)
  if (args.raw === "") return
  const { input } = parseToolArgs(args.raw)
  if (input !== undefined) d.setToolInput(toolCallId, input)
}

const handleToolCallResult = (d: ThreadDraft, event: EventOf<"TOOL_CALL_RESULT">, at: number): void => {
  const block: ToolResultContent = {
    type: "tool_result",
    toolUseId: event.toolCallId,
    content: toolResultContentFromEvent(event.content)
  }
  const index = claimMessageId(d, event.messageId, event.type, at)
  if (index >= 0) {
    d.appendBlock(index, block)
  } else {
    // The API stores a tool's result as a message of its own, which it
    // returns with role "assistant".
    d.appendMessage({ id: d.resolveMessageId(event.messageId), role: "assistant", content: [block], createdAt: isoFromEpochMs(at) })
  }
  d.removePendingToolCall(event.toolCallId)
}

/** The message reasoning attaches to, creating one if the run has none yet. */
const reasoningMessage = (d: ThreadDraft, messageId: string | undefined, at: number): number => {
  if (messageId !== undefined) {
    const index = claimMessageId(d, messageId, "REASONING_MESSAGE", at)
    if (index >= 0 && d.messages[index]!.role === "assistant") return index
  }
  const active = d.streaming.messageId
  if (active !== undefined) {
    const index = d.findMessage(active)
    if (index >= 0 && d.messages[index]!.role === "assistant") return index
  }
  const last = d.messages.length - 1
  if (last >= 0 && d.messages[last]!.role === "assistant") return last
  // Deterministic stand-in id; TEXT_MESSAGE_START later gives it the real one.
  const id = messageId !== undefined && d.findMessage(messageId) < 0
    ? d.resolveMessageId(messageId)
    : d.uniqueMessageId(`ephemeral_${d.streaming.runId ?? "run"}_${d.messages.length}`)
  const index = d.appendMessage({ id, role: "assistant", content: [], createdAt: isoFromEpochMs(at) })
  d.ownStreaming().messageId = id
  d.setEphemeral(id)
  return index
}

const startReasoning = (d: ThreadDraft, messageId: string | undefined, at: number): void => {
  const index = reasoningMessage(d, messageId, at)
  d.ownReasoning(index).push("")
  if (d.streaming.reasoningStartTime === undefined) d.ownStreaming().reasoningStartTime = at
}

const appendReasoning = (d: ThreadDraft, messageId: string | undefined, delta: string, at: number): void => {
  const index = reasoningMessage(d, messageId, at)
  const reasoning = d.ownReasoning(index)
  if (reasoning.length === 0) {
    reasoning.push(delta)
    if (d.streaming.reasoningStartTime === undefined) d.ownStreaming().reasoningStartTime = at
  } else {
    reasoning[reasoning.length - 1] += delta
  }
}

const endReasoning = (d: ThreadDraft, messageId: string | undefined, at: number): void => {
  const index = reasoningMessage(d, messageId, at)
  const start = d.streaming.reasoningStartTime
  if (start !== undefined) d.ownMessage(index).reasoningDurationMS = at - start
}

const handleComponentStart = (d: ThreadDraft, event: Events.ComponentStartEvent, at: number): void => {
  const { componentId, componentName, messageId } = event.value
  if (d.findBlock("component", componentId) !== undefined) {
    return d.anomaly(event.name, `component ${componentId} started twice`, at)
  }
  let index = claimMessageId(d, messageId, event.name, at)
  if (index < 0) {
    // Components may start before (or without) any text of their message.
    index = d.appendMessage({ id: d.resolveMessageId(messageId), role: "assistant", content: [], createdAt: isoFromEpochMs(at) })
  }
  const block: TamboComponentContent = {
    type: "component",
    id: componentId,
    name: componentName,
    props: {},
    streamingState: "started"
  }
  d.appendBlock(index, block)
  d.setOpenComponents([...d.openComponents, componentId])
}

/**
 * The keys, in order, of a patch that only sets top-level keys of a plain
 * object ("add" anywhere, "replace" of a key that exists or an earlier
 * operation added), or undefined for any other patch. Such a patch cannot
 * fail. Paths that are deeper, invalid, or through a forbidden name are left
 * to the general patcher.
 */
const topLevelSetKeys = (
  document: Readonly<Record<string, unknown>>,
  operations: ReadonlyArray<Events.JsonPatchOperation>
): ReadonlyArray<string> | undefined => {
  const keys: Array<string> = new Array(operations.length)
  let added: Set<string> | undefined
  for (let i = 0; i < operations.length; i++) {
    const operation = operations[i]!
    if (operation.op !== "add" && operation.op !== "replace") return undefined
    if (operation.value === undefined) return undefined
    const key = topLevelKey(operation.path)
    if (key === undefined) return undefined
    if (operation.op === "replace" && !Object.hasOwn(document, key) && added?.has(key) !== true) return undefined
    if (operation.op === "add" && operations.length > 1) (added ??= new Set()).add(key)
    keys[i] = key
  }
  return keys
}

/**
 * The key a one-segment path names, unescaped, or undefined (a deeper path, an invalid
 * one, or one through a forbidden name). Parsed once per distinct path: the key comes
 * back as the same string every time, which the engine resolves as a property name once;
 * a key cut afresh from the path for every patch made each write about 3x slower.
 */
const topLevelKey = (path: string): string | undefined => {
  const pointer = parsePointer(path)
  return pointer.ok && pointer.tokens.length === 1 ? pointer.tokens[0] : undefined
}

const handleComponentDelta = (
  d: ThreadDraft,
  event: Events.ComponentPropsDeltaEvent | Events.ComponentStateDeltaEvent,
  field: "props" | "state",
  at: number
): void => {
  const { componentId, operations } = event.value
  const position = d.findBlock("component", componentId)
  if (position === undefined) return d.anomaly(event.name, `unknown component ${componentId}`, at)
  const current = d.messages[position.message]!.content[position.block]!
  if (current.type !== "component") return d.anomaly(event.name, `block ${componentId} is not a component`, at)
  const document = field === "props" ? current.props : (current.state ?? {})
  let value: unknown
  const record = isPlainObject(document) ? document : undefined
  const keys = record === undefined ? undefined : topLevelSetKeys(record, operations)
  if (record !== undefined && keys !== undefined) {
    // The common streaming shape: top-level keys set. It cannot fail, so it is applied in
    // place to this batch's copy of the document, made once for all of the batch's patches.
    const owned = d.owned.has(record) ? record : { ...record }
    d.owned.add(owned)
    for (let i = 0; i < keys.length; i++) {
      owned[keys[i]!] = (operations[i] as { readonly value: unknown }).value
    }
    value = owned
  } else {
    const result = applyPatch(document, operations)
    if (!result.ok) {
      return d.anomaly(event.name, `patch of component ${componentId} refused: ${result.reason}`, at)
    }
    value = result.value
  }
  const block = d.ownBlock(position)
  if (block.type !== "component") return
  block[field] = value as Record<string, unknown>
  block.streamingState = "streaming"
  const status = event.name === "tambo.component.props_delta" ? event.value.streamingStatus : undefined
  if (status !== undefined) {
    // Merged into this batch's own copy, made once for all of the batch's patches.
    let merged = block.streamingStatus
    if (merged === undefined || !d.owned.has(merged)) {
      merged = { ...merged }
      d.owned.add(merged)
      block.streamingStatus = merged
    }
    for (const key in status) setOwn(merged, key, status[key]!)
  }
}

const handleComponentEnd = (d: ThreadDraft, event: Events.ComponentEndEvent, at: number): void => {
  const { componentId } = event.value
  const position = d.findBlock("component", componentId)
  if (position === undefined) return d.anomaly(event.name, `unknown component ${componentId}`, at)
  const block = d.ownBlock(position)
  if (block.type === "component") {
    block.streamingState = "done"
    // The props are final: where the server reported per-prop status, every prop is done,
    // whatever the last delta said (the API marks a prop done only once a later one starts).
    if (block.streamingStatus !== undefined) {
      const status: Record<string, string> = { ...block.streamingStatus }
      if (isPlainObject(block.props)) for (const key in block.props) setOwn(status, key, "done")
      for (const key in status) setOwn(status, key, "done")
      if (!deepEqual(status, block.streamingStatus)) block.streamingStatus = status
    }
  }
  if (d.openComponents.includes(componentId)) {
    d.setOpenComponents(d.openComponents.filter((id) => id !== componentId))
  }
}

const handleAwaitingInput = (d: ThreadDraft, event: Events.RunAwaitingInputEvent): void => {
  d.ownThread().status = "waiting"
  d.ownStreaming().status = "waiting"
  d.setPendingToolCalls(
    event.value.pendingToolCalls.map(({ toolCallId, toolName }) => ({ toolCallId, toolName }))
  )
}

const handleMessageParent = (d: ThreadDraft, event: Events.MessageParentEvent, at: number): void => {
  const { messageId, parentMessageId } = event.value
  const index = claimMessageId(d, messageId, event.name, at)
  if (index >= 0) {
    d.ownMessage(index).parentMessageId = parentMessageId
  } else {
    // Sent before the message's own events: create it so they find it.
    d.appendMessage({ id: d.resolveMessageId(messageId), role: "assistant", content: [], createdAt: isoFromEpochMs(at), parentMessageId })
  }
}

const applyEvent = (d: ThreadDraft, event: Events.TamboEvent, at: number): void => {
  switch (event.type) {
    case "RUN_STARTED":
      return handleRunStarted(d, event, at)
    case "RUN_FINISHED":
      return handleRunFinished(d, event)
    case "RUN_ERROR":
      return handleRunError(d, event)
    case "TEXT_MESSAGE_START":
      return handleTextMessageStart(d, event, at)
    case "TEXT_MESSAGE_CONTENT":
      return handleTextMessageContent(d, event, at)
    case "TEXT_MESSAGE_END":
      return handleTextMessageEnd(d, event, at)
    case "TOOL_CALL_START":
      return handleToolCallStart(d, event, at)
    case "TOOL_CALL_ARGS":
      return handleToolCallArgs(d, event, at)
    case "TOOL_CALL_END":
      return handleToolCallEnd(d, event, at)
    case "TOOL_CALL_RESULT":
      return handleToolCallResult(d, event, at)
    case "THINKING_TEXT_MESSAGE_START":
      return startReasoning(d, undefined, at)
    case "THINKING_TEXT_MESSAGE_CONTENT":
      return appendReasoning(d, undefined, event.delta, at)
    case "THINKING_TEXT_MESSAGE_END":
      return endReasoning(d, undefined, at)
    case "REASONING_MESSAGE_START":
      return startReasoning(d, event.messageId, at)
    case "REASONING_MESSAGE_CONTENT":
      return appendReasoning(d, event.messageId, event.delta, at)
    case "REASONING_MESSAGE_CHUNK":
      return event.delta === undefined ? undefined : appendReasoning(d, event.messageId, event.delta, at)
    case "REASONING_MESSAGE_END":
      return endReasoning(d, event.messageId, at)
    case "CUSTOM": {
      switch (event.name) {
        case "tambo.component.start":
          return handleComponentStart(d, event, at)
        case "tambo.component.props_delta":
          return handleComponentDelta(d, event, "props", at)
        case "tambo.component.state_delta":
          return handleComponentDelta(d, event, "state", at)
        case "tambo.component.end":
          return handleComponentEnd(d, event, at)
        case "tambo.run.awaiting_input":
          return handleAwaitingInput(d, event)
        case "tambo.message.parent":
          return handleMessageParent(d, event, at)
      }
      return
    }
    // Known and deliberately without effect on threads: step markers, shared
    // agent state, snapshots, reasoning brackets and encrypted reasoning.
    case "STEP_STARTED":
    case "STEP_FINISHED":
    case "STATE_SNAPSHOT":
    case "STATE_DELTA":
    case "MESSAGES_SNAPSHOT":
    case "THINKING_START":
    case "THINKING_END":
    case "REASONING_START":
    case "REASONING_END":
    case "REASONING_ENCRYPTED_VALUE":
      return
  }
}

/** Closes what a run left open when it ended without the server saying so. */
const closeOpenBlocks = (d: ThreadDraft): void => {
  for (const componentId of d.openComponents) {
    const position = d.findBlock("component", componentId)
    if (position === undefined) continue
    const block = d.ownBlock(position)
    if (block.type === "component") block.streamingState = "done"
  }
  if (d.openComponents.length > 0) d.setOpenComponents([])
  if (d.toolArgs.size > 0) {
    for (const [toolCallId, args] of d.toolArgs) {
      if (args.raw === "") continue
      const { input } = parseToolArgs(args.raw)
      if (input !== undefined) d.setToolInput(toolCallId, input)
    }
    d.ownToolArgs().clear()
  }
  d.touchedToolCalls.clear()
}

// ---------------------------------------------------------------------------
// Batch
// ---------------------------------------------------------------------------

const stampDone = (message: TamboThreadMessage): TamboThreadMessage => {
  // API messages are complete: their components are done streaming.
  if (!message.content.some((block) => block.type === "component" && block.streamingState !== "done")) return message
  return {
    ...message,
    content: message.content.map((block): Content =>
      block.type === "component" && block.streamingState !== "done" ? { ...block, streamingState: "done" } : block
    )
  }
}

/** A tool result as the API stores it: the blocks as sent, `isError` only when true. */
const toolResultAsStored = (result: ToolResultContent): ToolResultContent => ({
  type: "tool_result",
  toolUseId: result.toolUseId,
  content: result.content.slice(),
  ...(result.isError === true ? { isError: true } : {})
})

const byCreatedAt = (a: TamboThreadMessage, b: TamboThreadMessage): number => {
  // Messages without a timestamp go last; the sort is stable.
  if (a.createdAt === undefined) return b.createdAt === undefined ? 0 : 1
  if (b.createdAt === undefined) return -1
  return a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0
}

class Batch {
  readonly owned = new Set<object>()
  /** Threads touched by this batch; `null` marks a removed thread. */
  readonly drafts = new Map<string, ThreadDraft | null>()
  currentThreadId: string

  constructor(readonly state: ClientState, readonly reuseThreadMap: boolean) {
    this.currentThreadId = state.currentThreadId
  }

  /** Thread results taken as they were computed (see {@link reduceRecorded}); a draft of one wins. */
  readonly adopted = new Map<string, ThreadState>()

  /** The thread as of this batch's start, or as adopted since. */
  committed(threadId: string): ThreadState | undefined {
    return this.adopted.get(threadId) ?? getOwn(this.state.threadMap, threadId)
  }

  lookup(threadId: string): ThreadDraft | ThreadState | undefined {
    const draft = this.drafts.get(threadId)
    if (draft !== undefined) return draft ?? undefined
    return this.committed(threadId)
  }

  existing(threadId: string): ThreadDraft | undefined {
    const draft = this.drafts.get(threadId)
    if (draft === null) return undefined
    if (draft !== undefined) return draft
    const base = this.committed(threadId)
    if (base === undefined) return undefined
    const created = new ThreadDraft(base, this.owned, false)
    this.drafts.set(threadId, created)
    return created
  }

  /** The thread's draft, creating the thread (stamped `at`, or the epoch) if needed. */
  draft(threadId: string, at: number | undefined): ThreadDraft {
    return this.existing(threadId) ?? this.fresh(threadId, at)
  }

  fresh(threadId: string, at: number | undefined): ThreadDraft {
    const created = new ThreadDraft(freshThreadState(threadId, isoFromEpochMs(at ?? 0)), this.owned, true)
    this.drafts.set(threadId, created)
    return created
  }

  /**
   * A thread's result computed ahead: taken as is when the thread is still
   * the one it was computed from, else its actions are applied again.
   */
  adopt(result: ThreadResult): void {
    const threadId = result.threadId
    if (!this.drafts.has(threadId) && this.committed(threadId) === result.base) {
      this.adopted.set(threadId, result.next)
      return
    }
    for (const action of result.actions) this.applySafely(action)
  }

  applySafely(action: Action): void {
    try {
      this.apply(action)
    } catch (error) {
      this.recordFailure(action, error)
    }
  }

  apply(action: Action): void {
    switch (action.type) {
      case "EVENT":
        return void this.applyEvent(action.threadId, action.event, action.at)
      case "EVENTS": {
        let threadId = action.threadId
        const events = action.events
        for (let i = 0; i < events.length; i++) {
          const event = events[i]!
          try {
            const end = event.type === "TEXT_MESSAGE_CONTENT" || event.type === "TOOL_CALL_ARGS"
              ? deltaRunEnd(events, i)
              : i + 1
            if (end - i > 1) {
              threadId = this.applyDeltaRun(threadId, events, i, end, action.at)
              i = end - 1
            } else {
              threadId = this.applyEvent(threadId, event, action.at)
            }
          } catch (error) {
            this.recordFailure({ type: "EVENT", threadId, event, at: action.at }, error)
          }
        }
        return
      }
      case "USER_MESSAGE": {
        const d = this.draft(action.threadId, action.at)
        d.currentAt = action.at
        if (action.threadId === PLACEHOLDER_THREAD_ID) d.setRedirect(undefined)
        if (d.findMessage(action.message.id) >= 0) {
          return d.anomaly(action.type, `message ${action.message.id} already exists`, action.at)
        }
        d.startTurn(d.appendMessage({
          ...action.message,
          content: action.message.content.slice(),
          createdAt: action.message.createdAt ?? isoFromEpochMs(action.at)
        }))
        d.setOptimisticMessageIds([...d.optimisticMessageIds, action.message.id])
        // Upstream streams this message as start/content/end, which leaves no message open.
        if (d.streaming.messageId !== undefined) delete d.ownStreaming().messageId
        // Sent, not yet started: a UI must not look idle while the request is in flight.
        d.ownThread().status = "waiting"
        d.ownStreaming().status = "waiting"
        return
      }
      case "INIT_THREAD": {
        if (this.lookup(action.threadId) !== undefined) return
        const d = this.fresh(action.threadId, action.at)
        if (action.initialThread !== undefined) {
          const thread = d.ownThread()
          Object.assign(thread, action.initialThread, { id: action.threadId })
          d.replaceMessages((action.initialThread.messages ?? []).slice())
        }
        return
      }
      case "SET_CURRENT_THREAD": {
        this.currentThreadId = action.threadId
        return
      }
      case "START_NEW_THREAD": {
        this.fresh(action.threadId, action.at)
        this.currentThreadId = action.threadId
        return
      }
      case "LOAD_THREAD_MESSAGES":
        return this.loadMessages(action)
      case "SET_LAST_COMPLETED_RUN_ID": {
        this.draft(action.threadId, undefined).setLastCompletedRunId(action.runId)
        return
      }
      case "UPDATE_THREAD": {
        const d = this.existing(action.threadId)
        if (d === undefined) return
        d.currentAt = undefined
        const { metadata, name, pendingToolCalls } = action.patch
        if (name !== undefined || metadata !== undefined) {
          const thread = d.ownThread()
          if (name !== undefined) thread.name = name
          if (metadata !== undefined) thread.metadata = metadata
        }
        if (pendingToolCalls !== undefined) d.setPendingToolCalls(pendingToolCalls.slice())
        return
      }
      case "REMOVE_THREAD": {
        if (action.threadId === PLACEHOLDER_THREAD_ID) {
          // There is always a placeholder to start new conversations in.
          this.fresh(PLACEHOLDER_THREAD_ID, undefined)
        } else {
          this.drafts.set(action.threadId, null)
        }
        if (this.currentThreadId === action.threadId) this.currentThreadId = PLACEHOLDER_THREAD_ID
        return
      }
      case "RUN_ENDED_LOCALLY": {
        const d = this.existing(action.threadId)
        if (d === undefined) return
        d.currentAt = action.at
        const thread = d.ownThread()
        thread.status = "idle"
        // A run the server had started ends there too (cancelled or failed): it becomes the
        // last completed run, which the next run's previousRunId must name.
        if (d.streaming.runId !== undefined && d.streaming.status !== "idle") d.setLastCompletedRunId(d.streaming.runId)
        const streaming = d.ownStreaming()
        streaming.status = "idle"
        delete streaming.messageId
        if (action.outcome === "cancelled") {
          thread.lastRunCancelled = true
          delete streaming.error
        } else {
          thread.lastRunCancelled = false
          streaming.error = action.error ?? { message: "The run ended with an error" }
        }
        closeOpenBlocks(d)
        d.setPendingToolCalls(action.pendingToolCalls === undefined ? [] : action.pendingToolCalls.slice())
        d.setEphemeral(undefined)
        return
      }
      case "RECONCILE_THREAD": {
        const d = this.existing(action.threadId)
        // A run streaming on the thread has newer events than the read.
        if (d === undefined || d.streaming.status === "streaming") return
        d.currentAt = undefined
        const merged = mergeThread(d.thread, { ...action.thread, id: action.threadId })
        if (merged !== d.thread) d.replaceThread(merged)
        d.setOptimisticMessageIds(d.optimisticMessageIds.filter((id) => d.findMessage(id) >= 0))
        d.setEphemeral(undefined)
        const pending = mergePendingToolCalls(d.pendingToolCalls, action.pendingToolCallIds, merged.messages)
        if (pending !== d.pendingToolCalls) d.setPendingToolCalls(pending)
        if (action.lastCompletedRunId !== undefined) d.setLastCompletedRunId(action.lastCompletedRunId)
        return
      }
      case "TOOL_RESULTS": {
        if (action.results.length === 0) return
        const d = this.draft(action.threadId, action.at)
        d.currentAt = action.at
        const ids: Array<string> = []
        for (const result of action.results) {
          // The API stores each result as a message of its own and returns it
          // with role "assistant"; the local thread mirrors that. The id is
          // deterministic: a result answers one call, once.
          const id = d.uniqueMessageId(`msg_tool_result_${result.toolUseId}`)
          d.appendMessage({ id, role: "assistant", content: [toolResultAsStored(result)], createdAt: isoFromEpochMs(action.at) })
          d.removePendingToolCall(result.toolUseId)
          ids.push(id)
        }
        d.setOptimisticMessageIds([...d.optimisticMessageIds, ...ids])
        if (d.streaming.messageId !== undefined) delete d.ownStreaming().messageId
        return
      }
    }
  }

  /** Applies one event; returns the thread the run's next events belong to. */
  applyEvent(actionThreadId: string, event: Events.TamboEvent | Events.UnknownEvent, at: number): string {
    // Events this SDK does not know: kept by the decoder, ignored here.
    if (event.type === "UNKNOWN") return actionThreadId
    let threadId = actionThreadId
    if (event.type === "RUN_STARTED") {
      threadId = event.threadId
      this.migratePlaceholder(actionThreadId, threadId, at)
    } else {
      threadId = this.followPlaceholder(threadId)
    }
    const d = this.draft(threadId, at)
    d.currentAt = at
    applyEvent(d, event, at)
    return threadId
  }

  /** The caller may not know the real thread id yet: a placeholder run follows the run's thread. */
  followPlaceholder(threadId: string): string {
    if (threadId !== PLACEHOLDER_THREAD_ID) return threadId
    const placeholder = this.lookup(PLACEHOLDER_THREAD_ID)
    const redirect = placeholder instanceof ThreadDraft ? placeholder.redirectTo : placeholder?.internal.redirectTo
    return redirect ?? threadId
  }

  /** Applies `events[start, end)`, consecutive deltas to one target (see `deltaRunEnd`), as one. */
  applyDeltaRun(
    actionThreadId: string,
    events: ReadonlyArray<Events.TamboEvent | Events.UnknownEvent>,
    start: number,
    end: number,
    at: number
  ): string {
    const threadId = this.followPlaceholder(actionThreadId)
    const d = this.draft(threadId, at)
    d.currentAt = at
    const first = events[start]!
    const delta = joinDeltas(events, start, end)
    if (first.type === "TEXT_MESSAGE_CONTENT") appendText(d, first.messageId, delta, end - start, at)
    else if (first.type === "TOOL_CALL_ARGS") appendToolArgs(d, first.toolCallId, delta, end - start, at)
    return threadId
  }

  /**
   * On RUN_STARTED naming a real thread: the messages shown optimistically in
   * the placeholder move to that thread (when the run came from the
   * placeholder, or the thread is new to this client), and the selection
   * follows them.
   */
  migratePlaceholder(fromThreadId: string, toThreadId: string, at: number): void {
    if (toThreadId === PLACEHOLDER_THREAD_ID) return
    if (fromThreadId !== toThreadId && fromThreadId.startsWith(LOCAL_THREAD_PREFIX)) {
      // A temporary thread: its messages move, and it is gone.
      const temporary = this.lookup(fromThreadId)
      if (temporary === undefined) return
      const target = this.draft(toThreadId, at)
      target.currentAt = at
      target.replaceMessages([...temporary.thread.messages, ...target.messages])
      const optimistic = temporary instanceof ThreadDraft
        ? temporary.optimisticMessageIds
        : temporary.internal.optimisticMessageIds ?? []
      target.setOptimisticMessageIds([...optimistic, ...target.optimisticMessageIds])
      this.drafts.set(fromThreadId, null)
      if (this.currentThreadId === fromThreadId) this.currentThreadId = toThreadId
      return
    }
    const fromPlaceholder = fromThreadId === PLACEHOLDER_THREAD_ID
    const placeholder = this.lookup(PLACEHOLDER_THREAD_ID)
    const placeholderMessages = placeholder === undefined ? [] : placeholder.thread.messages
    const targetIsNew = this.lookup(toThreadId) === undefined
    if (placeholderMessages.length > 0 && (fromPlaceholder || targetIsNew)) {
      const target = this.draft(toThreadId, at)
      target.currentAt = at
      target.replaceMessages([...placeholderMessages, ...target.messages])
      const optimistic = placeholder instanceof ThreadDraft
        ? placeholder.optimisticMessageIds
        : placeholder?.internal.optimisticMessageIds ?? []
      target.setOptimisticMessageIds([...optimistic, ...target.optimisticMessageIds])
      this.fresh(PLACEHOLDER_THREAD_ID, at).setRedirect(toThreadId)
      if (this.currentThreadId === PLACEHOLDER_THREAD_ID) this.currentThreadId = toThreadId
    } else if (fromPlaceholder) {
      this.draft(PLACEHOLDER_THREAD_ID, at).setRedirect(toThreadId)
    }
  }

  loadMessages(action: Extract<Action, { readonly type: "LOAD_THREAD_MESSAGES" }>): void {
    const d = this.existing(action.threadId)
    if (d !== undefined && action.skipIfStreaming === true && d.streaming.status === "streaming") return
    const target = d ?? this.fresh(action.threadId, undefined)
    target.currentAt = undefined
    const incoming: Array<TamboThreadMessage> = []
    for (const message of action.messages) {
      if (target.findMessage(message.id) < 0) incoming.push(stampDone(message))
    }
    if (incoming.length === 0) return
    // A message shown optimistically comes back under the server's id: the
    // server's copy (same role, same content) replaces the local one.
    const replaced = new Set<string>()
    let optimistic = target.optimisticMessageIds.filter((id) => target.findMessage(id) >= 0)
    for (let i = 0; i < incoming.length; i++) {
      if (optimistic.length === 0) break
      const message = incoming[i]!
      const match = optimistic.find((id) => {
        const local = target.messages[target.findMessage(id)]!
        return local.role === message.role && deepEqual(local.content, message.content)
      })
      if (match === undefined) continue
      replaced.add(match)
      optimistic = optimistic.filter((id) => id !== match)
      // Shown under its local id until now: that stays its key (see TamboThreadMessage.key).
      incoming[i] = { ...message, key: target.messages[target.findMessage(match)]!.key ?? match }
    }
    target.setOptimisticMessageIds(optimistic)
    const kept = replaced.size === 0 ? target.messages : target.messages.filter((message) => !replaced.has(message.id))
    target.replaceMessages([...kept, ...incoming].sort(byCreatedAt))
  }

  /** Last resort: whatever went wrong, the batch goes on and the thread says why. */
  recordFailure(action: Action, error: unknown): void {
    try {
      const at = "at" in action && typeof action.at === "number" ? action.at : 0
      const eventType = action.type === "EVENT" ? String(action.event.type) : String(action.type)
      const reason = `skipped after an internal error: ${error instanceof Error ? error.message : String(error)}`
      this.existing(action.threadId)?.anomaly(eventType, reason, at)
    } catch {
      // Not even the thread could be read: the action is dropped.
    }
  }

  finish(): ClientState {
    let threadMap: Record<string, ThreadState> | undefined
    const base = this.state.threadMap
    // The map changes in place when its owner says nobody else holds it; it is copied otherwise.
    const writable = (): Record<string, ThreadState> =>
      threadMap ??= this.reuseThreadMap ? base as Record<string, ThreadState> : copyRecord(base)
    const put = (threadId: string, next: ThreadState) => {
      if (next === getOwn(base, threadId)) return
      setOwn(writable(), threadId, next)
    }
    for (const [threadId, next] of this.adopted) {
      if (!this.drafts.has(threadId)) put(threadId, next)
    }
    for (const [threadId, draft] of this.drafts) {
      if (draft === null) {
        if (Object.hasOwn(base, threadId)) delete writable()[threadId]
        continue
      }
      let next: ThreadState
      try {
        next = draft.finish()
      } catch {
        // Last resort: a thread that cannot be finished keeps its previous state.
        next = draft.base
      }
      put(threadId, next)
    }
    if (threadMap === undefined && this.currentThreadId === this.state.currentThreadId) return this.state
    return { threadMap: threadMap ?? base, currentThreadId: this.currentThreadId }
  }
}

/**
 * Folds actions into the state, as one batch.
 *
 * Pure and total: returns the same state object when nothing changed, keeps
 * the identity of every thread and message the batch did not touch, and
 * never throws (what cannot be applied is recorded in the thread's
 * `anomalies`).
 *
 * @since 0.1.0
 * @category Reducers
 */
export const reduce = (state: ClientState, actions: ReadonlyArray<Action>): ClientState =>
  reduceRecorded(state, actions)

/**
 * Options of {@link reduceRecorded}.
 *
 * @since 0.1.0
 * @category Reducers
 */
export interface ReduceOptions {
  /**
   * The caller owns `state.threadMap` and nobody else holds it (nor any state
   * that refers to it): a batch that changes threads updates it in place
   * rather than copying it, so its cost follows the threads it touches, not
   * how many there are. Still returns a new state object when anything
   * changed. A store that has not handed its state out since its last write
   * may say so; anyone else must not.
   */
  readonly reuseThreadMap?: boolean | undefined
}

/**
 * One thread's result computed ahead: `actions` reduced over a state holding
 * `base` as that thread gave `next`, and touched no other thread.
 *
 * @since 0.1.0
 * @category Reducers
 */
export interface ThreadResult {
  readonly type: "THREAD_RESULT"
  readonly threadId: string
  readonly base: ThreadState
  readonly next: ThreadState
  readonly actions: ReadonlyArray<Action>
}

/**
 * Like {@link reduce}, with thread results computed ahead among the actions:
 * a result is taken as is when its thread is still `base` at its turn, and
 * its actions are applied again otherwise (another writer changed the thread
 * in between), so nothing is lost either way. The batch copies the thread map
 * once, however many results and actions it holds (or not at all, see
 * {@link ReduceOptions}): a store that computes each chunk's result against
 * its thread alone writes them all this way.
 *
 * @since 0.1.0
 * @category Reducers
 */
export const reduceRecorded = (
  state: ClientState,
  entries: ReadonlyArray<Action | ThreadResult>,
  options?: ReduceOptions
): ClientState => {
  if (entries.length === 0) return state
  const batch = new Batch(state, options?.reuseThreadMap === true)
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!
    if (entry.type === "THREAD_RESULT") batch.adopt(entry)
    else batch.applySafely(entry)
  }
  return batch.finish()
}
