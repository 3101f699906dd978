/**
 * One call, start to end: the tool looked up (registered, else the
 * registry's fallback), its arguments parsed and decoded, its approval asked
 * for where it needs one, a call claimed against its `maxCalls`, and the tool
 * run within its timeout. Whatever goes wrong on the way (a failure or a
 * defect) ends as an error result that tells the model what happened.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ToolCallError } from "../../TamboError.js"
import * as Tool from "../../Tool.js"
import type { CallCounts, ExecuteOptions, ToolCall } from "../../ToolExecutor.js"
import type { ToolRegistry } from "../../ToolRegistry.js"
import { describeError } from "../toolSupport.js"
import { parseCallArgs } from "./args.js"

/** What every call of one `execute` runs with. @internal */
export interface CallSettings {
  /** The timeout of tools that set none of their own. */
  readonly timeout: Duration.Duration
  readonly counts: CallCounts
  readonly approve: ExecuteOptions["approve"]
  /** The calls' approval was decided before: `needsApproval` is not asked again. */
  readonly approved: boolean
}

const MAX_LISTED_TOOLS = 20

const unknownTool = (registry: ToolRegistry.Service, call: ToolCall) =>
  Effect.flatMap(registry.list, (tools) => {
    const names = tools.map((tool) => tool.name)
    const listed = names.length === 0
      ? "No tools are available."
      : `Available tools: ${names.slice(0, MAX_LISTED_TOOLS).join(", ")}${
        names.length > MAX_LISTED_TOOLS ? ", ..." : ""
      }.`
    return Effect.fail(
      new ToolCallError({
        reason: "UnknownTool",
        message: `Tool "${call.toolName}" is not available. ${listed}`,
        toolName: call.toolName,
        toolCallId: call.toolCallId
      })
    )
  })

/** Fails unless the call is approved; without `approve`, no call that needs approval is. */
const approved = (
  tool: Tool.ResolvedTool,
  call: ToolCall,
  args: unknown,
  approve: ExecuteOptions["approve"]
): Effect.Effect<void, ToolCallError> =>
  Effect.flatMap(
    approve === undefined ? Effect.succeed(false) : approve({ toolCallId: call.toolCallId, toolName: tool.name, args }),
    (yes) =>
      yes ? Effect.void : Effect.fail(
        new ToolCallError({
          reason: "Denied",
          message: approve === undefined
            ? `Tool "${tool.name}" needs approval, and no one is there to approve it. It was not run.`
            : `The user did not approve this call of tool "${tool.name}". It was not run.`,
          toolName: tool.name
        })
      )
  )

const maxCallsExceeded = (tool: Tool.ResolvedTool) =>
  new ToolCallError({
    reason: "MaxCallsExceeded",
    message: `Tool "${tool.name}" may be called at most ${tool.maxCalls} time(s) in this run. It was not run.`,
    toolName: tool.name
  })

const timedOut = (tool: Tool.ResolvedTool, limit: Duration.Duration) =>
  new ToolCallError({
    reason: "Timeout",
    message: `Tool "${tool.name}" did not finish within ${Duration.format(limit)} and was stopped.`,
    toolName: tool.name
  })

/** The call's result; never fails. @internal */
export const runCall = (
  registry: ToolRegistry.Service,
  call: ToolCall,
  settings: CallSettings
): Effect.Effect<Tool.ToolResultContent> =>
  Effect.gen(function*() {
    const found = yield* registry.getOrFallback(call.toolName)
    if (Option.isNone(found)) return yield* unknownTool(registry, call)
    const tool = found.value
    const args = yield* Effect.flatMap(parseCallArgs(call), tool.decodeArgs)
    if (!settings.approved && (yield* tool.needsApproval(args))) yield* approved(tool, call, args, settings.approve)
    if (!settings.counts.claim(tool)) return yield* Effect.fail(maxCallsExceeded(tool))
    const limit = tool.timeout ?? settings.timeout
    const content = yield* tool.run(args, { toolCallId: call.toolCallId }).pipe(
      Effect.timeoutFail({ duration: limit, onTimeout: () => timedOut(tool, limit) })
    )
    yield* Effect.annotateCurrentSpan("tool.outcome", "success")
    return Tool.toolResult(call.toolCallId, content)
  }).pipe(
    Effect.catchAll((error) =>
      Effect.as(Effect.annotateCurrentSpan("tool.outcome", error.reason), Tool.errorResult(call.toolCallId, error.message))
    ),
    // A defect, or an interruption of the tool's own (it awaited something interrupted elsewhere):
    // an interruption of the call itself skips this handler, and leaves no result.
    Effect.catchAllCause((cause) => {
      const interrupted = Cause.isInterruptedOnly(cause)
      return Effect.as(
        Effect.annotateCurrentSpan("tool.outcome", interrupted ? "Interrupted" : "Defect"),
        Tool.errorResult(
          call.toolCallId,
          interrupted
            ? `Tool "${call.toolName}" was interrupted before it returned a result.`
            : `Tool "${call.toolName}" failed unexpectedly: ${describeError(Cause.squash(cause))}`
        )
      )
    })
  )
