/**
 * Runs the tool calls a run is waiting on and answers each with a
 * `tool_result` content block.
 *
 * `execute` never fails: invalid JSON or arguments, an unknown tool, a
 * throw, a rejection, a failed Effect, a defect, a timeout, a denied
 * approval or an exhausted `maxCalls` each become an error result whose text
 * tells the model what went wrong. Calls of one round run concurrently
 * (bounded), each with a timeout. Interrupting `execute` interrupts the
 * running tools (Effect tools are interrupted; Promise tools see their
 * `AbortSignal` aborted).
 *
 * A tool runs at most once per `toolCallId`: completed results are
 * remembered (the last 1,000 by default) and returned again when the same
 * call is executed again, e.g. by a retried continuation; a call executed
 * while the same call is running waits for that run.
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
 * @since 0.1.0
 * @category Models
 */
export interface ExecuteOptions {
  /** How many calls run at once. Default 4. */
  readonly concurrency?: number | undefined
  /** Per call, unless the tool sets its own. Default 30 seconds. */
  readonly timeout?: Duration.DurationInput | undefined
  /**
   * The run the calls belong to: tools' `maxCalls` are counted per run id
   * (across rounds). Without it, they are counted per `execute`.
   */
  readonly runId?: string | undefined
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
  /** How many completed results are remembered by call id. Default 1,000. */
  readonly rememberedResults?: number | undefined
  /** For how many runs `maxCalls` counts are kept. Default 100. */
  readonly rememberedRuns?: number | undefined
}

const DEFAULT_CONCURRENCY = 4
const DEFAULT_TIMEOUT = Duration.seconds(30)
const MAX_LISTED_TOOLS = 20

const parseArgs = (call: ToolCall): Effect.Effect<unknown, Tool.ToolCallError> => {
  const { args } = call
  if (args === undefined) return Effect.succeed({})
  if (typeof args !== "string") return Effect.succeed(args)
  if (args.trim() === "") return Effect.succeed({})
  try {
    const parsed: unknown = JSON.parse(args)
    return Effect.succeed(parsed)
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

/** Counts the runs of each tool within one scope (a run, or one `execute`). */
type CallCounts = Map<string, number>

const claim = (counts: CallCounts, tool: Tool.ResolvedTool): boolean => {
  if (tool.maxCalls === undefined) return true
  const used = counts.get(tool.name) ?? 0
  if (used >= tool.maxCalls) return false
  counts.set(tool.name, used + 1)
  return true
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
    const completed = new LruMap<string, Tool.ToolResultContent>(Math.max(1, options?.rememberedResults ?? 1_000))
    // `None` tells waiters that the run was interrupted and they may run it.
    const running = new Map<string, Deferred.Deferred<Option.Option<Tool.ToolResultContent>>>()
    const countsByRun = new LruMap<string, CallCounts>(Math.max(1, options?.rememberedRuns ?? 100))

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
        const found = yield* registry.get(call.toolName)
        if (Option.isNone(found)) return yield* unknownTool(call)
        const tool = found.value
        const args = yield* Effect.flatMap(parseArgs(call), tool.decodeArgs)
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
        if (!claim(counts, tool)) {
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
     * Runs `body` unless a result for the id is remembered or already being
     * computed. A run that is interrupted leaves no result behind.
     */
    const once = (
      toolCallId: string,
      body: Effect.Effect<Tool.ToolResultContent>
    ): Effect.Effect<Tool.ToolResultContent> =>
      Effect.flatMap(Deferred.make<Option.Option<Tool.ToolResultContent>>(), (mine) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.suspend((): Effect.Effect<Option.Option<Tool.ToolResultContent>> => {
            const remembered = completed.get(toolCallId)
            if (remembered !== undefined) {
              return Effect.as(Effect.annotateCurrentSpan("tool.outcome", "replayed"), Option.some(remembered))
            }
            const other = running.get(toolCallId)
            if (other !== undefined) return restore(Deferred.await(other))
            running.set(toolCallId, mine)
            return restore(body).pipe(
              Effect.onExit((exit) =>
                Effect.suspend(() => {
                  running.delete(toolCallId)
                  if (Exit.isSuccess(exit)) {
                    completed.set(toolCallId, exit.value)
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
            onNone: () => once(toolCallId, body),
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
        const runId = options?.runId
        let counts: CallCounts
        if (runId === undefined) {
          counts = new Map()
        } else {
          const existing = countsByRun.get(runId)
          counts = existing ?? new Map()
          if (existing === undefined) countsByRun.set(runId, counts)
        }
        return Effect.forEach(
          calls,
          (call) => {
            const body = runCall(call, timeout, counts, options?.approve)
            // An id-less call cannot be recognised again: run it as it is.
            return (call.toolCallId === "" ? body : once(call.toolCallId, body)).pipe(
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
