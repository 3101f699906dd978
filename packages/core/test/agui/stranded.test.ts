import { describe, expect, it } from "vitest"
import type * as ClientState from "../../src/ClientState.js"
import { withStranded } from "../../src/internal/agui/stranded.js"
import type * as Types from "../../src/Types.js"

const assistant = (id: string, content: Array<Types.Content>): Types.TamboThreadMessage => ({ id, role: "assistant", content })
const use = (id: string, name: string): Types.TamboToolUseContent => ({ type: "tool_use", id, name, input: {} })
const result = (toolUseId: string): Types.ToolResultContent => ({ type: "tool_result", toolUseId, content: [{ type: "text", text: "ok" }] })
const user = (id: string, content: Array<Types.Content>): Types.TamboThreadMessage => ({ id, role: "user", content })

describe("withStranded: the calls a failed AG-UI run leaves without a result", () => {
  it.each<[string, ReadonlyArray<Types.TamboThreadMessage>, ReadonlyArray<ClientState.AwaitedToolCall>, ReadonlyArray<string>]>([
    ["none: every call answered", [assistant("a1", [use("c1", "probe")]), user("u1", [result("c1")])], [], []],
    ["a call nothing answered", [user("u1", [{ type: "text", text: "hi" }]), assistant("a1", [use("c1", "probe")])], [], ["c1"]],
    ["a server-side call its result never came for", [assistant("a1", [use("s1", "search")])], [], ["s1"]],
    ["the pending calls first, each once", [assistant("a1", [use("c1", "probe"), use("c2", "probe")])], [{ toolCallId: "c2", toolName: "probe" }], ["c2", "c1"]],
    ["a reused id answered before is a new call", [
      assistant("a1", [use("call_0", "probe")]),
      user("u1", [result("call_0")]),
      assistant("a2", [use("call_0", "probe")])
    ], [], ["call_0"]]
  ])("%s", (_name, messages, pending, expected) => {
    expect(withStranded(messages, pending).map((call) => call.toolCallId)).toEqual(expected)
  })

  it("keeps the pending calls as they are (a result the tools gave stays with its call)", () => {
    const pending: ReadonlyArray<ClientState.AwaitedToolCall> = [{ toolCallId: "c1", toolName: "probe", result: result("c1") }]
    expect(withStranded([assistant("a1", [use("c1", "probe")])], pending)).toBe(pending)
  })
})
