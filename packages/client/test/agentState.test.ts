// The AG-UI agent's shared state through the facade: `client.getAgentState` /
// `client.setAgentState`, and `thread.state`, against the scripted agent on loopback.
import { AgUiAgent } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import { ConfigError } from "../src/index.js"
import { makeAgentClient, useAgent } from "./helpers.js"

const agent = useAgent()
const makeClient = () => makeAgentClient(agent())

describe("TamboClient: the agent state of a thread", () => {
  it("what the agent's STATE_SNAPSHOT and STATE_DELTAs made it is the thread's state, and goes back with the next run", async () => {
    agent().setScript(AgUiAgent.scripts.state)
    const client = makeClient()
    const thread = await client.run("hello").thread
    expect(thread.state).toEqual({ count: 2, items: ["a"] })
    expect(client.getThread(thread.id)?.state).toEqual({ count: 2, items: ["a"] })
    expect(client.getAgentState()).toEqual({ count: 2, items: ["a"] })
    expect(client.getAgentState(thread.id)).toEqual({ count: 2, items: ["a"] })
    await client.run("again").thread
    expect(agent().requests[1]!.input!.state).toEqual({ count: 2, items: ["a"] })
  })

  it("what the app sets on a new conversation goes with its first run, and its listeners hear of it", async () => {
    const client = makeClient()
    expect(client.getAgentState()).toEqual({})
    let notified = 0
    const unsubscribe = client.subscribe(() => notified++)
    const before = client.getState()
    expect(client.setAgentState({ todo: ["milk"] })).toEqual({ todo: ["milk"] })
    expect(client.setAgentState<{ todo: Array<string> }>((previous) => ({ todo: [...previous.todo, "bread"] }))).toEqual({
      todo: ["milk", "bread"]
    })
    expect(client.getState()).not.toBe(before)
    await Promise.resolve()
    expect(notified).toBeGreaterThan(0)
    unsubscribe()
    const thread = await client.run("hello").thread
    expect(agent().requests[0]!.input!.state).toEqual({ todo: ["milk", "bread"] })
    expect(thread.state).toEqual({ todo: ["milk", "bread"] })
  })

  it("set on a given thread, it goes with that thread's next run", async () => {
    const client = makeClient()
    const first = await client.run("hello").thread
    client.startNewThread()
    client.setAgentState({ on: "first" }, first.id)
    expect(client.getAgentState()).toEqual({})
    await client.run("again", { threadId: first.id }).thread
    expect(agent().requests[1]!.input!.state).toEqual({ on: "first" })
  })

  it("a state that is not a JSON value, or a thread the client does not hold, throws a ConfigError; the state stays", async () => {
    const client = makeClient()
    const thread = await client.run("hello").thread
    client.setAgentState({ ok: true })
    for (const bad of [{ n: 1n }, { f: () => 1 }, undefined, { at: new Date(0) }]) {
      expect(() => client.setAgentState(bad)).toThrow(ConfigError)
      expect(() => client.setAgentState(() => bad)).toThrow(ConfigError)
    }
    expect(() => client.setAgentState({}, "thr_nowhere")).toThrow(ConfigError)
    expect(() => client.getAgentState("thr_nowhere")).toThrow(ConfigError)
    expect(client.getAgentState(thread.id)).toEqual({ ok: true })
  })
})
