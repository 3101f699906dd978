/**
 * A chat over `@tambo-effect/react`: thread list, messages with streaming
 * text, tool calls and generative components, an input with a voice
 * button, a cancel button and suggestions. Every piece reads only the
 * slice it shows. With an MCP server: its prompts in a `/` menu, its
 * resources in an `@` picker, and a form for its elicitations.
 *
 * With `?agentUrl=…` it talks to that AG-UI agent instead of the Tambo API
 * (`<TamboProvider agent={{ url }}>`): the thread list shows the threads of
 * this page, and what only Tambo offers (suggestions, voice, MCP) is hidden.
 */
import {
  type ClientState,
  isAbortError,
  mcpOAuthRedirect,
  messageKey,
  PLACEHOLDER_THREAD_ID,
  type ReactTamboThreadMessage,
  shallowEqual,
  TamboProvider,
  useTambo,
  useTamboClient,
  useTamboMcpElicitation,
  useTamboMcpPromptList,
  useTamboMcpResourceList,
  useTamboRunStatus,
  useTamboSelector,
  useTamboThreadInput,
  useTamboThreadList
} from "@tambo-effect/react"
import { type FormEvent, memo, type ReactNode, useEffect, useMemo, useRef, useState } from "react"
import { contextHelpers } from "./context.js"
import { ImageAttach, isImageBlock, MessageImages } from "./images.js"
import { NotePanel } from "./note.js"
import { Suggestions } from "./Suggestions.js"
import { VoiceButton } from "./VoiceButton.js"
import { getWeather, WeatherCard } from "./weather.js"

/**
 * Where the API is: the query string (`?tamboUrl=…&apiKey=…&userKey=…&mcpUrl=…`), else the local
 * test API and its MCP server (`mcpUrl=` empty: none). `?agentUrl=…`: an AG-UI agent instead.
 */
export interface Connection {
  /** An AG-UI agent's endpoint: then the Tambo options below are not used. */
  readonly agentUrl: string | undefined
  readonly tamboUrl: string
  readonly apiKey: string
  readonly userKey: string | undefined
  readonly userToken: string | undefined
  readonly mcpUrl: string | undefined
}

export const connectionFrom = (search: string): Connection => {
  const params = new URLSearchParams(search)
  const userToken = params.get("userToken") ?? undefined
  return {
    agentUrl: params.get("agentUrl") || undefined,
    tamboUrl: params.get("tamboUrl") ?? "http://127.0.0.1:8787",
    apiKey: params.get("apiKey") ?? "test-api-key",
    userToken,
    userKey: params.get("userKey") ?? (userToken === undefined ? "react-chat-user" : undefined),
    mcpUrl: params.has("mcpUrl") ? params.get("mcpUrl") || undefined : "http://127.0.0.1:8788/mcp"
  }
}

// Run when the page loads, before `main.tsx` reads the address bar: coming back from an MCP
// server's authorization, it takes the code and puts the address the user left back.
const mcpOAuth = mcpOAuthRedirect()

const tools = [getWeather]
const components = [WeatherCard]

export function App({ connection }: { readonly connection: Connection }) {
  const mcpServers = useMemo(
    () => (connection.mcpUrl === undefined ? [] : [{ url: connection.mcpUrl, serverKey: "example", oauth: mcpOAuth }]),
    [connection.mcpUrl]
  )
  const chat = (
    <div className="layout">
      <ThreadList />
      <main className="chat">
        <Status />
        <NotePanel />
        <Messages />
        <Elicitation />
        <Composer />
      </main>
    </div>
  )
  if (connection.agentUrl !== undefined) {
    return (
      <TamboProvider agent={{ url: connection.agentUrl }} tools={tools} components={components} contextHelpers={contextHelpers}>
        {chat}
      </TamboProvider>
    )
  }
  return (
    <TamboProvider
      apiKey={connection.apiKey}
      tamboUrl={connection.tamboUrl}
      userKey={connection.userKey}
      userToken={connection.userToken}
      tools={tools}
      components={components}
      mcpServers={mcpServers}
      contextHelpers={contextHelpers}
    >
      {chat}
    </TamboProvider>
  )
}

/** An AG-UI agent offers runs only: no threads on a server, suggestions, transcription or MCP tokens. */
const useIsAgent = () => useTamboClient().backend === "ag-ui"

// -----------------------------------------------------------------------------
// Threads
// -----------------------------------------------------------------------------

/**
 * The current thread's id and run status: slices that do not change while text streams. The
 * run status stays busy between a tool call and the reply that follows it.
 */
const useCurrentThreadId = () => useTamboSelector((state) => state.currentThreadId)
const useRunStatus = () => useTamboRunStatus()

function ThreadList() {
  return useIsAgent() ? <PageThreadList /> : <ServerThreadList />
}

/**
 * The thread list's frame: on a narrow screen the list is folded away behind a toggle (CSS shows
 * the toggle there only), beside "+ New thread".
 */
function ThreadsNav({ backend, children }: { readonly backend?: "ag-ui"; readonly children: ReactNode }) {
  const client = useTamboClient()
  const [open, setOpen] = useState(false)
  return (
    <nav className="threads" data-testid="thread-list" data-open={String(open)} data-backend={backend}>
      <div className="threads-bar">
        <button
          type="button"
          className="threads-toggle"
          data-testid="threads-toggle"
          aria-expanded={open}
          onClick={() => setOpen((previous) => !previous)}
        >
          ☰ Threads
        </button>
        <button type="button" data-testid="new-thread" onClick={() => client.startNewThread()}>
          + New thread
        </button>
      </div>
      {children}
    </nav>
  )
}

/** The ids of the threads this page holds (an agent's threads live nowhere else), the placeholder left out. */
const selectThreadIds = (state: ClientState) =>
  Object.keys(state.threadMap).filter((id) => id !== PLACEHOLDER_THREAD_ID)

/** Against an AG-UI agent: the threads of this page. */
function PageThreadList() {
  const ids = useTamboSelector(selectThreadIds, shallowEqual)
  const currentThreadId = useCurrentThreadId()
  const client = useTamboClient()
  return (
    <ThreadsNav backend="ag-ui">
      <p className="muted">An AG-UI agent: these threads live in this page.</p>
      <ul>
        {ids.map((id, index) => (
          <li key={id}>
            <button
              type="button"
              data-testid="thread-item"
              data-thread-id={id}
              aria-current={id === currentThreadId}
              onClick={() => void client.switchThread(id).catch(() => undefined)}
            >
              Conversation {index + 1}
            </button>
          </li>
        ))}
      </ul>
    </ThreadsNav>
  )
}

/** Against the Tambo API: the user's threads, from the server. */
function ServerThreadList() {
  const { threads, isLoading, error } = useTamboThreadList({ limit: 20 })
  const currentThreadId = useCurrentThreadId()
  const client = useTamboClient()
  return (
    <ThreadsNav>
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
    </ThreadsNav>
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

/** The id of the current thread's reply its last run was cancelled in: its last message, if the assistant's. */
const useCancelledReplyId = () =>
  useTamboSelector((state) => {
    const thread = state.threadMap[state.currentThreadId]?.thread
    const last = thread?.messages.at(-1)
    return thread?.lastRunCancelled === true && last?.role === "assistant" ? last.id : undefined
  })

function Messages() {
  const { messages, currentThreadId } = useTambo()
  const cancelledId = useCancelledReplyId()
  const isAgent = useIsAgent()
  const end = useRef<HTMLDivElement>(null)
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: "end" })
  }, [messages])
  return (
    <section className="messages" data-testid="messages" data-thread-id={currentThreadId}>
      {messages.length === 0 ? <p className="muted">Ask about the weather, e.g. “What is the weather in Paris?”</p> : null}
      {messages.map((message) => (
        <Message key={messageKey(message)} message={message} cancelled={message.id === cancelledId} />
      ))}
      {isAgent ? null : <Suggestions />}
      <div ref={end} />
    </section>
  )
}

/** Re-renders only when its message changed (messages keep their identity otherwise). */
const Message = memo(function Message(
  { cancelled, message }: { readonly message: ReactTamboThreadMessage; readonly cancelled: boolean }
) {
  const isToolResult = message.content.length > 0 && message.content.every((block) => block.type === "tool_result")
  if (isToolResult) return null
  // Nothing to show (the API's one-space text block alone): no empty bubble.
  const isBlank = message.content.every((block) => block.type === "text" && block.text.trim() === "")
  if (isBlank && !cancelled) return null
  return (
    <article
      className={`message ${message.role}`}
      data-testid="message"
      data-role={message.role}
      data-message-id={message.id}
      data-cancelled={String(cancelled)}
    >
      {message.content.map((block, index) => {
        switch (block.type) {
          case "text":
            // The API stores a tool call without text with a text block of one space.
            return block.text.trim() === "" ? null : <p key={index} data-testid="message-text">{block.text}</p>
          case "tool_use":
            return (
              <p key={block.id} className="tool" data-testid="tool-call" data-completed={String(block.hasCompleted === true)}>
                🔧 {block.statusMessage}
              </p>
            )
          case "component":
            return <div key={block.id} className="component">{block.renderedComponent}</div>
          case "resource":
            if (isImageBlock(block)) return null
            return (
              <p key={index} className="muted" data-testid="message-resource">
                📎 {block.resource.name ?? block.resource.uri}
              </p>
            )
          default:
            return null
        }
      })}
      <MessageImages message={message} />
      {cancelled ? <p className="cancelled-note" data-testid="cancelled-note">Cancelled</p> : null}
    </article>
  )
})

// -----------------------------------------------------------------------------
// Input
// -----------------------------------------------------------------------------

/** An MCP resource attached to the next message. */
interface Attachment {
  readonly serverKey: string
  readonly uri: string
  readonly name: string
}

function Composer() {
  const { value, setValue, submit, isPending, error, images } = useTamboThreadInput()
  const status = useRunStatus()
  const client = useTamboClient()
  const [attachments, setAttachments] = useState<ReadonlyArray<Attachment>>([])
  // The `/` prompts, `@` resources and the microphone need MCP servers and the Tambo API.
  const isAgent = useIsAgent()
  const onSubmit = (event: FormEvent) => {
    event.preventDefault()
    const sent = attachments.length === 0
      ? submit()
      : (() => {
        // With attachments the message carries MCP resource blocks: the SDK reads them before sending.
        const text = value.trim()
        setValue("")
        setAttachments([])
        return client.run({
          role: "user",
          content: [
            ...(text === "" ? [] : [{ type: "text" as const, text }]),
            ...attachments.map(({ serverKey, uri, name }) => ({ type: "resource" as const, resource: { serverKey, uri, name } }))
          ]
        }).thread
      })()
    sent.catch((failure: unknown) => {
      if (!isAbortError(failure)) console.warn("send failed", failure)
    })
  }
  const running = isPending || status !== "idle"
  const command = !isAgent && value.startsWith("/") ? value.slice(1) : undefined
  const mention = isAgent ? undefined : /(?:^|\s)@(\S*)$/.exec(value)?.[1]
  return (
    <form className="composer" onSubmit={onSubmit}>
      {command === undefined ? null : <PromptMenu search={command} onChoose={setValue} />}
      {mention === undefined ? null : (
        <ResourcePicker
          search={mention}
          onChoose={(attachment) => {
            setAttachments((previous) => [...previous, attachment])
            setValue((previous) => previous.replace(/@\S*$/, ""))
          }}
        />
      )}
      {attachments.map((attachment) => (
        <span key={`${attachment.serverKey}:${attachment.uri}`} className="attachment" data-testid="attachment">
          📎 {attachment.name}
        </span>
      ))}
      <ImageAttach />
      <input
        data-testid="message-input"
        placeholder={isAgent ? "Message" : "Message (/ for prompts, @ for resources)"}
        value={value}
        onChange={(event) => setValue(event.target.value)}
        autoFocus
      />
      {isAgent ? null : <VoiceButton disabled={running} />}
      <button type="submit" data-testid="send" disabled={running || (value.trim() === "" && attachments.length === 0 && images.length === 0)}>
        Send
      </button>
      <button type="button" data-testid="cancel" disabled={!running} onClick={() => void client.cancelRun().catch(() => undefined)}>
        Cancel
      </button>
      {error === undefined ? null : <p className="error" data-testid="input-error">{error.message}</p>}
    </form>
  )
}

// -----------------------------------------------------------------------------
// MCP
// -----------------------------------------------------------------------------

/** The MCP prompts whose name starts with `search`; choosing one puts its text in the input. */
function PromptMenu({ search, onChoose }: { readonly search: string; readonly onChoose: (text: string) => void }) {
  const { data: prompts = [] } = useTamboMcpPromptList()
  const client = useTamboClient()
  const shown = prompts.filter((prompt) => prompt.name.startsWith(search))
  return (
    <ul className="menu" data-testid="prompt-menu">
      {shown.length === 0 ? <li className="muted">No prompts</li> : null}
      {shown.map((prompt) => (
        <li key={`${prompt.serverKey}:${prompt.name}`}>
          <button
            type="button"
            data-testid="prompt-item"
            onClick={() =>
              void client.getMcpPrompt(prompt.serverKey, prompt.name).then(
                ({ messages }) =>
                  onChoose(messages.flatMap(({ content }) => (content.type === "text" && "text" in content ? [content.text] : [])).join("\n")),
                () => undefined
              )}
          >
            /{prompt.name} <span className="muted">{prompt.description}</span>
          </button>
        </li>
      ))}
    </ul>
  )
}

/** The MCP resources matching `search`; choosing one attaches it to the next message. */
function ResourcePicker({ search, onChoose }: { readonly search: string; readonly onChoose: (attachment: Attachment) => void }) {
  const { data: resources = [] } = useTamboMcpResourceList(search)
  return (
    <ul className="menu" data-testid="resource-picker">
      {resources.length === 0 ? <li className="muted">No resources</li> : null}
      {resources.map((resource) => (
        <li key={`${resource.serverKey}:${resource.uri}`}>
          <button
            type="button"
            data-testid="resource-item"
            onClick={() => onChoose({ serverKey: resource.serverKey, uri: resource.uri, name: resource.title ?? resource.name })}
          >
            @{resource.title ?? resource.name} <span className="muted">{resource.uri}</span>
          </button>
        </li>
      ))}
    </ul>
  )
}

/** An MCP server asks the user something: its form, one text field per property. */
function Elicitation() {
  const { request, accept, decline } = useTamboMcpElicitation()
  const [values, setValues] = useState<Record<string, string>>({})
  if (request === undefined) return null
  const fields = Object.entries(request.requestedSchema.properties)
  return (
    <form
      className="elicitation"
      data-testid="elicitation"
      onSubmit={(event) => {
        event.preventDefault()
        accept(values)
        setValues({})
      }}
    >
      <p>{request.message}</p>
      {fields.map(([name, schema]) => (
        <label key={name}>
          {typeof schema["title"] === "string" ? schema["title"] : name}{" "}
          <input
            data-testid="elicitation-field"
            name={name}
            value={values[name] ?? ""}
            onChange={(event) => setValues((previous) => ({ ...previous, [name]: event.target.value }))}
          />
        </label>
      ))}
      <button type="submit" data-testid="elicitation-accept">Send</button>
      <button type="button" data-testid="elicitation-decline" onClick={decline}>Decline</button>
    </form>
  )
}
