/**
 * The runs this client started and that are in flight: how a run (or a
 * continuation) is started on core's `Tambo` service and handed out as a
 * `TamboStream`, what it tells the client as it goes (its thread id, the
 * approvals it announces, its end), and how runs are found by thread,
 * cancelled and aborted. Also the initial messages each thread this client
 * created was opened with.
 *
 * @internal
 */
import { isLocalThreadId, LOCAL_THREAD_PREFIX, PLACEHOLDER_THREAD_ID } from "@tambo-effect/core/ClientState"
import type * as Tambo from "@tambo-effect/core/Tambo"
import { ConfigError, type TamboError } from "@tambo-effect/core/TamboError"
import type { InitialInputMessage } from "@tambo-effect/core/Types"
import type * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type { AbortReason } from "../errors.js"
import type { InputMessage, RunOptions, ToolCallResult } from "../TamboClient.js"
import { TamboStream } from "../TamboStream.js"
import type { Approvals } from "./approvals.js"
import * as CallSite from "./callSite.js"
import { messageToCore } from "./convert.js"
import * as HelperRun from "./helperRun.js"
import type { Notifier } from "./notifier.js"
import { RunController } from "./runController.js"
import type { ClientRuntime } from "./runtime.js"
import type { SnapshotSubscriptions } from "./snapshots.js"
import { abortError } from "./toClientError.js"

/** A run in flight, and what cancelRun and approvals need to find it. @internal */
export interface RunEntry {
  readonly run: RunController
  readonly requestedThreadId: string
  readonly stream: TamboStream
  /** Started on the placeholder, which became a new conversation before the server named its thread. */
  leftPlaceholder: boolean
  /**
   * The local thread core told the run it records in (`onLocalThreadId`), as `startNewThread`
   * moved it off the placeholder, also before it started (a run following another is on that
   * one's thread): the id the state shows the run on until the server names the thread.
   */
  movedTo: string | undefined
  /**
   * The run creating the thread of the new conversation this run was asked for on (as core's run
   * follows it): this run is on the thread that run is on.
   */
  readonly follows: RunEntry | undefined
  /**
   * The run may have sent its request: core asked its `beforeRun`, which comes just before the
   * request is made (a continuation, which core asks none, counts from the start). Until then the
   * run is still starting (it waits for its credentials, its thread's first read, its turn): an
   * interruption ends it having sent nothing.
   */
  mayHaveSent: boolean
}

/** @internal */
export class Runs {
  /** The runs in flight. */
  readonly entries = new Set<RunEntry>()
  /** The initial messages each thread this client created was opened with. */
  readonly #seeded = new Map<string, ReadonlyArray<InitialInputMessage>>()

  constructor(
    private readonly runtime: ClientRuntime,
    private readonly notifier: Notifier,
    private readonly approvals: Approvals,
    private readonly snapshots: SnapshotSubscriptions,
    /** The client's `initialMessages`. */
    private readonly initialMessages: ReadonlyArray<InitialInputMessage> | undefined
  ) {}

  /** `client.run`: a run on the thread named, or current now. */
  run(message: string | InputMessage, options: RunOptions): TamboStream {
    const threadId = options.threadId ?? this.runtime.store.getState().currentThreadId
    const stream = this.#start(
      threadId,
      options,
      CallSite.capture(this.run),
      false,
      (runOptions) => this.runtime.tambo.run(typeof message === "string" ? message : messageToCore(message), runOptions)
    )
    const seeds = options.initialMessages ?? this.initialMessages
    if (seeds !== undefined && seeds.length > 0 && isLocalThreadId(threadId)) {
      stream.threadId.then((created) => {
        this.#seeded.set(created, seeds)
        this.notifier.changed()
      }, () => undefined)
    }
    return stream
  }

  /** `client.continueRun`: the rest of a run, given the results of the calls it waits on. */
  continueRun(threadId: string, results: ReadonlyArray<ToolCallResult>, options: RunOptions): TamboStream {
    return this.#start(
      threadId,
      options,
      CallSite.capture(this.continueRun),
      true,
      (runOptions) => this.runtime.tambo.continueRun(threadId, results, runOptions)
    )
  }

  /** The initial messages a thread opens with, as far as this client knows, also by a local id its thread had. */
  initialMessagesOf(threadId: string): ReadonlyArray<InitialInputMessage> | undefined {
    const id = this.runtime.threadIdOf(threadId)
    return this.#seeded.get(id) ?? (isLocalThreadId(id) ? this.initialMessages : undefined)
  }

  /** The runs in flight on a thread (default: the current one), also by a local id its thread had. */
  onThread(threadId: string | undefined): Array<RunEntry> {
    const id = this.#threadIdOf(threadId)
    return [...this.entries].filter((entry) => this.#threadOf(entry) === id)
  }

  /** The thread `threadId` names (default: the current one), as the store holds it. */
  #threadIdOf(threadId: string | undefined): string {
    return threadId === undefined ? this.runtime.store.getState().currentThreadId : this.runtime.threadIdOf(threadId)
  }

  /**
   * The thread a run is on: the one the server named for it; else, for a run that follows another,
   * that run's (unless it ended without one: then this run creates the thread); else the thread
   * asked for, unless that was a new conversation the placeholder has left since: then the local
   * thread the run went on with, if it creates one.
   */
  #threadOf(entry: RunEntry): string | undefined {
    if (entry.run.threadId !== undefined) return entry.run.threadId
    const leader = entry.follows
    if (leader !== undefined && (leader.run.threadId !== undefined || this.entries.has(leader))) return this.#threadOf(leader)
    return entry.leftPlaceholder ? entry.movedTo : entry.requestedThreadId
  }

  /** The run creating the thread of the new conversation on the placeholder, if one is. */
  #creatingPlaceholder(): RunEntry | undefined {
    for (const entry of this.entries) {
      if (
        entry.follows === undefined && entry.requestedThreadId === PLACEHOLDER_THREAD_ID &&
        entry.run.threadId === undefined && !entry.leftPlaceholder
      ) return entry
    }
    return undefined
  }

  /**
   * `client.startNewThread`, whose core call is `startNewThread`: the runs started on the
   * placeholder whose thread the server has not named yet are no longer the new conversation's.
   * Core moved each one creating a thread (also one still waiting to start) to a local thread of
   * its own, and told it which (`movedTo`); the others follow the one they wait for.
   */
  startNewThread(startNewThread: () => string): string {
    const placeholder = startNewThread()
    let left = false
    for (const entry of this.entries) {
      if (entry.requestedThreadId === PLACEHOLDER_THREAD_ID && entry.run.threadId === undefined && !entry.leftPlaceholder) {
        entry.leftPlaceholder = left = true
      }
    }
    if (left) this.notifier.changed()
    return placeholder
  }

  /** `client.cancelRun`: aborts this client's runs on the thread, or cancels the server's run. */
  async cancel(threadId: string | undefined): Promise<void> {
    const id = this.#threadIdOf(threadId)
    const local = this.onThread(id)
    if (local.length > 0) {
      // Core's cancelRun of the thread ends each of them, a run the server has not named yet once
      // its answer names it; the aborts then settle what is left.
      const cancelled = this.#cancelInCore(id)
      await Promise.all(local.map((entry) => entry.run.abort("CancelledByClient", undefined, cancelled)))
      return
    }
    await this.runtime.promise(this.runtime.tambo.cancelRun(id))
  }

  /** Core's `cancelRun` of the thread (only of the run `runId`, with it); never rejects. */
  #cancelInCore(threadId: string, runId?: string): Promise<void> {
    return this.runtime.runtime.runPromise(
      Effect.ignore(this.runtime.tambo.cancelRun(threadId, runId === undefined ? undefined : { runId }))
    ).then(() => undefined, () => undefined)
  }

  /** Aborts every run in flight: the client is destroyed. */
  abortAll(): Promise<unknown> {
    return Promise.all([...this.entries].map(({ run }) => run.abort("ClientDestroyed")))
  }

  /** Aborts a run (its `onAbort` forgets its approvals). */
  #abort(entry: RunEntry, reason: AbortReason, cause?: unknown): Promise<void> {
    return entry.run.abort(reason, cause)
  }

  #start(
    requestedThreadId: string,
    options: RunOptions,
    callSite: CallSite.CallSite,
    continuation: boolean,
    open: (options: Tambo.RunOptions) => Stream.Stream<Tambo.RunEvent, TamboError>
  ): TamboStream {
    const { signal } = options
    const onAbort = () => void this.#abort(entry, "SignalAborted", signal?.reason)
    const run: RunController = new RunController(this.runtime.built, {
      callSite,
      currentThread: (threadId) => this.runtime.store.getState().threadMap[threadId]?.thread,
      onEvents: (events) => {
        if (options.debug === true) logEvents(events)
        this.approvals.record(entry, events)
      },
      onThreadId: () => this.notifier.changed(),
      cancelOnServer: (threadId, runId) => this.#cancelInCore(threadId, runId),
      cancelBeforeNamed: () => {
        const threadId = this.#threadOf(entry)
        if (threadId === undefined) return undefined
        const onThread = this.onThread(threadId)
        if (onThread.length === 1) return this.#cancelInCore(threadId)
        // Runs take the thread in the order they were asked for: one behind another waits for it
        // and, interrupted, sends nothing.
        if (onThread[0] !== entry) return undefined
        // Still starting, it sends nothing once interrupted: nothing to wait for, or to cancel.
        if (!entry.mayHaveSent) return undefined
        // Core's cancelRun of the thread would end the client's other runs there too (one that
        // interrupts this one, runs queued behind it): this one alone, by the id its answer names.
        return run.runIdOnceNamed().then((runId) => runId === undefined ? undefined : this.#cancelInCore(threadId, runId))
      },
      // From now on the run takes no decision (core refuses them), so none of its approvals is listed.
      onAbort: () => this.approvals.forgetRun(entry),
      onFinish: () => {
        signal?.removeEventListener("abort", onAbort)
        if (this.entries.delete(entry)) this.notifier.changed()
        // Approvals its run no longer waits for.
        this.approvals.forgetRun(entry)
      }
    })
    const stream = new TamboStream(run)
    const follows = requestedThreadId === PLACEHOLDER_THREAD_ID ? this.#creatingPlaceholder() : undefined
    const entry: RunEntry = {
      run,
      requestedThreadId,
      stream,
      leftPlaceholder: false,
      movedTo: undefined,
      follows,
      mayHaveSent: continuation
    }
    if (this.runtime.destroying !== undefined) {
      run.fail(abortError("ClientDestroyed"))
    } else if (signal?.aborted === true) {
      run.fail(abortError("SignalAborted", { cause: signal.reason }))
    } else {
      // Core cancels the thread's runs for this one ("interrupt"), or this one waits for them to
      // end ("queue"): a cancellation takes effect where a run is read, and a run queued from
      // inside the loop over one of them would wait on a loop that waits on it. So none of them
      // waits for its iterator any more: their events are finite, and the iterator still yields
      // them all.
      if (options.onBusy === "interrupt" || options.onBusy === "queue") {
        for (const held of this.onThread(requestedThreadId)) held.run.releaseIterator()
      }
      // Made before the run is in flight: arguments it cannot be made of (a message that is
      // not one) fail the run, and leave no run in flight that nothing would ever end.
      let opened: Stream.Stream<Tambo.RunEvent, TamboError>
      try {
        opened = open(this.#coreOptions(entry, options))
      } catch (error) {
        run.fail(
          new ConfigError({
            reason: "InvalidOption",
            message: `The run's arguments are invalid: ${error instanceof Error ? error.message : String(error)}`
          })
        )
        return stream
      }
      this.entries.add(entry)
      this.notifier.changed()
      this.snapshots.runStarted(entry)
      signal?.addEventListener("abort", onAbort, { once: true })
      // The context helpers the run calls are told which run it is.
      const helperRun = { stream, threadId: requestedThreadId }
      run.start((effect) => this.runtime.runtime.runFork(Effect.locally(effect, HelperRun.current, helperRun)), opened)
    }
    return stream
  }

  #coreOptions(entry: RunEntry, options: RunOptions): Tambo.RunOptions {
    return {
      // The thread current when run() was called, not when core reads it as the run starts
      // (before its credentials are there): another run may have made its own new thread current
      // by then. A run that left the placeholder before that read (startNewThread) asks for a new
      // thread of its own instead; one that leaves it later, while it waits for its credentials,
      // core moves to a local thread itself and says which (onLocalThreadId).
      get threadId() {
        return entry.leftPlaceholder ? LEFT_PLACEHOLDER : entry.requestedThreadId
      },
      autoExecuteTools: options.autoExecuteTools,
      maxSteps: options.maxSteps,
      toolChoice: options.toolChoice,
      additionalContext: options.additionalContext,
      toolTimeout: options.toolTimeout,
      onBusy: options.onBusy,
      onApproval: options.onApproval,
      beforeRun: () => {
        entry.mayHaveSent = true
      },
      initialMessages: options.initialMessages ?? this.initialMessages,
      // Known before the store shows the thread: hasActiveRun finds the run there from its first sight.
      onThreadId: (threadId) => entry.run.named(threadId),
      onLocalThreadId: (threadId) => {
        entry.movedTo = threadId
        this.notifier.changed()
      },
      // The server ended the run before a Stop reached it: the run reads on for its last event.
      onStopAwaitsLastEvent: () => entry.run.releaseIterator()
    }
  }
}

/** A new thread that is not the placeholder: core records such a run in a local thread of its own. */
const LEFT_PLACEHOLDER = `${LOCAL_THREAD_PREFIX}left`

const logEvents = (events: Chunk.Chunk<Tambo.RunEvent>) => {
  for (const { event, threadId } of events) {
    console.debug(`[tambo] ${isLocalThreadId(threadId) ? "(new thread)" : threadId} ${event.type}`, event)
  }
}
