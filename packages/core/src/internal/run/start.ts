/**
 * Starting a run: `Tambo.run` (a message) and `Tambo.continueRun` (the
 * caller's results for a paused run). A run takes its thread's lock, records
 * what it starts with, then streams its steps (see step.ts); its one
 * finalizer records its end (see end.ts) and lets go of the lock.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import * as ClientState from "../../ClientState.js"
import type { RunEvent, RunOptions, ToolCallResult } from "../../Tambo.js"
import { type TamboError, ToolError } from "../../TamboError.js"
import * as Tool from "../../Tool.js"
import type * as Transport from "../../TamboTransport.js"
import type * as Types from "../../Types.js"
import { describeError } from "../toolSupport.js"
import * as Cancel from "./cancel.js"
import * as End from "./end.js"
import * as Env from "./env.js"
import * as Landed from "./landed.js"
import * as Lock from "./lock.js"
import * as Pending from "./pending.js"
import * as Request from "./request.js"
import type { RunState, Start } from "./state.js"
import * as Step from "./step.js"
import { ensureThread } from "./threads.js"

const defaultMaxSteps = 10

/**
 * A run's state as it starts. A new thread's run records into the placeholder (what a UI shows
 * for a new conversation) unless another new-thread run is using it: then into a thread of its
 * own (see `Lock.takeNewThread`). A run asked for on the placeholder, or on such a local thread,
 * while a run is creating its thread is a run on that thread (`follows`): its `onBusy` decides, as
 * on a thread the server named, and it goes on the thread that run goes on (see `Lock.acquire`). The
 * placeholder is taken here, in the same synchronous step as the look at its owner; it is the
 * run's until the store shows the name the server gave its thread (see `Lock.shown`), unless
 * `startNewThread` makes it a new conversation again before that (see threads.ts): a new
 * conversation's run creates another thread.
 */
const makeState = (
  env: Env.Env,
  start: Start,
  options: RunOptions,
  requested: string,
  asked: number,
  span: Tracer.Span,
  clock: RunState["clock"],
  timing: boolean,
  credentials: Transport.Credentials,
  follows: RunState | undefined,
  given: string | undefined
): RunState => {
  const isNew = ClientState.isLocalThreadId(requested)
  const run: RunState = {
    start,
    options,
    requested,
    asked,
    existing: isNew ? undefined : requested,
    lockKey: follows?.lockKey ?? requested,
    follows,
    maxSteps: options.maxSteps ?? defaultMaxSteps,
    autoExecute: options.autoExecuteTools ?? true,
    span,
    clock,
    timing,
    entry: {
      cancel: Effect.suspend(() => Cancel.cancel(env, run)),
      done: Effect.suspend(() => Lock.done(run)),
      ranAs: (runId) => run.runIds.includes(runId),
      pausedForCaller: () => run.pausedForCaller,
      lockKey: () => run.lockKey,
      endUnread: (exit) => Effect.uninterruptible(end(env, run, exit))
    },
    auth: Env.runAuth(env.auth, credentials),
    tools: [],
    components: [],
    previousRunId: undefined,
    firstMessage: { role: "user", content: [] },
    additionalContext: undefined,
    threadId: requested,
    runId: undefined,
    runIds: [],
    lastRunId: undefined,
    serverThreadId: undefined,
    started: false,
    finished: false,
    protocolError: undefined,
    runError: undefined,
    pending: [],
    awaiting: [],
    steps: 0,
    locked: false,
    threadTold: false,
    displaced: false,
    afterClosedConnection: false,
    requestSent: false,
    deleteTaken: false,
    pausedForCaller: false,
    stepSpan: undefined,
    callCounts: undefined,
    round: undefined,
    recorded: false,
    ending: false,
    unsent: undefined,
    refused: false,
    refusedOnceCancelled: false,
    threadBefore: undefined,
    sent: undefined,
    landedUntold: false,
    landedNowhere: false,
    cancelSent: undefined,
    cancelledWith: undefined,
    cancelling: undefined,
    stepEnded: undefined,
    awaitsReader: undefined,
    cancelled: undefined,
    awaitingAnswer: false,
    answeredSignal: undefined,
    abortRequest: Effect.void,
    released: false,
    releasedSignal: undefined
  }
  if (isNew && follows === undefined) Lock.takeNewThread(env, run, given)
  return run
}

/**
 * The run's end, once: recorded (and the server told), then the thread's lock and the placeholder
 * let go. Its stream's finalizer runs it, unless a run its consumer started ended it first (see
 * `Lock.acquire`): then the finalizer waits for that end.
 */
const end = (env: Env.Env, run: RunState, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (run.ending) return Lock.done(run)
    run.ending = true
    Step.endStep(run, exit)
    Cancel.stepEnded(run)
    return Effect.ensuring(
      run.recorded ? End.recordEnd(env, run, exit) : Effect.void,
      Effect.zipRight(
        Lock.release(env, run),
        Effect.sync(() => {
          if (env.placeholderRun === run) env.placeholderRun = undefined
          // A read of the thread sent while the run was on it is older than what its end recorded.
          if (!ClientState.isLocalThreadId(run.threadId)) Env.newEpoch(env, run.threadId)
        })
      )
    )
  })

/**
 * Records a run asked for on the placeholder until it has a state (see `Env.askedOnPlaceholder`),
 * or its start ends without one.
 */
const askOnPlaceholder = (env: Env.Env, asked: number, options: RunOptions): Effect.Effect<Env.PlaceholderAsk, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const ask: Env.PlaceholderAsk = { asked, options, local: undefined }
      env.askedOnPlaceholder.add(ask)
      return ask
    }),
    (ask) => Effect.sync(() => env.askedOnPlaceholder.delete(ask))
  )

/** @internal */
export const startRun = (env: Env.Env, start: Start, options: RunOptions = {}): Stream.Stream<RunEvent, TamboError> =>
  // The run's span ends with the run's scope, after its end is recorded (see the finalizer). It
  // is the parent of what starts the run, and handed to what needs it later, rather than put in
  // the stream's context: there it would wrap every effect of every chunk in one more layer.
  Stream.unwrapScoped(Effect.flatMap(Effect.makeSpanScoped("Tambo.run", { captureStackTrace: false }), (span) =>
    Effect.withParentSpan(Effect.gen(function* () {
      // A local thread the server named since is that thread (an app may still hold the local id).
      const asking = Env.savedThreadId(env, options.threadId ?? (yield* env.store.currentThreadId))
      // One whose named thread left the store names none: a new conversation would surprise the app.
      if (env.leftLocals.has(asking)) return yield* Env.unsaved(env, "run", asking, false)
      const asked = ++env.asked
      // While a run of the conversation looks for the message it withdrew, this one goes where that run goes.
      const search = Landed.joinSearch(env, asking, asked)
      const requested = search === undefined
        ? asking
        : yield* Cancel.whileStarting(env, () => search.conversation, asked, Landed.awaitSearch(search, asked))
      // The run creating the thread of the conversation asked for, as it was asked for.
      const follows = Env.runCreating(env, requested)
      // A new conversation's run that startNewThread moves off the placeholder before it starts
      // goes on in a local thread of its own, as one already recording there does.
      const ask = requested === ClientState.PLACEHOLDER_THREAD_ID && follows === undefined
        ? yield* askOnPlaceholder(env, asked, options)
        : undefined
      // Waits for a token exchange in flight; a refused one fails the run before it starts. The
      // run's requests carry these credentials, whatever setUserToken does meanwhile. A
      // cancellation of the thread ends the wait: nothing is recorded or sent yet.
      const waitingAs = ask === undefined ? follows?.lockKey ?? requested : () => ask.local ?? requested
      // Marked before the wait for credentials: a run of the conversation asked during that wait
      // goes where this one goes, rather than look on its own and start a second thread.
      const searching = follows === undefined && env.withdrawnLanded.has(requested)
        ? yield* Landed.searchFor(env, requested, ask)
        : undefined
      const credentials = yield* Cancel.whileStarting(
        env,
        waitingAs,
        asked,
        Effect.tap(
          env.auth.credentials,
          // A thread this client has not seen: load it, for its history and its previousRunId.
          () => ClientState.isLocalThreadId(requested) ? Effect.void : ensureThread(env, requested)
        )
      )
      if (ClientState.isLocalThreadId(requested) && start._tag === "ToolResults") {
        return yield* new ToolError({ reason: "NotPending", message: "A new thread has no pending tool calls" })
      }
      // A first message this conversation withdrew may have reached the server since: the run goes
      // on in the thread it made, if one is found (unless startNewThread left the conversation).
      const found = searching === undefined
        ? undefined
        : yield* Cancel.whileStarting(env, waitingAs, asked, Landed.findWithdrawn(env, searching, Env.runAuth(env.auth, credentials)))
      const landed = ask?.local === undefined ? found : undefined
      const clock = yield* Effect.clock
      const timing = yield* FiberRef.get(FiberRef.currentTracerTimingEnabled)
      const scope = yield* Effect.scope
      // One finalizer for all the run holds, added with the state that takes the placeholder
      // and no interruption in between: the end is recorded (and the server told) first, then
      // the thread's lock and the placeholder are let go.
      const run = yield* Effect.uninterruptible(Effect.suspend(() => {
        if (ask !== undefined) env.askedOnPlaceholder.delete(ask)
        const thread = landed ?? ask?.local ?? requested
        const run = makeState(env, start, options, thread, asked, span, clock, timing, credentials, follows, landed === undefined ? ask?.local : undefined)
        if (searching !== undefined) Landed.settleSearch(env, searching, thread)
        return Effect.as(Scope.addFinalizerExit(scope, (exit) => end(env, run, exit)), run)
      }))
      // The run's span gets the thread and first run ids at RUN_STARTED.
      span.attribute("tambo.thread_id", run.existing ?? "new")
      span.attribute("tambo.max_steps", run.maxSteps)
      // One active run per thread in this client; what happens to a second one is the caller's choice.
      yield* Lock.acquire(env, run)
      run.afterClosedConnection = Lock.takeClosedUnnoticed(env, run)

      run.tools = yield* env.registry.toApiTools
      run.components = yield* env.registry.toApiComponents
      // The thread as the run finds it: the run it follows, and the calls the server waits on.
      const before = run.existing === undefined ? undefined : yield* env.store.getThread(run.existing)
      run.previousRunId = before?.lastCompletedRunId
      run.threadBefore = before?.thread
      if (before !== undefined) run.awaiting = before.pendingToolCalls
      yield* Request.prepare(env, run, before)
      run.recorded = true
      return Step.makeStep(env, run)(yield* Request.first(env, run))
    }), span)))

/** A caller's result as the API's `tool_result` block; one that cannot be sent as JSON is refused. */
const toToolResult = (result: ToolCallResult): Effect.Effect<Types.ToolResultContent, ToolError> => {
  let text: string
  try {
    text = typeof result.result === "string" ? result.result : JSON.stringify(result.result) ?? "null"
  } catch (error) {
    return Effect.fail(
      new ToolError({
        reason: "InvalidResult",
        message: `The result for tool call ${result.toolCallId} cannot be sent as JSON: ${describeError(error)}`,
        toolCallId: result.toolCallId
      })
    )
  }
  return Effect.succeed(
    result.isError === true
      ? Tool.errorResult(result.toolCallId, text)
      : Tool.toolResult(result.toolCallId, [{ type: "text", text: text.length === 0 ? "\"\"" : text }])
  )
}

/** A caller's result checked against its tool's output schema, if it declares one. */
const validateOutput = (env: Env.Env, toolName: string, result: ToolCallResult): Effect.Effect<void, ToolError> =>
  Effect.gen(function* () {
    const tool = yield* env.registry.get(toolName)
    if (Option.isNone(tool)) return
    const definition = tool.value.definition
    const schema = Tool.isTool(definition) ? definition.output : definition.outputSchema
    if (schema === undefined) return
    yield* Tool.validate(schema, result.result).pipe(
      Effect.mapError((error) =>
        new ToolError({
          reason: "InvalidResult",
          message: `The result for ${toolName} does not match its output schema: ${error.message}`,
          toolCallId: result.toolCallId
        })
      )
    )
  })

/** Answers the pending tool calls of a paused run and streams the rest of it. @internal */
export const continueRun = (
  env: Env.Env,
  threadId: string,
  results: ReadonlyArray<ToolCallResult>,
  options: Omit<RunOptions, "threadId"> = {}
): Stream.Stream<RunEvent, TamboError> =>
  Stream.unwrap(Effect.gen(function* () {
    // The thread as the store holds it, or as read when the store did not take the read (renamed,
    // taken by a run or gone from the store meanwhile): that copy still says what the server waits
    // on. A thread deleted meanwhile is found gone by the run's own read, before anything is sent.
    // A local thread the server named since is that thread (see `startRun`).
    const saved = Env.savedThreadId(env, threadId)
    const held = yield* env.store.getThread(saved)
    // A new conversation's id the store holds no thread of has none the server could be asked for
    // (its named thread was forgotten or deleted since): nothing is sent, as for a run asked there.
    if (held === undefined && ClientState.isLocalThreadId(saved)) return yield* Env.unsaved(env, "continueRun", saved, false)
    const thread = held ?? (yield* ensureThread(env, saved))
    const byId = new Map(Pending.ofState(thread).map((call) => [call.toolCallId, call]))
    const answered = new Set<string>()
    for (const message of thread.thread.messages) {
      for (const block of message.content) if (block.type === "tool_result") answered.add(block.toolUseId)
    }
    // A call given more than one result takes its last, where its first stood, as the API keeps it.
    const lastOfEach = new Map(results.map((result) => [result.toolCallId, result]))
    const content: Array<Types.ToolResultContent> = []
    for (const result of lastOfEach.values()) {
      const call = byId.get(result.toolCallId)
      if (call === undefined) {
        return yield* new ToolError({
          reason: answered.has(result.toolCallId) ? "AlreadyAnswered" : "UnknownToolCall",
          message: answered.has(result.toolCallId)
            ? `Tool call ${result.toolCallId} was already answered`
            : `Tool call ${result.toolCallId} is not pending on thread ${threadId}`,
          toolCallId: result.toolCallId
        })
      }
      if (result.isError !== true) yield* validateOutput(env, call.toolName, result)
      content.push(yield* toToolResult(result))
    }
    // The store is the agent's conversation, so it refuses what the API would: a call sent with
    // no result is one the agent trips on, and it would stay pending.
    if (env.transport.conversationFromStore === true) {
      const missing = [...byId.keys()].filter((id) => !lastOfEach.has(id))
      if (missing.length > 0) return yield* Pending.missingResults(missing)
    }
    return startRun(env, { _tag: "ToolResults", results: content }, { ...options, threadId: saved })
  }))
