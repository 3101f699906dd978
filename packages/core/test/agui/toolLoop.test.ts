import { describe, expect, it } from "vitest"
import { callsToRun } from "../../src/internal/agui/toolLoop.js"
import type * as Types from "../../src/Types.js"

const assistant = (id: string, content: Array<Types.Content>): Types.TamboThreadMessage => ({ id, role: "assistant", content })
const use = (id: string, name: string, input: Record<string, unknown> = {}): Types.TamboToolUseContent => ({ type: "tool_use", id, name, input })
const result = (toolUseId: string): Types.ToolResultContent => ({ type: "tool_result", toolUseId, content: [{ type: "text", text: "ok" }] })
const user = (id: string, content: Array<Types.Content>): Types.TamboThreadMessage => ({ id, role: "user", content })

const frontend = new Set(["get_weather", "pick_color"])

describe("callsToRun", () => {
  it.each<[string, ReadonlyArray<Types.TamboThreadMessage>, number, ReadonlyArray<string>]>([
    ["a frontend call nothing answered", [user("u1", [{ type: "text", text: "hi" }]), assistant("a1", [use("c1", "get_weather", { city: "Paris" })])], 0, ["c1"]],
    ["several, in order, across messages", [assistant("a1", [use("c1", "get_weather"), use("c2", "pick_color")]), assistant("a2", [use("c3", "get_weather")])], 0, ["c1", "c2", "c3"]],
    ["a server-side tool's call is not run", [assistant("a1", [use("s1", "search")])], 0, []],
    ["a call its TOOL_CALL_RESULT answered is not run", [assistant("a1", [use("c1", "get_weather"), result("c1")])], 0, []],
    ["a call a user message of results answered is not run", [assistant("a1", [use("c1", "get_weather")]), user("u2", [result("c1")])], 0, []],
    ["calls before the run's first message are not this run's", [assistant("a1", [use("c1", "get_weather")]), user("u2", [{ type: "text", text: "again" }]), assistant("a2", [use("c2", "get_weather")])], 2, ["c2"]],
    ["a call id that repeats unanswered is run once", [assistant("a1", [use("c1", "get_weather")]), assistant("a2", [use("c1", "get_weather")])], 0, ["c1"]],
    ["an id an earlier, answered round used is a new call", [
      assistant("a1", [use("call_0", "get_weather")]),
      user("u2", [result("call_0")]),
      assistant("a2", [use("call_0", "get_weather")])
    ], 2, ["call_0"]],
    ["a result before a call does not answer it", [user("u0", [result("c1")]), assistant("a1", [use("c1", "get_weather")])], 0, ["c1"]]
  ])("%s", (_name, messages, from, expected) => {
    expect(callsToRun(messages, frontend, from).map((call) => call.toolCallId)).toEqual(expected)
  })

  it("carries the tool's name and arguments", () => {
    expect(callsToRun([assistant("a1", [use("c1", "get_weather", { city: "Paris" })])], frontend)).toEqual([
      { toolCallId: "c1", toolName: "get_weather", args: { city: "Paris" } }
    ])
  })
})
