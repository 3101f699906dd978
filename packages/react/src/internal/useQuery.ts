import { useCallback, useEffect, useRef, useState } from "react"
import type { QueryState } from "../types.js"
import { useEvery, useOnPageVisible } from "./pageEvents.js"

interface Slot<A> {
  /** Whose data it is: the client it was read from. */
  readonly scope: unknown
  readonly key: string | undefined
  readonly data: A | undefined
  readonly error: Error | undefined
  readonly fetching: boolean
  /** When `data` arrived, `0` before any. */
  readonly dataUpdatedAt: number
  /** When the last failure arrived, `0` before any. */
  readonly errorUpdatedAt: number
  /** Failures in a row since the last success. */
  readonly failureCount: number
  /** The last of those failures. */
  readonly failureReason: Error | null
}

const EMPTY: Slot<never> = {
  scope: undefined,
  key: undefined,
  data: undefined,
  error: undefined,
  fetching: false,
  dataUpdatedAt: 0,
  errorUpdatedAt: 0,
  failureCount: 0,
  failureReason: null
}

const toError = (u: unknown): Error => (u instanceof Error ? u : new Error(String(u)))

const wake = (waiters: Array<() => void>) => {
  for (const resolve of waiters.splice(0)) resolve()
}

/**
 * A minimal query: reads when `key` or `scope` changes (nothing while the
 * key is `undefined`), ignores answers that arrive after a newer read
 * started or after unmount. `scope` is whose data it is (the client it is
 * read from): data never outlives it. With `keepData`, the last data stays
 * while the next key of the same scope loads (a refresh); without, a new
 * key starts empty. `refetch` reads again and resolves once a read
 * answered (this one or a newer one), at once while there is nothing to
 * read, as TanStack Query's awaited `refetch` gives the new data. With
 * `refetchOnFocusAfterMs`, a page that becomes visible again reads again if
 * its data is older than that (another tab may have changed it), as
 * TanStack Query does on focus; with `refetchIntervalMs`, it reads again
 * that often while mounted. What it returns has the fields of a
 * TanStack Query result that apps read most (`@tambo-ai/react`'s hooks
 * return those).
 *
 * @since 0.1.0
 * @category Internal
 */
export const useQuery = <A>(
  scope: object,
  key: string | undefined,
  read: () => Promise<A>,
  options: {
    readonly keepData?: boolean
    readonly refetchOnFocusAfterMs?: number | undefined
    readonly refetchIntervalMs?: number | undefined
    /**
     * Instead of one `read`: a source of values for the key (each one the
     * data, as it arrives) and of a failure, stopped by the function it
     * returns.
     */
    readonly watch?: ((onData: (data: A) => void, onError: (error: unknown) => void) => () => void) | undefined
  } = {}
): QueryState<A> => {
  const [slot, setSlot] = useState<Slot<A>>(EMPTY)
  const readRef = useRef(read)
  readRef.current = read
  const watchRef = useRef(options.watch)
  watchRef.current = options.watch
  const keepData = options.keepData === true
  /** The `refetch` calls waiting for a read to answer: the live read's answer wakes them all. */
  const waiting = useRef<Array<() => void>>([])
  /** Starts a read for the current key and scope (`undefined` while there is none); the last one started is live. */
  const startRead = useRef<(() => void) | undefined>(undefined)

  useEffect(() => {
    if (key === undefined) return wake(waiting.current)
    let live: object | undefined
    let stopWatch: (() => void) | undefined
    const start = () => {
      const read = {}
      live = read
      stopWatch?.()
      stopWatch = undefined
      setSlot((previous) => {
        const sameScope = previous.scope === scope
        const same = sameScope && previous.key === key
        const data = (keepData && sameScope) || same ? previous.data : undefined
        return {
          scope,
          key,
          data,
          error: undefined,
          fetching: true,
          dataUpdatedAt: data === undefined ? 0 : previous.dataUpdatedAt,
          errorUpdatedAt: same ? previous.errorUpdatedAt : 0,
          failureCount: same ? previous.failureCount : 0,
          failureReason: same ? previous.failureReason : null
        }
      })
      const onData = (data: A) => {
        if (live !== read) return
        setSlot((previous) => ({
          scope,
          key,
          data,
          error: undefined,
          fetching: false,
          dataUpdatedAt: Date.now(),
          errorUpdatedAt: previous.errorUpdatedAt,
          failureCount: 0,
          failureReason: null
        }))
        wake(waiting.current)
      }
      const onError = (error: unknown) => {
        if (live !== read) return
        setSlot((previous) => {
          const failure = toError(error)
          return {
            ...previous,
            scope,
            key,
            error: failure,
            fetching: false,
            errorUpdatedAt: Date.now(),
            failureCount: previous.failureCount + 1,
            failureReason: failure
          }
        })
        wake(waiting.current)
      }
      const watch = watchRef.current
      if (watch === undefined) readRef.current().then(onData, onError)
      else stopWatch = watch(onData, onError)
    }
    startRead.current = start
    start()
    return () => {
      live = undefined
      stopWatch?.()
      if (startRead.current === start) startRead.current = undefined
    }
  }, [scope, key, keepData])
  // Unmounted: nothing will answer.
  useEffect(() => () => wake(waiting.current), [])

  // Started here, not by a render: awaited inside React's `act`, a read a render would start never would.
  const refetch = useCallback(() =>
    new Promise<void>((resolve) => {
      const start = startRead.current
      if (start === undefined) return resolve()
      waiting.current.push(resolve)
      start()
    }), [])

  const staleAfter = options.refetchOnFocusAfterMs
  const slotRef = useRef(slot)
  slotRef.current = slot
  useOnPageVisible(staleAfter !== undefined && key !== undefined, () => {
    const held = slotRef.current
    if (held.key !== key || held.fetching) return
    if (Date.now() - Math.max(held.dataUpdatedAt, held.errorUpdatedAt) >= staleAfter!) refetch()
  })
  useEvery(key === undefined ? undefined : options.refetchIntervalMs, () => {
    if (!slotRef.current.fetching) refetch()
  })
  // Before the effect ran for a new key or scope, what is held belongs to the old one.
  const sameScope = slot.scope === scope
  const fresh = sameScope && slot.key === key
  const data = fresh || (keepData && sameScope) ? slot.data : undefined
  const error = fresh ? slot.error : undefined
  const isFetching = key !== undefined && (!fresh || slot.fetching)
  const status = error !== undefined ? "error" : data !== undefined ? "success" : "pending"
  return {
    data,
    error,
    status,
    isPending: status === "pending",
    isLoading: isFetching && data === undefined,
    isFetching,
    fetchStatus: isFetching ? "fetching" : "idle",
    isRefetching: isFetching && status !== "pending",
    isError: status === "error",
    isLoadingError: status === "error" && data === undefined,
    isRefetchError: status === "error" && data !== undefined,
    isSuccess: status === "success",
    isFetched: fresh && (slot.dataUpdatedAt > 0 || slot.errorUpdatedAt > 0),
    isEnabled: key !== undefined,
    dataUpdatedAt: data === undefined ? 0 : slot.dataUpdatedAt,
    errorUpdatedAt: fresh ? slot.errorUpdatedAt : 0,
    failureCount: fresh ? slot.failureCount : 0,
    failureReason: fresh ? slot.failureReason : null,
    refetch
  }
}
