/**
 * A chat over `@tambo-effect/react`: thread list, messages with streaming
 * text, tool calls and generative components, an input, a cancel button
 * and suggestions. Every piece reads only the slice it shows.
 */
import {
  isAbortError,
  messageKey,
  type ReactTamboThreadMessage,
  TamboProvider,
  useTambo,
  useTamboClient,
  useTamboSelector,
  useTamboSuggestions,
  useTamboThreadInput,
  useTamboThreadList
} from "@tambo-effect/react"
import { type FormEvent, memo, useEffect, useRef } from "react"
import { getWeather, WeatherCard } from "./weather.js"

/** Where the API is: the query string (`?tamboUrl=…&apiKey=…&userKey=…`), else the local test API. */
export interface Connection {
  readonly tamboUrl: string
  readonly apiKey: string
  readonly userKey: string | undefined
  readonly userToken: string | undefined
}

export const connectionFrom = (search: string): Connection => {
  const params = new URLSearchParams(search)
  const userToken = params.get("userToken") ?? undefined
  return {
    tamboUrl: params.get("tamboUrl") ?? "http://127.0.0.1:8787",
    apiKey: params.get("apiKey") ?? "test-api-key",
    userToken,
    userKey: params.get("userKey") ?? (userToken === undefined ? "react-chat-user" : undefined)
  }
}

const tools = [getWeather]
const components = [WeatherCard]

export function App({ connection }: { readonly connection: Connection }) {
  return (
    <TamboProvider
      apiKey={connection.apiKey}
      tamboUrl={connection.tamboUrl}
      userKey={connection.userKey}
      userToken={connection.userToken}
      tools={tools}
      components={components}
    >
      <div className="layout">
        <ThreadList />
        <main className="chat">
          <Status />
          <Messages />
          <Suggestions />
          <Composer />
        </main>
      </div>
    </TamboProvider>
  )
}

// -----------------------------------------------------------------------------
// Threads
// -----------------------------------------------------------------------------

/** The current thread's id and run status: slices that do not change while text streams. */
const useCurrentThreadId = () => useTamboSelector((state) => state.currentThreadId)
const useRunStatus = () =>
  useTamboSelector((state) => state.threadMap[state.currentThreadId]?.streaming.status ?? "idle")

function ThreadList() {
  const { threads, isLoading, error } = useTamboThreadList({ limit: 20 })
  const currentThreadId = useCurrentThreadId()
  const client = useTamboClient()
  return (
    <nav className="threads" data-testid="thread-list">
      <button type="button" data-testid="new-thread" onClick={() => client.startNewThread()}>
        + New thread
      </button>
      {isLoading ? <p className="muted">Loading…</p> : null}
      {error === undefined ? null : <p className="error">{error.message}</p>}
      <ul>
        {threads.map((thread) => (
          <li key={thread.id}>
            <button
              type="button"
              data-testid="thread-item"
              data-thread-id={thread.id}
              aria-current={thread.id === currentThreadId}
              onClick={() => void client.switchThread(thread.id).catch(() => undefined)}
            >
              {thread.name !== undefined && thread.name !== "" ? thread.name : "Untitled thread"}
              <span className="muted"> {new Date(thread.createdAt).toLocaleTimeString()}</span>
            </button>
          </li>
        ))}
      </ul>
    </nav>
  )
}

// -----------------------------------------------------------------------------
// Messages
// -----------------------------------------------------------------------------

/** Only the run status of the current thread: does not re-render while text streams. */
function Status() {
  const status = useRunStatus()
  const error = useTamboSelector((state) => state.threadMap[state.currentThreadId]?.streaming.error?.message)
  return (
    <div className="status" data-testid="status" data-status={status}>
      {status}
      {error === undefined ? null : <span className="error"> — {error}</span>}
    </div>
  )
}

function Messages() {
  const { messages, currentThreadId } = useTambo()
  const end = useRef<HTMLDivElement>(null)
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: "end" })
  }, [messages])
  return (
    <section className="messages" data-testid="messages" data-thread-id={currentThreadId}>
      {messages.length === 0 ? <p className="muted">Ask about the weather, e.g. “What is the weather in Paris?”</p> : null}
      {messages.map((message) => <Message key={messageKey(message)} message={message} />)}
      <div ref={end} />
    </section>
  )
}

/** Re-renders only when its message changed (messages keep their identity otherwise). */
const Message = memo(function Message({ message }: { readonly message: ReactTamboThreadMessage }) {
  const isToolResult = message.content.length > 0 && message.content.every((block) => block.type === "tool_result")
  if (isToolResult) return null
  return (
    <article className={`message ${message.role}`} data-testid="message" data-role={message.role}>
      {message.content.map((block, index) => {
        switch (block.type) {
          case "text":
            return <p key={index} data-testid="message-text">{block.text}</p>
          case "tool_use":
            return (
              <p key={block.id} className="tool" data-testid="tool-call" data-completed={String(block.hasCompleted === true)}>
                🔧 {block.statusMessage}
              </p>
            )
          case "component":
            return <div key={block.id} className="component">{block.renderedComponent}</div>
          default:
            return null
        }
      })}
    </article>
  )
})

// -----------------------------------------------------------------------------
// Input
// -----------------------------------------------------------------------------

function Suggestions() {
  const { suggestions, accept } = useTamboSuggestions({ maxSuggestions: 3 })
  if (suggestions.length === 0) return null
  return (
    <div className="suggestions">
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
}

function Composer() {
  const { value, setValue, submit, isPending, error } = useTamboThreadInput()
  const status = useRunStatus()
  const client = useTamboClient()
  const onSubmit = (event: FormEvent) => {
    event.preventDefault()
    submit().catch((failure: unknown) => {
      if (!isAbortError(failure)) console.warn("send failed", failure)
    })
  }
  const running = isPending || status !== "idle"
  return (
    <form className="composer" onSubmit={onSubmit}>
      <input
        data-testid="message-input"
        placeholder="Message"
        value={value}
        onChange={(event) => setValue(event.target.value)}
        autoFocus
      />
      <button type="submit" data-testid="send" disabled={running || value.trim() === ""}>
        Send
      </button>
      <button type="button" data-testid="cancel" disabled={!running} onClick={() => void client.cancelRun().catch(() => undefined)}>
        Cancel
      </button>
      {error === undefined ? null : <p className="error" data-testid="input-error">{error.message}</p>}
    </form>
  )
}
