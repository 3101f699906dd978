import { isLocalThreadId } from "@tambo-effect/core/ClientState"
import { useEffect, useSyncExternalStore } from "react"
import type { ClientHandle } from "./clientHandle.js"

/** The first wait before the thread is read again, and the longest: each wait doubles up to it. */
const FIRST_WAIT_MS = 1_000
const LONGEST_WAIT_MS = 8_000

/**
 * The current thread, when a read of it shows a run of another client (another tab) on it: the
 * thread's `status` is not idle and no run of this client is on it.
 */
const otherRunShownOn = (handle: ClientHandle): string | undefined => {
  const state = handle.getState()
  const threadId = state.currentThreadId
  const thread = state.threadMap[threadId]
  if (thread === undefined || isLocalThreadId(threadId)) return undefined
  return thread.streaming.status === "idle" && thread.thread.status !== "idle" ? threadId : undefined
}

/**
 * While a read of the current thread shows another client's run on it, reads the thread again
 * until a read shows it idle: after a second, then each time twice as long, up to eight seconds.
 * What that run shows (`isIdle`, its component streaming) would otherwise stay until something
 * else reads the thread. Not while the page is hidden, nor while a run of this client is on the
 * thread (its own end reads it).
 *
 * @since 0.2.0
 * @category Internal
 */
export const useFollowShownRun = (handle: ClientHandle): void => {
  const shownOn = useSyncExternalStore(handle.subscribe, () => otherRunShownOn(handle), () => undefined)
  useEffect(() => {
    if (shownOn === undefined) return
    let wait = FIRST_WAIT_MS
    let timer: ReturnType<typeof setTimeout> | undefined
    let stopped = false
    const next = () => {
      if (!stopped) timer = setTimeout(read, wait)
    }
    const read = () => {
      const hidden = typeof document !== "undefined" && document.visibilityState === "hidden"
      if (hidden || handle.hasActiveRun(shownOn)) return next()
      wait = Math.min(wait * 2, LONGEST_WAIT_MS)
      const client = handle.liveClient()
      if (client === undefined) return next()
      client.fetchThread(shownOn).then(next, next)
    }
    next()
    return () => {
      stopped = true
      clearTimeout(timer)
    }
  }, [handle, shownOn])
}
