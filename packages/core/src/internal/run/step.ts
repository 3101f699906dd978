/**
 * A run's steps: each one a request's stream of events, recorded chunk by
 * chunk into the run's thread and passed on with the thread as it stands,
 * then what follows it (the run's end, its failure, or a tool round and the
 * next step), all in one channel. The work per event is O(1): the run's own
 * bookkeeping of the chunk (`track`) and one store action per chunk.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as Events from "../../Events.js"
import * as ClientState from "../../ClientState.js"
import type { RunEvent } from "../../Tambo.js"
import { ApiError, RunCancelledError, type TamboError, TransportError } from "../../TamboError.js"
import type * as Transport from "../../TamboTransport.js"
import type * as Types from "../../Types.js"
import * as Pause from "../agui/pause.js"
import * as Cancel from "./cancel.js"
import * as Env from "./env.js"
import * as Lock from "./lock.js"
import * as Request from "./request.js"
import type { RunState } from "./state.js"
import { toolRound } from "./toolRound.js"

/** What a run's step reads (the transport's events) and writes (the run's). */
type StepChannel = Channel.Channel<
  Chunk.Chunk<RunEvent>,
  Chunk.Chunk<Transport.RunStreamEvent>,
  TamboError,
  TamboError,
  unknown,
  unknown
>

/**
 * A streamed event, as a class instance rather than an object literal: V8
 * decides per literal site to allocate straight into the old generation once
 * most of a site's objects outlive a young collection, and a run event born
 * old keeps its young event alive through every young collection until the
 * next full one. V8 does not allocate a class's instances old that way.
 */
class StreamedRunEvent implements RunEvent {
  constructor(
    readonly event: Transport.RunStreamEvent,
    readonly threadId: string,
    readonly snapshot: Types.TamboThread
  ) {}
}

/** The typed failure of a run the server ended with `RUN_ERROR`. */
const runErrorFrom = (event: Events.RunErrorEvent, threadId: string): ApiError | RunCancelledError =>
  event.code === "CANCELLED"
    ? new RunCancelledError({ reason: "CancelledByServer", message: event.message, threadId })
    : new ApiError({
      reason: "RunError",
      message: event.message,
      retryable: event.isRetryable ?? false,
      ...(event.code === undefined ? {} : { code: event.code }),
      ...(event.status === undefined ? {} : { status: event.status }),
      ...(event.category === "client_error" || event.category === "server_error" ? { category: event.category } : {})
    })

/** Ends the span of the step streaming now, if any. @internal */
export const endStep = (run: RunState, exit: Exit.Exit<unknown, unknown>): void => {
  const span = run.stepSpan
  if (span === undefined) return
  run.stepSpan = undefined
  span.end(run.timing ? run.clock.unsafeCurrentTimeNanos() : 0n, exit)
}

/**
 * The run's own bookkeeping of a chunk's events, up to its step's end: returns the index
 * of the event that ends the step (RUN_FINISHED, RUN_ERROR), else -1.
 */
const track = (run: RunState, events: ReadonlyArray<Transport.RunStreamEvent>): number => {
  // An answer came: the request was taken (an agent, whose run ids are the client's, names no run first).
  if (events.length > 0) run.unsent = undefined
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!
    switch (event.type) {
      case "RUN_STARTED": {
        // A run on a server's thread stays there: a server naming another one is broken, and the
        // step's events are not taken (no thread of that name appears in the store).
        if (!ClientState.isLocalThreadId(run.threadId) && event.threadId !== run.threadId) {
          run.protocolError = new TransportError({
            reason: "Protocol",
            message: `The server started the run on thread ${event.threadId}, not on the run's thread ${run.threadId}`
          })
          return i
        }
        run.threadId = event.threadId
        run.runId = event.runId
        if (!run.runIds.includes(event.runId)) run.runIds.push(event.runId)
        run.unsent = undefined
        run.started = true
        run.finished = false
        if (run.steps === 0) {
          run.span.attribute("tambo.thread_id", event.threadId)
          run.span.attribute("tambo.run_id", event.runId)
        }
        run.stepSpan?.attribute("tambo.thread_id", event.threadId)
        run.stepSpan?.attribute("tambo.run_id", event.runId)
        break
      }
      case "RUN_FINISHED": {
        run.finished = true
        // A step the server named no run of otherwise (see `startedByClient`) finished as this one.
        run.lastRunId = run.runId ?? event.runId
        return i
      }
      case "RUN_ERROR": {
        run.finished = true
        // The API sends RUN_ERROR twice: the first one is the error, and the end.
        run.runError = runErrorFrom(event, run.threadId)
        return i
      }
      case "CUSTOM": {
        if (event.name === "tambo.run.awaiting_input" && "pendingToolCalls" in event.value) {
          run.pending = [...event.value.pendingToolCalls]
        }
        break
      }
    }
  }
  return -1
}

/**
 * A step whose run its response's headers named but no RUN_STARTED did (a new thread's first
 * step, a tool round's continuation) starts as the headers say: its events are then its run's,
 * not ones that reach a thread whose run ended, which the reducer closes at once (a call's
 * arguments would be lost, and the thread would not show the run).
 */
const startedByHeaders = (
  run: RunState,
  events: ReadonlyArray<Transport.RunStreamEvent>
): ReadonlyArray<Transport.RunStreamEvent> => {
  const threadId = ClientState.isLocalThreadId(run.threadId) ? run.serverThreadId : run.threadId
  return threadId === undefined || run.runId === undefined || events[0]!.type === "RUN_STARTED"
    ? events
    : [{ type: "RUN_STARTED", threadId, runId: run.runId }, ...events]
}

/**
 * A continuation (a tool round's, or a caller's results) whose server names its run neither in a
 * RUN_STARTED nor in its response's headers (a broken server): its events still go on the
 * thread's run, which the client starts as the run it continues. Without it they would reach a
 * thread whose run ended, which the reducer closes at once (a call's arguments lost). The run id
 * stays unknown: nothing of this step is cancelled on the server by an id it never gave.
 */
const startedByClient = (
  run: RunState,
  events: ReadonlyArray<Transport.RunStreamEvent>
): ReadonlyArray<Transport.RunStreamEvent> => {
  const continued = run.lastRunId ?? (run.start._tag === "ToolResults" ? run.previousRunId : undefined)
  if (
    run.started || run.runId !== undefined || continued === undefined || ClientState.isLocalThreadId(run.threadId) ||
    events[0]!.type === "RUN_STARTED"
  ) return events
  run.started = true
  run.unsent = undefined
  return [{ type: "RUN_STARTED", threadId: run.threadId, runId: continued }, ...events]
}

const runEvents = (run: RunState, events: ReadonlyArray<Transport.RunStreamEvent>, thread: Types.TamboThread): Chunk.Chunk<RunEvent> => {
  const out: Array<RunEvent> = new Array(events.length)
  for (let i = 0; i < events.length; i++) {
    out[i] = new StreamedRunEvent(events[i]!, run.threadId, thread)
  }
  return Chunk.unsafeFromArray(out)
}

/**
 * The steps of a run: `step(open)` streams one step (its request made by `open`) in a span of
 * its own, then what follows it. The channels are made once per run.
 *
 * @internal
 */
export const makeStep = (env: Env.Env, run: RunState): (request: Request.Request) => Stream.Stream<RunEvent, TamboError> => {
  // The current step's request and hooks, and whether none of its events came yet: a failure
  // then, before a run was named, is its request's to recover from (`Request.recover`).
  let request: Request.Request
  let hooks: Transport.RunHooks
  let opening = true
  // A transport whose server sends no pause (an AG-UI agent): the ids of the calls the step's
  // request started, for the pause the step puts before its RUN_FINISHED (internal/agui/pause.ts).
  const started = env.transport.pausesForClientTools === true ? new Set<string>() : undefined
  /** A chunk of the step's events: tracked, recorded and passed on, then what follows it. */
  const onChunk = (chunk: Chunk.Chunk<Transport.RunStreamEvent>): StepChannel => {
    let events = Chunk.toReadonlyArray(chunk)
    // The transport's empty chunk after each read: nothing to record or pass on.
    if (events.length === 0) return stepLoop
    opening = false
    const from = run.threadId
    if (!run.started) events = startedByHeaders(run, events)
    // Tracked without the start the client adds: it names no run of the server's.
    const tracked = events
    events = startedByClient(run, events)
    const shift = events.length - tracked.length
    const trackedEnd = track(run, tracked)
    const end = trackedEnd < 0 ? trackedEnd : trackedEnd + shift
    if (run.protocolError !== undefined) {
      // What came before the event the run cannot take is recorded, then the step fails.
      return emit(from, run.threadId, events.slice(0, end), events.slice(0, end), failProtocol(run.protocolError))
    }
    // Nothing after the step's end is the run's: neither recorded nor passed on.
    if (end >= 0 && end < events.length - 1) events = events.slice(0, end + 1)
    const next = end < 0 ? emptyThenLoop : events[end]!.type === "RUN_ERROR" ? endAtError : emptyThenDrain
    const threadId = run.threadId
    // The thread has its id now: cancelRun and conflicts can find the run under it.
    if (!run.locked && !ClientState.isLocalThreadId(threadId)) Lock.moveTo(env, run, threadId)
    // An app may still hold the local thread's id: the calls about a saved thread follow it.
    if (from.startsWith(ClientState.LOCAL_THREAD_PREFIX) && !ClientState.isLocalThreadId(threadId)) {
      env.namedLocals.set(from, threadId)
    }
    if (started !== undefined) {
      Pause.noteStarted(started, events)
      if (end >= 0 && started.size > 0 && events[end]!.type === "RUN_FINISHED") {
        return pausedAtFinish(started, from, threadId, events, end, next)
      }
    }
    // A chunk as one action: the reducer moves the run to its thread at RUN_STARTED. A chunk on
    // the run's thread goes into its draft; one that moves the run to its thread is written to
    // the store at once.
    return emit(from, threadId, events, events, next)
  }

  // Every chunk is recorded by a plain function of it where the store allows. A stage that
  // waits for the store's batch holds its chunk meanwhile, and so does every concurrent run
  // waiting for the same batch: their events outlive young collections (scratchpad/bench/NOTES.md).
  const stepLoop: StepChannel = Channel.readWithCause({
    onInput: (chunk: Chunk.Chunk<Transport.RunStreamEvent>) => {
      // Its end was recorded as its consumer started a run that interrupted it: nothing more is its.
      if (run.ending) return Channel.unwrap(Cancel.whenCancelled(run, (error): StepChannel => Channel.fail(error), (): StepChannel => Channel.void))
      // Read as the fiber reading the run asks for more: a Stop or a run that fiber (or one it
      // forks, as it takes an event) runs is its consumer's.
      return Cancel.isReading(run) ? onChunk(chunk) : Channel.flatMap(Channel.fromEffect(Cancel.reading(run)), () => onChunk(chunk))
    },
    onFailure: (cause) => {
      const failure = Cause.failureOrCause(cause)
      if (!opening || run.runId !== undefined || Either.isRight(failure)) return failed(cause)
      // Nothing came and no run was named, so the server has nothing to be told: the request is
      // let go of at once (a server still waiting on it notices) before anything is asked again.
      return Channel.unwrap(Effect.match(Effect.zipRight(run.abortRequest, request.recover(failure.left)), {
        onFailure: (error) => failed(Cause.fail(error)),
        onSuccess: sent
      }))
    },
    onDone: () => endOfStep
  })

  /** The step's request sent, its events read by the step. */
  const sent = (next: Request.Request): Channel.Channel<Chunk.Chunk<RunEvent>, unknown, TamboError, unknown, unknown, unknown> => {
    request = next
    return Channel.pipeTo(Stream.toChannel(next.send(hooks)), stepLoop)
  }

  /** The step failed with `cause`: its span ends, and a cancelled run fails with its cancellation. */
  const failed = (cause: Cause.Cause<TamboError>): StepChannel => {
    Cancel.answered(run)
    Cancel.stepEnded(run)
    endStep(run, Exit.failCause(cause))
    // A cancelled run's aborted request ends or breaks its stream: that is the cancellation.
    const failure = Cause.failureOption(cause)
    if (run.cancelledWith === undefined || Option.isNone(failure)) return Channel.failCause(cause)
    return Channel.unwrap(Cancel.whenCancelled(run, (cancelled) => {
      run.refusedOnceCancelled = Cancel.isRefusal(run, failure.value)
      return Channel.fail(cancelled)
    }, () => Channel.failCause(cause)))
  }

  /** `events` of thread `from` recorded as one action, then `f` of the run's thread (its state) after them. */
  const recording = <A>(
    from: string,
    threadId: string,
    events: ReadonlyArray<Transport.RunStreamEvent>,
    f: (state: ClientState.ThreadState) => Channel.Channel<Chunk.Chunk<RunEvent>, A, TamboError, TamboError, unknown, unknown>
  ): Channel.Channel<Chunk.Chunk<RunEvent>, A, TamboError, TamboError, unknown, unknown> => {
    const actions: ReadonlyArray<ClientState.Action> = events.length === 0 ? [] : [
      { type: "EVENTS", threadId: from, events, at: run.clock.unsafeCurrentTimeMillis(), tools: run.tools }
    ]
    const recorded = env.writer.record(threadId, actions)
    if (recorded !== undefined) return f(recorded)
    return Channel.flatMap(Channel.fromEffect(Env.record(env, threadId, actions)), (state) => {
      Lock.shown(env, run)
      return f(state!)
    })
  }

  /** `recorded` recorded, then `events` passed on with the thread after them, then `next`. */
  const emit = <A>(
    from: string,
    threadId: string,
    recorded: ReadonlyArray<Transport.RunStreamEvent>,
    events: ReadonlyArray<Transport.RunStreamEvent>,
    next: Channel.Channel<Chunk.Chunk<RunEvent>, A, TamboError, TamboError, unknown, unknown>
  ) => recording(from, threadId, recorded, (state) => Channel.zipRight(Channel.write(runEvents(run, events, state.thread)), next))

  /**
   * The chunk ending an AG-UI step (`events[end]` is its RUN_FINISHED; `started`, the calls its
   * request started): its events before the end are recorded, the calls the agent left open are
   * closed (recorded, not passed on), and the calls the thread then holds unanswered are paused
   * for just before RUN_FINISHED.
   */
  const pausedAtFinish = <A>(
    started: Set<string>,
    from: string,
    threadId: string,
    events: ReadonlyArray<Transport.RunStreamEvent>,
    end: number,
    next: Channel.Channel<Chunk.Chunk<RunEvent>, A, TamboError, TamboError, unknown, unknown>
  ) => {
    const finished = events[end]!
    const before = events.slice(0, end)
    const paused = (state: ClientState.ThreadState) => {
      const tools = new Set(run.tools.map((tool) => tool.name))
      const pause = Pause.pauseOf(state.thread.messages, started, tools, state.internal.invalidToolArgs)
      started.clear()
      if (pause === undefined) return emit(threadId, threadId, [finished], events, next)
      run.pending = [...pause.value.pendingToolCalls]
      return emit(threadId, threadId, [pause, finished], [...before, pause, finished], next)
    }
    return recording(from, threadId, before, (state) => {
      const ends = Pause.endsOfOpenCalls(state)
      return ends.length === 0 ? paused(state) : recording(threadId, threadId, ends, paused)
    })
  }

  // An empty chunk after each one, as the transport does (see TamboTransport.decodeSse):
  // the run's channel then does not hold the consumer's last chunk, its events and
  // snapshots, while the run waits for the server.
  const emptyThenLoop = Channel.zipRight(Channel.write(Chunk.empty<RunEvent>()), stepLoop)

  // After RUN_FINISHED the step reads to the response's end and keeps none of it: the server
  // ends it at once, and aborting it instead would cost every run its connection.
  const drain: StepChannel = Channel.readWithCause({
    onInput: () => drain,
    // The run finished: a connection that breaks after that ends nothing (a defect still does).
    onFailure: (cause) => Option.isSome(Cause.failureOption(cause)) ? endOfStep : Channel.failCause(cause),
    onDone: () => endOfStep
  })
  const endOfStep = Channel.suspend(() => {
    Cancel.answered(run)
    Cancel.stepEnded(run)
    endStep(run, Exit.void)
    return afterStep()
  })
  // Follows the chunk of the step's last event once its consumer took it: a cancellation waiting
  // for that event decides only then (see Cancel.endedMeanwhile).
  const emptyThenDrain = Channel.zipRight(
    Channel.fromEffect(Effect.sync(() => Cancel.stepEnded(run))),
    Channel.zipRight(Channel.write(Chunk.empty<RunEvent>()), drain)
  )
  const failProtocol = (error: TransportError) =>
    Channel.suspend(() => {
      Cancel.answered(run)
      Cancel.stepEnded(run)
      endStep(run, Exit.fail(error))
      return Channel.fail(error)
    })
  // The first RUN_ERROR ends the run: the response is let go (the server closes it anyway).
  const endAtError = Channel.zipRight(Channel.fromEffect(Effect.suspend(() => run.abortRequest)), endOfStep)

  /** What follows a step: the run's end, its failure, or a round of tools. */
  const afterStep = (): Channel.Channel<Chunk.Chunk<RunEvent>, unknown, TamboError, unknown, unknown, unknown> => {
    // A cancellation on its way: the run ends cancelled, unless the server ended it meanwhile.
    if (run.cancelledWith !== undefined) return Channel.unwrap(Cancel.whenCancelled(run, Channel.fail, afterStep))
    if (run.runError !== undefined) return Channel.fail(run.runError)
    if (!run.finished) {
      return Channel.fail(
        new TransportError({ reason: "Disconnected", message: "The run's stream ended before RUN_FINISHED" })
      )
    }
    if (run.pending.length === 0) return Channel.void
    // What a round runs (tools, approvals, the next request) is in the run's span, and a
    // cancellation while it runs is what the run fails with.
    const round = toolRound(env, run, (results) => step(Request.continueWith(env, run, results)))
    return Channel.catchAll(
      Stream.toChannel(Stream.unwrap(Effect.withParentSpan(round, run.span))),
      (error) => Channel.fail(Cancel.orCancellation(run, error))
    )
  }

  const step = (first: Request.Request): Stream.Stream<RunEvent, TamboError> =>
    Stream.fromChannel(Channel.unwrap(Effect.uninterruptible(Effect.map(
      // The stack at this point is the SDK's own: not worth capturing for every step.
      Effect.makeSpan("Tambo.step", {
        attributes: { "tambo.step": run.steps },
        captureStackTrace: false,
        parent: run.span
      }),
      // Made and recorded as open with no interruption in between: a span made is ended.
      (span) => {
        run.stepSpan = span
        // Nothing of this step has started or finished yet, whether or not its server says RUN_STARTED.
        run.started = false
        run.finished = false
        run.stepEnded = undefined
        started?.clear()
        hooks = Request.hooksOf(env, run, span)
        opening = true
        return sent(first)
      }
    ))))

  return step
}
