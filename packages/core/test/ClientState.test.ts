import { describe, expect, it } from "vitest"
import * as ClientState from "../src/ClientState.js"
import type { Action, ClientState as State, ThreadState } from "../src/ClientState.js"
import type * as Events from "../src/Events.js"
import { applyPatch, type Operation } from "../src/internal/jsonPatch.js"
import * as Pending from "../src/internal/run/pending.js"
import type { TamboThreadMessage, ToolResultContent } from "../src/Types.js"

const { PLACEHOLDER_THREAD_ID: PLACEHOLDER, getMessages, getThreadState, initial, reduce } = ClientState

// ---------------------------------------------------------------------------
// Builders
// ---------------------------------------------------------------------------

type AnyEvent = Events.TamboEvent | Events.UnknownEvent

const e = {
  runStarted: (threadId: string, runId = "run1"): AnyEvent => ({ type: "RUN_STARTED", threadId, runId }),
  runFinished: (threadId: string, runId = "run1", outcome?: unknown): AnyEvent =>
    outcome === undefined ? { type: "RUN_FINISHED", threadId, runId } : { type: "RUN_FINISHED", threadId, runId, outcome },
  runError: (fields: Omit<Events.RunErrorEvent, "type">): AnyEvent => ({ type: "RUN_ERROR", ...fields }),
  textStart: (messageId: string, role: "assistant" | "user" = "assistant"): AnyEvent => ({ type: "TEXT_MESSAGE_START", messageId, role }),
  text: (messageId: string, delta: string): AnyEvent => ({ type: "TEXT_MESSAGE_CONTENT", messageId, delta }),
  textEnd: (messageId: string): AnyEvent => ({ type: "TEXT_MESSAGE_END", messageId }),
  toolStart: (toolCallId: string, toolCallName: string, parentMessageId?: string): AnyEvent =>
    parentMessageId === undefined
      ? { type: "TOOL_CALL_START", toolCallId, toolCallName }
      : { type: "TOOL_CALL_START", toolCallId, toolCallName, parentMessageId },
  toolArgs: (toolCallId: string, delta: string): AnyEvent => ({ type: "TOOL_CALL_ARGS", toolCallId, delta }),
  toolEnd: (toolCallId: string): AnyEvent => ({ type: "TOOL_CALL_END", toolCallId }),
  toolResult: (messageId: string, toolCallId: string, content: string | ReadonlyArray<unknown>): AnyEvent => ({
    type: "TOOL_CALL_RESULT",
    messageId,
    toolCallId,
    content
  }),
  componentStart: (messageId: string, componentId: string, componentName = "Card"): AnyEvent => ({
    type: "CUSTOM",
    name: "tambo.component.start",
    value: { messageId, componentId, componentName }
  }),
  props: (componentId: string, operations: ReadonlyArray<Events.JsonPatchOperation>): AnyEvent => ({
    type: "CUSTOM",
    name: "tambo.component.props_delta",
    value: { componentId, operations }
  }),
  state: (componentId: string, operations: ReadonlyArray<Events.JsonPatchOperation>): AnyEvent => ({
    type: "CUSTOM",
    name: "tambo.component.state_delta",
    value: { componentId, operations }
  }),
  componentEnd: (componentId: string): AnyEvent => ({ type: "CUSTOM", name: "tambo.component.end", value: { componentId } }),
  awaiting: (...calls: ReadonlyArray<readonly [string, string]>): AnyEvent => ({
    type: "CUSTOM",
    name: "tambo.run.awaiting_input",
    value: { pendingToolCalls: calls.map(([toolCallId, toolName]) => ({ toolCallId, toolName, arguments: "{}" })) }
  }),
  parent: (messageId: string, parentMessageId: string): AnyEvent => ({
    type: "CUSTOM",
    name: "tambo.message.parent",
    value: { messageId, parentMessageId }
  }),
  thinkingStart: (): AnyEvent => ({ type: "THINKING_TEXT_MESSAGE_START" }),
  thinking: (delta: string): AnyEvent => ({ type: "THINKING_TEXT_MESSAGE_CONTENT", delta }),
  thinkingEnd: (): AnyEvent => ({ type: "THINKING_TEXT_MESSAGE_END" }),
  reasoningStart: (messageId: string): AnyEvent => ({ type: "REASONING_MESSAGE_START", messageId, role: "reasoning" }),
  reasoning: (messageId: string, delta: string): AnyEvent => ({ type: "REASONING_MESSAGE_CONTENT", messageId, delta }),
  reasoningEnd: (messageId: string): AnyEvent => ({ type: "REASONING_MESSAGE_END", messageId }),
  unknown: (eventType: string): AnyEvent => ({ type: "UNKNOWN", eventType, event: { type: eventType, payload: 1 } })
}

/** EVENT actions for one thread, with `at` = 1000, 1010, 1020, ... unless given. */
const events = (threadId: string, list: ReadonlyArray<AnyEvent | readonly [AnyEvent, number]>, start = 1000): Array<Action> =>
  list.map((item, i) =>
    Array.isArray(item)
      ? { type: "EVENT", threadId, event: item[0], at: item[1] }
      : { type: "EVENT", threadId, event: item as AnyEvent, at: start + i * 10 }
  )

const userMessage = (threadId: string, id: string, text: string, at = 500): Action => ({
  type: "USER_MESSAGE",
  threadId,
  message: { id, role: "user", content: [{ type: "text", text }] },
  at
})

const thread = (state: State, threadId: string): ThreadState => {
  const found = getThreadState(state, threadId)
  if (found === undefined) throw new Error(`no thread ${threadId}`)
  return found
}

const iso = (ms: number) => new Date(ms).toISOString()

/** Freezes the public part of a state, so an accidental in-place write throws (and shows up as an anomaly). */
const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null && !(value instanceof Map) && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}

/** The input of the first block of the first message, which must be a tool call. */
const firstToolInput = (state: State, threadId: string): Record<string, unknown> => {
  const block = getMessages(state, threadId)[0]?.content[0]
  if (block?.type !== "tool_use") throw new Error("not a tool call")
  return block.input
}

const prototypeKeys = () => Object.getOwnPropertyNames(Object.prototype).sort()
const prototypeKeysBefore = prototypeKeys()

/** A props_delta that only reports streaming status. */
const statusProps = (componentId: string, streamingStatus: Record<string, string>): AnyEvent => ({
  type: "CUSTOM",
  name: "tambo.component.props_delta",
  value: { componentId, operations: [], streamingStatus }
})

// A thread "t1" with a user message and one started run.
const started = (): State =>
  reduce(initial, [{ type: "INIT_THREAD", threadId: "t1", at: 1 }, userMessage("t1", "u1", "hi"), ...events("t1", [[e.runStarted("t1"), 900]])])

// ---------------------------------------------------------------------------

describe("initial", () => {
  it("is a deterministic placeholder thread stamped with the epoch", () => {
    expect(initial.currentThreadId).toBe(PLACEHOLDER)
    const placeholder = thread(initial, PLACEHOLDER)
    expect(placeholder.thread).toEqual({
      id: PLACEHOLDER,
      messages: [],
      status: "idle",
      createdAt: "1970-01-01T00:00:00.000Z",
      updatedAt: "1970-01-01T00:00:00.000Z",
      lastRunCancelled: false
    })
    expect(placeholder.streaming).toEqual({ status: "idle" })
    expect(placeholder.pendingToolCalls).toEqual([])
    expect(placeholder.anomalies).toEqual([])
  })

  it("an empty batch, or one without effect, returns the same state", () => {
    expect(reduce(initial, [])).toBe(initial)
    const s = started()
    expect(reduce(s, events("t1", [{ type: "STEP_STARTED", stepName: "x" }]))).toBe(s)
    // Unknown events are ignored outright: not even their thread is created.
    expect(reduce(s, events("elsewhere", [e.unknown("SOMETHING_NEW"), e.unknown("ACTIVITY_DELTA")]))).toBe(s)
  })

  it("getters", () => {
    const s = started()
    expect(ClientState.isPlaceholderThreadId(PLACEHOLDER)).toBe(true)
    expect(ClientState.isPlaceholderThreadId("t1")).toBe(false)
    expect(ClientState.getCurrentThread(s)?.id).toBe(PLACEHOLDER)
    expect(ClientState.getCurrentThreadState(reduce(s, [{ type: "SET_CURRENT_THREAD", threadId: "t1" }]))?.thread.id).toBe("t1")
    expect(ClientState.getThread(s, "t1")?.messages.map((m) => m.id)).toEqual(["u1"])
    expect(getMessages(s, "nope")).toEqual([])
    expect(ClientState.makeThreadState("x", 0).thread).toEqual({ ...thread(initial, PLACEHOLDER).thread, id: "x" })
  })
})

describe("events", () => {
  const table: ReadonlyArray<{ name: string; actions: () => ReadonlyArray<Action>; check: (t: ThreadState, s: State) => void }> = [
    {
      name: "RUN_STARTED starts streaming and resets the last run's outcome",
      actions: () => [
        { type: "INIT_THREAD", threadId: "t1", initialThread: { lastRunCancelled: true }, at: 1 },
        ...events("t1", [[e.runStarted("t1", "r9"), 1234]])
      ],
      check: (t) => {
        expect(t.thread.status).toBe("streaming")
        expect(t.thread.lastRunCancelled).toBe(false)
        expect(t.thread.updatedAt).toBe(iso(1234))
        expect(t.streaming).toEqual({ status: "streaming", runId: "r9", startTime: 1234 })
      }
    },
    {
      name: "RUN_FINISHED goes idle and records the run",
      actions: () => events("t1", [e.runStarted("t1", "r1"), e.runFinished("t1", "r1")]),
      check: (t) => {
        expect(t.thread.status).toBe("idle")
        expect(t.streaming.status).toBe("idle")
        expect(t.lastCompletedRunId).toBe("r1")
        expect(t.thread.lastRunCancelled).toBe(false)
      }
    },
    {
      name: "RUN_FINISHED with a cancelled outcome (AG-UI 1.0) marks the run cancelled",
      actions: () => events("t1", [e.runStarted("t1"), e.runFinished("t1", "run1", { type: "cancelled" })]),
      check: (t) => expect(t.thread.lastRunCancelled).toBe(true)
    },
    {
      name: "RUN_ERROR records the error",
      actions: () =>
        events("t1", [
          e.runStarted("t1"),
          e.runError({ message: "Rate limited", code: "RATE_LIMITED", category: "server_error", isRetryable: true, status: 429 })
        ]),
      check: (t) => {
        expect(t.thread.status).toBe("idle")
        expect(t.thread.lastRunCancelled).toBe(false)
        expect(t.streaming.status).toBe("idle")
        expect(t.streaming.error).toEqual({
          message: "Rate limited",
          code: "RATE_LIMITED",
          category: "server_error",
          isRetryable: true,
          status: 429
        })
      }
    },
    {
      name: "RUN_ERROR drops a category it does not know",
      actions: () => events("t1", [e.runStarted("t1"), e.runError({ message: "x", category: "weird" })]),
      check: (t) => expect(t.streaming.error).toEqual({ message: "x" })
    },
    {
      name: "RUN_ERROR with code CANCELLED is a cancellation, not an error",
      actions: () => events("t1", [e.runStarted("t1"), e.runError({ message: "Run cancelled", code: "CANCELLED" })]),
      check: (t) => {
        expect(t.thread.lastRunCancelled).toBe(true)
        expect(t.thread.status).toBe("idle")
        expect(t.streaming.error).toBeUndefined()
        expect("error" in t.streaming).toBe(false)
      }
    },
    {
      name: "a new run clears the previous error",
      actions: () => events("t1", [e.runStarted("t1"), e.runError({ message: "x" }), e.runStarted("t1", "run2")]),
      check: (t) => expect(t.streaming).toEqual({ status: "streaming", runId: "run2", startTime: 1020 })
    },
    {
      name: "TEXT_MESSAGE_START/CONTENT/END stream an assistant message",
      actions: () =>
        events("t1", [e.runStarted("t1"), e.textStart("m1"), e.text("m1", "Hel"), e.text("m1", "lo"), e.textEnd("m1")]),
      check: (t) => {
        expect(t.thread.messages).toEqual([
          { id: "m1", role: "assistant", content: [{ type: "text", text: "Hello" }], createdAt: iso(1010) }
        ])
        expect(t.streaming.messageId).toBeUndefined()
      }
    },
    {
      name: "the open message is tracked while it streams",
      actions: () => events("t1", [e.runStarted("t1"), e.textStart("m1"), e.text("m1", "a")]),
      check: (t) => expect(t.streaming.messageId).toBe("m1")
    },
    {
      name: "TEXT_MESSAGE_START with role user makes a user message; other roles are the assistant",
      actions: () => events("t1", [e.textStart("u9", "user"), { type: "TEXT_MESSAGE_START", messageId: "s1", role: "system" }]),
      check: (t) => expect(t.thread.messages.map((m) => [m.id, m.role])).toEqual([["u9", "user"], ["s1", "assistant"]])
    },
    {
      name: "TEXT_MESSAGE_START for a message created by tambo.message.parent reuses it",
      actions: () => events("t1", [e.parent("m2", "m1"), e.textStart("m2"), e.text("m2", "x")]),
      check: (t) => {
        expect(t.thread.messages).toHaveLength(1)
        expect(t.thread.messages[0]).toMatchObject({ id: "m2", parentMessageId: "m1", content: [{ type: "text", text: "x" }] })
      }
    },
    {
      name: "tambo.message.parent sets the parent of an existing message",
      actions: () => events("t1", [e.textStart("m2"), e.parent("m2", "m1")]),
      check: (t) => expect(t.thread.messages[0]!.parentMessageId).toBe("m1")
    },
    {
      name: "text after a tool call starts a new text block",
      actions: () => events("t1", [e.textStart("m1"), e.text("m1", "a"), e.toolStart("c1", "f", "m1"), e.text("m1", "b")]),
      check: (t) =>
        expect(t.thread.messages[0]!.content.map((c) => c.type === "text" ? c.text : c.type)).toEqual(["a", "tool_use", "b"])
    },
    {
      name: "TOOL_CALL_START without a parent after a user message makes a synthetic assistant message",
      actions: () => [userMessage("t1", "u1", "hi"), ...events("t1", [e.runStarted("t1"), e.toolStart("c1", "weather")])],
      check: (t) => {
        expect(t.thread.messages[1]).toEqual({
          id: "msg_tool_c1",
          role: "assistant",
          content: [{ type: "tool_use", id: "c1", name: "weather", input: {} }],
          createdAt: iso(1010)
        })
        expect(t.streaming.messageId).toBe("msg_tool_c1")
      }
    },
    {
      name: "TOOL_CALL_START with a known parent attaches to it",
      actions: () =>
        events("t1", [e.textStart("m1"), e.textEnd("m1"), e.textStart("m2"), e.textEnd("m2"), e.toolStart("c1", "f", "m1")]),
      check: (t) => expect(t.thread.messages.map((m) => m.content.length)).toEqual([1, 0])
    },
    {
      name: "TOOL_CALL_START naming the user's message as its parent opens an assistant message of its own",
      actions: () => [
        userMessage("t1", "u1", "hello"),
        ...events("t1", [e.runStarted("t1"), e.toolStart("c1", "f", "u1"), e.toolArgs("c1", "{}"), e.toolEnd("c1")])
      ],
      check: (t) => {
        expect(t.thread.messages.map((m) => [m.id, m.role, m.content.map((block) => block.type)])).toEqual([
          ["u1", "user", ["text"]],
          ["msg_tool_c1", "assistant", ["tool_use"]]
        ])
      }
    },
    {
      name: "TOOL_CALL_START naming a tool result's message as its parent does not join it",
      actions: () =>
        events("t1", [e.textStart("m1"), e.textEnd("m1"), e.toolResult("tr1", "c0", "ok"), e.toolStart("c1", "f", "tr1")]),
      check: (t) => {
        expect(t.thread.messages.map((m) => [m.id, m.content.map((block) => block.type)])).toEqual([
          ["m1", []],
          ["tr1", ["tool_result"]],
          ["msg_tool_c1", ["tool_use"]]
        ])
      }
    },
    {
      name: "text then a tool call whose parent is a temporary id: one assistant message, like the server stores it",
      actions: () =>
        events("t1", [
          e.runStarted("t1"),
          e.textStart("msg_real"),
          e.text("msg_real", "Let me check."),
          e.toolStart("c1", "weather", "message-temp123"),
          e.toolArgs("c1", "{\"city\":\"Paris\"}"),
          e.toolEnd("c1"),
          e.textEnd("msg_real")
        ]),
      check: (t) => {
        expect(t.thread.messages).toEqual([
          {
            id: "msg_real",
            role: "assistant",
            createdAt: iso(1010),
            content: [
              { type: "text", text: "Let me check." },
              { type: "tool_use", id: "c1", name: "weather", input: { city: "Paris" } }
            ]
          }
        ])
        expect(t.anomalies).toEqual([])
      }
    },
    {
      name: "a temporary parent after the text ended still joins the last assistant message",
      actions: () => events("t1", [e.textStart("m1"), e.text("m1", "a"), e.textEnd("m1"), e.toolStart("c1", "f", "temp")]),
      check: (t) => expect(t.thread.messages.map((m) => m.id)).toEqual(["m1"])
    },
    {
      name: "a temporary parent after a tool result message gets its own message",
      actions: () =>
        events("t1", [e.textStart("m1"), e.textEnd("m1"), e.toolResult("tr1", "c0", "ok"), e.toolStart("c1", "f", "temp")]),
      check: (t) => expect(t.thread.messages.map((m) => m.id)).toEqual(["m1", "tr1", "temp"])
    },
    {
      name: "TOOL_CALL_ARGS fragments are visible as partial input while they stream",
      actions: () =>
        events("t1", [e.toolStart("c1", "weather"), e.toolArgs("c1", "{\"city\": \"Par"), e.toolArgs("c1", "is\", \"days\": [1, 2")]),
      check: (t) => expect(t.thread.messages[0]!.content[0]).toMatchObject({ input: { city: "Paris", days: [1, 2] } })
    },
    {
      name: "TOOL_CALL_END parses the whole arguments",
      actions: () => events("t1", [e.toolStart("c1", "f"), e.toolArgs("c1", "{\"a\": 1."), e.toolArgs("c1", "5}"), e.toolEnd("c1")]),
      check: (t) => {
        expect(t.thread.messages[0]!.content[0]).toEqual({ type: "tool_use", id: "c1", name: "f", input: { a: 1.5 } })
        expect(t.internal.toolArgs.size).toBe(0)
      }
    },
    {
      name: "TOOL_CALL_END without arguments leaves the input empty",
      actions: () => events("t1", [e.toolStart("c1", "f"), e.toolEnd("c1")]),
      check: (t) => expect(t.thread.messages[0]!.content[0]).toMatchObject({ input: {} })
    },
    {
      name: "TOOL_CALL_RESULT adds a result to a known message",
      actions: () => events("t1", [e.toolStart("c1", "f"), e.toolResult("msg_tool_c1", "c1", "sunny")]),
      check: (t) =>
        expect(t.thread.messages[0]!.content[1]).toEqual({
          type: "tool_result",
          toolUseId: "c1",
          content: [{ type: "text", text: "sunny" }]
        })
    },
    {
      name: "TOOL_CALL_RESULT for a new message id creates it, as the API stores tool results",
      actions: () => events("t1", [e.toolStart("c1", "f"), e.toolResult("m9", "c1", [{ type: "text", text: "a" }, { type: "image", url: "u" }])]),
      check: (t) =>
        expect(t.thread.messages[1]).toEqual({
          id: "m9",
          role: "assistant",
          createdAt: iso(1010),
          content: [
            { type: "tool_result", toolUseId: "c1", content: [{ type: "text", text: "a" }, { type: "text", text: "{\"type\":\"image\",\"url\":\"u\"}" }] }
          ]
        })
    },
    {
      name: "component start → props_delta → state_delta → end",
      actions: () =>
        events("t1", [
          e.textStart("m1"),
          e.componentStart("m1", "k1", "Weather"),
          e.props("k1", [{ op: "add", path: "/city", value: "Par" }, { op: "add", path: "/days", value: [] }]),
          e.props("k1", [{ op: "replace", path: "/city", value: "Paris" }, { op: "add", path: "/days/-", value: 1 }]),
          e.state("k1", [{ op: "add", path: "/open", value: true }]),
          e.componentEnd("k1")
        ]),
      check: (t) => {
        expect(t.thread.messages[0]!.content[0]).toEqual({
          type: "component",
          id: "k1",
          name: "Weather",
          props: { city: "Paris", days: [1] },
          state: { open: true },
          streamingState: "done"
        })
        expect(t.internal.openComponents).toEqual([])
      }
    },
    {
      name: "props_delta streamingStatus merges key by key, a __proto__ key included as data",
      actions: () =>
        events("t1", [
          e.componentStart("m1", "k1"),
          statusProps("k1", { title: "streaming" }),
          statusProps("k1", { title: "done", points: "streaming" }),
          statusProps("k1", JSON.parse("{\"__proto__\":\"done\"}") as Record<string, string>)
        ]),
      check: (t) => {
        const block = t.thread.messages[0]!.content[0]
        if (block?.type !== "component") throw new Error("not a component")
        expect(Object.entries(block.streamingStatus ?? {})).toEqual([["title", "done"], ["points", "streaming"], ["__proto__", "done"]])
        expect(Object.getPrototypeOf(block.streamingStatus)).toBe(Object.prototype)
        expect(prototypeKeys()).toEqual(prototypeKeysBefore)
      }
    },
    {
      name: "patches to two components in turn each reach their own",
      actions: () =>
        events("t1", [
          e.componentStart("m1", "k1"),
          e.componentStart("m1", "k2"),
          e.props("k1", [{ op: "add", path: "/n", value: 1 }]),
          e.props("k2", [{ op: "add", path: "/n", value: 2 }]),
          e.props("k1", [{ op: "replace", path: "/n", value: 3 }]),
          e.props("k1", [{ op: "add", path: "/m", value: 4 }]),
          e.props("k2", [{ op: "replace", path: "/n", value: 5 }])
        ]),
      check: (t) => {
        expect(t.thread.messages[0]!.content.map((c) => c.type === "component" && c.props)).toEqual([{ n: 3, m: 4 }, { n: 5 }])
      }
    },
    {
      name: "a started component is 'started', a patched one 'streaming'",
      actions: () => events("t1", [e.componentStart("m1", "k1"), e.componentStart("m1", "k2"), e.props("k2", [])]),
      check: (t) => {
        expect(t.thread.messages.map((m) => m.id)).toEqual(["m1"])
        expect(t.thread.messages[0]!.content.map((c) => c.type === "component" && c.streamingState)).toEqual(["started", "streaming"])
      }
    },
    {
      name: "tambo.run.awaiting_input pauses the run and lists the pending calls",
      actions: () => events("t1", [e.runStarted("t1"), e.toolStart("c1", "f"), e.toolEnd("c1"), e.awaiting(["c1", "f"])]),
      check: (t) => {
        expect(t.thread.status).toBe("waiting")
        expect(t.streaming.status).toBe("waiting")
        expect(t.pendingToolCalls).toEqual([{ toolCallId: "c1", toolName: "f" }])
      }
    },
    {
      name: "the paused run's RUN_FINISHED keeps the pending calls",
      actions: () => events("t1", [e.runStarted("t1"), e.awaiting(["c1", "f"]), e.runFinished("t1")]),
      check: (t) => {
        expect(t.thread.status).toBe("idle")
        expect(t.lastCompletedRunId).toBe("run1")
        expect(t.pendingToolCalls).toEqual([{ toolCallId: "c1", toolName: "f" }])
      }
    },
    {
      name: "the continuing run clears the pending calls",
      actions: () => events("t1", [e.runStarted("t1"), e.awaiting(["c1", "f"]), e.runFinished("t1"), e.runStarted("t1", "run2")]),
      check: (t) => expect(t.pendingToolCalls).toEqual([])
    },
    {
      name: "a TOOL_CALL_RESULT answers a pending call",
      actions: () => events("t1", [e.awaiting(["c1", "f"], ["c2", "g"]), e.toolResult("m", "c1", "ok")]),
      check: (t) => expect(t.pendingToolCalls).toEqual([{ toolCallId: "c2", toolName: "g" }])
    },
    {
      name: "events with no effect on threads are accepted and ignored",
      actions: () =>
        events("t1", [
          e.textStart("m1"),
          { type: "STEP_STARTED", stepName: "s" },
          { type: "STEP_FINISHED", stepName: "s" },
          { type: "THINKING_START" },
          { type: "THINKING_END" },
          { type: "REASONING_START", messageId: "r" },
          { type: "REASONING_END", messageId: "r" },
          { type: "REASONING_ENCRYPTED_VALUE", subtype: "message", entityId: "r", encryptedValue: "x" },
          e.unknown("SOMETHING_NEW"),
          { type: "UNKNOWN", eventType: "CUSTOM", name: "acme.x", event: { type: "CUSTOM", name: "acme.x" } }
        ]),
      check: (t) => {
        expect(t.thread.messages).toHaveLength(1)
        expect(t.thread.messages[0]!.content).toEqual([])
        expect(t.anomalies).toEqual([])
      }
    },
    {
      name: "events for a thread the client does not know create it",
      actions: () => events("fresh", [e.textStart("m1")]),
      check: (t) => expect(t.thread).toMatchObject({ id: "fresh", createdAt: iso(1000), status: "idle" })
    }
  ]

  it.each(table)("$name", ({ actions, check }) => {
    const list = actions()
    const threadId = list.find((a) => a.type === "EVENT")?.threadId ?? "t1"
    const s = reduce(initial, list)
    check(thread(s, threadId), s)
    // One event per batch gives the same thread as one batch.
    const stepwise = list.reduce((state, action) => reduce(state, [action]), initial)
    expect(thread(stepwise, threadId).thread).toEqual(thread(s, threadId).thread)
    expect(thread(stepwise, threadId).streaming).toEqual(thread(s, threadId).streaming)
  })
})

describe("a call of one of the run's tools", () => {
  const tools = [{
    name: "search",
    description: "Searches",
    inputSchema: {
      type: "object",
      properties: { query: { type: "string" }, limit: { type: "number", default: 10 }, note: { type: "string" } },
      required: ["query"]
    }
  }]
  const inputOf = (state: State) => {
    const block = getMessages(state, "t1").flatMap((m) => m.content).find((c) => c.type === "tool_use")
    if (block?.type !== "tool_use") throw new Error("no tool call")
    return block.input
  }
  const chunk = (list: ReadonlyArray<AnyEvent>, withTools = true, at = 1000): Action => ({
    type: "EVENTS",
    threadId: "t1",
    events: list,
    at,
    ...(withTools ? { tools } : {})
  })

  it("shows its input with the strict mode's nulls undone, while it streams and once complete", () => {
    const streaming = reduce(started(), [
      chunk([e.toolStart("c1", "search"), e.toolArgs("c1", "{\"query\":\"x\",\"note\":null,\"limit\":")])
    ])
    expect(inputOf(streaming)).toEqual({ query: "x" })
    const complete = reduce(streaming, [chunk([e.toolArgs("c1", "null}"), e.toolEnd("c1")])])
    expect(inputOf(complete)).toEqual({ query: "x", limit: 10 })
  })

  it("reads partial arguments back at the batch's end, also after an action that names no tools", () => {
    const state = reduce(started(), [
      chunk([e.toolStart("c1", "search"), e.toolArgs("c1", "{\"query\":\"x\",\"note\":null")]),
      ...events("t1", [e.textStart("m9")], 2000)
    ])
    expect(inputOf(state)).toEqual({ query: "x" })
  })

  it("ends as its chunks one batch each would: when the arguments grew, and across the next run's start", () => {
    const partial = chunk([e.runStarted("t1", "r2"), e.toolStart("c1", "search"), e.toolArgs("c1", "{\"query\":\"x\"")])
    const later = (events: ReadonlyArray<AnyEvent>, at: number): Action => chunk(events, true, at)
    for (const next of [later([statusProps("none", {})], 2000), later([e.runFinished("t1", "r2"), e.runStarted("t1", "r3")], 2000)]) {
      const oneBatch = reduce(started(), [partial, next])
      const twoBatches = reduce(reduce(started(), [partial]), [next])
      expect(inputOf(oneBatch)).toEqual({ query: "x" })
      expect(thread(oneBatch, "t1").thread).toEqual(thread(twoBatches, "t1").thread)
    }
  })

  it("keeps the input as sent for a tool the run did not declare, or without the run's tools", () => {
    const other = reduce(started(), [chunk([e.toolStart("c1", "other"), e.toolArgs("c1", "{\"note\":null}"), e.toolEnd("c1")])])
    expect(inputOf(other)).toEqual({ note: null })
    const bare = reduce(started(), [chunk([e.toolStart("c1", "search"), e.toolArgs("c1", "{\"note\":null}"), e.toolEnd("c1")], false)])
    expect(inputOf(bare)).toEqual({ note: null })
  })
})

describe("tool call ids reused across messages", () => {
  // Providers that count (`call_0` in every response) reuse a call id in every round: a call is
  // identified within its message, so each round's call is a block of its own.
  const round = (runId: string, city: string, parent?: string): ReadonlyArray<AnyEvent> => [
    e.runStarted("t1", runId),
    e.toolStart("call_0", "weather", parent),
    e.toolArgs("call_0", `{"city": "${city}"}`),
    e.toolEnd("call_0"),
    e.awaiting(["call_0", "weather"]),
    e.runFinished("t1", runId)
  ]
  const answered = (text: string, at: number): Action => ({
    type: "TOOL_RESULTS",
    threadId: "t1",
    results: [{ type: "tool_result", toolUseId: "call_0", content: [{ type: "text", text }] }],
    at
  })
  const toolUses = (t: ThreadState) =>
    t.thread.messages.flatMap((m) => m.content.flatMap((c) => (c.type === "tool_use" ? [{ message: m.id, id: c.id, input: c.input }] : [])))
  const toolResults = (t: ThreadState) =>
    t.thread.messages.flatMap((m) => m.content.flatMap((c) => (c.type === "tool_result" ? [{ message: m.id, toolUseId: c.toolUseId, content: c.content }] : [])))

  const table: ReadonlyArray<{ name: string; actions: () => ReadonlyArray<Action>; check: (t: ThreadState) => void }> = [
    {
      name: "two rounds answered by the client both keep their tool_use, with their own arguments and results",
      actions: () => [
        { type: "INIT_THREAD", threadId: "t1", at: 1 },
        userMessage("t1", "u1", "weather?"),
        ...events("t1", round("run1", "Paris")),
        answered("Paris: 21", 2000),
        ...events("t1", round("run2", "Lyon"), 3000),
        answered("Lyon: 18", 4000)
      ],
      check: (t) => {
        expect(t.thread.messages.map((m) => m.id)).toEqual([
          "u1",
          "msg_tool_call_0",
          "msg_tool_result_call_0",
          "msg_tool_call_0_2",
          "msg_tool_result_call_0_2"
        ])
        expect(toolUses(t)).toEqual([
          { message: "msg_tool_call_0", id: "call_0", input: { city: "Paris" } },
          { message: "msg_tool_call_0_2", id: "call_0", input: { city: "Lyon" } }
        ])
        expect(toolResults(t).map((r) => r.content)).toEqual([[{ type: "text", text: "Paris: 21" }], [{ type: "text", text: "Lyon: 18" }]])
        expect(t.pendingToolCalls).toEqual([])
        expect(t.internal.toolArgs.size).toBe(0)
        expect(t.anomalies).toEqual([])
      }
    },
    {
      name: "two calls of one stream in two messages, answered by the server, each keep their own arguments and result",
      actions: () =>
        events("t1", [
          e.runStarted("t1"),
          e.textStart("m1"),
          e.toolStart("call_0", "weather", "m1"),
          e.toolArgs("call_0", "{\"city\": \"Paris\"}"),
          e.toolEnd("call_0"),
          e.toolResult("r1", "call_0", "Paris: 21"),
          e.textStart("m2"),
          e.toolStart("call_0", "weather", "m2"),
          e.toolArgs("call_0", "{\"city\": \"Lyon\"}"),
          e.toolEnd("call_0"),
          e.toolResult("r2", "call_0", "Lyon: 18")
        ]),
      check: (t) => {
        expect(toolUses(t)).toEqual([
          { message: "m1", id: "call_0", input: { city: "Paris" } },
          { message: "m2", id: "call_0", input: { city: "Lyon" } }
        ])
        expect(toolResults(t)).toEqual([
          { message: "r1", toolUseId: "call_0", content: [{ type: "text", text: "Paris: 21" }] },
          { message: "r2", toolUseId: "call_0", content: [{ type: "text", text: "Lyon: 18" }] }
        ])
        expect(t.anomalies).toEqual([])
      }
    },
    {
      name: "arguments streaming in the second round are the second block's partial input",
      actions: () => [
        { type: "INIT_THREAD", threadId: "t1", at: 1 },
        ...events("t1", round("run1", "Paris")),
        answered("Paris: 21", 2000),
        ...events("t1", [e.runStarted("t1", "run2"), e.toolStart("call_0", "weather"), e.toolArgs("call_0", "{\"city\": \"Ly")], 3000)
      ],
      check: (t) => {
        expect(toolUses(t).map((u) => u.input)).toEqual([{ city: "Paris" }, { city: "Ly" }])
        expect(t.anomalies).toEqual([])
      }
    },
    {
      name: "a call still open when its id starts in a later message keeps the arguments it had",
      actions: () =>
        events("t1", [
          e.textStart("m1"),
          e.toolStart("call_0", "weather", "m1"),
          e.toolArgs("call_0", "{\"city\": \"Paris\"}"),
          e.textStart("m2"),
          e.toolStart("call_0", "weather", "m2"),
          e.toolArgs("call_0", "{\"city\": \"Lyon\"}"),
          e.toolEnd("call_0")
        ]),
      check: (t) => {
        expect(toolUses(t)).toEqual([
          { message: "m1", id: "call_0", input: { city: "Paris" } },
          { message: "m2", id: "call_0", input: { city: "Lyon" } }
        ])
        expect(t.internal.toolArgs.size).toBe(0)
      }
    },
    {
      name: "the same id started twice in one message is still an anomaly, and the earlier round's call is untouched",
      actions: () => [
        { type: "INIT_THREAD", threadId: "t1", at: 1 },
        ...events("t1", round("run1", "Paris")),
        answered("Paris: 21", 2000),
        ...events("t1", [
          e.runStarted("t1", "run2"),
          e.textStart("m2"),
          e.toolStart("call_0", "weather", "m2"),
          e.toolArgs("call_0", "{\"city\": \"Lyon\"}"),
          e.toolEnd("call_0"),
          [e.toolStart("call_0", "weather", "m2"), 4242]
        ], 3000)
      ],
      check: (t) => {
        expect(toolUses(t)).toEqual([
          { message: "msg_tool_call_0", id: "call_0", input: { city: "Paris" } },
          { message: "m2", id: "call_0", input: { city: "Lyon" } }
        ])
        expect(t.anomalies).toEqual([{ eventType: "TOOL_CALL_START", reason: "tool call call_0 started twice", at: 4242 }])
      }
    }
  ]

  it("a call started again in an earlier message that holds it, after its id went to another message, is started twice", () => {
    // Shrunk by the model (ClientState.model.test.ts).
    const s = reduce(started(), events("t1", [
      e.toolStart("c1", "f", "m1"),
      e.textStart("m2"),
      e.toolStart("c1", "f"),
      e.toolStart("c1", "f", "m1")
    ]))
    expect(getMessages(s, "t1").map((m) => m.content.map((b) => b.type === "tool_use" && b.id))).toEqual([[false], ["c1"], ["c1"]])
    expect(thread(s, "t1").anomalies.at(-1)).toMatchObject({ eventType: "TOOL_CALL_START", reason: "tool call c1 started twice" })
  })

  it.each(table)("$name", ({ actions, check }) => {
    const list = actions()
    const s = reduce(initial, list)
    check(thread(s, "t1"))
    // One action per batch gives the same thread as one batch.
    const stepwise = list.reduce((state, action) => reduce(state, [action]), initial)
    expect(thread(stepwise, "t1").thread).toEqual(thread(s, "t1").thread)
    expect(thread(stepwise, "t1").anomalies).toEqual(thread(s, "t1").anomalies)
  })
})

describe("anomalies", () => {
  const base = () =>
    reduce(initial, [
      ...events("t1", [e.runStarted("t1"), e.textStart("m1"), e.text("m1", "a"), e.componentStart("m1", "k1"), e.toolStart("c1", "f", "m1")]),
      ...events("other", [e.textStart("o1"), e.text("o1", "untouched")])
    ])

  const table: ReadonlyArray<{ name: string; event: AnyEvent; eventType: string; reason: RegExp }> = [
    { name: "TEXT_MESSAGE_CONTENT for an unknown message", event: e.text("nope", "x"), eventType: "TEXT_MESSAGE_CONTENT", reason: /unknown message nope/ },
    { name: "TEXT_MESSAGE_END for another message", event: e.textEnd("zzz"), eventType: "TEXT_MESSAGE_END", reason: /zzz ended while m1/ },
    { name: "TOOL_CALL_ARGS for an unknown call", event: e.toolArgs("nope", "{"), eventType: "TOOL_CALL_ARGS", reason: /unknown tool call nope/ },
    { name: "TOOL_CALL_END for an unknown call", event: e.toolEnd("nope"), eventType: "TOOL_CALL_END", reason: /unknown tool call nope/ },
    { name: "TOOL_CALL_START twice", event: e.toolStart("c1", "f"), eventType: "TOOL_CALL_START", reason: /started twice/ },
    { name: "props_delta for an unknown component", event: e.props("nope", []), eventType: "tambo.component.props_delta", reason: /unknown component nope/ },
    { name: "state_delta for an unknown component", event: e.state("nope", []), eventType: "tambo.component.state_delta", reason: /unknown component nope/ },
    { name: "component end for an unknown component", event: e.componentEnd("nope"), eventType: "tambo.component.end", reason: /unknown component nope/ },
    { name: "component started twice", event: e.componentStart("m1", "k1"), eventType: "tambo.component.start", reason: /started twice/ },
    {
      name: "a JSON Patch that fails",
      event: e.props("k1", [{ op: "add", path: "/a", value: 1 }, { op: "remove", path: "/missing" }]),
      eventType: "tambo.component.props_delta",
      reason: /refused: path "\/missing" does not exist/
    },
    {
      name: "a props patch that replaces the props with a string",
      event: e.props("k1", [{ op: "replace", path: "", value: "oops" }]),
      eventType: "tambo.component.props_delta",
      reason: /refused: the props would not be an object/
    },
    {
      name: "a props patch that adds an array as the props",
      event: e.props("k1", [{ op: "add", path: "", value: [1, 2] }]),
      eventType: "tambo.component.props_delta",
      reason: /refused: the props would not be an object/
    },
    {
      name: "a props patch that replaces the props with null",
      event: e.props("k1", [{ op: "add", path: "/a", value: 1 }, { op: "replace", path: "", value: null }]),
      eventType: "tambo.component.props_delta",
      reason: /refused: the props would not be an object/
    },
    {
      name: "a props patch that moves a value of the props to their root",
      event: e.props("k1", [{ op: "add", path: "/a", value: "text" }, { op: "move", from: "/a", path: "" }]),
      eventType: "tambo.component.props_delta",
      reason: /refused: the props would not be an object/
    },
    {
      name: "a state patch that replaces the state with a number",
      event: e.state("k1", [{ op: "replace", path: "", value: 7 }]),
      eventType: "tambo.component.state_delta",
      reason: /refused: the state would not be an object/
    },
    {
      name: "a hostile patch path /__proto__/x",
      event: e.props("k1", [{ op: "add", path: "/__proto__/polluted", value: true }]),
      eventType: "tambo.component.props_delta",
      reason: /forbidden segment "__proto__"/
    },
    {
      name: "a hostile patch path /constructor/prototype/x",
      event: e.state("k1", [{ op: "add", path: "/constructor/prototype/polluted", value: true }]),
      eventType: "tambo.component.state_delta",
      reason: /forbidden segment "constructor"/
    }
  ]

  it.each(table)("$name is recorded and skipped", ({ event, eventType, reason }) => {
    const before = base()
    const keys = prototypeKeys()
    const after = reduce(before, events("t1", [[event, 4242]]))
    const t = thread(after, "t1")
    expect(t.anomalies).toHaveLength(1)
    expect(t.anomalies[0]).toMatchObject({ eventType, at: 4242 })
    expect(t.anomalies[0]!.reason).toMatch(reason)
    // Nothing else changed: same messages, and other threads keep their identity.
    expect(t.thread.messages).toBe(thread(before, "t1").thread.messages)
    expect(after.threadMap.other).toBe(before.threadMap.other)
    expect(prototypeKeys()).toEqual(keys)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it("RUN_FINISHED naming another run than the one streaming: the streaming run is the last completed one, and an anomaly names the other", () => {
    const s = reduce(initial, events("t1", [e.runStarted("t1", "run1"), e.textStart("m1"), e.text("m1", "a"), [e.runFinished("t1", "run9"), 4242]]))
    const t = thread(s, "t1")
    expect(t.lastCompletedRunId).toBe("run1")
    expect(t.thread.status).toBe("idle")
    expect(t.anomalies).toEqual([{ eventType: "RUN_FINISHED", reason: "run run9 finished while run run1 is streaming", at: 4242 }])
  })

  it("tambo.run.awaiting_input naming a call the thread never started keeps it pending and records it", () => {
    const s = reduce(initial, events("t1", [
      e.runStarted("t1", "run1"), e.toolStart("c1", "f"), e.toolEnd("c1"), [e.awaiting(["c1", "f"], ["c9", "g"]), 4242]
    ]))
    const t = thread(s, "t1")
    expect(t.thread.status).toBe("waiting")
    expect(t.pendingToolCalls).toEqual([{ toolCallId: "c1", toolName: "f" }, { toolCallId: "c9", toolName: "g" }])
    expect(t.anomalies).toEqual([
      { eventType: "tambo.run.awaiting_input", reason: "awaiting input for unknown tool call c9", at: 4242 }
    ])
  })

  it("TOOL_CALL_RESULT for a call nobody started is kept as a result message and recorded", () => {
    const before = base()
    const after = reduce(before, events("t1", [[e.toolResult("r9", "nope", "orphan"), 4242]]))
    const t = thread(after, "t1")
    expect(t.thread.messages.at(-1)).toMatchObject({
      id: "r9",
      role: "assistant",
      content: [{ type: "tool_result", toolUseId: "nope", content: [{ type: "text", text: "orphan" }] }]
    })
    expect(t.anomalies).toEqual([{ eventType: "TOOL_CALL_RESULT", reason: "result for unknown tool call nope", at: 4242 }])
    // The result of a call the thread holds is no anomaly.
    expect(thread(reduce(before, events("t1", [e.toolResult("r1", "c1", "ok")], 5000)), "t1").anomalies).toEqual([])
  })

  it("TEXT_MESSAGE_END for an unknown message while no message streams is recorded and skipped", () => {
    const before = reduce(base(), events("t1", [e.textEnd("m1")], 2000))
    expect(thread(before, "t1").streaming.messageId).toBeUndefined()
    const after = reduce(before, events("t1", [[e.textEnd("nope"), 4242]]))
    const t = thread(after, "t1")
    expect(t.anomalies).toEqual([{ eventType: "TEXT_MESSAGE_END", reason: "unknown message nope", at: 4242 }])
    expect(t.thread.messages).toBe(thread(before, "t1").thread.messages)
    // The end of a message the thread has, once it stopped streaming, is no anomaly.
    expect(thread(reduce(before, events("t1", [e.textEnd("m1")], 5000)), "t1").anomalies).toEqual([])
  })

  it("TOOL_CALL_END for a call that already ended is recorded; the call keeps its input", () => {
    const before = reduce(base(), events("t1", [e.toolArgs("c1", "{\"a\":1}"), e.toolEnd("c1")], 2000))
    const after = reduce(before, events("t1", [[e.toolEnd("c1"), 4242]]))
    const t = thread(after, "t1")
    expect(t.anomalies).toEqual([{ eventType: "TOOL_CALL_END", reason: "tool call c1 already ended", at: 4242 }])
    expect(t.thread.messages).toBe(thread(before, "t1").thread.messages)
    expect(t.thread.messages[0]!.content.find((c) => c.type === "tool_use")).toMatchObject({ id: "c1", input: { a: 1 } })
  })

  it("TOOL_CALL_END for a call its run's local ending closed is recorded; the call keeps its input", () => {
    // Shrunk by the model (ClientState.model.test.ts).
    const before = reduce(initial, [
      ...events("t1", [e.runStarted("t1"), e.toolStart("c1", "f"), e.toolArgs("c1", "{\"a\":1}")], 1000),
      { type: "RUN_ENDED_LOCALLY", threadId: "t1", outcome: "cancelled", at: 2000 }
    ])
    const after = reduce(before, events("t1", [[e.toolEnd("c1"), 4242]]))
    const t = thread(after, "t1")
    expect(t.anomalies).toEqual([{ eventType: "TOOL_CALL_END", reason: "tool call c1 already ended", at: 4242 }])
    expect(t.thread.messages).toBe(thread(before, "t1").thread.messages)
    expect(t.thread.messages.at(-1)!.content.at(-1)).toMatchObject({ type: "tool_use", id: "c1", input: { a: 1 } })
  })

  it("tambo.component.end for a component that already ended is recorded; its props stay", () => {
    const before = reduce(base(), events("t1", [e.props("k1", [{ op: "add", path: "/a", value: 1 }]), e.componentEnd("k1")], 2000))
    const after = reduce(before, events("t1", [[e.componentEnd("k1"), 4242]]))
    const t = thread(after, "t1")
    expect(t.anomalies).toEqual([{ eventType: "tambo.component.end", reason: "component k1 already ended", at: 4242 }])
    expect(t.thread.messages).toBe(thread(before, "t1").thread.messages)
    // A patch after its end streams it again: the next end is its own, no anomaly.
    const again = reduce(before, events("t1", [e.props("k1", [{ op: "add", path: "/b", value: 2 }]), e.componentEnd("k1")], 5000))
    expect(thread(again, "t1").anomalies).toEqual([])
  })

  it("tambo.component.end for a component started after its run finished, which closed at once, is recorded", () => {
    // Shrunk by the model (ClientState.model.test.ts).
    const before = reduce(initial, events("t1", [e.runStarted("t1"), e.runFinished("t1"), e.componentStart("m1", "k2")], 1000))
    expect(thread(before, "t1").thread.messages.at(-1)!.content.at(-1)).toMatchObject({ id: "k2", streamingState: "done" })
    const after = reduce(before, events("t1", [[e.componentEnd("k2"), 4242]]))
    const t = thread(after, "t1")
    expect(t.anomalies).toEqual([{ eventType: "tambo.component.end", reason: "component k2 already ended", at: 4242 }])
    expect(t.thread.messages).toBe(thread(before, "t1").thread.messages)
  })

  it("a user's TEXT_MESSAGE_START under the id of the reply opens a user's message of its own, which the id's text then goes to; the reply keeps its role and text", () => {
    const before = base()
    const after = reduce(before, events("t1", [[e.textStart("m1", "user"), 4242], e.text("m1", "mine"), e.textEnd("m1")], 4242))
    const t = thread(after, "t1")
    expect(t.anomalies).toEqual([
      { eventType: "TEXT_MESSAGE_START", reason: "message m1 is an assistant's; this user's message is m1_2", at: 4242 }
    ])
    expect(t.thread.messages.map((m) => [m.id, m.role, m.content.flatMap((c) => (c.type === "text" ? [c.text] : []))])).toEqual([
      ["m1", "assistant", ["a"]],
      ["m1_2", "user", ["mine"]]
    ])
    // A user's message opened under the id of a user's message is that message: no further anomaly.
    const user = reduce(after, events("t1", [e.textStart("m1_2", "user")], 5000))
    expect(thread(user, "t1").anomalies).toHaveLength(1)
  })

  it("TOOL_CALL_END with invalid JSON keeps the best partial parse and records it", () => {
    const s = reduce(initial, events("t1", [e.toolStart("c1", "f"), e.toolArgs("c1", "{\"a\": 1, \"b\": tru"), e.toolEnd("c1")]))
    const t = thread(s, "t1")
    expect(t.thread.messages[0]!.content[0]).toMatchObject({ input: { a: 1, b: true } })
    expect(t.anomalies.map((a) => a.reason)).toEqual(["arguments of tool call c1 are not valid JSON"])
  })

  it("blank arguments are no arguments: the input is {} and nothing is recorded as invalid, at the call's end, the next RUN_STARTED or the run's end", () => {
    for (const blank of ["  ", "\n", " \t\r\n"]) {
      const endings: ReadonlyArray<ReadonlyArray<AnyEvent>> = [
        [e.toolEnd("c1")],
        [e.runStarted("t1", "run2")],
        [e.runFinished("t1")]
      ]
      for (const ending of endings) {
        const s = reduce(initial, events("t1", [e.runStarted("t1"), e.toolStart("c1", "f"), e.toolArgs("c1", blank), ...ending]))
        const t = thread(s, "t1")
        expect(firstToolInput(s, "t1")).toEqual({})
        expect(t.anomalies).toEqual([])
        expect(t.internal.invalidToolArgs?.get("c1")).toBeUndefined()
      }
    }
  })

  it("arguments that are not valid JSON stay recorded as they arrived past the next RUN_STARTED, until a result answers the call", () => {
    const ended = reduce(initial, events("t1", [e.runStarted("t1"), e.toolStart("c1", "f"), e.toolArgs("c1", "{\"a\":tru"), e.toolEnd("c1")]))
    expect(thread(ended, "t1").internal.invalidToolArgs?.get("c1")).toBe("{\"a\":tru")
    const restarted = reduce(ended, events("t1", [e.runStarted("t1", "run2")], 2000))
    expect(thread(restarted, "t1").internal.invalidToolArgs?.get("c1")).toBe("{\"a\":tru")
    const answered = reduce(restarted, events("t1", [e.toolResult("r1", "c1", "refused")], 3000))
    expect(thread(answered, "t1").internal.invalidToolArgs?.get("c1")).toBeUndefined()
    const answeredHere = reduce(restarted, [
      { type: "TOOL_RESULTS", threadId: "t1", results: [{ type: "tool_result", toolUseId: "c1", content: [{ type: "text", text: "refused" }], isError: true }], at: 3000 }
    ])
    expect(thread(answeredHere, "t1").internal.invalidToolArgs?.get("c1")).toBeUndefined()
  })

  it("arguments that are not valid JSON of a call nobody answers go at the run's end, unless the run paused for the call", () => {
    const ran = reduce(initial, events("t1", [e.runStarted("t1"), e.toolStart("c1", "f"), e.toolArgs("c1", "{\"a\":tru"), e.toolEnd("c1")]))
    const endings: ReadonlyArray<readonly [string, ReadonlyArray<Action>]> = [
      ["RUN_FINISHED", events("t1", [e.runFinished("t1")], 2000)],
      ["RUN_ERROR", events("t1", [e.runError({ message: "boom" })], 2000)],
      ["RUN_ERROR CANCELLED", events("t1", [e.runError({ message: "cancelled", code: "CANCELLED" })], 2000)],
      ["RUN_ENDED_LOCALLY", [{ type: "RUN_ENDED_LOCALLY", threadId: "t1", outcome: "cancelled", at: 2000 }]]
    ]
    for (const [name, ending] of endings) {
      const t = thread(reduce(ran, ending), "t1")
      expect(t.internal.invalidToolArgs?.get("c1"), name).toBeUndefined()
      // The call keeps the input its arguments parse to.
      expect(t.thread.messages.at(-1)!.content.at(-1), name).toMatchObject({ type: "tool_use", id: "c1", input: { a: true } })
    }
    // A run that paused for the call: the caller answers it on those arguments.
    const paused = reduce(ran, events("t1", [e.awaiting(["c1", "f"]), e.runFinished("t1")], 2000))
    expect(thread(paused, "t1").internal.invalidToolArgs?.get("c1")).toBe("{\"a\":tru")
    // A run that ends while the calls of an earlier pause stay pending keeps theirs.
    const stopped = reduce(ran, [{
      type: "RUN_ENDED_LOCALLY",
      threadId: "t1",
      outcome: "cancelled",
      pendingToolCalls: [{ toolCallId: "c1", toolName: "f" }],
      at: 2000
    }])
    expect(thread(stopped, "t1").internal.invalidToolArgs?.get("c1")).toBe("{\"a\":tru")
  })

  it("a thread read again that answers a call paused on invalid arguments and asks again under its id shows the new call's arguments as pending", () => {
    // This client's run paused for c1, whose arguments are not valid JSON.
    const s1 = reduce(initial, [
      userMessage("t1", "u1", "hi"),
      ...events("t1", [
        e.runStarted("t1"),
        e.textStart("m1"),
        e.toolStart("c1", "f", "m1"),
        e.toolArgs("c1", "{bad"),
        e.toolEnd("c1"),
        e.awaiting(["c1", "f"]),
        e.runFinished("t1")
      ])
    ])
    expect(Pending.ofState(thread(s1, "t1"))).toEqual([{ toolCallId: "c1", toolName: "f", arguments: "{bad" }])
    // The thread as read from the server: another client answered c1, and its next run paused for a new c1.
    const server: ReadonlyArray<TamboThreadMessage> = [
      ...thread(s1, "t1").thread.messages,
      { id: "r1", role: "assistant", content: [{ type: "tool_result", toolUseId: "c1", content: [{ type: "text", text: "refused" }] }], createdAt: iso(2500) },
      { id: "u2", role: "user", content: [{ type: "text", text: "again" }], createdAt: iso(3000) },
      { id: "m2", role: "assistant", content: [{ type: "tool_use", id: "c1", name: "f", input: { word: "two" } }], createdAt: iso(3010) }
    ]
    const s2 = reduce(s1, [{
      type: "RECONCILE_THREAD",
      threadId: "t1",
      thread: { ...thread(s1, "t1").thread, messages: [...server] },
      pendingToolCallIds: ["c1"]
    }])
    expect(thread(s2, "t1").pendingToolCalls.map((call) => call.toolCallId)).toEqual(["c1"])
    expect(Pending.ofState(thread(s2, "t1"))).toEqual([{ toolCallId: "c1", toolName: "f", arguments: "{\"word\":\"two\"}" }])
  })

  it("a RUN_STARTED closing a call's arguments that are not valid JSON records them, as their end would", () => {
    const s = reduce(initial, events("t1", [e.runStarted("t1"), e.toolStart("c1", "f"), e.toolArgs("c1", "{"), e.runStarted("t1", "run2")]))
    expect(thread(s, "t1").internal.invalidToolArgs?.get("c1")).toBe("{")
    expect(firstToolInput(s, "t1")).toEqual({})
  })

  it("keeps only the last 50", () => {
    const many = Array.from({ length: 70 }, (_, i): readonly [AnyEvent, number] => [e.text(`missing${i}`, "x"), i])
    const s = reduce(initial, events("t1", many))
    const anomalies = thread(s, "t1").anomalies
    expect(anomalies).toHaveLength(ClientState.MAX_ANOMALIES)
    expect(anomalies[0]!.at).toBe(20)
    expect(anomalies[49]!.at).toBe(69)
    // Also across batches.
    const stepwise = many.reduce((state, item) => reduce(state, events("t1", [item])), initial)
    expect(thread(stepwise, "t1").anomalies).toEqual(anomalies)
  })

  it("hostile patch paths leave Object.prototype clean and the props untouched", () => {
    const keys = prototypeKeys()
    const s = reduce(initial, events("t1", [
      e.componentStart("m1", "k1"),
      e.props("k1", [{ op: "add", path: "/title", value: "ok" }]),
      e.props("k1", [{ op: "add", path: "/__proto__/polluted", value: "yes" }]),
      e.props("k1", [{ op: "replace", path: "/__proto__", value: { polluted: "yes" } }]),
      e.props("k1", [{ op: "add", path: "/constructor/prototype/polluted", value: "yes" }]),
      e.state("k1", [{ op: "copy", from: "/__proto__", path: "/x" }]),
      e.props("k1", [{ op: "add", path: "/prototype", value: 1 }])
    ]))
    const t = thread(s, "t1")
    expect(t.anomalies).toHaveLength(5)
    expect(t.thread.messages[0]!.content[0]).toMatchObject({ props: { title: "ok" } })
    expect(prototypeKeys()).toEqual(keys)
    expect(Object.prototype).not.toHaveProperty("polluted")
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it("top-level props patches, with escaped, empty and very long keys, give what the general patcher gives", () => {
    const long = "k".repeat(1_000)
    const patches: ReadonlyArray<ReadonlyArray<Operation>> = [
      [{ op: "add", path: "/", value: "empty" }, { op: "add", path: "/a~1b", value: 1 }],
      [{ op: "add", path: "/c~0d", value: 2 }, { op: "replace", path: "/a~1b", value: 3 }],
      [{ op: "add", path: "/~01", value: 4 }, { op: "replace", path: "/", value: "still" }],
      [{ op: "add", path: `/${long}`, value: 5 }],
      [{ op: "replace", path: `/${long}`, value: 6 }, { op: "add", path: "/0", value: 7 }],
      // Refused as a whole, as the general patcher refuses it: the key is not there.
      [{ op: "add", path: "/x", value: 8 }, { op: "replace", path: "/c~1d", value: 9 }]
    ]
    const s = reduce(initial, events("t1", [e.componentStart("m1", "k1"), ...patches.map((ops) => e.props("k1", ops))]))
    const expected = patches.reduce<unknown>((document, ops) => {
      const result = applyPatch(document, ops)
      return result.ok ? result.value : document
    }, {})
    const t = thread(s, "t1")
    expect(t.thread.messages[0]!.content[0]).toMatchObject({ type: "component", props: expected })
    expect(expected).toEqual({ "": "still", "a/b": 3, "c~d": 2, "~1": 4, [long]: 6, "0": 7 })
    expect(t.anomalies.map((a) => a.reason)).toEqual([expect.stringContaining("/c~1d")])
  })

  it("a chunk of props patches equals the same patches one by one, failures included", () => {
    const list: ReadonlyArray<AnyEvent> = [
      e.componentStart("m1", "k1"),
      e.props("k1", [{ op: "add", path: "/title", value: "A" }, { op: "add", path: "/points", value: [1] }]),
      // Top-level sets, one after another: the batch's copy is written in place.
      e.props("k1", [{ op: "replace", path: "/title", value: "B" }]),
      e.props("k1", [{ op: "add", path: "/label", value: "l" }, { op: "replace", path: "/label", value: "m" }]),
      // Replacing a key that is not there fails, whole: the earlier add of the same patch is undone.
      e.props("k1", [{ op: "add", path: "/extra", value: 1 }, { op: "replace", path: "/missing", value: 2 }]),
      // Deeper paths and removals go through the general patcher.
      e.props("k1", [{ op: "add", path: "/points/-", value: 2 }]),
      e.props("k1", [{ op: "remove", path: "/label" }]),
      e.props("k1", [{ op: "add", path: "/a~1b", value: "slash" }]),
      e.props("k1", [{ op: "replace", path: "/title", value: "C" }]),
      e.props("k1", [{ op: "add", path: "/__proto__", value: { polluted: "yes" } }]),
      e.state("k1", [{ op: "add", path: "/open", value: true }])
    ]
    const chunk: Action = { type: "EVENTS", threadId: "t1", events: list, at: 1000 }
    const before = deepFreeze(started())
    const coalesced = thread(reduce(before, [chunk]), "t1")
    const stepwise = thread(
      list.map((event): Action => ({ type: "EVENT", threadId: "t1", event, at: 1000 })).reduce((s, a) => reduce(s, [a]), before),
      "t1"
    )
    expect(coalesced.thread).toEqual(stepwise.thread)
    expect(coalesced.anomalies).toEqual(stepwise.anomalies)
    expect(coalesced.anomalies.map((a) => a.reason)).toEqual([
      expect.stringContaining("/missing"),
      expect.stringContaining("__proto__")
    ])
    const block = coalesced.thread.messages.find((m) => m.id === "m1")!.content[0]!
    expect(block).toMatchObject({
      type: "component",
      props: { title: "C", points: [1, 2], "a/b": "slash" },
      state: { open: true }
    })
    expect(block.type === "component" ? Object.keys(block.props as object) : []).toEqual(["title", "points", "a/b"])
    expect(Object.prototype).not.toHaveProperty("polluted")
    // The next batch copies before it writes: the published props stay as they were.
    const published = block.type === "component" ? block.props : undefined
    const next = thread(reduce(reduce(before, [chunk]), events("t1", [e.props("k1", [{ op: "replace", path: "/title", value: "D" }])])), "t1")
    expect(published).toMatchObject({ title: "C" })
    expect(next.thread.messages.find((m) => m.id === "m1")!.content[0]).toMatchObject({ props: { title: "D" } })
  })

  it("a thread id of __proto__ is an ordinary key", () => {
    const s = reduce(initial, events("__proto__", [e.textStart("m1")]))
    expect(Object.getPrototypeOf(s.threadMap)).toBe(Object.prototype)
    expect(Object.hasOwn(s.threadMap, "__proto__")).toBe(true)
    expect(getMessages(s, "__proto__").map((m) => m.id)).toEqual(["m1"])
    expect(getThreadState(s, "constructor")).toBeUndefined()
    expect(getThreadState(s, "toString")).toBeUndefined()
  })

  it("copying the map for a later batch keeps a __proto__ thread as data, among many", () => {
    const many: Array<Action> = Array.from({ length: 300 }, (_, i) => e.textStart(`m${i}`)).map((event, i) =>
      events(`t${i}`, [event])[0]!
    )
    const s = reduce(reduce(initial, events("__proto__", [e.textStart("m1")])), many)
    const next = reduce(s, events("t7", [e.text("m7", "hi")]))
    expect(Object.getPrototypeOf(next.threadMap)).toBe(Object.prototype)
    expect(Object.keys(next.threadMap)).toEqual(Object.keys(s.threadMap))
    expect(next.threadMap["__proto__"]).toBe(s.threadMap["__proto__"])
    expect(next.threadMap.t8).toBe(s.threadMap.t8)
    expect(getMessages(next, "t7")[0]!.content).toEqual([{ type: "text", text: "hi" }])
    expect(prototypeKeys()).toEqual(prototypeKeysBefore)
  })

  it("malformed input that slips past the types is recorded, never thrown", () => {
    const s = started()
    const garbage: ReadonlyArray<Action> = [
      { type: "EVENT", threadId: "t1", event: { type: "CUSTOM", name: "tambo.component.props_delta", value: null } as unknown as AnyEvent, at: 7 },
      { type: "EVENT", threadId: "t1", event: { type: "TOOL_CALL_RESULT", messageId: "m", toolCallId: "c", content: 5 } as unknown as AnyEvent, at: 8 },
      { type: "NOT_AN_ACTION" } as unknown as Action
    ]
    let out: State | undefined
    expect(() => {
      out = reduce(s, garbage)
    }).not.toThrow()
    const t = thread(out!, "t1")
    expect(t.anomalies.length).toBeGreaterThanOrEqual(1)
    expect(t.anomalies[0]!.reason).toMatch(/internal error/)
    expect(t.thread.messages[0]!.id).toBe("u1")
  })
})

describe("placeholder", () => {
  it("RUN_STARTED moves the optimistic messages to the real thread, and the selection follows", () => {
    const s0 = reduce(initial, [userMessage(PLACEHOLDER, "u1", "hello", 100)])
    expect(getMessages(s0, PLACEHOLDER).map((m) => m.id)).toEqual(["u1"])
    const userMsg = getMessages(s0, PLACEHOLDER)[0]
    // The caller does not know the thread id yet: it keeps addressing the placeholder.
    const s1 = reduce(s0, events(PLACEHOLDER, [e.runStarted("t-real"), e.textStart("m1"), e.text("m1", "Hi!"), e.textEnd("m1")]))
    expect(s1.currentThreadId).toBe("t-real")
    expect(getMessages(s1, "t-real").map((m) => m.id)).toEqual(["u1", "m1"])
    expect(getMessages(s1, "t-real")[0]).toBe(userMsg)
    expect(thread(s1, "t-real").thread.status).toBe("streaming")
    expect(thread(s1, PLACEHOLDER).thread.messages).toEqual([])
    // Later chunks addressed to the placeholder still follow the run.
    const s2 = reduce(s1, events(PLACEHOLDER, [e.runFinished("t-real")]))
    expect(thread(s2, "t-real").lastCompletedRunId).toBe("run1")
    expect(thread(s2, PLACEHOLDER).thread.status).toBe("idle")
    // A new conversation in the placeholder stops following.
    const s3 = reduce(s2, [{ type: "START_NEW_THREAD", threadId: PLACEHOLDER, at: 5 }, userMessage(PLACEHOLDER, "u2", "again"), ...events(PLACEHOLDER, [e.textStart("x")])])
    expect(s3.currentThreadId).toBe(PLACEHOLDER)
    expect(getMessages(s3, PLACEHOLDER).map((m) => m.id)).toEqual(["u2", "x"])
  })

  it("works when the caller addresses the real thread id, like upstream", () => {
    const s0 = reduce(initial, [userMessage(PLACEHOLDER, "u1", "hello")])
    const s1 = reduce(s0, events("t-real", [e.runStarted("t-real"), e.textStart("m1")]))
    expect(s1.currentThreadId).toBe("t-real")
    expect(getMessages(s1, "t-real").map((m) => m.id)).toEqual(["u1", "m1"])
  })

  it("the selection stays where the user is", () => {
    const s0 = reduce(initial, [userMessage(PLACEHOLDER, "u1", "hello"), { type: "SET_CURRENT_THREAD", threadId: "elsewhere" }])
    const s1 = reduce(s0, events(PLACEHOLDER, [e.runStarted("t-real")]))
    expect(s1.currentThreadId).toBe("elsewhere")
    expect(getMessages(s1, "t-real").map((m) => m.id)).toEqual(["u1"])
  })

  it("a run on another known thread does not take the placeholder's messages", () => {
    const s0 = reduce(started(), [userMessage(PLACEHOLDER, "draft", "unsent")])
    const s1 = reduce(s0, events("t1", [e.runStarted("t1", "run2")]))
    expect(getMessages(s1, PLACEHOLDER).map((m) => m.id)).toEqual(["draft"])
    expect(getMessages(s1, "t1").map((m) => m.id)).toEqual(["u1"])
  })
})

describe("identity and batching", () => {
  const twoThreads = () =>
    reduce(initial, [
      userMessage("a", "a-u1", "hi"),
      ...events("a", [e.runStarted("a"), e.textStart("a1"), e.text("a1", "one"), e.textEnd("a1"), e.runFinished("a")]),
      userMessage("b", "b-u1", "hey"),
      ...events("b", [e.runStarted("b"), e.textStart("b1"), e.text("b1", "x"), e.textEnd("b1"), e.runFinished("b")])
    ])

  it("a later batch's patches and streaming status leave an earlier state as it was", () => {
    const first = deepFreeze(reduce(initial, events("t1", [
      e.componentStart("m1", "k1"),
      e.props("k1", [{ op: "add", path: "/a", value: 1 }]),
      statusProps("k1", { a: "streaming" })
    ])))
    const copy = structuredClone(first.threadMap.t1!.thread)
    const second = reduce(first, events("t1", [e.props("k1", [{ op: "add", path: "/b", value: 2 }]), statusProps("k1", { a: "done", b: "streaming" })], 2000))
    expect(thread(second, "t1").anomalies).toEqual([])
    expect(first.threadMap.t1!.thread).toEqual(copy)
    const block = thread(second, "t1").thread.messages[0]!.content[0]
    expect(block).toMatchObject({ props: { a: 1, b: 2 }, streamingStatus: { a: "done", b: "streaming" } })
  })

  it("untouched threads and messages keep their identity", () => {
    const before = twoThreads()
    const after = reduce(before, events("a", [e.runStarted("a", "run2"), e.textStart("a2"), e.text("a2", "t"), e.text("a2", "wo")]))
    expect(after.threadMap.b).toBe(before.threadMap.b)
    expect(after.threadMap[PLACEHOLDER]).toBe(before.threadMap[PLACEHOLDER])
    const [u1, a1, a2] = thread(after, "a").thread.messages
    expect(u1).toBe(thread(before, "a").thread.messages[0])
    expect(a1).toBe(thread(before, "a").thread.messages[1])
    expect(a2).toMatchObject({ id: "a2", content: [{ type: "text", text: "two" }] })
  })

  it("touched messages are new objects; the input state is never written to", () => {
    const before = deepFreeze(twoThreads())
    const snapshot = structuredClone({ a: before.threadMap.a!.thread, b: before.threadMap.b!.thread })
    const indexSize = before.threadMap.a!.internal.messageIndex.size
    const after = reduce(before, [
      ...events("a", [e.runStarted("a", "run2"), e.textStart("a1"), e.text("a1", " more"), e.toolStart("c1", "f", "a1"), e.toolArgs("c1", "{\"x\":1}"), e.componentStart("a1", "k1"), e.props("k1", [{ op: "add", path: "/p", value: 1 }])]),
      ...events("a", [e.textStart("a3"), e.text("a3", "new")])
    ])
    const t = thread(after, "a")
    expect(t.anomalies).toEqual([])
    expect(t.thread.messages[1]).not.toBe(before.threadMap.a!.thread.messages[1])
    expect(t.thread.messages[1]!.content.map((c) => c.type)).toEqual(["text", "tool_use", "component"])
    expect((t.thread.messages[1]!.content[0] as { text: string }).text).toBe("one more")
    expect({ a: before.threadMap.a!.thread, b: before.threadMap.b!.thread }).toEqual(snapshot)
    expect(before.threadMap.a!.internal.messageIndex.size).toBe(indexSize)
  })

  it("one batch equals one batch per event", () => {
    const list: ReadonlyArray<Action> = [
      userMessage("t1", "u1", "weather?"),
      ...events("t1", [
        e.runStarted("t1"),
        e.thinkingStart(),
        e.thinking("hmm"),
        e.thinkingEnd(),
        e.textStart("m1"),
        e.text("m1", "Checking"),
        e.toolStart("c1", "weather", "temp-id"),
        e.toolArgs("c1", "{\"ci"),
        e.toolArgs("c1", "ty\": \"Paris\"}"),
        e.toolEnd("c1"),
        e.textEnd("m1"),
        e.componentStart("m1", "k1"),
        e.props("k1", [{ op: "add", path: "/city", value: "Paris" }]),
        e.componentEnd("k1"),
        e.awaiting(["c1", "weather"]),
        e.runFinished("t1")
      ]),
      { type: "TOOL_RESULTS", threadId: "t1", results: [{ type: "tool_result", toolUseId: "c1", content: [{ type: "text", text: "sunny" }] }], at: 5000 }
    ]
    const batched = thread(reduce(initial, list), "t1")
    const stepwise = thread(list.reduce((s, a) => reduce(s, [a]), initial), "t1")
    expect(stepwise.thread).toEqual(batched.thread)
    expect(stepwise.streaming).toEqual(batched.streaming)
    expect(stepwise.pendingToolCalls).toEqual(batched.pendingToolCalls)
    expect(stepwise.anomalies).toEqual([])
    expect(batched.thread.messages.map((m) => m.id)).toEqual(["u1", "m1", "msg_tool_result_c1"])
  })

  it("a chunk's consecutive deltas apply as one and equal the events one by one, anomalies included", () => {
    const list: ReadonlyArray<AnyEvent> = [
      e.runStarted("t1"),
      e.textStart("m1"),
      e.text("m1", "a"),
      e.text("m1", "b"),
      e.text("m1", "c"),
      e.text("ghost", "x"),
      e.text("ghost", "y"),
      e.text("m1", "d"),
      e.toolStart("c1", "write", "m1"),
      e.toolArgs("c1", "{\"te"),
      e.toolArgs("c1", "xt\": \"hel"),
      e.toolArgs("c1", "lo\""),
      e.toolArgs("nobody", "1"),
      e.toolArgs("nobody", "2"),
      e.toolArgs("c1", "}"),
      e.toolEnd("c1"),
      e.toolArgs("c1", "late"),
      e.toolArgs("c1", "later"),
      e.textEnd("m1"),
      e.runFinished("t1")
    ]
    const chunk: Action = { type: "EVENTS", threadId: "t1", events: list, at: 1000 }
    const oneByOne = list.map((event): Action => ({ type: "EVENT", threadId: "t1", event, at: 1000 }))
    const coalesced = thread(reduce(started(), [chunk]), "t1")
    const stepwise = thread(oneByOne.reduce((s, a) => reduce(s, [a]), started()), "t1")
    expect(coalesced.thread).toEqual(stepwise.thread)
    expect(coalesced.anomalies).toEqual(stepwise.anomalies)
    expect(coalesced.anomalies.map((a) => a.reason)).toEqual([
      "unknown message ghost",
      "unknown message ghost",
      "unknown tool call nobody",
      "unknown tool call nobody",
      "arguments for tool call c1 after it ended",
      "arguments for tool call c1 after it ended"
    ])
    const assistant = coalesced.thread.messages.find((m) => m.id === "m1")!
    expect(assistant.content[0]).toEqual({ type: "text", text: "abcd" })
    expect(assistant.content[1]).toMatchObject({ type: "tool_use", id: "c1", input: { text: "hello" } })
  })

  it("partial tool arguments are reparsed while short, then only after 25% growth", () => {
    const head = `{"text": "${"a".repeat(10_000)}`
    let s = reduce(initial, events("t1", [e.toolStart("c1", "write"), e.toolArgs("c1", head)]))
    const input1 = firstToolInput(s, "t1")
    expect(input1.text).toHaveLength(10_000)
    // +1% → not reparsed yet: the block keeps its input object.
    s = reduce(s, events("t1", [e.toolArgs("c1", "b".repeat(100))]))
    expect(firstToolInput(s, "t1")).toBe(input1)
    // ≥ 25% growth since the last parse → reparsed.
    s = reduce(s, events("t1", [e.toolArgs("c1", "c".repeat(3_000))]))
    expect(firstToolInput(s, "t1").text).toHaveLength(13_100)
    // The end always parses fully.
    s = reduce(s, events("t1", [e.toolArgs("c1", "d\"}"), e.toolEnd("c1")]))
    expect(firstToolInput(s, "t1").text).toHaveLength(13_101)
  })

  it("a call with long arguments the last run left open keeps all of them at the next RUN_STARTED, however they were batched", () => {
    const list = [e.toolStart("c1", "write"), e.toolArgs("c1", `{"text": "${"a".repeat(10_000)}`), e.toolArgs("c1", "\", \"done\": true}")]
    const next = events("t1", [e.runStarted("t1", "run2")], 2000)
    const oneByOne = list.reduce((state, event) => reduce(state, events("t1", [event])), initial)
    const stepwise = reduce(oneByOne, next)
    const batched = reduce(initial, [...events("t1", list), ...next])
    expect(firstToolInput(batched, "t1")).toEqual({ text: "a".repeat(10_000), done: true })
    expect(firstToolInput(stepwise, "t1")).toEqual(firstToolInput(batched, "t1"))
  })

  it("restored state without usable bookkeeping is re-indexed", () => {
    const s = reduce(initial, events("t1", [e.textStart("m1"), e.componentStart("m1", "k1")]))
    const restored: State = JSON.parse(JSON.stringify(s))
    const next = reduce(restored, events("t1", [e.text("m1", "x"), e.componentEnd("k1")]))
    expect(thread(next, "t1").anomalies).toEqual([])
    expect(thread(next, "t1").thread.messages[0]!.content.map((c) => c.type)).toEqual(["component", "text"])
  })
})

describe("reasoning", () => {
  it.each([
    {
      name: "THINKING_* (what Tambo sends today)",
      list: [
        [e.thinkingStart(), 1000],
        [e.thinking("Let me "), 1010],
        [e.thinking("think."), 1020],
        [e.thinkingEnd(), 1250]
      ] as const
    },
    {
      name: "REASONING_* (AG-UI 1.0)",
      list: [
        [{ type: "REASONING_START", messageId: "r1" }, 990],
        [e.reasoningStart("r1"), 1000],
        [e.reasoning("r1", "Let me "), 1010],
        [e.reasoning("r1", "think."), 1020],
        [e.reasoningEnd("r1"), 1250],
        [{ type: "REASONING_END", messageId: "r1" }, 1260]
      ] as const
    }
  ])("$name: reasoning on the assistant message, with its duration", ({ list }) => {
    const s = reduce(started(), [
      ...events("t1", list),
      ...events("t1", [e.textStart("m1"), e.text("m1", "Answer"), e.textEnd("m1")], 2000)
    ])
    const t = thread(s, "t1")
    expect(t.thread.messages.map((m) => m.id)).toEqual(["u1", "m1"])
    expect(t.thread.messages[1]).toEqual({
      id: "m1",
      role: "assistant",
      content: [{ type: "text", text: "Answer" }],
      createdAt: iso(1000),
      reasoning: ["Let me think."],
      reasoningDurationMS: 250
    })
    expect(t.internal.ephemeralMessageId).toBeUndefined()
  })

  it("the stand-in message id is deterministic", () => {
    const s = reduce(started(), events("t1", [e.thinkingStart()]))
    expect(getMessages(s, "t1")[1]!.id).toBe("ephemeral_run1_1")
    expect(thread(s, "t1").streaming.messageId).toBe("ephemeral_run1_1")
  })

  it("several chunks: one entry each, duration from the first start", () => {
    const s = reduce(started(), events("t1", [
      [e.textStart("m1"), 1000],
      [e.thinkingStart(), 1000],
      [e.thinking("a"), 1001],
      [e.thinkingEnd(), 1100],
      [e.thinkingStart(), 1200],
      [e.thinking("b"), 1201],
      [e.thinkingEnd(), 1300]
    ]))
    expect(getMessages(s, "t1")[1]).toMatchObject({ id: "m1", reasoning: ["a", "b"], reasoningDurationMS: 300 })
  })

  it("REASONING_MESSAGE_CHUNK appends like content", () => {
    const s = reduce(started(), events("t1", [
      [e.textStart("m1"), 1000],
      [{ type: "REASONING_MESSAGE_CHUNK", messageId: "m1", delta: "a" }, 1001],
      [{ type: "REASONING_MESSAGE_CHUNK", delta: "b" }, 1002],
      [{ type: "REASONING_MESSAGE_CHUNK" }, 1003]
    ]))
    expect(getMessages(s, "t1")[1]).toMatchObject({ id: "m1", reasoning: ["ab"] })
  })

  for (const ending of [
    { name: "RUN_FINISHED", actions: events("t1", [[e.runFinished("t1"), 1400]]) },
    { name: "RUN_ERROR", actions: events("t1", [[e.runError({ message: "boom" }), 1400]]) },
    { name: "RUN_ENDED_LOCALLY", actions: [{ type: "RUN_ENDED_LOCALLY", threadId: "t1", outcome: "cancelled", at: 1400 } as const] }
  ]) {
    it(`reasoning still open at ${ending.name} lasted until the run's end`, () => {
      const open = reduce(started(), events("t1", [[e.reasoningStart("r1"), 1000], [e.reasoning("r1", "Let me"), 1010], [e.reasoning("r1", " think"), 1020]]))
      expect(getMessages(open, "t1")[1]!.reasoningDurationMS).toBeUndefined()
      const s = reduce(open, ending.actions)
      expect(getMessages(s, "t1")[1]).toMatchObject({ id: "r1", reasoning: ["Let me think"], reasoningDurationMS: 400 })
    })
  }

  it("a second chunk still open at the run's end lasts until then; an ended one keeps its duration", () => {
    const s = reduce(started(), events("t1", [
      [e.textStart("m1"), 1000],
      [e.thinkingStart(), 1000],
      [e.thinkingEnd(), 1100],
      [e.thinkingStart(), 1200],
      [e.thinking("b"), 1201],
      [e.runFinished("t1"), 1500]
    ]))
    expect(getMessages(s, "t1")[1]).toMatchObject({ id: "m1", reasoningDurationMS: 500 })
    const ended = reduce(started(), events("t1", [[e.thinkingStart(), 1000], [e.thinkingEnd(), 1100], [e.runFinished("t1"), 1500]]))
    expect(getMessages(ended, "t1")[1]).toMatchObject({ reasoningDurationMS: 100 })
  })

  it("reasoning open before the text started keeps its duration under the message's real id", () => {
    const s = reduce(started(), events("t1", [
      [e.thinkingStart(), 1000],
      [e.thinking("a"), 1010],
      [e.textStart("m1"), 1100],
      [e.text("m1", "Answer"), 1110],
      [e.runFinished("t1"), 1300]
    ]))
    expect(getMessages(s, "t1")[1]).toMatchObject({ id: "m1", reasoning: ["a"], reasoningDurationMS: 300 })
  })

  it("reasoning still open in one message when reasoning goes on in another lasted until then", () => {
    // Shrunk by the model (ClientState.model.test.ts).
    const s = reduce(started(), events("t1", [
      [e.reasoning("m1", "a"), 1000],
      [e.componentStart("m2", "k1"), 1100],
      [e.reasoning("m2", "b"), 1200],
      [e.runError({ message: "boom" }), 1500]
    ]))
    expect(getMessages(s, "t1").slice(1)).toMatchObject([
      { id: "m1", reasoning: ["a"], reasoningDurationMS: 200 },
      { id: "m2", reasoning: ["b"], reasoningDurationMS: 500 }
    ])
  })

  it("an end naming another message than the open reasoning's ends that reasoning too", () => {
    // Shrunk by the model (ClientState.model.test.ts).
    const s = reduce(started(), events("t1", [
      [e.thinking("a"), 1000],
      [e.textStart("m1", "user"), 1100],
      [e.reasoningEnd("m1"), 1200],
      [e.runFinished("t1"), 1500]
    ]))
    expect(getMessages(s, "t1")[1]).toMatchObject({ id: "ephemeral_run1_1", reasoning: ["a"], reasoningDurationMS: 200 })
  })

  it("content without a start opens a chunk", () => {
    const s = reduce(started(), events("t1", [[e.textStart("m1"), 1000], [e.thinking("x"), 1005], [e.thinkingEnd(), 1105]]))
    expect(getMessages(s, "t1")[1]).toMatchObject({ reasoning: ["x"], reasoningDurationMS: 100 })
  })
})

describe("local actions", () => {
  it("USER_MESSAGE appends the message as sent, stamped with `at` if it has no date", () => {
    const message: TamboThreadMessage = {
      id: "u1",
      role: "user",
      content: [{ type: "text", text: "hi" }, { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain" } }],
      metadata: { k: 1 }
    }
    const s = reduce(initial, [{ type: "USER_MESSAGE", threadId: "t1", message, at: 77 }])
    expect(getMessages(s, "t1")).toEqual([{ ...message, createdAt: iso(77) }])
    const dup = reduce(s, [{ type: "USER_MESSAGE", threadId: "t1", message, at: 78 }])
    expect(getMessages(dup, "t1")).toHaveLength(1)
    expect(thread(dup, "t1").anomalies[0]).toMatchObject({ eventType: "USER_MESSAGE", at: 78 })
  })

  it("TOOL_RESULTS appends one message per result, as the API stores them", () => {
    const results: ReadonlyArray<ToolResultContent> = [
      { type: "tool_result", toolUseId: "c1", content: [{ type: "text", text: "22°C" }], isError: false },
      { type: "tool_result", toolUseId: "c2", content: [{ type: "resource", resource: { uri: "https://x/y.png" } }], isError: true }
    ]
    const s0 = reduce(started(), events("t1", [e.awaiting(["c1", "weather"], ["c2", "img"], ["c3", "other"]), e.runFinished("t1")]))
    const s = reduce(s0, [{ type: "TOOL_RESULTS", threadId: "t1", results, at: 3000 }])
    expect(getMessages(s, "t1").slice(1)).toEqual([
      {
        id: "msg_tool_result_c1",
        role: "assistant",
        content: [{ type: "tool_result", toolUseId: "c1", content: [{ type: "text", text: "22°C" }] }],
        createdAt: iso(3000)
      },
      {
        id: "msg_tool_result_c2",
        role: "assistant",
        content: [{ type: "tool_result", toolUseId: "c2", content: [{ type: "resource", resource: { uri: "https://x/y.png" } }], isError: true }],
        createdAt: iso(3000)
      }
    ])
    expect(thread(s, "t1").pendingToolCalls).toEqual([{ toolCallId: "c3", toolName: "other" }])
    expect(reduce(s, [{ type: "TOOL_RESULTS", threadId: "t1", results: [], at: 1 }])).toBe(s)
  })

  it("RUN_ENDED_LOCALLY cancelled: idle, cancelled, open blocks closed", () => {
    const s0 = reduce(started(), events("t1", [
      e.textStart("m1"),
      e.componentStart("m1", "k1"),
      e.props("k1", [{ op: "add", path: "/a", value: 1 }]),
      e.toolStart("c1", "f", "m1"),
      e.toolArgs("c1", "{\"city\": \"Par"),
      e.awaiting(["c0", "g"])
    ]))
    const s = reduce(s0, [{ type: "RUN_ENDED_LOCALLY", threadId: "t1", outcome: "cancelled", at: 9000 }])
    const t = thread(s, "t1")
    expect(t.thread.status).toBe("idle")
    expect(t.thread.lastRunCancelled).toBe(true)
    expect(t.streaming).toEqual({ status: "idle", runId: "run1", startTime: 900 })
    expect(t.thread.messages[1]!.content).toEqual([
      { type: "component", id: "k1", name: "Card", props: { a: 1 }, streamingState: "done" },
      { type: "tool_use", id: "c1", name: "f", input: { city: "Par" } }
    ])
    expect(t.pendingToolCalls).toEqual([])
    expect(t.internal.toolArgs.size).toBe(0)
    expect(t.internal.openComponents).toEqual([])
  })

  it("RUN_ENDED_LOCALLY with the calls the server still waits on keeps them pending", () => {
    const s0 = reduce(started(), events("t1", [e.toolStart("c1", "f", "m1"), e.toolArgs("c1", "{}"), e.awaiting(["c1", "f"])]))
    const calls = [{ toolCallId: "c1", toolName: "f" }]
    const s = reduce(s0, [{ type: "RUN_ENDED_LOCALLY", threadId: "t1", outcome: "cancelled", pendingToolCalls: calls, at: 9000 }])
    expect(thread(s, "t1").pendingToolCalls).toEqual(calls)
    expect(thread(s, "t1").thread.lastRunCancelled).toBe(true)
  })

  it("RUN_ENDED_LOCALLY ended: a run the server had ended itself is neither cancelled nor failed", () => {
    const s = reduce(started(), [{ type: "RUN_ENDED_LOCALLY", threadId: "t1", outcome: "ended", at: 9000 }])
    expect(thread(s, "t1").thread.status).toBe("idle")
    expect(thread(s, "t1").thread.lastRunCancelled).toBe(false)
    expect(thread(s, "t1").streaming).toEqual({ status: "idle", runId: "run1", startTime: 900 })
    expect(thread(s, "t1").lastCompletedRunId).toBe("run1")
  })

  it("RUN_ENDED_LOCALLY error: the error is recorded", () => {
    const error = { message: "socket hang up", category: "server_error" as const, isRetryable: true }
    const s = reduce(started(), [{ type: "RUN_ENDED_LOCALLY", threadId: "t1", outcome: "error", error, at: 9000 }])
    expect(thread(s, "t1").streaming).toMatchObject({ status: "idle", error })
    expect(thread(s, "t1").thread.lastRunCancelled).toBe(false)
    const noDetail = reduce(started(), [{ type: "RUN_ENDED_LOCALLY", threadId: "t1", outcome: "error", at: 9000 }])
    expect(thread(noDetail, "t1").streaming.error?.message).toBeTypeOf("string")
    expect(reduce(initial, [{ type: "RUN_ENDED_LOCALLY", threadId: "nope", outcome: "error", at: 1 }])).toBe(initial)
  })

  it("INIT_THREAD creates once, with the given fields", () => {
    const s = reduce(initial, [
      { type: "INIT_THREAD", threadId: "t1", initialThread: { name: "Trip", messages: [{ id: "x", role: "assistant", content: [] }] }, at: 5 },
      { type: "INIT_THREAD", threadId: "t1", initialThread: { name: "Other" }, at: 6 }
    ])
    expect(thread(s, "t1").thread).toMatchObject({ id: "t1", name: "Trip", createdAt: iso(5), messages: [{ id: "x" }] })
    expect(reduce(s, events("t1", [e.textStart("x"), e.text("x", "y")])).threadMap.t1!.anomalies).toEqual([])
  })

  it("SET_CURRENT_THREAD / START_NEW_THREAD / REMOVE_THREAD", () => {
    let s = reduce(initial, [{ type: "SET_CURRENT_THREAD", threadId: "t1" }])
    expect(s.currentThreadId).toBe("t1")
    s = reduce(started(), [{ type: "START_NEW_THREAD", threadId: "t1", at: 50 }])
    expect(s.currentThreadId).toBe("t1")
    expect(thread(s, "t1").thread).toMatchObject({ messages: [], createdAt: iso(50), status: "idle" })
    s = reduce(s, [{ type: "REMOVE_THREAD", threadId: "t1" }])
    expect(getThreadState(s, "t1")).toBeUndefined()
    expect(s.currentThreadId).toBe(PLACEHOLDER)
    s = reduce(reduce(s, [userMessage(PLACEHOLDER, "u", "x")]), [{ type: "REMOVE_THREAD", threadId: PLACEHOLDER }])
    expect(getMessages(s, PLACEHOLDER)).toEqual([])
  })

  it("SET_LAST_COMPLETED_RUN_ID and UPDATE_THREAD", () => {
    let s = reduce(initial, [{ type: "SET_LAST_COMPLETED_RUN_ID", threadId: "t1", runId: "r7" }])
    expect(thread(s, "t1").lastCompletedRunId).toBe("r7")
    s = reduce(s, [{
      type: "UPDATE_THREAD",
      threadId: "t1",
      patch: { name: "Named", metadata: { a: 1 }, pendingToolCalls: [{ toolCallId: "c", toolName: "n" }] }
    }])
    expect(thread(s, "t1").thread).toMatchObject({ name: "Named", metadata: { a: 1 } })
    expect(thread(s, "t1").pendingToolCalls).toEqual([{ toolCallId: "c", toolName: "n" }])
    expect(reduce(s, [{ type: "UPDATE_THREAD", threadId: "ghost", patch: { name: "x" } }])).toBe(s)
  })

  it("UPDATE_THREAD takes a time of change only if later than the thread's: an answer that comes after a newer copy does not take it back", () => {
    const at = (updatedAt: string) => ({ type: "UPDATE_THREAD" as const, threadId: "t1", patch: { updatedAt } })
    let s = reduce(initial, [{ type: "SET_LAST_COMPLETED_RUN_ID", threadId: "t1", runId: "r1" }])
    s = reduce(s, [at("2026-01-01T00:00:02.000Z")])
    expect(thread(s, "t1").thread.updatedAt).toBe("2026-01-01T00:00:02.000Z")
    expect(reduce(s, [at("2026-01-01T00:00:01.000Z")])).toBe(s)
    expect(reduce(s, [at("2026-01-01T00:00:02.000Z")])).toBe(s)
    expect(thread(reduce(s, [at("2026-01-01T00:00:03.000Z")]), "t1").thread.updatedAt).toBe("2026-01-01T00:00:03.000Z")
  })

  it("LOAD_THREAD_MESSAGES merges by id, sorts by date, marks components done", () => {
    const s0 = reduce(initial, [{
      type: "USER_MESSAGE",
      threadId: "t1",
      message: { id: "u1", role: "user", content: [{ type: "text", text: "local" }], createdAt: "2024-01-02T00:00:00.000Z" },
      at: 1
    }])
    const local = getMessages(s0, "t1")[0]
    const s = reduce(s0, [{
      type: "LOAD_THREAD_MESSAGES",
      threadId: "t1",
      messages: [
        { id: "nodate", role: "assistant", content: [] },
        { id: "a1", role: "assistant", createdAt: "2024-01-03T00:00:00.000Z", content: [{ type: "component", id: "k", name: "C", props: {}, streamingState: "streaming" }] },
        { id: "u1", role: "user", content: [{ type: "text", text: "server copy" }], createdAt: "2024-01-02T00:00:00.000Z" },
        { id: "u0", role: "user", content: [], createdAt: "2024-01-01T00:00:00.000Z" }
      ]
    }])
    const messages = getMessages(s, "t1")
    expect(messages.map((m) => m.id)).toEqual(["u0", "u1", "a1", "nodate"])
    expect(messages[1]).toBe(local)
    expect(messages[2]!.content[0]).toMatchObject({ streamingState: "done" })
    // The index follows the new order.
    const next = reduce(s, events("t1", [e.props("k", [{ op: "add", path: "/a", value: 1 }]), e.text("nodate", "x")]))
    expect(thread(next, "t1").anomalies).toEqual([])
  })

  it("LOAD_THREAD_MESSAGES swaps optimistic messages for their server copies", () => {
    const results: ReadonlyArray<ToolResultContent> = [{ type: "tool_result", toolUseId: "c1", content: [{ type: "text", text: "22" }] }]
    const s0 = reduce(initial, [
      userMessage(PLACEHOLDER, "local-u1", "weather?", 100),
      ...events(PLACEHOLDER, [e.runStarted("t1"), e.toolStart("c1", "weather"), e.toolEnd("c1"), e.awaiting(["c1", "weather"]), e.runFinished("t1")]),
      { type: "TOOL_RESULTS", threadId: "t1", results, at: 2000 }
    ])
    expect(getMessages(s0, "t1").map((m) => m.id)).toEqual(["local-u1", "msg_tool_c1", "msg_tool_result_c1"])
    const server: ReadonlyArray<TamboThreadMessage> = [
      { id: "srv-u1", role: "user", content: [{ type: "text", text: "weather?" }], createdAt: iso(101) },
      { id: "msg_tool_c1", role: "assistant", content: [{ type: "tool_use", id: "c1", name: "weather", input: {} }], createdAt: iso(1010) },
      { id: "srv-tr1", role: "assistant", content: [{ type: "tool_result", toolUseId: "c1", content: [{ type: "text", text: "22" }] }], createdAt: iso(2001) }
    ]
    const s = reduce(s0, [{ type: "LOAD_THREAD_MESSAGES", threadId: "t1", messages: server }])
    expect(getMessages(s, "t1").map((m) => m.id)).toEqual(["srv-u1", "msg_tool_c1", "srv-tr1"])
    expect(getMessages(s, "t1")[1]).toBe(getMessages(s0, "t1")[1])
    expect(thread(s, "t1").internal.optimisticMessageIds).toBeUndefined()
    // Loading again changes nothing.
    expect(reduce(s, [{ type: "LOAD_THREAD_MESSAGES", threadId: "t1", messages: server }])).toBe(s)
  })

  it("a tool call after a tool result message gets its own message, as the API stores it", () => {
    const s = reduce(started(), [
      ...events("t1", [e.toolStart("c1", "f"), e.toolEnd("c1"), e.awaiting(["c1", "f"]), e.runFinished("t1")]),
      { type: "TOOL_RESULTS", threadId: "t1", results: [{ type: "tool_result", toolUseId: "c1", content: [] }], at: 2000 },
      ...events("t1", [e.runStarted("t1", "run2"), e.toolStart("c2", "f")], 3000)
    ])
    expect(getMessages(s, "t1").map((m) => m.id)).toEqual(["u1", "msg_tool_c1", "msg_tool_result_c1", "msg_tool_c2"])
  })

  it("LOAD_THREAD_MESSAGES can skip a streaming thread", () => {
    const s = started()
    const load: Action = { type: "LOAD_THREAD_MESSAGES", threadId: "t1", messages: [{ id: "z", role: "user", content: [] }], skipIfStreaming: true }
    expect(reduce(s, [load])).toBe(s)
    expect(getMessages(reduce(s, [{ ...load, skipIfStreaming: false }]), "t1").map((m) => m.id)).toEqual(["u1", "z"])
  })
})

describe("a run that ends with something still open", () => {
  const endings: ReadonlyArray<{ readonly name: string; readonly end: AnyEvent; readonly cancelled: boolean }> = [
    { name: "RUN_FINISHED", end: e.runFinished("t1"), cancelled: false },
    { name: "RUN_FINISHED with a cancelled outcome", end: e.runFinished("t1", "run1", { type: "cancelled" }), cancelled: true },
    { name: "RUN_ERROR", end: e.runError({ message: "boom" }), cancelled: false },
    { name: "RUN_ERROR cancelled", end: e.runError({ message: "Run cancelled", code: "CANCELLED" }), cancelled: true }
  ]
  const long = `{"city":"${"P".repeat(9000)}`
  const opened: ReadonlyArray<{
    readonly name: string
    readonly list: ReadonlyArray<AnyEvent>
    readonly check: (t: ThreadState) => void
  }> = [
    {
      name: "a text message with no TEXT_MESSAGE_END keeps its text",
      list: [e.textStart("m1"), e.text("m1", "Hel"), e.text("m1", "lo")],
      check: (t) => expect(t.thread.messages[1]!.content).toEqual([{ type: "text", text: "Hello" }])
    },
    {
      name: "a component with no tambo.component.end is done, with its props",
      list: [e.textStart("m1"), e.textEnd("m1"), e.componentStart("m1", "k1"), e.props("k1", [{ op: "add", path: "/a", value: 1 }])],
      check: (t) =>
        expect(t.thread.messages[1]!.content).toEqual([
          { type: "component", id: "k1", name: "Card", props: { a: 1 }, streamingState: "done" }
        ])
    },
    {
      name: "a component that got no props is done",
      list: [e.componentStart("m1", "k1")],
      check: (t) =>
        expect(t.thread.messages[1]!.content).toEqual([{ type: "component", id: "k1", name: "Card", props: {}, streamingState: "done" }])
    },
    {
      name: "a tool call with no TOOL_CALL_END keeps its partial arguments",
      list: [e.textStart("m1"), e.toolStart("c1", "f", "m1"), e.toolArgs("c1", "{\"city\": \"Par")],
      check: (t) => expect(t.thread.messages[1]!.content).toEqual([{ type: "tool_use", id: "c1", name: "f", input: { city: "Par" } }])
    },
    {
      name: "a tool call with long arguments and no TOOL_CALL_END keeps all it received",
      list: [e.textStart("m1"), e.toolStart("c1", "f", "m1"), e.toolArgs("c1", long), e.toolArgs("c1", "aris")],
      check: (t) =>
        expect(t.thread.messages[1]!.content).toEqual([
          { type: "tool_use", id: "c1", name: "f", input: { city: `${"P".repeat(9000)}aris` } }
        ])
    },
    {
      name: "an open reasoning message keeps its reasoning",
      list: [e.reasoningStart("r1"), e.reasoning("r1", "Let me think")],
      check: (t) => expect(t.thread.messages[1]!.reasoning).toEqual(["Let me think"])
    }
  ]
  for (const ending of endings) {
    for (const open of opened) {
      for (const batched of [false, true]) {
        it(`${ending.name}: ${open.name}, and nothing shows as streaming${batched ? " (one chunk)" : ""}`, () => {
          const list = [...open.list, ending.end]
          const actions: ReadonlyArray<Action> = batched
            ? [{ type: "EVENTS", threadId: "t1", events: list, at: 1000 }]
            : events("t1", list)
          const t = thread(reduce(started(), actions), "t1")
          expect(t.thread.status).toBe("idle")
          expect(t.thread.lastRunCancelled).toBe(ending.cancelled)
          expect(t.streaming.status).toBe("idle")
          expect(t.streaming.messageId).toBeUndefined()
          expect(t.internal.toolArgs.size).toBe(0)
          expect(t.internal.openComponents).toEqual([])
          expect(t.pendingToolCalls).toEqual([])
          open.check(t)
        })
      }
    }
  }
})

describe("events after a run's end, before the next run starts", () => {
  const endings: ReadonlyArray<{ readonly name: string; readonly end: Action }> = [
    { name: "RUN_FINISHED", end: events("t1", [e.runFinished("t1")], 900)[0]! },
    { name: "RUN_ERROR", end: events("t1", [e.runError({ message: "boom" })], 900)[0]! },
    { name: "a local ending", end: { type: "RUN_ENDED_LOCALLY", threadId: "t1", outcome: "cancelled", at: 900 } }
  ]
  const after: ReadonlyArray<{
    readonly name: string
    readonly list: ReadonlyArray<AnyEvent>
    readonly check: (t: ThreadState) => void
  }> = [
    {
      name: "REASONING_MESSAGE_END of an unknown message",
      list: [e.reasoningEnd("m1")],
      check: (t) => expect(t.thread.messages.map((m) => m.id)).toEqual(["u1", "m1"])
    },
    {
      name: "reasoning",
      list: [e.reasoning("m1", "hmm")],
      check: (t) => {
        expect(t.thread.messages[1]!.reasoning).toEqual(["hmm"])
        expect(t.thread.messages[1]!.reasoningDurationMS).toBeTypeOf("number")
      }
    },
    {
      name: "a component started and patched",
      list: [e.componentStart("m1", "k1"), e.props("k1", [{ op: "add", path: "/a", value: 1 }])],
      check: (t) =>
        expect(t.thread.messages[1]!.content).toEqual([
          { type: "component", id: "k1", name: "Card", props: { a: 1 }, streamingState: "done" }
        ])
    },
    {
      name: "a text message started, with text",
      list: [e.textStart("m1"), e.text("m1", "late")],
      check: (t) => expect(t.thread.messages[1]!.content).toEqual([{ type: "text", text: "late" }])
    },
    {
      name: "a tool call started",
      list: [e.toolStart("c1", "f")],
      check: (t) => expect(t.thread.messages[1]!.content).toEqual([{ type: "tool_use", id: "c1", name: "f", input: {} }])
    },
    {
      name: "a pause for a client tool",
      list: [e.awaiting(["c1", "f"])],
      check: (t) => expect(t.pendingToolCalls).toEqual([{ toolCallId: "c1", toolName: "f" }])
    }
  ]
  for (const ending of endings) {
    for (const late of after) {
      for (const batched of [false, true]) {
        it(`after ${ending.name}, ${late.name} is kept and nothing shows as streaming or open${batched ? " (one chunk)" : ""}`, () => {
          const actions: ReadonlyArray<Action> = batched
            ? [{ type: "EVENTS", threadId: "t1", events: late.list, at: 1000 }]
            : events("t1", late.list)
          const t = thread(reduce(reduce(started(), [ending.end]), actions), "t1")
          expect(t.thread.status).toBe("idle")
          expect(t.streaming.status).toBe("idle")
          expect(t.streaming.messageId).toBeUndefined()
          expect(t.internal.toolArgs.size).toBe(0)
          expect(t.internal.openComponents).toEqual([])
          expect(t.internal.openReasoning).toBeUndefined()
          expect(t.internal.ephemeralMessageId).toBeUndefined()
          late.check(t)
        })
      }
    }
  }

  it("a user's message streamed as events on an idle thread, as upstream records it, keeps its text without an anomaly", () => {
    const t = thread(reduce(initial, events("t1", [e.textStart("u1", "user"), e.text("u1", "Hello"), e.textEnd("u1")])), "t1")
    expect(t.thread.messages).toMatchObject([{ id: "u1", role: "user", content: [{ type: "text", text: "Hello" }] }])
    expect(t.streaming.messageId).toBeUndefined()
    expect(t.anomalies).toEqual([])
  })

  it("the next run streams as usual", () => {
    const ended = reduce(reduce(started(), events("t1", [e.runFinished("t1")], 900)), events("t1", [e.componentStart("m1", "k1")]))
    const t = thread(reduce(ended, events("t1", [e.runStarted("t1", "run2"), e.textStart("m2"), e.componentStart("m2", "k2")], 2000)), "t1")
    expect(t.thread.status).toBe("streaming")
    expect(t.streaming.messageId).toBe("m2")
    expect(t.internal.openComponents).toEqual(["k2"])
  })
})

describe("a patch for a component that already ended", () => {
  const ended = (): State =>
    reduce(started(), events("t1", [
      e.textStart("m1"),
      e.componentStart("m1", "k1"),
      e.props("k1", [{ op: "add", path: "/a", value: 1 }]),
      e.componentEnd("k1")
    ]))
  const componentOf = (t: ThreadState) => t.thread.messages[1]!.content[0]

  for (const late of [
    { name: "props", event: e.props("k1", [{ op: "add", path: "/b", value: 2 }]), field: { props: { a: 1, b: 2 } } },
    { name: "state", event: e.state("k1", [{ op: "add", path: "/s", value: 3 }]), field: { state: { s: 3 } } }
  ]) {
    for (const ending of [e.runFinished("t1"), e.runError({ message: "boom" })]) {
      it(`a late ${late.name} patch while the run streams shows it streaming, and ${ending.type} closes it again`, () => {
        const reopened = reduce(ended(), events("t1", [late.event], 2000))
        expect(componentOf(thread(reopened, "t1"))).toMatchObject({ ...late.field, streamingState: "streaming" })
        expect(thread(reopened, "t1").internal.openComponents).toEqual(["k1"])
        const t = thread(reduce(reopened, events("t1", [ending], 3000)), "t1")
        expect(componentOf(t)).toMatchObject({ ...late.field, streamingState: "done" })
        expect(t.internal.openComponents).toEqual([])
      })
    }

    it(`a late ${late.name} patch once the run ended is applied, and the component stays done`, () => {
      const idle = reduce(ended(), events("t1", [e.runFinished("t1")], 2000))
      const t = thread(reduce(idle, events("t1", [late.event], 3000)), "t1")
      expect(componentOf(t)).toMatchObject({ ...late.field, streamingState: "done" })
      expect(t.internal.openComponents).toEqual([])
    })
  }
})

// The API stores every text delta of the model in its message, one after its TEXT_MESSAGE_END too
// (the v1 stream sends it under the same id): the text is kept, as the server's thread shows it.
// AG-UI forbids content after a message's end, so an anomaly says so.
describe("text for a message of the turn that already ended", () => {
  const ended = [e.textStart("m1"), e.text("m1", "Hi"), e.textEnd("m1")]
  const textOf = (t: ThreadState) => t.thread.messages.at(-1)!.content.flatMap((c) => c.type === "text" ? [c.text] : []).join("")

  it("is appended, and recorded as an anomaly per delta", () => {
    const t = thread(reduce(started(), events("t1", [...ended, [e.text("m1", " there"), 4242], [e.text("m1", "!"), 4243]])), "t1")
    expect(textOf(t)).toBe("Hi there!")
    expect(t.anomalies).toEqual([
      { eventType: "TEXT_MESSAGE_CONTENT", reason: "message m1 already ended", at: 4242 },
      { eventType: "TEXT_MESSAGE_CONTENT", reason: "message m1 already ended", at: 4243 }
    ])
    expect(t.streaming.messageId).toBeUndefined()
  })

  it("is the same in one batch as event by event", () => {
    const list = [...ended, e.text("m1", " there"), e.text("m1", "!")]
    const batched = thread(reduce(started(), [{ type: "EVENTS", threadId: "t1", events: list, at: 4242 }]), "t1")
    expect(textOf(batched)).toBe("Hi there!")
    expect(batched.anomalies.map((a) => a.reason)).toEqual(["message m1 already ended", "message m1 already ended"])
  })

  it("after the message started again (as the API resumes a reply) is no anomaly", () => {
    const t = thread(reduce(started(), events("t1", [...ended, e.textStart("m1"), e.text("m1", " again"), e.textEnd("m1")])), "t1")
    expect(textOf(t)).toBe("Hi again")
    expect(t.anomalies).toEqual([])
  })

  it("of an earlier turn's ended message is refused, as before", () => {
    const before = reduce(started(), events("t1", [...ended, e.runFinished("t1")]))
    const next = reduce(before, [userMessage("t1", "u2", "more", 5000), ...events("t1", [e.runStarted("t1", "run2"), [e.text("m1", "?"), 6000]], 5100)])
    const t = thread(next, "t1")
    expect(t.thread.messages[1]!.content).toEqual([{ type: "text", text: "Hi" }])
    expect(t.anomalies).toEqual([{ eventType: "TEXT_MESSAGE_CONTENT", reason: "message m1 is not this turn's reply", at: 6000 }])
  })
})

describe("toIsoString", () => {
  it.each([0, 1, -1, 999, 1_700_000_000_123, 951_782_400_000, 4_107_542_400_000, -62_135_596_800_000, 253_402_300_799_999, 253_402_300_800_000, -62_198_755_200_001, -8_640_000_000_000_000, 8_640_000_000_000_000])(
    "%d matches Date#toISOString",
    (ms) => {
      expect(ClientState.toIsoString(ms)).toBe(new Date(ms).toISOString())
    }
  )

  it("matches Date#toISOString on many values, and is total", () => {
    let x = 12345
    for (let i = 0; i < 2_000; i++) {
      x = (x * 1_103_515_245 + 12_345) % 2_147_483_648
      const ms = (x / 2_147_483_648 - 0.5) * 2 * 8_000_000_000_000
      expect(ClientState.toIsoString(Math.trunc(ms))).toBe(new Date(Math.trunc(ms)).toISOString())
    }
    expect(ClientState.toIsoString(Number.NaN)).toBe("1970-01-01T00:00:00.000Z")
    expect(ClientState.toIsoString(Number.POSITIVE_INFINITY)).toBe("1970-01-01T00:00:00.000Z")
  })
})

describe("a message id reused from an earlier turn", () => {
  // Turn one: u1, then the reply "m" (text, a component, a tool result under "m-tool").
  const firstTurn = (): State =>
    reduce(started(), events("t1", [
      e.textStart("m"), e.text("m", "first"), e.textEnd("m"),
      e.componentStart("m", "c1"), e.componentEnd("c1"),
      e.toolStart("call-1", "f"), e.toolEnd("call-1"),
      e.toolResult("m-tool", "call-1", "ok"),
      e.runFinished("t1")
    ]))
  const secondTurn = (list: ReadonlyArray<AnyEvent>): State =>
    reduce(firstTurn(), [userMessage("t1", "u2", "again", 2000), ...events("t1", [e.runStarted("t1", "run2"), ...list], 3000)])
  const ids = (s: State) => getMessages(s, "t1").map((m) => m.id)
  const texts = (s: State) => getMessages(s, "t1").map((m) => m.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join(""))

  it("text under a reused id opens a message after the turn's question; its content and end find it", () => {
    const s = secondTurn([e.textStart("m"), e.text("m", "second"), e.textEnd("m"), e.runFinished("t1", "run2")])
    expect(ids(s)).toEqual(["u1", "m", "m-tool", "u2", "m_2"])
    expect(texts(s)).toEqual(["hi", "first", "", "again", "second"])
    expect(thread(s, "t1").anomalies.map((a) => [a.eventType, a.reason])).toEqual([
      ["TEXT_MESSAGE_START", "message m is from an earlier turn; this turn's message is m_2"]
    ])
    expect(thread(s, "t1").streaming.messageId).toBeUndefined()
  })

  it("a component, reasoning, a parent link and a tool result under reused ids stay out of history", () => {
    const s = secondTurn([
      e.reasoningStart("m"), e.reasoning("m", "hmm"), e.reasoningEnd("m"),
      e.componentStart("m", "c2"), e.componentEnd("c2"),
      e.parent("m", "u2"),
      e.toolResult("m-tool", "call-2", "again"),
      e.runFinished("t1", "run2")
    ])
    expect(ids(s)).toEqual(["u1", "m", "m-tool", "u2", "m_2", "m-tool_2"])
    const [, first, firstTool, , second, secondTool] = getMessages(s, "t1")
    expect(first!.content.map((c) => c.type)).toEqual(["text", "component", "tool_use"])
    expect(first!.reasoning).toBeUndefined()
    expect(first!.parentMessageId).toBeUndefined()
    expect(firstTool!.content).toHaveLength(1)
    expect(second!.reasoning).toEqual(["hmm"])
    expect(second!.content.map((c) => (c.type === "component" ? c.id : c.type))).toEqual(["c2"])
    expect(second!.parentMessageId).toBe("u2")
    expect(secondTool!.content).toMatchObject([{ type: "tool_result", toolUseId: "call-2" }])
    // Two for the reused ids, one for the result of a call this turn never started.
    expect(thread(s, "t1").anomalies).toHaveLength(3)
    expect(thread(s, "t1").anomalies.map((a) => a.reason)).toContain("result for unknown tool call call-2")
  })

  it("a tool call whose parent is an earlier turn's reply opens a message of this turn; history keeps no call", () => {
    const s = secondTurn([e.toolStart("c2", "weather", "m"), e.toolArgs("c2", "{}"), e.toolEnd("c2"), e.runFinished("t1", "run2")])
    expect(ids(s)).toEqual(["u1", "m", "m-tool", "u2", "msg_tool_c2"])
    const [, first, , , call] = getMessages(s, "t1")
    expect(first!.content.map((c) => c.type)).toEqual(["text", "component", "tool_use"])
    expect(call!.content).toEqual([{ type: "tool_use", id: "c2", name: "weather", input: {} }])
  })

  it("a reply and a tool result under the id of the turn's question open a reply of their own; the question keeps its text", () => {
    const s = secondTurn([
      e.textStart("u2"), e.text("u2", "second"), e.textEnd("u2"),
      e.toolResult("u2", "call-2", "ok"),
      e.runFinished("t1", "run2")
    ])
    expect(ids(s)).toEqual(["u1", "m", "m-tool", "u2", "u2_2"])
    expect(texts(s)).toEqual(["hi", "first", "", "again", "second"])
    expect(getMessages(s, "t1").at(-1)).toMatchObject({ role: "assistant", content: [{ type: "text" }, { type: "tool_result" }] })
    expect(thread(s, "t1").anomalies.map((a) => a.reason)).toEqual([
      "message u2 is the user's; this reply's message is u2_2",
      "result for unknown tool call call-2"
    ])
  })

  it("a reply under the id of this turn's tool result opens a message after it; another result may join it", () => {
    const s = secondTurn([
      e.toolStart("c2", "weather"), e.toolEnd("c2"), e.toolResult("r2", "c2", "sunny"),
      e.toolStart("c3", "weather"), e.toolEnd("c3"), e.toolResult("r2", "c3", "rainy"),
      e.textStart("r2"), e.text("r2", "Sunny, then rainy."), e.textEnd("r2"),
      e.runFinished("t1", "run2")
    ])
    expect(ids(s)).toEqual(["u1", "m", "m-tool", "u2", "msg_tool_c2", "r2", "r2_2"])
    expect(getMessages(s, "t1")[5]!.content.map((c) => c.type)).toEqual(["tool_result", "tool_result"])
    expect(texts(s).at(-1)).toBe("Sunny, then rainy.")
    expect(thread(s, "t1").anomalies.map((a) => a.reason)).toEqual(["message r2 is a tool result's; this reply's message is r2_2"])
  })

  it("text under an earlier reply's id or the question's, with no start, is an anomaly: history and the question keep their text", () => {
    const s = secondTurn([e.text("m", "second"), e.text("u2", "more"), e.runFinished("t1", "run2")])
    expect(ids(s)).toEqual(["u1", "m", "m-tool", "u2"])
    expect(texts(s)).toEqual(["hi", "first", "", "again"])
    expect(thread(s, "t1").anomalies.map((a) => [a.eventType, a.reason])).toEqual([
      ["TEXT_MESSAGE_CONTENT", "message m is not this turn's reply"],
      ["TEXT_MESSAGE_CONTENT", "message u2 is not this turn's reply"]
    ])
    // Batched as one chunk alike.
    const batched = reduce(reduce(firstTurn(), [userMessage("t1", "u2", "again", 2000)]), [{
      type: "EVENTS",
      threadId: "t1",
      events: [e.runStarted("t1", "run2"), e.text("m", "sec"), e.text("m", "ond"), e.runFinished("t1", "run2")],
      at: 3000
    }])
    expect(texts(batched)).toEqual(["hi", "first", "", "again"])
    expect(thread(batched, "t1").anomalies).toHaveLength(2)
  })

  it("text under the id of this turn's tool result, with no start, is an anomaly: the result's message keeps no text", () => {
    const list = [
      e.toolStart("c2", "weather"), e.toolEnd("c2"), e.toolResult("r2", "c2", "sunny"),
      e.text("r2", "Sunny."),
      e.runFinished("t1", "run2")
    ]
    const contentAnomalies = (s: State) =>
      thread(s, "t1").anomalies.filter((a) => a.eventType === "TEXT_MESSAGE_CONTENT").map((a) => a.reason)
    const s = secondTurn(list)
    expect(ids(s)).toEqual(["u1", "m", "m-tool", "u2", "msg_tool_c2", "r2"])
    expect(getMessages(s, "t1")[5]!.content.map((c) => c.type)).toEqual(["tool_result"])
    expect(contentAnomalies(s)).toEqual(["message r2 is a tool result's, not this turn's reply"])
    // Batched as one chunk alike.
    const batched = reduce(reduce(firstTurn(), [userMessage("t1", "u2", "again", 2000)]), [{
      type: "EVENTS",
      threadId: "t1",
      events: [e.runStarted("t1", "run2"), ...list],
      at: 3000
    }])
    expect(getMessages(batched, "t1")[5]!.content.map((c) => c.type)).toEqual(["tool_result"])
    expect(contentAnomalies(batched)).toEqual(contentAnomalies(s))
  })

  it("an id first used in this turn is merged as before, across the turn's steps", () => {
    const s = secondTurn([
      e.textStart("m2"), e.text("m2", "a"), e.textEnd("m2"),
      e.runFinished("t1", "run2"), e.runStarted("t1", "run3"),
      e.textStart("m2"), e.text("m2", "b"), e.textEnd("m2")
    ])
    expect(ids(s)).toEqual(["u1", "m", "m-tool", "u2", "m2"])
    expect(texts(s).at(-1)).toBe("ab")
    expect(thread(s, "t1").anomalies).toEqual([])
  })

  it("a call whose parent is the question's id, after an event gave that id an alias, opens a message under the alias, never a second one under the question's id", () => {
    // Shrunk by the model (ClientState.model.test.ts).
    const s = reduce(started(), events("t1", [
      e.toolResult("r1", "c0", "done"),
      e.reasoningEnd("u1"),
      e.toolStart("c1", "f", "u1")
    ]))
    const ids = getMessages(s, "t1").map((m) => m.id)
    expect(ids).toEqual(["u1", "r1", "u1_2"])
    expect(getMessages(s, "t1")[0]!.content).toEqual([{ type: "text", text: "hi" }])
    expect(getMessages(s, "t1")[2]!.content).toEqual([{ type: "tool_use", id: "c1", name: "f", input: {} }])
  })

  it("the server's copy of the thread ends the aliases: its ids are the truth again", () => {
    const s = secondTurn([e.textStart("m"), e.text("m", "second"), e.textEnd("m"), e.runFinished("t1", "run2")])
    const server = { ...thread(s, "t1").thread, messages: getMessages(s, "t1").slice(0, 2) }
    const reconciled = reduce(s, [
      { type: "RECONCILE_THREAD", threadId: "t1", thread: server, pendingToolCallIds: [] },
      ...events("t1", [e.text("m", "+")], 6000)
    ])
    expect(texts(reconciled)).toEqual(["hi", "first+"])
  })
})
