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
