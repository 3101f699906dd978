import { type ContextHelperRun, type InputMessage, isAbortError, type TamboClient } from "@tambo-effect/client"

type Block = { readonly type: string; readonly text?: string }

const textOf = (content: ReadonlyArray<Block>): string =>
  content.flatMap((block) => (block.type === "text" && block.text !== undefined ? [block.text] : [])).join("")

const userMessages = (state: ReturnType<TamboClient["getState"]>, threadId: string) =>
  (state.threadMap[threadId]?.thread.messages ?? []).filter((message) => message.role === "user")

/**
 * Whether a message sent now on `target` reached a thread: a user message
 * there that was not before it, with the text of `message` when it is
 * given. Another message of the client can reach the thread meanwhile (one
 * sent just before, whose run records it after this snapshot, or one this
 * message was queued behind): its text tells it apart.
 *
 * @since 0.2.0
 * @category Internal
 */
export const messageSentTo = (
  client: TamboClient,
  target: string,
  message?: string | InputMessage
): (threadId: string) => boolean => {
  const before = new Set(userMessages(client.getState(), target).map((m) => m.id))
  const text = message === undefined ? undefined : typeof message === "string" ? message : textOf(message.content)
  return (threadId) =>
    userMessages(client.getState(), threadId).some((m) => !before.has(m.id) && (text === undefined || textOf(m.content) === text))
}

/**
 * Follows the thread `run` ends on: the one the server named for it (a new
 * conversation's), else `target`, the one it was sent on. Read it once the
 * run's `thread` settled: a run's `threadId` settles before its `thread`
 * does, so the reading is synchronous and what a rejection's handler gives
 * back is back before the caller's own handler (which may send again) runs.
 *
 * @since 0.2.0
 * @category Internal
 */
export const followThread = (run: { readonly threadId?: Promise<string> }, target: string): () => string => {
  let named: string | undefined
  run.threadId?.then((threadId) => {
    named = threadId
  }, () => undefined)
  return () => named ?? target
}

/**
 * Whether a run that ended with `error` left its message out of the store,
 * so what it took is the user's again: `threadId`, the thread it ended on,
 * holds no message it sent. A message refused before any event, or stopped
 * before it reached its thread, is not there; one the server took before
 * the run failed or was stopped is, as the server has it, and given back it
 * would be sent twice. Nothing is given back to a destroyed client. Without
 * `sentTo` a failure counts as unsent, a cancellation not.
 *
 * @since 0.2.0
 * @category Internal
 */
export const leftUnsent = (
  error: unknown,
  sentTo: ((threadId: string) => boolean) | undefined,
  threadId: () => string
): boolean => {
  if (isAbortError(error) && error.reason === "ClientDestroyed") return false
  if (sentTo === undefined) return !isAbortError(error)
  return !sentTo(threadId())
}

/**
 * What a context helper took for `run` (of `client`) goes back if the run
 * leaves its message unsent, as a message of `sendMessage` gives back what
 * it took. Called as the run builds its message, before it is recorded.
 *
 * @since 0.2.0
 * @category Internal
 */
export const giveBackIfUnsent = (client: TamboClient | undefined, run: ContextHelperRun | undefined, giveBack: () => void): void => {
  if (client === undefined || run === undefined) return
  const sentTo = messageSentTo(client, run.threadId)
  const endedOn = followThread(run.stream, run.threadId)
  run.stream.thread.catch((error: unknown) => {
    if (leftUnsent(error, sentTo, endedOn)) giveBack()
  })
}
