// @vitest-environment happy-dom
// `@tambo-ai/react-ui-base`, upstream's headless components, over this package installed under
// upstream's name (`"@tambo-ai/react": "workspace:@tambo-effect/react@*"` in `package.json`): what
// switching is for an app built on them. Against the testing server and real MCP servers.
import { McpPrompts } from "@tambo-ai/react-ui-base/mcp-prompts"
import { Message } from "@tambo-ai/react-ui-base/message"
import { MessageInput } from "@tambo-ai/react-ui-base/message-input"
import { ThreadContent } from "@tambo-ai/react-ui-base/thread-content"
import { ThreadHistory } from "@tambo-ai/react-ui-base/thread-history"
import { TamboProvider, type TamboThread, type TamboThreadMessage, useTambo } from "@tambo-ai/react"
import { type ListPromptEntry, type McpServer, useTamboMcpServers } from "@tambo-ai/react/mcp"
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import { connection, useServer } from "./helpers.js"
import { useMcpServers } from "./mcpServers.js"

const server = useServer()
const startMcp = useMcpServers()

// Under `NodeNext` resolution the components' own declarations lose the types they import without an
// extension (theirs to fix): the render functions below name their parameters' types.
type Props = Record<string, unknown>

let idle = true
let servers: Array<McpServer> = []

/** A chat of the headless components: the thread's messages, and the input with its elicitation form. */
function Chat() {
  idle = useTambo().isIdle
  servers = useTamboMcpServers()
  return (
    <>
      <ThreadContent.Root>
        <ThreadContent.Messages
          render={(props, state) => (
            <div {...props} data-testid="messages">
              {state.filteredMessages.map((message: TamboThreadMessage) => (
                <Message.Root key={message.id} message={message} data-testid={`message-${message.role}`}>
                  <Message.Content render={(props: Props, content: { contentAsMarkdownString?: string }) => <div {...props}>{content.contentAsMarkdownString}</div>} />
                </Message.Root>
              ))}
            </div>
          )}
        />
      </ThreadContent.Root>
      <MessageInput.Root>
        <MessageInput.Elicitation data-testid="elicitation" />
        <MessageInput.Textarea placeholder="Say something" />
        <MessageInput.SubmitButton>Send</MessageInput.SubmitButton>
      </MessageInput.Root>
    </>
  )
}

const send = (text: string) => {
  fireEvent.change(screen.getByPlaceholderText("Say something"), { target: { value: text } })
  fireEvent.click(screen.getByText("Send"))
}

describe("@tambo-ai/react-ui-base over this package", () => {
  it("a chat: the input sends, the thread shows the user's message and the streamed reply", async () => {
    server().setScript([Script.text("Hello from the server.")])
    render(
      <TamboProvider {...connection(server())}>
        <Chat />
      </TamboProvider>
    )
    send("Hi there")
    await waitFor(() => expect(screen.getByTestId("message-assistant").textContent).toContain("Hello from the server."), { timeout: 10_000 })
    expect(screen.getByTestId("message-user").textContent).toContain("Hi there")
    expect(screen.getAllByTestId(/^message-/)).toHaveLength(2)
    // The send resolves once the run has ended.
    await waitFor(() => expect(idle).toBe(true))
    expect((screen.getByPlaceholderText("Say something") as HTMLTextAreaElement).value).toBe("")
  })

  it("an MCP tool's elicitation shows in the input's form; its answer reaches the server and the run goes on", async () => {
    const mcp = await startMcp("greeter")
    const results: Array<string> = []
    server().setScript((request) => {
      if (request.toolResults.length === 0) return [Script.toolCall("greet", {})]
      results.push(request.toolResults[0]!.text)
      return [Script.text("Greeted.")]
    })
    render(
      <TamboProvider {...connection(server(), { mcpServers: [{ url: mcp.url }] })}>
        <Chat />
      </TamboProvider>
    )
    // The server's tool is registered once it is connected.
    await waitFor(() => expect(servers.map((s) => s.client !== undefined)).toEqual([true]), { timeout: 10_000 })
    send("Greet me")
    const form = await screen.findByTestId("elicitation", undefined, { timeout: 10_000 })
    expect(form.textContent).toContain("What is your name?")
    fireEvent.change(within(form).getByPlaceholderText("name"), { target: { value: "Ada" } })
    fireEvent.click(within(form).getByText("Submit"))
    await waitFor(() => expect(screen.getAllByTestId("message-assistant").at(-1)!.textContent).toContain("Greeted."), { timeout: 10_000 })
    expect(results).toEqual(["Hello, Ada!"])
    expect(screen.queryByTestId("elicitation")).toBeNull()
    await waitFor(() => expect(idle).toBe(true))
  })

  it("an MCP prompt picked from McpPrompts inserts its text", async () => {
    const mcp = await startMcp("prompter")
    const inserted: Array<string> = []
    render(
      <TamboProvider {...connection(server(), { mcpServers: [{ url: mcp.url, serverKey: "docs" }] })}>
        <McpPrompts.Root onInsertText={(text: string) => inserted.push(text)}>
          <McpPrompts.List
            render={(props, state) => (
              <div {...props}>
                {state.prompts.map(({ prompt }: ListPromptEntry) => <McpPrompts.Item key={prompt.name} name={prompt.name}>{prompt.name}</McpPrompts.Item>)}
              </div>
            )}
          />
        </McpPrompts.Root>
      </TamboProvider>
    )
    fireEvent.click(await screen.findByText("docs:hello", undefined, { timeout: 10_000 }))
    expect(screen.getByText("docs:review")).toBeTruthy()
    await waitFor(() => expect(inserted).toEqual(["Hello!"]))
  })

  it("ThreadHistory lists the user's threads and switches to one", async () => {
    const older = server().threads.create({ userKey: "user-1", name: "Older", messages: [{ role: "user", content: "From before" }] })
    server().threads.create({ userKey: "someone-else", name: "Not mine" })
    let current = ""
    function Current() {
      current = useTambo().currentThreadId
      return null
    }
    render(
      <TamboProvider {...connection(server())}>
        <Current />
        <ThreadHistory.Root>
          <ThreadHistory.List
            render={(props: Props, state: { filteredThreads: Array<TamboThread> }) => (
              <ul {...props}>
                {state.filteredThreads.map((thread: TamboThread) => (
                  <ThreadHistory.Item key={thread.id} thread={thread}>{thread.name}</ThreadHistory.Item>
                ))}
              </ul>
            )}
          />
        </ThreadHistory.Root>
        <Chat />
      </TamboProvider>
    )
    fireEvent.click(await screen.findByText("Older", undefined, { timeout: 10_000 }))
    expect(screen.queryByText("Not mine")).toBeNull()
    await waitFor(() => expect(current).toBe(older.id))
    await waitFor(() => expect(screen.getByTestId("message-user").textContent).toContain("From before"))
  })
})
