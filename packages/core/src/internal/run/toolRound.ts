/**
 * A tool round: the step paused for client-side tools
 * (`tambo.run.awaiting_input`); their calls are described, approved, run, and
 * their results recorded, then the run goes on with them (`next`). With
 * `autoExecuteTools: false` the stream ends with the calls to answer instead.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { ClientEvent, RunEvent } from "../../Tambo.js"
import { MaxStepsExceededError, type TamboError } from "../../TamboError.js"
import * as ToolExecutor from "../../ToolExecutor.js"
import type * as Types from "../../Types.js"
import * as Approval from "./approval.js"
import * as Cancel from "./cancel.js"
import * as Env from "./env.js"
import * as Pending from "./pending.js"
import type { RunState } from "./state.js"

/** An event of the client's own, with the run's thread as it stands. */
const clientEvent = (env: Env.Env, run: RunState, event: ClientEvent) =>
  // Read through the run's draft: its latest chunk may not be in the store yet.
  Effect.map(Env.record(env, run.threadId, []), (thread): RunEvent => ({
    event,
    threadId: run.threadId,
    snapshot: thread!.thread
  }))

/** Runs the approved calls, concurrently, each once per paused step (see ToolExecutor). */
const execute = (env: Env.Env, run: RunState, toRun: ReadonlyArray<ToolExecutor.ToolCall>) =>
  toRun.length === 0 ? Effect.succeed([]) : env.executor.execute(toRun, {
    ...(env.options.toolConcurrency === undefined ? {} : { concurrency: env.options.toolConcurrency }),
    ...(run.options.toolTimeout === undefined ? {} : { timeout: run.options.toolTimeout }),
    // The paused step names its calls' results; maxCalls counts across the whole run.
    ...(run.lastRunId === undefined ? {} : { threadId: run.threadId, runId: run.lastRunId }),
    callCounts: run.callCounts ??= ToolExecutor.makeCallCounts(),
    // Approval was decided before: each call's needsApproval is asked once, when it is described.
    approved: true
  }).pipe(Effect.withSpan("Tambo.executeTools", {
    attributes: { "tambo.thread_id": run.threadId, "tambo.run_id": run.lastRunId ?? "" }
  }))

/**
 * Lets go of the executor's results of the run's last round (see `RunState.round`): the server
 * took them. Until then the executor keeps them, so that a request sent again runs no tool twice.
 */
const forgetRound = (env: Env.Env, run: RunState): Effect.Effect<void> =>
  Effect.suspend(() => {
    const round = run.round
    run.round = undefined
    return round === undefined ? Effect.void : env.executor.forgetStep?.(round.threadId, round.step) ?? Effect.void
  })

/**
 * At the run's end, after the thread was read: the executor lets go of the last round's results
 * when the thread waits on none of its calls (the server took them, or another client answered
 * them). Calls it still waits on keep theirs.
 *
 * @internal
 */
export const forgetTakenRound = (env: Env.Env, run: RunState): Effect.Effect<void> =>
  Effect.suspend(() => {
    const round = run.round
    if (round === undefined) return Effect.void
    return Effect.flatMap(Env.record(env, round.threadId, []), (thread) => {
      const waiting = new Set(thread?.pendingToolCalls.map((call) => call.toolCallId))
      return round.toolCallIds.some((id) => waiting.has(id)) ? Effect.void : forgetRound(env, run)
    })
  })

/** @internal */
export const toolRound = (
  env: Env.Env,
  run: RunState,
  next: (results: ReadonlyArray<Types.ToolResultContent>) => Stream.Stream<RunEvent, TamboError>
): Effect.Effect<Stream.Stream<RunEvent, TamboError>, TamboError> =>
  Effect.gen(function* () {
    // The step paused again after the last round's results: the server took them.
    yield* forgetRound(env, run)
    const calls = run.pending
    run.pending = []
    run.awaiting = calls.map(({ toolCallId, toolName }) => ({ toolCallId, toolName }))
    // The app's approval predicates may never answer: a cancellation stops the round there too.
    const infos = yield* Effect.raceFirst(
      Pending.describe(env, run.threadId, calls),
      Deferred.await(Cancel.cancelledSignal(run))
    )
    if (!run.autoExecute) {
      // Manual execution: the stream ends with what the caller must answer (continueRun), which
      // may come at once, while this run still records its end.
      run.pausedForCaller = true
      return Stream.fromEffect(clientEvent(env, run, { type: "CLIENT_AWAITING_TOOL_RESULTS", pendingToolCalls: infos }))
    }
    run.steps++
    if (run.steps > run.maxSteps) {
      return yield* new MaxStepsExceededError({
        reason: "MaxSteps",
        message: `The run asked for more than ${run.maxSteps} tool rounds`,
        maxSteps: run.maxSteps,
        threadId: run.threadId,
        ...(run.lastRunId === undefined ? {} : { runId: run.lastRunId })
      })
    }
    const needing = infos.filter((info) => info.needsApproval)
    const handler = run.options.onApproval ?? env.options.onApproval
    const round = (byHuman: Effect.Effect<ReadonlyArray<readonly [string, Approval.Decision]>> | undefined) => {
      const requested = byHuman === undefined
        ? Stream.empty
        : Stream.fromIterable(needing).pipe(
          Stream.mapEffect((info) => clientEvent(env, run, { type: "CLIENT_APPROVAL_REQUESTED", ...info }))
        )
      const proceed = Effect.gen(function* () {
        const decisions = new Map(yield* (byHuman ?? Approval.byHandler(handler!, needing)))
        const { denied, toRun } = Approval.apply(calls, decisions)
        const executed = yield* execute(env, run, toRun)
        const byId = new Map<string, Types.ToolResultContent>()
        for (const result of [...denied, ...executed]) byId.set(result.toolUseId, result)
        const results = calls.flatMap((call) => {
          const result = byId.get(call.toolCallId)
          return result === undefined ? [] : [result]
        })
        const at = yield* Env.now
        run.unsent = { messageId: undefined, initialIds: [], toolUseIds: results.map((result) => result.toolUseId) }
        yield* Env.recordNow(env, run.threadId, [{ type: "TOOL_RESULTS", threadId: run.threadId, results, at }])
        // Until the server takes them, the results stay with the calls it waits on.
        run.awaiting = run.awaiting.map((call) => {
          const result = byId.get(call.toolCallId)
          return result === undefined ? call : { ...call, result }
        })
        run.runId = undefined
        if (run.lastRunId !== undefined && toRun.length > 0) {
          run.round = { threadId: run.threadId, step: run.lastRunId, toolCallIds: toRun.map((call) => call.toolCallId) }
        }
        return next(results)
      })
      // Tools and approvals run between two requests: a cancellation stops them too.
      return Stream.concat(
        requested,
        Stream.unwrap(Effect.raceFirst(Effect.withParentSpan(proceed, run.span), Deferred.await(Cancel.cancelledSignal(run))))
      )
    }
    if (handler !== undefined) return round(undefined)
    if (needing.length === 0) return round(Effect.succeed([]))
    // A human's approvals are awaited while the round's stream lasts: its end, however it comes, takes them back.
    return Stream.unwrapScoped(Effect.map(Approval.awaitHuman(env, run, needing), round))
  })
