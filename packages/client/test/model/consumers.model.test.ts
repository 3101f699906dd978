// The model-based test of a run's consumers: the lifecycle model's commands (harness.ts), mostly
// `consumer` ones: an iterator that reads slowly, one that returns early, one that stops reading
// without return() while abort(), cancelRun, destroy() or an "interrupt" run stops its run, at once or once the
// server's run ended; and `nested` ones: a loop that, at one of its run's events, reads another run
// of that thread (onBusy "interrupt", "queue" or "reject") to its end in its body. The invariants of harness.ts are checked after every command. Seeded, so a
// failure reproduces; MODEL_RUNS, MODEL_MAX_COMMANDS, MODEL_SEED, MODEL_PATH, MODEL_REPLAY_PATH and
// MODEL_INVARIANTS as for lifecycle.model.test.ts. A step that does not end fails command-settles
// naming it, and its clients and server go before the next sequence, so a shrink starts clean. A
// counterexample it shrinks to goes to counterexamples.test.ts as a named test.
import { describe } from "vitest"
import { consumerCommandsArbitrary, runSequence } from "./harness.js"
import { modelProperty } from "./support.js"

describe("a run's slow, early-leaving and abandoned consumers, model-based", () => {
  modelProperty({ runs: 40, seed: 29, maxCommands: 4 }, consumerCommandsArbitrary, runSequence)
})
