import { useEffect, useRef } from "react"

/**
 * Calls `onVisible` each time the page becomes visible again (another tab
 * was in front), while `active`. The latest `onVisible` is called.
 *
 * @since 0.2.0
 * @category Internal
 */
export const useOnPageVisible = (active: boolean, onVisible: () => void): void => {
  const latest = useRef(onVisible)
  latest.current = onVisible
  useEffect(() => {
    if (!active || typeof document === "undefined") return
    const listener = () => {
      if (document.visibilityState === "visible") latest.current()
    }
    document.addEventListener("visibilitychange", listener)
    return () => document.removeEventListener("visibilitychange", listener)
  }, [active])
}

/**
 * Calls `tick` every `ms` while mounted; nothing while `ms` is `undefined`.
 * The latest `tick` is called.
 *
 * @since 0.2.0
 * @category Internal
 */
export const useEvery = (ms: number | undefined, tick: () => void): void => {
  const latest = useRef(tick)
  latest.current = tick
  useEffect(() => {
    if (ms === undefined) return
    const timer = setInterval(() => latest.current(), ms)
    return () => clearInterval(timer)
  }, [ms])
}
