// The server's memory: threads, their messages and runs, suggestions. Mutable records inside,
// wire DTOs (see Wire.ts) outside.
import type * as Wire from "../Wire.js"
import type { Round } from "./rounds.js"
import { badRequest } from "./httpError.js"
import { makeId } from "./ids.js"

export type StoredRole = "user" | "assistant" | "system" | "tool"

export interface StoredMessage {
  readonly id: string
  readonly role: StoredRole
  content: Array<Wire.Content>
  readonly createdAt: number
  readonly seq: number
  readonly metadata: Wire.JsonObject | undefined
  isCancelled: boolean
}

export type GenerationStage = "IDLE" | "STREAMING_RESPONSE" | "COMPLETE" | "ERROR" | "CANCELLED"

export interface StoredRun {
  readonly id: string
  readonly previousRunId: string | undefined
  readonly createdAt: number
  status: "waiting" | "streaming" | "completed" | "failed" | "cancelled"
}

export interface StoredThread {
  readonly id: string
  readonly contextKey: string
  readonly createdAt: number
  readonly seq: number
  updatedAt: number
  name: string | undefined
  metadata: Wire.JsonObject | undefined
  runStatus: Wire.RunStatus
  currentRunId: string | undefined
  statusMessage: string | undefined
  lastRunCancelled: boolean | undefined
  lastRunError: { readonly code: string; readonly message: string } | undefined
  pendingToolCallIds: ReadonlyArray<string> | undefined
  lastCompletedRunId: string | undefined
  generationStage: GenerationStage
  readonly messages: Array<StoredMessage>
  readonly runs: Map<string, StoredRun>
  /** Tool calls streamed on this thread, to name the tool a result answers. */
  readonly toolNames: Map<string, string>
  /** Rounds of the script that produced the last run, played on continuations. */
  remainingRounds: ReadonlyArray<Round>
}

export interface StoredSuggestion {
  readonly id: string
  readonly messageId: string
  readonly title: string
  readonly detailedSuggestion: string
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
  readonly createdAt: number
  readonly seq: number
}

const iso = (millis: number): string => new Date(millis).toISOString()

export class Store {
  readonly threads = new Map<string, StoredThread>()
  readonly suggestions = new Map<string, Array<StoredSuggestion>>()
  private seq = 0

  constructor(readonly now: () => number) {}

  nextSeq(): number {
    return ++this.seq
  }

  clear(): void {
    this.threads.clear()
    this.suggestions.clear()
  }

  createThread(contextKey: string, fields: { readonly name?: string | undefined; readonly metadata?: Wire.JsonObject | undefined }): StoredThread {
    const now = this.now()
    const thread: StoredThread = {
      id: makeId("thr_"),
      contextKey,
      createdAt: now,
      seq: this.nextSeq(),
      updatedAt: now,
      name: fields.name,
      metadata: fields.metadata,
      runStatus: "idle",
      currentRunId: undefined,
      statusMessage: undefined,
      lastRunCancelled: undefined,
      lastRunError: undefined,
      pendingToolCallIds: undefined,
      lastCompletedRunId: undefined,
      generationStage: "IDLE",
      messages: [],
      runs: new Map(),
      toolNames: new Map(),
      remainingRounds: []
    }
    this.threads.set(thread.id, thread)
    return thread
  }

  addMessage(
    thread: StoredThread,
    role: StoredRole,
    content: Array<Wire.Content>,
    options?: { readonly id?: string; readonly metadata?: Wire.JsonObject | undefined; readonly isCancelled?: boolean }
  ): StoredMessage {
    const now = this.now()
    const message: StoredMessage = {
      id: options?.id ?? makeId("msg_"),
      role,
      content,
      createdAt: now,
      seq: this.nextSeq(),
      metadata: options?.metadata,
      isCancelled: options?.isCancelled ?? false
    }
    thread.messages.push(message)
    thread.updatedAt = now
    return message
  }

  touch(thread: StoredThread): void {
    thread.updatedAt = this.now()
  }
}

// -----------------------------------------------------------------------------
// DTOs
// -----------------------------------------------------------------------------

export const threadToDto = (thread: StoredThread): Wire.Thread => ({
  id: thread.id,
  ...(thread.name !== undefined ? { name: thread.name } : {}),
  userKey: thread.contextKey,
  runStatus: thread.runStatus,
  ...(thread.currentRunId !== undefined ? { currentRunId: thread.currentRunId } : {}),
  ...(thread.statusMessage !== undefined ? { statusMessage: thread.statusMessage } : {}),
  ...(thread.lastRunCancelled !== undefined ? { lastRunCancelled: thread.lastRunCancelled } : {}),
  ...(thread.lastRunError !== undefined ? { lastRunError: { code: thread.lastRunError.code, message: thread.lastRunError.message } } : {}),
  ...(thread.pendingToolCallIds !== undefined ? { pendingToolCallIds: [...thread.pendingToolCallIds] } : {}),
  ...(thread.lastCompletedRunId !== undefined ? { lastCompletedRunId: thread.lastCompletedRunId } : {}),
  ...(thread.metadata !== undefined ? { metadata: thread.metadata } : {}),
  createdAt: iso(thread.createdAt),
  updatedAt: iso(thread.updatedAt)
})

/** The API maps its internal `tool` role to `assistant` in v1 responses. */
const v1Role = (role: StoredRole): Wire.Message["role"] => (role === "tool" ? "assistant" : role)

export const messageToDto = (message: StoredMessage): Wire.Message => ({
  id: message.id,
  role: v1Role(message.role),
  content: message.content.map(copyContent),
  createdAt: iso(message.createdAt),
  ...(message.metadata !== undefined ? { metadata: message.metadata } : {}),
  // Only present when true, to keep responses small (as the API does).
  ...(message.isCancelled ? { isCancelled: true } : {})
})

const copyContent = (block: Wire.Content): Wire.Content =>
  block.type === "component" ? { ...block, props: { ...block.props }, ...(block.state !== undefined ? { state: { ...block.state } } : {}) } : block

export const threadWithMessagesToDto = (thread: StoredThread): Wire.ThreadWithMessages => ({
  ...threadToDto(thread),
  messages: thread.messages.map(messageToDto)
})

export const suggestionToDto = (suggestion: StoredSuggestion): Wire.Suggestion => ({
  id: suggestion.id,
  messageId: suggestion.messageId,
  title: suggestion.title,
  description: suggestion.detailedSuggestion,
  detailedSuggestion: suggestion.detailedSuggestion,
  ...(suggestion.metadata === undefined ? {} : { metadata: suggestion.metadata }),
  createdAt: iso(suggestion.createdAt)
})

// -----------------------------------------------------------------------------
// Cursor pagination: the API's compound cursor, base64url JSON of { createdAt, id[, messageId] }
// -----------------------------------------------------------------------------

export interface Cursor {
  readonly createdAt: number
  readonly id: string
  readonly messageId: string | undefined
}

export const encodeCursor = (item: { readonly createdAt: number; readonly id: string }, messageId?: string): string =>
  Buffer.from(
    JSON.stringify({ createdAt: iso(item.createdAt), id: item.id, ...(messageId !== undefined ? { messageId } : {}) }),
    "utf8"
  ).toString("base64url")

/** Returns undefined for anything that is not a well-formed cursor. */
export const parseCursor = (encoded: string): Cursor | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(encoded, "base64url").toString("utf8"))
  } catch {
    return undefined
  }
  if (typeof parsed !== "object" || parsed === null) return undefined
  const createdAt: unknown = Reflect.get(parsed, "createdAt")
  const id: unknown = Reflect.get(parsed, "id")
  const messageId: unknown = Reflect.get(parsed, "messageId")
  if (typeof createdAt !== "string" || typeof id !== "string" || id === "") return undefined
  if (messageId !== undefined && (typeof messageId !== "string" || messageId === "")) return undefined
  const millis = Date.parse(createdAt)
  if (Number.isNaN(millis)) return undefined
  return { createdAt: millis, id, messageId: typeof messageId === "string" ? messageId : undefined }
}

/** Threads and messages parse their cursor with a plain `BadRequestException("Invalid cursor")`. */
export const parseCursorOrFail = (encoded: string): Cursor => {
  const cursor = parseCursor(encoded)
  if (cursor === undefined) throw badRequest("Invalid cursor")
  return cursor
}

interface Ordered {
  readonly createdAt: number
  readonly seq: number
  readonly id: string
}

/**
 * One page of `items` (already sorted) after `cursor`: the item the cursor names is found by id;
 * if it is gone, the page starts at the first item past the cursor's timestamp.
 */
export const page = <T extends Ordered>(
  sorted: ReadonlyArray<T>,
  cursor: Cursor | undefined,
  limit: number,
  descending: boolean
): { readonly items: ReadonlyArray<T>; readonly hasMore: boolean } => {
  let start = 0
  if (cursor !== undefined) {
    const index = sorted.findIndex((item) => item.id === cursor.id)
    start = index >= 0
      ? index + 1
      : sorted.findIndex((item) => (descending ? item.createdAt < cursor.createdAt : item.createdAt > cursor.createdAt))
    if (start < 0) start = sorted.length
  }
  const items = sorted.slice(start, start + limit)
  return { items, hasMore: start + limit < sorted.length }
}

export const byCreation = (a: Ordered, b: Ordered): number => a.createdAt - b.createdAt || a.seq - b.seq
