/**
 * One run of the facade: a fiber that consumes core's run stream, and what
 * the `TamboStream` views read from it.
 *
 * Memory: the fiber keeps only the latest snapshot. Events go to an
 * iterator's bounded queue when one is attached (the fiber waits when it is
 * full), and nowhere otherwise.
 */
import { isLocalThreadId } from "@tambo-effect/core/ClientState"
import type * as Tambo from "@tambo-effect/core/Tambo"
import type { TamboError } from "@tambo-effect/core/TamboError"
import type { TamboThread } from "@tambo-effect/core/Types"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import { type AbortReason, type TamboClientError, UnknownError } from "../errors.js"
import { abortError, type CoreError, fromCause } from "./toClientError.js"

/**
 * How many events wait for a slow iterator before the run pauses. The
 * iterator takes them in batches of up to as many, so at most twice this
 * many events are held at once.
 */
export const EVENT_BUFFER_SIZE = 128

export type Outcome =
  | { readonly ok: true; readonly thread: TamboThread; readonly threadId: string }
  | { readonly ok: false; readonly error: TamboClientError }

const END: unique symbol = Symbol("end")
export type Item = Tambo.RunEvent | typeof END
export { END }

/** The queue of the one iterator that reads events. */
export interface EventSink {
  readonly queue: Queue.Queue<Item>
  closed: boolean
}

export interface RunHooks {
  /** The thread as the store has it now (the final snapshot of a run). */
  readonly currentThread: (threadId: string) => TamboThread | undefined
  readonly onEvents?: ((events: Chunk.Chunk<Tambo.RunEvent>) => void) | undefined
  readonly onFinish: (outcome: Outcome) => void
}

export class RunController {
  latest: TamboThread | undefined
  threadId: string | undefined
  outcome: Outcome | undefined
  /** Resolves when the run ended, however it ended; never rejects. */
  readonly done: Promise<Outcome>
  /** Resolves once the run's thread id is known (or the run ended without one); never rejects. */
  readonly threadIdKnown: Promise<Outcome | { readonly ok: true; readonly threadId: string }>

  #resolveDone!: (outcome: Outcome) => void
  #resolveThreadId!: (value: Outcome | { readonly ok: true; readonly threadId: string }) => void
  #fiber: Fiber.RuntimeFiber<void, CoreError> | undefined
  #abortReason: AbortReason | undefined
  #abortCause: unknown
  #sink: EventSink | undefined
  #waiters: Array<() => void> = []

  constructor(
    /** Runs the queue operations; stays usable after the client's runtime is disposed. */
    readonly runtime: Runtime.Runtime<never>,
    readonly hooks: RunHooks
  ) {
    this.done = new Promise((resolve) => {
      this.#resolveDone = resolve
    })
    this.threadIdKnown = new Promise((resolve) => {
      this.#resolveThreadId = resolve
    })
  }

  /** Starts consuming the run on the client's runtime. */
  start(
    fork: (effect: Effect.Effect<void, TamboError>) => Fiber.RuntimeFiber<void, CoreError>,
    stream: Stream.Stream<Tambo.RunEvent, TamboError>
  ) {
    const fiber = fork(Stream.runForEachChunk(stream, (chunk) => this.#onChunk(chunk)))
    this.#fiber = fiber
    fiber.addObserver((exit) => this.#finish(exit))
  }

  /** Ends the run before it started. */
  fail(error: TamboClientError) {
    this.#settle({ ok: false, error })
  }

  /**
   * Interrupts the run: core aborts the request, cancels the run on the
   * server and marks the thread cancelled. Resolves once all that is done.
   */
  abort(reason: AbortReason, cause?: unknown): Promise<void> {
    if (this.outcome === undefined && this.#abortReason === undefined) {
      this.#abortReason = reason
      this.#abortCause = cause
      this.#fiber?.unsafeInterruptAsFork(FiberId.none)
    }
    return this.done.then(() => undefined)
  }

  /** Attaches the iterator that reads events; there can be one. */
  attachSink(): EventSink {
    if (this.#sink !== undefined) throw new TypeError("A TamboStream's events can be iterated only once")
    const queue = Runtime.runSync(this.runtime)(Queue.bounded<Item>(EVENT_BUFFER_SIZE))
    const sink: EventSink = { queue, closed: false }
    this.#sink = sink
    if (this.outcome !== undefined) Runtime.runSync(this.runtime)(Queue.offer(queue, END))
    return sink
  }

  /** Resolves at the next change of `latest` or of `outcome`. */
  changed(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve))
  }

  #wake() {
    if (this.#waiters.length === 0) return
    const waiters = this.#waiters
    this.#waiters = []
    for (const wake of waiters) wake()
  }

  #onChunk(chunk: Chunk.Chunk<Tambo.RunEvent>): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (Chunk.isEmpty(chunk)) return Effect.void
      const last = Chunk.unsafeLast(chunk)
      if (this.threadId === undefined && !isLocalThreadId(last.threadId)) {
        this.threadId = last.threadId
        this.#resolveThreadId({ ok: true, threadId: last.threadId })
      }
      this.latest = last.snapshot
      this.hooks.onEvents?.(chunk)
      this.#wake()
      const sink = this.#sink
      return sink === undefined || sink.closed ? Effect.void : Queue.offerAll(sink.queue, chunk)
    })
  }

  #finish(exit: Exit.Exit<void, CoreError>) {
    if (Exit.isSuccess(exit)) {
      const threadId = this.threadId
      const thread = threadId === undefined ? undefined : this.hooks.currentThread(threadId) ?? this.latest
      this.#settle(
        thread === undefined || threadId === undefined
          ? { ok: false, error: new UnknownError("The run ended without naming its thread", {}) }
          : { ok: true, thread, threadId }
      )
      return
    }
    const error = fromCause(exit.cause, this.#abortReason ?? "Aborted")
    this.#settle({
      ok: false,
      error: error._tag === "AbortError" && this.#abortReason !== undefined
        ? abortError(this.#abortReason, {
          cause: this.#abortCause ?? error.cause,
          threadId: this.threadId
        })
        : error
    })
  }

  #settle(outcome: Outcome) {
    if (this.outcome !== undefined) return
    // Views see the thread as the run left it: final, errored or cancelled.
    const final = outcome.ok
      ? outcome.thread
      : this.threadId === undefined
      ? undefined
      : this.hooks.currentThread(this.threadId)
    if (final !== undefined) this.latest = final
    this.outcome = outcome
    this.#resolveThreadId(outcome.ok || this.threadId === undefined ? outcome : { ok: true, threadId: this.threadId })
    this.#resolveDone(outcome)
    const sink = this.#sink
    // The iterator drains what is queued, then meets the end. Its queue has
    // room unless it is behind; then this offer waits for it.
    if (sink !== undefined && !sink.closed) Runtime.runFork(this.runtime)(Queue.offer(sink.queue, END))
    this.#wake()
    this.hooks.onFinish(outcome)
  }
}
