// Tests of what both model-based tests share: the switch reports a failed invariant by its name
// and skips the ones a sequence does not check, and the small judges the invariants lean on.
import { afterEach, describe, expect, it, vi } from "vitest"
import { TamboClient } from "../../src/index.js"
import { executedOnce, InvariantError, Invariants, ModelWorld, parseProbe, resourceCounts, threadOf } from "./support.js"

const ALL = ["command-settles", "run-outcome", "no-unhandled-rejection", "no-open-handles", "own"] as const
type Name = (typeof ALL)[number]

afterEach(() => {
  vi.unstubAllEnvs()
})

describe("the invariant switch", () => {
  it("reports a failed check as an InvariantError naming the invariant, with what `explain` adds", async () => {
    const checks = new Invariants<Name>(ALL, new Set(), () => " (why)")
    const failure = await checks.check("own", () => {
      throw new Error("boom")
    }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(InvariantError)
    expect(failure).toMatchObject({ invariant: "own", message: "invariant \"own\" failed: boom (why)" })
  })

  it("runs only the invariants the sequence checks", async () => {
    const checks = new Invariants<Name>(ALL, new Set())
    checks.use(new Set(["run-outcome"]))
    const ran: Array<Name> = []
    await checks.check("own", () => void ran.push("own"))
    await checks.check("run-outcome", () => void ran.push("run-outcome"))
    expect(ran).toEqual(["run-outcome"])
  })

  it("checks all but the known open ones by default, or what MODEL_INVARIANTS names", () => {
    const checks = new Invariants<Name>(ALL, new Set(["own"]))
    vi.stubEnv("MODEL_INVARIANTS", undefined)
    expect([...checks.defaults()]).toEqual(ALL.filter((name) => name !== "own"))
    vi.stubEnv("MODEL_INVARIANTS", "all")
    expect([...checks.defaults()]).toEqual(ALL)
    vi.stubEnv("MODEL_INVARIANTS", "own,run-outcome")
    expect([...checks.defaults()]).toEqual(["own", "run-outcome"])
  })
})

describe("no-open-handles", () => {
  it("fails while a client of the world is not destroyed, and holds once it is", async () => {
    const checks = new Invariants<Name>(ALL, new Set())
    const world = new ModelWorld<never>()
    const before = resourceCounts()
    const client = new TamboClient({ apiKey: "key", tamboUrl: "http://127.0.0.1:9", store: world.store() })
    client.subscribe(() => undefined)
    await expect(checks.noOpenHandles(before, world.stores)).rejects.toMatchObject({
      invariant: "no-open-handles",
      message: expect.stringContaining("1 of 1 clients still listen to their store after destroy()")
    })
    await client.destroy()
    await checks.noOpenHandles(before, world.stores)
  })
})

describe("the judges", () => {
  it("executedOnce throws on a call executed twice", () => {
    const once = { thread: "thr_1", toolCallId: "call_1", n: 1 }
    expect([...executedOnce([once, { ...once, n: 2 }])]).toEqual(["thr_1/call_1/1", "thr_1/call_1/2"])
    expect(() => executedOnce([once, once])).toThrow("call thr_1/call_1/1 executed twice")
  })

  it("parseProbe reads a probe's result and nothing else", () => {
    expect(parseProbe('{"thread":"thr_1","n":3}')).toEqual({ thread: "thr_1", n: 3 })
    expect(parseProbe("probe failed n=3")).toBeUndefined()
    expect(parseProbe('{"thread":"thr_1"}')).toBeUndefined()
  })

  it("threadOf names the i-th known thread, round the list", () => {
    const world = new ModelWorld<never>()
    expect(threadOf(world, { known: 2 })).toBeUndefined()
    world.known.push("thr_a", "thr_b")
    expect(threadOf(world, "current")).toBeUndefined()
    expect(threadOf(world, { known: 3 })).toBe("thr_b")
  })
})
