/**
 * Cancelling a run: on the server (`DELETE`, best effort, bounded), and in
 * the client (the request in flight is aborted, a tool round waiting on the
 * run stops). `cancelRun` of the service finds the run through its entry.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as ClientState from "../../ClientState.js"
import { isTamboError, RunCancelledError, type TamboError } from "../../TamboError.js"
import * as Env from "./env.js"
import * as Landed from "./landed.js"
import * as Threads from "./threads.js"
import type { RunState } from "./state.js"

/** How long a cancellation waits for the server (to name the run, then to take the `DELETE`). @internal */
export const cancelTimeout = Duration.seconds(3)

/**
 * What became of a cancellation's `DELETE`: `"unsent"` (the server had not named the run, or its
 * step had ended), `"gone"` (404: the run is no longer the thread's current one, the server ended
 * it itself), or `"sent"` (the server took it, or any other answer: a failure, no answer in time).
 *
 * @internal
 */
export type ServerAnswer = "unsent" | "gone" | "sent"

/**
 * Tells the server to cancel the current step's run, once, if it named it and it has not ended.
 * Once told, a later call waits for that `DELETE`'s answer (or its end): a second Stop, and the
 * run's end, which reads the thread next, go on once the server took the cancellation. @internal
 */
export const onServer = (env: Env.Env, run: RunState): Effect.Effect<ServerAnswer> => {
  if (run.cancelSent !== undefined) return Deferred.await(run.cancelSent)
  const threadId = ClientState.isLocalThreadId(run.threadId) ? run.serverThreadId : run.threadId
  const runId = run.runId
  if (runId === undefined || threadId === undefined || run.finished) return Effect.succeed("unsent")
  const sent = run.cancelSent = Deferred.unsafeMake<ServerAnswer>(FiberId.none)
  // Interruptible: this runs in finalizers, where an uninterruptible request would outlast the
  // bound (a server that never answered held the run's end until the REST timeout).
  return Env.withRunCredentials(run, (c) => env.transport.cancelRun(c, threadId, runId)).pipe(
    Effect.interruptible,
    Effect.timeout(cancelTimeout),
    Effect.match({
      onSuccess: () => taken(run, "sent"),
      onFailure: (error): ServerAnswer => isGone(error) ? taken(run, "gone") : "sent"
    }),
    Effect.onExit((exit) => Deferred.done(sent, Exit.isSuccess(exit) ? exit : Exit.succeed("sent")))
  )
}

/** The server took the `DELETE`: the run holds the thread's lock there no more. */
const taken = (run: RunState, answer: ServerAnswer): ServerAnswer => {
  run.deleteTaken = true
  return answer
}

/**
 * The run's last request may have left the server a run holding the thread's lock until the server
 * notices its closed connection (the API: when that run next writes). The request went out, and
 * nothing ended that run there: not its last event (`RUN_FINISHED`, `RUN_ERROR`), not an HTTP
 * error answering the request before it named a run, not a `DELETE` the server took, and the
 * server's threads did not show that it never got the request (see `Landed.findCut`).
 *
 * @internal
 */
export const leftToNotice = (run: RunState, exit: Exit.Exit<unknown, unknown>): boolean =>
  run.requestSent && !run.finished && !run.deleteTaken && !run.refused && !run.refusedOnceCancelled && !run.landedNowhere &&
  !(Exit.isFailure(exit) && Option.exists(Cause.failureOption(exit.cause), (error) => isRefusal(run, error)))

/** The API's answer to a `DELETE` of a run that is no longer the thread's current one. */
const isGone = (error: { readonly _tag: string; readonly status?: number | undefined }): boolean =>
  error._tag === "ApiError" && error.status === 404

/** Completed once the current step ended, however it ended; made when first needed. @internal */
const stepEndSignal = (run: RunState): Deferred.Deferred<void> =>
  run.stepEnded ??= Deferred.unsafeMake<void>(FiberId.none)

/**
 * The current step ended, or its last event was passed on to the run's consumer: a cancellation
 * waiting for it waits no more, also one that starts waiting later in the step. @internal
 */
export const stepEnded = (run: RunState): void => {
  Deferred.unsafeDone(stepEndSignal(run), Exit.void)
}

/** Completed by a cancellation; made when first needed. @internal */
export const cancelledSignal = (run: RunState): Deferred.Deferred<never, RunCancelledError> =>
  run.cancelled ??= Deferred.unsafeMake<never, RunCancelledError>(FiberId.none)

/**
 * The run's last event came: its last step's RUN_FINISHED, with no call left for the client
 * (neither paused for nor waiting on a tool round or on the caller's results). The server
 * completed the run: nothing of it is left to cancel. @internal
 */
export const completed = (run: RunState): boolean =>
  run.finished && run.runError === undefined && run.protocolError === undefined && run.pending.length === 0 &&
  run.awaiting.length === 0 && !run.pausedForCaller

/** The server ended the run: it completed (see `completed`), or failed with a RUN_ERROR. */
const endedOnServer = (run: RunState): boolean => run.runError !== undefined || completed(run)

/**
 * Cancels the run: the server hears of it first (DELETE), then the stream closes: a closed
 * connection alone would also cancel, but only once the server next writes. Once its stream
 * ended (it completed, failed, was stopped, or handed its calls to its caller), this waits for
 * the run's end to be recorded. A run the server ended (see `endedOnServer`) is not cancelled:
 * it ends as the server ended it; before its stream ended, its end waits for its consumer, who
 * may be the caller. So is a run the server ended while the cancellation was on its way: its
 * last event came meanwhile, or the server answers the `DELETE` 404 and the event comes within
 * `cancelTimeout` (else the request is aborted: a server that keeps it open ends cancelled).
 *
 * @internal
 */
export const cancel = (env: Env.Env, run: RunState): Effect.Effect<void> =>
  Effect.withFiberRuntime((caller) => {
    // A run whose stream ended, however, is recording its end (and tells the server itself if its
    // run goes on there): nothing is left to cancel in the client, only that end to wait for. A
    // run paused for its caller too: its server's run ended at the pause, its calls wait there.
    if (run.ending) return run.entry.done
    if (run.cancelledWith === undefined && endedOnServer(run)) return Effect.void
    // Decided once: a second Stop waits for the first one's decision.
    if (run.cancelling !== undefined) return awaitedBy(run, caller, Effect.asVoid(Deferred.await(run.cancelling)))
    const decided = run.cancelling = Deferred.unsafeMake<boolean>(FiberId.none)
    // Built when cancelled: the ids are the ones known by then.
    run.cancelledWith = new RunCancelledError({
      reason: "CancelledByClient",
      message: "The run was cancelled",
      threadId: run.threadId,
      ...(run.runId === undefined ? {} : { runId: run.runId })
    })
    // A request sent and not answered yet: the server names its run as it answers, in a
    // moment; wait for that (bounded) to tell it, rather than leave it a closed connection.
    const untilNamed = run.runId === undefined && run.awaitingAnswer
      ? Effect.ignore(
        Effect.timeout(Deferred.await(run.answeredSignal ??= Deferred.unsafeMake<void>(FiberId.none)), cancelTimeout)
      )
      : Effect.void
    // Marked cancelled at once (a decision sent from now on is refused); the rest goes whole (the
    // DELETE, then the run's own end), whatever becomes of its caller meanwhile: it runs in the
    // client's scope.
    return Effect.flatMap(
      Effect.forkIn(
        Effect.zipRight(
          Effect.zipRight(untilNamed, Effect.suspend(() => landedUnnamed(env, run))),
          Effect.flatMap(Effect.suspend(() => onServer(env, run)), (answer) =>
            Effect.flatMap(endedMeanwhile(run, answer), (ended) => {
              if (ended) {
                run.cancelledWith = undefined
                return Deferred.succeed(decided, false)
              }
              return Effect.zipRight(
                Deferred.succeed(decided, true),
                Effect.zipRight(Deferred.fail(cancelledSignal(run), run.cancelledWith!), Effect.suspend(() => run.abortRequest))
              )
            }))
        ),
        env.scope
      ),
      (decision) => awaitedBy(run, caller, Fiber.join(decision))
    )
  })

/**
 * The runs a fiber reads, as their consumer takes an event, while they hold their thread, the
 * last one read first; a fiber forked from it (a run its consumer starts, a timeout) inherits
 * them: it runs while that consumer waits, and a run of them ends only once that consumer reads
 * on. What a forked fiber reads is not its parent's.
 */
const readingRuns = FiberRef.unsafeMake<ReadonlyArray<RunState>>([], { join: (parent) => parent })

/** The current fiber read the run last: nothing to mark. @internal */
export const isReading = (run: RunState): boolean =>
  Option.exists(Fiber.getCurrentFiber(), (fiber) => fiber.getFiberRef(readingRuns)[0] === run)

/** Marks the current fiber as the run's reader (see `readingRuns`). @internal */
export const reading = (run: RunState): Effect.Effect<void> =>
  FiberRef.update(readingRuns, (runs) => [run, ...runs.filter((other) => other !== run && !other.released)])

/**
 * `fiber` reads the run, or was forked from its reader as that reader took an event: a wait of
 * `fiber` for the run is one its consumer cannot end. @internal
 */
export const readsOrWaitsFor = (fiber: Fiber.RuntimeFiber<unknown, unknown>, active: Env.ActiveRun): boolean =>
  fiber.getFiberRef(readingRuns).some((run) => run.entry === active)

/**
 * A new conversation's request the server did not answer within the Stop's bound: the server may
 * have made a thread, stored the message and started a run there, none of which the client can
 * name. The request is aborted first (nothing of it reaches the server later), then the thread the
 * message landed in is looked for (within the `DELETE`'s bound, see `Landed.find`): found, the
 * run's thread is that one, and the `DELETE` that follows cancels its run if it still goes on.
 * None holds it: the server got nothing, and the run's end withdraws the message, as a refused
 * one's (see `Landed.findOrWithdraw`). No answer, or several: the Stop goes on as before.
 */
const landedUnnamed = (env: Env.Env, run: RunState): Effect.Effect<void> => {
  if (
    run.runId !== undefined || !run.awaitingAnswer || run.existing !== undefined || run.sent === undefined ||
    env.transport.conversationFromStore === true || !ClientState.isLocalThreadId(run.threadId) ||
    run.serverThreadId !== undefined
  ) return Effect.void
  return Effect.zipRight(run.abortRequest, Landed.findOrWithdraw(env, run))
}

/**
 * `decision` as `caller` awaits it. The run's reader (a Stop run by the run's own consumer, as
 * it takes an event, see `readsOrWaitsFor`) goes on once the decision waits only for that reader
 * to take the step's last event: waiting there, it would hold that event back until the bound,
 * and the run would end cancelled though the server ended it. The run reads on, and ends as the
 * decision says.
 */
const awaitedBy = (run: RunState, caller: Fiber.RuntimeFiber<unknown, unknown>, decision: Effect.Effect<void>): Effect.Effect<void> =>
  readsOrWaitsFor(caller, run.entry) ? Effect.raceFirst(decision, Deferred.await(awaitsReaderSignal(run))) : decision

const awaitsReaderSignal = (run: RunState): Deferred.Deferred<void> =>
  run.awaitsReader ??= Deferred.unsafeMake<void>(FiberId.none)

/**
 * The server ended the run while its cancellation was on its way: its last event came before
 * anything was sent, or the server answered the `DELETE` 404 and the step's last event comes
 * within `cancelTimeout`. Decided once that event was passed on to the run's consumer (within
 * the same bound): whoever cancelled sees the run's end in its events before `cancelRun`
 * resolves, and does not take it for a cancellation; that consumer itself, cancelling, goes on
 * as the wait starts (see `awaitedBy`) and takes the event next.
 */
const endedMeanwhile = (run: RunState, answer: ServerAnswer): Effect.Effect<boolean> => {
  if (answer === "sent" || (answer === "unsent" && !run.finished)) return Effect.succeed(false)
  Deferred.unsafeDone(awaitsReaderSignal(run), Exit.void)
  try {
    run.options.onStopAwaitsLastEvent?.()
  } catch {
    // The caller's listener, not the cancellation's failure.
  }
  return Effect.map(
    Effect.timeout(Deferred.await(stepEndSignal(run)), cancelTimeout).pipe(Effect.option),
    () => endedOnServer(run)
  )
}

/**
 * The run's failure once a cancellation was asked for: the cancellation, once decided, unless
 * the server ended the run meanwhile (then `otherwise`). @internal
 */
export const whenCancelled = <A>(
  run: RunState,
  cancelled: (error: RunCancelledError) => A,
  otherwise: () => A
): Effect.Effect<A> =>
  Effect.map(
    run.cancelling === undefined ? Effect.succeed(true) : Deferred.await(run.cancelling),
    (isCancelled) => isCancelled && run.cancelledWith !== undefined ? cancelled(run.cancelledWith) : otherwise()
  )

/** The request's response came, or its step ended: a cancellation waits no more. @internal */
export const answered = (run: RunState): void => {
  run.awaitingAnswer = false
  if (run.answeredSignal !== undefined) Deferred.unsafeDone(run.answeredSignal, Exit.void)
}

/**
 * Takes the abort of the request starting now: `cancelRun` aborts the request in flight, and
 * no fiber watches for the cancellation. A request about to start after it is not sent.
 *
 * @internal
 */
export const registerAbort = (run: RunState) => (abort: Effect.Effect<void>): Effect.Effect<void, RunCancelledError> =>
  Effect.suspend(() => {
    if (run.cancelledWith !== undefined) return Effect.zipRight(abort, Effect.fail(run.cancelledWith))
    run.abortRequest = abort
    run.awaitingAnswer = true
    run.requestSent = true
    run.refused = false
    return Effect.void
  })

/**
 * The request's failure is the API's refusal of it: an HTTP error (a `409` too) answered it before
 * the server named a run, so the server took nothing of it. @internal
 */
export const isRefusal = (run: RunState, error: unknown): boolean =>
  run.runId === undefined && isTamboError(error) &&
  (error._tag === "ApiError" || error._tag === "RunConflictError") && error.status !== undefined

/** The run's own failure once it was cancelled: what an aborted request's failure means. @internal */
export const orCancellation = (run: RunState, error: TamboError): TamboError => run.cancelledWith ?? error

/**
 * `effect`, what a run does before it takes its thread (it waits for its first credentials, it
 * reads a thread the store does not hold, it waits for the thread's run to end), ended by
 * `cancelRun` of the thread it was asked for: the run then fails cancelled, before it records or
 * sends anything. `thread` as a function: where the run waits may change meanwhile (a run on the
 * placeholder that `startNewThread` moves to a local thread of its own).
 *
 * @internal
 */
export const whileStarting = <A, E>(
  env: Env.Env,
  thread: string | (() => string),
  asked: number,
  effect: Effect.Effect<A, E>
): Effect.Effect<A, E | RunCancelledError> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const signal = Deferred.unsafeMake<never, RunCancelledError>(FiberId.none)
      const threadId = typeof thread === "string" ? thread : thread()
      const starting = env.starting.get(threadId) ?? new Map()
      env.starting.set(threadId, starting.set(signal, asked))
      return signal
    }),
    (signal) =>
      Effect.zipLeft(
        Effect.raceFirst(effect, Deferred.await(signal)),
        // A cancellation that came once `effect` won, before this fiber went on: cancelled all the same.
        Effect.flatMap(Deferred.poll(signal), Option.getOrElse(() => Effect.void))
      ),
    (signal) =>
      Effect.sync(() => {
        // A run startNewThread moved off the placeholder meanwhile waits under its local thread.
        const threadId = typeof thread === "string" ? thread : thread()
        const starting = env.starting.get(threadId)
        starting?.delete(signal)
        if (starting?.size === 0) env.starting.delete(threadId)
      })
  )

/**
 * Ends the runs starting on `threadId` (see `whileStarting`); with `askedBefore`, only the runs
 * asked for before the run of that number. Whether it ended any. @internal
 */
export const cancelStarting = (env: Env.Env, threadId: string, askedBefore?: number): Effect.Effect<boolean> =>
  // In one step: an interrupt of the caller cannot leave runs taken from the map and not ended.
  Effect.sync(() => {
    const starting = env.starting.get(threadId)
    if (starting === undefined) return false
    let ended = false
    const cancelled = Exit.fail(new RunCancelledError({ reason: "CancelledByClient", message: "The run was cancelled", threadId }))
    for (const [signal, asked] of starting) {
      if (askedBefore !== undefined && asked >= askedBefore) continue
      starting.delete(signal)
      Deferred.unsafeDone(signal, cancelled)
      ended = true
    }
    if (starting.size === 0) env.starting.delete(threadId)
    return ended
  })

/** `DELETE`s the run; one the server ended already (404) is cancelled as far as anyone can tell. */
const cancelOnServerById = (env: Env.Env, threadId: string, runId: string): Effect.Effect<void, TamboError> =>
  Env.withCredentials(env, (c) => env.transport.cancelRun(c, threadId, runId)).pipe(
    Effect.catchIf(isGone, () => Effect.void)
  )

/**
 * Cancels the server's active run of a thread the store shows running without a run of this
 * client on it, then reads the thread. A thread the server no longer has (or no longer runs on)
 * has nothing to cancel.
 */
const cancelShown = (env: Env.Env, threadId: string, onlyRunId: string | undefined): Effect.Effect<void, TamboError> =>
  Effect.gen(function* () {
    const remote = yield* Env.withCredentials(env, (c) => env.transport.retrieveThread(c, threadId))
    const runId = remote.runStatus === "idle" ? undefined : remote.currentRunId
    if (runId !== undefined && (onlyRunId === undefined || runId === onlyRunId)) yield* cancelOnServerById(env, threadId, runId)
    yield* Threads.fetchThread(env, threadId)
  }).pipe(
    Effect.catchIf((error) => error._tag === "ApiError" && (error.status === 403 || error.status === 404), () => Effect.void)
  )

/**
 * Cancels the active run of a thread (default: the current one): the run in this client (also one
 * still waiting to start there), else what the store shows running (a quiet no-op when idle): a run
 * whose id it holds, or another client's run a read of the thread showed, whose id the server
 * gives (then the thread is read again, so the store shows it as the server has it). With `runId`,
 * only the run of that id: another one on the thread (one that took it once that run let go) is
 * left alone.
 *
 * @internal
 */
export const cancelThread = (env: Env.Env, threadId?: string, onlyRunId?: string): Effect.Effect<void, TamboError> =>
  Effect.gen(function* () {
    const id = Env.savedThreadId(env, threadId ?? (yield* env.store.currentThreadId))
    // A run still waiting to start there has no run id yet: only a cancellation of any run ends it.
    const endedHere = onlyRunId === undefined && (yield* cancelStarting(env, id))
    // The placeholder, or a local thread, is the thread of the run creating it: its lock key, or the
    // thread the server named for it, with the runs waiting there.
    const key = Env.lockKeyOf(env, id)
    const endedUnderKey = onlyRunId === undefined && key !== id && (yield* cancelStarting(env, key))
    const local = env.activeRuns.get(key)
    if (local !== undefined) {
      // The runs following it (asked for on the new conversation it creates the thread of) wait under its lock key.
      if (onlyRunId === undefined && local.lockKey() !== key) yield* cancelStarting(env, local.lockKey())
      if (onlyRunId === undefined || local.ranAs(onlyRunId)) yield* local.cancel
      return
    }
    // This client's runs on the thread were the ones starting: what the store shows is another's.
    if (endedHere || endedUnderKey) return
    const held = yield* env.store.getThread(id)
    const streaming = held?.streaming
    const runId = streaming?.status === "idle" ? undefined : streaming?.runId
    if (runId !== undefined) {
      if (onlyRunId === undefined || runId === onlyRunId) yield* cancelOnServerById(env, id, runId)
      return
    }
    // Another client's run (another tab's), as the last read of the thread showed it: the server
    // names it. A thread only this client holds has none.
    if (held !== undefined && held.thread.status !== "idle" && !ClientState.isLocalThreadId(id)) {
      yield* cancelShown(env, id, onlyRunId)
    }
  }).pipe(Effect.withSpan("Tambo.cancelRun", { attributes: { "tambo.thread_id": threadId ?? "current" } }))
