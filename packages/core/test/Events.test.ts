import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import * as Events from "../src/Events.js"

const valid: ReadonlyArray<Record<string, unknown>> = [
  { type: "RUN_STARTED", threadId: "t1", runId: "r1", timestamp: 1 },
  { type: "RUN_FINISHED", threadId: "t1", runId: "r1" },
  { type: "RUN_FINISHED", threadId: "t1", runId: "r1", outcome: { type: "cancelled" } },
  { type: "RUN_ERROR", message: "boom" },
  { type: "RUN_ERROR", message: "rate", code: "RATE_LIMITED", category: "server_error", isRetryable: true, status: 429 },
  { type: "RUN_ERROR", message: "Run cancelled", code: "CANCELLED" },
  { type: "STEP_STARTED", stepName: "s" },
  { type: "STEP_FINISHED", stepName: "s" },
  { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
  { type: "TEXT_MESSAGE_START", messageId: "m1" },
  { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "Hel" },
  { type: "TEXT_MESSAGE_END", messageId: "m1" },
  { type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "weather", parentMessageId: "m1" },
  { type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "weather" },
  { type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: "{\"ci" },
  { type: "TOOL_CALL_END", toolCallId: "c1" },
  { type: "TOOL_CALL_RESULT", messageId: "m2", toolCallId: "c1", content: "sunny", role: "tool" },
  { type: "TOOL_CALL_RESULT", messageId: "m2", toolCallId: "c1", content: [{ type: "text", text: "sunny" }] },
  { type: "STATE_SNAPSHOT", snapshot: { a: 1 } },
  { type: "STATE_DELTA", delta: [{ op: "add", path: "/a", value: 1 }] },
  { type: "MESSAGES_SNAPSHOT", messages: [] },
  { type: "ACTIVITY_SNAPSHOT", messageId: "a1", activityType: "plan", content: { steps: [] } },
  { type: "ACTIVITY_SNAPSHOT", messageId: "a1", activityType: "plan", content: {}, replace: false },
  { type: "ACTIVITY_DELTA", messageId: "a1", activityType: "plan", patch: [{ op: "add", path: "/steps/-", value: "s" }] },
  { type: "THINKING_START", title: "hmm" },
  { type: "THINKING_END" },
  { type: "THINKING_TEXT_MESSAGE_START" },
  { type: "THINKING_TEXT_MESSAGE_CONTENT", delta: "let me think" },
  { type: "THINKING_TEXT_MESSAGE_END" },
  { type: "REASONING_START", messageId: "r1" },
  { type: "REASONING_MESSAGE_START", messageId: "r1", role: "reasoning" },
  { type: "REASONING_MESSAGE_CONTENT", messageId: "r1", delta: "let me think" },
  { type: "REASONING_MESSAGE_CHUNK", delta: "more" },
  { type: "REASONING_MESSAGE_END", messageId: "r1" },
  { type: "REASONING_END", messageId: "r1" },
  { type: "REASONING_ENCRYPTED_VALUE", subtype: "message", entityId: "r1", encryptedValue: "xx" },
  { type: "CUSTOM", name: "tambo.component.start", value: { messageId: "m1", componentId: "k1", componentName: "Card" } },
  {
    type: "CUSTOM",
    name: "tambo.component.props_delta",
    value: {
      componentId: "k1",
      operations: [
        { op: "add", path: "/title", value: "Hi" },
        { op: "remove", path: "/x" },
        { op: "replace", path: "/title", value: "Ho" },
        { op: "move", from: "/a", path: "/b" },
        { op: "copy", from: "/a", path: "/c" },
        { op: "test", path: "/a", value: 1 }
      ]
    }
  },
  { type: "CUSTOM", name: "tambo.component.state_delta", value: { componentId: "k1", operations: [] } },
  { type: "CUSTOM", name: "tambo.component.end", value: { componentId: "k1" } },
  {
    type: "CUSTOM",
    name: "tambo.run.awaiting_input",
    value: { pendingToolCalls: [{ toolCallId: "c1", toolName: "weather", arguments: "{}" }] }
  },
  { type: "CUSTOM", name: "tambo.message.parent", value: { messageId: "m3", parentMessageId: "m1" } },
  // Extra fields (AG-UI metadata, future additions) are allowed.
  { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "x", metadata: { a: 1 }, somethingNew: true }
]

describe("decodeFrame", () => {
  it.each(valid)("decodes $type $name", (event) => {
    const frame = JSON.stringify(event)
    const result = Events.decodeFrame(frame)
    expect(Either.isRight(result)).toBe(true)
    if (Either.isRight(result)) expect(result.right).toEqual(event)
  })

  it("knows every event type it is asked to", () => {
    const types = new Set(valid.map((event) => event.type))
    expect([...types].sort()).toEqual([...Events.knownEventTypes].sort())
    expect([...Events.knownCustomEventNames].sort()).toEqual([
      "tambo.component.end",
      "tambo.component.props_delta",
      "tambo.component.start",
      "tambo.component.state_delta",
      "tambo.message.parent",
      "tambo.run.awaiting_input"
    ])
  })

  it("returns the parsed object itself for known events (no copy)", () => {
    const parsed = { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "a" }
    const result = Events.decodeEvent(parsed)
    expect(Either.isRight(result) && result.right).toBe(parsed)
  })

  it.each([
    [{ type: "SUBAGENT_STARTED", subagentRunId: "s1" }, "SUBAGENT_STARTED", undefined],
    [{ type: "SOMETHING_NEW" }, "SOMETHING_NEW", undefined],
    [{ type: "UNKNOWN" }, "UNKNOWN", undefined],
    [{ type: "CUSTOM", name: "acme.thing", value: 1 }, "CUSTOM", "acme.thing"],
    [{ type: "CUSTOM", name: "acme.novalue" }, "CUSTOM", "acme.novalue"]
  ] as const)("keeps an unknown event, wrapped: %j", (event, eventType, name) => {
    const result = Events.decodeFrame(JSON.stringify(event))
    expect(Either.isRight(result)).toBe(true)
    if (Either.isRight(result)) {
      expect(result.right).toEqual({ type: "UNKNOWN", eventType, ...(name === undefined ? {} : { name }), event })
      expect(Events.isUnknownEvent(result.right)).toBe(true)
    }
  })

  it("known events are not unknown", () => {
    for (const event of valid) {
      const decoded = Events.decodeEvent(event)
      expect(Either.isRight(decoded) && Events.isUnknownEvent(decoded.right)).toBe(false)
    }
  })

  it.each(["{", "not json", "", "{\"type\":\"RUN_STARTED\",}"])("InvalidJson for %j, with the frame", (frame) => {
    const result = Events.decodeFrame(frame)
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(result.left._tag).toBe("DecodeError")
      expect(result.left.reason).toBe("InvalidJson")
      expect(result.left.frame).toBe(frame)
    }
  })

  it.each(["42", "null", "\"RUN_STARTED\"", "[]", "[{\"type\":\"RUN_STARTED\"}]", "{}", "{\"type\":1}"])(
    "InvalidEvent for a value that is not an event: %s",
    (frame) => {
      const result = Events.decodeFrame(frame)
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) {
        expect(result.left.reason).toBe("InvalidEvent")
        expect(result.left.frame).toBe(frame)
      }
    }
  )

  it.each([
    [{ type: "RUN_STARTED", threadId: "t1" }, /runId/],
    [{ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: 5 }, /delta/],
    [{ type: "TEXT_MESSAGE_START", messageId: "m1", role: "robot" }, /role/],
    [{ type: "REASONING_MESSAGE_START", messageId: "r1", role: 1 }, /role/],
    [{ type: "TOOL_CALL_ARGS", toolCallId: "c1" }, /delta/],
    [{ type: "RUN_ERROR", message: "x", status: "500" }, /status/],
    [{ type: "RUN_ERROR", message: "x", timestamp: "yesterday" }, /timestamp/],
    [{ type: "REASONING_MESSAGE_CONTENT", delta: "x" }, /messageId/],
    [{ type: "CUSTOM", name: "tambo.component.start", value: { messageId: "m1", componentId: "k1" } }, /componentName/],
    [{ type: "CUSTOM", name: "tambo.component.props_delta", value: { componentId: "k1", operations: [{ op: "add", path: "/a" }] } }, /value/],
    [{ type: "CUSTOM", name: "tambo.component.props_delta", value: { componentId: "k1", operations: [{ op: "merge", path: "/a" }] } }, /op/],
    [{ type: "CUSTOM", name: "tambo.run.awaiting_input", value: { pendingToolCalls: [{ toolCallId: "c1" }] } }, /toolName/],
    [{ type: "CUSTOM", value: 1 }, /name/]
  ] as const)("InvalidEvent with the frame when a known event fails its schema: %j", (event, message) => {
    const frame = JSON.stringify(event)
    const result = Events.decodeFrame(frame)
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(result.left.reason).toBe("InvalidEvent")
      expect(result.left.frame).toBe(frame)
      expect(result.left.message).toMatch(message)
    }
  })

  it("decodeEvent has the same rules, without a frame", () => {
    const result = Events.decodeEvent({ type: "RUN_STARTED" })
    expect(Either.isLeft(result) && result.left.reason).toBe("InvalidEvent")
    expect(Either.isLeft(result) && result.left.frame).toBeUndefined()
    expect(Either.isRight(Events.decodeEvent({ type: "RUN_FINISHED", threadId: "t", runId: "r" }))).toBe(true)
  })

  /** The schema of an event `type`, or of a custom event's `name`. */
  const schemaFor: Record<string, Schema.Schema.AnyNoContext> = {
    RUN_STARTED: Events.RunStartedEvent,
    RUN_ERROR: Events.RunErrorEvent,
    TEXT_MESSAGE_START: Events.TextMessageStartEvent,
    TEXT_MESSAGE_CONTENT: Events.TextMessageContentEvent,
    TOOL_CALL_ARGS: Events.ToolCallArgsEvent,
    TOOL_CALL_RESULT: Events.ToolCallResultEvent,
    STATE_SNAPSHOT: Events.StateSnapshotEvent,
    STATE_DELTA: Events.StateDeltaEvent,
    ACTIVITY_SNAPSHOT: Events.ActivitySnapshotEvent,
    ACTIVITY_DELTA: Events.ActivityDeltaEvent,
    THINKING_TEXT_MESSAGE_CONTENT: Events.ThinkingTextMessageContentEvent,
    REASONING_MESSAGE_CONTENT: Events.ReasoningMessageContentEvent,
    "tambo.component.end": Events.ComponentEndEvent,
    "tambo.component.props_delta": Events.ComponentPropsDeltaEvent,
    "tambo.component.state_delta": Events.ComponentStateDeltaEvent,
    "tambo.run.awaiting_input": Events.RunAwaitingInputEvent
  }

  it("accepts exactly what Schema.is accepts", () => {
    // The compiled fast path must agree with the schema in both directions.
    const samples: ReadonlyArray<Record<string, unknown>> = [
      ...valid,
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m1" },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "x", timestamp: null },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "x", timestamp: undefined },
      { type: "TEXT_MESSAGE_START", messageId: "m1", role: "tool" },
      { type: "RUN_ERROR", message: "x", isRetryable: "yes" },
      { type: "TOOL_CALL_RESULT", messageId: "m", toolCallId: "c", content: { a: 1 } },
      { type: "STATE_SNAPSHOT" },
      { type: "STATE_SNAPSHOT", snapshot: undefined },
      { type: "STATE_DELTA", delta: {} },
      { type: "ACTIVITY_SNAPSHOT", messageId: "a", activityType: "plan", content: [] },
      { type: "ACTIVITY_SNAPSHOT", messageId: "a", activityType: "plan" },
      { type: "ACTIVITY_SNAPSHOT", messageId: "a", activityType: "plan", content: {}, replace: "yes" },
      { type: "ACTIVITY_DELTA", messageId: "a", activityType: "plan", patch: {} },
      { type: "CUSTOM", name: "tambo.component.end", value: {} },
      { type: "CUSTOM", name: "tambo.component.end", value: [] },
      { type: "CUSTOM", name: "tambo.component.props_delta", value: { componentId: "k", operations: [{ op: "copy", path: "/a" }] } },
      { type: "CUSTOM", name: "tambo.run.awaiting_input", value: { pendingToolCalls: {} } }
    ]
    let checked = 0
    for (const sample of samples) {
      const key = sample.type === "CUSTOM" ? String(sample.name) : String(sample.type)
      const schema = schemaFor[key]
      if (schema === undefined) continue
      checked++
      expect([key, Either.isRight(Events.decodeEvent(sample))]).toEqual([key, Schema.is(schema)(sample)])
    }
    expect(checked).toBeGreaterThan(20)
  })

  it("the hand-written checks of the frequent events agree with Schema.is on every broken variant", () => {
    const odd: ReadonlyArray<unknown> = [undefined, null, 0, 1.5, "s", "", true, [], ["a"], {}, { a: "x" }, { a: 1 }]
    const operations: ReadonlyArray<unknown> = [
      { op: "add", path: "/a", value: 1 },
      { op: "add", path: "/a", value: undefined },
      { op: "add", path: "/a" },
      { op: "replace", path: "/a", value: null },
      { op: "replace", path: 1, value: 1 },
      { op: "test", value: 1 },
      { op: "remove", path: "/a" },
      { op: "remove" },
      { op: "move", from: "/a", path: "/b" },
      { op: "move", path: "/b" },
      { op: "copy", from: 1, path: "/b" },
      { op: "copy", from: "/a", path: "/b", extra: true },
      { op: "merge", path: "/a", value: 1 },
      { op: 1, path: "/a" },
      { path: "/a", value: 1 },
      null,
      [],
      "add"
    ]
    const bases: ReadonlyArray<Record<string, unknown>> = [
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "x", timestamp: 1 },
      { type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: "{", timestamp: 1 },
      { type: "THINKING_TEXT_MESSAGE_CONTENT", delta: "x", timestamp: 1 },
      { type: "REASONING_MESSAGE_CONTENT", messageId: "r1", delta: "x", timestamp: 1 },
      {
        type: "CUSTOM",
        name: "tambo.component.props_delta",
        timestamp: 1,
        value: { componentId: "k1", operations: [{ op: "add", path: "/a", value: 1 }], streamingStatus: { a: "started" } }
      },
      {
        type: "CUSTOM",
        name: "tambo.component.state_delta",
        timestamp: 1,
        value: { componentId: "k1", operations: [{ op: "remove", path: "/a" }] }
      }
    ]
    /** Every way of breaking one field: removing it, or giving it each odd value. */
    const variants = (base: Record<string, unknown>, keep: ReadonlyArray<string>): Array<Record<string, unknown>> =>
      Object.keys(base).filter((key) => !keep.includes(key)).flatMap((key) => {
        const { [key]: _, ...without } = base
        return [without, ...odd.map((value) => ({ ...base, [key]: value }))]
      })
    const samples: Array<Record<string, unknown>> = []
    for (const base of bases) {
      samples.push(base, ...variants(base, ["type", "name"]), { ...base, rawEvent: { anything: [1] }, extra: 1 })
      const value = base.value
      if (typeof value === "object" && value !== null) {
        for (const broken of variants(value as Record<string, unknown>, [])) samples.push({ ...base, value: broken })
        for (const operation of operations) {
          samples.push({ ...base, value: { ...value, operations: [operation] } })
          samples.push({ ...base, value: { ...value, operations: [{ op: "remove", path: "/z" }, operation] } })
        }
      }
    }
    let accepted = 0
    for (const sample of samples) {
      const key = sample.type === "CUSTOM" ? String(sample.name) : String(sample.type)
      const verdict = Schema.is(schemaFor[key]!)(sample)
      if (verdict) accepted++
      expect([key, sample, Either.isRight(Events.decodeEvent(sample))]).toEqual([key, sample, verdict])
    }
    // Both verdicts are exercised, many times over.
    expect(accepted).toBeGreaterThan(30)
    expect(samples.length - accepted).toBeGreaterThan(200)
  })

  it("event schemas have no transformations (so valid input can be passed through)", () => {
    const schemas: ReadonlyArray<Schema.Schema.AnyNoContext> = [
      Events.RunStartedEvent,
      Events.ComponentPropsDeltaEvent,
      Events.RunAwaitingInputEvent
    ]
    for (const schema of schemas) expect(Schema.typeSchema(schema).ast).toBe(schema.ast)
  })
})
