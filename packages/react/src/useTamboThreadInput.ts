/**
 * `useTamboThreadInput`: the message being composed, shared under one
 * provider.
 *
 * @since 0.1.0
 */
import type { InputMessage, RunOptions } from "@tambo-effect/client"
import { createElement, type ReactNode, useCallback, useMemo, useSyncExternalStore } from "react"
import { InputScope, useTamboContext } from "./internal/context.js"
import { useInputStore } from "./internal/inputStore.js"
import { takeMessageContext, withTakenContext } from "./internal/messageContext.js"
import { messageSentTo } from "./internal/unsent.js"
import type { StagedImage } from "./types.js"
import { useTamboSelector } from "./useTamboSelector.js"
import { selectCurrentThreadId } from "./internal/selectors.js"

/**
 * Options of `submit`: those of a run, except the thread (always the
 * current one).
 *
 * @since 0.1.0
 * @category Models
 */
export type SubmitOptions = Omit<RunOptions, "threadId" | "signal">

/**
 * What `useTamboThreadInput()` returns.
 *
 * @since 0.1.0
 * @category Models
 */
export type UseTamboThreadInputReturn = TamboThreadInputContextProps

/**
 * What an input scope holds (see {@link TamboThreadInputProvider}): the
 * name `@tambo-ai/react` gives what `useTamboThreadInput()` returns.
 *
 * @since 0.2.0
 * @category Models
 */
export interface TamboThreadInputContextProps {
  readonly value: string
  readonly setValue: (value: string | ((previous: string) => string)) => void
  /**
   * Sends the value (trimmed) and the images on the current thread and
   * clears the value. Resolves with the thread's id once the run ended,
   * also when it was cancelled (a stop is not a failure, as upstream's
   * submit says); rejects if there is neither text nor an image, the run
   * failed, or the client was destroyed meanwhile (an `AbortError`). What
   * the message took (its text, unless something was typed meanwhile, its
   * images, the context attachments and the interactables' selections)
   * comes back exactly when the message is not in the thread once its run
   * ended: refused before any event (an HTTP error, a server that could not
   * be reached or did not answer), or stopped before it reached the thread.
   * A message the server took stays in the thread when its run then fails
   * (a `RUN_ERROR`, a connection lost mid-reply) or is stopped: the
   * composer stays empty and its images go, so it is not sent twice.
   */
  readonly submit: (options?: SubmitOptions) => Promise<{ readonly threadId: string }>
  /**
   * The thread `submit` sends on: the current one (the placeholder's id
   * while the next message starts a new conversation).
   *
   * @since 0.2.0
   */
  readonly threadId: string
  /**
   * How the last submit went, as TanStack Query names a mutation's state:
   * `idle` (none yet, or after `reset`; a cancelled one too), `pending`,
   * `error`, `success`. As a mutation's, it tells of the submit started
   * last: an earlier one that ends after it changes nothing here.
   *
   * @since 0.2.0
   */
  readonly status: "idle" | "pending" | "error" | "success"
  /** `status` is `idle`. @since 0.2.0 */
  readonly isIdle: boolean
  /** `status` is `success`. @since 0.2.0 */
  readonly isSuccess: boolean
  /** What the last successful submit resolved with. @since 0.2.0 */
  readonly data: { readonly threadId: string } | undefined
  /** The options of the last submit. @since 0.2.0 */
  readonly variables: SubmitOptions | undefined
  /** When the last submit started (epoch ms), `0` before any. @since 0.2.0 */
  readonly submittedAt: number
  /** Failed submits in a row since the last success. @since 0.2.0 */
  readonly failureCount: number
  /** The last failure while `failureCount` is not 0, else `null`. @since 0.2.0 */
  readonly failureReason: Error | null
  /**
   * Forgets how the last submit went (`status` back to `idle`, a pending
   * one's end no longer shown); the text and images stay.
   *
   * @since 0.2.0
   */
  readonly reset: () => void
  /** The last submit's run is in progress (`status` is `pending`). */
  readonly isPending: boolean
  /** `isPending`, for an input's `disabled`. */
  readonly isDisabled: boolean
  readonly isError: boolean
  /** Why the last submit failed (cancellation is not an error). */
  readonly error: Error | undefined
  /**
   * Images sent with the next message (as `resource` blocks, after its
   * text), dropped once its run ended. While it runs they stay here, and a
   * message submitted meanwhile does not send them again.
   *
   * @since 0.2.0
   */
  readonly images: ReadonlyArray<StagedImage>
  /**
   * Adds an image file; rejects if it is not an image.
   *
   * @since 0.2.0
   */
  readonly addImage: (file: File) => Promise<void>
  /**
   * Adds the image files among `files`; rejects if there is none.
   *
   * @since 0.2.0
   */
  readonly addImages: (files: ReadonlyArray<File>) => Promise<void>
  /** @since 0.2.0 */
  readonly removeImage: (id: string) => void
  /** @since 0.2.0 */
  readonly clearImages: () => void
}

/**
 * The message being composed: every component calling this under the same
 * provider shares it (so `useTamboSuggestions().accept` can fill it).
 * Re-renders only when the value, pending state or error changed.
 *
 * @example
 * ```tsx
 * function Composer() {
 *   const { value, setValue, submit, isPending } = useTamboThreadInput()
 *   return (
 *     <form onSubmit={(e) => { e.preventDefault(); submit().catch(() => {}) }}>
 *       <input value={value} onChange={(e) => setValue(e.target.value)} />
 *       <button disabled={isPending}>Send</button>
 *     </form>
 *   )
 * }
 * ```
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboThreadInput = (): UseTamboThreadInputReturn => {
  const { handle, input, interactables } = useTamboContext("useTamboThreadInput")
  const snapshot = useSyncExternalStore(input.subscribe, input.getSnapshot, input.getSnapshot)
  const threadId = useTamboSelector(selectCurrentThreadId)
  const setValue = useCallback((value: string | ((previous: string) => string)) => {
    input.setValue(typeof value === "function" ? value(input.getSnapshot().value) : value)
  }, [input])
  const submit = useCallback(
    (options?: SubmitOptions) => {
      const client = handle.client()
      // The thread sent on, for a run cancelled before it named one.
      const target = client.getState().currentThreadId
      // The attachments and selections the message carries are taken here, where they are its
      // own, so that a failed send gives back what it took, not what another run sent.
      const take = () => takeMessageContext(handle, client, interactables)
      const run = (message: Parameters<typeof client.run>[0], additionalContext: Record<string, unknown> | undefined) =>
        client.run(message, withTakenContext(options, additionalContext))
      // Whether the message reached its thread: a user message there that was not before it.
      const sentTo = (message: string | InputMessage) => messageSentTo(client, target, message)
      return input.submit(run, options, () => target, take, sentTo)
    },
    [handle, input, interactables]
  )
  const images = useMemo(() => ({
    addImage: (file: File) => input.addImage(file),
    addImages: (files: ReadonlyArray<File>) => input.addImages(files),
    removeImage: (id: string) => input.removeImage(id),
    clearImages: () => input.clearImages(),
    reset: () => input.reset()
  }), [input])
  return useMemo(() => ({
    value: snapshot.value,
    setValue,
    submit,
    threadId,
    status: snapshot.status,
    isIdle: snapshot.status === "idle",
    isSuccess: snapshot.status === "success",
    data: snapshot.data,
    variables: snapshot.variables as SubmitOptions | undefined,
    submittedAt: snapshot.submittedAt,
    failureCount: snapshot.failureCount,
    failureReason: snapshot.failureReason,
    isPending: snapshot.isPending,
    isDisabled: snapshot.isPending,
    isError: snapshot.error !== undefined,
    error: snapshot.error,
    images: snapshot.images,
    ...images
  }), [snapshot, threadId, setValue, submit, images])
}

/**
 * A scope of its own for the message being composed: `useTamboThreadInput()`
 * below it shares a value, staged images and a submission that the rest of
 * the provider's tree does not see (a second composer on the page, say).
 * `TamboProvider` already holds one for its whole tree. Inside a
 * `TamboProvider`.
 *
 * @example
 * ```tsx
 * <TamboProvider apiKey={apiKey} userKey="user-1">
 *   <MainComposer />
 *   <TamboThreadInputProvider>
 *     <SideComposer />
 *   </TamboThreadInputProvider>
 * </TamboProvider>
 * ```
 *
 * @since 0.2.0
 * @category Components
 */
export function TamboThreadInputProvider({ children }: { readonly children?: ReactNode }): ReactNode {
  const { handle } = useTamboContext("TamboThreadInputProvider")
  const input = useInputStore(handle)
  return createElement(InputScope, { input }, children)
}
