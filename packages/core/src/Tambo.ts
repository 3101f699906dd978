/**
 * The public Effect API of the SDK: runs as `Stream`s, threads, tools,
 * components, suggestions.
 *
 * @since 0.1.0
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Auth from "./Auth.js"
import type * as ClientState from "./ClientState.js"
import type * as Events from "./Events.js"
import * as layers from "./internal/tambo/layer.js"
import * as internal from "./internal/tambo/service.js"
import * as TamboConfig from "./TamboConfig.js"
import type { ConfigError, TamboError, ToolError } from "./TamboError.js"
import type * as Mcp from "./Mcp.js"
import type * as Transport from "./TamboTransport.js"
import type * as ThreadStore from "./ThreadStore.js"
import type * as Tool from "./Tool.js"
import type * as ToolExecutor from "./ToolExecutor.js"
import type * as ToolRegistry from "./ToolRegistry.js"
import type * as Types from "./Types.js"

/**
 * A context helper: its result is sent with every run as
 * `additionalContext[name]` (`undefined`, or `null`, sends nothing). One that
 * throws, rejects or fails, or gives a value that cannot be sent as JSON (a
 * BigInt, a cycle), fails the run with a `CallbackError` (`ContextHelper`)
 * before anything is sent. There is no timeout: one that never settles keeps
 * its run from being sent until the run is stopped.
 *
 * @since 0.1.0
 * @category Models
 */
export type ContextHelper = () =>
  | Record<string, unknown>
  | undefined
  | PromiseLike<Record<string, unknown> | undefined>
  | Effect.Effect<Record<string, unknown> | undefined>

/**
 * What `beforeRun` is told.
 *
 * @since 0.1.0
 * @category Models
 */
export interface BeforeRunContext {
  /** `undefined` for a run that creates its thread. */
  readonly threadId: string | undefined
  readonly message: Transport.InputMessage
  readonly tools: Readonly<Record<string, Tool.Definition>>
}

/**
 * Runs before every run. A returned object is merged into the message's
 * `additionalContext`. One that throws, rejects or fails, or returns a value
 * that cannot be sent as JSON (a BigInt, a cycle), fails the run with a
 * `CallbackError` (`BeforeRun`) before anything is sent.
 *
 * @since 0.1.0
 * @category Models
 */
export type BeforeRun = (
  context: BeforeRunContext
) =>
  | void
  | Record<string, unknown>
  | PromiseLike<void | Record<string, unknown>>
  | Effect.Effect<void | Record<string, unknown>>

/**
 * Which run `cancelRun` cancels.
 *
 * @since 0.2.0
 * @category Models
 */
export interface CancelRunOptions {
  /**
   * Only this run: the thread's active run is cancelled if it is the run of
   * this id (any of its steps' ids), and left alone if it is another one,
   * say a run that took the thread once this one let go of it.
   */
  readonly runId?: string | undefined
}

/**
 * Options of one run.
 *
 * @since 0.1.0
 * @category Models
 */
export interface RunOptions {
  /**
   * The thread to run on. Default: the current thread (a new one if it is the placeholder). A
   * new conversation's local thread (a `local:` id the store showed while its first run waited
   * for the server) is the thread that run creates: a run asked for there meanwhile is a second
   * run of that thread (its `onBusy` decides), and once the server named it, the local id is that
   * thread, for as long as the store holds it, here, in `continueRun` and in `cancelRun`. A local
   * thread whose run ended with none starts a new one. Once the thread the server named left the
   * store (forgotten, deleted), the local id names none: the run fails with a `ConfigError`
   * (`InvalidOption`) saying the client holds no thread of it, having sent nothing.
   */
  readonly threadId?: string | undefined
  /**
   * Run client-side tools and continue the run with their results. Default `true`. Should another
   * client (another tab) answer the calls while the tools run, the server refuses their results
   * (also with a `409`, `CONCURRENT_RUN`, when that client answered as the server took them):
   * once a read of the thread shows none of the calls waiting, the run fails with an `ApiError`
   * (400, code `EXTRA_RESULTS`, or `MISSING_RESULTS` when that client's run asked for other calls
   * since, as `continueRun`) saying another client answered them, sends nothing more, and the
   * store shows the thread as the server has it, that client's answer in it. Refused while the
   * server still waits on the calls, the results go once more, after the thread's last run.
   */
  readonly autoExecuteTools?: boolean | undefined
  /** The most tool rounds one run may take. Default 10. */
  readonly maxSteps?: number | undefined
  readonly toolChoice?: Types.ToolChoice | undefined
  readonly additionalContext?: Record<string, unknown> | undefined
  /** Runs before this run, after the client-wide `beforeRun`. */
  readonly beforeRun?: BeforeRun | undefined
  /** Timeout of one tool call. Default 30 seconds. */
  readonly toolTimeout?: Duration.DurationInput | undefined
  /** When the thread already has a run in this client. Default `"reject"`. */
  readonly onBusy?: BusyPolicy | undefined
  /** Decides tool calls that need approval (else they wait for `approveToolCall` / `denyToolCall`). */
  readonly onApproval?: ApprovalHandler | undefined
  /** Messages that open the thread, when this run creates it (ignored on an existing thread). @since 0.2.0 */
  readonly initialMessages?: ReadonlyArray<Types.InitialInputMessage> | undefined
  /**
   * Called once with the run's thread id on the server: for a new conversation, when the server's
   * answer first names it, before the store shows its thread under that name; at the latest, as a
   * run that did not complete ends on a thread the server holds (also one stopped before any of its
   * events came, or queued behind the run that created the thread). What it throws is ignored.
   * @since 0.2.0
   */
  readonly onThreadId?: ((threadId: string) => void) | undefined
  /**
   * Called with the local thread (a `local:` id) a new conversation's run records in, when that
   * is not the placeholder: the placeholder was another run's, or `startNewThread` moved the run
   * off it before the server named its thread (also while the run still waited for its
   * credentials or its turn; it is told then). The store shows the run there, and `cancelRun`
   * finds it there, until the server names the thread. What it throws is ignored.
   * @since 0.2.0
   */
  readonly onLocalThreadId?: ((threadId: string) => void) | undefined
  /**
   * Called when a Stop of this run (`cancelRun`, a run that interrupts it) finds the server ended
   * it first (its `DELETE` answered 404, or its last event came before anything was sent): the
   * Stop now waits for the run's consumer to take that last event. A consumer that holds events
   * back (a buffer that waits for room) lets go of them from then on: the facade's iterator does
   * so, and an Effect consumer that buffers the run may too. What it throws is ignored.
   * @since 0.2.0
   */
  readonly onStopAwaitsLastEvent?: (() => void) | undefined
}

/**
 * A tool call the run paused for, as the API announced it (raw JSON
 * arguments): `Events.PendingToolCall`.
 *
 * @since 0.1.0
 * @category Models
 */
export type PendingToolCall = Events.PendingToolCall

/**
 * A pending tool call with its arguments decoded and validated by the tool's
 * input schema (`error` says why they are invalid; `args` is then the raw parse).
 *
 * @since 0.1.0
 * @category Models
 */
export interface PendingToolCallInfo {
  readonly threadId: string
  readonly toolCallId: string
  readonly toolName: string
  readonly args: unknown
  readonly needsApproval: boolean
  readonly error?: string
}

/**
 * Events the client adds to a run's stream (they never come from the server).
 *
 * - `CLIENT_APPROVAL_REQUESTED`: a tool call waits for `approveToolCall` / `denyToolCall`.
 * - `CLIENT_AWAITING_TOOL_RESULTS`: with `autoExecuteTools: false`, the last element of the
 *   stream: the calls to answer with `continueRun`.
 *
 * @since 0.1.0
 * @category Models
 */
export type ClientEvent =
  | ({ readonly type: "CLIENT_APPROVAL_REQUESTED" } & PendingToolCallInfo)
  | {
    readonly type: "CLIENT_AWAITING_TOOL_RESULTS"
    readonly pendingToolCalls: ReadonlyArray<PendingToolCallInfo>
  }

/**
 * One element of a run's stream: an event, and the thread after the chunk of
 * events it arrived in (so the snapshot always includes the event).
 *
 * @since 0.1.0
 * @category Models
 */
export interface RunEvent {
  readonly event: Transport.RunStreamEvent | ClientEvent
  readonly threadId: string
  readonly snapshot: Types.TamboThread
}

/**
 * How a tool call that needs approval was decided. Approved arguments may be
 * edited; they are validated like the model's.
 *
 * @since 0.1.0
 * @category Models
 */
export type ApprovalDecision =
  | { readonly approved: true; readonly args?: unknown }
  | { readonly approved: false; readonly reason?: string }

/**
 * Decides approvals instead of a human (an Effect, a promise or a value).
 * One that throws, rejects, fails, or answers with anything but a decision
 * (`undefined` included) denies the call: the model gets an error result
 * saying so, and the run goes on.
 *
 * @since 0.1.0
 * @category Models
 */
export type ApprovalHandler = (
  call: PendingToolCallInfo
) => ApprovalDecision | PromiseLike<ApprovalDecision> | Effect.Effect<ApprovalDecision>

/**
 * The caller's answer to a pending tool call (manual execution).
 *
 * @since 0.1.0
 * @category Models
 */
export interface ToolCallResult {
  readonly toolCallId: string
  readonly result: unknown
  readonly isError?: boolean
}

/**
 * What a run does when its thread already has one in this client:
 * fail with `RunConflictError` (default), wait for it, or cancel it first.
 * Runs waiting for a thread start in the order they were asked for, each
 * once its predecessor ended. An `"interrupt"` run takes the place of every
 * run asked for before it: the thread's run is cancelled, and the runs
 * still waiting for the thread (`"queue"` or `"interrupt"`) end with
 * `RunCancelledError`, having sent nothing; runs asked for after it wait
 * for it. A run waiting for its thread is ended by `cancelRun` of the thread. The
 * cancellation an `"interrupt"` asked for is carried out whatever becomes
 * of the new run: a `cancelRun` of the thread, or its caller giving up on
 * it (interrupting its stream), ends the new run's wait, not the
 * cancellation of the run it displaces. A new conversation (the placeholder)
 * whose run's thread the store does not show yet (the server may have named
 * it already) counts as that run's thread: a run asked for there is refused,
 * waits, or cancels it, and goes on the thread the server names for it (or,
 * if that run ended before the server named one, creates the thread); a
 * `cancelRun` of the placeholder, or of the thread the server named
 * meanwhile, ends it. After `startNewThread` the placeholder is a new
 * conversation again, and its run creates another thread; a run waiting
 * there before goes on with the run it waits for. A run started on a
 * thread by the consumer of that thread's run, as it takes an event (in
 * `Stream.runForEach` or `Stream.tap`, or in a fiber it forks there),
 * cannot wait for that run, which ends only once its consumer reads on:
 * `"interrupt"` cancels it as `cancelRun` does, records its end (cancelled,
 * or as the server ended it) and goes on, and that run's stream fails with
 * `RunCancelledError` as its consumer reads on; `"queue"` fails with
 * `RunConflictError`, having sent nothing.
 *
 * @since 0.1.0
 * @category Models
 */
export type BusyPolicy = "reject" | "queue" | "interrupt"

/**
 * Options of the whole client.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Options extends TamboConfig.Options {
  readonly tools?: ReadonlyArray<Tool.Definition> | undefined
  readonly components?: ReadonlyArray<Tool.AvailableComponent> | undefined
  readonly beforeRun?: BeforeRun | undefined
  readonly contextHelpers?: Readonly<Record<string, ContextHelper>> | undefined
  /**
   * Name a thread (through the API) after a run, once it has enough messages. Default `false`.
   * A rename (`updateThreadName`) sent while the name is being made wins over it. A naming that
   * failed (an error of the API, a dropped connection) is tried again after the thread's next run;
   * one that found no name is not.
   */
  readonly autoGenerateThreadName?: boolean | undefined
  /** How many messages a thread needs before it is named. Default 3. */
  readonly autoGenerateNameThreshold?: number | undefined
  /** Concurrent tool calls in one round. Default 4. */
  readonly toolConcurrency?: number | undefined
  /** Decides tool calls that need approval, for every run. */
  readonly onApproval?: ApprovalHandler | undefined
  /** MCP servers to connect: their tools are registered for the model. */
  readonly mcpServers?: ReadonlyArray<Mcp.McpServerInfo> | undefined
  /**
   * Once a run ended (finished, failed, cancelled or dropped), read its thread
   * from the API once and merge it into the store, so the store holds what the
   * server stored: message ids, the text a cancelled reply kept,
   * `lastRunError`, component props as stored. A thread the API no longer has
   * (deleted by another client meanwhile) leaves the store. Best effort,
   * bounded to 2 s. Default `true`; `false` saves the read and leaves the
   * thread as streamed.
   */
  readonly reconcileAfterRun?: boolean | undefined
  /** The app's own resources (server key `"registry"`), as `Mcp.MakeOptions` takes them. */
  readonly resources?: Mcp.MakeOptions["resources"]
  readonly listResources?: Mcp.MakeOptions["listResources"]
  readonly getResource?: Mcp.MakeOptions["getResource"]
  /**
   * The roots MCP servers are given (`roots/list`): the places the app lets
   * them work in. `Mcp.Service.setMcpRoots` changes them.
   *
   * @since 0.2.0
   */
  readonly mcpRoots?: Mcp.MakeOptions["roots"]
  /**
   * Answers MCP servers' URL elicitations (a server asks the user to go to
   * a URL), for the servers without a handler of their own. Given here,
   * the servers listed in `mcpServers` are told from their first
   * connection that the client takes them; `Mcp.Service.setUrlElicitationHandler`
   * changes it.
   *
   * @since 0.2.0
   */
  readonly mcpUrlElicitationHandler?: Mcp.MakeOptions["urlElicitationHandler"]
  /**
   * Connect Tambo's own MCP server (`<tamboUrl>/mcp`, the project's MCP
   * prompts and resources, server key `"tambo"`) with an MCP access token
   * for the current thread, or for `contextKey` while no thread is current.
   * The token is renewed when the thread changes and before it expires.
   * Default: off.
   */
  readonly tamboMcpServer?: boolean | { readonly contextKey?: string | undefined } | undefined
}

/**
 * @since 0.1.0
 * @category Context
 */
export class Tambo extends Context.Tag("@tambo-effect/core/Tambo")<Tambo, Tambo.Service>() {}

/**
 * @since 0.1.0
 */
export declare namespace Tambo {
  /**
   * @since 0.1.0
   * @category Models
   */
  export interface Service {
    /**
     * Sends a message and streams the run, tool rounds included. Interrupting
     * the stream (or not reading it to its end) cancels the run on the server,
     * then aborts the request. Tool calls the thread still waits on (a run
     * that ended before answering them) are answered in the same request: the
     * results the tools gave, else error results saying they were cancelled.
     * Its chunks follow the network's reads, each followed by an empty chunk,
     * so the stream holds none of the events already read while it waits for
     * the server. A message, `additionalContext` or `initialMessages` that
     * cannot be sent as JSON fails it with a `ConfigError` (`InvalidOption`;
     * against an AG-UI agent an `AgUiError`, `InvalidInput`) before anything
     * is recorded or sent. The server's `409` (another run holds the thread
     * there) fails it with `RunConflictError` (`ActiveOnServer`) at once,
     * unless the thread's run before it was this client's and may still hold
     * the server's lock: a run it displaced (`onBusy`), or one whose
     * connection closed with no `DELETE` the server took (a Stop the server
     * named no run for in time, an interruption before it named one, a
     * dropped connection whose `DELETE` did not get through), which the
     * server lets go of only once it notices. Then the request is sent again
     * every 50 ms, for up to 3 s, before it fails so.
     */
    readonly run: (
      message: string | Transport.InputMessage,
      options?: RunOptions
    ) => Stream.Stream<RunEvent, TamboError>
    /**
     * Answers the pending tool calls of a paused run and streams the rest of
     * it. It may be called as soon as the run's CLIENT_AWAITING_TOOL_RESULTS
     * event is seen: it waits for that run to finish ending (its end
     * recorded, the thread read back) rather than conflict with it; run by
     * that run's own consumer as it takes the event (in `Stream.runForEach`
     * or `Stream.tap`), it records that end itself, since the run's stream
     * ends only once its consumer reads on. A
     * result for a call not pending, one failing its tool's output schema, or
     * one that cannot be sent as JSON fails it with a `ToolError` before
     * anything is sent. Every pending call needs a result: the API refuses
     * results for some of them only with an `ApiError` (400, code
     * `MISSING_RESULTS`), and against an AG-UI agent so does the client,
     * before anything is recorded or sent; the calls stay pending. Results
     * for calls another client (another tab) answered since this one read
     * the thread fail with an `ApiError` (400, code `EXTRA_RESULTS`, or
     * `MISSING_RESULTS` naming the calls the thread waits on when the other
     * client's run asked for others since), as the API refuses them after
     * the thread's last run: once the server's thread, read after it refused
     * them as following an older run (or with a `409`, `CONCURRENT_RUN`, as
     * the other client answered), shows none of them pending, nothing more
     * is sent, and the store shows the thread as the server has it; while it
     * still waits on them, they are sent once more after its last run, and
     * again every 50 ms for up to 3 s while the server answers `409` (the
     * step that paused may hold its lock a moment after its end) before
     * failing with `RunConflictError` (`ActiveOnServer`). A
     * call given two results takes the last, as the API keeps it. A new
     * conversation's local thread id whose thread the client no longer holds
     * (forgotten or deleted since the server named it) fails with a
     * `ConfigError` (`InvalidOption`) saying so, having sent nothing, as
     * `run` does (see `RunOptions.threadId`).
     */
    readonly continueRun: (
      threadId: string,
      results: ReadonlyArray<ToolCallResult>,
      options?: Omit<RunOptions, "threadId">
    ) => Stream.Stream<RunEvent, TamboError>
    /**
     * The tool calls a thread's run waits on (also after a reload: from the
     * server's thread). A new conversation's local thread id whose thread
     * the client no longer holds (forgotten or deleted since the server
     * named it) fails with a `ConfigError` (`InvalidOption`) saying so,
     * having sent nothing (see `fetchThread`).
     */
    readonly getPendingToolCalls: (threadId: string) => Effect.Effect<ReadonlyArray<PendingToolCallInfo>, TamboError>
    /**
     * Approves a call waiting for approval, optionally with edited `args`.
     * Providers reuse call ids: `threadId` says which thread's call; without
     * it, an id waiting in several threads fails with `ToolError`
     * (`Ambiguous`), one waiting nowhere with `ToolError` (`NotPending`).
     */
    readonly approveToolCall: (
      toolCallId: string,
      options?: { readonly args?: unknown; readonly threadId?: string | undefined }
    ) => Effect.Effect<void, ToolError>
    /** Denies a call waiting for approval (the model is told, with `reason`); `threadId` as for `approveToolCall`. */
    readonly denyToolCall: (
      toolCallId: string,
      reason?: string,
      options?: { readonly threadId?: string | undefined }
    ) => Effect.Effect<void, ToolError>
    readonly state: Effect.Effect<ClientState.ClientState>
    readonly store: ThreadStore.ThreadStore.Service
    readonly switchThread: (threadId: string) => Effect.Effect<void, TamboError>
    /**
     * Makes the placeholder current, an empty new conversation, and
     * succeeds with its id: the next run on it creates a thread. A run of
     * this client still creating its thread in the placeholder (the server
     * has not named it yet), or asked for there and still waiting to start
     * (for its credentials, its turn), goes on in a local thread of its own
     * (`RunOptions.onLocalThreadId` tells which): the thread the server names
     * for it holds its messages and its ending, and does not become current;
     * `cancelRun` of the placeholder no longer finds it, one of its local
     * thread does.
     */
    readonly startNewThread: Effect.Effect<string>
    readonly getThread: (threadId?: string) => Effect.Effect<Option.Option<Types.TamboThread>>
    /**
     * The AG-UI agent's shared state of a thread (default: the current one):
     * `TamboThread.state`, or `{}` while neither the agent nor the app set
     * one. A thread the client does not hold fails with `ConfigError`
     * (`InvalidOption`).
     *
     * @since 0.2.0
     */
    readonly getAgentState: <S = unknown>(threadId?: string) => Effect.Effect<S, ConfigError>
    /**
     * Sets the AG-UI agent's shared state of a thread, sent with its next
     * run: `update` is the new state, or a function of the state as it is
     * (applied in one change of the store, so nothing written meanwhile is
     * lost). Succeeds with the new state. A state that is not a JSON value (a
     * cycle, a BigInt, a function, `undefined`, a class instance), or a thread
     * the client does not hold, fails with `ConfigError` (`InvalidOption`)
     * and the state stays. `S` is the app's word for the state's shape: what
     * the agent sends is not checked against it.
     *
     * @since 0.2.0
     */
    readonly setAgentState: <S = unknown>(threadId: string, update: S | ((previous: S) => S)) => Effect.Effect<S, ConfigError>
    readonly listThreads: (
      params?: Transport.PageParams
    ) => Effect.Effect<Transport.ThreadList, TamboError>
    /**
     * Loads a thread and its messages from the API into the store. A thread
     * the store holds takes the server's copy, as at the end of a run (what
     * another client or tab changed shows), keeping what only this client
     * knows (reasoning, message keys). A thread
     * the API no longer has (deleted by another client or tab) fails the call
     * as the API answers it, and leaves the store. A copy that answers after
     * a run of this client took the thread, or after the server took a
     * rename or a component's state of this client, is older than what the
     * store holds: the store keeps its own, and returns it. A copy asked for
     * before the thread left the store (`forgetThread`, `deleteThread`) is
     * returned, and does not bring the thread back. A thread id that is not a
     * non-empty string fails with a `ConfigError` (`InvalidOption`) before
     * anything is sent, here and in every other call about a thread. So
     * does a new conversation's id (the placeholder, or the local thread
     * its run went on in) here, in `updateThreadName`, `generateThreadName`,
     * `deleteThread`, `updateComponentState` and the suggestion calls: the
     * server has no thread of it until its first message's run names one.
     * Once it did, a local thread's id (one the store showed, kept by the
     * app) is the thread the server named, in these calls, `switchThread`,
     * `getPendingToolCalls`, a run (`RunOptions.threadId`), `continueRun`,
     * `cancelRun`, `getThread`, `forgetThread`, the agent state and the
     * approvals (`threadId`), for as long as the store holds that thread;
     * the placeholder is always the next new conversation. Once that thread
     * left the store (forgotten, deleted), the local id names none: these
     * calls fail with a `ConfigError` (`InvalidOption`) that says the client
     * holds no thread of it, not that it waits for the server; the approvals
     * find no call waiting in it (`ToolError`, `NotPending`), as in any thread
     * no call waits in.
     */
    readonly fetchThread: (threadId: string) => Effect.Effect<Types.TamboThread, TamboError>
    /**
     * Renames a thread on the server, then in the store: its name, and its
     * `updatedAt` as the server answered. Of renames of a
     * thread at once, the store shows the name the server kept: the last one
     * sent that it took, whichever answer comes last. A run on the thread
     * that ends meanwhile does not take the name back: its end reads the
     * thread again once the server took the name. Interrupting it (a
     * timeout) stops the wait, not the rename: the server may have taken
     * it, so it goes on to its end and the store takes the answer.
     */
    readonly updateThreadName: (threadId: string, name: string) => Effect.Effect<void, TamboError>
    /**
     * Asks the API to name a thread, and records the name with the
     * thread's `updatedAt` as the server answered; succeeds with the name
     * the API made. A rename sent meanwhile wins, in the store and on the
     * server (it is sent again once the name was made). Interrupting it
     * stops the wait, not the naming, as for `updateThreadName`.
     */
    readonly generateThreadName: (threadId: string) => Effect.Effect<Option.Option<string>, TamboError>
    /**
     * Deletes a thread on the server, then from the store. A run of this
     * client on the thread is cancelled before the store forgets the thread,
     * so it does not come back with the run's last events, nor with a read
     * of it already in flight. A thread the API no longer has (deleted by
     * another client or tab) fails the call as the API answers it, and
     * leaves the store. Interrupting it stops the wait, not the deletion,
     * as for `updateThreadName`: the thread leaves the store once the
     * server deleted it.
     */
    readonly deleteThread: (threadId: string) => Effect.Effect<void, TamboError>
    /**
     * Drops a thread from the store, not from the server, and tells
     * whether it did: for a long-lived client (a backend serving many
     * conversations) whose store would otherwise keep every thread it ever
     * ran. The next run on the thread, or a later `fetchThread`, reads it
     * back from the server (a `fetchThread` already in flight does not);
     * what only this client knew of it (reasoning text, a message's `key`)
     * does not come back. Refused (`false`) for a thread
     * the store does not hold, the current thread, a thread a run of this
     * client is on, and a thread only this client holds (not yet saved, or
     * an AG-UI agent's).
     *
     * @since 0.2.0
     */
    readonly forgetThread: (threadId: string) => Effect.Effect<boolean>
    /**
     * Cancels the active run of a thread (default: the current one; the
     * placeholder finds a run still creating its thread). A run not yet on
     * its thread, still waiting for its credentials, ends cancelled having
     * sent nothing (another client's run the thread shows is then left alone). So do the runs waiting for the thread's run to end
     * (`onBusy: "queue"` or `"interrupt"`, whose cancellation of the
     * thread's run goes on): Stop stops the thread, rather than start the next
     * message at once; they recorded nothing, so the thread shows none of
     * their messages (as the facade's `cancelRun`, which aborts each of its
     * runs on the thread). A run the server already ended counts as
     * cancelled. A run of this client whose last event came (its
     * `RUN_FINISHED`, not a pause for tools, or a `RUN_ERROR`) was ended by
     * the server: it is not cancelled, nothing is sent, its stream ends as
     * that event says (completed, or failed with its error), and
     * `cancelRun` resolves once its end is recorded (at once while its
     * caller has not read on past that event: its end waits for that
     * caller). So is a run the server ended while the cancellation was on
     * its way: the `DELETE` answers 404 (the run is no longer the thread's
     * current one), and the run reads on for its last event, for as long as
     * the cancellation waits for the server (3 s), then ends as the server
     * ended it (`cancelRun` resolves once the run's caller took that event;
     * run by the run's own consumer as it takes an event, in
     * `Stream.runForEach` or `Stream.tap`, it resolves once the `DELETE`
     * answered, without waiting for that consumer, which then reads the
     * run's last event); a server that sends nothing more by then is cut
     * off, and the run ends cancelled. A run paused for client tools is over on the
     * server (its calls wait there): nothing is sent, it ends cancelled if
     * it had not handed its calls over yet, and they stay pending. Once a
     * run's stream ended (also one that handed its calls to its caller,
     * `autoExecuteTools: false`), `cancelRun` resolves once its end is
     * recorded. Another client's run, as a read of the thread showed it
     * (its `status` not `idle` without a run of this client), is cancelled
     * on the server and the thread read again. With `runId`, only that run.
     * A run whose request the server has not answered yet (it has not named
     * the run) is cancelled once the answer names it, within 3 s; else its
     * request is aborted and the server cancels it as the connection closes
     * (on a new conversation, the thread its message landed in, found among
     * the newest threads, becomes the conversation's, and a run still going
     * there is cancelled by its id; none holding it, the server never got
     * it, and the message leaves the conversation, as a refused message
     * does; should it reach the server later all the same, the
     * conversation's next run finds that thread first and goes on there).
     * It ends cancelled either way; a request the API refused meanwhile
     * took nothing, and its message leaves the thread, as a refused message
     * does.
     * Once asked for, the cancellation of a run of this client goes whole, to
     * the server too: interrupting `cancelRun` stops its wait, not the
     * cancellation.
     */
    readonly cancelRun: (threadId?: string, options?: CancelRunOptions) => Effect.Effect<void, TamboError>
    readonly registerTool: (tool: Tool.Definition) => Effect.Effect<void, Tool.ToolDefinitionError>
    readonly registerTools: (tools: ReadonlyArray<Tool.Definition>) => Effect.Effect<void, Tool.ToolDefinitionError>
    readonly registerComponent: (component: Tool.AvailableComponent) => Effect.Effect<void, Tool.ToolDefinitionError>
    readonly addContextHelper: (name: string, helper: ContextHelper) => Effect.Effect<void>
    readonly removeContextHelper: (name: string) => Effect.Effect<void>
    readonly listSuggestions: (
      threadId: string,
      messageId: string
    ) => Effect.Effect<ReadonlyArray<Transport.Suggestion>, TamboError>
    readonly generateSuggestions: (
      threadId: string,
      messageId: string,
      options?: { readonly maxSuggestions?: number }
    ) => Effect.Effect<ReadonlyArray<Transport.Suggestion>, TamboError>
    readonly authState: Effect.Effect<Auth.AuthState>
    readonly authChanges: Stream.Stream<Auth.AuthState>
    /**
     * Replaces (`state`) or patches (`patch`) the state of a component block
     * on the server, then in the store; resolves with the new state. A bad
     * update fails with `ConfigError` (`InvalidOption`) before anything is
     * sent, and so does a new conversation's id, as in `fetchThread`; the
     * API refuses it while a run is active on the thread. Interrupting it
     * stops the wait, not the update, as for `updateThreadName`: the server
     * may have taken the state, so it goes on to its end and the store takes
     * the state the server answered. Storing a state changes the thread on the
     * server (its `updatedAt`), which the answer does not carry: a thread the
     * store holds is read again before the call resolves (a read that fails
     * leaves the store with the new state and the time before it).
     *
     * @since 0.2.0
     */
    readonly updateComponentState: (
      threadId: string,
      componentId: string,
      update: Transport.ComponentStateUpdate
    ) => Effect.Effect<Record<string, unknown>, TamboError>
  }
}

/**
 * Builds the service from the services in the context: the transport, auth,
 * the store, the tool registry and executor, and MCP when it is there.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (
  options: Pick<
    Options,
    "beforeRun" | "contextHelpers" | "autoGenerateThreadName" | "autoGenerateNameThreshold" | "toolConcurrency" | "onApproval"
    | "reconcileAfterRun"
  > = {}
): Effect.Effect<
  Tambo.Service,
  never,
  | Transport.TamboTransport
  | Auth.Auth
  | ThreadStore.ThreadStore
  | ToolRegistry.ToolRegistry
  | ToolExecutor.ToolExecutor
  | Scope.Scope
> => internal.make(options)

/**
 * Everything `layer` and `layerConfig` provide: the `Tambo` service and the
 * services it is built from, for programs that use them directly.
 *
 * @since 0.1.0
 * @category Layers
 */
export type Provided =
  | Tambo
  | ThreadStore.ThreadStore
  | ToolRegistry.ToolRegistry
  | Auth.Auth
  | Transport.TamboTransport
  | TamboConfig.TamboConfig
  | Mcp.Mcp

/**
 * The `Tambo` service over a configuration and an `HttpClient` already in the
 * context: register the initial tools and components, and build every part.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerWithoutConfig = (
  options: Omit<Options, keyof TamboConfig.Options> & {
    readonly store?: ThreadStore.ExternalStore<ClientState.ClientState> | undefined
  } = {}
): Layer.Layer<
  Exclude<Provided, TamboConfig.TamboConfig>,
  Tool.ToolDefinitionError,
  TamboConfig.TamboConfig | HttpClient.HttpClient
> =>
  layers.withTamboMcp(
    options,
    Layer.scoped(Tambo, internal.makeRegistered(options)).pipe(Layer.provideMerge(layers.services(options)))
  )

/**
 * Everything the SDK needs, from options: configuration, `fetch`-based HTTP,
 * transport, auth, an in-memory (or the given external) store, tools.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer = (
  options: Options & { readonly store?: ThreadStore.ExternalStore<ClientState.ClientState> | undefined }
): Layer.Layer<
  Provided,
  ConfigError | Tool.ToolDefinitionError
> =>
  layerWithoutConfig(options).pipe(
    Layer.provideMerge(TamboConfig.layer(options)),
    Layer.provide(FetchHttpClient.layer)
  )

/**
 * Like `layer`, with the configuration read from the environment
 * (`TAMBO_API_KEY`, `TAMBO_URL`, `TAMBO_USER_KEY`, ...).
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerConfig = (
  options: Omit<Options, keyof TamboConfig.Options> = {}
): Layer.Layer<
  Provided,
  ConfigError | Tool.ToolDefinitionError | import("effect/ConfigError").ConfigError
> =>
  layerWithoutConfig(options).pipe(
    Layer.provideMerge(TamboConfig.layerConfig),
    Layer.provide(FetchHttpClient.layer)
  )

// ---------------------------------------------------------------------------
// Accessors: the service's functions, with `Tambo` in their requirements
// ---------------------------------------------------------------------------

/**
 * `Tambo.run` of the `Tambo` service in the context: sends a message and
 * streams the run, tool rounds included. Interrupting the stream aborts the
 * request and cancels the run on the server.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Tambo } from "@tambo-effect/core"
 *
 * const program = Tambo.run("Hi").pipe(
 *   Stream.runForEach(({ event }) => Effect.log(event.type)),
 *   Effect.provide(Tambo.layerConfig())
 * )
 * ```
 *
 * @since 0.2.0
 * @category Accessors
 */
export const run = (
  message: string | Transport.InputMessage,
  options?: RunOptions
): Stream.Stream<RunEvent, TamboError, Tambo> => Stream.unwrap(Effect.map(Tambo, (tambo) => tambo.run(message, options)))

/**
 * Answers the pending tool calls of a paused run and streams the rest of it.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const continueRun = (
  threadId: string,
  results: ReadonlyArray<ToolCallResult>,
  options?: Omit<RunOptions, "threadId">
): Stream.Stream<RunEvent, TamboError, Tambo> =>
  Stream.unwrap(Effect.map(Tambo, (tambo) => tambo.continueRun(threadId, results, options)))

/**
 * The tool calls a thread's run waits on (also after a reload: from the
 * server's thread).
 *
 * @since 0.2.0
 * @category Accessors
 */
export const getPendingToolCalls = (
  threadId: string
): Effect.Effect<ReadonlyArray<PendingToolCallInfo>, TamboError, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.getPendingToolCalls(threadId))

/**
 * Approves a tool call that waits for approval, optionally with edited
 * arguments; `threadId` says which thread's call when providers reuse ids.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const approveToolCall = (
  toolCallId: string,
  options?: { readonly args?: unknown; readonly threadId?: string | undefined }
): Effect.Effect<void, ToolError, Tambo> => Effect.flatMap(Tambo, (tambo) => tambo.approveToolCall(toolCallId, options))

/**
 * Denies a tool call that waits for approval: the model is told, with
 * `reason`.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const denyToolCall = (
  toolCallId: string,
  reason?: string,
  options?: { readonly threadId?: string | undefined }
): Effect.Effect<void, ToolError, Tambo> => Effect.flatMap(Tambo, (tambo) => tambo.denyToolCall(toolCallId, reason, options))

/**
 * The client state: every known thread, and which one is current.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const state: Effect.Effect<ClientState.ClientState, never, Tambo> = Effect.flatMap(Tambo, (tambo) => tambo.state)

/**
 * Makes a thread current, loading it from the API if the client has not
 * seen it. A thread that cannot be loaded (the switch fails), or whose
 * load is interrupted (a timeout, a caller that gave up), does not stay
 * current: the thread current before comes back.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const switchThread = (threadId: string): Effect.Effect<void, TamboError, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.switchThread(threadId))

/**
 * Makes a new, empty thread current; succeeds with its (placeholder) id (see
 * `Tambo.Service.startNewThread`).
 *
 * @since 0.2.0
 * @category Accessors
 */
export const startNewThread: Effect.Effect<string, never, Tambo> = Effect.flatMap(
  Tambo,
  (tambo) => tambo.startNewThread
)

/**
 * A thread of the store (default: the current one).
 *
 * @since 0.2.0
 * @category Accessors
 */
export const getThread = (threadId?: string): Effect.Effect<Option.Option<Types.TamboThread>, never, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.getThread(threadId))

/**
 * The AG-UI agent's shared state of a thread (default: the current one).
 *
 * @since 0.2.0
 * @category Accessors
 */
export const getAgentState = <S = unknown>(threadId?: string): Effect.Effect<S, ConfigError, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.getAgentState<S>(threadId))

/**
 * Sets the AG-UI agent's shared state of a thread, sent with its next run:
 * a new state, or a function of the state as it is.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const setAgentState = <S = unknown>(
  threadId: string,
  update: S | ((previous: S) => S)
): Effect.Effect<S, ConfigError, Tambo> => Effect.flatMap(Tambo, (tambo) => tambo.setAgentState<S>(threadId, update))

/**
 * A page of the user's threads, newest first.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const listThreads = (
  params?: Transport.PageParams
): Effect.Effect<Transport.ThreadList, TamboError, Tambo> => Effect.flatMap(Tambo, (tambo) => tambo.listThreads(params))

/**
 * Loads a thread and its messages from the API into the store.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const fetchThread = (threadId: string): Effect.Effect<Types.TamboThread, TamboError, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.fetchThread(threadId))

/**
 * Renames a thread on the server and in the store.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const updateThreadName = (threadId: string, name: string): Effect.Effect<void, TamboError, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.updateThreadName(threadId, name))

/**
 * Asks the API to name a thread after its conversation.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const generateThreadName = (threadId: string): Effect.Effect<Option.Option<string>, TamboError, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.generateThreadName(threadId))

/**
 * Deletes a thread on the server and from the store.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const deleteThread = (threadId: string): Effect.Effect<void, TamboError, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.deleteThread(threadId))

/**
 * Drops a thread from the store, not from the server (see
 * `Tambo.Service.forgetThread`); `false` when it must stay.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const forgetThread = (threadId: string): Effect.Effect<boolean, never, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.forgetThread(threadId))

/**
 * Cancels the active run of a thread (default: the current one); with
 * `runId`, only if it is that run.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const cancelRun = (threadId?: string, options?: CancelRunOptions): Effect.Effect<void, TamboError, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.cancelRun(threadId, options))

/**
 * Registers a client-side tool for the model.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const registerTool = (tool: Tool.Definition): Effect.Effect<void, Tool.ToolDefinitionError, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.registerTool(tool))

/**
 * Registers client-side tools for the model.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const registerTools = (
  tools: ReadonlyArray<Tool.Definition>
): Effect.Effect<void, Tool.ToolDefinitionError, Tambo> => Effect.flatMap(Tambo, (tambo) => tambo.registerTools(tools))

/**
 * Registers a component the model may render.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const registerComponent = (
  component: Tool.AvailableComponent
): Effect.Effect<void, Tool.ToolDefinitionError, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.registerComponent(component))

/**
 * Adds a context helper: its result is sent with every run as
 * `additionalContext[name]`.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const addContextHelper = (name: string, helper: ContextHelper): Effect.Effect<void, never, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.addContextHelper(name, helper))

/**
 * Replaces or patches the state of a component block, on the server and in
 * the store.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const updateComponentState = (
  threadId: string,
  componentId: string,
  update: Transport.ComponentStateUpdate
): Effect.Effect<Record<string, unknown>, TamboError, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.updateComponentState(threadId, componentId, update))

/**
 * Removes a context helper.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const removeContextHelper = (name: string): Effect.Effect<void, never, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.removeContextHelper(name))

/**
 * The suggestions stored for a message.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const listSuggestions = (
  threadId: string,
  messageId: string
): Effect.Effect<ReadonlyArray<Transport.Suggestion>, TamboError, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.listSuggestions(threadId, messageId))

/**
 * Asks the API for suggestions of what to say after a message.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const generateSuggestions = (
  threadId: string,
  messageId: string,
  options?: { readonly maxSuggestions?: number }
): Effect.Effect<ReadonlyArray<Transport.Suggestion>, TamboError, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.generateSuggestions(threadId, messageId, options))

/**
 * Who the client acts for now.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const authState: Effect.Effect<Auth.AuthState, never, Tambo> = Effect.flatMap(
  Tambo,
  (tambo) => tambo.authState
)

/**
 * The auth state, then each change of it.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const authChanges: Stream.Stream<Auth.AuthState, never, Tambo> = Stream.unwrap(
  Effect.map(Tambo, (tambo) => tambo.authChanges)
)
