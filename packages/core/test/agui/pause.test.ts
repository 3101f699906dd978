import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as Events from "../../src/Events.js"
import { withPause } from "../../src/internal/agui/pause.js"
import type { RunStreamEvent } from "../../src/TamboTransport.js"

const frontend = new Set(["get_weather", "pick_color"])

const started: RunStreamEvent = { type: "RUN_STARTED", threadId: "t", runId: "r" } as RunStreamEvent
const finished: RunStreamEvent = { type: "RUN_FINISHED", threadId: "t", runId: "r" } as RunStreamEvent
const call = (id: string, name: string, args?: string): ReadonlyArray<RunStreamEvent> => [
  { type: "TOOL_CALL_START", toolCallId: id, toolCallName: name } as RunStreamEvent,
  ...(args === undefined ? [] : [{ type: "TOOL_CALL_ARGS", toolCallId: id, delta: args } as RunStreamEvent]),
  { type: "TOOL_CALL_END", toolCallId: id } as RunStreamEvent
]
const result = (id: string): RunStreamEvent =>
  ({ type: "TOOL_CALL_RESULT", messageId: `m_${id}`, toolCallId: id, content: "ok" }) as RunStreamEvent
const snapshot = (messages: ReadonlyArray<unknown>): RunStreamEvent =>
  ({ type: "MESSAGES_SNAPSHOT", messages }) as RunStreamEvent
const userMessage = { id: "u1", role: "user", content: "hello" }
const assistantCalling = (id: string, name: string, args = "{}") => ({
  id: `a_${id}`,
  role: "assistant",
  toolCalls: [{ id, type: "function", function: { name, arguments: args } }]
})
const toolMessage = (id: string) => ({ id: `t_${id}`, role: "tool", toolCallId: id, content: "done" })

/** The run's events through `withPause`, one event per chunk or all in one. */
const paused = (events: ReadonlyArray<RunStreamEvent>, chunked: boolean) =>
  Effect.runSync(
    (chunked ? Stream.fromIterable(events) : Stream.fromChunk(Chunk.fromIterable(events))).pipe(
      withPause(frontend),
      Stream.runCollect,
      Effect.map(Chunk.toReadonlyArray)
    )
  )

const pendingOf = (events: ReadonlyArray<RunStreamEvent>) => {
  const pause = events.find((event): event is Events.RunAwaitingInputEvent =>
    event.type === "CUSTOM" && (event as { name?: string }).name === "tambo.run.awaiting_input"
  )
  return pause?.value.pendingToolCalls.map((pending) => pending.toolCallId) ?? []
}

describe("withPause: the calls an AG-UI run leaves to the client", () => {
  it.each<[string, ReadonlyArray<RunStreamEvent>, ReadonlyArray<string>]>([
    ["a frontend call nothing answered", [...call("c1", "get_weather", "{\"city\":\"Paris\"}")], ["c1"]],
    ["several, in order", [...call("c1", "get_weather"), ...call("c2", "pick_color"), ...call("c3", "get_weather")], ["c1", "c2", "c3"]],
    ["a server-side tool's call is not run", [...call("s1", "search")], []],
    ["a call its TOOL_CALL_RESULT answered is not run", [...call("c1", "get_weather"), result("c1")], []],
    ["a call id that repeats unanswered is run once", [...call("c1", "get_weather"), ...call("c1", "get_weather")], ["c1"]],
    ["a result before a call does not answer it", [result("c1"), ...call("c1", "get_weather")], ["c1"]],
    ["an answered id made again is a new call", [...call("c1", "get_weather"), result("c1"), ...call("c1", "get_weather")], ["c1"]],
    ["a call a later MESSAGES_SNAPSHOT leaves out is not run", [...call("c1", "get_weather"), snapshot([userMessage])], []],
    [
      "a call a later MESSAGES_SNAPSHOT answers is not run",
      [...call("c1", "get_weather"), snapshot([userMessage, assistantCalling("c1", "get_weather"), toolMessage("c1")])],
      []
    ],
    [
      "a call a later MESSAGES_SNAPSHOT holds unanswered is run",
      [...call("c1", "get_weather"), ...call("c2", "pick_color"), snapshot([userMessage, assistantCalling("c2", "pick_color")])],
      ["c2"]
    ],
    ["a MESSAGES_SNAPSHOT that is not a conversation changes nothing", [...call("c1", "get_weather"), snapshot([{ role: "nobody" }])], ["c1"]],
    ["a call made after the MESSAGES_SNAPSHOT is run", [snapshot([userMessage]), ...call("c1", "get_weather")], ["c1"]]
  ])("%s", (_name, calls, expected) => {
    for (const chunked of [true, false]) {
      const out = paused([started, ...calls, finished], chunked)
      expect(pendingOf(out)).toEqual(expected)
      // The pause, when there is one, comes just before RUN_FINISHED; nothing else changes.
      expect(out.filter((event) => event.type !== "CUSTOM")).toEqual([started, ...calls, finished])
      if (expected.length > 0) expect(out.at(-2)).toMatchObject({ type: "CUSTOM", name: "tambo.run.awaiting_input" })
    }
  })

  it("carries the tool's name and its arguments as sent, {} when none", () => {
    const [start, firstArgs, end] = call("c1", "get_weather", "{\"city\":")
    const moreArgs = { type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: "\"Paris\"}" } as RunStreamEvent
    const out = paused([started, start!, firstArgs!, moreArgs, end!, ...call("c2", "pick_color"), finished], true)
    const pause = out.at(-2) as Events.RunAwaitingInputEvent
    expect(pause.value.pendingToolCalls).toEqual([
      { toolCallId: "c1", toolName: "get_weather", arguments: "{\"city\":\"Paris\"}" },
      { toolCallId: "c2", toolName: "pick_color", arguments: "{}" }
    ])
  })

  it.each<[string, ReadonlyArray<RunStreamEvent>]>([
    [
      "TOOL_CALL_ARGS after the call's TOOL_CALL_END are not its arguments",
      [...call("c1", "get_weather", "{\"city\":\"Paris\"}"), { type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: "{\"city\":\"Rome\"}" } as RunStreamEvent]
    ],
    [
      "a call started again while unanswered keeps its arguments: the second start and its arguments are not a call",
      [...call("c1", "get_weather", "{\"city\":\"Paris\"}"), ...call("c1", "get_weather", "{\"city\":\"Rome\"}")]
    ],
    [
      "a call started again as another tool while unanswered stays the first",
      [...call("c1", "get_weather", "{\"city\":\"Paris\"}"), ...call("c1", "pick_color", "{\"color\":\"red\"}")]
    ]
  ])("%s (as the thread reads them)", (_name, calls) => {
    for (const chunked of [true, false]) {
      const pause = paused([started, ...calls, finished], chunked).at(-2) as Events.RunAwaitingInputEvent
      expect(pause.value.pendingToolCalls).toEqual([{ toolCallId: "c1", toolName: "get_weather", arguments: "{\"city\":\"Paris\"}" }])
    }
  })

  it.each<[string, string, string]>([
    ["an ended call a later MESSAGES_SNAPSHOT gives other arguments runs with the snapshot's", "{\"city\":\"Rome\"}", "{\"city\":\"Rome\"}"],
    ["an ended call a later MESSAGES_SNAPSHOT gives arguments that are not an object runs with {}, as the thread shows", "[1", "{}"]
  ])("%s", (_name, given, expected) => {
    for (const chunked of [true, false]) {
      const events = [...call("c1", "get_weather", "{\"city\":\"Paris\"}"), snapshot([userMessage, assistantCalling("c1", "get_weather", given)])]
      const pause = paused([started, ...events, finished], chunked).at(-2) as Events.RunAwaitingInputEvent
      expect(pause.value.pendingToolCalls).toEqual([{ toolCallId: "c1", toolName: "get_weather", arguments: expected }])
    }
  })

  it("a call started again before its end goes on with the arguments after it, as the thread does", () => {
    const [start, firstArgs] = call("c1", "get_weather", "{\"city\":")
    const out = paused([started, start!, firstArgs!, ...call("c1", "get_weather", "\"Paris\"}"), finished], true)
    const pause = out.at(-2) as Events.RunAwaitingInputEvent
    expect(pause.value.pendingToolCalls).toEqual([{ toolCallId: "c1", toolName: "get_weather", arguments: "{\"city\":\"Paris\"}" }])
  })

  it("a server-side call started again as a frontend tool while unanswered is not run", () => {
    expect(pendingOf(paused([started, ...call("s1", "search", "{}"), ...call("s1", "get_weather", "{}"), finished], true))).toEqual([])
  })

  it("a run without frontend tools passes through untouched", () => {
    const events = [started, ...call("c1", "get_weather"), finished]
    const out = Effect.runSync(Stream.fromIterable(events).pipe(withPause(new Set()), Stream.runCollect, Effect.map(Chunk.toReadonlyArray)))
    expect(out).toEqual(events)
  })
})
