/**
 * What every run of one `Tambo` service shares: its services, its options and
 * the client-wide bookkeeping of runs (which thread has one in flight, which
 * run records its new thread in the placeholder). `Tambo.make` builds it once.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import type * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Auth from "../../Auth.js"
import * as ClientState from "../../ClientState.js"
import type * as Mcp from "../../Mcp.js"
import type { ApprovalDecision, ContextHelper, Options, RunOptions } from "../../Tambo.js"
import { ConfigError, type RunCancelledError, type TamboError } from "../../TamboError.js"
import type * as Transport from "../../TamboTransport.js"
import type * as ThreadStore from "../../ThreadStore.js"
import type * as ToolExecutor from "../../ToolExecutor.js"
import type * as ToolRegistry from "../../ToolRegistry.js"
import type { Approvals } from "../approvals.js"
import type { RunWriter } from "../runWriter.js"
import type * as Landed from "./landed.js"
import type { RunState } from "./state.js"

/** The options of `Tambo.make`. @internal */
export type MakeOptions = Pick<
  Options,
  | "beforeRun"
  | "contextHelpers"
  | "autoGenerateThreadName"
  | "autoGenerateNameThreshold"
  | "toolConcurrency"
  | "onApproval"
  | "reconcileAfterRun"
>

/** A run in flight, as other runs and `cancelRun` see it. @internal */
export interface ActiveRun {
  readonly cancel: Effect.Effect<void>
  /** The run had this run id (the server's, or RUN_STARTED's) at one of its steps. */
  readonly ranAs: (runId: string) => boolean
  /** Completes once the run has let go of its thread. */
  readonly done: Effect.Effect<void>
  /** The run ended by asking its caller for its tools' results (`continueRun`), and is finishing. */
  readonly pausedForCaller: () => boolean
  /**
   * The run's lock key: the runs that follow it (asked for on the new conversation it creates the
   * thread of) wait under it, so that a `cancelRun` of its thread, by whatever name, ends them.
   */
  readonly lockKey: () => string
  /**
   * Records the run's end now, as its stream's end would (once, whichever comes first), and lets
   * go of its thread; the stream ends as it is read next. For a run whose consumer cannot read on.
   */
  readonly endUnread: (exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>
}

/** @internal */
export interface Env {
  readonly transport: Transport.TamboTransport.Service
  readonly auth: Auth.Auth.Service
  readonly store: ThreadStore.ThreadStore.Service
  /** Where runs write their threads: a draft per run, published once per turn of the event loop. */
  readonly writer: RunWriter
  readonly registry: ToolRegistry.ToolRegistry.Service
  readonly executor: ToolExecutor.ToolExecutor.Service
  /** Present in `Tambo.layer`: reads the MCP resources a message names before it is sent. */
  readonly mcp: Option.Option<Mcp.Mcp.Service>
  /**
   * Whether a request may be sent again at all (`maxRetries` above 0, as the configuration in the
   * context says; with none, the transport's own policy decides): a run's request whose connection
   * broke is sent once more only then, after a read of the thread showed the server did not take it.
   */
  readonly resends: boolean
  readonly options: MakeOptions
  /** Where background work (naming a thread) runs: it outlives the run that started it. */
  readonly scope: Scope.Scope
  readonly contextHelpers: Map<string, ContextHelper>
  /**
   * Threads with a run in flight in this client, and how to cancel it. Read and written only
   * in synchronous steps, so a plain map is safe: one update is never interleaved with another.
   */
  readonly activeRuns: Map<string, ActiveRun>
  /**
   * Runs not yet on their thread, still waiting for their first credentials (or for the read of a
   * thread the store does not hold, or for the thread's run to end: `onBusy`), by the thread they
   * were asked for: `cancelRun` of that thread ends them with the signal. Each with the number of its
   * run (see `asked`). Read and written only in synchronous steps, as `activeRuns`.
   */
  readonly starting: Map<string, Map<Deferred.Deferred<never, RunCancelledError>, number>>
  /** How many runs were asked for: each run's number, in the order they were. */
  asked: number
  /** Approvals waiting for `approveToolCall` / `denyToolCall`, by tool call id and thread. */
  readonly approvals: Approvals<ApprovalDecision>
  /**
   * Threads of the store this client asked a name for: at most once each while the store holds
   * them (a thread that leaves it, forgotten or deleted, leaves this too), but for a naming that
   * failed.
   */
  readonly named: Set<string>
  /**
   * The epoch of each thread a read is in flight for (`fetchThread`): a number this client never
   * gives twice, new each time a run of this client takes the thread or lets go of it (its end read
   * the thread again), the server takes a change this client made to it (a name, a component's
   * state), or the thread leaves the store (forgotten, deleted, gone from the server). A
   * read that finds another epoch at its answer than when it was sent is older than what the store
   * holds, or than the store's leaving the thread: it is not applied. A thread leaves this with the
   * last of its reads in flight.
   */
  readonly runEpochs: Map<string, number>
  /** The last epoch given (see `runEpochs`). */
  epochs: number
  /**
   * Threads whose last run of this client ended by closing its connection with no `DELETE` the
   * server took (a Stop the server named no run for in time, an interruption before it did, a
   * dropped connection): the server may hold that run's lock until it notices the closed
   * connection (the API notices it when the run next writes). The next run there takes the mark
   * and retries a `409` for a while, as a run that displaced another does (see `Request.first`).
   */
  readonly closedUnnoticed: Set<string>
  /**
   * The read in flight of each thread the store does not hold, that `ensureThread` sent: the others
   * asking for the thread meanwhile wait for it, and so go on in the order they asked. Read and
   * written only in synchronous steps, as `activeRuns`.
   */
  readonly loading: Map<string, Deferred.Deferred<Exit.Exit<ClientState.ThreadState, TamboError>>>
  /** How many reads of each thread are in flight, while any are (see `runEpochs`). */
  readonly reads: Map<string, number>
  /** The number of the last read sent, of any thread: reads are numbered in the order they were sent. */
  readsSent: number
  /**
   * The number of the last read of each thread the store took, while reads of it are in flight: a
   * read sent before it answers with an older copy, and is not applied.
   */
  readonly readTaken: Map<string, number>
  /**
   * The renames of each thread with one in flight: how many were sent, which of them (by that
   * count) the store shows, and how many are still in flight.
   */
  readonly renames: Map<string, { sent: number; shown: number; inFlight: number }>
  /**
   * The namings in flight of each thread (`generateThreadName`, automatic naming), each with the
   * last name a rename sent meanwhile: that rename wins over the generated name.
   */
  readonly naming: Map<string, Set<{ renamed: string | undefined }>>
  /**
   * The thread the server named for each local thread a new conversation's run went on in: an app
   * may still hold the local id it saw (in the store, as a selection), and the calls about a saved
   * thread act on the named one (see `savedThreadId`). A thread that leaves the store takes its
   * local ids with it.
   */
  readonly namedLocals: Map<string, string>
  /**
   * The new conversations (placeholder or local id) whose first message was withdrawn after its
   * request got no answer in time, or was stopped before one, while no thread of the server held
   * it: the request may still reach the server later. The conversation's next run looks for it
   * once more first (see `Landed.findWithdrawn`).
   */
  readonly withdrawnLanded: Map<string, Landed.Sought>
  /**
   * The new conversations a run is looking for a withdrawn message of (see `withdrawnLanded`),
   * each settled with where that run goes once it has its state. The conversation's other runs
   * asked meanwhile wait for it, to go there too (see `WithdrawnSearch`).
   */
  readonly searchingWithdrawn: Map<string, WithdrawnSearch>
  /**
   * The local ids whose named thread left the store (see `namedLocals`): they name no thread any
   * more, and a run asked for there fails rather than start a new conversation the app did not ask
   * for (unlike a local thread whose run ended without a thread, which starts one).
   */
  readonly leftLocals: Set<string>
  /**
   * The run creating each local thread a new conversation's run records in (see `namedLocals`),
   * until it lets go: a run asked for there meanwhile is a second run of the thread it creates.
   * Read and written only in synchronous steps, as `activeRuns`.
   */
  readonly localRuns: Map<string, RunState>
  /** How many `switchThread` calls began: a switch that fails goes back only if it was the last one. */
  switches: number
  /** Numbers local thread ids, lock keys and local message ids. */
  localCounter: number
  /**
   * The run (by lock key) whose new thread is recorded in the placeholder: until the store shows
   * the name the server gave it, or it lets go of its thread, or `startNewThread` makes the
   * placeholder a new conversation again (see lock.ts).
   */
  placeholderOwner: string | undefined
  /**
   * That run itself, for `startNewThread` to move to a thread of its own; only while its lock key
   * is `placeholderOwner`.
   */
  placeholderRun: RunState | undefined
  /**
   * The runs asked for on the placeholder (not following a run creating its thread) that have no
   * state yet: they wait for their credentials or for the thread's lock. `startNewThread` gives
   * each a local thread of its own, where it records once it starts.
   */
  readonly askedOnPlaceholder: Set<PlaceholderAsk>
}

/**
 * A run's search for where its new conversation's withdrawn message landed (see
 * `searchingWithdrawn`). `startNewThread` moves a search of the placeholder's conversation, with
 * the runs waiting for it, to the local thread it gives the searching run: they are that
 * conversation's, not the new one's.
 *
 * @internal
 */
export interface WithdrawnSearch {
  /** The conversation: the searching run's, and where the runs waiting for it wait to start. */
  conversation: string
  /** Settled, once the searching run has its state, with the thread it goes on; none if it ended before. */
  readonly went: Deferred.Deferred<string | undefined>
  /** The searching run, asked for on the placeholder (see `askedOnPlaceholder`). */
  readonly ask: PlaceholderAsk | undefined
  /** The runs waiting for it (their `asked`). */
  readonly waiting: Set<number>
}

/** A run asked for on the placeholder, before it has a state (see `askedOnPlaceholder`). @internal */
export interface PlaceholderAsk {
  readonly asked: number
  readonly options: RunOptions
  /** The local thread `startNewThread` gave it, if it did. */
  local: string | undefined
}

/** @internal */
export const make = (
  services: Omit<
    Env,
    | "activeRuns"
    | "starting"
    | "asked"
    | "named"
    | "closedUnnoticed"
    | "runEpochs"
    | "epochs"
    | "loading"
    | "reads"
    | "readsSent"
    | "readTaken"
    | "renames"
    | "naming"
    | "namedLocals"
    | "withdrawnLanded"
    | "searchingWithdrawn"
    | "leftLocals"
    | "localRuns"
    | "switches"
    | "localCounter"
    | "placeholderOwner"
    | "placeholderRun"
    | "askedOnPlaceholder"
  >
): Env => ({
  ...services,
  activeRuns: new Map(),
  starting: new Map(),
  asked: 0,
  named: new Set(),
  closedUnnoticed: new Set(),
  runEpochs: new Map(),
  epochs: 0,
  loading: new Map(),
  reads: new Map(),
  readsSent: 0,
  readTaken: new Map(),
  renames: new Map(),
  naming: new Map(),
  namedLocals: new Map(),
  withdrawnLanded: new Map(),
  searchingWithdrawn: new Map(),
  leftLocals: new Set(),
  localRuns: new Map(),
  switches: 0,
  localCounter: 0,
  placeholderOwner: undefined,
  placeholderRun: undefined,
  askedOnPlaceholder: new Set()
})

/**
 * A run takes the thread `key`, or lets go of it, the server took a change of it, or the thread
 * leaves the store: the reads of it in flight are older than that (see `runEpochs`).
 *
 * @internal
 */
export const newEpoch = (env: Env, key: string): void => {
  if (env.reads.has(key)) env.runEpochs.set(key, ++env.epochs)
}

/** The epoch of `key`, 0 while it has none (see `runEpochs`). @internal */
export const epochOf = (env: Env, key: string): number => env.runEpochs.get(key) ?? 0

/** A read of `key` is sent; its answer is compared with the epoch it was sent in (see `runEpochs`). @internal */
export const readSent = (env: Env, key: string): number => {
  env.reads.set(key, (env.reads.get(key) ?? 0) + 1)
  return epochOf(env, key)
}

/** A read of `key` answered or failed: the last one in flight takes the thread's epoch with it. @internal */
export const readEnded = (env: Env, key: string): void => {
  const reads = (env.reads.get(key) ?? 1) - 1
  if (reads > 0) return void env.reads.set(key, reads)
  env.reads.delete(key)
  env.runEpochs.delete(key)
  env.readTaken.delete(key)
}

/**
 * The thread `key` left the store (forgotten, deleted, gone from the server): it is named again if
 * it comes back, no read of it in flight brings it back, no run there waits for a run of this
 * client the server has not let go of, and the executor lets go of the results its tools gave there.
 *
 * @internal
 */
export const threadLeft = (env: Env, key: string): Effect.Effect<void> =>
  Effect.suspend(() => {
    env.named.delete(key)
    env.closedUnnoticed.delete(key)
    for (const [local, named] of env.namedLocals) {
      if (named !== key) continue
      env.namedLocals.delete(local)
      env.leftLocals.add(local)
    }
    newEpoch(env, key)
    // The server will take none of the results its tools gave there.
    return env.executor.forgetThread?.(key) ?? Effect.void
  })

/**
 * The server's id of a thread: the thread the server named for a local one (see `namedLocals`),
 * else the id itself. @internal
 */
export const savedThreadId = (env: Env, threadId: string): string => env.namedLocals.get(threadId) ?? threadId

/**
 * Why a new conversation's id names no thread of the server: it has none yet (the store holds it,
 * or its first run is creating it); or the store holds no thread of a local id: the thread the
 * server named for it left the client (forgotten, deleted) and took the local id with it, or its
 * run ended without one. Saying "not saved yet" then would send the app waiting for nothing.
 *
 * @internal
 */
export const unsaved = (env: Env, method: string, threadId: string, held: boolean): ConfigError =>
  new ConfigError({
    reason: "InvalidOption",
    message: held || threadId === ClientState.PLACEHOLDER_THREAD_ID || env.localRuns.has(threadId)
      ? `${method}: "${threadId}" is a new conversation the server has not saved yet: its first message gets it a thread`
      : `${method}: the client holds no thread of "${threadId}": a new conversation's local id names its thread only while the client holds it (not once it was forgotten or deleted, nor if its run ended without one); use the thread's own id`
  })

/**
 * The run whose new thread the placeholder is (see `placeholderOwner`): the server may have named
 * it already, before the store shows that name. @internal
 */
export const placeholderRun = (env: Env): RunState | undefined => {
  const run = env.placeholderRun
  return run !== undefined && run.lockKey === env.placeholderOwner ? run : undefined
}

/**
 * The run creating the thread of a new conversation asked for by `threadId`: the placeholder's, or
 * a local thread's (see `localRuns`); none for a thread the server named. @internal
 */
export const runCreating = (env: Env, threadId: string): RunState | undefined =>
  threadId === ClientState.PLACEHOLDER_THREAD_ID ? placeholderRun(env) : env.localRuns.get(threadId)

/**
 * What a thread is in the lock (`activeRuns`, the runs starting): the placeholder, while a run
 * holds it, and a local thread a run records in, are that run's lock key, or the thread the server
 * named for it once it did (the store may not show the name yet); any other thread is itself.
 * @internal
 */
export const lockKeyOf = (env: Env, threadId: string): string => {
  if (threadId === ClientState.PLACEHOLDER_THREAD_ID) {
    if (env.placeholderOwner === undefined) return threadId
    const run = placeholderRun(env)
    return run !== undefined && run.locked ? run.threadId : env.placeholderOwner
  }
  const run = env.localRuns.get(threadId)
  return run === undefined ? threadId : run.locked ? run.threadId : run.lockKey
}

/**
 * Tells a new conversation's run's caller the local thread it records in, other than the
 * placeholder (`RunOptions.onLocalThreadId`). What the caller throws is ignored. @internal
 */
export const tellLocalThread = (options: RunOptions, threadId: string): void => {
  try {
    options.onLocalThreadId?.(threadId)
  } catch {
    // The caller's listener, not the run's failure.
  }
}

/** The next local number (thread ids, lock keys, message ids). @internal */
export const nextLocal = (env: Env): number => ++env.localCounter

/** @internal */
export const withCredentials = <A, E extends TamboError>(
  env: Env,
  f: (c: Transport.Credentials) => Effect.Effect<A, E>
) => Auth.withCredentials(env.auth, f)

/**
 * The credentials a run's requests carry: the ones it started with, for every request it makes (a
 * tool round's continuation, its cancellation, its end's read of the thread), whatever
 * `setUserToken` changed meanwhile: the run, the server's run and its thread are its user's. Once
 * the API refuses them (a 401: expired), the service's current ones, kept from then on.
 *
 * @internal
 */
export const runAuth = (auth: Auth.Auth.Service, startedWith: Transport.Credentials): Auth.Auth.Service => {
  let pinned: Transport.Credentials | undefined = startedWith
  return {
    ...auth,
    credentials: Effect.suspend(() =>
      pinned !== undefined
        ? Effect.succeed(pinned)
        : Effect.map(auth.credentials, (credentials) => (pinned = credentials))
    ),
    invalidate: (rejected) =>
      Effect.suspend(() => {
        if (rejected === undefined || rejected === pinned) pinned = undefined
        return auth.invalidate(rejected)
      })
  }
}

/** The run's request with the run's credentials (see `runAuth`). @internal */
export const withRunCredentials = <A, E extends TamboError>(
  run: RunState,
  f: (c: Transport.Credentials) => Effect.Effect<A, E>
) => Auth.withCredentials(run.auth, f)

/** @internal */
export const apply = (env: Env, actions: ReadonlyArray<ClientState.Action>) => env.store.apply(actions)

/**
 * Written to the store now, after the run's pending draft: what the run's thread is then.
 *
 * @internal
 */
export const record = (env: Env, threadId: string, actions: ReadonlyArray<ClientState.Action>) =>
  env.writer.write(threadId, actions)

/**
 * What a run records as it starts or continues: into its draft where the actions stay on its
 * thread, else written as `record`.
 *
 * @internal
 */
export const recordNow = (env: Env, threadId: string, actions: ReadonlyArray<ClientState.Action>) =>
  env.writer.recordOrWrite(threadId, actions)

/** @internal */
export const now = Clock.currentTimeMillis
