/**
 * Where a new conversation's message landed when the answer naming its thread never came (the
 * request's connection broke once it went out, or its first byte did not come in time, or a Stop
 * gave up waiting for it): the server may have made a thread, stored the message there and
 * started a run, and the client has no id to read. The API lists a context key's threads, newest
 * first: a thread the client does not know, made since the request went out, whose user message
 * is the one sent, is where it landed.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Auth from "../../Auth.js"
import * as ClientState from "../../ClientState.js"
import { isTamboError, type TamboError } from "../../TamboError.js"
import type * as Transport from "../../TamboTransport.js"
import * as Env from "./env.js"
import type { RunState } from "./state.js"
import { ensureThread, forgetThread } from "./threads.js"

/**
 * What the server's threads tell: none holds the message (nothing of the request reached the
 * server), exactly one does, or it cannot tell one (several hold it, or more threads were made
 * meanwhile than one page lists).
 *
 * @internal
 */
export type Landed =
  | { readonly _tag: "None" }
  | { readonly _tag: "One"; readonly thread: Transport.ThreadSummary }
  | { readonly _tag: "Unknown"; readonly why: string }

/** The newest threads listed: more made since the request went out than this, and it cannot tell. */
const PAGE = 20

/**
 * How far the server's clock may be behind the client's. The bound by the threads the client knew
 * (on the server's clock) is exact; this one only keeps the search to recent threads, and errs
 * wide: a thread missed here would have its message sent again.
 */
const CLOCK_SKEW_MS = 10 * 60_000

/** When the request went out, and the newest thread the client knew then (see `noteSent`). */
export interface Sent {
  readonly at: number
  /** The newest `createdAt` (the server's clock) of the threads the client knew. */
  readonly newestKnown: number | undefined
}

/**
 * Notes, as a new conversation's request goes out, what `find` compares with: the time, and the
 * newest thread the client knew. A thread made for the request is not older than it.
 *
 * @internal
 */
export const noteSent = (env: Env.Env, run: RunState): Effect.Effect<void> =>
  Effect.map(Env.now, (at) => {
    // Peeked, not got: a run that hands the store's thread map out makes the next publication copy it.
    run.sent = { at, newestKnown: newestKnownIn(env.writer.peek()) }
  })

/** The newest `createdAt` of a state's server threads, by state: new conversations started together share one pass. */
const newestKnown = new WeakMap<ClientState.ClientState, number | undefined>()

const newestKnownIn = (state: ClientState.ClientState): number | undefined => {
  if (newestKnown.has(state)) return newestKnown.get(state)
  let newest: number | undefined
  for (const id in state.threadMap) {
    if (ClientState.isLocalThreadId(id)) continue
    const created = Date.parse(state.threadMap[id]!.thread.createdAt)
    if (!Number.isNaN(created) && (newest === undefined || created > newest)) newest = created
  }
  newestKnown.set(state, newest)
  return newest
}

/** The text of a message's content, where a message sent and the same message stored agree. @internal */
export const textOf = (content: ReadonlyArray<{ readonly type: string; readonly text?: unknown }>): string =>
  JSON.stringify(content.flatMap((block) => block.type === "text" ? [block.text] : []))

/** Whether `remote` holds a user message with the text of `sent` that is not among `known`. @internal */
export const holdsMessage = (
  remote: Transport.ThreadWithMessages,
  sent: Transport.InputMessage,
  known: ReadonlySet<string> = new Set()
): boolean => {
  const text = textOf(sent.content)
  return remote.messages.some((message) => message.role === "user" && !known.has(message.id) && textOf(message.content) === text)
}

/** The listed threads that may be the request's: unknown to the client, and made since it went out. */
const candidatesOf = (
  listed: ReadonlyArray<Transport.ThreadSummary>,
  sent: Sent,
  known: (id: string) => boolean
): ReadonlyArray<Transport.ThreadSummary> =>
  listed.filter((thread) => {
    const created = Date.parse(thread.createdAt)
    return !known(thread.id) && !(created < sent.at - CLOCK_SKEW_MS) &&
      !(sent.newestKnown !== undefined && created < sent.newestKnown)
  })

/**
 * How long the search may take: as long as a Stop waits for its `DELETE`. The run's caller is
 * waiting for its end, and a server that does not answer the search tells nothing.
 */
const SEARCH_BOUND = Duration.seconds(3)

/**
 * Lists the newest threads and reads the ones that may hold the run's message (see the module's
 * notes), within `SEARCH_BOUND` (past it, it cannot tell); a failure of the list or of a read is
 * the caller's to judge.
 *
 * @internal
 */
export const find = (env: Env.Env, run: RunState): Effect.Effect<Landed, TamboError> =>
  Effect.suspend(() =>
    run.sent === undefined
      ? Effect.succeed<Landed>({ _tag: "None" })
      : findSent(env, { sent: run.sent, message: run.firstMessage }, run.auth)
  )

/**
 * What a search for where a new conversation's message landed compares with: when its request
 * went out, and the message.
 *
 * @internal
 */
export interface Sought {
  readonly sent: Sent
  readonly message: Transport.InputMessage
}

/** `find` for `sought`, with the credentials of `auth`. */
const findSent = (env: Env.Env, sought: Sought, auth: Auth.Auth.Service): Effect.Effect<Landed, TamboError> =>
  Effect.timeoutTo(search(env, sought, auth), {
    duration: SEARCH_BOUND,
    onSuccess: (landed): Landed => landed,
    onTimeout: (): Landed => ({ _tag: "Unknown", why: `the server's threads did not answer within ${Duration.format(SEARCH_BOUND)}` })
  })

const search = (env: Env.Env, { message, sent }: Sought, auth: Auth.Auth.Service): Effect.Effect<Landed, TamboError> =>
  Effect.gen(function* () {
    const list = yield* Auth.withCredentials(auth, (c) => env.transport.listThreads(c, { limit: PAGE }))
    const state = yield* env.store.get
    const named = new Set(env.namedLocals.values())
    const candidates = candidatesOf(list.threads, sent, (id) => id in state.threadMap || named.has(id))
    const oldest = list.threads.at(-1)
    if (list.hasMore && oldest !== undefined && candidatesOf([oldest], sent, () => false).length > 0) {
      return { _tag: "Unknown", why: `more than ${PAGE} threads were made since` } as const
    }
    const holding = yield* Effect.filter(candidates, (thread) =>
      Effect.map(
        Auth.withCredentials(auth, (c) => env.transport.retrieveThread(c, thread.id)),
        (remote) => holdsMessage(remote, message)
      ), { concurrency: 4 })
    if (holding.length === 0) return { _tag: "None" } as const
    if (holding.length === 1) return { _tag: "One", thread: holding[0]! } as const
    return { _tag: "Unknown", why: `${holding.length} new threads hold the same message` } as const
  })

/**
 * `find`, and the run's thread becomes the one it tells (see `adopt`); `none` hears that no thread
 * holds the message; a failure or several threads leave the run as it was.
 *
 * @internal
 */
export const findAndAdopt = (env: Env.Env, run: RunState, none: () => void = () => undefined): Effect.Effect<void> =>
  Effect.match(find(env, run), {
    onFailure: () => undefined,
    onSuccess: (landed) => landed._tag === "One" ? adopt(run, landed.thread) : landed._tag === "None" ? none() : undefined
  })

/**
 * `findAndAdopt` once the run's request is let go of: no thread holding the message, the server
 * never got the request, and the run's end withdraws the message as a refused one's
 * (`landedNowhere`), so the caller may offer it again.
 *
 * @internal
 */
export const findOrWithdraw = (env: Env.Env, run: RunState): Effect.Effect<void> =>
  Effect.suspend(() => {
    run.landedUntold = false
    return findAndAdopt(env, run, () => void (run.landedNowhere = true))
  })

/**
 * The run was interrupted while its new conversation's request had gone out and nothing answered
 * it: the server may have made a thread, stored the message and started a run there, or got
 * nothing of it.
 */
const interruptedUnanswered = (run: RunState, exit: Exit.Exit<unknown, unknown>): boolean =>
  Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause) && run.sent !== undefined && run.requestSent &&
  run.runId === undefined && !run.refused

/**
 * A search a Stop or the run's interruption cut before it told, or a request the run's
 * interruption left unanswered: the run's end looks, within the search's bound, so a message the
 * server took does not stay in a thread the client never learns, and the next message does not
 * start another one; one no thread holds is withdrawn (see `findOrWithdraw`). It runs in the
 * service's scope: an interrupted run's end would cut it again at once, and could not bound it.
 *
 * @internal
 */
export const findCut = (env: Env.Env, run: RunState, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (!(run.landedUntold || interruptedUnanswered(run, exit)) || run.serverThreadId !== undefined) return Effect.void
    return Effect.flatMap(Effect.forkIn(findOrWithdraw(env, run), env.scope), Fiber.join)
  })

/** The run failed because its first byte did not come in time. */
const timedOut = (exit: Exit.Exit<unknown, unknown>): boolean =>
  Exit.isFailure(exit) && Option.exists(
    Cause.failureOption(exit.cause),
    (error) => isTamboError(error) && error._tag === "TransportError" && error.reason === "Timeout"
  )

/**
 * Notes, as a new conversation's message is withdrawn, what the next run of the conversation looks
 * for (see `findWithdrawn`): when the request timed out or was stopped with nothing answering it,
 * and no thread held the message, the request may still reach a slow server afterwards.
 *
 * @internal
 */
export const noteWithdrawn = (env: Env.Env, run: RunState, exit: Exit.Exit<unknown, unknown>): void => {
  if (
    run.sent === undefined || run.serverThreadId !== undefined || env.transport.conversationFromStore === true ||
    !ClientState.isLocalThreadId(run.threadId) || !(run.landedNowhere || timedOut(exit))
  ) return
  env.withdrawnLanded.set(run.threadId, { sent: run.sent, message: run.firstMessage })
}

/**
 * Looks once more, before a run of the new conversation `search` is for starts, for the thread its
 * withdrawn message landed in after all (see `noteWithdrawn`), within the search's bound. Found:
 * the conversation becomes that thread, as the server has it (its local id names it, the selection
 * follows), and its id is returned for the run to go on there. None, several, a failure, or
 * `startNewThread` moving the run off the placeholder meanwhile (the new conversation is not the
 * one that withdrew the message): the run goes on as a new conversation, as before.
 *
 * @internal
 */
export const findWithdrawn = (env: Env.Env, search: Env.WithdrawnSearch, auth: Auth.Auth.Service): Effect.Effect<string | undefined> =>
  Effect.suspend(() => {
    const local = search.conversation
    const sought = env.withdrawnLanded.get(local)
    if (sought === undefined) return Effect.succeed(undefined)
    env.withdrawnLanded.delete(local)
    const stays = () => search.conversation === local
    return findSent(env, sought, auth).pipe(
      Effect.flatMap((landed) =>
        landed._tag === "One" && stays() ? becomeLanded(env, local, landed.thread, stays) : Effect.succeed(undefined)
      ),
      Effect.orElseSucceed(() => undefined)
    )
  })

/**
 * Marks the new conversation `local` as looked for by a run (see `findWithdrawn`) until that run
 * has its state, so the conversation's runs asked meanwhile go where it goes (`awaitSearch`)
 * rather than start another thread; `settleSearch` says where it went, and a start that ends
 * before says none. `ask` is the run's, asked for on the placeholder.
 *
 * @internal
 */
export const searchFor = (
  env: Env.Env,
  local: string,
  ask: Env.PlaceholderAsk | undefined
): Effect.Effect<Env.WithdrawnSearch, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const search: Env.WithdrawnSearch = {
        conversation: local,
        went: Deferred.unsafeMake<string | undefined>(FiberId.none),
        ask,
        waiting: new Set()
      }
      env.searchingWithdrawn.set(local, search)
      return search
    }),
    (search) => Effect.sync(() => settleSearch(env, search, undefined))
  )

/** The run making `search` has its state: the runs waiting for it go on `thread`. @internal */
export const settleSearch = (env: Env.Env, search: Env.WithdrawnSearch, thread: string | undefined): void => {
  if (env.searchingWithdrawn.get(search.conversation) === search) env.searchingWithdrawn.delete(search.conversation)
  Deferred.unsafeDone(search.went, Effect.succeed(thread))
}

/**
 * The search for the withdrawn message of the conversation `local` another run is making, if one
 * is: the run `asked` waits for it from now on (see `awaitSearch`), so `startNewThread` moves it
 * with that search.
 *
 * @internal
 */
export const joinSearch = (env: Env.Env, local: string, asked: number): Env.WithdrawnSearch | undefined => {
  const search = env.searchingWithdrawn.get(local)
  search?.waiting.add(asked)
  return search
}

/**
 * Where the run `asked`, waiting for `search` (see `joinSearch`), goes: once the searching run has
 * its state, the thread it goes on, or the conversation, wherever `startNewThread` moved it
 * meanwhile (then it follows that run, as runs on a new conversation follow the one creating its
 * thread).
 *
 * @internal
 */
export const awaitSearch = (search: Env.WithdrawnSearch, asked: number): Effect.Effect<string> =>
  Effect.ensuring(
    Effect.map(Deferred.await(search.went), (thread) => thread ?? search.conversation),
    Effect.sync(() => search.waiting.delete(asked))
  )

/**
 * The new conversation `local` becomes the server's thread `thread`, read into the store. A run
 * still going there is the withdrawn request's, whose connection the client closed: the server
 * holds its lock until it notices, and the run going on there meets a `409` for a while, as after
 * any run of this client left so (see `Env.closedUnnoticed`). None when `startNewThread` moved the
 * run off the conversation meanwhile (`stays`), the thread then left out of the store.
 */
const becomeLanded = (
  env: Env.Env,
  local: string,
  thread: Transport.ThreadSummary,
  stays: () => boolean
): Effect.Effect<string | undefined, TamboError> => {
  const threadId = thread.id
  return Effect.flatMap(env.store.getThread(threadId), (held) =>
    Effect.zipRight(
      ensureThread(env, threadId),
      Effect.tap(
        env.store.modify((state) => {
      // Decided in the store's update, as startNewThread is.
          if (!stays()) return [undefined, state]
          if (thread.runStatus !== "idle") env.closedUnnoticed.add(threadId)
          if (local.startsWith(ClientState.LOCAL_THREAD_PREFIX)) env.namedLocals.set(local, threadId)
          return [threadId, ClientState.reduce(state, [
            ...(state.currentThreadId === local ? [{ type: "SET_CURRENT_THREAD" as const, threadId }] : []),
            // The placeholder stays, a new conversation; a local thread is now the server's.
            ...(local === ClientState.PLACEHOLDER_THREAD_ID ? [] : [{ type: "REMOVE_THREAD" as const, threadId: local }])
          ])]
        }),
        // Read for a conversation startNewThread moved off meanwhile: a thread the store did not
        // hold leaves it again, as if the search had never found it (it is in the user's threads).
        (went) => went === undefined && held === undefined ? forgetThread(env, threadId) : Effect.void
      )
    ))
}

/**
 * The run's thread is the one its message landed in, as the answer's headers would have named
 * it: its end moves the run's local thread there (and `namedLocals` follows), cancels the run
 * still going there, and reads the thread into the store.
 *
 * @internal
 */
export const adopt = (run: RunState, thread: Transport.ThreadSummary): void => {
  run.serverThreadId = thread.id
  if (thread.runStatus !== "idle" && thread.currentRunId !== undefined) {
    run.runId = thread.currentRunId
    if (!run.runIds.includes(thread.currentRunId)) run.runIds.push(thread.currentRunId)
  } else if (thread.lastCompletedRunId !== undefined) {
    run.lastRunId = thread.lastCompletedRunId
  }
  // The server took the message: what the thread shows of it stays until the end reads it.
  run.unsent = undefined
}
