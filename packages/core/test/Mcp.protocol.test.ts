/**
 * The rest of the MCP client's side of the protocol, against real MCP
 * servers on loopback: servers' log messages and the level they log at,
 * progress of tool calls, completions of prompt and template arguments,
 * and the roots servers are given.
 */
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "@effect/vitest"
import { type LoggingLevel, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import type * as Duration from "effect/Duration"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Mcp from "../src/Mcp.js"
import * as Tambo from "../src/Tambo.js"
import { expectStoreEqualsServer, runAll, sleepScheduledAt, tamboLayer, useServer } from "./helpers.js"
import { mcpServer, waitServer } from "./mcp/server.js"
import {
  all,
  calculator,
  chatty,
  completer,
  echo,
  greeter,
  metaReader,
  prompter,
  rootsReader,
  stepper,
  urlElicitor,
  worker
} from "./mcp/tools.js"

const server = useServer()

const stack = (options: Mcp.MakeOptions = {}) => Mcp.layerWith(options).pipe(Layer.provideMerge(tamboLayer(server())))

/** Until `check` passes (it throws until then), or 5 seconds passed: then its last failure. */
const eventually = (check: () => void) =>
  Effect.try(check).pipe(
    Effect.retry(Schedule.spaced("10 millis").pipe(Schedule.upTo("5 seconds"))),
    Effect.orDie
  )

/** A logger that keeps the warnings' messages in `warnings`, for `Effect.provide`. */
const keepingWarnings = (warnings: Array<unknown>) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Warning") warnings.push(message)
    })
  )

/** Until the connection is connected again. */
const untilConnected = (mcp: Mcp.Mcp.Service, key: string) =>
  mcp.changes.pipe(
    Stream.filter((connections) => connections[key]?.status === "connected"),
    Stream.runHead,
    Effect.timeout("5 seconds"),
    Effect.orDie
  )

/** Collects what `stream` gives from now on, in the background, into the returned array. */
const collect = <A>(stream: Stream.Stream<A>) =>
  Effect.gen(function*() {
    const seen: Array<A> = []
    const started = yield* Effect.makeLatch(false)
    yield* Stream.runForEach(Stream.onStart(stream, started.open), (item) => Effect.sync(() => seen.push(item))).pipe(
      Effect.forkScoped
    )
    yield* started.await
    return seen
  })

const textOf = (result: Mcp.McpToolResult) =>
  result.content.map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join("")

describe("MCP logging", () => {
  it.live.each(["http", "sse"] as const)("a server's log messages come out of `logs`, at the level it was asked for (%s)", (transport) =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const levels: Array<LoggingLevel> = []
      const chat = yield* mcpServer({ setup: chatty(levels), transport })
      const logs = yield* collect(mcp.logs)
      const connection = yield* mcp.connectMcpServer({ url: chat.url, transport, serverKey: "chat", logLevel: "error" })
      expect(connection.capabilities?.logging).toEqual({})
      expect(connection.logLevel).toBe("error")
      // Asked while connecting, before the connection is handed out.
      expect(levels).toEqual(["error"])

      yield* connection.client!.callTool("chatty", { n: 1 })
      yield* eventually(() => expect(logs.map((log) => log.level)).toEqual(["error", "critical", "alert", "emergency"]))
      expect(logs[0]).toEqual({
        key: connection.key,
        serverKey: "chat",
        level: "error",
        logger: "chatty",
        data: { n: 1, level: "error" }
      })

      logs.length = 0
      yield* mcp.setMcpLogLevel("chat", "notice")
      expect(levels).toEqual(["error", "notice"])
      expect((yield* mcp.getMcpClients)[connection.key]?.logLevel).toBe("notice")
      yield* connection.client!.callTool("chatty", { n: 2 })
      yield* eventually(() =>
        expect(logs.map((log) => log.level)).toEqual(["notice", "warning", "error", "critical", "alert", "emergency"])
      )
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("the level is asked for again on each new session: after a reconnection, and after a later connect changed it", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const levels: Array<LoggingLevel> = []
      const chat = yield* mcpServer({ setup: chatty(levels) })
      const info = { url: chat.url, serverKey: "chat" }
      const connection = yield* mcp.connectMcpServer(info)
      // No level given: the server is not asked for one.
      expect(levels).toEqual([])
      yield* mcp.setMcpLogLevel("chat", "warning")
      expect(levels).toEqual(["warning"])

      // The server restarts: its new session is asked for the level set before.
      yield* Effect.promise(() => chat.restart())
      yield* Effect.ignore(connection.client!.callTool("chatty", { n: 0 }))
      yield* eventually(() => expect(levels).toEqual(["warning", "warning"]))
      yield* untilConnected(mcp, connection.key)
      const logs = yield* collect(mcp.logs)
      const clients = yield* mcp.getMcpClients
      yield* clients[connection.key]!.client!.callTool("chatty", { n: 3 })
      yield* eventually(() => expect(logs.map((log) => log.level)).toEqual(["warning", "error", "critical", "alert", "emergency"]))

      // A later connect of the same server with another level asks for it.
      yield* mcp.connectMcpServer({ ...info, logLevel: "alert" })
      yield* eventually(() => expect(levels).toEqual(["warning", "warning", "alert"]))
    }).pipe(Effect.provide(stack({ reconnectSchedule: Schedule.spaced("50 millis") })), Effect.scoped))

  it.live("a server that does not answer the level while connecting is connected anyway, and asked again", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const levels: Array<LoggingLevel> = []
      const chat = yield* mcpServer({ setup: chatty(levels, { hangFirst: true }) })
      const connection = yield* mcp.connectMcpServer({ url: chat.url, serverKey: "chat", logLevel: "alert" })
      expect(connection.status).toBe("connected")
      yield* eventually(() => expect(levels).toEqual(["alert"]))
      const logs = yield* collect(mcp.logs)
      yield* connection.client!.callTool("chatty", { n: 1 })
      yield* eventually(() => expect(logs.map((log) => log.level)).toEqual(["alert", "emergency"]))
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("levels set at once leave the server at the last one set", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const levels: Array<LoggingLevel> = []
      const chat = yield* mcpServer({ setup: chatty(levels) })
      const connection = yield* mcp.connectMcpServer({ url: chat.url, serverKey: "chat" })
      const order: ReadonlyArray<LoggingLevel> = ["debug", "error", "info", "alert", "warning"]
      yield* Effect.all(order.map((level) => mcp.setMcpLogLevel("chat", level)), { concurrency: "unbounded" })
      expect((yield* mcp.getMcpClients)[connection.key]?.logLevel).toBe("warning")
      expect(levels.at(-1)).toBe("warning")
      const logs = yield* collect(mcp.logs)
      yield* connection.client!.callTool("chatty", { n: 1 })
      yield* eventually(() => expect(logs.map((log) => log.level)).toEqual(["warning", "error", "critical", "alert", "emergency"]))
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a server that refuses the level stays connected, and says so in a warning", () => {
    const warnings: Array<unknown> = []
    return Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const chat = yield* mcpServer({ setup: chatty([], { refuse: true }) })
      const connection = yield* mcp.connectMcpServer({ url: chat.url, serverKey: "chat", logLevel: "info" })
      expect(connection.status).toBe("connected")
      expect(warnings).toHaveLength(1)
      expect(String((warnings[0] as ReadonlyArray<unknown>)[0])).toContain(
        "Setting the log level of MCP server \"chat\" to \"info\" failed"
      )
      const refused = yield* Effect.flip(mcp.setMcpLogLevel("chat", "debug"))
      expect(refused).toMatchObject({ _tag: "McpError", reason: "CallFailed", serverKey: "chat" })
      expect(refused.message).toContain("no levels today")
      expect(textOf(yield* connection.client!.callTool("chatty", { n: 1 }))).toBe("said")
    }).pipe(Effect.provide(stack()), Effect.scoped, Effect.provide(keepingWarnings(warnings)))
  })

  it.live("an unknown server key is NotConnected; a server that offers no logging is not asked", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const plain = yield* mcpServer({ setup: echo("plain") })
      yield* mcp.connectMcpServer({ url: plain.url, serverKey: "plain", logLevel: "debug" })
      expect(yield* Effect.flip(mcp.setMcpLogLevel("nope", "info"))).toMatchObject({
        _tag: "McpError",
        reason: "NotConnected",
        serverKey: "nope"
      })
      const posts = plain.postsAnswered
      yield* mcp.setMcpLogLevel("plain", "info")
      expect(plain.postsAnswered).toBe(posts)
      expect(plain.requests.some((request) => request.method === "POST" && request.headers["mcp-method"] === "logging/setLevel"))
        .toBe(false)
    }).pipe(Effect.provide(stack()), Effect.scoped))
})

describe("MCP progress", () => {
  it.live("the progress of the model's call of an MCP tool comes out of `toolProgress`, with the call's id", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const work = yield* mcpServer({ setup: worker })
      yield* mcp.connectMcpServer({ url: work.url, serverKey: "work" })
      const progress = yield* collect(mcp.toolProgress)
      const results: Array<string> = []
      server().setScript((request) => {
        if (request.toolResults.length === 0) return [Script.toolCall("work", { steps: 3, gapMs: 5 }, { id: "call_work" })]
        results.push(...request.toolResults.map((result) => result.text))
        return [Script.text("worked")]
      })
      yield* runAll("work please")
      expect(results).toEqual(["done"])
      yield* eventually(() => expect(progress).toHaveLength(3))
      expect(progress).toEqual([1, 2, 3].map((step) => ({
        key: Mcp.uniqueKey({ url: work.url }),
        serverKey: "work",
        tool: "work",
        registeredName: "work",
        toolCallId: "call_work",
        progress: step,
        total: 3,
        message: `step ${step}`
      })))
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("`currentToolProgress` holds a call's latest progress while it runs, and forgets it when it ends", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const work = yield* mcpServer({ setup: worker })
      yield* mcp.connectMcpServer({ url: work.url, serverKey: "work" })
      const progress = yield* collect(mcp.toolProgress)
      server().setScript((request) =>
        request.toolResults.length === 0
          ? [Script.toolCall("work", { steps: 3, gapMs: 400 }, { id: "call_slow" })]
          : [Script.text("worked")]
      )
      expect(yield* mcp.currentToolProgress("call_slow")).toEqual(Option.none())
      const run = yield* Effect.fork(runAll("work please"))
      // After the second notice, a late reader gets it (or a later one), not the first.
      yield* eventually(() => expect(progress).toHaveLength(2))
      const current = Option.getOrThrow(yield* mcp.currentToolProgress("call_slow"))
      expect(current).toMatchObject({ toolCallId: "call_slow", total: 3, serverKey: "work", tool: "work" })
      expect(current.progress).toBeGreaterThanOrEqual(2)
      expect(yield* mcp.currentToolProgress("call_other")).toEqual(Option.none())
      yield* Fiber.join(run)
      expect(progress).toHaveLength(3)
      expect(yield* mcp.currentToolProgress("call_slow")).toEqual(Option.none())
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a call cut by the end of its run forgets its progress", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const tambo = yield* Tambo.Tambo
      const work = yield* mcpServer({ setup: worker })
      yield* mcp.connectMcpServer({ url: work.url, serverKey: "work" })
      const progress = yield* collect(mcp.toolProgress)
      server().setScript(() => [Script.toolCall("work", { steps: 20, gapMs: 200 }, { id: "call_cut" })])
      const run = yield* Effect.fork(Stream.runDrain(tambo.run("work please")))
      yield* eventually(() => expect(progress).toHaveLength(1))
      expect(Option.isSome(yield* mcp.currentToolProgress("call_cut"))).toBe(true)
      yield* Fiber.interrupt(run)
      expect(yield* mcp.currentToolProgress("call_cut")).toEqual(Option.none())
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a call through the handle hears its progress, and each notice restarts the request timeout", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const work = yield* mcpServer({ setup: worker })
      const connection = yield* mcp.connectMcpServer({ url: work.url })
      const heard: Array<Mcp.McpProgress> = []
      // Four steps of 400 ms: 1.6 s in all, against a request timeout of 1 s.
      const result = yield* connection.client!.callTool("work", { steps: 4, gapMs: 400 }, {
        onProgress: (progress) => heard.push(progress)
      })
      expect(textOf(result)).toBe("done")
      expect(heard.map((progress) => progress.progress)).toEqual([1, 2, 3, 4])
      expect(heard[3]).toEqual({ progress: 4, total: 4, message: "step 4" })

      // Without `onProgress`, the server is not asked, and the same call is cut by the timeout.
      const error = yield* Effect.flip(connection.client!.callTool("work", { steps: 4, gapMs: 400 }))
      expect(error).toMatchObject({ _tag: "McpError", reason: "CallFailed" })
      expect(error.message).toMatch(/timed out/i)
      expect(textOf(yield* connection.client!.callTool("work", { steps: 1, gapMs: 0 }))).toBe("done, unasked")
    }).pipe(Effect.provide(stack({ requestTimeout: "1 second" })), Effect.scoped))

  it.live("a call through the handle sends its meta as the request's _meta, beside the progress token it asked for", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const server = yield* mcpServer({ setup: metaReader })
      const connection = yield* mcp.connectMcpServer({ url: server.url })
      const shown = (result: Mcp.McpToolResult) => JSON.parse(textOf(result)) as Record<string, unknown>
      expect(shown(yield* connection.client!.callTool("meta", {}, { meta: { traceId: "t-1" } }))).toEqual({ traceId: "t-1" })
      const both = shown(yield* connection.client!.callTool("meta", {}, { meta: { traceId: "t-2" }, onProgress: () => undefined }))
      expect(both).toMatchObject({ traceId: "t-2" })
      expect(typeof both["progressToken"]).toBe("number")
      expect(shown(yield* connection.client!.callTool("meta"))).toEqual({})
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("an onProgress that throws is logged and the call goes on", () => {
    const warnings: Array<unknown> = []
    return Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const work = yield* mcpServer({ setup: worker })
      const connection = yield* mcp.connectMcpServer({ url: work.url })
      let calls = 0
      const result = yield* connection.client!.callTool("work", { steps: 2, gapMs: 0 }, {
        onProgress: () => {
          calls++
          throw new Error("the progress bar broke")
        }
      })
      expect(textOf(result)).toBe("done")
      expect(calls).toBe(2)
      yield* eventually(() => expect(warnings).toHaveLength(2))
      expect(warnings[0]).toEqual([
        "The onProgress of a call of tool \"work\" on MCP server \"mcp\" threw: the progress bar broke"
      ])
    }).pipe(Effect.provide(stack()), Effect.scoped, Effect.provide(keepingWarnings(warnings)))
  })
})

describe("MCP tool timeouts", () => {
  /** Runs one call of `name` with `args` by the model, with the run's tool timeout; the result the API got. */
  const callOnce = (name: string, args: unknown, toolTimeout: Duration.DurationInput) =>
    Effect.gen(function*() {
      const results: Array<{ isError: boolean; text: string }> = []
      server().setScript((request) => {
        if (request.toolResults.length === 0) return [Script.toolCall(name, args)]
        results.push(...request.toolResults.map(({ isError, text }) => ({ isError, text })))
        return [Script.text("done")]
      })
      yield* runAll("go", { toolTimeout })
      return results[0]!
    })

  // On the test clock, moved on between notices once the last one restarted the server's silence
  // bound: the bounds are passed as the server says, however slow the machine.
  it.effect("a server's toolTimeout is restarted by each progress notice, past the run's tool timeout, up to maxToolTime", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const steps = stepper()
      const waiting = yield* waitServer(steps.setup)
      yield* mcp.connectMcpServer({ url: waiting.server.url, toolTimeout: "1 second", maxToolTime: "2 seconds" })
      /** Lets `count` notices go, 300 ms apart, each after the one before restarted the silence bound. */
      const notices = (count: number) =>
        Effect.gen(function*() {
          for (let sent = 0; sent < count; sent++) {
            if (sent > 0) yield* sleepScheduledAt((yield* Clock.currentTimeMillis) + 1_000)
            const go = yield* steps.next
            yield* TestClock.adjust("300 millis")
            go()
          }
        })

      // Six notices 300 ms apart: 1.8 s in all, beyond the run's 300 ms, but never a second without a word.
      const talking = yield* Effect.fork(callOnce("step", { steps: 6 }, "300 millis"))
      yield* notices(6)
      expect(yield* Fiber.join(talking)).toEqual({ isError: false, text: "done" })
      // Silent for a second.
      const silent = yield* Effect.fork(callOnce("wait", {}, "10 seconds"))
      yield* waiting.arrived
      yield* TestClock.adjust("1 second")
      const cut = yield* Fiber.join(silent)
      expect(cut.isError).toBe(true)
      expect(cut.text).toContain(`Tool "wait" said nothing for 1s`)
      // The server is told to stop the call it was cut from.
      expect(yield* waiting.ended).toBe("cancelled")
      // Talking all along, but for longer than maxToolTime.
      const long = yield* Effect.fork(callOnce("step", { steps: 30 }, "10 seconds"))
      yield* notices(7)
      const outlasted = yield* Fiber.join(long)
      expect(outlasted.isError).toBe(true)
      expect(outlasted.text).toContain("did not finish within 2s")
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a run interrupted during a call of a server with toolTimeout: the server is told to stop, and the thread goes on", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const tambo = yield* Tambo.Tambo
      const waiting = yield* waitServer()
      const connection = yield* mcp.connectMcpServer({ url: waiting.server.url, toolTimeout: "5 seconds" })
      server().setScript((request) =>
        request.toolResults.length === 0 ? [Script.toolCall("wait", {})] : [Script.text("opened")]
      )
      const started = yield* Deferred.make<string>()
      const run = yield* tambo.run("wait").pipe(
        Stream.tap(({ threadId }) => Deferred.succeed(started, threadId)),
        Stream.runDrain,
        Effect.fork
      )
      const threadId = yield* Deferred.await(started)
      yield* waiting.arrived
      yield* Fiber.interrupt(run)
      expect(yield* waiting.ended).toBe("cancelled")
      expect((yield* mcp.getMcpClients)[connection.key]?.status).toBe("connected")

      // The thread takes the next run, and the store ends equal to the server.
      server().setScript([Script.text("awake")])
      yield* runAll("wake up", { threadId })
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a server with toolTimeout that dies during a call: an error result at once, not after the wait", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const crash = { kill: (): Promise<void> => Promise.resolve() }
      const dying = yield* mcpServer({
        setup: (s) => {
          s.registerTool("crash", { description: "Kills the server", inputSchema: {} }, async () => {
            await crash.kill()
            return { content: [{ type: "text" as const, text: "never" }] }
          })
        }
      })
      crash.kill = () => dying.kill()
      yield* mcp.connectMcpServer({ url: dying.url, toolTimeout: "30 seconds" })
      // Cut by the server's silence, it would read "said nothing" (and take 30 seconds).
      const result = yield* callOnce("crash", {}, "1 minute")
      expect(result.isError).toBe(true)
      expect(result.text).toContain("unreachable")
    }).pipe(Effect.provide(stack({ reconnectSchedule: Schedule.spaced("1 hour") })), Effect.scoped))

  it.live("without toolTimeout the run's tool timeout bounds the call from its start, progress or not", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const slow = yield* mcpServer({ setup: worker })
      yield* mcp.connectMcpServer({ url: slow.url })
      const cut = yield* callOnce("work", { steps: 6, gapMs: 100 }, "300 millis")
      expect(cut.isError).toBe(true)
      expect(cut.text).toContain("did not finish within 300ms")
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a later connect of the same server that gives toolTimeout or maxToolTime changes them for the next calls", () => {
    const warnings: Array<unknown> = []
    return Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const slow = yield* mcpServer({ setup: worker })
      const first = yield* mcp.connectMcpServer({ url: slow.url, serverKey: "slow" })
      expect(first.tools.map((tool) => tool.name)).toEqual(["work"])
      // Six steps 100 ms apart: 600 ms in all.
      expect((yield* callOnce("work", { steps: 6, gapMs: 100 }, "300 millis")).text).toContain("did not finish within 300ms")

      // Now bounded by the server's silence, not the run's timeout: the tool is registered again, under its name.
      yield* mcp.connectMcpServer({ url: slow.url, toolTimeout: "1 second" })
      expect(yield* callOnce("work", { steps: 6, gapMs: 100 }, "300 millis")).toEqual({ isError: false, text: "done" })

      // What a connect does not give stays: the toolTimeout above, with a shorter maxToolTime.
      yield* mcp.connectMcpServer({ url: slow.url, maxToolTime: "400 millis" })
      const long = yield* callOnce("work", { steps: 6, gapMs: 100 }, "10 seconds")
      expect(long.isError).toBe(true)
      expect(long.text).toContain("did not finish within 400ms")

      // An invalid one fails the connect with an McpError naming it, and the bounds before stay.
      const refused = yield* Effect.flip(mcp.connectMcpServer({ url: slow.url, toolTimeout: "soon" as Duration.DurationInput }))
      expect(refused).toMatchObject({ _tag: "McpError", reason: "Connect", serverKey: "slow" })
      expect(refused.message).toContain("toolTimeout must be a positive duration")
      expect(warnings).toEqual([])
      expect((yield* callOnce("work", { steps: 6, gapMs: 100 }, "10 seconds")).text).toContain("did not finish within 400ms")

      const [connection] = Object.values(yield* mcp.getMcpClients)
      expect(connection).toMatchObject({ status: "connected", server: { toolTimeout: "1 second", maxToolTime: "400 millis" } })
      expect(connection!.tools.map((tool) => tool.name)).toEqual(["work"])
    }).pipe(Effect.provide(stack()), Effect.scoped, Effect.provide(keepingWarnings(warnings)))
  })

  it.live.each([
    [{ toolTimeout: 0 }, "toolTimeout must be a positive duration"],
    [{ toolTimeout: -1 }, "toolTimeout must be a positive duration"],
    [{ toolTimeout: Number.NaN }, "toolTimeout must be a positive duration"],
    [{ toolTimeout: "soon" }, "toolTimeout must be a positive duration"],
    [{ toolTimeout: 2 ** 31 }, "toolTimeout must be at most 2147483647 ms"],
    [{ toolTimeout: "1 second", maxToolTime: 0 }, "maxToolTime must be a positive duration"],
    [{ toolTimeout: "1 second", maxToolTime: "30 days" }, "maxToolTime must be at most 2147483647 ms"],
    [{ maxToolTime: -5 }, "maxToolTime must be a positive duration"]
  ] as const)(
    "a connect whose tool bounds %o no timer can wait fails with an McpError naming the option and its bound, and opens no session",
    ([bounds, problem]) =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const slow = yield* mcpServer({ setup: worker })
        // As a JavaScript caller may give them.
        const error = yield* Effect.flip(mcp.connectMcpServer({ url: slow.url, ...(bounds as Partial<Mcp.McpServerInfo>) }))
        expect(error).toMatchObject({ _tag: "McpError", reason: "Connect" })
        expect(error.message).toContain(problem)
        const [connection] = Object.values(yield* mcp.getMcpClients)
        expect(connection).toMatchObject({ status: "failed", error: { reason: "Connect" } })
        expect(slow.sessions.opened).toBe(0)
      }).pipe(Effect.provide(stack()), Effect.scoped)
  )

  it.live("a toolTimeout or maxToolTime of Infinity never cuts the call", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const slow = yield* mcpServer({ setup: worker })
      yield* mcp.connectMcpServer({ url: slow.url, toolTimeout: Infinity, maxToolTime: Infinity })
      expect(yield* callOnce("work", { steps: 3, gapMs: 50 }, "10 seconds")).toEqual({ isError: false, text: "done" })
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a later connect of a connected server with a tool bound no timer can wait fails, and the session and its bounds stay", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const slow = yield* mcpServer({ setup: worker })
      yield* mcp.connectMcpServer({ url: slow.url, serverKey: "slow", toolTimeout: "1 second", maxToolTime: "400 millis" })
      const refused = yield* Effect.flip(mcp.connectMcpServer({ url: slow.url, maxToolTime: 2 ** 31, logLevel: "error" }))
      expect(refused).toMatchObject({ _tag: "McpError", reason: "Connect", serverKey: "slow" })
      expect(refused.message).toContain("maxToolTime must be at most 2147483647 ms")
      const [connection] = Object.values(yield* mcp.getMcpClients)
      // Nothing of the refused connect is taken, its log level neither.
      expect(connection).toMatchObject({ status: "connected", server: { toolTimeout: "1 second", maxToolTime: "400 millis" } })
      expect(connection!.server.logLevel).toBeUndefined()
      expect(slow.sessions.opened).toBe(1)
      expect((yield* callOnce("work", { steps: 6, gapMs: 100 }, "10 seconds")).text).toContain("did not finish within 400ms")
    }).pipe(Effect.provide(stack()), Effect.scoped))
})

describe("MCP completions", () => {
  it.live("completes a prompt's argument and a resource template's variable, with the arguments chosen so far", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const people = yield* mcpServer({ setup: completer })
      const connection = yield* mcp.connectMcpServer({ url: people.url, serverKey: "people" })
      expect(connection.capabilities?.completions).toEqual({})
      const greet: Mcp.McpCompletionRef = { type: "ref/prompt", name: "greet" }

      expect(yield* mcp.completeMcpArgument("people", greet, { name: "name", value: "a" })).toEqual({
        values: ["Ada", "Alan"],
        total: 2,
        hasMore: false
      })
      expect((yield* mcp.completeMcpArgument("people", greet, { name: "title", value: "" }, { name: "Grace" })).values)
        .toEqual(["Admiral", "Dr."])
      expect((yield* mcp.completeMcpArgument("people", greet, { name: "title", value: "" })).values)
        .toEqual(["Dr.", "Ms.", "Mr."])
      expect(
        (yield* mcp.completeMcpArgument("people", { type: "ref/resource", uri: "people://{name}" }, { name: "name", value: "G" }))
          .values
      ).toEqual(["Grace"])
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a server without completions suggests nothing; an unknown server or prompt is a typed McpError", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const people = yield* mcpServer({ setup: completer })
      const docs = yield* mcpServer({ setup: all(prompter, calculator) })
      yield* mcp.connectMcpServer({ url: people.url, serverKey: "people" })
      yield* mcp.connectMcpServer({ url: docs.url, serverKey: "docs" })

      const review: Mcp.McpCompletionRef = { type: "ref/prompt", name: "review" }
      expect(yield* mcp.completeMcpArgument("docs", review, { name: "code", value: "x" })).toEqual({ values: [] })
      expect(yield* Effect.flip(mcp.completeMcpArgument("nope", review, { name: "code", value: "" }))).toMatchObject({
        _tag: "McpError",
        reason: "NotConnected",
        serverKey: "nope"
      })
      const unknown = yield* Effect.flip(
        mcp.completeMcpArgument("people", { type: "ref/prompt", name: "missing" }, { name: "name", value: "" })
      )
      expect(unknown).toMatchObject({ _tag: "McpError", reason: "CallFailed", serverKey: "people" })
      expect(unknown.message).toContain("missing")
    }).pipe(Effect.provide(stack()), Effect.scoped))
})

describe("MCP roots", () => {
  const rootsOf = (connection: Mcp.McpConnection) =>
    Effect.map(connection.client!.callTool("roots"), (result) => ({ isError: result.isError === true, text: textOf(result) }))

  it.live.each(["http", "sse"] as const)("servers are given the roots, and told when they change (%s)", (transport) =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const changes: Array<string> = []
      const files = yield* mcpServer({ setup: rootsReader(changes), transport })
      const connection = yield* mcp.connectMcpServer({ url: files.url, transport })
      expect(yield* rootsOf(connection)).toEqual({
        isError: false,
        text: JSON.stringify([{ uri: "file:///srv/app/project", name: "Project" }])
      })

      yield* mcp.setMcpRoots([{ uri: "file:///srv/app/project" }, { uri: "file:///srv/app/docs", name: "Docs" }])
      yield* eventually(() => expect(changes).toEqual(["roots changed"]))
      expect(JSON.parse((yield* rootsOf(connection)).text)).toEqual([
        { uri: "file:///srv/app/project" },
        { uri: "file:///srv/app/docs", name: "Docs" }
      ])

      // Unset: the server that was offered roots is told, and finds none.
      yield* mcp.setMcpRoots(undefined)
      yield* eventually(() => expect(changes).toEqual(["roots changed", "roots changed"]))
      expect(yield* rootsOf(connection)).toEqual({ isError: false, text: "[]" })
    }).pipe(Effect.provide(stack({ roots: [{ uri: "file:///srv/app/project", name: "Project" }] })), Effect.scoped))

  it.live("roots changed while a session opens (its server read them already) are announced once it is connected", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const changes: Array<string> = []
      const readRoots = yield* Deferred.make<void>()
      let release: () => void = () => undefined
      const listed = new Promise<void>((resolve) => {
        release = resolve
      })
      const workspace = yield* mcpServer({
        setup: (session) => {
          rootsReader(changes)(session)
          // A workspace server: its tools depend on the client's roots, read while listing them.
          session.server.setRequestHandler(ListToolsRequestSchema, async () => {
            await session.server.listRoots()
            Effect.runSync(Deferred.succeed(readRoots, undefined))
            await listed
            return { tools: [{ name: "roots", inputSchema: { type: "object" } }] }
          })
        }
      })
      const connecting = yield* Effect.fork(mcp.connectMcpServer({ url: workspace.url }))
      yield* Deferred.await(readRoots)
      // The app changes the roots while the connection is still opening.
      yield* mcp.setMcpRoots([{ uri: "file:///srv/app/other" }])
      release()
      const connection = yield* Fiber.join(connecting)
      expect(connection.status).toBe("connected")
      yield* eventually(() => expect(changes).toEqual(["roots changed"]))
      expect(yield* rootsOf(connection)).toEqual({ isError: false, text: JSON.stringify([{ uri: "file:///srv/app/other" }]) })
    }).pipe(Effect.provide(stack({ roots: [{ uri: "file:///srv/app/project" }] })), Effect.scoped))

  it.live("a server connected while no roots were set is not offered them, nor told of them later", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const changes: Array<string> = []
      const files = yield* mcpServer({ setup: rootsReader(changes) })
      const connection = yield* mcp.connectMcpServer({ url: files.url })
      const before = yield* rootsOf(connection)
      expect(before.isError).toBe(true)
      // The MCP SDK answers for the client: it has no `roots/list` handler.
      expect(before.text).toContain("Method not found")

      yield* mcp.setMcpRoots([{ uri: "file:///late" }])
      yield* Effect.sleep("100 millis")
      expect(changes).toEqual([])
      // A server connected since is offered them.
      const later = yield* mcpServer({ setup: rootsReader() })
      const second = yield* mcp.connectMcpServer({ url: later.url })
      expect(yield* rootsOf(second)).toEqual({ isError: false, text: JSON.stringify([{ uri: "file:///late" }]) })
    }).pipe(Effect.provide(stack()), Effect.scoped))
})

describe("MCP URL elicitations", () => {
  const signIn = (connection: Mcp.McpConnection, url: string, elicitationId = "e-1") =>
    Effect.map(connection.client!.callTool("sign_in", { url, elicitationId }), textOf)

  it.live.each(["http", "sse"] as const)("a URL handler answers them, with the user's consent; the server says when one finished (%s)", (transport) =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const asked: Array<Mcp.UrlElicitationRequest["params"] & { serverKey: string }> = []
      yield* mcp.setUrlElicitationHandler((request, context) => {
        asked.push({ ...request.params, serverKey: context.serverKey })
        return { action: "accept" }
      })
      const completions = yield* collect(mcp.elicitationCompletions)
      const acme = yield* mcpServer({ setup: urlElicitor, transport })
      const connection = yield* mcp.connectMcpServer({ url: acme.url, transport, serverKey: "acme" })
      expect(yield* signIn(connection, "https://acme.example/login?state=1")).toBe("accept")
      expect(asked).toEqual([{
        mode: "url",
        message: "Sign in to Acme",
        url: "https://acme.example/login?state=1",
        elicitationId: "e-1",
        serverKey: "acme"
      }])
      yield* eventually(() => expect(completions).toEqual([{ key: connection.key, serverKey: "acme", elicitationId: "e-1" }]))
      // The handler removed since: the server, told the client takes them, is declined.
      yield* mcp.setUrlElicitationHandler(undefined)
      expect(yield* signIn(connection, "https://acme.example/login?state=2", "e-2")).toBe("decline")
      expect(asked).toHaveLength(1)
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a URL that is not http(s) is declined without asking the user, and said in a warning", () => {
    const warnings: Array<unknown> = []
    return Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      let asked = 0
      const acme = yield* mcpServer({ setup: urlElicitor })
      const connection = yield* mcp.connectMcpServer({
        url: acme.url,
        serverKey: "acme",
        handlers: {
          urlElicitation: () => {
            asked++
            return { action: "accept" }
          }
        }
      })
      for (const url of ["javascript:alert(document.cookie)", "file:///etc/passwd", "data:text/html,<script>1</script>"]) {
        expect(yield* signIn(connection, url)).toBe("decline")
      }
      expect(asked).toBe(0)
      expect(warnings.map(String)).toEqual([
        expect.stringContaining("asked the user to go to a URL that is not http(s); declined: \"javascript:alert(document.cookie)\""),
        expect.stringContaining("\"file:///etc/passwd\""),
        expect.stringContaining("\"data:text/html,<script>1</script>\"")
      ])
      // Not a URL at all: the MCP SDK refuses the request before any handler.
      expect(yield* signIn(connection, "not a url")).toMatch(/^could not ask: .*Invalid URL/s)
      expect(yield* signIn(connection, "http://acme.example/")).toBe("accept")
      expect(asked).toBe(1)
    }).pipe(Effect.provide(stack()), Effect.scoped, Effect.provide(keepingWarnings(warnings)))
  })

  it.live("without a URL handler a server is not told the client takes them, and is refused; form elicitations go on", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      yield* mcp.setElicitationHandler(() => ({ action: "accept", content: { name: "Ada" } }))
      const acme = yield* mcpServer({ setup: all(urlElicitor, greeter) })
      const connection = yield* mcp.connectMcpServer({ url: acme.url, serverKey: "acme" })
      // The MCP SDK refuses it for the client, which did not say it takes them.
      const refused = "Client does not support URL-mode elicitation requests"
      expect(yield* signIn(connection, "https://acme.example/")).toContain(refused)
      expect(textOf(yield* connection.client!.callTool("greet"))).toBe("Hello, Ada!")
      // A handler set later reaches servers connected since, not this one.
      yield* mcp.setUrlElicitationHandler(() => ({ action: "decline" }))
      expect(yield* signIn(connection, "https://acme.example/")).toContain(refused)
      const later = yield* mcpServer({ setup: urlElicitor })
      const second = yield* mcp.connectMcpServer({ url: later.url, serverKey: "later" })
      expect(yield* signIn(second, "https://acme.example/")).toBe("decline")
    }).pipe(Effect.provide(stack()), Effect.scoped))
})
