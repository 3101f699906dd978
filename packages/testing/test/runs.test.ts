// Runs through the real @tambo-ai/typescript-sdk: streaming, tool round trips, the API's quirks,
// and every scripted behaviour.
import TamboAI from "@tambo-ai/typescript-sdk"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { Script, startTestServer, type TestServer } from "../src/index.js"
import {
  client,
  collect,
  collectUntil,
  field,
  latch,
  rejection,
  str,
  textOf,
  types,
  USER,
  userMessage,
  waitFor,
  type Ev
} from "./helpers.js"

let server: TestServer
let sdk: TamboAI
beforeEach(async () => {
  server = await startTestServer()
  sdk = client(server)
})
afterEach(() => server.close())

const weatherTool = {
  name: "get_weather",
  description: "Current weather for a city",
  inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
}
const weatherCard = { name: "WeatherCard", description: "Shows the weather", propsSchema: { type: "object" } }

const createRun = async (text: string, extra: Partial<TamboAI.Threads.RunCreateParams> = {}) =>
  collect(await sdk.threads.runs.create({ message: userMessage(text), thread: { userKey: USER }, ...extra }))

/** A run on `threadId` sent with `fetch`, which `signal` aborts. */
const fetchRun = (threadId: string, text: string, signal: AbortSignal) =>
  fetch(`${server.url}/v1/threads/${threadId}/runs`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": server.apiKey },
    body: JSON.stringify({ message: userMessage(text), userKey: USER }),
    signal
  })

const runIds = (events: ReadonlyArray<Ev>) => ({ threadId: str(events[0]!, "threadId"), runId: str(events[0]!, "runId") })

describe("streaming text", () => {
  it("streams RUN_STARTED, the text message, RUN_FINISHED, and stores both messages", async () => {
    server.setScript([Script.text(["Hello", ", ", "world"])])
    const events = await createRun("Hi")
    expect(types(events)).toEqual([
      "RUN_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "RUN_FINISHED"
    ])
    expect(textOf(events)).toBe("Hello, world")
    const { threadId, runId } = runIds(events)
    const thread = await sdk.threads.retrieve(threadId, { userKey: USER })
    expect(thread).toMatchObject({ id: threadId, userKey: USER, runStatus: "idle", lastCompletedRunId: runId })
    expect(thread.currentRunId).toBeUndefined()
    expect(thread.messages.map((message) => [message.role, message.content])).toEqual([
      ["user", [{ type: "text", text: "Hi" }]],
      ["assistant", [{ type: "text", text: "Hello, world" }]]
    ])
    // The stored assistant message has the id the stream announced.
    expect(thread.messages[1]!.id).toBe(events[1]!["messageId"])
  })

  it("continues a thread with previousRunId, and the API's checks of it", async () => {
    server.setScript([Script.text("ok")])
    const first = runIds(await createRun("one"))

    const missing = await rejection(sdk.threads.runs.run(first.threadId, { message: userMessage("two"), userKey: USER }))
    expect(missing).toBeInstanceOf(TamboAI.BadRequestError)
    expect(field(missing, "error")).toMatchObject({
      type: "urn:tambo:error:invalid_previous_run",
      title: "Invalid Previous Run",
      status: 400,
      detail: "previousRunId is required when continuing a thread with existing messages",
      instance: expect.stringMatching(/^urn:tambo:error-instance:/)
    })

    const wrong = await rejection(
      sdk.threads.runs.run(first.threadId, { message: userMessage("two"), userKey: USER, previousRunId: "run_nope" })
    )
    expect(field(wrong, "error", "detail")).toBe(`previousRunId run_nope does not match last completed run ${first.runId}`)

    const second = await collect(
      await sdk.threads.runs.run(first.threadId, { message: userMessage("two"), userKey: USER, previousRunId: first.runId })
    )
    expect(second[0]).toMatchObject({ type: "RUN_STARTED", threadId: first.threadId })
    expect(second.at(-1)!.type).toBe("RUN_FINISHED")
    const thread = server.threads.get(first.threadId)
    expect(thread?.messages).toHaveLength(4)
    expect(thread?.lastCompletedRunId).toBe(str(second[0]!, "runId"))
  })

  it("streams reasoning without message ids", async () => {
    server.setScript([Script.reasoning(["Thinking", " hard"]), Script.text("Answer")])
    const events = await createRun("Why?")
    expect(types(events).slice(0, 5)).toEqual([
      "RUN_STARTED",
      "THINKING_TEXT_MESSAGE_START",
      "THINKING_TEXT_MESSAGE_CONTENT",
      "THINKING_TEXT_MESSAGE_CONTENT",
      "THINKING_TEXT_MESSAGE_END"
    ])
    expect(events[1]).toEqual({ type: "THINKING_TEXT_MESSAGE_START", timestamp: expect.any(Number) })
    expect(events[2]).toEqual({ type: "THINKING_TEXT_MESSAGE_CONTENT", delta: "Thinking", timestamp: expect.any(Number) })
    expect(events.filter((event) => event.type.startsWith("THINKING")).some((event) => "messageId" in event)).toBe(false)
    expect(textOf(events)).toBe("Answer")
  })

  it("passes unknown event types through to the SDK", async () => {
    server.setScript([Script.event({ type: "BRAND_NEW_EVENT", payload: { a: 1 } }), Script.text("ok")])
    const events = await createRun("Hi")
    expect(events[1]).toEqual({ type: "BRAND_NEW_EVENT", payload: { a: 1 } })
  })
})

describe("client-side tools", () => {
  it("streams a call's arguments as the model sent them, and stores them as the API does: strict mode undone", async () => {
    const search = {
      name: "search",
      description: "Searches",
      inputSchema: {
        type: "object",
        properties: {
          query: { type: "string" },
          limit: { type: "number", default: 10 },
          cursor: { anyOf: [{ type: "string" }, { type: "null" }] },
          filter: { type: "object", properties: { from: { type: "string" }, to: { type: "string" } } },
          sort: { type: "array", items: { type: "object", properties: { field: { type: "string" }, desc: { type: "boolean" } } } }
        },
        required: ["query"]
      }
    }
    server.setScript((request) => [
      Script.toolCall(
        "search",
        Script.strictArgs(request.tools[0]!.inputSchema, { query: "q", filter: "{\"from\":\"a\"}", sort: [{ field: "f" }] })
      )
    ])
    const events = await createRun("Search", { tools: [search] })
    const args = events.filter((event) => event.type === "TOOL_CALL_ARGS").map((event) => str(event, "delta")).join("")
    expect(JSON.parse(args)).toEqual({ query: "q", limit: null, cursor: null, filter: "{\"from\":\"a\"}", sort: [{ field: "f", desc: null }] })
    const thread = await sdk.threads.retrieve(runIds(events).threadId, { userKey: USER })
    const stored = thread.messages.flatMap((message) => message.content).find((block) => block.type === "tool_use")
    // A null for a parameter that takes one stays; an object sent as a string is parsed.
    expect(stored?.type === "tool_use" && stored.input).toEqual({
      query: "q",
      limit: 10,
      cursor: null,
      filter: { from: "a" },
      sort: [{ field: "f" }]
    })
  })

  it("pauses on a tool call, keeps the text open, and resumes with the tool results", async () => {
    server.setScript((request) =>
      request.toolResults.length === 0
        ? [Script.text("Let me check."), Script.toolCall("get_weather", { city: "Paris" }, { chunkSize: 5 })]
        : [Script.text(`It is ${request.toolResults[0]!.text} (${String(request.toolResults[0]!.toolName)}).`)]
    )
    const events = await createRun("Weather in Paris?", { tools: [weatherTool] })
    expect(types(events)).toEqual([
      "RUN_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TOOL_CALL_START",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_END",
      // The API closes the text message only when the model's stream ends.
      "TEXT_MESSAGE_END",
      "CUSTOM:tambo.run.awaiting_input",
      "RUN_FINISHED"
    ])
    const { threadId, runId } = runIds(events)
    const textStart = events[1]!
    const start = events[3]!
    const toolCallId = str(start, "toolCallId")
    expect(start).toEqual({
      type: "TOOL_CALL_START",
      toolCallId: expect.stringMatching(/^call_/),
      toolCallName: "get_weather",
      // A temporary id the API never maps to the stored message id.
      parentMessageId: expect.stringMatching(/^message-[0-9a-f-]{36}$/),
      timestamp: expect.any(Number)
    })
    expect(start["parentMessageId"]).not.toBe(textStart["messageId"])
    expect(events.slice(4, 8).map((event) => event["delta"]).join("")).toBe("{\"city\":\"Paris\"}")
    expect(events[8]).toEqual({ type: "TOOL_CALL_END", toolCallId, timestamp: expect.any(Number) })
    expect(events[10]).toEqual({
      type: "CUSTOM",
      name: "tambo.run.awaiting_input",
      value: { pendingToolCalls: [{ toolCallId, toolName: "get_weather", arguments: "{\"city\":\"Paris\"}" }] },
      timestamp: expect.any(Number)
    })

    // The thread keeps the pending call ids, so a reloaded client can continue.
    const paused = await sdk.threads.retrieve(threadId, { userKey: USER })
    expect(paused).toMatchObject({ runStatus: "idle", pendingToolCallIds: [toolCallId], lastCompletedRunId: runId })
    // Text and tool call are one assistant message.
    expect(paused.messages[1]).toMatchObject({
      id: textStart["messageId"],
      role: "assistant",
      content: [
        { type: "text", text: "Let me check." },
        { type: "tool_use", id: toolCallId, name: "get_weather", input: { city: "Paris" } }
      ]
    })

    const resumed = await collect(
      await sdk.threads.runs.run(threadId, {
        message: { role: "user", content: [{ type: "tool_result", toolUseId: toolCallId, content: [{ type: "text", text: "21°C" }] }] },
        previousRunId: runId,
        userKey: USER,
        tools: [weatherTool]
      })
    )
    expect(textOf(resumed)).toBe("It is 21°C (get_weather).")
    expect(resumed.at(-1)!.type).toBe("RUN_FINISHED")

    const continuation = server.requests.find((request) => request.path === `/v1/threads/${threadId}/runs`)
    expect(continuation?.body).toMatchObject({
      previousRunId: runId,
      userKey: USER,
      message: { role: "user", content: [{ type: "tool_result", toolUseId: toolCallId }] }
    })
    expect(continuation?.headers["x-api-key"]).toBe(server.apiKey)

    const done = await sdk.threads.retrieve(threadId, { userKey: USER })
    expect(done.pendingToolCallIds).toBeUndefined()
    // The tool result is stored as its own message, which the v1 API reports as an assistant one.
    expect(done.messages.map((message) => message.role)).toEqual(["user", "assistant", "assistant", "assistant"])
    expect(done.messages[2]!.content).toEqual([{ type: "tool_result", toolUseId: toolCallId, content: [{ type: "text", text: "21°C" }] }])
    expect(done.messages[3]!.content).toEqual([{ type: "text", text: "It is 21°C (get_weather)." }])
  })

  /** The tool results answering `toolCallId`, after the run `runId`. */
  const answer = (threadId: string, runId: string, toolCallId: string) =>
    sdk.threads.runs.run(threadId, {
      message: { role: "user", content: [{ type: "tool_result", toolUseId: toolCallId, content: [{ type: "text", text: "21°C" }] }] },
      previousRunId: runId,
      userKey: USER,
      tools: [weatherTool]
    })

  it.each([
    { settles: "resolves", after: (release: { fire: () => void }) => release.fire() },
    { settles: "rejects", after: (release: { reject: (error: Error) => void }) => release.reject(new Error("the test moved on")) }
  ])("keepLock(promise): the paused round ends as it would, its run keeps the thread's lock until the promise $settles: the results are refused 409 CONCURRENT_RUN meanwhile, then taken", async ({ after }) => {
    let fire!: () => void
    let reject!: (error: Error) => void
    const released = new Promise<void>((resolve, fail) => {
      fire = resolve
      reject = fail
    })
    server.setScript([Script.toolCall("get_weather", { city: "Paris" }), Script.keepLock(released), Script.text("It is 21°C.")])
    const events = await createRun("Weather in Paris?", { tools: [weatherTool] })
    expect(types(events).slice(-2)).toEqual(["CUSTOM:tambo.run.awaiting_input", "RUN_FINISHED"])
    expect(textOf(events)).toBe("")
    const { threadId, runId } = runIds(events)
    const toolCallId = str(events.find((event) => event.type === "TOOL_CALL_START")!, "toolCallId")
    // The round's end is recorded; only the lock stays.
    expect(await sdk.threads.retrieve(threadId, { userKey: USER }))
      .toMatchObject({ runStatus: "streaming", currentRunId: runId, lastCompletedRunId: runId, pendingToolCallIds: [toolCallId] })

    const conflict = await rejection(answer(threadId, runId, toolCallId))
    expect(field(conflict, "error")).toMatchObject({ status: 409, title: "Concurrent Run", currentRunId: runId })
    // Refused before anything was stored: the call still waits.
    expect(server.threads.get(threadId)).toMatchObject({ pendingToolCallIds: [toolCallId], lastCompletedRunId: runId })

    after({ fire, reject })
    await waitFor(() => server.threads.get(threadId)?.runStatus === "idle")
    expect(server.threads.get(threadId)?.currentRunId).toBeUndefined()
    const resumed = await collect(await answer(threadId, runId, toolCallId))
    // The steps after keepLock played on the continuation, as after a tool call.
    expect(textOf(resumed)).toBe("It is 21°C.")
    expect(resumed.at(-1)!.type).toBe("RUN_FINISHED")
  })

  it("omits parentMessageId when no text preceded the tool call", async () => {
    server.setScript([Script.toolCall("get_weather", { city: "Oslo" })])
    const events = await createRun("Weather?", { tools: [weatherTool] })
    expect(types(events)).toEqual([
      "RUN_STARTED",
      "TOOL_CALL_START",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_END",
      "CUSTOM:tambo.run.awaiting_input",
      "RUN_FINISHED"
    ])
    expect(events[1]).not.toHaveProperty("parentMessageId")
  })

  it("does not pause for a tool the request did not declare", async () => {
    server.setScript([Script.toolCall("server_side_tool", {})])
    const events = await createRun("Hi", { tools: [weatherTool] })
    expect(types(events)).not.toContain("CUSTOM:tambo.run.awaiting_input")
    expect(server.threads.get(runIds(events).threadId)?.pendingToolCallIds).toBeUndefined()
  })

  it("ends the round at a client tool call and plays the rest on the continuation", async () => {
    server.setScript([
      Script.text("Checking."),
      Script.toolCall("get_weather", { city: "Quito" }, { id: "call_a" }),
      Script.toolCall("get_weather", { city: "Lima" }, { id: "call_b" }),
      Script.text("Both are sunny.")
    ])
    const first = await createRun("Weather?", { tools: [weatherTool] })
    expect(textOf(first)).toBe("Checking.")
    // Tool calls streamed together pause together.
    expect(field(first.find((event) => event["name"] === "tambo.run.awaiting_input"), "value", "pendingToolCalls")).toEqual([
      { toolCallId: "call_a", toolName: "get_weather", arguments: "{\"city\":\"Quito\"}" },
      { toolCallId: "call_b", toolName: "get_weather", arguments: "{\"city\":\"Lima\"}" }
    ])
    const { threadId, runId } = runIds(first)
    expect(server.threads.get(threadId)?.pendingToolCallIds).toEqual(["call_a", "call_b"])
    const second = await collect(await sdk.threads.runs.run(threadId, {
      message: {
        role: "user",
        content: ["call_a", "call_b"].map((toolUseId) => ({ type: "tool_result" as const, toolUseId, content: [{ type: "text" as const, text: "sunny" }] }))
      },
      previousRunId: runId,
      userKey: USER,
      tools: [weatherTool]
    }))
    expect(textOf(second)).toBe("Both are sunny.")
    expect(types(second)).not.toContain("CUSTOM:tambo.run.awaiting_input")
  })

  it("plays a multi-round script: awaitToolResults() splits it, a new message restarts it", async () => {
    server.setScript([
      Script.text("Looking up."),
      Script.toolCall("lookup", { q: 1 }, { id: "call_1" }),
      Script.awaitToolResults(),
      Script.toolCall("lookup", { q: 2 }, { id: "call_2" }),
      Script.awaitToolResults(),
      Script.text("All done.")
    ])
    const lookup = { name: "lookup", description: "Looks things up", inputSchema: { type: "object" } }
    const first = await createRun("Go", { tools: [lookup] })
    const { threadId } = runIds(first)
    let previousRunId = runIds(first).runId
    const continueWith = async (toolUseId: string) => {
      const events = await collect(await sdk.threads.runs.run(threadId, {
        message: { role: "user", content: [{ type: "tool_result", toolUseId, content: [{ type: "text", text: "r" }] }] },
        previousRunId,
        userKey: USER,
        tools: [lookup]
      }))
      previousRunId = runIds(events).runId
      return events
    }
    const second = await continueWith("call_1")
    expect(second.find((event) => event.type === "TOOL_CALL_START")).toMatchObject({ toolCallId: "call_2" })
    const third = await continueWith("call_2")
    expect(textOf(third)).toBe("All done.")
    const fourth = await collect(await sdk.threads.runs.run(threadId, { message: userMessage("Again"), previousRunId, userKey: USER, tools: [lookup] }))
    expect(textOf(fourth)).toBe("Looking up.")
  })

  it("validates tool results against the pending calls", async () => {
    server.setScript([Script.toolCall("get_weather", { city: "Rome" }, { id: "call_rome" })])
    const { threadId, runId } = runIds(await createRun("Weather?", { tools: [weatherTool] }))

    const missing = await rejection(sdk.threads.runs.run(threadId, { message: userMessage("never mind"), previousRunId: runId, userKey: USER }))
    expect(missing).toBeInstanceOf(TamboAI.BadRequestError)
    expect(field(missing, "error")).toMatchObject({
      type: "urn:tambo:error:invalid_tool_result",
      detail: "Missing tool results for pending tool calls: call_rome",
      code: "MISSING_RESULTS",
      missingToolCallIds: ["call_rome"]
    })

    const extra = await rejection(sdk.threads.runs.run(threadId, {
      message: {
        role: "user",
        content: [
          { type: "tool_result", toolUseId: "call_rome", content: [{ type: "text", text: "sunny" }] },
          { type: "tool_result", toolUseId: "call_other", content: [{ type: "text", text: "?" }] }
        ]
      },
      previousRunId: runId,
      userKey: USER
    }))
    expect(field(extra, "error")).toMatchObject({ code: "EXTRA_RESULTS", extraToolCallIds: ["call_other"] })
    // Rejected requests change nothing.
    expect(server.threads.get(threadId)?.pendingToolCallIds).toEqual(["call_rome"])
  })

  it("takes tool results and a new message in one: the results as tool messages, then the user's content; the script answers anew", async () => {
    server.setScript((request) =>
      request.toolResults.length === 0
        ? [Script.toolCall("get_weather", { city: "Rome" }, { id: "call_rome" }), Script.text("never played")]
        : [Script.text(`${request.text} / ${request.toolResults.map((r) => `${r.toolName}:${r.isError}:${r.text}`).join(",")}`)]
    )
    const { threadId, runId } = runIds(await createRun("Weather?", { tools: [weatherTool] }))
    // The API filters the tool_result blocks out wherever they are: text may come first.
    const events = await collect(await sdk.threads.runs.run(threadId, {
      message: {
        role: "user",
        content: [
          { type: "text", text: "Forget it, " },
          { type: "tool_result", toolUseId: "call_rome", content: [{ type: "text", text: "cancelled" }], isError: true },
          { type: "text", text: "what time is it?" }
        ]
      },
      previousRunId: runId,
      userKey: USER,
      tools: [weatherTool]
    }))
    expect(textOf(events)).toBe("Forget it, what time is it? / get_weather:true:cancelled")
    const thread = await sdk.threads.retrieve(threadId, { userKey: USER })
    expect(thread.pendingToolCallIds ?? []).toEqual([])
    expect(thread.messages.slice(2).map((message) => [message.role, message.content])).toEqual([
      ["assistant", [{ type: "tool_result", toolUseId: "call_rome", content: [{ type: "text", text: "cancelled" }], isError: true }]],
      ["user", [{ type: "text", text: "Forget it, " }, { type: "text", text: "what time is it?" }]],
      ["assistant", [{ type: "text", text: "Forget it, what time is it? / get_weather:true:cancelled" }]]
    ])
  })

  it("gives a script function the whole request", async () => {
    const seen: Array<Script.RunRequest> = []
    const contexts: Array<Script.ScriptContext> = []
    server.setScript((request, context) => {
      seen.push(request)
      contexts.push(context)
      return [Script.text("ok")]
    })
    const events = await createRun("Hello there", {
      tools: [weatherTool],
      availableComponents: [weatherCard],
      toolChoice: { name: "get_weather" },
      model: "gpt-test",
      message: {
        role: "user",
        content: [{ type: "text", text: "Hello there" }],
        additionalContext: { page: "/home" }
      }
    })
    const { threadId, runId } = runIds(events)
    expect(seen[0]).toMatchObject({
      threadId,
      runId,
      isNewThread: true,
      contextKey: USER,
      text: "Hello there",
      tools: [weatherTool],
      availableComponents: [weatherCard],
      toolChoice: { name: "get_weather" },
      additionalContext: { page: "/home" },
      model: "gpt-test",
      previousRunId: undefined,
      toolResults: [],
      history: []
    })
    expect(contexts[0]).toMatchObject({ runIndex: 0, threadRunIndex: 0 })
    await collect(await sdk.threads.runs.run(threadId, { message: userMessage("again"), previousRunId: runId, userKey: USER }))
    expect(seen[1]).toMatchObject({ isNewThread: false, previousRunId: runId, text: "again" })
    expect(seen[1]!.history.map((message) => message.role)).toEqual(["user", "assistant"])
    expect(contexts[1]).toMatchObject({ runIndex: 1, threadRunIndex: 1 })
  })
})

describe("components", () => {
  it("streams props as add-then-replace patches and stores the final props", async () => {
    server.setScript([
      Script.text("Here:"),
      Script.component("WeatherCard", [{ city: "Pa" }, { city: "Paris" }, { city: "Paris", temperature: 21 }], { state: { unit: "C" } })
    ])
    const events = await createRun("Card please", { availableComponents: [weatherCard] })
    expect(types(events)).toEqual([
      "RUN_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "CUSTOM:tambo.component.start",
      "CUSTOM:tambo.component.props_delta",
      "CUSTOM:tambo.component.props_delta",
      "CUSTOM:tambo.component.props_delta",
      "CUSTOM:tambo.component.end",
      "TEXT_MESSAGE_END",
      "RUN_FINISHED"
    ])
    const messageId = events[1]!["messageId"]
    const componentId = field(events[3], "value", "componentId")
    expect(events[3]!["value"]).toEqual({ messageId, componentId, componentName: "WeatherCard" })
    expect(events.slice(4, 7).map((event) => field(event, "value", "operations"))).toEqual([
      [{ op: "add", path: "/city", value: "Pa" }],
      [{ op: "replace", path: "/city", value: "Paris" }],
      [{ op: "add", path: "/temperature", value: 21 }]
    ])
    expect(field(events[6], "value", "streamingStatus")).toEqual({ city: "done", temperature: "started" })
    expect(events[7]!["value"]).toEqual({ componentId, finalProps: { city: "Paris", temperature: 21 } })

    const thread = await sdk.threads.retrieve(runIds(events).threadId, { userKey: USER })
    expect(thread.messages[1]!.content).toEqual([
      { type: "text", text: "Here:" },
      { type: "component", id: componentId, name: "WeatherCard", props: { city: "Paris", temperature: 21 }, state: { unit: "C" } }
    ])
  })

  it("streams 5,000 patches", async () => {
    const snapshots = Array.from({ length: 5_000 }, (_, i) => ({ count: i }))
    server.setScript([Script.component("Counter", snapshots)])
    const events = await createRun("Count")
    expect(events.filter((event) => event["name"] === "tambo.component.props_delta")).toHaveLength(5_000)
    expect(field(events.find((event) => event["name"] === "tambo.component.end"), "value", "finalProps")).toEqual({ count: 4_999 })
  })
})

describe("stored assistant messages, as the API stores them", () => {
  it("a tool call alone is stored after a leading \" \" text block", async () => {
    server.setScript([Script.toolCall("get_weather", { city: "Oslo" }, { id: "call_oslo" })])
    const events = await createRun("Weather?", { tools: [weatherTool] })
    const thread = await sdk.threads.retrieve(runIds(events).threadId, { userKey: USER })
    expect(thread.messages[1]!.content).toEqual([
      { type: "text", text: " " },
      { type: "tool_use", id: "call_oslo", name: "get_weather", input: { city: "Oslo" } }
    ])
  })

  it("stores the text trimmed, in one block before the components, whatever the streaming order", async () => {
    server.setScript([
      Script.text("  Here: "),
      Script.component("WeatherCard", { city: "Paris" }, { id: "card" }),
      Script.text("done.  ")
    ])
    const events = await createRun("Weather?", { availableComponents: [weatherCard] })
    const thread = await sdk.threads.retrieve(runIds(events).threadId, { userKey: USER })
    expect(thread.messages[1]!.content).toEqual([
      { type: "text", text: "Here: done." },
      { type: "component", id: "card", name: "WeatherCard", props: { city: "Paris" }, state: {} }
    ])
  })

  it("stores a tool call's input without _tambo_* keys but its two status messages", async () => {
    server.setScript([
      Script.toolCall("get_weather", { city: "Oslo", _tambo_statusMessage: "Looking", _tambo_completionStatusMessage: "Looked", _tambo_other: 1 }, { id: "call_oslo" })
    ])
    const events = await createRun("Weather?", { tools: [weatherTool] })
    const thread = await sdk.threads.retrieve(runIds(events).threadId, { userKey: USER })
    expect(thread.messages[1]!.content[1]).toEqual({
      type: "tool_use",
      id: "call_oslo",
      name: "get_weather",
      input: { city: "Oslo", _tambo_statusMessage: "Looking", _tambo_completionStatusMessage: "Looked" }
    })
  })

  it("stores a component's props without the _tambo_* keys the stream carried", async () => {
    server.setScript([
      Script.component("WeatherCard", [{ _tambo_statusMessage: "Drawing" }, { _tambo_statusMessage: "Drawing", city: "Rome" }], { id: "card" })
    ])
    const events = await createRun("Weather?", { availableComponents: [weatherCard] })
    expect(field(events.find((event) => event["name"] === "tambo.component.end"), "value", "finalProps"))
      .toEqual({ _tambo_statusMessage: "Drawing", city: "Rome" })
    const thread = await sdk.threads.retrieve(runIds(events).threadId, { userKey: USER })
    expect(thread.messages[1]!.content).toEqual([
      { type: "text", text: " " },
      { type: "component", id: "card", name: "WeatherCard", props: { city: "Rome" }, state: {} }
    ])
  })
})

// The API stores the run's assistant message at the model's first chunk
// (ThreadsService.handleAdvanceThreadStream → appendNewMessageToThread) and writes what streamed
// into it as the run goes (its throttled syncThreadStatus); the v1 GET handlers (V1Service
// getThread / listMessages / getMessage) return it like any message, beside the thread's run
// fields. This server syncs before each chunk goes out.
describe("reads while a run streams", () => {
  /** Starts a run on a new thread and reads its events until `until` says so; the run holds. */
  const holdRun = async (script: Script.Script, until: (event: Ev) => boolean) => {
    server.setScript(script)
    const stream = await sdk.threads.runs.create({ message: userMessage("Hi"), thread: { userKey: USER } })
    const events: Array<Ev> = []
    const iterator = stream[Symbol.asyncIterator]()
    for (;;) {
      const next = await iterator.next()
      if (next.done === true) throw new Error("the run ended early")
      const event: Ev = { ...next.value }
      events.push(event)
      if (until(event)) break
    }
    const { threadId, runId } = runIds(events)
    const release = async () => {
      await sdk.threads.runs.delete(runId, { threadId, userKey: USER })
      for (;;) if ((await iterator.next()).done === true) break
    }
    /** Reads the run to its end: all its events. */
    const rest = async () => {
      for (;;) {
        const next = await iterator.next()
        if (next.done === true) return events
        events.push({ ...next.value })
      }
    }
    return { events, threadId, runId, release, rest }
  }

  it("shows the user message, the assistant message with the text streamed so far, and the thread's run", async () => {
    const run = await holdRun(
      [Script.text(["Hel", "lo"]), Script.hang()],
      (event) => event.type === "TEXT_MESSAGE_CONTENT" && str(event, "delta") === "lo"
    )
    const messageId = str(run.events.find((event) => event.type === "TEXT_MESSAGE_START")!, "messageId")
    const thread = await sdk.threads.retrieve(run.threadId, { userKey: USER })
    expect(thread).toMatchObject({ runStatus: "streaming", currentRunId: run.runId })
    const expected = [
      ["user", [{ type: "text", text: "Hi" }], undefined],
      [messageId, [{ type: "text", text: "Hello" }], undefined]
    ]
    expect(thread.messages.map((message) => [message.role === "user" ? "user" : message.id, message.content, message.isCancelled]))
      .toEqual(expected)
    const page = await sdk.threads.messages.list(run.threadId, { userKey: USER })
    expect(page.messages.map((message) => [message.role === "user" ? "user" : message.id, message.content, message.isCancelled]))
      .toEqual(expected)
    await run.release()
  })

  it("shows the assistant message with \" \" as its text once the model started, before any text", async () => {
    const run = await holdRun(
      [Script.reasoning("Thinking"), Script.hang()],
      (event) => event.type === "THINKING_TEXT_MESSAGE_END"
    )
    const thread = await sdk.threads.retrieve(run.threadId, { userKey: USER })
    expect(thread.messages.map((message) => [message.role, message.content, message.isCancelled])).toEqual([
      ["user", [{ type: "text", text: "Hi" }], undefined],
      ["assistant", [{ type: "text", text: " " }], undefined]
    ])
    await run.release()
  })

  const textOf = (events: ReadonlyArray<Ev>) =>
    events.filter((event) => event.type === "TEXT_MESSAGE_CONTENT").map((event) => str(event, "delta"))

  it("hold(promise): sends what came before, and goes on once the promise settled; a run cancelled meanwhile ends there", async () => {
    let goOn!: () => void
    const shown = new Promise<void>((resolve) => (goOn = resolve))
    const run = await holdRun([Script.text("Hel"), Script.hold(shown), Script.text("lo")], (event) =>
      event.type === "TEXT_MESSAGE_CONTENT")
    const held = await sdk.threads.retrieve(run.threadId, { userKey: USER })
    expect(held.messages.at(-1)?.content).toEqual([{ type: "text", text: "Hel" }])
    goOn()
    const events = await run.rest()
    expect(textOf(events)).toEqual(["Hel", "lo"])
    expect(events.at(-1)?.type).toBe("RUN_FINISHED")

    const never = await holdRun([Script.text("Hel"), Script.hold(new Promise(() => undefined)), Script.text("lo")], (event) =>
      event.type === "TEXT_MESSAGE_CONTENT")
    await never.release()
  })

  it("hold(promise): a promise that rejects lets the run go on as one that resolves", async () => {
    let refuse!: (error: Error) => void
    const refused = new Promise<void>((_, reject) => (refuse = reject))
    const run = await holdRun([Script.text("Hel"), Script.hold(refused), Script.text("lo")], (event) =>
      event.type === "TEXT_MESSAGE_CONTENT")
    refuse(new Error("the test moved on"))
    const events = await run.rest()
    expect(textOf(events)).toEqual(["Hel", "lo"])
    expect(events.at(-1)?.type).toBe("RUN_FINISHED")
  })

  it("shows nothing of the reply before the model's first chunk", async () => {
    const run = await holdRun([Script.hang()], (event) => event.type === "RUN_STARTED")
    const thread = await sdk.threads.retrieve(run.threadId, { userKey: USER })
    expect(thread.messages.map((message) => message.role)).toEqual(["user"])
    await run.release()
  })

  it("shows a finished component with its props and a tool call once its arguments ended", async () => {
    const run = await holdRun(
      [
        Script.text("Here:"),
        Script.component("WeatherCard", [{ city: "Pa" }, { city: "Paris" }], { id: "comp_1" }),
        Script.toolCall("lookup", { q: "x" }, { id: "call_1", pending: false }),
        Script.hang()
      ],
      (event) => event.type === "TOOL_CALL_END"
    )
    const thread = await sdk.threads.retrieve(run.threadId, { userKey: USER })
    expect(thread.messages[1]?.content).toEqual([
      { type: "text", text: "Here:" },
      { type: "component", id: "comp_1", name: "WeatherCard", props: { city: "Paris" }, state: {} },
      { type: "tool_use", id: "call_1", name: "lookup", input: { q: "x" } }
    ])
    await run.release()
  })

  it("keeps the message's id once the run finishes: the thread holds it once, with the final text", async () => {
    server.setScript([Script.text(["Hel", "lo"])])
    const stream = await sdk.threads.runs.create({ message: userMessage("Hi"), thread: { userKey: USER } })
    let during: Array<string> = []
    const events: Array<Ev> = []
    for await (const raw of stream) {
      const event: Ev = { ...raw }
      events.push(event)
      if (event.type === "TEXT_MESSAGE_CONTENT" && during.length === 0) {
        const thread = await sdk.threads.retrieve(runIds(events).threadId, { userKey: USER })
        during = thread.messages.map((message) => message.id)
      }
    }
    const after = await sdk.threads.retrieve(runIds(events).threadId, { userKey: USER })
    expect(after.messages.map((message) => message.id)).toEqual(during)
    expect(after.messages[1]).toMatchObject({ content: [{ type: "text", text: "Hello" }] })
    expect(after.messages[1]?.isCancelled).toBeUndefined()
  })

  it("a run that fails without keeping its reply leaves no message of it", async () => {
    server.setScript([Script.text("Hel"), Script.runError({ keepPartial: false })])
    const events = await createRun("Hi")
    const after = await sdk.threads.retrieve(runIds(events).threadId, { userKey: USER })
    expect(after.messages.map((message) => message.role)).toEqual(["user"])
  })
})

describe("failures", () => {
  it("sends RUN_ERROR twice and no RUN_FINISHED; the partial assistant message stays stored, not cancelled", async () => {
    server.setScript([Script.text("Partial answ"), Script.runError()])
    const events = await createRun("Hi")
    expect(types(events)).toEqual(["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "RUN_ERROR", "RUN_ERROR"])
    const error = {
      type: "RUN_ERROR",
      message: "An internal error occurred",
      code: "INTERNAL_ERROR",
      category: "server_error",
      isRetryable: false,
      status: 500,
      timestamp: expect.any(Number)
    }
    expect(events[3]).toEqual(error)
    expect(events[4]).toEqual(error)
    const thread = await sdk.threads.retrieve(runIds(events).threadId, { userKey: USER })
    expect(thread).toMatchObject({
      runStatus: "idle",
      lastRunError: { code: "INTERNAL_ERROR", message: "An internal error occurred" },
      lastCompletedRunId: runIds(events).runId
    })
    // The API writes the assistant message to its database as the model streams it, and a
    // failure does not remove it.
    expect(thread.messages.map((message) => message.role)).toEqual(["user", "assistant"])
    expect(thread.messages[1]).toMatchObject({ content: [{ type: "text", text: "Partial answ" }] })
    expect(thread.messages[1]?.isCancelled).toBeUndefined()
  })

  it("stores no assistant message for a run that fails before the model streamed anything", async () => {
    server.setScript([Script.runError()])
    const events = await createRun("Hi")
    const thread = await sdk.threads.retrieve(runIds(events).threadId, { userKey: USER })
    expect(thread.messages.map((message) => message.role)).toEqual(["user"])
  })

  it("can fail before any message event, with custom error fields", async () => {
    server.setScript([
      Script.runError({
        message: "Rate limited",
        code: "LLM_CLIENT_ERROR",
        category: "client_error",
        isRetryable: true,
        status: 429,
        storedMessage: "429 Too Many Requests",
        twice: false
      })
    ])
    const events = await createRun("Hi")
    expect(types(events)).toEqual(["RUN_STARTED", "RUN_ERROR"])
    expect(events[1]).toMatchObject({ code: "LLM_CLIENT_ERROR", category: "client_error", isRetryable: true, status: 429 })
    expect(server.threads.get(runIds(events).threadId)?.lastRunError).toEqual({ code: "LLM_CLIENT_ERROR", message: "429 Too Many Requests" })
  })

  it("answers an HTTP error instead of a stream, without starting the run", async () => {
    server.setScript([Script.httpError(500)])
    const error = await rejection(sdk.threads.runs.create({ message: userMessage("Hi"), thread: { userKey: USER } }))
    expect(error).toBeInstanceOf(TamboAI.InternalServerError)
    expect(field(error, "status")).toBe(500)
    expect(field(error, "error")).toEqual({ statusCode: 500, message: "Internal server error" })
    // The thread is created before the run is validated and survives; no run ever started.
    const [thread] = server.threads.list()
    expect(thread).toMatchObject({ runStatus: "idle", messages: [] })
    expect(thread?.lastCompletedRunId).toBeUndefined()

    server.setScript([Script.httpError(418, { teapot: true }, { "x-custom": "yes" })])
    const response = await fetch(`${server.url}/v1/threads/runs`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": server.apiKey },
      body: JSON.stringify({ message: userMessage("Hi"), thread: { userKey: USER } })
    })
    expect(response.status).toBe(418)
    expect(response.headers.get("x-custom")).toBe("yes")
    expect(await response.json()).toEqual({ teapot: true })
  })

  it("surfaces a malformed frame as the SDK's JSON parse error", async () => {
    server.setScript([Script.text("ok"), Script.frame("data: {oops\n\n"), Script.text("never parsed")])
    // The SDK logs the frame it could not parse; keep the test output quiet.
    const stream = await client(server, { logLevel: "off" }).threads.runs.create({ message: userMessage("Hi"), thread: { userKey: USER } })
    const received: Array<Ev> = []
    const error = await rejection(collectUntil(stream, (event) => {
      received.push(event)
      return false
    }))
    expect(error).toBeInstanceOf(SyntaxError)
    expect(types(received)).toEqual(["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"])
  })

  it("drops the connection after N events, which cancels the run", async () => {
    server.setScript([Script.dropAfter(3), Script.text(["a", "b", "c", "d"])])
    const stream = await sdk.threads.runs.create({ message: userMessage("Hi"), thread: { userKey: USER } })
    const received: Array<Ev> = []
    const error = await rejection(collectUntil(stream, (event) => {
      received.push(event)
      return false
    }))
    expect(error).toBeInstanceOf(Error)
    expect(types(received)).toEqual(["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"])
    await waitFor(() => server.cancels.length === 1)
    expect(server.cancels[0]).toMatchObject({ reason: "connection_closed", runId: received[0]!["runId"] })
  })

  it("drops the connection at a drop() step", async () => {
    server.setScript([Script.text("a"), Script.drop()])
    const stream = await sdk.threads.runs.create({ message: userMessage("Hi"), thread: { userKey: USER } })
    const error = await rejection(collect(stream))
    expect(error).toBeInstanceOf(Error)
    await waitFor(() => server.cancels.length === 1)
  })

  it("ends the body without a terminal event at closeStream()", async () => {
    server.setScript([Script.text("a"), Script.closeStream()])
    const events = await createRun("Hi")
    expect(types(events)).toEqual(["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"])
    expect(server.threads.get(runIds(events).threadId)?.runStatus).toBe("idle")
  })
})

describe("timing", () => {
  it("delays the next event at delay()", async () => {
    server.setScript([Script.text("a"), Script.delay(200), Script.text("b")])
    const stream = await sdk.threads.runs.create({ message: userMessage("Hi"), thread: { userKey: USER } })
    const arrivals: Array<[string, number]> = []
    for await (const event of stream) arrivals.push([event.type, performance.now()])
    const [, first] = arrivals.find(([type]) => type === "TEXT_MESSAGE_CONTENT")!
    const [, second] = arrivals.filter(([type]) => type === "TEXT_MESSAGE_CONTENT")[1]!
    expect(second - first).toBeGreaterThanOrEqual(150)
  })

  it("waits before every event after pace()", async () => {
    server.setScript([Script.pace(40), Script.text(["a", "b", "c"])])
    const started = performance.now()
    const events = await createRun("Hi")
    // TEXT_MESSAGE_START, 3 deltas, TEXT_MESSAGE_END and RUN_FINISHED are paced.
    expect(performance.now() - started).toBeGreaterThanOrEqual(6 * 40 - 20)
    expect(textOf(events)).toBe("abc")
  })
})

describe("cancellation", () => {
  it("cancels a hanging run by DELETE: RUN_ERROR CANCELLED, and the partial message is stored as cancelled", async () => {
    server.setScript([Script.text("Partial"), Script.hang()])
    const stream = await sdk.threads.runs.create({ message: userMessage("Hi"), thread: { userKey: USER } })
    const events: Array<Ev> = []
    for await (const raw of stream) {
      const event: Ev = { ...raw }
      events.push(event)
      if (event.type === "TEXT_MESSAGE_CONTENT") {
        const { threadId, runId } = runIds(events)
        await expect(sdk.threads.runs.delete(runId, { threadId, userKey: USER })).resolves.toEqual({ runId, status: "cancelled" })
      }
    }
    expect(events.at(-1)).toEqual({ type: "RUN_ERROR", message: "Run cancelled", code: "CANCELLED", timestamp: expect.any(Number) })
    const { threadId, runId } = runIds(events)
    expect(server.cancels).toEqual([{ threadId, runId, reason: "user_cancelled", time: expect.any(Number) }])
    const thread = await sdk.threads.retrieve(threadId, { userKey: USER })
    expect(thread).toMatchObject({ runStatus: "idle", lastRunCancelled: true, lastCompletedRunId: runId })
    expect(thread.messages[1]).toMatchObject({ role: "assistant", isCancelled: true, content: [{ type: "text", text: "Partial" }] })

    // Only the current run can be cancelled.
    const again = await rejection(sdk.threads.runs.delete(runId, { threadId, userKey: USER }))
    expect(again).toBeInstanceOf(TamboAI.NotFoundError)
    expect(field(again, "error")).toEqual({ message: `Run ${runId} not found on thread ${threadId}`, error: "Not Found", statusCode: 404 })
  })

  it("cancels a run whose client goes away while its script function still works: the signal aborts, the thread is idle and cancelled", async () => {
    const { fire: entered, fired: called } = latch()
    let aborted = false
    server.setScript((_request, { signal }) =>
      new Promise<Script.Script>((resolve) => {
        signal.addEventListener("abort", () => {
          aborted = true
          resolve([Script.text("Too late")])
        })
        entered()
      })
    )
    const created = await sdk.threads.create({ userKey: USER })
    const controller = new AbortController()
    const response = fetchRun(created.id, "Hi", controller.signal)
    await called
    const runId = server.threads.get(created.id)?.currentRunId
    expect(runId).toBeDefined()
    controller.abort()
    await expect(response).rejects.toThrow()
    // The API starts the model only once its response is open, and a closed connection cancels the run.
    await waitFor(() => aborted && server.cancels.length === 1)
    expect(server.cancels[0]).toMatchObject({ threadId: created.id, runId, reason: "connection_closed" })
    expect(server.threads.get(created.id)).toMatchObject({ runStatus: "idle", lastRunCancelled: true, lastCompletedRunId: runId })
    expect(server.threads.get(created.id)?.currentRunId).toBeUndefined()
  })

  it("answers a run whose script is still working with its headers and RUN_STARTED, as the API does before the model works", async () => {
    const { fire: open, fired: gate } = latch()
    server.setScript(async () => {
      await gate
      return [Script.text("Late")]
    })
    const created = await sdk.threads.create({ userKey: USER })
    const response = await fetchRun(created.id, "Hi", new AbortController().signal)
    expect(response.status).toBe(201)
    const reader = response.body!.getReader()
    const first = new TextDecoder().decode((await reader.read()).value)
    expect(first).toContain(`"type":"RUN_STARTED"`)
    expect(server.threads.get(created.id)?.runStatus).toBe("streaming")
    open()
    let rest = ""
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value)
    expect(rest).toContain(`"delta":"Late"`)
    expect(rest).toContain(`"type":"RUN_FINISHED"`)
    expect(rest).not.toContain("RUN_STARTED")
  })

  it("answers a run whose script is wrapped in beforeResponse only once it resolved: an httpError it resolves to is the HTTP status", async () => {
    const { fire: open, fired: gate } = latch()
    const { fire: entered, fired: called } = latch()
    server.setScript(Script.beforeResponse(async () => {
      entered()
      await gate
      return [Script.httpError(503)]
    }))
    const created = await sdk.threads.create({ userKey: USER })
    let answered = false
    const response = fetchRun(created.id, "Hi", new AbortController().signal).finally(() => {
      answered = true
    })
    await called
    await new Promise((resolve) => setImmediate(resolve))
    expect(answered).toBe(false)
    open()
    expect((await response).status).toBe(503)
    expect(server.threads.get(created.id)).toMatchObject({ runStatus: "idle" })
    expect(server.threads.get(created.id)?.messages).toEqual([])
  })

  it("fails a run whose script resolves to an httpError after its headers went with the API's INTERNAL_ERROR", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined)
    try {
      server.setScript(async () => [Script.httpError(503)])
      const events = await createRun("Hi")
      expect(types(events)).toEqual(["RUN_STARTED", "RUN_ERROR", "RUN_ERROR"])
      expect(events[1]).toMatchObject({ code: "INTERNAL_ERROR" })
      // It says what to do instead.
      expect(logged).toHaveBeenCalledWith(expect.stringContaining("Wrap it in Script.beforeResponse(...)"))
    } finally {
      logged.mockRestore()
    }
  })

  it("stores a run's user message once a script wrapped in beforeUserMessage answered: meanwhile the thread shows the run and the messages of before it", async () => {
    const { fire: open, fired: gate } = latch()
    const { fire: entered, fired: called } = latch()
    server.setScript(Script.beforeUserMessage(async () => {
      entered()
      await gate
      return [Script.text("Reply")]
    }))
    const created = await sdk.threads.create({ userKey: USER })
    const response = fetchRun(created.id, "Hi", new AbortController().signal)
    await called
    await waitFor(() => server.threads.get(created.id)?.runStatus === "streaming")
    expect(server.threads.get(created.id)?.messages).toEqual([])
    open()
    expect(await (await response).text()).toContain("RUN_FINISHED")
    expect(server.threads.get(created.id)?.messages.map((message) => message.role)).toEqual(["user", "assistant"])
  })

  it("stores a run's user message when the run starts: a run cancelled while its script works leaves it before the next run's", async () => {
    const { fire: open, fired: gate } = latch()
    const { fire: entered, fired: called } = latch()
    server.setScript(async (request) => {
      if (request.text !== "first") return [Script.text("Second reply")]
      entered()
      await gate
      return [Script.text("Too late")]
    })
    const created = await sdk.threads.create({ userKey: USER })
    const controller = new AbortController()
    const response = fetchRun(created.id, "first", controller.signal)
    await called
    const firstRunId = server.threads.get(created.id)?.currentRunId
    if (firstRunId === undefined) throw new Error("the first run did not start")
    controller.abort()
    await expect(response).rejects.toThrow()
    await waitFor(() => server.cancels.length === 1)
    await collect(await sdk.threads.runs.run(created.id, { message: userMessage("second"), previousRunId: firstRunId, userKey: USER }))
    open()
    await new Promise((resolve) => setImmediate(resolve))
    const thread = await sdk.threads.retrieve(created.id, { userKey: USER })
    expect(thread.messages.map((message) => [message.role, message.content[0]])).toEqual([
      ["user", { type: "text", text: "first" }],
      ["user", { type: "text", text: "second" }],
      ["assistant", { type: "text", text: "Second reply" }]
    ])
  })

  it("streams RUN_ERROR CANCELLED to a run cancelled by DELETE while its script works: a script that gives up on the abort, or never settles", async () => {
    const givesUp: Script.ScriptFn = (_request, { signal }) =>
      new Promise<Script.Script>((_resolve, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))))
    const neverSettles: Script.ScriptFn = () => new Promise<Script.Script>(() => {})
    const sentAtOnce = (script: Script.ScriptFn): Script.ScriptSource => script
    for (const [script, wrap] of [[givesUp, sentAtOnce], [neverSettles, sentAtOnce], [neverSettles, Script.beforeResponse]] as const) {
      const { fire: entered, fired: called } = latch()
      server.setScript(wrap((request, context) => {
        entered()
        return script(request, context)
      }))
      const created = await sdk.threads.create({ userKey: USER })
      const stream = sdk.threads.runs.run(created.id, { message: userMessage("Hi"), userKey: USER })
      await called
      const runId = server.threads.get(created.id)?.currentRunId
      if (runId === undefined) throw new Error("the run did not start")
      await expect(sdk.threads.runs.delete(runId, { threadId: created.id, userKey: USER })).resolves.toEqual({ runId, status: "cancelled" })
      const events = await collect(await stream)
      expect(types(events)).toEqual(["RUN_STARTED", "RUN_ERROR"])
      expect(events[1]).toEqual({ type: "RUN_ERROR", message: "Run cancelled", code: "CANCELLED", timestamp: expect.any(Number) })
      expect(server.threads.get(created.id)).toMatchObject({ runStatus: "idle", lastRunCancelled: true, lastCompletedRunId: runId })
      expect(server.threads.get(created.id)?.messages.map((message) => message.role)).toEqual(["user"])
    }
  })

  it("answers 409 to a second run while one is active", async () => {
    server.setScript([Script.hang()])
    const created = await sdk.threads.create({ userKey: USER })
    const stream = await sdk.threads.runs.run(created.id, { message: userMessage("one"), userKey: USER })
    const iterator = stream[Symbol.asyncIterator]()
    const started = await iterator.next()
    const runId = str(started.value ?? {}, "runId")
    expect(server.threads.get(created.id)).toMatchObject({ runStatus: "streaming", currentRunId: runId })

    const conflict = await rejection(sdk.threads.runs.run(created.id, { message: userMessage("two"), userKey: USER }))
    expect(conflict).toBeInstanceOf(TamboAI.ConflictError)
    expect(field(conflict, "error")).toMatchObject({
      type: "urn:tambo:error:concurrent_run",
      title: "Concurrent Run",
      status: 409,
      detail: `A run is already active on thread ${created.id}`,
      threadId: created.id,
      currentRunId: runId
    })
    await sdk.threads.runs.delete(runId, { threadId: created.id, userKey: USER })
    await iterator.return?.()
  })

  it("cancels a paused run whose connection closes before RUN_FINISHED", async () => {
    server.setScript([
      Script.text("Checking."),
      Script.toolCall("get_weather", { city: "Lima" }),
      Script.awaitToolResults({ finishDelayMillis: 1_000 })
    ])
    const stream = await sdk.threads.runs.create({ message: userMessage("Weather?"), thread: { userKey: USER }, tools: [weatherTool] })
    // Stop reading at awaiting_input, as the official client does: leaving the loop aborts the request.
    const events = await collectUntil(stream, (event) => event["name"] === "tambo.run.awaiting_input")
    const { threadId, runId } = runIds(events)
    await waitFor(() => server.cancels.length === 1)
    expect(server.cancels[0]).toMatchObject({ threadId, runId, reason: "connection_closed" })
    const thread = server.threads.get(threadId)
    expect(thread).toMatchObject({ runStatus: "idle", lastRunCancelled: true, lastCompletedRunId: runId })
    // Cancelling forgets the pending calls, so the tool result is now unexpected.
    expect(thread?.pendingToolCallIds).toBeUndefined()
    const toolCallId = str(events.find((event) => event.type === "TOOL_CALL_START")!, "toolCallId")
    const rejected = await rejection(sdk.threads.runs.run(threadId, {
      message: { role: "user", content: [{ type: "tool_result", toolUseId: toolCallId, content: [{ type: "text", text: "warm" }] }] },
      previousRunId: runId,
      userKey: USER
    }))
    expect(field(rejected, "error", "code")).toBe("EXTRA_RESULTS")
  })

  it("still sends RUN_FINISHED when DELETE lands between awaiting_input and RUN_FINISHED", async () => {
    server.setScript([Script.toolCall("get_weather", { city: "Oslo" }), Script.awaitToolResults({ finishDelayMillis: 300 })])
    const stream = await sdk.threads.runs.create({ message: userMessage("Weather?"), thread: { userKey: USER }, tools: [weatherTool] })
    const events: Array<Ev> = []
    for await (const raw of stream) {
      const event: Ev = { ...raw }
      events.push(event)
      if (event["name"] === "tambo.run.awaiting_input") {
        const { threadId, runId } = runIds(events)
        await sdk.threads.runs.delete(runId, { threadId, userKey: USER })
      }
    }
    // The API's run loop is over by then: the stream ends normally, the thread says cancelled.
    expect(events.at(-1)!.type).toBe("RUN_FINISHED")
    expect(server.threads.get(runIds(events).threadId)).toMatchObject({ lastRunCancelled: true, runStatus: "idle" })
    expect(server.threads.get(runIds(events).threadId)?.pendingToolCallIds).toBeUndefined()
  })

  // The API stores the assistant message as the model streams it (ThreadsService
  // handleAdvanceThreadStream), from its first chunk, whatever it is (appendNewMessageToThread),
  // with " " as its text until text streams; cancelRun marks the latest assistant message
  // (markLatestAssistantMessageCancelled): the run's own, with what streamed so far.
  type RunStream = Awaited<ReturnType<TamboAI["threads"]["runs"]["run"]>>
  const secondRunCutShort = async (script: Script.Script, cut: (stream: RunStream, threadId: string) => Promise<void>) => {
    server.setScript([Script.text("Hello")])
    const first = await createRun("Hi")
    const { threadId, runId } = runIds(first)
    server.setScript(script)
    const stream = await sdk.threads.runs.run(threadId, { message: userMessage("Weather?"), previousRunId: runId, tools: [weatherTool], userKey: USER })
    await cut(stream, threadId)
    await waitFor(() => server.cancels.length === 1)
    return sdk.threads.retrieve(threadId, { userKey: USER })
  }

  it("a connection dropped mid-text stores the text streamed so far as cancelled and leaves the last reply alone", async () => {
    const thread = await secondRunCutShort(
      // RUN_STARTED, TEXT_MESSAGE_START and two deltas go out, then the connection drops.
      [Script.dropAfter(4), Script.text(["It is ", "sunny ", "in Lima."])],
      async (stream) => {
        await rejection(collect(stream))
      }
    )
    expect(thread).toMatchObject({ runStatus: "idle", lastRunCancelled: true })
    expect(thread.messages.map((message) => [message.role, message.content, message.isCancelled])).toEqual([
      ["user", [{ type: "text", text: "Hi" }], undefined],
      ["assistant", [{ type: "text", text: "Hello" }], undefined],
      ["user", [{ type: "text", text: "Weather?" }], undefined],
      ["assistant", [{ type: "text", text: "It is sunny" }], true]
    ])
  })

  it("a connection dropped mid tool-call arguments, before any text, stores the run's message as cancelled and leaves the last reply alone", async () => {
    const thread = await secondRunCutShort(
      // RUN_STARTED, TOOL_CALL_START and the first arguments delta go out, then the connection drops.
      [Script.dropAfter(3), Script.toolCall("get_weather", { city: "Lima" }, { chunkSize: 4 })],
      async (stream) => {
        await rejection(collect(stream))
      }
    )
    expect(thread).toMatchObject({ runStatus: "idle", lastRunCancelled: true })
    expect(thread.pendingToolCallIds).toBeUndefined()
    expect(thread.messages.map((message) => [message.role, message.content, message.isCancelled])).toEqual([
      ["user", [{ type: "text", text: "Hi" }], undefined],
      ["assistant", [{ type: "text", text: "Hello" }], undefined],
      ["user", [{ type: "text", text: "Weather?" }], undefined],
      // The call never finished, so the API stores no tool_use for it.
      ["assistant", [{ type: "text", text: " " }], true]
    ])
  })

  it("a run cancelled by DELETE while the model reasons, before any text, stores the run's message as cancelled and leaves the last reply alone", async () => {
    const thread = await secondRunCutShort([Script.reasoning("Thinking"), Script.hang()], async (stream, threadId) => {
      const events: Array<Ev> = []
      for await (const raw of stream) {
        const event: Ev = { ...raw }
        events.push(event)
        if (event.type === "THINKING_TEXT_MESSAGE_END") {
          await sdk.threads.runs.delete(runIds(events).runId, { threadId, userKey: USER })
        }
      }
    })
    expect(thread).toMatchObject({ runStatus: "idle", lastRunCancelled: true })
    expect(thread.messages.map((message) => [message.role, message.content, message.isCancelled])).toEqual([
      ["user", [{ type: "text", text: "Hi" }], undefined],
      ["assistant", [{ type: "text", text: "Hello" }], undefined],
      ["user", [{ type: "text", text: "Weather?" }], undefined],
      ["assistant", [{ type: "text", text: " " }], true]
    ])
  })

  it("a connection dropped mid component props stores the text and the component with the props streamed so far, as cancelled", async () => {
    const thread = await secondRunCutShort(
      // RUN_STARTED, TEXT_MESSAGE_START, the text, tambo.component.start and the first props delta.
      [
        Script.dropAfter(5),
        Script.text("Here:"),
        Script.component("WeatherCard", [{ city: "Pa" }, { city: "Paris" }, { city: "Paris", temperature: 21 }], { id: "comp_1" })
      ],
      async (stream) => {
        await rejection(collect(stream))
      }
    )
    expect(thread.messages[3]).toMatchObject({
      role: "assistant",
      isCancelled: true,
      content: [{ type: "text", text: "Here:" }, { type: "component", id: "comp_1", name: "WeatherCard", props: { city: "Pa" }, state: {} }]
    })
    expect(thread.messages[1]?.isCancelled).toBeUndefined()
  })

  it("a run that fails after the model only reasoned keeps the run's message, not cancelled", async () => {
    server.setScript([Script.reasoning("Thinking"), Script.runError()])
    const events = await createRun("Hi")
    const thread = await sdk.threads.retrieve(runIds(events).threadId, { userKey: USER })
    expect(thread.messages.map((message) => [message.role, message.content, message.isCancelled])).toEqual([
      ["user", [{ type: "text", text: "Hi" }], undefined],
      ["assistant", [{ type: "text", text: " " }], undefined]
    ])
  })

  it("does not cancel a run whose RUN_FINISHED was sent", async () => {
    server.setScript([Script.toolCall("get_weather", { city: "Kyiv" })])
    const stream = await sdk.threads.runs.create({ message: userMessage("Weather?"), thread: { userKey: USER }, tools: [weatherTool] })
    const events = await collectUntil(stream, (event) => event["name"] === "tambo.run.awaiting_input")
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(server.cancels).toEqual([])
    expect(server.threads.get(runIds(events).threadId)?.pendingToolCallIds).toHaveLength(1)
  })
})

describe("a closed connection noticed on the run's next write (noticeClosedConnection: \"onNextWrite\")", () => {
  beforeEach(async () => {
    await server.close()
    server = await startTestServer({ noticeClosedConnection: "onNextWrite" })
    sdk = client(server)
  })

  /** A thread whose run "held" the client left after its headers; the run writes next once `write` fires. */
  const leftWhileTheModelWorks = async () => {
    const { fire: write, fired: writes } = latch()
    server.setScript((request) => request.text === "held" ? writes.then(() => [Script.text("late")]) : [Script.text("ok")])
    const created = await sdk.threads.create({ userKey: USER })
    const controller = new AbortController()
    const response = await fetchRun(created.id, "held", controller.signal)
    expect(response.headers.get("x-run-id")).toBe(server.threads.get(created.id)?.currentRunId)
    controller.abort()
    return { threadId: created.id, runId: response.headers.get("x-run-id")!, write }
  }

  it("keeps the run and its lock until the run writes next: another run is refused 409 meanwhile, then the run is cancelled and the thread takes runs again", async () => {
    const { threadId, runId, write } = await leftWhileTheModelWorks()
    const conflict = await rejection(sdk.threads.runs.run(threadId, { message: userMessage("next"), userKey: USER }))
    expect(field(conflict, "error")).toMatchObject({ status: 409, currentRunId: runId })
    expect(server.cancels).toEqual([])
    write()
    await waitFor(() => server.cancels.length === 1)
    expect(server.cancels[0]).toMatchObject({ threadId, runId, reason: "connection_closed" })
    const events = await collect(await sdk.threads.runs.run(threadId, { message: userMessage("next"), previousRunId: runId, userKey: USER }))
    expect(types(events).at(-1)).toBe("RUN_FINISHED")
  })

  it("takes a DELETE meanwhile, which lets go of the lock at once", async () => {
    const { threadId, runId } = await leftWhileTheModelWorks()
    await expect(sdk.threads.runs.delete(runId, { threadId, userKey: USER })).resolves.toEqual({ runId, status: "cancelled" })
    expect(server.cancels.map((cancel) => cancel.reason)).toEqual(["user_cancelled"])
    const events = await collect(await sdk.threads.runs.run(threadId, { message: userMessage("next"), previousRunId: runId, userKey: USER }))
    expect(types(events).at(-1)).toBe("RUN_FINISHED")
  })

  it("notices a connection the run dropped itself at once", async () => {
    server.setScript([Script.text("a"), Script.drop()])
    const stream = await sdk.threads.runs.create({ message: userMessage("Hi"), thread: { userKey: USER } })
    expect(await rejection(collect(stream))).toBeInstanceOf(Error)
    await waitFor(() => server.cancels.length === 1)
    expect(server.cancels[0]).toMatchObject({ reason: "connection_closed" })
  })
})
