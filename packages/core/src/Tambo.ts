/**
 * The public Effect API of the SDK: runs as `Stream`s, threads, tools,
 * components, suggestions.
 *
 * @since 0.1.0
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Auth from "./Auth.js"
import * as ClientState from "./ClientState.js"
import type * as Events from "./Events.js"
import * as TamboConfig from "./TamboConfig.js"
import {
  ApiError,
  type ConfigError,
  isRetryable,
  isTamboError,
  MaxStepsExceededError,
  RunCancelledError,
  RunConflictError,
  type TamboError,
  TransportError
} from "./TamboError.js"
import { messageFromApi, threadFromApi } from "./internal/convert.js"
import * as Transport from "./TamboTransport.js"
import * as ThreadStore from "./ThreadStore.js"
import type * as Tool from "./Tool.js"
import * as ToolExecutor from "./ToolExecutor.js"
import * as ToolRegistry from "./ToolRegistry.js"
import type * as Types from "./Types.js"

/**
 * A context helper: its result is sent with every run as
 * `additionalContext[name]`.
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
 * `additionalContext`.
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
}

/**
 * One element of a run's stream: an event, and the thread after the chunk of
 * events it arrived in (so the snapshot always includes the event).
 *
 * @since 0.1.0
 * @category Models
 */
export interface RunEvent {
  readonly event: Transport.RunStreamEvent
  readonly threadId: string
  readonly snapshot: Types.TamboThread
}

/**
 * A tool call the run is waiting on (with `autoExecuteTools: false`).
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
  /** Name a thread automatically once it has this many messages. */
  readonly autoGenerateThreadName?: boolean | undefined
  readonly autoGenerateNameThreshold?: number | undefined
  /** Concurrent tool calls in one round. Default 4. */
  readonly toolConcurrency?: number | undefined
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
     * the stream (or not reading it to its end) aborts the request and
     * cancels the run on the server.
     */
    readonly run: (
      message: string | Transport.InputMessage,
      options?: RunOptions
    ) => Stream.Stream<RunEvent, TamboError>
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
    /** Cancels the active run of a thread (default: the current one). */
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
  }
}

const defaultMaxSteps = 10
const cancelTimeout = Duration.seconds(3)

const isAsync = <A>(u: unknown): u is PromiseLike<A> =>
  typeof u === "object" && u !== null && "then" in u && typeof u.then === "function"

/** Runs a user callback that may return a value, a promise or an Effect. */
const runCallback = <A>(f: () => A | PromiseLike<A> | Effect.Effect<A>): Effect.Effect<A, never> =>
  Effect.suspend(() => {
    const out = f()
    if (Effect.isEffect(out)) return out as Effect.Effect<A>
    if (isAsync<A>(out)) return Effect.promise(() => Promise.resolve(out))
    return Effect.succeed(out)
  })

const toInputMessage = (message: string | Transport.InputMessage): Transport.InputMessage =>
  typeof message === "string" ? { role: "user", content: [{ type: "text", text: message }] } : message

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
  options: Pick<Options, "beforeRun" | "contextHelpers" | "autoGenerateThreadName" | "autoGenerateNameThreshold" | "toolConcurrency"> = {}
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
    const contextHelpers = new Map<string, ContextHelper>(Object.entries(options.contextHelpers ?? {}))
    // Threads with a run in flight in this client, and how to cancel it.
    const activeRuns = yield* Ref.make(new Map<string, { readonly cancel: Effect.Effect<void> }>())
    let localThreadCounter = 0
    // The run (by lock key) whose new thread is recorded in the placeholder until it starts.
    let placeholderOwner: string | undefined

    const withCredentials = <A, E extends TamboError>(f: (c: Transport.Credentials) => Effect.Effect<A, E>) =>
      Auth.withCredentials(auth, f)

    const apply = (actions: ReadonlyArray<ClientState.Action>) => store.apply(actions)
    const now = Clock.currentTimeMillis

    const gatherContext = (
      threadId: string | undefined,
      message: Transport.InputMessage,
      runOptions: RunOptions
    ): Effect.Effect<Record<string, unknown> | undefined> =>
      Effect.gen(function* () {
        const context: Record<string, unknown> = { ...(message.additionalContext ?? {}) }
        const helpers = yield* Effect.forEach(
          [...contextHelpers.entries()],
          ([name, helper]) => Effect.map(runCallback(helper), (value) => [name, value] as const),
          { concurrency: "unbounded" }
        )
        for (const [name, value] of helpers) if (value !== undefined) context[name] = value
        if (runOptions.additionalContext !== undefined) Object.assign(context, runOptions.additionalContext)
        const tools = yield* registry.toolMap
        for (const before of [options.beforeRun, runOptions.beforeRun]) {
          if (before === undefined) continue
          const extra = yield* runCallback(() => before({ threadId, message, tools }))
          if (extra !== undefined && extra !== null && typeof extra === "object") Object.assign(context, extra)
        }
        return Object.keys(context).length > 0 ? context : undefined
      })

    const run = (
      rawMessage: string | Transport.InputMessage,
      runOptions: RunOptions = {}
    ): Stream.Stream<RunEvent, TamboError> =>
      Stream.unwrapScoped(Effect.gen(function* () {
        const credentials = yield* auth.credentials
        const requested = runOptions.threadId ?? (yield* store.get).currentThreadId
        // A thread this client has not seen: load it, for its history and its previousRunId.
        if (!ClientState.isLocalThreadId(requested) && (yield* store.get).threadMap[requested] === undefined) {
          yield* fetchThread(requested)
        }
        const state0 = yield* store.get
        const isNew = ClientState.isLocalThreadId(requested)
        const existing = isNew ? undefined : requested
        // A new thread's run records into the placeholder (what a UI shows for a new
        // conversation) unless another new-thread run is using it: then into a thread of its own.
        const localId = !isNew
          ? undefined
          : placeholderOwner === undefined && requested === ClientState.PLACEHOLDER_THREAD_ID
          ? ClientState.PLACEHOLDER_THREAD_ID
          : `${ClientState.LOCAL_THREAD_PREFIX}${++localThreadCounter}`
        const maxSteps = runOptions.maxSteps ?? defaultMaxSteps
        const autoExecute = runOptions.autoExecuteTools ?? true

        // Where this run's events are recorded until RUN_STARTED names the thread.
        const run = {
          threadId: localId ?? requested,
          runId: undefined as string | undefined,
          lastRunId: undefined as string | undefined,
          finished: false,
          failed: false,
          runError: undefined as ApiError | RunCancelledError | undefined,
          pending: [] as Array<PendingToolCall>,
          steps: 0,
          locked: false,
          lockKey: localId === ClientState.PLACEHOLDER_THREAD_ID
            ? `${ClientState.LOCAL_THREAD_PREFIX}${++localThreadCounter}`
            : localId ?? requested
        }
        if (localId === ClientState.PLACEHOLDER_THREAD_ID) placeholderOwner = run.lockKey
        const releasePlaceholder = () => {
          if (placeholderOwner === run.lockKey) placeholderOwner = undefined
        }

        // cancelRun completes this: the stream fails with it, and the finalizer cancels on the server.
        const cancelled = yield* Deferred.make<never, RunCancelledError>()
        const cancelThisRun = Effect.asVoid(
          Deferred.fail(
            cancelled,
            new RunCancelledError({
              reason: "CancelledByClient",
              message: "The run was cancelled",
              threadId: run.threadId,
              ...(run.runId === undefined ? {} : { runId: run.runId })
            })
          )
        )
        // One active run per thread in this client.
        yield* Effect.acquireRelease(
          Ref.modify(activeRuns, (runs) => {
            if (runs.has(run.lockKey)) return [false, runs] as const
            const next = new Map(runs)
            next.set(run.lockKey, { cancel: cancelThisRun })
            return [true, next] as const
          }).pipe(
            Effect.filterOrFail(
              (acquired) => acquired,
              () =>
                new RunConflictError({
                  reason: "ActiveInClient",
                  message: `A run is already active on thread ${requested}`,
                  threadId: requested
                })
            )
          ),
          () =>
            Ref.update(activeRuns, (runs) => {
              releasePlaceholder()
              const next = new Map(runs)
              next.delete(run.lockKey)
              next.delete(run.threadId)
              return next
            })
        )

        const message = toInputMessage(rawMessage)
        const additionalContext = yield* gatherContext(existing, message, runOptions)
        const sentMessage: Transport.InputMessage = additionalContext === undefined
          ? message
          : { ...message, additionalContext }
        const tools = yield* registry.toApiTools
        const components = yield* registry.toApiComponents
        const previousRunId = existing === undefined
          ? undefined
          : state0.threadMap[existing]?.lastCompletedRunId

        const at0 = yield* now
        yield* apply([
          ...(run.threadId.startsWith(ClientState.LOCAL_THREAD_PREFIX)
            ? [{ type: "INIT_THREAD", threadId: run.threadId, at: at0 } as const]
            : []),
          {
            type: "USER_MESSAGE",
            threadId: run.threadId,
            message: {
              id: `local_user_${at0}_${localThreadCounter}`,
              role: "user",
              content: message.content.map((c) => c),
              createdAt: new Date(at0).toISOString()
            },
            at: at0
          }
        ])

        const cancelOnServer = (): Effect.Effect<void> =>
          run.runId === undefined || run.finished
            ? Effect.void
            : Effect.ignore(
              withCredentials((c) => transport.cancelRun(c, run.threadId, run.runId!)).pipe(
                Effect.timeout(cancelTimeout)
              )
            )

        const onChunk = (events: ReadonlyArray<Transport.RunStreamEvent>) =>
          Effect.gen(function* () {
            const at = yield* now
            // One action per chunk: the reducer moves the run to its thread at RUN_STARTED.
            const action: ClientState.Action = { type: "EVENTS", threadId: run.threadId, events, at }
            for (let i = 0; i < events.length; i++) {
              const event = events[i]!
              switch (event.type) {
                case "RUN_STARTED": {
                  if (run.threadId !== event.threadId) run.threadId = event.threadId
                  run.runId = event.runId
                  run.finished = false
                  break
                }
                case "RUN_FINISHED": {
                  run.finished = true
                  run.lastRunId = run.runId
                  break
                }
                case "RUN_ERROR": {
                  run.finished = true
                  // The API sends RUN_ERROR twice: the first one is the error.
                  if (run.runError === undefined) run.runError = runErrorFrom(event, run.threadId)
                  break
                }
                case "CUSTOM": {
                  if (event.name === "tambo.run.awaiting_input" && "pendingToolCalls" in event.value) {
                    run.pending = [...event.value.pendingToolCalls]
                  }
                  break
                }
              }
            }
            if (!run.locked && !ClientState.isLocalThreadId(run.threadId)) {
              // The thread has its id now: cancelRun and conflicts can find the run under it.
              run.locked = true
              releasePlaceholder()
              const threadId = run.threadId
              yield* Ref.update(activeRuns, (runs) => new Map(runs).set(threadId, { cancel: cancelThisRun }))
            }
            const state = yield* apply([action])
            const thread = state.threadMap[run.threadId]?.thread
            const out: Array<RunEvent> = new Array(events.length)
            for (let i = 0; i < events.length; i++) {
              out[i] = { event: events[i]!, threadId: run.threadId, snapshot: thread! }
            }
            return out
          })

        const step = (stream: Stream.Stream<Transport.RunStreamEvent, TamboError>): Stream.Stream<RunEvent, TamboError> =>
          stream.pipe(
            Stream.mapChunksEffect((chunk) =>
              Effect.map(onChunk(Chunk.toReadonlyArray(chunk)), Chunk.unsafeFromArray)
            ),
            Stream.concat(Stream.unwrap(Effect.suspend(() => afterStep())))
          )

        const afterStep = (): Effect.Effect<Stream.Stream<RunEvent, TamboError>, TamboError> =>
          Effect.gen(function* () {
            if (run.runError !== undefined) return yield* Effect.fail(run.runError)
            if (!run.finished) {
              return yield* new TransportError({
                reason: "Disconnected",
                message: "The run's stream ended before RUN_FINISHED"
              })
            }
            if (run.pending.length === 0 || !autoExecute) return Stream.empty
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
            const calls = run.pending
            run.pending = []
            const results = yield* executor.execute(
              calls.map((call) => ({ toolCallId: call.toolCallId, toolName: call.toolName, args: call.arguments })),
              {
                ...(options.toolConcurrency === undefined ? {} : { concurrency: options.toolConcurrency }),
                ...(runOptions.toolTimeout === undefined ? {} : { timeout: runOptions.toolTimeout })
              }
            ).pipe(Effect.withSpan("Tambo.executeTools", { attributes: { "tambo.thread_id": run.threadId } }))
            const at = yield* now
            yield* apply([{ type: "TOOL_RESULTS", threadId: run.threadId, results, at }])
            const continuation: Transport.RunRequest = {
              message: {
                role: "user",
                content: results,
                ...(additionalContext === undefined ? {} : { additionalContext })
              },
              ...(run.lastRunId === undefined ? {} : { previousRunId: run.lastRunId }),
              ...(tools.length > 0 ? { tools } : {}),
              ...(components.length > 0 ? { availableComponents: components } : {}),
              ...(runOptions.toolChoice === undefined ? {} : { toolChoice: runOptions.toolChoice })
            }
            run.runId = undefined
            return step(
              Stream.unwrap(
                Effect.map(auth.credentials, (c) => transport.runOnThread(c, run.threadId, continuation))
              )
            )
          })

        const first: Transport.RunRequest = {
          message: sentMessage,
          ...(previousRunId === undefined ? {} : { previousRunId }),
          ...(tools.length > 0 ? { tools } : {}),
          ...(components.length > 0 ? { availableComponents: components } : {}),
          ...(runOptions.toolChoice === undefined ? {} : { toolChoice: runOptions.toolChoice })
        }

        // Whatever ends the stream early (interruption, a consumer that stops
        // reading, a failure) cancels a run still going, and records how it ended.
        yield* Effect.addFinalizer((exit) =>
          Effect.gen(function* () {
            const at = yield* now
            if (Exit.isSuccess(exit) && run.finished) return
            if (run.runError !== undefined) return
            yield* cancelOnServer()
            const failure = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
            // Interruption, an early stop and a cancellation leave the thread cancelled, not errored.
            const error = isTamboError(failure) && failure._tag !== "RunCancelledError" ? failure : undefined
            yield* apply([
              error === undefined
                ? { type: "RUN_ENDED_LOCALLY", threadId: run.threadId, outcome: "cancelled", at }
                : {
                  type: "RUN_ENDED_LOCALLY",
                  threadId: run.threadId,
                  outcome: "error",
                  error: {
                    message: error.message,
                    code: error._tag,
                    ...("status" in error && typeof error.status === "number" ? { status: error.status } : {}),
                    isRetryable: isRetryable(error)
                  },
                  at
                }
            ])
          })
        )

        const opened = existing === undefined
          ? transport.createRun(credentials, first)
          : transport.runOnThread(credentials, existing, first)
        return step(opened).pipe(
          Stream.interruptWhen(Deferred.await(cancelled)),
          Stream.withSpan("Tambo.run", {
            attributes: { "tambo.thread_id": existing ?? "new", "tambo.max_steps": maxSteps }
          })
        )
      }))

    const cancelRun = (threadId?: string): Effect.Effect<void, TamboError> =>
      Effect.gen(function* () {
        const state = yield* store.get
        const id = threadId ?? state.currentThreadId
        const runs = yield* Ref.get(activeRuns)
        const local = runs.get(id)
        if (local !== undefined) return yield* local.cancel
        // Not running here: cancel what the server reports as running.
        const runId = state.threadMap[id]?.streaming.runId
        if (runId !== undefined) {
          yield* withCredentials((c) => transport.cancelRun(c, id, runId))
        }
      })

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
            : [{ type: "SET_LAST_COMPLETED_RUN_ID", threadId, runId: remote.lastCompletedRunId } as const])
        ])
        return state.threadMap[threadId]!.thread
      })

    return Tambo.of({
      run,
      state: store.get,
      store,
      switchThread: (threadId) =>
        Effect.gen(function* () {
          const state = yield* store.get
          yield* apply([{ type: "SET_CURRENT_THREAD", threadId }])
          if (state.threadMap[threadId] === undefined && threadId !== ClientState.PLACEHOLDER_THREAD_ID) {
            yield* fetchThread(threadId)
          }
        }),
      startNewThread: Effect.gen(function* () {
        const at = yield* now
        yield* apply([{ type: "START_NEW_THREAD", threadId: ClientState.PLACEHOLDER_THREAD_ID, at }])
        return ClientState.PLACEHOLDER_THREAD_ID
      }),
      getThread: (threadId) =>
        Effect.map(store.get, (state) =>
          Option.map(Option.fromNullable(state.threadMap[threadId ?? state.currentThreadId]), (t) => t.thread)),
      listThreads: (params) => withCredentials((c) => transport.listThreads(c, params)),
      fetchThread,
      updateThreadName: (threadId, name) =>
        Effect.gen(function* () {
          yield* withCredentials((c) => transport.updateThread(c, threadId, { name }))
          yield* apply([{ type: "UPDATE_THREAD", threadId, patch: { name } }])
        }),
      generateThreadName: (threadId) =>
        Effect.gen(function* () {
          const name = yield* withCredentials((c) => transport.generateThreadName(c, threadId))
          if (Option.isSome(name)) yield* apply([{ type: "UPDATE_THREAD", threadId, patch: { name: name.value } }])
          return name
        }),
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
      authChanges: auth.changes
    })
  })

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
  Tambo | ThreadStore.ThreadStore | ToolRegistry.ToolRegistry | Auth.Auth | Transport.TamboTransport,
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
  return service.pipe(Layer.provideMerge(Layer.mergeAll(transport, auth, store, tools)))
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
  Tambo | ThreadStore.ThreadStore | ToolRegistry.ToolRegistry | Auth.Auth | Transport.TamboTransport | TamboConfig.TamboConfig,
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
  Tambo | ThreadStore.ThreadStore | ToolRegistry.ToolRegistry | Auth.Auth | Transport.TamboTransport | TamboConfig.TamboConfig,
  ConfigError | Tool.ToolDefinitionError | import("effect/ConfigError").ConfigError
> =>
  layerWithoutConfig(options).pipe(
    Layer.provideMerge(TamboConfig.layerConfig),
    Layer.provide(FetchHttpClient.layer)
  )
