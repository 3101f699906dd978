// The store equals the server: the one comparison the tests of every package use (core's run
// tests, the facade's model-based test).
import type { TestServer } from "@tambo-effect/testing"
import { expect } from "vitest"
import type * as ClientState from "../src/ClientState.js"
import type * as Types from "../src/Types.js"

/**
 * What the store holds that `GET /v1/threads/{id}` (with its messages) does not return, left out
 * by {@link storeEqualsServer}; everything else must be equal.
 */
export const CLIENT_ONLY_FIELDS = {
  /** The client's bookkeeping of a run: its lifecycle, progress and anomalies. */
  threadState: ["streaming", "anomalies", "internal"],
  /** Streamed, not stored: the model's reasoning and how long it took; a UI's stable key. */
  message: ["reasoning", "reasoningDurationMS", "key"],
  /** Computed while streaming (a component's lifecycle, per prop) or by UI layers (a tool call's). */
  block: {
    component: ["streamingState", "streamingStatus"],
    tool_use: ["hasCompleted", "statusMessage", "tamboDisplayProps"]
  }
} as const

const omit = (value: object, keys: ReadonlyArray<string>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(value).filter(([key, field]) => !keys.includes(key) && field !== undefined))

const storedBlock = (block: Types.Content): Record<string, unknown> =>
  omit(
    block,
    block.type === "component"
      ? CLIENT_ONLY_FIELDS.block.component
      : block.type === "tool_use"
      ? CLIENT_ONLY_FIELDS.block.tool_use
      : []
  )

const getServerJson = async (server: TestServer, path: string, userKey: string): Promise<Record<string, unknown>> => {
  const response = await fetch(`${server.url}${path}?userKey=${encodeURIComponent(userKey)}`, {
    headers: { "x-api-key": server.apiKey }
  })
  if (!response.ok) throw new Error(`GET ${path}: ${response.status}`)
  return (await response.json()) as Record<string, unknown>
}

/**
 * Asserts that the thread `threadId` of `state` equals the server's, as `GET /v1/threads/{id}` and
 * `GET /v1/threads/{id}/messages` return it, but for {@link CLIENT_ONLY_FIELDS}: the thread's
 * fields (`status` is the server's `runStatus`, `lastRunCancelled` absent is `false`), its
 * messages in order with their ids and content, the calls the server waits on and the last
 * completed run. Rejects with the assertion's diff otherwise.
 */
export const storeEqualsServer = async (
  state: ClientState.ClientState,
  server: TestServer,
  threadId: string,
  userKey = "user-1"
): Promise<void> => {
  const remote = await getServerJson(server, `/v1/threads/${threadId}`, userKey)
  const listed = await getServerJson(server, `/v1/threads/${threadId}/messages`, userKey)
  const local = state.threadMap[threadId]
  expect(local, `the store has thread ${threadId}`).toBeDefined()
  const { thread } = local!
  // The thread's own messages and the listed ones are the same.
  expect(listed["messages"]).toEqual(remote["messages"])
  const expected = {
    id: remote["id"],
    name: remote["name"],
    metadata: remote["metadata"],
    status: remote["runStatus"],
    createdAt: remote["createdAt"],
    updatedAt: remote["updatedAt"],
    lastRunCancelled: remote["lastRunCancelled"] ?? false,
    lastRunError: remote["lastRunError"],
    pendingToolCallIds: remote["pendingToolCallIds"] ?? [],
    lastCompletedRunId: remote["lastCompletedRunId"],
    messages: remote["messages"]
  }
  const actual = {
    id: thread.id,
    name: thread.name,
    metadata: thread.metadata,
    status: thread.status,
    createdAt: thread.createdAt,
    updatedAt: thread.updatedAt,
    lastRunCancelled: thread.lastRunCancelled,
    lastRunError: thread.lastRunError,
    pendingToolCallIds: local!.pendingToolCalls.map((call) => call.toolCallId),
    lastCompletedRunId: local!.lastCompletedRunId,
    messages: thread.messages.map((message) => ({
      ...omit(message, CLIENT_ONLY_FIELDS.message),
      content: message.content.map(storedBlock)
    }))
  }
  expect(actual, `thread ${threadId}: store vs server`).toEqual(expected)
}
