/**
 * Approval of the tool calls that need it, in a tool round: by the run's (or
 * the client's) `onApproval` handler, else by a human through
 * `approveToolCall` / `denyToolCall`. Approvals wait between two HTTP
 * requests: no connection is held open meanwhile.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import type * as Scope from "effect/Scope"
import type * as Events from "../../Events.js"
import * as Tool from "../../Tool.js"
import type { ApprovalDecision, ApprovalHandler, PendingToolCallInfo } from "../../Tambo.js"
import { CallbackError } from "../../TamboError.js"
import type * as ToolExecutor from "../../ToolExecutor.js"
import type * as Types from "../../Types.js"
import * as Callbacks from "../callbacks.js"
import type { Env } from "./env.js"
import type { RunState } from "./state.js"

/** A call's decision; a handler that went wrong denies the call, with why. @internal */
export type Decision = ApprovalDecision | CallbackError

/**
 * Registers the approvals a round waits for, in the scope of the round's
 * stream: done before the round's CLIENT_APPROVAL_REQUESTED events go out, so
 * an approval sent as soon as one is seen finds its call, and undone when
 * the stream ends however it ends (a consumer that stops at a request
 * included), so no decision can reach a round that is gone; nor one whose
 * run is being cancelled (`cancelRun`, not yet ended). The handle
 * waits for each decision and forgets the calls once decided.
 *
 * @internal
 */
export const awaitHuman = (
  env: Env,
  run: RunState,
  needing: ReadonlyArray<PendingToolCallInfo>
): Effect.Effect<Effect.Effect<ReadonlyArray<readonly [string, Decision]>>, never, Scope.Scope> => {
  const forget = (registered: ReadonlyArray<readonly [PendingToolCallInfo, Deferred.Deferred<ApprovalDecision>]>) =>
    Effect.sync(() => {
      for (const [info, deferred] of registered) env.approvals.forget(info.threadId, info.toolCallId, deferred)
    })
  return Effect.map(
    Effect.acquireRelease(
      Effect.forEach(needing, (info) =>
        Effect.map(Deferred.make<ApprovalDecision>(), (deferred) => {
          // A run being cancelled takes no decision: its round ends once the server was told.
          env.approvals.register(info.threadId, info.toolCallId, deferred, () => run.cancelledWith === undefined)
          return [info, deferred] as const
        })),
      forget
    ),
    (registered) =>
      Effect.forEach(registered, ([info, deferred]) =>
        Effect.map(Deferred.await(deferred), (decision) => [info.toolCallId, decision] as const), {
        concurrency: "unbounded"
      }).pipe(Effect.ensuring(forget(registered)))
  )
}

/** Whether a handler's answer is a decision: a JavaScript handler may return anything, or nothing. */
const isDecision = (answer: unknown): answer is ApprovalDecision =>
  Predicate.isRecord(answer) && typeof answer.approved === "boolean"

/** The handler's decisions, concurrently; an answer that is no decision denies the call. @internal */
export const byHandler = (
  handler: ApprovalHandler,
  needing: ReadonlyArray<PendingToolCallInfo>
): Effect.Effect<ReadonlyArray<readonly [string, Decision]>> =>
  Effect.forEach(
    needing,
    (info) =>
      Effect.map(
        Effect.merge(Callbacks.runCallback(() => handler(info), Callbacks.approvalHandlerFailed(info.toolName))),
        (answer): readonly [string, Decision] => [
          info.toolCallId,
          answer instanceof CallbackError || isDecision(answer)
            ? answer
            : Callbacks.approvalHandlerGaveNoDecision(info.toolName, answer)
        ]
      ),
    { concurrency: "unbounded" }
  )

/** The round's calls split by their decisions: error results for the denied, the rest to run. @internal */
export const apply = (
  calls: ReadonlyArray<Events.PendingToolCall>,
  decisions: ReadonlyMap<string, Decision>
): { readonly denied: ReadonlyArray<Types.ToolResultContent>; readonly toRun: ReadonlyArray<ToolExecutor.ToolCall> } => {
  const denied: Array<Types.ToolResultContent> = []
  const toRun: Array<ToolExecutor.ToolCall> = []
  for (const call of calls) {
    const decision = decisions.get(call.toolCallId)
    if (decision instanceof CallbackError) {
      denied.push(Tool.errorResult(call.toolCallId, decision.message))
    } else if (decision !== undefined && !decision.approved) {
      denied.push(
        Tool.errorResult(
          call.toolCallId,
          `The user denied this call of ${call.toolName}${decision.reason === undefined ? "" : `: ${decision.reason}`}`
        )
      )
    } else {
      const args = decision?.approved === true && decision.args !== undefined ? decision.args : call.arguments
      toRun.push({ toolCallId: call.toolCallId, toolName: call.toolName, args })
    }
  }
  return { denied, toRun }
}
