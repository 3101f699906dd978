/**
 * The state of one run, from its first request to its end: one record, read
 * and written by the run's modules (request, step, tool round, approval,
 * cancel, end) in synchronous steps. Nothing else writes it; `cancelRun` and
 * other runs reach it only through the run's `ActiveRun` entry.
 *
 * @internal
 */
import type * as Clock from "effect/Clock"
import type * as Deferred from "effect/Deferred"
import type * as Effect from "effect/Effect"
import type * as Tracer from "effect/Tracer"
import type { Auth } from "../../Auth.js"
import type * as ClientState from "../../ClientState.js"
import type * as Events from "../../Events.js"
import type { RunOptions } from "../../Tambo.js"
import type { ApiError, RunCancelledError, TransportError } from "../../TamboError.js"
import type * as Transport from "../../TamboTransport.js"
import type * as Tool from "../../Tool.js"
import type * as ToolExecutor from "../../ToolExecutor.js"
import type * as Types from "../../Types.js"
import type { ServerAnswer } from "./cancel.js"
import type { Sent } from "./landed.js"
import type { ActiveRun } from "./env.js"

/** A tool round: the thread and step (the paused run) its calls belong to, and their ids. @internal */
export interface ToolRound {
  readonly threadId: string
  readonly step: string
  readonly toolCallIds: ReadonlyArray<string>
}

/** What a run starts with: a message, or the caller's results for the calls a paused run waits on. @internal */
export type Start =
  | { readonly _tag: "Message"; readonly message: Transport.InputMessage }
  | { readonly _tag: "ToolResults"; readonly results: ReadonlyArray<Types.ToolResultContent> }

/** The messages a request recorded in the thread before the server took it. @internal */
export interface Unsent {
  readonly messageId: string | undefined
  /** The ids of the new conversation's initial messages the run recorded with its message. */
  readonly initialIds: ReadonlyArray<string>
  readonly toolUseIds: ReadonlyArray<string>
}

/** @internal */
export interface RunState {
  // -- fixed when the run starts --
  readonly start: Start
  readonly options: RunOptions
  /**
   * The thread asked for: a server's thread, or a local one for a run that creates its thread; for
   * a run that follows another (see `follows`), the thread that run went on, once it is known.
   */
  requested: string
  /** Its number among the runs asked for (see `Env.asked`): the runs asked for before it have smaller ones. */
  readonly asked: number
  /** The server's thread the run goes on, `undefined` for a run that creates its thread. */
  existing: string | undefined
  /** The key of the run's lock until the server names its thread (then also that thread's id). */
  lockKey: string
  /**
   * The run creating the thread of the new conversation this run was asked for on, until this
   * run holds its thread: this run goes on the thread that run goes on (see `Lock.acquire`).
   */
  follows: RunState | undefined
  readonly maxSteps: number
  readonly autoExecute: boolean
  /** The run's span: the parent of its steps and of what talks to the server for it. */
  readonly span: Tracer.Span
  /** Read synchronously by the per-chunk step (the test clock too), and to time spans. */
  readonly clock: Clock.Clock
  readonly timing: boolean
  /** How other runs and `cancelRun` see this one. */
  readonly entry: ActiveRun
  /** The credentials its requests carry: the ones it started with (see `Env.runAuth`). */
  readonly auth: Auth.Service

  // -- the requests --
  /** The API's shapes of the registered tools and components, read once the run holds its thread. */
  tools: ReadonlyArray<Tool.ApiTool>
  components: ReadonlyArray<Tool.ApiComponent>
  /** The run the first request follows (the thread's last completed one). */
  previousRunId: string | undefined
  firstMessage: Transport.InputMessage
  additionalContext: Record<string, unknown> | undefined

  // -- where the run stands --
  /** Where its events are recorded: a local thread until RUN_STARTED names the server's. */
  threadId: string
  /** The server's run of the current step, once the response or RUN_STARTED named it. */
  runId: string | undefined
  /** Every run id its steps had, for `cancelRun` of one run: a few, one or two a step. */
  runIds: Array<string>
  /** The last step that finished: the next request's `previousRunId`. */
  lastRunId: string | undefined
  /** A new thread's id from the response headers, until RUN_STARTED moves the run there. */
  serverThreadId: string | undefined
  /** The current step's run started: its RUN_STARTED, or the one its response's headers gave. */
  started: boolean
  /** The current step reached RUN_FINISHED or RUN_ERROR. */
  finished: boolean
  /** A step's event the run cannot take (a RUN_STARTED naming another thread): what the step fails with. */
  protocolError: TransportError | undefined
  /** The first RUN_ERROR, as the run's failure. */
  runError: ApiError | RunCancelledError | undefined
  /** The calls the current step paused for (`tambo.run.awaiting_input`). */
  pending: Array<Events.PendingToolCall>
  /**
   * The calls the server waits on until a request answering them opens: kept pending in the
   * store if the run ends before that.
   */
  awaiting: ReadonlyArray<ClientState.AwaitedToolCall>
  /** Tool rounds taken. */
  steps: number
  /** The run holds the lock of its server thread. */
  locked: boolean
  /** Its caller was told its thread on the server (`RunOptions.onThreadId`). */
  threadTold: boolean
  /** The run waited for (or cancelled) another one on its thread. */
  displaced: boolean
  /**
   * The run before it on its thread, of this client, closed its connection with no `DELETE` the
   * server took: the server may still hold that run's lock (see `Env.closedUnnoticed`).
   */
  afterClosedConnection: boolean
  /** A request of the run went out: the server may hold a run of it. */
  requestSent: boolean
  /** The server took the run's `DELETE` (or answered 404: the run was no longer its current one). */
  deleteTaken: boolean
  /** Its stream ended with CLIENT_AWAITING_TOOL_RESULTS: a `continueRun` of the thread waits for it to let go. */
  pausedForCaller: boolean
  /** The span of the step streaming now, until the step ends. */
  stepSpan: Tracer.Span | undefined
  /** The run's calls of each tool, for their `maxCalls`; made at its first round. */
  callCounts: ToolExecutor.CallCounts | undefined
  /**
   * The last tool round whose tools ran, until the server shows it took its results: the step
   * they follow, under which the executor keeps them (see `forgetTakenRound` in toolRound.ts).
   */
  round: ToolRound | undefined
  /** The first message is in the store: the run's end is recorded too. */
  recorded: boolean
  /**
   * The run's end is recorded (then its thread let go): its stream ended, or a run its consumer
   * started ended it first (see `ActiveRun.endUnread`).
   */
  ending: boolean
  /**
   * What the thread shows of the current request until the server takes it (names its run): the
   * user's message, and the messages of the tool results it carries (by call id).
   */
  unsent: Unsent | undefined
  /**
   * The API answered the current request 401 and it was not sent again (the run waits for new
   * credentials, or ended while it did): the server took nothing of it.
   */
  refused: boolean
  /**
   * The API refused the run's request (an HTTP error before it named a run) once the run was
   * cancelled: the run ends cancelled, and the server took nothing of it.
   */
  refusedOnceCancelled: boolean
  /** The thread as the run found it in the store (a thread the server knows). */
  threadBefore: Types.TamboThread | undefined
  /** A new conversation's request went out: when, and what the client knew then (see `Landed.noteSent`). */
  sent: Sent | undefined
  /**
   * The search for where a new conversation's message landed (see `Landed.find`) started and has
   * not told yet: it goes on, or a Stop or the run's interruption cut it, and the run's end looks again.
   */
  landedUntold: boolean
  /**
   * A search for where a new conversation's message landed after a Stop, or the run's
   * interruption, left its request unanswered (see `Landed.findOrWithdraw`) found no thread
   * holding it: the server took nothing of the run.
   */
  landedNowhere: boolean

  // -- cancellation --
  /** The server was told to cancel the current step's run: completed with its answer once that `DELETE` ended. */
  cancelSent: Deferred.Deferred<ServerAnswer> | undefined
  /** Set by `cancelRun`: what the run fails with (unset again if the server ended the run meanwhile). */
  cancelledWith: RunCancelledError | undefined
  /** Completed once `cancelRun` decided: `true` cancelled, `false` the server ended the run meanwhile. */
  cancelling: Deferred.Deferred<boolean> | undefined
  /** Completed once the current step's last event was passed on to the run's consumer, or the step ended without it. */
  stepEnded: Deferred.Deferred<void> | undefined
  /** Completed once `cancelRun`'s decision waits for the run's consumer to take the step's last event. */
  awaitsReader: Deferred.Deferred<void> | undefined
  /**
   * Completed by `cancelRun`: a tool round waiting on it fails with it. Made only when a round
   * waits on it or the run is cancelled (as are the other deferreds here): most runs need none.
   */
  cancelled: Deferred.Deferred<never, RunCancelledError> | undefined
  /** A request was sent and its response has not come (or its step ended). */
  awaitingAnswer: boolean
  /** Completed when that response comes: what a cancellation waits on. */
  answeredSignal: Deferred.Deferred<void> | undefined
  /** Aborts the request in flight; the transport hands it over as each request starts. */
  abortRequest: Effect.Effect<void>

  // -- the lock --
  /** The run let go of its thread. */
  released: boolean
  /**
   * What a run waiting for this one awaits: made by the first such run, in the same
   * synchronous step as its look at `released`, so a release cannot come in between.
   */
  releasedSignal: Deferred.Deferred<void> | undefined
}
