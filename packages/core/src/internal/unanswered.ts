/**
 * The tool calls a thread still waits on when a new message is sent on it.
 *
 * The API refuses a run on a thread with pending tool calls unless its
 * message answers every one of them (400 `MISSING_RESULTS`), and it takes the
 * answers and the new text in one user message: it stores each `tool_result`
 * block as a tool message, then the rest of the message as the user's (see
 * the testing server's runs module). A run that ended between a pause and its
 * continuation (cancelled, past its steps, its continuation refused) leaves
 * such calls behind: the next message answers them.
 *
 * @since 0.1.0
 */
import type * as ClientState from "../ClientState.js"
import * as Tool from "../Tool.js"
import type * as Types from "../Types.js"

/**
 * What a new message carries for the calls its thread waits on: `send` goes
 * first in the message's content; `record` is what the store does not hold yet.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Unanswered {
  readonly send: ReadonlyArray<Types.ToolResultContent>
  readonly record: ReadonlyArray<Types.ToolResultContent>
}

/**
 * Nothing to answer.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const none: Unanswered = { send: [], record: [] }

/**
 * The text of the result of a call nobody answered.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const cancelledText = (toolName: string): string =>
  `This call of ${toolName} was cancelled before it returned a result.`

/**
 * The results for a thread's pending calls: the one this client's tools gave
 * (a round's tools ran but the server never took their continuation), else
 * an error result saying the call was cancelled.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const forNewMessage = (thread: ClientState.ThreadState | undefined): Unanswered => {
  if (thread === undefined || thread.pendingToolCalls.length === 0) return none
  // Results the store shows already (a run's results are the thread's last messages), unless a
  // reconciliation with the server took them out.
  const shown = new Set<string>()
  const messages = thread.thread.messages
  for (let i = messages.length - 1; i >= 0; i--) {
    const content = messages[i]!.content
    const block = content.length === 1 ? content[0] : undefined
    if (block === undefined || block.type !== "tool_result") break
    shown.add(block.toolUseId)
  }
  const send: Array<Types.ToolResultContent> = []
  const record: Array<Types.ToolResultContent> = []
  for (const call of thread.pendingToolCalls) {
    const result = call.result ?? Tool.errorResult(call.toolCallId, cancelledText(call.toolName))
    send.push(result)
    if (!shown.has(call.toolCallId)) record.push(result)
  }
  return { send, record }
}

/**
 * A new message rebuilt for the calls the server's thread waits on, when the
 * server refused it for answering others (a run that ended with its request
 * unanswered may or may not have reached the server, and another client may
 * have moved the thread on): the results it has for them, else cancelled
 * error results, then its own content.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const forServer = <M extends { readonly content: ReadonlyArray<Types.TextContent | Types.ResourceContent | Types.ToolResultContent> }>(
  message: M,
  pending: ReadonlyArray<ClientState.AwaitedToolCall>
): M => {
  const given = new Map<string, Types.ToolResultContent>()
  const own: Array<Types.TextContent | Types.ResourceContent> = []
  for (const block of message.content) {
    if (block.type === "tool_result") given.set(block.toolUseId, block)
    else own.push(block)
  }
  const results = pending.map((call) =>
    given.get(call.toolCallId) ?? Tool.errorResult(call.toolCallId, cancelledText(call.toolName))
  )
  return { ...message, content: [...results, ...own] }
}
