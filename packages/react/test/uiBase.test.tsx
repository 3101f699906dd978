// @vitest-environment happy-dom
// `@tambo-ai/react-ui-base`, upstream's headless components, over this package installed under
// upstream's name (`"@tambo-ai/react": "workspace:@tambo-effect/react@*"` in `package.json`): what
// switching is for an app built on them. Against the testing server and real MCP servers.
import { McpPrompts } from "@tambo-ai/react-ui-base/mcp-prompts"
import { McpResources } from "@tambo-ai/react-ui-base/mcp-resources"
import { Message } from "@tambo-ai/react-ui-base/message"
import { MessageInput } from "@tambo-ai/react-ui-base/message-input"
import { ReasoningInfo } from "@tambo-ai/react-ui-base/reasoning-info"
import { ThreadContent } from "@tambo-ai/react-ui-base/thread-content"
import { ThreadHistory } from "@tambo-ai/react-ui-base/thread-history"
import { ToolcallInfo } from "@tambo-ai/react-ui-base/toolcall-info"
import { TamboProvider, type TamboThread, type TamboThreadMessage, type TamboTool, useTambo } from "@tambo-ai/react"
import { type ListPromptEntry, type ListResourceEntry, type McpServer, useTamboMcpServers } from "@tambo-ai/react/mcp"
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import { connection, useServer, WeatherCard, weatherTool } from "./helpers.js"
import { useMcpServers } from "./mcpServers.js"

const server = useServer()
const startMcp = useMcpServers()

// Under `NodeNext` resolution the components' own declarations lose the types they import without an
// extension (theirs to fix): the render functions below name their parameters' types.
type Props = object

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
                  <ReasoningInfo.Root data-testid="reasoning">
                    <ReasoningInfo.StatusText data-testid="reasoning-status" />
                    <ReasoningInfo.Steps render={(props: Props, steps: { steps: Array<string> }) => <ol {...props}>{steps.steps.map((step) => <li key={step}>{step}</li>)}</ol>} />
                  </ReasoningInfo.Root>
                  <Message.Content render={(props: Props, content: { contentAsMarkdownString?: string }) => <div {...props}>{content.contentAsMarkdownString}</div>} />
                  {message.content.some((block) => block.type === "tool_use")
                    ? (
                      <ToolcallInfo.Root defaultExpanded data-testid="toolcall">
                        <ToolcallInfo.ToolName data-testid="tool-name" />
                        <ToolcallInfo.StatusText data-testid="tool-status" />
                        <ToolcallInfo.Content>
                          <ToolcallInfo.Parameters data-testid="tool-parameters" />
                          <ToolcallInfo.Result
                            render={(props: Props, result: { content: unknown }) => <pre {...props} data-testid="tool-result">{JSON.stringify(result.content)}</pre>}
                          />
                        </ToolcallInfo.Content>
                      </ToolcallInfo.Root>
                    )
                    : null}
                  <Message.RenderedComponent data-testid="rendered-component">
                    <Message.RenderedComponentContent />
                  </Message.RenderedComponent>
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
        <MessageInput.StopButton>Stop</MessageInput.StopButton>
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

  it("the model's reasoning shows in ReasoningInfo, during the run and after it", async () => {
    server().setScript([Script.pace(20), Script.reasoning(["Thinking ", "about it."]), Script.text(["The ", "answer."])])
    render(
      <TamboProvider {...connection(server())}>
        <Chat />
      </TamboProvider>
    )
    send("Why?")
    await waitFor(() => expect(screen.getByTestId("reasoning").textContent).toContain("Thinking about it."), { timeout: 10_000 })
    await waitFor(() => expect(screen.getByTestId("message-assistant").textContent).toContain("The answer."))
    await waitFor(() => expect(idle).toBe(true))
    // Once the run ended (and its thread was read again from the server, which keeps no reasoning).
    expect(screen.getByTestId("reasoning").textContent).toContain("Thinking about it.")
    expect(screen.getByTestId("reasoning-status").textContent).toMatch(/^Thought for/)
  })

  it("the Stop button cancels a streaming run: the server hears it, the thread says so, and the input can send again", async () => {
    // The reply stops after two deltas, its message still open: the run streams until stopped.
    server().setScript([Script.text(["one", " two"]), Script.hang()])
    let cancelled: boolean | undefined
    function LastRun() {
      cancelled = useTambo().thread?.thread.lastRunCancelled
      return null
    }
    render(
      <TamboProvider {...connection(server())}>
        <Chat />
        <LastRun />
      </TamboProvider>
    )
    expect(screen.queryByText("Stop")).toBeNull()
    send("Count")
    await waitFor(() => expect(screen.getByTestId("message-assistant").textContent).toMatch(/two/), { timeout: 10_000 })
    // While the run streams, the input offers Stop, not Send.
    expect(screen.queryByText("Send")).toBeNull()
    fireEvent.click(screen.getByText("Stop"))
    await waitFor(() => expect(idle).toBe(true))
    await waitFor(() => expect(server().cancels).toHaveLength(1))
    expect(cancelled).toBe(true)
    expect(screen.getByTestId("message-assistant").textContent).toMatch(/^one two/)
    // The next message goes through.
    server().setScript([Script.text("Back.")])
    await waitFor(() => expect(screen.getByText("Send")).toBeTruthy())
    send("Again")
    await waitFor(() => expect(screen.getAllByTestId("message-assistant").at(-1)!.textContent).toContain("Back."), { timeout: 10_000 })
    await waitFor(() => expect(idle).toBe(true))
  })

  it("a tool the app registered: ToolcallInfo shows its name, status, parameters and result", async () => {
    server().setScript((request) =>
      request.toolResults.length === 0
        ? [Script.text("Let me check."), Script.toolCall("get_weather", { city: "Paris" })]
        : [Script.text("It is sunny.")]
    )
    render(
      <TamboProvider {...connection(server(), { tools: [weatherTool] })}>
        <Chat />
      </TamboProvider>
    )
    send("Weather in Paris?")
    await waitFor(() => expect(screen.getAllByTestId("message-assistant").at(-1)!.textContent).toContain("It is sunny."), { timeout: 10_000 })
    await waitFor(() => expect(idle).toBe(true))
    expect(screen.getByTestId("tool-name").textContent).toBe("get_weather")
    expect(screen.getByTestId("tool-status").textContent).toBe("Called get_weather")
    expect(JSON.parse(screen.getByTestId("tool-parameters").textContent!)).toEqual({ city: "Paris" })
    // The tool_result block's content: the tool's return, as the text the model was sent.
    const [result] = JSON.parse(screen.getByTestId("tool-result").textContent!) as Array<{ type: string; text: string }>
    expect(result!.type).toBe("text")
    expect(JSON.parse(result!.text)).toEqual({ city: "Paris", temperature: 21, conditions: "sunny" })
  })

  it("a tool that throws: ToolcallInfo says the call failed", async () => {
    const explode: TamboTool<Record<string, never>> = {
      name: "explode",
      description: "Always fails",
      inputSchema: Schema.Struct({}),
      tool: () => {
        throw new Error("boom")
      }
    }
    server().setScript((request) => request.toolResults.length === 0 ? [Script.toolCall("explode", {})] : [Script.text("It failed.")])
    render(
      <TamboProvider {...connection(server(), { tools: [explode] })}>
        <Chat />
      </TamboProvider>
    )
    send("Try it")
    await waitFor(() => expect(screen.getAllByTestId("message-assistant").at(-1)!.textContent).toContain("It failed."), { timeout: 10_000 })
    await waitFor(() => expect(idle).toBe(true))
    expect(screen.getByTestId("toolcall").hasAttribute("data-hastoolerror")).toBe(true)
    expect(screen.getByTestId("tool-result").textContent).toContain("boom")
  })

  it("a component the model renders shows through Message.RenderedComponent", async () => {
    server().setScript([Script.component("WeatherCard", { city: "Oslo", temperature: 3, conditions: "snow" })])
    render(
      <TamboProvider {...connection(server(), { components: [WeatherCard] })}>
        <Chat />
      </TamboProvider>
    )
    send("Show Oslo")
    await waitFor(() => expect(screen.getByTestId("weather-card").textContent).toBe("Oslo: 3° snow"), { timeout: 10_000 })
    expect(screen.getByTestId("rendered-component").contains(screen.getByTestId("weather-card"))).toBe(true)
    await waitFor(() => expect(idle).toBe(true))
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

  it("McpResources lists the app's resources and the servers', searches them, and selects one by its prefixed URI", async () => {
    const mcp = await startMcp("library")
    const selected: Array<[string, string]> = []
    render(
      <TamboProvider
        {...connection(server(), { mcpServers: [{ url: mcp.url, serverKey: "docs" }], resources: [{ uri: "app://notes", name: "notes" }] })}
      >
        <McpResources.Root onSelectResource={(uri: string, label: string) => selected.push([uri, label])}>
          <McpResources.Search placeholder="Find a resource" />
          <McpResources.List
            render={(props: Props, state: { resources: Array<ListResourceEntry> }) => (
              <ul {...props}>
                {state.resources.map(({ resource }) => (
                  <McpResources.Item key={resource.uri} uri={resource.uri} name={resource.name}>{resource.uri}</McpResources.Item>
                ))}
              </ul>
            )}
          />
        </McpResources.Root>
      </TamboProvider>
    )
    await screen.findByText("docs:file:///readme.md", undefined, { timeout: 10_000 })
    expect(screen.getByText("registry:app://notes")).toBeTruthy()
    fireEvent.change(screen.getByPlaceholderText("Find a resource"), { target: { value: "logo" } })
    await waitFor(() => expect(screen.queryByText("docs:file:///readme.md")).toBeNull())
    fireEvent.click(screen.getByText("docs:file:///logo.png"))
    expect(selected).toEqual([["docs:file:///logo.png", "logo"]])
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
