import { it as effectIt } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import { describe, expect, it } from "vitest"
import * as ClientState from "../src/ClientState.js"
import { mergeMessages, mergePendingToolCalls, mergeThread, reconcileThread, reconcileTimeout } from "../src/internal/reconcile.js"
import { TransportError } from "../src/TamboError.js"
import type { Content, TamboThread, TamboThreadMessage } from "../src/Types.js"

const msg = (id: string, role: TamboThreadMessage["role"], content: Array<Content>, extra: Partial<TamboThreadMessage> = {}): TamboThreadMessage => ({
  id,
  role,
  content,
  createdAt: "2026-01-01T00:00:00.000Z",
  ...extra
})
const text = (t: string): Content => ({ type: "text", text: t })
const toolUse = (id: string, input: Record<string, unknown> = { city: "Paris" }, extra: object = {}): Content => ({
  type: "tool_use",
  id,
  name: "get_weather",
  input,
  ...extra
})
const toolResult = (toolUseId: string): Content => ({ type: "tool_result", toolUseId, content: [{ type: "text", text: "21" }] })
const component = (id: string, props: unknown, extra: object = {}): Content => ({ type: "component", id, name: "Card", props, ...extra })

const thread = (messages: Array<TamboThreadMessage>, extra: Partial<TamboThread> = {}): TamboThread => ({
  id: "thr_1",
  messages,
  status: "idle",
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:01.000Z",
  lastRunCancelled: false,
  ...extra
})

describe("mergeMessages", () => {
  const cases: ReadonlyArray<{
    readonly name: string
    readonly local: Array<TamboThreadMessage>
    readonly server: Array<TamboThreadMessage>
    readonly expected: Array<TamboThreadMessage>
  }> = [
    {
      name: "the user's local message takes the server's id and keeps its local one as key",
      local: [msg("local_user_1", "user", [text("Hi")]), msg("msg_a", "assistant", [text("Hello")])],
      server: [msg("msg_u", "user", [text("Hi")]), msg("msg_a", "assistant", [text("Hello")])],
      expected: [msg("msg_u", "user", [text("Hi")], { key: "local_user_1" }), msg("msg_a", "assistant", [text("Hello")])]
    },
    {
      name: "a reply that began with a tool call gets the server's id and leading \" \" text block",
      local: [msg("local_user_1", "user", [text("Weather?")]), msg("msg_tool_call_1", "assistant", [toolUse("call_1")])],
      server: [
        msg("msg_u", "user", [text("Weather?")]),
        msg("msg_b", "assistant", [text(" "), toolUse("call_1", { city: "Paris" }, { hasCompleted: true })])
      ],
      expected: [
        msg("msg_u", "user", [text("Weather?")], { key: "local_user_1" }),
        msg("msg_b", "assistant", [text(" "), toolUse("call_1")], { key: "msg_tool_call_1" })
      ]
    },
    {
      name: "a tool result shown locally is matched by its call id",
      local: [
        msg("msg_b", "assistant", [text("Let me check."), toolUse("call_1")]),
        msg("msg_tool_result_call_1", "assistant", [toolResult("call_1")]),
        msg("msg_c", "assistant", [text("21 degrees")])
      ],
      server: [
        msg("msg_b", "assistant", [text("Let me check."), toolUse("call_1")]),
        msg("msg_t", "assistant", [toolResult("call_1")]),
        msg("msg_c", "assistant", [text("21 degrees")])
      ],
      expected: [
        msg("msg_b", "assistant", [text("Let me check."), toolUse("call_1")]),
        msg("msg_t", "assistant", [toolResult("call_1")], { key: "msg_tool_result_call_1" }),
        msg("msg_c", "assistant", [text("21 degrees")])
      ]
    },
    {
      name: "reasoning and its duration stay; the text is the server's",
      local: [msg("msg_a", "assistant", [text("Partial ans")], { reasoning: ["hmm"], reasoningDurationMS: 12 })],
      server: [msg("msg_a", "assistant", [text("Partial")], { isCancelled: true })],
      expected: [msg("msg_a", "assistant", [text("Partial")], { isCancelled: true, reasoning: ["hmm"], reasoningDurationMS: 12 })]
    },
    {
      name: "a component takes the stored props and keeps its per-prop streaming status, done",
      local: [
        msg("msg_a", "assistant", [
          component("c1", { city: "Rome", _tambo_statusMessage: "x" }, {
            streamingState: "streaming",
            streamingStatus: { city: "done", _tambo_statusMessage: "done" }
          })
        ])
      ],
      server: [msg("msg_a", "assistant", [text(" "), component("c1", { city: "Rome" }, { state: {}, streamingState: "done" })])],
      expected: [
        msg("msg_a", "assistant", [
          text(" "),
          component("c1", { city: "Rome" }, {
            state: {},
            streamingState: "done",
            streamingStatus: { city: "done", _tambo_statusMessage: "done" }
          })
        ])
      ]
    },
    {
      name: "a local message the server did not store is dropped",
      local: [msg("msg_u", "user", [text("Hi")]), msg("local_user_2", "user", [text("Again")])],
      server: [msg("msg_u", "user", [text("Hi")])],
      expected: [msg("msg_u", "user", [text("Hi")])]
    },
    {
      name: "a message only the server has is added in its place",
      local: [msg("msg_u", "user", [text("Hi")])],
      server: [msg("msg_s", "system", [text("Be brief")]), msg("msg_u", "user", [text("Hi")])],
      expected: [msg("msg_s", "system", [text("Be brief")]), msg("msg_u", "user", [text("Hi")])]
    },
    {
      name: "a local message is not matched across one the server knows by id",
      local: [msg("msg_a", "assistant", [text("A")]), msg("local_user_1", "user", [text("B")])],
      server: [msg("msg_x", "user", [text("X")]), msg("msg_a", "assistant", [text("A")]), msg("msg_u", "user", [text("B")])],
      expected: [
        msg("msg_x", "user", [text("X")]),
        msg("msg_a", "assistant", [text("A")]),
        msg("msg_u", "user", [text("B")], { key: "local_user_1" })
      ]
    },
    {
      name: "a local tool-call message is not matched to a server message without that call",
      local: [msg("msg_tool_call_9", "assistant", [toolUse("call_9")])],
      server: [msg("msg_b", "assistant", [text("Other")])],
      expected: [msg("msg_b", "assistant", [text("Other")])]
    },
    {
      name: "a key given once is kept when the id changes again",
      local: [msg("msg_u", "user", [text("Hi")], { key: "local_user_1" })],
      server: [msg("msg_u2", "user", [text("Hi")])],
      expected: [msg("msg_u2", "user", [text("Hi")], { key: "local_user_1" })]
    }
  ]
  for (const c of cases) {
    it(c.name, () => {
      expect(mergeMessages(c.local, c.server)).toEqual(c.expected)
    })
  }

  it("keeps the identity of a message and of blocks that did not change", () => {
    const block = toolUse("call_1")
    const same = msg("msg_a", "assistant", [text("Hi"), block])
    const changed = msg("msg_b", "assistant", [text("Partial ans"), block])
    const merged = mergeMessages([same, changed], [
      msg("msg_a", "assistant", [text("Hi"), toolUse("call_1", { city: "Paris" }, { hasCompleted: true })]),
      msg("msg_b", "assistant", [text("Partial"), toolUse("call_1")])
    ])
    expect(merged[0]).toBe(same)
    expect(merged[1]!.content[1]).toBe(block)
  })
})

describe("mergeThread", () => {
  it("takes the server's fields, keeps the client's id and status, and returns the local thread when equal", () => {
    const local = thread([msg("msg_u", "user", [text("Hi")])])
    expect(mergeThread(local, thread([msg("msg_u", "user", [text("Hi")])]))).toBe(local)
    const merged = mergeThread(local, thread([msg("msg_u", "user", [text("Hi")])], {
      id: "other",
      name: "Greeting",
      updatedAt: "2026-01-01T00:00:09.000Z",
      lastRunError: { code: "INTERNAL_ERROR", message: "boom" }
    }))
    expect(merged).toEqual({
      ...local,
      name: "Greeting",
      updatedAt: "2026-01-01T00:00:09.000Z",
      lastRunError: { code: "INTERNAL_ERROR", message: "boom" }
    })
    expect(merged.messages).toBe(local.messages)
  })

  it("takes lastRunCancelled from the server: a run stopped in its tool round had ended there, uncancelled", () => {
    const local = thread([], { lastRunCancelled: true })
    expect(mergeThread(local, thread([])).lastRunCancelled).toBe(false)
    expect(mergeThread(thread([]), thread([], { lastRunCancelled: true })).lastRunCancelled).toBe(true)
  })

  it("drops a lastRunError the server no longer has", () => {
    const local = thread([], { lastRunError: { message: "old" } })
    expect(mergeThread(local, thread([]))).toEqual(thread([]))
  })
})

describe("mergePendingToolCalls", () => {
  const messages = [msg("msg_b", "assistant", [text(" "), toolUse("call_1"), toolUse("call_2")])]
  const cases: ReadonlyArray<{
    readonly name: string
    readonly local: ReadonlyArray<ClientState.AwaitedToolCall>
    readonly server: ReadonlyArray<string>
    readonly expected: ReadonlyArray<ClientState.AwaitedToolCall>
  }> = [
    { name: "none on either side", local: [], server: [], expected: [] },
    { name: "the server waits on none any more", local: [{ toolCallId: "call_1", toolName: "get_weather" }], server: [], expected: [] },
    {
      name: "a call the client did not know is named from the thread's tool calls",
      local: [{ toolCallId: "call_1", toolName: "get_weather" }],
      server: ["call_1", "call_2"],
      expected: [{ toolCallId: "call_1", toolName: "get_weather" }, { toolCallId: "call_2", toolName: "get_weather" }]
    },
    {
      name: "a call with no known name is left out",
      local: [],
      server: ["call_unknown"],
      expected: []
    }
  ]
  for (const c of cases) {
    it(c.name, () => {
      expect(mergePendingToolCalls(c.local, c.server, messages)).toEqual(c.expected)
    })
  }

  it("returns the local list itself when the server agrees", () => {
    const local = [{ toolCallId: "call_1", toolName: "get_weather" }]
    expect(mergePendingToolCalls(local, ["call_1"], messages)).toBe(local)
  })
})

describe("RECONCILE_THREAD", () => {
  const at = 1_000
  const base = ClientState.reduce(ClientState.initial, [
    { type: "INIT_THREAD", threadId: "thr_1", at },
    { type: "USER_MESSAGE", threadId: "thr_1", message: msg("local_user_1", "user", [text("Hi")]), at }
  ])

  it("merges the server's thread, pending calls and last run", () => {
    const server = thread([msg("msg_u", "user", [text("Hi")]), msg("msg_b", "assistant", [text(" "), toolUse("call_1")])])
    const next = ClientState.reduce(base, [
      { type: "RECONCILE_THREAD", threadId: "thr_1", thread: server, pendingToolCallIds: ["call_1"], lastCompletedRunId: "run_1" }
    ])
    const state = next.threadMap["thr_1"]!
    expect(state.thread.messages.map((m) => [m.id, m.key])).toEqual([["msg_u", "local_user_1"], ["msg_b", undefined]])
    expect(state.pendingToolCalls).toEqual([{ toolCallId: "call_1", toolName: "get_weather" }])
    expect(state.lastCompletedRunId).toBe("run_1")
    expect(state.internal.optimisticMessageIds).toBeUndefined()
    // The index follows the new ids.
    const more = ClientState.reduce(next, [
      { type: "EVENT", threadId: "thr_1", event: { type: "TEXT_MESSAGE_CONTENT", messageId: "msg_b", delta: "!" }, at }
    ])
    expect(more.threadMap["thr_1"]!.thread.messages).toHaveLength(2)
    expect(more.threadMap["thr_1"]!.thread.messages[1]!.content.at(-1)).toEqual({ type: "text", text: "!" })
  })

  it("LOAD_THREAD_MESSAGES also keeps a replaced local id as the message's key", () => {
    const next = ClientState.reduce(base, [
      { type: "LOAD_THREAD_MESSAGES", threadId: "thr_1", messages: [msg("msg_u", "user", [text("Hi")])] }
    ])
    expect(next.threadMap["thr_1"]!.thread.messages.map((m) => [m.id, m.key])).toEqual([["msg_u", "local_user_1"]])
  })

  it("is ignored while a run streams on the thread, and for an unknown thread", () => {
    const streaming = ClientState.reduce(base, [
      { type: "EVENT", threadId: "thr_1", event: { type: "RUN_STARTED", threadId: "thr_1", runId: "run_2" }, at }
    ])
    const action: ClientState.Action = { type: "RECONCILE_THREAD", threadId: "thr_1", thread: thread([]), pendingToolCallIds: [] }
    expect(ClientState.reduce(streaming, [action])).toBe(streaming)
    expect(ClientState.reduce(base, [{ ...action, threadId: "thr_unknown" }])).toBe(base)
  })
})

describe("reconcileThread", () => {
  effectIt.effect("gives up on a read slower than its bound", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(reconcileThread(Effect.never))
      yield* TestClock.adjust(reconcileTimeout)
      expect(Exit.isSuccess(yield* Fiber.await(fiber))).toBe(true)
    }))

  effectIt.effect("a failed read is handed to onFailure and does not fail", () =>
    Effect.gen(function* () {
      const failures: Array<string> = []
      yield* reconcileThread(
        new TransportError({ reason: "Disconnected", message: "gone" }),
        (error) => Effect.sync(() => failures.push(error._tag))
      )
      expect(failures).toEqual(["TransportError"])
    }))
})
