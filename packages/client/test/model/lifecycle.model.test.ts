// Issue #29: the model-based test of a run's lifecycle. fast-check generates sequences of commands
// (runs of every kind, tool rounds, stops, manual continuations, threads, concurrent runs) played
// against ONE TamboClient and the testing server on loopback; every invariant of harness.ts is
// checked after every command. Seeded, so a failure reproduces; MODEL_RUNS / MODEL_SEED /
// MODEL_MAX_COMMANDS run it longer locally. A counterexample it shrinks to goes to
// counterexamples.test.ts as a named test.
import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { describe } from "vitest"
import { commandsArbitrary, runSequence } from "./harness.js"

const RUNS = Number(process.env.MODEL_RUNS ?? 200)
const SEED = Number(process.env.MODEL_SEED ?? 29)
const MAX_COMMANDS = Number(process.env.MODEL_MAX_COMMANDS ?? 5)

describe("a run's lifecycle, model-based", () => {
  it.live.prop(
    "every sequence of commands keeps threads usable, the store equal to the server, tools once each, and nothing leaking",
    [commandsArbitrary(MAX_COMMANDS)],
    ([commands]) => Effect.promise(() => runSequence(commands)),
    { timeout: 600_000, fastCheck: { numRuns: RUNS, seed: SEED } }
  )
})
