/**
 * The client's view of its threads, and the pure accumulator that folds run
 * events and local actions into it.
 *
 * `reduce(state, actions)` is pure and total: no clock, no randomness, no
 * exceptions. Time comes from each action's `at` (the caller reads Effect's
 * `Clock`); an event that references something unknown is recorded in the
 * thread's `anomalies` and skipped. Each event costs what it touches: content
 * blocks are found through an index, never by scanning messages, and
 * streamed tool arguments are parsed in linear time overall.
 *
 * @since 0.1.0
 */
import type * as Events from "./Events.js"
import * as internalBatch from "./internal/state/batch.js"
import * as internal from "./internal/state/common.js"
import type * as Tool from "./Tool.js"
import type { StreamingState, TamboThread, TamboThreadMessage, ToolResultContent } from "./Types.js"

/**
 * The id of the thread a new conversation lives in until its first run
 * starts and the server names it.
 *
 * @since 0.1.0
 * @category Constants
 */
export const PLACEHOLDER_THREAD_ID: "placeholder" = internal.PLACEHOLDER_THREAD_ID

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
export const LOCAL_THREAD_PREFIX: "local:" = internal.LOCAL_THREAD_PREFIX

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
 * A tool call the server waits on for its result, as the thread records it
 * (`ThreadState.pendingToolCalls`). Not the streamed `Events.PendingToolCall`
 * (which carries the call's arguments): this one may carry the result the
 * client's tools already gave.
 *
 * @since 0.2.0
 * @category Models
 */
export interface AwaitedToolCall {
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
 * Something the accumulator skipped, or took only as far as it could: an
 * event referencing an unknown message, tool call or component, a patch
 * that failed, a result for a call nobody started (kept), a run's end naming
 * another run than the one streaming, the end of a tool call or component
 * that already ended, a user's message opened under the id of a message of
 * another role (opened under an id of its own instead), text for a message
 * whose text already ended (kept, as the API stores it), and the like.
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
export const MAX_ANOMALIES: number = internal.MAX_ANOMALIES

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
  readonly pendingToolCalls: ReadonlyArray<AwaitedToolCall>
  /** The last {@link MAX_ANOMALIES} things the accumulator skipped. */
  readonly anomalies: ReadonlyArray<Anomaly>
  /** The reducer's bookkeeping (indexes, streaming arguments): opaque, rebuilt whenever it does not match the messages. */
  readonly internal: internal.ThreadInternal
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
    /**
     * The tools the run declared. A call of one of them shows its input as
     * the API will store it: read back through the tool's input schema, the
     * `null`s of the API's strict mode undone (as the tool's own arguments
     * are, see `Tool.ResolvedTool.decodeArgs`).
     *
     * @since 0.2.0
     */
    readonly tools?: ReadonlyArray<Tool.ApiTool> | undefined
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
      readonly pendingToolCalls?: ReadonlyArray<AwaitedToolCall>
      /**
       * When the server last changed the thread, as it answered a change: taken only if later
       * than what the thread holds (an answer that comes after a newer copy does not take it back).
       */
      readonly updatedAt?: string
    }
  }
  | { readonly type: "REMOVE_THREAD"; readonly threadId: string }
  /**
   * The client aborted the run, or the transport failed. `"ended"`: the client stopped reading the
   * run after the server had ended it (its cancellation found no run to cancel): the thread is
   * neither cancelled nor failed.
   */
  | {
    readonly type: "RUN_ENDED_LOCALLY"
    readonly threadId: string
    readonly outcome: "cancelled" | "error" | "ended"
    readonly error?: StreamingState["error"]
    /**
     * The tool calls the server still waits on once the run ended here (a run
     * that ended between a pause and a continuation the server accepted);
     * absent: none.
     */
    readonly pendingToolCalls?: ReadonlyArray<AwaitedToolCall>
    readonly at: number
  }
  /**
   * The server's copy of a thread, read once a run ended: merged into the
   * thread (the server's messages, ids and fields; what only the client saw
   * stays, and a message whose local id is replaced keeps it as its `key`).
   * Its run status shows unless a run of this client is on the thread (the
   * thread's `streaming` is not idle): another client's run, and the last
   * component of the message it writes, still `streaming`. Ignored while a
   * run streams on the thread.
   */
  | {
    readonly type: "RECONCILE_THREAD"
    readonly threadId: string
    readonly thread: TamboThread
    readonly pendingToolCallIds: ReadonlyArray<string>
    readonly lastCompletedRunId?: string
  }
  /**
   * The app's AG-UI agent state for a thread, replacing what it had (see
   * `TamboThread.state`). Nothing happens for a thread the client does not
   * know.
   *
   * @since 0.2.0
   */
  | { readonly type: "SET_AGENT_STATE"; readonly threadId: string; readonly state: unknown }
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

/**
 * Epoch milliseconds as the ISO 8601 string the state stores
 * (`Date#toISOString`; total: what `Date` cannot represent maps to the epoch).
 *
 * @since 0.1.0
 * @category Utils
 */
export const toIsoString: (epochMs: number) => string = internal.toIsoString

/**
 * An empty, idle thread created at `at`.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeThreadState: (threadId: string, at: number) => ThreadState = internal.freshThreadState

/**
 * The state a client starts with: an empty placeholder thread, current,
 * stamped with the epoch so that it is the same value every time.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const initial: ClientState = {
  threadMap: { [PLACEHOLDER_THREAD_ID]: internal.freshThreadState(PLACEHOLDER_THREAD_ID, 0) },
  currentThreadId: PLACEHOLDER_THREAD_ID
}

/**
 * @since 0.1.0
 * @category Getters
 */
export const getThreadState = (state: ClientState, threadId: string): ThreadState | undefined =>
  internal.getOwn(state.threadMap, threadId)

/**
 * @since 0.1.0
 * @category Getters
 */
export const getThread = (state: ClientState, threadId: string): TamboThread | undefined =>
  internal.getOwn(state.threadMap, threadId)?.thread

/**
 * The thread's messages; empty when the thread is unknown.
 *
 * @since 0.1.0
 * @category Getters
 */
export const getMessages = (state: ClientState, threadId: string): ReadonlyArray<TamboThreadMessage> =>
  internal.getOwn(state.threadMap, threadId)?.thread.messages ?? []

/**
 * @since 0.1.0
 * @category Getters
 */
export const getCurrentThreadState = (state: ClientState): ThreadState | undefined =>
  internal.getOwn(state.threadMap, state.currentThreadId)

/**
 * @since 0.1.0
 * @category Getters
 */
export const getCurrentThread = (state: ClientState): TamboThread | undefined =>
  internal.getOwn(state.threadMap, state.currentThreadId)?.thread

/**
 * Folds actions into the state, as one batch.
 *
 * Pure and total: returns the same state object when nothing changed, keeps
 * the identity of every thread and message the batch did not touch, and
 * never throws (what cannot be applied is recorded in the thread's
 * `anomalies`). A batch copies the thread map at most once, and each touched
 * message and block at most once. A run's events after its end (RUN_FINISHED,
 * RUN_ERROR, a local ending) and before the next RUN_STARTED are kept, and what
 * they open closes at once: a thread whose run ended shows nothing streaming.
 *
 * @since 0.1.0
 * @category Reducers
 */
export const reduce: (state: ClientState, actions: ReadonlyArray<Action>) => ClientState = internalBatch.reduce
