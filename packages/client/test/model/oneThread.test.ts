// Tests of the runner the models of one thread share (oneThread.ts): a step that does not end fails
// its sequence naming it, and the sequence ends only once what it made is gone.
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "vitest"
import { TamboClient } from "../../src/index.js"
import * as OneThread from "./oneThread.js"
import { Invariants } from "./support.js"

const ALL = ["command-settles", "run-outcome", "no-unhandled-rejection", "no-open-handles"] as const

describe("command-settles", () => {
  it("a step that does not end fails the sequence naming it, and the sequence ends only once what the world held is let go, every client it made destroyed and that step with them", async () => {
    const checks = new Invariants<(typeof ALL)[number]>(ALL, new Set())
    let world: OneThread.OneThreadWorld | undefined
    let hungEnded = false
    let letGo = false
    const played: Array<string> = []
    // The second step waits for a client of its own, which only its destroy() ends.
    const step = async (real: OneThread.OneThreadWorld, command: string) => {
      played.push(command)
      if (command !== "hang") return
      const own = real.track(new TamboClient(real.clientOptions()))
      await checks.liveness(new Promise<void>((resolve) => own.subscribeToDestroy(resolve)).then(() => (hungEnded = true)), command)
    }
    const { replay } = OneThread.entryPoints({
      invariants: checks,
      command: fc.constant("first"),
      step,
      world: (server, proxy) => {
        world = new OneThread.OneThreadWorld(server, proxy, "Hang")
        world.track(new TamboClient(world.clientOptions()))
        return world
      },
      windDown: async () => undefined,
      letGo: () => void (letGo = true)
    })
    const failure = await replay(["first", "hang", "never played"], ALL).catch((error: unknown) => error)
    expect(failure).toMatchObject({ invariant: "command-settles", message: expect.stringMatching(/"hang" did not end within \d+ ms \(step 2\)$/) })
    expect(played).toEqual(["first", "hang"])
    expect(letGo).toBe(true)
    expect(hungEnded).toBe(true)
    expect(world!.madeClients).toHaveLength(2)
    expect(world!.stores.every((store) => store.listeners === 0)).toBe(true)
  })
})
