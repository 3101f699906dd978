/**
 * The public Effect API of the SDK: runs as `Stream`s, threads, tools,
 * components, suggestions.
 *
 * @since 0.1.0
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import type * as Tracer from "effect/Tracer"
import * as Stream from "effect/Stream"
import * as Auth from "./Auth.js"
import * as ClientState from "./ClientState.js"
import type * as Events from "./Events.js"
import * as TamboConfig from "./TamboConfig.js"
import {
  ApiError,
  CallbackError,
  type ConfigError,
  isRetryable,
  isTamboError,
  MaxStepsExceededError,
  RunCancelledError,
  RunConflictError,
  type TamboError,
  ToolError,
  TransportError
} from "./TamboError.js"
import { Approvals } from "./internal/approvals.js"
import * as Callbacks from "./internal/callbacks.js"
import * as ComponentState from "./internal/componentState.js"
import { messageFromApi, threadFromApi } from "./internal/convert.js"
import * as Reconcile from "./internal/reconcile.js"
import * as Streams from "./internal/streams.js"
import * as TamboMcp from "./internal/tamboMcp.js"
import * as Unanswered from "./internal/unanswered.js"
import * as Mcp from "./Mcp.js"
import * as Transport from "./TamboTransport.js"
import * as ThreadStore from "./ThreadStore.js"
import * as Tool from "./Tool.js"
import * as ToolExecutor from "./ToolExecutor.js"
import * as ToolRegistry from "./ToolRegistry.js"
import type * as Types from "./Types.js"

/**
 * A context helper: its result is sent with every run as
 * `additionalContext[name]`. One that throws, rejects or fails fails the run
 * with a `CallbackError` (`ContextHelper`) before anything is sent.
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
 * `additionalContext`. One that throws, rejects or fails fails the run with a
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
 * Options of one run.
 *
 * @since 0.1.0
 * @category Models
 */
export interface RunOptions {
  /** The thread to run on. Default: the current thread (a new one if it is the placeholder). */
  readonly threadId?: string | undefined
  /** Run client-side tools and continue the run with their results. Default `true`. */
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
}

/**
 * A tool call the run paused for, as the API announced it (raw JSON arguments).
 *
 * @since 0.1.0
 * @category Models
 */
export interface PendingToolCall {
  readonly toolCallId: string
  readonly toolName: string
  readonly arguments: string
}

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
 * One that throws, rejects or fails denies the call: the model gets an error
 * result saying so, and the run goes on.
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
 *
 * @since 0.1.0
 * @category Models
 */
export type BusyPolicy = "reject" | "queue" | "interrupt"

type Start =
  | { readonly _tag: "Message"; readonly message: Transport.InputMessage }
  | { readonly _tag: "ToolResults"; readonly results: ReadonlyArray<Types.ToolResultContent> }

/** What a run's step reads (the transport's events) and writes (the run's). */
type StepChannel = Channel.Channel<
  Chunk.Chunk<RunEvent>,
  Chunk.Chunk<Transport.RunStreamEvent>,
  TamboError,
  TamboError,
  unknown,
  unknown
>

interface ActiveRun {
  readonly cancel: Effect.Effect<void>
  /** Completes once the run has let go of its thread. */
  readonly done: Effect.Effect<void>
}

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
  /** Name a thread (through the API) after a run, once it has enough messages. Default `false`. */
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
   * `lastRunError`, component props as stored. Best effort, bounded to 2 s.
   * Default `true`; `false` saves the read and leaves the thread as streamed.
   */
  readonly reconcileAfterRun?: boolean | undefined
  /** The app's own resources (server key `"registry"`), as `Mcp.MakeOptions` takes them. */
  readonly resources?: Mcp.MakeOptions["resources"]
  readonly listResources?: Mcp.MakeOptions["listResources"]
  readonly getResource?: Mcp.MakeOptions["getResource"]
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
     * the server.
     */
    readonly run: (
      message: string | Transport.InputMessage,
      options?: RunOptions
    ) => Stream.Stream<RunEvent, TamboError>
    /** Answers the pending tool calls of a paused run and streams the rest of it. */
    readonly continueRun: (
      threadId: string,
      results: ReadonlyArray<ToolCallResult>,
      options?: Omit<RunOptions, "threadId">
    ) => Stream.Stream<RunEvent, TamboError>
    /** The tool calls a thread's run waits on (also after a reload: from the server's thread). */
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
    readonly startNewThread: Effect.Effect<string>
    readonly getThread: (threadId?: string) => Effect.Effect<Option.Option<Types.TamboThread>>
    readonly listThreads: (
      params?: Transport.PageParams
    ) => Effect.Effect<Transport.ThreadList, TamboError>
    /** Loads a thread and its messages from the API into the store. */
    readonly fetchThread: (threadId: string) => Effect.Effect<Types.TamboThread, TamboError>
    readonly updateThreadName: (threadId: string, name: string) => Effect.Effect<void, TamboError>
    readonly generateThreadName: (threadId: string) => Effect.Effect<Option.Option<string>, TamboError>
    readonly deleteThread: (threadId: string) => Effect.Effect<void, TamboError>
    /**
     * Cancels the active run of a thread (default: the current one; the
     * placeholder finds a run still creating its thread). A run the server
     * already ended counts as cancelled.
     */
    readonly cancelRun: (threadId?: string) => Effect.Effect<void, TamboError>
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
     * sent; the API refuses it while a run is active on the thread.
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

const defaultMaxSteps = 10

/**
 * A streamed event, as a class instance rather than an object literal: V8
 * decides per literal site to allocate straight into the old generation once
 * most of a site's objects outlive a young collection, and a run event born
 * old keeps its young event alive through every young collection until the
 * next full one. V8 does not allocate a class's instances old that way
 * (measured under the bench's concurrent runs: 97% of the literals were born
 * old, none of the instances).
 */
class StreamedRunEvent implements RunEvent {
  constructor(
    readonly event: Transport.RunStreamEvent,
    readonly threadId: string,
    readonly snapshot: Types.TamboThread
  ) {}
}

const cancelTimeout = Duration.seconds(3)

const toInputMessage = (message: string | Transport.InputMessage): Transport.InputMessage =>
  typeof message === "string" ? { role: "user", content: [{ type: "text", text: message }] } : message

const parseArgs = (raw: string): unknown => {
  try {
    return raw.length === 0 ? {} : JSON.parse(raw)
  } catch {
    return raw
  }
}

/** The calls a fetched thread waits on, named from its `tool_use` blocks. */
const pendingFromApi = (remote: Transport.ThreadWithMessages): ReadonlyArray<ClientState.PendingToolCall> => {
  const ids = remote.pendingToolCallIds ?? []
  if (ids.length === 0) return []
  const names = new Map<string, string>()
  for (const message of remote.messages) {
    for (const block of message.content) if (block.type === "tool_use") names.set(block.id, block.name)
  }
  return ids.flatMap((toolCallId) => {
    const toolName = names.get(toolCallId)
    return toolName === undefined ? [] : [{ toolCallId, toolName }]
  })
}

/** A caller's result as the API's `tool_result` block. */
const toToolResult = (result: ToolCallResult): Types.ToolResultContent => {
  const text = typeof result.result === "string" ? result.result : JSON.stringify(result.result) ?? "null"
  return result.isError === true
    ? Tool.errorResult(result.toolCallId, text)
    : Tool.toolResult(result.toolCallId, [{ type: "text", text: text.length === 0 ? "\"\"" : text }])
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

/**
 * Builds the service from its parts.
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
> =>
  Effect.gen(function* () {
    const transport = yield* Transport.TamboTransport
    const auth = yield* Auth.Auth
    const store = yield* ThreadStore.ThreadStore
    const registry = yield* ToolRegistry.ToolRegistry
    const executor = yield* ToolExecutor.ToolExecutor
    // Present in `layer`: reads the MCP resources a message names before it is sent.
    const mcp = yield* Effect.serviceOption(Mcp.Mcp)
    const contextHelpers = new Map<string, ContextHelper>(Object.entries(options.contextHelpers ?? {}))
    // Threads with a run in flight in this client, and how to cancel it.
    // Read and written only in synchronous steps, so a plain map is safe: one update is never
    // interleaved with another.
    const activeRuns = new Map<string, ActiveRun>()
    let localThreadCounter = 0
    // The run (by lock key) whose new thread is recorded in the placeholder until it starts.
    let placeholderOwner: string | undefined

    const serviceScope = yield* Effect.scope

    const generateThreadName = (threadId: string): Effect.Effect<Option.Option<string>, TamboError> =>
      Effect.gen(function* () {
        const name = yield* withCredentials((c) => transport.generateThreadName(c, threadId))
        if (Option.isSome(name)) yield* apply([{ type: "UPDATE_THREAD", threadId, patch: { name: name.value } }])
        return name
      })

    // Threads this client asked a name for: at most once each.
    const named = new Set<string>()
    const nameThreshold = options.autoGenerateNameThreshold ?? 3
    /**
     * Names a thread in the background once it has enough messages (best effort), in the
     * span of the run that got it there.
     */
    const maybeName = (threadId: string, runSpan: Tracer.Span): Effect.Effect<void> =>
      options.autoGenerateThreadName !== true ? Effect.void : Effect.gen(function* () {
        if (named.has(threadId)) return
        const thread = (yield* store.getThread(threadId))?.thread
        if (thread === undefined || (thread.name !== undefined && thread.name !== "")) return
        if (thread.messages.length < nameThreshold) return
        named.add(threadId)
        yield* Effect.forkIn(Effect.ignore(generateThreadName(threadId)), serviceScope)
      }).pipe(Effect.withParentSpan(runSpan))

    const withCredentials = <A, E extends TamboError>(f: (c: Transport.Credentials) => Effect.Effect<A, E>) =>
      Auth.withCredentials(auth, f)

    const apply = (actions: ReadonlyArray<ClientState.Action>) => store.apply(actions)
    /**
     * After a run on a thread the server knows: the store takes the server's copy of its thread
     * (see Reconcile), also when the run never started there (refused, or cancelled before the
     * server named it): what the run showed (the user's message) goes. Not when the server could
     * not be reached, nor when the run failed before it recorded anything.
     */
    const reconcile = (threadId: string, started: boolean, exit: Exit.Exit<unknown, unknown>, runSpan: Tracer.Span): Effect.Effect<void> =>
      options.reconcileAfterRun === false || ClientState.isLocalThreadId(threadId) ||
        (!started && Exit.isFailure(exit) && Option.exists(
          Cause.failureOption(exit.cause),
          (error) => isTamboError(error) && (error._tag === "TransportError" || error._tag === "CallbackError")
        ))
        ? Effect.void
        : Reconcile.reconcileThread(
          threadId,
          withCredentials((c) => transport.retrieveThread(c, threadId)),
          // Recorded as the run records: its cost is the thread it touches, not the store.
          (actions) => record(threadId, actions)
        ).pipe(
          Effect.withParentSpan(runSpan)
        )
    // What runs record goes in one store update with whatever concurrent runs record in the
    // same tick: an update may copy the thread map, which grows with every thread. A run
    // reads back its own thread only, which leaves an unwatched store free to skip the copy.
    const record = (threadId: string, actions: ReadonlyArray<ClientState.Action>) =>
      store.recordBatched(threadId, actions)
    // What a run records as it starts or continues: recorded at once where that costs what it
    // touches (ThreadStore.tryRecord: queued as its thread's result, or written in place), else
    // as `record`. Only in that last case does the run wait for the store's next batch.
    const recordNow = (threadId: string, actions: ReadonlyArray<ClientState.Action>) =>
      Effect.suspend(() => {
        const recorded = store.tryRecord(threadId, actions)
        return recorded === undefined ? record(threadId, actions) : Effect.succeed(recorded)
      })
    const now = Clock.currentTimeMillis

    const gatherContext = (
      threadId: string | undefined,
      message: Transport.InputMessage,
      runOptions: RunOptions
    ): Effect.Effect<Record<string, unknown> | undefined, CallbackError> =>
      Effect.gen(function* () {
        const context: Record<string, unknown> = { ...(message.additionalContext ?? {}) }
        // Most runs have no helpers: no concurrent forEach to set up for them.
        const helpers = contextHelpers.size === 0 ? [] : yield* Effect.forEach(
          [...contextHelpers.entries()],
          ([name, helper]) =>
            Effect.map(Callbacks.runCallback(helper, Callbacks.contextHelperFailed(name)), (value) => [name, value] as const),
          { concurrency: "unbounded" }
        )
        for (const [name, value] of helpers) if (value !== undefined) context[name] = value
        if (runOptions.additionalContext !== undefined) Object.assign(context, runOptions.additionalContext)
        const tools = yield* registry.toolMap
        for (const [before, of] of [[options.beforeRun, "client"], [runOptions.beforeRun, "run"]] as const) {
          if (before === undefined) continue
          const extra = yield* Callbacks.runCallback(() => before({ threadId, message, tools }), Callbacks.beforeRunFailed(of))
          if (extra !== undefined && extra !== null && typeof extra === "object") Object.assign(context, extra)
        }
        return Object.keys(context).length > 0 ? context : undefined
      })

    /** The pending calls of a thread, with their arguments decoded and validated. */
    const describePending = (
      threadId: string,
      calls: ReadonlyArray<PendingToolCall>
    ): Effect.Effect<ReadonlyArray<PendingToolCallInfo>> =>
      Effect.forEach(calls, (call) =>
        Effect.gen(function* () {
          const raw = call.arguments
          const tool = yield* registry.get(call.toolName)
          if (Option.isNone(tool)) {
            return { toolCallId: call.toolCallId, toolName: call.toolName, args: parseArgs(raw), needsApproval: false, threadId }
          }
          const decoded = yield* Effect.either(tool.value.decodeArgs(parseArgs(raw)))
          if (Either.isLeft(decoded)) {
            return {
              toolCallId: call.toolCallId,
              toolName: call.toolName,
              args: parseArgs(raw),
              needsApproval: false,
              error: decoded.left.message,
              threadId
            }
          }
          const needsApproval = yield* Effect.orElseSucceed(tool.value.needsApproval(decoded.right), () => false)
          return { toolCallId: call.toolCallId, toolName: call.toolName, args: decoded.right, needsApproval, threadId }
        }))

    /** Pending calls as the store knows them: from the last pause, or from the server's thread after a reload. */
    const pendingOf = (threadId: string): Effect.Effect<ReadonlyArray<PendingToolCall>> =>
      Effect.map(store.getThread(threadId), (thread) => {
        if (thread === undefined) return []
        const inputs = new Map<string, unknown>()
        for (const message of thread.thread.messages) {
          for (const block of message.content) if (block.type === "tool_use") inputs.set(block.id, block.input)
        }
        return thread.pendingToolCalls.map((call) => ({
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          arguments: JSON.stringify(inputs.get(call.toolCallId) ?? {})
        }))
      })

    /** Approvals waiting for `approveToolCall` / `denyToolCall`, by tool call id and thread. */
    const approvals = new Approvals<ApprovalDecision>()

    /**
     * Registers the approvals a round waits for: done before the round's
     * CLIENT_APPROVAL_REQUESTED events go out, so an approval sent as soon as
     * one is seen finds its call. The handle waits for each decision and
     * forgets the calls when done.
     */
    const awaitApprovals = (needing: ReadonlyArray<PendingToolCallInfo>) =>
      Effect.map(
        Effect.forEach(needing, (info) =>
          Effect.map(Deferred.make<ApprovalDecision>(), (deferred) => {
            approvals.register(info.threadId, info.toolCallId, deferred)
            return [info, deferred] as const
          })),
        (registered) =>
          Effect.forEach(registered, ([info, deferred]) =>
            Effect.map(Deferred.await(deferred), (decision) => [info.toolCallId, decision] as const), {
            concurrency: "unbounded"
          }).pipe(
            Effect.ensuring(Effect.sync(() => {
              for (const [info, deferred] of registered) approvals.forget(info.threadId, info.toolCallId, deferred)
            }))
          )
      )

    const startRun = (start: Start, runOptions: RunOptions = {}): Stream.Stream<RunEvent, TamboError> =>
      // The run's span is handed to what needs it as a parent rather than put in the stream's
      // context: in the context, it wrapped every effect of every chunk in one more layer.
      Streams.unwrapScopedInSpan("Tambo.run", { captureStackTrace: false }, (runSpan) =>
      Effect.gen(function* () {
        // Waits for a token exchange in flight; a refused one fails the run before it starts.
        yield* auth.credentials
        const requested = runOptions.threadId ?? (yield* store.currentThreadId)
        // A thread this client has not seen: load it, for its history and its previousRunId.
        if (!ClientState.isLocalThreadId(requested) && (yield* store.getThread(requested)) === undefined) {
          yield* fetchThread(requested)
        }
        const isNew = ClientState.isLocalThreadId(requested)
        if (isNew && start._tag === "ToolResults") {
          return yield* new ToolError({ reason: "NotPending", message: "A new thread has no pending tool calls" })
        }
        const existing = isNew ? undefined : requested
        // How the run ends, once its first message is recorded (set below).
        let recordEnd: ((exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>) | undefined
        // What the run holds: nothing yet, then the placeholder, then also the thread's lock.
        let release = (): Effect.Effect<void> => Effect.void
        // Read synchronously by the per-chunk step below (the test clock too), and to time spans.
        const clock = yield* Effect.clock
        const timing = yield* FiberRef.get(FiberRef.currentTracerTimingEnabled)
        // The span of the step streaming now, until the step ends. A step's span is ended by the
        // step's own end (see stepLoop), or by the run's end if the run stops during a step:
        // no channel layer around each step for it.
        let openStep: Tracer.Span | undefined
        const endStep = (exit: Exit.Exit<unknown, unknown>): void => {
          const span = openStep
          if (span === undefined) return
          openStep = undefined
          span.end(timing ? clock.unsafeCurrentTimeNanos() : 0n, exit)
        }
        // One finalizer for all the run holds: the end is recorded (and the server told) first,
        // then the thread's lock and the placeholder are let go. Each release checks what it
        // holds, so registering it before anything is held loses nothing.
        yield* Scope.addFinalizerExit(
          yield* Effect.scope,
          // What in it talks to the server does so in the run's span (see recordEnd).
          (exit) => {
            endStep(exit)
            return Effect.ensuring(recordEnd === undefined ? Effect.void : recordEnd(exit), Effect.suspend(release))
          }
        )
        // A new thread's run records into the placeholder (what a UI shows for a new
        // conversation) unless another new-thread run is using it: then into a thread of its own.
        const localId = !isNew
          ? undefined
          : placeholderOwner === undefined && requested === ClientState.PLACEHOLDER_THREAD_ID
          ? ClientState.PLACEHOLDER_THREAD_ID
          : `${ClientState.LOCAL_THREAD_PREFIX}${++localThreadCounter}`
        const maxSteps = runOptions.maxSteps ?? defaultMaxSteps
        const autoExecute = runOptions.autoExecuteTools ?? true
        // The run's span gets the thread and first run ids at RUN_STARTED.
        runSpan.attribute("tambo.thread_id", existing ?? "new")
        runSpan.attribute("tambo.max_steps", maxSteps)

        // Where this run's events are recorded until RUN_STARTED names the thread.
        const run = {
          threadId: localId ?? requested,
          runId: undefined as string | undefined,
          lastRunId: undefined as string | undefined,
          finished: false,
          runError: undefined as ApiError | RunCancelledError | undefined,
          pending: [] as Array<PendingToolCall>,
          // The calls the server waits on until a request answering them opens: kept pending in
          // the store if the run ends before that.
          awaiting: [] as ReadonlyArray<ClientState.PendingToolCall>,
          steps: 0,
          locked: false,
          // The new thread's id from the response headers, until RUN_STARTED moves the run there.
          serverThreadId: undefined as string | undefined,
          cancelSent: false,
          cancelledWith: undefined as RunCancelledError | undefined,
          // The span of the step streaming now.
          stepSpan: undefined as Tracer.Span | undefined,
          lockKey: localId === ClientState.PLACEHOLDER_THREAD_ID
            ? `${ClientState.LOCAL_THREAD_PREFIX}${++localThreadCounter}`
            : localId ?? requested
        }
        const releasePlaceholder = () => {
          if (placeholderOwner === run.lockKey) placeholderOwner = undefined
        }
        // Taken with no effect in between since the choice of localId above.
        if (localId === ClientState.PLACEHOLDER_THREAD_ID) placeholderOwner = run.lockKey
        release = () => Effect.sync(releasePlaceholder)

        const cancelOnServer = (): Effect.Effect<void> => {
          const threadId = ClientState.isLocalThreadId(run.threadId) ? run.serverThreadId : run.threadId
          const runId = run.runId
          if (runId === undefined || threadId === undefined || run.finished || run.cancelSent) return Effect.void
          run.cancelSent = true
          return Effect.ignore(
            // Interruptible: this runs in finalizers, where an uninterruptible request would outlast the
            // bound (a server that never answered held the run's end until the REST timeout).
            withCredentials((c) => transport.cancelRun(c, threadId, runId)).pipe(Effect.interruptible, Effect.timeout(cancelTimeout))
          )
        }

        // cancelRun completes this: a tool round waiting on it fails with it, and the finalizer
        // cancels on the server. Made only when a round waits on it or the run is cancelled (as
        // is the deferred of `done` below): each allocates about 900 bytes, and most runs need
        // neither.
        let cancelled: Deferred.Deferred<never, RunCancelledError> | undefined
        const cancelledSignal = () => cancelled ??= Deferred.unsafeMake<never, RunCancelledError>(FiberId.none)
        // The server hears of it first (DELETE), then the stream closes: a closed connection
        // alone would also cancel, but only once the server next writes.
        const cancelThisRun: Effect.Effect<void> = Effect.suspend(() => {
          // Built when cancelled: the ids are the ones known by then.
          run.cancelledWith ??= new RunCancelledError({
            reason: "CancelledByClient",
            message: "The run was cancelled",
            threadId: run.threadId,
            ...(run.runId === undefined ? {} : { runId: run.runId })
          })
          // A request sent and not answered yet: the server names its run as it answers, in a
          // moment; wait for that (bounded) to tell it, rather than leave it a closed connection.
          const untilNamed = run.runId === undefined && awaitingAnswer
            ? Effect.ignore(Effect.timeout(Deferred.await(answeredSignal ??= Deferred.unsafeMake<void>(FiberId.none)), cancelTimeout))
            : Effect.void
          return Effect.zipRight(
            untilNamed,
            Effect.zipRight(
              Effect.suspend(cancelOnServer),
              Effect.zipRight(Deferred.fail(cancelledSignal(), run.cancelledWith), Effect.suspend(() => abortRequest))
            )
          )
        })
        // Whether a request was sent and its response has not come (or the step ended): what a
        // cancellation then waits on, with its deferred (made only when one waits).
        let awaitingAnswer = false
        let answeredSignal: Deferred.Deferred<void> | undefined
        const answered = (): void => {
          awaitingAnswer = false
          if (answeredSignal !== undefined) Deferred.unsafeDone(answeredSignal, Exit.void)
        }
        // Aborts the request in flight (its stream ends at once, even while it waits for
        // bytes); the transport hands it over as each request starts.
        let abortRequest: Effect.Effect<void> = Effect.void
        // What a run waiting for this one to let go of its thread awaits. Its deferred is made by
        // the first such run, in the same synchronous step as its look at `released`: a release
        // cannot come in between.
        let released = false
        let releasedSignal: Deferred.Deferred<void> | undefined
        const done: Effect.Effect<void> = Effect.suspend(() =>
          released ? Effect.void : Deferred.await(releasedSignal ??= Deferred.unsafeMake<void>(FiberId.none))
        )
        const entry: ActiveRun = { cancel: cancelThisRun, done }
        /** The cancellation, once cancelRun happened. */
        const cancellation = (): RunCancelledError | undefined => run.cancelledWith

        // One active run per thread in this client; what happens to a second one is the caller's choice.
        const onBusy = runOptions.onBusy ?? "reject"
        // Whether this run waited for (or cancelled) another one on its thread.
        let displaced = false
        const acquire: Effect.Effect<void, RunConflictError> = Effect.flatMap(
          Effect.sync(() => {
            const active = activeRuns.get(run.lockKey)
            if (active === undefined) activeRuns.set(run.lockKey, entry)
            return active
          }),
          (active) => {
            if (active === undefined) return Effect.void
            if (onBusy === "reject") {
              return new RunConflictError({
                reason: "ActiveInClient",
                message: `A run is already active on thread ${requested}`,
                threadId: requested
              })
            }
            const wait = onBusy === "interrupt"
              ? Effect.zipRight(active.cancel, active.done)
              : active.done
            displaced = true
            return Effect.zipRight(wait, Effect.suspend(() => acquire))
          }
        )
        release = () =>
          Effect.sync(() => {
            releasePlaceholder()
            if (activeRuns.get(run.lockKey) === entry) activeRuns.delete(run.lockKey)
            if (activeRuns.get(run.threadId) === entry) activeRuns.delete(run.threadId)
            released = true
            if (releasedSignal !== undefined) Deferred.unsafeDone(releasedSignal, Exit.void)
          })
        yield* acquire

        const tools = yield* registry.toApiTools
        const components = yield* registry.toApiComponents
        // The thread as the run finds it: the run it follows, and the calls the server waits on.
        const before = existing === undefined ? undefined : yield* store.getThread(existing)
        const previousRunId = before?.lastCompletedRunId
        if (before !== undefined) run.awaiting = before.pendingToolCalls
        const at0 = yield* now

        let firstMessage: Transport.InputMessage
        let additionalContext: Record<string, unknown> | undefined
        if (start._tag === "Message") {
          const message = Option.isSome(mcp) ? yield* mcp.value.resolveResources(start.message) : start.message
          additionalContext = yield* gatherContext(existing, message, runOptions)
          // Calls the thread still waits on are answered in the same message, before its content.
          const unanswered = Unanswered.forNewMessage(before)
          const sent = unanswered.send.length === 0 ? message : { ...message, content: [...unanswered.send, ...message.content] }
          firstMessage = additionalContext === undefined ? sent : { ...sent, additionalContext }
          yield* recordNow(run.threadId, [
            ...(run.threadId.startsWith(ClientState.LOCAL_THREAD_PREFIX)
              ? [{ type: "INIT_THREAD", threadId: run.threadId, at: at0 } as const]
              : []),
            ...(unanswered.record.length === 0
              ? []
              : [{ type: "TOOL_RESULTS", threadId: run.threadId, results: unanswered.record, at: at0 } as const]),
            {
              type: "USER_MESSAGE",
              threadId: run.threadId,
              message: {
                id: `local_user_${at0}_${++localThreadCounter}`,
                role: "user",
                content: message.content.map((c) => c),
                createdAt: ClientState.toIsoString(at0)
              },
              at: at0
            }
          ])
        } else {
          // The caller's results stay with the calls until the server takes them.
          const given = new Map(start.results.map((result) => [result.toolUseId, result]))
          run.awaiting = run.awaiting.map((call) => {
            const result = given.get(call.toolCallId)
            return result === undefined ? call : { ...call, result }
          })
          additionalContext = runOptions.additionalContext
          firstMessage = {
            role: "user",
            content: start.results,
            ...(additionalContext === undefined ? {} : { additionalContext })
          }
          yield* recordNow(run.threadId, [{ type: "TOOL_RESULTS", threadId: run.threadId, results: start.results, at: at0 }])
        }

        const snapshot = () => Effect.map(store.getThread(run.threadId), (thread) => thread!.thread)

        /**
         * The run's own bookkeeping of a chunk's events, up to its step's end: returns the index
         * of the event that ends the step (RUN_FINISHED, RUN_ERROR), else -1.
         */
        const track = (events: ReadonlyArray<Transport.RunStreamEvent>): number => {
          for (let i = 0; i < events.length; i++) {
            const event = events[i]!
            switch (event.type) {
              case "RUN_STARTED": {
                run.threadId = event.threadId
                run.runId = event.runId
                run.finished = false
                if (run.steps === 0) {
                  runSpan.attribute("tambo.thread_id", event.threadId)
                  runSpan.attribute("tambo.run_id", event.runId)
                }
                run.stepSpan?.attribute("tambo.thread_id", event.threadId)
                run.stepSpan?.attribute("tambo.run_id", event.runId)
                break
              }
              case "RUN_FINISHED": {
                run.finished = true
                run.lastRunId = run.runId
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

        /** A chunk as one action: the reducer moves the run to its thread at RUN_STARTED. */
        const chunkAction = (
          events: ReadonlyArray<Transport.RunStreamEvent>,
          // Where the run was recorded before this chunk (a RUN_STARTED in it moves it).
          from: string
        ): ClientState.Action => ({ type: "EVENTS", threadId: from, events, at: clock.unsafeCurrentTimeMillis() })

        const runEvents = (events: ReadonlyArray<Transport.RunStreamEvent>, thread: Types.TamboThread): Chunk.Chunk<RunEvent> => {
          const out: Array<RunEvent> = new Array(events.length)
          for (let i = 0; i < events.length; i++) {
            out[i] = new StreamedRunEvent(events[i]!, run.threadId, thread)
          }
          return Chunk.unsafeFromArray(out)
        }

        const startedByHeaders = (events: ReadonlyArray<Transport.RunStreamEvent>): ReadonlyArray<Transport.RunStreamEvent> =>
          run.serverThreadId === undefined || run.runId === undefined || events[0]!.type === "RUN_STARTED"
            ? events
            : [{ type: "RUN_STARTED", threadId: run.serverThreadId, runId: run.runId }, ...events]

        // Every chunk is recorded by a plain function of it where the store allows. A stage that
        // waits for the store's batch holds its chunk meanwhile, and so does every concurrent run
        // waiting for the same batch: their events outlive young collections (in 100 concurrent
        // runs, the first chunks alone made the collector copy half as much again).
        const stepLoop: StepChannel = Channel.readWithCause({
          onInput: (chunk: Chunk.Chunk<Transport.RunStreamEvent>) => {
            let events = Chunk.toReadonlyArray(chunk)
            // The transport's empty chunk after each read: nothing to record or pass on.
            if (events.length === 0) return stepLoop
            const from = run.threadId
            // A new thread's run named by its response's headers but not by a RUN_STARTED: it
            // starts as the headers say.
            if (ClientState.isLocalThreadId(from)) events = startedByHeaders(events)
            const end = track(events)
            // Nothing after the step's end is the run's: neither recorded nor passed on.
            if (end >= 0 && end < events.length - 1) events = events.slice(0, end + 1)
            const next = end < 0 ? emptyThenLoop : events[end]!.type === "RUN_ERROR" ? endAtError : emptyThenDrain
            const threadId = run.threadId
            if (!run.locked && !ClientState.isLocalThreadId(threadId)) {
              // The thread has its id now: cancelRun and conflicts can find the run under it.
              run.locked = true
              releasePlaceholder()
              activeRuns.set(threadId, entry)
            }
            const actions = [chunkAction(events, from)]
            // A chunk on the run's thread costs what it touches; one that moves the run to its
            // thread is written at once only if the store can do that in place.
            const recorded = store.tryRecord(threadId, actions)
            if (recorded !== undefined) {
              return Channel.zipRight(Channel.write(runEvents(events, recorded.thread)), next)
            }
            // Else it goes in the store's per-tick batch with what concurrent runs record.
            return Channel.flatMap(
              Channel.fromEffect(record(threadId, actions)),
              (thread) => Channel.zipRight(Channel.write(runEvents(events, thread!.thread)), next)
            )
          },
          onFailure: (cause) => {
            answered()
            endStep(Exit.failCause(cause))
            // A cancelled run's aborted request ends or breaks its stream: that is the cancellation.
            const cancelledBy = cancellation()
            return cancelledBy !== undefined && Option.isSome(Cause.failureOption(cause))
              ? Channel.fail(cancelledBy)
              : Channel.failCause(cause)
          },
          onDone: () => {
            answered()
            endStep(Exit.void)
            return afterStep()
          }
        })

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
          answered()
          endStep(Exit.void)
          return afterStep()
        })
        const emptyThenDrain = Channel.zipRight(Channel.write(Chunk.empty<RunEvent>()), drain)
        // The first RUN_ERROR ends the run: the response is let go (the server closes it anyway).
        const endAtError = Channel.zipRight(Channel.fromEffect(Effect.suspend(() => abortRequest)), endOfStep)

        /**
         * A step: one run stream (its request made by `open`), in a span of its own, then what
         * follows it (see afterStep), all in the one channel of the step's events.
         */
        const step = (
          open: (hooks: Transport.RunHooks) => Stream.Stream<Transport.RunStreamEvent, TamboError>
        ): Stream.Stream<RunEvent, TamboError> =>
          Stream.fromChannel(Channel.unwrap(Effect.uninterruptible(Effect.map(
            // The stack at this point is the SDK's own: not worth capturing for every step.
            Effect.makeSpan("Tambo.step", {
              attributes: { "tambo.step": run.steps },
              captureStackTrace: false,
              parent: runSpan
            }),
            // Made and recorded as open with no interruption in between: a span made is ended.
            (span) => {
              run.stepSpan = span
              openStep = span
              // Nothing of this step has finished yet, whether or not its server says RUN_STARTED.
              run.finished = false
              return Channel.pipeTo(Stream.toChannel(open(hooksOf(span))), stepLoop)
            }
          ))))

        const clientEvent = (event: ClientEvent) =>
          Effect.map(snapshot(), (thread): RunEvent => ({ event, threadId: run.threadId, snapshot: thread }))

        /** What follows a step: the run's end, its failure, or a round of tools. */
        const afterStep = (): Channel.Channel<Chunk.Chunk<RunEvent>, unknown, TamboError, unknown, unknown, unknown> => {
          const cancelledBy = cancellation()
          if (cancelledBy !== undefined) return Channel.fail(cancelledBy)
          if (run.runError !== undefined) return Channel.fail(run.runError)
          if (!run.finished) {
            return Channel.fail(
              new TransportError({ reason: "Disconnected", message: "The run's stream ended before RUN_FINISHED" })
            )
          }
          if (run.pending.length === 0) return Channel.void
          // What a round runs (tools, approvals, the next request) is in the run's span, and a
          // cancellation while it runs is what the run fails with.
          return Channel.catchAll(
            Stream.toChannel(Streams.unwrap(Effect.withParentSpan(toolRound(), runSpan))),
            (error) => Channel.fail(cancellation() ?? error)
          )
        }

        // The run's calls of each tool, for their maxCalls; made at its first round.
        let callCounts: ToolExecutor.CallCounts | undefined
        const toolRound = (): Effect.Effect<Stream.Stream<RunEvent, TamboError>, TamboError> =>
          Effect.gen(function* () {
            const calls = run.pending
            run.pending = []
            run.awaiting = calls.map(({ toolCallId, toolName }) => ({ toolCallId, toolName }))
            const infos = yield* describePending(run.threadId, calls)
            if (!autoExecute) {
              // Manual execution: the stream ends with what the caller must answer (continueRun).
              return Stream.fromEffect(clientEvent({ type: "CLIENT_AWAITING_TOOL_RESULTS", pendingToolCalls: infos }))
            }
            run.steps++
            if (run.steps > maxSteps) {
              return yield* new MaxStepsExceededError({
                reason: "MaxSteps",
                message: `The run asked for more than ${maxSteps} tool rounds`,
                maxSteps,
                threadId: run.threadId,
                ...(run.lastRunId === undefined ? {} : { runId: run.lastRunId })
              })
            }
            const needing = infos.filter((info) => info.needsApproval)
            const handler = runOptions.onApproval ?? options.onApproval
            // Approvals wait here, between two HTTP requests: no connection is held open.
            const byHuman = handler === undefined ? yield* awaitApprovals(needing) : undefined
            const requested = byHuman === undefined
              ? Stream.empty
              : Stream.fromIterable(needing).pipe(
                Stream.mapEffect((info) => clientEvent({ type: "CLIENT_APPROVAL_REQUESTED", ...info }))
              )
            const proceed = Effect.gen(function* () {
              // A handler that goes wrong denies the call, with why: the run goes on.
              const decisions = new Map<string, ApprovalDecision | CallbackError>(
                byHuman !== undefined
                  ? yield* byHuman
                  : yield* Effect.forEach(
                    needing,
                    (info) =>
                      Effect.map(
                        Effect.merge(Callbacks.runCallback(() => handler!(info), Callbacks.approvalHandlerFailed(info.toolName))),
                        (d) => [info.toolCallId, d] as const
                      ),
                    { concurrency: "unbounded" }
                  )
              )
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
              const executed = toRun.length === 0 ? [] : yield* executor.execute(toRun, {
                ...(options.toolConcurrency === undefined ? {} : { concurrency: options.toolConcurrency }),
                ...(runOptions.toolTimeout === undefined ? {} : { timeout: runOptions.toolTimeout }),
                // The paused step names its calls' results; maxCalls counts across the whole run.
                ...(run.lastRunId === undefined ? {} : { threadId: run.threadId, runId: run.lastRunId }),
                callCounts: callCounts ??= ToolExecutor.makeCallCounts(),
                // Approval was decided above.
                approve: () => Effect.succeed(true)
              }).pipe(Effect.withSpan("Tambo.executeTools", {
                attributes: { "tambo.thread_id": run.threadId, "tambo.run_id": run.lastRunId ?? "" }
              }))
              const byId = new Map<string, Types.ToolResultContent>()
              for (const result of [...denied, ...executed]) byId.set(result.toolUseId, result)
              const results = calls.flatMap((call) => {
                const result = byId.get(call.toolCallId)
                return result === undefined ? [] : [result]
              })
              const at = yield* now
              yield* recordNow(run.threadId, [{ type: "TOOL_RESULTS", threadId: run.threadId, results, at }])
              // Until the server takes them, the results stay with the calls it waits on.
              run.awaiting = run.awaiting.map((call) => {
                const result = byId.get(call.toolCallId)
                return result === undefined ? call : { ...call, result }
              })
              run.runId = undefined
              return step((hooks) => continueWith(results, hooks))
            })
            // Tools and approvals run between two requests: a cancellation stops them too.
            return Stream.concat(
              requested,
              Streams.unwrap(Effect.raceFirst(Effect.withParentSpan(proceed, runSpan), Deferred.await(cancelledSignal())))
            )
          })

        const requestFor = (message: Transport.InputMessage, previous: string | undefined): Transport.RunRequest => ({
          message,
          ...(previous === undefined ? {} : { previousRunId: previous }),
          ...(tools.length > 0 ? { tools } : {}),
          ...(components.length > 0 ? { availableComponents: components } : {}),
          ...(runOptions.toolChoice === undefined ? {} : { toolChoice: runOptions.toolChoice }),
          ...(runOptions.initialMessages === undefined ? {} : { initialMessages: runOptions.initialMessages })
        })

        // cancelRun aborts the request in flight, which the transport hands over here; no fiber
        // watches for the cancellation. A request about to start after it is not sent.
        const registerAbort = (abort: Effect.Effect<void>): Effect.Effect<void, RunCancelledError> =>
          Effect.suspend(() => {
            if (run.cancelledWith !== undefined) return Effect.zipRight(abort, Effect.fail(run.cancelledWith))
            abortRequest = abort
            awaitingAnswer = true
            return Effect.void
          })
        // The response headers name the run before RUN_STARTED does: enough to cancel it.
        const onOpen = (ids: { readonly threadId: string | undefined; readonly runId: string | undefined }) => {
          if (ids.runId !== undefined) {
            run.runId = ids.runId
            // The server took the request's tool results (it names the run only once it has).
            run.awaiting = []
          }
          answered()
          if (ids.threadId !== undefined && ClientState.isLocalThreadId(run.threadId)) run.serverThreadId = ids.threadId
        }
        // A request whose stream ends early tells the server before its connection closes.
        const beforeAbort = Effect.withParentSpan(Effect.suspend(cancelOnServer), runSpan)
        // After RUN_FINISHED the run waits for nothing more from the response: a server that keeps
        // it open is not waited for.
        const finished = () => run.finished
        // The step's span is the parent of its request's.
        const hooksOf = (span: Tracer.Span): Transport.RunHooks => ({ registerAbort, onOpen, span, beforeAbort, finished })

        const continueWith = (results: ReadonlyArray<Types.ToolResultContent>, hooks: Transport.RunHooks) =>
          Auth.withCredentialsStream(auth, (c) =>
            transport.runOnThread(
              c,
              run.threadId,
              requestFor(
                { role: "user", content: results, ...(additionalContext === undefined ? {} : { additionalContext }) },
                run.lastRunId
              ),
              hooks
            ))

        // Whatever ends the stream early (interruption, a consumer that stops
        // reading, a failure) cancels a run still going, and records how it ended.
        recordEnd = (exit) =>
          Effect.gen(function* () {
            // The run's last chunks may wait for the store's next batch: the run ends once
            // it is written, so whoever sees the run end sees all of it in the store. Waiting
            // for the batch, rather than writing now, lets runs that end together share it.
            yield* record(run.threadId, [])
            const at = yield* now
            if (Exit.isSuccess(exit) && run.finished) return yield* maybeName(run.threadId, runSpan)
            if (run.runError !== undefined) return
            yield* Effect.withParentSpan(cancelOnServer(), runSpan)
            // Interruption, an early stop and a cancellation leave the thread cancelled, not errored;
            // any other failure, a defect included, is an error.
            const error: { readonly message: string; readonly code: string; readonly status?: number; readonly isRetryable: boolean } | undefined =
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
            // A run the server knew ends there too: the next run's previousRunId must name it.
            const ended = run.runId !== undefined && !ClientState.isLocalThreadId(run.threadId) ? run.runId : undefined
            const pendingToolCalls = run.awaiting.length === 0 ? {} : { pendingToolCalls: run.awaiting }
            yield* record(run.threadId, [
              ...(ended === undefined
                ? []
                : [{ type: "SET_LAST_COMPLETED_RUN_ID", threadId: run.threadId, runId: ended } as const]),
              error === undefined
                ? { type: "RUN_ENDED_LOCALLY", threadId: run.threadId, outcome: "cancelled", ...pendingToolCalls, at }
                : {
                  type: "RUN_ENDED_LOCALLY",
                  threadId: run.threadId,
                  outcome: "error",
                  error,
                  ...pendingToolCalls,
                  at
                }
            ])
          }).pipe(Effect.zipRight(Effect.suspend(() => reconcile(run.threadId, (run.runId ?? run.lastRunId) !== undefined, exit, runSpan))))

        const open = (previous: string | undefined, hooks: Transport.RunHooks) => {
          const first = requestFor(firstMessage, previous)
          // A 401 before the run starts (an expired token) exchanges again and retries once.
          return Auth.withCredentialsStream(auth, (c) =>
            existing === undefined ? transport.createRun(c, first, hooks) : transport.runOnThread(c, existing, first, hooks))
        }
        // A stale previousRunId (another client, or a run cancelled before it was named, moved
        // the thread on) is refused before any work: ask the server for the right one, once.
        // So is a new message answering other tool calls than the server waits on (a run whose
        // last request went unanswered may or may not have reached it): it answers the server's.
        const opened = (hooks: Transport.RunHooks) =>
          existing === undefined ? open(previousRunId, hooks) : open(previousRunId, hooks).pipe(
            Stream.catchAll((error) =>
              error._tag === "ApiError" && (error.code === "INVALID_PREVIOUS_RUN" ||
                  (start._tag === "Message" && (error.code === "MISSING_RESULTS" || error.code === "EXTRA_RESULTS")))
                ? Streams.unwrap(
                  Effect.map(
                    withCredentials((c) => transport.retrieveThread(c, existing)).pipe(Effect.withParentSpan(runSpan)),
                    (remote) => {
                      if (start._tag === "Message") {
                        run.awaiting = pendingFromApi(remote)
                        firstMessage = Unanswered.forServer(firstMessage, run.awaiting)
                      }
                      return open(remote.lastCompletedRunId, hooks)
                    }
                  )
                )
                : Stream.fail(error)
            )
          )
        // A displaced run may still hold the server's lock for a moment (cancelled before its
        // response named it, the server notices the closed connection on its next write).
        const afterDisplaced = (hooks: Transport.RunHooks) =>
          displaced
            ? Stream.retry(
              opened(hooks),
              Schedule.spaced("50 millis").pipe(
                Schedule.intersect(Schedule.recurs(60)),
                Schedule.whileInput((error: TamboError) => error._tag === "RunConflictError")
              )
            )
            : opened(hooks)
        return step(afterDisplaced)
      }))

    const run = (message: string | Transport.InputMessage, runOptions?: RunOptions) =>
      startRun({ _tag: "Message", message: toInputMessage(message) }, runOptions)

    const continueRun = (
      threadId: string,
      results: ReadonlyArray<ToolCallResult>,
      runOptions: Omit<RunOptions, "threadId"> = {}
    ): Stream.Stream<RunEvent, TamboError> =>
      Streams.unwrap(Effect.gen(function* () {
        if ((yield* store.getThread(threadId)) === undefined) yield* fetchThread(threadId)
        const pending = yield* pendingOf(threadId)
        const byId = new Map(pending.map((call) => [call.toolCallId, call]))
        const answered = new Set<string>()
        for (const message of (yield* store.getThread(threadId))!.thread.messages) {
          for (const block of message.content) if (block.type === "tool_result") answered.add(block.toolUseId)
        }
        const content: Array<Types.ToolResultContent> = []
        for (const result of results) {
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
          if (result.isError !== true) yield* validateOutput(call.toolName, result)
          content.push(toToolResult(result))
        }
        return startRun({ _tag: "ToolResults", results: content }, { ...runOptions, threadId })
      }))

    const validateOutput = (toolName: string, result: ToolCallResult): Effect.Effect<void, ToolError> =>
      Effect.gen(function* () {
        const tool = yield* registry.get(toolName)
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

    const cancelRun = (threadId?: string): Effect.Effect<void, TamboError> =>
      Effect.gen(function* () {
        const id = threadId ?? (yield* store.currentThreadId)
        // A run creating its thread in the placeholder is known by its lock key until it starts.
        const local = activeRuns.get(
          id === ClientState.PLACEHOLDER_THREAD_ID && placeholderOwner !== undefined ? placeholderOwner : id
        )
        if (local !== undefined) return yield* local.cancel
        // Not running here: cancel what the store shows running (a quiet no-op when idle).
        const streaming = (yield* store.getThread(id))?.streaming
        const runId = streaming?.status === "idle" ? undefined : streaming?.runId
        if (runId !== undefined) {
          // A run the server ended already (404) is cancelled as far as anyone can tell.
          yield* withCredentials((c) => transport.cancelRun(c, id, runId)).pipe(
            Effect.catchIf((error) => error._tag === "ApiError" && error.status === 404, () => Effect.void)
          )
        }
      }).pipe(Effect.withSpan("Tambo.cancelRun", { attributes: { "tambo.thread_id": threadId ?? "current" } }))

    const fetchThread = (threadId: string): Effect.Effect<Types.TamboThread, TamboError> =>
      Effect.gen(function* () {
        const remote = yield* withCredentials((c) => transport.retrieveThread(c, threadId))
        const at = yield* now
        const state = yield* apply([
          { type: "INIT_THREAD", threadId, at, initialThread: threadFromApi(remote) },
          {
            type: "LOAD_THREAD_MESSAGES",
            threadId,
            messages: remote.messages.map(messageFromApi),
            skipIfStreaming: true
          },
          ...(remote.lastCompletedRunId === undefined
            ? []
            : [{ type: "SET_LAST_COMPLETED_RUN_ID", threadId, runId: remote.lastCompletedRunId } as const]),
          // The server keeps the ids of the calls a paused run waits on: they survive a reload.
          { type: "UPDATE_THREAD", threadId, patch: { pendingToolCalls: pendingFromApi(remote) } }
        ])
        return state.threadMap[threadId]!.thread
      })

    return Tambo.of({
      run,
      continueRun,
      getPendingToolCalls: (threadId) =>
        Effect.gen(function* () {
          if ((yield* store.getThread(threadId)) === undefined) yield* fetchThread(threadId)
          return yield* describePending(threadId, yield* pendingOf(threadId))
        }),
      approveToolCall: (toolCallId, approval) =>
        approvals.resolve(
          toolCallId,
          approval?.threadId,
          approval?.args === undefined ? { approved: true } : { approved: true, args: approval.args }
        ),
      denyToolCall: (toolCallId, reason, options) =>
        approvals.resolve(toolCallId, options?.threadId, reason === undefined ? { approved: false } : { approved: false, reason }),
      state: store.get,
      store,
      switchThread: (threadId) =>
        Effect.gen(function* () {
          const previous = yield* store.currentThreadId
          const known = (yield* store.getThread(threadId)) !== undefined
          yield* apply([{ type: "SET_CURRENT_THREAD", threadId }])
          if (!known && threadId !== ClientState.PLACEHOLDER_THREAD_ID) {
            // A thread that cannot be loaded does not stay current: runs would all fail on it.
            yield* fetchThread(threadId).pipe(
              Effect.tapError(() => apply([{ type: "SET_CURRENT_THREAD", threadId: previous }]))
            )
          }
        }),
      startNewThread: Effect.gen(function* () {
        const at = yield* now
        yield* apply([{ type: "START_NEW_THREAD", threadId: ClientState.PLACEHOLDER_THREAD_ID, at }])
        return ClientState.PLACEHOLDER_THREAD_ID
      }),
      getThread: (threadId) =>
        Effect.map(
          Effect.flatMap(threadId === undefined ? store.currentThreadId : Effect.succeed(threadId), store.getThread),
          (thread) => Option.map(Option.fromNullable(thread), (t) => t.thread)
        ),
      listThreads: (params) => withCredentials((c) => transport.listThreads(c, params)),
      fetchThread,
      updateThreadName: (threadId, name) =>
        Effect.gen(function* () {
          yield* withCredentials((c) => transport.updateThread(c, threadId, { name }))
          yield* apply([{ type: "UPDATE_THREAD", threadId, patch: { name } }])
        }),
      generateThreadName,
      deleteThread: (threadId) =>
        Effect.gen(function* () {
          yield* withCredentials((c) => transport.deleteThread(c, threadId))
          yield* apply([{ type: "REMOVE_THREAD", threadId }])
        }),
      cancelRun,
      registerTool: (tool) => registry.register(tool),
      registerTools: (tools) => registry.registerMany(tools),
      registerComponent: (component) => registry.registerComponent(component),
      addContextHelper: (name, helper) => Effect.sync(() => void contextHelpers.set(name, helper)),
      removeContextHelper: (name) => Effect.sync(() => void contextHelpers.delete(name)),
      listSuggestions: (threadId, messageId) =>
        withCredentials((c) => transport.listSuggestions(c, threadId, messageId)),
      generateSuggestions: (threadId, messageId, suggestionOptions) =>
        Effect.gen(function* () {
          const availableComponents = yield* registry.toApiComponents
          return yield* withCredentials((c) =>
            transport.generateSuggestions(c, threadId, messageId, {
              ...(suggestionOptions?.maxSuggestions === undefined
                ? {}
                : { maxSuggestions: suggestionOptions.maxSuggestions }),
              availableComponents
            })
          )
        }),
      authState: auth.state,
      authChanges: auth.changes,
      updateComponentState: (threadId, componentId, update) =>
        ComponentState.updateComponentState({ transport, store, withCredentials }, threadId, componentId, update)
    })
  })

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
> => {
  const service = Layer.scoped(
    Tambo,
    Effect.gen(function* () {
      const tambo = yield* make(options)
      if (options.tools !== undefined) yield* tambo.registerTools(options.tools)
      for (const component of options.components ?? []) yield* tambo.registerComponent(component)
      return tambo
    })
  )
  const transport = Transport.layer
  const auth = Auth.layer.pipe(Layer.provide(transport))
  const store = options.store === undefined ? ThreadStore.layer : ThreadStore.layerExternal(options.store)
  const tools = ToolExecutor.layer.pipe(Layer.provideMerge(ToolRegistry.layer))
  const base = Layer.mergeAll(transport, auth, store, tools)
  // MCP servers connect in the background; the MCP SDK loads only when one is listed or connected.
  const withMcp = Mcp.layerWith({
    servers: options.mcpServers ?? [],
    resources: options.resources,
    listResources: options.listResources,
    getResource: options.getResource
  }).pipe(Layer.provideMerge(base))
  const full = service.pipe(Layer.provideMerge(withMcp))
  const tamboMcp = options.tamboMcpServer
  if (tamboMcp === undefined || tamboMcp === false) return full
  return Layer.scopedDiscard(TamboMcp.follow(tamboMcp === true ? {} : tamboMcp)).pipe(Layer.provideMerge(full))
}

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
 * seen it.
 *
 * @since 0.2.0
 * @category Accessors
 */
export const switchThread = (threadId: string): Effect.Effect<void, TamboError, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.switchThread(threadId))

/**
 * Makes a new, empty thread current; succeeds with its (placeholder) id.
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
 * Cancels the active run of a thread (default: the current one).
 *
 * @since 0.2.0
 * @category Accessors
 */
export const cancelRun = (threadId?: string): Effect.Effect<void, TamboError, Tambo> =>
  Effect.flatMap(Tambo, (tambo) => tambo.cancelRun(threadId))

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
