import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import type * as Events from "../../src/Events.js"
import * as AgentState from "../../src/internal/agui/agentState.js"

const snapshot = (value: unknown): Events.StateSnapshotEvent => ({ type: "STATE_SNAPSHOT", snapshot: value })
const delta = (operations: ReadonlyArray<unknown>): Events.StateDeltaEvent => ({ type: "STATE_DELTA", delta: operations })

const run = (events: ReadonlyArray<Events.StateSnapshotEvent | Events.StateDeltaEvent>, threadId = "t1") => {
  let states: AgentState.AgentStates = AgentState.empty
  for (const event of events) {
    const next = AgentState.reduce(states, threadId, event)
    if (Either.isLeft(next)) return next
    states = next.right
  }
  return Either.right(states)
}

describe("agent state", () => {
  it.each<[string, ReadonlyArray<Events.StateSnapshotEvent | Events.StateDeltaEvent>, unknown]>([
    ["a snapshot is the state", [snapshot({ count: 0 })], { count: 0 }],
    ["a later snapshot replaces it", [snapshot({ count: 0 }), snapshot({ other: true })], { other: true }],
    [
      "deltas apply in order",
      [
        snapshot({ count: 0, items: [] }),
        delta([{ op: "replace", path: "/count", value: 1 }, { op: "add", path: "/items/-", value: "a" }]),
        delta([{ op: "replace", path: "/count", value: 2 }])
      ],
      { count: 2, items: ["a"] }
    ],
    ["a delta with no snapshot before it patches {}", [delta([{ op: "add", path: "/a", value: 1 }])], { a: 1 }],
    ["move, copy and test", [
      snapshot({ a: 1, b: { c: 2 } }),
      delta([{ op: "test", path: "/a", value: 1 }, { op: "copy", from: "/b", path: "/d" }, { op: "move", from: "/a", path: "/e" }])
    ], { b: { c: 2 }, d: { c: 2 }, e: 1 }]
  ])("%s", (_name, events, expected) => {
    const result = run(events)
    expect(Either.isRight(result)).toBe(true)
    if (Either.isRight(result)) expect(AgentState.get(result.right, "t1")).toEqual(expected)
  })

  it("keeps one state per thread; a thread without one reads {}", () => {
    let states = Either.getOrThrow(AgentState.reduce(AgentState.empty, "t1", snapshot({ a: 1 })))
    const before = states.get("t1")
    states = Either.getOrThrow(AgentState.reduce(states, "t2", snapshot({ b: 2 })))
    expect([AgentState.get(states, "t1"), AgentState.get(states, "t2"), AgentState.get(states, "t3")]).toEqual([{ a: 1 }, { b: 2 }, {}])
    expect(states.get("t1")).toBe(before)
  })

  it("does not change the state it is given", () => {
    const state = { count: 0, nested: { items: [1] } }
    const next = Either.getOrThrow(AgentState.applyStateEvent(state, delta([{ op: "add", path: "/nested/items/-", value: 2 }])))
    expect(state).toEqual({ count: 0, nested: { items: [1] } })
    expect(next).toEqual({ count: 0, nested: { items: [1, 2] } })
  })

  it.each<[string, ReadonlyArray<unknown>, number | undefined, string]>([
    ["__proto__ in a path", [{ op: "add", path: "/__proto__/polluted", value: true }], 0, "\"/__proto__/polluted\" names the forbidden segment \"__proto__\""],
    ["constructor/prototype in a path", [
      { op: "add", path: "/ok", value: 1 },
      { op: "add", path: "/constructor/prototype/polluted", value: true }
    ], 1, "forbidden segment \"constructor\" (operation 1)"],
    ["a hostile from", [{ op: "copy", from: "/__proto__", path: "/x" }], 0, "forbidden segment \"__proto__\""],
    ["prototype deeper in a path", [{ op: "add", path: "/a/prototype", value: 1 }], 0, "forbidden segment \"prototype\""],
    ["an operation that fails", [{ op: "remove", path: "/missing" }], 0, "STATE_DELTA refused"],
    ["a failing test", [{ op: "test", path: "/count", value: 5 }], 0, "STATE_DELTA refused"],
    ["not a JSON Patch", [{ op: "frobnicate", path: "/a" }], undefined, "not a JSON Patch"],
    ["an operation without a path", [{ op: "add", value: 1 }], undefined, "not a JSON Patch"]
  ])("refuses %s with an AgUiError (InvalidStateDelta), the state unchanged", (_name, operations, operationIndex, message) => {
    const states = Either.getOrThrow(AgentState.reduce(AgentState.empty, "t1", snapshot({ count: 0 })))
    const result = AgentState.reduce(states, "t1", delta(operations))
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(result.left._tag).toBe("AgUiError")
      expect(result.left.reason).toBe("InvalidStateDelta")
      expect(result.left.operationIndex).toBe(operationIndex)
      expect(result.left.message).toContain(message)
    }
    expect(AgentState.get(states, "t1")).toEqual({ count: 0 })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it("a MESSAGES_SNAPSHOT is decoded as AG-UI messages, or refused with an AgUiError (InvalidMessages)", () => {
    const messages = [
      { id: "u1", role: "user", content: "hello" },
      { id: "a1", role: "assistant", content: "hi", toolCalls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }] },
      { id: "r1", role: "tool", toolCallId: "c1", content: "ok" },
      { id: "x1", role: "activity", activityType: "plan", content: { done: 1 } }
    ]
    expect(Either.getOrThrow(AgentState.messagesOf({ type: "MESSAGES_SNAPSHOT", messages }))).toEqual(messages)
    const bad = AgentState.messagesOf({ type: "MESSAGES_SNAPSHOT", messages: [{ id: "u1", role: "user" }] })
    expect(Either.isLeft(bad) && [bad.left._tag, bad.left.reason]).toEqual(["AgUiError", "InvalidMessages"])
  })
})
