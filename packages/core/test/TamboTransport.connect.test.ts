// Connection failures on loopback, as a caller reads them: what failed and where.
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Script } from "@tambo-effect/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as net from "node:net"
import { describeConnectionFailure } from "../src/internal/http/connectionFailure.js"
import * as TamboConfig from "../src/TamboConfig.js"
import * as Transport from "../src/TamboTransport.js"
import { closedPort, fields, useServer } from "./helpers.js"

const user: Transport.Credentials = { _tag: "UserKey", userKey: "user-secret-key" }
const hello: Transport.RunRequest = { message: { role: "user", content: [{ type: "text", text: "hello" }] } }

const listen = (server: net.Server) =>
  Effect.async<number>((resume) => {
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as net.AddressInfo).port)))
  })
const close = (server: net.Server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))

/** A server that accepts each connection and then `end`s it as given. */
const hangingUp = (end: (socket: net.Socket) => void) => {
  const sockets = new Set<net.Socket>()
  return Effect.acquireRelease(
    Effect.flatMap(
      Effect.sync(() =>
        net.createServer((socket) => {
          sockets.add(socket)
          end(socket)
        })
      ),
      (server) => Effect.map(listen(server), (port) => ({ server, port }))
    ),
    ({ server }) => {
      for (const socket of sockets) socket.destroy()
      return close(server)
    }
  )
}

const transportAt = (url: string, apiKey = "api-secret-key") =>
  Transport.layer.pipe(
    Layer.provide(TamboConfig.layer({ apiKey, tamboUrl: url, maxRetries: 0 })),
    Layer.provide(FetchHttpClient.layer)
  )

/** The failures of a run and of a REST call to `base`. */
const failures = (base: string) =>
  Effect.gen(function* () {
    const transport = yield* Transport.TamboTransport
    const run = yield* Effect.flip(Stream.runDrain(transport.createRun(user, hello)))
    const rest = yield* Effect.flip(transport.listThreads(user, { limit: 1 }))
    for (const error of [run, rest]) {
      for (const secret of ["api-secret-key", "user-secret-key"]) {
        expect(error.message).not.toContain(secret)
        expect(JSON.stringify(fields(error))).not.toContain(secret)
      }
    }
    return { run, rest }
  }).pipe(Effect.provide(transportAt(base)))

describe("a failed connection says what failed, and where", () => {
  it.live("refused: `connection refused at <url>`, for a run and for a REST call", () =>
    Effect.gen(function* () {
      const port = yield* closedPort
      const base = `http://127.0.0.1:${port}`
      const { run, rest } = yield* failures(base)
      expect(fields(run)).toMatchObject({
        _tag: "TransportError",
        reason: "Connect",
        message: `connection refused at ${base}/v1/threads/runs`,
        method: "POST",
        url: `${base}/v1/threads/runs`
      })
      expect(fields(rest)).toMatchObject({
        _tag: "TransportError",
        reason: "Connect",
        message: `connection refused at ${base}/v1/threads`,
        method: "GET"
      })
    }))

  /** What a run's request adds once it went out: the server may have taken it. */
  const maybeSent = ": the run's request may have reached the server, so it was not sent again"

  it.scoped("reset: a server that resets the connection says `connection reset at <url>`", () =>
    Effect.gen(function* () {
      const { port } = yield* hangingUp((socket) => socket.resetAndDestroy())
      const base = `http://127.0.0.1:${port}`
      const { run, rest } = yield* failures(base)
      expect(fields(run)).toMatchObject({ _tag: "TransportError", reason: "Connect", message: `connection reset at ${base}/v1/threads/runs${maybeSent}` })
      expect(fields(rest)).toMatchObject({ _tag: "TransportError", reason: "Connect", message: `connection reset at ${base}/v1/threads` })
    }))

  it.live("a run's request whose connection was reset is not sent again, retries allowed: the server may have taken it; a REST read is", () =>
    Effect.scoped(Effect.gen(function* () {
      let connections = 0
      const { port } = yield* hangingUp((socket) => {
        connections++
        socket.resetAndDestroy()
      })
      const base = `http://127.0.0.1:${port}`
      const transport = Layer.build(Transport.layer.pipe(
        Layer.provide(TamboConfig.layer({ apiKey: "k", tamboUrl: base, maxRetries: 1 })),
        Layer.provide(FetchHttpClient.layer)
      ))
      const { TamboTransport } = Transport
      const run = yield* Effect.flatMap(transport, (context) =>
        Effect.flip(Stream.runDrain(Stream.unwrap(Effect.map(TamboTransport, (t) => t.createRun(user, hello))).pipe(
          Stream.provideContext(context)
        ))))
      expect(fields(run)).toMatchObject({ _tag: "TransportError", message: `connection reset at ${base}/v1/threads/runs${maybeSent}` })
      expect(connections).toBe(1)
      yield* Effect.flatMap(transport, (context) =>
        Effect.flip(Effect.flatMap(TamboTransport, (t) => t.listThreads(user, { limit: 1 })).pipe(Effect.provide(context))))
      expect(connections).toBe(3)
    })))

  it.scoped("closed: a server that closes the connection without answering says so", () =>
    Effect.gen(function* () {
      const { port } = yield* hangingUp((socket) => socket.destroy())
      const base = `http://127.0.0.1:${port}`
      const { run, rest } = yield* failures(base)
      expect(fields(run)).toMatchObject({
        _tag: "TransportError",
        reason: "Connect",
        message: `connection closed by the server at ${base}/v1/threads/runs${maybeSent}`
      })
      expect(fields(rest)).toMatchObject({ _tag: "TransportError", reason: "Connect", message: `connection closed by the server at ${base}/v1/threads` })
    }))

  it.scoped("a REST call past its timeout says `request timed out at <url>`", () =>
    Effect.gen(function* () {
      // Accepts the connection and never answers.
      const { port } = yield* hangingUp(() => {})
      const base = `http://127.0.0.1:${port}`
      const error = yield* Effect.gen(function* () {
        const transport = yield* Transport.TamboTransport
        return yield* Effect.flip(transport.listThreads(user, { limit: 1 }))
      }).pipe(
        Effect.provide(Transport.layer.pipe(
          Layer.provide(TamboConfig.layer({ apiKey: "k", tamboUrl: base, maxRetries: 0, requestTimeout: "50 millis" })),
          Layer.provide(FetchHttpClient.layer)
        ))
      )
      expect(fields(error)).toMatchObject({ _tag: "TransportError", reason: "Timeout", message: `request timed out at ${base}/v1/threads` })
    }))
})

describe("a connection dropped mid-stream", () => {
  const server = useServer()
  it.live("says the server closed it, and where", () =>
    Effect.gen(function* () {
      server().setScript([Script.text(["a", "b", "c"]), Script.drop()])
      const transport = yield* Transport.TamboTransport
      const error = yield* Effect.flip(Stream.runDrain(transport.createRun(user, hello)))
      expect(fields(error)).toMatchObject({
        _tag: "TransportError",
        reason: "Disconnected",
        message: `The run's stream broke: connection closed by the server at ${server().url}/v1/threads/runs`
      })
    }).pipe(Effect.provide(Layer.suspend(() => transportAt(server().url, server().apiKey)))))
})

// What cannot be made on loopback: the causes undici and Node give, built by hand.
describe("describeConnectionFailure", () => {
  const url = "http://user:pass@api.example.test:8080/v1/threads/runs?userKey=secret#x"
  const shown = "http://api.example.test:8080/v1/threads/runs"
  const wrapped = (code: string) => new TypeError("fetch failed", { cause: Object.assign(new Error(code), { code }) })
  it.each([
    ["ECONNREFUSED", "Connect", `connection refused at ${shown}`],
    ["ENOTFOUND", "Connect", `host not found at ${shown}`],
    ["EAI_AGAIN", "Connect", `host not found at ${shown}`],
    ["ECONNRESET", "Connect", `connection reset at ${shown}`],
    ["UND_ERR_SOCKET", "Connect", `connection closed by the server at ${shown}`],
    ["ETIMEDOUT", "Timeout", `connection timed out at ${shown}`],
    ["UND_ERR_CONNECT_TIMEOUT", "Timeout", `connection timed out at ${shown}`],
    ["UND_ERR_HEADERS_TIMEOUT", "Timeout", `no answer in time from ${shown}`],
    ["EHOSTUNREACH", "Connect", `host unreachable at ${shown}`],
    ["ENETUNREACH", "Connect", `host unreachable at ${shown}`],
    ["ESOMETHING", "Connect", `connection failed at ${shown} (ESOMETHING)`]
  ] as const)("%s", (code, reason, message) => {
    expect(describeConnectionFailure(wrapped(code), url)).toEqual({ reason, message, url: shown })
  })

  it("finds the code in an AggregateError (every address of a host refused)", () => {
    const cause = new TypeError("fetch failed", {
      cause: new AggregateError([Object.assign(new Error("a"), { code: "ECONNREFUSED" })], "all failed")
    })
    expect(describeConnectionFailure(cause, url).message).toBe(`connection refused at ${shown}`)
  })

  it("without a code, names the deepest cause's message", () => {
    expect(describeConnectionFailure(new TypeError("fetch failed", { cause: new Error("other") }), url)).toEqual({
      reason: "Connect",
      message: `connection failed at ${shown}: other`,
      url: shown
    })
  })
})
