/**
 * The `ToolExecutor` service, wired from its parts: a call's arguments
 * (args.ts), one call from lookup to result (call.ts), and the ledger that
 * runs each call of a step at most once (ledger.ts). Here: an `execute`'s
 * options resolved, and its calls run concurrently, each in a span.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { CallCounts, ExecuteOptions, MakeOptions, ToolCall, ToolExecutor } from "../../ToolExecutor.js"
import { ToolRegistry } from "../../ToolRegistry.js"
import { type CallSettings, runCall } from "./call.js"
import * as Ledger from "./ledger.js"

const DEFAULT_CONCURRENCY = 4
const DEFAULT_TIMEOUT = Duration.seconds(30)
const DEFAULT_REMEMBERED_RESULTS = 1_000

/** How many calls run at once: a count of at least one, or `Infinity`; anything else is the default. */
const concurrencyOf = (requested: number = DEFAULT_CONCURRENCY): number | "unbounded" =>
  requested === Infinity
    ? "unbounded"
    : Number.isFinite(requested) && requested >= 1
    ? Math.floor(requested)
    : DEFAULT_CONCURRENCY

const settingsOf = (options: ExecuteOptions | undefined, newCounts: () => CallCounts): CallSettings => ({
  timeout: options?.timeout === undefined ? DEFAULT_TIMEOUT : Duration.decode(options.timeout),
  counts: options?.callCounts ?? newCounts(),
  approve: options?.approve,
  approved: options?.approved === true
})

/**
 * An executor over the registry in context. `newCounts` makes the counts of
 * an `execute` given none: the `CallCounts` class stays in the public module,
 * which imports this one.
 *
 * @internal
 */
export const makeWith = (
  options: MakeOptions | undefined,
  newCounts: () => CallCounts
): Effect.Effect<ToolExecutor.Service, never, ToolRegistry> =>
  Effect.map(ToolRegistry, (registry) => {
    // The results of named steps, the most recently used kept; `running` holds only calls in flight.
    const steps = Ledger.remembering(options?.rememberedResults ?? DEFAULT_REMEMBERED_RESULTS)

    const execute = (calls: ReadonlyArray<ToolCall>, options?: ExecuteOptions) =>
      Effect.suspend(() => {
        const settings = settingsOf(options, newCounts)
        const { keyOf, ledger } = Ledger.forStep(steps, options?.threadId, options?.runId)
        return Effect.forEach(
          calls,
          (call) => {
            const body = runCall(registry, call, settings)
            // An id-less call cannot be recognised again: run it as it is.
            return (call.toolCallId === "" ? body : Ledger.once(ledger, keyOf(call.toolCallId), body)).pipe(
              Effect.withSpan("ToolExecutor.call", {
                attributes: { "tool.name": call.toolName, "tool.call_id": call.toolCallId }
              })
            )
          },
          { concurrency: concurrencyOf(options?.concurrency) }
        )
      }).pipe(Effect.withSpan("ToolExecutor.execute", { attributes: { "tool.calls": calls.length } }))

    const forgetThread = (threadId: string) => Effect.sync(() => Ledger.forgetThread(steps, threadId))
    const forgetStep = (threadId: string, runId: string) => Effect.sync(() => Ledger.forgetStep(steps, threadId, runId))

    return { execute, forgetThread, forgetStep }
  })
