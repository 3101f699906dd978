// The default script, driven the way the official client drives a run with tools.
import TamboAI from "@tambo-ai/typescript-sdk"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../src/index.js"
import { client, collect, field, str, textOf, types, USER, userMessage } from "./helpers.js"

let server: TestServer
let sdk: TamboAI
beforeEach(async () => {
  server = await startTestServer()
  sdk = client(server)
})
afterEach(() => server.close())

const tools = [{
  name: "get_weather",
  description: "Current weather",
  inputSchema: { type: "object", properties: { location: { type: "string" } } }
}]
const availableComponents = [{ name: "WeatherCard", description: "Weather card", propsSchema: { type: "object" } }]

describe("weatherAssistant (the default script)", () => {
  it("calls get_weather for a weather question, then streams a WeatherCard with the result", async () => {
    const first = await collect(await sdk.threads.runs.create({
      message: userMessage("What's the weather in New York?"),
      thread: { userKey: USER },
      tools,
      availableComponents
    }))
    expect(textOf(first)).toBe("Let me check the weather in New York.")
    const awaiting = first.find((event) => event["name"] === "tambo.run.awaiting_input")
    // The argument name comes from the tool's input schema.
    expect(field(awaiting, "value", "pendingToolCalls", 0)).toMatchObject({ toolName: "get_weather", arguments: "{\"location\":\"New York\"}" })
    const toolCallId = String(field(awaiting, "value", "pendingToolCalls", 0, "toolCallId"))

    const result = { location: "New York", temperature: 18, conditions: "Cloudy" }
    const second = await collect(await sdk.threads.runs.run(str(first[0]!, "threadId"), {
      message: { role: "user", content: [{ type: "tool_result", toolUseId: toolCallId, content: [{ type: "text", text: JSON.stringify(result) }] }] },
      previousRunId: str(first[0]!, "runId"),
      userKey: USER,
      tools,
      availableComponents
    }))
    expect(textOf(second)).toBe("Here is the weather in New York.")
    expect(types(second).filter((type) => type.startsWith("CUSTOM"))).toEqual([
      "CUSTOM:tambo.component.start",
      "CUSTOM:tambo.component.props_delta",
      "CUSTOM:tambo.component.props_delta",
      "CUSTOM:tambo.component.props_delta",
      "CUSTOM:tambo.component.end"
    ])
    const end = second.find((event) => event["name"] === "tambo.component.end")
    expect(field(end, "value", "finalProps")).toEqual(result)
  })

  it("answers other messages with text, and weather questions without the tool with an apology", async () => {
    const echo = await collect(await sdk.threads.runs.create({ message: userMessage("Hello"), thread: { userKey: USER } }))
    expect(textOf(echo)).toBe("You said: Hello")
    const noTool = await collect(await sdk.threads.runs.create({ message: userMessage("weather?"), thread: { userKey: USER } }))
    expect(textOf(noTool)).toBe("I would need a get_weather tool to check the weather.")
  })
})
