/**
 * A run in progress, returned by `client.run(...)`: iterate it, or await
 * one of its promises.
 *
 * @since 0.1.0
 */
import type * as SnapshotStrategy from "@tambo-effect/core/SnapshotStrategy"
import type * as Tambo from "@tambo-effect/core/Tambo"
import type { RunStreamEvent } from "@tambo-effect/core/TamboTransport"
import type { TamboThread, TamboThreadMessage } from "@tambo-effect/core/Types"
import * as Chunk from "effect/Chunk"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import { END, EVENT_BUFFER_SIZE, type Item, type RunController } from "./internal/runController.js"

/**
 * One element of a run: an event, and the thread after the batch of events
 * it arrived in (so the snapshot always includes the event).
 *
 * @since 0.1.0
 * @category Models
 */
export interface StreamEvent {
  /** An event of the server's stream, or one the client adds (`CLIENT_*`). */
  readonly event: RunStreamEvent | Tambo.ClientEvent
  readonly snapshot: TamboThread
  /** The thread the event belongs to (a local id until the server named a new thread). */
  readonly threadId: string
}

/**
 * How many events wait for a slow iterator before the run pauses. The
 * iterator takes them in batches of up to as many; what one read of the
 * network brought goes in whole, so the buffer can pass this by that much.
 *
 * @since 0.1.0
 * @category Constants
 */
export const EVENT_BUFFER: number = EVENT_BUFFER_SIZE

/**
 * Options of {@link TamboStream.snapshots}.
 *
 * @since 0.1.0
 * @category Models
 */
export interface SnapshotsOptions {
  /**
   * Which snapshots are published, and when: a core `SnapshotStrategy`
   * (re-exported as `SnapshotStrategy` by this package), e.g.
   * `SnapshotStrategy.throttle("100 millis")` or `SnapshotStrategy.wordBoundary`.
   * Default: every change, conflated.
   */
  readonly strategy?: SnapshotStrategy.Strategy | undefined
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined }

/**
 * A run in progress.
 *
 * **When it runs.** The run starts when `client.run(...)` is called, as with
 * `@tambo-ai/client`, so `client.run("hi")` alone sends the message and
 * keeps the client's state (`getState` / `subscribe`) up to date. Nothing is
 * retained meanwhile: an event that nobody is iterating is dropped, and only
 * the latest snapshot is kept.
 *
 * **Iterating.** `for await (const { event, snapshot } of stream)`,
 * `stream.events()` and `stream.snapshots()`. An iterator sees the events
 * from the moment it is created: create it in the same tick as `run()` (as
 * `for await (... of client.run(...))` does) to see them all. Events wait in
 * a bounded buffer of {@link EVENT_BUFFER} for a slow iterator; when it is
 * full the run pauses until the iterator catches up (unless a run of its
 * thread with `onBusy: "interrupt"` or `"queue"` waits for it to end).
 * `snapshots()` is
 * conflated: a slow reader gets the latest thread, never a backlog. Leaving
 * a loop early (`break`, `return`, a `throw` in its body) cancels the run on
 * the server. Events can be iterated once (`for await` or `events()`);
 * `snapshots()` any number of times.
 *
 * **Promises.** `thread`, `messages` and `threadId` are created when first
 * read, never reject unless read (no unhandled rejections), and can be read
 * before, during or after iterating. `threadId` resolves as soon as the
 * server named the thread.
 *
 * **Failures.** Promises reject, and iterators throw, with the facade's
 * errors (`_tag` as in core: `ApiError`, `RunConflictError`, ...); any
 * cancellation (`abort()`, the run's `signal`, `client.cancelRun`, leaving a
 * loop, `client.destroy()`) with an `AbortError`.
 *
 * @since 0.1.0
 * @category Models
 */
export class TamboStream implements AsyncIterable<StreamEvent> {
  readonly #run: RunController
  #thread: Promise<TamboThread> | undefined
  #messages: Promise<Array<TamboThreadMessage>> | undefined
  #threadId: Promise<string> | undefined

  /**
   * Streams are made by `client.run(...)`.
   *
   * @internal
   */
  constructor(run: RunController) {
    this.#run = run
  }

  /**
   * The thread once the run ended (tool rounds included).
   *
   * @since 0.1.0
   */
  get thread(): Promise<TamboThread> {
    return (this.#thread ??= this.#run.done.then((outcome) => {
      if (!outcome.ok) throw outcome.error
      return outcome.thread
    }))
  }

  /**
   * The thread's messages once the run ended.
   *
   * @since 0.1.0
   */
  get messages(): Promise<Array<TamboThreadMessage>> {
    return (this.#messages ??= this.#run.done.then((outcome) => {
      if (!outcome.ok) throw outcome.error
      return outcome.thread.messages
    }))
  }

  /**
   * The run's thread id, as soon as it is known (a new thread is named by
   * the server when the run starts).
   *
   * @since 0.1.0
   */
  get threadId(): Promise<string> {
    return (this.#threadId ??= this.#run.threadIdKnown.then((known) => {
      if (!known.ok) throw known.error
      return known.threadId
    }))
  }

  /**
   * Cancels the run: aborts the request and cancels the run on the server.
   * The promises reject with an `AbortError`, an iterator throws it, and the
   * thread is marked cancelled. Does nothing once the run ended, nor once its
   * last event came (its final `RUN_FINISHED`, or the tool calls a manual run
   * leaves to the caller): such a run completed, and its promises resolve.
   * That holds also while an iterator that stopped reading holds the run's
   * last events: the run no longer waits for it, and the iterator still
   * yields what it holds, then ends. So does a run the server ended while
   * the abort was on its way (its cancellation answers 404 and the run's
   * last event comes within 3 s), also while an iterator that stopped
   * reading holds events back: once the server answered so, the run waits
   * for its iterator no more. While the server is told, a run it still runs
   * keeps waiting for an iterator that stopped reading, which holds no more
   * than its bound. A run the server has not answered yet
   * is cancelled on the server once the answer names it (within 3 s; else
   * its request is aborted, and the server cancels the run as the
   * connection closes), also beside other runs of the client on its thread
   * (a run interrupting it, runs queued behind it), which go on: the server
   * lets go of the thread for them at once, rather than once it notices the
   * closed connection. A run still waiting behind another for its thread,
   * or for its credentials or its thread's first read, sends nothing: its
   * wait ends at once, also beside other runs of the client on its thread.
   *
   * @since 0.1.0
   */
  abort(): void {
    void this.#run.abort("Aborted")
  }

  /**
   * Each event with the thread snapshot after it.
   *
   * @since 0.1.0
   */
  [Symbol.asyncIterator](): AsyncIterableIterator<StreamEvent> {
    return eventIterator(this.#run, (element) => element)
  }

  /**
   * The events alone.
   *
   * @since 0.1.0
   */
  events(): AsyncIterableIterator<StreamEvent["event"]> {
    return eventIterator(this.#run, (element) => element.event)
  }

  /**
   * The thread each time it changed, conflated: a slow reader gets the
   * latest one. The last is the thread as the run left it (then the
   * iterator ends, or throws the run's error).
   *
   * With a `strategy`, only the snapshots it publishes are yielded (core's
   * `SnapshotStrategy.snapshots`, applied to the run's events from the
   * moment the iterator is created): e.g. at most one per 100 ms, or only at
   * word boundaries. The final thread is always yielded last, also after a
   * strategy that throws (a `custom` predicate), which is logged as a warning
   * and yields nothing more until then.
   *
   * Leaving a loop over it early cancels the run, as with the events.
   *
   * @example
   * ```ts
   * import { SnapshotStrategy } from "@tambo-effect/client"
   *
   * for await (const thread of client.run("Hi").snapshots({ strategy: SnapshotStrategy.throttle("100 millis") })) {
   *   render(thread.messages)
   * }
   * ```
   *
   * @since 0.1.0
   */
  snapshots(options: SnapshotsOptions = {}): AsyncIterableIterator<TamboThread> {
    return options.strategy === undefined
      ? latestIterator(this.#run)
      : strategyIterator(this.#run, options.strategy)
  }
}

/** `next` of an iterator: a call made before the last one resolved waits for it, so each takes the next element. */
const oneAtATime = <A>(step: () => Promise<IteratorResult<A>>): () => Promise<IteratorResult<A>> => {
  let last: Promise<unknown> = Promise.resolve()
  return () => {
    const result = last.then(step)
    last = result.catch(() => undefined)
    return result
  }
}

/** Every change, conflated: reads the run's latest snapshot. */
const latestIterator = (run: RunController): AsyncIterableIterator<TamboThread> => {
  let seen: TamboThread | undefined
  let closed = false
  const iterator: AsyncIterableIterator<TamboThread> = {
    async next() {
      while (!closed) {
        const latest = run.latest
        if (latest !== undefined && latest !== seen) {
          seen = latest
          return { done: false, value: latest }
        }
        const outcome = run.outcome
        if (outcome !== undefined) {
          closed = true
          if (!outcome.ok) throw outcome.error
          return DONE
        }
        await run.changed()
      }
      return DONE
    },
    async return() {
      if (!closed) {
        closed = true
        await run.abort("IteratorClosed")
      }
      return DONE
    },
    [Symbol.asyncIterator]() {
      return iterator
    }
  }
  return iterator
}

/** The snapshots a strategy publishes, conflated, then the final thread. */
const strategyIterator = (run: RunController, strategy: SnapshotStrategy.Strategy): AsyncIterableIterator<TamboThread> => {
  let seen: TamboThread | undefined
  let next: TamboThread | undefined
  let ended = false
  let closed = false
  let wake: (() => void) | undefined
  const notify = () => {
    const resolve = wake
    wake = undefined
    resolve?.()
  }
  const offer = (thread: TamboThread | undefined) => {
    // Never the same thread twice in a row.
    if (thread !== undefined && thread !== seen) next = thread
  }
  const stop = run.observe(strategy, {
    onSnapshot: (thread) => {
      offer(thread)
      notify()
    },
    onEnd: (final) => {
      offer(final)
      ended = true
      notify()
    }
  })
  const iterator: AsyncIterableIterator<TamboThread> = {
    // One at a time: a second call waiting too would take the first one's wake-up.
    next: oneAtATime(async () => {
      while (!closed) {
        if (next !== undefined) {
          seen = next
          next = undefined
          return { done: false, value: seen }
        }
        if (ended) {
          closed = true
          const outcome = run.outcome
          if (outcome !== undefined && !outcome.ok) throw outcome.error
          return DONE
        }
        await new Promise<void>((resolve) => {
          wake = resolve
        })
      }
      return DONE
    }),
    async return() {
      if (!closed) {
        closed = true
        stop()
        // A next() waiting for a snapshot ends too: none will come.
        notify()
        await run.abort("IteratorClosed")
      }
      return DONE
    },
    [Symbol.asyncIterator]() {
      return iterator
    }
  }
  return iterator
}

const eventIterator = <A>(
  run: RunController,
  project: (element: StreamEvent) => A
): AsyncIterableIterator<A> => {
  const sink = run.attachSink()
  const runPromise = Runtime.runPromise(run.runtime)
  let batch: ReadonlyArray<Item> = []
  let index = 0
  let closed = false
  const close = () => {
    closed = true
    sink.closed = true
    batch = []
  }
  const step = async (): Promise<IteratorResult<A>> => {
    while (!closed) {
      if (index < batch.length) {
        const item = batch[index++]!
        if (item !== END) return { done: false, value: project(item) }
        close()
        const outcome = run.outcome!
        if (!outcome.ok) throw outcome.error
        return DONE
      }
      try {
        batch = Chunk.toReadonlyArray(
          await runPromise(Queue.takeBetween(sink.queue, 1, EVENT_BUFFER_SIZE))
        )
        index = 0
        sink.took()
      } catch (error) {
        // The queue was shut down by `return()` while this call waited.
        if (closed) return DONE
        throw error
      }
    }
    return DONE
  }
  const iterator: AsyncIterableIterator<A> = {
    next: oneAtATime(step),
    async return() {
      if (!closed) {
        close()
        // First: a run waiting for room in the queue goes on (it may have completed, and the
        // abort then leaves it to end as such).
        sink.release()
        Runtime.runSync(run.runtime)(Queue.shutdown(sink.queue))
        await run.abort("IteratorClosed")
      }
      return DONE
    },
    [Symbol.asyncIterator]() {
      return iterator
    }
  }
  return iterator
}
