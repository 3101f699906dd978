/**
 * A call's arguments as the model sent them, made a value for the tool's
 * decoder: a JSON string parsed, a blank one (or none) read as `{}`, and
 * arguments the SDK will not pass on (invalid JSON, an own `__proto__` key)
 * refused with an error the model can act on.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { ToolCallError } from "../../TamboError.js"
import type { ToolCall } from "../../ToolExecutor.js"
import { findProtoKey } from "../protoKey.js"
import { describeError, isBlankArgs } from "../toolSupport.js"

/**
 * Arguments with an own `__proto__` key are refused, not cleaned: dropping the
 * key would run the tool on arguments the model did not send, and no tool
 * can declare such a parameter anyway. The model is told and may call again.
 */
const plainArgs = (call: ToolCall, parsed: unknown): Effect.Effect<unknown, ToolCallError> => {
  const at = findProtoKey(parsed)
  return at === undefined
    ? Effect.succeed(parsed)
    : Effect.fail(
      new ToolCallError({
        reason: "InvalidArguments",
        message: `Invalid arguments for tool "${call.toolName}": a "__proto__" key (at ${at}) is not accepted. ` +
          `Call the tool again without it.`,
        toolName: call.toolName,
        toolCallId: call.toolCallId
      })
    )
}

/** The call's arguments, parsed, for the tool's decoder. @internal */
export const parseCallArgs = (call: ToolCall): Effect.Effect<unknown, ToolCallError> => {
  const { args } = call
  if (args === undefined) return Effect.succeed({})
  if (typeof args !== "string") return plainArgs(call, args)
  if (isBlankArgs(args)) return Effect.succeed({})
  try {
    const parsed: unknown = JSON.parse(args)
    return plainArgs(call, parsed)
  } catch (error) {
    return Effect.fail(
      new ToolCallError({
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
