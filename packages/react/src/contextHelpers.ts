/**
 * Context for the model: helpers whose results every run sends as
 * `additionalContext[name]`, added and removed at runtime; attachments for
 * the next message only; and two built-in helpers (the page, the time).
 *
 * @since 0.2.0
 */
import type { ContextHelperFn } from "@tambo-effect/client"
import { useEffect, useMemo, useSyncExternalStore } from "react"
import { attachmentStoreFor, CONTEXT_ATTACHMENTS_HELPER } from "./internal/attachmentStore.js"
import type { ContextAttachment } from "./types.js"
import { useTamboContext } from "./internal/context.js"

/**
 * One helper's result, named.
 *
 * @since 0.2.0
 * @category Models
 */
export interface AdditionalContext {
  readonly name: string
  readonly context: unknown
}

/**
 * What `useTamboContextHelpers()` returns.
 *
 * @since 0.2.0
 * @category Models
 */
export interface UseTamboContextHelpersReturn {
  /** Adds (or replaces) a helper: every run from now on sends its result as `additionalContext[name]`. */
  readonly addContextHelper: (name: string, helper: ContextHelperFn) => void
  readonly removeContextHelper: (name: string) => void
  /** The helpers registered now, by name (the provider's `contextHelpers` among them). */
  readonly getContextHelpers: () => Readonly<Record<string, ContextHelperFn>>
  /**
   * What the helpers give now, as a run would send it (a helper that gives
   * nothing, `undefined` or `null`, is left out, as a run leaves it out; one
   * that fails is left out too, where it would fail a run); the attachments
   * and the interactables' selections are shown, not taken. Helpers have no
   * timeout, in a run as here: a helper that never settles keeps this
   * pending, as it keeps a run from being sent until it is stopped.
   */
  readonly getAdditionalContext: () => Promise<ReadonlyArray<AdditionalContext>>
}

/**
 * The provider's context helpers, to add and remove at runtime (from a
 * page that knows something the model should: the record it shows, the
 * user's selection). The client keeps them: a helper added here stays until
 * it is removed, whatever component added it.
 *
 * @example
 * ```tsx
 * function OrderPage({ order }: { order: Order }) {
 *   const { addContextHelper, removeContextHelper } = useTamboContextHelpers()
 *   useEffect(() => {
 *     addContextHelper("order", () => ({ id: order.id, status: order.status }))
 *     return () => removeContextHelper("order")
 *   }, [order, addContextHelper, removeContextHelper])
 *   return <OrderView order={order} />
 * }
 * ```
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useTamboContextHelpers = (): UseTamboContextHelpersReturn => {
  const { handle, interactables } = useTamboContext("useTamboContextHelpers")
  return useMemo(() => ({
    addContextHelper: (name, helper) => handle.client().addContextHelper(name, helper),
    removeContextHelper: (name) => handle.client().removeContextHelper(name),
    getContextHelpers: () => handle.client().getContextHelpers(),
    getAdditionalContext: async () => {
      const attachments = attachmentStoreFor(handle)
      const entries = await Promise.all(
        Object.entries(handle.client().getContextHelpers()).map(async ([name, helper]): Promise<AdditionalContext | undefined> => {
          if (helper === attachments.helper) {
            const shown = attachments.getSnapshot()
            return shown.length === 0 ? undefined : { name, context: shown }
          }
          if (helper === interactables.contextHelper) {
            const context = interactables.context()
            return context === undefined ? undefined : { name, context }
          }
          try {
            const context: unknown = await helper()
            return context === undefined || context === null ? undefined : { name, context }
          } catch {
            return undefined
          }
        })
      )
      return entries.filter((entry) => entry !== undefined)
    }
  }), [handle, interactables])
}

/**
 * What `useTamboContextAttachment()` returns.
 *
 * @since 0.2.0
 * @category Models
 */
export interface UseTamboContextAttachmentReturn {
  /** What the next message will carry. */
  readonly attachments: ReadonlyArray<ContextAttachment>
  readonly addContextAttachment: (attachment: Omit<ContextAttachment, "id">) => ContextAttachment
  readonly removeContextAttachment: (id: string) => void
  readonly clearContextAttachments: () => void
}

/**
 * Context for the next message only (a file's text, a selected passage):
 * the next run sends the attachments as `additionalContext.contextAttachments`
 * (`[{ id, displayName, context, type }]`) and they are dropped as it
 * starts; a submit of `useTamboThreadInput` that fails gives them back with
 * its text, and so does a message of `useTambo().sendMessage` that fails.
 * Every component under one provider shares them.
 *
 * @example
 * ```tsx
 * function AttachSelection({ text }: { text: string }) {
 *   const { addContextAttachment } = useTamboContextAttachment()
 *   return <button onClick={() => addContextAttachment({ context: text, displayName: "Selection" })}>Ask about this</button>
 * }
 * ```
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useTamboContextAttachment = (): UseTamboContextAttachmentReturn => {
  const { handle } = useTamboContext("useTamboContextAttachment")
  const store = attachmentStoreFor(handle)
  // Registered again by every user (the same function: harmless); never removed, as it sends
  // nothing while there is nothing attached, and attachments outlive the component that added them.
  useEffect(() => {
    handle.client().addContextHelper(CONTEXT_ATTACHMENTS_HELPER, store.helper)
  }, [handle, store])
  const attachments = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot)
  return useMemo(() => ({
    attachments,
    addContextAttachment: (attachment) => store.add(attachment),
    removeContextAttachment: (id) => store.remove(id),
    clearContextAttachments: () => store.clear()
  }), [attachments, store])
}

/**
 * A built-in context helper: the page the user is on, `{ url, title }`
 * (nothing outside a browser). Register it under a name of your choice,
 * e.g. `contextHelpers={{ userPage: currentPageContextHelper }}`.
 *
 * @since 0.2.0
 * @category Context helpers
 */
export const currentPageContextHelper: ContextHelperFn = () =>
  typeof window === "undefined" || typeof document === "undefined"
    ? undefined
    : { url: window.location.href, title: document.title }

/**
 * A built-in context helper: the user's current time, `{ timestamp }`, as
 * the browser writes a date (with its time zone), e.g.
 * `contextHelpers={{ userTime: currentTimeContextHelper }}`.
 *
 * @since 0.2.0
 * @category Context helpers
 */
export const currentTimeContextHelper: ContextHelperFn = () => ({ timestamp: new Date().toString() })
