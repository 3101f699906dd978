/**
 * Threads as the service loads, names and reads them: what runs need of a
 * thread beyond their own stream.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"
import * as ClientState from "../../ClientState.js"
import type { RunOptions } from "../../Tambo.js"
import type { TamboError } from "../../TamboError.js"
import type * as Transport from "../../TamboTransport.js"
import type * as Types from "../../Types.js"
import { messageFromApi, threadFromApi } from "../convert.js"
import * as Reconcile from "../reconcile.js"
import { copyPlaceholder } from "../state/batch.js"
import * as Env from "./env.js"

/** The calls a fetched thread waits on, named from its `tool_use` blocks. @internal */
export const pendingFromApi = (remote: Transport.ThreadWithMessages): ReadonlyArray<ClientState.AwaitedToolCall> => {
  const ids = remote.pendingToolCallIds ?? []
  if (ids.length === 0) return []
  const names = new Map<string, string>()
  for (const message of remote.messages) {
    for (const block of message.content) if (block.type === "tool_use") names.set(block.id, block.name)
  }
  return ids.flatMap((toolCallId) => {
    const toolName = names.get(toolCallId)
    return toolName === undefined ? [] : [{ toolCallId, toolName }]
  })
}

/**
 * Whether a thread-scoped request failed because the API no longer has the thread for this user:
 * deleted (by another client, another tab) or never this user's. The API's thread guard answers
 * 403 for such a thread, and for an API key it refuses too: a 403 counts only when a request that
 * names no thread (one thread of the list) goes through with the same credentials. A 404 is the
 * API finding the thread gone after its guard let the request in.
 *
 * @internal
 */
export const threadGone = (env: Env.Env, error: TamboError): Effect.Effect<boolean> =>
  error._tag !== "ApiError"
    ? Effect.succeed(false)
    : error.reason === "NotFound"
    ? Effect.succeed(true)
    : error.reason !== "Forbidden"
    ? Effect.succeed(false)
    : Env.withCredentials(env, (c) => env.transport.listThreads(c, { limit: 1 })).pipe(
      Effect.as(true),
      Effect.orElseSucceed(() => false)
    )

/** The action that forgets a thread the API no longer has (see `threadGone`), or none. @internal */
export const forgetIfGone = (env: Env.Env, threadId: string, error: TamboError): Effect.Effect<ReadonlyArray<ClientState.Action>> =>
  ClientState.isLocalThreadId(threadId)
    ? Effect.succeed([])
    : Effect.map(threadGone(env, error), (gone) => gone ? [{ type: "REMOVE_THREAD", threadId }] : [])

/**
 * On a failed read (or deletion) of a thread the store holds: the store forgets it if the API no longer has it,
 * unless a run of this client is on it (that run's end reads the thread again, and forgets it then).
 */
const forgetFetched = (env: Env.Env, threadId: string) => (error: TamboError): Effect.Effect<void> =>
  Effect.gen(function* () {
    if (env.activeRuns.has(threadId) || (yield* env.store.getThread(threadId)) === undefined) return
    const forget = yield* forgetIfGone(env, threadId, error)
    if (forget.length === 0) return
    yield* Env.apply(env, forget)
    yield* Env.threadLeft(env, threadId)
  })

/**
 * A read of a thread (see `fetchThread`), with its whole state: the store's, or the copy read when
 * the store did not take it. `retrieve`: the request, with the service's credentials unless a run
 * reads its own thread with its own.
 */
const readThread = (
  env: Env.Env,
  threadId: string,
  retrieve: Effect.Effect<Transport.ThreadWithMessages, TamboError> = Env.withCredentials(
    env,
    (c) => env.transport.retrieveThread(c, threadId)
  )
): Effect.Effect<ClientState.ThreadState, TamboError> =>
  Effect.suspend(() => {
    const epoch = Env.readSent(env, threadId)
    const sent = ++env.readsSent
    return Effect.gen(function* () {
      const remote = yield* retrieve.pipe(
        Effect.tapError(forgetFetched(env, threadId))
      )
      const at = yield* Env.now
      const load: ReadonlyArray<ClientState.Action> = [
        { type: "INIT_THREAD", threadId, at, initialThread: threadFromApi(remote) },
        {
          type: "LOAD_THREAD_MESSAGES",
          threadId,
          messages: remote.messages.map(messageFromApi),
          skipIfStreaming: true
        },
        // The server's copy, as a run's end takes it: what changed since in a thread the store held
        // (another client's rename, runs, component states) shows; the last run it completed, and
        // the calls a paused run waits on (they survive a reload), come with it.
        Reconcile.reconcileAction(threadId, remote)
      ]
      // A read sent after this one and answered first has a newer copy.
      if (Env.epochOf(env, threadId) !== epoch || env.activeRuns.has(threadId) || (env.readTaken.get(threadId) ?? 0) > sent) {
        const held = yield* env.store.getThread(threadId)
        return held ?? ClientState.reduce(ClientState.initial, load).threadMap[threadId]!
      }
      env.readTaken.set(threadId, sent)
      const state = yield* Env.apply(env, load)
      return state.threadMap[threadId]!
    }).pipe(Effect.ensuring(Effect.sync(() => Env.readEnded(env, threadId))))
  })

/**
 * Loads a thread and its messages from the API into the store; a thread the store holds takes the
 * server's copy (see Reconcile), but for what only this client knows. A copy that arrives once a run of
 * this client took the thread since it was asked for is older than what that run recorded (the
 * run reads the thread at its end): the store keeps its own, and that is what is returned. Nor
 * does a copy bring back a thread that left the store since it was asked for (forgotten,
 * deleted): it is returned, and the store stays without it.
 *
 * @internal
 */
export const fetchThread = (env: Env.Env, threadId: string): Effect.Effect<Types.TamboThread, TamboError> =>
  Effect.map(readThread(env, threadId), (state) => state.thread)

/** How many times a run's end reads its thread while this client's changes to it keep overtaking the read. */
const END_READS = 3

/**
 * A run's end reading its thread (`read`) and the store taking the copy, read again when the
 * server took a change this client made to the thread (a rename, a generated name, a component's
 * state) before the copy was taken: that copy may be older than the change, and would take it
 * back in the store. Whether a change overtook the read is decided in the store's update that
 * takes the copy, so a change taken after that update comes after the copy. The last of
 * `END_READS` reads is taken as it is.
 *
 * @internal
 */
export const readAtRunEnd = (
  env: Env.Env,
  threadId: string,
  read: Effect.Effect<Transport.ThreadWithMessages, TamboError>,
  reads = END_READS
): Effect.Effect<void, TamboError> =>
  Effect.suspend(() => {
    const epoch = Env.readSent(env, threadId)
    return read.pipe(
      Effect.flatMap((remote) => takeAtRunEnd(env, threadId, remote, reads > 1 ? epoch : undefined)),
      // Once taken: the last read in flight takes the thread's epoch with it.
      Effect.ensuring(Effect.sync(() => Env.readEnded(env, threadId))),
      Effect.flatMap((taken) => taken ? Effect.void : readAtRunEnd(env, threadId, read, reads - 1))
    )
  })

/**
 * The store takes a run's end's copy of its thread after what the run recorded, unless the thread's
 * epoch is no longer `epoch` (a change of this client overtook the read): `false` then, and
 * nothing is written. With no epoch, the copy is taken as it is.
 */
const takeAtRunEnd = (
  env: Env.Env,
  threadId: string,
  remote: Transport.ThreadWithMessages,
  epoch: number | undefined
): Effect.Effect<boolean> =>
  Effect.zipRight(
    env.writer.write(threadId, []),
    env.store.modify((state): readonly [boolean, ClientState.ClientState] =>
      epoch !== undefined && Env.epochOf(env, threadId) !== epoch
        ? [false, state]
        : [true, ClientState.reduce(state, [Reconcile.reconcileAction(threadId, remote)])]
    )
  ).pipe(Effect.uninterruptible)

/**
 * `fetchThread` of a thread the store holds and no run of this client is on (that run's end reads
 * it): for a run's thread once the run let go of it, with the run's credentials, when its end could
 * not read it (it ended waiting for new credentials); for a thread the server changed in more than
 * its answer said (a component's state: the thread's time of change). A run that took the thread
 * since, or its leaving the store, wins over the read.
 *
 * @internal
 */
export const fetchIfHeld = (
  env: Env.Env,
  threadId: string,
  retrieve?: Effect.Effect<Transport.ThreadWithMessages, TamboError>
): Effect.Effect<void, TamboError> =>
  Effect.gen(function* () {
    if (env.activeRuns.has(threadId) || (yield* env.store.getThread(threadId)) === undefined) return
    yield* readThread(env, threadId, retrieve)
  })

/**
 * A thread's state: the store's, else read from the API (`fetchThread`); when the store did not
 * take the copy read (see there), that copy: what the server said.
 *
 * @internal
 */
export const ensureThread = (env: Env.Env, threadId: string): Effect.Effect<ClientState.ThreadState, TamboError> =>
  Effect.flatMap(
    env.store.getThread(threadId),
    (thread) => thread === undefined ? loadThread(env, threadId) : Effect.succeed(thread)
  )

/**
 * One read of a thread the store does not hold for everyone asking meanwhile: runs asked for on it
 * go on in the order they were asked for, not in the order their own reads would have answered. A
 * read its sender gave up on (a Stop, an interrupt) is sent again by the next one waiting for it.
 */
const loadThread = (env: Env.Env, threadId: string): Effect.Effect<ClientState.ThreadState, TamboError> =>
  Effect.suspend(() => {
    const inFlight = env.loading.get(threadId)
    if (inFlight !== undefined) {
      return Effect.flatMap(
        Deferred.await(inFlight),
        (exit) => Exit.isInterrupted(exit) ? ensureThread(env, threadId) : exit
      )
    }
    const loaded = Deferred.unsafeMake<Exit.Exit<ClientState.ThreadState, TamboError>>(FiberId.none)
    env.loading.set(threadId, loaded)
    return Effect.onExit(readThread(env, threadId), (exit) =>
      Effect.sync(() => {
        if (env.loading.get(threadId) === loaded) env.loading.delete(threadId)
        Deferred.unsafeDone(loaded, Exit.succeed(exit))
      }))
  })

/**
 * Makes a thread current; one that cannot be loaded, or whose load was interrupted, does not stay
 * current: runs would all fail on it. The one current before comes back, unless the user switched on meanwhile (to another thread,
 * or to this one again: that later switch decides), or the thread was loaded meanwhile all the same
 * (a run on it read it), or the store let go of the one before meanwhile (forgotten, deleted): then
 * a new conversation does. @internal
 */
export const switchThread = (env: Env.Env, threadId: string): Effect.Effect<void, TamboError> =>
  Effect.gen(function* () {
    const switchNo = ++env.switches
    const previous = yield* env.store.currentThreadId
    const known = (yield* env.store.getThread(threadId)) !== undefined
    yield* Env.apply(env, [{ type: "SET_CURRENT_THREAD", threadId }])
    if (!known && threadId !== ClientState.PLACEHOLDER_THREAD_ID) {
      const back = (state: ClientState.ClientState) =>
        state.currentThreadId === threadId && env.switches === switchNo && state.threadMap[threadId] === undefined
          ? ClientState.reduce(state, [{
            type: "SET_CURRENT_THREAD",
            threadId: state.threadMap[previous] !== undefined ? previous : ClientState.PLACEHOLDER_THREAD_ID
          }])
          : state
      // A switch its caller gave up on (interrupted: a timeout, an unmount) loaded nothing either.
      yield* fetchThread(env, threadId).pipe(Effect.onError(() => env.store.update(back)))
    }
  })

/** The thread in the store: the current one, or the one named. @internal */
export const getThread = (env: Env.Env, threadId?: string): Effect.Effect<Option.Option<Types.TamboThread>> =>
  Effect.map(
    Effect.flatMap(threadId === undefined ? env.store.currentThreadId : Effect.succeed(threadId), env.store.getThread),
    (thread) => Option.map(Option.fromNullable(thread), (t) => t.thread)
  )

/**
 * Makes the placeholder current, a new conversation: the next run creates a new thread. A new
 * thread's run still recording in the placeholder (the server has not named its thread yet) goes
 * on in a local thread of its own, with what it recorded there; its RUN_STARTED moves that to the
 * server's thread, and the current thread stays the new conversation. Decided inside the store's
 * update, as the run records its first message (see request.ts), so nothing of it is left behind.
 *
 * @internal
 */
export const startNewThread = (env: Env.Env): Effect.Effect<string> =>
  Effect.flatMap(Env.now, (at) => {
    // Each run moved to a local thread of its own, told once the store took the move.
    const moved: Array<readonly [RunOptions, string]> = []
    return Effect.zipRight(
      env.store.update((state) => {
        const fresh: ReadonlyArray<ClientState.Action> = [
          { type: "START_NEW_THREAD", threadId: ClientState.PLACEHOLDER_THREAD_ID, at }
        ]
        // A message the placeholder's conversation withdrew is not the new conversation's.
        env.withdrawnLanded.delete(ClientState.PLACEHOLDER_THREAD_ID)
        const search = env.searchingWithdrawn.get(ClientState.PLACEHOLDER_THREAD_ID)
        env.searchingWithdrawn.delete(ClientState.PLACEHOLDER_THREAD_ID)
        for (const ask of env.askedOnPlaceholder) moved.push([ask.options, leavePlaceholder(env, ask, search)])
        const run = Env.placeholderRun(env)
        // The placeholder is no longer the thread of the run that held it, named or not.
        env.placeholderOwner = undefined
        env.placeholderRun = undefined
        if (run === undefined || run.threadId !== ClientState.PLACEHOLDER_THREAD_ID) return ClientState.reduce(state, fresh)
        const own = `${ClientState.LOCAL_THREAD_PREFIX}${Env.nextLocal(env)}`
        run.threadId = own
        env.localRuns.set(own, run)
        moved.push([run.options, own])
        return ClientState.reduce(copyPlaceholder(state, own), fresh)
      }),
      Effect.sync(() => {
        for (const [options, local] of moved) Env.tellLocalThread(options, local)
        return ClientState.PLACEHOLDER_THREAD_ID
      })
    )
  })

/**
 * A run asked for on the placeholder that has not started yet gets a local thread of its own; where
 * it waits to start moves there, so a `cancelRun` of the new conversation no longer ends it, and
 * one of its local thread does. A search of its for the conversation's withdrawn message (`search`)
 * moves with it, and so do the runs waiting for that search: they are that conversation's.
 */
const leavePlaceholder = (env: Env.Env, ask: Env.PlaceholderAsk, search: Env.WithdrawnSearch | undefined): string => {
  const local = `${ClientState.LOCAL_THREAD_PREFIX}${Env.nextLocal(env)}`
  ask.local = local
  env.askedOnPlaceholder.delete(ask)
  const leaving = new Set([ask.asked])
  if (search?.ask === ask) {
    search.conversation = local
    env.searchingWithdrawn.set(local, search)
    for (const asked of search.waiting) leaving.add(asked)
  }
  const waiting = env.starting.get(ClientState.PLACEHOLDER_THREAD_ID)
  if (waiting === undefined) return local
  const moving = new Map([...waiting].filter(([, asked]) => leaving.has(asked)))
  for (const signal of moving.keys()) waiting.delete(signal)
  if (waiting.size === 0) env.starting.delete(ClientState.PLACEHOLDER_THREAD_ID)
  if (moving.size > 0) env.starting.set(local, moving)
  return local
}

/**
 * A change of a thread on the server, run to its end (the store taking the answer) in the service's
 * scope. Its caller may stop waiting (a timeout, an interruption); the change goes on: once its
 * request went, the server may have acted, and the store would otherwise keep what it had before.
 *
 * @internal
 */
export const toTheEnd = <A>(env: Env.Env, change: Effect.Effect<A, TamboError>): Effect.Effect<A, TamboError> =>
  Effect.flatMap(Effect.forkIn(change, env.scope), Fiber.join)

/**
 * Renames a thread on the server, then in the store; a caller that stops waiting leaves the rename
 * going on (see `toTheEnd`). @internal
 */
export const renameThread = (env: Env.Env, threadId: string, name: string): Effect.Effect<void, TamboError> =>
  toTheEnd(env, renameNow(env, threadId, name))

const renameNow = (env: Env.Env, threadId: string, name: string): Effect.Effect<void, TamboError> =>
  Effect.suspend(() => {
    // The server takes renames in the order they are sent: its name is the last one sent that it
    // took, so an answer shows only if no rename sent after it was shown already.
    const renames = env.renames.get(threadId) ?? { sent: 0, shown: 0, inFlight: 0 }
    env.renames.set(threadId, renames)
    const sent = ++renames.sent
    for (const naming of env.naming.get(threadId) ?? []) naming.renamed = name
    renames.inFlight++
    return Env.withCredentials(env, (c) => env.transport.updateThread(c, threadId, { name })).pipe(
      Effect.flatMap((renamed) => Effect.suspend(() => {
        // A read of the thread in flight may have been answered before the server took the name.
        Env.newEpoch(env, threadId)
        if (sent < renames.shown) return Effect.void
        renames.shown = sent
        // The rename changed the thread on the server: its time of change comes with the name.
        return Env.apply(env, [{ type: "UPDATE_THREAD", threadId, patch: { name, updatedAt: renamed.updatedAt } }])
      })),
      Effect.ensuring(Effect.sync(() => {
        if (--renames.inFlight === 0 && env.renames.get(threadId) === renames) env.renames.delete(threadId)
      }))
    )
  })

/**
 * Deletes a thread on the server, then from the store. A run of this client on the thread is
 * cancelled and let go of the thread before the store forgets it: its last writes would otherwise
 * bring it back. Nothing happens in the client unless the server deleted the thread, or no longer
 * has it (deleted by another client, or by this one's earlier attempt whose answer was lost): then
 * the store forgets it, as a failed read does. A caller that stops waiting leaves the deletion going
 * on (see `toTheEnd`).
 *
 * @internal
 */
export const deleteThread = (env: Env.Env, threadId: string): Effect.Effect<void, TamboError> =>
  toTheEnd(env, deleteNow(env, threadId))

const deleteNow = (env: Env.Env, threadId: string): Effect.Effect<void, TamboError> =>
  Effect.zipRight(
    Env.withCredentials(env, (c) => env.transport.deleteThread(c, threadId)).pipe(
      Effect.tapError(forgetFetched(env, threadId))
    ),
    Effect.suspend(() => {
      // Once a run on it let go: its end may still have asked for the thread's name.
      const forget = Effect.zipRight(
        Env.apply(env, [{ type: "REMOVE_THREAD", threadId }]),
        Env.threadLeft(env, threadId)
      )
      const active = env.activeRuns.get(threadId)
      // In the service's scope (see `toTheEnd`): a tool of that very run, deleting its own thread,
      // is interrupted by the cancellation, and the store still forgets the thread once the run has let go.
      return active === undefined ? forget : Effect.zipRight(Effect.zipRight(active.cancel, active.done), forget)
    })
  )

/**
 * Drops a thread from the store, not from the server: the next run on it, or `fetchThread`, reads
 * it back. Refused (`false`) for a thread the store does not hold, the current thread, one a run of
 * this client is on, and one only this client holds (not yet saved, or an AG-UI agent's, whose
 * conversation lives in the client). Decided inside the store's update, so a run that takes the
 * thread at the same moment is seen.
 *
 * @internal
 */
export const forgetThread = (env: Env.Env, threadId: string): Effect.Effect<boolean> =>
  env.store.modify((state) => {
    const forgettable = state.threadMap[threadId] !== undefined &&
      state.currentThreadId !== threadId &&
      !ClientState.isLocalThreadId(threadId) &&
      env.transport.conversationFromStore !== true &&
      !env.activeRuns.has(threadId)
    return forgettable
      ? [true, ClientState.reduce(state, [{ type: "REMOVE_THREAD", threadId }])]
      : [false, state]
  }).pipe(
    // A thread read back later is named (if it still has no name) as a new one would be.
    Effect.tap((forgotten) => (forgotten ? Env.threadLeft(env, threadId) : Effect.void))
  )

/**
 * Asks the API to name a thread, and records the name; returns the name the API made. A rename
 * sent while the server made it wins: the server may have stored the generated name after the
 * rename, so the rename is sent again (the server takes renames in the order they are sent), and
 * the generated name shows only if that fails. A caller that stops waiting leaves the naming going
 * on (see `toTheEnd`).
 *
 * @internal
 */
export const generateThreadName = (env: Env.Env, threadId: string): Effect.Effect<Option.Option<string>, TamboError> =>
  toTheEnd(env, generateNow(env, threadId))

const generateNow = (env: Env.Env, threadId: string): Effect.Effect<Option.Option<string>, TamboError> =>
  Effect.suspend(() => {
    const naming: { renamed: string | undefined } = { renamed: undefined }
    const namings = env.naming.get(threadId) ?? new Set()
    env.naming.set(threadId, namings)
    namings.add(naming)
    return Env.withCredentials(env, (c) => env.transport.generateThreadName(c, threadId)).pipe(
      Effect.tap((generated) =>
        naming.renamed === undefined
          ? showName(env, threadId, generated)
          : Effect.catchAll(renameNow(env, threadId, naming.renamed), () => showName(env, threadId, generated))
      ),
      Effect.map(Option.map((generated) => generated.name)),
      Effect.ensuring(Effect.sync(() => {
        namings.delete(naming)
        if (namings.size === 0 && env.naming.get(threadId) === namings) env.naming.delete(threadId)
      }))
    )
  })

const showName = (env: Env.Env, threadId: string, generated: Option.Option<Transport.GeneratedName>): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (Option.isNone(generated)) return Effect.void
    // A read of the thread in flight may have been answered before the server stored the name.
    Env.newEpoch(env, threadId)
    // Storing the name changed the thread on the server: its time of change comes with the name.
    const { name, updatedAt } = generated.value
    return Env.apply(env, [{ type: "UPDATE_THREAD", threadId, patch: updatedAt === undefined ? { name } : { name, updatedAt } }])
  })

/**
 * Names a thread in the background once it has enough messages (best effort), in the span of
 * the run that got it there; after a naming that failed, the thread's next run tries again.
 *
 * @internal
 */
export const maybeName = (env: Env.Env, threadId: string, runSpan: Tracer.Span): Effect.Effect<void> =>
  env.options.autoGenerateThreadName !== true ? Effect.void : Effect.gen(function* () {
    if (env.named.has(threadId)) return
    const thread = (yield* env.store.getThread(threadId))?.thread
    if (thread === undefined || (thread.name !== undefined && thread.name !== "")) return
    if (thread.messages.length < (env.options.autoGenerateNameThreshold ?? 3)) return
    env.named.add(threadId)
    // A naming that failed found out nothing: the thread's next run asks again. One that found no
    // name is not asked again.
    // Already in the service's scope: no caller waits for it.
    const naming = generateNow(env, threadId).pipe(
      Effect.tapError(() => Effect.sync(() => env.named.delete(threadId))),
      Effect.ignore
    )
    yield* Effect.forkIn(naming, env.scope)
  }).pipe(Effect.withParentSpan(runSpan))
