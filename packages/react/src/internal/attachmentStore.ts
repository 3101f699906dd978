import type { ContextHelperRun, TamboClient } from "@tambo-effect/client"
import type { ClientHandle } from "./clientHandle.js"
import { giveBackIfUnsent } from "./unsent.js"
import type { ContextAttachment } from "../types.js"

/**
 * The name of the context helper that sends the attachments (upstream's).
 *
 * @since 0.2.0
 * @category Internal
 */
export const CONTEXT_ATTACHMENTS_HELPER = "contextAttachments"

const NONE: ReadonlyArray<ContextAttachment> = []

let counter = 0
const newId = (): string =>
  typeof crypto !== "undefined" && typeof crypto.randomUUID === "function" ? crypto.randomUUID() : `attachment-${++counter}`

/**
 * The attachments of one provider, and the context helper that sends them
 * with the next run and drops them (the run reads its context once, as it
 * starts); a message of the composer or of `sendMessage` that is not sent
 * gives them back.
 *
 * @since 0.2.0
 * @category Internal
 */
export class AttachmentStore {
  #attachments: ReadonlyArray<ContextAttachment> = NONE
  readonly #listeners = new Set<() => void>()
  /** The client whose runs call the helper (the provider's, if it has one now). */
  readonly #client: () => TamboClient | undefined

  constructor(client: () => TamboClient | undefined = () => undefined) {
    this.#client = client
  }

  readonly getSnapshot = (): ReadonlyArray<ContextAttachment> => this.#attachments

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  add(attachment: Omit<ContextAttachment, "id">): ContextAttachment {
    const added: ContextAttachment = {
      id: newId(),
      context: attachment.context,
      ...(attachment.displayName === undefined ? {} : { displayName: attachment.displayName }),
      ...(attachment.type === undefined ? {} : { type: attachment.type })
    }
    this.#set([...this.#attachments, added])
    return added
  }

  remove(id: string): void {
    const next = this.#attachments.filter((attachment) => attachment.id !== id)
    if (next.length !== this.#attachments.length) this.#set(next)
  }

  clear(): void {
    if (this.#attachments.length > 0) this.#set(NONE)
  }

  /**
   * The context helper: what a run sends, taken out of the store; given back
   * if that run leaves its message unsent (a run of the client's own `run`).
   */
  readonly helper = (run?: ContextHelperRun): Record<string, unknown> | undefined => {
    const taken = this.take()
    if (taken !== undefined) giveBackIfUnsent(this.#client(), run, taken.giveBack)
    return taken?.context
  }

  /**
   * Takes the attachments for a message: `context` is what it sends,
   * `giveBack` puts them back (before those attached meanwhile) if it is not
   * sent.
   */
  take(): { readonly context: Record<string, unknown>; readonly giveBack: () => void } | undefined {
    const sent = this.#attachments
    if (sent.length === 0) return undefined
    this.#set(NONE)
    return {
      // The API takes any JSON under a context name; upstream sends the list itself.
      context: sent.map((attachment) => ({ ...attachment })) as unknown as Record<string, unknown>,
      giveBack: () => this.#set([...sent, ...this.#attachments])
    }
  }

  #set(next: ReadonlyArray<ContextAttachment>) {
    this.#attachments = next
    for (const listener of [...this.#listeners]) listener()
  }
}

const stores = new WeakMap<ClientHandle, AttachmentStore>()

/**
 * The attachment store of a provider (by its client handle), made when
 * first asked for: providers that never attach anything carry none.
 *
 * @since 0.2.0
 * @category Internal
 */
export const attachmentStoreFor = (handle: ClientHandle): AttachmentStore => {
  let store = stores.get(handle)
  if (store === undefined) {
    store = new AttachmentStore(() => handle.currentClient())
    stores.set(handle, store)
  }
  return store
}
