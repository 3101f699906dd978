// The model-based test of two clients (two tabs of one user) on one thread: runs of either, held
// by the server or not (or paused while a tool of their client runs), finished, stopped by either, and reads of the thread by either at any
// point, against the testing server on loopback (see twoClients.ts). Seeded, so a failure
// reproduces; MODEL_RUNS, MODEL_MAX_COMMANDS, MODEL_SEED, MODEL_PATH, MODEL_REPLAY_PATH and
// MODEL_INVARIANTS as for lifecycle.model.test.ts. A step that does not end fails command-settles
// naming it, and its clients, proxy and server go before the next sequence, so a shrink starts
// clean. A counterexample it shrinks to goes to counterexamples.test.ts as a named test.
import { describe } from "vitest"
import { modelProperty } from "./support.js"
import { commandsArbitrary, runSequence, sequenceAgainst } from "./twoClients.js"

describe("two clients on one thread, model-based", () => {
  modelProperty({ runs: 100, seed: 29, maxCommands: 6 }, commandsArbitrary, runSequence)
})

describe("two clients on one thread against a server that notices a closed connection when the run next writes, model-based", () => {
  modelProperty({ runs: 40, seed: 31, maxCommands: 6 }, commandsArbitrary, sequenceAgainst("onNextWrite"))
})
