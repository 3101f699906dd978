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
import { describe } from "vitest"
import { modelProperty } from "../model/support.js"
import { commandsArbitrary, runSequence } from "./harness.js"

describe("AG-UI runs through the facade, model-based", () => {
  modelProperty({ runs: 100, seed: 34, maxCommands: 6 }, commandsArbitrary, runSequence)
})
