// The counterexamples the model-based test of AG-UI runs (runs.model.test.ts) shrank to, replayed
// as named tests. Each checks the invariant it broke (with thread-usable, whose plain run is what
// shows it); the comment names the defect it found.
import { describe, it } from "vitest"
import { type Command, replay } from "./harness.js"

describe("model counterexamples: the user's message under two ids (conversation-stable)", () => {
  // Defect: a new thread's first request named the user's message `user_<runId>` (and its
  // initial messages `initial_<i>_<runId>`) while the store, and so every later request, named it
  // `local_user_…`: an agent that keeps its copy of the conversation by message id saw the
  // message twice.
  it("a text run on a new thread, then another", () =>
    replay([{ kind: "text", target: "current" }], ["conversation-stable", "thread-usable"]))

  // Same defect, within one run: its tool round's next request sent the message under the other id.
  it("a tool round on a new thread", () =>
    replay(
      [{ kind: "tools", target: "current", mode: "ok", decision: "approve", calls: 1, after: "text", reuseIds: false, approveBy: "events" }] satisfies Array<Command>,
      ["conversation-stable"]
    ))

  // Same defect, seen as a store that is not what was sent (conversation-sent): a run stopped
  // before it started leaves its message in the new conversation; the next run there sent only
  // its own message, the store shows both.
  for (const how of ["abort", "cancelRun"] as const) {
    it(`${how} right after run() on a new conversation, then a run on it`, () =>
      replay([{ kind: "stop", target: "current", how, at: 0 }], ["conversation-sent", "thread-usable"]))
  }

  // Same defect, shrunk from a stop: the cancelled round's next request, on the new thread.
  it("cancelRun while a tool runs on a new thread", () =>
    replay([{ kind: "stop", target: "current", how: "cancelRun", at: "tool" }], ["conversation-stable", "thread-usable"]))
})

describe("model counterexamples: a call left without a result by a failed run (unanswered-is-pending)", () => {
  // Defect: a run that failed after the agent called a tool (RUN_ERROR, or the connection dropped,
  // before RUN_FINISHED) left the call in the thread without a result and not pending, so the next
  // run sent a call without a result, which an agent refuses or trips on. Such a call is now
  // pending: the next message answers it as cancelled.
  it("RUN_ERROR after a tool call", () =>
    replay([{ kind: "runError", target: "current", afterCall: true }], ["unanswered-is-pending", "thread-usable", "conversation-sent"]))

  it("a dropped connection after a tool call", () =>
    replay([{ kind: "drop", target: "current", afterCall: true }], ["unanswered-is-pending", "thread-usable", "conversation-sent"]))

  // The next run's conversation was invalid: it sent the call without a result.
  it("RUN_ERROR after a tool call, then a run on the thread", () =>
    replay([{ kind: "runError", target: "current", afterCall: true }], ["thread-usable", "conversation-sent"]))
})

describe("model counterexamples: a new conversation's run cancelled before RUN_STARTED (agent-state)", () => {
  // Defect: a new thread's run stopped before its RUN_STARTED moved the new conversation to the
  // thread id the client had made up for the agent, as for a thread the Tambo API named in its
  // response's headers; its agent state went along, while the conversation (and so the model)
  // stays the one the app set the state on.
  it("the app sets the new conversation's agent state, then a run there is cancelled before it starts", () =>
    replay(
      [{ kind: "setState", target: "current" }, { kind: "stop", target: { known: 0 }, how: "cancelRun", at: 0 }] satisfies Array<Command>,
      ["agent-state", "thread-usable"]
    ))
})

describe("model cases: a new conversation while a new thread's run has not started", () => {
  // The command checks that the current thread is the second run's: the first run, which left the
  // placeholder, goes on in a thread of its own, and the conversation sent with each run is its own.
  it("startNewThread between two new-thread runs", () =>
    replay([{ kind: "concurrentNew", tools: true, abortFirst: false, newBetween: true }], ["conversation-sent", "thread-usable"]))

  it("startNewThread between two new-thread runs, the first aborted", () =>
    replay([{ kind: "concurrentNew", tools: false, abortFirst: true, newBetween: true }], ["conversation-sent", "thread-usable"]))
})

describe("model counterexamples: a call a messages snapshot leaves out (run-outcome, thread-usable)", () => {
  // Defect: the run paused for a call of the app's tool that the agent's MESSAGES_SNAPSHOT, later
  // in the same run, left out of the conversation; the tool ran, and its result answered a call
  // the thread no longer held, so that run and every later one on the thread failed with
  // AgUiError (InvalidInput) before any request.
  for (const keep of [true, false]) {
    it(`the run calls the probe, then its snapshot (${keep ? "the whole conversation" : "the last message"}) leaves the call out`, () =>
      replay([{ kind: "messagesSnapshot", target: "current", keep, call: "dropped" }], ["run-outcome", "thread-usable"]))
  }
})

describe("model counterexamples: the client's initialMessages sent twice (conversation-sent)", () => {
  // Defect: a new conversation whose first run stopped or failed before its thread started held
  // the initial messages and the user's message; the next run there recorded the initial
  // messages again, after them, and sent both copies.
  for (const how of ["abort", "cancelRun"] as const) {
    it(`${how} right after run() on a new conversation, then a run on it`, () =>
      replay([{ kind: "stop", target: "current", how, at: 0 }], ["conversation-sent", "thread-usable"]))
  }
})

describe("model counterexamples: a reply under the id of the message it answers (conversation-stable)", () => {
  // Defect: an agent's reply named after the last message it was sent was written into that
  // message: the user's message took the reply's text, and after a tool round the reply came
  // between the call and its result, whose id then changed in every later request.
  for (const afterTool of [false, true]) {
    it(`the agent's reply under the id of ${afterTool ? "the tool result" : "the user's message"}, then a run`, () =>
      replay([{ kind: "echoId", target: "current", afterTool }], ["conversation-stable", "conversation-sent", "thread-usable"]))
  }
})

describe("model counterexamples: a client tool run with arguments the thread does not hold (tool-once-and-own-result)", () => {
  // Defect: an agent that started a call again in the same message had the tool run with the
  // second start's arguments, while the thread (and every later request) kept the first's: the
  // agent got a result made for a call it never saw.
  it("a tool round whose call is started again in its message with other arguments", () =>
    replay(
      [{ kind: "tools", target: { known: 0 }, mode: "ok", decision: "approve", calls: 1, after: "text", reuseIds: false, approveBy: "events", repeat: "restart" }] satisfies Array<Command>,
      ["tool-once-and-own-result", "thread-usable"]
    ))
})

describe("model counterexamples: a finished run's call not answered exactly once (unanswered-is-pending, conversation-sent)", () => {
  // Defect: a run that finished with a call nothing answered (a tool the client did not offer, a
  // call only a snapshot brought in, a result the agent's snapshot left out) left it neither
  // answered nor pending, and a call answered twice kept both results: every later run sent a
  // conversation an agent refuses. The call is now pending, the next message answers it as
  // cancelled, and only a call's first result is sent. Beside a call of the client's, the tool
  // round's own next request sent the other call without a result: the round now answers it.
  for (const how of ["notOffered", "besideProbe", "snapshotOnly", "resultDropped", "answeredTwice"] as const) {
    it(`${how}, then a run on the thread`, () =>
      replay([{ kind: "loose", target: "current", how }], ["unanswered-is-pending", "conversation-sent", "conversation-stable", "thread-usable"]))
  }
})

describe("model counterexamples: a continueRun that leaves a call unanswered", () => {
  // Defect: after a run paused on two calls, a continueRun with the result of one sent the other
  // to the agent without a result, and it stayed pending. It is now refused as the Tambo API
  // refuses it (MISSING_RESULTS), before anything is recorded or sent.
  it("a manual round of two calls, answered one call first", () =>
    replay([{ kind: "manual", target: "current", calls: 2, reuseIds: false, partialFirst: true }], ["thread-usable"]))
})
