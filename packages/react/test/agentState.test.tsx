// @vitest-environment happy-dom
// `useTamboAgentState()`: the AG-UI agent's shared state of the current thread as a `useState`
// pair, against the scripted agent of @tambo-effect/testing on loopback.
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react"
import { AgUiAgent } from "@tambo-effect/testing"
import { afterEach, describe, expect, it } from "vitest"
import { makeAgentClient, useAgent } from "../../client/test/helpers.js"
import { TamboProvider, useTamboAgentState, useTamboClient } from "../src/index.js"

// The agent and its clients as the facade's tests have them (clients destroyed after each test).
const agent = useAgent()
const makeClient = () => makeAgentClient(agent())
afterEach(() => cleanup())

interface Todo {
  readonly todo: ReadonlyArray<string>
  readonly count?: number
}

let renders = 0

/** The state as JSON, a button that adds an item, and one that sends a message. */
function TodoList() {
  renders++
  const [state, setState] = useTamboAgentState<Todo>()
  const client = useTamboClient()
  return (
    <div>
      <pre data-testid="state">{JSON.stringify(state)}</pre>
      <button data-testid="add" onClick={() => setState((previous) => ({ todo: [...(previous.todo ?? []), "milk"] }))}>
        add
      </button>
      <button data-testid="send" onClick={() => void client.run("hello").thread.catch(() => undefined)}>
        send
      </button>
    </div>
  )
}

const shown = () => JSON.parse(screen.getByTestId("state").textContent ?? "null") as unknown

describe("useTamboAgentState", () => {
  it("[state, setState] of the current thread: the app's changes show at once and go with the next run", async () => {
    render(
      <TamboProvider client={makeClient()}>
        <TodoList />
      </TamboProvider>
    )
    expect(shown()).toEqual({})
    await act(async () => {
      fireEvent.click(screen.getByTestId("add"))
    })
    await waitFor(() => expect(shown()).toEqual({ todo: ["milk"] }))
    await act(async () => {
      fireEvent.click(screen.getByTestId("add"))
    })
    await waitFor(() => expect(shown()).toEqual({ todo: ["milk", "milk"] }))
    fireEvent.click(screen.getByTestId("send"))
    await waitFor(() => expect(agent().requests).toHaveLength(1))
    expect(agent().requests[0]!.input!.state).toEqual({ todo: ["milk", "milk"] })
  })

  it("the agent's STATE_SNAPSHOT and STATE_DELTAs show as they arrive", async () => {
    agent().setScript(AgUiAgent.scripts.state)
    render(
      <TamboProvider client={makeClient()}>
        <TodoList />
      </TamboProvider>
    )
    fireEvent.click(screen.getByTestId("send"))
    await waitFor(() => expect(shown()).toEqual({ count: 2, items: ["a"] }))
  })

  it("a state that is not a JSON value throws the client's ConfigError from setState; what shows stays", async () => {
    let set: ((next: unknown) => void) | undefined
    function Bad() {
      const [state, setState] = useTamboAgentState<unknown>()
      set = setState
      return <pre data-testid="state">{JSON.stringify(state)}</pre>
    }
    render(
      <TamboProvider client={makeClient()}>
        <Bad />
      </TamboProvider>
    )
    expect(() => set!({ n: 1n })).toThrow(expect.objectContaining({ _tag: "ConfigError", reason: "InvalidOption" }))
    expect(shown()).toEqual({})
  })

  it("a render with nothing changed keeps the state's identity (no re-render from the hook)", async () => {
    const client = makeClient()
    render(
      <TamboProvider client={client}>
        <TodoList />
      </TamboProvider>
    )
    const before = renders
    // A change elsewhere in the state (a new conversation of the same, empty state) re-renders nothing.
    await act(async () => {
      client.startNewThread()
      await Promise.resolve()
    })
    expect(renders).toBe(before)
  })
})
