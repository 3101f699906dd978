// Tests of what both model-based tests share: the switch reports a failed invariant by its name
// and skips the ones a sequence does not check, and the small judges the invariants lean on.
import { afterEach, describe, expect, it, vi } from "vitest"
import { TamboClient } from "../../src/index.js"
import {
  executedOnce,
  InvariantError,
  Invariants,
  ModelCommand,
  ModelWorld,
  parseProbe,
  resourceCounts,
  runSequence,
  threadOf
} from "./support.js"

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

describe("command-settles", () => {
  it("a step that does not end fails the sequence naming it, and the sequence ends only once every client it made is destroyed and that step with them", async () => {
    const checks = new Invariants<Name>(ALL, new Set())
    let world: ModelWorld<never> | undefined
    let hungEnded = false
    const played: Array<string> = []
    // The second step waits for a client of its own, which only its destroy() ends.
    const play = async (real: { readonly world: ModelWorld<never>; readonly client: TamboClient }, command: string) => {
      played.push(command)
      if (command !== "hang") return
      const own = real.world.track(new TamboClient({ apiKey: "key", tamboUrl: "http://127.0.0.1:9", store: real.world.store() }))
      await checks.liveness(new Promise<void>((resolve) => own.subscribeToDestroy(resolve)).then(() => (hungEnded = true)), command)
    }
    const failure = await runSequence({
      invariants: checks,
      checking: new Set(ALL),
      open: async () => ({ world: (world = new ModelWorld<never>()), close: async () => undefined }),
      current: () => undefined,
      client: (each) => new TamboClient({ apiKey: "key", tamboUrl: "http://127.0.0.1:9", store: each.store() }),
      commands: ["first", "hang", "never played"].map((command) => new ModelCommand(command, play))
    }).catch((error: unknown) => error)
    expect(failure).toMatchObject({ invariant: "command-settles", message: expect.stringMatching(/"hang" did not end within \d+ ms \(step 2\)$/) })
    expect(played).toEqual(["first", "hang"])
    expect(hungEnded).toBe(true)
    expect(world!.madeClients).toHaveLength(2)
    expect(world!.stores.every((store) => store.listeners === 0)).toBe(true)
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
