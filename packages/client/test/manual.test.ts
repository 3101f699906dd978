// Manual tool execution, approvals and busy policies, through the facade.
import * as Tool from "@tambo-effect/core/Tool"
import { Script } from "@tambo-effect/testing"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import type { StreamEvent } from "../src/index.js"
import { makeClient, settle, texts, useServer, waitFor } from "./helpers.js"

const server = useServer()

/** Asks for the weather, then says what the tool answered. */
const weatherScript = () =>
  server().setScript((request) =>
    request.toolResults.length === 0
      ? [Script.text("Checking. "), Script.toolCall("get_weather", { city: "Paris" })]
      : [Script.text(`Result: ${request.toolResults[0]!.isError ? "error " : ""}${request.toolResults[0]!.text}`)]
  )

const guardedWeather = (calls: Array<string>) =>
  Tool.make({
    name: "get_weather",
    description: "Current weather in a city",
    input: Schema.Struct({ city: Schema.String }),
    needsApproval: true,
    execute: ({ city }) => {
      calls.push(city)
      return { city, temperature: 21 }
    }
  })

describe("manual tool execution", () => {
  it("autoExecuteTools: false ends with the pending calls; continueRun answers them", async () => {
    weatherScript()
    const client = makeClient(server(), {
      tools: [{
        name: "get_weather",
        description: "Current weather in a city",
        inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        tool: () => {
          throw new Error("not called")
        }
      }]
    })
    const stream = client.run("weather?", { autoExecuteTools: false })
    let last: StreamEvent | undefined
    for await (const element of stream) last = element
    expect(last?.event.type).toBe("CLIENT_AWAITING_TOOL_RESULTS")
    const pending = last?.event.type === "CLIENT_AWAITING_TOOL_RESULTS" ? last.event.pendingToolCalls : []
    expect(pending).toMatchObject([{ toolName: "get_weather", args: { city: "Paris" } }])
    const threadId = await stream.threadId
    expect(await client.getPendingToolCalls(threadId)).toMatchObject([{ toolCallId: pending[0]!.toolCallId }])

    const thread = await client.continueRun(threadId, [
      { toolCallId: pending[0]!.toolCallId, result: { city: "Paris", temperature: 9 } }
    ]).thread
    expect(texts(thread.messages).at(-1)).toBe('assistant: Result: {"city":"Paris","temperature":9}')

    await expect(client.continueRun(threadId, [{ toolCallId: "nope", result: 1 }]).thread).rejects.toMatchObject({
      _tag: "ToolError",
      reason: "UnknownToolCall"
    })
  })
})

describe("approvals", () => {
  it("a call that needs approval waits for approveToolCall", async () => {
    weatherScript()
    const calls: Array<string> = []
    const client = makeClient(server(), { tools: [guardedWeather(calls)] })
    const stream = client.run("weather?")
    for await (const { event } of stream) {
      if (event.type === "CLIENT_APPROVAL_REQUESTED") {
        expect(event).toMatchObject({ toolName: "get_weather", args: { city: "Paris" }, needsApproval: true })
        client.approveToolCall(event.toolCallId, { args: { city: "Lyon" } })
      }
    }
    expect(calls).toEqual(["Lyon"])
    expect(texts(await stream.messages).at(-1)).toContain("Lyon")
    expect(() => client.approveToolCall("nothing-pending")).toThrow(expect.objectContaining({ _tag: "ToolError" }))
  })

  it("denyToolCall tells the model; onApproval decides without a human", async () => {
    weatherScript()
    const calls: Array<string> = []
    const client = makeClient(server(), { tools: [guardedWeather(calls)] })
    const denied = client.run("weather?")
    for await (const { event } of denied) {
      if (event.type === "CLIENT_APPROVAL_REQUESTED") client.denyToolCall(event.toolCallId, "not now")
    }
    expect(calls).toEqual([])
    expect(texts(await denied.messages).at(-1)).toMatch(/Result: error .*not now/)

    const approved = await client.run("weather again?", {
      onApproval: async (call) => ({ approved: call.toolName === "get_weather" })
    }).thread
    expect(calls).toEqual(["Paris"])
    expect(texts(approved.messages).at(-1)).toContain("Paris")
  })
})

describe("busy threads", () => {
  it("onBusy: queue waits for the thread's run; interrupt cancels it", async () => {
    server().setScript((request) => [Script.pace(10), Script.text(["re: ", request.text])])
    const client = makeClient(server())
    const threadId = (await client.run("first").thread).id

    const running = client.run("second", { threadId })
    await waitFor(() => client.getThread(threadId)?.status === "streaming", "the run to stream")
    const queued = await client.run("third", { threadId, onBusy: "queue" }).thread
    expect((await running.thread).id).toBe(threadId)
    expect(texts(queued.messages).slice(-4)).toEqual(["user: second", "assistant: re: second", "user: third", "assistant: re: third"])

    server().setScript([Script.text("slow"), Script.hang()])
    const hanging = client.run("hang", { threadId })
    await waitFor(() => client.getThread(threadId)?.status === "streaming", "the run to stream")
    server().setScript([Script.text("took over")])
    const interrupting = await client.run("take over", { threadId, onBusy: "interrupt" }).thread
    expect((await settle(hanging.thread)).ok).toBe(false)
    expect(texts(interrupting.messages).at(-1)).toBe("assistant: took over")
  })
})
