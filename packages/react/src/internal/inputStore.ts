import { type InputMessage, isAbortError } from "@tambo-effect/client"
import { followThread, leftUnsent } from "./unsent.js"
import { useRef } from "react"
import { imageResource, isImage, stageImages } from "./stagedImages.js"
import type { StagedImage } from "../types.js"

/**
 * What `useTamboThreadInput` shows.
 *
 * @since 0.1.0
 * @category Internal
 */
export interface InputSnapshot {
  readonly value: string
  readonly isPending: boolean
  readonly error: Error | undefined
  /** Images to send with the text. */
  readonly images: ReadonlyArray<StagedImage>
  /** How the last submit went: `idle` before any (or after `reset`). */
  readonly status: "idle" | "pending" | "error" | "success"
  /** The last successful submit's answer. */
  readonly data: { readonly threadId: string } | undefined
  /** The options of the last submit. */
  readonly variables: unknown
  /** When the last submit started (epoch ms), `0` before any. */
  readonly submittedAt: number
  /** Failed submits in a row since the last success. */
  readonly failureCount: number
  /** The last of those failures, `null` without one. */
  readonly failureReason: Error | null
}

const NO_IMAGES: ReadonlyArray<StagedImage> = []

/**
 * The text being composed, shared by every `useTamboThreadInput` (and
 * `useTamboSuggestions`, which fills it) under one provider. A tiny
 * external store, so only the components that read it re-render as the
 * user types.
 *
 * @since 0.1.0
 * @category Internal
 */
export class InputStore {
  #snapshot: InputSnapshot = {
    value: "",
    isPending: false,
    error: undefined,
    images: NO_IMAGES,
    status: "idle",
    data: undefined,
    variables: undefined,
    submittedAt: 0,
    failureCount: 0,
    failureReason: null
  }
  /** The submit started last (`reset` detaches it): only its end changes how the last submit went. */
  #latest: object | undefined
  /** Images a pending submit is sending: shown until its run ends, not sent again by the next one. */
  readonly #sending = new Set<StagedImage>()
  readonly #listeners = new Set<() => void>()

  readonly getSnapshot = (): InputSnapshot => this.#snapshot

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  setValue(value: string): void {
    this.#set({ value })
  }

  /** Adds an image; rejects if the file is not one. */
  async addImage(file: File): Promise<void> {
    if (!isImage(file)) throw new Error(`Only image files can be added: ${file.name} is ${file.type || "of no known type"}`)
    await this.addImages([file])
  }

  /** Adds the images among `files`; rejects if there is none. */
  async addImages(files: ReadonlyArray<File>): Promise<void> {
    const images = files.filter(isImage)
    if (images.length === 0) throw new Error("No image files given")
    const staged = await stageImages(images)
    this.#set({ images: [...this.#snapshot.images, ...staged] })
  }

  removeImage(id: string): void {
    const images = this.#snapshot.images.filter((image) => image.id !== id)
    if (images.length !== this.#snapshot.images.length) this.#set({ images })
  }

  clearImages(): void {
    if (this.#snapshot.images.length > 0) this.#set({ images: NO_IMAGES })
  }

  /**
   * Forgets how the last submit went (not the text or the images): `idle`,
   * and a submit still pending no longer shows, as a TanStack mutation's
   * `reset` does.
   */
  reset(): void {
    this.#latest = undefined
    this.#set({ isPending: false, status: "idle", error: undefined, data: undefined, variables: undefined, failureCount: 0, failureReason: null })
  }

  /**
   * A submit ended: with its answer, or failed (`error` is what to show, if anything; a
   * cancellation shows nothing and is no failure). As a TanStack mutation's state, the state
   * tells of the submit started last: an older one's end changes nothing shown.
   */
  #end(submit: object, outcome: { readonly data: { readonly threadId: string } } | { readonly error: Error | undefined }): void {
    if (submit !== this.#latest) return
    if ("data" in outcome) {
      this.#set({ isPending: false, error: undefined, status: "success", data: outcome.data, failureCount: 0, failureReason: null })
    } else if (outcome.error === undefined) {
      this.#set({ isPending: false, error: undefined, status: "idle" })
    } else {
      this.#set({
        isPending: false,
        error: outcome.error,
        status: "error",
        failureCount: this.#snapshot.failureCount + 1,
        failureReason: outcome.error
      })
    }
  }

  /**
   * Sends the value (trimmed) and the images with `run` and clears the
   * value; resolves with the thread's id once the run ended. Images a
   * pending submit is sending are not sent again by a submit made meanwhile.
   * What the message took (its text, images, and what `take` took: the
   * context attachments, the interactables' selections) is the user's again
   * exactly when the message is not in the store once its run ended, on the
   * thread it ended on, as `sentTo` tells: a message refused before any
   * event, or stopped before it reached its thread, gives it back (the text
   * unless something was typed meanwhile: nothing the user wrote is lost); a
   * message the server took keeps the composer as it is and drops the images
   * it sent, even when its run then failed or was stopped, as sending it
   * again would send it twice. A cancelled run (the user's stop, the
   * server's) is not a failure: the submit resolves, with the run's thread
   * (`threadId` when the run never named one), as upstream's does; it
   * rejects only when the client was destroyed.
   */
  async submit(
    run: (message: string | InputMessage, additionalContext: Record<string, unknown> | undefined) => {
      readonly thread: Promise<{ readonly id: string }>
      readonly threadId?: Promise<string>
    },
    variables?: unknown,
    threadId?: () => string,
    take?: () => { readonly additionalContext: Record<string, unknown> | undefined; readonly giveBack: () => void },
    sentTo?: (message: string | InputMessage) => (threadId: string) => boolean
  ): Promise<{ readonly threadId: string }> {
    const text = this.#snapshot.value.trim()
    const images = this.#snapshot.images.filter((image) => !this.#sending.has(image))
    if (text === "" && images.length === 0) throw new Error("Message cannot be empty")
    const submit = {}
    this.#latest = submit
    for (const image of images) this.#sending.add(image)
    this.#set({ value: "", isPending: true, error: undefined, status: "pending", variables, submittedAt: Date.now() })
    const taken = take?.()
    const message: string | InputMessage = images.length === 0
      ? text
      : { role: "user", content: [...(text === "" ? [] : [{ type: "text" as const, text }]), ...images.map(imageResource)] }
    const sent = sentTo?.(message)
    let endedOn = () => threadId?.() ?? ""
    try {
      const running = run(message, taken?.additionalContext)
      endedOn = followThread(running, threadId?.() ?? "")
      const thread = await running.thread
      this.#dropSent(images)
      const data = { threadId: thread.id }
      this.#end(submit, { data })
      return data
    } catch (error) {
      const cancelled = isAbortError(error)
      const destroyed = cancelled && error.reason === "ClientDestroyed"
      const thread = cancelled ? error.threadId ?? threadId?.() ?? "" : ""
      if (leftUnsent(error, sent, endedOn)) {
        if (this.#snapshot.value === "") this.#set({ value: text })
        taken?.giveBack()
      } else if (!destroyed) this.#dropSent(images)
      this.#end(submit, { error: cancelled ? undefined : error instanceof Error ? error : new Error(String(error)) })
      if (!cancelled || destroyed) throw error
      return { threadId: thread }
    } finally {
      for (const image of images) this.#sending.delete(image)
    }
  }

  /** The images a message that reached its thread sent leave the composer (those added meanwhile stay). */
  #dropSent(images: ReadonlyArray<StagedImage>) {
    if (images.length === 0) return
    const sent = new Set(images)
    this.#set({ images: this.#snapshot.images.filter((image) => !sent.has(image)) })
  }

  #set(patch: Partial<InputSnapshot>) {
    const current = this.#snapshot
    if ((Object.keys(patch) as Array<keyof InputSnapshot>).every((key) => Object.is(patch[key], current[key]))) return
    this.#snapshot = { ...current, ...patch }
    for (const listener of [...this.#listeners]) listener()
  }
}

/**
 * The composer's store for `handle`'s client: a new client (another user,
 * API key or URL) starts with an empty composer, so the next user never
 * sees, nor sends, what the last one wrote or staged.
 *
 * @since 0.2.0
 * @category Internal
 */
export const useInputStore = (handle: object): InputStore => {
  const held = useRef<{ readonly handle: object; readonly store: InputStore } | undefined>(undefined)
  if (held.current?.handle !== handle) held.current = { handle, store: new InputStore() }
  return held.current.store
}
