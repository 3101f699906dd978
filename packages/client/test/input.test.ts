import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import { makeClient, useServer } from "./helpers.js"

const server = useServer()

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

describe("getContextHelpers", () => {
  it("lists the helpers from the options and those added since, by name", () => {
    const page = () => ({ url: "/" })
    const time = () => ({ timestamp: "now" })
    const client = makeClient(server(), { contextHelpers: { page } })
    expect(client.getContextHelpers()).toEqual({ page })
    client.addContextHelper("time", time)
    expect(client.getContextHelpers()).toEqual({ page, time })
    client.removeContextHelper("page")
    expect(client.getContextHelpers()).toEqual({ time })
  })
})
