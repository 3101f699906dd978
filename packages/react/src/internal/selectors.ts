import type { ClientState, RunStatus, ThreadState } from "@tambo-effect/client"

/**
 * The current thread's id, for `useTamboSelector`.
 *
 * @since 0.2.0
 * @category Internal
 */
export const selectCurrentThreadId = (state: ClientState): string => state.currentThreadId

/**
 * The status of a thread's run as the state shows it: the run of this client
 * on it (`streaming`), else what the last read of the thread found on the
 * server (`thread.status`): another client's run (another tab's).
 *
 * @since 0.2.0
 * @category Internal
 */
export const shownRunStatus = (thread: ThreadState | undefined): RunStatus => {
  if (thread === undefined) return "idle"
  return thread.streaming.status === "idle" ? thread.thread.status : thread.streaming.status
}
