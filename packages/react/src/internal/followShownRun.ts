import { ApiError, AuthError, ConfigError, isAbortError } from "@tambo-effect/client"
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

/** A status the API answers again however often it is asked: a 4xx but a timeout or a rate limit. */
const refusedForGood = (status: number | undefined): boolean =>
  status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429

/**
 * Whether a failed read would fail again as long as nothing else changes: the API refused the
 * credentials or the thread (a 401, a 403 for a thread the store keeps), the request was invalid,
 * or the client is gone. A network error, a 5xx, a timeout or a rate limit may pass next time.
 */
const failsAgain = (error: unknown): boolean =>
  isAbortError(error) || error instanceof ConfigError ||
  (error instanceof ApiError && refusedForGood(error.status)) ||
  (error instanceof AuthError && (error.reason !== "ExchangeFailed" || refusedForGood(error.status)))

/**
 * While a read of the current thread shows another client's run on it, reads the thread again
 * until a read shows it idle: after a second, then each time twice as long, up to eight seconds.
 * What that run shows (`isIdle`, its component streaming) would otherwise stay until something
 * else reads the thread. Not while the page is hidden, nor while a run of this client is on the
 * thread (its own end reads it). A read that failed for a reason asking again does not change
 * (a 4xx but a timeout or a rate limit: the API refused the credentials or the thread) stops
 * the reads until the thread changes in the store, the credentials change (a new user token) or
 * the page shows again, and then they start over; after a network error, a timeout, a rate
 * limit or a 5xx they go on, each wait as long as it would have been. A thread the API no longer
 * has leaves the store at the read that finds it gone, and the reads with it. There is no bound
 * in time: the API cancels a run whose connection closed, so a run it shows active is going on.
 *
 * @since 0.2.0
 * @category Internal
 */
export const useFollowShownRun = (handle: ClientHandle): void => {
  const shownOn = useSyncExternalStore(handle.subscribe, () => otherRunShownOn(handle), () => undefined)
  useEffect(() => {
    // A client the app gave and destroyed reads nothing more: the next one is a new handle.
    if (shownOn === undefined || handle.liveClient() === undefined) return
    let wait = FIRST_WAIT_MS
    let timer: ReturnType<typeof setTimeout> | undefined
    let stopped = false
    /** The thread as the store held it when a read failed for good: the reads wait for it to change. */
    let refusedWith: object | undefined
    const threadNow = () => handle.getState().threadMap[shownOn]
    const next = () => {
      if (!stopped) timer = setTimeout(read, wait)
    }
    const read = () => {
      const hidden = typeof document !== "undefined" && document.visibilityState === "hidden"
      if (hidden || handle.hasActiveRun(shownOn)) return next()
      wait = Math.min(wait * 2, LONGEST_WAIT_MS)
      const client = handle.liveClient()
      if (client === undefined) return next()
      const before = threadNow()
      client.fetchThread(shownOn).then(next, (error: unknown) => {
        if (!failsAgain(error)) return next()
        // Changed while this read was in flight: the read that changed it may have passed.
        if (threadNow() !== before) return next()
        refusedWith = before
      })
    }
    const startOver = () => {
      if (refusedWith === undefined) return
      refusedWith = undefined
      wait = FIRST_WAIT_MS
      next()
    }
    const unsubscribeState = handle.subscribe(() => {
      if (refusedWith !== undefined && threadNow() !== refusedWith) startOver()
    })
    const unsubscribeAuth = handle.subscribeToAuthState(startOver)
    const onVisible = () => {
      if (document.visibilityState === "visible") startOver()
    }
    if (typeof document !== "undefined") document.addEventListener("visibilitychange", onVisible)
    next()
    return () => {
      stopped = true
      clearTimeout(timer)
      unsubscribeState()
      unsubscribeAuth()
      if (typeof document !== "undefined") document.removeEventListener("visibilitychange", onVisible)
    }
  }, [handle, shownOn])
}
