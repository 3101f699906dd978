// Tambo runs against an AG-UI agent (the scripted one, on loopback), through AgUi.layer: the
// SDK half of the differential tests sits beside each case, compared with runReference's
// conversation for the same script.
import { EventType } from "@ag-ui/core"
import * as http from "node:http"
import type * as net from "node:net"
import { describe, expect, it, vi } from "@effect/vitest"
import { AgUiAgent, HostileServer } from "@tambo-effect/testing"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as AgUi from "../src/AgUi.js"
import * as Tambo from "../src/Tambo.js"
import * as TamboError from "../src/TamboError.js"
import * as Tool from "../src/Tool.js"
import type * as Types from "../src/Types.js"
import { toAgUiMessages } from "../src/internal/agui/runAgentInput.js"
import { applyPatch, type Operation } from "../src/internal/jsonPatch.js"
import { type ReferenceTool, runReference } from "./agui/reference.js"
import { resetTool } from "./helpers.js"

const weatherParameters = { type: "object", properties: { city: { type: "string" } }, required: ["city"] }

/** The weather tool, recording each city it ran for. */
const weatherTool = () => {
  const cities: Array<string> = []
  const tool = Tool.make({
    name: "get_weather",
    description: "The weather in a city",
    input: Schema.Struct({ city: Schema.String }),
    execute: ({ city }) => Effect.sync(() => cities.push(city)).pipe(Effect.as(`sunny in ${city}`))
  })
  return { cities, tool }
}

const referenceWeather: ReferenceTool = {
  name: "get_weather",
  description: "The weather in a city",
  parameters: weatherParameters,
  execute: (args) => `sunny in ${(args as { city: string }).city}`
}

/** An agent's script: `steps` for a request without tool results, and "Done." once results come. */
const thenDone = (steps: (request: AgUiAgent.AgentRequest) => AgUiAgent.Script) =>
(request: AgUiAgent.AgentRequest): AgUiAgent.Script => request.toolResults.length === 0 ? steps(request) : [AgUiAgent.text("Done.")]

/** A MESSAGES_SNAPSHOT of the request's conversation and an assistant message making one call. */
const snapshotCalling = (request: AgUiAgent.AgentRequest, id: string, name: string, args: unknown) =>
  AgUiAgent.messagesSnapshot([
    ...request.input.messages,
    { id: "a1", role: "assistant", toolCalls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }] }
  ])

/** The thread's tool calls, in order. */
const toolUses = (thread: Types.TamboThread) => thread.messages.flatMap((m) => m.content.filter((block) => block.type === "tool_use"))

/**
 * The weather call `c1` ran once, with `city`: so the thread shows it, and the next request (its
 * messages: `sent`) sends it back with its result.
 */
const expectRanWith = (thread: Types.TamboThread, cities: ReadonlyArray<string>, sent: ReadonlyArray<unknown>, city: string) => {
  expect(toolUses(thread)).toMatchObject([{ id: "c1", input: { city } }])
  expect(cities).toEqual([city])
  expect(sent[1]).toMatchObject({ role: "assistant", toolCalls: [{ id: "c1", function: { arguments: JSON.stringify({ city }) } }] })
  expect(sent[2]).toMatchObject({ role: "tool", toolCallId: "c1", content: `sunny in ${city}` })
}

/** A run to its end: its events' types and the thread it ran on, from the store. */
/** The events of one call `c1` of `tool`, its arguments in one delta. */
const callC1 = (tool: string, args: string) => [
  AgUiAgent.event({ type: EventType.TOOL_CALL_START, toolCallId: "c1", toolCallName: tool }),
  AgUiAgent.event({ type: EventType.TOOL_CALL_ARGS, toolCallId: "c1", delta: args }),
  AgUiAgent.event({ type: EventType.TOOL_CALL_END, toolCallId: "c1" })
]

/** The message that answers call `c1` whose arguments were not valid JSON: its tool did not run. */
const answeredNotValidJson = { role: "tool", toolCallId: "c1", content: expect.stringContaining("not valid JSON") }

const runToEnd = (message: string) =>
  Effect.gen(function*() {
    const tambo = yield* Tambo.Tambo
    const events = Chunk.toReadonlyArray(yield* Stream.runCollect(tambo.run(message)))
    const threadId = events.at(-1)!.threadId
    const thread = (yield* tambo.state).threadMap[threadId]!.thread
    return { events, thread }
  })

/** Runs "hello", then "again" on its thread: the thread after the first, and what the second sent. */
const helloThenAgain = (agent: AgUiAgent.AgUiAgent) =>
  Effect.gen(function*() {
    const tambo = yield* Tambo.Tambo
    const { thread } = yield* runToEnd("hello")
    yield* Stream.runDrain(tambo.run("again", { threadId: thread.id }))
    return { thread, sent: agent.requests[1]!.input!.messages }
  })

/**
 * The conversation as AG-UI messages, normalised for the comparison with HttpAgent's: ids are
 * each side's own (the user's message, the tool result's), so they are left out; a string
 * content and one text part are the same text.
 */
const normalise = (messages: ReadonlyArray<unknown>) =>
  messages.map((message) => {
    const { id: _id, ...rest } = message as { readonly id: string; readonly content?: unknown }
    const content = rest.content
    return Array.isArray(content) && content.length === 1 && content[0].type === "text"
      ? { ...rest, content: content[0].text as string }
      : rest
  })

const sdkConversation = (messages: ReadonlyArray<Types.TamboThreadMessage>) =>
  normalise(Either.getOrThrow(toAgUiMessages(messages)))

/**
 * HttpAgent's conversation without the messages it keeps and this SDK does not: reasoning
 * (here the `reasoning` of the assistant message after it, compared through `reasoningOf`) and
 * activities (here run events only, compared as events).
 */
const referenceConversation = (messages: ReadonlyArray<{ readonly role: string }>) =>
  normalise(messages.filter((m) => m.role !== "reasoning" && m.role !== "activity"))

/** Each assistant message's reasoning, in order: HttpAgent's reasoning messages before it. */
const referenceReasoning = (messages: ReadonlyArray<{ readonly role: string; readonly content?: unknown }>) => {
  const out: Array<ReadonlyArray<unknown>> = []
  let pending: Array<unknown> = []
  for (const message of messages) {
    if (message.role === "reasoning") pending.push(message.content)
    if (message.role === "assistant") {
      out.push(pending)
      pending = []
    }
  }
  return out
}

const sdkReasoning = (messages: ReadonlyArray<Types.TamboThreadMessage>) =>
  messages.filter((m) => m.role === "assistant").map((m) => m.reasoning ?? [])

const hello = { id: "u1", role: "user", content: "hello" } as const

/**
 * A run of "hello" forked, once its first reply has ended (the agent then hangs with the request
 * open): the run's fiber and its thread.
 */
const forkUntilFirstReply = Effect.gen(function*() {
  const tambo = yield* Tambo.Tambo
  const seen = yield* Deferred.make<string>()
  const fiber = yield* tambo.run("hello").pipe(
    Stream.runForEach((e) => e.event.type === "TEXT_MESSAGE_END" ? Deferred.succeed(seen, e.threadId) : Effect.void),
    Effect.fork
  )
  return { tambo, fiber, threadId: yield* Deferred.await(seen) }
})

describe("AgUi.layer's options", () => {
  const build = (options: Partial<AgUi.Options>) =>
    Effect.flip(Effect.scoped(Layer.build(AgUi.layer({ url: "http://127.0.0.1:1/agent", ...options }))))

  it.effect("an agent URL that is not one is a ConfigError (InvalidUrl) when the layer is built, showing neither its password nor its query", () =>
    Effect.gen(function*() {
      const error = yield* build({ url: "http://user:PASSWORD@host:99999/agent?token=TOKEN" })
      expect(error).toMatchObject({ _tag: "ConfigError", reason: "InvalidUrl" })
      expect(error.message).toContain("http://host:99999/agent")
      expect(error.message).not.toMatch(/PASSWORD|TOKEN/)
    }))

  it.effect.each([
    ["firstByteTimeout", { firstByteTimeout: 0 }],
    ["idleTimeout", { idleTimeout: "soon" }],
    ["maxRetryAfter", { maxRetryAfter: -1 }],
    ["maxFrameBytes", { maxFrameBytes: 1.5 }]
  ] as const)("%s that is not positive is a ConfigError (InvalidOption) naming it, when the layer is built", ([name, options]) =>
    Effect.gen(function*() {
      const error = yield* build(options as Partial<AgUi.Options>)
      expect(error).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
      expect(error.message).toContain(name)
    }))

  it.effect.each([Infinity, -1, Number.NaN, 1.5])(
    "a maxRetries of %s (retrying forever, or silently never) is a ConfigError (InvalidOption) naming it, when the layer is built",
    (maxRetries) =>
      Effect.gen(function*() {
        const error = yield* build({ maxRetries })
        expect(error).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
        expect(error.message).toContain("maxRetries")
      })
  )
})

describe("AgUi.layer: Tambo runs against an AG-UI agent", () => {
  const withAgent = <A, E>(
    script: AgUiAgent.ScriptSource,
    f: (agent: AgUiAgent.AgUiAgent) => Effect.Effect<A, E, AgUi.Provided>,
    options: Partial<AgUi.Options> = {}
  ) =>
    Effect.scoped(Effect.gen(function*() {
      const agent = yield* AgUiAgent.scoped({ script })
      return yield* f(agent).pipe(Effect.provide(AgUi.layer({ url: agent.url, ...options })))
    }))

  it.live("a text reply: one run on a thread the client names, the reply in the store", () =>
    withAgent(AgUiAgent.scripts.text, (agent) =>
      Effect.gen(function*() {
        const { events, thread } = yield* runToEnd("hello")
        expect(thread.id).toMatch(/^thr_/)
        expect(events.map((e) => e.event.type)).toContain("RUN_FINISHED")
        expect(agent.requests).toHaveLength(1)
        const input = agent.requests[0]!.input!
        expect(input.threadId).toBe(thread.id)
        expect(input.messages).toEqual([{ id: expect.any(String), role: "user", content: "hello" }])
        expect(thread.messages.map((m) => [m.role, m.content])).toEqual([
          ["user", [{ type: "text", text: "hello" }]],
          ["assistant", [{ type: "text", text: "Hello, world." }]]
        ])
        // The differential half: the same conversation as HttpAgent's.
        const reference = yield* Effect.promise(() =>
          runReference({ url: agent.url, messages: [{ id: "u1", role: "user", content: "hello" }] })
        )
        expect(sdkConversation(thread.messages)).toEqual(normalise(reference.messages))
      })))

  // Pins the run loop's hook (conversationFromStore): the user's message is in the store, and so
  // in the conversation, before the request reads it.
  it.live("a second message on the thread sends the whole conversation once", () =>
    withAgent(AgUiAgent.scripts.text, (agent) =>
      Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const { thread } = yield* runToEnd("hello")
        yield* Stream.runDrain(tambo.run("again", { threadId: thread.id }))
        const input = agent.requests[1]!.input!
        expect(input.threadId).toBe(thread.id)
        expect(input.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"])
        expect(input.messages.at(-1)).toMatchObject({ role: "user", content: "again" })
      })))

  it.live("a frontend tool round: the tool runs once, the next run carries its result, the reply uses it", () => {
    const { cities, tool } = weatherTool()
    return withAgent(AgUiAgent.scripts.frontendTool, (agent) =>
      Effect.gen(function*() {
        const { thread } = yield* runToEnd("hello")
        expect(cities).toEqual(["Paris"])
        expect(agent.requests).toHaveLength(2)
        const second = agent.requests[1]!.input!
        expect(second.threadId).toBe(thread.id)
        expect(second.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"])
        expect(second.messages.at(-1)).toMatchObject({ role: "tool", toolCallId: "call-1-0", content: "sunny in Paris" })
        expect(second.tools.map((t) => t.name)).toEqual(["get_weather"])
        const last = thread.messages.at(-1)!
        expect(last.content).toEqual([{ type: "text", text: "The weather in Paris: sunny in Paris." }])
        // The differential half. Normalised: ids (the user's message and the tool result's are each
        // side's own).
        const reference = yield* Effect.promise(() =>
          runReference({ url: agent.url, messages: [{ id: "u1", role: "user", content: "hello" }], tools: [referenceWeather] })
        )
        expect(sdkConversation(thread.messages)).toEqual(normalise(reference.messages))
      }), { tools: [tool] })
  })

  it.live("AG-UI 1.0 chunk events: expanded as HttpAgent does, a tool round told in chunks runs once", () => {
    const { cities, tool } = weatherTool()
    return withAgent(AgUiAgent.scripts.chunks, (agent) =>
      Effect.gen(function*() {
        const { events, thread } = yield* runToEnd("hello")
        expect(cities).toEqual(["Paris"])
        expect(agent.requests).toHaveLength(2)
        expect(events.map((e) => e.event.type).filter((type) => type.startsWith("TOOL_CALL"))).toEqual([
          "TOOL_CALL_START",
          "TOOL_CALL_ARGS",
          "TOOL_CALL_ARGS",
          "TOOL_CALL_END"
        ])
        expect(thread.messages.at(-1)!.content).toEqual([{ type: "text", text: "The weather in Paris: sunny in Paris." }])
        // The differential half: the conversation HttpAgent ends with.
        const reference = yield* Effect.promise(() =>
          runReference({ url: agent.url, messages: [{ id: "u1", role: "user", content: "hello" }], tools: [referenceWeather] })
        )
        expect(reference.toolCalls.map((call) => call.args)).toEqual([{ city: "Paris" }])
        expect(sdkConversation(thread.messages)).toEqual(normalise(reference.messages))
      }), { tools: [tool] })
  })

  it.live("a server-side tool's result is shown and never run", () => {
    const ran: Array<unknown> = []
    const search = Tool.make({
      name: "search",
      description: "Searches",
      input: Schema.Struct({ query: Schema.String }),
      execute: (args) => Effect.sync(() => ran.push(args)).pipe(Effect.as("local"))
    })
    return withAgent(AgUiAgent.scripts.serverTool, (agent) =>
      Effect.gen(function*() {
        const { thread } = yield* runToEnd("hello")
        expect(ran).toEqual([])
        expect(agent.requests).toHaveLength(1)
        const results = thread.messages.flatMap((m) => m.content.filter((c) => c.type === "tool_result"))
        expect(results).toHaveLength(1)
        expect(JSON.stringify(results[0])).toContain("3 results")
        const reference = yield* Effect.promise(() =>
          runReference({ url: agent.url, messages: [{ id: "u1", role: "user", content: "hello" }] })
        )
        expect(sdkConversation(thread.messages)).toEqual(normalise(reference.messages))
      }), { tools: [search] })
  })

  it.live("RUN_ERROR fails the run with an ApiError carrying the agent's message and code", () =>
    withAgent(AgUiAgent.scripts.runError, (agent) =>
      Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const error = yield* Stream.runDrain(tambo.run("hello")).pipe(Effect.flip)
        expect(error).toMatchObject({
          _tag: "ApiError",
          reason: "RunError",
          message: "The model is unavailable",
          code: "MODEL_UNAVAILABLE"
        })
        // The differential half: the conversation up to the error is HttpAgent's too.
        const state = yield* tambo.state
        const thread = Object.values(state.threadMap).find((t) => t.thread.id.startsWith("thr_"))!.thread
        const reference = yield* Effect.promise(() =>
          runReference({ url: agent.url, messages: [{ id: "u1", role: "user", content: "hello" }] })
        )
        expect(reference.runError).toEqual({ message: "The model is unavailable", code: "MODEL_UNAVAILABLE" })
        expect(sdkConversation(thread.messages)).toEqual(normalise(reference.messages))
      })))

  it.live("interrupting a run aborts its request: the agent sees the connection close", () =>
    withAgent([AgUiAgent.text("Starting."), AgUiAgent.hang()], (agent) =>
      Effect.gen(function*() {
        // The first reply's end arrived: the request is open, the agent hangs.
        const { fiber } = yield* forkUntilFirstReply
        yield* Fiber.interrupt(fiber)
        expect(yield* Effect.promise(() => agent.requests[0]!.ended)).toBe("closed")
      })))

  it.live("the Tambo API's other calls fail with an ApiError saying an AG-UI agent does not offer them", () =>
    withAgent(AgUiAgent.scripts.text, () =>
      Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const failures = yield* Effect.all([
          Effect.flip(tambo.listThreads()),
          Effect.flip(tambo.fetchThread("thr_x")),
          Effect.flip(tambo.updateThreadName("thr_x", "name")),
          Effect.flip(tambo.deleteThread("thr_x")),
          Effect.flip(tambo.generateThreadName("thr_x")),
          Effect.flip(tambo.listSuggestions("thr_x", "msg_x"))
        ])
        for (const error of failures) {
          expect(error).toMatchObject({ _tag: "ApiError", reason: "BadRequest", code: "NOT_SUPPORTED_BY_AG_UI_AGENT" })
          expect(error.message).toContain("An AG-UI agent does not offer")
        }
      })))
  it.live("deleteThread of a thread an agent's run streams on fails as not offered, and the run goes on", () =>
    withAgent([AgUiAgent.text("Starting."), AgUiAgent.hang()], (agent) =>
      Effect.gen(function*() {
        const { fiber, tambo, threadId } = yield* forkUntilFirstReply
        const error = yield* Effect.flip(tambo.deleteThread(threadId))
        expect(error).toMatchObject({ _tag: "ApiError", code: "NOT_SUPPORTED_BY_AG_UI_AGENT" })
        // Nothing else happened: the run still streams, its request open, its thread in the store.
        expect(fiber.unsafePoll()).toBeNull()
        expect((yield* tambo.state).threadMap[threadId]).toBeDefined()
        expect(agent.requests).toHaveLength(1)
        yield* Fiber.interrupt(fiber)
        expect(yield* Effect.promise(() => agent.requests[0]!.ended)).toBe("closed")
      })))

  it.live("cancelRun ends the run with RunCancelledError and aborts its request", () =>
    withAgent([AgUiAgent.text("Starting."), AgUiAgent.hang()], (agent) =>
      Effect.gen(function*() {
        const { fiber, tambo, threadId } = yield* forkUntilFirstReply
        yield* tambo.cancelRun(threadId)
        const error = yield* Fiber.join(fiber).pipe(Effect.flip)
        expect(error._tag).toBe("RunCancelledError")
        expect(yield* Effect.promise(() => agent.requests[0]!.ended)).toBe("closed")
      })))

  it.live("an agent whose RUN_STARTED names a thread of its own: the run stays on the thread it was sent for, the reply after the message", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      // An agent that makes up a thread id for every run instead of the one it was sent.
      const ownThread = (n: number) =>
        HostileServer.frames([
          JSON.stringify({ type: "RUN_STARTED", threadId: `agents_thread_${n}`, runId: `agents_run_${n}` }),
          JSON.stringify({ type: "TEXT_MESSAGE_START", messageId: `reply_${n}`, role: "assistant" }),
          JSON.stringify({ type: "TEXT_MESSAGE_CONTENT", messageId: `reply_${n}`, delta: `reply ${n}` }),
          JSON.stringify({ type: "TEXT_MESSAGE_END", messageId: `reply_${n}` }),
          JSON.stringify({ type: "RUN_FINISHED", threadId: `agents_thread_${n}`, runId: `agents_run_${n}` })
        ])
      yield* Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const sent: Array<string> = []
        const sentThread = () => {
          for (const request of server.requests) sent.push((JSON.parse(request.body) as { readonly threadId: string }).threadId)
        }
        server.respond(ownThread(1))
        const first = yield* runToEnd("hello")
        sentThread()
        server.respond(ownThread(2))
        const second = Chunk.toReadonlyArray(yield* Stream.runCollect(tambo.run("again", { threadId: first.thread.id })))
        sentThread()
        expect(sent).toEqual([first.thread.id, first.thread.id])
        expect(first.thread.id).toMatch(/^thr_/)
        expect(second.every((e) => e.threadId === first.thread.id)).toBe(true)
        const threads = Object.keys((yield* tambo.state).threadMap).filter((id) => id !== "placeholder")
        expect(threads).toEqual([first.thread.id])
        const thread = (yield* tambo.state).threadMap[first.thread.id]!.thread
        expect(thread.messages.map((m) => [m.role, m.content.map((c) => c.type === "text" ? c.text : c.type).join("")]))
          .toEqual([["user", "hello"], ["assistant", "reply 1"], ["user", "again"], ["assistant", "reply 2"]])
      }).pipe(Effect.provide(AgUi.layer({ url: server.url })))
    })))

  // Was an ApiError (BadRequest, INVALID_AG_UI_INPUT) while AgUiError was internal.
  it.live("a conversation that cannot be sent fails the run with an AgUiError (InvalidInput) before any request", () =>
    withAgent(AgUiAgent.scripts.text, (agent) =>
      Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const error = yield* Stream.runDrain(tambo.run("hello", { additionalContext: { page: { size: 1n } } })).pipe(
          Effect.flip
        )
        expect(error).toBeInstanceOf(TamboError.AgUiError)
        expect(error).toMatchObject({ _tag: "AgUiError", reason: "InvalidInput" })
        expect(error.message).toContain("cannot be sent")
        expect(agent.requests).toHaveLength(0)
      })))

  it.live.each([
    ["the run's additionalContext", { additionalContext: { page: { size: 1n } } }, "hello"],
    ["the message's metadata", {}, { role: "user", content: [{ type: "text", text: "hello" }], metadata: { n: 1n } }]
  ] as const)("%s that cannot be sent: an AgUiError (InvalidInput), the user's message not recorded, the next run fine", ([, options, message]) =>
    withAgent(AgUiAgent.scripts.text, (agent) =>
      Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const error = yield* Stream.runDrain(tambo.run(message, options)).pipe(Effect.flip)
        expect(error).toMatchObject({ _tag: "AgUiError", reason: "InvalidInput" })
        expect(agent.requests).toHaveLength(0)
        const messages = Object.values((yield* tambo.state).threadMap).flatMap((t) => t.thread.messages)
        expect(messages).toEqual([])
        const next = yield* runToEnd("again")
        expect(next.thread.messages.map((m) => m.role)).toEqual(["user", "assistant"])
      })))

  it.live("a context helper whose value cannot be sent fails the run with a CallbackError naming it before any request", () =>
    withAgent(AgUiAgent.scripts.text, (agent) =>
      Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const error = yield* Stream.runDrain(tambo.run("hello")).pipe(Effect.flip)
        expect(error).toMatchObject({ _tag: "CallbackError", reason: "ContextHelper", helper: "page" })
        expect(error.message).toContain("cannot be sent as JSON")
        expect(agent.requests).toHaveLength(0)
      }), { contextHelpers: { page: () => ({ size: 1n }) } }))

  // Was refused (ApiError NOT_SUPPORTED_BY_AG_UI_AGENT) before AG-UI runs took them.
  it.live("initialMessages open a new thread: sent before the user's message, and the thread's first messages in the store", () =>
    withAgent(AgUiAgent.scripts.text, (agent) =>
      Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const seed: ReadonlyArray<Types.InitialInputMessage> = [
          { role: "system", content: [{ type: "text", text: "You are a terse assistant." }] },
          { role: "assistant", content: [{ type: "text", text: "Hi! Ask me anything." }] }
        ]
        const events = Chunk.toReadonlyArray(yield* Stream.runCollect(tambo.run("hello", { initialMessages: seed })))
        const threadId = events.at(-1)!.threadId
        expect(agent.requests[0]!.input!.messages.map((m) => [m.role, m.content])).toEqual([
          ["system", "You are a terse assistant."],
          ["assistant", "Hi! Ask me anything."],
          ["user", "hello"]
        ])
        // As the Tambo path shows them once reconciled with the server's thread.
        const thread = (yield* tambo.state).threadMap[threadId]!.thread
        expect(thread.messages.map((m) => [m.role, m.content])).toEqual([
          ["system", [{ type: "text", text: "You are a terse assistant." }]],
          ["assistant", [{ type: "text", text: "Hi! Ask me anything." }]],
          ["user", [{ type: "text", text: "hello" }]],
          ["assistant", [{ type: "text", text: "Hello, world." }]]
        ])
        // On a thread that exists they are not sent again (as the Tambo API ignores them there).
        yield* Stream.runDrain(tambo.run("again", { threadId, initialMessages: seed }))
        expect(agent.requests[1]!.input!.messages.map((m) => m.role)).toEqual([
          "system",
          "assistant",
          "user",
          "assistant",
          "user"
        ])
        // The differential half: HttpAgent given the same conversation to start with.
        const reference = yield* Effect.promise(() =>
          runReference({
            url: agent.url,
            messages: [
              { id: "s1", role: "system", content: "You are a terse assistant." },
              { id: "a1", role: "assistant", content: "Hi! Ask me anything." },
              { id: "u1", role: "user", content: "hello" }
            ]
          })
        )
        expect(sdkConversation(thread.messages)).toEqual(normalise(reference.messages))
      })))

  it.live("a new conversation whose first run was refused takes its initialMessages once: the next run there sends them first and only first, without the refused message", () =>
    withAgent(
      (_request, { runIndex }) => runIndex === 0 ? [AgUiAgent.httpError(500, { message: "down" })] : [AgUiAgent.text("Here.")],
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const seed: ReadonlyArray<Types.InitialInputMessage> = [
            { role: "system", content: [{ type: "text", text: "You are a terse assistant." }] }
          ]
          const failed = yield* Effect.either(Stream.runDrain(tambo.run("hello", { initialMessages: seed })))
          expect(Either.isLeft(failed) && failed.left._tag).toBe("ApiError")
          const events = Chunk.toReadonlyArray(yield* Stream.runCollect(tambo.run("again", { initialMessages: seed })))
          expect(agent.requests[1]!.input!.messages.map((m) => [m.role, m.content])).toEqual([
            ["system", "You are a terse assistant."],
            ["user", "again"]
          ])
          const thread = (yield* tambo.state).threadMap[events.at(-1)!.threadId]!.thread
          expect(thread.messages.map((m) => m.role)).toEqual(["system", "user", "assistant"])
        })
    ))

  // The agent may keep its own copy of the conversation by message id (LangGraph's does): a
  // message must not change its id between runs. A new thread's first request once named the
  // user's message after its run, and the store (so every later request) otherwise.
  it.live("a new thread's first request sends its messages under the ids every later request sends", () =>
    withAgent(AgUiAgent.scripts.text, (agent) =>
      Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const seed: ReadonlyArray<Types.InitialInputMessage> = [
          { role: "system", content: [{ type: "text", text: "You are a terse assistant." }] }
        ]
        const events = Chunk.toReadonlyArray(yield* Stream.runCollect(tambo.run("hello", { initialMessages: seed })))
        const threadId = events.at(-1)!.threadId
        yield* Stream.runDrain(tambo.run("again", { threadId }))
        const first = agent.requests[0]!.input!.messages
        expect(agent.requests[1]!.input!.messages.slice(0, first.length)).toEqual(first)
        const thread = (yield* tambo.state).threadMap[threadId]!.thread
        expect(first.map((m) => m.id)).toEqual(thread.messages.slice(0, 2).map((m) => m.id))
      })))

  // The Tambo API's recovery (read the server's thread, send again with its last run) means
  // nothing to an agent, which keeps no thread: it once ended in NOT_SUPPORTED_BY_AG_UI_AGENT.
  it.live("an agent's error that carries a Tambo API code fails the run with that error, sent once", () =>
    Effect.forEach(["INVALID_PREVIOUS_RUN", "MISSING_RESULTS", "EXTRA_RESULTS"], (code) =>
      withAgent(
        (_request, { runIndex }) =>
          runIndex === 0 ? [AgUiAgent.text("Hi.")] : [AgUiAgent.httpError(400, { code, message: "refused" })],
        (agent) =>
          Effect.gen(function*() {
            const tambo = yield* Tambo.Tambo
            const { events } = yield* runToEnd("hello")
            const threadId = events.at(-1)!.threadId
            const failed = yield* Effect.flip(Stream.runDrain(tambo.run("again", { threadId })))
            expect(failed).toMatchObject({ _tag: "ApiError", reason: "BadRequest", code, message: "refused" })
            expect(agent.requests).toHaveLength(2)
          })
      ), { discard: true }))

  // A call in the conversation that nothing answers is one an agent refuses or trips on.
  it.live("a run that fails after the agent called a tool leaves the call pending; the next run answers it as cancelled", () => {
    const { cities, tool } = weatherTool()
    return withAgent(
      (request) =>
        request.lastUserText === "hello"
          ? [AgUiAgent.text("Let me check."), AgUiAgent.toolCall("get_weather", { city: "Paris" }, { id: "c1" }), AgUiAgent.runError("Overloaded")]
          : [AgUiAgent.text("Sorry about that.")],
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const failed = yield* Effect.either(Stream.runCollect(tambo.run("hello")))
          expect(Either.isLeft(failed) && failed.left._tag).toBe("ApiError")
          const threadId = agent.requests[0]!.input!.threadId
          expect((yield* tambo.state).threadMap[threadId]!.pendingToolCalls).toEqual([{ toolCallId: "c1", toolName: "get_weather" }])
          yield* Stream.runDrain(tambo.run("again", { threadId }))
          expect(cities).toEqual([])
          expect(agent.requests[1]!.input!.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"])
          expect(agent.requests[1]!.input!.messages[2]).toMatchObject({ toolCallId: "c1", content: expect.stringContaining("cancelled") })
          expect((yield* tambo.state).threadMap[threadId]!.pendingToolCalls).toEqual([])
        }),
      { tools: [tool] }
    )
  })

  // The round's next request sent the other call without a result, which agents refuse.
  it.live("a step that calls a client tool and one the client did not offer: the round answers both, the unknown one as a failure", () => {
    const { cities, tool } = weatherTool()
    return withAgent(
      thenDone(() => [AgUiAgent.toolCall("get_weather", { city: "Paris" }, { id: "c1" }), AgUiAgent.toolCall("lookup", { q: "x" }, { id: "c2" })]),
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const { thread } = yield* runToEnd("hello")
          expect(cities).toEqual(["Paris"])
          const sent = agent.requests[1]!.input!.messages
          expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool"])
          expect(sent.slice(2)).toMatchObject([
            { toolCallId: "c1", content: "sunny in Paris" },
            { toolCallId: "c2", error: expect.stringContaining("lookup") }
          ])
          expect((yield* tambo.state).threadMap[thread.id]!.pendingToolCalls).toEqual([])
        }),
      { tools: [tool] }
    )
  })

  // Sent back without a result, such a call made every later request one an agent refuses.
  it.live.each([
    ["a call of a tool the client did not offer", (_request: AgUiAgent.AgentRequest) => [
      AgUiAgent.text("Let me look."),
      AgUiAgent.toolCall("lookup", { q: "x" }, { id: "c1" })
    ]],
    ["a MESSAGES_SNAPSHOT holding a call it never streamed", (request: AgUiAgent.AgentRequest) => [
      snapshotCalling(request, "c1", "get_weather", { city: "Paris" })
    ]],
    ["a MESSAGES_SNAPSHOT in the run after the tool round that leaves out the result it was sent", (request: AgUiAgent.AgentRequest) =>
      request.toolResults.length === 0
        ? [AgUiAgent.toolCall("get_weather", { city: "Paris" }, { id: "c1" })]
        : [AgUiAgent.messagesSnapshot(request.input.messages.filter((m) => m.role !== "tool")), AgUiAgent.text("Done.")]]
  ] as const)("a finished run that leaves a call without a result (%s): the call is pending, and the next message answers it as cancelled", ([, first]) => {
    const { tool } = weatherTool()
    return withAgent(
      (request) => request.lastUserText === "hello" ? first(request) : [AgUiAgent.text("Hi again.")],
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const { thread } = yield* runToEnd("hello")
          expect((yield* tambo.state).threadMap[thread.id]!.pendingToolCalls).toMatchObject([{ toolCallId: "c1" }])
          const before = agent.requests.length
          yield* Stream.runDrain(tambo.run("again", { threadId: thread.id }))
          const sent = agent.requests[before]!.input!.messages
          expect(sent.slice(-2)).toMatchObject([
            { role: "tool", toolCallId: "c1", content: expect.stringContaining("cancelled") },
            { role: "user", content: "again" }
          ])
          expect(sent.filter((m) => m.role === "tool" && m.toolCallId === "c1")).toHaveLength(1)
          expect((yield* tambo.state).threadMap[thread.id]!.pendingToolCalls).toEqual([])
        }),
      { tools: [tool] }
    )
  })

  // A result for a call the conversation no longer holds is one no run can send.
  // A snapshot is the conversation by message id (HttpAgent keys it so: a later message under an
  // id replaces the earlier one); two messages under one id were once both kept, and sent back so.
  it.live("a MESSAGES_SNAPSHOT with two messages under one id keeps the last, where the first stood; the next request sends the store's conversation, and an anomaly says so", () =>
    withAgent(
      (request) =>
        request.lastUserText === "hello"
          ? [AgUiAgent.messagesSnapshot([
            ...request.input.messages,
            { id: "a1", role: "assistant", content: "first" },
            { id: "a2", role: "assistant", content: "between" },
            { id: "a1", role: "assistant", content: "second" }
          ])]
          : [AgUiAgent.text("Again.")],
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const { thread } = yield* runToEnd("hello")
          expect(thread.messages.map((m) => [m.id, m.content])).toEqual([
            [thread.messages[0]!.id, [{ type: "text", text: "hello" }]],
            ["a1", [{ type: "text", text: "second" }]],
            ["a2", [{ type: "text", text: "between" }]]
          ])
          const anomalies = (yield* tambo.state).threadMap[thread.id]!.anomalies
          expect(anomalies.map((a) => [a.eventType, a.reason])).toEqual([["MESSAGES_SNAPSHOT", "message a1 appears more than once: the last is kept"]])
          yield* Stream.runDrain(tambo.run("again", { threadId: thread.id }))
          const sent = agent.requests[1]!.input!.messages
          expect(sent.map((m) => m.id)).toEqual([...thread.messages.map((m) => m.id), expect.any(String)])
          expect(sent.slice(1, 3)).toMatchObject([{ id: "a1", content: "second" }, { id: "a2", content: "between" }])
          expect(sdkConversation(thread.messages)).toEqual(normalise(sent.slice(0, 3)))
        })
    ))

  it.live("a MESSAGES_SNAPSHOT that leaves out the run's call of a client tool: the tool is not run, the run finishes, and the thread takes the next message", () => {
    const { cities, tool } = weatherTool()
    return withAgent(
      (request) =>
        request.lastUserText === "hello"
          ? [
            AgUiAgent.toolCall("get_weather", { city: "Paris" }, { id: "c1" }),
            AgUiAgent.messagesSnapshot(request.input.messages)
          ]
          : [AgUiAgent.text("Hi again.")],
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const { thread } = yield* runToEnd("hello")
          expect(cities).toEqual([])
          expect(agent.requests).toHaveLength(1)
          expect((yield* tambo.state).threadMap[thread.id]!.pendingToolCalls).toEqual([])
          yield* Stream.runDrain(tambo.run("again", { threadId: thread.id }))
          expect(agent.requests[1]!.input!.messages.map((m) => m.role)).toEqual(["user", "user"])
          expect((yield* tambo.state).threadMap[thread.id]!.thread.messages.at(-1)!.content).toEqual([
            { type: "text", text: "Hi again." }
          ])
        }),
      { tools: [tool] }
    )
  })

  // An agent that breaks AG-UI's rules: RUN_FINISHED while a call is open. The call is closed
  // there with its whole arguments, so the thread, the tool and the next request see all of them.
  it.live("a call left open at RUN_FINISHED runs with all its arguments, which the thread shows and sends back", () => {
    const { cities, tool } = weatherTool()
    const city = `${"P".repeat(9000)}aris`
    const frame = (event: unknown) => `data: ${JSON.stringify(event)}\n\n`
    // The last arguments are held until the run's consumer saw the first ones: two reads.
    let release!: () => void
    const released = new Promise<void>((resolve) => release = resolve)
    const bodies: Array<{ readonly threadId: string; readonly runId: string; readonly messages: ReadonlyArray<unknown> }> = []
    return Effect.gen(function*() {
      const server = yield* Effect.acquireRelease(
        Effect.async<http.Server>((resume) => {
          const created = http.createServer((request, response) => {
            let body = ""
            request.on("data", (data: Buffer) => body += data.toString())
            request.on("end", () => {
              const input = JSON.parse(body) as (typeof bodies)[number]
              bodies.push(input)
              const { runId, threadId } = input
              response.writeHead(200, { "content-type": "text/event-stream" })
              response.write(frame({ type: "RUN_STARTED", threadId, runId }))
              if (bodies.length > 1) {
                response.write(frame({ type: "TEXT_MESSAGE_START", messageId: "m2", role: "assistant" }))
                response.write(frame({ type: "TEXT_MESSAGE_CONTENT", messageId: "m2", delta: "Done." }))
                response.write(frame({ type: "TEXT_MESSAGE_END", messageId: "m2" }))
                response.end(frame({ type: "RUN_FINISHED", threadId, runId }))
                return
              }
              response.write(frame({ type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "get_weather" }))
              response.write(frame({ type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: `{"city":"${city.slice(0, 9000)}` }))
              void released.then(() => {
                response.write(frame({ type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: `${city.slice(9000)}"}` }))
                response.end(frame({ type: "RUN_FINISHED", threadId, runId }))
              })
            })
          })
          created.listen(0, "127.0.0.1", () => resume(Effect.succeed(created)))
        }),
        (created) =>
          Effect.async<void>((resume) => {
            release()
            created.closeAllConnections()
            created.close(() => resume(Effect.void))
          })
      )
      const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/agent`
      yield* Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const events = yield* Stream.runCollect(tambo.run("hello").pipe(Stream.tap((event) =>
          Effect.sync(() => {
            if (event.event.type === "TOOL_CALL_ARGS") release()
          })
        )))
        const threadId = Chunk.toReadonlyArray(events).at(-1)!.threadId
        const thread = (yield* tambo.state).threadMap[threadId]!.thread
        expectRanWith(thread, cities, bodies[1]!.messages, city)
      }).pipe(Effect.provide(AgUi.layer({ url, tools: [tool] })))
    }).pipe(Effect.scoped)
  })

  // An agent that breaks AG-UI's rules: RUN_FINISHED while a text message and a call are open,
  // the call's arguments cut short. The tool does not run on what arrived: the agent is told the
  // arguments are not valid JSON, and nothing shows as streaming once the thread is idle.
  it.live("a call left open at RUN_FINISHED with arguments cut short is not run: its result says they are not valid JSON, the text stays, the thread ends idle", () => {
    const { cities, tool } = weatherTool()
    return withAgent(
      thenDone(() => [
        AgUiAgent.event({ type: EventType.TEXT_MESSAGE_START, messageId: "m1", role: "assistant" }),
        AgUiAgent.event({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m1", delta: "Let me check." }),
        AgUiAgent.event({ type: EventType.TOOL_CALL_START, toolCallId: "c1", toolCallName: "get_weather", parentMessageId: "m1" }),
        AgUiAgent.event({ type: EventType.TOOL_CALL_ARGS, toolCallId: "c1", delta: "{\"city\":\"Pa" })
      ]),
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const { thread } = yield* runToEnd("hello")
          expect(cities).toEqual([])
          expect(agent.requests).toHaveLength(2)
          const sent = agent.requests[1]!.input!.messages
          expect(sent[1]).toMatchObject({ role: "assistant", content: "Let me check.", toolCalls: [{ id: "c1" }] })
          expect(sent[2]).toMatchObject(answeredNotValidJson)
          expect(thread.messages[1]!.content[0]).toEqual({ type: "text", text: "Let me check." })
          expect(thread.status).toBe("idle")
          const state = (yield* tambo.state).threadMap[thread.id]!
          expect(state.streaming.status).toBe("idle")
          expect(state.streaming.messageId).toBeUndefined()
          expect(state.internal.toolArgs.size).toBe(0)
          expect(state.pendingToolCalls).toEqual([])
        }),
      { tools: [tool] }
    )
  })

  it.live("a call whose TOOL_CALL_END closes arguments that are not valid JSON is not run: its result says so, and the thread shows what they parse to", () => {
    const { cities, tool } = weatherTool()
    return withAgent(
      thenDone(() => callC1("get_weather", "{\"city\":\"Pa")),
      (agent) =>
        Effect.gen(function*() {
          const { thread } = yield* runToEnd("hello")
          expect(cities).toEqual([])
          expect(toolUses(thread)).toMatchObject([{ id: "c1", input: { city: "Pa" } }])
          expect(agent.requests).toHaveLength(2)
          expect(agent.requests[1]!.input!.messages[2]).toMatchObject(answeredNotValidJson)
          expect(thread.status).toBe("idle")
        }),
      { tools: [tool] }
    )
  })

  it.live("a call with blank arguments of a tool that needs approval is asked about with {}, runs once approved, and leaves no anomaly", () => {
    const { reset, resets } = resetTool()
    return withAgent(
      thenDone(() => callC1("reset", " \n")),
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const asked: Array<unknown> = []
          const events = yield* Stream.runCollect(tambo.run("hello", {
            onApproval: (call) => {
              asked.push(call.args)
              return Promise.resolve({ approved: true } as const)
            }
          }))
          expect(asked).toEqual([{}])
          expect(resets).toEqual([{}])
          const state = (yield* tambo.state).threadMap[Chunk.toReadonlyArray(events).at(-1)!.threadId]!
          expect(toolUses(state.thread)).toMatchObject([{ id: "c1", input: {} }])
          expect(state.anomalies).toEqual([])
          expect(agent.requests).toHaveLength(2)
          expect(agent.requests[1]!.input!.messages[2]).toMatchObject({ role: "tool", toolCallId: "c1", content: "reset done" })
        }),
      { tools: [reset] }
    )
  })

  // The Tambo API refuses a continuation that leaves a pending call unanswered (400
  // MISSING_RESULTS); the agent was once sent the other call with no result, which stayed pending.
  it.live("continueRun with results for some of the pending calls only: the API's ApiError (MISSING_RESULTS), nothing recorded or sent, and a complete continueRun goes on", () => {
    const { cities, tool } = weatherTool()
    return withAgent(
      thenDone(() => [
        AgUiAgent.toolCall("get_weather", { city: "Oslo" }, { id: "c1" }),
        AgUiAgent.toolCall("get_weather", { city: "Rome" }, { id: "c2" })
      ]),
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const events = Chunk.toReadonlyArray(yield* Stream.runCollect(tambo.run("hello", { autoExecuteTools: false })))
          const threadId = events.at(-1)!.threadId
          const before = (yield* tambo.state).threadMap[threadId]!
          const refused = yield* Effect.flip(Stream.runDrain(tambo.continueRun(threadId, [{ toolCallId: "c1", result: "cold" }])))
          expect(refused).toMatchObject({ _tag: "ApiError", reason: "BadRequest", status: 400, code: "MISSING_RESULTS", retryable: false })
          expect(refused.message).toBe("Missing tool results for pending tool calls: c2")
          expect(agent.requests).toHaveLength(1)
          expect((yield* tambo.state).threadMap[threadId]).toEqual(before)
          yield* Stream.runDrain(tambo.continueRun(threadId, [{ toolCallId: "c2", result: "warm" }, { toolCallId: "c1", result: "cold" }]))
          expect(agent.requests[1]!.input!.messages.slice(2)).toMatchObject([
            { role: "tool", toolCallId: "c2", content: "warm" },
            { role: "tool", toolCallId: "c1", content: "cold" }
          ])
          expect((yield* tambo.state).threadMap[threadId]!.pendingToolCalls).toEqual([])
          expect(cities).toEqual([])
        }),
      { tools: [tool] }
    )
  })

  it.live("continueRun with a result given twice sends the call its last result once; one for a call not pending is a ToolError, nothing sent", () => {
    const { tool } = weatherTool()
    return withAgent(
      thenDone(() => [AgUiAgent.toolCall("get_weather", { city: "Oslo" }, { id: "c1" })]),
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const events = Chunk.toReadonlyArray(yield* Stream.runCollect(tambo.run("hello", { autoExecuteTools: false })))
          const threadId = events.at(-1)!.threadId
          const unknown = yield* Effect.flip(Stream.runDrain(tambo.continueRun(threadId, [{ toolCallId: "c1", result: "cold" }, { toolCallId: "c9", result: "x" }])))
          expect(unknown).toMatchObject({ _tag: "ToolError", reason: "UnknownToolCall", toolCallId: "c9" })
          expect(agent.requests).toHaveLength(1)
          yield* Stream.runDrain(tambo.continueRun(threadId, [{ toolCallId: "c1", result: "first" }, { toolCallId: "c1", result: "second" }]))
          expect(agent.requests[1]!.input!.messages.slice(2)).toMatchObject([{ role: "tool", toolCallId: "c1", content: "second" }])
          expect(agent.requests[1]!.input!.messages).toHaveLength(3)
          const thread = (yield* tambo.state).threadMap[threadId]!.thread
          const results = thread.messages.flatMap((m) => m.content.filter((block) => block.type === "tool_result"))
          expect(results).toMatchObject([{ toolUseId: "c1", content: [{ type: "text", text: "second" }] }])
        }),
      { tools: [tool] }
    )
  })

  it.live("a call whose arguments are not valid JSON, left for the app to run: getPendingToolCalls says so with their text, as the run's last event does", () => {
    const { cities, tool } = weatherTool()
    return withAgent(
      thenDone(() => callC1("get_weather", "{\"city\":\"Pa")),
      () =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const events = Chunk.toReadonlyArray(yield* Stream.runCollect(tambo.run("hello", { autoExecuteTools: false })))
          const last = events.at(-1)!
          const paused = last.event.type === "CLIENT_AWAITING_TOOL_RESULTS" ? last.event.pendingToolCalls : []
          expect(paused).toMatchObject([{ toolCallId: "c1", args: "{\"city\":\"Pa", error: expect.any(String) }])
          const pending = yield* tambo.getPendingToolCalls(last.threadId)
          expect(pending).toMatchObject([{ toolCallId: "c1", args: "{\"city\":\"Pa", error: expect.any(String) }])
          expect(cities).toEqual([])
        }),
      { tools: [tool] }
    )
  })

  it.live("a call whose arguments ended not valid JSON is not run when the agent starts its run again before RUN_FINISHED", () => {
    const { cities, tool } = weatherTool()
    return withAgent(
      thenDone((request) => [
        ...callC1("get_weather", "{\"city\":\"Pa"),
        AgUiAgent.event({ type: EventType.RUN_STARTED, threadId: request.input.threadId, runId: request.input.runId } as never)
      ]),
      (agent) =>
        Effect.gen(function*() {
          yield* runToEnd("hello")
          expect(cities).toEqual([])
          expect(agent.requests).toHaveLength(2)
          expect(agent.requests[1]!.input!.messages.at(-1)).toMatchObject(answeredNotValidJson)
        }),
      { tools: [tool] }
    )
  })

  it.live.each([
    [
      "started twice in one message",
      [
        ...callC1("get_weather", "{\"city\":\"Paris\"}"),
        ...callC1("get_weather", "{\"city\":\"Rome\"}")
      ]
    ],
    [
      "sent arguments after its end",
      [
        ...callC1("get_weather", "{\"city\":\"Paris\"}"),
        AgUiAgent.event({ type: EventType.TOOL_CALL_ARGS, toolCallId: "c1", delta: "{\"city\":\"Rome\"}" })
      ]
    ]
  ] as const)("a call %s runs the tool with the arguments the thread shows, and sends them back", ([, events]) => {
    const { cities, tool } = weatherTool()
    return withAgent(
      thenDone(() => [...events]),
      (agent) =>
        Effect.gen(function*() {
          const { thread } = yield* runToEnd("hello")
          expectRanWith(thread, cities, agent.requests[1]!.input!.messages, "Paris")
        }),
      { tools: [tool] }
    )
  })

  it.live("a MESSAGES_SNAPSHOT that gives the run's ended call other arguments: the tool runs with the snapshot's, which the thread shows and sends back", () => {
    const { cities, tool } = weatherTool()
    return withAgent(
      thenDone((request) => [
        AgUiAgent.toolCall("get_weather", { city: "Paris" }, { id: "c1" }),
        snapshotCalling(request, "c1", "get_weather", { city: "Rome" })
      ]),
      (agent) =>
        Effect.gen(function*() {
          const { thread } = yield* runToEnd("hello")
          expectRanWith(thread, cities, agent.requests[1]!.input!.messages, "Rome")
        }),
      { tools: [tool] }
    )
  })

  it.live("a MESSAGES_SNAPSHOT that gives the run's call arguments that are not valid JSON: the tool is not run, and its result says so", () => {
    // A tool any object is valid input of: only the arguments' JSON stands between it and a run.
    const cities: Array<string | undefined> = []
    const tool = Tool.make({
      name: "get_weather",
      description: "The weather in a city, or here",
      input: Schema.Struct({ city: Schema.optional(Schema.String) }),
      execute: ({ city }) => Effect.sync(() => cities.push(city)).pipe(Effect.as("sunny"))
    })
    return withAgent(
      thenDone((request) => [
        AgUiAgent.toolCall("get_weather", { city: "Paris" }, { id: "c1" }),
        AgUiAgent.messagesSnapshot([
          ...request.input.messages,
          { id: "a1", role: "assistant", toolCalls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Ro" } }] }
        ])
      ]),
      (agent) =>
        Effect.gen(function*() {
          yield* runToEnd("hello")
          expect(cities).toEqual([])
          expect(agent.requests).toHaveLength(2)
          expect(agent.requests[1]!.input!.messages.at(-1)).toMatchObject(answeredNotValidJson)
        }),
      { tools: [tool] }
    )
  })

  // The calls a run pauses for are those the thread holds unanswered, as the reducer built it,
  // each with the arguments the thread shows and sends back.
  it.live("an answered call started again in its own message is not run: the thread holds it answered", () => {
    const { cities, tool } = weatherTool()
    return withAgent(
      thenDone(() => [
        AgUiAgent.serverToolCall("get_weather", { city: "Paris" }, "sunny (the agent's)", { id: "c1" }),
        AgUiAgent.toolCall("get_weather", { city: "Rome" }, { id: "c1" })
      ]),
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const { thread } = yield* runToEnd("hello")
          expect(toolUses(thread)).toMatchObject([
            { id: "c1", input: { city: "Paris" } }
          ])
          expect(cities).toEqual([])
          expect(agent.requests).toHaveLength(1)
          expect((yield* tambo.state).threadMap[thread.id]!.pendingToolCalls).toEqual([])
        }),
      { tools: [tool] }
    )
  })

  it.live("an unanswered call started again in another message runs once, with the arguments of its latest start, which its result answers", () => {
    const { cities, tool } = weatherTool()
    return withAgent(
      thenDone(() => [
        AgUiAgent.text("Let me check.", { messageId: "m1" }),
        AgUiAgent.toolCall("get_weather", { city: "Paris" }, { id: "c1" }),
        AgUiAgent.text("Rather Rome.", { messageId: "m2" }),
        AgUiAgent.toolCall("get_weather", { city: "Rome" }, { id: "c1" })
      ]),
      (agent) =>
        Effect.gen(function*() {
          const { events, thread } = yield* runToEnd("hello")
          expect(toolUses(thread).at(-1)).toMatchObject({
            id: "c1",
            input: { city: "Rome" }
          })
          // The pause comes just before the first request's RUN_FINISHED; the agent's events all pass.
          const types = events.map((e) => e.event.type)
          const finished = types.indexOf("RUN_FINISHED")
          expect(events[finished - 1]!.event).toEqual({
            type: "CUSTOM",
            name: "tambo.run.awaiting_input",
            value: { pendingToolCalls: [{ toolCallId: "c1", toolName: "get_weather", arguments: "{\"city\":\"Rome\"}" }] }
          })
          expect(types.slice(0, finished - 1).filter((type) => type.startsWith("TOOL_CALL"))).toHaveLength(6)
          expect(cities).toEqual(["Rome"])
          expect(agent.requests).toHaveLength(2)
          expect(agent.requests[1]!.input!.messages.at(-1)).toMatchObject({ role: "tool", toolCallId: "c1", content: "sunny in Rome" })
        }),
      { tools: [tool] }
    )
  })

  it.live("a MESSAGES_SNAPSHOT before a call's TOOL_CALL_END, with no arguments streamed: the tool runs with the snapshot's, as the thread shows them", () => {
    const { cities, tool } = weatherTool()
    return withAgent(
      thenDone((request) => [
        AgUiAgent.event({ type: EventType.TOOL_CALL_START, toolCallId: "c1", toolCallName: "get_weather" }),
        snapshotCalling(request, "c1", "get_weather", { city: "Rome" }),
        AgUiAgent.event({ type: EventType.TOOL_CALL_END, toolCallId: "c1" })
      ]),
      (agent) =>
        Effect.gen(function*() {
          const { thread } = yield* runToEnd("hello")
          expect(toolUses(thread)).toMatchObject([
            { id: "c1", input: { city: "Rome" } }
          ])
          expect(cities).toEqual(["Rome"])
          expect(agent.requests[1]!.input!.messages.at(-1)).toMatchObject({ role: "tool", toolCallId: "c1", content: "sunny in Rome" })
        }),
      { tools: [tool] }
    )
  })

  it.live("a MESSAGES_SNAPSHOT that renames the run's call to another client tool: the tool the thread names runs, not the one first started", () => {
    const { cities, tool } = weatherTool()
    const places: Array<string> = []
    const timeTool = Tool.make({
      name: "get_time",
      description: "The time in a place",
      input: Schema.Struct({ city: Schema.String }),
      execute: ({ city }) => Effect.sync(() => places.push(city)).pipe(Effect.as(`noon in ${city}`))
    })
    return withAgent(
      thenDone((request) => [
        AgUiAgent.toolCall("get_weather", { city: "Paris" }, { id: "c1" }),
        snapshotCalling(request, "c1", "get_time", { city: "Paris" })
      ]),
      (agent) =>
        Effect.gen(function*() {
          const { thread } = yield* runToEnd("hello")
          expect(toolUses(thread)).toMatchObject([
            { id: "c1", name: "get_time" }
          ])
          expect(cities).toEqual([])
          expect(places).toEqual(["Paris"])
          expect(agent.requests[1]!.input!.messages.at(-1)).toMatchObject({ role: "tool", toolCallId: "c1", content: "noon in Paris" })
        }),
      { tools: [tool, timeTool] }
    )
  })

  it.live("an answered call started again in its message by a later request of the turn is not run again", () => {
    const { cities, tool } = weatherTool()
    return withAgent(
      (_request, { runIndex }) =>
        runIndex === 0
          ? [AgUiAgent.text("Let me check.", { messageId: "m1" }), AgUiAgent.toolCall("get_weather", { city: "Paris" }, { id: "c1" })]
          : runIndex === 1
          ? [
            AgUiAgent.event({ type: EventType.TOOL_CALL_START, toolCallId: "c1", toolCallName: "get_weather", parentMessageId: "m1" }),
            AgUiAgent.event({ type: EventType.TOOL_CALL_ARGS, toolCallId: "c1", delta: "{\"city\":\"Rome\"}" }),
            AgUiAgent.event({ type: EventType.TOOL_CALL_END, toolCallId: "c1" })
          ]
          : [AgUiAgent.text("Done.")],
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const { thread } = yield* runToEnd("hello")
          expect(cities).toEqual(["Paris"])
          expect(agent.requests).toHaveLength(2)
          expect((yield* tambo.state).threadMap[thread.id]!.pendingToolCalls).toEqual([])
        }),
      { tools: [tool] }
    )
  })

  // Some agents name the message the call answers as its parent: the call is still the assistant's.
  it.live("a call whose parentMessageId names the user's message: the call is the assistant's, the tool runs once, the next runs are sent", () => {
    const { cities, tool } = weatherTool()
    return withAgent(
      (request) =>
        request.toolResults.length === 0 && request.lastUserText === "hello"
          ? [
            AgUiAgent.event({ type: EventType.TOOL_CALL_START, toolCallId: "c1", toolCallName: "get_weather", parentMessageId: request.input.messages.at(-1)!.id }),
            AgUiAgent.event({ type: EventType.TOOL_CALL_ARGS, toolCallId: "c1", delta: "{\"city\":\"Paris\"}" }),
            AgUiAgent.event({ type: EventType.TOOL_CALL_END, toolCallId: "c1" })
          ]
          : [AgUiAgent.text("Done.")],
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const { thread } = yield* runToEnd("hello")
          expect(cities).toEqual(["Paris"])
          expect(agent.requests[1]!.input!.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"])
          expect(agent.requests[1]!.input!.messages[0]).toMatchObject({ role: "user", content: "hello" })
          yield* Stream.runDrain(tambo.run("again", { threadId: thread.id }))
          expect(agent.requests[2]!.input!.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user"])
        }),
      { tools: [tool] }
    )
  })

  // An agent that names its reply of an earlier turn as the parent (a fixed id, say): the call
  // joined that reply, so the conversation sent had the call before the turn's question and its
  // result after it, which strict agents refuse.
  it.live("a call whose parentMessageId names an earlier turn's reply is this turn's: sent after the turn's question, its result right after it", () => {
    const { cities, tool } = weatherTool()
    return withAgent(
      (request) =>
        request.lastUserText === "hello"
          ? [AgUiAgent.text("Hello.", { messageId: "reply" })]
          : request.toolResults.length === 0
          ? [
            AgUiAgent.event({ type: EventType.TOOL_CALL_START, toolCallId: "c1", toolCallName: "get_weather", parentMessageId: "reply" }),
            AgUiAgent.event({ type: EventType.TOOL_CALL_ARGS, toolCallId: "c1", delta: "{\"city\":\"Paris\"}" }),
            AgUiAgent.event({ type: EventType.TOOL_CALL_END, toolCallId: "c1" })
          ]
          : [AgUiAgent.text("Sunny.")],
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const { thread } = yield* runToEnd("hello")
          yield* Stream.runDrain(tambo.run("weather?", { threadId: thread.id }))
          expect(cities).toEqual(["Paris"])
          const sent = agent.requests[2]!.input!.messages
          expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "tool"])
          expect(sent[1]).toEqual({ id: "reply", role: "assistant", content: "Hello." })
          expect(sent[3]).toMatchObject({ role: "assistant", toolCalls: [{ id: "c1" }] })
        }),
      { tools: [tool] }
    )
  })

  it.live("an agent's reply under the id of the user's message is a reply of its own: the user's message keeps its text, and goes out as it was", () =>
    withAgent(
      (request) =>
        request.lastUserText === "hello"
          ? [AgUiAgent.text("Hi there.", { messageId: request.input.messages.at(-1)!.id })]
          : [AgUiAgent.text("Again.")],
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const { thread } = yield* runToEnd("hello")
          expect(thread.messages.map((m) => [m.role, m.content])).toEqual([
            ["user", [{ type: "text", text: "hello" }]],
            ["assistant", [{ type: "text", text: "Hi there." }]]
          ])
          yield* Stream.runDrain(tambo.run("again", { threadId: thread.id }))
          expect(agent.requests[1]!.input!.messages.map((m) => [m.role, m.content])).toEqual([
            ["user", "hello"],
            ["assistant", "Hi there."],
            ["user", "again"]
          ])
        })
    ))

  // An agent that names its reply after the conversation's last message: after a tool round,
  // the client's tool result.
  it.live("an agent's reply under the id of the tool result it was sent is a message after it: each later run sends the call, its result, then the reply", () => {
    const { cities, tool } = weatherTool()
    return withAgent(
      (request) =>
        request.toolResults.length === 0 && request.lastUserText === "hello"
          ? [AgUiAgent.toolCall("get_weather", { city: "Paris" }, { id: "c1" })]
          : [AgUiAgent.text("Sunny.", { messageId: request.input.messages.at(-1)!.id })],
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const { thread } = yield* runToEnd("hello")
          expect(cities).toEqual(["Paris"])
          yield* Stream.runDrain(tambo.run("again", { threadId: thread.id }))
          const [first, second, third] = agent.requests.map((r) => r.input!.messages)
          expect(third!.map((m) => [m.role, m.content])).toEqual([
            ["user", "hello"],
            ["assistant", undefined],
            ["tool", "sunny in Paris"],
            ["assistant", "Sunny."],
            ["user", "again"]
          ])
          // Message for message what the run before sent, under the same ids.
          expect(third!.slice(0, second!.length)).toEqual(second)
          expect(second!.slice(0, first!.length)).toEqual(first)
        }),
      { tools: [tool] }
    )
  })

  // Held in the thread, such a result made every later request unsendable (AgUiError InvalidInput).
  it.live.each([
    ["a TOOL_CALL_RESULT for a call it never made", (_request: AgUiAgent.AgentRequest) => [
      AgUiAgent.text("Found it."),
      AgUiAgent.event({ type: EventType.TOOL_CALL_RESULT, messageId: "r1", toolCallId: "x1", content: "42" })
    ]],
    ["a MESSAGES_SNAPSHOT holding a tool message without its call", (request: AgUiAgent.AgentRequest) => [
      AgUiAgent.messagesSnapshot([...request.input.messages, { id: "t9", role: "tool", toolCallId: "x1", content: "42" }])
    ]]
  ] as const)("an agent's result that answers no call (%s) stays in the thread, is not sent back, and the thread takes the next message", ([, first]) =>
    withAgent(
      (request) => request.lastUserText === "hello" ? first(request) : [AgUiAgent.text("Hi again.")],
      (agent) =>
        Effect.gen(function*() {
          const { sent, thread } = yield* helloThenAgain(agent)
          expect(thread.messages.flatMap((m) => m.content).some((block) => block.type === "tool_result")).toBe(true)
          expect(sent.some((m) => m.role === "tool")).toBe(false)
          expect(sent.at(-1)).toMatchObject({ role: "user", content: "again" })
        })
    ))

  // Two tool messages for one call: OpenAI-backed agents refuse the second (it follows no call),
  // so every later request of the thread failed.
  it.live.each([
    ["a second TOOL_CALL_RESULT for it", (_request: AgUiAgent.AgentRequest) => [
      AgUiAgent.serverToolCall("search", { q: "x" }, "3 results", { id: "s1" }),
      AgUiAgent.event({ type: EventType.TOOL_CALL_RESULT, messageId: "r2", toolCallId: "s1", content: "3 results" })
    ]],
    ["a MESSAGES_SNAPSHOT answering it twice", (request: AgUiAgent.AgentRequest) => [
      AgUiAgent.messagesSnapshot([
        ...request.input.messages,
        { id: "a1", role: "assistant", toolCalls: [{ id: "s1", type: "function", function: { name: "search", arguments: "{}" } }] },
        { id: "t1", role: "tool", toolCallId: "s1", content: "3 results" },
        { id: "t2", role: "tool", toolCallId: "s1", content: "3 results" }
      ])
    ]]
  ] as const)("an agent's call answered twice (%s): the thread keeps both results, the next run sends the first only", ([, first]) =>
    withAgent(
      (request) => request.lastUserText === "hello" ? first(request) : [AgUiAgent.text("Hi again.")],
      (agent) =>
        Effect.gen(function*() {
          const { sent, thread } = yield* helloThenAgain(agent)
          expect(thread.messages.flatMap((m) => m.content).filter((block) => block.type === "tool_result")).toHaveLength(2)
          expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"])
          expect(sent[2]).toMatchObject({ toolCallId: "s1", content: "3 results" })
        })
    ))

  // AG-UI forbids text after a message's end; the Tambo API keeps it in the message, and so does the store.
  it.live("text after its message's TEXT_MESSAGE_END is kept in the reply and sent back with it, and an anomaly says so", () =>
    withAgent(
      (request) =>
        request.lastUserText === "hello"
          ? [
            AgUiAgent.event({ type: EventType.TEXT_MESSAGE_START, messageId: "a1", role: "assistant" }),
            AgUiAgent.event({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: "a1", delta: "Hi" }),
            AgUiAgent.event({ type: EventType.TEXT_MESSAGE_END, messageId: "a1" }),
            AgUiAgent.event({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: "a1", delta: " there" })
          ]
          : [AgUiAgent.text("Again.")],
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const { thread } = yield* runToEnd("hello")
          expect(thread.messages.at(-1)).toMatchObject({ id: "a1", content: [{ type: "text", text: "Hi there" }] })
          const anomalies = (yield* tambo.state).threadMap[thread.id]!.anomalies
          expect(anomalies.map((a) => [a.eventType, a.reason])).toEqual([["TEXT_MESSAGE_CONTENT", "message a1 already ended"]])
          yield* Stream.runDrain(tambo.run("again", { threadId: thread.id }))
          expect(agent.requests[1]!.input!.messages[1]).toMatchObject({ id: "a1", role: "assistant", content: "Hi there" })
        })
    ))

  it.live("headers from a function are read for each request: two runs carry two tokens", () => {
    let issued = 0
    return withAgent(AgUiAgent.scripts.text, (agent) =>
      Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const { thread } = yield* runToEnd("hello")
        yield* Stream.runDrain(tambo.run("again", { threadId: thread.id }))
        expect(agent.requests.map((r) => r.headers["authorization"])).toEqual(["Bearer token-1", "Bearer token-2"])
      }), { headers: () => Promise.resolve({ authorization: `Bearer token-${++issued}` }) })
  })

  it.live("headers from an Effect are run for each request", () => {
    let issued = 0
    return withAgent(AgUiAgent.scripts.text, (agent) =>
      Effect.gen(function*() {
        yield* runToEnd("hello")
        yield* runToEnd("hello")
        expect(agent.requests.map((r) => r.headers["x-token"])).toEqual(["t1", "t2"])
      }), { headers: Effect.sync(() => ({ "x-token": `t${++issued}` })) })
  })

  it.live.each([
    ["a function that throws", () => {
      throw new Error("no token")
    }, "no token"],
    ["a promise that rejects", () => Promise.reject(new Error("vault down")), "vault down"],
    ["an Effect that fails", Effect.fail("expired"), "expired"],
    ["a value that is not headers", () => ({ authorization: 42 }) as unknown as Record<string, string>, "object of strings"],
    // fetch refuses these: the run failed as a connection that failed, sent again maxRetries times.
    ["a function giving a name that is not a header's", () => ({ "x token": "t" }), "\"x token\" is not a header name"],
    ["a record whose value holds a line break", { "x-token": "t\r\nx-evil: 1" }, "the value of x-token holds a line break"],
    ["a record whose value holds a character past Latin-1", { "x-token": "t\u2713" }, "the value of x-token holds a character HTTP cannot carry"]
  ] as const)("headers from %s: CallbackError (Headers), nothing sent", ([, headers, message]) =>
    withAgent(AgUiAgent.scripts.text, (agent) =>
      Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const error = yield* Stream.runDrain(tambo.run("hello")).pipe(Effect.flip)
        expect(error).toMatchObject({ _tag: "CallbackError", reason: "Headers" })
        expect(error.message).toContain(message)
        expect(agent.requests).toHaveLength(0)
      }), { headers }))
})

// The differential half for the rest of AgUiAgent.scripts: the SDK's conversation and agent state
// at the end equal HttpAgent's for the same script (reference.ts), with the normalisations above.
describe("AgUi.layer and HttpAgent end with the same conversation and state, script by script", () => {
  const reference = (url: string) => Effect.promise(() => runReference({ url, messages: [hello] }))

  const withAgent = <A, E>(script: AgUiAgent.ScriptSource, f: (agent: AgUiAgent.AgUiAgent) => Effect.Effect<A, E, AgUi.Provided>) =>
    Effect.scoped(Effect.gen(function*() {
      const agent = yield* AgUiAgent.scoped({ script })
      return yield* f(agent).pipe(Effect.provide(AgUi.layer({ url: agent.url })))
    }))

  it.live.each([["reasoning", AgUiAgent.scripts.reasoning], ["legacyReasoning", AgUiAgent.scripts.legacyReasoning]] as const)(
    "%s: the reply, with the reasoning before it as its reasoning (HttpAgent: a message of role reasoning)",
    ([_, script]) =>
      withAgent(script, (agent) =>
        Effect.gen(function*() {
          const { thread } = yield* runToEnd("hello")
          const ref = yield* reference(agent.url)
          expect(sdkConversation(thread.messages)).toEqual(referenceConversation(ref.messages))
          expect(sdkReasoning(thread.messages)).toEqual(referenceReasoning(ref.messages))
          expect(sdkReasoning(thread.messages).flat()).toHaveLength(1)
          expect(thread.state).toBeUndefined()
          expect(ref.state).toEqual({})
        }))
  )

  it.live("state: the agent state is the snapshot with the deltas applied, on the thread", () =>
    withAgent(AgUiAgent.scripts.state, (agent) =>
      Effect.gen(function*() {
        const { thread } = yield* runToEnd("hello")
        const ref = yield* reference(agent.url)
        expect(thread.state).toEqual(ref.state)
        expect(thread.state).toEqual({ count: 2, items: ["a"] })
        expect(sdkConversation(thread.messages)).toEqual(normalise(ref.messages))
      })))

  it.live("hostileState: the delta through __proto__ is refused (an anomaly on the thread), the state kept, the run goes on", () =>
    withAgent(AgUiAgent.scripts.hostileState, (agent) =>
      Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const { events, thread } = yield* runToEnd("hello")
        expect(events.map((e) => e.event.type)).toContain("RUN_FINISHED")
        expect(({} as Record<string, unknown>).polluted).toBeUndefined()
        const anomalies = (yield* tambo.state).threadMap[thread.id]!.anomalies
        expect(anomalies).toEqual([{ eventType: "STATE_DELTA", reason: expect.stringContaining("refused"), at: expect.any(Number) }])
        const warn = vi.spyOn(console, "warn").mockImplementation(() => {})
        const ref = yield* reference(agent.url).pipe(Effect.ensuring(Effect.sync(() => warn.mockRestore())))
        expect(thread.state).toEqual(ref.state)
        expect(thread.state).toEqual({ count: 0 })
        expect(sdkConversation(thread.messages)).toEqual(normalise(ref.messages))
      })))

  // Found by the model of the agent state (AgentState.model.test.ts): null is a state, not "none".
  it.live("a delta after a null snapshot: refused on both sides, the state stays null", () =>
    withAgent(
      [AgUiAgent.stateSnapshot(null), AgUiAgent.stateDelta([{ op: "add", path: "/a", value: 0 }]), AgUiAgent.text("Done.")],
      (agent) =>
        Effect.gen(function*() {
          const { thread } = yield* runToEnd("hello")
          const warn = vi.spyOn(console, "warn").mockImplementation(() => {})
          const ref = yield* reference(agent.url).pipe(Effect.ensuring(Effect.sync(() => warn.mockRestore())))
          expect(ref.state).toBeNull()
          expect(thread.state).toBeNull()
          expect(sdkConversation(thread.messages)).toEqual(normalise(ref.messages))
        })
    ))

  it.live("messagesSnapshot: the agent's conversation replaces the thread's, the reply streamed before it included", () =>
    withAgent(AgUiAgent.scripts.messagesSnapshot, (agent) =>
      Effect.gen(function*() {
        const { thread } = yield* runToEnd("hello")
        const ref = yield* reference(agent.url)
        expect(sdkConversation(thread.messages)).toEqual(normalise(ref.messages))
        // Here the ids are the agent's on both sides.
        expect(thread.messages.map((m) => m.id)).toEqual(ref.messages.map((m) => m.id))
      })))

  it.live("steps: STEP_STARTED / STEP_FINISHED are run events the app reads, in HttpAgent's order; the conversation is the same", () =>
    withAgent(AgUiAgent.scripts.steps, (agent) =>
      Effect.gen(function*() {
        const { events, thread } = yield* runToEnd("hello")
        const ref = yield* reference(agent.url)
        const steps = (list: ReadonlyArray<{ readonly type: string; readonly stepName?: unknown }>) =>
          list.filter((e) => e.type.startsWith("STEP_")).map((e) => [e.type, e.stepName])
        expect(steps(events.map((e) => e.event as { readonly type: string }))).toEqual(steps(ref.events[0]!))
        expect(steps(ref.events[0]!)).toEqual([
          ["STEP_STARTED", "plan"],
          ["STEP_FINISHED", "plan"],
          ["STEP_STARTED", "act"],
          ["STEP_FINISHED", "act"]
        ])
        expect(sdkConversation(thread.messages)).toEqual(normalise(ref.messages))
      })))

  it.live("activity: ACTIVITY_SNAPSHOT / ACTIVITY_DELTA are run events whose content patches to HttpAgent's activity message", () =>
    withAgent(AgUiAgent.scripts.activity, (agent) =>
      Effect.gen(function*() {
        const { events, thread } = yield* runToEnd("hello")
        const ref = yield* reference(agent.url)
        const activities = events.flatMap((e) =>
          e.event.type === "ACTIVITY_SNAPSHOT" || e.event.type === "ACTIVITY_DELTA" ? [e.event] : []
        )
        expect(activities.map((e) => e.type)).toEqual(["ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA"])
        // The app's view of the activity: the snapshot with the delta applied.
        const [first, second] = activities
        if (first?.type !== "ACTIVITY_SNAPSHOT" || second?.type !== "ACTIVITY_DELTA") throw new Error("unexpected events")
        const patched = applyPatch(first.content, second.patch as ReadonlyArray<Operation>)
        const refActivity = ref.messages.find((m) => m.role === "activity")!
        expect(patched).toEqual({ ok: true, value: refActivity.content })
        expect({ messageId: first.messageId, activityType: first.activityType }).toEqual({
          messageId: refActivity.id,
          activityType: (refActivity as { readonly activityType: string }).activityType
        })
        expect(sdkConversation(thread.messages)).toEqual(referenceConversation(ref.messages))
      })))

  it.live("dropped: the run fails with a TransportError and keeps the text that arrived (HttpAgent fails too, with the same text)", () =>
    withAgent(AgUiAgent.scripts.dropped, (agent) =>
      Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const error = yield* Stream.runDrain(tambo.run("hello")).pipe(Effect.flip)
        expect(error).toMatchObject({ _tag: "TransportError", reason: "Disconnected" })
        const state = yield* tambo.state
        const thread = Object.values(state.threadMap).find((t) => t.thread.id.startsWith("thr_"))!.thread
        expect(thread.status).toBe("idle")
        const ref = yield* reference(agent.url)
        expect(ref.failure).toBeDefined()
        expect(sdkConversation(thread.messages)).toEqual(normalise(ref.messages))
        expect(sdkConversation(thread.messages).at(-1)).toEqual({ role: "assistant", content: "Half a reply" })
      })))
})
