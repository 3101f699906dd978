// Differential test: the same wire events go to @tambo-ai/client 1.1.3's
// `streamReducer` (one action per event) and to ours (one batch per event,
// and all events in one batch); after every event the threads must agree.
//
// Normalisations, each because upstream legitimately differs:
// - `createdAt` / `updatedAt` are dropped: upstream stamps them with
//   `new Date()`, ours with the action's `at`.
// - ids starting with `ephemeral_` become "ephemeral": upstream appends
//   `crypto.randomUUID()`, ours a deterministic suffix.
// - the state goes through a JSON round trip: upstream sometimes writes a key
//   with the value `undefined` (e.g. `error: undefined`) where ours omits it.
// Upstream reads times from `event.timestamp`, ours from the action's `at`;
// every event here carries a timestamp and `at` is set to it.
import { createInitialState, streamReducer, type StreamAction, type StreamState } from "@tambo-ai/client"
import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import * as ClientState from "../src/ClientState.js"
import type { Action } from "../src/ClientState.js"
import * as Events from "../src/Events.js"
import type { TamboThreadMessage, ToolResultContent } from "../src/Types.js"

type Wire = Record<string, unknown>

let clock = 1_700_000_000_000
const at = () => (clock += 7)

/** Wire events, each stamped with a timestamp. */
const wire = (...list: ReadonlyArray<Wire>): Array<Wire> => list.map((event) => ({ ...event, timestamp: at() }))

const userEvents = (id: string, text: string): Array<Wire> =>
  wire(
    { type: "TEXT_MESSAGE_START", messageId: id, role: "user" },
    { type: "TEXT_MESSAGE_CONTENT", messageId: id, delta: text },
    { type: "TEXT_MESSAGE_END", messageId: id }
  )

const custom = (name: string, value: unknown): Wire => ({ type: "CUSTOM", name, value })

const decode = (event: Wire): Events.TamboEvent | Events.UnknownEvent => {
  const decoded = Events.decodeEvent(event)
  if (Either.isLeft(decoded)) throw new Error(decoded.left.message)
  return decoded.right
}

const ourAction = (threadId: string, event: Wire): Action => ({
  type: "EVENT",
  threadId,
  event: decode(event),
  at: typeof event.timestamp === "number" ? event.timestamp : 0
})

// Upstream types its events with @ag-ui/core's enum; the wire objects are the
// same values, so this is the one place a cast is needed.
const upstreamAction = (threadId: string, event: Wire): StreamAction => ({
  type: "EVENT",
  threadId,
  event: event as unknown as Extract<StreamAction, { type: "EVENT" }>["event"]
})

const ephemeral = (id: string | undefined) => (id?.startsWith("ephemeral_") ? "ephemeral" : id)

interface Comparable {
  readonly thread: { readonly messages: ReadonlyArray<TamboThreadMessage>; readonly status: string; readonly lastRunCancelled: boolean }
  readonly streaming: { readonly messageId?: string | undefined }
  readonly lastCompletedRunId?: string | undefined
}

// Deliberate difference: after RUN_ERROR ours names the failed run as the last
// completed one, as the API does when it releases the run (upstream keeps the
// previous id, so its next run's previousRunId is refused). `withoutLastRun`
// drops the field from the comparison from that event on.
// Deliberate difference: a run that ends (RUN_FINISHED, RUN_ERROR) with a message or a component
// still open leaves nothing streaming in ours (no `streaming.messageId`, the component done);
// upstream keeps both as they were. Compared once the thread is idle, as ours leaves them.
const closed = (message: TamboThreadMessage): TamboThreadMessage => ({
  ...message,
  content: message.content.map((block) =>
    block.type === "component" && block.streamingState !== undefined ? { ...block, streamingState: "done" } : block
  )
})

const normalise = (state: Comparable | undefined, withoutLastRun = false) =>
  state === undefined
    ? undefined
    : JSON.parse(
      JSON.stringify({
        messages: state.thread.messages.map(({ createdAt: _createdAt, ...message }) => ({
          ...(state.thread.status === "idle" ? closed(message) : message),
          id: ephemeral(message.id)
        })),
        status: state.thread.status,
        lastRunCancelled: state.thread.lastRunCancelled,
        streaming: {
          ...state.streaming,
          messageId: state.thread.status === "idle" ? undefined : ephemeral(state.streaming.messageId)
        },
        lastCompletedRunId: withoutLastRun ? undefined : state.lastCompletedRunId
      })
    )

const compare = (threadId: string, events: ReadonlyArray<Wire>) => {
  let upstream: StreamState = createInitialState()
  let ours = ClientState.initial
  const actions: Array<Action> = []
  let sawError = false
  events.forEach((event, i) => {
    sawError ||= event.type === "RUN_ERROR"
    upstream = streamReducer(upstream, upstreamAction(threadId, event))
    const action = ourAction(threadId, event)
    actions.push(action)
    ours = ClientState.reduce(ours, [action])
    const target = event.type === "RUN_STARTED" && typeof event.threadId === "string" ? event.threadId : threadId
    expect({ step: i, event, state: normalise(ClientState.getThreadState(ours, target), sawError) }).toEqual({
      step: i,
      event,
      state: normalise(upstream.threadMap[target], sawError)
    })
  })
  const batched = ClientState.reduce(ClientState.initial, actions)
  for (const id of Object.keys(upstream.threadMap)) {
    expect(normalise(ClientState.getThreadState(batched, id), sawError)).toEqual(normalise(upstream.threadMap[id], sawError))
    expect(ClientState.getThreadState(batched, id)?.anomalies ?? []).toEqual([])
  }
  expect(batched.currentThreadId).toBe(upstream.currentThreadId)
  return { upstream, ours: batched }
}

describe("differential: ours vs @tambo-ai/client streamReducer", () => {
  it("text", () => {
    compare("t1", [
      ...wire({ type: "RUN_STARTED", threadId: "t1", runId: "r1" }),
      ...userEvents("u1", "Hello"),
      ...wire(
        { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
        { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "Hi" },
        { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: " there" },
        { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "!" },
        { type: "TEXT_MESSAGE_END", messageId: "m1" },
        { type: "RUN_FINISHED", threadId: "t1", runId: "r1" }
      )
    ])
  })

  it("reasoning before the text, then the text", () => {
    const { ours } = compare("t1", [
      ...wire({ type: "RUN_STARTED", threadId: "t1", runId: "r1" }),
      ...userEvents("u1", "Why?"),
      ...wire(
        { type: "THINKING_TEXT_MESSAGE_START" },
        { type: "THINKING_TEXT_MESSAGE_CONTENT", delta: "Let me " },
        { type: "THINKING_TEXT_MESSAGE_CONTENT", delta: "think." },
        { type: "THINKING_TEXT_MESSAGE_END" },
        { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
        { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "Because." },
        { type: "TEXT_MESSAGE_END", messageId: "m1" },
        { type: "RUN_FINISHED", threadId: "t1", runId: "r1" }
      )
    ])
    expect(ClientState.getMessages(ours, "t1")[1]).toMatchObject({ reasoning: ["Let me think."], reasoningDurationMS: 21 })
  })

  it("a client tool call with its arguments in fragments", () => {
    compare("t1", [
      ...wire({ type: "RUN_STARTED", threadId: "t1", runId: "r1" }),
      ...userEvents("u1", "Weather in Paris?"),
      ...wire(
        { type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "get_weather" },
        { type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: "{\"city\": \"Pa" },
        { type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: "ris\", \"units\": \"met" },
        { type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: "ric\", \"days\": [1, 2" },
        { type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: ", 3], \"detailed\": tr" },
        { type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: "ue, \"note\": null}" },
        { type: "TOOL_CALL_END", toolCallId: "c1" },
        custom("tambo.run.awaiting_input", { pendingToolCalls: [{ toolCallId: "c1", toolName: "get_weather", arguments: "{}" }] }),
        { type: "RUN_FINISHED", threadId: "t1", runId: "r1" }
      )
    ])
  })

  it("a component streamed with add-then-replace patches", () => {
    compare("t1", [
      ...wire({ type: "RUN_STARTED", threadId: "t1", runId: "r1" }),
      ...userEvents("u1", "Show the weather"),
      ...wire(
        { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
        { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "Here:" },
        custom("tambo.component.start", { messageId: "m1", componentId: "k1", componentName: "WeatherCard" }),
        custom("tambo.component.props_delta", { componentId: "k1", operations: [{ op: "add", path: "/title", value: "We" }] }),
        custom("tambo.component.props_delta", {
          componentId: "k1",
          operations: [
            { op: "replace", path: "/title", value: "Weather" },
            { op: "add", path: "/days", value: [] }
          ]
        }),
        custom("tambo.component.props_delta", { componentId: "k1", operations: [{ op: "add", path: "/days/-", value: { t: 21 } }] }),
        custom("tambo.component.props_delta", {
          componentId: "k1",
          operations: [
            { op: "add", path: "/days/-", value: { t: 19 } },
            { op: "replace", path: "/days/0/t", value: 22 },
            { op: "move", from: "/title", path: "/heading" },
            { op: "copy", from: "/heading", path: "/alt" },
            { op: "remove", path: "/alt" },
            { op: "test", path: "/heading", value: "Weather" }
          ]
        }),
        custom("tambo.component.state_delta", { componentId: "k1", operations: [{ op: "add", path: "/open", value: true }] }),
        custom("tambo.component.end", { componentId: "k1" }),
        { type: "TEXT_MESSAGE_END", messageId: "m1" },
        custom("tambo.component.start", { messageId: "m2", componentId: "k2", componentName: "Map" }),
        custom("tambo.component.props_delta", { componentId: "k2", operations: [{ op: "add", path: "/zoom", value: 3 }] }),
        { type: "RUN_FINISHED", threadId: "t1", runId: "r1" }
      )
    ])
  })

  it("text, then a tool call in the same message, then its result", () => {
    compare("t1", [
      ...wire({ type: "RUN_STARTED", threadId: "t1", runId: "r1" }),
      ...userEvents("u1", "Look it up"),
      ...wire(
        { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
        { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "Let me check." },
        { type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "search", parentMessageId: "m1" },
        { type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: "{\"q\":\"tambo\"}" },
        { type: "TOOL_CALL_END", toolCallId: "c1" },
        { type: "TEXT_MESSAGE_END", messageId: "m1" },
        { type: "TOOL_CALL_RESULT", messageId: "m1", toolCallId: "c1", content: "3 results" },
        { type: "RUN_FINISHED", threadId: "t1", runId: "r1" }
      )
    ])
  })

  it.each([
    { name: "an error", error: { message: "Rate limited", code: "RATE_LIMITED", category: "client_error", isRetryable: false, status: 429 } },
    { name: "a cancellation", error: { message: "Run cancelled", code: "CANCELLED" } },
    { name: "an error without details", error: { message: "boom" } }
  ])("a run that ends in $name", ({ error }) => {
    compare("t1", [
      ...wire({ type: "RUN_STARTED", threadId: "t1", runId: "r1" }),
      ...userEvents("u1", "Hi"),
      ...wire(
        { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
        { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "Partial" },
        { type: "RUN_ERROR", ...error },
        { type: "RUN_STARTED", threadId: "t1", runId: "r2" }
      )
    ])
  })

  it("several messages over two runs, with a parent link and a server tool result", () => {
    compare("t1", [
      ...wire({ type: "RUN_STARTED", threadId: "t1", runId: "r1" }),
      ...userEvents("u1", "Plan a trip"),
      ...wire(
        { type: "TEXT_MESSAGE_START", messageId: "a1", role: "assistant" },
        { type: "TEXT_MESSAGE_CONTENT", messageId: "a1", delta: "Searching." },
        { type: "TEXT_MESSAGE_END", messageId: "a1" },
        { type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "flights" },
        { type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: "{\"to\":\"Rome\"}" },
        { type: "TOOL_CALL_END", toolCallId: "c1" },
        { type: "TOOL_CALL_RESULT", messageId: "a1", toolCallId: "c1", content: "[]" },
        custom("tambo.message.parent", { messageId: "s1", parentMessageId: "a1" }),
        { type: "TEXT_MESSAGE_START", messageId: "s1", role: "assistant" },
        { type: "TEXT_MESSAGE_CONTENT", messageId: "s1", delta: "sampled" },
        { type: "TEXT_MESSAGE_END", messageId: "s1" },
        { type: "TEXT_MESSAGE_START", messageId: "a2", role: "assistant" },
        { type: "TEXT_MESSAGE_CONTENT", messageId: "a2", delta: "No flights." },
        { type: "TEXT_MESSAGE_END", messageId: "a2" },
        { type: "RUN_FINISHED", threadId: "t1", runId: "r1" },
        { type: "RUN_STARTED", threadId: "t1", runId: "r2" }
      ),
      ...userEvents("u2", "Try trains"),
      ...wire(
        { type: "TEXT_MESSAGE_START", messageId: "a3", role: "assistant" },
        { type: "TEXT_MESSAGE_CONTENT", messageId: "a3", delta: "Trains: yes." },
        { type: "TEXT_MESSAGE_END", messageId: "a3" },
        { type: "RUN_FINISHED", threadId: "t1", runId: "r2" }
      )
    ])
  })

  it("the placeholder's messages move to the real thread on RUN_STARTED", () => {
    // Upstream shows the user message in the placeholder, then dispatches the
    // run's events under the real thread id; both reducers must agree.
    let upstream: StreamState = createInitialState()
    let ours = ClientState.initial
    for (const event of userEvents("u1", "New chat")) {
      upstream = streamReducer(upstream, upstreamAction(ClientState.PLACEHOLDER_THREAD_ID, event))
      ours = ClientState.reduce(ours, [ourAction(ClientState.PLACEHOLDER_THREAD_ID, event)])
    }
    for (const event of wire(
      { type: "RUN_STARTED", threadId: "t-new", runId: "r1" },
      { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "Welcome" },
      { type: "TEXT_MESSAGE_END", messageId: "m1" },
      { type: "RUN_FINISHED", threadId: "t-new", runId: "r1" }
    )) {
      upstream = streamReducer(upstream, upstreamAction("t-new", event))
      ours = ClientState.reduce(ours, [ourAction("t-new", event)])
    }
    expect(ours.currentThreadId).toBe(upstream.currentThreadId)
    for (const id of ["t-new", ClientState.PLACEHOLDER_THREAD_ID]) {
      expect(normalise(ClientState.getThreadState(ours, id))).toEqual(normalise(upstream.threadMap[id]))
    }
  })

  it("an optimistic USER_MESSAGE equals upstream's synthetic user-message events", () => {
    const [start, content, end] = userEvents("u1", "Hello")
    let upstream: StreamState = createInitialState()
    for (const event of [start!, content!, end!]) upstream = streamReducer(upstream, upstreamAction("t1", event))
    const ours = ClientState.reduce(ClientState.initial, [
      { type: "USER_MESSAGE", threadId: "t1", message: { id: "u1", role: "user", content: [{ type: "text", text: "Hello" }] }, at: 1 }
    ])
    // Deliberate difference: ours marks the thread "waiting" until its run starts (upstream
    // looks idle while the request is in flight); the messages are the same.
    const oursThread = ClientState.getThreadState(ours, "t1")!
    expect(oursThread.thread.status).toBe("waiting")
    expect(oursThread.streaming.status).toBe("waiting")
    const idle = {
      ...oursThread,
      thread: { ...oursThread.thread, status: "idle" as const },
      streaming: { ...oursThread.streaming, status: "idle" as const }
    }
    expect(normalise(idle)).toEqual(normalise(upstream.threadMap.t1))
  })

  it("TOOL_RESULTS: same tool results as upstream's synthetic events, stored the API's way", () => {
    const results: ReadonlyArray<ToolResultContent> = [
      { type: "tool_result", toolUseId: "c1", content: [{ type: "text", text: "22" }, { type: "text", text: "°C" }] },
      { type: "tool_result", toolUseId: "c2", content: [{ type: "text", text: "ok" }] }
    ]
    const run = [
      ...wire({ type: "RUN_STARTED", threadId: "t1", runId: "r1" }),
      ...userEvents("u1", "go"),
      ...wire(
        { type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "temp" },
        { type: "TOOL_CALL_END", toolCallId: "c1" },
        { type: "TOOL_CALL_START", toolCallId: "c2", toolCallName: "ack" },
        { type: "TOOL_CALL_END", toolCallId: "c2" },
        { type: "RUN_FINISHED", threadId: "t1", runId: "r1" }
      )
    ]
    // What upstream's dispatchToolResults dispatches (its id uses Date.now()).
    const upstreamId = "msg_tool_result_1234"
    const synthetic = [
      { type: "TEXT_MESSAGE_START", messageId: upstreamId, role: "user" },
      ...results.map((r) => ({
        type: "TOOL_CALL_RESULT",
        messageId: upstreamId,
        toolCallId: r.toolUseId,
        content: r.content.map((c) => (c.type === "text" ? c.text : "")).join("")
      })),
      { type: "TEXT_MESSAGE_END", messageId: upstreamId }
    ]
    let upstream: StreamState = createInitialState()
    for (const event of [...run, ...synthetic]) upstream = streamReducer(upstream, upstreamAction("t1", event))
    const ours = ClientState.reduce(ClientState.initial, [
      ...run.map((event) => ourAction("t1", event)),
      { type: "TOOL_RESULTS", threadId: "t1", results, at: at() }
    ])
    // Deliberate difference, normalised for this case only: ours stores each
    // result as its own assistant message with the blocks as sent (what the
    // API stores and returns); upstream puts all of them in one user message
    // and joins each result's text into one block.
    const messages = ClientState.getMessages(ours, "t1")
    const isResult = (m: TamboThreadMessage) => m.id.startsWith("msg_tool_result_")
    const merged: TamboThreadMessage = {
      id: upstreamId,
      role: "user",
      content: messages.filter(isResult).flatMap((m) =>
        m.content.map((block) =>
          block.type === "tool_result"
            ? { ...block, content: [{ type: "text" as const, text: block.content.map((c) => (c.type === "text" ? c.text : "")).join("") }] }
            : block
        )
      )
    }
    expect(messages.filter(isResult).map((m) => m.role)).toEqual(["assistant", "assistant"])
    const oursThread = ClientState.getThreadState(ours, "t1")!
    const normalisedOurs = { ...oursThread, thread: { ...oursThread.thread, messages: [...messages.filter((m) => !isResult(m)), merged] } }
    expect(normalise(normalisedOurs)).toEqual(normalise(upstream.threadMap.t1))
  })
})
