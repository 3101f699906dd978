// @vitest-environment happy-dom
// `<TamboProvider agent={{ url }}>`: the provider's client talks to an AG-UI agent (the scripted
// one of @tambo-effect/testing, on loopback) instead of the Tambo API.
import { act, fireEvent, render, renderHook, screen, waitFor } from "@testing-library/react"
import { AgUiAgent } from "@tambo-effect/testing"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import {
  type ReactTamboThreadMessage,
  type TamboClient,
  TamboProvider,
  useTambo,
  useTamboClient,
  useTamboThreadInput
} from "../src/index.js"
import { madeUpWeather, WeatherCard, weatherTool } from "./helpers.js"

let agent: AgUiAgent.AgUiAgent
let other: AgUiAgent.AgUiAgent
beforeAll(async () => {
  agent = await AgUiAgent.start()
  other = await AgUiAgent.start({ script: [AgUiAgent.text("From the other agent.")] })
})
afterEach(() => {
  agent.reset()
  other.reset()
})
afterAll(async () => {
  await agent.close()
  await other.close()
})

const textOf = (message: ReactTamboThreadMessage): string =>
  message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("")

/** A chat: an input that sends on submit, and the messages' texts. */
function Chat() {
  const { messages } = useTambo()
  const { value, setValue, submit } = useTamboThreadInput()
  return (
    <div>
      <ul>
        {messages.map((message) => (
          <li key={message.id} data-testid="message" data-role={message.role}>
            {message.content.map((block, index) =>
              block.type === "text"
                ? <span key={index}>{block.text}</span>
                : block.type === "tool_use"
                ? <span key={index} data-testid="tool-call">{block.name}</span>
                : null
            )}
          </li>
        ))}
      </ul>
      <form
        onSubmit={(event) => {
          event.preventDefault()
          void submit().catch(() => undefined)
        }}
      >
        <input data-testid="input" value={value} onChange={(event) => setValue(event.target.value)} />
      </form>
    </div>
  )
}

describe("TamboProvider with an AG-UI agent", () => {
  it("a message in, the agent's reply rendered through useTambo; no API key", async () => {
    render(
      <TamboProvider agent={{ url: agent.url }} tools={[weatherTool]} components={[WeatherCard]}>
        <Chat />
      </TamboProvider>
    )
    const input = screen.getByTestId("input") as HTMLInputElement
    fireEvent.change(input, { target: { value: "hi" } })
    await waitFor(() => expect(input.value).toBe("hi"))
    fireEvent.submit(input.form!)
    await waitFor(() => expect(screen.getByText("Hello, world.")).toBeTruthy())
    const roles = screen.getAllByTestId("message").map((element) => element.getAttribute("data-role"))
    expect(roles).toEqual(["user", "assistant"])
    expect(agent.requests).toHaveLength(1)
    expect(agent.requests[0]!.headers["x-api-key"]).toBeUndefined()
  })

  it("a frontend tool round: the tool runs in the app, the next run's reply is rendered", async () => {
    agent.setScript(AgUiAgent.scripts.frontendTool)
    const calls: Array<string> = []
    const tool = { ...weatherTool, tool: ({ city }: { readonly city: string }) => (calls.push(city), madeUpWeather(city)) }
    const { result } = renderHook(() => useTambo(), {
      wrapper: ({ children }) => <TamboProvider agent={{ url: agent.url }} tools={[tool]}>{children}</TamboProvider>
    })
    await act(async () => {
      await result.current.sendMessage("What is the weather in Paris?").thread
    })
    expect(calls).toEqual(["Paris"])
    await waitFor(() => expect(textOf(result.current.messages.at(-1)!)).toContain("The weather in Paris:"))
    const toolUse = result.current.messages.flatMap((message) => message.content).find((block) => block.type === "tool_use")
    expect(toolUse).toMatchObject({ name: "get_weather", input: { city: "Paris" } })
    expect(agent.requests).toHaveLength(2)
  })

  it("a change of agent.url replaces the client; a new object with the same url keeps it", async () => {
    const seen: Array<TamboClient> = []
    function Probe() {
      seen.push(useTamboClient())
      return null
    }
    const { rerender } = render(<TamboProvider agent={{ url: agent.url }}><Probe /></TamboProvider>)
    const first = seen.at(-1)!
    expect(first.backend).toBe("ag-ui")
    rerender(<TamboProvider agent={{ url: agent.url }}><Probe /></TamboProvider>)
    expect(seen.at(-1)).toBe(first)
    rerender(<TamboProvider agent={{ url: other.url }}><Probe /></TamboProvider>)
    const moved = seen.at(-1)!
    expect(moved).not.toBe(first)
    await act(async () => {
      await moved.run("hi").thread
    })
    expect(other.requests).toHaveLength(1)
    expect(agent.requests).toHaveLength(0)
  })
})

// Against an agent as against the Tambo API: the composer gets the text back exactly when the
// message is not in the store after its run, and the next run's conversation holds it as often as
// the store does.
describe("where a failed send's message ends up, with an AG-UI agent", () => {
  const useBoth = () => ({ input: useTamboThreadInput(), tambo: useTambo() })
  const endings = {
    refused: [AgUiAgent.httpError(500, { message: "down" })],
    RUN_ERROR: [AgUiAgent.text("Partial"), AgUiAgent.runError("model down")],
    dropped: [AgUiAgent.text("Partial"), AgUiAgent.drop()]
  } satisfies Record<string, AgUiAgent.Script>

  it.each(Object.keys(endings) as ReadonlyArray<keyof typeof endings>)("%s, then sent again: the conversation holds the message as often as the store does", async (ending) => {
    // The run after "first" ends as `ending` says; every other is answered.
    agent.setScript((_request, { runIndex }) => runIndex === 1 ? endings[ending] : [AgUiAgent.text("ok")])
    const { result } = renderHook(useBoth, {
      wrapper: ({ children }) => <TamboProvider agent={{ url: agent.url }}>{children}</TamboProvider>
    })
    act(() => result.current.input.setValue("first"))
    await act(() => result.current.input.submit())
    act(() => result.current.input.setValue("Hi"))
    const failed = await act(() => result.current.input.submit().then(() => undefined, (error: { readonly _tag?: string }) => error._tag))
    await waitFor(() => expect(result.current.input.isPending).toBe(false))
    const taken = ending !== "refused"
    expect(failed).toBe(ending === "dropped" ? "TransportError" : "ApiError")
    expect(result.current.input.value).toBe(taken ? "" : "Hi")
    const users = () => result.current.tambo.messages.filter((message) => message.role === "user").map(textOf)
    expect(users()).toEqual(taken ? ["first", "Hi"] : ["first"])
    // What the user does next: send what the composer holds, or write it again.
    if (!taken) act(() => result.current.input.setValue("Hi"))
    else act(() => result.current.input.setValue("again"))
    await act(() => result.current.input.submit())
    const sent = agent.requests.at(-1)!.input!.messages.filter((message) => message.role === "user").map((message) => message.content)
    expect(sent).toEqual(taken ? ["first", "Hi", "again"] : ["first", "Hi"])
  })
})
