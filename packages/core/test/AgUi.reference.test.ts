// The reference half of the AG-UI differential tests: what `@ag-ui/client`'s HttpAgent ends
// with for each of the scripted agent's scripts. The SDK half will run the same scripts and be
// held to these conversations and states.
import type { Message } from "@ag-ui/client"
import { AgUiAgent } from "@tambo-effect/testing"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import { type ReferenceTool, runReference } from "./agui/reference.js"

const hello: Message = { id: "u1", role: "user", content: "hello" }

const weather: ReferenceTool = {
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  execute: (args) => `sunny in ${(args as { city: string }).city}`
}

describe("HttpAgent against the scripted AG-UI agent (the reference conversations)", () => {
  let agent: AgUiAgent.AgUiAgent
  beforeAll(async () => {
    agent = await AgUiAgent.start()
  })
  afterEach(() => agent.reset())
  afterAll(() => agent.close())

  const run = (script: AgUiAgent.ScriptSource, options: { readonly tools?: ReadonlyArray<ReferenceTool> } = {}) => {
    agent.setScript(script)
    return runReference({ url: agent.url, messages: [hello], ...options })
  }

  it("text: one assistant message", async () => {
    const outcome = await run(AgUiAgent.scripts.text)
    expect(outcome.messages).toEqual([hello, { id: "msg-1-0", role: "assistant", content: "Hello, world." }])
    expect([outcome.runs, outcome.state, outcome.runError, outcome.failure]).toEqual([1, {}, undefined, undefined])
  })

  it("reasoning under the 1.0 names and the legacy THINKING_* ones: a reasoning message before the reply", async () => {
    const modern = await run(AgUiAgent.scripts.reasoning)
    expect(modern.messages).toEqual([
      hello,
      { id: "reasoning-1-0", role: "reasoning", content: "Thinking it over." },
      { id: "msg-1-1", role: "assistant", content: "Done thinking." }
    ])
    const legacy = await run(AgUiAgent.scripts.legacyReasoning)
    // The legacy events carry no message id: the client makes one up.
    expect(legacy.messages.map((m) => m.role === "reasoning" ? { ...m, id: "*" } : m)).toEqual([
      hello,
      { id: "*", role: "reasoning", content: "Thinking the old way." },
      { id: "msg-1-0", role: "assistant", content: "Done thinking." }
    ])
  })

  it("a frontend tool: the app runs it and starts the next run with its result, which the reply uses", async () => {
    const outcome = await run(AgUiAgent.scripts.frontendTool, { tools: [weather] })
    expect(outcome.runs).toBe(2)
    expect(outcome.toolCalls).toEqual([{ id: "call-1-0", name: "get_weather", args: { city: "Paris" }, result: "sunny in Paris" }])
    expect(outcome.messages).toEqual([
      hello,
      {
        id: "msg-1-0",
        role: "assistant",
        content: "Let me check.",
        toolCalls: [{ id: "call-1-0", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }]
      },
      { id: "tool-result-call-1-0", role: "tool", toolCallId: "call-1-0", content: "sunny in Paris" },
      { id: "msg-3-0", role: "assistant", content: "The weather in Paris: sunny in Paris." }
    ])
    // The second run carried the whole conversation, the tool's result last, and offered the tool again.
    const second = agent.requests[1]!.input!
    expect(second.messages.at(-1)).toEqual({ id: "tool-result-call-1-0", role: "tool", toolCallId: "call-1-0", content: "sunny in Paris" })
    expect(second.tools?.map((t) => t.name)).toEqual(["get_weather"])
  })

  it("a server-side tool: its call and TOOL_CALL_RESULT are in the conversation, and the app runs nothing", async () => {
    const outcome = await run(AgUiAgent.scripts.serverTool, { tools: [weather] })
    expect([outcome.runs, outcome.toolCalls]).toEqual([1, []])
    expect(outcome.messages).toEqual([
      hello,
      {
        id: "msg-1-0",
        role: "assistant",
        content: "Searching.",
        toolCalls: [{ id: "call-1-0", type: "function", function: { name: "search", arguments: "{\"query\":\"effect\"}" } }]
      },
      { id: "result-call-1-0", role: "tool", toolCallId: "call-1-0", content: "3 results" },
      { id: "msg-1-1", role: "assistant", content: "Found 3 results." }
    ])
  })

  it("STATE_SNAPSHOT then STATE_DELTAs: the state is the snapshot with the patches applied", async () => {
    const outcome = await run(AgUiAgent.scripts.state)
    expect(outcome.state).toEqual({ count: 2, items: ["a"] })
    expect(outcome.messages).toEqual([hello, { id: "msg-1-0", role: "assistant", content: "Counting." }])
  })

  it("a STATE_DELTA through __proto__: the client refuses it (warns, keeps the state) and the run goes on", async () => {
    const warnings: Array<string> = []
    const warn = vi.spyOn(console, "warn").mockImplementation((message: unknown) => void warnings.push(String(message)))
    const outcome = await run(AgUiAgent.scripts.hostileState).finally(() => warn.mockRestore())
    expect(warnings).toEqual([expect.stringContaining("Failed to apply state patch")])
    expect(outcome.state).toEqual({ count: 0 })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect([outcome.runError, outcome.failure]).toEqual([undefined, undefined])
    expect(outcome.messages).toEqual([hello, { id: "msg-1-0", role: "assistant", content: "Tried." }])
  })

  it("MESSAGES_SNAPSHOT replaces the conversation, the messages streamed before it included", async () => {
    const outcome = await run(AgUiAgent.scripts.messagesSnapshot)
    expect(outcome.messages).toEqual([
      { id: "snap-user", role: "user", content: "hello" },
      { id: "snap-assistant", role: "assistant", content: "The conversation, as the agent has it." }
    ])
  })

  it("steps are events, not messages; an activity is a message of role activity with its content patched", async () => {
    const steps = await run(AgUiAgent.scripts.steps)
    expect(steps.messages).toEqual([
      hello,
      { id: "msg-1-0", role: "assistant", content: "Planning." },
      { id: "msg-1-1", role: "assistant", content: "Acting." }
    ])
    expect(steps.events[0]!.filter((e) => e.type.startsWith("STEP_")).map((e) => e.type)).toEqual([
      "STEP_STARTED",
      "STEP_FINISHED",
      "STEP_STARTED",
      "STEP_FINISHED"
    ])
    const activity = await run(AgUiAgent.scripts.activity)
    expect(activity.messages).toEqual([
      hello,
      { id: "activity-1", role: "activity", activityType: "plan", content: { steps: ["search"], done: 1 } },
      { id: "msg-1-0", role: "assistant", content: "Planned." }
    ])
  })

  it("RUN_ERROR: the run ends with the agent's message and code; what streamed before stays", async () => {
    const outcome = await run(AgUiAgent.scripts.runError)
    expect(outcome.runError).toEqual({ message: "The model is unavailable", code: "MODEL_UNAVAILABLE" })
    expect(outcome.messages).toEqual([hello, { id: "msg-1-0", role: "assistant", content: "Starting." }])
  })

  it("a dropped connection fails the run; the text streamed before the drop stays", async () => {
    const outcome = await run(AgUiAgent.scripts.dropped)
    expect(outcome.failure).toBeDefined()
    expect(outcome.messages).toEqual([hello, { id: "msg-1-0", role: "assistant", content: "Half a reply" }])
  })

  it("an HTTP error fails the run before any event", async () => {
    const outcome = await run([AgUiAgent.httpError(503, { error: "busy" })])
    expect(outcome.failure).toContain("HTTP 503")
    expect(outcome.messages).toEqual([hello])
  })
})
