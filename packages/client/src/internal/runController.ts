/**
 * One run of the facade: a fiber that consumes core's run stream, and what
 * the `TamboStream` views read from it.
 *
 * Memory: the fiber keeps only the latest snapshot. Events go to an
 * iterator's queue when one is attached (the fiber waits while it holds more
 * than `EVENT_BUFFER_SIZE`), to the strategy pipelines observing the run through a bounded
 * `PubSub` when there are any, and nowhere otherwise.
 */
import { isLocalThreadId } from "@tambo-effect/core/ClientState"
import * as SnapshotStrategy from "@tambo-effect/core/SnapshotStrategy"
import type * as Tambo from "@tambo-effect/core/Tambo"
import type { TamboError } from "@tambo-effect/core/TamboError"
import type { TamboThread } from "@tambo-effect/core/Types"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type AbortReason, type TamboClientError, UnknownError } from "../errors.js"
import * as CallSite from "./callSite.js"
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

/** How long an abort waits for the server's answer to name the run (core's bound on a cancellation's wait alike). */
const NAMED_WITHIN = Duration.seconds(3)

const END: unique symbol = Symbol("end")
export type Item = Tambo.RunEvent | typeof END
export { END }

const isRunEvent = (item: Item): item is Tambo.RunEvent => item !== END

/**
 * The queue of the one iterator that reads events, and the run's wait for room in it.
 *
 * The queue itself is unbounded: the run hands each chunk over whole and then waits while the
 * iterator holds more than `EVENT_BUFFER_SIZE`. So a run that stops waiting (`release`) takes
 * nothing back: the iterator still reads every event it was handed, in order.
 */
export class EventSink {
  readonly queue: Queue.Queue<Item>
  /** The iterator closed (`return()`): the run hands it nothing more. */
  closed = false
  /** The run waits for room no more (see `release`). */
  #released = false
  #resume: (() => void) | undefined

  constructor(runtime: Runtime.Runtime<never>) {
    this.queue = Runtime.runSync(runtime)(Queue.unbounded<Item>())
  }

  /**
   * Hands a chunk to the iterator, then waits while it holds more than its buffer. An iterator
   * that closes shuts its queue down: the chunk is dropped and the run goes on (it may have
   * completed, and then ends as such), rather than waiting for room nobody makes.
   */
  offer(chunk: Chunk.Chunk<Item>): Effect.Effect<void> {
    return Effect.catchAllCause(
      Effect.zipRight(Queue.offerAll(this.queue, chunk), this.#room),
      (cause) => Cause.isInterruptedOnly(cause) ? Effect.void : Effect.failCause(cause)
    )
  }

  /** The iterator took events: a run waiting for room goes on if there is some now. */
  took() {
    if (this.#resume !== undefined && this.#hasRoom()) this.#resume()
  }

  /**
   * The run no longer waits for this iterator: it closed, or the run, already completed, was
   * aborted (its end is then recorded without waiting for an iterator left behind).
   */
  release() {
    this.#released = true
    this.#resume?.()
  }

  #hasRoom(): boolean {
    return this.#released || Option.getOrElse(this.queue.unsafeSize(), () => 0) <= EVENT_BUFFER_SIZE
  }

  readonly #room: Effect.Effect<void> = Effect.suspend(() =>
    this.#hasRoom() ? Effect.void : Effect.async<void>((resume) => {
      this.#resume = () => {
        this.#resume = undefined
        resume(Effect.void)
      }
      return Effect.sync(() => {
        this.#resume = undefined
      })
    })
  )
}

export interface RunHooks {
  /** Where the run was started: its error shows the caller's frames. */
  readonly callSite?: CallSite.CallSite | undefined
  /** The thread as the store has it now (the final snapshot of a run). */
  readonly currentThread: (threadId: string) => TamboThread | undefined
  readonly onEvents?: ((events: Chunk.Chunk<Tambo.RunEvent>) => void) | undefined
  /** The run's thread got its server id. */
  readonly onThreadId?: ((threadId: string) => void) | undefined
  readonly onFinish: (outcome: Outcome) => void
  /** The run is being aborted (however: `abort()`, a loop left, a signal, `cancelRun`, `destroy()`): it takes no decision from now on. */
  readonly onAbort?: (() => void) | undefined
  /**
   * Tells the server the run is cancelled, then closes its stream (core's
   * `cancelRun` of the thread, for this run only: another run may have taken
   * the thread once this one let go of it); resolves once done, never rejects.
   */
  readonly cancelOnServer?: ((threadId: string, runId: string) => Promise<void>) | undefined
  /**
   * Cancels the run before the server named it, as core's `cancelRun` of its thread does: it
   * waits (bounded) for the server's answer to name the run, so the server is told rather than
   * left a closed connection, which it notices only when it next writes. Resolves once done, never
   * rejects; `undefined` when the run has no thread yet, or, beside other runs of the client on
   * its thread, is still starting or waits behind another for it (interrupted, it sends nothing).
   */
  readonly cancelBeforeNamed?: (() => Promise<void> | undefined) | undefined
}

/**
 * Tells an observer something: a throw (the app's listener) is logged as a
 * warning, and the observer is still told what comes next.
 */
const told = (tell: () => void): Effect.Effect<void> =>
  Effect.catchAll(
    Effect.try(tell),
    ({ error }) => Effect.logWarning(`A listener of subscribeToSnapshots threw: ${String(error)}`)
  )

/** What an observer of the run's snapshots is told (see `RunController.observe`). */
export interface SnapshotObserver {
  /** A snapshot the strategy published. */
  readonly onSnapshot: (thread: TamboThread) => void
  /**
   * The run ended: `final` is the thread as it left it (`undefined` if it
   * never had one). Called once, after every `onSnapshot`.
   */
  readonly onEnd: (final: TamboThread | undefined) => void
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
  /** The run id the run's first RUN_STARTED named: core finds the run by any of its steps' ids. */
  #runId: string | undefined
  /** Completed with `#runId` once it came, or with none once the run ended without one. */
  readonly #runIdKnown = Deferred.unsafeMake<string | undefined>(FiberId.none)
  /** The current step paused for tools (`tambo.run.awaiting_input`): its RUN_FINISHED is not the run's end. */
  #paused = false
  /** A chunk of the run's events on its named thread came: `threadIdKnown` resolved with it. */
  #threadIdShown = false
  /** The run's last event came: what is left is core recording its end (the end-of-run read). */
  #ended = false
  #abortReason: AbortReason | undefined
  #abortCause: unknown
  #sink: EventSink | undefined
  /** See `releaseIterator`. */
  #iteratorReleased = false
  #waiters: Array<() => void> = []
  /** Feeds the observers' strategy pipelines; published to only while there are some. */
  readonly #pubsub: PubSub.PubSub<Item>
  #observers = 0

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
    this.#pubsub = Runtime.runSync(runtime)(PubSub.bounded<Item>(EVENT_BUFFER_SIZE))
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

  /**
   * The run's thread on the server: core tells it (`onThreadId`) just before the store shows a new
   * conversation's thread, or as a run that did not complete ends there, and the run's events say
   * it again. `threadIdKnown` waits for the events (by then the store shows it) or the run's end.
   */
  named(threadId: string) {
    if (this.threadId !== undefined || this.outcome !== undefined) return
    this.threadId = threadId
    this.hooks.onThreadId?.(threadId)
  }

  /**
   * The run id the server's answer names (its first RUN_STARTED), once it came; undefined if the
   * run ended first, or after `NAMED_WITHIN` (a server that does not answer). Never rejects.
   */
  runIdOnceNamed(): Promise<string | undefined> {
    return Runtime.runPromise(this.runtime)(
      Deferred.await(this.#runIdKnown).pipe(Effect.timeout(NAMED_WITHIN), Effect.orElseSucceed(() => undefined))
    ).catch(() => undefined)
  }

  /** Ends the run before it started. */
  fail(error: TamboClientError) {
    this.#settle({ ok: false, error })
  }

  /**
   * Interrupts the run: core aborts the request, cancels the run on the
   * server and marks the thread cancelled. Resolves once all that is done.
   *
   * Once the server named the run's thread and run, the server is told first and
   * the connection closed after: a connection closed first makes the
   * server cancel the run itself, and the cancel request that follows
   * finds no run (a 404 in the browser's console).
   *
   * The run keeps waiting for an iterator that stopped reading while the server is told: a run
   * the server still runs goes on sending meanwhile, and would fill the iterator's queue past its
   * bound. Once core finds the server ended the run first (the `DELETE` answered 404: see
   * `releaseIterator`), or the run's last event came, it waits for the iterator no more: that
   * event comes only while the run reads on, and an iterator that stopped reading (also one whose
   * loop awaits this abort) would hold it back until core gives up waiting for it, and the
   * completed run would end cancelled.
   */
  abort(reason: AbortReason, cause?: unknown, cancelled?: Promise<void>): Promise<void> {
    // A run whose last event came has completed on the server: it is let finish recording its end,
    // as it would be if the abort had come a moment later. Not when the client is destroyed.
    const completed = this.#ended && reason !== "ClientDestroyed"
    // Nor does it wait for an iterator left behind (its events stay the iterator's to read).
    if (completed) this.releaseIterator()
    if (this.outcome === undefined && this.#abortReason === undefined && !completed) {
      this.#abortReason = reason
      this.#abortCause = cause
      const told = reason === "ClientDestroyed"
        ? undefined
        : cancelled ?? (this.threadId === undefined || this.#runId === undefined
          ? this.hooks.cancelBeforeNamed?.()
          : this.hooks.cancelOnServer?.(this.threadId, this.#runId))
      // The interruption after the server was told only settles what is left (a run ended meanwhile).
      if (told === undefined) this.#fiber?.unsafeInterruptAsFork(FiberId.none)
      else void told.then(() => this.#afterTold())
      this.hooks.onAbort?.()
    }
    return this.done.then(() => undefined)
  }

  /**
   * The server was told of the abort. A run whose last event came meanwhile had ended there (the
   * `DELETE` found no run): core lets it end as the server ended it, and so does this, rather
   * than interrupt it as it records its end. Any other run is interrupted: core cancelled it,
   * and what is left of it ends now.
   */
  #afterTold() {
    if (this.#ended) this.releaseIterator()
    else this.#fiber?.unsafeInterruptAsFork(FiberId.none)
  }

  /**
   * The run waits no more for its iterator to make room: it is ending (it completed and is
   * aborted, a Stop found the server ended it and waits for its last event, core cancels it
   * for a run that interrupts it, which takes effect only where the run is read, or a run queued
   * behind it waits for its end, maybe inside the loop over its iterator). Its iterator still
   * yields every event, then the run's ending.
   */
  releaseIterator() {
    this.#iteratorReleased = true
    this.#sink?.release()
  }

  /** Attaches the iterator that reads events; there can be one. */
  attachSink(): EventSink {
    if (this.#sink !== undefined) throw new TypeError("A TamboStream's events can be iterated only once")
    const sink = new EventSink(this.runtime)
    this.#sink = sink
    if (this.#iteratorReleased) sink.release()
    if (this.outcome !== undefined) Runtime.runSync(this.runtime)(Queue.offer(sink.queue, END))
    return sink
  }

  /**
   * Runs the events of the run from now on through core's
   * `SnapshotStrategy.snapshots(strategy)`, in a fiber of its own, and tells
   * `observer` what it publishes, then the final thread once the run ended.
   * A run already over is told its final thread at once. Returns what stops
   * the observation (it does not cancel the run).
   */
  observe(strategy: SnapshotStrategy.Strategy, observer: SnapshotObserver): () => void {
    if (this.outcome !== undefined) {
      observer.onEnd(this.latest)
      return () => undefined
    }
    const runSync = Runtime.runSync(this.runtime)
    // Subscribed now, so the pipeline sees every event from this moment on.
    const scope = runSync(Scope.make())
    const dequeue = runSync(Scope.extend(PubSub.subscribe(this.#pubsub), scope))
    this.#observers++
    let subscribed = true
    // Once, from whichever comes first: the pipeline's end or `stop` (which may
    // come before the fiber ever ran, and so before any finalizer of its own).
    const unsubscribe = Effect.suspend(() => {
      if (!subscribed) return Effect.void
      subscribed = false
      this.#observers--
      return Scope.close(scope, Exit.void)
    })
    let stopped = false
    const events = Stream.takeWhile(Stream.fromQueue(dequeue), isRunEvent)
    const fiber = Runtime.runFork(this.runtime)(
      events.pipe(
        SnapshotStrategy.snapshots(strategy),
        Stream.runForEach((thread) => stopped ? Effect.void : told(() => observer.onSnapshot(thread))),
        // A strategy that throws (a custom predicate) publishes nothing more; the observer is
        // still told the final thread, once the run ended.
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.zipRight(
            Effect.logWarning(`A snapshot strategy threw: ${String(Cause.squash(cause))}`),
            Stream.runDrain(events)
          )
        ),
        // The queue ends with END, published once the outcome is known: `latest` is final.
        Effect.zipRight(Effect.suspend(() => {
          if (stopped) return Effect.void
          stopped = true
          return told(() => observer.onEnd(this.latest))
        })),
        Effect.ensuring(unsubscribe)
      )
    )
    return () => {
      if (stopped && !subscribed) return
      stopped = true
      Runtime.runFork(this.runtime)(unsubscribe)
      fiber.unsafeInterruptAsFork(FiberId.none)
    }
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

  /**
   * A chunk's bookkeeping, done as the chunk arrives; the effect returned only
   * hands the chunk on, and is the shared `Effect.void` when nobody reads the
   * events. A fresh effect per chunk that holds the chunk (an `Effect.suspend`
   * around all this) made every chunk's events outlive the young generation
   * even when nothing read them (scratchpad/bench/NOTES.md).
   */
  #onChunk(chunk: Chunk.Chunk<Tambo.RunEvent>): Effect.Effect<void> {
    if (Chunk.isEmpty(chunk)) return Effect.void
    try {
      const last = Chunk.unsafeLast(chunk)
      if (!this.#threadIdShown && !isLocalThreadId(last.threadId)) {
        this.#threadIdShown = true
        this.named(last.threadId)
        this.#resolveThreadId({ ok: true, threadId: last.threadId })
      }
      for (const { event } of chunk) {
        switch (event.type) {
          case "RUN_STARTED":
            this.#runId ??= event.runId
            Deferred.unsafeDone(this.#runIdKnown, Exit.succeed(this.#runId))
            this.#paused = false
            this.#ended = false
            break
          case "CUSTOM":
            if (event.name === "tambo.run.awaiting_input") this.#paused = true
            break
          case "RUN_FINISHED":
            this.#ended = !this.#paused
            break
          case "CLIENT_AWAITING_TOOL_RESULTS":
            this.#ended = true
        }
      }
      this.latest = last.snapshot
      this.hooks.onEvents?.(chunk)
      this.#wake()
    } catch (error) {
      return Effect.die(error)
    }
    const sink = this.#sink
    const toSink = sink === undefined || sink.closed ? Effect.void : sink.offer(chunk)
    return this.#observers === 0 ? toSink : Effect.zipRight(PubSub.publishAll(this.#pubsub, chunk), toSink)
  }

  #finish(exit: Exit.Exit<void, CoreError>) {
    Deferred.unsafeDone(this.#runIdKnown, Exit.succeed(undefined))
    if (Exit.isSuccess(exit)) {
      const threadId = this.threadId
      const thread = threadId === undefined ? undefined : this.hooks.currentThread(threadId) ?? this.latest
      this.#settle(
        thread === undefined || threadId === undefined
          ? { ok: false, error: new UnknownError({ reason: "Defect", message: "The run ended without naming its thread" }) }
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
    if (!outcome.ok && this.hooks.callSite !== undefined) CallSite.attach(outcome.error, this.hooks.callSite)
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
    // The iterator drains what is queued, then meets the end.
    if (sink !== undefined && !sink.closed) Runtime.runSync(this.runtime)(Queue.offer(sink.queue, END))
    // The observers' pipelines drain what they were sent, then end with the final thread.
    if (this.#observers > 0) Runtime.runFork(this.runtime)(PubSub.publish(this.#pubsub, END))
    this.#wake()
    this.hooks.onFinish(outcome)
  }
}
