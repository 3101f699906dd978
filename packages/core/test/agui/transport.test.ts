import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { AgUiAgent, HoldingProxy, HostileServer } from "@tambo-effect/testing"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as http from "node:http"
import type * as net from "node:net"
import * as util from "node:util"
import { buildRunAgentInput } from "../../src/internal/agui/runAgentInput.js"
import { type AgUiRunRequest, runAgent } from "../../src/internal/agui/transport.js"
import type { RunStreamEvent } from "../../src/TamboTransport.js"
import { closedPort } from "../helpers.js"

const input = Either.getOrThrow(buildRunAgentInput({
  threadId: "t1",
  runId: "r1",
  messages: [{ id: "u1", role: "user", content: [{ type: "text", text: "hello" }] }],
  tools: [{ name: "get_weather", description: "The weather", inputSchema: { type: "object" } }],
  context: { page: "home" },
  state: { count: 0 }
}))

const collect = (
  agent: { readonly url: string },
  headers?: Record<string, string>,
  options: Partial<AgUiRunRequest> = {}
) =>
  runAgent({ url: agent.url, input, headers, ...options }).pipe(
    Stream.runCollect,
    Effect.map(Chunk.toReadonlyArray),
    Effect.provide(FetchHttpClient.layer)
  )

/** How a run against `server` with these bounds fails. */
const failureOf = (server: { readonly url: string }, options: Partial<AgUiRunRequest>) =>
  runAgent({ url: server.url, input, ...options }).pipe(Stream.runDrain, Effect.provide(FetchHttpClient.layer), Effect.flip)

/** Waits (in real time) until the test clock holds a sleep that wakes at or before `at`. */
const sleepDueBy = (at: number) =>
  Effect.gen(function*() {
    while (!Chunk.toReadonlyArray(yield* TestClock.sleeps()).some((wake) => wake <= at)) {
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
    }
  })

const types = (events: ReadonlyArray<RunStreamEvent>) => events.map((e) => e.type === "UNKNOWN" ? e.eventType : e.type)

describe("AG-UI transport against the scripted agent", () => {
  it.scoped("POSTs the RunAgentInput with the headers and decodes the events up to RUN_FINISHED", () =>
    Effect.gen(function*() {
      const agent = yield* AgUiAgent.scoped({ script: AgUiAgent.scripts.state })
      const events = yield* collect(agent, { authorization: "Bearer k" })
      expect(types(events)).toEqual([
        "RUN_STARTED",
        "STATE_SNAPSHOT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STATE_DELTA",
        "STATE_DELTA",
        "RUN_FINISHED"
      ])
      const request = agent.requests[0]!
      expect(request.input).toEqual(input)
      expect(request.headers["authorization"]).toBe("Bearer k")
      expect(request.headers["accept"]).toBe("text/event-stream")
      expect(request.headers["content-type"]).toContain("application/json")
    }))

  it.scoped("decodes every script's events with the SDK's schemas: reasoning under both names, tools, snapshots, steps, activities", () =>
    Effect.gen(function*() {
      const agent = yield* AgUiAgent.scoped()
      const seen = new Set<string>()
      for (const script of [
        AgUiAgent.scripts.reasoning,
        AgUiAgent.scripts.legacyReasoning,
        AgUiAgent.scripts.frontendTool,
        AgUiAgent.scripts.serverTool,
        AgUiAgent.scripts.messagesSnapshot,
        AgUiAgent.scripts.steps,
        AgUiAgent.scripts.activity
      ]) {
        agent.setScript(script)
        for (const type of types(yield* collect(agent))) seen.add(type)
      }
      expect([...seen].sort()).toEqual([
        "ACTIVITY_DELTA",
        "ACTIVITY_SNAPSHOT",
        "MESSAGES_SNAPSHOT",
        "REASONING_END",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_MESSAGE_START",
        "REASONING_START",
        "RUN_FINISHED",
        "RUN_STARTED",
        "STEP_FINISHED",
        "STEP_STARTED",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TEXT_MESSAGE_START",
        "THINKING_END",
        "THINKING_START",
        "THINKING_TEXT_MESSAGE_CONTENT",
        "THINKING_TEXT_MESSAGE_END",
        "THINKING_TEXT_MESSAGE_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "TOOL_CALL_START"
      ])
    }))

  it.scoped("RUN_ERROR: the event is emitted, then the stream fails with ApiError (RunError) carrying the agent's message and code", () =>
    Effect.gen(function*() {
      const agent = yield* AgUiAgent.scoped({ script: AgUiAgent.scripts.runError })
      const seen: Array<RunStreamEvent> = []
      const error = yield* runAgent({ url: agent.url, input }).pipe(
        Stream.runForEach((event) => Effect.sync(() => seen.push(event))),
        Effect.provide(FetchHttpClient.layer),
        Effect.flip
      )
      expect(types(seen)).toEqual(["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_ERROR"])
      expect(error._tag).toBe("ApiError")
      if (error._tag === "ApiError") {
        expect([error.reason, error.message, error.code, error.retryable]).toEqual([
          "RunError",
          "The model is unavailable",
          "MODEL_UNAVAILABLE",
          false
        ])
      }
    }))

  it.scoped("a consumer that stops at RUN_ERROR (as the run loop does) ends without pulling the failure", () =>
    Effect.gen(function*() {
      const agent = yield* AgUiAgent.scoped({ script: AgUiAgent.scripts.runError })
      const events = yield* runAgent({ url: agent.url, input }).pipe(
        Stream.takeUntil((event) => event.type === "RUN_ERROR"),
        Stream.runCollect,
        Effect.provide(FetchHttpClient.layer)
      )
      expect(Chunk.toReadonlyArray(events).at(-1)).toEqual({
        type: "RUN_ERROR",
        message: "The model is unavailable",
        code: "MODEL_UNAVAILABLE"
      })
    }))

  it.scoped.each([
    [400, "BadRequest"],
    [401, "Unauthorized"],
    [404, "NotFound"],
    [500, "ServerError"],
    [503, "ServerError"]
  ] as const)("HTTP %d: ApiError (%s) with the status", ([status, reason]) =>
    Effect.gen(function*() {
      const agent = yield* AgUiAgent.scoped({ script: [AgUiAgent.httpError(status, { message: "nope" })] })
      // No retries: a 503 is retried otherwise (see "retries" below).
      const error = yield* Effect.flip(collect(agent, undefined, { maxRetries: 0 }))
      expect(error._tag).toBe("ApiError")
      if (error._tag === "ApiError") expect([error.reason, error.status, error.message]).toEqual([reason, status, "nope"])
    }))

  it.scoped("a RunAgentInput the agent refuses (422): ApiError (BadRequest) with the agent's answer", () =>
    Effect.gen(function*() {
      const agent = yield* AgUiAgent.scoped()
      const error = yield* runAgent({ url: agent.url, input: { ...input, runId: 7 as unknown as string } }).pipe(
        Stream.runDrain,
        Effect.provide(FetchHttpClient.layer),
        Effect.flip
      )
      expect(error._tag === "ApiError" && [error.reason, error.status]).toEqual(["BadRequest", 422])
    }))

  it.scoped("a dropped connection: the events before it, then TransportError (Disconnected)", () =>
    Effect.gen(function*() {
      const agent = yield* AgUiAgent.scoped({ script: AgUiAgent.scripts.dropped })
      const seen: Array<RunStreamEvent> = []
      const error = yield* runAgent({ url: agent.url, input }).pipe(
        Stream.runForEach((event) => Effect.sync(() => seen.push(event))),
        Effect.provide(FetchHttpClient.layer),
        Effect.flip
      )
      expect(types(seen)).toContain("TEXT_MESSAGE_CONTENT")
      expect(error._tag === "TransportError" && error.reason).toBe("Disconnected")
    }))

  it.scoped("a stream that ends cleanly without RUN_FINISHED: TransportError (Disconnected)", () =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.frames([JSON.stringify({ type: "RUN_STARTED", threadId: "t1", runId: "r1" })]))
      const error = yield* Effect.flip(collect(server))
      expect(error._tag === "TransportError" && [error.reason, error.message]).toEqual([
        "Disconnected",
        expect.stringContaining("ended before RUN_FINISHED")
      ])
    }))

  it.scoped("RUN_FINISHED settles the run: a server that keeps the stream open after it is not waited for", () =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.framesThenStall([
        JSON.stringify({ type: "RUN_STARTED", threadId: "t1", runId: "r1" }),
        JSON.stringify({ type: "RUN_FINISHED", threadId: "t1", runId: "r1" })
      ]))
      expect(types(yield* collect(server))).toEqual(["RUN_STARTED", "RUN_FINISHED"])
    }))

  it.scoped("a 200 answered with JSON or HTML rather than an event stream: DecodeError (InvalidResponse) saying what came and how it begins", () =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.status(200, {
        headers: { "content-type": "application/json; charset=utf-8" },
        body: JSON.stringify({ error: "upstream connect error" })
      }))
      const json = yield* Effect.flip(collect(server))
      expect(json).toMatchObject({ _tag: "DecodeError", reason: "InvalidResponse" })
      expect(json.message).toContain("is not an event stream: status 200, application/json")
      expect(json.message).toContain("upstream connect error")

      server.respond(HostileServer.status(200, { headers: { "content-type": "text/html" }, body: "<!doctype html><title>Sign in</title>" }))
      const html = yield* Effect.flip(collect(server))
      expect(html).toMatchObject({ _tag: "DecodeError", reason: "InvalidResponse" })
      expect(html.message).toContain("text/html, which begins \"<!doctype html><title>Sign in</title>\"")
    }))

  it.scopedLive("one whose body never ends fails all the same, without how it begins", () =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.raw(["HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ntransfer-encoding: chunked\r\n\r\n5\r\n<html\r\n"], { stall: true }))
      const stalled = yield* Effect.flip(collect(server))
      expect(stalled).toMatchObject({ _tag: "DecodeError", reason: "InvalidResponse" })
      expect(stalled.message).toMatch(/status 200, text\/html$/)
    }))

  it.scoped("a malformed frame: DecodeError with the frame", () =>
    Effect.gen(function*() {
      const agent = yield* AgUiAgent.scoped({ script: [AgUiAgent.frame("data: {not json\n\n")] })
      const error = yield* Effect.flip(collect(agent))
      expect(error._tag === "DecodeError" && [error.reason, error.frame]).toEqual(["InvalidJson", "{not json"])
    }))

  it.scoped("a redirect is not followed: TransportError (Redirect)", () =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.redirect(307, "http://127.0.0.1:1/elsewhere"))
      const error = yield* Effect.flip(collect(server))
      expect(error._tag === "TransportError" && [error.reason, error.status]).toEqual(["Redirect", 307])
      expect(server.requests).toHaveLength(1)
    }))

  it.scoped("nothing listening: TransportError (Connect)", () =>
    Effect.gen(function*() {
      // No retries: a failed connection is retried otherwise (see "retries" below).
      const error = yield* Effect.flip(collect({ url: "http://127.0.0.1:1/agent" }, undefined, { maxRetries: 0 }))
      expect(error._tag === "TransportError" && error.reason).toBe("Connect")
    }))

  it.scoped("interrupting the run aborts the request: the agent sees its connection closed", () =>
    Effect.gen(function*() {
      const agent = yield* AgUiAgent.scoped({ script: [AgUiAgent.text("waiting"), AgUiAgent.hang()] })
      const first = yield* runAgent({ url: agent.url, input }).pipe(
        // Ending the stream after the text's start closes its scope, as an interruption does.
        Stream.take(2),
        Stream.runCollect,
        Effect.provide(FetchHttpClient.layer)
      )
      expect(types(Chunk.toReadonlyArray(first))).toEqual(["RUN_STARTED", "TEXT_MESSAGE_START"])
      expect(yield* Effect.promise(() => agent.requests[0]!.ended)).toBe("closed")
    }))

  it.scoped("interrupting the fiber that runs it aborts the request", () =>
    Effect.gen(function*() {
      const agent = yield* AgUiAgent.scoped({ script: [AgUiAgent.text("waiting"), AgUiAgent.hang()] })
      const started = yield* Deferred.make<void>()
      const fiber = yield* runAgent({ url: agent.url, input }).pipe(
        Stream.runForEach((event) => event.type === "TEXT_MESSAGE_END" ? Deferred.succeed(started, undefined) : Effect.void),
        Effect.provide(FetchHttpClient.layer),
        Effect.fork
      )
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      expect(yield* Effect.promise(() => agent.requests[0]!.ended)).toBe("closed")
    }))

  it.scopedLive("an agent that never answers: TransportError (Timeout) after firstByteTimeout", () =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.silent())
      const error = yield* failureOf(server, { firstByteTimeout: 150 })
      expect(error._tag === "TransportError" && [error.reason, error.message]).toEqual([
        "Timeout",
        `No response within firstByteTimeout (150 ms) from ${server.url}/`
      ])
      expect(error).toMatchObject({ mayHaveReachedServer: true, retryable: false })
      expect(server.requests).toHaveLength(1)
    }))

  it.scopedLive("a 503 whose body never ends: TransportError (Timeout) after firstByteTimeout, not sent again", () =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.raw(
        ["HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"mess"],
        { stall: true }
      ))
      const error = yield* failureOf(server, { firstByteTimeout: 150 })
      expect(error._tag === "TransportError" && [error.reason, error.message]).toEqual([
        "Timeout",
        `No response within firstByteTimeout (150 ms) from ${server.url}/`
      ])
      expect(error).toMatchObject({ mayHaveReachedServer: true, retryable: false })
      expect(server.requests).toHaveLength(1)
    }))

  it.scopedLive("a stream that stalls after its first event: TransportError (Timeout) after idleTimeout, the events before it delivered", () =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.framesThenStall([JSON.stringify({ type: "RUN_STARTED", threadId: "t1", runId: "r1" })]))
      const seen: Array<string> = []
      const error = yield* runAgent({ url: server.url, input, idleTimeout: 150 }).pipe(
        Stream.runForEach((event) => Effect.sync(() => seen.push(event.type))),
        Effect.provide(FetchHttpClient.layer),
        Effect.flip
      )
      expect(seen).toEqual(["RUN_STARTED"])
      expect(error._tag === "TransportError" && [error.reason, error.message]).toEqual([
        "Timeout",
        `The agent's stream got nothing for idleTimeout (150 ms) from ${server.url}/`
      ])
    }))

  it.scopedLive("headers and then no event: TransportError (Timeout) after firstByteTimeout, not idleTimeout", () =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.headersThenStall())
      const error = yield* failureOf(server, { firstByteTimeout: 150, idleTimeout: 60_000 })
      expect(error._tag === "TransportError" && [error.reason, error.message]).toEqual([
        "Timeout",
        `No event within firstByteTimeout (150 ms) from ${server.url}/`
      ])
      // Our own timeout is not retried: the agent may have started the run.
      expect(server.requests).toHaveLength(1)
    }))

  it.scoped("a first event later than idleTimeout but within firstByteTimeout is waited for", () =>
    Effect.gen(function*() {
      // An agent that sends its headers at once and its events only when released.
      let release!: () => void
      const released = new Promise<void>((resolve) => release = resolve)
      let answered!: () => void
      const headersSent = new Promise<void>((resolve) => answered = resolve)
      const server = yield* Effect.acquireRelease(
        Effect.async<http.Server>((resume) => {
          const created = http.createServer((request, response) => {
            request.resume()
            response.writeHead(200, { "content-type": "text/event-stream" })
            response.flushHeaders()
            answered()
            void released.then(() =>
              response.end(
                `data: ${JSON.stringify({ type: "RUN_STARTED", threadId: "t1", runId: "r1" })}\n\n` +
                  `data: ${JSON.stringify({ type: "RUN_FINISHED", threadId: "t1", runId: "r1" })}\n\n`
              )
            )
          })
          created.listen(0, "127.0.0.1", () => resume(Effect.succeed(created)))
        }),
        (created) => Effect.async<void>((resume) => {
          created.closeAllConnections()
          created.close(() => resume(Effect.void))
        })
      )
      const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/agent`
      const fiber = yield* Effect.fork(collect({ url }, undefined, { firstByteTimeout: "60 seconds", idleTimeout: "1 second" }))
      yield* Effect.promise(() => headersSent)
      // Once the body is being read (a timer of a second, if there is one), a second and more passes.
      for (let polls = 0; polls < 40; polls++) {
        if (Chunk.toReadonlyArray(yield* TestClock.sleeps()).some((wake) => wake <= 1000)) break
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      }
      yield* TestClock.adjust("2 seconds")
      release()
      expect(types(yield* Fiber.join(fiber))).toEqual(["RUN_STARTED", "RUN_FINISHED"])
    }))

  it.scoped.each([
    ["an Effect that never ends", Effect.never],
    ["a function whose promise never settles", () => new Promise<Record<string, string>>(() => {})]
  ] as const)("headers from %s fail the run with CallbackError (Headers) at firstByteTimeout, and nothing is sent", ([, headers]) =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.frames([JSON.stringify({ type: "RUN_STARTED", threadId: "t1", runId: "r1" })]))
      const fiber = yield* Effect.fork(failureOf(server, { headers, firstByteTimeout: "5 seconds" }))
      yield* sleepDueBy(5000)
      yield* TestClock.adjust("5 seconds")
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "CallbackError", reason: "Headers" })
      expect(error.message).toContain("firstByteTimeout (5000 ms)")
      expect(server.requests).toHaveLength(0)
    }))

  it.scoped("the first attempt's firstByteTimeout counts from before the headers are read", () =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.headersThenStall())
      const headers = Effect.as(Effect.sleep("4 seconds"), { authorization: "Bearer k" })
      const fiber = yield* Effect.fork(failureOf(server, { headers, firstByteTimeout: "5 seconds" }))
      yield* sleepDueBy(4000)
      yield* TestClock.adjust("4 seconds")
      // Once the request is out, under a deadline, the rest of the 5 s passes.
      while (server.requests.length === 0) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      yield* sleepDueBy(5000)
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fiber)
      expect(error._tag === "TransportError" && error.reason).toBe("Timeout")
      expect(server.requests).toHaveLength(1)
    }))

  it.scopedLive("a first event in time ends the deadline: then each read has idleTimeout", () =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.framesThenStall([JSON.stringify({ type: "RUN_STARTED", threadId: "t1", runId: "r1" })]))
      const error = yield* failureOf(server, { firstByteTimeout: 100, idleTimeout: 300 })
      expect(error._tag === "TransportError" && error.message).toBe(
        `The agent's stream got nothing for idleTimeout (300 ms) from ${server.url}/`
      )
    }))
})

describe("retries", () => {
  /** Waits (in real time) until the test clock holds a sleep that wakes at or before `at`, and returns it. */
  const retryScheduledBy = (at: number) =>
    Effect.gen(function*() {
      for (;;) {
        const due = Chunk.toReadonlyArray(yield* TestClock.sleeps()).filter((wake) => wake <= at)
        if (due.length > 0) return due[0]!
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      }
    })

  const ok = HostileServer.frames([
    JSON.stringify({ type: "RUN_STARTED", threadId: "t1", runId: "r1" }),
    JSON.stringify({ type: "RUN_FINISHED", threadId: "t1", runId: "r1" })
  ])

  it.scoped("a 503 then an answer: one run, after the backoff", () =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.status(503), ok)
      const fiber = yield* Effect.fork(collect(server))
      yield* retryScheduledBy(1000)
      expect(server.requests).toHaveLength(1)
      yield* TestClock.adjust(1000)
      expect(types(yield* Fiber.join(fiber))).toEqual(["RUN_STARTED", "RUN_FINISHED"])
      expect(server.requests).toHaveLength(2)
      expect(server.requests[1]!.body).toBe(server.requests[0]!.body)
    }))

  it.scoped("a 429 with Retry-After is sent again when it says, not before", () =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.status(429, { headers: { "retry-after": "5" } }), ok)
      const fiber = yield* Effect.fork(collect(server))
      expect(yield* retryScheduledBy(30_000)).toBe(5000)
      yield* TestClock.adjust(4999)
      expect(server.requests).toHaveLength(1)
      yield* TestClock.adjust(1)
      expect(types(yield* Fiber.join(fiber))).toEqual(["RUN_STARTED", "RUN_FINISHED"])
      expect(server.requests).toHaveLength(2)
    }))

  it.scoped("a Retry-After past maxRetryAfter is not waited for: the ApiError at once, with retryAfter", () =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.status(429, { headers: { "retry-after": "120" } }), ok)
      const error = yield* Effect.flip(collect(server, undefined, { maxRetryAfter: "60 seconds" }))
      expect(error).toMatchObject({ _tag: "ApiError", reason: "RateLimited", status: 429, retryAfter: 120_000 })
      expect(server.requests).toHaveLength(1)
    }))

  it.scoped.each([400, 401, 404, 422, 500])("a %d is not retried", (status) =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.status(status), ok)
      const error = yield* Effect.flip(collect(server))
      expect(error).toMatchObject({ _tag: "ApiError", status })
      expect(server.requests).toHaveLength(1)
    }))

  it.scoped("the attempts are bounded: maxRetries retries, then the last answer's ApiError", () =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.status(503, { headers: { "retry-after": "1" } }))
      const fiber = yield* Effect.fork(collect(server, undefined, { maxRetries: 3 }))
      for (let retry = 1; retry <= 3; retry++) {
        yield* retryScheduledBy(Number.MAX_SAFE_INTEGER)
        yield* TestClock.adjust(10_000)
      }
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error).toMatchObject({ _tag: "ApiError", status: 503, retryAfter: 1000 })
      expect(server.requests).toHaveLength(4)
    }))

  /** What a run's request that may have reached the agent fails with, at `url`. */
  const mayHaveReached = (url: string) => ({
    _tag: "TransportError",
    reason: "Connect",
    message: `connection reset at ${url}: the run's request may have reached the server, so it was not sent again`,
    mayHaveReachedServer: true,
    retryable: false
  })

  it.scoped("a connection reset once the request went out is not sent again, retries allowed: the agent may have started the run", () =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.reset(), ok)
      const error = yield* Effect.flip(collect(server))
      expect(error).toMatchObject(mayHaveReached(`${server.url}/`))
      expect(server.requests).toHaveLength(1)
    }))

  it.scoped("an agent whose answer's connection was reset once it took the request is asked once: it runs once", () =>
    Effect.gen(function*() {
      const agent = yield* AgUiAgent.scoped()
      const proxy = yield* HoldingProxy.scoped(agent)
      proxy.holdResponse(() => true).reset()
      const error = yield* Effect.flip(collect({ url: `${proxy.url}/agent` }))
      expect(error).toMatchObject(mayHaveReached(`${proxy.url}/agent`))
      expect(agent.requests).toHaveLength(1)
    }))

  it.scoped("nothing listening: sent maxRetries more times, then TransportError (Connect)", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const fiber = yield* Effect.fork(collect({ url: `http://127.0.0.1:${port}/agent` }, undefined, { maxRetries: 1 }))
      yield* retryScheduledBy(1000)
      yield* TestClock.adjust(1000)
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error._tag === "TransportError" && error.reason).toBe("Connect")
    }))

  it.scoped("a stream that breaks after its first byte is never sent again", () =>
    Effect.gen(function*() {
      const agent = yield* AgUiAgent.scoped({ script: AgUiAgent.scripts.dropped })
      const error = yield* Effect.flip(collect(agent))
      expect(error._tag === "TransportError" && error.reason).toBe("Disconnected")
      expect(agent.requests).toHaveLength(1)
    }))
})

describe("no secret of the agent's URL or headers in any error", () => {
  const password = "pw-SECRET-0001"
  const token = "qs-SECRET-0002"
  const bearer = "Bearer hd-SECRET-0003"

  const expectNoSecret = (error: unknown) => {
    const cause = Cause.fail(error)
    for (
      const text of [
        (error as Error).message,
        util.inspect(error, { depth: 20, showHidden: true }),
        JSON.stringify(error),
        Cause.pretty(cause)
      ]
    ) {
      for (const secret of [password, token, bearer]) expect(text).not.toContain(secret)
    }
  }

  const failureAt = (url: string) =>
    runAgent({ url, input, headers: { authorization: bearer }, maxRetries: 0 }).pipe(
      Stream.runDrain,
      Effect.provide(FetchHttpClient.layer),
      Effect.flip
    )

  it.scopedLive.each([
    ["connection reset", () => HostileServer.reset()],
    ["a 500 with a body", () => HostileServer.status(500, { headers: { "content-type": "application/json" }, body: "{\"message\":\"boom\"}" })],
    ["a redirect", () => HostileServer.redirect(307, "http://127.0.0.1:1/elsewhere")],
    ["a 204, with no body", () => HostileServer.status(204)],
    ["a stream that breaks", () => HostileServer.raw(["HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n5\r\ndata:"])]
  ] as const)("%s, on a URL with user info or a token in its query", ([, fault]) =>
    Effect.gen(function*() {
      const server = yield* HostileServer.scoped
      for (const url of [`${server.url}/agent?token=${token}`, server.url.replace("http://", `http://someone:${password}@`)]) {
        server.respond(fault())
        expectNoSecret(yield* failureAt(url))
      }
    }))

  it.live("a URL that does not parse: TransportError, without its password or its query", () =>
    Effect.gen(function*() {
      const error = yield* failureAt(`http://someone:${password}@127.0.0.1:99999/agent?token=${token}`)
      expect(error._tag).toBe("TransportError")
      expectNoSecret(error)
    }))
})
