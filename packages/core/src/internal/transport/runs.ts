/**
 * The run calls: a run on a new thread or an existing one (also how tool
 * results continue a paused run), each the stream of its events
 * (runStream.ts), and the cancellation of a run on the server.
 *
 * @internal
 */
import type TamboAI from "@tambo-ai/typescript-sdk"
import * as Effect from "effect/Effect"
import type { Credentials, RunRequest, TamboTransport } from "../../TamboTransport.js"
import * as RunStream from "./runStream.js"
import { headersOf, userKeyOf, withUserKey } from "./credentials.js"
import { AnyBody, requestOptions, type Rest } from "./rest.js"

/** The run members of the service. */
export type Runs = Pick<TamboTransport.Service, "createRun" | "runOnThread" | "cancelRun">

/** The body both run requests share: only the fields the request sets, and no empty lists. */
const runBody = (request: RunRequest): Record<string, unknown> => {
  const body: Record<string, unknown> = { message: request.message }
  if (request.previousRunId !== undefined) body.previousRunId = request.previousRunId
  if (request.tools !== undefined && request.tools.length > 0) body.tools = request.tools
  if (request.availableComponents !== undefined && request.availableComponents.length > 0) {
    body.availableComponents = request.availableComponents
  }
  if (request.toolChoice !== undefined) body.toolChoice = request.toolChoice
  if (request.runMetadata !== undefined) body.runMetadata = request.runMetadata
  if (request.model !== undefined) body.model = request.model
  if (request.maxTokens !== undefined) body.maxTokens = request.maxTokens
  if (request.temperature !== undefined) body.temperature = request.temperature
  return body
}

/** The `thread` a run creates: its user key, metadata and opening messages, when any is set. */
const newThread = (credentials: Credentials, request: RunRequest): Record<string, unknown> | undefined => {
  const thread: Record<string, unknown> = {}
  const userKey = userKeyOf(credentials)
  if (userKey !== undefined) thread.userKey = userKey
  if (request.threadMetadata !== undefined) thread.metadata = request.threadMetadata
  if (request.initialMessages !== undefined && request.initialMessages.length > 0) {
    thread.initialMessages = request.initialMessages
  }
  return Object.keys(thread).length > 0 ? thread : undefined
}

/** The run calls: streams through `deps`' `HttpClient`, the cancellation through `rest`. */
export const make = (deps: RunStream.Deps, sdk: TamboAI, rest: Rest): Runs => ({
  createRun: (credentials, request, hooks) => {
    const body = runBody(request)
    const thread = newThread(credentials, request)
    if (thread !== undefined) body.thread = thread
    return RunStream.openRun(deps, headersOf(credentials), "/v1/threads/runs", body, undefined, hooks)
  },
  runOnThread: (credentials, threadId, request, hooks) => {
    const body = runBody(request)
    const userKey = userKeyOf(credentials)
    if (userKey !== undefined) body.userKey = userKey
    const path = `/v1/threads/${encodeURIComponent(threadId)}/runs`
    return RunStream.openRun(deps, headersOf(credentials), path, body, threadId, hooks)
  },
  cancelRun: (credentials, threadId, runId) =>
    Effect.asVoid(rest({
      name: "cancelRun",
      method: "DELETE",
      path: `/v1/threads/${threadId}/runs/${runId}`,
      schema: AnyBody,
      idempotent: false,
      send: ({ signal }) =>
        sdk.threads.runs.delete(runId, withUserKey({ threadId }, credentials), requestOptions(credentials, signal))
    }))
})
