/**
 * Suggested next messages, shown under the reply they are for: the hook
 * offers them only for the thread's latest message, once it is a text reply
 * the server stored (never a tool call or its result) and no run is going.
 */
import { type ClientState, useTamboSelector, useTamboSuggestions } from "@tambo-effect/react"
import { memo } from "react"

const selectLatestMessageId = (state: ClientState) =>
  state.threadMap[state.currentThreadId]?.thread.messages.at(-1)?.id

/** Memoised: the message list around it renders while text streams; this reads its own slices. */
export const Suggestions = memo(function Suggestions() {
  const { suggestions, accept } = useTamboSuggestions({ maxSuggestions: 3 })
  const messageId = useTamboSelector(selectLatestMessageId)
  if (suggestions.length === 0) return null
  return (
    <div className="suggestions" data-testid="suggestions" data-message-id={messageId}>
      {suggestions.map((suggestion) => (
        <button
          key={suggestion.id}
          type="button"
          data-testid="suggestion"
          onClick={() => void accept({ suggestion }).catch(() => undefined)}
        >
          {suggestion.title}
        </button>
      ))}
    </div>
  )
})
