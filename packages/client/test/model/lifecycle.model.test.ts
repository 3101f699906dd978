// Issue #29: the model-based test of a run's lifecycle. fast-check generates sequences of commands
// (runs of every kind, tool rounds, stops, manual continuations, threads, concurrent runs) played
// against ONE TamboClient and the testing server on loopback; the invariants of harness.ts are
// checked after every command (those in its KNOWN_OPEN switch excepted).
//
// Seeded, so a failure reproduces. Environment, for longer or targeted local runs:
//   MODEL_RUNS (default 200), MODEL_MAX_COMMANDS (default 5), MODEL_SEED (default 29);
//   MODEL_PATH and MODEL_REPLAY_PATH: the `path` and `replayPath` a failure prints, to replay it;
//   MODEL_INVARIANTS: a comma list of invariants to check instead of the default (or `all`).
// A counterexample it shrinks to goes to counterexamples.test.ts as a named test.
import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { describe } from "vitest"
import { commandsArbitrary, runSequence } from "./harness.js"

const RUNS = Number(process.env.MODEL_RUNS ?? 200)
const SEED = Number(process.env.MODEL_SEED ?? 29)
const MAX_COMMANDS = Number(process.env.MODEL_MAX_COMMANDS ?? 5)
const PATH = process.env.MODEL_PATH

describe("a run's lifecycle, model-based", () => {
  // `live`: real sockets and real timers (the tool timeout, the server's pacing), not the TestClock.
  it.live.prop(
    "every sequence of commands keeps the invariants",
    [commandsArbitrary(MAX_COMMANDS, process.env.MODEL_REPLAY_PATH)],
    ([commands]) => Effect.promise(() => runSequence(commands)),
    { timeout: 600_000, fastCheck: { numRuns: RUNS, seed: SEED, ...(PATH === undefined ? {} : { path: PATH }) } }
  )
})
