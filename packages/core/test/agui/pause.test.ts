import { describe, expect, it } from "@effect/vitest"
import * as ClientState from "../../src/ClientState.js"
import type * as Events from "../../src/Events.js"
import { endsOfOpenCalls, noteStarted, pauseOf } from "../../src/internal/agui/pause.js"
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
const textStart = (messageId: string): RunStreamEvent =>
  ({ type: "TEXT_MESSAGE_START", messageId, role: "assistant" }) as RunStreamEvent
const toolMessage = (id: string) => ({ id: `t_${id}`, role: "tool", toolCallId: id, content: "done" })

/**
 * The pause a step puts before its RUN_FINISHED: the run's events (but RUN_FINISHED) reduced into
 * a thread, one event per chunk or all in one, and the calls they started.
 */
const pauseAfter = (
  events: ReadonlyArray<RunStreamEvent>,
  chunked: boolean,
  tools: ReadonlySet<string> = frontend
): Events.RunAwaitingInputEvent | undefined => {
  const recorded = events.filter((event) => event.type !== "RUN_FINISHED")
  const chunks = chunked ? recorded.map((event) => [event]) : [recorded]
  const state = ClientState.reduce(
    ClientState.initial,
    chunks.map((chunk, i): ClientState.Action => ({ type: "EVENTS", threadId: "t", events: chunk, at: 1000 + i }))
  )
  const started = new Set<string>()
  for (const chunk of chunks) noteStarted(started, chunk)
  // The calls the run left open are closed before the pause is read, as the step does.
  const ends = endsOfOpenCalls(ClientState.getThreadState(state, "t")!)
  const closed = ClientState.getThreadState(ClientState.reduce(state, [{ type: "EVENTS", threadId: "t", events: ends, at: 2000 }]), "t")!
  return pauseOf(closed.thread.messages, started, tools, closed.internal.invalidToolArgs)
}

/** The ids the pause after the run's events holds, one event per chunk or all in one. */
const paused = (events: ReadonlyArray<RunStreamEvent>, chunked: boolean) =>
  pauseAfter(events, chunked)?.value.pendingToolCalls.map((pending) => pending.toolCallId) ?? []

describe("pauseOf: the calls an AG-UI run leaves to the client, as the thread holds them", () => {
  it.each<[string, ReadonlyArray<RunStreamEvent>, ReadonlyArray<string>]>([
    ["a frontend call nothing answered", [...call("c1", "get_weather", "{\"city\":\"Paris\"}")], ["c1"]],
    ["several, in order", [...call("c1", "get_weather"), ...call("c2", "pick_color"), ...call("c3", "get_weather")], ["c1", "c2", "c3"]],
    ["a server-side tool's call is not run", [...call("s1", "search")], []],
    [
      "a call of a tool the client did not offer, beside a frontend call, is answered in the same round",
      [...call("s1", "search"), ...call("c1", "get_weather"), ...call("s2", "search"), result("s2")],
      ["s1", "c1"]
    ],
    ["a call its TOOL_CALL_RESULT answered is not run", [...call("c1", "get_weather"), result("c1")], []],
    ["a call id that repeats unanswered is run once", [...call("c1", "get_weather"), ...call("c1", "get_weather")], ["c1"]],
    ["a result before a call does not answer it", [result("c1"), ...call("c1", "get_weather")], ["c1"]],
    ["an answered id made again in another message is a new call", [...call("c1", "get_weather"), result("c1"), textStart("m2"), ...call("c1", "get_weather")], ["c1"]],
    ["an answered id started again in its own message is not a new call (the thread refuses the start)", [...call("c1", "get_weather"), result("c1"), ...call("c1", "get_weather")], []],
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
      expect(paused([started, ...calls, finished], chunked)).toEqual(expected)
    }
  })

  it("carries the tool's name and its arguments as sent, {} when none", () => {
    const [start, firstArgs, end] = call("c1", "get_weather", "{\"city\":")
    const moreArgs = { type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: "\"Paris\"}" } as RunStreamEvent
    const pause = pauseAfter([started, start!, firstArgs!, moreArgs, end!, ...call("c2", "pick_color"), finished], true)
    expect(pause?.value.pendingToolCalls).toEqual([
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
      const pause = pauseAfter([started, ...calls, finished], chunked)
      expect(pause?.value.pendingToolCalls).toEqual([{ toolCallId: "c1", toolName: "get_weather", arguments: "{\"city\":\"Paris\"}" }])
    }
  })

  it.each<[string, string, string]>([
    ["an ended call a later MESSAGES_SNAPSHOT gives other arguments runs with the snapshot's", "{\"city\":\"Rome\"}", "{\"city\":\"Rome\"}"],
    ["an ended call a later MESSAGES_SNAPSHOT gives arguments that are not valid JSON carries them as they arrived, so no tool runs on them", "[1", "[1"],
    ["an ended call a later MESSAGES_SNAPSHOT gives arguments that are not an object carries them as they arrived, so no tool runs on them", "[1]", "[1]"]
  ])("%s", (_name, given, expected) => {
    for (const chunked of [true, false]) {
      const events = [...call("c1", "get_weather", "{\"city\":\"Paris\"}"), snapshot([userMessage, assistantCalling("c1", "get_weather", given)])]
      const pause = pauseAfter([started, ...events, finished], chunked)
      expect(pause?.value.pendingToolCalls).toEqual([{ toolCallId: "c1", toolName: "get_weather", arguments: expected }])
    }
  })

  it("a call a MESSAGES_SNAPSHOT gives arguments that are not valid JSON, then streams valid ones to its end, runs with the streamed ones, as the thread shows", () => {
    for (const chunked of [true, false]) {
      const [start, args, end] = call("c1", "get_weather", "{\"city\":\"Paris\"}")
      const pause = pauseAfter([started, start!, snapshot([userMessage, assistantCalling("c1", "get_weather", "{\"city\"")]), args!, end!, finished], chunked)
      expect(pause?.value.pendingToolCalls).toEqual([{ toolCallId: "c1", toolName: "get_weather", arguments: "{\"city\":\"Paris\"}" }])
    }
  })

  it("a call started again before its end goes on with the arguments after it, as the thread does", () => {
    const [start, firstArgs] = call("c1", "get_weather", "{\"city\":")
    const pause = pauseAfter([started, start!, firstArgs!, ...call("c1", "get_weather", "\"Paris\"}"), finished], true)
    expect(pause?.value.pendingToolCalls).toEqual([{ toolCallId: "c1", toolName: "get_weather", arguments: "{\"city\":\"Paris\"}" }])
  })

  it.each<[string, ReadonlyArray<string>]>([
    ["long arguments whose last read grew them by less than a quarter", [`{"city":"${"P".repeat(9000)}`, "aris\"}"]],
    ["short arguments", ["{\"city\":\"Pa", "ris\"}"]]
  ])("a call left open at RUN_FINISHED (%s) runs with all its arguments, which the thread shows", (_name, deltas) => {
    const city = JSON.parse(deltas.join("")).city as string
    const events: ReadonlyArray<RunStreamEvent> = [
      started,
      { type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "get_weather" } as RunStreamEvent,
      ...deltas.map((delta) => ({ type: "TOOL_CALL_ARGS", toolCallId: "c1", delta }) as RunStreamEvent),
      finished
    ]
    for (const chunked of [true, false]) {
      expect(pauseAfter(events, chunked)?.value.pendingToolCalls).toEqual([
        { toolCallId: "c1", toolName: "get_weather", arguments: JSON.stringify({ city }) }
      ])
    }
  })

  it.each<[string, string, boolean]>([
    ["cut short by RUN_FINISHED", "{\"city\":\"Pa", false],
    ["ended by its TOOL_CALL_END", "{\"city\":\"Pa", true],
    ["ended, not an object", "[\"Paris\"]", true]
  ])("a call whose arguments are not valid JSON (%s) carries them as they arrived, not what they parse to", (_name, args, ended) => {
    const events: ReadonlyArray<RunStreamEvent> = [
      started,
      { type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "get_weather" } as RunStreamEvent,
      { type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: args } as RunStreamEvent,
      ...(ended ? [{ type: "TOOL_CALL_END", toolCallId: "c1" } as RunStreamEvent] : []),
      finished
    ]
    for (const chunked of [true, false]) {
      expect(pauseAfter(events, chunked)?.value.pendingToolCalls).toEqual([
        { toolCallId: "c1", toolName: "get_weather", arguments: args }
      ])
    }
  })

  it.each<[string, ReadonlyArray<RunStreamEvent>, string]>([
    ["started again", [...call("c1", "get_weather", "{\"city\":\"Rome\"}")], "{\"city\":\"Rome\"}"],
    ["given arguments by a MESSAGES_SNAPSHOT", [snapshot([userMessage, assistantCalling("c1", "get_weather", "{\"city\":\"Rome\"}")])], "{\"city\":\"Rome\"}"]
  ])("a call whose arguments were not valid JSON, then %s, carries the arguments it has now", (_name, after, expected) => {
    const events: ReadonlyArray<RunStreamEvent> = [started, textStart("m1"), ...call("c1", "get_weather", "{\"city\":\"Pa"), textStart("m2"), ...after, finished]
    for (const chunked of [true, false]) {
      expect(pauseAfter(events, chunked)?.value.pendingToolCalls).toEqual([
        { toolCallId: "c1", toolName: "get_weather", arguments: expected }
      ])
    }
  })

  it("a call a MESSAGES_SNAPSHOT dropped while open is not closed again: no end is made for it", () => {
    const events = [started, { type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "get_weather" } as RunStreamEvent, snapshot([userMessage])]
    const state = ClientState.reduce(ClientState.initial, [{ type: "EVENTS", threadId: "t", events, at: 1000 }])
    expect(endsOfOpenCalls(ClientState.getThreadState(state, "t")!)).toEqual([])
  })

  it("a server-side call started again as a frontend tool while unanswered is not run", () => {
    expect(paused([started, ...call("s1", "search", "{}"), ...call("s1", "get_weather", "{}"), finished], true)).toEqual([])
  })

  it("a run without frontend tools has no pause", () => {
    expect(pauseAfter([started, ...call("c1", "get_weather"), finished], true, new Set())).toBeUndefined()
  })

  it.each<[string, ReadonlyArray<RunStreamEvent>, string]>([
    [
      "an unanswered call started again in another message runs once, with the arguments of its latest start",
      [textStart("m1"), ...call("c1", "get_weather", "{\"city\":\"Paris\"}"), textStart("m2"), ...call("c1", "get_weather", "{\"city\":\"Rome\"}")],
      "{\"city\":\"Rome\"}"
    ],
    [
      "a MESSAGES_SNAPSHOT before the call's TOOL_CALL_END, with no arguments streamed, gives it the snapshot's",
      [
        { type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "get_weather" } as RunStreamEvent,
        snapshot([userMessage, assistantCalling("c1", "get_weather", "{\"city\":\"Rome\"}")]),
        { type: "TOOL_CALL_END", toolCallId: "c1" } as RunStreamEvent
      ],
      "{\"city\":\"Rome\"}"
    ]
  ])("%s", (_name, calls, expected) => {
    for (const chunked of [true, false]) {
      expect(pauseAfter([started, ...calls, finished], chunked)?.value.pendingToolCalls).toEqual([
        { toolCallId: "c1", toolName: "get_weather", arguments: expected }
      ])
    }
  })

  it("a call a MESSAGES_SNAPSHOT renames runs as the tool the thread names", () => {
    for (const chunked of [true, false]) {
      const events = [...call("c1", "get_weather", "{\"city\":\"Paris\"}"), snapshot([userMessage, assistantCalling("c1", "pick_color", "{\"color\":\"red\"}")])]
      expect(pauseAfter([started, ...events, finished], chunked)?.value.pendingToolCalls).toEqual([
        { toolCallId: "c1", toolName: "pick_color", arguments: "{\"color\":\"red\"}" }
      ])
    }
  })

  it("a call only a MESSAGES_SNAPSHOT brings in is not this run's: no pause", () => {
    for (const chunked of [true, false]) {
      expect(paused([started, snapshot([userMessage, assistantCalling("c0", "get_weather")]), finished], chunked)).toEqual([])
    }
  })
})
