/**
 * A run's end, however it ended: its last chunks are in the store, a run
 * still going on the server is cancelled, the thread is marked cancelled or
 * errored (the calls the server still waits on stay pending), and the store
 * is reconciled with the server's thread.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as ClientState from "../../ClientState.js"
import { isRetryable, isTamboError } from "../../TamboError.js"
import { withStranded } from "../agui/stranded.js"
import { mayHaveReachedServer } from "../http/connectionFailure.js"
import * as Reconcile from "../reconcile.js"
import * as Cancel from "./cancel.js"
import * as Env from "./env.js"
import * as Landed from "./landed.js"
import * as Lock from "./lock.js"
import type * as Transport from "../../TamboTransport.js"
import type * as Types from "../../Types.js"
import type { RunState } from "./state.js"
import { forgetTakenRound } from "./toolRound.js"
import { fetchIfHeld, forgetIfGone, maybeName, readAtRunEnd } from "./threads.js"

interface RunFailure {
  readonly message: string
  readonly code: string
  readonly status?: number
  readonly isRetryable: boolean
}

/**
 * What the thread records of a run's failure. Interruption, an early stop and a cancellation
 * leave the thread cancelled (`undefined`), not errored; any other failure, a defect included,
 * is an error.
 */
const failureOf = (exit: Exit.Exit<unknown, unknown>): RunFailure | undefined =>
  Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)
    ? undefined
    : Option.match(Cause.failureOption(exit.cause), {
      onNone: () => ({ message: Cause.pretty(exit.cause).split("\n")[0] ?? "The run failed", code: "Defect", isRetryable: false }),
      onSome: (failure) =>
        !isTamboError(failure)
          ? { message: String(failure), code: "Unknown", isRetryable: false }
          : failure._tag === "RunCancelledError"
          ? undefined
          : {
            message: failure.message,
            code: failure._tag,
            ...("status" in failure && typeof failure.status === "number" ? { status: failure.status } : {}),
            isRetryable: isRetryable(failure)
          }
    })

/**
 * After a run on a thread the server knows: the store takes the server's copy of its thread
 * (see Reconcile), also when the run never started there (refused, or cancelled before the
 * server named it): what the run showed (the user's message) goes. Not when the server could
 * not be reached, nor when the run failed before it recorded anything; a request whose
 * connection broke once it went out may have reached the server, whose thread then tells.
 */
const reconcile = (env: Env.Env, run: RunState, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> => {
  const threadId = run.threadId
  const started = (run.runId ?? run.lastRunId) !== undefined
  // Refused before the server took anything of the run: the thread there is as it was (see
  // withdrawUnsent), and a read would wait for the credentials the run has none of.
  if (started && run.refused && env.options.reconcileAfterRun !== false && !ClientState.isLocalThreadId(threadId)) {
    return reconcileOnceCredentialed(env, run)
  }
  return env.options.reconcileAfterRun === false || ClientState.isLocalThreadId(threadId) ||
      (!started && run.refused) ||
      (!started && Exit.isFailure(exit) && Option.exists(
        Cause.failureOption(exit.cause),
        (error) =>
          isTamboError(error) &&
          ((error._tag === "TransportError" && !mayHaveReachedServer(error)) || error._tag === "CallbackError")
      ))
    ? Effect.void
    : Reconcile.reconcileThread(
      readAtRunEnd(
        env,
        threadId,
        Effect.map(Env.withRunCredentials(run, (c) => env.transport.retrieveThread(c, threadId)), withoutOwnLock(run))
      ),
      // A thread deleted meanwhile (by another client) leaves the store: no run of this client
      // can be on it but this one, which is ending.
      (error) =>
        Effect.flatMap(
          forgetIfGone(env, threadId, error),
          (forget) =>
            forget.length === 0
              ? Effect.void
              : Effect.zipRight(Env.record(env, threadId, forget), Env.threadLeft(env, threadId))
        )
    ).pipe(Effect.withParentSpan(run.span))
}

/**
 * The server's thread as the run's end takes it: one whose current run is the step this run saw
 * finish is idle. The API may let go of a step's lock a moment after its end, and the store would
 * show that run still going, as another client's, until the thread is read again.
 */
const withoutOwnLock = (run: RunState) => (remote: Transport.ThreadWithMessages): Transport.ThreadWithMessages =>
  run.finished && run.lastRunId !== undefined && remote.currentRunId === run.lastRunId
    ? { ...remote, runStatus: "idle", currentRunId: undefined }
    : remote

/**
 * A run that ended while its last request waited for new credentials after a 401 (stopped, or the
 * exchange failed), after the server took some of it: its end does not wait for them to read the
 * thread (a Stop would wait for the token endpoint), and the store still holds the run's own ids
 * (its user's message) where the server has others. The thread is read in the background once
 * those credentials come (a failed exchange reads nothing) and the run let go of its thread, as
 * `fetchThread` reads it: a run that took the thread since, or its leaving the store, wins.
 * Bounded by the exchange's and the read's own timeouts; the service's scope ends it.
 */
const reconcileOnceCredentialed = (env: Env.Env, run: RunState): Effect.Effect<void> => {
  const threadId = run.threadId
  return Effect.gen(function* () {
    yield* run.auth.credentials
    yield* Lock.done(run)
    // The run's finalizer marks the thread's epoch right after it lets go: the read is sent after.
    yield* Effect.yieldNow()
    yield* fetchIfHeld(env, threadId, Env.withRunCredentials(run, (c) => env.transport.retrieveThread(c, threadId)))
  }).pipe(
    Effect.withParentSpan(run.span),
    Effect.ignore,
    Effect.forkIn(env.scope),
    Effect.asVoid
  )
}

/**
 * The run's message was refused before anything answered it: its first request failed (an HTTP
 * error, a connection that failed or never answered) before the server named its run and before
 * any event came. Neither the API (which stores the message once it opened its response) nor an
 * agent took anything of it. A cancellation is no refusal: it ends as a stopped run does, unless
 * the API refused the request while the cancellation waited for its answer (the run ends
 * cancelled, and its message goes as a refused one does, on a new conversation as on a thread).
 */
const refusedUnanswered = (run: RunState, exit: Exit.Exit<unknown, unknown>): boolean =>
  run.start._tag === "Message" && run.steps === 0 && Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause) &&
  Option.exists(
    Cause.failureOption(exit.cause),
    (error) => isTamboError(error) && (error._tag !== "RunCancelledError" || run.refusedOnceCancelled)
  )

/**
 * A run whose last request the server (or the agent) did not take: what the thread shows of it
 * goes, so the user's message is in one place, the caller's, who may send it again. That is a
 * run that failed for want of credentials (the API answered its request 401 and a new token was
 * refused, or none could be had, or the API refused the new token too), or ended while it waited
 * for them after a 401 (cancelled), and a message refused before anything answered it (see
 * `refusedUnanswered`), on a new conversation or an agent's thread as on a server's, and a new
 * conversation's message no thread of the server holds once a Stop cut the search for where it
 * landed, or stopped the run before anything answered its request (see `Landed.findOrWithdraw`),
 * however the run was stopped. What the
 * thread shows of it is the user's message, the tool results it carried and a new conversation's
 * initial messages. On a server's thread a read of it takes them away too, but needs credentials
 * or a server to answer, so this does not wait for it; the calls those results answer stay
 * pending with them (see `awaiting`). When the server took nothing of the run at all, its
 * thread's fields are as they were before it (not cancelled, not failed, not updated).
 */
const withdrawUnsent = (env: Env.Env, run: RunState, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> =>
  Effect.suspend(() => {
    const unsent = run.unsent
    const threadId = run.threadId
    // A 401 the run's failure: the request sent again with a new token was refused as well.
    const refused = Exit.isFailure(exit) && Option.exists(
      Cause.failureOption(exit.cause),
      (error) =>
        isTamboError(error) && (error._tag === "AuthError" || (error._tag === "ApiError" && error.status === 401))
    )
    const unauthorized = (refused || run.refused) && env.transport.conversationFromStore !== true &&
      !ClientState.isLocalThreadId(threadId)
    if (unsent === undefined || !(unauthorized || run.landedNowhere || refusedUnanswered(run, exit))) return Effect.void
    Landed.noteWithdrawn(env, run, exit)
    const withdrawn = new Set([...unsent.initialIds, ...(unsent.messageId === undefined ? [] : [unsent.messageId])])
    const results = new Set(unsent.toolUseIds)
    const isUnsent = (message: Types.TamboThreadMessage) =>
      withdrawn.has(message.id) ||
      (message.content.length > 0 &&
        message.content.every((block) => block.type === "tool_result" && results.has(block.toolUseId)))
    const before = (run.runId ?? run.lastRunId) === undefined || env.transport.conversationFromStore === true
      ? run.threadBefore
      : undefined
    return Effect.flatMap(Env.record(env, threadId, []), (state) => {
      if (state === undefined || !state.thread.messages.some(isUnsent)) return Effect.void
      const { lastRunError: _, ...thread } = state.thread
      const messages = state.thread.messages.filter((message) => !isUnsent(message))
      // The agent's calls those results answered wait for an answer again, as they did before.
      const pending = env.transport.conversationFromStore === true
        ? withStranded(messages, state.pendingToolCalls)
        : state.pendingToolCalls
      return Env.record(env, threadId, [{
        type: "RECONCILE_THREAD",
        threadId,
        thread: {
          ...(before === undefined ? state.thread : thread),
          ...(before === undefined ? {} : {
            updatedAt: before.updatedAt,
            lastRunCancelled: before.lastRunCancelled,
            ...(before.lastRunError === undefined ? {} : { lastRunError: before.lastRunError })
          }),
          messages
        },
        pendingToolCallIds: pending.map((call) => call.toolCallId),
        ...(state.lastCompletedRunId === undefined ? {} : { lastCompletedRunId: state.lastCompletedRunId })
      }, ...(pending === state.pendingToolCalls ? [] : [{
        type: "UPDATE_THREAD" as const,
        threadId,
        patch: { pendingToolCalls: pending }
      }])])
    })
  })

/**
 * A new thread's run that ended after its answer's headers named the server's thread, before a
 * RUN_STARTED did, or whose answer was lost and whose message was found in a thread of the server
 * (`Landed.adopt`): the server made that thread and stored the user's message in it, so the run's
 * thread becomes it, as a RUN_STARTED would have made it (an app holding the local id finds it
 * through `namedLocals`). The end is then recorded there and reconciled with the server's copy,
 * and the next message goes on the same thread. Not for a transport that holds the conversation
 * in the client (AG-UI): it names the thread itself, before any request, and no server holds
 * anything under that name.
 */
const moveToNamedThread = (env: Env.Env, run: RunState): Effect.Effect<void> =>
  Effect.suspend(() => {
    const from = run.threadId
    const threadId = run.serverThreadId
    const runId = run.runId ?? run.lastRunId
    if (
      env.transport.conversationFromStore === true || !ClientState.isLocalThreadId(from) ||
      threadId === undefined || runId === undefined || ClientState.isLocalThreadId(threadId)
    ) return Effect.void
    run.threadId = threadId
    if (!run.locked) Lock.moveTo(env, run, threadId)
    if (from.startsWith(ClientState.LOCAL_THREAD_PREFIX)) env.namedLocals.set(from, threadId)
    run.span.attribute("tambo.thread_id", threadId)
    run.span.attribute("tambo.run_id", runId)
    return Effect.zipRight(
      Env.record(env, threadId, [{
        type: "EVENTS",
        threadId: from,
        events: [{ type: "RUN_STARTED", threadId, runId }],
        at: run.clock.unsafeCurrentTimeMillis(),
        tools: run.tools
      }]),
      Effect.sync(() => Lock.shown(env, run))
    )
  })

/**
 * A finished AG-UI run may still leave calls without a result: a call of a tool the client did
 * not offer (no tool round runs it), or one a `MESSAGES_SNAPSHOT` brings in or strips of its
 * result. They wait as a failed run's do (see agui/stranded.ts), so the next message answers
 * each, rather than sending a call no result follows, which agents refuse.
 */
const keepUnansweredPending = (env: Env.Env, run: RunState, last: ClientState.ThreadState | undefined) => {
  if (env.transport.conversationFromStore !== true || last === undefined) return Effect.void
  const pending = withStranded(last.thread.messages, last.pendingToolCalls)
  return pending === last.pendingToolCalls
    ? Effect.void
    : Env.record(env, run.threadId, [{ type: "UPDATE_THREAD", threadId: run.threadId, patch: { pendingToolCalls: pending } }])
}

/**
 * Records how the run ended (whatever ended the stream: its end, interruption, a consumer that
 * stops reading, a failure), cancelling a run still going on the server. A run stopped here whose
 * `DELETE` the server answered 404 had ended there: the thread is not marked cancelled.
 *
 * @internal
 */
export const recordEnd = (env: Env.Env, run: RunState, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> =>
  Effect.gen(function* () {
    // The run's last chunks may wait for the store's next batch: the run ends once
    // it is written, so whoever sees the run end sees all of it in the store. Waiting
    // for the batch, rather than writing now, lets runs that end together share it.
    const last = yield* Env.record(env, run.threadId, [])
    const at = yield* Env.now
    // A run whose last event came completed on the server, also when its caller stopped reading then.
    const completed = Exit.isSuccess(exit) ? run.finished : Cause.isInterruptedOnly(exit.cause) && Cancel.completed(run)
    if (completed) {
      yield* keepUnansweredPending(env, run, last)
      return yield* maybeName(env, run.threadId, run.span)
    }
    // A Stop or an interruption that cut the search for where a new conversation's message landed,
    // or an interruption before anything answered its request.
    yield* Effect.withParentSpan(Landed.findCut(env, run, exit), run.span)
    yield* moveToNamedThread(env, run)
    // A run stopped before the server's answer named its thread here, or one that followed the run
    // creating it, tells its caller the thread it ended on.
    Lock.tellThread(run, run.threadId)
    // The client holds an AG-UI agent's conversation: a call the failed run left without a
    // result waits for one as a stopped round's do (see agui/stranded.ts).
    const awaiting = env.transport.conversationFromStore === true && last !== undefined
      ? withStranded(last.thread.messages, run.awaiting)
      : run.awaiting
    if (run.runError !== undefined) {
      if (awaiting.length > 0) {
        yield* Env.record(env, run.threadId, [{ type: "UPDATE_THREAD", threadId: run.threadId, patch: { pendingToolCalls: awaiting } }])
      }
      return
    }
    const answer = yield* Effect.withParentSpan(Cancel.onServer(env, run), run.span)
    if (Cancel.leftToNotice(run, exit)) Lock.closedUnnoticed(env, run)
    const error = failureOf(exit)
    // A run stopped here that the server had ended itself (its DELETE found no run) is not cancelled there.
    const stopped = answer === "gone" ? "ended" : "cancelled"
    // A run the server knew ends there too: the next run's previousRunId must name it.
    const ended = run.runId !== undefined && !ClientState.isLocalThreadId(run.threadId) ? run.runId : undefined
    const pendingToolCalls = awaiting.length === 0 ? {} : { pendingToolCalls: awaiting }
    yield* Env.record(env, run.threadId, [
      ...(ended === undefined
        ? []
        : [{ type: "SET_LAST_COMPLETED_RUN_ID", threadId: run.threadId, runId: ended } as const]),
      error === undefined
        ? { type: "RUN_ENDED_LOCALLY", threadId: run.threadId, outcome: stopped, ...pendingToolCalls, at }
        : { type: "RUN_ENDED_LOCALLY", threadId: run.threadId, outcome: "error", error, ...pendingToolCalls, at }
    ])
  }).pipe(Effect.zipRight(Effect.suspend(() =>
    withdrawUnsent(env, run, exit).pipe(
      Effect.zipRight(reconcile(env, run, exit)),
      Effect.zipRight(forgetTakenRound(env, run))
    )
  )))
