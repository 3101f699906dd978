/**
 * `useTamboThread` and `useTamboThreadList`: threads other than the
 * current one.
 *
 * @since 0.1.0
 */
import type { ClientState, StreamingState, TamboThread, ThreadPage } from "@tambo-effect/client"
import { getThreadState, isLocalThreadId, PLACEHOLDER_THREAD_ID } from "@tambo-effect/core/ClientState"
import { useCallback, useRef, useState } from "react"
import type { ClientHandle } from "./internal/clientHandle.js"
import { useTamboContext } from "./internal/context.js"
import { useEvery, useOnPageVisible } from "./internal/pageEvents.js"
import { useQuery } from "./internal/useQuery.js"
import { useThreadId } from "./internal/useThreadId.js"
import type { QueryState, TamboQueryOptions } from "./types.js"
import { useTamboSelector } from "./useTamboSelector.js"

/**
 * What `useTamboThread(threadId)` returns.
 *
 * @since 0.1.0
 * @category Models
 */
export interface UseTamboThreadReturn {
  /**
   * The thread, live: it follows runs on it. `undefined` while it loads. A
   * read the client's state did not take (the thread left the state, or
   * changed, while it was read) gives the copy it read, not live.
   */
  readonly thread: TamboThread | undefined
  /** `thread`, by the name TanStack Query gives it. @since 0.2.0 */
  readonly data: TamboThread | undefined
  readonly streamingState: StreamingState | undefined
  /**
   * `success` once the state holds the thread (or a read of it answered that
   * the state did not take), `error` if loading it failed, else `pending`.
   *
   * @since 0.2.0
   */
  readonly status: "pending" | "error" | "success"
  /** @since 0.2.0 */
  readonly isPending: boolean
  /** @since 0.2.0 */
  readonly isSuccess: boolean
  readonly isLoading: boolean
  /** It is being loaded from the API. @since 0.2.0 */
  readonly isFetching: boolean
  readonly isError: boolean
  readonly error: Error | undefined
  /** Loads it again from the API; resolves once it was read, or failed to be (never rejects). */
  readonly refetch: () => Promise<void>
}

/**
 * A thread by id, live from the client's state; loaded from the API (into
 * the state) when the client does not know it yet. `options` as
 * {@link TamboQueryOptions} (upstream's TanStack Query options). A new
 * conversation's local thread id is, once the server named that thread, the
 * thread it became (as the client's `getThread` has it); once that thread
 * was forgotten or deleted, the id names none, and the hook reports the
 * client's `ConfigError` saying so (`status: "error"`), sending nothing.
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboThread = (given: string, options: TamboQueryOptions = {}): UseTamboThreadReturn => {
  const { handle } = useTamboContext("useTamboThread")
  const threadId = useThreadId(handle, given)
  const threadState = useTamboSelector(
    useCallback((state: ClientState) => getThreadState(state, threadId), [threadId])
  )
  const known = threadState !== undefined
  // Each time the thread leaves the state, it is loaded anew: not shown as the read before had it.
  const [leaves, setLeaves] = useState({ known, count: 0 })
  if (leaves.known !== known) setLeaves({ known, count: leaves.count + (known ? 0 : 1) })
  const enabled = options.enabled !== false
  // A local id the state holds no thread of is read too: the client refuses it (the thread it
  // named was forgotten or deleted), sending nothing, and the hook shows that error.
  const query = useQuery(
    handle,
    !enabled || known || threadId === PLACEHOLDER_THREAD_ID ? undefined : `${threadId}\u0000${leaves.count}`,
    () => handle.client().fetchThread(threadId)
  )
  useRefresh(handle, enabled && known && !isLocalThreadId(threadId) ? threadId : undefined, options)
  // A read the state did not take (the thread left it, or changed, while it was read): what it read.
  const thread = threadState?.thread ?? query.data
  const status = known ? "success" : query.status
  return {
    thread,
    data: thread,
    streamingState: threadState?.streaming,
    status,
    isPending: status === "pending",
    isSuccess: status === "success",
    isLoading: !known && query.isLoading,
    isFetching: query.isFetching,
    isError: query.isError,
    error: query.error,
    refetch: useCallback(
      () => handle.client().fetchThread(threadId).then(() => undefined, () => undefined),
      [handle, threadId]
    )
  }
}

/** How old a thread may be when the page becomes visible again before it is read again (upstream's `staleTime`). */
const THREAD_STALE_MS = 1_000

/**
 * A thread the state holds, read again (unless a run of this client is on it): when the page
 * becomes visible after `staleTime` (another tab or device may have added to it, or deleted it),
 * and every `refetchInterval`.
 */
const useRefresh = (handle: ClientHandle, threadId: string | undefined, options: TamboQueryOptions) => {
  const readAt = useRef(Date.now())
  const read = (id: string) => {
    if (handle.hasActiveRun(id)) return
    readAt.current = Date.now()
    handle.client().fetchThread(id).catch(() => undefined)
  }
  const staleMs = options.staleTime ?? THREAD_STALE_MS
  useOnPageVisible(threadId !== undefined && options.refetchOnWindowFocus !== false, () => {
    if (threadId !== undefined && Date.now() - readAt.current >= staleMs) read(threadId)
  })
  useEvery(threadId === undefined || options.refetchInterval === false ? undefined : options.refetchInterval, () => {
    if (threadId !== undefined) read(threadId)
  })
}

/**
 * Options of {@link useTamboThreadList}.
 *
 * @since 0.1.0
 * @category Models
 */
export interface UseTamboThreadListOptions {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
  /** Default `true`; `false` reads nothing. */
  readonly enabled?: boolean | undefined
}

/**
 * What `useTamboThreadList()` returns: the page read (`data`, as
 * `@tambo-ai/react` gives it: `{ threads, hasMore, nextCursor }`), its
 * parts at the top level, and the query's state.
 *
 * @since 0.1.0
 * @category Models
 */
export interface UseTamboThreadListReturn extends QueryState<ThreadPage> {
  /** The user's threads, newest first, without their messages (empty while loading). */
  readonly threads: ReadonlyArray<TamboThread>
  /** Whether the API has more threads after these (false while loading). */
  readonly hasMore: boolean
  /** The `cursor` option that reads the next page, when there is one. */
  readonly nextCursor: string | undefined
}

const NO_THREADS: ReadonlyArray<TamboThread> = []

/** How old the list may be when the page becomes visible again before it is read again (upstream's `staleTime`). */
const LIST_STALE_MS = 5_000

/**
 * The ids and names of the threads the client knows: when they change (a
 * run created a thread, a thread was named or deleted) the list is read
 * again.
 */
const selectKnownThreads = (state: ClientState): string => {
  let key = ""
  for (const [id, threadState] of Object.entries(state.threadMap)) {
    if (!isLocalThreadId(id)) key += `${id}\u0000${threadState.thread.name ?? ""}\u0001`
  }
  return key
}

/**
 * The user's threads from the API, newest first, a page at a time (`limit`,
 * then `cursor: nextCursor` while `hasMore`). Read when mounted and again
 * whenever the client created, renamed or deleted a thread; keeps the last
 * page while reading again.
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboThreadList = (
  options: UseTamboThreadListOptions = {},
  queryOptions: TamboQueryOptions = {}
): UseTamboThreadListReturn => {
  const { handle } = useTamboContext("useTamboThreadList")
  const { cursor, limit } = options
  const enabled = options.enabled !== false && queryOptions.enabled !== false
  const known = useTamboSelector(selectKnownThreads)
  const query = useQuery(
    handle,
    enabled ? JSON.stringify([limit ?? null, cursor ?? null, known]) : undefined,
    () => handle.client().listThreadsPage({ cursor, ...(limit === undefined ? {} : { limit }) }),
    {
      keepData: true,
      // Back on the page after a while: another tab or device may have made or deleted threads.
      refetchOnFocusAfterMs: queryOptions.refetchOnWindowFocus === false ? undefined : queryOptions.staleTime ?? LIST_STALE_MS,
      refetchIntervalMs: queryOptions.refetchInterval === false ? undefined : queryOptions.refetchInterval
    }
  )
  const page = query.data
  return {
    ...query,
    threads: page?.threads ?? NO_THREADS,
    hasMore: page?.hasMore ?? false,
    nextCursor: page?.nextCursor
  }
}
