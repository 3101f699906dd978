import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import type { TamboThread } from "../src/index.js"
import { makeClient, useServer } from "./helpers.js"

const server = useServer()

const stateOf = (thread: TamboThread | undefined, componentId: string): unknown => {
  for (const block of thread?.messages.flatMap((message) => message.content) ?? []) {
    if (block.type === "component" && block.id === componentId) return block.state
  }
  return undefined
}

describe("updateComponentState", () => {
  it("sends the state, shows it in the thread, and a new client loads it", async () => {
    server().setScript([Script.component("Card", { title: "hi" }, { id: "comp_card" })])
    const client = makeClient(server())
    const { id: threadId } = await client.run("a card").thread
    await expect(client.updateComponentState(threadId, "comp_card", { state: { favourite: true } })).resolves.toEqual({
      favourite: true
    })
    expect(stateOf(client.getThread(threadId), "comp_card")).toEqual({ favourite: true })
    await client.updateComponentState(threadId, "comp_card", { patch: [{ op: "add", path: "/note", value: "x" }] })
    expect(stateOf(client.getThread(threadId), "comp_card")).toEqual({ favourite: true, note: "x" })

    const reloaded = makeClient(server())
    expect(stateOf(await reloaded.fetchThread(threadId), "comp_card")).toEqual({ favourite: true, note: "x" })
  })

  it("rejects a bad update with a ConfigError and sends nothing", async () => {
    const client = makeClient(server())
    await expect(client.updateComponentState("thr_x", "comp_card", { patch: [] })).rejects.toMatchObject({
      name: "ConfigError",
      reason: "InvalidOption"
    })
    expect(server().requests).toHaveLength(0)
  })

  it("rejects a new conversation's id with a ConfigError and sends nothing: the server has no thread of it yet", async () => {
    const client = makeClient(server())
    const threadId = client.startNewThread()
    await expect(client.updateComponentState(threadId, "comp_card", { state: { favourite: true } })).rejects.toMatchObject({
      name: "ConfigError",
      reason: "InvalidOption",
      message: `updateComponentState: "${threadId}" is a new conversation the server has not saved yet: its first message gets it a thread`
    })
    expect(server().requests).toHaveLength(0)
  })
})
