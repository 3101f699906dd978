// The model-based test of AG-UI runs through the facade: commands as plain data, one interpreter
// that plays them against ONE `new TamboClient({ agent: { url } })` talking to the scripted
// `AgUiAgent` on loopback, and the invariants checked after every command. The property
// (runs.model.test.ts) and the named counterexamples (counterexamples.test.ts) both go through
// `runSequence`. The model of the Tambo API path (../model/harness.ts) is the pattern.
//
// What a stopped tool round leaves (decided here, as the Tambo path does): the calls it did not
// answer stay the thread's `pendingToolCalls`, and the next message on the thread answers each
// (its tool's result if the tool finished, else an error result saying it was cancelled) before
// its own text. So the conversation the next run sends has a result for every call, and no call
// is run again. The invariant `unanswered-is-pending` checks the first half, `conversation-sent`
// the second.
import { AgUiAgent } from "@tambo-effect/testing"
import { FastCheck as fc } from "effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { isDeepStrictEqual } from "node:util"
import { toAgUiMessages } from "../../../core/src/internal/agui/runAgentInput.js"
import { TamboClient, type TamboStream, type TamboThreadMessage } from "../../src/index.js"
import * as Model from "../model/support.js"
import { type Outcome, parseProbe, PROBE_MODES, probeFields, settle, type Target, TOOL_TIMEOUT } from "../model/support.js"

export type { Execution } from "../model/support.js"

// -----------------------------------------------------------------------------
// The switch
// -----------------------------------------------------------------------------

/** Every invariant the harness checks, in the order it checks them after a command. */
export const INVARIANTS = [
  /** The command's runs end (a liveness bound, not a timing assertion). */
  "command-settles",
  /** Each run ends as the model says: its thread, or ApiError (RUN_ERROR), TransportError (drop), AbortError (stop). */
  "run-outcome",
  /** No unhandled rejection during the command. */
  "no-unhandled-rejection",
  /** No thread is left streaming; the calls without a result in a thread are exactly its pending ones. */
  "unanswered-is-pending",
  /**
   * Each tool call executed at most once; every result sent is its own call's; a call of the
   * probe the thread holds to run (`mustRun`: one started again elsewhere, left open, or renamed
   * or ended around a snapshot) ran.
   */
  "tool-once-and-own-result",
  /** The agent state of every thread equals the model's; no prototype was touched. */
  "agent-state",
  /** A plain text run on every thread the command touched succeeds. */
  "thread-usable",
  /**
   * What that run sent is the store's thread (messages, order, a result for every call, the
   * client's initial message at most once and first, the thread's agent state).
   */
  "conversation-sent",
  /**
   * Every run on a thread sends a valid conversation (each call has one result after it), and
   * what the run before it sent (or the MESSAGES_SNAPSHOT it got), message for message under the
   * same ids, then what came since: an agent that keeps its own copy by message id (as
   * LangGraph's does) sees one conversation.
   */
  "conversation-stable",
  /** After `client.destroy()`, no handle of the client is left open. */
  "no-open-handles"
] as const

/** @see INVARIANTS */
export type Invariant = (typeof INVARIANTS)[number]

/** Invariants a known open defect still breaks, left unchecked (as in model/harness.ts): none. */
export const KNOWN_OPEN: ReadonlySet<Invariant> = new Set<Invariant>([])

/** The switch, and the check of each invariant by name. */
const checks = new Model.Invariants<Invariant>(INVARIANTS, KNOWN_OPEN)

// -----------------------------------------------------------------------------
// Commands
// -----------------------------------------------------------------------------

export type { Target } from "../model/support.js"

/** What the probe tool does when executed. `approval` asks for approval first, then returns. */
export type ToolMode = "ok" | "throw" | "hang" | "approval"

/** What the step after a tool round does. */
export type After = "text" | "runError" | "drop" | "busy"

/** How a run is stopped early. */
export type StopHow = "cancelRun" | "abort" | "break"

/**
 * When: after this many stream elements (0: right after `run()`), while the tool runs, when
 * approval is asked, while the step after a tool round streams (`continuation`), or while the
 * request answered 503 waits to be sent again (`retry`), or once the agent called the tool and
 * goes on thinking, before its run finished (`call`).
 */
export type StopAt = number | "tool" | "approval" | "continuation" | "retry" | "call"

/** How a `loose` command's run leaves a call (see {@link Command}). */
export type LooseCall = "notOffered" | "besideProbe" | "snapshotOnly" | "resultDropped" | "answeredTwice"

/** One command: plain data, so a counterexample can be replayed as a table. */
export type Command =
  | { readonly kind: "text"; readonly target: Target }
  | {
    readonly kind: "tools"
    readonly target: Target
    readonly mode: ToolMode
    readonly decision: "approve" | "deny"
    readonly calls: 1 | 2
    /** What the run after the tool round does: reply, fail (RUN_ERROR after text), drop, or answer 503 once. */
    readonly after: After
    /** `call_0`, `call_1`, … in every run, as some providers do. */
    readonly reuseIds: boolean
    /** Who decides approvals: the app through the events, or the run's `onApproval` (one that throws denies). */
    readonly approveBy: "events" | "handler" | "throwingHandler"
    /**
     * After each call, the agent starts it again in the same message with other arguments, or
     * sends other arguments after its end: neither is the call's, as the thread reads it.
     * `restartElsewhere`: the agent first starts the call with other arguments, then, in another
     * message, again with its own: the latest start is the call. `unended`: the call has no
     * TOOL_CALL_END before RUN_FINISHED: it is closed there with all its arguments.
     */
    readonly repeat?: "none" | "restart" | "argsAfterEnd" | "restartElsewhere" | "unended" | undefined
  }
  /**
   * A tool round answered by the app: `autoExecuteTools: false`, then `continueRun` with the results.
   * `partialFirst`: a `continueRun` answering one of two calls comes first, which is refused as the
   * Tambo API refuses it (`MISSING_RESULTS`) and changes nothing.
   */
  | {
    readonly kind: "manual"
    readonly target: Target
    readonly calls: 1 | 2
    readonly reuseIds: boolean
    readonly partialFirst?: boolean | undefined
  }
  | { readonly kind: "stop"; readonly target: Target; readonly how: StopHow; readonly at: StopAt }
  /** The agent's RUN_ERROR after partial text (`afterCall`: and a call of the probe). */
  | { readonly kind: "runError"; readonly target: Target; readonly afterCall: boolean }
  /** The connection drops mid-stream, after partial text (`afterCall`: and a call of the probe). */
  | { readonly kind: "drop"; readonly target: Target; readonly afterCall: boolean }
  /** The agent answers 503 once, then the stream (the request is sent again). */
  | { readonly kind: "busy"; readonly target: Target }
  /** STATE_SNAPSHOT and STATE_DELTA from the agent; `hostile`: also a delta through `__proto__`. */
  | {
    readonly kind: "agentState"
    readonly target: Target
    readonly hostile: boolean
    /** How the run ends after its state events: RUN_FINISHED, RUN_ERROR or a dropped connection (what arrived stays). */
    readonly end: "finish" | "runError" | "drop"
  }
  /** The app's `setAgentState` on the thread. */
  | { readonly kind: "setState"; readonly target: Target }
  /**
   * The app's `setAgentState` on a run's thread while the run streams its reply (`stream`) or
   * waits for the approval of a call (`approval`).
   */
  | { readonly kind: "setStateDuringRun"; readonly target: Target; readonly at: "stream" | "approval" }
  /** A MESSAGES_SNAPSHOT: the conversation as received and a reply (`keep`), or only the last user message and a reply. */
  /**
   * `call`: the run also calls the probe, and the snapshot holds that call, as the agent has it
   * (`kept`), or leaves it out (`dropped`: the call is no longer the conversation's, nothing runs it).
   * `renamed`: the run streams the call under another tool's name, which the snapshot names the
   * probe (it runs as the probe); `beforeEnd`: the snapshot, holding the call with its arguments,
   * comes between the call's start and its end, with no arguments streamed (it runs with the
   * snapshot's).
   */
  | {
    readonly kind: "messagesSnapshot"
    readonly target: Target
    readonly keep: boolean
    readonly call: "none" | "kept" | "dropped" | "renamed" | "beforeEnd"
  }
  /**
   * The agent names its reply after the last message it was sent (some derive their ids so): the
   * user's, or after a round of the probe (`afterTool`), the tool result's.
   */
  | { readonly kind: "echoId"; readonly target: Target; readonly afterTool: boolean }
  /**
   * A run that finishes with a call not answered exactly once: it calls a tool the client did not
   * offer (`notOffered`), also beside a call of the probe (`besideProbe`); its MESSAGES_SNAPSHOT brings in a call of the probe it never streamed
   * (`snapshotOnly`); after a tool round, the next run's snapshot leaves out the result it was
   * sent (`resultDropped`); a server-side tool's call gets a second TOOL_CALL_RESULT
   * (`answeredTwice`).
   */
  | { readonly kind: "loose"; readonly target: Target; readonly how: LooseCall }
  /** Two runs at once on two threads (known ones, or new ones when fewer are known). */
  | { readonly kind: "concurrent"; readonly a: number; readonly b: number; readonly tools: boolean }
  /** `startNewThread()`, then two runs on the new conversation at once; `abortFirst`: the first is aborted once started. */
  /** `newBetween`: `startNewThread()` again between the two runs, while the first has not started. */
  | { readonly kind: "concurrentNew"; readonly tools: boolean; readonly abortFirst: boolean; readonly newBetween: boolean }
  /**
   * Two runs on one known thread at once, the second with `onBusy`: it waits for the first
   * (`queue`) or cancels it (`interrupt`). Without a known thread, a plain run.
   */
  | { readonly kind: "busyThread"; readonly known: number; readonly policy: "queue" | "interrupt"; readonly tools: boolean }
  | { readonly kind: "newThread" }
  | { readonly kind: "switch"; readonly known: number }

const target = Model.targetArbitrary

/** The generator of commands (weights favour the interesting ones). */
export const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("text" as const), target }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("tools" as const),
      target,
      mode: fc.constantFrom<ToolMode>("ok", "throw", "hang", "approval"),
      decision: fc.constantFrom<"approve" | "deny">("approve", "deny"),
      calls: fc.constantFrom<1 | 2>(1, 2),
      after: fc.constantFrom<After>("text", "text", "runError", "drop", "busy"),
      reuseIds: fc.boolean(),
      approveBy: fc.constantFrom<"events" | "handler" | "throwingHandler">("events", "events", "handler", "throwingHandler"),
      repeat: fc.constantFrom<"none" | "restart" | "argsAfterEnd" | "restartElsewhere" | "unended">(
        "none",
        "none",
        "restart",
        "argsAfterEnd",
        "restartElsewhere",
        "unended"
      )
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("manual" as const),
      target,
      calls: fc.constantFrom<1 | 2>(1, 2),
      reuseIds: fc.boolean(),
      partialFirst: fc.boolean()
    })
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("stop" as const),
      target,
      how: fc.constantFrom<StopHow>("cancelRun", "abort", "break"),
      at: fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constantFrom<StopAt>("tool", "approval", "continuation", "retry", "call"))
    })
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("runError" as const), target, afterCall: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("drop" as const), target, afterCall: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("busy" as const), target }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("echoId" as const), target, afterTool: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("agentState" as const),
      target,
      hostile: fc.boolean(),
      end: fc.constantFrom<"finish" | "runError" | "drop">("finish", "finish", "runError", "drop")
    })
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("setState" as const), target }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("setStateDuringRun" as const),
      target,
      at: fc.constantFrom<"stream" | "approval">("stream", "approval")
    })
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("messagesSnapshot" as const),
      target,
      keep: fc.boolean(),
      call: fc.constantFrom<"none" | "kept" | "dropped" | "renamed" | "beforeEnd">("none", "kept", "dropped", "renamed", "beforeEnd")
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("loose" as const),
      target,
      how: fc.constantFrom<LooseCall>("notOffered", "besideProbe", "snapshotOnly", "resultDropped", "answeredTwice")
    })
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("concurrent" as const), a: fc.nat(3), b: fc.nat(3), tools: fc.boolean() }) },
  { weight: 1, arbitrary: Model.concurrentNewCommand },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("busyThread" as const),
      known: fc.nat(3),
      policy: fc.constantFrom<"queue" | "interrupt">("queue", "interrupt"),
      tools: fc.boolean()
    })
  },
  { weight: 1, arbitrary: fc.constant({ kind: "newThread" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("switch" as const), known: fc.nat(3) }) }
)

// -----------------------------------------------------------------------------
// The agent's side: scenarios by message
// -----------------------------------------------------------------------------

/**
 * A run's script, built when the agent sees the request; `continued`: the script of the run
 * carrying the results of its tool round (default: "done").
 */
type Scenario = ((request: AgUiAgent.AgentRequest) => AgUiAgent.Script | Promise<AgUiAgent.Script>) & {
  continued?: (request: AgUiAgent.AgentRequest) => AgUiAgent.Script
}

/** An AG-UI message, as a snapshot carries it. */
type AgUiMessage = Parameters<typeof AgUiAgent.messagesSnapshot>[0][number]

interface ProbeResult {
  readonly thread: string
  readonly n: number
}

const ProbeArgs = Schema.Struct(probeFields)

/** Per-sequence state of the harness, and the model. */
export type { World }

class World extends Model.ModelWorld<Scenario> {
  /** THE MODEL: the agent state of each thread (absent: `{}`), by thread id or the current placeholder's. */
  readonly states = new Map<string, unknown>()
  /** The state an `agentState` command's run leaves, until the model takes it. */
  agentSaid: unknown = undefined
  /** The conversation each thread's last request sent (or the snapshot it got), by thread. */
  readonly lastSent = new Map<string, ReadonlyArray<unknown>>()
  /** The messages snapshot a run got, by its run id. */
  readonly snapshots = new Map<string, ReadonlyArray<unknown>>()
  /** How many of the agent's requests `conversation-stable` has looked at. */
  checkedRequests = 0
  /** The `n` of calls that must have run once their command ends (see `tool-once-and-own-result`). */
  readonly mustRun: Array<number> = []
  /** The state the app set while a run went on, until the model takes it. */
  setDuringRun: unknown = undefined
  constructor(readonly agent: AgUiAgent.AgUiAgent) {
    super()
  }

  /** Adds a thread runs went to (`known` keeps them in order). */
  learn(threadId: string): void {
    if (!this.known.includes(threadId)) this.known.push(threadId)
  }
}

let current: World | undefined

/**
 * The script the agent plays: by the last user message's tag. A run carrying tool results (the
 * next step of a tool round) says "done".
 */
export const agentScript: AgUiAgent.ScriptFn = (request) => {
  if (request.lastUserText === "ping") return [AgUiAgent.text("pong")]
  const scenario = request.lastUserText === undefined ? undefined : current?.scenarios.get(request.lastUserText)
  if (request.toolResults.length > 0) return scenario?.continued?.(request) ?? [AgUiAgent.text("done")]
  return scenario === undefined ? [AgUiAgent.text(`unknown scenario ${request.lastUserText}`)] : scenario(request)
}

const probeCalls = (
  world: World,
  request: AgUiAgent.AgentRequest,
  mode: (typeof PROBE_MODES)[number],
  calls: number,
  reuseIds = false
) =>
  Array.from({ length: calls }, (_, i) => {
    const n = world.nextN()
    const id = reuseIds ? `call_${i}` : `call_${n}`
    return { n, id, step: AgUiAgent.toolCall("probe", { n, thread: request.input.threadId, mode }, { id }) }
  })

/** An event written as it is, one frame. */
const rawEvent = (event: { readonly type: string } & Record<string, unknown>) => AgUiAgent.frame(`data: ${JSON.stringify(event)}\n\n`)

/**
 * A MESSAGES_SNAPSHOT of `messages` and a reply `text` (with a call of the probe, if any),
 * recorded as what the run got, and the reply's own steps, to stream before it.
 */
const snapshotReplying = (
  world: World,
  request: AgUiAgent.AgentRequest,
  messages: ReadonlyArray<AgUiMessage>,
  text: string,
  call?: { readonly id: string; readonly arguments: string }
): { readonly reply: AgUiAgent.Text; readonly snapshot: AgUiAgent.Event } => {
  const id = `snap-${request.input.messages.length}`
  const snapshot: Array<AgUiMessage> = [...messages, {
    id,
    role: "assistant",
    content: text,
    ...(call === undefined ? {} : { toolCalls: [{ id: call.id, type: "function" as const, function: { name: "probe", arguments: call.arguments } }] })
  }]
  world.snapshots.set(request.input.runId, snapshot)
  return { reply: AgUiAgent.text(text, { messageId: id }), snapshot: AgUiAgent.messagesSnapshot(snapshot) }
}

/** The agent's side of a `loose` command. */
const looseScenario = (world: World, how: LooseCall): Scenario => {
  switch (how) {
    case "notOffered":
      return () => [AgUiAgent.text("Looking. "), AgUiAgent.toolCall("lookup", { q: "x" }, { id: `lookup_${world.nextN()}` })]
    case "besideProbe":
      return (request) => [
        ...probeCalls(world, request, "ok", 1).map((call) => call.step),
        AgUiAgent.toolCall("lookup", { q: "x" }, { id: `lookup_${world.nextN()}` })
      ]
    case "snapshotOnly":
      return (request) => {
        const n = world.nextN()
        const args = JSON.stringify({ n, thread: request.input.threadId, mode: "ok" })
        const { reply, snapshot } = snapshotReplying(world, request, request.input.messages, "Snapshot.", { id: `call_${n}`, arguments: args })
        return [reply, snapshot]
      }
    case "resultDropped": {
      const scenario: Scenario = (request) => probeCalls(world, request, "ok", 1).map((call) => call.step)
      scenario.continued = (request) => {
        const { reply, snapshot } = snapshotReplying(world, request, request.input.messages.filter((m) => m.role !== "tool"), "Forgot it.")
        return [reply, snapshot]
      }
      return scenario
    }
    case "answeredTwice":
      return () => {
        const id = `search_${world.nextN()}`
        return [
          AgUiAgent.serverToolCall("search", { q: "x" }, "found", { id }),
          rawEvent({ type: "TOOL_CALL_RESULT", messageId: `again_${id}`, toolCallId: id, content: "found" })
        ]
      }
  }
}

// -----------------------------------------------------------------------------
// The client's side
// -----------------------------------------------------------------------------

const makeProbe = (world: () => World) =>
  Model.makeProbe({
    input: ProbeArgs,
    world,
    result: (args): ProbeResult => ({ thread: args.thread, n: args.n }),
    failure: (args) => `probe failed n=${args.n}`
  })

/** What the commands act on. */
export type Real = Model.Real<World>

const threadOf = (real: Real, t: Target): string | undefined => Model.threadOf(real.world, t)

/** Iterates a run to its end, deciding approvals as `decision` says. */
const drive = (real: Real, stream: TamboStream, decision: "approve" | "deny") => Model.drive(real.client, stream, decision)

/**
 * A `continueRun` that leaves one of the calls unanswered: refused with the Tambo API's
 * `MISSING_RESULTS` before anything is recorded or sent, so the thread stays as it was.
 */
const refusedWithoutAll = async (
  real: Real,
  answered: { readonly threadId: string; readonly results: ReadonlyArray<{ readonly toolCallId: string; readonly result: unknown }> }
): Promise<void> => {
  const before = real.client.getState().threadMap[answered.threadId]
  const sent = real.world.agent.requests.length
  const refused = await settle(real.client.continueRun(answered.threadId, answered.results.slice(1)).thread)
  const code = refused.ok ? undefined : (refused.error as { readonly code?: unknown }).code
  if (code !== "MISSING_RESULTS") throw new Error(`a continueRun leaving a call unanswered ended with ${refused.ok ? "success" : String(refused.error)}`)
  const after = real.client.getState().threadMap[answered.threadId]
  if (!isDeepStrictEqual(after?.thread.messages, before?.thread.messages) || !isDeepStrictEqual(after?.pendingToolCalls, before?.pendingToolCalls)) {
    throw new Error("a refused continueRun changed its thread")
  }
  if (real.world.agent.requests.length !== sent) throw new Error("a refused continueRun sent a request")
}

/** Plays one command; returns the streams it started. */
const play = async (real: Real, command: Command): Promise<ReadonlyArray<TamboStream>> => {
  const { world, client } = real
  const runOn = (t: Target, message: string) => client.run(message, { threadId: threadOf(real, t), toolTimeout: TOOL_TIMEOUT })
  const simple = async (t: Target, name: string, scenario: Scenario) => {
    const stream = runOn(t, world.scenario(name, scenario))
    await drive(real, stream, "approve")
    return [stream]
  }
  switch (command.kind) {
    case "text":
      return simple(command.target, "text", () => [AgUiAgent.text(["Hel", "lo"])])
    case "tools": {
      const scenario: Scenario = (request) => [
        AgUiAgent.text("Calling. "),
        ...probeCalls(world, request, command.mode, command.calls, command.reuseIds).flatMap((call): AgUiAgent.Script => {
          // Arguments no execution may see: a result made with them answers no call the thread holds.
          const other = JSON.stringify({ n: call.n + 1_000_000, thread: request.input.threadId, mode: command.mode })
          switch (command.repeat ?? "none") {
            case "none":
              return [call.step]
            case "restart":
              return [call.step, AgUiAgent.toolCall("probe", JSON.parse(other), { id: call.id })]
            case "argsAfterEnd":
              return [call.step, AgUiAgent.frame(`data: ${JSON.stringify({ type: "TOOL_CALL_ARGS", toolCallId: call.id, delta: other })}\n\n`)]
            case "restartElsewhere":
              if (command.mode === "ok") world.mustRun.push(call.n)
              return [AgUiAgent.toolCall("probe", JSON.parse(other), { id: call.id }), AgUiAgent.text("Again. "), call.step]
            case "unended": {
              // Long arguments whose last delta, which holds `n`, grows them by less than a quarter.
              const head = JSON.stringify({ mode: command.mode, thread: request.input.threadId, pad: "x".repeat(9000) })
              const tail = `,"n":${call.n}}`
              if (command.mode === "ok") world.mustRun.push(call.n)
              return [
                rawEvent({ type: "TOOL_CALL_START", toolCallId: call.id, toolCallName: "probe" }),
                rawEvent({ type: "TOOL_CALL_ARGS", toolCallId: call.id, delta: head.slice(0, -1) }),
                rawEvent({ type: "TOOL_CALL_ARGS", toolCallId: call.id, delta: tail })
              ]
            }
          }
        })
      ]
      let refused = false
      scenario.continued = () => {
        switch (command.after) {
          case "text":
            return [AgUiAgent.text("done")]
          case "runError":
            return [AgUiAgent.text("Partly done"), AgUiAgent.runError("The model failed", { code: "E_MODEL" })]
          case "drop":
            return [AgUiAgent.text(["Half ", "done"]), AgUiAgent.drop()]
          case "busy":
            if (refused) return [AgUiAgent.text("done after a 503")]
            refused = true
            return [AgUiAgent.httpError(503, { error: "busy" })]
        }
      }
      const handler = command.approveBy === "events" ? {} : {
        onApproval: (): Promise<{ readonly approved: boolean }> =>
          command.approveBy === "throwingHandler"
            ? Promise.reject(new Error("the handler failed"))
            : Promise.resolve({ approved: command.decision === "approve" })
      }
      const stream = client.run(world.scenario("tools", scenario), {
        threadId: threadOf(real, command.target),
        toolTimeout: TOOL_TIMEOUT,
        ...handler
      })
      await drive(real, stream, command.decision)
      return [stream]
    }
    case "stop":
      return [await stop(real, command)]
    case "manual": {
      const message = world.scenario("manual", (request) => [
        AgUiAgent.text("Manual. "),
        ...probeCalls(world, request, "ok", command.calls, command.reuseIds).map((call) => call.step)
      ])
      const stream = client.run(message, { threadId: threadOf(real, command.target), autoExecuteTools: false })
      const answered = await Model.answerByHand(
        world,
        stream,
        (args: Schema.Schema.Type<typeof ProbeArgs>): ProbeResult => ({ thread: args.thread, n: args.n })
      )
      if (answered === undefined) return [stream]
      if (command.partialFirst === true && answered.results.length > 1) await refusedWithoutAll(real, answered)
      const continued = client.continueRun(answered.threadId, answered.results)
      await drive(real, continued, "approve")
      return [stream, continued]
    }
    case "runError":
      return simple(command.target, "runError", (request) => [
        AgUiAgent.text("Partial"),
        ...(command.afterCall ? probeCalls(world, request, "ok", 1).map((call) => call.step) : []),
        AgUiAgent.runError("The model failed", { code: "E_MODEL" })
      ])
    case "echoId": {
      const echo = (request: AgUiAgent.AgentRequest) => [AgUiAgent.text("Echoed.", { messageId: request.input.messages.at(-1)!.id })]
      if (!command.afterTool) return simple(command.target, "echoId", echo)
      const scenario: Scenario = (request) => probeCalls(world, request, "ok", 1).map((call) => call.step)
      scenario.continued = echo
      return simple(command.target, "echoId", scenario)
    }
    case "drop":
      return simple(command.target, "drop", (request) => [
        AgUiAgent.text(["Half ", "a reply"]),
        ...(command.afterCall ? probeCalls(world, request, "ok", 1).map((call) => call.step) : []),
        AgUiAgent.drop()
      ])
    case "busy": {
      let refused = false
      return simple(command.target, "busy", () => {
        if (refused) return [AgUiAgent.text("after a 503")]
        refused = true
        return [AgUiAgent.httpError(503, { error: "busy" })]
      })
    }
    case "agentState": {
      const n = world.nextN()
      world.agentSaid = { run: n, items: ["x"] }
      return simple(command.target, "agentState", () => [
        AgUiAgent.stateSnapshot({ run: n, items: [] }),
        AgUiAgent.text("Stateful."),
        AgUiAgent.stateDelta([{ op: "add", path: "/items/-", value: "x" }]),
        ...(command.hostile ? [AgUiAgent.stateDelta([{ op: "add", path: "/__proto__/polluted", value: true }])] : []),
        ...(command.end === "runError" ? [AgUiAgent.runError("The model failed", { code: "E_MODEL" })] : []),
        ...(command.end === "drop" ? [AgUiAgent.drop()] : [])
      ])
    }
    case "setState": {
      const threadId = threadOf(real, command.target) ?? client.getState().currentThreadId
      const state = { app: world.nextN() }
      const set = await settle(Promise.resolve().then(() => client.setAgentState(state, threadId)))
      if (set.ok) world.states.set(threadId, state)
      return []
    }
    case "setStateDuringRun": {
      const message = world.scenario("setStateDuringRun", (request) =>
        command.at === "approval"
          ? [AgUiAgent.text("Asking. "), probeCalls(world, request, "approval", 1)[0]!.step]
          : [AgUiAgent.text(["one ", "two ", "three"])]
      )
      const stream = runOn(command.target, message)
      let set = false
      try {
        for await (const { event, threadId } of stream) {
          const now = command.at === "approval" ? event.type === "CLIENT_APPROVAL_REQUESTED" : event.type === "TEXT_MESSAGE_CONTENT"
          if (now && !set) {
            set = true
            const state = { app: world.nextN() }
            // The run's thread is known to the model once the command ends (a new one, maybe).
            world.setDuringRun = state
            client.setAgentState(state, threadId)
          }
          if (event.type === "CLIENT_APPROVAL_REQUESTED") client.approveToolCall(event.toolCallId)
        }
      } catch {
        // Judged by run-outcome.
      }
      return [stream]
    }
    case "messagesSnapshot":
      return simple(command.target, "messagesSnapshot", (request) => {
        const messages = request.input.messages
        const kept = command.keep ? messages : messages.filter((m, i) => i === messages.length - 1 && m.role === "user")
        const call = command.call === "none" ? undefined : probeCalls(world, request, "ok", 1)[0]
        const args = call === undefined ? "" : JSON.stringify({ n: call.n, thread: request.input.threadId, mode: "ok" })
        const held = call === undefined || command.call === "dropped" ? undefined : { id: call.id, arguments: args }
        const { reply: text, snapshot } = snapshotReplying(world, request, kept, "Replacing.", held)
        if (held !== undefined) world.mustRun.push(call!.n)
        switch (command.call) {
          case "none":
            return [text, snapshot]
          case "renamed":
            return [text, AgUiAgent.toolCall("lookup", JSON.parse(args), { id: call!.id }), snapshot]
          case "beforeEnd":
            return [
              text,
              rawEvent({ type: "TOOL_CALL_START", toolCallId: call!.id, toolCallName: "probe", parentMessageId: text.messageId }),
              snapshot,
              rawEvent({ type: "TOOL_CALL_END", toolCallId: call!.id })
            ]
          default:
            return [text, call!.step, snapshot]
        }
      })
    case "loose":
      return simple(command.target, "loose", looseScenario(world, command.how))
    case "concurrent": {
      const scenario: Scenario = (request) =>
        command.tools
          ? [AgUiAgent.text("Both. "), ...probeCalls(world, request, "ok", 1, true).map((call) => call.step)]
          : [AgUiAgent.text(["con", "current"])]
      // A new conversation starts with a state of its own.
      return Model.concurrentRuns(
        real,
        command,
        scenario,
        (stream) => drive(real, stream, "approve"),
        () => world.states.delete(client.startNewThread())
      )
    }
    case "busyThread": {
      const threadId = threadOf(real, { known: command.known })
      const scenario: Scenario = (request) =>
        command.tools
          ? [AgUiAgent.text("Busy. "), ...probeCalls(world, request, "ok", 1).map((call) => call.step)]
          : [AgUiAgent.text(["bu", "sy"])]
      // Without a known thread, a plain run: two on a new conversation are concurrentNew's.
      if (threadId === undefined) return simple("current", "busyThread", scenario)
      // The agent holds the first run's request until the second was started; interrupted, the
      // first never ends.
      let release: () => void = () => {}
      const released = new Promise<void>((resolve) => (release = resolve))
      let received: () => void = () => {}
      const receivedFirst = new Promise<void>((resolve) => (received = resolve))
      const held: Scenario = async (request) => {
        received()
        await released
        return command.policy === "interrupt" ? [AgUiAgent.text("first"), AgUiAgent.hang()] : scenario(request)
      }
      const first = client.run(world.scenario("busyThread", held), { threadId, toolTimeout: TOOL_TIMEOUT })
      await Promise.race([receivedFirst, settle(first.thread)])
      const second = client.run(world.scenario("busyThread", scenario), { threadId, toolTimeout: TOOL_TIMEOUT, onBusy: command.policy })
      release()
      if (command.policy === "interrupt") world.outcomes.set(first, "AbortError")
      await Promise.all([drive(real, first, "approve"), drive(real, second, "approve")])
      return [first, second]
    }
    case "concurrentNew": {
      world.states.delete(client.startNewThread())
      const scenario: Scenario = (request) =>
        command.tools
          ? [AgUiAgent.text("New. "), ...probeCalls(world, request, "ok", 1, true).map((call) => call.step)]
          : [AgUiAgent.text(["new", " thread"])]
      return Model.concurrentNewRuns(
        real,
        command.abortFirst,
        scenario,
        () => [AgUiAgent.text("new"), AgUiAgent.hang()],
        (stream) => drive(real, stream, "approve"),
        undefined,
        command.newBetween ? () => void world.states.delete(client.startNewThread()) : undefined
      )
    }
    case "newThread":
      // A new conversation starts with a state of its own: what the app set on the last one goes.
      world.states.delete(client.startNewThread())
      return []
    case "switch": {
      await Model.switchTo(real, command.known)
      return []
    }
  }
}

/** A run stopped early by `cancelRun`, `abort()` or leaving the loop. */
const stop = async (real: Real, command: Extract<Command, { kind: "stop" }>): Promise<TamboStream> => {
  const { world, client } = real
  let n: number | undefined
  let refused: () => void = () => {}
  const retrying = new Promise<void>((resolve) => (refused = resolve))
  const scenario: Scenario = (request) => {
    if (command.at === "tool" || command.at === "approval" || command.at === "continuation") {
      const mode = command.at === "tool" ? "block" : command.at === "approval" ? "approval" : "ok"
      const [call] = probeCalls(world, request, mode, 1)
      n = call!.n
      return [AgUiAgent.text("Stopping. "), call!.step]
    }
    if (command.at === "call") {
      return [AgUiAgent.text("Calling. "), probeCalls(world, request, "ok", 1)[0]!.step, AgUiAgent.hang()]
    }
    if (command.at === "retry") {
      refused()
      return [AgUiAgent.httpError(503, { error: "busy" })]
    }
    return [AgUiAgent.text(["a", "b", "c"]), AgUiAgent.hang()]
  }
  scenario.continued = () => [AgUiAgent.text(["a", "b"]), AgUiAgent.hang()]
  const message = world.scenario("stop", scenario)
  const requested = threadOf(real, command.target)
  // The tool round's tool never ends by itself: a long timeout, so only the stop ends it.
  const stream = client.run(message, { threadId: requested, toolTimeout: 10_000 })
  let afterRound = false
  return Model.stopRun({
    world,
    stream,
    command,
    threadId: requested ?? client.getState().currentThreadId,
    stop: (lastThreadId) => command.how === "cancelRun" ? settle(client.cancelRun(lastThreadId)) : stream.abort(),
    toolCall: () => n,
    before: async (doStop) => {
      if (command.at !== "retry") return
      // The 503 came; the request waits to be sent again (nothing arrives meanwhile).
      await Promise.race([retrying, settle(stream.thread)])
      await doStop()
    },
    reached: (event, seen) => {
      if (event.type === "CUSTOM" && event.name === "tambo.run.awaiting_input") afterRound = true
      return typeof command.at === "number"
        ? seen >= command.at
        : command.at === "continuation"
        ? afterRound && event.type === "TEXT_MESSAGE_CONTENT"
        : command.at === "call"
        ? event.type === "TOOL_CALL_END"
        : event.type === "CLIENT_APPROVAL_REQUESTED"
    }
  })
}

// -----------------------------------------------------------------------------
// Invariants
// -----------------------------------------------------------------------------

const expectedOutcome = (command: Command): Outcome => {
  switch (command.kind) {
    case "tools":
      return command.after === "runError" ? "ApiError" : command.after === "drop" ? "TransportError" : "ok"
    case "runError":
      return "ApiError"
    case "drop":
      return "TransportError"
    case "agentState":
      return command.end === "runError" ? "ApiError" : command.end === "drop" ? "TransportError" : "ok"
    case "stop":
      return "AbortError"
    default:
      return "ok"
  }
}

const contentText = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content.map((part: { type?: string; text?: string }) => (part.type === "text" ? part.text ?? "" : "")).join("")
    : ""

/** Tools ran once per call; every result the agent received is the one its call produced. */
const checkTools = (world: World) => {
  const seen = Model.executedOnce(world.executions)
  const ran = new Set(world.executions.map((execution) => execution.n))
  const missed = world.mustRun.filter((n) => !ran.has(n))
  world.mustRun.length = 0
  if (missed.length > 0) throw new Error(`the calls n=${missed.join(", ")} were never run`)
  for (const request of world.agent.requests) {
    const input = request.input
    if (input === undefined) continue
    const calls = new Map<string, number>()
    for (const message of input.messages) {
      if (message.role === "assistant") {
        for (const call of message.toolCalls ?? []) {
          const args = JSON.parse(call.function.arguments) as { n?: number }
          if (typeof args.n === "number") calls.set(call.id, args.n)
        }
      }
      if (message.role !== "tool") continue
      const probe = parseProbe<ProbeResult>(contentText(message.content))
      if (probe === undefined) continue
      const expected = calls.get(message.toolCallId)
      if (probe.thread !== input.threadId || probe.n !== expected) {
        throw new Error(`thread ${input.threadId}: the result for ${message.toolCallId} (n=${expected}) is ${contentText(message.content)}`)
      }
      if (!seen.has(`${probe.thread}/${message.toolCallId}/${probe.n}`)) {
        throw new Error(`thread ${input.threadId}: the result for ${message.toolCallId} was made by no execution`)
      }
    }
  }
}

/** The ids of the calls in `messages` (the probe's, or of a tool the client did not offer) that no later result answers. */
const unanswered = (messages: ReadonlyArray<TamboThreadMessage>): Array<string> => {
  const open = new Set<string>()
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === "tool_use") open.add(block.id)
      if (block.type === "tool_result") open.delete(block.toolUseId)
    }
  }
  return [...open]
}

/** What the client's `initialMessages` open every new conversation with. */
const INITIAL_TEXT = "You are the model's agent."

/**
 * A valid AG-UI conversation: every call has one result after it, every result a call before it;
 * the client's initial message at most once (an agent's snapshot may leave it out), and first.
 */
const checkValid = (
  threadId: string,
  messages: ReadonlyArray<{ role: string; content?: unknown; toolCalls?: ReadonlyArray<{ id: string }>; toolCallId?: string }>
) => {
  const initial = messages.flatMap((message, i) => message.role === "system" && message.content === INITIAL_TEXT ? [i] : [])
  if (initial.length > 1 || (initial.length === 1 && initial[0] !== 0)) {
    throw new Error(`thread ${threadId}: the initial message sent at ${JSON.stringify(initial)}, not once and first`)
  }
  const open = new Set<string>()
  const answered = new Set<string>()
  for (const message of messages) {
    for (const call of message.toolCalls ?? []) open.add(call.id)
    if (message.role === "tool") {
      const id = message.toolCallId!
      if (!open.has(id)) throw new Error(`thread ${threadId}: a result for ${id}, which no call before it made (or answered twice)`)
      open.delete(id)
      answered.add(id)
    }
  }
  if (open.size > 0) throw new Error(`thread ${threadId}: calls sent without a result: ${[...open].join(", ")}`)
}

/** The agent's requests since the last look: each is valid, and starts with what its thread's last one sent. */
const checkStable = (world: World) => {
  const requests = world.agent.requests
  for (; world.checkedRequests < requests.length; world.checkedRequests++) {
    const input = requests[world.checkedRequests]!.input
    if (input === undefined) continue
    checkValid(input.threadId, input.messages)
    const before = world.lastSent.get(input.threadId)
    if (before !== undefined) {
      const prefix = input.messages.slice(0, before.length)
      if (!isDeepStrictEqual(prefix, before)) {
        throw new Error(
          `thread ${input.threadId}: a run sent ${JSON.stringify(prefix)}\n  where the run before it sent ${JSON.stringify(before)}`
        )
      }
    }
    world.lastSent.set(input.threadId, world.snapshots.get(input.runId) ?? input.messages)
  }
}

const stateOf = (world: World, threadId: string): unknown => world.states.get(threadId) ?? {}

/** `current`: the current thread when the command started (a new conversation's placeholder, or a thread). */
const afterCommand = async (real: Real, command: Command, streams: ReadonlyArray<TamboStream>, current: string) => {
  // The app's state on a new conversation goes to the thread its run starts.
  const placeholder = current.startsWith("thr_") ? undefined : current
  const { world, client } = real
  const touched: Array<string> = []
  /** A run stopped before its thread started leaves its message in the new conversation. */
  let newConversation = false
  for (const stream of streams) {
    const id = await settle(stream.threadId)
    if (!id.ok || !id.value.startsWith("thr_")) {
      newConversation = true
      continue
    }
    // A run from a new conversation takes the state the app set on it.
    if (placeholder !== undefined && world.states.has(placeholder) && !world.known.includes(id.value)) {
      world.states.set(id.value, world.states.get(placeholder))
      world.states.delete(placeholder)
    }
    world.learn(id.value)
    if (!touched.includes(id.value)) touched.push(id.value)
  }
  // The agent's snapshot replaced the state of the run's thread, its delta added to it; a
  // hostile delta was refused.
  if (world.agentSaid !== undefined) for (const threadId of touched) world.states.set(threadId, world.agentSaid)
  if (world.setDuringRun !== undefined) for (const threadId of touched) world.states.set(threadId, world.setDuringRun)
  world.agentSaid = undefined
  world.setDuringRun = undefined
  await checks.settles(client, command)
  await checks.outcomes(
    streams,
    command.kind,
    (stream) => world.outcomes.get(stream) ?? expectedOutcome(command),
    (error) => (error as { _tag?: string; name?: string })._tag ?? (error as Error).name
  )
  await checks.noRejection(world)
  await checks.check("unanswered-is-pending", () => {
    for (const [threadId, thread] of Object.entries(client.getState().threadMap)) {
      if (thread.streaming.status !== "idle") throw new Error(`thread ${threadId} is left ${thread.streaming.status}`)
      const open = unanswered(thread.thread.messages).sort()
      const pending = thread.pendingToolCalls.map((call) => call.toolCallId).sort()
      if (!isDeepStrictEqual(open, pending)) {
        throw new Error(`thread ${threadId}: calls without a result ${JSON.stringify(open)}, pending ${JSON.stringify(pending)}`)
      }
    }
  })
  await checks.check("tool-once-and-own-result", () => checkTools(world))
  await checks.check("conversation-stable", () => checkStable(world))
  await checks.check("agent-state", () => {
    if (({} as Record<string, unknown>)["polluted"] !== undefined) throw new Error("Object.prototype was polluted")
    for (const threadId of [...world.known, client.getState().currentThreadId]) {
      const actual = client.getAgentState(threadId)
      if (!isDeepStrictEqual(actual, stateOf(world, threadId))) {
        throw new Error(`thread ${threadId}: agent state ${JSON.stringify(actual)}, the model says ${JSON.stringify(stateOf(world, threadId))}`)
      }
    }
  })
  // A run whose thread never started: the conversation it was on goes on (the current one).
  const conversations: Array<string | undefined> = [...touched]
  if (newConversation && client.getState().currentThreadId === current) conversations.push(undefined)
  for (const conversation of conversations) {
    const before = world.agent.requests.length
    let result: Awaited<ReturnType<typeof settle<unknown>>> | undefined
    let threadId = conversation ?? current
    await checks.check("thread-usable", async () => {
      const stream = client.run("ping", { threadId: conversation })
      const run = await settle(stream.thread)
      result = run
      const id = await settle(stream.threadId)
      if (id.ok) {
        threadId = id.value
        if (conversation === undefined && placeholder !== undefined && world.states.has(placeholder)) {
          world.states.set(threadId, world.states.get(placeholder))
          world.states.delete(placeholder)
        }
        world.learn(threadId)
      }
      Model.expectPong(threadId, run, run.ok ? client.getThread(threadId)?.messages.at(-1) : undefined)
    })
    if (result?.ok !== true) continue
    await checks.check("conversation-sent", () => {
      const requests = world.agent.requests.slice(before)
      if (requests.length !== 1) throw new Error(`a plain run on thread ${threadId} sent ${requests.length} requests`)
      const input = requests[0]!.input!
      const messages = client.getThread(threadId)!.messages
      // The store after the run: what was sent, then the reply.
      const expected = toAgUiMessages(messages.slice(0, -1))
      if (Either.isLeft(expected)) throw new Error(`the store's thread ${threadId} cannot be sent: ${expected.left.message}`)
      if (!isDeepStrictEqual(input.messages, expected.right)) {
        throw new Error(
          `thread ${threadId}: sent ${JSON.stringify(input.messages)}\n  the store has ${JSON.stringify(expected.right)}`
        )
      }
      checkValid(threadId, input.messages)
      if (!isDeepStrictEqual(input.state, stateOf(world, threadId))) {
        throw new Error(`thread ${threadId}: sent the state ${JSON.stringify(input.state)}, the model says ${JSON.stringify(stateOf(world, threadId))}`)
      }
    })
  }
  await checks.check("conversation-stable", () => checkStable(world))
}

// -----------------------------------------------------------------------------
// Sequences
// -----------------------------------------------------------------------------

/**
 * Plays `commands` against ONE fresh agent client of a fresh `AgUiAgent` (through
 * `fc.asyncModelRun`), checking every invariant after each, then destroys the client and checks
 * that it left no handle open.
 */
export const runSequence = (
  commands: Iterable<fc.AsyncCommand<object, Real, boolean>>,
  invariants: ReadonlySet<Invariant> = checks.defaults(),
  /** Called with the world and the client before they go, for tests of the harness itself. */
  inspect?: (world: World, client: TamboClient) => void
): Promise<void> =>
  Model.runSequence({
    invariants: checks,
    checking: invariants,
    open: async () => {
      const agent = await AgUiAgent.start({ script: agentScript })
      const world = new World(agent)
      return { world, close: () => agent.close() }
    },
    current: (world) => (current = world),
    client: (world) =>
      new TamboClient({
        agent: { url: world.agent.url },
        store: world.store(),
        tools: [makeProbe(() => world)],
        initialMessages: [{ role: "system", content: [{ type: "text", text: INITIAL_TEXT }] }]
      }),
    commands,
    inspect: inspect === undefined ? undefined : (real) => inspect(real.world, real.client)
  })

/** Plays one command, then checks the invariants (`placeholder`: the current thread before it). */
const playAndCheck = async (real: Real, command: Command): Promise<void> => {
  const placeholder = real.client.getState().currentThreadId
  const streams = await checks.liveness(play(real, command), command)
  await afterCommand(real, command, streams, placeholder)
}

/** Replays a list of commands (a counterexample) as the property plays it. */
export const replay: (
  commands: ReadonlyArray<Command>,
  invariants?: ReadonlyArray<Invariant>,
  inspect?: (world: World, client: TamboClient) => void
) => Promise<void> = Model.replayer(playAndCheck, runSequence)

/** The commands arbitrary of the property. */
export const commandsArbitrary = (maxCommands: number, replayPath?: string) =>
  Model.modelCommands(commandArbitrary, playAndCheck, maxCommands, replayPath)
