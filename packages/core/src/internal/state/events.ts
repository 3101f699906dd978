/**
 * How each run event changes a thread: one handler per event type, applied to
 * the thread's draft.
 *
 * @internal
 */
import * as Either from "effect/Either"
import type * as Events from "../../Events.js"
import type {
  Content,
  ResourceContent,
  TamboComponentContent,
  TamboThreadMessage,
  TextContent,
  ToolResultContent
} from "../../Types.js"
import { applyStateEvent, messagesOf } from "../agui/agentState.js"
import { fromAgUiMessages, lastOfEachId } from "../agui/messages.js"
import { applyPatch, deepEqual, parsePointer } from "../jsonPatch.js"
import { parsePartialJson } from "../partialJson.js"
import { isBlankArgs } from "../toolSupport.js"
import { isPlainObject, setOwn, toIsoString } from "./common.js"
import type { ThreadDraft } from "./draft.js"

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
type EventOf<T extends Events.TamboEvent["type"]> = Extract<Events.TamboEvent, { readonly type: T }>

const handleRunStarted = (d: ThreadDraft, event: EventOf<"RUN_STARTED">, at: number): void => {
  // Reasoning the last run left open lasted until this run started.
  closeReasoning(d, at)
  const thread = d.ownThread()
  thread.status = "streaming"
  thread.lastRunCancelled = false
  if (thread.lastRunError !== undefined) delete thread.lastRunError
  d.replaceStreaming({ status: "streaming", runId: event.runId, startTime: at })
  d.setPendingToolCalls([])
  d.setEphemeral(undefined)
  // A call the last run left open keeps what all its arguments parse to, however they were batched.
  // A call's arguments that are not a JSON object stay recorded until it is answered or started
  // again: an agent that starts its run again before RUN_FINISHED still pauses for it.
  for (const toolCallId of Array.from(d.toolArgs.keys())) closeToolArgs(d, toolCallId)
}

const isCancelledOutcome = (outcome: unknown): boolean => isPlainObject(outcome) && outcome.type === "cancelled"

const handleRunFinished = (d: ThreadDraft, event: EventOf<"RUN_FINISHED">, at: number): void => {
  const paused = d.streaming.status === "waiting"
  // The run the server completed is the one it started (it checks the next run's previousRunId
  // against it); an end that names another one is recorded, and the started run completes. A run
  // started under the id of the run it continues (the client's stand-in for a continuation the
  // server named no run of, see internal/run/step.ts) is no run of the server's: the end names it.
  const streaming = d.streaming.status === "idle" || d.streaming.runId === d.lastCompletedRunId
    ? undefined
    : d.streaming.runId
  if (streaming !== undefined && streaming !== event.runId) {
    d.anomaly(event.type, `run ${event.runId} finished while run ${streaming} is streaming`, at)
  }
  d.setLastCompletedRunId(streaming ?? event.runId)
  const thread = d.ownThread()
  thread.status = "idle"
  if (isCancelledOutcome(event.outcome)) thread.lastRunCancelled = true
  d.ownStreaming().status = "idle"
  closeRun(d, at)
  // A run that paused for client tools finishes right after saying so; its
  // pending calls stay until answered.
  if (!paused) d.setPendingToolCalls([])
  d.keepInvalidToolArgsOfPending()
}

const handleRunError = (d: ThreadDraft, event: EventOf<"RUN_ERROR">, at: number): void => {
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
  closeRun(d, at)
  d.setPendingToolCalls([])
  d.keepInvalidToolArgsOfPending()
}

/**
 * What the ended run left open (AG-UI forbids it, a server may still do it): nothing shows as
 * streaming once the thread is idle, and what was received stays (see `closeOpenBlocks`).
 */
const closeRun = (d: ThreadDraft, at: number): void => {
  if (d.streaming.messageId !== undefined) delete d.ownStreaming().messageId
  d.setEphemeral(undefined)
  closeOpenBlocks(d, at)
}

/**
 * Where a run's event that names message `messageId` puts it: its position,
 * or -1 when the message is new. An id from before the turn's user message
 * is an earlier reply's, reused by the server, and the id of a user's or
 * system message, or (but for another result) of a message of tool results,
 * is not a reply's: the event opens a message of this turn, which the id's
 * later events then find (an anomaly, never more text in history, in the
 * user's message, or between a call and its result).
 */
const claimMessageId = (d: ThreadDraft, messageId: string, eventType: string, at: number, isResult = false): number => {
  const index = d.findMessage(messageId)
  if (index < 0) return index
  const message = d.messages[index]!
  const reply = message.role === "assistant" && (isResult || !hasToolResult(message))
  if (reply && (d.turnStart === undefined || index >= d.turnStart)) return index
  const alias = d.uniqueMessageId(messageId)
  d.anomaly(
    eventType,
    reply
      ? `message ${messageId} is from an earlier turn; this turn's message is ${alias}`
      : `message ${messageId} is ${message.role === "assistant" ? "a tool result's" : `the ${message.role}'s`}; this reply's message is ${alias}`,
    at
  )
  d.setMessageAlias(messageId, alias)
  return -1
}

/**
 * Where a user's message that a run's event opens under `messageId` goes: the user's message of
 * that id, or -1 when the message is new. The id of a message of another role (a reply, a result)
 * is not the user's: that message keeps its role and content, and the event opens a user's
 * message of its own, which the id's later events then find (an anomaly).
 */
const claimUserMessageId = (d: ThreadDraft, messageId: string, eventType: string, at: number): number => {
  const index = d.findMessage(messageId)
  if (index < 0) return index
  const message = d.messages[index]!
  if (message.role === "user") return index
  const alias = d.uniqueMessageId(messageId)
  d.anomaly(eventType, `message ${messageId} is ${message.role === "assistant" ? "an assistant's" : `the ${message.role}'s`}; this user's message is ${alias}`, at)
  d.setMessageAlias(messageId, alias)
  return -1
}

const handleTextMessageStart = (d: ThreadDraft, event: EventOf<"TEXT_MESSAGE_START">, at: number): void => {
  const isAssistant = event.role !== "user"
  const existing = isAssistant
    ? claimMessageId(d, event.messageId, event.type, at)
    : claimUserMessageId(d, event.messageId, event.type, at)
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
      createdAt: toIsoString(at)
    })
  } else {
    d.ownThread()
  }
  d.setEnded(messageId, false)
  d.ownStreaming().messageId = messageId
}

const handleTextMessageContent = (d: ThreadDraft, event: EventOf<"TEXT_MESSAGE_CONTENT">, at: number): void =>
  appendText(d, event.messageId, event.delta, 1, at)

/** Appends `delta`, the text of `count` consecutive deltas, to a message's last text block. */
export const appendText = (d: ThreadDraft, messageId: string, delta: string, count: number, at: number): void => {
  const index = d.findMessage(messageId)
  if (index < 0) {
    for (let i = 0; i < count; i++) d.anomaly("TEXT_MESSAGE_CONTENT", `unknown message ${messageId}`, at)
    return
  }
  // The turn's question and what came before it are no reply of this turn: text under their ids
  // that no TEXT_MESSAGE_START claimed (see `claimMessageId`) is refused, as an unknown id's is.
  if (d.turnStart !== undefined && index <= d.turnStart) {
    for (let i = 0; i < count; i++) d.anomaly("TEXT_MESSAGE_CONTENT", `message ${messageId} is not this turn's reply`, at)
    return
  }
  // Nor is a message of tool results, which the API stores apart from any text: a reply under its id
  // opens a message of its own at TEXT_MESSAGE_START.
  const message = d.messages[index]!
  if (message.id !== d.streaming.messageId && hasToolResult(message)) {
    for (let i = 0; i < count; i++) {
      d.anomaly("TEXT_MESSAGE_CONTENT", `message ${messageId} is a tool result's, not this turn's reply`, at)
    }
    return
  }
  // AG-UI forbids text after a message's end, yet the API keeps every delta the model gives, one
  // after its end too (its stream sends it under the message's id): the text is kept, as stored.
  if (d.hasEnded(message.id)) {
    for (let i = 0; i < count; i++) d.anomaly("TEXT_MESSAGE_CONTENT", `message ${messageId} already ended`, at)
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
  if (active !== undefined) {
    delete d.ownStreaming().messageId
    d.setEnded(active, true)
    return
  }
  // Nothing streams: the end of a message the thread has changes nothing, of one it lacks is recorded.
  if (d.findMessage(event.messageId) < 0) d.anomaly(event.type, `unknown message ${event.messageId}`, at)
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
    // A parent that cannot hold a call (the user's message, a tool result's, an earlier turn's
    // reply) is read as none: a call there would be no assistant's of this turn, and its result
    // one no call asked for, or one separated from its call by the turn's question.
    if (parent >= 0 && canHoldCall(d.messages[parent]!) && (d.turnStart === undefined || parent >= d.turnStart)) {
      return parent
    }
  }
  const open = d.streaming.messageId
  if (open !== undefined) {
    const index = d.findMessage(open)
    if (index >= 0 && canHoldCall(d.messages[index]!)) return index
  }
  const last = d.messages.length - 1
  if (last >= 0 && canHoldCall(d.messages[last]!)) return last
  return -1
}

/** A message a call can join: an assistant's, holding no tool results. */
const canHoldCall = (message: TamboThreadMessage): boolean => message.role === "assistant" && !hasToolResult(message)

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
  // The id's latest block is elsewhere, yet an earlier one may be in this message (the id reused).
  if (
    earlier !== undefined &&
    (earlier.message === index ||
      (index >= 0 && d.messages[index]!.content.some((block) => block.type === "tool_use" && block.id === event.toolCallId)))
  ) {
    return d.anomaly(event.type, `tool call ${event.toolCallId} started twice`, at)
  }
  // The earlier call, still open, keeps the arguments it had.
  if (earlier !== undefined) closeToolArgs(d, event.toolCallId)
  const block: Content = { type: "tool_use", id: event.toolCallId, name: event.toolCallName, input: {} }
  if (index >= 0) {
    d.appendBlock(index, block)
  } else {
    // Named after its parent unless that names a message it could not join.
    const parent = event.parentMessageId !== undefined && d.findMessage(event.parentMessageId) < 0
      ? d.resolveMessageId(event.parentMessageId)
      : undefined
    const id = d.uniqueMessageId(parent ?? `msg_tool_${event.toolCallId}`)
    d.appendMessage({ id, role: "assistant", content: [block], createdAt: toIsoString(at) })
    d.ownStreaming().messageId = id
  }
  d.ownToolArgs().set(event.toolCallId, { raw: "", parsedLength: 0 })
  d.setInvalidToolArgs(event.toolCallId, undefined)
}

const handleToolCallArgs = (d: ThreadDraft, event: EventOf<"TOOL_CALL_ARGS">, at: number): void =>
  appendToolArgs(d, event.toolCallId, event.delta, 1, at)

/** Appends `delta`, the text of `count` consecutive argument deltas, to a tool call's raw arguments. */
export const appendToolArgs = (d: ThreadDraft, toolCallId: string, delta: string, count: number, at: number): void => {
  const args = d.toolArgs.get(toolCallId)
  if (args === undefined) {
    const known = d.findBlock("tool_use", toolCallId) !== undefined
    const reason = known ? `arguments for tool call ${toolCallId} after it ended` : `unknown tool call ${toolCallId}`
    for (let i = 0; i < count; i++) d.anomaly("TOOL_CALL_ARGS", reason, at)
    return
  }
  d.ownToolArgs().set(toolCallId, { raw: args.raw + delta, parsedLength: args.parsedLength })
  d.touchedToolCalls.set(toolCallId, at)
}

/**
 * Where a run of consecutive deltas to the same target (text of one message,
 * arguments of one tool call) starting at `start` ends. Within one batch no
 * snapshot is taken between them, so they apply as one joined delta: one
 * lookup and one string append per network chunk instead of per event.
 */
export const deltaRunEnd = (events: ReadonlyArray<Events.TamboEvent | Events.UnknownEvent>, start: number): number => {
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

export const joinDeltas = (events: ReadonlyArray<Events.TamboEvent | Events.UnknownEvent>, start: number, end: number): string => {
  const parts: Array<string> = new Array(end - start)
  for (let i = start; i < end; i++) parts[i - start] = (events[i] as { readonly delta: string }).delta
  return parts.join("")
}

/** A call's whole arguments: blank ones are none, `{}`, as the tool executor reads them. */
const parseToolArgs = (raw: string): { readonly input: Record<string, unknown> | undefined; readonly complete: boolean } => {
  if (isBlankArgs(raw)) return { input: {}, complete: true }
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
    // An end of a call that already ended changes nothing: its arguments stay as its first end
    // (or its run's start or end) left them.
    const known = d.findBlock("tool_use", event.toolCallId) !== undefined
    return d.anomaly(event.type, known ? `tool call ${event.toolCallId} already ended` : `unknown tool call ${event.toolCallId}`, at)
  }
  d.ownToolArgs().delete(event.toolCallId)
  d.touchedToolCalls.delete(event.toolCallId)
  // No arguments at all: the input stays {}.
  if (args.raw === "") return
  const { complete, input } = parseToolArgs(args.raw)
  if (!complete) d.anomaly(event.type, `arguments of tool call ${event.toolCallId} are not valid JSON`, at)
  else if (input === undefined) d.anomaly(event.type, `arguments of tool call ${event.toolCallId} are not an object`, at)
  d.setInvalidToolArgs(event.toolCallId, !complete || input === undefined ? args.raw : undefined)
  if (input !== undefined) d.setToolInput(event.toolCallId, input)
}

/**
 * Ends a call's streaming arguments without its TOOL_CALL_END: what they parse to stays its input,
 * and arguments that are not a JSON object are recorded, as at its end.
 */
const closeToolArgs = (d: ThreadDraft, toolCallId: string): void => {
  const args = d.toolArgs.get(toolCallId)
  if (args === undefined) return
  d.ownToolArgs().delete(toolCallId)
  d.touchedToolCalls.delete(toolCallId)
  if (args.raw === "") return
  const { complete, input } = parseToolArgs(args.raw)
  d.setInvalidToolArgs(toolCallId, !complete || input === undefined ? args.raw : undefined)
  if (input !== undefined) d.setToolInput(toolCallId, input)
}

const handleToolCallResult = (d: ThreadDraft, event: EventOf<"TOOL_CALL_RESULT">, at: number): void => {
  // A result no call of the thread asked for is kept (nothing the server sent is lost) and recorded.
  if (d.findBlock("tool_use", event.toolCallId) === undefined) {
    d.anomaly(event.type, `result for unknown tool call ${event.toolCallId}`, at)
  }
  const block: ToolResultContent = {
    type: "tool_result",
    toolUseId: event.toolCallId,
    content: toolResultContentFromEvent(event.content)
  }
  const index = claimMessageId(d, event.messageId, event.type, at, true)
  if (index >= 0) {
    d.appendBlock(index, block)
  } else {
    // The API stores a tool's result as a message of its own, which it
    // returns with role "assistant".
    d.appendMessage({ id: d.resolveMessageId(event.messageId), role: "assistant", content: [block], createdAt: toIsoString(at) })
  }
  d.removePendingToolCall(event.toolCallId)
  d.setInvalidToolArgs(event.toolCallId, undefined)
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
  const index = d.appendMessage({ id, role: "assistant", content: [], createdAt: toIsoString(at) })
  d.ownStreaming().messageId = id
  d.setEphemeral(id)
  return index
}

const startReasoning = (d: ThreadDraft, messageId: string | undefined, at: number): void => {
  const index = reasoningMessage(d, messageId, at)
  openReasoningOn(d, index, at)
  d.ownReasoning(index).push("")
  if (d.streaming.reasoningStartTime === undefined) d.ownStreaming().reasoningStartTime = at
}

const appendReasoning = (d: ThreadDraft, messageId: string | undefined, delta: string, at: number): void => {
  const index = reasoningMessage(d, messageId, at)
  openReasoningOn(d, index, at)
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
  openReasoningOn(d, index, at)
  const start = d.streaming.reasoningStartTime
  if (start !== undefined) d.ownMessage(index).reasoningDurationMS = at - start
  d.setOpenReasoning(undefined)
}

/** Reasoning goes on in message `index`: reasoning still open in another one ended there, at `at`. */
const openReasoningOn = (d: ThreadDraft, index: number, at: number): void => {
  const messageId = d.messages[index]!.id
  if (d.openReasoning !== undefined && d.openReasoning !== messageId) closeReasoning(d, at)
  d.setOpenReasoning(messageId)
}

/** Reasoning nothing ended lasted until `at`, when its run ended (or reasoning went on elsewhere). */
const closeReasoning = (d: ThreadDraft, at: number): void => {
  const messageId = d.openReasoning
  if (messageId === undefined) return
  d.setOpenReasoning(undefined)
  const index = d.findMessage(messageId)
  const start = d.streaming.reasoningStartTime
  if (index >= 0 && start !== undefined) d.ownMessage(index).reasoningDurationMS = at - start
}

const handleComponentStart = (d: ThreadDraft, event: Events.ComponentStartEvent, at: number): void => {
  const { componentId, componentName, messageId } = event.value
  if (d.findBlock("component", componentId) !== undefined) {
    return d.anomaly(event.name, `component ${componentId} started twice`, at)
  }
  let index = claimMessageId(d, messageId, event.name, at)
  if (index < 0) {
    // Components may start before (or without) any text of their message.
    index = d.appendMessage({ id: d.resolveMessageId(messageId), role: "assistant", content: [], createdAt: toIsoString(at) })
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
 * one, or one through a forbidden name).
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
    // A patch of the whole document (path "") may make it anything; the API's props and state
    // are objects, and a renderer is handed them as such: the patch is refused, the document kept.
    if (!isPlainObject(result.value)) {
      return d.anomaly(event.name, `patch of component ${componentId} refused: the ${field} would not be an object`, at)
    }
    value = result.value
  }
  const block = d.ownBlock(position)
  if (block.type !== "component") return
  block[field] = value as Record<string, unknown>
  if (block.streamingState !== "done") {
    block.streamingState = "streaming"
  } else if (d.streaming.status !== "idle") {
    // A patch after the component's end, while its run goes on: it streams again, and the run's
    // end closes it as any open component. Once the run ended, it stays done.
    block.streamingState = "streaming"
    if (!d.openComponents.includes(componentId)) d.setOpenComponents([...d.openComponents, componentId])
  }
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
  // A component streams again only after a patch (see `handleComponentDelta`): an end of one that
  // ended since changes nothing.
  const current = d.messages[position.message]!.content[position.block]!
  if (current.type === "component" && current.streamingState === "done" && !d.openComponents.includes(componentId)) {
    return d.anomaly(event.name, `component ${componentId} already ended`, at)
  }
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

/**
 * The run pauses for the client's tools. A call the thread never started is kept pending (the
 * event carries its name and arguments, and the server waits on it) and recorded.
 */
const handleAwaitingInput = (d: ThreadDraft, event: Events.RunAwaitingInputEvent, at: number): void => {
  for (const { toolCallId } of event.value.pendingToolCalls) {
    if (d.findBlock("tool_use", toolCallId) === undefined) {
      d.anomaly(event.name, `awaiting input for unknown tool call ${toolCallId}`, at)
    }
  }
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
    d.appendMessage({ id: d.resolveMessageId(messageId), role: "assistant", content: [], createdAt: toIsoString(at), parentMessageId })
  }
}

/**
 * The agent's shared state (AG-UI). A refused delta (a prototype key, a failing operation, not
 * a JSON Patch) leaves it as it was and is an anomaly: the run goes on, as AG-UI clients do.
 */
const handleStateEvent = (d: ThreadDraft, event: EventOf<"STATE_SNAPSHOT" | "STATE_DELTA">, at: number): void => {
  const next = applyStateEvent(d.thread.state, event)
  if (Either.isLeft(next)) return d.anomaly(event.type, next.left.message, at)
  d.ownThread().state = next.right
}

/**
 * The conversation as the agent has it (AG-UI) replaces the thread's messages. A message the
 * thread had keeps its timestamp; the others get the event's. What the run had open and the
 * snapshot dropped (a message, a call's arguments, a component) is closed: its later events are
 * anomalies, as for anything unknown.
 */
const handleMessagesSnapshot = (d: ThreadDraft, event: EventOf<"MESSAGES_SNAPSHOT">, at: number): void => {
  const decoded = messagesOf(event)
  if (Either.isLeft(decoded)) return d.anomaly(event.type, decoded.left.message, at)
  const { messages: snapshot, repeated } = lastOfEachId(decoded.right)
  for (const id of repeated) d.anomaly(event.type, `message ${id} appears more than once: the last is kept`, at)
  const stamp = toIsoString(at)
  const messages = fromAgUiMessages(snapshot).map((message): TamboThreadMessage => {
    const index = d.findMessage(message.id)
    return { ...message, createdAt: (index < 0 ? undefined : d.messages[index]!.createdAt) ?? stamp }
  })
  d.replaceMessages(messages)
  const open = d.streaming.messageId
  if (open !== undefined && d.findMessage(open) < 0) delete d.ownStreaming().messageId
  if (d.ephemeralMessageId !== undefined && d.findMessage(d.ephemeralMessageId) < 0) d.setEphemeral(undefined)
  for (const toolCallId of d.toolArgs.keys()) {
    if (d.findBlock("tool_use", toolCallId) !== undefined) continue
    d.ownToolArgs().delete(toolCallId)
    d.touchedToolCalls.delete(toolCallId)
  }
  // The snapshot's arguments are the calls' own: those that are not a JSON object are recorded as
  // they arrived, as a call's streamed ones are, so no tool runs on them.
  d.clearInvalidToolArgs()
  for (const message of snapshot) {
    if (message.role !== "assistant") continue
    for (const call of message.toolCalls ?? []) {
      const raw = call.function.arguments
      if (raw === "") continue
      const { complete, input } = parseToolArgs(raw)
      if (!complete || input === undefined) d.setInvalidToolArgs(call.id, raw)
    }
  }
  const components = d.openComponents.filter((id) => d.findBlock("component", id) !== undefined)
  if (components.length !== d.openComponents.length) d.setOpenComponents(components)
  const optimistic = d.optimisticMessageIds.filter((id) => d.findMessage(id) >= 0)
  if (optimistic.length !== d.optimisticMessageIds.length) d.setOptimisticMessageIds(optimistic)
}

/**
 * Applies a run's event. Between a run's end and the next RUN_STARTED (events only `reduce` gets,
 * never the run loop, or upstream's user message streamed as events) what the event brings is
 * kept and what it opens closes at once, as at a run's end: a thread whose run ended never shows
 * a message, a component, a call or reasoning as streaming, nor waits for tools.
 */
export const applyEvent = (d: ThreadDraft, event: Events.TamboEvent, at: number): void => {
  const ended = d.streaming.status === "idle" && d.streaming.runId !== undefined
  applyRunEvent(d, event, at)
  if (ended && event.type !== "RUN_STARTED") closeIdle(d, at)
}

const closeIdle = (d: ThreadDraft, at: number): void => {
  if (d.thread.status !== "idle") d.ownThread().status = "idle"
  if (d.streaming.status !== "idle") d.ownStreaming().status = "idle"
  closeRun(d, at)
}

const applyRunEvent = (d: ThreadDraft, event: Events.TamboEvent, at: number): void => {
  switch (event.type) {
    case "RUN_STARTED":
      return handleRunStarted(d, event, at)
    case "RUN_FINISHED":
      return handleRunFinished(d, event, at)
    case "RUN_ERROR":
      return handleRunError(d, event, at)
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
          return handleAwaitingInput(d, event, at)
        case "tambo.message.parent":
          return handleMessageParent(d, event, at)
      }
      return
    }
    case "STATE_SNAPSHOT":
    case "STATE_DELTA":
      return handleStateEvent(d, event, at)
    case "MESSAGES_SNAPSHOT":
      return handleMessagesSnapshot(d, event, at)
    // Known and deliberately without effect on threads: step markers, an AG-UI
    // agent's activities (run events for the app), reasoning brackets and
    // encrypted reasoning.
    case "STEP_STARTED":
    case "STEP_FINISHED":
    case "ACTIVITY_SNAPSHOT":
    case "ACTIVITY_DELTA":
    case "THINKING_START":
    case "THINKING_END":
    case "REASONING_START":
    case "REASONING_END":
    case "REASONING_ENCRYPTED_VALUE":
      return
  }
}

/** Closes what a run left open when it ended, at `at`, without the server saying so. */
export const closeOpenBlocks = (d: ThreadDraft, at: number): void => {
  closeReasoning(d, at)
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
      const { complete, input } = parseToolArgs(args.raw)
      d.setInvalidToolArgs(toolCallId, !complete || input === undefined ? args.raw : undefined)
      if (input !== undefined) d.setToolInput(toolCallId, input)
    }
    d.ownToolArgs().clear()
  }
  d.touchedToolCalls.clear()
}
