/**
 * The approvals a client's runs wait for, by tool call id and thread:
 * providers reuse call ids (`call_0` in every response), so runs of two
 * threads may wait on the same id at once.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { ToolError } from "../TamboError.js"

/** @internal */
export class Approvals<Decision> {
  /** Tool call id → thread id → the decision its run waits for. */
  private readonly pending = new Map<string, Map<string, Deferred.Deferred<Decision>>>()

  /** Done before the call is announced, so a decision sent as soon as it is seen finds it. */
  register(threadId: string, toolCallId: string, deferred: Deferred.Deferred<Decision>): void {
    let byThread = this.pending.get(toolCallId)
    if (byThread === undefined) this.pending.set(toolCallId, byThread = new Map())
    byThread.set(threadId, deferred)
  }

  /** Forgets a call, if it still waits on this deferred. */
  forget(threadId: string, toolCallId: string, deferred: Deferred.Deferred<Decision>): void {
    const byThread = this.pending.get(toolCallId)
    if (byThread?.get(threadId) !== deferred) return
    byThread.delete(threadId)
    if (byThread.size === 0) this.pending.delete(toolCallId)
  }

  /**
   * Decides a call: the one of `threadId`, else the only thread waiting on
   * that id. An id waiting in several threads is refused rather than guessed.
   * A decided call is forgotten at once: a second decision finds nothing.
   */
  resolve(toolCallId: string, threadId: string | undefined, decision: Decision): Effect.Effect<void, ToolError> {
    return Effect.suspend(() => {
      const byThread = this.pending.get(toolCallId)
      let thread = threadId
      if (thread === undefined && byThread !== undefined) {
        if (byThread.size > 1) {
          return new ToolError({
            reason: "Ambiguous",
            message: `Tool call ${toolCallId} waits for approval in ${byThread.size} threads (${
              [...byThread.keys()].join(", ")
            }): pass the threadId to say which`,
            toolCallId
          })
        }
        thread = byThread.keys().next().value
      }
      const deferred = thread === undefined ? undefined : byThread?.get(thread)
      if (thread === undefined || deferred === undefined) {
        return new ToolError({
          reason: "NotPending",
          message: `No approval is pending for tool call ${toolCallId}${threadId === undefined ? "" : ` in thread ${threadId}`}`,
          toolCallId,
          ...(threadId === undefined ? {} : { threadId })
        })
      }
      this.forget(thread, toolCallId, deferred)
      return Deferred.succeed(deferred, decision)
    })
  }
}
