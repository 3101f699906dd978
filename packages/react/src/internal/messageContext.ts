import { isAbortError, type RunOptions, type TamboClient } from "@tambo-effect/client"
import { attachmentStoreFor, CONTEXT_ATTACHMENTS_HELPER } from "./attachmentStore.js"
import type { ClientHandle } from "./clientHandle.js"
import { CONTEXT_HELPER_NAME as INTERACTABLES_HELPER, type InteractableStore } from "./interactableStore.js"

/**
 * What one message carries besides its text: the context attachments and
 * the interactables' selections, taken for it (while their helpers are the
 * provider's) as `additionalContext`, and how to give them back.
 *
 * @since 0.2.0
 * @category Internal
 */
export interface TakenContext {
  readonly additionalContext: Record<string, unknown> | undefined
  readonly giveBack: () => void
}

/**
 * Takes the attachments and selections for a message about to be sent, so
 * that one not sent gives back what it took, not what another run sent.
 *
 * @since 0.2.0
 * @category Internal
 */
export const takeMessageContext = (handle: ClientHandle, client: TamboClient, interactables: InteractableStore): TakenContext => {
  const helpers = client.getContextHelpers()
  const attachments = attachmentStoreFor(handle)
  const taken = [
    ...(helpers[CONTEXT_ATTACHMENTS_HELPER] === attachments.helper ? [[CONTEXT_ATTACHMENTS_HELPER, attachments.take()] as const] : []),
    ...(helpers[INTERACTABLES_HELPER] === interactables.contextHelper ? [[INTERACTABLES_HELPER, interactables.take()] as const] : [])
  ]
  const additionalContext: Record<string, unknown> = {}
  for (const [name, part] of taken) if (part?.context !== undefined) additionalContext[name] = part.context
  return {
    additionalContext: Object.keys(additionalContext).length === 0 ? undefined : additionalContext,
    giveBack: () => {
      for (const [, part] of taken) part?.giveBack()
    }
  }
}

/**
 * The run's options with what the message took: the caller's own
 * `additionalContext` wins a name both have.
 *
 * @since 0.2.0
 * @category Internal
 */
export const withTakenContext = <O extends Pick<RunOptions, "additionalContext">>(
  options: O | undefined,
  additionalContext: Record<string, unknown> | undefined
): O | undefined =>
  additionalContext === undefined
    ? options
    : { ...options, additionalContext: { ...additionalContext, ...options?.additionalContext } } as O

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
