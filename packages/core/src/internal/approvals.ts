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

/** A call waiting for its decision, and whether its run still takes one. */
interface Waiting<Decision> {
  readonly deferred: Deferred.Deferred<Decision>
  readonly open: () => boolean
}

/** @internal */
export class Approvals<Decision> {
  /** Tool call id → thread id → the decision its run waits for. */
  private readonly pending = new Map<string, Map<string, Waiting<Decision>>>()

  /**
   * Done before the call is announced, so a decision sent as soon as it is seen finds it. Once
   * `open` says no (its run is being cancelled), the call waits for nothing: a decision finds it
   * no more, though the run's end has not taken it back yet.
   */
  register(threadId: string, toolCallId: string, deferred: Deferred.Deferred<Decision>, open: () => boolean): void {
    let byThread = this.pending.get(toolCallId)
    if (byThread === undefined) this.pending.set(toolCallId, byThread = new Map())
    byThread.set(threadId, { deferred, open })
  }

  /** Forgets a call, if it still waits on this deferred. */
  forget(threadId: string, toolCallId: string, deferred: Deferred.Deferred<Decision>): void {
    const byThread = this.pending.get(toolCallId)
    if (byThread?.get(threadId)?.deferred !== deferred) return
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
      const waiting = new Map<string, Waiting<Decision>>()
      for (const [thread, call] of this.pending.get(toolCallId) ?? []) if (call.open()) waiting.set(thread, call)
      let thread = threadId
      if (thread === undefined) {
        if (waiting.size > 1) {
          return new ToolError({
            reason: "Ambiguous",
            message: `Tool call ${toolCallId} waits for approval in ${waiting.size} threads (${
              [...waiting.keys()].join(", ")
            }): pass the threadId to say which`,
            toolCallId
          })
        }
        thread = waiting.keys().next().value
      }
      const call = thread === undefined ? undefined : waiting.get(thread)
      if (thread === undefined || call === undefined) {
        return new ToolError({
          reason: "NotPending",
          message: `No approval is pending for tool call ${toolCallId}${threadId === undefined ? "" : ` in thread ${threadId}`}`,
          toolCallId,
          ...(threadId === undefined ? {} : { threadId })
        })
      }
      this.forget(thread, toolCallId, call.deferred)
      return Deferred.succeed(call.deferred, decision)
    })
  }
}
