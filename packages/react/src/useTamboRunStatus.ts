/**
 * `useTamboRunStatus`: whether a thread's run is idle, waiting or
 * streaming, as a UI should show it.
 *
 * @since 0.2.0
 */
import type { ClientState, RunStatus } from "@tambo-effect/client"
import { getThreadState } from "@tambo-effect/core/ClientState"
import { useCallback, useSyncExternalStore } from "react"
import type { ClientHandle } from "./internal/clientHandle.js"
import { useTamboContext } from "./internal/context.js"
import { shownRunStatus } from "./internal/selectors.js"

/**
 * The status of a thread's run for a UI: the thread's streaming status (or,
 * without a run of this client on it, the status of another client's run
 * that a read of the thread found), except that a thread with a run of this
 * client in flight is never `idle`. Each step of a run ends with the
 * server's `RUN_FINISHED`, which leaves the thread `idle` in the state (as
 * the server has it) while the client runs the step's tools and sends their
 * results; the run goes on, so that is `waiting`.
 *
 * @since 0.2.0
 * @category Internal
 */
export const runStatusOf = (handle: ClientHandle, state: ClientState, threadId: string): RunStatus => {
  const status = shownRunStatus(getThreadState(state, threadId))
  return status === "idle" && handle.hasActiveRun(threadId) ? "waiting" : status
}

/**
 * The run status of a thread (default: the current one) as a UI should
 * show it: `streaming` while the reply streams in, `waiting` while the run
 * waits (for the server's first event, for tools that run between two
 * steps, for approvals), `idle` only once no run of the client is in flight
 * on it. A new conversation's local thread id is, once the server named that
 * thread, the thread it became. A run of another client (another tab) on
 * the thread shows as the last read of the thread found it
 * (`thread.status`: see `fetchThread`).
 * Re-renders only when the status changed.
 *
 * `useTambo()`'s `isIdle`, `isWaiting` and `isStreaming` follow it.
 *
 * @example
 * ```tsx
 * function Status() {
 *   const status = useTamboRunStatus()
 *   return <div className="status">{status}</div>
 * }
 * ```
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useTamboRunStatus = (threadId?: string): RunStatus => {
  const { handle } = useTamboContext("useTamboRunStatus")
  const read = useCallback(() => {
    const state = handle.getState()
    return runStatusOf(handle, state, handle.threadIdOf(threadId ?? state.currentThreadId))
  }, [handle, threadId])
  return useSyncExternalStore(handle.subscribe, read, read)
}
