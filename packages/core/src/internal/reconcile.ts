/**
 * Reconciliation of a thread with the server's copy of it, once a run ended.
 *
 * The stream does not carry everything the server stores: the id of the
 * user's message, the id and the leading `" "` text block of a reply that
 * began with a tool call, the text the server kept of a cancelled reply, its
 * `lastRunError`, the props of a component without the `_tambo_*` keys. So a
 * run's end reads the thread once and merges it into the store's: the server
 * says what the thread holds; what only this client saw stays (see
 * {@link CLIENT_ONLY_MESSAGE_FIELDS} and {@link CLIENT_ONLY_BLOCK_FIELDS}),
 * and a message shown under a local id keeps that id as its `key`, so a UI's
 * element for it survives the change of id.
 *
 * `mergeThread` and `mergePendingToolCalls` are pure; `reconcileThread` is the
 * effect that reads and applies.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as ClientState from "../ClientState.js"
import { isTamboError, type TamboError } from "../TamboError.js"
import type { Content, TamboThread, TamboThreadMessage } from "../Types.js"
import type * as Api from "./transport/apiSchemas.js"
import { messageFromApi, threadFromApi } from "./convert.js"
import { deepEqual } from "./jsonPatch.js"

/**
 * Message fields the API does not store: they come from the client's copy.
 *
 * @since 0.1.0
 * @category Constants
 */
export const CLIENT_ONLY_MESSAGE_FIELDS = ["reasoning", "reasoningDurationMS", "key"] as const

/**
 * Block fields the API does not store, per block type: computed while
 * streaming (a component's lifecycle and per-prop status) or by UI layers
 * (a tool call's completion and status message).
 *
 * @since 0.1.0
 * @category Constants
 */
export const CLIENT_ONLY_BLOCK_FIELDS = {
  component: ["streamingState", "streamingStatus"],
  tool_use: ["hasCompleted", "statusMessage", "tamboDisplayProps"]
} as const

/**
 * How long a run's end waits for the server's thread. The read happens while
 * the run ends, interrupted or not, so it is bounded: past this, the store
 * keeps what it had.
 *
 * @since 0.1.0
 * @category Constants
 */
export const reconcileTimeout = Duration.seconds(2)

type Block = Content

const blockKey = (block: Block): string | undefined => {
  switch (block.type) {
    case "tool_use":
      return `t${block.id}`
    case "component":
      return `c${block.id}`
    case "tool_result":
      return `r${block.toolUseId}`
    default:
      return undefined
  }
}

const clientOnlyOf = (block: Block): ReadonlyArray<string> =>
  block.type === "component"
    ? CLIENT_ONLY_BLOCK_FIELDS.component
    : block.type === "tool_use"
    ? CLIENT_ONLY_BLOCK_FIELDS.tool_use
    : []

const withoutFields = (value: object, fields: ReadonlyArray<string>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value)) if (!fields.includes(key)) out[key] = field
  return out
}

/**
 * The server's block with the client-only fields of the client's; the
 * client's own block when they hold the same.
 */
const mergeBlock = (local: Block | undefined, server: Block): Block => {
  if (local === undefined || local.type !== server.type) return server
  const fields = clientOnlyOf(server)
  const merged: Record<string, unknown> = withoutFields(server, fields)
  for (const field of fields) {
    const value: unknown = Reflect.get(local, field)
    if (value !== undefined) merged[field] = value
  }
  // The run is over: a component the server stored is complete.
  if (server.type === "component") merged["streamingState"] = "done"
  return deepEqual(merged, local) ? local : merged as unknown as Block
}

const mergeContent = (local: ReadonlyArray<Block>, server: ReadonlyArray<Block>): Array<Block> => {
  const byKey = new Map<string, Block>()
  for (const block of local) {
    const key = blockKey(block)
    if (key !== undefined) byKey.set(key, block)
  }
  return server.map((block, index) => {
    const key = blockKey(block)
    return mergeBlock(key === undefined ? local[index] : byKey.get(key), block)
  })
}

/** The ids of the calls, results and components a message holds. */
const blockIds = (message: TamboThreadMessage): Set<string> => {
  const ids = new Set<string>()
  for (const block of message.content) {
    const key = blockKey(block)
    if (key !== undefined) ids.add(key.slice(1))
  }
  return ids
}

/** Whether a message shown under a local id can be the server's `server`. */
const canBe = (local: TamboThreadMessage, server: TamboThreadMessage): boolean => {
  if (local.role !== server.role) return false
  const mine = blockIds(local)
  if (mine.size === 0) return true
  for (const id of blockIds(server)) if (mine.has(id)) return true
  return false
}

/** The server's message with what only the client knew of it. */
const mergeMessage = (local: TamboThreadMessage, server: TamboThreadMessage): TamboThreadMessage => {
  const merged: TamboThreadMessage = { ...server, content: mergeContent(local.content, server.content) }
  if (local.reasoning !== undefined) merged.reasoning = local.reasoning
  if (local.reasoningDurationMS !== undefined) merged.reasoningDurationMS = local.reasoningDurationMS
  const key = local.key ?? (local.id === server.id ? undefined : local.id)
  if (key !== undefined) merged.key = key
  if (
    merged.content.length === local.content.length &&
    merged.content.every((block, i) => block === local.content[i]) &&
    deepEqual({ ...merged, content: [] }, { ...local, content: [] })
  ) {
    return local
  }
  return merged
}

/**
 * The messages of a thread as the server has them, in its order, each merged
 * with the client's copy: found by id, or, for one shown under a local id,
 * the next unmatched message of the same role (and, if it holds tool calls,
 * results or components, one of the same) before the next message the server
 * knows by id. A local message the server does not have is dropped: the
 * server did not store it (a request it refused).
 *
 * @since 0.1.0
 * @category Merging
 */
export const mergeMessages = (
  local: ReadonlyArray<TamboThreadMessage>,
  server: ReadonlyArray<TamboThreadMessage>
): Array<TamboThreadMessage> => {
  const serverIds = new Set(server.map((message) => message.id))
  const localIndex = new Map<string, number>()
  local.forEach((message, i) => localIndex.set(message.id, i))
  const used = new Set<number>()
  let cursor = 0
  return server.map((message) => {
    let index = localIndex.get(message.id) ?? -1
    if (index < 0) {
      for (let j = cursor; j < local.length; j++) {
        const candidate = local[j]!
        // A message the server knows by id is an anchor: order is kept across it.
        if (serverIds.has(candidate.id)) break
        if (!used.has(j) && canBe(candidate, message)) {
          index = j
          break
        }
      }
    }
    if (index < 0) return message
    used.add(index)
    cursor = Math.max(cursor, index + 1)
    return mergeMessage(local[index]!, message)
  })
}

/**
 * The client's thread merged with the server's: messages as
 * {@link mergeMessages} says, thread fields from the server (name, metadata,
 * timestamps, `lastRunCancelled`, `lastRunError`), the id from the client.
 * The run status is the client's while a run of this client is on the
 * thread (`localRun`), else the server's: a run another client has on it
 * shows, and so does the message it is writing, whose last component is
 * still `streaming`: a message of `before`, those the client held from
 * before that run (by default the client's when its thread shows no run),
 * is not that message, though the server shows the run before it stored the
 * run's first message. A run this client stopped in its tool round had already
 * ended on the server, which cancelled nothing: the thread is not marked
 * cancelled (the run's own outcome says it was stopped). Returns `local`
 * itself when nothing differs.
 *
 * @since 0.1.0
 * @category Merging
 */
export const mergeThread = (
  local: TamboThread,
  server: TamboThread,
  localRun = true,
  before: ReadonlyArray<TamboThreadMessage> = local.status === "idle" ? local.messages : []
): TamboThread => {
  const status = localRun ? local.status : server.status
  const merged0 = mergeMessages(local.messages, server.messages)
  const messages = status === "idle" || localRun ? merged0 : withRunWriting(merged0, local.messages, before)
  const sameMessages = messages.length === local.messages.length &&
    messages.every((message, i) => message === local.messages[i])
  const merged: TamboThread = {
    id: local.id,
    messages: sameMessages ? local.messages : messages,
    status,
    createdAt: server.createdAt,
    updatedAt: server.updatedAt,
    lastRunCancelled: server.lastRunCancelled,
    ...(server.name === undefined ? {} : { name: server.name }),
    ...(server.metadata === undefined ? {} : { metadata: server.metadata }),
    ...(server.lastRunError === undefined ? {} : { lastRunError: server.lastRunError }),
    // The agent state is the client's alone: the API does not keep it.
    ...(local.state === undefined ? {} : { state: local.state })
  }
  return sameMessages && deepEqual({ ...merged, messages: [] }, { ...local, messages: [] }) ? local : merged
}

/**
 * The messages of a thread whose run (another client's) is active on the server: the message it
 * writes is the last one, when the model's (not the user's message nor tool results the run began
 * with, nor one the client held from before the run: the server shows a run as it takes it, and
 * stores its first message after); its last component may still be streaming its props, the
 * ones before it ended.
 */
const withRunWriting = (
  messages: Array<TamboThreadMessage>,
  local: ReadonlyArray<TamboThreadMessage>,
  before: ReadonlyArray<TamboThreadMessage>
): Array<TamboThreadMessage> => {
  const last = messages[messages.length - 1]
  if (last === undefined || last.role !== "assistant") return messages
  if (before.some((message) => message.id === last.id)) return messages
  let index = -1
  for (let i = last.content.length - 1; i >= 0; i--) {
    const block = last.content[i]!
    if (block.type === "tool_result") return messages
    if (index < 0 && block.type === "component") index = i
  }
  if (index < 0) return messages
  const block = last.content[index]!
  if (block.type !== "component" || block.streamingState === "streaming") return messages
  const content = last.content.slice()
  content[index] = { ...block, streamingState: "streaming" }
  const writing = { ...last, content }
  const held = local.find((message) => message.id === writing.id)
  const out = messages.slice()
  out[out.length - 1] = held !== undefined && deepEqual(held, writing) ? held : writing
  return out
}

/**
 * The calls the server waits on, named from the client's pending list or
 * from the thread's tool calls (a call with no known name is left out: it
 * cannot be answered by name). Returns `local` itself when nothing differs.
 *
 * @since 0.1.0
 * @category Merging
 */
export const mergePendingToolCalls = (
  local: ReadonlyArray<ClientState.AwaitedToolCall>,
  serverIds: ReadonlyArray<string>,
  messages: ReadonlyArray<TamboThreadMessage>
): ReadonlyArray<ClientState.AwaitedToolCall> => {
  if (serverIds.length === 0) return local.length === 0 ? local : []
  const known = new Map(local.map((call) => [call.toolCallId, call]))
  let names: Map<string, string> | undefined
  const out: Array<ClientState.AwaitedToolCall> = []
  for (const toolCallId of serverIds) {
    const call = known.get(toolCallId)
    if (call !== undefined) {
      out.push(call)
      continue
    }
    if (names === undefined) {
      names = new Map()
      for (const message of messages) {
        for (const block of message.content) if (block.type === "tool_use") names.set(block.id, block.name)
      }
    }
    const toolName = names.get(toolCallId)
    if (toolName !== undefined) out.push({ toolCallId, toolName })
  }
  return out.length === local.length && out.every((call, i) => call === local[i]) ? local : out
}

/**
 * The server's thread as the action that merges it into the store.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const reconcileAction = (threadId: string, remote: Api.ThreadWithMessages): ClientState.Action => ({
  type: "RECONCILE_THREAD",
  threadId,
  thread: {
    ...threadFromApi(remote),
    id: remote.id,
    createdAt: remote.createdAt,
    updatedAt: remote.updatedAt,
    lastRunCancelled: remote.lastRunCancelled ?? false,
    status: remote.runStatus,
    messages: remote.messages.map(messageFromApi)
  },
  pendingToolCallIds: remote.pendingToolCallIds ?? [],
  ...(remote.lastCompletedRunId === undefined ? {} : { lastCompletedRunId: remote.lastCompletedRunId })
})

/**
 * A read of a thread and the store's taking of its copy (`readAndTake`, see `reconcileAction`), best
 * effort and bounded by {@link reconcileTimeout}: a failed or slow read leaves the store as it was
 * (but for what `onFailure` does with the read's error, bounded too), and the read never changes
 * how the run ended.
 *
 * @since 0.1.0
 * @category Effects
 */
export const reconcileThread = (
  readAndTake: Effect.Effect<unknown, TamboError>,
  onFailure: (error: TamboError) => Effect.Effect<unknown> = () => Effect.void
): Effect.Effect<void> =>
  readAndTake.pipe(
    // Interruptible: a run's end reads in its finalizer, where an uninterruptible request would
    // outlast the bound.
    Effect.interruptible,
    Effect.timeout(reconcileTimeout),
    Effect.catchAll((error) =>
      isTamboError(error)
        ? onFailure(error).pipe(Effect.interruptible, Effect.timeout(reconcileTimeout))
        : Effect.void
    ),
    Effect.ignore
  )
