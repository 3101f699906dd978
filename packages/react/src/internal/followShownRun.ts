import { ApiError, AuthError, ConfigError, isAbortError } from "@tambo-effect/client"
import { isLocalThreadId } from "@tambo-effect/core/ClientState"
import { useEffect, useSyncExternalStore } from "react"
import type { ClientHandle } from "./clientHandle.js"

/** The first wait before the thread is read again, and the longest: each wait doubles up to it. */
const FIRST_WAIT_MS = 1_000
const LONGEST_WAIT_MS = 8_000
/** The longest wait after reads that failed in a row: the waits go on doubling up to it. */
const LONGEST_WAIT_AFTER_FAILURES_MS = 30_000
/** The longest `Retry-After` the reads wait for: a server asking for more is asked again then. */
const LONGEST_RETRY_AFTER_MS = 60_000

/**
 * The waits after a read, from `wait`, the one before it: `delay` before the next read, and
 * `wait`, what the one after doubles. A read that passed doubles the wait up to eight seconds
 * (back within it after failures); a failed read doubles it on up to thirty seconds, and a
 * `Retry-After` the API sent (in milliseconds, from seconds or an HTTP date) is the next delay,
 * within a second and a minute.
 *
 * @since 0.2.0
 * @category Internal
 */
export const waitsAfterRead = (
  wait: number,
  read: { readonly _tag: "Passed" } | { readonly _tag: "Failed"; readonly retryAfter?: number | undefined }
): { readonly delay: number; readonly wait: number } => {
  if (read._tag === "Passed") {
    const next = Math.min(wait * 2, LONGEST_WAIT_MS)
    return { delay: next, wait: next }
  }
  const next = Math.min(wait * 2, LONGEST_WAIT_AFTER_FAILURES_MS)
  const delay = read.retryAfter === undefined
    ? next
    : Math.min(Math.max(read.retryAfter, FIRST_WAIT_MS), LONGEST_RETRY_AFTER_MS)
  return { delay, wait: next }
}

const retryAfterOf = (error: unknown): number | undefined =>
  error instanceof ApiError ? error.retryAfter : undefined

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
 * limit or a 5xx they go on, and reads that fail in a row wait longer, on doubling up to thirty
 * seconds, until one passes; a `Retry-After` the API answered with (a 429, a 503) is the next
 * wait, at most a minute (see {@link waitsAfterRead}). A thread the API no longer
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
    const next = (delay = wait) => {
      if (!stopped) timer = setTimeout(read, delay)
    }
    const after = (outcome: Parameters<typeof waitsAfterRead>[1]) => {
      const waits = waitsAfterRead(wait, outcome)
      wait = waits.wait
      next(waits.delay)
    }
    const read = () => {
      const hidden = typeof document !== "undefined" && document.visibilityState === "hidden"
      if (hidden || handle.hasActiveRun(shownOn)) return next()
      const client = handle.liveClient()
      if (client === undefined) return next()
      const before = threadNow()
      client.fetchThread(shownOn).then(() => after({ _tag: "Passed" }), (error: unknown) => {
        if (!failsAgain(error)) return after({ _tag: "Failed", retryAfter: retryAfterOf(error) })
        // Changed while this read was in flight: the read that changed it may have passed.
        if (threadNow() !== before) return after({ _tag: "Passed" })
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
