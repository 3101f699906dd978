import { type ContextHelperRun, isAbortError, type TamboClient } from "@tambo-effect/client"

const userMessageIds = (state: ReturnType<TamboClient["getState"]>, threadId: string): ReadonlyArray<string> =>
  (state.threadMap[threadId]?.thread.messages ?? []).filter((message) => message.role === "user").map((message) => message.id)

/**
 * Whether a message sent now on `target` reached a thread: a user message
 * there that was not before it.
 *
 * @since 0.2.0
 * @category Internal
 */
export const messageSentTo = (client: TamboClient, target: string): (threadId: string) => boolean => {
  const before = new Set(userMessageIds(client.getState(), target))
  return (threadId) => userMessageIds(client.getState(), threadId).some((id) => !before.has(id))
}

/**
 * Whether a run that ended with `error` left its message unsent, so what it
 * took is the user's again: it failed, or it was stopped (not by the
 * client's end) before the message reached its thread.
 *
 * @since 0.2.0
 * @category Internal
 */
export const leftUnsent = (error: unknown, sentTo: ((threadId: string) => boolean) | undefined, target: () => string): boolean => {
  if (!isAbortError(error)) return true
  return error.reason !== "ClientDestroyed" && sentTo !== undefined && !sentTo(error.threadId ?? target())
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
  run.stream.thread.catch((error: unknown) => {
    if (leftUnsent(error, sentTo, () => run.threadId)) giveBack()
  })
}
