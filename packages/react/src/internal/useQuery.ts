import { useCallback, useEffect, useRef, useState } from "react"
import type { QueryState } from "../types.js"

interface Slot<A> {
  readonly key: string | undefined
  readonly data: A | undefined
  readonly error: Error | undefined
  readonly fetching: boolean
}

const toError = (u: unknown): Error => (u instanceof Error ? u : new Error(String(u)))

/**
 * A minimal query: reads when `key` changes (nothing while it is
 * `undefined`), ignores answers that arrive after a newer read started or
 * after unmount. With `keepData`, the last data stays while the next key
 * loads (a refresh); without, a new key starts empty.
 *
 * @since 0.1.0
 * @category Internal
 */
export const useQuery = <A>(
  key: string | undefined,
  read: () => Promise<A>,
  options: { readonly keepData?: boolean } = {}
): QueryState<A> => {
  const [slot, setSlot] = useState<Slot<A>>({ key: undefined, data: undefined, error: undefined, fetching: false })
  const [nonce, setNonce] = useState(0)
  const readRef = useRef(read)
  readRef.current = read
  const keepData = options.keepData === true

  useEffect(() => {
    if (key === undefined) return
    let current = true
    setSlot((previous) => ({
      key,
      data: keepData || previous.key === key ? previous.data : undefined,
      error: undefined,
      fetching: true
    }))
    readRef.current().then(
      (data) => {
        if (current) setSlot({ key, data, error: undefined, fetching: false })
      },
      (error: unknown) => {
        if (current) setSlot((previous) => ({ key, data: previous.data, error: toError(error), fetching: false }))
      }
    )
    return () => {
      current = false
    }
  }, [key, nonce, keepData])

  const refetch = useCallback(() => setNonce((n) => n + 1), [])
  // Before the effect ran for a new key, what is held belongs to the old one.
  const fresh = slot.key === key
  const data = fresh || keepData ? slot.data : undefined
  const error = fresh ? slot.error : undefined
  const isFetching = key !== undefined && (!fresh || slot.fetching)
  return {
    data,
    error,
    isLoading: isFetching && data === undefined,
    isFetching,
    isError: error !== undefined,
    isSuccess: fresh && !slot.fetching && error === undefined && slot.data !== undefined,
    refetch
  }
}
