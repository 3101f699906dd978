// A broken or hostile server, on loopback: each fault ends in a typed outcome, promptly.
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { HostileServer } from "@tambo-effect/testing"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as http from "node:http"
import type * as net from "node:net"
import * as TamboConfig from "../src/TamboConfig.js"
import * as Transport from "../src/TamboTransport.js"
import { fields, sleepScheduledAt } from "./helpers.js"

const user: Transport.Credentials = { _tag: "UserKey", userKey: "user-1" }
const hello: Transport.RunRequest = { message: { role: "user", content: [{ type: "text", text: "hello" }] } }

const runStarted = JSON.stringify({ type: "RUN_STARTED", threadId: "t-1", runId: "r-1" })
const runFinished = JSON.stringify({ type: "RUN_FINISHED", threadId: "t-1", runId: "r-1" })

const transportAt = (url: string, options: Partial<TamboConfig.Options> = {}) =>
  Transport.layer.pipe(
    Layer.provide(TamboConfig.layer({ apiKey: "api-key", tamboUrl: url, maxRetries: 0, ...options })),
    Layer.provide(FetchHttpClient.layer)
  )

/** Runs `createRun` to its end against `server` and returns its exit. */
const runAgainst = (server: { readonly url: string }, options: Partial<TamboConfig.Options> = {}) =>
  Effect.flatMap(Transport.TamboTransport, (transport) =>
    Stream.runCollect(transport.createRun(user, hello)).pipe(Effect.map(Chunk.toReadonlyArray), Effect.either)).pipe(
      Effect.provide(transportAt(server.url, options))
    )

describe("huge frames", () => {
  it.scoped("an event at maxFrameBytes decodes; one over it fails with FrameTooLarge, showing only its start", () =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.frames([runStarted, HostileServer.paddedEvent(1000), runFinished]))
      const ok = yield* runAgainst(server, { maxFrameBytes: 1000 })
      expect(ok._tag === "Right" && ok.right.map((e) => e.type)).toEqual(["RUN_STARTED", "UNKNOWN", "RUN_FINISHED"])

      server.respond(HostileServer.frames([runStarted, HostileServer.paddedEvent(1001), runFinished]))
      const over = yield* runAgainst(server, { maxFrameBytes: 1000 })
      expect(over._tag).toBe("Left")
      if (over._tag === "Right") return
      const error = over.left
      expect(fields(error)).toMatchObject({ _tag: "DecodeError", reason: "FrameTooLarge" })
      expect(error.message).toContain("larger than maxFrameBytes (1000)")
      expect(error.message).toContain(`begins "{\\"type\\":\\"CUSTOM\\"`)
      expect(error.message.length).toBeLessThan(200)
    }))

  it.scoped("a frame over the limit arriving in small reads fails before its end arrives", () =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      // The frame never ends: only the limit can end the run.
      server.respond(HostileServer.raw([
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n",
        `data: ${runStarted}\n\ndata: {"type":"CUSTOM","name":"padding","value":"`,
        ...Array.from({ length: 20 }, () => "x".repeat(100))
      ], { stall: true }))
      const result = yield* runAgainst(server, { maxFrameBytes: 1000 })
      expect(result._tag === "Left" && fields(result.left)).toMatchObject({ _tag: "DecodeError", reason: "FrameTooLarge" })
    }))

  it.scoped("a 20 MB event in 64 KB reads decodes under a limit above it", () =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.frameOfSize(20 * 1000 * 1000))
      const result = yield* runAgainst(server, { maxFrameBytes: 32 * 1024 * 1024 })
      expect(result._tag === "Right" ? result.right.map((e) => e.type) : result.left).toEqual(["UNKNOWN"])
    }))
})

describe("timeouts of our own", () => {
  const timeoutOf = (result: { readonly _tag: "Left" | "Right"; readonly left?: unknown }) =>
    result._tag === "Left" ? fields(result.left as Error) : result

  it.scopedLive("a server that accepts and never answers: firstByteTimeout, not retried", () =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.silent())
      const result = yield* runAgainst(server, { firstByteTimeout: 150, maxRetries: 2 })
      expect(timeoutOf(result)).toMatchObject({
        _tag: "TransportError",
        reason: "Timeout",
        message: `No response within firstByteTimeout (150 ms) from ${server.url}/v1/threads/runs`
      })
      expect(server.requests).toHaveLength(1)
    }))

  it.scopedLive("headers and then nothing: the first event counts against firstByteTimeout too", () =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.headersThenStall())
      const result = yield* runAgainst(server, { firstByteTimeout: 150, idleTimeout: 60_000 })
      expect(timeoutOf(result)).toMatchObject({ _tag: "TransportError", reason: "Timeout" })
      expect(result._tag === "Left" && result.left.message).toContain("firstByteTimeout (150 ms)")
    }))

  it.scopedLive("a stream that stalls after its first event: idleTimeout, the events before it delivered", () =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.framesThenStall([runStarted]))
      const seen: Array<string> = []
      const error = yield* Effect.flatMap(Transport.TamboTransport, (transport) =>
        transport.createRun(user, hello).pipe(
          Stream.runForEach((event) => Effect.sync(() => seen.push(event.type))),
          Effect.flip
        )).pipe(Effect.provide(transportAt(server.url, { firstByteTimeout: 60_000, idleTimeout: 150 })))
      expect(seen).toEqual(["RUN_STARTED"])
      expect(fields(error)).toMatchObject({
        _tag: "TransportError",
        reason: "Timeout",
        message: `The run's stream got nothing for idleTimeout (150 ms) from ${server.url}/v1/threads/runs`
      })
    }))
})

describe("Retry-After", () => {
  const ok = HostileServer.frames([runStarted, runFinished])

  it.scoped.each([
    ["seconds", "2", 2000],
    ["an HTTP-date", new Date(3000).toUTCString(), 3000]
  ] as const)("a 429 with Retry-After in %s is retried when it says, not before", ([, header, at]) =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.status(429, { headers: { "retry-after": header } }), ok)
      const fiber = yield* Effect.fork(runAgainst(server, { maxRetries: 2 }))
      yield* sleepScheduledAt(at)
      expect(server.requests).toHaveLength(1)
      yield* TestClock.adjust(at)
      const result = yield* Fiber.join(fiber)
      expect(result._tag === "Right" && result.right.map((e) => e.type)).toEqual(["RUN_STARTED", "RUN_FINISHED"])
      expect(server.requests).toHaveLength(2)
    }))

  it.scoped("an abort handed over by registerAbort during a retry's wait ends the stream at once, with no further attempt", () =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.status(429, { headers: { "retry-after": "2" } }), ok)
      const handed: Array<Effect.Effect<void>> = []
      const fiber = yield* Effect.fork(Effect.flatMap(Transport.TamboTransport, (transport) =>
        transport.createRun(user, hello, { registerAbort: (abort) => Effect.sync(() => handed.push(abort)) }).pipe(
          Stream.runDrain,
          Effect.flip
        )).pipe(Effect.provide(transportAt(server.url, { maxRetries: 2 }))))
      yield* sleepScheduledAt(2000)
      expect(handed).toHaveLength(1)
      yield* handed[0]!
      // The clock does not move: only the abort can end the stream.
      const error = yield* Fiber.join(fiber)
      expect(fields(error)).toMatchObject({ _tag: "TransportError", reason: "Disconnected" })
      expect(error.message).toContain("aborted")
      expect(server.requests).toHaveLength(1)
    }))

  it.scoped("a REST call honours it too", () =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(
        HostileServer.status(503, { headers: { "retry-after": "2" } }),
        HostileServer.status(200, { headers: { "content-type": "application/json" }, body: JSON.stringify({ threads: [], hasMore: false }) })
      )
      const fiber = yield* Effect.fork(
        Effect.flatMap(Transport.TamboTransport, (transport) => transport.listThreads(user)).pipe(
          Effect.provide(transportAt(server.url, { maxRetries: 2 }))
        )
      )
      yield* sleepScheduledAt(2000)
      yield* TestClock.adjust(2000)
      expect(yield* Fiber.join(fiber)).toMatchObject({ threads: [] })
      expect(server.requests).toHaveLength(2)
    }))

  it.scoped("past maxRetryAfter, or out of retries, it gives up at once with retryAfter (ms) on the error", () =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.status(429, { headers: { "retry-after": "120" } }), ok)
      const tooLong = yield* runAgainst(server, { maxRetries: 2 })
      expect(tooLong._tag === "Left" && fields(tooLong.left)).toMatchObject({
        _tag: "ApiError",
        reason: "RateLimited",
        status: 429,
        retryAfter: 120_000
      })
      expect(server.requests).toHaveLength(1)

      server.respond(HostileServer.status(429, { headers: { "retry-after": "1" } }))
      const exhausted = yield* runAgainst(server, { maxRetries: 0 })
      expect(exhausted._tag === "Left" && fields(exhausted.left)).toMatchObject({ _tag: "ApiError", retryAfter: 1000 })

      const rest = yield* Effect.flip(Effect.flatMap(Transport.TamboTransport, (transport) => transport.listThreads(user)).pipe(
        Effect.provide(transportAt(server.url, { maxRetries: 0 }))
      ))
      expect(fields(rest)).toMatchObject({ _tag: "ApiError", status: 429, retryAfter: 1000 })
    }))
})

describe("redirects", () => {
  const ok = HostileServer.frames([runStarted, runFinished])

  it.scoped.each([307, 308])("a run POST redirected (%i) on its own origin is followed, with its body", (code) =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.redirect(code, "/v1/elsewhere/runs?x=1"), ok)
      const result = yield* runAgainst(server)
      expect(result._tag === "Right" && result.right.map((e) => e.type)).toEqual(["RUN_STARTED", "RUN_FINISHED"])
      expect(server.requests.map((r) => [r.method, r.url])).toEqual([
        ["POST", "/v1/threads/runs"],
        ["POST", "/v1/elsewhere/runs?x=1"]
      ])
      expect(server.requests[1]?.body).toBe(server.requests[0]?.body)
      expect(server.requests[1]?.headers["x-api-key"]).toBe("api-key")
    }))

  it.scoped("a redirect to another origin is a typed error naming it (no query), not followed, not retried", () =>
    Effect.gen(function* () {
      const first = yield* HostileServer.scoped
      const other = yield* HostileServer.scoped
      other.respond(ok)
      first.respond(HostileServer.redirect(307, `${other.url}/v1/threads/runs?token=secret`))
      const result = yield* runAgainst(first, { maxRetries: 2 })
      expect(result._tag === "Left" && fields(result.left)).toMatchObject({
        _tag: "TransportError",
        reason: "Redirect",
        status: 307,
        location: `${other.url}/v1/threads/runs`
      })
      expect(result._tag === "Left" && result.left.message).toContain(`(307) to ${other.url}/v1/threads/runs`)
      expect(result._tag === "Left" && result.left.message).not.toContain("secret")
      expect(first.requests).toHaveLength(1)
      expect(other.requests).toHaveLength(0)
    }))

  it.scoped.each([301, 302, 303])("a run POST redirected with %i (which would turn it into a GET) is a typed error", (code) =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.redirect(code, "/v1/elsewhere"), ok)
      const result = yield* runAgainst(server, { maxRetries: 2 })
      expect(result._tag === "Left" && fields(result.left)).toMatchObject({ _tag: "TransportError", reason: "Redirect", status: code })
      expect(server.requests).toHaveLength(1)
    }))

  it.live("a followed redirect whose body never ends is let go of: its connection closes though the run read its answer to the end", () =>
    Effect.gen(function* () {
      let redirected: net.Socket | undefined
      const server = http.createServer((request, response) => {
        request.resume()
        request.on("end", () => {
          if (request.url === "/v1/threads/runs") {
            redirected = request.socket
            response.writeHead(307, { location: "/v1/elsewhere/runs", "content-type": "text/plain" })
            response.write("moved")
            return
          }
          response.writeHead(200, { "content-type": "text/event-stream" })
          response.end(`data: ${runStarted}\n\ndata: ${runFinished}\n\n`)
        })
      })
      yield* Effect.acquireRelease(
        Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.async<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
      )
      const { port } = server.address() as net.AddressInfo
      // Every answer kept: a collected one would let go of its connection by itself.
      const answers: Array<Response> = []
      const keeping: typeof globalThis.fetch = (input, init) =>
        globalThis.fetch(input, init).then((answer) => {
          answers.push(answer)
          return answer
        })
      const result = yield* Effect.provideService(
        runAgainst({ url: `http://127.0.0.1:${port}` }),
        FetchHttpClient.Fetch,
        keeping
      )
      expect(answers.map((answer) => answer.status)).toEqual([307, 200])
      expect(result._tag === "Right" && result.right.map((e) => e.type)).toEqual(["RUN_STARTED", "RUN_FINISHED"])
      const socket = redirected!
      // Only the client can close it: the server never ends that answer.
      yield* Effect.async<void>((resume) => {
        if (socket.closed) resume(Effect.void)
        else socket.once("close", () => resume(Effect.void))
      })
    }).pipe(Effect.scoped))

  it.scoped("a redirect loop ends after a few hops with a typed error", () =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.redirect(307, "/v1/threads/runs"))
      const result = yield* runAgainst(server)
      expect(result._tag === "Left" && fields(result.left)).toMatchObject({ _tag: "TransportError", reason: "Redirect" })
      expect(server.requests.length).toBeLessThanOrEqual(6)
    }))

  it.scoped("a REST call is never sent to another origin: the redirect is a typed error, the other origin sees nothing", () =>
    Effect.gen(function* () {
      const first = yield* HostileServer.scoped
      const other = yield* HostileServer.scoped
      other.respond(HostileServer.status(200, { headers: { "content-type": "application/json" }, body: "{\"threads\":[],\"hasMore\":false}" }))
      first.respond(HostileServer.redirect(307, `${other.url}/v1/threads`))
      const error = yield* Effect.flip(Effect.flatMap(Transport.TamboTransport, (transport) => transport.listThreads(user)).pipe(
        Effect.provide(transportAt(first.url, { maxRetries: 2 }))
      ))
      expect(fields(error)).toMatchObject({ _tag: "TransportError", reason: "Redirect", status: 307, location: `${other.url}/v1/threads` })
      expect(other.requests).toHaveLength(0)
      expect(first.requests).toHaveLength(1)

      // On its own origin, it is followed.
      first.respond(HostileServer.redirect(307, "/v1/threads2"), HostileServer.status(200, { headers: { "content-type": "application/json" }, body: "{\"threads\":[],\"hasMore\":false}" }))
      const listed = yield* Effect.flatMap(Transport.TamboTransport, (transport) => transport.listThreads(user)).pipe(
        Effect.provide(transportAt(first.url))
      )
      expect(listed).toMatchObject({ threads: [] })
      expect(first.requests.map((r) => r.url.split("?")[0])).toEqual(["/v1/threads", "/v1/threads2"])
    }))
})

describe("a successful answer that is no event stream", () => {
  it.scoped("a gateway's JSON or a web page fails with DecodeError InvalidResponse, saying what came and how it begins", () =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.status(200, {
        headers: { "content-type": "application/json; charset=utf-8" },
        body: JSON.stringify({ error: "upstream connect error" })
      }))
      const json = yield* runAgainst(server)
      expect(json._tag === "Left" && fields(json.left)).toMatchObject({ _tag: "DecodeError", reason: "InvalidResponse" })
      if (json._tag === "Right") return
      expect(json.left.message).toContain("is not an event stream: status 200, application/json")
      expect(json.left.message).toContain("upstream connect error")

      server.respond(HostileServer.status(200, { headers: { "content-type": "text/html" }, body: "<!doctype html><title>My app</title>" }))
      const html = yield* runAgainst(server)
      expect(html._tag === "Left" && html.left.message).toContain("text/html, which begins \"<!doctype html><title>My app</title>\"")
    }))

  it.scopedLive("one whose body never ends fails all the same, without how it begins", () =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.raw(["HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ntransfer-encoding: chunked\r\n\r\n5\r\n<html\r\n"], { stall: true }))
      const stalled = yield* runAgainst(server)
      expect(stalled._tag === "Left" && fields(stalled.left)).toMatchObject({ _tag: "DecodeError", reason: "InvalidResponse" })
      expect(stalled._tag === "Left" && stalled.left.message).toMatch(/status 200, text\/html$/)
    }))

  it.scoped("an event stream sent without its content type still streams", () =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.raw([
        `HTTP/1.1 200 OK\r\nconnection: close\r\n\r\ndata: ${runStarted}\n\ndata: ${runFinished}\n\n`
      ]))
      const ok = yield* runAgainst(server)
      expect(ok._tag === "Right" && ok.right.map((e) => e.type)).toEqual(["RUN_STARTED", "RUN_FINISHED"])
    }))
})
