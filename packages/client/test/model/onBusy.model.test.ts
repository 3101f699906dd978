// The model-based test of overlapping runs on one thread of one client: runs started with each
// `onBusy` policy while the server holds the thread's run, Stop, the caller giving up on a run, the
// held run finishing, a Stop whose DELETE the server answers late, a second message on a new
// conversation while its first run creates the thread, and runs waiting for the exchange of a
// renewed user token (see onBusy.ts). Seeded, so a
// failure reproduces; MODEL_RUNS, MODEL_MAX_COMMANDS, MODEL_SEED, MODEL_PATH, MODEL_REPLAY_PATH and
// MODEL_INVARIANTS as for lifecycle.model.test.ts. A step that does not end fails command-settles
// naming it, and its clients, proxy and server go before the next sequence, so a shrink starts
// clean. A counterexample it shrinks to goes to counterexamples.test.ts as a named test.
import { describe } from "vitest"
import { commandsArbitrary, runSequence, sequenceAgainst } from "./onBusy.js"
import { modelProperty } from "./support.js"

describe("overlapping runs on one thread (onBusy, Stop), model-based", () => {
  modelProperty({ runs: 60, seed: 29, maxCommands: 6 }, commandsArbitrary, runSequence)
})

describe("overlapping runs on one thread against a server that notices a closed connection when the run next writes, model-based", () => {
  modelProperty({ runs: 30, seed: 31, maxCommands: 6 }, commandsArbitrary, sequenceAgainst("onNextWrite"))
})
