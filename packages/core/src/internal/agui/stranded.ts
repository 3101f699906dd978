/**
 * The calls an AG-UI run leaves without a result. An agent's run may
 * call a tool and then fail (`RUN_ERROR`, a dropped connection, a stop)
 * before `RUN_FINISHED`, so before any tool round; a finished run may call a
 * tool the client did not offer (no tool round runs it), or its
 * `MESSAGES_SNAPSHOT` may bring in a call or leave out a result. The call
 * stays in the conversation, and a conversation with a call that nothing
 * answers is one an agent refuses or trips on. Such calls become the thread's
 * pending calls, as those of a stopped tool round are: the next message
 * answers each (as cancelled, see `internal/unanswered.ts`) before its own
 * content.
 *
 * @internal
 */
import type * as ClientState from "../../ClientState.js"
import type * as Types from "../../Types.js"

/**
 * `pending`, then every other call in `messages` that no later result
 * answers, in order. Only a result after a call answers it: a reused id is
 * a new call. Runs once per run ending, not per event.
 *
 * @internal
 */
export const withStranded = (
  messages: ReadonlyArray<Types.TamboThreadMessage>,
  pending: ReadonlyArray<ClientState.AwaitedToolCall>
): ReadonlyArray<ClientState.AwaitedToolCall> => {
  const open = new Map<string, ClientState.AwaitedToolCall>()
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === "tool_result") open.delete(block.toolUseId)
      else if (block.type === "tool_use") {
        open.delete(block.id)
        open.set(block.id, { toolCallId: block.id, toolName: block.name })
      }
    }
  }
  const known = new Set(pending.map((call) => call.toolCallId))
  const stranded = [...open.values()].filter((call) => !known.has(call.toolCallId))
  return stranded.length === 0 ? pending : [...pending, ...stranded]
}
