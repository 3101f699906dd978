// The store-equals-server comparison of the model-based test: the client's thread, minus what only
// the client knows, against the thread the server returns.
import type { TestServer } from "@tambo-effect/testing"
import { expect } from "vitest"
import type { ClientState, Content, TamboThread, TamboThreadMessage } from "../../src/index.js"

/**
 * Fields the client keeps and the server does not return; they are dropped from the client's side
 * before comparing. Everything else the client has must equal the server's.
 */
export const CLIENT_ONLY_FIELDS = {
  /** `status` is compared with the server's `runStatus` instead. */
  thread: ["status"],
  /** Reasoning is streamed, never stored; `parentMessageId` is a streaming-time id. */
  message: ["reasoning", "reasoningDurationMS", "parentMessageId"],
  /** Streaming progress of a block, not stored by the server. */
  toolUse: ["hasCompleted", "statusMessage", "tamboDisplayProps"],
  component: ["streamingState", "streamingStatus"]
} as const

/**
 * Fields the server returns that the client's thread has no place for, dropped from the server's
 * side (`runStatus` becomes the compared `status`); and the thread's `updatedAt`, the server's
 * bookkeeping of any touch (a cancel that lands after the stream ended moves it), dropped from both.
 */
export const SERVER_ONLY_FIELDS = {
  thread: ["userKey", "runStatus", "currentRunId", "statusMessage", "lastRunError", "pendingToolCallIds", "lastCompletedRunId", "updatedAt"],
  message: ["isCancelled"]
} as const

const omit = (value: object, keys: ReadonlyArray<string>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value)) {
    if (!keys.includes(key) && field !== undefined) out[key] = field
  }
  return out
}

const contentBlock = (block: Content): Record<string, unknown> => {
  switch (block.type) {
    case "tool_use":
      return omit(block, CLIENT_ONLY_FIELDS.toolUse)
    case "component":
      return omit(block, CLIENT_ONLY_FIELDS.component)
    case "tool_result":
      // The server reports `isError: false` as absent.
      return omit(block, block.isError === false ? ["isError"] : [])
    default:
      return omit(block, [])
  }
}

const message = (m: TamboThreadMessage | ServerMessage, drop: ReadonlyArray<string>) => ({
  ...omit(m, [...drop, "content"]),
  content: (m.content as ReadonlyArray<Content>).map(contentBlock)
})

type ServerThread = NonNullable<ReturnType<TestServer["threads"]["get"]>>
type ServerMessage = ServerThread["messages"][number]

/** The client's thread as the comparison sees it. */
export const clientView = (thread: TamboThread) => ({
  ...omit(thread, [...CLIENT_ONLY_FIELDS.thread, "updatedAt", "messages"]),
  runStatus: thread.status,
  messages: thread.messages.map((m) => message(m, CLIENT_ONLY_FIELDS.message))
})

/** The server's thread as the comparison sees it. */
export const serverView = (thread: ServerThread) => ({
  ...omit(thread, [...SERVER_ONLY_FIELDS.thread, "messages"]),
  // The API omits `lastRunCancelled` until a run was cancelled; the client says `false`.
  lastRunCancelled: thread.lastRunCancelled ?? false,
  runStatus: thread.runStatus,
  messages: thread.messages.map((m) => message(m, SERVER_ONLY_FIELDS.message))
})

/**
 * Asserts that the thread `threadId` in the client's state equals the server's (as
 * `GET /v1/threads/{id}` with its messages returns it, read from the testing server's store),
 * modulo {@link CLIENT_ONLY_FIELDS} and {@link SERVER_ONLY_FIELDS}. Throws an assertion error with
 * the diff otherwise.
 */
export const storeMatchesServer = (state: ClientState, server: TestServer, threadId: string): void => {
  const local = state.threadMap[threadId]?.thread
  const remote = server.threads.get(threadId)
  expect(local, `the store has thread ${threadId}`).toBeDefined()
  expect(remote, `the server has thread ${threadId}`).toBeDefined()
  expect(clientView(local!), `thread ${threadId}: store vs server`).toEqual(serverView(remote!))
}
