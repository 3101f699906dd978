/**
 * The tool calls a run waits on, as the caller sees them: with their
 * arguments decoded and validated by each tool's input schema, and whether
 * they need approval.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as ClientState from "../../ClientState.js"
import type * as Events from "../../Events.js"
import type { PendingToolCallInfo } from "../../Tambo.js"
import { ApiError } from "../../TamboError.js"
import { isBlankArgs } from "../toolSupport.js"
import type { Env } from "./env.js"

/**
 * Raw JSON arguments as far as they go, to show them: `{}` for none (blank, as the executor reads them), the text
 * itself when it is not JSON (the tool's schema then says why).
 */
const argsShown = (raw: string): unknown => {
  try {
    return isBlankArgs(raw) ? {} : JSON.parse(raw)
  } catch {
    return raw
  }
}

/** The pending calls of a thread, with their arguments decoded and validated. @internal */
export const describe = (
  env: Env,
  threadId: string,
  calls: ReadonlyArray<Events.PendingToolCall>
): Effect.Effect<ReadonlyArray<PendingToolCallInfo>> =>
  Effect.forEach(calls, (call) =>
    Effect.gen(function* () {
      const args = argsShown(call.arguments)
      const tool = yield* env.registry.get(call.toolName)
      if (Option.isNone(tool)) {
        return { toolCallId: call.toolCallId, toolName: call.toolName, args, needsApproval: false, threadId }
      }
      const decoded = yield* Effect.either(tool.value.decodeArgs(args))
      if (Either.isLeft(decoded)) {
        return {
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          args,
          needsApproval: false,
          error: decoded.left.message,
          threadId
        }
      }
      const needsApproval = yield* Effect.orElseSucceed(tool.value.needsApproval(decoded.right), () => false)
      return { toolCallId: call.toolCallId, toolName: call.toolName, args: decoded.right, needsApproval, threadId }
    }))

/**
 * The pending calls of a thread's state (from the last pause, or from the server's thread after a
 * read), with their arguments from its `tool_use` blocks; arguments that ended as text that is not
 * a JSON object (`internal.invalidToolArgs`) as they arrived, not what they partly parse to, as
 * the pause itself carries them. @internal
 */
export const ofState = (thread: ClientState.ThreadState | undefined): ReadonlyArray<Events.PendingToolCall> => {
  if (thread === undefined) return []
  const inputs = new Map<string, unknown>()
  for (const message of thread.thread.messages) {
    for (const block of message.content) if (block.type === "tool_use") inputs.set(block.id, block.input)
  }
  // A state restored from storage may lack the reducer's bookkeeping.
  const invalid: unknown = thread.internal?.invalidToolArgs
  return thread.pendingToolCalls.map((call) => ({
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    arguments: (invalid instanceof Map ? invalid.get(call.toolCallId) : undefined) ??
      JSON.stringify(inputs.get(call.toolCallId) ?? {})
  }))
}

/** The Tambo API's refusal of tool results that do not match the calls it waits on, before anything is sent. */
const refusedResults = (code: string, message: string) =>
  new ApiError({ reason: "BadRequest", status: 400, code, category: "client_error", message, retryable: false })

/** Results that leave pending calls unanswered (the API's 400 `MISSING_RESULTS`). @internal */
export const missingResults = (missing: ReadonlyArray<string>): ApiError =>
  refusedResults("MISSING_RESULTS", `Missing tool results for pending tool calls: ${missing.join(", ")}`)

/**
 * Results for calls the server's thread no longer waits on: another client answered them since
 * this one read the thread. The code is the one the API gives such results sent after the thread's
 * last run, which checks the missing results first: `MISSING_RESULTS` when the thread waits on
 * other calls since (the other client's run asked for them), else `EXTRA_RESULTS`. @internal
 */
export const answeredElsewhere = (threadId: string, extra: ReadonlyArray<string>, waiting: ReadonlyArray<string>): ApiError => {
  const elsewhere = `another client answered ${extra.join(", ")} since this client read thread ${threadId}`
  return waiting.length > 0
    ? refusedResults("MISSING_RESULTS", `Missing tool results for pending tool calls: ${waiting.join(", ")} (${elsewhere}; it waits on these now)`)
    : refusedResults(
      "EXTRA_RESULTS",
      `Tool results provided for tool calls thread ${threadId} no longer waits on (another client answered them since this client read it): ${
        extra.join(", ")
      }`
    )
}
