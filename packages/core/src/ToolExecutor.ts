/**
 * Runs the tool calls a run is waiting on and answers each with a
 * `tool_result` content block.
 *
 * `execute` never fails: invalid JSON or arguments, an unknown tool (one
 * neither registered nor answered by the registry's fallback), a
 * throw, a rejection, a failed Effect, a defect, a timeout, a denied
 * approval or an exhausted `maxCalls` each become an error result whose text
 * tells the model what went wrong. Calls of one round run concurrently
 * (bounded), each with a timeout. Interrupting `execute` interrupts the
 * running tools (Effect tools are interrupted; Promise tools see their
 * `AbortSignal` aborted).
 *
 * A call runs at most once per step: given the thread and the paused run
 * (the step) the calls belong to (`threadId` and `runId`), results are
 * remembered under thread, step and call id (the last 1,000 by default) and
 * returned again when the same step's calls are executed again, e.g. by a
 * replayed continuation; a call executed while the same call of the same
 * step is running waits for that run. Call ids alone name nothing: providers
 * reuse them (many count, `call_0` in every response), so the same id in
 * another thread, or in a later round of the same run, is a new call and
 * always runs. Without `threadId` and `runId`, nothing is remembered from
 * one `execute` to the next.
 *
 * A tool's `maxCalls` counts its calls in one run, across its rounds, when
 * every round's `execute` is given the run's `CallCounts`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { findProtoKey } from "./internal/protoKey.js"
import { LruMap } from "./internal/toolCache.js"
import { describeError } from "./internal/toolSupport.js"
import * as Tool from "./Tool.js"
import { ToolRegistry } from "./ToolRegistry.js"

/**
 * A call the model made: its id, the tool's name, and its arguments — a
 * JSON string as streamed, or an already parsed value. An empty string (or
 * `undefined`) stands for no arguments, `{}`.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ToolCall {
  readonly toolCallId: string
  readonly toolName: string
  readonly args: unknown
}

/**
 * A call waiting for approval, with its decoded arguments.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ApprovalRequest {
  readonly toolCallId: string
  readonly toolName: string
  readonly args: unknown
}

/**
 * The calls of each tool made so far in one run, against which tools'
 * `maxCalls` are checked: make one per run with {@link makeCallCounts} and
 * pass it to the `execute` of each of the run's rounds.
 *
 * @since 0.1.0
 * @category Models
 */
export class CallCounts {
  readonly #byTool = new Map<string, number>()

  /** Counts a call of the tool, unless its `maxCalls` are used up (then `false`). */
  claim(tool: { readonly name: string; readonly maxCalls?: number | undefined }): boolean {
    if (tool.maxCalls === undefined) return true
    const used = this.#byTool.get(tool.name) ?? 0
    if (used >= tool.maxCalls) return false
    this.#byTool.set(tool.name, used + 1)
    return true
  }
}

/**
 * Counts for a new run: no tool called yet.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeCallCounts = (): CallCounts => new CallCounts()

/**
 * @since 0.1.0
 * @category Models
 */
export interface ExecuteOptions {
  /** How many calls run at once. Default 4. */
  readonly concurrency?: number | undefined
  /** Per call, unless the tool sets its own. Default 30 seconds. */
  readonly timeout?: Duration.DurationInput | undefined
  /** The thread the calls belong to; see `runId`. */
  readonly threadId?: string | undefined
  /**
   * The id of the paused run whose calls these are (each step of a run, each
   * continuation, has its own). With `threadId`, it names the step: its
   * calls' results are remembered, so executing the step's calls again runs
   * no tool twice. Without both, nothing is remembered across `execute`s
   * (within one, the same call id is one call).
   */
  readonly runId?: string | undefined
  /**
   * The run's counts of calls per tool, for `maxCalls`: the same object for
   * every round of one run. Without it, `maxCalls` is counted per `execute`.
   */
  readonly callCounts?: CallCounts | undefined
  /**
   * Decides the calls of tools that need approval. Without it, those calls
   * are denied.
   */
  readonly approve?: ((request: ApprovalRequest) => Effect.Effect<boolean>) | undefined
}

/**
 * @since 0.1.0
 * @category Context
 */
export class ToolExecutor extends Context.Tag("@tambo-effect/core/ToolExecutor")<
  ToolExecutor,
  ToolExecutor.Service
>() {}

/**
 * @since 0.1.0
 */
export declare namespace ToolExecutor {
  /**
   * @since 0.1.0
   * @category Models
   */
  export interface Service {
    /** One result per call, in the order of `calls`. Never fails. */
    readonly execute: (
      calls: ReadonlyArray<ToolCall>,
      options?: ExecuteOptions
    ) => Effect.Effect<ReadonlyArray<Tool.ToolResultContent>>
  }
}

/**
 * @since 0.1.0
 * @category Models
 */
export interface MakeOptions {
  /** How many completed results are remembered by thread, step and call id. Default 1,000. */
  readonly rememberedResults?: number | undefined
}

const DEFAULT_CONCURRENCY = 4
const DEFAULT_TIMEOUT = Duration.seconds(30)
const MAX_LISTED_TOOLS = 20

/**
 * Arguments with an own `__proto__` key are refused, not cleaned: dropping the
 * key would run the tool on arguments the model did not send, and no tool
 * can declare such a parameter anyway. The model is told and may call again.
 */
const plainArgs = (call: ToolCall, parsed: unknown): Effect.Effect<unknown, Tool.ToolCallError> => {
  const at = findProtoKey(parsed)
  return at === undefined
    ? Effect.succeed(parsed)
    : Effect.fail(
      new Tool.ToolCallError({
        reason: "InvalidArguments",
        message: `Invalid arguments for tool "${call.toolName}": a "__proto__" key (at ${at}) is not accepted. ` +
          `Call the tool again without it.`,
        toolName: call.toolName,
        toolCallId: call.toolCallId
      })
    )
}

const parseCallArgs = (call: ToolCall): Effect.Effect<unknown, Tool.ToolCallError> => {
  const { args } = call
  if (args === undefined) return Effect.succeed({})
  if (typeof args !== "string") return plainArgs(call, args)
  if (args.trim() === "") return Effect.succeed({})
  try {
    const parsed: unknown = JSON.parse(args)
    return plainArgs(call, parsed)
  } catch (error) {
    return Effect.fail(
      new Tool.ToolCallError({
        reason: "InvalidJson",
        message: `The arguments for tool "${call.toolName}" are not valid JSON (${describeError(error)}). ` +
          `Call the tool again with a JSON object of arguments.`,
        toolName: call.toolName,
        toolCallId: call.toolCallId,
        cause: error
      })
    )
  }
}

/**
 * Where results are looked up: the executor's own for named steps, or one
 * made for a single `execute`. `None` in `running` tells waiters that the run
 * was interrupted and they may run it.
 */
interface Ledger {
  readonly completed: {
    get(key: string): Tool.ToolResultContent | undefined
    set(key: string, result: Tool.ToolResultContent): void
  }
  readonly running: Map<string, Deferred.Deferred<Option.Option<Tool.ToolResultContent>>>
}

/**
 * An executor over the registry in context.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeWith = (options?: MakeOptions): Effect.Effect<ToolExecutor.Service, never, ToolRegistry> =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    // The results of named steps, the most recently used kept; `running` holds only calls in flight.
    const steps: Ledger = {
      completed: new LruMap<string, Tool.ToolResultContent>(Math.max(1, options?.rememberedResults ?? 1_000)),
      running: new Map()
    }

    const unknownTool = (call: ToolCall) =>
      Effect.flatMap(registry.list, (tools) => {
        const names = tools.map((tool) => tool.name)
        const listed = names.length === 0
          ? "No tools are available."
          : `Available tools: ${names.slice(0, MAX_LISTED_TOOLS).join(", ")}${
            names.length > MAX_LISTED_TOOLS ? ", ..." : ""
          }.`
        return Effect.fail(
          new Tool.ToolCallError({
            reason: "UnknownTool",
            message: `Tool "${call.toolName}" is not available. ${listed}`,
            toolName: call.toolName,
            toolCallId: call.toolCallId
          })
        )
      })

    const runCall = (
      call: ToolCall,
      timeout: Duration.Duration,
      counts: CallCounts,
      approve: ExecuteOptions["approve"]
    ): Effect.Effect<Tool.ToolResultContent> =>
      Effect.gen(function*() {
        const found = yield* registry.getOrFallback(call.toolName)
        if (Option.isNone(found)) return yield* unknownTool(call)
        const tool = found.value
        const args = yield* Effect.flatMap(parseCallArgs(call), tool.decodeArgs)
        if (yield* tool.needsApproval(args)) {
          const approved = approve === undefined
            ? false
            : yield* approve({ toolCallId: call.toolCallId, toolName: tool.name, args })
          if (!approved) {
            return yield* Effect.fail(
              new Tool.ToolCallError({
                reason: "Denied",
                message: approve === undefined
                  ? `Tool "${tool.name}" needs approval, and no one is there to approve it. It was not run.`
                  : `The user did not approve this call of tool "${tool.name}". It was not run.`,
                toolName: tool.name
              })
            )
          }
        }
        if (!counts.claim(tool)) {
          return yield* Effect.fail(
            new Tool.ToolCallError({
              reason: "MaxCallsExceeded",
              message: `Tool "${tool.name}" may be called at most ${tool.maxCalls} time(s) in this run. It was not run.`,
              toolName: tool.name
            })
          )
        }
        const limit = tool.timeout ?? timeout
        const content = yield* tool.run(args, { toolCallId: call.toolCallId }).pipe(
          Effect.timeoutFail({
            duration: limit,
            onTimeout: () =>
              new Tool.ToolCallError({
                reason: "Timeout",
                message: `Tool "${tool.name}" did not finish within ${Duration.format(limit)} and was stopped.`,
                toolName: tool.name
              })
          })
        )
        yield* Effect.annotateCurrentSpan("tool.outcome", "success")
        return Tool.toolResult(call.toolCallId, content)
      }).pipe(
        Effect.catchAll((error) =>
          Effect.as(Effect.annotateCurrentSpan("tool.outcome", error.reason), Tool.errorResult(call.toolCallId, error.message))
        ),
        Effect.catchAllDefect((defect) =>
          Effect.as(
            Effect.annotateCurrentSpan("tool.outcome", "Defect"),
            Tool.errorResult(call.toolCallId, `Tool "${call.toolName}" failed unexpectedly: ${describeError(defect)}`)
          )
        )
      )

    /**
     * Runs `body` unless a result for the key is remembered or already being
     * computed. A run that is interrupted leaves no result behind.
     */
    const once = (
      ledger: Ledger,
      key: string,
      body: Effect.Effect<Tool.ToolResultContent>
    ): Effect.Effect<Tool.ToolResultContent> =>
      Effect.flatMap(Deferred.make<Option.Option<Tool.ToolResultContent>>(), (mine) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.suspend((): Effect.Effect<Option.Option<Tool.ToolResultContent>> => {
            const { completed, running } = ledger
            const remembered = completed.get(key)
            if (remembered !== undefined) {
              return Effect.as(Effect.annotateCurrentSpan("tool.outcome", "replayed"), Option.some(remembered))
            }
            const other = running.get(key)
            if (other !== undefined) return restore(Deferred.await(other))
            running.set(key, mine)
            return restore(body).pipe(
              Effect.onExit((exit) =>
                Effect.suspend(() => {
                  running.delete(key)
                  if (Exit.isSuccess(exit)) {
                    completed.set(key, exit.value)
                    return Deferred.succeed(mine, Option.some(exit.value))
                  }
                  return Deferred.succeed(mine, Option.none())
                })
              ),
              Effect.map(Option.some)
            )
          })
        )).pipe(
          Effect.flatMap(Option.match({
            onNone: () => once(ledger, key, body),
            onSome: Effect.succeed
          }))
        )

    const execute = (calls: ReadonlyArray<ToolCall>, options?: ExecuteOptions) =>
      Effect.suspend(() => {
        const requested = options?.concurrency ?? DEFAULT_CONCURRENCY
        const concurrency = requested === Infinity
          ? "unbounded" as const
          : Number.isFinite(requested) && requested >= 1
          ? Math.floor(requested)
          : DEFAULT_CONCURRENCY
        const timeout = options?.timeout === undefined ? DEFAULT_TIMEOUT : Duration.decode(options.timeout)
        const counts = options?.callCounts ?? new CallCounts()
        const threadId = options?.threadId
        const runId = options?.runId
        // A call is known by its id only within its step: only a named step is remembered.
        const named = threadId !== undefined && runId !== undefined
        const ledger: Ledger = named ? steps : { completed: new Map(), running: new Map() }
        const keyOf = named
          ? (toolCallId: string) => JSON.stringify([threadId, runId, toolCallId])
          : (toolCallId: string) => toolCallId
        return Effect.forEach(
          calls,
          (call) => {
            const body = runCall(call, timeout, counts, options?.approve)
            // An id-less call cannot be recognised again: run it as it is.
            return (call.toolCallId === "" ? body : once(ledger, keyOf(call.toolCallId), body)).pipe(
              Effect.withSpan("ToolExecutor.call", {
                attributes: { "tool.name": call.toolName, "tool.call_id": call.toolCallId }
              })
            )
          },
          { concurrency }
        )
      }).pipe(Effect.withSpan("ToolExecutor.execute", { attributes: { "tool.calls": calls.length } }))

    return ToolExecutor.of({ execute })
  })

/**
 * An executor over the registry in context, with the default options.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make: Effect.Effect<ToolExecutor.Service, never, ToolRegistry> = makeWith()

/**
 * @since 0.1.0
 * @category Layers
 */
export const layer: Layer.Layer<ToolExecutor, never, ToolRegistry> = Layer.effect(ToolExecutor, make)

/**
 * @since 0.1.0
 * @category Layers
 */
export const layerWith = (options: MakeOptions): Layer.Layer<ToolExecutor, never, ToolRegistry> =>
  Layer.effect(ToolExecutor, makeWith(options))
