import { isAbortError } from "@tambo-effect/client"

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
}

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
  #snapshot: InputSnapshot = { value: "", isPending: false, error: undefined }
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

  /** A submit started: clears the text and the last error. */
  #begin(): void {
    this.#pending++
    this.#set({ value: "", isPending: true, error: undefined })
  }

  /** A submit ended; `error` is what to show, if anything. */
  #end(error: Error | undefined): void {
    this.#pending--
    this.#set({ isPending: this.#pending > 0, error })
  }

  /**
   * Sends the value (trimmed) with `run` and clears it; resolves with the
   * thread's id once the run ended. Cancellation is not shown as an error.
   */
  async submit(
    run: (text: string) => { readonly thread: Promise<{ readonly id: string }> }
  ): Promise<{ readonly threadId: string }> {
    const text = this.#snapshot.value.trim()
    if (text === "") throw new Error("Message cannot be empty")
    this.#begin()
    try {
      const thread = await run(text).thread
      this.#end(undefined)
      return { threadId: thread.id }
    } catch (error) {
      this.#end(isAbortError(error) || !(error instanceof Error) ? undefined : error)
      throw error
    }
  }

  #set(patch: Partial<InputSnapshot>) {
    const next = { ...this.#snapshot, ...patch }
    if (next.value === this.#snapshot.value && next.isPending === this.#snapshot.isPending && next.error === this.#snapshot.error) return
    this.#snapshot = next
    for (const listener of [...this.#listeners]) listener()
  }
}
