import type { RunOptions, TamboClient } from "@tambo-effect/client"
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

