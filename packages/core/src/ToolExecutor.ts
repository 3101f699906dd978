/**
 * Runs the tool calls a run is waiting on and answers each with a
 * `tool_result` content block.
 *
 * `execute` never fails: invalid JSON or arguments, an unknown tool (one
 * neither registered nor answered by the registry's fallback), a
 * throw, a rejection, a failed Effect, a defect, an interruption of the
 * tool's own (it awaited something interrupted elsewhere), a timeout, a denied
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
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/toolExecutor/service.js"
import type * as Tool from "./Tool.js"
import type { ToolRegistry } from "./ToolRegistry.js"

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
  /**
   * The calls were approved before (their tools' `needsApproval` asked, and
   * answered, once per call): they run without asking it again, and
   * `approve` is not called. A predicate that answers differently when
   * asked again changes nothing.
   */
  readonly approved?: boolean | undefined
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
    /**
     * Lets go of the results remembered for a thread's steps: the thread was
     * deleted, or is gone from the server, or the client forgot it, so the
     * server will take none of them. `Tambo` calls it when a thread leaves its
     * store; an executor without it keeps them until newer ones push them out.
     *
     * @since 0.2.0
     */
    readonly forgetThread?: ((threadId: string) => Effect.Effect<void>) | undefined
    /**
     * Lets go of the results remembered for one step of a thread (`threadId`
     * and `runId`, as `execute` was given them): the server took them, or will
     * take none of them (another client answered the step's calls). `Tambo`
     * calls it once the server shows it took a round's results (the run paused
     * again after them, or its end's read of the thread waits on none of the
     * round's calls) or a read of the thread shows another client answered
     * them; an executor without it keeps them until newer ones push them out.
     *
     * @since 0.2.0
     */
    readonly forgetStep?: ((threadId: string, runId: string) => Effect.Effect<void>) | undefined
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

/**
 * An executor over the registry in context.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeWith = (options?: MakeOptions): Effect.Effect<ToolExecutor.Service, never, ToolRegistry> =>
  internal.makeWith(options, makeCallCounts)

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
