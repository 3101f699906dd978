// The model-based test of the store: generated sequences of commands (runs recording chunks into
// their threads, turns of the event loop, the app's own changes, reads that hand the state out,
// readers of `changes` and plain listeners coming and going (one throwing, or subscribing itself
// again, when called), an app's store written by the app)
// played against a real ThreadStore and the run writer, in memory and over an app's store. The
// invariants, and when the store must equal the reference built with `ClientState.reduce`, are in
// storeModel.ts. Seeded, so a failure reproduces; MODEL_RUNS (default 250 a store),
// MODEL_MAX_COMMANDS (default 30) and MODEL_SEED (default 31) override. A counterexample it
// shrinks to goes to store.counterexamples.test.ts as a named test.
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as Effect from "effect/Effect"
import { type Command, commandsArbitrary, runSequence, type StoreKind } from "./storeModel.js"

const runs = Number(process.env.MODEL_RUNS ?? 250)
const maxCommands = Number(process.env.MODEL_MAX_COMMANDS ?? 30)
const seed = Number(process.env.MODEL_SEED ?? 31)

const property = (kind: StoreKind) =>
  it.live.prop(
    "every sequence of commands keeps the invariants",
    [commandsArbitrary(maxCommands)],
    ([commands]) => Effect.promise(() => runSequence(kind, commands)),
    { timeout: 120_000, fastCheck: { numRuns: runs, seed } }
  )

describe("the store and its run writer, model-based: in memory", () => {
  property("memory")
})

describe("the store and its run writer, model-based: over an app's store", () => {
  property("external")
})

describe("the store model's commands", () => {
  // The property is only as good as what it generates: every kind of command comes up often.
  it("cover every command, every kind of event, and runs on each thread", () => {
    const seen = new Map<string, number>()
    const count = (label: string) => seen.set(label, (seen.get(label) ?? 0) + 1)
    for (const commands of fc.sample(commandsArbitrary(maxCommands), { numRuns: 150, seed })) {
      for (const c of commands as ReadonlyArray<Command>) {
        count(c.kind)
        if (c.kind === "chunk") {
          count(`chunk ${c.slot}`)
          count(`chunk by ${c.via}`)
          for (const spec of c.specs) count(spec.kind)
        }
        if (c.kind === "subscribeChanges" && c.thread !== undefined) count("threadChanges")
        if (c.kind === "read") count(c.how)
        if (c.kind === "listen" && c.how !== undefined) count(`listen ${c.how}`)
      }
    }
    for (const label of [
      "chunk t1", "chunk t2", "chunk new", "userMessage", "turn", "apply", "update", "appWrite", "appRehydrate", "restore",
      "read", "subscribeChanges", "unsubscribeChanges", "listen", "unlisten", "chunk by record", "chunk by recordOrWrite",
      "chunk by write", "text", "endText", "tool", "component", "props", "endComponent", "pause", "finish", "flood",
      "threadChanges", "get", "getSnapshot", "getThread", "listen throws", "listen resubscribes"
    ]) {
      expect(seen.get(label) ?? 0, label).toBeGreaterThan(30)
    }
  })
})
