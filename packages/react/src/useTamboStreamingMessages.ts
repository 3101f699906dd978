/**
 * `useTamboStreamingMessages`: a thread's messages, with an update strategy
 * deciding when streamed text reaches the screen.
 *
 * @since 0.1.0
 */
import type { SnapshotStrategy, TamboThreadMessage } from "@tambo-effect/client"
import { getThreadState } from "@tambo-effect/core/ClientState"
import { useCallback, useMemo, useSyncExternalStore } from "react"
import { useTamboContext } from "./internal/context.js"
import { PublishedRuns } from "./internal/publishedRuns.js"
import { strategyKey } from "./internal/strategyKey.js"
import { useThreadId } from "./internal/useThreadId.js"
import type { ReactTamboThreadMessage } from "./types.js"

/**
 * Options of {@link useTamboStreamingMessages}.
 *
 * @since 0.1.0
 * @category Models
 */
export interface UseTamboStreamingMessagesOptions {
  /**
   * When a streaming run's snapshots are shown: a `SnapshotStrategy`
   * (`SnapshotStrategy.wordBoundary`, `SnapshotStrategy.throttle("100 millis")`,
   * `SnapshotStrategy.any(...)`, ...). Default: every change, at most once
   * per animation frame (as `useTambo().messages`). A strategy built while
   * rendering is fine: strategies are compared by value (a `custom` one by
   * its function, so define that outside the component).
   */
  readonly strategy?: SnapshotStrategy.Strategy | undefined
  /**
   * The thread to show. Default: the current one. A new conversation's local
   * thread id is, once the server named that thread, the thread it became.
   */
  readonly threadId?: string | undefined
}

/**
 * What {@link useTamboStreamingMessages} returns.
 *
 * @since 0.1.0
 * @category Models
 */
export interface UseTamboStreamingMessagesReturn {
  /** The thread shown (the one the server named, for a new conversation's local thread id it named). */
  readonly threadId: string
  /** Its messages, as `useTambo().messages` (component blocks carry `renderedComponent`). */
  readonly messages: ReadonlyArray<ReactTamboThreadMessage>
}

const NO_MESSAGES: ReadonlyArray<TamboThreadMessage> = []

/**
 * A thread's messages for a transcript, updated as an update strategy
 * decides while a run of the provider's client streams on it.
 *
 * While such a run streams, the messages are the snapshots the strategy
 * publishes (core's `SnapshotStrategy.snapshots` over the run's events):
 * the run's first snapshot (its first event), then e.g. one per word, or at
 * most one per 100 ms, and always its final thread. The component
 * re-renders only then, however many tokens arrive: use it for the
 * transcript, and `useTambo()` or `useTamboSelector` for what must stay
 * live (status, a stop button). Otherwise the messages are the client's
 * state, as with `useTambo().messages`. The provider's `updates` still
 * batches what a strategy publishes per animation frame.
 *
 * @example
 * ```tsx
 * import { SnapshotStrategy, useTamboStreamingMessages } from "@tambo-effect/react"
 *
 * function Transcript() {
 *   // Whole words only, and at least every 150 ms while text flows.
 *   const { messages } = useTamboStreamingMessages({
 *     strategy: SnapshotStrategy.any(SnapshotStrategy.wordBoundary, SnapshotStrategy.throttle("150 millis"))
 *   })
 *   return <>{messages.map((message) => <Message key={messageKey(message)} message={message} />)}</>
 * }
 * ```
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboStreamingMessages = (
  options: UseTamboStreamingMessagesOptions = {}
): UseTamboStreamingMessagesReturn => {
  const { handle, renderer } = useTamboContext("useTamboStreamingMessages")
  const threadId = useThreadId(handle, options.threadId)
  const { strategy } = options
  const key = strategy === undefined ? undefined : strategyKey(strategy)
  // One observer per strategy value; `strategy` is read when the key changes.
  const published = useMemo(
    () => (strategy === undefined ? undefined : new PublishedRuns(handle, strategy)),
    [handle, key]
  )
  const subscribe = useMemo(
    () =>
      published === undefined ? handle.subscribe : (listener: () => void) => {
        const unsubscribeState = handle.subscribe(listener)
        const unsubscribePublished = published.subscribe(listener)
        return () => {
          unsubscribePublished()
          unsubscribeState()
        }
      },
    [handle, published]
  )
  // While a run is held, state changes select the same array: no re-render.
  const getMessages = useCallback(
    (): ReadonlyArray<TamboThreadMessage> =>
      (published?.threadFor(threadId) ?? getThreadState(handle.getState(), threadId)?.thread)?.messages ?? NO_MESSAGES,
    [handle, published, threadId]
  )
  const raw = useSyncExternalStore(subscribe, getMessages, getMessages)
  const messages = useMemo(() => renderer.render(raw, threadId), [renderer, raw, threadId])
  return useMemo(() => ({ threadId, messages }), [threadId, messages])
}
