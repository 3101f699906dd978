/**
 * The approvals this client's runs announced (`CLIENT_APPROVAL_REQUESTED`)
 * and nobody decided yet, in order, with the run that announced each: they
 * go when they are decided or their run ends. What `getPendingApprovals`
 * returns, and what `approveToolCall` / `denyToolCall` decide.
 *
 * @internal
 */
import type * as Tambo from "@tambo-effect/core/Tambo"
import type { ToolError } from "@tambo-effect/core/TamboError"
import * as Cause from "effect/Cause"
import type * as Chunk from "effect/Chunk"
import type * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type { PendingToolCallInfo } from "../TamboClient.js"
import * as CallSite from "./callSite.js"
import type { Notifier } from "./notifier.js"
import type { RunEntry } from "./runs.js"
import type { ClientRuntime } from "./runtime.js"
import { abortError, fromCause } from "./toClientError.js"

const NO_APPROVALS: ReadonlyArray<PendingToolCallInfo> = []

/** An approval is a thread's call: providers reuse call ids across threads. */
const approvalKey = (info: PendingToolCallInfo): string => `${info.threadId}\u0000${info.toolCallId}`

/** @internal */
export class Approvals {
  readonly #runtime: ClientRuntime
  readonly #notifier: Notifier
  /** Synchronous; the same array until it changed. */
  #pending: ReadonlyArray<PendingToolCallInfo> = NO_APPROVALS
  /** Which run announced each approval (by `approvalKey`). */
  readonly #runs = new Map<string, RunEntry>()

  constructor(runtime: ClientRuntime, notifier: Notifier) {
    this.#runtime = runtime
    this.#notifier = notifier
  }

  get pending(): ReadonlyArray<PendingToolCallInfo> {
    return this.#pending
  }

  /** Records the approvals a chunk of `run`'s events announced. */
  record(run: RunEntry, events: Chunk.Chunk<Tambo.RunEvent>): void {
    let added: Array<PendingToolCallInfo> | undefined
    for (const { event } of events) {
      if (event.type !== "CLIENT_APPROVAL_REQUESTED") continue
      const { type: _type, ...info } = event
      const key = approvalKey(info)
      if (this.#runs.has(key)) continue
      this.#runs.set(key, run)
      ;(added ??= []).push(info)
    }
    if (added === undefined) return
    this.#pending = [...this.#pending, ...added]
    this.#notifier.changed()
  }

  /** Forgets the approvals `run` announced: it no longer waits for them. */
  forgetRun(run: RunEntry): void {
    this.#forget((info) => this.#runs.get(approvalKey(info)) === run)
  }

  /**
   * Takes a decision (core's `approveToolCall` / `denyToolCall`). Core
   * registers an approval before it announces it, so a decision is taken at
   * once or refused; throws the facade's error when refused.
   */
  decide(toolCallId: string, threadId: string | undefined, decision: Effect.Effect<void, ToolError>): void {
    if (this.#runtime.destroying !== undefined) {
      throw CallSite.attach(abortError("ClientDestroyed"), CallSite.capture(this.decide))
    }
    const exit = this.#runtime.runtime.runSyncExit(decision)
    // Decided, or not pending (any more) in that thread, or in any without one: either way
    // nothing waits on it there. Refused for want of a thread, the calls of every thread wait on.
    const ambiguous = Exit.isFailure(exit) &&
      Option.exists(Cause.failureOption(exit.cause), (error) => error.reason === "Ambiguous")
    if (!ambiguous) {
      this.#forget((info) => info.toolCallId === toolCallId && (threadId === undefined || info.threadId === threadId))
    }
    if (Exit.isFailure(exit)) throw CallSite.attach(fromCause(exit.cause), CallSite.capture(this.decide))
  }

  #forget(predicate: (info: PendingToolCallInfo) => boolean) {
    if (!this.#pending.some(predicate)) return
    const kept = this.#pending.filter((info) => !predicate(info))
    for (const info of this.#pending) if (predicate(info)) this.#runs.delete(approvalKey(info))
    this.#pending = kept.length === 0 ? NO_APPROVALS : kept
    this.#notifier.changed()
  }
}
