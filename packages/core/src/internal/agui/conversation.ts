/**
 * The conversation a run sends to the agent: for a new thread, the one the
 * run recorded; for an existing thread, the thread in the store with any of
 * the request's tool results it does not hold.
 *
 * @internal
 */
import type * as Transport from "../../TamboTransport.js"
import type * as Types from "../../Types.js"
import { fromInitialMessages } from "./initialMessages.js"

/**
 * A new thread's conversation as the run recorded it in the store (initial messages, then the
 * request's message), under the ids the next requests send; without the store's copy, the same
 * messages under ids of this run.
 */
export const onNewThread = (
  request: Transport.RunRequest,
  runId: string
): ReadonlyArray<Types.TamboThreadMessage> =>
  request.conversation ?? [
    ...fromInitialMessages(request.initialMessages ?? [], (index) => `initial_${index}_${runId}`),
    { id: `user_${runId}`, role: "user", content: [...request.message.content] }
  ]

/**
 * The conversation of a run on an existing thread: the thread in the store (the run loop has
 * the user's message and its tool results published there before the request, see
 * `conversationFromStore`), and any of the request's tool results it does not hold.
 */
export const onThread = (
  messages: ReadonlyArray<Types.TamboThreadMessage>,
  message: Transport.InputMessage,
  id: string
): ReadonlyArray<Types.TamboThreadMessage> => {
  const answered = new Set<string>()
  for (const m of messages) {
    for (const block of m.content) if (block.type === "tool_result") answered.add(block.toolUseId)
  }
  const missing = message.content.filter((block) => block.type === "tool_result" && !answered.has(block.toolUseId))
  return missing.length === 0 ? messages : [...messages, { id, role: "user", content: missing }]
}
