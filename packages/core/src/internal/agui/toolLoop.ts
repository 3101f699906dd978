/**
 * The AG-UI tool loop's decision, pure: an AG-UI run has no
 * `tambo.run.awaiting_input`; it ends (`RUN_FINISHED`) with tool calls, and
 * the client runs those of its own (frontend) tools that nothing answered yet,
 * then starts the next run with their results. A server-side tool's call is
 * answered by its `TOOL_CALL_RESULT` and is never run here.
 *
 * @since 0.2.0
 */
import type * as ToolExecutor from "../../ToolExecutor.js"
import type * as Types from "../../Types.js"

/**
 * The calls to run before the next run: `tool_use` blocks in the messages
 * from `from` on (the run's own) whose tool is one of `frontendTools` and
 * that no `tool_result` after them answers, in order. Only a result after a
 * call answers it: a provider that reuses an id (`call_0` every round) makes
 * a new call.
 *
 * @since 0.2.0
 * @category Tool loop
 */
export const callsToRun = (
  messages: ReadonlyArray<Types.TamboThreadMessage>,
  frontendTools: ReadonlySet<string>,
  from = 0
): Array<ToolExecutor.ToolCall> => {
  // Open calls by id, in the order they were made.
  const open = new Map<string, ToolExecutor.ToolCall>()
  for (let at = 0; at < messages.length; at++) {
    const message = messages[at]!
    const ours = at >= from && message.role === "assistant"
    for (const block of message.content) {
      if (block.type === "tool_result") {
        open.delete(block.toolUseId)
      } else if (block.type === "tool_use" && ours && frontendTools.has(block.name)) {
        open.delete(block.id)
        open.set(block.id, { toolCallId: block.id, toolName: block.name, args: block.input })
      }
    }
  }
  return [...open.values()]
}
