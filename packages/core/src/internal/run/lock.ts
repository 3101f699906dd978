/**
 * One active run per thread in a client. A run holds its lock key from its
 * start and, once the server named its thread, that thread's id too; a new
 * thread's run may hold the placeholder (what a UI shows for a new
 * conversation) until the store shows that name (its next publication, not
 * the moment the run learns it), or `startNewThread` makes the placeholder a
 * new conversation again. What happens to a second run is its `onBusy`; a run
 * asked for on the placeholder meanwhile is a second run of that thread
 * (`RunState.follows`).
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import { isLocalThreadId, LOCAL_THREAD_PREFIX, PLACEHOLDER_THREAD_ID } from "../../ClientState.js"
import { type RunCancelledError, RunConflictError } from "../../TamboError.js"
import { cancelStarting, readsOrWaitsFor, whileStarting } from "./cancel.js"
import { type ActiveRun, type Env, newEpoch, nextLocal, tellLocalThread } from "./env.js"
import type { RunState } from "./state.js"

/** Completes once the run has let go of its thread. @internal */
export const done = (run: RunState): Effect.Effect<void> =>
  Effect.suspend(() =>
    run.released ? Effect.void : Deferred.await(run.releasedSignal ??= Deferred.unsafeMake<void>(FiberId.none))
  )

// A run still following the placeholder's run shares its lock key, not its placeholder.
const releasePlaceholder = (env: Env, run: RunState): void => {
  if (run.follows === undefined && env.placeholderOwner === run.lockKey) env.placeholderOwner = undefined
}

/**
 * A run that creates its thread: it records in the placeholder unless another new thread's run is
 * using it (or it was not asked for there), else in a local thread of its own (`given`: the one
 * `startNewThread` gave it before it started, its caller told then); its lock key is local until
 * the server names its thread. @internal
 */
export const takeNewThread = (env: Env, run: RunState, given?: string): void => {
  const key = given ?? `${LOCAL_THREAD_PREFIX}${nextLocal(env)}`
  const placeholder = env.placeholderOwner === undefined && run.requested === PLACEHOLDER_THREAD_ID
  run.lockKey = key
  run.threadId = placeholder ? PLACEHOLDER_THREAD_ID : key
  if (placeholder) {
    env.placeholderOwner = key
    env.placeholderRun = run
  } else {
    env.localRuns.set(key, run)
    if (given === undefined) tellLocalThread(run.options, key)
  }
}

/**
 * A run that follows the run creating its conversation's thread goes on the thread the server
 * named for it; if that run let go without one, this run creates the thread itself.
 */
const followed = (env: Env, run: RunState): void => {
  const leader = run.follows
  if (leader === undefined) return
  if (!isLocalThreadId(leader.threadId)) {
    run.follows = undefined
    run.requested = run.existing = run.lockKey = run.threadId = leader.threadId
    run.span.attribute("tambo.thread_id", leader.threadId)
  } else if (leader.released) {
    run.follows = undefined
    takeNewThread(env, run)
  }
}

/**
 * Where a run waiting for its thread is found by `cancelRun`: under the thread asked for, or the
 * lock key of the run it follows (whose thread may be the placeholder or the one the server named).
 */
const waitingKey = (run: RunState): string => run.follows === undefined ? run.requested : run.lockKey

/**
 * Takes the run's lock key, else waits for (or cancels) the run holding it, or fails. A run waiting
 * for its thread is still starting: `cancelRun` of the thread ends it (see `Cancel.whileStarting`),
 * before it records or sends anything. @internal
 */
export const acquire = (env: Env, run: RunState): Effect.Effect<void, RunConflictError | RunCancelledError> =>
  Effect.withFiberRuntime((self) => Effect.flatMap(
    Effect.sync(() => {
      followed(env, run)
      const active = env.activeRuns.get(run.lockKey)
      if (active === undefined) {
        env.activeRuns.set(run.lockKey, run.entry)
        // A thread the server named (a new thread's local key names nothing a read could ask for).
        if (!isLocalThreadId(run.lockKey)) newEpoch(env, run.lockKey)
      }
      return active
    }),
    (active) => {
      if (active === undefined) return Effect.void
      // The answer its holder asked for, given as soon as it asked: it waits for the holder to finish.
      if (run.start._tag === "ToolResults" && active.pausedForCaller()) {
        // Asked by the holder's own consumer as it takes the pause: the holder's stream ends only
        // once that consumer reads on, after this run. Its end is recorded now, as that end would.
        const ended = readsOrWaitsFor(self, active) ? active.endUnread(Exit.void) : active.done
        return Effect.zipRight(whileStarting(env, waitingKey(run), run.asked, ended), Effect.suspend(() => acquire(env, run)))
      }
      const onBusy = run.options.onBusy ?? "reject"
      if (onBusy === "reject") {
        return new RunConflictError({
          reason: "ActiveInClient",
          message: `A run is already active on thread ${run.requested}`,
          threadId: run.requested
        })
      }
      // An interrupting run takes the place of every run asked for before it: those still starting
      // on the thread end too, having sent nothing, rather than take the thread first and be
      // cancelled then. The runs asked for after it wait for it.
      const replacesWaiting = onBusy === "interrupt" && !run.displaced
      run.displaced = true
      if (readsOrWaitsFor(self, active)) return fromConsumer(env, run, active, onBusy, replacesWaiting)
      // The cancellation asked for goes whole to the server, whatever becomes of this run meanwhile
      // (a Stop ends its wait, its caller gives up on it): it runs in the client's scope. The wait
      // for the run's end is the new run's start, and a Stop ends it.
      return Effect.zipRight(
        onBusy === "interrupt"
          ? Effect.zipRight(
            replacesWaiting ? cancelStarting(env, waitingKey(run), run.asked) : Effect.void,
            Effect.forkIn(active.cancel, env.scope)
          )
          : Effect.void,
        Effect.zipRight(whileStarting(env, waitingKey(run), run.asked, active.done), Effect.suspend(() => acquire(env, run)))
      )
    }
  ))

/**
 * A run started by the consumer of the thread's run, as it takes an event: the run it would wait
 * for ends only once that consumer reads on, which it does once this run is over. An interrupting
 * run cancels it, as `cancelRun` run by that consumer does (the `DELETE` answered, or a run the
 * server ended found so), then records its end as its consumer's leaving would, and takes the
 * thread: that run's stream ends (cancelled) as its consumer reads on. A queued one cannot wait,
 * and is refused.
 */
const fromConsumer = (
  env: Env,
  run: RunState,
  active: ActiveRun,
  onBusy: "queue" | "interrupt",
  replacesWaiting: boolean
): Effect.Effect<void, RunConflictError | RunCancelledError> => {
  if (onBusy === "queue") {
    return new RunConflictError({
      reason: "ActiveInClient",
      message: `A run is already active on thread ${run.requested}, and this run, started by its consumer, cannot wait for it`,
      threadId: run.requested
    })
  }
  return Effect.zipRight(
    replacesWaiting ? cancelStarting(env, waitingKey(run), run.asked) : Effect.void,
    Effect.zipRight(
      whileStarting(env, waitingKey(run), run.asked, Effect.zipRight(active.cancel, active.endUnread(Exit.interrupt(FiberId.none)))),
      Effect.suspend(() => acquire(env, run))
    )
  )
}

/**
 * The server named the run's thread: `cancelRun` and conflicts find the run under it now. It keeps
 * the placeholder until the store shows the name (`shown`): until then a UI asks for the next
 * message there, and that message is a second run of this thread. @internal
 */
export const moveTo = (env: Env, run: RunState, threadId: string): void => {
  run.locked = true
  env.activeRuns.set(threadId, run.entry)
  newEpoch(env, threadId)
  // Before the store shows the thread: whoever reads both sees the run on it from then on.
  tellThread(run, threadId)
}

/** Tells the run's caller its thread on the server (`RunOptions.onThreadId`), once. @internal */
export const tellThread = (run: RunState, threadId: string): void => {
  if (run.threadTold || isLocalThreadId(threadId)) return
  run.threadTold = true
  try {
    run.options.onThreadId?.(threadId)
  } catch {
    // The caller's listener, not the run's failure.
  }
}

/**
 * The store took what the run recorded: once the server named its thread, the store shows that
 * name, and the placeholder is a new conversation again. @internal
 */
export const shown = (env: Env, run: RunState): void => {
  if (run.locked) releasePlaceholder(env, run)
}

/**
 * The run ended by closing its connection with no `DELETE` the server took (see
 * `Cancel.leftToNotice`): the next run on its thread may find the server still holding this one's
 * lock (see `Env.closedUnnoticed`). A thread the server never named for it has no next run there.
 * @internal
 */
export const closedUnnoticed = (env: Env, run: RunState): void => {
  if (!isLocalThreadId(run.threadId)) env.closedUnnoticed.add(run.threadId)
}

/**
 * Whether the run, now holding its thread, follows one of this client whose connection closed
 * unnoticed. The first run after it takes the mark: by the end of its retries the server noticed
 * the closed connection, so a `409` after that is another client's run (a run that itself ends
 * unnoticed marks the thread again). @internal
 */
export const takeClosedUnnoticed = (env: Env, run: RunState): boolean =>
  run.existing !== undefined && env.closedUnnoticed.delete(run.existing)

/** Lets go of all the run holds; each part checks it holds it, so it is safe at any point. @internal */
export const release = (env: Env, run: RunState): Effect.Effect<void> =>
  Effect.sync(() => {
    releasePlaceholder(env, run)
    for (const [local, creating] of env.localRuns) if (creating === run) env.localRuns.delete(local)
    if (env.activeRuns.get(run.lockKey) === run.entry) env.activeRuns.delete(run.lockKey)
    if (env.activeRuns.get(run.threadId) === run.entry) env.activeRuns.delete(run.threadId)
    run.released = true
    if (run.releasedSignal !== undefined) Deferred.unsafeDone(run.releasedSignal, Exit.void)
  })
