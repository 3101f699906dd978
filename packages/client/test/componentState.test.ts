import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import type { TamboThread } from "../src/index.js"
import { makeClient, useServer } from "./helpers.js"

const server = useServer()

const stateOf = (thread: TamboThread | undefined, componentId: string): unknown =>
  thread?.messages.flatMap((message) => message.content).find((block) => block.type === "component" && block.id === componentId)
    ?.state

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
})

describe("images in a message", () => {
  it("sends image resources as the API takes them and keeps them in the thread", async () => {
    server().setScript([Script.text("Nice picture")])
    const client = makeClient(server())
    const image = { type: "resource" as const, resource: { name: "dot.png", mimeType: "image/png", blob: "iVBORw0KGgo=" } }
    const thread = await client.run({ role: "user", content: [{ type: "text", text: "Look" }, image] }).thread
    expect(thread.messages[0]!.content).toEqual([{ type: "text", text: "Look" }, image])
    const run = server().requests.find((request) => request.path === "/v1/threads/runs")
    expect((run?.body as { message: { content: unknown } }).message.content).toEqual([{ type: "text", text: "Look" }, image])
    expect(server().threads.get(thread.id)!.messages[0]!.content).toEqual([{ type: "text", text: "Look" }, image])
  })
})
