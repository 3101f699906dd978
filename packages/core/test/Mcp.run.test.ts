import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Tracer from "effect/Tracer"
import * as Mcp from "../src/Mcp.js"
import * as Tambo from "../src/Tambo.js"
import * as ToolRegistry from "../src/ToolRegistry.js"
import { runAll, tamboLayer, useServer } from "./helpers.js"
import { mcpServer, unusedUrl, waitServer } from "./mcp/server.js"
import { all, calculator, echo, greeter, sleeper } from "./mcp/tools.js"

const server = useServer()

/** The full SDK against the testing server, with MCP. */
const stack = (options: Mcp.MakeOptions = {}) => Mcp.layerWith(options).pipe(Layer.provideMerge(tamboLayer(server())))

type RunRequest = Script.RunRequest

/**
 * A script that makes the given tool calls in its first round and ends the
 * run once the results came back; `requests` records what the API received.
 */
const callThenFinish = (calls: ReadonlyArray<readonly [name: string, args: unknown]>) => {
  const requests: Array<RunRequest> = []
  server().setScript((request) => {
    requests.push(request)
    return request.toolResults.length === 0
      ? calls.map(([name, args]) => Script.toolCall(name, args))
      : [Script.text(`Results: ${request.toolResults.map((result) => result.text).join(", ")}`)]
  })
  return requests
}

const results = (requests: ReadonlyArray<RunRequest>) =>
  requests[1]!.toolResults.map(({ toolName, isError, text }) => ({ toolName, isError, text }))

/** Records every span the effect starts, into `spans`. */
const recordingSpans = (spans: Array<Tracer.Span>) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.tracer, (native) =>
    Effect.withTracer(
      effect,
      Tracer.make({
        span: (...args) => {
          const span = native.span(...args)
          spans.push(span)
          return span
        },
        context: (f, fiber) => native.context(f, fiber)
      })
    ))

const ancestors = (span: Tracer.Span): Array<string> => {
  const names: Array<string> = []
  let current: Option.Option<Tracer.AnySpan> = span.parent
  while (Option.isSome(current) && current.value._tag === "Span") {
    names.push(current.value.name)
    current = current.value.parent
  }
  return names
}

describe("MCP tools in runs", () => {
  it.live("the model's call of an MCP tool is bounded by the tool timeout, not the MCP request timeout, which bounds a call through the handle", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const waiting = yield* waitServer()
      const connection = yield* mcp.connectMcpServer({ url: waiting.server.url })
      const requests = callThenFinish([["wait", {}]])
      const run = yield* Effect.fork(runAll("Wait for the gate"))
      yield* waiting.arrived

      // Started after the model's call, and held as it is: the request timeout ends it, so the
      // model's call, still held, has outlasted that timeout.
      const error = yield* Effect.flip(connection.client!.callTool("wait", {}))
      expect(error).toMatchObject({ _tag: "McpError", reason: "CallFailed" })
      expect(error.message).toContain("timed out")

      waiting.open()
      yield* Fiber.join(run)
      expect(results(requests)).toEqual([{ toolName: "wait", isError: false, text: "opened" }])
    }).pipe(Effect.provide(stack({ requestTimeout: "1 second" })), Effect.scoped))

  // On the test clock, moved past the tool timeout once the call reached the server: the call
  // is cut there however slow the machine, never before the server has it.
  it.effect("an MCP tool past the tool timeout: the model gets an error result, and the server is told to stop the call", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const waiting = yield* waitServer()
      yield* mcp.connectMcpServer({ url: waiting.server.url })
      const requests = callThenFinish([["wait", {}]])

      const run = yield* Effect.fork(runAll("Wait a long time", { toolTimeout: "200 millis" }))
      yield* waiting.arrived
      yield* TestClock.adjust("200 millis")
      yield* Fiber.join(run)

      const [result] = results(requests)
      expect(result).toMatchObject({ toolName: "wait", isError: true })
      expect(result!.text).toContain("did not finish within")
      expect(yield* waiting.ended).toBe("cancelled")
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a run interrupted during an MCP tool call: the server is told to stop the call, and the connection stays", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const waiting = yield* waitServer(sleeper())
      const connection = yield* mcp.connectMcpServer({ url: waiting.server.url })
      const calls = callThenFinish([["wait", {}]])

      const tambo = yield* Tambo.Tambo
      const run = yield* Effect.fork(Stream.runDrain(tambo.run("Wait a long time")))
      yield* waiting.arrived
      yield* Fiber.interrupt(run)

      expect(yield* waiting.ended).toBe("cancelled")
      expect(calls).toHaveLength(1)
      expect((yield* mcp.getMcpClients)[connection.key]?.status).toBe("connected")
      // The session goes on: the next call is answered.
      expect(yield* connection.client!.callTool("sleep", { ms: 1 })).toMatchObject({ content: [{ text: "slept" }] })
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a run calls an MCP tool in its tool loop, and the tool's output reaches the API", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const calc = yield* mcpServer({ setup: calculator })
      yield* mcp.connectMcpServer({ url: calc.url })
      const requests = callThenFinish([["add", { a: 2, b: 3 }], ["math_square", { x: 7 }]])

      const events = yield* runAll("What is 2 + 3, and 7 squared?")

      const add = requests[0]!.tools.find((tool) => tool.name === "add")
      expect(add).toMatchObject({
        description: "Adds two numbers",
        inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } }
      })
      expect(results(requests)).toEqual([
        { toolName: "add", isError: false, text: "5" },
        { toolName: "math_square", isError: false, text: "49" }
      ])
      const last = events.at(-1)!.snapshot.messages.at(-1)!.content[0]
      expect(last).toEqual({ type: "text", text: "Results: 5, 49" })
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("works over the SSE transport", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const calc = yield* mcpServer({ transport: "sse", setup: calculator })
      yield* mcp.connectMcpServer({ url: calc.url, transport: "sse" })
      const requests = callThenFinish([["add", { a: 20, b: 22 }]])
      yield* runAll("20 + 22?")
      expect(results(requests)).toEqual([{ toolName: "add", isError: false, text: "42" }])
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("an MCP tool error becomes an error tool result, and the run goes on", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const calc = yield* mcpServer({ setup: calculator })
      yield* mcp.connectMcpServer({ url: calc.url })
      const requests = callThenFinish([["divide", { a: 1, b: 0 }], ["explode", {}], ["divide", { a: 1, b: "x" }]])

      const events = yield* runAll("Divide by zero, then explode")

      const [divide, explode, invalid] = results(requests)
      expect(divide).toEqual({ toolName: "divide", isError: true, text: "Cannot divide by zero" })
      expect(explode).toMatchObject({ toolName: "explode", isError: true })
      expect(explode!.text).toContain("the detonator went off")
      // Arguments are checked against the server's JSON Schema before the call.
      expect(invalid).toMatchObject({ toolName: "divide", isError: true })
      expect(invalid!.text).toContain("Invalid arguments")
      expect(events.at(-1)!.event.type).toBe("RUN_FINISHED")
      expect((yield* mcp.getMcpClients)[Mcp.uniqueKey({ url: calc.url })]?.status).toBe("connected")
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("with several servers, each prefixed tool goes to its own server", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const alpha = yield* mcpServer({ setup: all(echo("alpha"), calculator) })
      const beta = yield* mcpServer({ transport: "sse", setup: echo("beta") })
      yield* mcp.connectMcpServer({ url: alpha.url, serverKey: "alpha" })
      yield* mcp.connectMcpServer({ url: beta.url, transport: "sse", serverKey: "beta" })
      const requests = callThenFinish([
        ["beta__echo", { message: "hi" }],
        ["alpha__echo", { message: "hello" }],
        ["alpha__add", { a: 1, b: 2 }]
      ])

      yield* runAll("echo twice")

      expect(requests[0]!.tools.map((tool) => tool.name).sort()).toEqual(
        ["alpha__add", "alpha__divide", "alpha__echo", "alpha__explode", "alpha__math_square", "beta__echo"]
      )
      expect(results(requests)).toEqual([
        { toolName: "beta__echo", isError: false, text: "beta: hi" },
        { toolName: "alpha__echo", isError: false, text: "alpha: hello" },
        { toolName: "alpha__add", isError: false, text: "3" }
      ])
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a server that dies during a call: the call is an error result, and the server is being reconnected", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const crash = { kill: (): Promise<void> => Promise.resolve() }
      const calc = yield* mcpServer({
        setup: all(calculator, (s) => {
          s.registerTool("crash", { description: "Kills the server", inputSchema: {} }, async () => {
            await crash.kill()
            return { content: [{ type: "text" as const, text: "never" }] }
          })
        })
      })
      crash.kill = () => calc.kill()
      const connection = yield* mcp.connectMcpServer({ url: calc.url })
      const requests = callThenFinish([["crash", {}]])

      yield* runAll("crash it")

      const [result] = results(requests)
      expect(result).toMatchObject({ toolName: "crash", isError: true })
      expect(result!.text).toContain("unreachable")
      const after = (yield* mcp.getMcpClients)[connection.key]
      // The error is the latest failure: the drop, then the reconnection attempts.
      expect(after).toMatchObject({ status: "reconnecting", tools: [], error: { _tag: "McpError" } })
      expect(after?.client).toBeUndefined()
    }).pipe(Effect.provide(stack({ reconnectSchedule: Schedule.spaced("1 hour") })), Effect.scoped))

  it.live.each(["http", "sse"] as const)("a server that dies is reconnected (%s): runs go on without its tools while it is down, and get them back after", (transport) =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const registry = yield* ToolRegistry.ToolRegistry
      const calc = yield* mcpServer({ setup: calculator, transport })
      const connection = yield* mcp.connectMcpServer({ url: calc.url, serverKey: "calc", transport })
      const statusIs = (status: Mcp.McpConnectionStatus) =>
        mcp.changes.pipe(
          Stream.filter((connections) => connections[connection.key]?.status === status),
          Stream.runHead,
          Effect.flatten
        )
      const statuses: Array<string> = []
      yield* mcp.changes.pipe(
        Stream.map((connections) => connections[connection.key]?.status ?? "none"),
        Stream.changes,
        Stream.runForEach((status) => Effect.sync(() => statuses.push(status))),
        Effect.forkScoped
      )

      yield* Effect.promise(() => calc.kill())
      const down = yield* statusIs("reconnecting")
      expect(down[connection.key]).toMatchObject({ tools: [], error: { _tag: "McpError" } })
      expect(down[connection.key]?.client).toBeUndefined()
      expect(yield* registry.list).toEqual([])
      // A run while it is down succeeds, without its tools.
      const requests = callThenFinish([])
      server().setScript((request) => {
        requests.push(request)
        return [Script.text("no tools")]
      })
      yield* runAll("anything?")
      expect(requests[0]!.tools).toEqual([])
      // The server keeps being down for a while: still reconnecting, with the failure in its status.
      const failing = yield* mcp.changes.pipe(
        Stream.filter((connections) => connections[connection.key]?.error?.reason === "Connect"),
        Stream.runHead,
        Effect.flatten
      )
      expect(failing[connection.key]?.status).toBe("reconnecting")

      yield* Effect.promise(() => calc.restart())
      const up = yield* statusIs("connected")
      expect(up[connection.key]?.error).toBeUndefined()
      expect((yield* registry.list).map((tool) => tool.name)).toEqual(["add", "divide", "explode", "math_square"])
      // The same client works again: calls reach the restarted server.
      const again = callThenFinish([["add", { a: 20, b: 22 }]])
      yield* runAll("20 + 22?")
      expect(results(again)).toEqual([{ toolName: "add", isError: false, text: "42" }])
      expect(statuses).toEqual(["connected", "reconnecting", "connected"])
    }).pipe(Effect.provide(stack({ reconnectSchedule: Schedule.spaced("20 millis") })), Effect.scoped))

  it.live("a reconnect schedule that runs out leaves the connection failed with its last error; a later connect tries again", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const calc = yield* mcpServer({ setup: calculator })
      const connection = yield* mcp.connectMcpServer({ url: calc.url, serverKey: "calc" })
      yield* Effect.promise(() => calc.kill())
      // A call finds the server gone: the connection drops, and is tried again twice.
      yield* Effect.ignore(connection.client!.callTool("add", { a: 1, b: 2 }))
      const failed = yield* mcp.changes.pipe(
        Stream.filter((connections) => connections[connection.key]?.status === "failed"),
        Stream.runHead,
        Effect.flatten,
        Effect.timeout("5 seconds")
      )
      expect(failed[connection.key]).toMatchObject({ tools: [], error: { _tag: "McpError", reason: "Connect" } })
      expect(failed[connection.key]?.client).toBeUndefined()

      yield* Effect.promise(() => calc.restart())
      const again = yield* mcp.connectMcpServer({ url: calc.url, serverKey: "calc" }).pipe(Effect.timeout("5 seconds"))
      expect(again).toMatchObject({ key: connection.key, status: "connected" })
      expect((yield* mcp.getMcpClients)[connection.key]?.status).toBe("connected")
    }).pipe(
      Effect.provide(stack({ reconnectSchedule: Schedule.recurs(1).pipe(Schedule.addDelay(() => "20 millis")) })),
      Effect.scoped
    ))

  it.live("a server given to the layer that cannot be reached: its status holds the McpError, and runs go on without it", () =>
    Effect.gen(function*() {
      const url = yield* unusedUrl
      yield* Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const failed = yield* mcp.changes.pipe(
          Stream.map((connections) => connections[Mcp.uniqueKey({ url })]),
          Stream.filter((connection) => connection?.status === "failed"),
          Stream.runHead,
          Effect.flatten
        )
        expect(failed?.error).toMatchObject({ _tag: "McpError", reason: "Connect" })
        const requests = callThenFinish([])
        server().setScript((request) => {
          requests.push(request)
          return [Script.text("fine")]
        })
        yield* runAll("hello")
        expect(requests[0]!.tools).toEqual([])
      }).pipe(Effect.provide(stack({ servers: [{ url }] })))
    }).pipe(Effect.scoped))

  it.live("a tool that elicits asks the elicitation handler during the run", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const greeterServer = yield* mcpServer({ setup: greeter })
      yield* mcp.connectMcpServer({ url: greeterServer.url })
      const asked: Array<string> = []
      yield* mcp.setElicitationHandler((request) => {
        asked.push(request.params.message)
        return Promise.resolve({ action: "accept", content: { name: "Ada" } })
      })
      const requests = callThenFinish([["greet", {}]])

      yield* runAll("greet me")

      expect(asked).toEqual(["What is your name?"])
      expect(results(requests)).toEqual([{ toolName: "greet", isError: false, text: "Hello, Ada!" }])
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("connects the servers given to the layer, and traces connects and calls", () => {
    const spans: Array<Tracer.Span> = []
    return Effect.gen(function*() {
      const calc = yield* mcpServer({ setup: calculator })
      yield* Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const connection = yield* mcp.connectMcpServer({ url: calc.url, serverKey: "calc" })
        expect(connection.status).toBe("connected")
        const requests = callThenFinish([["add", { a: 4, b: 5 }]])
        yield* runAll("4 + 5?")
        expect(results(requests)).toEqual([{ toolName: "add", isError: false, text: "9" }])
      }).pipe(Effect.provide(stack({ servers: [{ url: calc.url, serverKey: "calc" }] })))

      const connect = spans.find((span) => span.name === "Mcp.connect")
      expect(connect?.attributes.get("mcp.server")).toBe("calc")
      expect(connect?.attributes.get("mcp.tools")).toBe(4)
      const call = spans.find((span) => span.name === "Mcp.callTool")
      expect(call?.attributes.get("mcp.server")).toBe("calc")
      expect(call?.attributes.get("tool.name")).toBe("add")
      expect(ancestors(call!)).toContain("ToolExecutor.call")
      expect(calc.sessions.opened).toBe(1)
    }).pipe(Effect.scoped, recordingSpans(spans))
  })
})
