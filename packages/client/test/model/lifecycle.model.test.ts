// Issue #29: the model-based test of a run's lifecycle. fast-check generates sequences of commands
// (runs of every kind, tool rounds, stops, manual continuations, threads, concurrent runs, threads
// another client deletes) played against ONE TamboClient and the testing server on loopback; the
// invariants of harness.ts are checked after every command (those in its KNOWN_OPEN switch excepted).
//
// Seeded, so a failure reproduces. Environment, for longer or targeted local runs:
//   MODEL_RUNS (default 200), MODEL_MAX_COMMANDS (default 5), MODEL_SEED (default 29);
//   MODEL_PATH and MODEL_REPLAY_PATH: the `path` and `replayPath` a failure prints, to replay it;
//   MODEL_INVARIANTS: a comma list of invariants to check instead of the default (or `all`).
// A counterexample it shrinks to goes to counterexamples.test.ts as a named test.
import { describe } from "vitest"
import { commandsArbitrary, runSequence, sequenceAgainst } from "./harness.js"
import { modelProperty } from "./support.js"

describe("a run's lifecycle, model-based", () => {
  modelProperty({ runs: 200, seed: 29, maxCommands: 5 }, commandsArbitrary, runSequence)
})

describe("a run's lifecycle against a server that notices a closed connection when the run next writes, model-based", () => {
  modelProperty({ runs: 60, seed: 31, maxCommands: 5 }, commandsArbitrary, sequenceAgainst("onNextWrite"))
})
