import { type InputMessage, isAbortError } from "@tambo-effect/client"
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
  #pending = 0
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

  /** Forgets how the last submit went (not the text or the images). */
  reset(): void {
    this.#set({ status: this.#pending > 0 ? "pending" : "idle", error: undefined, data: undefined, variables: undefined, failureCount: 0, failureReason: null })
  }

  /** A submit started: clears the text and the last error. */
  #begin(variables: unknown): void {
    this.#pending++
    this.#set({ value: "", isPending: true, error: undefined, status: "pending", variables, submittedAt: Date.now() })
  }

  /**
   * A submit ended: with its answer, or failed (`error` is what to show, if anything; a
   * cancellation shows nothing and is no failure).
   */
  #end(outcome: { readonly data: { readonly threadId: string } } | { readonly error: Error | undefined }): void {
    this.#pending--
    const isPending = this.#pending > 0
    if ("data" in outcome) {
      this.#set({ isPending, error: undefined, status: isPending ? "pending" : "success", data: outcome.data, failureCount: 0, failureReason: null })
    } else if (outcome.error === undefined) {
      this.#set({ isPending, error: undefined, status: isPending ? "pending" : "idle" })
    } else {
      this.#set({
        isPending,
        error: outcome.error,
        status: isPending ? "pending" : "error",
        failureCount: this.#snapshot.failureCount + 1,
        failureReason: outcome.error
      })
    }
  }

  /**
   * Sends the value (trimmed) and the images with `run` and clears the
   * value; resolves with the thread's id once the run ended, and then drops
   * the images it sent (those added meanwhile stay; a failed send keeps
   * them). A failed send puts its text back, unless something was typed
   * meanwhile: a failure does not lose what the user wrote. A cancelled run
   * (the user's stop, the server's) is not a failure: the input stays as it
   * is (the message was sent) and the submit resolves, with the run's
   * thread (`threadId` when the run never named one), as upstream's does; it
   * rejects only when the client was destroyed.
   */
  async submit(
    run: (message: string | InputMessage) => { readonly thread: Promise<{ readonly id: string }> },
    variables?: unknown,
    threadId?: () => string
  ): Promise<{ readonly threadId: string }> {
    const text = this.#snapshot.value.trim()
    const images = this.#snapshot.images
    if (text === "" && images.length === 0) throw new Error("Message cannot be empty")
    this.#begin(variables)
    try {
      const thread = await run(
        images.length === 0
          ? text
          : { role: "user", content: [...(text === "" ? [] : [{ type: "text" as const, text }]), ...images.map(imageResource)] }
      ).thread
      const sent = new Set(images)
      if (images.length > 0) this.#set({ images: this.#snapshot.images.filter((image) => !sent.has(image)) })
      const data = { threadId: thread.id }
      this.#end({ data })
      return data
    } catch (error) {
      const cancelled = isAbortError(error)
      if (!cancelled && this.#snapshot.value === "") this.#set({ value: text })
      this.#end({ error: cancelled ? undefined : error instanceof Error ? error : new Error(String(error)) })
      if (!cancelled || error.reason === "ClientDestroyed") throw error
      return { threadId: error.threadId ?? threadId?.() ?? "" }
    }
  }

  #set(patch: Partial<InputSnapshot>) {
    const current = this.#snapshot
    if ((Object.keys(patch) as Array<keyof InputSnapshot>).every((key) => Object.is(patch[key], current[key]))) return
    this.#snapshot = { ...current, ...patch }
    for (const listener of [...this.#listeners]) listener()
  }
}
