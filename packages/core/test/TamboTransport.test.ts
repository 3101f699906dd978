import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Script } from "@tambo-effect/testing"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as TamboConfig from "../src/TamboConfig.js"
import { type TamboError, TransportError } from "../src/TamboError.js"
import { errorFromStatus } from "../src/internal/http/apiError.js"
import * as Transport from "../src/TamboTransport.js"
import { aliveWhileWaiting, fields, passSleepsUntil, readWeakly, useServer } from "./helpers.js"

const server = useServer()

const transportLayer = (options: Partial<TamboConfig.Options> = {}) =>
  Transport.layer.pipe(
    Layer.provide(
      TamboConfig.layer({ apiKey: server().apiKey, tamboUrl: server().url, maxRetries: 0, ...options })
    ),
    Layer.provide(FetchHttpClient.layer)
  )

const user: Transport.Credentials = { _tag: "UserKey", userKey: "u-transport" }
const hello: Transport.RunRequest = { message: { role: "user", content: [{ type: "text", text: "hello" }] } }

describe("TamboTransport", () => {
  it.live("a run request carries the API key, accepts SSE, and puts the user key where the API reads it", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("hi")])
      const transport = yield* Transport.TamboTransport
      const events = yield* Stream.runCollect(transport.createRun(user, hello))
      expect(Chunk.toReadonlyArray(events).map((e) => e.type)).toEqual([
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED"
      ])
      const request = server().requests.find((r) => r.path === "/v1/threads/runs")!
      expect(request.headers["x-api-key"]).toBe(server().apiKey)
      expect(request.headers.accept).toBe("text/event-stream")
      expect(request.body).toMatchObject({ thread: { userKey: "u-transport" }, message: hello.message })
      expect((request.body as Record<string, unknown>).userKey).toBeUndefined()
    }).pipe(Effect.provide(transportLayer())))

  it.live("REST calls go through the typescript-sdk with the same headers and the userKey query", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("hi")])
      const transport = yield* Transport.TamboTransport
      yield* Stream.runDrain(transport.createRun(user, hello))
      const list = yield* transport.listThreads(user, { limit: 10 })
      expect(list.threads).toHaveLength(1)
      const thread = yield* transport.retrieveThread(user, list.threads[0]!.id)
      expect(thread.messages.map((m) => m.role)).toEqual(["user", "assistant"])
      const gets = server().requests.filter((r) => r.method === "GET")
      expect(gets.map((r) => r.query.userKey)).toEqual(["u-transport", "u-transport"])
      expect(gets.every((r) => r.headers["x-api-key"] === server().apiKey)).toBe(true)
    }).pipe(Effect.provide(transportLayer())))

  it.live("a bearer credential is sent as Authorization and no userKey is added", () =>
    Effect.gen(function* () {
      const transport = yield* Transport.TamboTransport
      const token = yield* transport.exchangeToken(Redacted.make("subject-token-1"))
      expect(token.expiresInSeconds).toBeGreaterThan(0)
      const bearer: Transport.Credentials = { _tag: "Bearer", token: token.token }
      const list = yield* transport.listThreads(bearer)
      expect(list.threads).toEqual([])
      const get = server().requests.find((r) => r.method === "GET")!
      expect(get.headers.authorization).toBe(`Bearer ${Redacted.value(token.token)}`)
      expect(get.query.userKey).toBeUndefined()
    }).pipe(Effect.provide(transportLayer())))

  it.effect("a run request that failed before its first event is retried on the schedule (TestClock)", () =>
    Effect.gen(function* () {
      let calls = 0
      server().setScript(() => (++calls < 3 ? [Script.httpError(503)] : [Script.text("third time")]))
      const transport = yield* Transport.TamboTransport
      const fiber = yield* Effect.fork(Stream.runCollect(transport.createRun(user, hello)))
      // Each retry waits on the clock: nothing happens until it moves.
      yield* passSleepsUntil("1 second", () => fiber.unsafePoll() !== null)
      const events = yield* Fiber.join(fiber)
      expect(calls).toBe(3)
      expect(Chunk.toReadonlyArray(events).at(-1)!.type).toBe("RUN_FINISHED")
    }).pipe(Effect.provide(transportLayer({ maxRetries: 2 }))))

  it.effect("a run request that keeps failing is tried once plus maxRetries times; one it may not retry, once", () =>
    Effect.gen(function* () {
      let calls = 0
      server().setScript((request) => {
        calls++
        return [Script.httpError(request.text === "busy" ? 503 : 400)]
      })
      const transport = yield* Transport.TamboTransport
      const message = (text: string) => ({ message: { role: "user" as const, content: [{ type: "text" as const, text }] } })
      const fiber = yield* Effect.fork(Effect.flip(Stream.runDrain(transport.createRun(user, message("busy")))))
      yield* passSleepsUntil("1 second", () => fiber.unsafePoll() !== null)
      const busy = yield* Fiber.join(fiber)
      expect(calls).toBe(3)
      expect(fields(busy)).toMatchObject({ _tag: "ApiError", status: 503, retryable: true })
      calls = 0
      const refused = yield* Effect.flip(Stream.runDrain(transport.createRun(user, message("bad"))))
      expect(calls).toBe(1)
      expect(fields(refused)).toMatchObject({ _tag: "ApiError", status: 400, retryable: false })
    }).pipe(Effect.provide(transportLayer({ maxRetries: 2 }))))

  it.live("a 409 is a RunConflictError; a problem-details body gives the error its code", () =>
    Effect.sync(() => {
      const conflict = errorFromStatus(409, { type: "urn:tambo:error:concurrent_run", title: "Concurrent Run", status: 409, detail: "busy" }, { method: "POST", url: "u", threadId: "t" })
      expect(fields(conflict)).toMatchObject({ _tag: "RunConflictError", reason: "ActiveOnServer", threadId: "t", message: "busy" })
      const invalid = errorFromStatus(400, { type: "urn:tambo:error:invalid_previous_run", title: "Invalid Previous Run", status: 400, detail: "bad run" }, { method: "POST", url: "u" })
      expect(fields(invalid)).toMatchObject({ _tag: "ApiError", reason: "BadRequest", code: "INVALID_PREVIOUS_RUN", retryable: false, category: "client_error" })
      const nest = errorFromStatus(403, { statusCode: 403, message: "Forbidden resource", error: "Forbidden" }, { method: "GET", url: "u" })
      expect(fields(nest)).toMatchObject({ reason: "Forbidden", message: "Forbidden resource" })
      expect(fields(errorFromStatus(429, undefined, { method: "GET", url: "u" }))).toMatchObject({ retryable: true })
      expect(fields(errorFromStatus(500, undefined, { method: "GET", url: "u" }))).toMatchObject({ retryable: false })
    }))

  it.live("an unreachable server is a TransportError (Connect)", () =>
    Effect.gen(function* () {
      const transport = yield* Transport.TamboTransport
      const error = yield* Stream.runDrain(transport.createRun(user, hello)).pipe(Effect.flip)
      expect(fields(error)).toMatchObject({ _tag: "TransportError", reason: "Connect" })
      const rest = yield* transport.listThreads(user).pipe(Effect.flip)
      expect(fields(rest)).toMatchObject({ _tag: "TransportError", reason: "Connect" })
    }).pipe(Effect.provide(transportLayer({ tamboUrl: "http://127.0.0.1:1" }))))

  it.live("an API key never shows in an error", () =>
    Effect.gen(function* () {
      const transport = yield* Transport.TamboTransport
      const error = yield* Stream.runDrain(transport.createRun(user, hello)).pipe(Effect.flip)
      expect(String(error)).not.toContain("secret-key-123")
      expect(JSON.stringify(error)).not.toContain("secret-key-123")
    }).pipe(Effect.provide(transportLayer({ apiKey: "secret-key-123" }))))
})

// A run's body is read directly when the client's response exposes its web body (fetch), and
// through the response's byte stream otherwise: both readers behave the same.
const withoutWebBody = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(
    HttpClient.HttpClient,
    HttpClient.transformResponse(Effect.map((response) =>
      new Proxy(response, {
        get: (target, key) => (key === "source" ? undefined : Reflect.get(target, key, target))
      })
    ))
  )
).pipe(Layer.provide(FetchHttpClient.layer))

const readers = [
  { name: "the web body", http: FetchHttpClient.layer },
  { name: "the byte stream", http: withoutWebBody }
] as const

describe.each(readers)("a run's body read through $name", ({ http }) => {
  const layer = Transport.layer.pipe(
    Layer.provide(Layer.suspend(() =>
      TamboConfig.layer({ apiKey: server().apiKey, tamboUrl: server().url, maxRetries: 0 })
    )),
    Layer.provide(http)
  )
  const types = (events: Chunk.Chunk<Transport.RunStreamEvent>) => Chunk.toReadonlyArray(events).map((e) => e.type)

  it.live("every event arrives, split across reads however the server wrote them", () =>
    Effect.gen(function* () {
      server().setScript([Script.text(Array.from({ length: 2_000 }, (_, i) => `tok${i} `))])
      const transport = yield* Transport.TamboTransport
      const events = yield* Stream.runCollect(transport.createRun(user, hello))
      const deltas = Chunk.toReadonlyArray(events).flatMap((e) => e.type === "TEXT_MESSAGE_CONTENT" ? [e.delta] : [])
      expect(deltas).toHaveLength(2_000)
      expect(deltas.join("")).toBe(Array.from({ length: 2_000 }, (_, i) => `tok${i} `).join(""))
      expect(types(events).at(-1)).toBe("RUN_FINISHED")
    }).pipe(Effect.provide(layer)))

  it.live("a connection dropped mid-stream is a Disconnected TransportError after the events before it", () =>
    Effect.gen(function* () {
      server().setScript([Script.text(["a", "b", "c", "d"]), Script.dropAfter(3)])
      const transport = yield* Transport.TamboTransport
      const seen: Array<string> = []
      const error = yield* transport.createRun(user, hello).pipe(
        Stream.runForEach((e) => Effect.sync(() => seen.push(e.type))),
        Effect.flip
      )
      // The server drops the connection before the message ends.
      expect(seen).toEqual(["RUN_STARTED", "TEXT_MESSAGE_START", ...Array(4).fill("TEXT_MESSAGE_CONTENT")])
      expect(fields(error)).toMatchObject({ _tag: "TransportError", reason: "Disconnected", method: "POST" })
    }).pipe(Effect.provide(layer)))

  it.live("a CRLF the server writes in two writes is one line end: an event's two data lines stay one event", () =>
    Effect.gen(function* () {
      // The testing server writes strings, so it can split between characters but not send an
      // empty read; the decodeSse tests below cover those. The delay flushes the CR on its own.
      server().setScript([
        Script.frame('data: {"type":"CUSTOM",\r'),
        Script.delay(20),
        Script.frame('\ndata: "name":"split","value":{"ok":true}}\r\n\r\n')
      ])
      const transport = yield* Transport.TamboTransport
      const events = yield* Stream.runCollect(transport.createRun(user, hello))
      // A custom event the SDK does not know is kept as UNKNOWN, with the event as sent.
      expect(types(events)).toEqual(["RUN_STARTED", "UNKNOWN", "RUN_FINISHED"])
      expect(Chunk.unsafeGet(events, 1)).toMatchObject({ event: { type: "CUSTOM", name: "split", value: { ok: true } } })
    }).pipe(Effect.provide(layer)))

  it.live("a malformed frame is a DecodeError carrying it, after the events before it", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("a"), Script.frame("data: {not json\n\n")])
      const transport = yield* Transport.TamboTransport
      const seen: Array<string> = []
      const error = yield* transport.createRun(user, hello).pipe(
        Stream.runForEach((e) => Effect.sync(() => seen.push(e.type))),
        Effect.flip
      )
      expect(seen).toContain("TEXT_MESSAGE_CONTENT")
      expect(fields(error)).toMatchObject({ _tag: "DecodeError", frame: "{not json" })
    }).pipe(Effect.provide(layer)))

  /** Collects a run's events in a fiber until `count` arrived; the fiber goes on reading. */
  const readUntil = (events: Stream.Stream<Transport.RunStreamEvent, TamboError>, count: number) =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      const fiber = yield* Effect.fork(Stream.runForEach(events, (e) => Effect.sync(() => seen.push(e.type))))
      while (seen.length < count) yield* Effect.sleep("5 millis")
      return { seen, fiber }
    })

  /**
   * An aborted request: its stream broke (the caller knows it aborted; the transport only says
   * the stream broke), and the server saw the connection close.
   */
  const expectAborted = (fiber: Fiber.RuntimeFiber<void, TamboError>) =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(fields(error)).toMatchObject({ _tag: "TransportError", reason: "Disconnected" })
      while (server().cancels.length === 0) yield* Effect.sleep("5 millis")
      expect(server().cancels.map((c) => c.reason)).toEqual(["connection_closed"])
    })

  it.live("registerAbort: the abort it hands over ends a stream that waits for bytes, and closes the connection", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("partial"), Script.hang()])
      const transport = yield* Transport.TamboTransport
      const handed: Array<Effect.Effect<void>> = []
      const { seen, fiber } = yield* readUntil(
        transport.createRun(user, hello, { registerAbort: (abort) => Effect.sync(() => handed.push(abort)) }),
        3
      )
      expect(handed).toHaveLength(1)
      yield* handed[0]!
      yield* expectAborted(fiber)
      expect(seen).toEqual(["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"])
    }).pipe(Effect.provide(layer)))

  it.live("registerAbort: a caller that fails there (it cancelled already) stops the request before it is sent", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("never sent")])
      const transport = yield* Transport.TamboTransport
      const refused = new TransportError({ reason: "Connect", message: "cancelled before the request" })
      const error = yield* transport.createRun(user, hello, { registerAbort: () => Effect.fail(refused) }).pipe(
        Stream.runDrain,
        Effect.flip
      )
      expect(error).toBe(refused)
      expect(server().requests.filter((r) => r.path === "/v1/threads/runs")).toHaveLength(0)
    }).pipe(Effect.provide(layer)))

  it.live("a stream waiting for bytes holds none of the events already read", () =>
    Effect.gen(function* () {
      server().setScript([Script.text(["a", "b", "c"]), Script.hang()])
      const transport = yield* Transport.TamboTransport
      // RUN_STARTED, TEXT_MESSAGE_START and three deltas; then the server hangs.
      const { read, fiber } = yield* readWeakly(transport.createRun(user, hello), 5, (event) => [event])
      expect(read).toHaveLength(5)
      expect(yield* aliveWhileWaiting(read)).toBe(0)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(layer)))

  it.live("a body read to its end leaves nothing to abort; a run stopped before its end is aborted", () =>
    Effect.gen(function* () {
      const signals: Array<AbortSignal> = []
      const recording: typeof globalThis.fetch = (input, init) => {
        if (init?.signal) signals.push(init.signal)
        return globalThis.fetch(input, init)
      }
      const run = <A>(effect: Effect.Effect<A, TamboError>) => Effect.provideService(effect, FetchHttpClient.Fetch, recording)
      const transport = yield* Transport.TamboTransport
      server().setScript([Script.text(["a", "b"])])
      const all = yield* run(Stream.runCollect(transport.createRun(user, hello)))
      expect(types(all).at(-1)).toBe("RUN_FINISHED")
      expect(signals.map((signal) => signal.aborted)).toEqual([false])
      server().setScript([Script.text("partial"), Script.hang()])
      yield* run(Stream.runDrain(Stream.take(transport.createRun(user, hello), 2)))
      expect(signals.map((signal) => signal.aborted)).toEqual([false, true])
    }).pipe(Effect.provide(layer)))

  it.live("a consumer that stops early closes the connection: the server sees the run cancelled", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("partial"), Script.hang()])
      const transport = yield* Transport.TamboTransport
      const first = yield* Stream.runCollect(Stream.take(transport.createRun(user, hello), 2))
      expect(types(first)).toEqual(["RUN_STARTED", "TEXT_MESSAGE_START"])
      while (server().cancels.length === 0) yield* Effect.sleep("5 millis")
      expect(server().cancels.map((c) => c.reason)).toEqual(["connection_closed"])
    }).pipe(Effect.provide(layer)))
})

describe("decodeSse", () => {
  // One network chunk per part.
  const bytes = (...parts: Array<string>) =>
    Stream.fromChunks(...parts.map((p) => Chunk.of(new TextEncoder().encode(p))))

  it.effect("one output chunk per input chunk that completes events, frames split anywhere", () =>
    Effect.gen(function* () {
      const chunks = yield* Stream.runCollect(
        Stream.mapChunks(
          Transport.decodeSse(
            bytes(
              'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\ndata: {"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}\n\n',
              'data: {"type":"TEXT_MESS',
              'AGE_CONTENT","messageId":"m","delta":"x"}\n\n'
            )
          ),
          (chunk) => Chunk.of(chunk.length)
        )
      )
      // The middle chunk completes no event: nothing is emitted for it. Each chunk of events
      // is followed by an empty one, which lets go of the events before the next read.
      expect(Chunk.toReadonlyArray(chunks)).toEqual([2, 0, 1, 0])
    }))

  it.effect("delivers what decoded before a bad frame, then fails with the frame", () =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      const error = yield* Transport.decodeSse(
        bytes('data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\ndata: nope\n\n')
      ).pipe(
        Stream.runForEach((e) => Effect.sync(() => seen.push(e.type))),
        Effect.flip
      )
      expect(seen).toEqual(["RUN_STARTED"])
      expect(fields(error)).toMatchObject({ _tag: "DecodeError", reason: "InvalidJson", frame: "nope" })
    }))

  it.effect("a CRLF split by empty reads is one line end: an event's two data lines stay one event", () =>
    Effect.gen(function* () {
      // If the LF counted as a line end of its own, `{"type":"RUN_FINISHED",` would be an event.
      const events = yield* Stream.runCollect(
        Transport.decodeSse(bytes('data: {"type":"RUN_FINISHED",\r', "", "", '\ndata: "threadId":"t","runId":"r"}\r\n\r\n'))
      )
      expect(Chunk.toReadonlyArray(events)).toEqual([{ type: "RUN_FINISHED", threadId: "t", runId: "r" }])
    }))

  it.effect("a last event without its blank line is still decoded", () =>
    Effect.gen(function* () {
      const events = yield* Stream.runCollect(
        Transport.decodeSse(bytes('data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}'))
      )
      expect(Chunk.toReadonlyArray(events).map((e) => e.type)).toEqual(["RUN_FINISHED"])
    }))
})
