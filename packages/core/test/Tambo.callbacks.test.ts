// The app's own functions that a run calls (beforeRun, context helpers, an approval handler):
// when one throws, rejects or fails, that run fails with a CallbackError (or, for an approval,
// the call is denied), the thread stays usable, and the next run is unaffected.
import { describe, expect, it } from "@effect/vitest"
import { Script } from "@tambo-effect/testing"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import * as ClientState from "../src/ClientState.js"
import * as Tambo from "../src/Tambo.js"
import * as Tool from "../src/Tool.js"
import { fields, runAll, tamboLayer, useServer } from "./helpers.js"

const server = useServer()

type Failing = () => never | Promise<never> | Effect.Effect<never>
/** The ways a callback can go wrong, each with the error it gives. */
const failures: ReadonlyArray<readonly [string, (error: Error) => Failing]> = [
  ["throws", (error) => () => {
    throw error
  }],
  ["rejects", (error) => () => Promise.reject(error)],
  ["dies (an Effect)", (error) => () => Effect.die(error)],
  // Typed as never failing, but a JavaScript caller's Effect may.
  ["fails (an Effect)", (error) => () => Effect.fail(error) as unknown as Effect.Effect<never>]
]

/** Whether the next call of a callback made by `armed` goes wrong (then it is disarmed). */
const trap = { armed: false }
/** A callback that goes wrong `way` once `trap` is armed, and returns `result` otherwise. */
const armed = <A>(way: (error: Error) => Failing, result: A) => () => {
  if (!trap.armed) return result
  trap.armed = false
  return way(new Error("boom: helper broke"))()
}

/** The thread's state in the store. */
const threadState = (threadId: string) =>
  Effect.map(Effect.flatMap(Tambo.Tambo, (tambo) => tambo.state), (state) => state.threadMap[threadId])

/** A thread with one finished run, and the number of requests the server had by then. */
const existingThread = Effect.gen(function* () {
  server().setScript((request) => [Script.text(`re: ${request.text}`)])
  const threadId = (yield* runAll("first")).at(-1)!.threadId
  trap.armed = true
  return { threadId, requests: server().requests.length }
})

/** Checks what a failed helper leaves: nothing sent, the thread idle and as it was, the next run fine. */
const expectUsable = (threadId: string, requestsBefore: number, messagesBefore: number) =>
  Effect.gen(function* () {
    expect(server().requests.length).toBe(requestsBefore)
    const state = yield* threadState(threadId)
    expect(state?.thread.status).toBe("idle")
    expect(state?.streaming.status).toBe("idle")
    expect(state?.thread.messages.length).toBe(messagesBefore)
    expect(trap.armed).toBe(false)
    const next = yield* runAll("again", { threadId })
    expect(next.at(-1)!.event.type).toBe("RUN_FINISHED")
    // A new thread's run moves from the placeholder to the thread the server made.
    const after = yield* threadState(next.at(-1)!.threadId)
    expect(after?.thread.messages.map((m) => m.content[0]?.type === "text" ? m.content[0].text : "")).toEqual([
      ...(messagesBefore === 0 ? [] : ["first", "re: first"]),
      "again",
      "re: again"
    ])
  })

describe.each(failures)("a callback that %s", (_way, way) => {
  it.live("client-wide beforeRun: the run fails with a CallbackError naming it and carrying the cause", () =>
    Effect.gen(function* () {
      const { threadId, requests } = yield* existingThread
      const error = yield* runAll("hi", { threadId }).pipe(Effect.flip)
      expect(fields(error)).toMatchObject({ _tag: "CallbackError", reason: "BeforeRun" })
      expect(error.message).toContain("beforeRun")
      expect(error.message).toContain("boom: helper broke")
      expect(error._tag === "CallbackError" && error.cause).toMatchObject({ message: "boom: helper broke" })
      expect(error.message).not.toContain(server().apiKey)
      yield* expectUsable(threadId, requests, 2)
    }).pipe(Effect.provide(tamboLayer(server(), { beforeRun: armed(way, undefined) }))))

  it.live("per-run beforeRun: the run fails with a CallbackError; a new thread's placeholder is let go", () =>
    Effect.gen(function* () {
      server().setScript((request) => [Script.text(`re: ${request.text}`)])
      trap.armed = true
      const error = yield* runAll("hi", { beforeRun: armed(way, undefined) }).pipe(Effect.flip)
      expect(fields(error)).toMatchObject({ _tag: "CallbackError", reason: "BeforeRun" })
      expect(error.message).toContain("boom: helper broke")
      yield* expectUsable(ClientState.PLACEHOLDER_THREAD_ID, 0, 0)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("contextHelpers: the run fails with a CallbackError naming the helper", () =>
    Effect.gen(function* () {
      const { threadId, requests } = yield* existingThread
      const error = yield* runAll("hi", { threadId }).pipe(Effect.flip)
      expect(fields(error)).toMatchObject({ _tag: "CallbackError", reason: "ContextHelper", helper: "location" })
      expect(error.message).toContain("\"location\"")
      expect(error.message).toContain("boom: helper broke")
      yield* expectUsable(threadId, requests, 2)
    }).pipe(Effect.provide(tamboLayer(server(), {
      contextHelpers: { time: () => ({ now: 1 }), location: armed(way, { city: "Oslo" }) }
    }))))

  it.live("addContextHelper: the run fails with a CallbackError naming the helper", () =>
    Effect.gen(function* () {
      const { threadId, requests } = yield* existingThread
      const tambo = yield* Tambo.Tambo
      yield* tambo.addContextHelper("clock", armed(way, { now: 1 }))
      const error = yield* runAll("hi", { threadId }).pipe(Effect.flip)
      expect(fields(error)).toMatchObject({ _tag: "CallbackError", reason: "ContextHelper", helper: "clock" })
      yield* expectUsable(threadId, requests, 2)
    }).pipe(Effect.provide(tamboLayer(server()))))
})

/** A tool that needs approval; `moved` holds the amounts it moved (each test empties it first). */
const transfer = Tool.make({
  name: "transfer",
  description: "Moves money",
  input: Schema.Struct({ amount: Schema.Number }),
  needsApproval: () => true,
  execute: ({ amount }) => Effect.sync(() => {
    moved.push(amount)
    return `moved ${amount}`
  })
})
let moved: Array<number> = []

describe("an approval handler that goes wrong", () => {

  it.live.each(failures)("%s: the call is denied, the model is told why, and the run goes on", ([, way]) =>
    Effect.gen(function* () {
      moved = []
      server().setScript((request) =>
        request.toolResults.length === 0
          ? [Script.toolCall("transfer", { amount: 5000 })]
          : [Script.text(request.toolResults.map((r) => `${r.isError ? "error" : "ok"}: ${r.text}`).join("; "))]
      )
      const events = yield* runAll("pay", { onApproval: way(new Error("boom: handler broke")) })
      expect(moved).toEqual([])
      expect(events.at(-1)!.event.type).toBe("RUN_FINISHED")
      const last = events.at(-1)!.snapshot.messages.at(-1)!.content[0]!
      expect(last.type === "text" && last.text).toMatch(/^error: .*approval handler.*transfer.*boom: handler broke/)
      // The next run is unaffected.
      server().setScript([Script.text("fine")])
      const next = yield* runAll("next", { threadId: events.at(-1)!.threadId })
      expect(next.at(-1)!.event.type).toBe("RUN_FINISHED")
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [transfer] }))))
})

describe("an approval handler that answers with no decision", () => {
  // A JavaScript handler that forgot to return, or returned something else than a decision.
  const answers: ReadonlyArray<readonly [string, unknown]> = [
    ["undefined", undefined],
    ["null", null],
    ["a promise of undefined", Promise.resolve(undefined)],
    ["true", true],
    ["an object without approved", { reason: "ok" }]
  ]

  it.live.each(answers)("%s: the call is denied, the model is told the handler gave no decision, the run goes on", ([, answer]) =>
    Effect.gen(function* () {
      moved = []
      server().setScript((request) =>
        request.toolResults.length === 0
          ? [Script.toolCall("transfer", { amount: 5000 })]
          : [Script.text(request.toolResults.map((r) => `${r.isError ? "error" : "ok"}: ${r.text}`).join("; "))]
      )
      const events = yield* runAll("pay", { onApproval: (() => answer) as unknown as Tambo.ApprovalHandler })
      expect(moved).toEqual([])
      expect(events.at(-1)!.event.type).toBe("RUN_FINISHED")
      const last = events.at(-1)!.snapshot.messages.at(-1)!.content[0]!
      expect(last.type === "text" && last.text).toMatch(/^error: .*approval handler.*transfer.*not a decision/)
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [transfer] }))))
})

describe("a callback whose value cannot be sent as JSON", () => {
  const cycle = (): Record<string, unknown> => {
    const node: Record<string, unknown> = { name: "loop" }
    node.self = node
    return node
  }
  const values: ReadonlyArray<readonly [string, () => Record<string, unknown>, RegExp]> = [
    ["a BigInt", () => ({ count: 10n }), /BigInt/],
    ["a cycle", () => ({ graph: cycle() }), /circular/i],
    ["a throwing toJSON", () => ({ when: { toJSON: () => { throw new Error("no date") } } }), /no date/]
  ]
  /** The value once `trap` is armed, a plain one otherwise. */
  const armedValue = (value: () => Record<string, unknown>) => () => {
    if (!trap.armed) return { ok: true }
    trap.armed = false
    return value()
  }

  it.live.each(values)("%s from a context helper: the run fails with a CallbackError naming the helper, nothing sent", ([, value, why]) =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      yield* tambo.addContextHelper("graph", armedValue(value))
      const { threadId, requests } = yield* existingThread
      const error = yield* runAll("hi", { threadId }).pipe(Effect.flip)
      expect(fields(error)).toMatchObject({ _tag: "CallbackError", reason: "ContextHelper", helper: "graph" })
      expect(error.message).toContain("\"graph\"")
      expect(error.message).toMatch(/JSON/)
      expect(error.message).toMatch(why)
      yield* expectUsable(threadId, requests, 2)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live.each(values)("%s from beforeRun on a new thread: the run fails with a CallbackError, nothing sent, the placeholder let go", ([, value, why]) =>
    Effect.gen(function* () {
      server().setScript((request) => [Script.text(`re: ${request.text}`)])
      trap.armed = true
      const error = yield* runAll("hi", { beforeRun: armedValue(value) }).pipe(Effect.flip)
      expect(fields(error)).toMatchObject({ _tag: "CallbackError", reason: "BeforeRun" })
      expect(error.message).toMatch(/JSON/)
      expect(error.message).toMatch(why)
      yield* expectUsable(ClientState.PLACEHOLDER_THREAD_ID, 0, 0)
    }).pipe(Effect.provide(tamboLayer(server()))))
})

describe("a callback that throws something else than an Error", () => {
  const thrown: ReadonlyArray<readonly [string, () => unknown, RegExp]> = [
    ["undefined", () => undefined, /failed: undefined/],
    ["a string", () => "no token", /failed: no token/],
    ["an object without a prototype", () => Object.assign(Object.create(null), { code: 7 }), /failed: \{"code":7\}/]
  ]

  it.live.each(thrown)("%s from beforeRun: the run fails with a CallbackError saying what was thrown", ([, value, said]) =>
    Effect.gen(function* () {
      server().setScript((request) => [Script.text(`re: ${request.text}`)])
      const error = yield* runAll("hi", {
        beforeRun: () => {
          throw value()
        }
      }).pipe(Effect.flip)
      expect(fields(error)).toMatchObject({ _tag: "CallbackError", reason: "BeforeRun" })
      expect(error.message).toMatch(said)
      yield* expectUsable(ClientState.PLACEHOLDER_THREAD_ID, 0, 0)
    }).pipe(Effect.provide(tamboLayer(server()))))
})

describe("a callback that never answers", () => {
  /** Hangs once armed, telling `called` that it was called; returns nothing otherwise. */
  const hanging = { armed: false, called: () => {} }
  const hangs = (): Promise<undefined> | undefined => {
    if (!hanging.armed) return undefined
    hanging.armed = false
    hanging.called()
    return new Promise(() => {})
  }
  /** Runs `hi` on `threadId` with `options`, and cancelRun once the callback is called: the run's failure. */
  const cancelledWhileCalled = (threadId: string | undefined, options: Tambo.RunOptions = {}) =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const called = new Promise<void>((resolve) => {
        hanging.called = resolve
      })
      hanging.armed = true
      const fiber = yield* Effect.fork(runAll("hi", { ...options, ...(threadId === undefined ? {} : { threadId }) }))
      yield* Effect.promise(() => called)
      yield* tambo.cancelRun(threadId)
      return yield* Fiber.join(fiber).pipe(Effect.flip)
    })

  it.live("a context helper: cancelRun ends the run cancelled, nothing sent, the thread takes the next run", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      yield* tambo.addContextHelper("slow", hangs)
      const { threadId, requests } = yield* existingThread
      trap.armed = false
      const error = yield* cancelledWhileCalled(threadId)
      expect(fields(error)).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
      yield* expectUsable(threadId, requests, 2)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("the run's beforeRun on a new thread: cancelRun ends the run cancelled, nothing sent, the placeholder let go", () =>
    Effect.gen(function* () {
      server().setScript((request) => [Script.text(`re: ${request.text}`)])
      const error = yield* cancelledWhileCalled(undefined, { beforeRun: hangs })
      expect(fields(error)).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })
      yield* expectUsable(ClientState.PLACEHOLDER_THREAD_ID, 0, 0)
    }).pipe(Effect.provide(tamboLayer(server()))))
})

describe("a callback whose Effect interrupts itself (it awaited something interrupted elsewhere)", () => {
  const interrupts = () => {
    if (!trap.armed) return Effect.succeed(undefined)
    trap.armed = false
    return Effect.interrupt
  }

  it.live("a context helper: the run fails with a CallbackError naming the helper, not an interruption, nothing sent", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      yield* tambo.addContextHelper("joined", interrupts)
      const { threadId, requests } = yield* existingThread
      const error = yield* runAll("hi", { threadId }).pipe(Effect.flip)
      expect(fields(error)).toMatchObject({ _tag: "CallbackError", reason: "ContextHelper", helper: "joined" })
      expect(error.message).toContain("interrupted")
      yield* expectUsable(threadId, requests, 2)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("an approval handler: the call is denied, the model is told why, and the run goes on", () =>
    Effect.gen(function* () {
      moved = []
      server().setScript((request) =>
        request.toolResults.length === 0
          ? [Script.toolCall("transfer", { amount: 5000 })]
          : [Script.text(request.toolResults.map((r) => `${r.isError ? "error" : "ok"}: ${r.text}`).join("; "))]
      )
      trap.armed = true
      const events = yield* runAll("pay", {
        onApproval: interrupts as unknown as Tambo.ApprovalHandler
      }).pipe(Effect.provide(tamboLayer(server(), { tools: [transfer] })))
      expect(moved).toEqual([])
      expect(events.at(-1)!.event.type).toBe("RUN_FINISHED")
      const last = events.at(-1)!.snapshot.messages.at(-1)!.content[0]!
      expect(last.type === "text" && last.text).toMatch(/^error: .*approval handler.*transfer.*interrupted/)
    }))
})
