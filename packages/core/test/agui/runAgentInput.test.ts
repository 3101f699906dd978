import { RunAgentInputSchema } from "@ag-ui/core/schemas"
import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import { buildRunAgentInput, toAgUiMessages } from "../../src/internal/agui/runAgentInput.js"
import type * as Tool from "../../src/Tool.js"
import type * as Types from "../../src/Types.js"

const user = (id: string, content: Array<Types.Content>): Types.TamboThreadMessage => ({ id, role: "user", content })
const assistant = (id: string, content: Array<Types.Content>, extra: Partial<Types.TamboThreadMessage> = {}): Types.TamboThreadMessage => ({
  id,
  role: "assistant",
  content,
  ...extra
})
const text = (value: string): Types.TextContent => ({ type: "text", text: value })
const toolUse = (id: string, name: string, input: Record<string, unknown>): Types.TamboToolUseContent => ({ type: "tool_use", id, name, input })
const toolResult = (toolUseId: string, value: string, isError?: boolean): Types.ToolResultContent => ({
  type: "tool_result",
  toolUseId,
  content: [text(value)],
  ...(isError === undefined ? {} : { isError })
})

const weather: Tool.ApiTool = {
  name: "get_weather",
  description: "The weather in a city",
  inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
}

const messagesOf = (messages: ReadonlyArray<Types.TamboThreadMessage>) => Either.getOrThrow(toAgUiMessages(messages))

describe("toAgUiMessages", () => {
  it.each<[string, ReadonlyArray<Types.TamboThreadMessage>, unknown]>([
    ["a user's text blocks are one string", [user("u1", [text("hel"), text("lo")])], [{ id: "u1", role: "user", content: "hello" }]],
    [
      "a system message",
      [{ id: "s1", role: "system", content: [text("Be brief.")] }],
      [{ id: "s1", role: "system", content: "Be brief." }]
    ],
    [
      "a resource with text is text; one with media makes the content parts",
      [user("u1", [
        text("see "),
        { type: "resource", resource: { uri: "file:///a.txt", text: "notes" } },
        { type: "resource", resource: { blob: "aGk=", mimeType: "image/png" } },
        { type: "resource", resource: { uri: "https://x.test/a.pdf", mimeType: "application/pdf" } }
      ])],
      [{
        id: "u1",
        role: "user",
        content: [
          { type: "text", text: "see " },
          { type: "text", text: "notes" },
          { type: "image", source: { type: "data", value: "aGk=", mimeType: "image/png" } },
          { type: "document", source: { type: "url", value: "https://x.test/a.pdf", mimeType: "application/pdf" } }
        ]
      }]
    ],
    [
      "an assistant's text and tool calls; its components and reasoning stay with Tambo",
      [
        user("u1", [text("weather?")]),
        assistant("a1", [
          text("Let me check."),
          toolUse("call-1", "get_weather", { city: "Paris" }),
          { type: "component", id: "k1", name: "Card", props: {} }
        ], { reasoning: ["thinking"] })
      ],
      [
        { id: "u1", role: "user", content: "weather?" },
        {
          id: "a1",
          role: "assistant",
          content: "Let me check.",
          toolCalls: [{ id: "call-1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }]
        }
      ]
    ],
    [
      "an assistant message with only a component is not sent",
      [assistant("a1", [{ type: "component", id: "k1", name: "Card", props: {} }])],
      []
    ],
    [
      "a user message of tool results is one tool message per result, an error result with its error",
      [
        assistant("a1", [toolUse("c1", "get_weather", { city: "Paris" }), toolUse("c2", "get_weather", { city: "Oslo" })]),
        user("u2", [toolResult("c1", "sunny"), toolResult("c2", "no such city", true)])
      ],
      [
        {
          id: "a1",
          role: "assistant",
          toolCalls: [
            { id: "c1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } },
            { id: "c2", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Oslo\"}" } }
          ]
        },
        { id: "u2:c1", role: "tool", toolCallId: "c1", content: "sunny" },
        { id: "u2:c2", role: "tool", toolCallId: "c2", content: "no such city", error: "no such city" }
      ]
    ],
    [
      "a message that is one tool result keeps its id; text beside a result is a user message after it",
      [
        assistant("a1", [toolUse("c1", "get_weather", {})]),
        user("u2", [text("also"), toolResult("c1", "sunny")]),
        assistant("a2", [toolUse("c2", "get_weather", {})]),
        user("u3", [toolResult("c2", "rainy")])
      ],
      [
        { id: "a1", role: "assistant", toolCalls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
        { id: "u2:c1", role: "tool", toolCallId: "c1", content: "sunny" },
        { id: "u2", role: "user", content: "also" },
        { id: "a2", role: "assistant", toolCalls: [{ id: "c2", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
        { id: "u3", role: "tool", toolCallId: "c2", content: "rainy" }
      ]
    ],
    [
      "a server-side tool's result held in the assistant message follows it",
      [assistant("a1", [toolUse("s1", "search", { q: "x" }), toolResult("s1", "3 results")])],
      [
        { id: "a1", role: "assistant", toolCalls: [{ id: "s1", type: "function", function: { name: "search", arguments: "{\"q\":\"x\"}" } }] },
        { id: "a1:s1", role: "tool", toolCallId: "s1", content: "3 results" }
      ]
    ],
    [
      "a tool result that answers no earlier call (an agent's stray TOOL_CALL_RESULT or snapshot) is not sent; the rest is",
      [
        user("u1", [text("hi")]),
        assistant("r1", [toolResult("x1", "42")]),
        user("t9", [toolResult("zz", "x")]),
        assistant("a1", [toolUse("c1", "get_weather", {})]),
        user("u2", [toolResult("zz", "x"), toolResult("c1", "sunny")]),
        user("u3", [toolResult("c9", "late"), text("again")]),
        assistant("a2", [toolUse("c9", "get_weather", {})])
      ],
      [
        { id: "u1", role: "user", content: "hi" },
        { id: "a1", role: "assistant", toolCalls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
        { id: "u2", role: "tool", toolCallId: "c1", content: "sunny" },
        { id: "u3", role: "user", content: "again" },
        { id: "a2", role: "assistant", toolCalls: [{ id: "c9", type: "function", function: { name: "get_weather", arguments: "{}" } }] }
      ]
    ],
    [
      "a second result for a call already answered (an agent's TOOL_CALL_RESULT or snapshot again) is not sent; a call started again under its id is a new call",
      [
        assistant("a1", [toolUse("s1", "search", {}), toolResult("s1", "first")]),
        assistant("r2", [toolResult("s1", "again")]),
        user("u2", [toolResult("s1", "and again"), text("thanks")]),
        assistant("a2", [toolUse("s1", "search", {})]),
        user("u3", [toolResult("s1", "new"), toolResult("s1", "twice in one message")])
      ],
      [
        { id: "a1", role: "assistant", toolCalls: [{ id: "s1", type: "function", function: { name: "search", arguments: "{}" } }] },
        { id: "a1:s1", role: "tool", toolCallId: "s1", content: "first" },
        { id: "u2", role: "user", content: "thanks" },
        { id: "a2", role: "assistant", toolCalls: [{ id: "s1", type: "function", function: { name: "search", arguments: "{}" } }] },
        { id: "u3", role: "tool", toolCallId: "s1", content: "new" }
      ]
    ]
  ])("%s", (_name, messages, expected) => {
    expect(messagesOf(messages)).toEqual(expected)
  })
})

describe("buildRunAgentInput", () => {
  it("builds a RunAgentInput that @ag-ui/core's schema accepts: messages, tools, context, state, forwarded props", () => {
    const input = Either.getOrThrow(buildRunAgentInput({
      threadId: "t1",
      runId: "r2",
      parentRunId: "r1",
      messages: [user("u1", [text("hello")])],
      tools: [weather],
      context: { page: "home", user: { name: "Ada" } },
      state: { count: 1 },
      forwardedProps: { model: "small" }
    }))
    expect(input).toEqual({
      threadId: "t1",
      runId: "r2",
      parentRunId: "r1",
      state: { count: 1 },
      messages: [{ id: "u1", role: "user", content: "hello" }],
      tools: [{ name: "get_weather", description: "The weather in a city", parameters: weather.inputSchema }],
      context: [{ description: "page", value: "home" }, { description: "user", value: "{\"name\":\"Ada\"}" }],
      forwardedProps: { model: "small" }
    })
    expect(RunAgentInputSchema.safeParse(input).success).toBe(true)
  })

  it("defaults: no tools, no context, empty state and forwarded props", () => {
    expect(Either.getOrThrow(buildRunAgentInput({ threadId: "t1", runId: "r1", messages: [] }))).toEqual({
      threadId: "t1",
      runId: "r1",
      state: {},
      messages: [],
      tools: [],
      context: [],
      forwardedProps: {}
    })
  })

  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic

  it.each<[string, Partial<Parameters<typeof buildRunAgentInput>[0]>, string]>([
    ["tool arguments JSON cannot carry", { messages: [assistant("a1", [toolUse("c1", "t", { n: 1n })])] }, "arguments of tool call c1"],
    ["two tools of one name", { tools: [weather, weather] }, "Two tools are named get_weather"],
    ["a context value JSON cannot carry", { context: { loop: cyclic } }, "The context loop cannot be sent"],
    ["a state with no JSON form", { state: cyclic }, "The agent state cannot be sent"],
    ["forwarded props with no JSON form", { forwardedProps: () => 1 }, "The forwarded props cannot be sent"]
  ])("refuses %s with an AgUiError (InvalidInput)", (_name, options, message) => {
    const result = buildRunAgentInput({ threadId: "t1", runId: "r1", messages: [], ...options })
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(result.left._tag).toBe("AgUiError")
      expect(result.left.reason).toBe("InvalidInput")
      expect(result.left.message).toContain(message)
    }
  })
})
