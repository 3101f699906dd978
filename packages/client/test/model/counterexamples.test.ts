// The counterexamples the model-based test (lifecycle.model.test.ts) shrank to, replayed as named
// tests. Each checks only the invariant it broke; the comment names the defect it found.
import { describe, it } from "vitest"
import { type Command, replay } from "./harness.js"
import * as OnBusy from "./onBusy.js"
import * as TwoClients from "./twoClients.js"

const text: Command = { kind: "text", target: "current" }

describe("model counterexamples: end-of-run reconciliation (store-equals-server)", () => {
  // Defect: no end-of-run reconciliation. The user message keeps its local id and timestamp, the
  // thread its local createdAt.
  it("a plain text run leaves the store equal to the server", () => replay([text], ["store-equals-server"]))

  // Defect: no end-of-run reconciliation. The partial text of a run the server failed stays in
  // the store; the server stored none of it.
  it("a run failed by RUN_ERROR after partial text leaves the store equal to the server", () =>
    replay([{ kind: "serverError", target: "current", afterText: true, twice: true }], ["store-equals-server"]))

  // Defect: no end-of-run reconciliation. After a dropped connection the server cancelled the run
  // (lastRunCancelled) and stored no assistant message; the store keeps an empty one, not cancelled.
  it("a dropped connection leaves the store equal to the server", () =>
    replay([{ kind: "drop", target: "current", afterEvents: 2 }], ["store-equals-server"]))
})

describe("model counterexamples: a tool round ending early strands the thread (thread-usable)", () => {
  // Defect: a tool round ending early strands the thread. The run paused for its tool calls and
  // finished on the server; cancelling while the tool runs leaves the server waiting for their
  // results, so the next run fails with "Missing tool results for pending tool calls".
  it("cancelRun while a tool runs", () =>
    replay([{ kind: "stop", target: "current", how: "cancelRun", at: "tool", reuseIds: false }], ["thread-usable"]))

  // Same defect, stopped while the call waits for approval.
  it("abort() while a call waits for approval", () =>
    replay([{ kind: "stop", target: "current", how: "abort", at: "approval", reuseIds: false }], ["thread-usable"]))

  // Same defect, leaving the `for await` loop while the tool runs.
  it("break out of the loop while a tool runs", () =>
    replay([{ kind: "stop", target: "current", how: "break", at: "tool", reuseIds: false }], ["thread-usable"]))

  // Same defect, seen by the next command: a plain run on the stranded thread fails.
  it("the run after a cancelled tool round ends as the model says", () =>
    replay(
      [{ kind: "stop", target: "current", how: "cancelRun", at: "tool", reuseIds: false }, text],
      ["run-outcome"]
    ))
})

describe("model counterexamples: tool results cached by call id (tool-once-and-own-result)", () => {
  // Defect: tool results cached by call id across threads. Two new threads at once, each with a
  // `call_0`: the second thread gets the first thread's result and its tool never runs.
  it("two new threads at once, each calling call_0", () =>
    replay([{ kind: "concurrentNew", tools: true, abortFirst: false, newBetween: false }], ["tool-once-and-own-result"]))

  // Same defect across runs of one thread: the second run's `call_0` gets the first run's result.
  it("two tool rounds on one thread, both calling call_0", () =>
    replay(
      [
        { kind: "tools", target: "current", mode: "ok", decision: "approve", calls: 1, reuseIds: true },
        { kind: "tools", target: "current", mode: "ok", decision: "approve", calls: 1, reuseIds: true }
      ],
      ["tool-once-and-own-result"]
    ))

  // Same defect, seen as an outcome: the tool of the second round never runs (its result is the
  // cached one), so a stop waiting for it never happens and the run ends normally.
  it("a stop during a call_0 tool round after another call_0 round ends the run as the model says", () =>
    replay(
      [
        { kind: "tools", target: "current", mode: "ok", decision: "approve", calls: 1, reuseIds: true },
        { kind: "stop", target: "current", how: "cancelRun", at: "tool", reuseIds: true }
      ],
      ["run-outcome"]
    ))
})

describe("model counterexamples: RUN_ERROR sent twice (one-terminal-event)", () => {
  // Defect: RUN_ERROR sent twice. The API writes RUN_ERROR twice; the stream delivers both.
  it("a run failed by RUN_ERROR (sent twice) delivers one", () =>
    replay([{ kind: "serverError", target: "current", afterText: false, twice: true }], ["one-terminal-event"]))
})

describe("model counterexamples: cancel before closing the connection (stop-is-user-cancel)", () => {
  // Defect: the connection is closed before the cancel is sent, so the server records
  // `connection_closed` for the run, not the user's cancel.
  it("cancelRun after RUN_STARTED", () =>
    replay([{ kind: "stop", target: "current", how: "cancelRun", at: 1, reuseIds: false }], ["stop-is-user-cancel"]))

  it("abort() mid-text", () =>
    replay([{ kind: "stop", target: "current", how: "abort", at: 3, reuseIds: false }], ["stop-is-user-cancel"]))

  it("break out of the loop mid-text", () =>
    replay([{ kind: "stop", target: "current", how: "break", at: 2, reuseIds: false }], ["stop-is-user-cancel"]))
})

describe("model counterexamples: after the fixes were merged", () => {
  // The reconciliation kept the client's lastRunCancelled for a run stopped in its tool round; the
  // server had ended that run (paused for the tool) and cancelled nothing, so the store said
  // cancelled where the server did not.
  it("cancelRun while a tool runs leaves the store equal to the server", () =>
    replay([{ kind: "stop", target: "current", how: "cancelRun", at: "tool", reuseIds: false }], ["store-equals-server"]))
})

describe("model: a stop while the server holds the request unanswered", () => {
  // Not counterexamples: the stops the property once left out, kept as named cases. The facade tells
  // the server through cancelRun, which waits for the run's name in the answer.
  for (const how of ["cancelRun", "abort", "break"] as const) {
    it(`${how} on a known thread`, () =>
      replay(
        [text, { kind: "stop", target: { known: 0 }, how, at: "request", reuseIds: false }],
        ["run-outcome", "stop-is-user-cancel", "store-equals-server", "thread-usable"]
      ))
  }
})

describe("model counterexamples: a thread another client deleted (deleted-thread-forgotten)", () => {
  // Defect: the store kept a thread the API no longer had. A run on it was refused (403, as the
  // API's thread guard answers), and the end-of-run read's 403 left the thread in the store.
  it("a run on a thread deleted elsewhere, after a manual tool round", () =>
    replay(
      [{ kind: "manual", target: "current", reuseIds: false, calls: 1 }, { kind: "deletedElsewhere", known: 0, then: "run" }],
      ["run-outcome", "deleted-thread-forgotten"]
    ))

  // The same defect, read the other ways: a fetch, a deletion of its own, and a run the server took just before.
  const how = { fetch: "fetchThread", delete: "deleteThread", midRun: "a run the server took before the deletion" }
  for (const then of ["fetch", "delete", "midRun"] as const) {
    it(`deleted elsewhere, then ${how[then]}`, () =>
      replay([text, { kind: "deletedElsewhere", known: 0, then }], ["run-outcome", "deleted-thread-forgotten"]))
  }
})

describe("model cases: a new conversation while a new thread's run has not started", () => {
  // The runs of the placeholder before the fix of startNewThread: the first run kept the
  // placeholder, so the second was recorded in a hidden thread and the user stayed in an empty
  // conversation (the command checks that the current thread is the second run's).
  it("startNewThread between two new-thread runs, the first answered", () =>
    replay([{ kind: "concurrentNew", tools: false, abortFirst: false, newBetween: true }], ["store-equals-server"]))

  it("startNewThread between two new-thread runs, the first aborted", () =>
    replay([{ kind: "concurrentNew", tools: true, abortFirst: true, newBetween: true }], ["store-equals-server"]))
})

describe("model: a stop after a run's last event, or paused for tools", () => {
  // Not counterexamples: the endings of the completed-run rule of abort(), kept as named cases. A
  // stop at the last RUN_FINISHED (or the CLIENT_AWAITING_TOOL_RESULTS of a manual run) lets the run
  // complete; one at a RUN_FINISHED that paused for tools cancels it; destroy() still interrupts.
  const checked = ["run-outcome", "stop-as-modelled", "store-equals-server", "thread-usable"] as const
  for (const how of ["abort", "cancelRun", "signal", "break"] as const) {
    for (const at of ["finished", "finishedAfterTools", "awaitingResults", "paused"] as const) {
      it(`${how} at ${at}`, () => replay([{ kind: "stop", target: "current", how, at, reuseIds: false }], [...checked]))
    }
  }
  it("abort at the last RUN_FINISHED, then destroy()", () =>
    replay([{ kind: "stop", target: "current", how: "abort", at: "finished", reuseIds: false, destroy: true }], [...checked]))
  it("abort mid-text, then destroy()", () =>
    replay([{ kind: "stop", target: "current", how: "abort", at: 3, reuseIds: false, destroy: true }], [...checked]))
})

describe("model counterexamples: a consumer that stopped reading (consumers.model.test.ts)", () => {
  // Defect: a run whose last event waited for room behind an iterator never read counted as
  // completed, so abort() did nothing, and the run, waiting for the iterator, never ended.
  it("abort() of a long run whose iterator was never read", () =>
    replay(
      [{ kind: "consumer", target: { known: 0 }, reader: "abandon", reads: 0, then: "abort", when: "reading", long: true }],
      ["command-settles"]
    ))

  // Defect: core cancels the run an "interrupt" run replaces, which takes effect only where the run
  // is read: the run waited for room its iterator never made, and the interrupting run for its end.
  it("a run sent with onBusy interrupt on a long run whose iterator was never read", () =>
    replay(
      [{ kind: "consumer", target: { known: 0 }, reader: "abandon", reads: 0, then: "interrupt", when: "reading", long: true }],
      ["command-settles"]
    ))

  // Defect: the run waited for room its iterator never made until core had its answer, and core,
  // told 404 (the server ended the run), waited for the run's last event behind that room: it gave
  // up after its bound, and the run the server completed ended cancelled.
  it("abort() of a long run the server ended, whose iterator was never read", () =>
    replay(
      [{ kind: "consumer", target: { known: 0 }, reader: "abandon", reads: 0, then: "abort", when: "serverDone", long: true }],
      ["run-outcome"]
    ))

  // Defect: a run queued inside the loop over its thread's run waited for that run, which waited
  // for room in the iterator of the loop that waited for the queued run.
  it("a run with onBusy queue read inside the loop over its thread's long run", () =>
    replay([{ kind: "nested", target: "current", at: 0, onBusy: "queue", long: true }], ["command-settles"]))

  // Shrunk from the one above while its loop still hung in the background, which left handles open
  // after destroy(); alone it holds every invariant.
  it("a run with onBusy queue read inside the loop over its thread's short run", () =>
    replay([{ kind: "nested", target: "current", at: 0, onBusy: "queue", long: false }]))
})

describe("two clients counterexamples (twoClients.model.test.ts)", () => {
  // Defect: cancelRun of a thread whose read showed another client's run (its status streaming)
  // cancelled nothing: the client held no id of that run, so the other tab's run went on, and the
  // command waited for an ending that never came.
  it("cancelRun by the tab whose read shows the other tab's run held mid-reply stops that run", () =>
    TwoClients.replay(
      [
        { kind: "start", who: "B", reply: "text", hold: "text" },
        { kind: "read", who: "A", late: false },
        { kind: "stop", who: "B", how: "otherCancelRun" }
      ],
      ["command-settles", "run-outcome", "store-equals-server"]
    ))

  // The same defect, the run held before its reply, shown to the other tab by the end of its own
  // run the server refused (RunConflictError).
  it("cancelRun by the tab whose refused run showed it the other tab's run stops that run", () =>
    TwoClients.replay(
      [
        { kind: "start", who: "B", reply: "text", hold: "gate" },
        { kind: "start", who: "A", reply: "text", hold: "none" },
        { kind: "stop", who: "B", how: "otherCancelRun" }
      ],
      ["command-settles", "run-outcome", "store-equals-server"]
    ))

  // Defect: of two reads of a thread in flight, the one sent first was applied when it answered
  // last. Here the cancel's read showed the thread idle; the read sent before it, answered while
  // the other tab's run streamed, came after and showed that run still streaming.
  it("a read answered after cancelRun read the thread again leaves the store as the later read", () =>
    TwoClients.replay(
      [
        { kind: "start", who: "B", reply: "text", hold: "text" },
        { kind: "start", who: "A", reply: "text", hold: "none" },
        { kind: "read", who: "A", late: true },
        { kind: "stop", who: "B", how: "otherCancelRun" }
      ],
      ["run-outcome", "store-equals-server"]
    ))
})

describe("model cases: overlapping runs on one thread (onBusy.model.test.ts)", () => {
  const held: OnBusy.Command = { kind: "start", onBusy: "queue", hold: "gate" }

  // An interrupting run its caller gives up on while its cancellation of the held run waits before
  // the server: the cancellation still reaches the server, and the held run ends cancelled.
  it("an interrupting run given up on while its DELETE is held", () =>
    OnBusy.replay([
      held,
      { kind: "cut", how: "interrupt", hold: "gate", holdDelete: "request", meanwhile: { kind: "abort", which: 1 } }
    ]))

  // A Stop whose DELETE the server answers late: a run sent meanwhile conflicts (reject), or waits
  // and then runs (queue), and sends its message once.
  it("a run started while a Stop's DELETE is unanswered", () =>
    OnBusy.replay([
      held,
      { kind: "stop", holdDelete: true, then: { onBusy: "reject", hold: "none" } },
      held,
      { kind: "stop", holdDelete: true, then: { onBusy: "queue", hold: "gate" } },
      { kind: "finish" }
    ]))

  // Runs asked for while the client's renewed user token is exchanged wait for the credentials:
  // a Stop ends them, having sent nothing (a `reject` run there too: it had not taken the thread).
  it("a Stop of runs waiting for their credentials", () =>
    OnBusy.replay([
      {
        kind: "credentials",
        runs: [{ onBusy: "reject", hold: "none" }, { onBusy: "reject", hold: "none" }],
        how: "stop",
        which: 0,
        exchange: "release"
      }
    ]))

  // An `interrupt` run whose exchange failed displaced nothing: the run before it ends with the
  // AuthError, having sent nothing, and the next token's runs go on.
  it("an interrupt run behind a run waiting for credentials whose exchange is refused", () =>
    OnBusy.replay([
      {
        kind: "credentials",
        runs: [{ onBusy: "reject", hold: "none" }, { onBusy: "interrupt", hold: "none" }],
        how: "none",
        which: 0,
        exchange: "fail"
      },
      { kind: "start", onBusy: "reject", hold: "none" }
    ]))

  // A Stop while the run's answer (which names it) comes late, and a run queued after the Stop:
  // the stopped run ends cancelled on the server once named, the queued one runs once it let go.
  it("a Stop while the run's answer is late, then a queued run", () =>
    OnBusy.replay([
      { kind: "lateAnswer", onBusy: "reject", how: "stop", hold: "none", meanwhile: { kind: "start", onBusy: "queue", hold: "none" } }
    ]))

  // A run queued behind the held run, then an interrupting one: the queued run took the thread
  // first once the held run ended, sent its message, and was cancelled then. It ends cancelled,
  // having sent nothing; the interrupting run starts once the held run ended.
  it("a queued run waiting when an interrupting run is asked for", () =>
    OnBusy.replay(
      [
        { kind: "start", onBusy: "reject", hold: "gate" },
        { kind: "start", onBusy: "queue", hold: "none" },
        { kind: "start", onBusy: "interrupt", hold: "none" }
      ],
      ["run-outcome", "stopped-never-sent", "start-order", "sent-once", "idle-and-equal"]
    ))
})

describe("model counterexamples: renaming a thread (store-equals-server)", () => {
  // Defect: the store took the new name but not the time the server changed the thread at, so the
  // renamed thread's updatedAt stayed the one before the rename.
  it("a rename at rest, after a tool round", () =>
    replay(
      [
        { kind: "tools", target: "current", mode: "ok", decision: "approve", calls: 1, reuseIds: false },
        { kind: "rename", known: 0, duringRun: false, via: "updateThreadName" }
      ],
      ["store-equals-server"]
    ))

  // Defect: a generated name came to the store without the time the server stored it at, so the
  // thread's updatedAt stayed the one before the name.
  it("a generated name at rest, after two runs at once", () =>
    replay(
      [
        { kind: "concurrent", a: 0, b: 0, tools: false },
        { kind: "rename", known: 0, duringRun: false, via: "generateThreadName" }
      ],
      ["store-equals-server"]
    ))
})

describe("model counterexamples: a component's state (store-equals-server)", () => {
  // Defect: the store took the component's new state but not the time the server changed the
  // thread at, which the server's answer does not carry, so the thread's updatedAt stayed the one
  // before the update.
  it("a component's state at rest, after the run that rendered it", () =>
    replay([{ kind: "component", target: "current" }, { kind: "componentState", known: 0 }], ["store-equals-server"]))
})

describe("model cases: a new conversation's local thread id once its run's thread is named (localId)", () => {
  // A run asked for with the local id started another new conversation; continueRun and cancelRun
  // of it reached nothing.
  it("a run with the local id goes on the thread the first run created", () =>
    replay([{ kind: "localId", then: "run" }], ["store-equals-server"]))
  it("a run with the local id while the first run still waits for the server goes on the thread it creates", () =>
    replay([{ kind: "localId", then: "runWhileCreating" }], ["store-equals-server"]))
  it("a rename with the local id renames that thread", () => replay([{ kind: "localId", then: "rename" }], ["store-equals-server"]))
  it("fetchThread with the local id reads that thread", () => replay([{ kind: "localId", then: "fetch" }], ["store-equals-server"]))
})

describe("model counterexamples: a server that notices a closed connection when the run next writes", () => {
  // Defect: abort() of a run the server had not answered yet, with another run of the client on
  // its thread (here the run interrupting it), closed its connection at once, so its cancellation
  // never learnt the run's id; the server held the thread until the run wrote next, and the
  // interrupting run, after its bounded retries, failed with RunConflictError.
  it("an interrupting run while the held run's answer is late, and the held run aborted meanwhile", () =>
    OnBusy.replayAgainst("onNextWrite")([
      { kind: "lateAnswer", onBusy: "reject", how: "interrupt", hold: "none", meanwhile: { kind: "abort", which: 0 } }
    ]))
})
