/**
 * A run's requests: the first one (its message, with its context and the
 * answers to calls the thread still waits on), and one per tool round (the
 * round's results). Each is opened with the run's hooks, through which the
 * transport hands over the ids in the response headers and the abort of the
 * request.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import * as ClientState from "../../ClientState.js"
import {
  AgUiError,
  type AuthError,
  ConfigError,
  type RunCancelledError,
  type TamboError,
  TransportError
} from "../../TamboError.js"
import type * as Transport from "../../TamboTransport.js"
import type * as Types from "../../Types.js"
import { fromInitialMessages } from "../agui/initialMessages.js"
import * as Unauthorized from "../auth/unauthorized.js"
import { mayHaveReachedServer } from "../http/connectionFailure.js"
import { describeError } from "../toolSupport.js"
import * as Unanswered from "../unanswered.js"
import * as Cancel from "./cancel.js"
import * as Context from "./context.js"
import * as Env from "./env.js"
import * as Landed from "./landed.js"
import * as Pending from "./pending.js"
import type { RunState } from "./state.js"
import { pendingFromApi } from "./threads.js"

/**
 * Sets the first message and records what the run starts with: the user's message (and the
 * answers to the calls the thread still waits on), or the caller's tool results.
 *
 * @internal
 */
export const prepare = (
  env: Env.Env,
  run: RunState,
  before: ClientState.ThreadState | undefined
): Effect.Effect<void, TamboError> =>
  Effect.gen(function* () {
    yield* checkSendable(env, run)
    const at = yield* Env.now
    const start = run.start
    if (start._tag === "ToolResults") {
      // The caller's results stay with the calls until the server takes them.
      const given = new Map(start.results.map((result) => [result.toolUseId, result]))
      run.awaiting = run.awaiting.map((call) => {
        const result = given.get(call.toolCallId)
        return result === undefined ? call : { ...call, result }
      })
      const additionalContext = run.additionalContext = run.options.additionalContext
      run.firstMessage = {
        role: "user",
        content: start.results,
        ...(additionalContext === undefined ? {} : { additionalContext })
      }
      run.unsent = { messageId: undefined, initialIds: [], toolUseIds: start.results.map((result) => result.toolUseId) }
      yield* Env.recordNow(env, run.threadId, [{ type: "TOOL_RESULTS", threadId: run.threadId, results: start.results, at }])
      return
    }
    // The app's helpers and beforeRun may never answer: a cancellation ends the run there too, before anything is recorded.
    const gathering = Effect.gen(function* () {
      const message = Option.isSome(env.mcp) ? yield* env.mcp.value.resolveResources(start.message) : start.message
      return [message, yield* Context.gather(env, run.existing, message, run.options)] as const
    })
    const [message, additionalContext] = yield* (
      Context.mayWait(env, start.message, run.options)
        ? Effect.raceFirst(gathering, Deferred.await(Cancel.cancelledSignal(run)))
        : gathering
    )
    run.additionalContext = additionalContext
    // Calls the thread still waits on are answered in the same message, before its content.
    const unanswered = Unanswered.forNewMessage(before)
    const sent = unanswered.send.length === 0 ? message : { ...message, content: [...unanswered.send, ...message.content] }
    run.firstMessage = additionalContext === undefined ? sent : { ...sent, additionalContext }
    const messageId = `local_user_${at}_${Env.nextLocal(env)}`
    const records = (threadId: string, started: boolean): ReadonlyArray<ClientState.Action> => {
      const initial = started ? [] : initialMessagesOf(env, run, threadId, at)
      run.unsent = {
        messageId,
        initialIds: initial.map((action) => action.message.id),
        toolUseIds: unanswered.record.map((result) => result.toolUseId)
      }
      return [
        ...(threadId.startsWith(ClientState.LOCAL_THREAD_PREFIX)
          ? [{ type: "INIT_THREAD", threadId, at } as const]
          : []),
        ...initial,
        ...(unanswered.record.length === 0
          ? []
          : [{ type: "TOOL_RESULTS", threadId, results: unanswered.record, at } as const]),
        {
          type: "USER_MESSAGE",
          threadId,
          message: {
            id: messageId,
            role: "user",
            content: message.content.map((c) => c),
            createdAt: ClientState.toIsoString(at)
          },
          at
        }
      ]
    }
    // A new conversation that holds messages (a run there failed or stopped) began with its
    // initial messages then: they are not recorded, so not sent, a second time.
    const started = (thread: ClientState.ThreadState | undefined) =>
      run.existing === undefined && thread !== undefined && thread.thread.messages.length > 0
    if (run.threadId !== ClientState.PLACEHOLDER_THREAD_ID) {
      const thread = run.existing === undefined ? yield* env.store.getThread(run.threadId) : undefined
      yield* Env.recordNow(env, run.threadId, records(run.threadId, started(thread)))
      return
    }
    // Into the store at once, to the thread the run records in as the store takes it: until the
    // server names the run's thread, `startNewThread` may move the run out of the placeholder, with
    // what the store holds there (see threads.ts), and a draft not yet published would be left
    // behind. After what runs recorded before (a run that started from the placeholder moves its
    // messages out of it first).
    yield* Env.record(env, ClientState.PLACEHOLDER_THREAD_ID, [])
    yield* env.store.update((state) =>
      ClientState.reduce(state, records(run.threadId, started(ClientState.getThreadState(state, run.threadId))))
    )
  })

/**
 * The caller's own input (the message, the run's `additionalContext` and `initialMessages`) is
 * refused before anything is recorded if a request cannot carry it as JSON (a BigInt, a cycle, a
 * throwing `toJSON`): a `ConfigError` (`InvalidOption`), against an AG-UI agent the `AgUiError`
 * (`InvalidInput`) its request gives.
 */
const checkSendable = (env: Env.Env, run: RunState): Effect.Effect<void, ConfigError | AgUiError> => {
  const parts: ReadonlyArray<readonly [string, unknown]> = [
    ["message", run.start._tag === "Message" ? run.start.message : undefined],
    ["additionalContext", run.options.additionalContext],
    ["initialMessages", run.options.initialMessages]
  ]
  for (const [name, value] of parts) {
    try {
      JSON.stringify(value)
    } catch (error) {
      const message = `The run's ${name} cannot be sent as JSON: ${describeError(error)}`
      return Effect.fail(
        env.transport.conversationFromStore === true
          ? new AgUiError({ reason: "InvalidInput", message })
          : new ConfigError({ reason: "InvalidOption", message })
      )
    }
  }
  return Effect.void
}

/**
 * A transport that holds no thread (AG-UI) has the store hold a new thread's `initialMessages`,
 * before the user's message, as the Tambo API's thread has them.
 */
const initialMessagesOf = (env: Env.Env, run: RunState, threadId: string, at: number): Array<Extract<ClientState.Action, { readonly type: "USER_MESSAGE" }>> => {
  const initial = run.options.initialMessages
  if (env.transport.conversationFromStore !== true || run.existing !== undefined || initial === undefined) return []
  return fromInitialMessages(initial, () => `local_initial_${at}_${Env.nextLocal(env)}`, ClientState.toIsoString(at))
    .map((message) => ({ type: "USER_MESSAGE", threadId, message, at }) as const)
}

const requestFor = (
  run: RunState,
  message: Transport.InputMessage,
  previous: string | undefined,
  agentState: unknown,
  conversation?: ReadonlyArray<Types.TamboThreadMessage>
): Transport.RunRequest => ({
  message,
  ...(agentState === undefined ? {} : { agentState }),
  ...(conversation === undefined ? {} : { conversation }),
  ...(previous === undefined ? {} : { previousRunId: previous }),
  ...(run.tools.length > 0 ? { tools: run.tools } : {}),
  ...(run.components.length > 0 ? { availableComponents: run.components } : {}),
  ...(run.options.toolChoice === undefined ? {} : { toolChoice: run.options.toolChoice }),
  ...(run.options.initialMessages === undefined ? {} : { initialMessages: run.options.initialMessages })
})

/**
 * Where the run's requests get their credentials: the run's own (see `Env.runAuth`). A 401 answers
 * the request (a cancellation waits for no more of it), and a cancellation ends the wait for new
 * credentials that follows (an exchange in flight), as it aborts a request.
 */
const requestAuth = (run: RunState): Unauthorized.CredentialSource<AuthError | RunCancelledError> => {
  let rejected = false
  return {
    credentials: Effect.suspend(() =>
      rejected ? Effect.raceFirst(run.auth.credentials, Deferred.await(Cancel.cancelledSignal(run))) : run.auth.credentials
    ),
    invalidate: (credentials) =>
      Effect.suspend(() => {
        rejected = true
        run.refused = true
        Cancel.answered(run)
        return run.auth.invalidate(credentials)
      })
  }
}

/** What a request tells the run, and how the run may stop it; `span` is the step's, its request's parent. @internal */
export const hooksOf = (env: Env.Env, run: RunState, span: Tracer.Span): Transport.RunHooks => ({
  registerAbort: Cancel.registerAbort(run),
  // The response headers name the run before RUN_STARTED does: enough to cancel it.
  onOpen: (ids) => {
    if (ids.runId !== undefined) {
      run.runId = ids.runId
      if (!run.runIds.includes(ids.runId)) run.runIds.push(ids.runId)
      // The server took the request's message and tool results (it names the run only once it has);
      // an agent's run ids are the client's, given before the request: its first event tells.
      run.awaiting = []
      if (env.transport.conversationFromStore !== true) run.unsent = undefined
    }
    Cancel.answered(run)
    if (ids.threadId !== undefined && ClientState.isLocalThreadId(run.threadId)) run.serverThreadId = ids.threadId
  },
  span,
  // A request whose stream ends early tells the server before its connection closes.
  beforeAbort: Effect.withParentSpan(Effect.suspend(() => Effect.asVoid(Cancel.onServer(env, run))), run.span),
  // After RUN_FINISHED the run waits for nothing more from the response: a server that keeps
  // it open is not waited for.
  finished: () => run.finished
})

/**
 * A transport that reads the conversation from the store (AG-UI) is called once the run's
 * thread, as recorded so far, is in the store; it gets the thread's agent state and messages
 * from there too.
 */
const published = <A, E>(
  env: Env.Env,
  run: RunState,
  open: (agentState: unknown, conversation?: ReadonlyArray<Types.TamboThreadMessage>) => Stream.Stream<A, E>
): Stream.Stream<A, E> =>
  env.transport.conversationFromStore === true
    ? Stream.unwrap(
      Effect.map(Env.record(env, run.threadId, []), (thread) => Stream.suspend(() => open(thread?.thread.state, thread?.thread.messages)))
    )
    : open(undefined)

/**
 * A step's request: `send` opens it with the step's hooks, and a failure before its first event
 * (nothing of it passed on yet) goes to `recover`, which gives the request that takes its place,
 * or fails the step. The step reads the stream untouched: a failure once events flow reaches it
 * before the request's scope closes (and tells the server).
 *
 * @internal
 */
export interface Request {
  readonly send: (hooks: Transport.RunHooks) => Stream.Stream<Transport.RunStreamEvent, TamboError>
  readonly recover: (error: TamboError) => Effect.Effect<Request, TamboError>
}

/** A request whose failure is the step's, whenever it comes. */
const plain = (send: Request["send"]): Request => ({ send, recover: Effect.fail })

/**
 * A tool round's request: its results, on the run's thread, after the step that paused. Sent once
 * more only where a read of the thread shows the server did not take them (see `recovering`).
 * Refused as following another run, as answering calls the thread no longer waits on, or with a
 * `409` (see `refusedResults`), it is recovered as `continueRun`'s results are (see
 * `afterRefusedResults`): another client (another tab) may have answered the calls while the tools
 * ran. Refused with a `409` while the server still waits on the calls, they go again while the
 * `409`s last, for up to 3 s (`whileLockHeld`): the lock may be the round's own step's still.
 *
 * @internal
 */
export const continueWith = (env: Env.Env, run: RunState, results: ReadonlyArray<Types.ToolResultContent>): Request => {
  const previous = run.lastRunId
  const send = (after: string | undefined) => (hooks: Transport.RunHooks) =>
    published(env, run, (agentState) => Unauthorized.withCredentialsStream(requestAuth(run), (c) =>
      env.transport.runOnThread(
        c,
        run.threadId,
        requestFor(
          run,
          {
            role: "user",
            content: results,
            ...(run.additionalContext === undefined ? {} : { additionalContext: run.additionalContext })
          },
          after,
          agentState
        ),
        hooks
      )))
  const request = recovering(env, run, run.threadId, tookResults(results, previous), send(previous))
  return env.transport.conversationFromStore === true ? request : {
    send: request.send,
    recover: (error) =>
      refusedResults(error)
        ? whileOwnLockHeld(error, afterRefusedResults(env, run, run.threadId, results, send, forgetRound(env, run.threadId, previous)))
        : request.recover(error)
  }
}

/**
 * Results refused with a `409` and sent again (`resent`, once the thread showed it still waits on
 * them) go again while the `409`s last (see `whileLockHeld`): the step they answer may still hold
 * the server's lock for a moment after its end, as a run this client displaced does.
 */
const whileOwnLockHeld = (error: TamboError, resent: Effect.Effect<Request, TamboError>): Effect.Effect<Request, TamboError> =>
  refusedAsBusy(error) ? Effect.flatMap(resent, retriedWhileLockHeld) : resent

/** The executor's results of the round after the run `previous`, which the server will never take. */
const forgetRound = (env: Env.Env, threadId: string, previous: string | undefined): Effect.Effect<void> =>
  previous === undefined ? Effect.void : env.executor.forgetStep?.(threadId, previous) ?? Effect.void

/**
 * Whether the server refused a round's results as following another run, as answering calls it no
 * longer waits on, or with a `409`: the API answers one (`CONCURRENT_RUN`) when the calls it waits
 * on changed between its read of the thread and its lock (another client answered them), and when
 * another client's run holds the lock, which it took answering them. The run's own step before the
 * round finished, so no run of this client holds it.
 */
const refusedResults = (error: TamboError): boolean =>
  (error._tag === "ApiError" && (error.code === "INVALID_PREVIOUS_RUN" || error.code === "EXTRA_RESULTS")) ||
  refusedAsBusy(error)

/** Whether the server refused the request with a `409`: its lock held, or the calls it waits on changed meanwhile. */
const refusedAsBusy = (error: TamboError): boolean => error._tag === "RunConflictError" && error.reason === "ActiveOnServer"

/** The first request's message, after the run `previous`. */
const open = (env: Env.Env, run: RunState, previous: string | undefined) => (hooks: Transport.RunHooks) => {
  const existing = run.existing
  // A 401 before the run starts (an expired token) exchanges again and retries once.
  return published(env, run, (agentState, conversation) => {
    const first = requestFor(run, run.firstMessage, previous, agentState, conversation)
    return Unauthorized.withCredentialsStream(requestAuth(run), (c) =>
      existing === undefined
        ? env.transport.createRun(c, first, hooks)
        : env.transport.runOnThread(c, existing, first, hooks))
  })
}

/**
 * The read of the thread a refused first request recovers with: the refusal answered the request
 * (a cancellation waits for no run to be named), and a cancellation ends the read, as it aborts a
 * request, the wait for new credentials after a 401 included (`requestAuth`): nothing more is sent.
 */
const recoveryRead = (env: Env.Env, run: RunState, threadId: string) =>
  Effect.suspend(() => {
    Cancel.answered(run)
    if (run.cancelledWith !== undefined) return Effect.fail(run.cancelledWith)
    return Effect.raceFirst(
      Unauthorized.withCredentials(requestAuth(run), (c) => env.transport.retrieveThread(c, threadId)),
      Deferred.await(Cancel.cancelledSignal(run))
    )
  }).pipe(Effect.withParentSpan(run.span))

/**
 * Whether the server's thread holds the run's message, newer than the thread the run found in the
 * store: the request whose connection broke reached the server, which took it.
 */
const tookMessage = (run: RunState) => (remote: Transport.ThreadWithMessages): boolean =>
  Landed.holdsMessage(remote, run.firstMessage, new Set(run.threadBefore?.messages.map((message) => message.id)))

/**
 * Whether the server took the tool results sent after the run `previous`: it no longer waits on
 * every call they answer after that run. A server that took them stored them and let go of the
 * calls (its run, even one cancelled by the broken connection, is the thread's last one since).
 */
const tookResults = (results: ReadonlyArray<{ readonly toolUseId: string }>, previous: string | undefined) =>
(remote: Transport.ThreadWithMessages): boolean => {
  const waiting = waitingOn(remote)
  return remote.lastCompletedRunId !== previous || !results.every((result) => waiting.has(result.toolUseId))
}

const waitingOn = (remote: Transport.ThreadWithMessages): ReadonlySet<string> => new Set(remote.pendingToolCallIds ?? [])

/**
 * Whether none of the results answers a call the server's thread waits on: another client answered
 * them all, and the server refuses them whatever run they follow.
 */
const answersNone = (results: ReadonlyArray<{ readonly toolUseId: string }>, remote: Transport.ThreadWithMessages): boolean => {
  const waiting = waitingOn(remote)
  return !results.some((result) => waiting.has(result.toolUseId))
}

/**
 * Results the server refused before any work, once the thread is read. When they answer none of
 * the calls it waits on, another client answered those calls and the server refuses them whatever
 * run they follow: nothing more is sent, the run fails with the error the server would give them
 * after its last run (`Pending.answeredElsewhere`), the calls no longer wait on this client's
 * results (the run's end reads the thread, the other client's answer in it), and what knows the
 * results lets go of them (`neverTaken`: a tool round's executor). Otherwise they are sent once
 * more, after the thread's last run.
 */
const afterRefusedResults = (
  env: Env.Env,
  run: RunState,
  threadId: string,
  results: ReadonlyArray<{ readonly toolUseId: string }>,
  resend: (previous: string | undefined) => Request["send"],
  neverTaken: Effect.Effect<void> = Effect.void
): Effect.Effect<Request, TamboError> =>
  Effect.flatMap(recoveryRead(env, run, threadId), (remote) => {
    if (!answersNone(results, remote)) return Effect.succeed(plain(resend(remote.lastCompletedRunId)))
    run.awaiting = []
    const extra = results.map((result) => result.toolUseId)
    return Effect.zipRight(neverTaken, Effect.fail(Pending.answeredElsewhere(threadId, extra, remote.pendingToolCallIds ?? [])))
  })

const isTimeout = (error: TamboError): boolean => error._tag === "TransportError" && error.reason === "Timeout"

/**
 * A request on a known thread whose connection broke, or that timed out, once it went out and
 * before the server named its run (see `mayHaveReachedServer`): the API has no idempotency key, so
 * the thread is read before anything is sent again. A server that took the request (`took`: the
 * run's message, or the tool results) has it once and the run fails with the connection's error,
 * its end reading the thread into the store; the run it started there may hold the thread's lock
 * until it notices the closed connection, as after any connection this client closed
 * (`Lock.closedUnnoticed`). A server that has no such request gets it again, once, unless the
 * request timed out (it may yet reach the server) or the configuration allows no retry
 * (`maxRetries: 0`).
 */
const afterBrokenConnection = (
  env: Env.Env,
  run: RunState,
  threadId: string,
  error: TamboError,
  took: (remote: Transport.ThreadWithMessages) => boolean,
  resend: Request["send"]
): Effect.Effect<Request, TamboError> =>
  Effect.flatMap(
    // A thread that cannot be read tells nothing: the run fails with the connection's error.
    Effect.mapError(recoveryRead(env, run, threadId), (failure) => failure._tag === "RunCancelledError" ? failure : error),
    (remote) => {
      if (!took(remote)) return isTimeout(error) || !env.resends ? Effect.fail(error) : Effect.succeed(plain(resend))
      // Taken: what it carried stays in the store until the run's end reads it.
      run.unsent = undefined
      return Effect.fail(error)
    }
  )

/**
 * `send`, recovered as `afterBrokenConnection` says when its connection broke once it went out,
 * before the server named its run. A transport that sends the conversation from the store (an
 * AG-UI agent) has no server thread to ask: such an error is the run's.
 */
const recovering = (
  env: Env.Env,
  run: RunState,
  threadId: string,
  took: (remote: Transport.ThreadWithMessages) => boolean,
  send: Request["send"]
): Request =>
  env.transport.conversationFromStore === true ? plain(send) : {
    send,
    recover: (error) =>
      brokenOnceSent(run, error) ? afterBrokenConnection(env, run, threadId, error, took, send) : Effect.fail(error)
  }

/** Whether the request failed once it went out, with no run named: the server may have taken it. */
const brokenOnceSent = (run: RunState, error: TamboError): boolean => run.runId === undefined && mayHaveReachedServer(error)

/**
 * Whether the server refused the first request as following the wrong run (another client, or a
 * run cancelled before it was named, moved the thread on), or, for a new message, as answering
 * other tool calls than it waits on (a run whose last request went unanswered may or may not have
 * reached it), or, for `continueRun`'s results, with a `409` (see `refusedResults`). A `409` that
 * `first` sends again while a run of this client may hold the lock comes here once it gives up.
 */
const refusedAsStale = (run: RunState, error: TamboError): boolean =>
  (error._tag === "ApiError" && (error.code === "INVALID_PREVIOUS_RUN" ||
    (run.start._tag === "Message" && (error.code === "MISSING_RESULTS" || error.code === "EXTRA_RESULTS")))) ||
  (run.start._tag === "ToolResults" && refusedAsBusy(error))

/**
 * The first request. One refused as stale (see `refusedAsStale`) is refused before any work: the
 * server is asked for the run it follows and the calls it waits on, and the message, answering
 * those, is sent once more; `continueRun`'s results are as a tool round's (see
 * `afterRefusedResults`).
 * A message, or `continueRun`'s results, whose connection broke once it went out is sent again
 * only if the server's thread shows it did not take it (see `afterBrokenConnection`). A transport
 * that sends the conversation from the store (an AG-UI agent) has no server thread to ask: such an
 * error is the run's.
 */
const opened = (env: Env.Env, run: RunState): Request => {
  const existing = run.existing
  const send = open(env, run, run.previousRunId)
  if (env.transport.conversationFromStore === true) return plain(send)
  if (existing === undefined) return openedNew(env, run, send)
  return {
    send,
    recover: (error) =>
      refusedAsStale(run, error)
        ? run.start._tag === "ToolResults"
          ? resentResults(run, error, afterRefusedResults(env, run, existing, run.start.results, (previous) => open(env, run, previous)))
          : Effect.flatMap(recoveryRead(env, run, existing), (remote) => {
            run.awaiting = pendingFromApi(remote)
            run.firstMessage = Unanswered.forServer(run.firstMessage, run.awaiting)
            return Effect.succeed(plain(open(env, run, remote.lastCompletedRunId)))
          })
        : brokenOnceSent(run, error)
        ? afterBrokenConnection(
          env,
          run,
          existing,
          error,
          run.start._tag === "Message" ? tookMessage(run) : tookResults(run.start.results, run.previousRunId),
          send
        )
        : Effect.fail(error)
  }
}

/**
 * `continueRun`'s results sent again after a refusal (see `afterRefusedResults`), retried on a
 * `409` as a tool round's are (see `whileOwnLockHeld`), unless `first` retries this run's `409`s
 * already (its schedule spent by then).
 */
const resentResults = (run: RunState, error: TamboError, resent: Effect.Effect<Request, TamboError>) =>
  retriesBusy(run) ? resent : whileOwnLockHeld(error, resent)

/**
 * A new conversation's first request whose connection broke, or that timed out, once it went out
 * and before the server named its thread: the client has no thread to read, so it looks for the
 * one the message landed in (`Landed.find`). Found: the run's thread is that one (its end moves
 * there and reads it) and the run fails with the connection's error. None: nothing reached the
 * server, and the request is sent again, once, unless it timed out (it may yet reach the server)
 * or the configuration allows no retry (`maxRetries: 0`). Several, or a list or read that fails:
 * the run fails with the connection's error, saying why where the server told.
 */
const openedNew = (env: Env.Env, run: RunState, send: Request["send"]): Request => ({
  // What the search compares with is noted as the request goes out.
  send: (hooks) => Stream.concat(Stream.execute(Landed.noteSent(env, run)), send(hooks)),
  recover: (error) =>
    !brokenOnceSent(run, error) ? Effect.fail(error) : Effect.flatMap(
      Effect.mapError(lookForLanded(env, run), (failure) => failure._tag === "RunCancelledError" ? failure : error),
      (landed) => {
        switch (landed._tag) {
          case "None":
            return isTimeout(error) || !env.resends ? Effect.fail(error) : Effect.succeed(plain(send))
          case "One":
            Landed.adopt(run, landed.thread)
            return Effect.fail(error)
          case "Unknown":
            return Effect.fail(notTold(error, landed.why))
        }
      }
    )
})

/**
 * `Landed.find` for a run whose answer was lost: a cancellation ends it at once, as it aborts a
 * request. A search it cut (or the run's interruption) is done again by the run's end
 * (`Landed.findCut`).
 */
const lookForLanded = (env: Env.Env, run: RunState) =>
  Effect.suspend(() => {
    Cancel.answered(run)
    run.landedUntold = true
    if (run.cancelledWith !== undefined) return Effect.fail(run.cancelledWith)
    const told = Effect.sync(() => (run.landedUntold = false))
    return Effect.raceFirst(
      Effect.tapBoth(Landed.find(env, run), { onFailure: () => told, onSuccess: () => told }),
      Deferred.await(Cancel.cancelledSignal(run))
    )
  }).pipe(Effect.withParentSpan(run.span))

/** The connection's error, saying why the server's threads could not tell where the message went. */
const notTold = (error: TamboError, why: string): TamboError =>
  error._tag === "TransportError"
    ? new TransportError({
      reason: error.reason,
      message: `${error.message}; its thread could not be told: ${why}`,
      method: error.method,
      url: error.url,
      mayHaveReachedServer: error.mayHaveReachedServer,
      cause: error.cause
    })
    : error

/** A `409` sent again while a run of this client may still hold the server's lock: for up to 3 s. */
const whileLockHeld = Schedule.spaced("50 millis").pipe(Schedule.intersect(Schedule.recurs(60)))

/**
 * `request`, and each request that takes its place, sent again on a `409` before its first event
 * as long as `whileLockHeld` allows (one schedule for them all); any other failure is theirs.
 */
const retriedWhileLockHeld = (request: Request): Effect.Effect<Request> =>
  Effect.map(Schedule.driver(whileLockHeld), (driver) => {
    const retried = (each: Request): Request => ({
      send: each.send,
      recover: (error) =>
        error._tag === "RunConflictError"
          ? Effect.matchEffect(driver.next(undefined), {
            onFailure: () => Effect.map(each.recover(error), retried),
            onSuccess: () => Effect.succeed(retried(each))
          })
          : Effect.map(each.recover(error), retried)
    })
    return retried(request)
  })

/**
 * The first request. A run of this client before it on the thread may still hold the server's
 * lock for a moment, so a `409` is sent again (see `whileLockHeld`): a run this one displaced,
 * and a run whose connection closed with no `DELETE` the server took (see
 * `Env.closedUnnoticed`): cancelled before its response named it, the server notices the closed
 * connection only on its next write. Any other `409` (another client's run) fails at once.
 *
 * @internal
 */
export const first = (env: Env.Env, run: RunState): Effect.Effect<Request> =>
  retriesBusy(run) ? retriedWhileLockHeld(opened(env, run)) : Effect.succeed(opened(env, run))

/** Whether a run of this client before this one may still hold the server's lock (see `first`). */
const retriesBusy = (run: RunState): boolean => run.displaced || run.afterClosedConnection
