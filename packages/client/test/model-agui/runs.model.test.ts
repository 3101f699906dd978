// The model-based test of AG-UI runs through the facade (issue 34): fast-check generates sequences
// of commands (text runs, tool rounds, stops, the agent's RUN_ERROR, a dropped connection, a 503,
// the agent's state and the app's, messages snapshots, threads) played against ONE agent client
// and the scripted AgUiAgent on loopback; the invariants of harness.ts are checked after every
// command.
//
// Seeded, so a failure reproduces. Environment, for longer or targeted local runs:
//   MODEL_RUNS (default 100), MODEL_MAX_COMMANDS (default 6), MODEL_SEED (default 34);
//   MODEL_PATH and MODEL_REPLAY_PATH: the `path` and `replayPath` a failure prints, to replay it;
//   MODEL_INVARIANTS: a comma list of invariants to check instead of the default (or `all`).
// A counterexample it shrinks to goes to counterexamples.test.ts as a named test.
import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { describe } from "vitest"
import { commandsArbitrary, runSequence } from "./harness.js"

const RUNS = Number(process.env.MODEL_RUNS ?? 100)
const SEED = Number(process.env.MODEL_SEED ?? 34)
const MAX_COMMANDS = Number(process.env.MODEL_MAX_COMMANDS ?? 6)
const PATH = process.env.MODEL_PATH

describe("AG-UI runs through the facade, model-based", () => {
  // `live`: real sockets and real timers (the tool timeout, the retry's backoff), not the TestClock.
  it.live.prop(
    "every sequence of commands keeps the invariants",
    [commandsArbitrary(MAX_COMMANDS, process.env.MODEL_REPLAY_PATH)],
    ([commands]) => Effect.promise(() => runSequence(commands)),
    { timeout: 600_000, fastCheck: { numRuns: RUNS, seed: SEED, ...(PATH === undefined ? {} : { path: PATH }) } }
  )
})
