/**
 * `useTamboThread` and `useTamboThreadList`: threads other than the
 * current one.
 *
 * @since 0.1.0
 */
import type { ClientState, StreamingState, TamboThread } from "@tambo-effect/client"
import { getThreadState, isLocalThreadId } from "@tambo-effect/core/ClientState"
import { useCallback } from "react"
import { useTamboContext } from "./internal/context.js"
import { useQuery } from "./internal/useQuery.js"
import type { QueryState } from "./types.js"
import { useTamboSelector } from "./useTamboSelector.js"

/**
 * What `useTamboThread(threadId)` returns.
 *
 * @since 0.1.0
 * @category Models
 */
export interface UseTamboThreadReturn {
  /** The thread, live: it follows runs on it. `undefined` while it loads. */
  readonly thread: TamboThread | undefined
  /** `thread`, by the name TanStack Query gives it. @since 0.2.0 */
  readonly data: TamboThread | undefined
  readonly streamingState: StreamingState | undefined
  /** `success` once the state holds the thread, `error` if loading it failed, else `pending`. @since 0.2.0 */
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
  /** Loads it again from the API. */
  readonly refetch: () => void
}

/**
 * A thread by id, live from the client's state; loaded from the API (into
 * the state) when the client does not know it yet.
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboThread = (threadId: string): UseTamboThreadReturn => {
  const { handle } = useTamboContext("useTamboThread")
  const threadState = useTamboSelector(
    useCallback((state: ClientState) => getThreadState(state, threadId), [threadId])
  )
  const known = threadState !== undefined
  const query = useQuery(
    known || isLocalThreadId(threadId) ? undefined : threadId,
    () => handle.client().fetchThread(threadId)
  )
  const status = known ? "success" : query.status === "success" ? "pending" : query.status
  return {
    thread: threadState?.thread,
    data: threadState?.thread,
    streamingState: threadState?.streaming,
    status,
    isPending: status === "pending",
    isSuccess: status === "success",
    isLoading: !known && query.isLoading,
    isFetching: query.isFetching,
    isError: query.isError,
    error: query.error,
    refetch: useCallback(() => {
      handle.client().fetchThread(threadId).catch(() => undefined)
    }, [handle, threadId])
  }
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
 * What `useTamboThreadList()` returns.
 *
 * @since 0.1.0
 * @category Models
 */
export interface UseTamboThreadListReturn extends Omit<QueryState<ReadonlyArray<TamboThread>>, "data"> {
  /** The user's threads, newest first, without their messages (empty while loading). */
  readonly threads: ReadonlyArray<TamboThread>
  readonly data: ReadonlyArray<TamboThread> | undefined
  /** Whether the API has more threads after these (false while loading). */
  readonly hasMore: boolean
  /** The `cursor` option that reads the next page, when there is one. */
  readonly nextCursor: string | undefined
}

const NO_THREADS: ReadonlyArray<TamboThread> = []

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
export const useTamboThreadList = (options: UseTamboThreadListOptions = {}): UseTamboThreadListReturn => {
  const { handle } = useTamboContext("useTamboThreadList")
  const { cursor, enabled = true, limit } = options
  const known = useTamboSelector(selectKnownThreads)
  const query = useQuery(
    enabled ? JSON.stringify([limit ?? null, cursor ?? null, known]) : undefined,
    () => handle.client().listThreadsPage({ cursor, ...(limit === undefined ? {} : { limit }) }),
    { keepData: true }
  )
  const page = query.data
  return {
    ...query,
    data: page?.threads,
    threads: page?.threads ?? NO_THREADS,
    hasMore: page?.hasMore ?? false,
    nextCursor: page?.nextCursor
  }
}
