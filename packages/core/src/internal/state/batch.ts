/**
 * One `reduce` call: the drafts of the threads its actions touch, how each
 * kind of action changes them, and the state they make at the end.
 *
 * Within a call, a touched thread's messages array, each touched message and
 * each touched content block are copied at most once, then changed in place;
 * untouched threads and messages keep their identity.
 *
 * @internal
 */
import type { Action, ClientState, ThreadState } from "../../ClientState.js"
import type * as Events from "../../Events.js"
import type * as Tool from "../../Tool.js"
import type { Content, TamboThread, TamboThreadMessage, ToolResultContent } from "../../Types.js"
import { deepEqual } from "../jsonPatch.js"
import { mergePendingToolCalls, mergeThread } from "../reconcile.js"
import { copyRecord, freshThreadState, getOwn, LOCAL_THREAD_PREFIX, PLACEHOLDER_THREAD_ID, setOwn, toIsoString } from "./common.js"
import { ThreadDraft } from "./draft.js"
import { appendText, appendToolArgs, applyEvent, closeOpenBlocks, deltaRunEnd, joinDeltas } from "./events.js"

type ActionOf<T extends Action["type"]> = Extract<Action, { readonly type: T }>

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

/** The state the app set on a conversation not yet started goes with its messages to the thread its run starts. */
const carryAgentState = (from: TamboThread, to: ThreadDraft): void => {
  if (from.state !== undefined) to.ownThread().state = from.state
}

/** The id of the message holding a call's latest `tool_use` block. */
const messageOfCall = (d: ThreadDraft, toolCallId: string): string | undefined => {
  const position = d.findBlock("tool_use", toolCallId)
  return position === undefined ? undefined : d.messages[position.message]?.id
}

class Batch {
  readonly owned = new Set<object>()
  /** Threads touched by this batch; `null` marks a removed thread. */
  readonly drafts = new Map<string, ThreadDraft | null>()
  currentThreadId: string

  constructor(readonly state: ClientState) {
    this.currentThreadId = state.currentThreadId
  }

  lookup(threadId: string): ThreadDraft | ThreadState | undefined {
    const draft = this.drafts.get(threadId)
    if (draft !== undefined) return draft ?? undefined
    return getOwn(this.state.threadMap, threadId)
  }

  existing(threadId: string): ThreadDraft | undefined {
    const draft = this.drafts.get(threadId)
    if (draft === null) return undefined
    if (draft !== undefined) return draft
    const base = getOwn(this.state.threadMap, threadId)
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
    const created = new ThreadDraft(freshThreadState(threadId, at ?? 0), this.owned, true)
    this.drafts.set(threadId, created)
    return created
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
      case "EVENTS":
        return this.applyEvents(action)
      case "USER_MESSAGE":
        return this.userMessage(action)
      case "INIT_THREAD":
        return this.initThread(action)
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
      case "UPDATE_THREAD":
        return this.updateThread(action)
      case "REMOVE_THREAD":
        return this.removeThread(action)
      case "RUN_ENDED_LOCALLY":
        return this.runEndedLocally(action)
      case "RECONCILE_THREAD":
        return this.reconcileThread(action)
      case "TOOL_RESULTS":
        return this.toolResults(action)
      case "SET_AGENT_STATE": {
        const d = this.existing(action.threadId)
        if (d === undefined) return
        d.currentAt = undefined
        d.ownThread().state = action.state
        return
      }
    }
  }

  /** A chunk of a run's events; consecutive deltas to one target apply as one (see `deltaRunEnd`). */
  applyEvents(action: ActionOf<"EVENTS">): void {
    let threadId = action.threadId
    const events = action.events
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!
      try {
        const end = event.type === "TEXT_MESSAGE_CONTENT" || event.type === "TOOL_CALL_ARGS"
          ? deltaRunEnd(events, i)
          : i + 1
        if (end - i > 1) {
          threadId = this.applyDeltaRun(threadId, events, i, end, action.at, action.tools)
          i = end - 1
        } else {
          threadId = this.applyEvent(threadId, event, action.at, action.tools)
        }
      } catch (error) {
        this.recordFailure({ type: "EVENT", threadId, event, at: action.at }, error)
      }
    }
  }

  userMessage(action: ActionOf<"USER_MESSAGE">): void {
    const d = this.draft(action.threadId, action.at)
    d.currentAt = action.at
    if (action.threadId === PLACEHOLDER_THREAD_ID) d.setRedirect(undefined)
    if (d.findMessage(action.message.id) >= 0) {
      return d.anomaly(action.type, `message ${action.message.id} already exists`, action.at)
    }
    d.startTurn(d.appendMessage({
      ...action.message,
      content: action.message.content.slice(),
      createdAt: action.message.createdAt ?? toIsoString(action.at)
    }))
    d.setOptimisticMessageIds([...d.optimisticMessageIds, action.message.id])
    // Upstream streams this message as start/content/end, which leaves no message open.
    if (d.streaming.messageId !== undefined) delete d.ownStreaming().messageId
    // Sent, not yet started: a UI must not look idle while the request is in flight.
    d.ownThread().status = "waiting"
    d.ownStreaming().status = "waiting"
  }

  initThread(action: ActionOf<"INIT_THREAD">): void {
    if (this.lookup(action.threadId) !== undefined) return
    const d = this.fresh(action.threadId, action.at)
    if (action.initialThread !== undefined) {
      const thread = d.ownThread()
      Object.assign(thread, action.initialThread, { id: action.threadId })
      d.replaceMessages((action.initialThread.messages ?? []).slice())
    }
  }

  updateThread(action: ActionOf<"UPDATE_THREAD">): void {
    const d = this.existing(action.threadId)
    if (d === undefined) return
    d.currentAt = undefined
    const { metadata, name, pendingToolCalls, updatedAt } = action.patch
    const later = updatedAt !== undefined && !(Date.parse(d.thread.updatedAt) >= Date.parse(updatedAt))
    if (name !== undefined || metadata !== undefined || later) {
      const thread = d.ownThread()
      if (name !== undefined) thread.name = name
      if (metadata !== undefined) thread.metadata = metadata
      if (later) thread.updatedAt = updatedAt
    }
    if (pendingToolCalls !== undefined) d.setPendingToolCalls(pendingToolCalls.slice())
  }

  removeThread(action: ActionOf<"REMOVE_THREAD">): void {
    if (action.threadId === PLACEHOLDER_THREAD_ID) {
      // There is always a placeholder to start new conversations in.
      this.fresh(PLACEHOLDER_THREAD_ID, undefined)
    } else {
      this.drafts.set(action.threadId, null)
    }
    if (this.currentThreadId === action.threadId) this.currentThreadId = PLACEHOLDER_THREAD_ID
  }

  runEndedLocally(action: ActionOf<"RUN_ENDED_LOCALLY">): void {
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
    if (action.outcome !== "error") {
      thread.lastRunCancelled = action.outcome === "cancelled"
      delete streaming.error
    } else {
      thread.lastRunCancelled = false
      streaming.error = action.error ?? { message: "The run ended with an error" }
    }
    closeOpenBlocks(d, action.at)
    d.setPendingToolCalls(action.pendingToolCalls === undefined ? [] : action.pendingToolCalls.slice())
    d.keepInvalidToolArgsOfPending()
    d.setEphemeral(undefined)
  }

  reconcileThread(action: ActionOf<"RECONCILE_THREAD">): void {
    const d = this.existing(action.threadId)
    // A run streaming on the thread has newer events than the read.
    if (d === undefined || d.streaming.status === "streaming") return
    d.currentAt = undefined
    // The message of each call whose arguments were invalid, as the store had it.
    const invalidIn = new Map<string, string | undefined>()
    for (const toolCallId of d.invalidToolArgs.keys()) invalidIn.set(toolCallId, messageOfCall(d, toolCallId))
    // A run of this client on the thread keeps its own status; otherwise the server's shows (another
    // client's run).
    // The messages the store held before this read are from before the run the server shows when
    // the store showed no run, or when the run it showed completed since.
    const held = d.base
    const heldBeforeRun = held.thread.status === "idle" ||
      (action.lastCompletedRunId !== undefined && action.lastCompletedRunId !== held.lastCompletedRunId)
    const merged = mergeThread(
      d.thread,
      { ...action.thread, id: action.threadId },
      d.streaming.status !== "idle",
      heldBeforeRun ? held.thread.messages : []
    )
    if (merged !== d.thread) d.replaceThread(merged)
    d.setOptimisticMessageIds(d.optimisticMessageIds.filter((id) => d.findMessage(id) >= 0))
    d.setEphemeral(undefined)
    const pending = mergePendingToolCalls(d.pendingToolCalls, action.pendingToolCallIds, merged.messages)
    if (pending !== d.pendingToolCalls) d.setPendingToolCalls(pending)
    // Invalid arguments stay only for a call the server still waits on, where it was: a call the
    // server's copy answered, or one it asked again under the same id, is not that call.
    d.retainInvalidToolArgs((toolCallId) => {
      const message = invalidIn.get(toolCallId)
      return message !== undefined && message === messageOfCall(d, toolCallId) &&
        pending.some((call) => call.toolCallId === toolCallId)
    })
    if (action.lastCompletedRunId !== undefined) d.setLastCompletedRunId(action.lastCompletedRunId)
  }

  toolResults(action: ActionOf<"TOOL_RESULTS">): void {
    if (action.results.length === 0) return
    const d = this.draft(action.threadId, action.at)
    d.currentAt = action.at
    const ids: Array<string> = []
    for (const result of action.results) {
      // The API stores each result as a message of its own and returns it
      // with role "assistant"; the local thread mirrors that. The id is
      // deterministic: a result answers one call, once.
      const id = d.uniqueMessageId(`msg_tool_result_${result.toolUseId}`)
      d.appendMessage({ id, role: "assistant", content: [toolResultAsStored(result)], createdAt: toIsoString(action.at) })
      d.removePendingToolCall(result.toolUseId)
      d.setInvalidToolArgs(result.toolUseId, undefined)
      ids.push(id)
    }
    d.setOptimisticMessageIds([...d.optimisticMessageIds, ...ids])
    if (d.streaming.messageId !== undefined) delete d.ownStreaming().messageId
  }

  /** Applies one event; returns the thread the run's next events belong to. */
  applyEvent(
    actionThreadId: string,
    event: Events.TamboEvent | Events.UnknownEvent,
    at: number,
    tools?: ReadonlyArray<Tool.ApiTool>
  ): string {
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
    if (tools !== undefined) d.tools = tools
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
    at: number,
    tools: ReadonlyArray<Tool.ApiTool> | undefined
  ): string {
    const threadId = this.followPlaceholder(actionThreadId)
    const d = this.draft(threadId, at)
    d.currentAt = at
    if (tools !== undefined) d.tools = tools
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
      carryAgentState(temporary.thread, target)
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
      if (placeholder !== undefined) carryAgentState(placeholder.thread, target)
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
    // Copied once, by the first change.
    const writable = (): Record<string, ThreadState> => threadMap ??= copyRecord(base)
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
      if (next !== getOwn(base, threadId)) setOwn(writable(), threadId, next)
    }
    if (threadMap === undefined && this.currentThreadId === this.state.currentThreadId) return this.state
    return { threadMap: threadMap ?? base, currentThreadId: this.currentThreadId }
  }
}

/** See `ClientState.reduce`. */
export const reduce = (state: ClientState, actions: ReadonlyArray<Action>): ClientState => {
  if (actions.length === 0) return state
  const batch = new Batch(state)
  for (let i = 0; i < actions.length; i++) batch.applySafely(actions[i]!)
  return batch.finish()
}

/**
 * The placeholder's conversation copied to a thread of its own, `threadId` (a local one): what a
 * new thread's run that has not started recorded there (the user's message, the thread's status,
 * the app's state) is that thread's, and RUN_STARTED moves it from there to the server's thread
 * (see `migratePlaceholder`). The placeholder stays as it is: the caller starts a new
 * conversation in it.
 */
export const copyPlaceholder = (state: ClientState, threadId: string): ClientState => {
  const placeholder = getOwn(state.threadMap, PLACEHOLDER_THREAD_ID)
  if (placeholder === undefined) return state
  // Where the placeholder's own run went once it started: the copy is no placeholder.
  const { redirectTo: _, ...internal } = placeholder.internal
  const threadMap = copyRecord(state.threadMap)
  setOwn(threadMap, threadId, { ...placeholder, thread: { ...placeholder.thread, id: threadId }, internal })
  return { threadMap, currentThreadId: state.currentThreadId }
}
