// The counterexamples the store's model-based test (store.model.test.ts) shrank to, replayed as
// named tests against both stores. The comment names the defect each found.
import { describe, it } from "@effect/vitest"
import { type Command, runSequence } from "./storeModel.js"

const replay = (commands: ReadonlyArray<Command>) => async () => {
  await runSequence("memory", commands)
  await runSequence("external", commands)
}

describe("store model counterexamples: a state handed out never changes (handed-out)", () => {
  // Defect: a reader of `changes` that comes after publications nobody read is given the store's
  // current state (the ref catches up) without the store counting it as handed out; once the
  // reader goes, the next publication writes that state's thread map in place, under the reader.
  it("a changes reader's first state, after a publication nobody read, is not written in place once it goes", replay([
    { kind: "chunk", slot: "t1", specs: [{ kind: "finish" }], via: "record" },
    { kind: "turn" },
    { kind: "subscribeChanges" },
    { kind: "chunk", slot: "t1", specs: [{ kind: "tool", call: 0 }], via: "record" },
    { kind: "unsubscribeChanges" },
    { kind: "turn" }
  ]))
})
