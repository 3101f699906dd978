import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Option, Ref, Schema, TestClock } from "effect"
import { z } from "zod"
import * as Tool from "../src/Tool.js"
import * as Executor from "../src/ToolExecutor.js"
import * as Registry from "../src/ToolRegistry.js"

const setup = (tools: ReadonlyArray<Tool.Definition>, options?: Executor.MakeOptions) =>
  Effect.gen(function*() {
    const registry = yield* Registry.make
    yield* Effect.orDie(registry.registerMany(tools))
    return yield* Executor.makeWith(options).pipe(Effect.provideService(Registry.ToolRegistry, registry))
  })

const text = (result: Tool.ToolResultContent | undefined): string => {
  const part = result?.content[0]
  return part?.type === "text" ? part.text : ""
}

/** A counter of how often each tool body ran. */
const makeCounter = () => {
  const counts = new Map<string, number>()
  return {
    hit: (name: string) => counts.set(name, (counts.get(name) ?? 0) + 1),
    get: (name: string) => counts.get(name) ?? 0
  }
}

/** A tool that says what it is given, recording each time it runs. */
const echoSetup = (takes?: Duration.DurationInput, options?: Executor.MakeOptions) =>
  Effect.gen(function*() {
    const seen: Array<string> = []
    const executor = yield* setup([
      Tool.make({
        name: "echo",
        description: "Says what it is given",
        input: Schema.Struct({ say: Schema.String }),
        execute: ({ say }) =>
          Effect.sync(() => seen.push(say)).pipe(
            Effect.zipRight(takes === undefined ? Effect.void : Effect.sleep(takes)),
            Effect.as(`said ${say}`)
          )
      })
    ], options)
    return { executor, seen }
  })

/** A call of `echo`; providers that count give every response's first call the same id. */
const echo = (say: string, toolCallId = "call_0") => ({ toolCallId, toolName: "echo", args: JSON.stringify({ say }) })

describe("ToolExecutor", () => {
  it.effect("answers calls of Effect Schema, Zod 4 and JSON Schema tools", () =>
    Effect.gen(function*() {
      const executor = yield* setup([
        Tool.make({
          name: "add",
          description: "Adds",
          input: Schema.Struct({ a: Schema.Number, b: Schema.NumberFromString }),
          execute: ({ a, b }) => Effect.succeed({ sum: a + b })
        }),
        {
          name: "shout",
          description: "Shouts",
          tool: async ({ text }: { text: string }) => text.toUpperCase(),
          inputSchema: z.object({ text: z.string() })
        },
        {
          name: "echo",
          description: "Echoes",
          tool: (args: unknown) => args,
          inputSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] }
        }
      ])
      const results = yield* executor.execute([
        { toolCallId: "c1", toolName: "add", args: "{\"a\":1,\"b\":\"2\"}" },
        { toolCallId: "c2", toolName: "shout", args: { text: "hi" } },
        { toolCallId: "c3", toolName: "echo", args: "{\"n\":7}" }
      ])
      expect(results).toEqual([
        { type: "tool_result", toolUseId: "c1", content: [{ type: "text", text: "{\"sum\":3}" }] },
        { type: "tool_result", toolUseId: "c2", content: [{ type: "text", text: "HI" }] },
        { type: "tool_result", toolUseId: "c3", content: [{ type: "text", text: "{\"n\":7}" }] }
      ])
      expect(results.every((result) => !("isError" in result))).toBe(true)
    }))

  it.effect("rejects invalid arguments of each schema kind without calling the tool", () =>
    Effect.gen(function*() {
      const counter = makeCounter()
      const executor = yield* setup([
        Tool.make({
          name: "effect_tool",
          description: "d",
          input: Schema.Struct({ n: Schema.Number }),
          execute: () => counter.hit("effect_tool")
        }),
        {
          name: "zod_tool",
          description: "d",
          tool: () => counter.hit("zod_tool"),
          inputSchema: z.object({ n: z.number() })
        },
        {
          name: "json_tool",
          description: "d",
          tool: () => counter.hit("json_tool"),
          inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] }
        }
      ])
      const results = yield* executor.execute([
        { toolCallId: "c1", toolName: "effect_tool", args: { n: "1" } },
        { toolCallId: "c2", toolName: "zod_tool", args: { n: "1" } },
        { toolCallId: "c3", toolName: "json_tool", args: {} },
        { toolCallId: "c4", toolName: "json_tool", args: "{\"n\": 1" }
      ])
      expect(results.map((result) => result.isError)).toEqual([true, true, true, true])
      expect(text(results[0])).toBe("Invalid arguments for tool \"effect_tool\":\nn: Expected number, actual \"1\"")
      expect(text(results[1])).toMatch(/^Invalid arguments for tool "zod_tool":\nn: .*number/)
      expect(text(results[2])).toBe("Invalid arguments for tool \"json_tool\":\nn: is required")
      expect(text(results[3])).toMatch(/^The arguments for tool "json_tool" are not valid JSON \(.+\)\./)
      expect(["effect_tool", "zod_tool", "json_tool"].map(counter.get)).toEqual([0, 0, 0])
    }))

  it.effect("answers an unknown tool with the tools that exist", () =>
    Effect.gen(function*() {
      const executor = yield* setup([{ name: "echo", description: "d", tool: (a: unknown) => a, inputSchema: {} }])
      const [result] = yield* executor.execute([{ toolCallId: "c1", toolName: "nope", args: "{}" }])
      expect(result).toEqual({
        type: "tool_result",
        toolUseId: "c1",
        content: [{ type: "text", text: "Tool \"nope\" is not available. Available tools: echo." }],
        isError: true
      })
    }))

  it.effect("answers an unregistered tool with the registry's fallback, given the name it was called by", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.make
      const seen: Array<unknown> = []
      yield* registry.setFallback((toolName) => ({
        name: toolName,
        description: "Any tool the app did not register",
        inputSchema: { type: "object" },
        tool: (args: unknown) => {
          seen.push([toolName, args])
          return `handled ${toolName}`
        }
      }))
      const executor = yield* Executor.makeWith().pipe(Effect.provideService(Registry.ToolRegistry, registry))
      const [handled] = yield* executor.execute([{ toolCallId: "c1", toolName: "lookup", args: "{\"q\":\"x\"}" }])
      expect(handled).toEqual({
        type: "tool_result",
        toolUseId: "c1",
        content: [{ type: "text", text: "handled lookup" }]
      })
      expect(seen).toEqual([["lookup", { q: "x" }]])
      // A fallback is not a registered tool: the request's tools and `get` do not list it.
      expect(yield* registry.toApiTools).toEqual([])
      expect(Option.isNone(yield* registry.get("lookup"))).toBe(true)

      // A name no tool may have still gets the unknown-tool answer; so does any name without a fallback.
      const [bad] = yield* executor.execute([{ toolCallId: "c2", toolName: "not a name", args: "{}" }])
      expect(text(bad)).toBe("Tool \"not a name\" is not available. No tools are available.")
      yield* registry.setFallback(undefined)
      const [unknown] = yield* executor.execute([{ toolCallId: "c3", toolName: "lookup", args: "{}" }])
      expect(text(unknown)).toBe("Tool \"lookup\" is not available. No tools are available.")
      expect(seen.length).toBe(1)
    }))

  it.effect("turns a throw, a rejection, a failed Effect and a defect into error results", () =>
    Effect.gen(function*() {
      class QuotaExceeded extends Schema.TaggedError<QuotaExceeded>()("QuotaExceeded", { message: Schema.String }) {}
      const executor = yield* setup([
        {
          name: "thrower",
          description: "d",
          tool: () => {
            throw new Error("kaput")
          },
          inputSchema: { type: "object" }
        },
        {
          name: "rejecter",
          description: "d",
          tool: async () => {
            await Promise.resolve()
            throw new Error("service unavailable")
          },
          inputSchema: { type: "object" }
        },
        Tool.make({
          name: "failer",
          description: "d",
          input: Schema.Struct({}),
          execute: () => Effect.fail(new QuotaExceeded({ message: "no quota left" }))
        }),
        Tool.make({
          name: "dier",
          description: "d",
          input: Schema.Struct({}),
          execute: () => Effect.die(new Error("bug"))
        })
      ])
      const results = yield* executor.execute(
        ["thrower", "rejecter", "failer", "dier"].map((toolName, i) => ({ toolCallId: `c${i}`, toolName, args: "{}" }))
      )
      expect(results.map((result) => [result.isError, text(result)])).toEqual([
        [true, "Tool \"thrower\" threw an error: kaput"],
        [true, "Tool \"rejecter\" failed: service unavailable"],
        [true, "Tool \"failer\" failed: QuotaExceeded: no quota left"],
        [true, "Tool \"dier\" failed unexpectedly: bug"]
      ])
    }))

  it.effect("a tool that interrupts itself answers with an error result, and the round's other calls keep theirs", () =>
    Effect.gen(function*() {
      // What a tool awaits was interrupted elsewhere (a Deferred, a joined fiber): the tool ends interrupted.
      const gone = yield* Deferred.make<string>()
      yield* Deferred.interrupt(gone)
      const executor = yield* setup([
        Tool.make({ name: "awaiter", description: "d", input: Schema.Struct({}), execute: () => Deferred.await(gone) }),
        Tool.make({ name: "quitter", description: "d", input: Schema.Struct({}), execute: () => Effect.interrupt }),
        Tool.make({ name: "fine", description: "d", input: Schema.Struct({}), execute: () => Effect.succeed("ok") })
      ])
      const step = { threadId: "thr_1", runId: "run_1" }
      const calls = ["awaiter", "quitter", "fine"].map((toolName, i) => ({ toolCallId: `c${i}`, toolName, args: "{}" }))
      const exit = yield* Effect.exit(executor.execute(calls, step))
      expect(Exit.isSuccess(exit)).toBe(true)
      const results = Exit.isSuccess(exit) ? exit.value : []
      expect(results.map((result) => [result.isError, text(result)])).toEqual([
        [true, "Tool \"awaiter\" was interrupted before it returned a result."],
        [true, "Tool \"quitter\" was interrupted before it returned a result."],
        [undefined, "ok"]
      ])
      // An answer like any other: the step's replay gets it again.
      expect(yield* executor.execute(calls, step)).toEqual(results)
    }))

  it.effect("stops a call that exceeds its timeout and reports it", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Ref.make(false)
      let signal: AbortSignal | undefined
      const executor = yield* setup([
        Tool.make({
          name: "hang",
          description: "Never finishes",
          input: Schema.Struct({}),
          execute: () =>
            Deferred.succeed(started, undefined).pipe(
              Effect.zipRight(Effect.never),
              Effect.onInterrupt(() => Ref.set(interrupted, true))
            )
        }),
        {
          name: "hang_promise",
          description: "Never settles",
          tool: (_args: unknown, context: Tool.ToolCallContext) => {
            signal = context.signal
            return new Promise<never>(() => {})
          },
          inputSchema: { type: "object" }
        }
      ])
      const fiber = yield* Effect.fork(executor.execute([
        { toolCallId: "c1", toolName: "hang", args: "{}" },
        { toolCallId: "c2", toolName: "hang_promise", args: "{}" }
      ]))
      yield* Deferred.await(started)
      yield* TestClock.adjust("29 seconds")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("1 second")
      const results = yield* Fiber.join(fiber)
      expect(results.map((result) => [result.isError, text(result)])).toEqual([
        [true, "Tool \"hang\" did not finish within 30s and was stopped."],
        [true, "Tool \"hang_promise\" did not finish within 30s and was stopped."]
      ])
      expect(yield* Ref.get(interrupted)).toBe(true)
      expect(signal?.aborted).toBe(true)
    }))

  it.effect("takes the timeout from the options, and a tool's own timeout over it", () =>
    Effect.gen(function*() {
      const slow = (name: string, timeout?: Duration.DurationInput) =>
        Tool.make({
          name,
          description: "Takes 5 seconds",
          input: Schema.Struct({}),
          timeout,
          execute: () => Effect.as(Effect.sleep("5 seconds"), "done")
        })
      const executor = yield* setup([slow("default_limit"), slow("own_limit", "10 seconds")])
      const fiber = yield* Effect.fork(executor.execute([
        { toolCallId: "c1", toolName: "default_limit", args: "{}" },
        { toolCallId: "c2", toolName: "own_limit", args: "{}" }
      ], { timeout: "2 seconds" }))
      yield* TestClock.adjust("5 seconds")
      const results = yield* Fiber.join(fiber)
      expect(results.map(text)).toEqual(["Tool \"default_limit\" did not finish within 2s and was stopped.", "done"])
    }))

  it.effect("a tool in @tambo-ai/client's shape may set its own timeout too", () =>
    Effect.gen(function*() {
      const slow = (name: string, timeout?: Duration.DurationInput): Tool.TamboTool<unknown, string> => ({
        name,
        description: "Never finishes",
        tool: () => new Promise<string>(() => {}),
        inputSchema: { type: "object" },
        timeout
      })
      const executor = yield* setup([slow("default_limit"), slow("short_limit", "1 second")])
      const fiber = yield* Effect.fork(executor.execute([
        { toolCallId: "c1", toolName: "default_limit", args: "{}" },
        { toolCallId: "c2", toolName: "short_limit", args: "{}" }
      ], { timeout: "2 seconds" }))
      yield* TestClock.adjust("2 seconds")
      const results = yield* Fiber.join(fiber)
      expect(results.map(text)).toEqual([
        "Tool \"default_limit\" did not finish within 2s and was stopped.",
        "Tool \"short_limit\" did not finish within 1s and was stopped."
      ])
    }))

  it.effect("refuses a tool in @tambo-ai/client's shape whose timeout is not a positive duration", () =>
    Effect.gen(function*() {
      // A JavaScript caller's, or a typed caller's zero or negative.
      for (const timeout of ["soon", 0, -5] as ReadonlyArray<Duration.DurationInput>) {
        const error = yield* Effect.flip(Tool.resolve({
          name: "bad_timeout",
          description: "A tool",
          tool: () => "ok",
          inputSchema: { type: "object" },
          timeout
        }))
        expect(error).toMatchObject({ _tag: "ToolDefinitionError", reason: "InvalidDefinition" })
        expect(error.message).toContain("`timeout` must be a positive duration")
      }
    }))

  it.effect("runs at most `concurrency` calls at once (default 4)", () =>
    Effect.gen(function*() {
      let active = 0
      let peak = 0
      const executor = yield* setup([
        Tool.make({
          name: "work",
          description: "Works for a second",
          input: Schema.Struct({}),
          execute: () =>
            Effect.sync(() => {
              active++
              peak = Math.max(peak, active)
            }).pipe(
              Effect.zipRight(Effect.sleep("1 second")),
              Effect.ensuring(Effect.sync(() => active--)),
              Effect.as("ok")
            )
        })
      ])
      const calls = (prefix: string) =>
        Array.from({ length: 10 }, (_, i) => ({ toolCallId: `${prefix}${i}`, toolName: "work", args: "{}" }))

      const bounded = yield* Effect.fork(executor.execute(calls("a"), { concurrency: 3 }))
      yield* TestClock.adjust("10 seconds")
      const results = yield* Fiber.join(bounded)
      expect(results.map(text)).toEqual(Array(10).fill("ok"))
      expect(peak).toBe(3)

      peak = 0
      const byDefault = yield* Effect.fork(executor.execute(calls("b")))
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(byDefault)
      expect(peak).toBe(4)
    }))

  it.effect("a call id another thread's step used runs the tool again, with its own arguments", () =>
    Effect.gen(function*() {
      const { executor, seen } = yield* echoSetup()
      const [a] = yield* executor.execute([echo("A")], { threadId: "thr_1", runId: "run_1" })
      const [b] = yield* executor.execute([echo("B")], { threadId: "thr_2", runId: "run_2" })
      // Run ids are the server's: another thread's step with the same one is still another step.
      const [c] = yield* executor.execute([echo("C")], { threadId: "thr_3", runId: "run_1" })
      expect(seen).toEqual(["A", "B", "C"])
      expect([a, b, c].map(text)).toEqual(["said A", "said B", "said C"])
    }))

  it.effect("the same call id in a later round of a run runs the tool again", () =>
    Effect.gen(function*() {
      const { executor, seen } = yield* echoSetup()
      const [first] = yield* executor.execute([echo("Paris")], { threadId: "thr_1", runId: "run_1" })
      const [second] = yield* executor.execute([echo("Lyon")], { threadId: "thr_1", runId: "run_2" })
      expect(seen).toEqual(["Paris", "Lyon"])
      expect([first, second].map(text)).toEqual(["said Paris", "said Lyon"])
    }))

  it.effect("a replayed step gets its own results again without running the tools", () =>
    Effect.gen(function*() {
      const { executor, seen } = yield* echoSetup()
      const step = { threadId: "thr_1", runId: "run_1" }
      const first = yield* executor.execute([echo("A"), echo("A2", "call_1")], step)
      // Another step using the same ids in between changes nothing for this one.
      const [other] = yield* executor.execute([echo("B")], { threadId: "thr_2", runId: "run_2" })
      const replayed = yield* executor.execute([echo("A"), echo("A2", "call_1")], step)
      expect(seen).toEqual(["A", "A2", "B"])
      expect(replayed).toEqual(first)
      expect([...first, other].map(text)).toEqual(["said A", "said A2", "said B"])
    }))

  it.effect("a duplicate within a step waits for the running call; the same id in another step does not", () =>
    Effect.gen(function*() {
      const { executor, seen } = yield* echoSetup("1 second")
      const step = { threadId: "thr_1", runId: "run_1" }
      // Twice in one execute, and in two concurrent executes of the step.
      const first = yield* Effect.fork(executor.execute([echo("A"), echo("A")], step))
      const second = yield* Effect.fork(executor.execute([echo("A")], step))
      const other = yield* Effect.fork(executor.execute([echo("B")], { threadId: "thr_2", runId: "run_2" }))
      yield* TestClock.adjust("1 second")
      const results = [...(yield* Fiber.join(first)), ...(yield* Fiber.join(second)), ...(yield* Fiber.join(other))]
      expect(seen).toEqual(["A", "B"])
      expect(results.map(text)).toEqual(["said A", "said A", "said A", "said B"])
    }))

  it.effect("forgetThread lets go of that thread's results only, not those of a thread whose id it begins", () =>
    Effect.gen(function*() {
      const { executor, seen } = yield* echoSetup()
      yield* executor.execute([echo("A")], { threadId: "thr_1", runId: "run_1" })
      yield* executor.execute([echo("B")], { threadId: "thr_10", runId: "run_1" })
      yield* executor.forgetThread!("thr_1")
      yield* executor.execute([echo("A")], { threadId: "thr_1", runId: "run_1" })
      yield* executor.execute([echo("B")], { threadId: "thr_10", runId: "run_1" })
      expect(seen).toEqual(["A", "B", "A"])
    }))

  it.effect("forgetStep lets go of that step's results only, not those of the thread's other steps nor of a step whose id it begins", () =>
    Effect.gen(function*() {
      const { executor, seen } = yield* echoSetup()
      yield* executor.execute([echo("A")], { threadId: "thr_1", runId: "run_1" })
      yield* executor.execute([echo("B")], { threadId: "thr_1", runId: "run_10" })
      yield* executor.execute([echo("C")], { threadId: "thr_1", runId: "run_2" })
      yield* executor.forgetStep!("thr_1", "run_1")
      yield* executor.execute([echo("A")], { threadId: "thr_1", runId: "run_1" })
      yield* executor.execute([echo("B")], { threadId: "thr_1", runId: "run_10" })
      yield* executor.execute([echo("C")], { threadId: "thr_1", runId: "run_2" })
      expect(seen).toEqual(["A", "B", "C", "A"])
    }))

  it.effect("without a thread and a step, nothing is remembered from one execute to the next", () =>
    Effect.gen(function*() {
      const { executor, seen } = yield* echoSetup()
      // Within one execute, the same id is one call.
      const [a, again] = yield* executor.execute([echo("A"), echo("A")])
      const [b] = yield* executor.execute([echo("B")])
      // A step named by its run id alone is not named enough to be remembered.
      const [c] = yield* executor.execute([echo("C")], { runId: "run_1" })
      const [d] = yield* executor.execute([echo("D")], { runId: "run_1" })
      expect(seen).toEqual(["A", "B", "C", "D"])
      expect([a, again, b, c, d].map(text)).toEqual(["said A", "said A", "said B", "said C", "said D"])
    }))

  it.effect("remembers a bounded number of results", () =>
    Effect.gen(function*() {
      const { executor, seen } = yield* echoSetup(undefined, { rememberedResults: 2 })
      const step = (runId: string) => ({ threadId: "thr_1", runId })
      yield* executor.execute([echo("1")], step("run_1"))
      yield* executor.execute([echo("2")], step("run_2"))
      yield* executor.execute([echo("1")], step("run_1"))
      expect(seen).toEqual(["1", "2"])
      yield* executor.execute([echo("3")], step("run_3")) // evicts run_2's, the least recently used
      yield* executor.execute([echo("1")], step("run_1"))
      yield* executor.execute([echo("2")], step("run_2"))
      expect(seen).toEqual(["1", "2", "3", "2"])
    }))

  it.effect("interrupting execute interrupts a running Effect tool, and leaves no result behind", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Ref.make(false)
      let runs = 0
      const executor = yield* setup([
        Tool.make({
          name: "long",
          description: "d",
          input: Schema.Struct({}),
          execute: () =>
            ++runs === 1
              ? Deferred.succeed(started, undefined).pipe(
                Effect.zipRight(Effect.never),
                Effect.onInterrupt(() => Ref.set(interrupted, true))
              )
              : Effect.succeed("finished")
        })
      ])
      const call = { toolCallId: "c1", toolName: "long", args: "{}" }
      const step = { threadId: "thr_1", runId: "run_1" }
      const fiber = yield* Effect.fork(executor.execute([call], step))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      expect(yield* Ref.get(interrupted)).toBe(true)
      const [result] = yield* executor.execute([call], step)
      expect(text(result)).toBe("finished")
      expect(runs).toBe(2)
    }))

  it.effect("aborts the signal of a Promise tool when interrupted", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<AbortSignal>()
      const executor = yield* setup([
        {
          name: "fetchy",
          description: "d",
          tool: (_args: unknown, { signal }: Tool.ToolCallContext) => {
            Deferred.unsafeDone(started, Exit.succeed(signal))
            return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)))
          },
          inputSchema: { type: "object" }
        }
      ])
      const fiber = yield* Effect.fork(executor.execute([{ toolCallId: "c1", toolName: "fetchy", args: "{}" }]))
      const signal = yield* Deferred.await(started)
      expect(signal.aborted).toBe(false)
      yield* Fiber.interrupt(fiber)
      expect(signal.aborted).toBe(true)
    }))

  it.effect("enforces maxCalls per execute, or across the executes given one run's CallCounts", () =>
    Effect.gen(function*() {
      const counter = makeCounter()
      const executor = yield* setup([
        { name: "once", description: "d", tool: () => counter.hit("once").size, maxCalls: 1, inputSchema: {} }
      ])
      const call = (id: string) => ({ toolCallId: id, toolName: "once", args: "{}" })
      const round = yield* executor.execute([call("c1"), call("c2")])
      expect(round.map((result) => result.isError === true)).toEqual([false, true])
      expect(text(round[1])).toBe("Tool \"once\" may be called at most 1 time(s) in this run. It was not run.")

      // One run, two rounds: each round is a step with its own run id.
      const callCounts = Executor.makeCallCounts()
      const [r1] = yield* executor.execute([call("call_0")], { threadId: "thr_1", runId: "run_1", callCounts })
      const [r2] = yield* executor.execute([call("call_0")], { threadId: "thr_1", runId: "run_2", callCounts })
      // A replayed step is answered again without counting again.
      const [replayed] = yield* executor.execute([call("call_0")], { threadId: "thr_1", runId: "run_1", callCounts })
      // The next run starts counting again.
      const [r3] = yield* executor.execute([call("call_0")], {
        threadId: "thr_1",
        runId: "run_3",
        callCounts: Executor.makeCallCounts()
      })
      expect([r1, r2, replayed, r3].map((result) => result?.isError === true)).toEqual([false, true, false, false])
      expect(text(r2)).toBe("Tool \"once\" may be called at most 1 time(s) in this run. It was not run.")
      expect(replayed).toEqual(r1)
      expect(counter.get("once")).toBe(3)
    }))

  it.effect("asks for approval when a tool needs it", () =>
    Effect.gen(function*() {
      const counter = makeCounter()
      const requests: Array<Executor.ApprovalRequest> = []
      const executor = yield* setup([
        Tool.make({
          name: "pay",
          description: "Pays",
          input: Schema.Struct({ amount: Schema.Number }),
          needsApproval: ({ amount }) => amount > 100,
          execute: ({ amount }) => {
            counter.hit("pay")
            return `paid ${amount}`
          }
        })
      ])
      const call = (id: string, amount: number) => ({ toolCallId: id, toolName: "pay", args: { amount } })

      const [small, big] = yield* executor.execute([call("c1", 5), call("c2", 500)])
      expect(text(small)).toBe("paid 5")
      expect(big?.isError).toBe(true)
      expect(text(big)).toContain("needs approval")

      const approveIf = (answer: boolean) => (request: Executor.ApprovalRequest) =>
        Effect.sync(() => {
          requests.push(request)
          return answer
        })
      const [denied] = yield* executor.execute([call("c3", 500)], { approve: approveIf(false) })
      expect(text(denied)).toBe("The user did not approve this call of tool \"pay\". It was not run.")
      const [approved] = yield* executor.execute([call("c4", 500)], { approve: approveIf(true) })
      expect(text(approved)).toBe("paid 500")
      expect(requests).toEqual([
        { toolCallId: "c3", toolName: "pay", args: { amount: 500 } },
        { toolCallId: "c4", toolName: "pay", args: { amount: 500 } }
      ])
      expect(counter.get("pay")).toBe(2)
    }))

  it.effect("cleans strict-mode nulls and _tambo_ properties before the tool sees its arguments", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const executor = yield* setup([
        {
          name: "search",
          description: "d",
          tool: (args: unknown) => {
            seen.push(args)
            return "ok"
          },
          inputSchema: z.object({ q: z.string(), limit: z.number().optional() })
        }
      ])
      const [result] = yield* executor.execute([{
        toolCallId: "c1",
        toolName: "search",
        args: "{\"q\":\"cats\",\"limit\":null,\"_tambo_statusMessage\":\"Searching\"}"
      }])
      expect(text(result)).toBe("ok")
      expect(seen).toEqual([{ q: "cats" }])
    }))

  it.effect("serialises results for the API", () =>
    Effect.gen(function*() {
      const returning = (name: string, value: unknown): Tool.Definition => ({
        name,
        description: "d",
        tool: () => value,
        inputSchema: { type: "object" }
      })
      const executor = yield* setup([
        returning("nothing", undefined),
        returning("empty", ""),
        returning("big", 1n),
        returning("object", { a: [1, null] }),
        {
          name: "parts",
          description: "d",
          tool: () => "x",
          inputSchema: { type: "object" },
          transformToContent: () => [
            { type: "text", text: "see resource" },
            { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain" } },
            { type: "image_url", image_url: { url: "https://example.com/a.png" } }
          ]
        }
      ])
      const results = yield* executor.execute(
        ["nothing", "empty", "big", "object", "parts"].map((toolName) => ({ toolCallId: toolName, toolName, args: "" }))
      )
      expect(results.slice(0, 4).map((result) => [result.isError === true, text(result)])).toEqual([
        [false, "null"],
        [false, "\"\""],
        [true, "Tool \"big\" returned a result that cannot be sent as JSON: Do not know how to serialize a BigInt"],
        [false, "{\"a\":[1,null]}"]
      ])
      expect(results[4]?.content).toEqual([
        { type: "text", text: "see resource" },
        { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain" } },
        { type: "text", text: "{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://example.com/a.png\"}}" }
      ])
    }))

  it.effect("a transformToContent that gives no content sends the text \"\", as a result \"\" does; one that gives no array answers with an error result", () =>
    Effect.gen(function*() {
      const transforming = (name: string, parts: unknown): Tool.Definition => ({
        name,
        description: "d",
        tool: () => "x",
        inputSchema: { type: "object" },
        transformToContent: () => parts as ReadonlyArray<Tool.ContentPartLike>
      })
      const executor = yield* setup([
        transforming("none", []),
        transforming("blank", [{ type: "text", text: "" }]),
        transforming("notArray", "x")
      ])
      const results = yield* executor.execute(
        ["none", "blank", "notArray"].map((toolName) => ({ toolCallId: toolName, toolName, args: "" }))
      )
      expect(results.map((result) => [result.isError === true, result.content])).toEqual([
        [false, [{ type: "text", text: "\"\"" }]],
        [false, [{ type: "text", text: "\"\"" }]],
        [true, [{ type: "text", text: "Tool \"notArray\": transformToContent returned string, not an array of content parts" }]]
      ])
    }))

  it.effect("traces each call in a span named after the tool call", () =>
    Effect.gen(function*() {
      const executor = yield* setup([
        Tool.make({
          name: "traced",
          description: "d",
          input: Schema.Struct({}),
          execute: () =>
            Effect.map(Effect.orDie(Effect.currentSpan), (span) => ({
              name: span.name,
              toolName: span.attributes.get("tool.name"),
              callId: span.attributes.get("tool.call_id"),
              parent: Option.map(span.parent, (parent) => parent._tag === "Span" ? parent.name : "external")
            }))
        })
      ])
      const [result] = yield* executor.execute([{ toolCallId: "call-9", toolName: "traced", args: "{}" }])
      expect(JSON.parse(text(result))).toEqual({
        name: "ToolExecutor.call",
        toolName: "traced",
        callId: "call-9",
        parent: { _id: "Option", _tag: "Some", value: "ToolExecutor.execute" }
      })
    }))
})
