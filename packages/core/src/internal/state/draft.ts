/**
 * A thread being changed by one `reduce` call: copy-on-write access to its
 * messages, blocks and bookkeeping, and the indexes that find a message or a
 * block without scanning.
 *
 * @internal
 */
import type { Anomaly, AwaitedToolCall, ThreadState } from "../../ClientState.js"
import type * as Tool from "../../Tool.js"
import type { Content, StreamingState, TamboThread, TamboThreadMessage } from "../../Types.js"
import { undoStrictMode } from "../jsonSchema.js"
import { parsePartialJson } from "../partialJson.js"
import {
  type BlockPosition,
  emptyIndex,
  idleStreaming,
  isPlainObject,
  MAX_ANOMALIES,
  type ThreadInternal,
  toIsoString,
  type ToolArgs
} from "./common.js"

const noMessages: ReadonlySet<string> = new Set()

const toolKey = (toolCallId: string): string => `t${toolCallId}`
const componentKey = (componentId: string): string => `c${componentId}`

// Optimistic message ids kept at most: ids the server never returned should not pile up.
const MAX_OPTIMISTIC = 50

// Partial tool arguments are reparsed at the end of a batch while short, or
// once they grew by a quarter: a geometric schedule, so the total parsing
// work stays linear in the arguments' length however the events are batched.
const REPARSE_ALWAYS_BELOW = 8 * 1024
const REPARSE_GROWTH = 1.25

/**
 * A thread being changed by one batch. Everything it holds is either the
 * batch's input (shared, never mutated) or a copy it made (tracked in
 * `owned`, mutated freely until the batch ends).
 */
export class ThreadDraft {
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
  invalidToolArgs: ReadonlyMap<string, string>
  ephemeralMessageId: string | undefined
  openReasoning: string | undefined
  redirectTo: string | undefined
  optimisticMessageIds: ReadonlyArray<string>
  turnStart: number | undefined
  messageAliases: ReadonlyMap<string, string>
  endedMessages: ReadonlySet<string>
  lastCompletedRunId: string | undefined
  pendingToolCalls: ReadonlyArray<AwaitedToolCall>
  anomalies: ReadonlyArray<Anomaly>
  private anomaliesCopy: Array<Anomaly> | undefined
  /** Tool calls whose arguments grew in this batch, and when they last did. */
  readonly touchedToolCalls = new Map<string, number>()
  /**
   * The tools of the run writing this thread (the last `EVENTS` action of the batch that named
   * them): a call's input is read back through its schema, also when this batch's partial
   * arguments are parsed at its end.
   */
  tools: ReadonlyArray<Tool.ApiTool> | undefined = undefined
  /** The `at` of the action being applied (undefined for actions without one). */
  currentAt: number | undefined = undefined
  /** The `at` of the last change to the thread itself: becomes `updatedAt`. */
  private lastAt: number | undefined = undefined
  private lastComponentId: string | undefined = undefined
  private lastComponentKey: string | undefined = undefined

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
    this.invalidToolArgs = internal.invalidToolArgs instanceof Map ? internal.invalidToolArgs : emptyIndex
    this.ephemeralMessageId = internal.ephemeralMessageId
    this.openReasoning = typeof internal.openReasoning === "string" ? internal.openReasoning : undefined
    this.redirectTo = internal.redirectTo
    this.optimisticMessageIds = Array.isArray(internal.optimisticMessageIds) ? internal.optimisticMessageIds : []
    this.turnStart = typeof internal.turnStart === "number" ? internal.turnStart : undefined
    this.messageAliases = internal.messageAliases instanceof Map ? internal.messageAliases : emptyIndex
    this.endedMessages = internal.endedMessages instanceof Set ? internal.endedMessages : noMessages
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

  setPendingToolCalls(calls: ReadonlyArray<AwaitedToolCall>): void {
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

  /** Records (a string) or forgets (undefined) that a call's arguments ended as invalid JSON. */
  setInvalidToolArgs(toolCallId: string, raw: string | undefined): void {
    if (raw === undefined && !this.invalidToolArgs.has(toolCallId)) return
    this.changed = true
    const next = new Map(this.invalidToolArgs)
    if (raw === undefined) next.delete(toolCallId)
    else next.set(toolCallId, raw)
    this.invalidToolArgs = next
  }

  /** Forgets the invalid arguments of the calls `keep` does not keep. */
  retainInvalidToolArgs(keep: (toolCallId: string) => boolean): void {
    if (this.invalidToolArgs.size === 0) return
    let next: Map<string, string> | undefined
    for (const toolCallId of this.invalidToolArgs.keys()) {
      if (keep(toolCallId)) continue
      next ??= new Map(this.invalidToolArgs)
      next.delete(toolCallId)
    }
    if (next === undefined) return
    this.changed = true
    this.invalidToolArgs = next.size === 0 ? emptyIndex : next
  }

  /**
   * At a run's end: the invalid arguments of the calls nobody will answer go (a server-side call,
   * a call the run ended without); those of the calls still pending stay, which the caller answers.
   */
  keepInvalidToolArgsOfPending(): void {
    if (this.invalidToolArgs.size === 0) return
    const pending = this.pendingToolCalls
    this.retainInvalidToolArgs((toolCallId) => pending.some((call) => call.toolCallId === toolCallId))
  }

  clearInvalidToolArgs(): void {
    if (this.invalidToolArgs.size === 0) return
    this.changed = true
    this.invalidToolArgs = emptyIndex
  }

  setEphemeral(id: string | undefined): void {
    if (this.ephemeralMessageId === id) return
    this.changed = true
    this.ephemeralMessageId = id
  }

  setOpenReasoning(messageId: string | undefined): void {
    if (this.openReasoning === messageId) return
    this.changed = true
    this.openReasoning = messageId
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
    if (this.openReasoning === message.id) this.openReasoning = id
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

  /** The id this turn's events under `id` are held under (see `claimMessageId` in events.ts). */
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
    this.endedMessages = noMessages
  }

  /** New messages from the server: positions and ids are its own again. */
  private forgetTurn(): void {
    this.turnStart = undefined
    this.messageAliases = emptyIndex
    this.endedMessages = noMessages
  }

  /** Whether the text of this turn's message `id` ended (and did not start again). */
  hasEnded(id: string): boolean {
    return this.endedMessages.has(id)
  }

  /** Marks the text of this turn's message `id` ended, or open again. */
  setEnded(id: string, ended: boolean): void {
    if (this.endedMessages.has(id) === ended) return
    this.changed = true
    const next = new Set(this.endedMessages)
    if (ended) next.add(id)
    else next.delete(id)
    this.endedMessages = next
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
    if (block.type === "tool_use") block.input = this.readBack(block.name, input)
  }

  /** A call's input as the API stores it: the strict mode's `null`s undone by its tool's schema. */
  private readBack(toolName: string, input: Record<string, unknown>): Record<string, unknown> {
    const tool = this.tools?.find((candidate) => candidate.name === toolName)
    if (tool === undefined) return input
    const read = undoStrictMode(tool.inputSchema, input)
    return isPlainObject(read) ? read : input
  }

  /**
   * Runs the scheduled partial parses of this batch. Each is a change made when its arguments
   * last grew, and the thread's last change stays the latest: a batch of several chunks leaves
   * the thread as those chunks one batch each would.
   */
  flushToolArgs(): void {
    if (this.touchedToolCalls.size === 0) return
    const lastAt = this.lastAt
    const currentAt = this.currentAt
    for (const [toolCallId, grewAt] of this.touchedToolCalls) {
      const args = this.toolArgs.get(toolCallId)
      if (args === undefined) continue
      const length = args.raw.length
      if (length >= REPARSE_ALWAYS_BELOW && length < args.parsedLength * REPARSE_GROWTH) continue
      this.ownToolArgs().set(toolCallId, { raw: args.raw, parsedLength: length })
      const parsed = parsePartialJson(args.raw)
      this.currentAt = grewAt
      if (isPlainObject(parsed)) this.setToolInput(toolCallId, parsed)
    }
    this.currentAt = currentAt
    if (lastAt !== undefined && (this.lastAt === undefined || this.lastAt < lastAt)) this.lastAt = lastAt
    this.touchedToolCalls.clear()
  }

  // -- result --------------------------------------------------------------

  finish(): ThreadState {
    this.flushToolArgs()
    if (!this.changed) return this.base
    const lastAt = this.lastAt
    if (lastAt !== undefined) {
      this.currentAt = lastAt
      this.ownThread().updatedAt = toIsoString(lastAt)
    }
    const internal: ThreadInternal = {
      messageIndex: this.messageIndex,
      blockIndex: this.blockIndex,
      indexedCount: this.thread.messages.length,
      toolArgs: this.toolArgs,
      openComponents: this.openComponents,
      ...(this.invalidToolArgs.size === 0 ? {} : { invalidToolArgs: this.invalidToolArgs }),
      ...(this.ephemeralMessageId === undefined ? {} : { ephemeralMessageId: this.ephemeralMessageId }),
      ...(this.openReasoning === undefined ? {} : { openReasoning: this.openReasoning }),
      ...(this.redirectTo === undefined ? {} : { redirectTo: this.redirectTo }),
      ...(this.optimisticMessageIds.length === 0 ? {} : { optimisticMessageIds: this.optimisticMessageIds }),
      ...(this.turnStart === undefined ? {} : { turnStart: this.turnStart }),
      ...(this.messageAliases.size === 0 ? {} : { messageAliases: this.messageAliases }),
      ...(this.endedMessages.size === 0 ? {} : { endedMessages: this.endedMessages })
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
