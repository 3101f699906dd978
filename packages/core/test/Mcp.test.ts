import { describe, expect, it } from "@effect/vitest"
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Tracer from "effect/Tracer"
import * as Support from "../src/internal/mcp/support.js"
import * as Mcp from "../src/Mcp.js"
import * as Tool from "../src/Tool.js"
import * as ToolRegistry from "../src/ToolRegistry.js"
import { tamboLayer, useServer } from "./helpers.js"
import { type McpServerOptions, mcpServer, plainServer, type TestMcpServer, unusedUrl } from "./mcp/server.js"
import { all, calculator, chatty, echo, greeter, impatientGreeter, prompter, sleeper, summarizer, unlocker } from "./mcp/tools.js"
import * as z from "zod"

const server = useServer()

/** The MCP service over the full SDK against the testing server. */
const stack = (options: Mcp.MakeOptions = {}, tambo: Parameters<typeof tamboLayer>[1] = {}) =>
  Mcp.layerWith(options).pipe(Layer.provideMerge(tamboLayer(server(), tambo)))

const registeredNames = Effect.flatMap(ToolRegistry.ToolRegistry, (registry) =>
  Effect.map(registry.list, (tools) => tools.map((tool) => tool.name)))

const connectionOf = (key: string) =>
  Effect.flatMap(Mcp.Mcp, (mcp) => Effect.map(mcp.getMcpClients, (connections) => connections[key]))

/** The statuses a connection goes through, from before `connect` until it settles. */
const watchStatuses = (key: string) =>
  Effect.gen(function*() {
    const mcp = yield* Mcp.Mcp
    const subscribed = yield* Deferred.make<void>()
    const fiber = yield* mcp.changes.pipe(
      Stream.tap(() => Deferred.succeed(subscribed, undefined)),
      Stream.map((connections) => connections[key]?.status),
      Stream.filter((status): status is Mcp.McpConnectionStatus => status !== undefined),
      Stream.changes,
      Stream.takeUntil((status) => status !== "connecting"),
      Stream.runCollect,
      Effect.map((chunk) => Array.from(chunk)),
      Effect.fork
    )
    yield* Deferred.await(subscribed)
    return fiber
  })

/** Until the server answered a `POST` after the handshake's two (a tool listing), or `atMost` ms passed. */
const untilListed = async (server: TestMcpServer, atMost = 300): Promise<void> => {
  for (let waited = 0; server.postsAnswered < 3 && waited < atMost; waited += 5) {
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/**
 * A server with `echo` whose session adds the tool `late` (and says so, to no event stream yet)
 * when its event stream's `GET` arrives: once a tool listing was answered, or `atMost` ms passed.
 * Then it answers the `GET`.
 */
const changingBeforeEventStream = (atMost: number): Effect.Effect<TestMcpServer, never, Scope.Scope> => {
  const sessions: Array<McpServer> = []
  const self: { server?: TestMcpServer } = {}
  return mcpServer({
    setup: (session) => {
      sessions.push(session)
      echo("changing")(session)
    },
    beforeSessionRequest: async (request) => {
      if (request.method !== "GET") return
      await untilListed(self.server!, atMost)
      sessions.at(-1)?.registerTool("late", { description: "Added before the event stream opened" }, () => ({
        content: [{ type: "text", text: "late" }]
      }))
    }
  }).pipe(Effect.tap((server) => Effect.sync(() => void (self.server = server))))
}

const callText = (connection: Mcp.McpConnection, name: string, args?: Record<string, unknown>) =>
  Effect.gen(function*() {
    const client = connection.client
    if (client === undefined) return yield* Effect.die(new Error(`${connection.key} is not connected`))
    const result = yield* client.callTool(name, args)
    return result.content.map((block) => ("text" in block ? block.text : block.type)).join("")
  })

/**
 * An elicitation handler that waits until its request is aborted (then cancels); the signal of
 * the first elicitation, once one came.
 */
const elicitationSignal = (mcp: Mcp.Mcp["Type"]) =>
  Effect.gen(function*() {
    const asked = yield* Deferred.make<AbortSignal>()
    yield* mcp.setElicitationHandler((_request, context) =>
      new Promise((resolve) => {
        Effect.runSync(Deferred.succeed(asked, context.signal))
        context.signal.addEventListener("abort", () => resolve({ action: "cancel" }))
      }))
    return Deferred.await(asked)
  })

describe("Mcp helpers", () => {
  it("derives short server keys from URLs", () => {
    expect(Mcp.deriveServerKey("https://mcp.linear.app/mcp")).toBe("linear")
    expect(Mcp.deriveServerKey("https://api.github.com/mcp")).toBe("github")
    expect(Mcp.deriveServerKey("https://tools.example.co.uk/sse")).toBe("example")
    expect(Mcp.deriveServerKey("http://localhost:3000/mcp")).toBe("localhost")
    expect(Mcp.deriveServerKey("http://127.0.0.1:8080/mcp")).toBe("mcp")
    expect(Mcp.deriveServerKey("not a url")).toBe("not_a_url")
  })

  it("keys a connection by URL, transport and headers, without header values in clear", () => {
    const base = { url: "https://mcp.example.com/mcp" }
    expect(Mcp.uniqueKey(base)).toBe(Mcp.uniqueKey({ ...base, transport: "http" }))
    expect(Mcp.uniqueKey(base)).not.toBe(Mcp.uniqueKey({ ...base, transport: "sse" }))
    const withHeaders = Mcp.uniqueKey({ ...base, customHeaders: { Authorization: "Bearer s3cret", "X-A": "1" } })
    expect(withHeaders).toBe(Mcp.uniqueKey({ ...base, customHeaders: { "x-a": "1", authorization: "Bearer s3cret" } }))
    expect(withHeaders).not.toBe(Mcp.uniqueKey({ ...base, customHeaders: { Authorization: "Bearer other" } }))
    expect(withHeaders).not.toContain("s3cret")
  })
})

describe("Mcp options", () => {
  /** The service built with `options`, or why not. */
  const built = (options: Mcp.MakeOptions) =>
    Effect.flip(Effect.scoped(Layer.build(Mcp.layerStandalone(options))))

  it.effect.each([
    ["connectTimeout", 0, "positive"],
    ["connectTimeout", -1, "positive"],
    ["connectTimeout", Number.NaN, "positive"],
    ["connectTimeout", "soon", "positive"],
    ["connectTimeout", Infinity, "at most 2147483647 ms"],
    ["connectTimeout", 2 ** 31, "at most 2147483647 ms"],
    ["requestTimeout", 0, "positive"],
    ["requestTimeout", -1, "positive"],
    ["requestTimeout", Number.NaN, "positive"],
    ["requestTimeout", "soon", "positive"],
    ["requestTimeout", Infinity, "at most 2147483647 ms"],
    ["requestTimeout", "30 days", "at most 2147483647 ms"]
  ] as const)(
    "a %s of %s, which no timer can wait, is a ConfigError (InvalidOption) naming it and its bound, when the service is built",
    ([name, value, bound]) =>
      Effect.gen(function*() {
        const error = yield* built({ [name]: value })
        expect(error).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
        expect(error.message).toContain(name)
        expect(error.message).toContain(bound)
      })
  )

  it.effect("the longest connectTimeout and requestTimeout a timer can wait are taken", () =>
    Effect.gen(function*() {
      const mcp = yield* Effect.scoped(Effect.map(
        Layer.build(Mcp.layerStandalone({ connectTimeout: 2 ** 31 - 1, requestTimeout: "1 millis" })),
        Context.get(Mcp.Mcp)
      ))
      expect(mcp).toBeDefined()
    }))
})

describe("MCP tool names and results", () => {
  it("names tools in the API's charset, prefixed when asked, at most 64 characters", () => {
    expect(Support.registeredToolName("srv", "files.read/all", false)).toBe("files_read_all")
    expect(Support.registeredToolName("srv", "files.read/all", true)).toBe("srv__files_read_all")
    const long = "x".repeat(70)
    const a = Support.registeredToolName("srv", `${long}a`, true)
    const b = Support.registeredToolName("srv", `${long}b`, true)
    expect(a).toHaveLength(64)
    expect(b).toHaveLength(64)
    expect(a).not.toBe(b)
    expect(a).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(Support.distinctName("echo", (name) => name === "echo" || name === "echo_2")).toBe("echo_3")
    expect(Support.sanitizeKey("My Server!")).toBe("My_Server")
    expect(Support.sanitizeKey("a__b")).toBe("a_b")
  })

  it.each([
    {
      name: "text blocks as text, empty ones dropped",
      result: { content: [{ type: "text", text: "a" }, { type: "text", text: "" }, { type: "text", text: "b" }] },
      parts: [{ type: "text", text: "a" }, { type: "text", text: "b" }]
    },
    {
      name: "images and audio as resource blobs",
      result: { content: [{ type: "image", data: "aGk=", mimeType: "image/png" }] },
      parts: [{ type: "resource", resource: { mimeType: "image/png", blob: "aGk=", name: "image" } }]
    },
    {
      name: "resource links and embedded resources as resources",
      result: {
        content: [
          { type: "resource_link", uri: "file:///a.txt", name: "a.txt", mimeType: "text/plain" },
          { type: "resource", resource: { uri: "file:///b.txt", text: "bee" } }
        ]
      },
      parts: [
        { type: "resource", resource: { uri: "file:///a.txt", name: "a.txt", mimeType: "text/plain" } },
        { type: "resource", resource: { uri: "file:///b.txt", text: "bee" } }
      ]
    },
    {
      name: "structured content when there is no content",
      result: { content: [], structuredContent: { total: 3 } },
      parts: [{ type: "text", text: "{\"total\":3}" }]
    },
    { name: "nothing at all", result: { content: [] }, parts: [{ type: "text", text: "(no content)" }] },
    {
      name: "unknown blocks as their JSON",
      result: { content: [{ type: "hologram", depth: 3 }] },
      parts: [{ type: "text", text: "{\"type\":\"hologram\",\"depth\":3}" }]
    }
  ])("result parts: $name", ({ result, parts }) => {
    expect(Support.resultParts(result)).toEqual(parts)
  })

  it("error text: the text blocks, else the structured content, else a default", () => {
    expect(Support.errorText({ content: [{ type: "text", text: "bad" }, { type: "text", text: "worse" }], isError: true }))
      .toBe("bad\nworse")
    expect(Support.errorText({ content: [], structuredContent: { code: 7 }, isError: true })).toBe("{\"code\":7}")
    expect(Support.errorText({ content: [], isError: true })).toBe("the tool reported an error without details")
  })
})

describe("Mcp", () => {
  it.live("lists a server's tools and registers them with their JSON Schemas", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const registry = yield* ToolRegistry.ToolRegistry
      const calc = yield* mcpServer({ setup: calculator })
      const statuses = yield* watchStatuses(Mcp.uniqueKey({ url: calc.url }))

      const connection = yield* mcp.connectMcpServer({ url: calc.url })

      expect(yield* Fiber.join(statuses)).toEqual(["connecting", "connected"])
      expect(connection).toMatchObject({ status: "connected", serverKey: "mcp", key: Mcp.uniqueKey({ url: calc.url }) })
      expect(connection.serverVersion).toEqual({ name: "test-mcp-server", version: "1.0.0" })
      expect(connection.capabilities).toMatchObject({ tools: { listChanged: true } })
      expect(connection.capabilities?.prompts).toBeUndefined()
      expect(connection.tools.map((tool) => [tool.name, tool.registeredName])).toEqual([
        ["add", "add"],
        ["divide", "divide"],
        ["explode", "explode"],
        // The API's charset: letters, digits, `_` and `-`.
        ["math.square", "math_square"]
      ])
      expect(yield* registeredNames).toEqual(["add", "divide", "explode", "math_square"])
      const add = Option.getOrThrow(yield* registry.get("add"))
      expect(add.api).toMatchObject({
        name: "add",
        description: "Adds two numbers",
        inputSchema: {
          type: "object",
          properties: { a: { type: "number" }, b: { type: "number", description: "The second term" } },
          required: ["a", "b"]
        }
      })
      expect(yield* mcp.getMcpClients).toEqual({ [connection.key]: connection })
      // Connecting again returns the connection, without a second session.
      const again = yield* mcp.connectMcpServer({ url: calc.url, transport: "http" })
      expect(again.key).toBe(connection.key)
      expect(calc.sessions.opened).toBe(1)
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("connects over the SSE transport too", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const calc = yield* mcpServer({ transport: "sse", setup: calculator })
      const connection = yield* mcp.connectMcpServer({ url: calc.url, transport: "sse" })
      expect(connection.status).toBe("connected")
      expect(yield* callText(connection, "add", { a: 40, b: 2 })).toBe("42")
      expect(calc.requests.map((request) => `${request.method} ${request.path}`)).toContain("GET /sse")
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("concurrent connects of one server share one connection", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const calc = yield* mcpServer({ setup: calculator })
      const [a, b] = yield* Effect.all(
        [mcp.connectMcpServer({ url: calc.url }), mcp.connectMcpServer({ url: calc.url })],
        { concurrency: "unbounded" }
      )
      expect(a.key).toBe(b.key)
      expect(calc.sessions.opened).toBe(1)
      expect(Object.keys(yield* mcp.getMcpClients)).toHaveLength(1)
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("sends the custom headers with every request, on both transports", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const customHeaders = { "X-Api-Key": "mcp-secret", Authorization: "Bearer abc" }
      for (const transport of ["http", "sse"] as const) {
        const calc = yield* mcpServer({ transport, setup: calculator })
        const connection = yield* mcp.connectMcpServer({ url: calc.url, transport, customHeaders })
        expect(yield* callText(connection, "add", { a: 1, b: 1 })).toBe("2")
        expect(connection.key).not.toContain("mcp-secret")
        expect(calc.requests.length).toBeGreaterThanOrEqual(3)
        for (const request of calc.requests) {
          expect(request.headers["x-api-key"]).toBe("mcp-secret")
          expect(request.headers["authorization"]).toBe("Bearer abc")
        }
      }
    }).pipe(Effect.provide(stack()), Effect.scoped))

  describe("connection failures", () => {
    it.live("an unreachable URL fails with McpError Connect and status failed", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const url = yield* unusedUrl
        const statuses = yield* watchStatuses(Mcp.uniqueKey({ url }))
        const result = yield* Effect.either(mcp.connectMcpServer({ url, serverKey: "gone" }))
        expect(Either.isLeft(result) && result.left).toMatchObject({ _tag: "McpError", reason: "Connect", serverKey: "gone" })
        expect(yield* Fiber.join(statuses)).toEqual(["connecting", "failed"])
        const connection = yield* connectionOf(Mcp.uniqueKey({ url }))
        expect(connection).toMatchObject({ status: "failed", tools: [], error: { _tag: "McpError", reason: "Connect" } })
        expect(connection?.client).toBeUndefined()
        expect(yield* registeredNames).toEqual([])
      }).pipe(Effect.provide(stack())))

    it.live("a server that is not an MCP server fails; connecting again tries again", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const broken = yield* plainServer((_req, res) => {
          res.writeHead(500, { "content-type": "text/plain" }).end("internal error")
        })
        const first = yield* Effect.flip(mcp.connectMcpServer({ url: broken.url }))
        expect(first).toMatchObject({ _tag: "McpError", reason: "Connect" })
        expect(first.message).toContain("internal error")
        const attempts = broken.requests.length
        const second = yield* Effect.flip(mcp.connectMcpServer({ url: broken.url }))
        expect(second.reason).toBe("Connect")
        expect(broken.requests.length).toBeGreaterThan(attempts)
      }).pipe(Effect.provide(stack()), Effect.scoped))

    it.live("a server that never answers fails after the connect timeout", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const silent = yield* plainServer(() => {
          // never answers
        })
        const error = yield* Effect.flip(mcp.connectMcpServer({ url: silent.url }))
        expect(error).toMatchObject({ _tag: "McpError", reason: "Connect" })
        expect(error.message).toContain("no answer within")
        const connection = yield* connectionOf(Mcp.uniqueKey({ url: silent.url }))
        expect(connection?.status).toBe("failed")
      }).pipe(Effect.provide(stack({ connectTimeout: "300 millis" })), Effect.scoped))

    it.live("a server that goes away before its event stream opens fails the connect, rather than looking connected", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const dying: TestMcpServer = yield* mcpServer({
          setup: echo("dying"),
          // Given the time to answer a tool listing first, if one comes before the event stream.
          beforeSessionRequest: async (request) => {
            if (request.method === "GET") await untilListed(dying).then(() => dying.kill())
          }
        })
        const error = yield* Effect.flip(mcp.connectMcpServer({ url: dying.url, serverKey: "dying" }))
        expect(error).toMatchObject({ _tag: "McpError", reason: "Connect", serverKey: "dying" })
        expect(yield* connectionOf(Mcp.uniqueKey({ url: dying.url }))).toMatchObject({ status: "failed", tools: [] })
        expect(yield* registeredNames).toEqual([])
      }).pipe(Effect.provide(stack()), Effect.scoped))

    it.live("a server whose event stream ends while its tools are listed fails the connect", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        let posts = 0
        const closing = yield* mcpServer({
          setup: echo("closing"),
          // The first request after the handshake's notification: the tool listing.
          beforeSessionRequest: async (request, session) => {
            if (request.method !== "POST" || ++posts !== 2) return
            session.closeStandaloneSSEStream()
            await new Promise((resolve) => setTimeout(resolve, 100))
          }
        })
        const error = yield* Effect.flip(mcp.connectMcpServer({ url: closing.url }))
        expect(error).toMatchObject({ _tag: "McpError", reason: "Connect" })
        expect(error.message).toContain("closed while connecting")
        expect(yield* registeredNames).toEqual([])
      }).pipe(Effect.provide(stack()), Effect.scoped))

    it.live("a server whose event stream ends while it is asked for the log level fails the connect, rather than looking connected", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        let posts = 0
        const closing = yield* mcpServer({
          // The first `logging/setLevel` is never answered: the client waits for it a while, then goes on.
          setup: chatty([], { hangFirst: true }),
          // The handshake's notification, the tool listing, then the level.
          beforeSessionRequest: async (request, session) => {
            if (request.method === "POST" && ++posts === 3) session.closeStandaloneSSEStream()
          }
        })
        const error = yield* Effect.flip(mcp.connectMcpServer({ url: closing.url, serverKey: "closing", logLevel: "error" }))
        expect(error).toMatchObject({ _tag: "McpError", reason: "Connect", serverKey: "closing" })
        expect(error.message).toContain("closed while connecting")
        expect(yield* connectionOf(Mcp.uniqueKey({ url: closing.url }))).toMatchObject({ status: "failed", tools: [] })
        expect(yield* registeredNames).toEqual([])
      }).pipe(Effect.provide(stack()), Effect.scoped))

    it.live("a reconnection whose event stream ends while it is asked for the log level goes on reconnecting, rather than looking connected", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        let opened = 0
        const transports: Array<StreamableHTTPServerTransport> = []
        const posts = new Map<StreamableHTTPServerTransport, number>()
        const dropping = yield* mcpServer({
          // The second session never answers its `logging/setLevel`: the client waits for it a while, then goes on.
          setup: (session) => chatty([], { hangFirst: ++opened === 2 })(session),
          beforeSessionRequest: async (request, session) => {
            if (!transports.includes(session)) transports.push(session)
            if (request.method !== "POST") return
            posts.set(session, (posts.get(session) ?? 0) + 1)
            // The second session's handshake notification, its tool listing, then the level.
            if (session === transports[1] && posts.get(session) === 3) session.closeStandaloneSSEStream()
          }
        })
        const connection = yield* mcp.connectMcpServer({ url: dropping.url, serverKey: "dropping", logLevel: "error" })
        const statuses = yield* mcp.changes.pipe(
          Stream.map((connections) => connections[connection.key]?.status),
          Stream.changes,
          Stream.dropWhile((status) => status === "connected"),
          Stream.takeUntil((status) => status === "connected"),
          Stream.runCollect,
          Effect.fork
        )
        transports[0]!.closeStandaloneSSEStream()
        expect(Array.from(yield* Fiber.join(statuses))).toEqual(["reconnecting", "connected"])
        // Connected again on a third session: the second, whose event stream ended, was never the connection's.
        expect(dropping.sessions.opened).toBe(3)
        const reconnected = (yield* mcp.getMcpClients)[connection.key]!
        expect(reconnected.status).toBe("connected")
        expect(yield* reconnected.client!.callTool("chatty", { n: 1 })).toMatchObject({ content: [{ type: "text", text: "said" }] })
      }).pipe(Effect.provide(stack({ reconnectSchedule: Schedule.spaced("50 millis") })), Effect.scoped))

    it.live("an invalid URL fails with McpError Connect", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const error = yield* Effect.flip(mcp.connectMcpServer({ url: "not a url" }))
        expect(error).toMatchObject({ _tag: "McpError", reason: "Connect" })
      }).pipe(Effect.provide(stack())))
  })

  it.live("disconnecting unregisters the tools and closes the session", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const calc = yield* mcpServer({ setup: calculator })
      const connection = yield* mcp.connectMcpServer({ url: calc.url })
      expect(yield* registeredNames).toHaveLength(4)

      yield* mcp.disconnectMcpServer(connection.key)

      expect(yield* registeredNames).toEqual([])
      expect(yield* mcp.getMcpClients).toEqual({})
      // The session was ended on the server (Streamable HTTP: DELETE).
      expect(calc.requests.at(-1)?.method).toBe("DELETE")
      expect(calc.sessions.closed).toBe(1)
      // The handle of a closed connection no longer reaches the server.
      const late = yield* Effect.flip(callText(connection, "add", { a: 1, b: 2 }))
      expect(late).toMatchObject({ _tag: "McpError", reason: "NotConnected" })
      // Unknown keys are ignored; a server can be given instead of its key.
      yield* mcp.disconnectMcpServer("nope")
      yield* mcp.connectMcpServer({ url: calc.url })
      yield* mcp.disconnectMcpServer({ url: calc.url })
      expect(yield* mcp.getMcpClients).toEqual({})
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a disconnect's span is the caller's child, and ends once the session has ended", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const calc = yield* mcpServer({ setup: calculator })
      const connection = yield* mcp.connectMcpServer({ url: calc.url, serverKey: "calc" })
      const spans: Array<Tracer.Span> = []
      const native = yield* Effect.tracer
      const recording = Tracer.make({
        span: (...args) => {
          const span = native.span(...args)
          spans.push(span)
          return span
        },
        context: (f, fiber) => native.context(f, fiber)
      })

      yield* mcp.disconnectMcpServer(connection.key).pipe(Effect.withSpan("caller"), Effect.withTracer(recording))

      const disconnect = spans.find((span) => span.name === "Mcp.disconnect")
      expect(disconnect?.attributes.get("mcp.server")).toBe("calc")
      const parent = Option.getOrUndefined(disconnect!.parent)
      expect(parent?._tag === "Span" ? parent.name : undefined).toBe("caller")
      expect(disconnect?.status._tag).toBe("Ended")
      expect(calc.sessions.closed).toBe(1)
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("disconnecting a server that never answers the end of its session: its calls in flight end with an McpError, its requests' signals are aborted", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      // Its DELETE is never answered (an overloaded server, a stalled proxy).
      const stalled = yield* mcpServer({
        setup: all(sleeper(), greeter),
        beforeSessionRequest: async (request) => {
          if (request.method === "DELETE") await new Promise<void>(() => {})
        }
      })
      const asked = yield* elicitationSignal(mcp)
      const connection = yield* mcp.connectMcpServer({ url: stalled.url })
      const sleeping = yield* Effect.fork(Effect.either(connection.client!.callTool("sleep", { ms: 20_000 })))
      yield* Effect.fork(Effect.either(connection.client!.callTool("greet", {})))
      const signal = yield* asked

      yield* mcp.disconnectMcpServer(connection.key)

      // Once disconnect returned, the UI showing the elicitation is told to go away...
      expect(signal.aborted).toBe(true)
      // ...and the call in flight has ended, with a typed error.
      const call = yield* Fiber.join(sleeping).pipe(Effect.timeout("1 second"))
      expect(Either.isLeft(call) && call.left).toMatchObject({ _tag: "McpError" })
      expect(stalled.requests.some((request) => request.method === "DELETE")).toBe(true)
    }).pipe(Effect.provide(stack({ requestTimeout: "25 seconds" })), Effect.scoped), 20_000)

  /** A server that never answers the end of its session (its DELETE), and a signal that the DELETE came. */
  const silentAtEnd = (setup: McpServerOptions["setup"]) =>
    Effect.gen(function*() {
      const deleteSeen = yield* Deferred.make<void>()
      const server = yield* mcpServer({
        setup,
        beforeSessionRequest: async (request) => {
          if (request.method !== "DELETE") return
          Effect.runSync(Deferred.succeed(deleteSeen, undefined))
          await new Promise<void>(() => {})
        }
      })
      return { deleteSeen, server }
    })

  /**
   * A standalone service connected to a server that never answers the end of its session, with a
   * call in flight that waits on an elicitation; a disconnect started, and the server's DELETE arrived.
   */
  const disconnectingFromStalled = Effect.gen(function*() {
    const { deleteSeen, server: stalled } = yield* silentAtEnd(greeter)
    const mcp = yield* Mcp.makeStandalone()
    const asked = yield* elicitationSignal(mcp)
    const connection = yield* mcp.connectMcpServer({ url: stalled.url })
    yield* Effect.fork(Effect.either(connection.client!.callTool("greet", {})))
    const signal = yield* asked
    const closing = yield* Effect.fork(mcp.disconnectMcpServer(connection.key))
    yield* Deferred.await(deleteSeen)
    return { mcp, signal, closing }
  })

  it.scoped("disconnecting a server that never answers the end of its session ends on the Effect clock, with the client closed", () =>
    Effect.gen(function*() {
      const { closing, signal } = yield* disconnectingFromStalled
      // The test's clock alone decides when the server has waited long enough.
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.join(closing)

      // The client itself is closed by then: the server's request in flight was given up.
      expect(signal.aborted).toBe(true)
    }))

  it.scoped("a disconnect interrupted while the server holds the end of its session still closes the client", () =>
    Effect.gen(function*() {
      const { closing, mcp, signal } = yield* disconnectingFromStalled
      // Whoever disconnected gives up waiting (a thread switch, an unmounted component).
      const interrupting = yield* Effect.fork(Fiber.interrupt(closing))
      yield* Effect.yieldNow()
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.join(interrupting)

      // The session was ended all the same: the client is closed, the server's request in flight given up.
      expect(signal.aborted).toBe(true)
      expect(yield* mcp.getMcpClients).toEqual({})
    }))

  it.scoped("closing the service while a connected server never answers the end of its session ends on the Effect clock, with the client closed", () =>
    Effect.gen(function*() {
      const { deleteSeen, server: stalled } = yield* silentAtEnd(greeter)
      const scope = yield* Scope.make()
      const mcp = yield* Mcp.makeStandalone().pipe(Scope.extend(scope))
      const asked = yield* elicitationSignal(mcp)
      const connection = yield* mcp.connectMcpServer({ url: stalled.url })
      yield* Effect.fork(Effect.either(connection.client!.callTool("greet", {})))
      const signal = yield* asked

      // The service's close runs in its finalizer: the server's silence is bounded all the same.
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      yield* Deferred.await(deleteSeen)
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(closing)

      expect(signal.aborted).toBe(true)
    }), 10_000)

  it.scoped("a connect whose tool listing is refused, by a server that never answers the end of the session, fails on the Effect clock", () =>
    Effect.gen(function*() {
      const { deleteSeen, server: refusing } = yield* silentAtEnd((session) => {
        session.server.registerCapabilities({ tools: {} })
        session.server.setRequestHandler(ListToolsRequestSchema, async () => {
          throw new Error("no tools today")
        })
      })
      const mcp = yield* Mcp.makeStandalone()
      const connecting = yield* Effect.fork(mcp.connectMcpServer({ url: refusing.url, serverKey: "refusing" }))
      yield* Deferred.await(deleteSeen)
      // The test's clock alone decides when the server has waited long enough.
      yield* TestClock.adjust("10 seconds")
      const error = yield* Effect.flip(Fiber.join(connecting))
      expect(error).toMatchObject({ _tag: "McpError", reason: "Connect" })
      expect((yield* mcp.getMcpClients)[Object.keys(yield* mcp.getMcpClients)[0]!]?.status).toBe("failed")
    }), 10_000)

  /**
   * A server whose event stream `drop` closes (a proxy cutting it); from then on each DELETE (the
   * dropped session's end) waits for `release`. `drop` returns once such a DELETE arrived.
   */
  const droppingWhileEndHeld = (release: () => Promise<void>) =>
    Effect.gen(function*() {
      let session: StreamableHTTPServerTransport | undefined
      let holding = false
      const deleteHeld = yield* Deferred.make<void>()
      const server = yield* mcpServer({
        setup: greeter,
        beforeSessionRequest: async (request, transport) => {
          session ??= transport
          if (request.method !== "DELETE" || !holding) return
          Effect.runSync(Deferred.succeed(deleteHeld, undefined))
          await release()
        }
      })
      const drop = Effect.suspend(() => {
        holding = true
        session!.closeStandaloneSSEStream()
        return Deferred.await(deleteHeld)
      })
      return { server, drop }
    })

  it.scoped("disconnecting a server whose dropped session's end it never answers ends on the Effect clock, and so does the service's close", () =>
    Effect.gen(function*() {
      // Its DELETEs are never answered once it dropped.
      const dropping = yield* droppingWhileEndHeld(() => new Promise<void>(() => {}))
      const mcp = yield* Mcp.makeStandalone()
      const key = (yield* mcp.connectMcpServer({ url: dropping.server.url, serverKey: "dropping" })).key
      yield* dropping.drop

      // The reconnection waits for the dropped session's end: the disconnect interrupts it, and waits too.
      const disconnecting = yield* Effect.fork(mcp.disconnectMcpServer(key))
      yield* Effect.yieldNow()
      // The test's clock alone decides when the server has waited long enough.
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(disconnecting)
      expect(yield* mcp.getMcpClients).toEqual({})
    }), 10_000)

  it.scoped("a server that drops while the end of its session waits does not hold up the connects and disconnects of the others", () =>
    Effect.gen(function*() {
      // Its DELETEs are held until the gate opens (a proxy cutting its event stream, a slow end).
      const gate = yield* Deferred.make<void>()
      const dropping = yield* droppingWhileEndHeld(() => Effect.runPromise(Deferred.await(gate)))
      const other = yield* mcpServer({ setup: calculator })
      const third = yield* mcpServer({ setup: echo("third") })
      const mcp = yield* Mcp.makeStandalone()
      const droppingKey = (yield* mcp.connectMcpServer({ url: dropping.server.url, serverKey: "dropping" })).key
      const otherKey = (yield* mcp.connectMcpServer({ url: other.url, serverKey: "other" })).key

      yield* dropping.drop

      // While the dropped session's DELETE waits (on this clock, for good), the others go on.
      yield* mcp.disconnectMcpServer(otherKey)
      const connected = yield* mcp.connectMcpServer({ url: third.url, serverKey: "third" })
      expect(connected.status).toBe("connected")
      expect(other.sessions.closed).toBe(1)
      expect((yield* mcp.getMcpClients)[droppingKey]?.status).toBe("reconnecting")

      // Once the server answers its DELETE, the dropped server is reconnected.
      yield* Deferred.succeed(gate, undefined)
      yield* mcp.changes.pipe(
        Stream.takeUntil((connections) => connections[droppingKey]?.status === "connected"),
        Stream.runDrain
      )
      expect(dropping.server.sessions.opened).toBe(2)
    }))

  describe("a handshake given up (disconnected while the server is slow to answer its initialize)", () => {
    /** A server that holds each `initialize` until `release`, and tells when one arrived and when one's request ended. */
    const slowToInitialize = Effect.gen(function*() {
      const arrived = yield* Deferred.make<void>()
      const ended = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      yield* Effect.addFinalizer(() => Deferred.succeed(gate, undefined))
      const server = yield* mcpServer({
        setup: greeter,
        beforeInitialize: async (_request, response) => {
          response.once("close", () => Effect.runSync(Deferred.succeed(ended, undefined)))
          Effect.runSync(Deferred.succeed(arrived, undefined))
          await Effect.runPromise(Deferred.await(gate))
        }
      })
      return { server, arrived, ended, release: Deferred.succeed(gate, undefined) }
    })

    /** A standalone service in a scope of its own, with a connect to `url` given up once its `initialize` arrived. */
    const abandonedConnect = (url: string, arrived: Deferred.Deferred<void>) =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const mcp = yield* Mcp.makeStandalone().pipe(Scope.extend(scope))
        const connecting = yield* Effect.fork(mcp.connectMcpServer({ url }))
        yield* Deferred.await(arrived)
        yield* mcp.disconnectMcpServer({ url })
        const error = yield* Effect.flip(Fiber.join(connecting))
        expect(error).toMatchObject({ _tag: "McpError", reason: "Disconnected" })
        return scope
      })

    it.scoped("closing the service waits for the server's late answer, then ends the session it opened", () =>
      Effect.gen(function*() {
        const slow = yield* slowToInitialize
        const scope = yield* abandonedConnect(slow.server.url, slow.arrived)

        const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
        yield* slow.release
        yield* Fiber.join(closing)

        // By the time the service is closed, the server was asked to end the session, and did.
        expect(slow.server.requests.map((request) => request.method)).toContain("DELETE")
        expect(slow.server.sessions).toEqual({ opened: 1, closed: 1 })
      }))

    it.scoped("closing the service gives up within 2 seconds of the Effect clock on a server that never answers, and ends the request", () =>
      Effect.gen(function*() {
        const slow = yield* slowToInitialize
        const scope = yield* abandonedConnect(slow.server.url, slow.arrived)

        const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
        // The test's clock alone decides when the server has had long enough: a short while, so
        // the service's close is not held up by it.
        yield* TestClock.adjust("1 second")
        expect(Option.isNone(yield* Fiber.poll(closing))).toBe(true)
        yield* TestClock.adjust("1 second")
        yield* Fiber.join(closing)

        // The client closed: the server sees its `initialize` request end, unanswered.
        yield* Deferred.await(slow.ended)
        expect(slow.server.requests.map((request) => request.method)).not.toContain("DELETE")
      }))
  })

  it.live("a server that gives up on its first request of a session aborts the handler's signal", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      // Its elicitation is the session's first request from the server: JSON-RPC id 0.
      const impatient = yield* mcpServer({ setup: impatientGreeter })
      const signals: Array<AbortSignal> = []
      const givenUp = yield* Deferred.make<void>()
      yield* mcp.setElicitationHandler((_request, context) =>
        new Promise((resolve) => {
          signals.push(context.signal)
          context.signal.addEventListener("abort", () => {
            Effect.runSync(Deferred.succeed(givenUp, undefined))
            resolve({ action: "cancel" })
          })
        }))
      const connection = yield* mcp.connectMcpServer({ url: impatient.url })
      const answer = yield* connection.client!.callTool("greet", {})
      expect(answer.content).toEqual([{ type: "text", text: "No name (gave up)" }])
      yield* Deferred.await(givenUp)
      expect(signals.map((signal) => signal.aborted)).toEqual([true])
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("disconnecting while connecting cancels the attempt", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const silent = yield* plainServer(() => {
        // never answers
      })
      const attempt = yield* Effect.fork(mcp.connectMcpServer({ url: silent.url }))
      yield* Effect.gen(function*() {
        while (silent.requests.length === 0) yield* Effect.sleep("5 millis")
      })
      yield* mcp.disconnectMcpServer({ url: silent.url })
      const exit = yield* Fiber.await(attempt)
      expect(Exit.isFailure(exit) && Exit.causeOption(exit)).toBeTruthy()
      const error = yield* Effect.flip(Fiber.join(attempt))
      expect(error).toMatchObject({ _tag: "McpError", reason: "Disconnected" })
      expect(yield* mcp.getMcpClients).toEqual({})
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("closing the layer's scope closes every connection", () =>
    Effect.gen(function*() {
      const calc = yield* mcpServer({ setup: calculator })
      const sse = yield* mcpServer({ transport: "sse", setup: echo("sse") })
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(stack(), scope)
      const mcp = Context.get(context, Mcp.Mcp)
      const registry = Context.get(context, ToolRegistry.ToolRegistry)
      yield* mcp.connectMcpServer({ url: calc.url })
      yield* mcp.connectMcpServer({ url: sse.url, transport: "sse" })
      expect((yield* registry.list).length).toBe(5)
      expect(calc.sessions).toEqual({ opened: 1, closed: 0 })

      yield* Scope.close(scope, Exit.void)

      expect(calc.sessions).toEqual({ opened: 1, closed: 1 })
      // The SSE server notices its stream closed.
      yield* Effect.gen(function*() {
        while (sse.sessions.closed === 0) yield* Effect.sleep("5 millis")
      }).pipe(Effect.timeout("5 seconds"))
      expect(sse.sessions.closed).toBe(1)
    }).pipe(Effect.scoped))

  describe("tool names", () => {
    it.live("prefixes the tools with their server key while several servers are connected", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const alpha = yield* mcpServer({ setup: all(echo("alpha"), calculator) })
        const beta = yield* mcpServer({ setup: echo("beta") })
        const first = yield* mcp.connectMcpServer({ url: alpha.url, serverKey: "alpha" })
        expect(yield* registeredNames).toEqual(["echo", "add", "divide", "explode", "math_square"])

        const second = yield* mcp.connectMcpServer({ url: beta.url, serverKey: "beta" })

        expect((yield* registeredNames).sort()).toEqual(
          ["alpha__add", "alpha__divide", "alpha__echo", "alpha__explode", "alpha__math_square", "beta__echo"]
        )
        expect(second.tools.map((tool) => tool.registeredName)).toEqual(["beta__echo"])
        const clients = yield* mcp.getMcpClients
        expect(clients[first.key]?.tools.map((tool) => tool.registeredName)).toContain("alpha__echo")

        yield* mcp.disconnectMcpServer(first.key)
        expect(yield* registeredNames).toEqual(["echo"])
      }).pipe(Effect.provide(stack()), Effect.scoped))

    it.live("gives servers with the same key distinct keys", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const one = yield* mcpServer({ setup: echo("one") })
        const two = yield* mcpServer({ setup: echo("two") })
        const a = yield* mcp.connectMcpServer({ url: one.url })
        const b = yield* mcp.connectMcpServer({ url: two.url })
        expect([a.serverKey, b.serverKey]).toEqual(["mcp", "mcp-2"])
        expect((yield* registeredNames).sort()).toEqual(["mcp-2__echo", "mcp__echo"])
      }).pipe(Effect.provide(stack()), Effect.scoped))

    it.live("leaves an application tool of the same name alone, and says so in a warning", () => {
      const warnings: Array<unknown> = []
      const captured = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag === "Warning") warnings.push(message)
      })
      return Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const registry = yield* ToolRegistry.ToolRegistry
        const calc = yield* mcpServer({ setup: calculator })
        const connection = yield* mcp.connectMcpServer({ url: calc.url })
        expect(connection.tools.find((tool) => tool.name === "add")?.registeredName).toBeUndefined()
        expect(Option.getOrThrow(yield* registry.get("add")).definition).toBe(localAdd)
        yield* mcp.disconnectMcpServer(connection.key)
        expect(yield* registeredNames).toEqual(["add"])
        expect(warnings).toEqual([
          ["The tool \"add\" of MCP server \"mcp\" is not registered: a tool named \"add\" is already registered"]
        ])
      }).pipe(
        Effect.provide(stack({}, { tools: [localAdd] })),
        Effect.scoped,
        Effect.provide(Logger.replace(Logger.defaultLogger, captured))
      )
    })
  })

  it.live("leaves out a tool whose parameters hold a record, says why in a warning, and registers the rest", () => {
    const warnings: Array<unknown> = []
    const captured = Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Warning") warnings.push(message)
    })
    const labeller = (server: McpServer) => {
      server.registerTool(
        "label",
        { description: "Labels an item", inputSchema: { id: z.string(), labels: z.record(z.string(), z.string()) } },
        async () => ({ content: [{ type: "text" as const, text: "labelled" }] })
      )
    }
    return Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const server = yield* mcpServer({ setup: all(labeller, echo("labels")) })
      const connection = yield* mcp.connectMcpServer({ url: server.url })
      expect(yield* registeredNames).toEqual(["echo"])
      expect(connection.tools.map((tool) => [tool.name, tool.registeredName])).toEqual([["label", undefined], [
        "echo",
        "echo"
      ]])
      expect(warnings).toEqual([[
        "The tool \"label\" of MCP server \"mcp\" is not registered: The input schema of tool \"label\" has a record " +
        "(an object whose keys are not named) at \"labels\". The Tambo API keeps only the named properties of every " +
        "object, so the model could never fill it. Name its keys as properties, or make it an array of key/value objects."
      ]])
    }).pipe(Effect.provide(stack()), Effect.scoped, Effect.provide(Logger.replace(Logger.defaultLogger, captured)))
  })

  it.live("registers the tools a server adds later, when it says its list changed", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const dynamic = yield* mcpServer({ setup: unlocker })
      const connection = yield* mcp.connectMcpServer({ url: dynamic.url })
      expect(yield* registeredNames).toEqual(["unlock"])
      expect(yield* callText(connection, "unlock")).toBe("unlocked")
      yield* Effect.gen(function*() {
        while ((yield* registeredNames).length < 2) yield* Effect.sleep("10 millis")
      }).pipe(Effect.timeout("5 seconds"))
      expect(yield* registeredNames).toEqual(["unlock", "secret"])
      const updated = yield* connectionOf(connection.key)
      expect(updated?.tools.map((tool) => tool.registeredName)).toEqual(["unlock", "secret"])
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("tools that change again while they are listed again: the registry ends with the latest listing, not the last answer", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const tools = ["change"]
      const listings = { sent: 0, answered: 0 }
      let release: () => void = () => undefined
      const gate = new Promise<void>((resolve) => {
        release = resolve
      })
      const changing = yield* mcpServer({
        setup: (session) => {
          session.server.registerCapabilities({ tools: { listChanged: true } })
          session.server.setRequestHandler(ListToolsRequestSchema, async () => {
            // The list as it is now; the first listing again waits to be answered.
            const snapshot = tools.map((name) => ({ name, inputSchema: { type: "object" as const } }))
            if (++listings.sent === 2) await gate
            listings.answered++
            return { tools: snapshot }
          })
          session.server.setRequestHandler(CallToolRequestSchema, async () => {
            tools.push(`t${tools.length}`)
            await session.server.sendToolListChanged()
            return { content: [{ type: "text", text: "changed" }] }
          })
        }
      })
      const connection = yield* mcp.connectMcpServer({ url: changing.url })
      yield* callText(connection, "change")
      while (listings.sent < 2) yield* Effect.sleep("5 millis")
      // The tools change again while the first listing again waits for its answer.
      yield* callText(connection, "change")
      // Past the client's debounce of the change notices.
      yield* Effect.sleep("300 millis")
      release()
      yield* Effect.gen(function*() {
        while (listings.answered < 3) yield* Effect.sleep("5 millis")
      }).pipe(Effect.timeout("5 seconds"))
      yield* Effect.sleep("100 millis")
      expect(yield* registeredNames).toEqual(["change", "t1", "t2"])
      expect((yield* connectionOf(connection.key))?.tools.map((tool) => tool.name)).toEqual(["change", "t1", "t2"])
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("lists the tools once the server's event stream is open: a change said before it opened is not missed", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      // Its tools change after a tool listing that came before the event stream, if one does.
      const changing = yield* changingBeforeEventStream(300)
      const connection = yield* mcp.connectMcpServer({ url: changing.url })
      expect(connection.tools.map((tool) => tool.name)).toEqual(["echo", "late"])
      expect(yield* registeredNames).toEqual(["echo", "late"])
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a server slow to open its event stream connects anyway; its tools are listed again once the stream opens", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      // The event stream is answered only after the tools were listed (the client stops waiting
      // for it), and the tools change in between.
      const slow = yield* changingBeforeEventStream(10_000)
      const connection = yield* mcp.connectMcpServer({ url: slow.url })
      expect(connection.tools.map((tool) => tool.name)).toEqual(["echo"])
      yield* Effect.gen(function*() {
        while ((yield* registeredNames).length < 2) yield* Effect.sleep("10 millis")
      }).pipe(Effect.timeout("5 seconds"))
      expect(yield* registeredNames).toEqual(["echo", "late"])
    }).pipe(Effect.provide(stack()), Effect.scoped))

  describe("a server that forgot the session (it restarted)", () => {
    /** The method of a JSON-RPC message, if it is one. */
    const methodOf = (message: unknown): unknown =>
      typeof message === "object" && message !== null && "method" in message ? message.method : undefined

    /**
     * A server with `tally` (counts its runs) and the `hello` prompt that forgets every session at
     * the requests of `forgetting` (their method), while `forgets` says so; `initialize` waits at
     * `gate` while it is set, and is refused while `refuses`.
     */
    const forgetful = (forgetting: ReadonlyArray<string>, transport: "http" | "sse" = "http") =>
      Effect.gen(function*() {
        const state = {
          ran: 0,
          forgets: 0,
          sent: [] as Array<unknown>,
          refuses: false,
          gate: undefined as Promise<void> | undefined
        }
        const server = yield* mcpServer({
          transport,
          setup: (session) => {
            session.registerTool("tally", { description: "Counts its runs" }, async () => {
              state.ran++
              return { content: [{ type: "text", text: `ran ${state.ran}` }] }
            })
            prompter(session)
          },
          forgets: (message) => {
            const method = methodOf(message)
            if (forgetting.includes(String(method))) state.sent.push(method)
            if (state.forgets === 0 || !forgetting.includes(String(method))) return false
            state.forgets--
            return true
          },
          beforeInitialize: async (_request, response) => {
            if (state.gate !== undefined) await state.gate
            if (state.refuses) response.writeHead(503).end()
          }
        })
        return { server, state }
      })

    it.live("a tool call and a prompt that meet a 404 are sent once more on a new session, and the tool runs once", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const { server, state } = yield* forgetful(["tools/call", "prompts/get"])
        const connection = yield* mcp.connectMcpServer({ url: server.url, serverKey: "forgetful" })

        state.forgets = 1
        expect(yield* callText(connection, "tally")).toBe("ran 1")
        expect(state.ran).toBe(1)
        expect(server.sessions.opened).toBe(2)
        expect((yield* connectionOf(connection.key))?.status).toBe("connected")

        state.forgets = 1
        const prompt = yield* mcp.getMcpPrompt("forgetful", "hello")
        expect(prompt.messages).toEqual([{ role: "assistant", content: { type: "text", text: "Hello!" } }])
        expect(server.sessions.opened).toBe(3)
        expect(state.sent).toEqual(["tools/call", "tools/call", "prompts/get", "prompts/get"])
      }).pipe(Effect.provide(stack({ reconnectSchedule: Schedule.spaced("20 millis") })), Effect.scoped))

    it.live("a second 404 on the new session fails the call with Disconnected, sent twice in all, the tool never run", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const { server, state } = yield* forgetful(["tools/call"])
        const connection = yield* mcp.connectMcpServer({ url: server.url, serverKey: "forgetful" })

        state.forgets = 2
        const error = yield* Effect.flip(callText(connection, "tally"))
        expect(error).toMatchObject({ _tag: "McpError", reason: "Disconnected" })
        expect(state.sent).toEqual(["tools/call", "tools/call"])
        expect(state.ran).toBe(0)
      }).pipe(Effect.provide(stack({ reconnectSchedule: Schedule.spaced("20 millis") })), Effect.scoped))

    it.live("over HTTP+SSE, a call that meets a 404 is not sent again: it fails with Disconnected, and the server is reconnected", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const { server, state } = yield* forgetful(["tools/call"], "sse")
        const connection = yield* mcp.connectMcpServer({ url: server.url, serverKey: "forgetful", transport: "sse" })

        state.forgets = 1
        const error = yield* Effect.flip(callText(connection, "tally"))
        expect(error).toMatchObject({ _tag: "McpError", reason: "Disconnected" })
        expect(state.sent).toEqual(["tools/call"])
        expect(state.ran).toBe(0)
        yield* mcp.changes.pipe(
          Stream.filter((connections) => connections[connection.key]?.status === "connected" && server.sessions.opened === 2),
          Stream.runHead
        )
        expect(yield* callText((yield* connectionOf(connection.key))!, "tally")).toBe("ran 1")
      }).pipe(Effect.provide(stack({ reconnectSchedule: Schedule.spaced("20 millis") })), Effect.scoped))

    it.live("a log level set on a session its server forgot is sent once more on the new session, and setMcpLogLevel succeeds", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const levels: NonNullable<Parameters<typeof chatty>[0]> = []
        const server = yield* mcpServer({ setup: chatty(levels) })
        yield* mcp.connectMcpServer({ url: server.url, serverKey: "forgetful" })
        // Restarted behind a proxy: the client's event stream stays open, nothing tells it.
        yield* Effect.promise(() => server.forget({ keepStreams: true }))

        yield* mcp.setMcpLogLevel("forgetful", "error")
        expect(server.sessions.opened).toBe(2)
        expect(levels.at(-1)).toBe("error")
        expect((yield* mcp.getMcpClients)[Object.keys(yield* mcp.getMcpClients)[0]!]).toMatchObject({
          status: "connected",
          logLevel: "error"
        })
      }).pipe(Effect.provide(stack({ reconnectSchedule: Schedule.spaced("20 millis") })), Effect.scoped))

    it.live("a call waiting for a reconnection that fails for good ends with Disconnected and the reason", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const { server, state } = yield* forgetful(["tools/call"])
        const connection = yield* mcp.connectMcpServer({ url: server.url, serverKey: "forgetful" })

        state.forgets = 1
        state.refuses = true
        const error = yield* Effect.flip(callText(connection, "tally"))
        expect(error).toMatchObject({ _tag: "McpError", reason: "Disconnected" })
        expect(error.message).toContain("could not be reconnected")
        expect((yield* connectionOf(connection.key))?.status).toBe("failed")
        expect(state.sent).toEqual(["tools/call"])
      }).pipe(
        Effect.provide(stack({ reconnectSchedule: Schedule.recurs(1).pipe(Schedule.addDelay(() => "20 millis")) })),
        Effect.scoped
      ))

    it.live("a call waiting for the reconnection ends with Disconnected when the server is disconnected, or as it is when interrupted", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const { server, state } = yield* forgetful(["tools/call"])
        const connection = yield* mcp.connectMcpServer({ url: server.url, serverKey: "forgetful" })
        let open: () => void = () => undefined
        state.gate = new Promise((resolve) => (open = resolve))
        const reconnecting = mcp.changes.pipe(
          Stream.filter((connections) => connections[connection.key]?.status === "reconnecting"),
          Stream.runHead
        )

        // Interrupted while it waits: the reconnection goes on.
        state.forgets = 1
        const interrupted = yield* Effect.fork(callText(connection, "tally"))
        yield* reconnecting
        yield* Fiber.interrupt(interrupted)
        expect(Exit.isInterrupted(yield* Fiber.await(interrupted))).toBe(true)
        open()
        yield* mcp.changes.pipe(
          Stream.filter((connections) => connections[connection.key]?.status === "connected"),
          Stream.runHead
        )
        const reconnected = (yield* connectionOf(connection.key))!

        // Disconnected while it waits.
        state.gate = new Promise((resolve) => (open = resolve))
        state.forgets = 1
        const waiting = yield* Effect.fork(callText(reconnected, "tally"))
        yield* reconnecting
        yield* mcp.disconnectMcpServer(connection.key)
        const error = yield* Effect.flip(Fiber.join(waiting))
        expect(error).toMatchObject({ _tag: "McpError", reason: "Disconnected" })
        expect(error.message).toContain("was disconnected")
        open()
        expect(state.ran).toBe(0)
        expect(state.sent).toEqual(["tools/call", "tools/call"])
      }).pipe(Effect.provide(stack({ reconnectSchedule: Schedule.spaced("20 millis") })), Effect.scoped))
  })

  describe("elicitation", () => {
    it.live("declines without a handler, then asks the handler set, then its replacement", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const greeterServer = yield* mcpServer({ setup: greeter })
        const connection = yield* mcp.connectMcpServer({ url: greeterServer.url, serverKey: "greeter" })
        expect(yield* callText(connection, "greet")).toBe("No name (decline)")

        const seen: Array<{ request: Mcp.ElicitationRequest; serverKey: string }> = []
        yield* mcp.setElicitationHandler((request, context) =>
          Effect.sync(() => {
            seen.push({ request, serverKey: context.serverKey })
            return { action: "accept", content: { name: "Ada" } }
          })
        )
        expect(yield* callText(connection, "greet")).toBe("Hello, Ada!")
        expect(seen).toEqual([{
          serverKey: "greeter",
          request: {
            method: "elicitation/create",
            params: {
              mode: "form",
              message: "What is your name?",
              requestedSchema: {
                type: "object",
                properties: { name: { type: "string", title: "Name" } },
                required: ["name"]
              }
            }
          }
        }])

        yield* mcp.setElicitationHandler(async () => ({ action: "accept", content: { name: "Grace" } }))
        expect(yield* callText(connection, "greet")).toBe("Hello, Grace!")
        yield* mcp.setElicitationHandler(() => ({ action: "cancel" }))
        expect(yield* callText(connection, "greet")).toBe("No name (cancel)")
      }).pipe(Effect.provide(stack()), Effect.scoped))

    it.live("a server's own handler wins over the service-wide one", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const greeterServer = yield* mcpServer({ setup: greeter })
        const connection = yield* mcp.connectMcpServer({
          url: greeterServer.url,
          handlers: { elicitation: () => ({ action: "accept", content: { name: "own" } }) }
        })
        expect(yield* callText(connection, "greet")).toBe("Hello, own!")
      }).pipe(
        Effect.provide(stack({ elicitationHandler: () => ({ action: "accept", content: { name: "wide" } }) })),
        Effect.scoped
      ))

    it.live("a connect of a connected server that gives handlers replaces its own: the new ones answer, without a new session", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const greeterServer = yield* mcpServer({ setup: greeter })
        const first = yield* mcp.connectMcpServer({
          url: greeterServer.url,
          handlers: { elicitation: () => ({ action: "accept", content: { name: "first" } }) }
        })
        expect(yield* callText(first, "greet")).toBe("Hello, first!")
        const second = yield* mcp.connectMcpServer({
          url: greeterServer.url,
          handlers: { elicitation: () => ({ action: "accept", content: { name: "second" } }) }
        })
        expect(second.client).toBe(first.client)
        expect(yield* callText(second, "greet")).toBe("Hello, second!")
        // Given without handlers, the server keeps its own; given `{}`, it is left to the service-wide one.
        yield* mcp.connectMcpServer({ url: greeterServer.url })
        expect(yield* callText(first, "greet")).toBe("Hello, second!")
        yield* mcp.connectMcpServer({ url: greeterServer.url, handlers: {} })
        expect(yield* callText(first, "greet")).toBe("Hello, wide!")
        expect(greeterServer.sessions.opened).toBe(1)
      }).pipe(
        Effect.provide(stack({ elicitationHandler: () => ({ action: "accept", content: { name: "wide" } }) })),
        Effect.scoped
      ))

    it.live("a connection's client replaces its handlers on its session; one kept from before a reconnection fails with NotConnected and leaves the new session's", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const transports: Array<StreamableHTTPServerTransport> = []
        const greeterServer = yield* mcpServer({
          setup: greeter,
          beforeSessionRequest: async (_request, session) => {
            if (!transports.includes(session)) transports.push(session)
          }
        })
        const named = (name: string): Mcp.ElicitationHandler => () => ({ action: "accept", content: { name } })
        const connection = yield* mcp.connectMcpServer({ url: greeterServer.url, serverKey: "greeter" })
        const kept = connection.client!
        yield* kept.updateHandlers((handlers) => ({ ...handlers, elicitation: named("first") }))
        expect(yield* callText(connection, "greet")).toBe("Hello, first!")

        const reconnected = mcp.changes.pipe(
          Stream.map((connections) => connections[connection.key]?.status),
          Stream.changes,
          Stream.dropWhile((status) => status === "connected"),
          Stream.takeUntil((status) => status === "connected"),
          Stream.runDrain,
          Effect.fork
        )
        const watching = yield* reconnected
        transports[0]!.closeStandaloneSSEStream()
        yield* Fiber.join(watching)
        const later = (yield* mcp.getMcpClients)[connection.key]!
        expect(later.client).not.toBe(kept)

        yield* later.client!.updateHandlers((handlers) => ({ ...handlers, elicitation: named("new") }))
        const stale = yield* Effect.flip(kept.updateHandlers((handlers) => ({ ...handlers, elicitation: named("stale") })))
        expect(stale).toMatchObject({ _tag: "McpError", reason: "NotConnected", serverKey: "greeter" })
        expect(yield* callText(later, "greet")).toBe("Hello, new!")
        // The connection is the same one, reconnected: the kept client still disconnects it.
        yield* kept.disconnect
        expect(yield* mcp.getMcpClients).toEqual({})
      }).pipe(Effect.provide(stack({ reconnectSchedule: Schedule.spaced("50 millis") })), Effect.scoped))

    it.live("handler replacements apply in the order asked, also one asked as the lock is let go while an earlier one waits for it", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const runtime = yield* Effect.runtime<never>()
        const greeterServer = yield* mcpServer({ setup: greeter })
        const connection = yield* mcp.connectMcpServer({ url: greeterServer.url, serverKey: "greeter" })
        const named = (name: string): Mcp.ElicitationHandler => () => ({ action: "accept", content: { name } })
        const replace = (name: string) =>
          mcp.updateMcpServerHandlers(connection.key, (handlers) => ({ ...handlers, elicitation: named(name) }))

        // The first holds the lock while the second is asked: the second waits for it.
        let second: Fiber.RuntimeFiber<void> | undefined
        yield* mcp.updateMcpServerHandlers(connection.key, (handlers) => {
          second = Runtime.runFork(runtime)(replace("second"))
          return { ...handlers, elicitation: named("first") }
        })
        // The third is asked the moment the first lets go of the lock, before the second took it.
        yield* replace("third")
        yield* Fiber.join(second!)
        expect(yield* callText(connection, "greet")).toBe("Hello, third!")
      }).pipe(Effect.provide(stack()), Effect.scoped))

    it.live("a handler replacement interrupted while it waits for the lock is not applied, and the one asked after it is", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const runtime = yield* Effect.runtime<never>()
        const greeterServer = yield* mcpServer({ setup: greeter })
        const connection = yield* mcp.connectMcpServer({ url: greeterServer.url, serverKey: "greeter" })
        const named = (name: string): Mcp.ElicitationHandler => () => ({ action: "accept", content: { name } })
        const replace = (name: string) =>
          mcp.updateMcpServerHandlers(connection.key, (handlers) => ({ ...handlers, elicitation: named(name) }))

        let interrupted: Fiber.RuntimeFiber<void> | undefined
        let after: Fiber.RuntimeFiber<void> | undefined
        yield* mcp.updateMcpServerHandlers(connection.key, (handlers) => {
          interrupted = Runtime.runFork(runtime)(replace("interrupted"))
          after = Runtime.runFork(runtime)(replace("after"))
          Runtime.runFork(runtime)(Fiber.interrupt(interrupted))
          return { ...handlers, elicitation: named("first") }
        })
        yield* Fiber.join(after!)
        expect(Exit.isInterrupted(yield* Fiber.await(interrupted!))).toBe(true)
        expect(yield* callText(connection, "greet")).toBe("Hello, after!")
        // The lock is free again.
        yield* replace("last")
        expect(yield* callText(connection, "greet")).toBe("Hello, last!")
      }).pipe(Effect.provide(stack()), Effect.scoped))

    /** A reconnection that gives up after one try. */
    const givesUpSoon = Schedule.recurs(1).pipe(Schedule.addDelay(() => "20 millis"))

    /**
     * A connection to `server` that failed for good: the server went away, the reconnection gave
     * up (with `givesUpSoon`), and the server is back.
     */
    const failedForGood = (server: TestMcpServer, info: Omit<Mcp.McpServerInfo, "url">) =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const connection = yield* mcp.connectMcpServer({ url: server.url, ...info })
        yield* Effect.promise(() => server.kill())
        yield* Effect.ignore(connection.client!.callTool("greet"))
        yield* mcp.changes.pipe(
          Stream.filter((connections) => connections[connection.key]?.status === "failed"),
          Stream.runHead,
          Effect.timeout("5 seconds")
        )
        yield* Effect.promise(() => server.restart())
        return connection
      })

    it.live("a handler replaced while the server failed for good starts no connection, and answers after the next connect", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const greeterServer = yield* mcpServer({ setup: greeter })
        const connection = yield* failedForGood(greeterServer, {
          serverKey: "greeter",
          handlers: { elicitation: () => ({ action: "accept", content: { name: "first" } }) }
        })
        const heard = greeterServer.requests.length

        yield* mcp.updateMcpServerHandlers(connection.key, (handlers) => ({
          ...handlers,
          elicitation: () => ({ action: "accept", content: { name: "second" } })
        }))
        const failed = (yield* connectionOf(connection.key))!
        expect(failed.status).toBe("failed")
        expect(greeterServer.requests.length).toBe(heard)

        // Connected again, by the record it shows or by the server alone: the handler given last answers.
        const again = yield* mcp.connectMcpServer(failed.server)
        expect(yield* callText(again, "greet")).toBe("Hello, second!")
        expect(greeterServer.sessions.opened).toBe(2)
      }).pipe(
        Effect.provide(stack({ reconnectSchedule: givesUpSoon })),
        Effect.scoped
      ))

    it.live("a connect of a server that failed, given no handlers, keeps the handlers it had", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const greeterServer = yield* mcpServer({ setup: greeter })
        yield* failedForGood(greeterServer, { handlers: { elicitation: () => ({ action: "accept", content: { name: "own" } }) } })
        const again = yield* mcp.connectMcpServer({ url: greeterServer.url })
        expect(yield* callText(again, "greet")).toBe("Hello, own!")
      }).pipe(
        Effect.provide(stack({
          elicitationHandler: () => ({ action: "accept", content: { name: "wide" } }),
          reconnectSchedule: givesUpSoon
        })),
        Effect.scoped
      ))
  })

  describe("sampling", () => {
    it.live("answers a server's sampling request with the handler", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const summary = yield* mcpServer({ setup: summarizer })
        const connection = yield* mcp.connectMcpServer({ url: summary.url })
        expect(yield* callText(connection, "summarize", { text: "a long story" })).toBe("Summary: short (50)")
        // Replaced handlers apply to the connected servers.
        yield* mcp.setSamplingHandler(() =>
          Effect.succeed({ model: "m2", role: "assistant" as const, content: { type: "text" as const, text: "shorter" } })
        )
        expect(yield* callText(connection, "summarize", { text: "a long story" })).toBe("Summary: shorter")
      }).pipe(
        Effect.provide(stack({
          samplingHandler: (request) => ({
            model: "m1",
            role: "assistant",
            content: { type: "text", text: `short (${request.params.maxTokens})` }
          })
        })),
        Effect.scoped
      ))

    it.live("without a sampling handler, the capability is not announced", () =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const summary = yield* mcpServer({ setup: summarizer })
        const connection = yield* mcp.connectMcpServer({ url: summary.url })
        const client = connection.client!
        const result = yield* client.callTool("summarize", { text: "x" })
        expect(result.isError).toBe(true)
        expect(JSON.stringify(result.content)).toContain("Method not found")
      }).pipe(Effect.provide(stack()), Effect.scoped))
  })

  it.live("getMcpToken asks the API for an MCP access token", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const token = yield* mcp.getMcpToken()
      expect(Option.map(token.token, Redacted.value)).toEqual(Option.some(expect.any(String)))
      expect(Option.isSome(token.expiresAt)).toBe(true)
      const request = server().requests.find((r) => r.path === "/auth/mcp/access-token")
      expect(request?.body).toEqual({ contextKey: "user-1" })
      yield* mcp.getMcpToken("another-context")
      const last = server().requests.filter((r) => r.path === "/auth/mcp/access-token").at(-1)
      expect(last?.body).toEqual({ contextKey: "another-context" })
    }).pipe(Effect.provide(stack())))
})

const localAdd = Tool.make({
  name: "add",
  description: "The application's own add",
  input: { type: "object", properties: {} },
  execute: () => "local"
})
