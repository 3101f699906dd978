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

describe("store model counterexamples: what runs record reaches the store in the order recorded (state)", () => {
  // Defect: a draft whose thread changed under it (here: removed) was applied again after every
  // other draft and write of its publication, not in the order recorded. Its RUN_STARTED, naming
  // a thread the store no longer knows, then took the user's message of a new conversation
  // recorded after it from the placeholder.
  it("a run's chunk on a thread removed meanwhile, then a user's message on the placeholder", replay([
    { kind: "chunk", slot: "t1", specs: [{ kind: "props", comp: 0, key: "a", value: 0 }], via: "record" },
    { kind: "userMessage", slot: "new" },
    { kind: "apply", actions: [{ kind: "remove", thread: "t1" }] },
    { kind: "turn" }
  ]))

  // Same defect, with a new thread's run recorded before it: the new thread's RUN_STARTED (written,
  // applied after the drafts) no longer found the user's message it should have moved.
  it("a new thread's start, then a run's chunk on a thread removed meanwhile", replay([
    { kind: "userMessage", slot: "new" },
    { kind: "chunk", slot: "new", specs: [{ kind: "finish" }], via: "record" },
    { kind: "chunk", slot: "t2", specs: [{ kind: "finish" }], via: "record" },
    { kind: "apply", actions: [{ kind: "remove", thread: "t2" }] },
    { kind: "turn" }
  ]))
})

describe("store model counterexamples: a tool call's partial arguments, whatever the batches (state)", () => {
  // Defect: the partial arguments parsed at a batch's end were stamped with the batch's last
  // action, so a draft applied again as one batch (its thread removed meanwhile) gave the thread
  // another `updatedAt` than its chunks one batch each.
  it("a call's partial arguments, then a chunk that changes nothing, on a thread removed meanwhile", replay([
    { kind: "chunk", slot: "t1", specs: [{ kind: "toolStart", call: 0 }], via: "record" },
    { kind: "chunk", slot: "t1", specs: [{ kind: "props", comp: 0, key: "a", value: 0 }], via: "record" },
    { kind: "appWrite", actions: [{ kind: "remove", thread: "t1" }] },
    { kind: "subscribeChanges" }
  ]))

  // Defect: the next run's RUN_STARTED dropped a call's arguments that no TOOL_CALL_END closed
  // and no batch's end had parsed yet: applied as one batch, the call kept an empty input.
  it("a run that finished with a call's arguments open, then the next run, applied again as one batch", replay([
    { kind: "chunk", slot: "t1", specs: [{ kind: "toolStart", call: 0 }, { kind: "finish" }], via: "record" },
    { kind: "chunk", slot: "t1", specs: [{ kind: "endComponent", comp: 0 }], via: "record" },
    { kind: "appRehydrate" },
    { kind: "turn" }
  ]))
})
