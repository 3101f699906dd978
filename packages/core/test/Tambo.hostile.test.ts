// A run against a server that misbehaves: a typed outcome, the server told, the thread usable.
import { describe, expect, it } from "@effect/vitest"
import { HostileServer, Script } from "@tambo-effect/testing"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as ClientState from "../src/ClientState.js"
import * as Tambo from "../src/Tambo.js"
import { fields, serverShape, shape, tamboLayer, threadOf, useServer } from "./helpers.js"

const server = useServer()

describe("a run's own timeouts", () => {
  it.live("a stream that stalls after RUN_STARTED fails with idleTimeout and the run is cancelled on the server", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("partial"), Script.hang()])
      const tambo = yield* Tambo.Tambo
      const error = yield* Effect.flip(Stream.runDrain(tambo.run("hi")))
      expect(fields(error)).toMatchObject({ _tag: "TransportError", reason: "Timeout" })
      expect(error.message).toContain("idleTimeout (200 ms)")
      // The server was told (DELETE of the run it started; the connection, aborted at the
      // failure, may close before the DELETE lands): its run is cancelled either way.
      const runId = server().requests.find((r) => r.method === "DELETE")?.path.split("/").at(-1)
      expect(runId).toMatch(/^run_/)
      expect(server().cancels.map((c) => c.runId)).toEqual([runId])
    }).pipe(Effect.provide(Layer.suspend(() => tamboLayer(server(), { idleTimeout: 200 })))))

  it.live("the idle timeout starts again at every read: a slow but steady stream finishes", () =>
    Effect.gen(function* () {
      // Ten reads 100 ms apart: longer in all than the idle timeout, never idle that long.
      server().setScript([Script.pace(100), Script.text(Array.from({ length: 10 }, (_, i) => `${i}`))])
      const tambo = yield* Tambo.Tambo
      const types = yield* Stream.runCollect(Stream.map(tambo.run("hi"), (event) => event.event.type))
      expect([...types].at(-1)).toBe("RUN_FINISHED")
    }).pipe(Effect.provide(Layer.suspend(() => tamboLayer(server(), { idleTimeout: 600 })))))
})

describe("a run settles at RUN_FINISHED", () => {
  it.live("a server that keeps the stream open after RUN_FINISHED: the run ends without waiting for idleTimeout", () =>
    Effect.gen(function* () {
      server().setScript((request) => [
        Script.text("done"),
        Script.event({ type: "RUN_FINISHED", threadId: request.threadId, runId: request.runId }),
        Script.hang()
      ])
      const tambo = yield* Tambo.Tambo
      // Bounded far below the idle timeout: a run that waits for the connection fails here.
      const types = yield* Stream.runCollect(Stream.map(tambo.run("hi"), (event) => event.event.type)).pipe(
        Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("the run waited for the connection") })
      )
      expect([...types].at(-1)).toBe("RUN_FINISHED")
      expect([...types].filter((type) => type === "RUN_FINISHED")).toHaveLength(1)
    }).pipe(Effect.provide(Layer.suspend(() => tamboLayer(server(), { idleTimeout: 120_000, reconcileAfterRun: false })))))
})

describe("a RUN_FINISHED that names another run than the step's", () => {
  it.live("the store and the next request follow the run the server started, and an anomaly says what the event named", () =>
    Effect.gen(function* () {
      server().setScript((request) =>
        request.text === "hi"
          ? [Script.text("done"), Script.event({ type: "RUN_FINISHED", threadId: request.threadId, runId: "run_elsewhere" })]
          : [Script.text("again")]
      )
      const tambo = yield* Tambo.Tambo
      const first = yield* Stream.runCollect(tambo.run("hi")).pipe(Effect.map((events) => [...events]))
      const threadId = first.at(-1)!.threadId
      const started = first[0]!.event
      expect(started.type).toBe("RUN_STARTED")
      const runId = (started as { readonly runId: string }).runId
      const held = (yield* tambo.state).threadMap[threadId]!
      expect(held.lastCompletedRunId).toBe(runId)
      expect(server().threads.get(threadId)!.lastCompletedRunId).toBe(runId)
      expect(held.anomalies.map((a) => [a.eventType, a.reason])).toEqual([
        ["RUN_FINISHED", `run run_elsewhere finished while run ${runId} is streaming`]
      ])
      yield* Stream.runDrain(tambo.run("again", { threadId }))
      // One request for the second run, following the first run as the server knows it.
      const posts = server().requests.filter((r) => r.method === "POST" && r.path === `/v1/threads/${threadId}/runs`)
      expect(posts.map((r) => (r.body as { previousRunId?: string }).previousRunId)).toEqual([runId])
    }).pipe(Effect.provide(Layer.suspend(() => tamboLayer(server(), { reconcileAfterRun: false })))))
})

describe("a run the server does not start with RUN_STARTED", () => {
  it.scoped("a new thread named only by X-Thread-Id and X-Run-Id: the run starts as the headers say", () =>
    Effect.gen(function* () {
      const hostile = yield* HostileServer.scoped
      const text = (type: string, extra: object = {}) => JSON.stringify({ type, messageId: "m-1", ...extra })
      hostile.respond(HostileServer.frames(
        [
          text("TEXT_MESSAGE_START", { role: "assistant" }),
          text("TEXT_MESSAGE_CONTENT", { delta: "hello" }),
          text("TEXT_MESSAGE_END"),
          JSON.stringify({ type: "RUN_FINISHED", threadId: "thr_h", runId: "run_h" })
        ],
        { headers: { "x-thread-id": "thr_h", "x-run-id": "run_h" } }
      ))
      const events = yield* Effect.flatMap(Tambo.Tambo, (tambo) => Stream.runCollect(tambo.run("hi"))).pipe(
        Effect.provide(Tambo.layer({ apiKey: "api-key", tamboUrl: hostile.url, userKey: "user-1", maxRetries: 0, reconcileAfterRun: false }))
      )
      const all = [...events]
      expect(all.map((e) => e.event.type)).toEqual([
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED"
      ])
      expect(all.at(-1)!.threadId).toBe("thr_h")
      expect(all.at(-1)!.snapshot.id).toBe("thr_h")
      expect(all.at(-1)!.snapshot.messages.map((m) => m.role)).toEqual(["user", "assistant"])
    }))
})

describe("a continuation the server does not start with RUN_STARTED", () => {
  it.scopedLive("the step before it finished, this one has not: a stall is the idle timeout, not the end of the run", () =>
    Effect.gen(function* () {
      const hostile = yield* HostileServer.scoped
      const e = (value: object) => JSON.stringify(value)
      hostile.respond(
        HostileServer.frames(
          [
            e({ type: "RUN_STARTED", threadId: "thr_c", runId: "run_1" }),
            e({ type: "TOOL_CALL_START", toolCallId: "call_0", toolCallName: "echo", parentMessageId: "m-1" }),
            e({ type: "TOOL_CALL_ARGS", toolCallId: "call_0", delta: "{}" }),
            e({ type: "TOOL_CALL_END", toolCallId: "call_0" }),
            e({
              type: "CUSTOM",
              name: "tambo.run.awaiting_input",
              value: { pendingToolCalls: [{ toolCallId: "call_0", toolName: "echo", arguments: "{}" }] }
            }),
            e({ type: "RUN_FINISHED", threadId: "thr_c", runId: "run_1" })
          ],
          { headers: { "x-thread-id": "thr_c", "x-run-id": "run_1" } }
        ),
        // The continuation: a reply begun with no RUN_STARTED, then nothing.
        HostileServer.framesThenStall(
          [e({ type: "TEXT_MESSAGE_START", messageId: "m-2", role: "assistant" })],
          { "x-thread-id": "thr_c", "x-run-id": "run_2" }
        ),
        // The DELETE the run's end sends gets no answer: its bound (3 s) ends the wait.
        HostileServer.silent()
      )
      const exit = yield* Effect.flatMap(Tambo.Tambo, (tambo) => Stream.runDrain(tambo.run("hi"))).pipe(
        Effect.provide(Tambo.layer({
          apiKey: "api-key",
          tamboUrl: hostile.url,
          userKey: "user-1",
          maxRetries: 0,
          idleTimeout: 2_500,
          reconcileAfterRun: false,
          tools: [{
            name: "echo",
            description: "echoes",
            inputSchema: { type: "object", properties: {} },
            tool: () => "echoed"
          }]
        })),
        Effect.exit
      )
      expect(exit._tag).toBe("Failure")
      const error = (exit._tag === "Failure" ? Cause.squash(exit.cause) : undefined) as Error
      expect(fields(error)).toMatchObject({ _tag: "TransportError", reason: "Timeout" })
      expect(error.message).toContain("idleTimeout (2500 ms)")
      // This step had not finished: its run is cancelled on the server.
      expect(hostile.requests.map((r) => `${r.method} ${r.url.split("?")[0]}`).at(-1)).toBe("DELETE /v1/threads/thr_c/runs/run_2")
    }))
})

// The tool rounds below: an `echo` tool the server calls on thread `thr_c`, one call per step.
const frame = (value: object) => JSON.stringify(value)

/** A step's call of `echo` with `args`, then its pause for it: `parentMessageId` is `m-<runId>`. */
const echoCall = (toolCallId: string, args: string, runId: string) => [
  frame({ type: "TOOL_CALL_START", toolCallId, toolCallName: "echo", parentMessageId: `m-${runId}` }),
  frame({ type: "TOOL_CALL_ARGS", toolCallId, delta: args }),
  frame({ type: "TOOL_CALL_END", toolCallId }),
  frame({
    type: "CUSTOM",
    name: "tambo.run.awaiting_input",
    value: { pendingToolCalls: [{ toolCallId, toolName: "echo", arguments: args }] }
  }),
  frame({ type: "RUN_FINISHED", threadId: "thr_c", runId })
]

/** A reply of one text, `m-<runId>`. */
const reply = (runId: string, text: string) => [
  frame({ type: "TEXT_MESSAGE_START", messageId: `m-${runId}`, role: "assistant" }),
  frame({ type: "TEXT_MESSAGE_CONTENT", messageId: `m-${runId}`, delta: text }),
  frame({ type: "TEXT_MESSAGE_END", messageId: `m-${runId}` })
]

/** The headers of a step of `thr_c` the server names `runId`. */
const named = (runId: string) => ({ headers: { "x-thread-id": "thr_c", "x-run-id": runId } })

/** The last step of the rounds: a reply, then its end. */
const lastStep = HostileServer.frames(
  [frame({ type: "RUN_STARTED", threadId: "thr_c", runId: "run_3" }), ...reply("run_3", "done"), frame({ type: "RUN_FINISHED", threadId: "thr_c", runId: "run_3" })],
  named("run_3")
)

/** Runs "hi" against `hostile` with the `echo` tool (no end-of-run read): its exit, the words echoed, the state. */
const runEcho = (hostile: HostileServer.HostileServer) =>
  Effect.gen(function* () {
    const words: Array<unknown> = []
    const { exit, state } = yield* Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const exit = yield* Effect.exit(Stream.runCollect(tambo.run("hi")))
      return { exit, state: yield* tambo.state }
    }).pipe(
      Effect.provide(Tambo.layer({
        apiKey: "api-key",
        tamboUrl: hostile.url,
        userKey: "user-1",
        maxRetries: 0,
        reconcileAfterRun: false,
        tools: [{
          name: "echo",
          description: "echoes",
          inputSchema: { type: "object", properties: { word: { type: "string" } } },
          tool: (args: { readonly word?: string }) => {
            words.push(args.word)
            return `echoed ${args.word}`
          }
        }]
      }))
    )
    return { exit, words, state, requests: hostile.requests.map((r) => `${r.method} ${r.url.split("?")[0]}`) }
  })

/** The calls' inputs the thread shows, by call id. */
const inputsOf = (thread: ClientState.ThreadState) =>
  thread.thread.messages.flatMap((m) => m.content.flatMap((c) => c.type === "tool_use" ? [[c.id, c.input]] : []))

describe("a tool round's continuation the server does not start with RUN_STARTED", () => {
  it.scoped("it starts as its headers say: its call keeps its arguments, each tool runs once, the run finishes with nothing pending", () =>
    Effect.gen(function* () {
      const hostile = yield* HostileServer.scoped
      hostile.respond(
        HostileServer.frames(
          [frame({ type: "RUN_STARTED", threadId: "thr_c", runId: "run_1" }), ...echoCall("call_0", "{\"word\":\"one\"}", "run_1")],
          named("run_1")
        ),
        // The continuation: no RUN_STARTED, a reply and a second call.
        HostileServer.frames([...reply("run_2", "again"), ...echoCall("call_1", "{\"word\":\"two\"}", "run_2")], named("run_2")),
        lastStep
      )
      const { exit, requests, state, words } = yield* runEcho(hostile)
      expect(words).toEqual(["one", "two"])
      expect(exit._tag === "Success" && [...exit.value].at(-1)!.event.type).toBe("RUN_FINISHED")
      const thread = ClientState.getThreadState(state, "thr_c")!
      expect(inputsOf(thread)).toEqual([["call_0", { word: "one" }], ["call_1", { word: "two" }]])
      expect(thread.anomalies).toEqual([])
      expect(thread.thread.status).toBe("idle")
      expect(thread.pendingToolCalls).toEqual([])
      expect(requests).toEqual(["POST /v1/threads/runs", "POST /v1/threads/thr_c/runs", "POST /v1/threads/thr_c/runs"])
    }))
})

describe("a tool round's continuation the server names no run of", () => {
  it.scoped("with neither RUN_STARTED nor a run id header it starts as the run it continues: its call keeps its arguments and the next request follows the run that finished", () =>
    Effect.gen(function* () {
      const hostile = yield* HostileServer.scoped
      hostile.respond(
        HostileServer.frames(
          [frame({ type: "RUN_STARTED", threadId: "thr_c", runId: "run_1" }), ...echoCall("call_0", "{\"word\":\"one\"}", "run_1")],
          named("run_1")
        ),
        // The continuation: no RUN_STARTED, no run id in its headers.
        HostileServer.frames([...reply("run_2", "again"), ...echoCall("call_1", "{\"word\":\"two\"}", "run_2")]),
        lastStep
      )
      const { exit, requests, state, words } = yield* runEcho(hostile)
      expect(words).toEqual(["one", "two"])
      expect(exit._tag === "Success" && [...exit.value].at(-1)!.event.type).toBe("RUN_FINISHED")
      const thread = ClientState.getThreadState(state, "thr_c")!
      expect(inputsOf(thread)).toEqual([["call_0", { word: "one" }], ["call_1", { word: "two" }]])
      expect(thread.thread.messages.flatMap((m) => m.content.flatMap((c) => c.type === "text" ? [c.text] : []))).toContain("again")
      expect(thread.anomalies).toEqual([])
      expect(thread.thread.status).toBe("idle")
      expect(thread.pendingToolCalls).toEqual([])
      expect(thread.lastCompletedRunId).toBe("run_3")
      expect(requests).toEqual(["POST /v1/threads/runs", "POST /v1/threads/thr_c/runs", "POST /v1/threads/thr_c/runs"])
      expect(hostile.requests.map((r) => JSON.parse(r.body).previousRunId)).toEqual([undefined, "run_1", "run_2"])
    }))
})

describe("a step whose RUN_STARTED names another thread than the run's", () => {
  it.scoped("fails the run with a TransportError (Protocol): no thread of that name appears, the run's thread is idle with the error, and the server is told", () =>
    Effect.gen(function* () {
      const hostile = yield* HostileServer.scoped
      hostile.respond(
        HostileServer.frames(
          [frame({ type: "RUN_STARTED", threadId: "thr_c", runId: "run_1" }), ...echoCall("call_0", "{}", "run_1")],
          named("run_1")
        ),
        // The tool round's continuation names another thread.
        HostileServer.frames(
          [
            frame({ type: "RUN_STARTED", threadId: "thr_x", runId: "run_2" }),
            ...reply("run_2", "elsewhere"),
            frame({ type: "RUN_FINISHED", threadId: "thr_x", runId: "run_2" })
          ],
          { ...named("run_2"), stall: true }
        ),
        // The DELETE of the run.
        HostileServer.status(200, { headers: { "content-type": "application/json" }, body: "{}" })
      )
      const { exit, requests, state } = yield* runEcho(hostile)
      expect(exit._tag).toBe("Failure")
      const error = (exit._tag === "Failure" ? Cause.squash(exit.cause) : undefined) as Error
      expect(fields(error)).toMatchObject({ _tag: "TransportError", reason: "Protocol" })
      expect(error.message).toContain("thr_x")
      expect(Object.keys(state.threadMap).sort()).toEqual(["placeholder", "thr_c"])
      const thread = ClientState.getThreadState(state, "thr_c")!
      expect(thread.thread.status).toBe("idle")
      expect(thread.streaming.error).toMatchObject({ code: "TransportError" })
      expect(requests).toEqual(["POST /v1/threads/runs", "POST /v1/threads/thr_c/runs", "DELETE /v1/threads/thr_c/runs/run_2"])
    }))
})

describe("the read at a run's end, from a server that misbehaves", () => {
  /** A run on a new thread `thr_r` that answers `text` and finishes. */
  const finishedTextRun = (text: string) => {
    const e = (value: object) => JSON.stringify(value)
    return HostileServer.frames(
      [
        e({ type: "RUN_STARTED", threadId: "thr_r", runId: "run_r" }),
        e({ type: "TEXT_MESSAGE_START", messageId: "m-1", role: "assistant" }),
        e({ type: "TEXT_MESSAGE_CONTENT", messageId: "m-1", delta: text }),
        e({ type: "TEXT_MESSAGE_END", messageId: "m-1" }),
        e({ type: "RUN_FINISHED", threadId: "thr_r", runId: "run_r" })
      ],
      { headers: { "x-thread-id": "thr_r", "x-run-id": "run_r" } }
    )
  }
  const layerOn = (hostile: HostileServer.HostileServer) =>
    Tambo.layer({ apiKey: "api-key", tamboUrl: hostile.url, userKey: "user-1", maxRetries: 0 })
  const requestsOf = (hostile: HostileServer.HostileServer) => hostile.requests.map((r) => `${r.method} ${r.url.split("?")[0]}`)

  it.scopedLive("a read of the thread the server never answers: the run ends after the read's bound", () =>
    Effect.gen(function* () {
      const hostile = yield* HostileServer.scoped
      // The reconciliation's GET of the thread is never answered.
      hostile.respond(finishedTextRun("hi"), HostileServer.silent())
      const types = yield* Effect.flatMap(Tambo.Tambo, (tambo) =>
        Stream.runCollect(Stream.map(tambo.run("hi"), (event) => event.event.type))).pipe(
          Effect.provide(layerOn(hostile)),
          // Far below the REST timeout (60 s) the read would otherwise wait for.
          Effect.timeoutFail({ duration: "15 seconds", onTimeout: () => new Error("the run's end waited for the read") })
        )
      expect([...types].at(-1)).toBe("RUN_FINISHED")
      expect(requestsOf(hostile)).toEqual(["POST /v1/threads/runs", "GET /v1/threads/thr_r"])
    }))

  it.scopedLive("a failed read (a 500) leaves the run's outcome and the store as they were", () =>
    Effect.gen(function* () {
      const hostile = yield* HostileServer.scoped
      hostile.respond(
        finishedTextRun("Hello"),
        HostileServer.status(500, { headers: { "content-type": "application/json" }, body: JSON.stringify({ message: "boom" }) })
      )
      const tambo = yield* Effect.provide(Tambo.Tambo, layerOn(hostile))
      const types = yield* Stream.runCollect(Stream.map(tambo.run("hi"), (event) => event.event.type))
      expect([...types].at(-1)).toBe("RUN_FINISHED")
      expect(requestsOf(hostile)).toEqual(["POST /v1/threads/runs", "GET /v1/threads/thr_r"])
      const after = (yield* tambo.state).threadMap["thr_r"]!
      // What the stream left: the local id, no key.
      expect(after.thread.messages.map((m) => m.key)).toEqual([undefined, undefined])
      expect(after.thread.messages[0]!.id).toMatch(/^local_user_/)
      expect(after.thread.messages[1]!.content).toEqual([{ type: "text", text: "Hello" }])
    }))
})

describe("a message id the server reuses across runs", () => {
  // Both replies name message `m-dup`: the second is a new message after the second question, not
  // more text in the first reply.
  const reply = (text: string) => (request: { readonly threadId: string; readonly runId: string }) => [
    Script.event({ type: "RUN_STARTED", threadId: request.threadId, runId: request.runId }),
    Script.event({ type: "TEXT_MESSAGE_START", messageId: "m-dup", role: "assistant" }),
    Script.event({ type: "TEXT_MESSAGE_CONTENT", messageId: "m-dup", delta: text }),
    Script.event({ type: "TEXT_MESSAGE_END", messageId: "m-dup" }),
    Script.event({ type: "RUN_FINISHED", threadId: request.threadId, runId: request.runId })
  ]

  it.live("the second reply is a message of its own, after the second question, and an anomaly says why", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      server().setScript(reply("first"))
      yield* Stream.runDrain(tambo.run("one"))
      server().setScript(reply("second"))
      yield* Stream.runDrain(tambo.run("two"))
      const state = ClientState.getCurrentThreadState(yield* tambo.state)
      const messages = state!.thread.messages.map((m) => ({
        role: m.role,
        text: m.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("")
      }))
      expect(messages).toEqual([
        { role: "user", text: "one" },
        { role: "assistant", text: "first" },
        { role: "user", text: "two" },
        { role: "assistant", text: "second" }
      ])
      expect(new Set(state!.thread.messages.map((m) => m.id)).size).toBe(4)
      expect(state!.anomalies.map((a) => a.reason).join("\n")).toContain("m-dup")
    }).pipe(Effect.provide(Layer.suspend(() => tamboLayer(server(), { reconcileAfterRun: false })))))
})

describe("an end the server sends twice", () => {
  it.scoped("a second TOOL_CALL_END of a call: the call keeps its arguments, its tool runs once, the run goes on, and an anomaly says so", () =>
    Effect.gen(function* () {
      const hostile = yield* HostileServer.scoped
      const [start, args, end, ...pause] = echoCall("call_0", "{\"word\":\"one\"}", "run_1")
      hostile.respond(
        HostileServer.frames([frame({ type: "RUN_STARTED", threadId: "thr_c", runId: "run_1" }), start!, args!, end!, end!, ...pause], named("run_1")),
        lastStep
      )
      const { exit, requests, state, words } = yield* runEcho(hostile)
      expect(words).toEqual(["one"])
      expect(exit._tag === "Success" && [...exit.value].at(-1)!.event.type).toBe("RUN_FINISHED")
      const thread = ClientState.getThreadState(state, "thr_c")!
      expect(inputsOf(thread)).toEqual([["call_0", { word: "one" }]])
      expect(thread.anomalies.map((a) => [a.eventType, a.reason])).toEqual([["TOOL_CALL_END", "tool call call_0 already ended"]])
      expect(thread.thread.messages.flatMap((m) => m.content.flatMap((c) => c.type === "text" ? [c.text] : []))).toContain("done")
      expect(thread.pendingToolCalls).toEqual([])
      expect(requests).toEqual(["POST /v1/threads/runs", "POST /v1/threads/thr_c/runs"])
      // One result for the call, sent once.
      const sent = JSON.parse(hostile.requests[1]!.body).message.content
      expect(sent.map((c: { readonly type: string; readonly toolUseId?: string }) => [c.type, c.toolUseId])).toEqual([["tool_result", "call_0"]])
    }))

  it.live("a second tambo.component.end of a component: its props and its end stay, the component after it is kept, and an anomaly says so", () =>
    Effect.gen(function* () {
      server().setScript([
        Script.text("here"),
        Script.component("Card", [{ title: "Par" }, { title: "Paris" }], { id: "k1" }),
        Script.event({ type: "CUSTOM", name: "tambo.component.end", value: { componentId: "k1" } }),
        Script.component("Card", { title: "Lyon" }, { id: "k2" })
      ])
      const tambo = yield* Tambo.Tambo
      const events = yield* Stream.runCollect(tambo.run("hi"))
      const threadId = [...events].at(-1)!.threadId
      const thread = threadOf(yield* tambo.state, threadId)
      const components = thread.thread.messages.flatMap((m) => m.content).filter((c) => c.type === "component")
      expect(components).toMatchObject([
        { id: "k1", props: { title: "Paris" }, streamingState: "done" },
        { id: "k2", props: { title: "Lyon" }, streamingState: "done" }
      ])
      expect(thread.anomalies.map((a) => [a.eventType, a.reason])).toEqual([["tambo.component.end", "component k1 already ended"]])
      expect(shape(thread.thread.messages)).toEqual(serverShape(server(), threadId))
    }).pipe(Effect.provide(Layer.suspend(() => tamboLayer(server(), { reconcileAfterRun: false })))))
})

describe("a user's TEXT_MESSAGE_START under the id of the reply", () => {
  it.live("the reply keeps its role and text; the user's text goes to a message of its own, and an anomaly says so", () =>
    Effect.gen(function* () {
      const text = (type: string, extra: Record<string, string> = {}) => Script.event({ type, messageId: "m-1", ...extra })
      server().setScript([
        text("TEXT_MESSAGE_START", { role: "assistant" }),
        text("TEXT_MESSAGE_CONTENT", { delta: "reply" }),
        text("TEXT_MESSAGE_END"),
        text("TEXT_MESSAGE_START", { role: "user" }),
        text("TEXT_MESSAGE_CONTENT", { delta: "said by the user" }),
        text("TEXT_MESSAGE_END")
      ])
      const tambo = yield* Tambo.Tambo
      const events = yield* Stream.runCollect(tambo.run("hi"))
      const thread = threadOf(yield* tambo.state, [...events].at(-1)!.threadId)
      expect(thread.thread.messages.map((m) => [m.id === "m-1", m.role, shape([m])[0]!.content])).toEqual([
        [false, "user", [{ type: "text", text: "hi" }]],
        [true, "assistant", [{ type: "text", text: "reply" }]],
        [false, "user", [{ type: "text", text: "said by the user" }]]
      ])
      expect(thread.anomalies.map((a) => [a.eventType, a.reason])).toEqual([
        ["TEXT_MESSAGE_START", "message m-1 is an assistant's; this user's message is m-1_2"]
      ])
    }).pipe(Effect.provide(Layer.suspend(() => tamboLayer(server(), { reconcileAfterRun: false })))))
})

// The API keeps every text delta of the model, one after the message's end too (its stream sends
// it under the message's id), so the store keeps it; AG-UI forbids it, so an anomaly says so.
describe("text the server sends after its message ended", () => {
  it.scoped("is kept in the reply, as the server stores it, the run finishes, and an anomaly says so", () =>
    Effect.gen(function* () {
      const hostile = yield* HostileServer.scoped
      hostile.respond(
        HostileServer.frames([
          frame({ type: "RUN_STARTED", threadId: "thr_c", runId: "run_1" }),
          ...reply("run_1", "Hi"),
          frame({ type: "TEXT_MESSAGE_CONTENT", messageId: "m-run_1", delta: " there" }),
          frame({ type: "RUN_FINISHED", threadId: "thr_c", runId: "run_1" })
        ], named("run_1"))
      )
      const tambo = yield* Effect.provide(
        Tambo.Tambo,
        Tambo.layer({ apiKey: "api-key", tamboUrl: hostile.url, userKey: "user-1", maxRetries: 0, reconcileAfterRun: false })
      )
      const events = [...yield* Stream.runCollect(tambo.run("hi"))]
      expect(events.at(-1)!.event.type).toBe("RUN_FINISHED")
      const thread = ClientState.getThreadState(yield* tambo.state, "thr_c")!
      expect(thread.thread.messages.at(-1)).toMatchObject({ id: "m-run_1", role: "assistant", content: [{ type: "text", text: "Hi there" }] })
      expect(thread.anomalies.map((a) => [a.eventType, a.reason])).toEqual([["TEXT_MESSAGE_CONTENT", "message m-run_1 already ended"]])
    }))
})
