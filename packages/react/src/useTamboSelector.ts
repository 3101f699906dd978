/**
 * `useTamboSelector`: a slice of the client's state, re-rendering only when
 * the slice changed.
 *
 * @since 0.1.0
 */
import type { ClientState } from "@tambo-effect/client"
import { useDebugValue, useEffect, useMemo, useRef, useSyncExternalStore } from "react"
import { useTamboContext } from "./internal/context.js"

const NONE: unique symbol = Symbol("none")

/**
 * Reads a slice of the client's state (`ClientState`: `threadMap` and
 * `currentThreadId`). The component re-renders only when the selected value
 * changed (`Object.is` by default, or `isEqual`), and at most once per
 * animation frame while a run streams. Threads and messages that did not
 * change keep their identity, so selecting them is cheap and stable.
 *
 * Works during server rendering (it sees the client's state, or the initial
 * state when no client exists yet).
 *
 * @example
 * ```tsx
 * const status = useTamboSelector((state) => state.threadMap[state.currentThreadId]?.streaming.status ?? "idle")
 * ```
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboSelector = <A>(
  selector: (state: ClientState) => A,
  isEqual: (previous: A, next: A) => boolean = Object.is
): A => {
  const { handle } = useTamboContext("useTamboSelector")
  const rendered = useRef<A | typeof NONE>(NONE)
  const getSelection = useMemo(() => {
    let memo: { readonly state: ClientState; readonly selection: A } | undefined
    return (): A => {
      const state = handle.getState()
      if (memo !== undefined && memo.state === state) return memo.selection
      const next = selector(state)
      const previous = memo !== undefined ? memo.selection : rendered.current
      const selection = previous !== NONE && isEqual(previous, next) ? previous : next
      memo = { state, selection }
      return selection
    }
  }, [handle, selector, isEqual])
  const value = useSyncExternalStore(handle.subscribe, getSelection, getSelection)
  useEffect(() => {
    rendered.current = value
  }, [value])
  useDebugValue(value)
  return value
}

/**
 * Equality of two arrays or plain objects by their entries (`Object.is`), for
 * selectors that build a new array or object each time.
 *
 * @since 0.1.0
 * @category Utils
 */
export const shallowEqual = <A>(a: A, b: A): boolean => {
  if (Object.is(a, b)) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const keysA = Object.keys(a)
  const keysB = Object.keys(b)
  if (keysA.length !== keysB.length) return false
  const recordA = a as Record<string, unknown>
  const recordB = b as Record<string, unknown>
  return keysA.every((key) => Object.hasOwn(recordB, key) && Object.is(recordA[key], recordB[key]))
}
