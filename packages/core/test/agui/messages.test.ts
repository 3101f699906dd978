import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import { fromAgUiMessages, lastOfEachId } from "../../src/internal/agui/messages.js"
import { toAgUiMessages } from "../../src/internal/agui/runAgentInput.js"
import type * as Wire from "../../src/internal/agui/wire.js"

const call = (id: string, name: string, args: string): Wire.ToolCall => ({ id, type: "function", function: { name, arguments: args } })

describe("fromAgUiMessages", () => {
  it.each<[string, ReadonlyArray<Wire.Message>, unknown]>([
    ["a user's text", [{ id: "u1", role: "user", content: "hello" }], [{ id: "u1", role: "user", content: [{ type: "text", text: "hello" }] }]],
    [
      "media parts as resources",
      [{
        id: "u1",
        role: "user",
        content: [
          { type: "text", text: "see" },
          { type: "image", source: { type: "data", value: "aGk=", mimeType: "image/png" } },
          { type: "document", source: { type: "url", value: "https://x.test/a.pdf" } }
        ]
      }],
      [{
        id: "u1",
        role: "user",
        content: [
          { type: "text", text: "see" },
          { type: "resource", resource: { blob: "aGk=", mimeType: "image/png" } },
          { type: "resource", resource: { uri: "https://x.test/a.pdf" } }
        ]
      }]
    ],
    [
      "system and developer messages are system messages",
      [{ id: "s1", role: "system", content: "Be brief." }, { id: "d1", role: "developer", content: "Use tools." }],
      [
        { id: "s1", role: "system", content: [{ type: "text", text: "Be brief." }] },
        { id: "d1", role: "system", content: [{ type: "text", text: "Use tools." }] }
      ]
    ],
    [
      "an assistant's text and tool calls; arguments that are not a JSON object are {}",
      [{ id: "a1", role: "assistant", content: "Checking.", toolCalls: [call("c1", "get_weather", "{\"city\":\"Paris\"}"), call("c2", "t", "[1]"), call("c3", "t", "{bad")] }],
      [{
        id: "a1",
        role: "assistant",
        content: [
          { type: "text", text: "Checking." },
          { type: "tool_use", id: "c1", name: "get_weather", input: { city: "Paris" } },
          { type: "tool_use", id: "c2", name: "t", input: {} },
          { type: "tool_use", id: "c3", name: "t", input: {} }
        ]
      }]
    ],
    [
      "a tool message is a user message holding the result; an error marks it",
      [
        { id: "a1", role: "assistant", toolCalls: [call("c1", "t", "{}")] },
        { id: "r1", role: "tool", toolCallId: "c1", content: "failed", error: "failed" }
      ],
      [
        { id: "a1", role: "assistant", content: [{ type: "tool_use", id: "c1", name: "t", input: {} }] },
        { id: "r1", role: "user", content: [{ type: "tool_result", toolUseId: "c1", content: [{ type: "text", text: "failed" }], isError: true }] }
      ]
    ],
    [
      "reasoning goes with the assistant message after it; activities are not thread messages",
      [
        { id: "x1", role: "activity", activityType: "plan", content: {} },
        { id: "r1", role: "reasoning", content: "Thinking." },
        { id: "a1", role: "assistant", content: "Done." }
      ],
      [{ id: "a1", role: "assistant", content: [{ type: "text", text: "Done." }], reasoning: ["Thinking."] }]
    ]
  ])("%s", (_name, messages, expected) => {
    expect(fromAgUiMessages(messages)).toEqual(expected)
  })

  it("is undone by toAgUiMessages for a conversation of text, tool calls and results", () => {
    const conversation: ReadonlyArray<Wire.Message> = [
      { id: "s1", role: "system", content: "Be brief." },
      { id: "u1", role: "user", content: "weather in Paris?" },
      { id: "a1", role: "assistant", content: "Let me check.", toolCalls: [call("c1", "get_weather", "{\"city\":\"Paris\"}")] },
      { id: "r1", role: "tool", toolCallId: "c1", content: "sunny" },
      { id: "a2", role: "assistant", content: "Sunny." }
    ]
    expect(Either.getOrThrow(toAgUiMessages(fromAgUiMessages(conversation)))).toEqual(conversation)
  })
})

describe("lastOfEachId", () => {
  const a = (id: string, content: string): Wire.Message => ({ id, role: "assistant", content })

  it("keeps the last message of each id where the first stood, and names the ids that came again", () => {
    const { messages, repeated } = lastOfEachId([a("a1", "first"), a("a2", "x"), a("a1", "second"), a("a1", "third")])
    expect(messages).toEqual([a("a1", "third"), a("a2", "x")])
    expect(repeated).toEqual(["a1"])
  })

  it("gives a conversation without repeated ids back as it is", () => {
    const conversation = [a("a1", "x"), a("a2", "y")]
    expect(lastOfEachId(conversation)).toEqual({ messages: conversation, repeated: [] })
    expect(lastOfEachId(conversation).messages).toBe(conversation)
  })
})
