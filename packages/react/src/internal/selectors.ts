import type { ClientState } from "@tambo-effect/client"

/**
 * The current thread's id, for `useTamboSelector`.
 *
 * @since 0.2.0
 * @category Internal
 */
export const selectCurrentThreadId = (state: ClientState): string => state.currentThreadId
