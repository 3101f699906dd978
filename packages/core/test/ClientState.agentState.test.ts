// The AG-UI agent's shared state and conversation snapshots in the reducer: STATE_SNAPSHOT,
// STATE_DELTA (refused deltas leave the state and record an anomaly), SET_AGENT_STATE, and
// MESSAGES_SNAPSHOT replacing a thread's messages.
import { describe, expect, it } from "vitest"
import * as ClientState from "../src/ClientState.js"
import type { Action, ClientState as State, ThreadState } from "../src/ClientState.js"
import type * as Events from "../src/Events.js"

const { getThreadState, initial, PLACEHOLDER_THREAD_ID: PLACEHOLDER, reduce } = ClientState

type AnyEvent = Events.TamboEvent | Events.UnknownEvent

const at = (threadId: string, list: ReadonlyArray<AnyEvent>, start = 1000): Array<Action> =>
  list.map((event, i) => ({ type: "EVENT", threadId, event, at: start + i * 10 }))

const snapshot = (value: unknown): AnyEvent => ({ type: "STATE_SNAPSHOT", snapshot: value })
const delta = (...operations: ReadonlyArray<unknown>): AnyEvent => ({ type: "STATE_DELTA", delta: operations })

const thread = (state: State, threadId: string): ThreadState => {
  const found = getThreadState(state, threadId)
  if (found === undefined) throw new Error(`no thread ${threadId}`)
  return found
}

const prototypeKeys = () => Object.getOwnPropertyNames(Object.prototype).sort()

// A thread "t1" with a user message and a started run.
const started = (): State =>
  reduce(initial, [
    { type: "INIT_THREAD", threadId: "t1", at: 1 },
    { type: "USER_MESSAGE", threadId: "t1", message: { id: "u1", role: "user", content: [{ type: "text", text: "hi" }] }, at: 2 },
    ...at("t1", [{ type: "RUN_STARTED", threadId: "t1", runId: "run1" }], 900)
  ])

describe("agent state (STATE_SNAPSHOT, STATE_DELTA)", () => {
  it("a snapshot is the thread's state; deltas patch it; other threads keep theirs", () => {
    const before = reduce(started(), [{ type: "INIT_THREAD", threadId: "t2", at: 1 }])
    const s = reduce(before, at("t1", [
      snapshot({ count: 0, items: [] }),
      delta({ op: "replace", path: "/count", value: 1 }, { op: "add", path: "/items/-", value: "a" }),
      delta({ op: "replace", path: "/count", value: 2 })
    ]))
    expect(thread(s, "t1").thread.state).toEqual({ count: 2, items: ["a"] })
    expect(thread(s, "t1").anomalies).toEqual([])
    expect(thread(s, "t2")).toBe(thread(before, "t2"))
    expect(thread(s, "t2").thread.state).toBeUndefined()
  })

  it("a delta before any snapshot patches {} (what an agent that never sent state is sent)", () => {
    const s = reduce(started(), at("t1", [delta({ op: "add", path: "/ready", value: true })]))
    expect(thread(s, "t1").thread.state).toEqual({ ready: true })
  })

  it("the same, event by event and in one batch", () => {
    const list = at("t1", [snapshot({ n: [1] }), delta({ op: "add", path: "/n/-", value: 2 }), delta({ op: "remove", path: "/n/0" })])
    const batched = reduce(started(), list)
    const stepwise = list.reduce((state, action) => reduce(state, [action]), started())
    expect(thread(batched, "t1").thread.state).toEqual({ n: [2] })
    expect(thread(stepwise, "t1").thread.state).toEqual({ n: [2] })
  })

  // Found by the model (AgentState.model.test.ts): a null state was patched as if it were {}.
  it("a delta after a null snapshot patches null, which fails: only a thread without state is patched as {}", () => {
    const s = reduce(started(), at("t1", [snapshot(null), delta({ op: "add", path: "/a", value: 0 })]))
    expect(thread(s, "t1").thread.state).toBeNull()
    expect(thread(s, "t1").anomalies).toEqual([{ eventType: "STATE_DELTA", reason: expect.stringContaining("refused"), at: 1010 }])
  })

  it("a snapshot of any JSON value replaces the state as it is", () => {
    const s = reduce(started(), at("t1", [snapshot({ a: 1 }), snapshot([1, 2]), snapshot("text")]))
    expect(thread(s, "t1").thread.state).toBe("text")
  })

  describe("a refused delta leaves the state as it was, records an anomaly, and the run goes on", () => {
    const cases: ReadonlyArray<{ readonly name: string; readonly delta: AnyEvent; readonly reason: RegExp }> = [
      {
        name: "a path through __proto__",
        delta: delta({ op: "add", path: "/__proto__/polluted", value: true }),
        reason: /refused/
      },
      {
        name: "a path through constructor/prototype",
        delta: delta({ op: "add", path: "/constructor/prototype/polluted", value: true }),
        reason: /refused/
      },
      {
        name: "an operation that fails (replace of a missing key)",
        delta: delta({ op: "replace", path: "/missing", value: 1 }),
        reason: /refused.*operation 0/
      },
      {
        name: "a failing test: nothing of the delta applies",
        delta: delta({ op: "replace", path: "/count", value: 9 }, { op: "test", path: "/count", value: 0 }),
        reason: /operation 1/
      },
      {
        name: "a delta that is not a JSON Patch",
        delta: delta({ op: "merge", path: "/count", value: 1 }),
        reason: /not a JSON Patch/
      }
    ]
    it.each(cases)("$name", ({ delta: refused, reason }) => {
      const prototype = prototypeKeys()
      const before = reduce(started(), at("t1", [snapshot({ count: 0 })]))
      const s = reduce(before, at("t1", [refused], 2000))
      const t = thread(s, "t1")
      expect(t.thread.state).toBe(thread(before, "t1").thread.state)
      expect(t.anomalies).toEqual([{ eventType: "STATE_DELTA", reason: expect.stringMatching(reason), at: 2000 }])
      expect(prototypeKeys()).toEqual(prototype)
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      // The run goes on: later events apply.
      const after = reduce(s, at("t1", [delta({ op: "replace", path: "/count", value: 1 }), {
        type: "TEXT_MESSAGE_START",
        messageId: "m1",
        role: "assistant"
      }], 3000))
      expect(thread(after, "t1").thread.state).toEqual({ count: 1 })
      expect(thread(after, "t1").thread.messages.map((m) => m.id)).toEqual(["u1", "m1"])
      expect(thread(after, "t1").streaming.status).toBe("streaming")
    })
  })

  it("SET_AGENT_STATE replaces the state of a known thread; of an unknown one, nothing happens", () => {
    const s = reduce(started(), [
      { type: "SET_AGENT_STATE", threadId: "t1", state: { mode: "edit" } },
      { type: "SET_AGENT_STATE", threadId: "nowhere", state: { mode: "edit" } }
    ])
    expect(thread(s, "t1").thread.state).toEqual({ mode: "edit" })
    expect(getThreadState(s, "nowhere")).toBeUndefined()
    const patched = reduce(s, at("t1", [delta({ op: "replace", path: "/mode", value: "view" })]))
    expect(thread(patched, "t1").thread.state).toEqual({ mode: "view" })
  })

  it("a reconciliation with the Tambo API's copy of the thread keeps it (the API holds no agent state)", () => {
    const s = reduce(started(), [...at("t1", [snapshot({ n: 1 }), { type: "RUN_FINISHED", threadId: "t1", runId: "run1" }])])
    const server = { ...thread(s, "t1").thread, name: "Named" }
    delete server.state
    const reconciled = reduce(s, [{ type: "RECONCILE_THREAD", threadId: "t1", thread: server, pendingToolCallIds: [] }])
    expect(thread(reconciled, "t1").thread).toMatchObject({ name: "Named", state: { n: 1 } })
  })

  it("the placeholder's state goes with its messages to the thread its run starts; the placeholder starts afresh", () => {
    const s = reduce(initial, [
      { type: "SET_AGENT_STATE", threadId: PLACEHOLDER, state: { todo: ["a"] } },
      { type: "USER_MESSAGE", threadId: PLACEHOLDER, message: { id: "u1", role: "user", content: [] }, at: 1 },
      ...at(PLACEHOLDER, [{ type: "RUN_STARTED", threadId: "thr_1", runId: "run1" }, delta({ op: "add", path: "/todo/-", value: "b" })])
    ])
    expect(thread(s, "thr_1").thread.state).toEqual({ todo: ["a", "b"] })
    expect(thread(s, PLACEHOLDER).thread.state).toBeUndefined()
  })

  it("so does a temporary thread's (a new thread started while the placeholder was busy)", () => {
    const s = reduce(initial, [
      { type: "INIT_THREAD", threadId: "local:1", at: 1 },
      { type: "SET_AGENT_STATE", threadId: "local:1", state: { todo: [] } },
      ...at("local:1", [{ type: "RUN_STARTED", threadId: "thr_2", runId: "run1" }])
    ])
    expect(thread(s, "thr_2").thread.state).toEqual({ todo: [] })
    expect(getThreadState(s, "local:1")).toBeUndefined()
  })
})

describe("MESSAGES_SNAPSHOT", () => {
  const messagesSnapshot = (messages: ReadonlyArray<unknown>): AnyEvent => ({ type: "MESSAGES_SNAPSHOT", messages })
  const textStart = (messageId: string): AnyEvent => ({ type: "TEXT_MESSAGE_START", messageId, role: "assistant" })
  const text = (messageId: string, delta: string): AnyEvent => ({ type: "TEXT_MESSAGE_CONTENT", messageId, delta })

  it("replaces the thread's conversation, the messages streamed before it included", () => {
    const s = reduce(started(), at("t1", [
      textStart("m1"),
      text("m1", "Replacing the conversation."),
      { type: "TEXT_MESSAGE_END", messageId: "m1" },
      messagesSnapshot([
        { id: "snap-user", role: "user", content: "hello" },
        { id: "snap-reasoning", role: "reasoning", content: "Hm." },
        { id: "snap-assistant", role: "assistant", content: "As the agent has it." },
        { id: "snap-activity", role: "activity", activityType: "plan", content: {} }
      ])
    ]))
    const t = thread(s, "t1")
    expect(t.thread.messages.map(({ content, id, reasoning, role }) => ({ id, role, content, reasoning }))).toEqual([
      { id: "snap-user", role: "user", content: [{ type: "text", text: "hello" }], reasoning: undefined },
      { id: "snap-assistant", role: "assistant", content: [{ type: "text", text: "As the agent has it." }], reasoning: ["Hm."] }
    ])
    expect(t.anomalies).toEqual([])
    // Each message has a timestamp: the snapshot's, which the AG-UI messages do not carry.
    expect(t.thread.messages.map((m) => m.createdAt)).toEqual([new Date(1030).toISOString(), new Date(1030).toISOString()])
  })

  it("a message the thread had keeps its timestamp", () => {
    const s = reduce(started(), at("t1", [messagesSnapshot([{ id: "u1", role: "user", content: "hi" }])], 5000))
    expect(thread(s, "t1").thread.messages[0]!.createdAt).toBe(thread(started(), "t1").thread.messages[0]!.createdAt)
  })

  it("the run goes on from the new conversation: its events find its messages and tool calls", () => {
    const s = reduce(started(), at("t1", [
      textStart("m1"),
      text("m1", "Half"),
      messagesSnapshot([
        { id: "u1", role: "user", content: "hi" },
        { id: "m1", role: "assistant", content: "Half", toolCalls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{\"a\":1}" } }] }
      ]),
      text("m1", " and more"),
      { type: "TEXT_MESSAGE_END", messageId: "m1" },
      { type: "TOOL_CALL_RESULT", messageId: "r1", toolCallId: "c1", content: "done" },
      textStart("m2"),
      text("m2", "After.")
    ]))
    const t = thread(s, "t1")
    expect(t.anomalies).toEqual([])
    expect(t.thread.messages.map((m) => [m.id, m.content])).toEqual([
      ["u1", [{ type: "text", text: "hi" }]],
      ["m1", [{ type: "text", text: "Half" }, { type: "tool_use", id: "c1", name: "f", input: { a: 1 } }, { type: "text", text: " and more" }]],
      ["r1", [{ type: "tool_result", toolUseId: "c1", content: [{ type: "text", text: "done" }] }]],
      ["m2", [{ type: "text", text: "After." }]]
    ])
    expect(t.streaming.messageId).toBe("m2")
  })

  it("what the snapshot drops is no longer open: its message's deltas and its call's arguments are anomalies", () => {
    const s = reduce(started(), at("t1", [
      textStart("m1"),
      { type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "f", parentMessageId: "m1" },
      { type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: "{\"a\":" },
      messagesSnapshot([{ id: "u1", role: "user", content: "hi" }]),
      { type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: "1}" },
      text("m1", "lost")
    ]))
    const t = thread(s, "t1")
    expect(t.thread.messages.map((m) => m.id)).toEqual(["u1"])
    expect(t.streaming.messageId).toBeUndefined()
    expect(t.internal.toolArgs.size).toBe(0)
    expect(t.anomalies.map((a) => [a.eventType, a.reason])).toEqual([
      ["TOOL_CALL_ARGS", "unknown tool call c1"],
      ["TEXT_MESSAGE_CONTENT", "unknown message m1"]
    ])
  })

  it("a snapshot that is not AG-UI messages is an anomaly and leaves the conversation", () => {
    const before = started()
    const s = reduce(before, at("t1", [messagesSnapshot([{ id: "x", role: "wizard", content: "?" }])]))
    const t = thread(s, "t1")
    expect(t.thread.messages).toBe(thread(before, "t1").thread.messages)
    expect(t.anomalies).toEqual([{ eventType: "MESSAGES_SNAPSHOT", reason: expect.stringContaining("not an AG-UI message"), at: 1000 }])
  })

  it("with two messages under one id keeps the last, where the first stood, which that id's later text goes to; an anomaly says so", () => {
    const s = reduce(started(), at("t1", [
      messagesSnapshot([
        { id: "u1", role: "user", content: "hello" },
        { id: "a1", role: "assistant", content: "first" },
        { id: "a2", role: "assistant", content: "between" },
        { id: "a1", role: "assistant", content: "second" }
      ]),
      text("a2", "!")
    ]))
    const t = thread(s, "t1")
    expect(t.thread.messages.map(({ content, id }) => [id, content])).toEqual([
      ["u1", [{ type: "text", text: "hello" }]],
      ["a1", [{ type: "text", text: "second" }]],
      ["a2", [{ type: "text", text: "between!" }]]
    ])
    expect(t.anomalies).toEqual([{ eventType: "MESSAGES_SNAPSHOT", reason: "message a1 appears more than once: the last is kept", at: 1000 }])
  })

  it("the agent state is not part of it", () => {
    const s = reduce(started(), at("t1", [snapshot({ n: 1 }), messagesSnapshot([])]))
    expect(thread(s, "t1").thread.state).toEqual({ n: 1 })
    expect(thread(s, "t1").thread.messages).toEqual([])
  })
})
