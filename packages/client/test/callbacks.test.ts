// beforeRun and context helpers that throw or reject: the run rejects with a CallbackError, the
// thread stays usable, the next run is unaffected, and nothing is left unhandled.
import { Script } from "@tambo-effect/testing"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { CallbackError, type ContextHelperRun, isTamboClientError, type TamboClient } from "../src/index.js"
import { guardedWeather, makeClient, settle, texts, useServer } from "./helpers.js"

const server = useServer()

let unhandled: Array<unknown> = []
const onUnhandled = (reason: unknown) => void unhandled.push(reason)
beforeEach(() => {
  unhandled = []
  process.on("unhandledRejection", onUnhandled)
})
afterEach(() => {
  process.off("unhandledRejection", onUnhandled)
})

const ways: ReadonlyArray<readonly [string, () => never | Promise<never>]> = [
  ["throws", () => {
    throw new Error("boom: helper broke")
  }],
  ["rejects", () => Promise.reject(new Error("boom: helper broke"))]
]

/** A callback that goes wrong `way` when `trap.armed` (then disarms), else returns `result`. */
const trap = { armed: false }
const armed = <A>(way: () => never | Promise<never>, result: A) => () => {
  if (!trap.armed) return result
  trap.armed = false
  return way()
}

/** Runs once fine, then once with the trap armed: that run's rejection, and the thread. */
const failOnce = async (client: TamboClient) => {
  server().setScript((request) => [Script.text(`re: ${request.text}`)])
  const first = await client.run("first").thread
  trap.armed = true
  const stream = client.run("hi", { threadId: first.id })
  // Only `thread` is awaited: the stream's other promises must not be left rejected unhandled.
  const failed = await settle(stream.thread)
  return { threadId: first.id, failed }
}

const expectUsable = async (client: TamboClient, threadId: string) => {
  const state = client.getState().threadMap[threadId]!
  expect(state.thread.status).toBe("idle")
  expect(texts(state.thread.messages)).toEqual(["user: first", "assistant: re: first"])
  const next = await client.run("again", { threadId }).thread
  expect(texts(next.messages)).toEqual(["user: first", "assistant: re: first", "user: again", "assistant: re: again"])
  // Let any stray rejection surface before checking.
  await new Promise((resolve) => setTimeout(resolve, 10))
  expect(unhandled).toEqual([])
}

describe.each(ways)("a callback that %s", (_way, way) => {
  it("new TamboClient({ beforeRun }): the run rejects with a CallbackError naming beforeRun", async () => {
    const client = makeClient(server(), { beforeRun: armed(way, undefined) })
    const { threadId, failed } = await failOnce(client)
    expect(failed.ok).toBe(false)
    const error = failed.ok ? undefined : failed.error
    expect(error).toBeInstanceOf(CallbackError)
    expect(isTamboClientError(error)).toBe(true)
    expect(error).toMatchObject({ _tag: "CallbackError", name: "CallbackError", reason: "BeforeRun" })
    expect(error.message).toContain("beforeRun")
    expect(error.message).toContain("boom: helper broke")
    expect(error.cause).toMatchObject({ message: "boom: helper broke" })
    await expectUsable(client, threadId)
  })

  it("contextHelpers: the run rejects with a CallbackError naming the helper", async () => {
    const client = makeClient(server(), { contextHelpers: { location: armed(way, { city: "Oslo" }) } })
    const { threadId, failed } = await failOnce(client)
    const error = failed.ok ? undefined : failed.error
    expect(error).toBeInstanceOf(CallbackError)
    expect(error).toMatchObject({ reason: "ContextHelper", helper: "location" })
    expect(error.message).toContain("\"location\"")
    await expectUsable(client, threadId)
  })

  it("addContextHelper: iterating the run rejects with the CallbackError", async () => {
    const client = makeClient(server())
    client.addContextHelper("clock", armed(way, { now: 1 }))
    server().setScript((request) => [Script.text(`re: ${request.text}`)])
    const first = await client.run("first").thread
    trap.armed = true
    const iterated = await settle((async () => {
      for await (const _ of client.run("hi", { threadId: first.id })) {
        // nothing arrives
      }
    })())
    expect(iterated.ok ? undefined : iterated.error).toMatchObject({ _tag: "CallbackError", reason: "ContextHelper", helper: "clock" })
    await expectUsable(client, first.id)
  })
})

describe("an onApproval that throws", () => {
  it("denies the call, tells the model why, and the run finishes", async () => {
    server().setScript((request) =>
      request.toolResults.length === 0
        ? [Script.toolCall("get_weather", { city: "Paris" })]
        : [Script.text(`Result: ${request.toolResults[0]!.isError ? "error " : ""}${request.toolResults[0]!.text}`)]
    )
    const calls: Array<string> = []
    const client = makeClient(server(), {
      tools: [guardedWeather(calls)],
      onApproval: () => {
        throw new Error("boom: handler broke")
      }
    })
    const thread = await client.run("weather?").thread
    expect(calls).toEqual([])
    expect(texts(thread.messages).at(-1)).toMatch(/Result: error .*approval handler.*get_weather.*boom: handler broke/)
    expect(unhandled).toEqual([])
  })
})

describe("an onApproval that answers with no decision", () => {
  it("(it returns undefined) denies the call, tells the model why, and the run finishes", async () => {
    server().setScript((request) =>
      request.toolResults.length === 0
        ? [Script.toolCall("get_weather", { city: "Paris" })]
        : [Script.text(`Result: ${request.toolResults[0]!.isError ? "error " : ""}${request.toolResults[0]!.text}`)]
    )
    const calls: Array<string> = []
    const client = makeClient(server(), {
      tools: [guardedWeather(calls)],
      // A JavaScript handler that forgot to return its decision.
      onApproval: (() => {}) as unknown as () => { approved: true }
    })
    const thread = await client.run("weather?").thread
    expect(calls).toEqual([])
    expect(texts(thread.messages).at(-1)).toMatch(/Result: error .*approval handler.*get_weather.*not a decision/)
    expect(unhandled).toEqual([])
  })
})

describe("a context helper", () => {
  it("is called with the run it is asked for: its stream and the thread it started on, by contextHelpers and addContextHelper alike", async () => {
    server().setScript([Script.text("ok")])
    const seen: Array<ContextHelperRun | undefined> = []
    const client = makeClient(server(), { contextHelpers: { first: (run) => void seen.push(run) } })
    client.addContextHelper("second", (run) => void seen.push(run))
    const threadId = client.getState().currentThreadId
    const stream = client.run("hi")
    await stream.thread
    expect(seen).toHaveLength(2)
    for (const run of seen) expect(run).toEqual({ stream, threadId })
    expect(seen[0]!.stream).toBe(stream)
  })

  it("of a run that fails learns it from the run's stream", async () => {
    server().setScript([Script.httpError(503, { message: "busy" })])
    let learn!: (error: unknown) => void
    const learned = new Promise<unknown>((resolve) => (learn = resolve))
    const client = makeClient(server(), {
      contextHelpers: {
        attachments: (run) => {
          run?.stream.thread.catch(learn)
          return { taken: true }
        }
      }
    })
    await expect(client.run("hi").thread).rejects.toMatchObject({ _tag: "ApiError" })
    await expect(learned).resolves.toMatchObject({ _tag: "ApiError" })
  })
})

