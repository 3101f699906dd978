import type { ClientState } from "@tambo-effect/client"
import { useCallback } from "react"
import { useTamboSelector } from "../useTamboSelector.js"
import type { ClientHandle } from "./clientHandle.js"

/**
 * The id under which the state holds the thread a hook was given (default: the current one), kept
 * up to date: an app may hold a new conversation's local thread id the state showed while its first
 * run waited for the server, and once the server named that thread the id is that thread
 * (`ClientHandle.threadIdOf`), as in every call of the client about a thread.
 *
 * @since 0.2.0
 * @category Internal
 */
export const useThreadId = (handle: ClientHandle, threadId: string | undefined): string =>
  useTamboSelector(
    useCallback((state: ClientState) => handle.threadIdOf(threadId ?? state.currentThreadId), [handle, threadId])
  )
