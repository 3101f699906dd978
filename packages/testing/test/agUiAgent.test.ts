import { EventSchemas } from "@ag-ui/core/schemas"
import type * as AgUi from "@ag-ui/core"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { AgUiAgent } from "../src/index.js"

type Ev = { readonly type: string; readonly [key: string]: unknown }

const input = (messages: ReadonlyArray<AgUi.Message>, extra: Record<string, unknown> = {}) => ({
  threadId: "thread-1",
  runId: "run-1",
  messages,
  tools: [],
  context: [],
  state: {},
  forwardedProps: {},
  ...extra
})

const hello: AgUi.Message = { id: "u1", role: "user", content: "hello" }

const post = (url: string, body: unknown, init: RequestInit = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...init
  })

/** The events of an SSE body, each checked against `@ag-ui/core` 1.0's schema unless legacy. */
const events = async (response: Response): Promise<Array<Ev>> => {
  const text = await response.text()
  return text.split("\n\n").filter((frame) => frame.length > 0).map((frame) => {
    expect(frame.startsWith("data: ")).toBe(true)
    const value = JSON.parse(frame.slice("data: ".length)) as Ev
    if (!value.type.startsWith("THINKING_")) expect(EventSchemas.safeParse(value).success, frame).toBe(true)
    return value
  })
}

const types = (list: ReadonlyArray<Ev>) => list.map((e) => e.type)

describe("AgUiAgent", () => {
  let agent: AgUiAgent.AgUiAgent
  beforeAll(async () => {
    agent = await AgUiAgent.start()
  })
  afterEach(() => agent.reset())
  afterAll(() => agent.close())

  it("answers a valid RunAgentInput with a text message between RUN_STARTED and RUN_FINISHED, and records it", async () => {
    const response = await post(agent.url, input([hello]), { headers: { "content-type": "application/json", "x-key": "k" } })
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    const list = await events(response)
    expect(types(list)).toEqual([
      "RUN_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "RUN_FINISHED"
    ])
    expect(list[0]).toMatchObject({ threadId: "thread-1", runId: "run-1" })
    expect(list[1]).toMatchObject({ messageId: "msg-1-0", role: "assistant" })
    expect(agent.requests).toHaveLength(1)
    expect(agent.requests[0]!.input?.messages).toEqual([hello])
    expect(agent.requests[0]!.headers["x-key"]).toBe("k")
    expect(await agent.requests[0]!.ended).toBe("completed")
  })

  it("a script function gets the decoded request, its last user text, its trailing tool results and the run's index", async () => {
    const seen: Array<unknown> = []
    agent.setScript((request, context) => {
      seen.push([context.runIndex, request.lastUserText, request.toolResults.map((m) => m.toolCallId), request.headers["x-app"]])
      return [AgUiAgent.text("ok")]
    })
    const withResult: Array<AgUi.Message> = [
      hello,
      { id: "a1", role: "assistant", toolCalls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }] },
      { id: "r1", role: "tool", toolCallId: "c1", content: "done" }
    ]
    await (await post(agent.url, input([hello]), { headers: { "content-type": "application/json", "x-app": "a" } })).text()
    await (await post(agent.url, input(withResult))).text()
    expect(seen).toEqual([[0, "hello", [], "a"], [1, "hello", ["c1"], undefined]])
  })

  it("refuses what is not a RunAgentInput: 422 with the schema's issues, 400 for a body that is not JSON, 405 for GET", async () => {
    const invalid = await post(agent.url, { threadId: 1, messages: [] })
    expect(invalid.status).toBe(422)
    const body = (await invalid.json()) as { error: string; issues: Array<string> }
    expect(body.error).toBe("Invalid RunAgentInput")
    expect(body.issues.some((issue) => issue.startsWith("threadId:"))).toBe(true)
    expect(body.issues.some((issue) => issue.startsWith("runId:"))).toBe(true)
    expect((await post(agent.url, "{not json")).status).toBe(400)
    expect((await fetch(agent.url)).status).toBe(405)
    expect(agent.requests.map((r) => [r.method, r.input === undefined, r.issues.length > 0])).toEqual([
      ["POST", true, true],
      ["POST", true, true],
      ["GET", true, true]
    ])
  })

  it("streams reasoning under the 1.0 REASONING_* names and the legacy THINKING_* ones", async () => {
    agent.setScript(AgUiAgent.scripts.reasoning)
    const modern = await events(await post(agent.url, input([hello])))
    expect(types(modern).slice(1, 7)).toEqual([
      "REASONING_START",
      "REASONING_MESSAGE_START",
      "REASONING_MESSAGE_CONTENT",
      "REASONING_MESSAGE_CONTENT",
      "REASONING_MESSAGE_END",
      "REASONING_END"
    ])
    agent.setScript(AgUiAgent.scripts.legacyReasoning)
    const legacy = await events(await post(agent.url, input([hello])))
    expect(types(legacy).slice(1, 7)).toEqual([
      "THINKING_START",
      "THINKING_TEXT_MESSAGE_START",
      "THINKING_TEXT_MESSAGE_CONTENT",
      "THINKING_TEXT_MESSAGE_CONTENT",
      "THINKING_TEXT_MESSAGE_END",
      "THINKING_END"
    ])
    expect(legacy[3]).toEqual({ type: "THINKING_TEXT_MESSAGE_CONTENT", delta: "Thinking " })
  })

  it("a frontend tool call ends the run; the run that carries its result gets a reply using it", async () => {
    agent.setScript(AgUiAgent.scripts.frontendTool)
    const first = await events(await post(agent.url, input([hello])))
    expect(types(first)).toEqual([
      "RUN_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "TOOL_CALL_START",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_END",
      "RUN_FINISHED"
    ])
    expect(first[4]).toEqual({ type: "TOOL_CALL_START", toolCallId: "call-1-0", toolCallName: "get_weather", parentMessageId: "msg-1-0" })
    expect(first[5]).toMatchObject({ delta: "{\"city\":\"Paris\"}" })
    const conversation: Array<AgUi.Message> = [
      hello,
      {
        id: "msg-1-0",
        role: "assistant",
        content: "Let me check.",
        toolCalls: [{ id: "call-1-0", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }]
      },
      { id: "result-1", role: "tool", toolCallId: "call-1-0", content: "sunny" }
    ]
    const second = await events(await post(agent.url, input(conversation, { runId: "run-2" })))
    expect(second.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta)).toEqual(["The weather in Paris: sunny."])
    expect(second[1]).toMatchObject({ messageId: "msg-3-0" })
  })

  it("a server-side tool's call is followed by its TOOL_CALL_RESULT", async () => {
    agent.setScript(AgUiAgent.scripts.serverTool)
    const list = await events(await post(agent.url, input([hello])))
    const result = list.find((e) => e.type === "TOOL_CALL_RESULT")
    expect(result).toEqual({ type: "TOOL_CALL_RESULT", messageId: "result-call-1-0", toolCallId: "call-1-0", content: "3 results", role: "tool" })
    expect(types(list).at(-2)).toBe("TEXT_MESSAGE_END")
  })

  it("state, messages snapshots, steps and activities are streamed as given", async () => {
    agent.setScript(AgUiAgent.scripts.state)
    const state = await events(await post(agent.url, input([hello])))
    expect(state.filter((e) => e.type.startsWith("STATE_"))).toEqual([
      { type: "STATE_SNAPSHOT", snapshot: { count: 0, items: [] } },
      { type: "STATE_DELTA", delta: [{ op: "replace", path: "/count", value: 1 }, { op: "add", path: "/items/-", value: "a" }] },
      { type: "STATE_DELTA", delta: [{ op: "replace", path: "/count", value: 2 }] }
    ])
    agent.setScript(AgUiAgent.scripts.messagesSnapshot)
    const snapshot = (await events(await post(agent.url, input([hello])))).find((e) => e.type === "MESSAGES_SNAPSHOT")
    expect(snapshot?.messages).toEqual([
      { id: "snap-user", role: "user", content: "hello" },
      { id: "snap-assistant", role: "assistant", content: "The conversation, as the agent has it." }
    ])
    agent.setScript(AgUiAgent.scripts.steps)
    const steps = await events(await post(agent.url, input([hello])))
    expect(steps.filter((e) => e.type.startsWith("STEP_")).map((e) => [e.type, e.stepName])).toEqual([
      ["STEP_STARTED", "plan"],
      ["STEP_FINISHED", "plan"],
      ["STEP_STARTED", "act"],
      ["STEP_FINISHED", "act"]
    ])
    agent.setScript(AgUiAgent.scripts.activity)
    const activity = await events(await post(agent.url, input([hello])))
    expect(types(activity).slice(1, 3)).toEqual(["ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA"])
  })

  it("RUN_ERROR carries the message and code and ends the stream without RUN_FINISHED", async () => {
    agent.setScript(AgUiAgent.scripts.runError)
    const list = await events(await post(agent.url, input([hello])))
    expect(list.at(-1)).toEqual({ type: "RUN_ERROR", message: "The model is unavailable", code: "MODEL_UNAVAILABLE" })
    expect(types(list)).not.toContain("RUN_FINISHED")
  })

  it("an httpError step answers with the status instead of a stream", async () => {
    agent.setScript([AgUiAgent.httpError(503, { error: "busy" })])
    const response = await post(agent.url, input([hello]))
    expect([response.status, await response.json()]).toEqual([503, { error: "busy" }])
  })

  it("a dropped connection: the frames before it arrive, then the body fails", async () => {
    agent.setScript(AgUiAgent.scripts.dropped)
    const response = await post(agent.url, input([hello]))
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    let text = ""
    await expect((async () => {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return
        text += decoder.decode(value, { stream: true })
      }
    })()).rejects.toThrow()
    expect(text).toContain("\"delta\":\"a reply\"")
    expect(text).not.toContain("RUN_FINISHED")
    expect(await agent.requests[0]!.ended).toBe("closed")
  })

  it("a client that aborts a hanging run closes its connection", async () => {
    agent.setScript([AgUiAgent.text("waiting"), AgUiAgent.hang()])
    const controller = new AbortController()
    const response = await post(agent.url, input([hello]), { signal: controller.signal })
    const reader = response.body!.getReader()
    await reader.read()
    controller.abort()
    expect(await agent.requests[0]!.ended).toBe("closed")
  })

  it("answers a browser's preflight (not recorded) and lets any origin read its answers", async () => {
    const preflight = await fetch(agent.url, {
      method: "OPTIONS",
      headers: { origin: "http://127.0.0.1:5173", "access-control-request-method": "POST", "access-control-request-headers": "content-type, authorization" }
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*")
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST")
    expect(preflight.headers.get("access-control-allow-headers")).toBe("content-type, authorization")
    const response = await post(agent.url, input([hello]))
    expect(response.headers.get("access-control-allow-origin")).toBe("*")
    await response.text()
    expect((await post(agent.url, "{not json")).headers.get("access-control-allow-origin")).toBe("*")
    expect(agent.requests.map((r) => r.method)).toEqual(["POST", "POST"])
  })

  it("weatherAssistant: echoes a message; for the weather, a get_weather round, then the result in words", async () => {
    agent.setScript(AgUiAgent.scripts.weatherAssistant)
    const echo = await events(await post(agent.url, input([{ id: "u1", role: "user", content: "Hi there!" }])))
    expect(echo.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("")).toBe("You said: Hi there!")
    const ask: AgUi.Message = { id: "u2", role: "user", content: "What is the weather in Paris?" }
    const first = await events(await post(agent.url, input([ask], { tools: [{ name: "get_weather", description: "w", parameters: {} }] })))
    expect(first.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("")).toBe("Let me check the weather in Paris.")
    const start = first.find((e) => e.type === "TOOL_CALL_START")!
    expect(start.toolCallName).toBe("get_weather")
    expect(JSON.parse(first.filter((e) => e.type === "TOOL_CALL_ARGS").map((e) => e.delta).join(""))).toEqual({ city: "Paris" })
    const call: AgUi.Message = {
      id: "a1",
      role: "assistant",
      toolCalls: [{ id: String(start.toolCallId), type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }]
    }
    const result: AgUi.Message = {
      id: "t1",
      role: "tool",
      toolCallId: String(start.toolCallId),
      content: JSON.stringify({ city: "Paris", temperature: 21, conditions: "sunny" })
    }
    const second = await events(await post(agent.url, input([ask, call, result])))
    expect(second.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("")).toBe(
      "Here is the weather in Paris: 21°, sunny."
    )
    // Without the tool it says so instead of calling it.
    const without = await events(await post(agent.url, input([ask])))
    expect(types(without)).not.toContain("TOOL_CALL_START")
  })

  it("listens on the port it is given", async () => {
    const probe = await AgUiAgent.start()
    const port = Number(new URL(probe.url).port)
    await probe.close()
    const fixed = await AgUiAgent.start({ port })
    try {
      expect(fixed.url).toBe(`http://127.0.0.1:${port}/agent`)
    } finally {
      await fixed.close()
    }
  })
})
