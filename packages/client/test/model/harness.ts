// The model-based test of a run's lifecycle: commands as plain data, one interpreter that plays
// them against ONE TamboClient talking to the testing server, and the invariants checked after
// every command. The property (lifecycle.model.test.ts) and the named counterexamples
// (counterexamples.test.ts) both go through `runSequence`.
import { Script, startTestServer, type TestServer } from "@tambo-effect/testing"
import { FastCheck as fc } from "effect"
import * as Schema from "effect/Schema"
import { type BusyPolicy, type ClientState, EVENT_BUFFER, RunConflictError, TamboClient, type TamboStream } from "../../src/index.js"
import { storeMatchesServer } from "./storeMatchesServer.js"
import * as Model from "./support.js"
import {
  type Decision,
  eventually,
  type Outcome,
  parseProbe,
  PROBE_MODES,
  probeFields,
  settle,
  type Target,
  TOOL_TIMEOUT
} from "./support.js"

export type { Decision, Execution } from "./support.js"

// -----------------------------------------------------------------------------
// The switch
// -----------------------------------------------------------------------------

/** Every invariant the harness checks, in the order it checks them after a command. */
export const INVARIANTS = [
  /** The command's runs end (a liveness bound, not a timing assertion). */
  "command-settles",
  /** Each run ends as the model says: its thread, or ApiError (RUN_ERROR), TransportError (drop), AbortError (stop). */
  "run-outcome",
  /** A run's stream delivers one terminal event per RUN_STARTED, and nothing after a RUN_ERROR. */
  "one-terminal-event",
  /** A stop after RUN_STARTED reaches the server as a cancel (`user_cancelled`), not as a closed connection. */
  "stop-is-user-cancel",
  /**
   * A stopped run ends as the server has it: resolved with the server's completed thread and no
   * cancel recorded (stopped after its last event); rejected with AbortError and the run cancelled
   * on the server where the server's run was still going, or not cancelled where it had ended
   * (paused for tools, completed); and once its stream settled no run of it is in flight.
   */
  "stop-as-modelled",
  /**
   * A consumer that stopped reading (without `return()`) holds no run past its stop: the run
   * settles, and the iterator then yields what it holds and ends as the run did (its error, or
   * done); a run that resolved gave a consumer that read on every event, to its last. So does a
   * loop that read another run of its thread to its end inside its body (`nested`).
   */
  "consumer-as-modelled",
  /** No unhandled rejection during the command. */
  "no-unhandled-rejection",
  /** Every thread the client knows equals the server's (storeMatchesServer). */
  "store-equals-server",
  /** A thread another client deleted is not in the store once this client read it (a run on it, a fetch). */
  "deleted-thread-forgotten",
  /** `forgetThread` drops exactly a stored thread that is not current, and nothing comes back until it is used. */
  "forget-as-modelled",
  /** Each tool call executed at most once, and every result the server got is its own call's. */
  "tool-once-and-own-result",
  /** No state the client published showed a call's input with a `null` of the API's strict mode. */
  "no-strict-null-shown",
  /** A plain text run on every thread the command touched succeeds. */
  "thread-usable",
  /** After `client.destroy()`, no handle of the client is left open. */
  "no-open-handles"
] as const

/** @see INVARIANTS */
export type Invariant = (typeof INVARIANTS)[number]

/**
 * Invariants the property does not check, because a known defect still breaks them; the named
 * counterexamples (counterexamples.test.ts) check each one alone, as `it.fails`. Empty: none is
 * open. Once a defect is fixed, its invariant leaves this set and its `it.fails` becomes `it`.
 */
export const KNOWN_OPEN: ReadonlySet<Invariant> = new Set<Invariant>([])

// -----------------------------------------------------------------------------
// Commands
// -----------------------------------------------------------------------------

export type { Target } from "./support.js"

/** What the probe tool does when executed. `approval` asks for approval first, then returns. */
export type ToolMode = "ok" | "throw" | "hang" | "approval"

/** How this client reads a thread another client deleted (see the `deletedElsewhere` command). */
export type DeletedThen = "run" | "fetch" | "delete" | "midRun"

/** How a run is stopped early: `signal` aborts the `signal` it was started with. */
export type StopHow = "cancelRun" | "cancelCurrent" | "abort" | "break" | "signal"

/**
 * When: after this many stream elements (0: right after `run()`), once the server has the request
 * but before it answered (`request`: no `RUN_STARTED` yet), while the tool runs, or when approval
 * is asked. At a `RUN_FINISHED`: the run's last (`finished`, of a text run; `finishedAfterTools`,
 * after a tool round), or one that paused for tools (`paused`); `awaitingResults`: at the
 * `CLIENT_AWAITING_TOOL_RESULTS` a manual run ends with. `cancelCurrent` is `cancelRun()` without
 * a thread, on a run started without one.
 */
export type StopAt = number | "request" | "tool" | "approval" | "finished" | "finishedAfterTools" | "paused" | "awaitingResults"

/** The stops after a run's last event: the run completed on the server. */
const COMPLETED_AT: ReadonlyArray<StopAt> = ["finished", "finishedAfterTools", "awaitingResults"]

/** One command: plain data, so a counterexample can be replayed as a table. */
export type Command =
  | { readonly kind: "text"; readonly target: Target }
  | { readonly kind: "reasoning"; readonly target: Target }
  | { readonly kind: "component"; readonly target: Target }
  | {
    readonly kind: "tools"
    readonly target: Target
    readonly mode: ToolMode
    readonly decision: Decision
    readonly calls: 1 | 2
    /** `call_0`, `call_1`, … in every response and every thread, as some providers do. */
    readonly reuseIds: boolean
  }
  | { readonly kind: "serverError"; readonly target: Target; readonly afterText: boolean; readonly twice: boolean }
  | { readonly kind: "drop"; readonly target: Target; readonly afterEvents: number }
  | {
    readonly kind: "stop"
    readonly target: Target
    readonly how: StopHow
    readonly at: StopAt
    readonly reuseIds: boolean
    /** `destroy()` right after the stop: the run is played by a client of its own, destroyed then. */
    readonly destroy?: boolean
  }
  | { readonly kind: "manual"; readonly target: Target; readonly reuseIds: boolean; readonly calls: 1 | 2 }
  | { readonly kind: "newThread" }
  | { readonly kind: "switch"; readonly known: number }
  /** Two runs at once on two threads (known ones, or new ones when fewer are known). */
  | { readonly kind: "concurrent"; readonly a: number; readonly b: number; readonly tools: boolean }
  /**
   * `startNewThread()`, then two runs on the placeholder at once; `abortFirst`: the first is aborted once started;
   * `newBetween`: `startNewThread()` again before the second, while the first has not started.
   */
  | { readonly kind: "concurrentNew"; readonly tools: boolean; readonly abortFirst: boolean; readonly newBetween: boolean }
  /**
   * Another client (a second tab) deletes the i-th known thread, then this client reads it: a run
   * on it (`run`, refused), `fetchThread` (`fetch`, refused), `deleteThread` (`delete`, refused), or a run on it that the server took
   * just before the deletion (`midRun`: it streams to its end).
   */
  | { readonly kind: "deletedElsewhere"; readonly known: number; readonly then: DeletedThen }
  /** `forgetThread` of the i-th known thread: it leaves the store, not the server, until a run or a switch uses it. */
  | { readonly kind: "forget"; readonly known: number }
  /**
   * The i-th known thread named by this client, `via` `updateThreadName` (a new name) or
   * `generateThreadName` (the server makes one): at rest, or (`duringRun`) sent once the server got
   * a run's request on it, the run streaming on after the server took the name.
   */
  | { readonly kind: "rename"; readonly known: number; readonly duringRun: boolean; readonly via: RenameVia }
  /**
   * The first component of the i-th known thread, as the server holds it, given a new state by this
   * client (`updateComponentState`), at rest; nothing for a thread with no component. A run the
   * server still holds on the thread refuses it (`RunConflictError`).
   */
  | { readonly kind: "componentState"; readonly known: number }
  /**
   * A new conversation's run moved to a local thread of its own (`startNewThread()` once the server
   * got its request, before it named the thread), then a call with the local id the state showed:
   * once the server named the thread, `updateThreadName` (`rename`), `fetchThread` (`fetch`) or a
   * run (`run`); or, while the first run still waits for the server, a run queued on it
   * (`runWhileCreating`). Each acts on the thread the first run created.
   */
  | { readonly kind: "localId"; readonly then: LocalThen }
  /**
   * A run's events read by a consumer that is `slow` (a turn of the event loop per event, to the
   * end), that `return`s after `reads` events, or that stops reading after `reads` events without
   * `return()` (`abandon`), after which `then` stops the run (`destroy`: the run is played by a
   * client of its own, destroyed then; `interrupt`: a text run sent with `onBusy: "interrupt"`). The stop comes at once, or once the server's run ended
   * (`serverDone`); `long`: more events than an iterator's buffer holds.
   */
  | {
    readonly kind: "consumer"
    readonly target: Target
    readonly reader: ConsumerReader
    readonly reads: number
    readonly then: ConsumerStop
    readonly when: "reading" | "serverDone"
    readonly long: boolean
  }
  /**
   * A run read in a `for await` loop that, as it takes the run's event `at`, starts a text run on
   * that run's thread with `onBusy` and reads it to its end in the loop's body, then reads on;
   * `long`: the first run has more events than an iterator's buffer holds.
   */
  | { readonly kind: "nested"; readonly target: Target; readonly at: number; readonly onBusy: BusyPolicy; readonly long: boolean }

/** How a consumer reads a run's events (see the `consumer` command). */
export type ConsumerReader = "slow" | "return" | "abandon"

/** How a `rename` command names its thread. */
export type RenameVia = "updateThreadName" | "generateThreadName"

/** What a `localId` command does with a new conversation's local thread id. */
export type LocalThen = "rename" | "fetch" | "run" | "runWhileCreating"

/** What stops a run whose consumer stopped reading (see the `consumer` command). */
export type ConsumerStop = "abort" | "cancelRun" | "destroy" | "interrupt"

const target = Model.targetArbitrary

/** A `consumer` command. */
export const consumerCommand: fc.Arbitrary<Command> = fc.record({
  kind: fc.constant("consumer" as const),
  target,
  reader: fc.constantFrom<ConsumerReader>("slow", "return", "abandon"),
  reads: fc.integer({ min: 0, max: 3 }),
  then: fc.constantFrom<ConsumerStop>("abort", "cancelRun", "destroy", "interrupt"),
  when: fc.constantFrom<"reading" | "serverDone">("reading", "serverDone"),
  long: fc.boolean()
})

/** A `nested` command. */
export const nestedCommand: fc.Arbitrary<Command> = fc.record({
  kind: fc.constant("nested" as const),
  target,
  at: fc.integer({ min: 0, max: 3 }),
  onBusy: fc.constantFrom<BusyPolicy>("interrupt", "queue", "reject"),
  long: fc.boolean()
})

/** The generator of commands (weights favour the interesting ones). */
export const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("text" as const), target }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("reasoning" as const), target }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("component" as const), target }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("tools" as const),
      target,
      mode: fc.constantFrom<ToolMode>("ok", "throw", "hang", "approval"),
      decision: fc.constantFrom<Decision>("approve", "approveEdited", "deny"),
      calls: fc.constantFrom<1 | 2>(1, 2),
      reuseIds: fc.boolean()
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("serverError" as const), target, afterText: fc.boolean(), twice: fc.boolean() })
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("drop" as const), target, afterEvents: fc.integer({ min: 1, max: 5 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("stop" as const),
      target,
      how: fc.constantFrom<StopHow>("cancelRun", "cancelCurrent", "abort", "break", "signal"),
      at: fc.oneof(
        fc.integer({ min: 0, max: 5 }),
        fc.constantFrom<StopAt>("request", "tool", "approval", "finished", "finishedAfterTools", "paused", "awaitingResults")
      ),
      reuseIds: fc.boolean(),
      destroy: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })
    })
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("manual" as const), target, reuseIds: fc.boolean(), calls: fc.constantFrom<1 | 2>(1, 2) })
  },
  { weight: 1, arbitrary: fc.constant({ kind: "newThread" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("switch" as const), known: fc.nat(3) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("concurrent" as const), a: fc.nat(3), b: fc.nat(3), tools: fc.boolean() }) },
  { weight: 1, arbitrary: Model.concurrentNewCommand },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("deletedElsewhere" as const),
      known: fc.nat(3),
      then: fc.constantFrom<DeletedThen>("run", "fetch", "delete", "midRun")
    })
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("forget" as const), known: fc.nat(3) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("rename" as const),
      known: fc.nat(3),
      duringRun: fc.boolean(),
      via: fc.constantFrom<RenameVia>("updateThreadName", "generateThreadName")
    })
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("componentState" as const), known: fc.nat(3) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("localId" as const),
      then: fc.constantFrom<LocalThen>("rename", "fetch", "run", "runWhileCreating")
    })
  }
)

// -----------------------------------------------------------------------------
// The server's side: scenarios by message
// -----------------------------------------------------------------------------

/** A run's script, built when the server sees the request (tool arguments carry the thread's id). */
type Scenario = (request: Script.RunRequest) => Script.Script | Promise<Script.Script>

/** What the probe returns, and what the checks read back from the server. */
interface ProbeResult {
  readonly thread: string
  readonly toolCallId: string
  readonly n: number
  readonly edited?: boolean
}

const ProbeArgs = Schema.Struct({ ...probeFields, edited: Schema.optional(Schema.Boolean) })

/** Per-sequence state of the harness. */
class World extends Model.ModelWorld<Scenario> {
  /** The runs the server started for each scenario message. */
  readonly runs = new Map<string, Array<{ readonly threadId: string; readonly runId: string }>>()
  /** The events each stream delivered (a custom event by its name). */
  readonly delivered = new Map<TamboStream, Array<string>>()
  /** The message of the last scenario registered. */
  lastScenario = ""
  /** Threads another client deleted, once this client read them (see `deletedElsewhere`). */
  readonly deleted: Array<string> = []
  /** Threads `forgetThread` dropped, until the store holds them again. */
  readonly forgotten = new Set<string>()
  /** The last `forget` command's thread, what the model expected of it, and what it did. */
  lastForget: { readonly threadId: string; readonly expected: boolean; readonly forgot: boolean } | undefined
  /** Each stop command's stream: how many cancels the server had recorded before it, and whether its client was destroyed. */
  readonly stops = new Map<TamboStream, { readonly cancelsBefore: number; readonly destroyed: boolean }>()
  /** What consumers saw that the model does not allow (see `consumer-as-modelled`). */
  readonly consumerFaults: Array<string> = []
  /** The first call input a published state showed with a `null` (the probe's `edited` sent so), if any. */
  nullShown: string | undefined
  /** How many names `rename` commands gave: each name is new. */
  names = 0
  /** How many states `componentState` commands gave: each state is new. */
  states = 0

  /** Looks at a state the client published. */
  watch(state: ClientState): void {
    if (this.nullShown !== undefined) return
    for (const [threadId, thread] of Object.entries(state.threadMap)) {
      for (const message of thread.thread.messages) {
        for (const block of message.content) {
          if (block.type === "tool_use" && Object.values(block.input).includes(null)) {
            this.nullShown = `thread ${threadId}, call ${block.id}: ${JSON.stringify(block.input)}`
            return
          }
        }
      }
    }
  }

  constructor(readonly server: TestServer) {
    super()
  }

  override scenario(name: string, scenario: Scenario): string {
    this.lastScenario = super.scenario(name, scenario)
    return this.lastScenario
  }

  deliver(stream: TamboStream, event: { readonly type: string; readonly name?: unknown }): void {
    const list = this.delivered.get(stream) ?? []
    list.push(event.type === "CUSTOM" && typeof event.name === "string" ? event.name : event.type)
    this.delivered.set(stream, list)
  }

  /** Another client deletes a thread, as a second tab would: through the API, for the same user. */
  async deleteElsewhere(threadId: string): Promise<void> {
    const response = await fetch(`${this.server.url}/v1/threads/${threadId}?userKey=user-1`, {
      method: "DELETE",
      headers: { "x-api-key": this.server.apiKey }
    })
    if (response.status !== 204) throw new Error(`deleting ${threadId} elsewhere answered ${response.status}`)
    this.known.splice(this.known.indexOf(threadId), 1)
  }

  learn(threadId: string | undefined): void {
    if (threadId !== undefined && !threadId.startsWith("local") && this.server.threads.get(threadId) !== undefined) {
      if (!this.known.includes(threadId)) this.known.push(threadId)
    }
  }
}

let current: World | undefined

/**
 * The script function the server plays: by message tag; a continuation with no rounds left says
 * "done". A message with text of its own beside tool results (a new message answering the calls a
 * stopped round left) is played by its text.
 */
export const serverScript: Script.ScriptFn = (request) => {
  if (request.toolResults.length > 0 && request.text === "") return [Script.text("done")]
  if (request.text === "ping") return [Script.text("pong")]
  const scenario = current?.scenarios.get(request.text)
  current?.runs.set(request.text, [...(current.runs.get(request.text) ?? []), { threadId: request.threadId, runId: request.runId }])
  return scenario === undefined ? [Script.text(`unknown scenario ${request.text}`)] : scenario(request)
}

/**
 * Tool calls of the probe, their arguments as a model in the API's strict mode sends them (the
 * optional `edited` as `null`); `onN` hears each call's `n`.
 */
const probeCalls = (
  world: World,
  request: Script.RunRequest,
  mode: (typeof PROBE_MODES)[number],
  calls: number,
  reuseIds: boolean,
  onN: (n: number) => void = () => {}
) =>
  Array.from({ length: calls }, (_, i) => {
    const n = world.nextN()
    onN(n)
    const declared = request.tools.find((tool) => tool.name === "probe")?.inputSchema
    const args = { n, thread: request.threadId, mode }
    return Script.toolCall("probe", declared === undefined ? args : Script.strictArgs(declared, args), {
      id: reuseIds ? `call_${i}` : `call_${n}_${i}`
    })
  })

// -----------------------------------------------------------------------------
// The client's side
// -----------------------------------------------------------------------------

const makeProbe = (world: () => World) =>
  Model.makeProbe({
    input: ProbeArgs,
    world,
    result: (args, toolCallId): ProbeResult => ({
      thread: args.thread,
      toolCallId,
      n: args.n,
      ...(args.edited ? { edited: true } : {})
    }),
    failure: (args) => `probe failed n=${args.n} thread=${args.thread}`
  })

const CARD = {
  name: "Card",
  description: "A card",
  propsSchema: { type: "object", properties: { title: { type: "string" }, n: { type: "number" } } }
} as const

/** What the commands act on. */
export type Real = Model.Real<World>

/** A client of the world's server, for the same user, with the probe tool and the card. */
const makeClient = (world: World): TamboClient => {
  const client = world.track(new TamboClient({
    apiKey: world.server.apiKey,
    tamboUrl: world.server.url,
    userKey: "user-1",
    maxRetries: 0,
    autoGenerateThreadName: false,
    store: world.store(),
    tools: [makeProbe(() => world)],
    components: [CARD]
  }))
  client.subscribe(() => world.watch(client.getState()))
  return client
}

const threadOf = (real: Real, t: Target): string | undefined => Model.threadOf(real.world, t)

/** Iterates a run to its end, recording what it delivered, deciding approvals as `decision` says. */
const drive = (real: Real, stream: TamboStream, decision: Decision) =>
  Model.drive(real.client, stream, decision, (event) => real.world.deliver(stream, event))

/** Plays one command; returns the streams it started. */
const play = async (real: Real, command: Command): Promise<ReadonlyArray<TamboStream>> => {
  const { world, client } = real
  const runOn = (t: Target, message: string, options: Parameters<TamboClient["run"]>[1] = {}) =>
    client.run(message, { threadId: threadOf(real, t), toolTimeout: TOOL_TIMEOUT, ...options })
  switch (command.kind) {
    case "text": {
      const stream = runOn(command.target, world.scenario("text", () => [Script.text(["Hel", "lo"])]))
      await drive(real, stream, "approve")
      return [stream]
    }
    case "reasoning": {
      const stream = runOn(command.target, world.scenario("reasoning", () => [Script.reasoning(["thinking", " hard"]), Script.text("answer")]))
      await drive(real, stream, "approve")
      return [stream]
    }
    case "component": {
      const stream = runOn(command.target, world.scenario("component", () => [
        Script.text("Here: "),
        Script.component("Card", [{ title: "a" }, { title: "ab" }, { title: "ab", n: 1 }])
      ]))
      await drive(real, stream, "approve")
      return [stream]
    }
    case "tools": {
      const message = world.scenario("tools", (request) => [
        Script.text("Calling. "),
        ...probeCalls(world, request, command.mode, command.calls, command.reuseIds),
        Script.text("after tools")
      ])
      const stream = runOn(command.target, message)
      await drive(real, stream, command.decision)
      return [stream]
    }
    case "serverError": {
      const error = Script.runError({ twice: command.twice })
      const stream = runOn(command.target, world.scenario("serverError", () => command.afterText ? [Script.text("Partial"), error] : [error]))
      await drive(real, stream, "approve")
      return [stream]
    }
    case "drop": {
      const stream = runOn(command.target, world.scenario("drop", () => [Script.dropAfter(command.afterEvents), Script.text(["a", "b", "c"])]))
      await drive(real, stream, "approve")
      return [stream]
    }
    case "stop":
      return [await stop(real, command)]
    case "consumer":
      return consume(real, command)
    case "nested":
      return nested(real, command)
    case "manual": {
      const message = world.scenario("manual", (request) => [
        Script.text("Manual. "),
        ...probeCalls(world, request, "ok", command.calls, command.reuseIds),
        Script.text("after manual")
      ])
      const stream = runOn(command.target, message, { autoExecuteTools: false })
      const answered = await Model.answerByHand(
        world,
        stream,
        (args: Schema.Schema.Type<typeof ProbeArgs>, toolCallId): ProbeResult => ({ thread: args.thread, toolCallId, n: args.n }),
        (event) => world.deliver(stream, event)
      )
      if (answered === undefined) return [stream]
      const continued = client.continueRun(answered.threadId, answered.results, { toolTimeout: TOOL_TIMEOUT })
      await drive(real, continued, "approve")
      return [stream, continued]
    }
    case "newThread":
      client.startNewThread()
      return []
    case "switch": {
      await Model.switchTo(real, command.known)
      return []
    }
    case "concurrent": {
      const scenario = (request: Script.RunRequest) =>
        command.tools
          ? [Script.text("Both. "), ...probeCalls(world, request, "ok", 1, true), Script.text("after tools")]
          : [Script.text(["con", "current"])]
      return Model.concurrentRuns(real, command, scenario, (stream) => drive(real, stream, "approve"), () => client.startNewThread())
    }
    case "deletedElsewhere":
      return deletedElsewhere(real, command)
    case "rename":
      return rename(real, command)
    case "componentState":
      return componentState(real, command)
    case "localId":
      return localId(real, command)
    case "forget": {
      world.lastForget = undefined
      const threadId = threadOf(real, { known: command.known })
      if (threadId === undefined) return []
      // Between commands no run is in flight: a stored thread that is not current can go.
      const state = client.getState()
      const expected = state.threadMap[threadId] !== undefined && state.currentThreadId !== threadId
      const forgot = client.forgetThread(threadId)
      world.lastForget = { threadId, expected, forgot }
      if (forgot) world.forgotten.add(threadId)
      return []
    }
    case "concurrentNew": {
      client.startNewThread()
      const scenario: Scenario = (request) =>
        command.tools
          ? [Script.text("New. "), ...probeCalls(world, request, "ok", 1, true), Script.text("after tools")]
          : [Script.text(["new", " thread"])]
      return Model.concurrentNewRuns(
        real,
        command.abortFirst,
        scenario,
        () => [Script.text("new"), Script.hang()],
        (stream) => drive(real, stream, "approve"),
        (stream, event) => world.deliver(stream, event),
        command.newBetween ? () => void client.startNewThread() : undefined
      )
    }
  }
}

/** A known thread named by this client, at rest or while a run on it streams (see the `rename` command). */
const rename = async (real: Real, command: Extract<Command, { kind: "rename" }>): Promise<ReadonlyArray<TamboStream>> => {
  const { world, client } = real
  const threadId = threadOf(real, { known: command.known })
  if (threadId === undefined) return []
  const name = () =>
    command.via === "generateThreadName"
      ? client.generateThreadName(threadId)
      : client.updateThreadName(threadId, `name ${++world.names}`)
  if (!command.duringRun) {
    await name()
    return []
  }
  const message = world.scenario("renamedMidRun", async () => {
    await name()
    return [Script.text(["named ", "meanwhile"])]
  })
  const stream = client.run(message, { threadId, toolTimeout: TOOL_TIMEOUT })
  await drive(real, stream, "approve")
  return [stream]
}

/** A known thread's first component given a new state by this client (see the `componentState` command). */
const componentState = async (real: Real, command: Extract<Command, { kind: "componentState" }>): Promise<ReadonlyArray<TamboStream>> => {
  const { world, client } = real
  const threadId = threadOf(real, { known: command.known })
  if (threadId === undefined) return []
  const component = world.server.threads.get(threadId)?.messages.flatMap((m) => m.content).find((c) => c.type === "component")
  if (component?.type !== "component") return []
  await client.updateComponentState(threadId, component.id, { state: { n: ++world.states } }).catch((error: unknown) => {
    if (!(error instanceof RunConflictError)) throw error
  })
  return []
}

/** A call with a new conversation's local thread id (see the `localId` command). */
const localId = async (real: Real, command: Extract<Command, { kind: "localId" }>): Promise<ReadonlyArray<TamboStream>> => {
  const { world, client } = real
  client.startNewThread()
  const local: { id: string | undefined; second: TamboStream | undefined } = { id: undefined, second: undefined }
  const again = () => client.run(world.scenario("onLocalId", () => [Script.text(["on the ", "same thread"])]), {
    threadId: local.id,
    toolTimeout: TOOL_TIMEOUT,
    onBusy: "queue"
  })
  const first = client.run(
    world.scenario("movedToLocal", () => {
      // The server has the request and has not named the thread: the run goes on in a local thread.
      client.startNewThread()
      local.id = Object.keys(client.getState().threadMap).find((id) => id.startsWith("local:"))
      if (command.then === "runWhileCreating" && local.id !== undefined) local.second = again()
      return [Script.text(["moved ", "on"])]
    }),
    { toolTimeout: TOOL_TIMEOUT }
  )
  const firstDriven = drive(real, first, "approve")
  const created = await first.threadId
  await firstDriven
  if (local.id === undefined) throw new Error("a new conversation's run showed no local thread after startNewThread()")
  const onCreated = async (stream: TamboStream) => {
    await drive(real, stream, "approve")
    const threadId = await stream.threadId
    if (threadId !== created) throw new Error(`a run on local thread ${local.id} went on ${threadId}, not ${created}`)
    return [first, stream]
  }
  switch (command.then) {
    case "rename": {
      const name = `name ${++world.names}`
      await client.updateThreadName(local.id, name)
      if (world.server.threads.get(created)?.name !== name) throw new Error(`a rename of local thread ${local.id} did not rename ${created}`)
      return [first]
    }
    case "fetch": {
      const fetched = await client.fetchThread(local.id)
      if (fetched.id !== created) throw new Error(`fetchThread of local thread ${local.id} read ${fetched.id}, not ${created}`)
      return [first]
    }
    case "run":
      return onCreated(again())
    case "runWhileCreating":
      if (local.second === undefined) throw new Error("the run asked for on the local thread did not start")
      return onCreated(local.second)
  }
}

/** A known thread deleted by another client, then read by this one. */
const deletedElsewhere = async (
  real: Real,
  command: Extract<Command, { kind: "deletedElsewhere" }>
): Promise<ReadonlyArray<TamboStream>> => {
  const { world, client } = real
  const threadId = threadOf(real, { known: command.known })
  if (threadId === undefined) return []
  world.deleted.push(threadId)
  switch (command.then) {
    case "fetch": {
      await world.deleteElsewhere(threadId)
      const fetched = await settle(client.fetchThread(threadId))
      if (fetched.ok) throw new Error(`fetchThread of ${threadId}, deleted elsewhere, resolved`)
      return []
    }
    case "delete": {
      await world.deleteElsewhere(threadId)
      const deleted = await settle(client.deleteThread(threadId))
      if (deleted.ok) throw new Error(`deleteThread of ${threadId}, deleted elsewhere, resolved`)
      return []
    }
    case "run": {
      await world.deleteElsewhere(threadId)
      const stream = client.run(world.scenario("deleted", () => [Script.text("never played")]), { threadId })
      world.outcomes.set(stream, "ApiError")
      await drive(real, stream, "approve")
      return [stream]
    }
    case "midRun": {
      // The server took the run (its guard saw the thread), then the thread goes: the run streams on.
      const message = world.scenario("deletedMidRun", async () => {
        await world.deleteElsewhere(threadId)
        return [Script.text(["still ", "streaming"])]
      })
      const stream = client.run(message, { threadId, toolTimeout: TOOL_TIMEOUT })
      await drive(real, stream, "approve")
      return [stream]
    }
  }
}

/**
 * A run stopped early by `cancelRun`, `abort()`, its signal or leaving the loop, at any point of
 * it; `destroy`: by a client of its own, destroyed right after the stop (then this client reads
 * the run's thread, so the store checks compare it).
 */
const stop = async (real: Real, command: Extract<Command, { kind: "stop" }>): Promise<TamboStream> => {
  const { world } = real
  const client = command.destroy === true ? makeClient(world) : real.client
  let n: number | undefined
  let requestSeen: () => void = () => {}
  const seenRequest = new Promise<void>((resolve) => (requestSeen = resolve))
  let answer: () => void = () => {}
  const answered = new Promise<void>((resolve) => (answer = resolve))
  const message = world.scenario("stop", async (request) => {
    if (command.at === "request") {
      requestSeen()
      await answered
    }
    if (command.at === "tool" || command.at === "approval" || command.at === "paused") {
      const mode = command.at === "approval" ? "approval" : "block"
      const calls = probeCalls(world, request, mode, 1, command.reuseIds, (called) => {
        n = called
      })
      return [Script.text("Stopping. "), ...calls, Script.text("after tools")]
    }
    if (command.at === "finishedAfterTools" || command.at === "awaitingResults") {
      return [Script.text("Calling. "), ...probeCalls(world, request, "ok", 1, command.reuseIds), Script.text("after tools")]
    }
    if (command.at === "finished") return [Script.text(["a", "b", "c"])]
    return [Script.text(["a", "b", "c"]), Script.hang()]
  })
  const current = command.how === "cancelCurrent"
  // A client of its own starts a new thread: one this client holds would be read back into it by
  // fetchThread, which refreshes a held thread's messages, not its fields.
  const requested = (current || command.destroy === true ? undefined : threadOf(real, command.target)) ??
    client.getState().currentThreadId
  const signal = command.how === "signal" ? new AbortController() : undefined
  // The tool round's tool never ends by itself: a long timeout, so only the stop ends it.
  const stream = client.run(message, {
    ...(current ? {} : { threadId: requested }),
    toolTimeout: 10_000,
    ...(signal === undefined ? {} : { signal: signal.signal }),
    ...(command.at === "awaitingResults" ? { autoExecuteTools: false } : {})
  })
  const before = world.server.cancels.length
  world.stops.set(stream, { cancelsBefore: before, destroyed: command.destroy === true })
  // A step paused for tools once its `tambo.run.awaiting_input` came; its RUN_FINISHED is not the run's last.
  let paused = false
  await Model.stopRun({
    world,
    stream,
    command,
    threadId: requested,
    stop: (lastThreadId) =>
      command.how === "cancelRun"
        ? settle(client.cancelRun(lastThreadId))
        : command.how === "cancelCurrent"
        ? settle(client.cancelRun())
        : command.how === "signal"
        ? signal?.abort(new Error("stopped by the model"))
        : stream.abort(),
    afterStop: command.destroy === true ? () => client.destroy() : undefined,
    toolCall: () => n,
    before: async (doStop) => {
      if (command.at !== "request") return
      // A request the server refuses never plays a script: the run's end is the other way out.
      await Promise.race([seenRequest, settle(stream.thread)])
      // The stop starts while the server holds the request; the server then answers, as the API
      // does at once once it took a run (the cancel waits for the run's name in the answer).
      const stopping = doStop()
      answer()
      await stopping
    },
    seen: (event) => world.deliver(stream, event),
    reached: (event, seen) => {
      if (event.type === "RUN_STARTED") paused = false
      if (event.type === "CUSTOM" && event.name === "tambo.run.awaiting_input") paused = true
      switch (command.at) {
        case "approval":
          return event.type === "CLIENT_APPROVAL_REQUESTED"
        case "paused":
          return event.type === "RUN_FINISHED" && paused
        case "finished":
        case "finishedAfterTools":
          return event.type === "RUN_FINISHED" && !paused
        case "awaitingResults":
          return event.type === "CLIENT_AWAITING_TOOL_RESULTS"
        default:
          return typeof command.at === "number" && seen >= command.at
      }
    }
  })
  if (command.destroy === true) {
    await client.destroy()
    // The model allows either ending of a completed run destroyed while it recorded its end.
    const outcome = await settle(stream.thread)
    if (COMPLETED_AT.includes(command.at)) world.outcomes.set(stream, outcome.ok ? "ok" : "AbortError")
    await readBack(real, stream, message, before, stillGoing(command.at) !== "no")
  } else if (COMPLETED_AT.includes(command.at)) {
    world.outcomes.set(stream, "ok")
  }
  return stream
}

/**
 * What a run of a client of its own, destroyed, left: this client reads it once the server wound
 * the run down (a request the destroyed client left behind may still play), so the store checks
 * compare it. `cancelling`: the server's run may still be going, and ends as cancelled once the
 * server saw the connection close.
 */
const readBack = async (real: Real, stream: TamboStream, message: string, cancelsBefore: number, cancelling: boolean) => {
  const { world } = real
  const named = await settle(stream.threadId)
  const threadId = named.ok ? named.value : undefined
  if (threadId === undefined) return
  const recorded = () =>
    world.server.threads.get(threadId)?.messages.some((m) => m.content.some((c) => c.type === "text" && c.text === message))
  const cancelled = () => world.server.cancels.slice(cancelsBefore).some((cancel) => cancel.threadId === threadId)
  await eventually(() =>
    recorded() === true && world.server.threads.get(threadId)?.runStatus === "idle" && (!cancelling || cancelled())
  )
  await settle(real.client.fetchThread(threadId))
}

/** The events of a text run of `deltas` deltas a reader that read it all got: its deltas, and its last event. */
const readItAll = (delivered: ReadonlyArray<string>, deltas: number) =>
  delivered.filter((type) => type === "TEXT_MESSAGE_CONTENT").length === deltas && delivered.at(-1) === "RUN_FINISHED"

/** A turn of the event loop: a slow consumer's pause. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * Far more text deltas than an iterator's buffer holds, and than a read of the network brings: a
 * run the server ended still has its last event on the way while its reader stopped reading.
 */
const LONG_TEXT = 40 * EVENT_BUFFER

/**
 * A run read by a slow consumer, one that returns early, or one that stops reading without
 * `return()` and whose run `then` stops; the iterator left behind is read to its end once the run
 * settled (see `consumer-as-modelled`).
 */
const consume = async (real: Real, command: Extract<Command, { kind: "consumer" }>): Promise<ReadonlyArray<TamboStream>> => {
  const { world } = real
  const where = `a consumer (${command.reader} after ${command.reads}, then ${command.then} while ${command.when})`
  const destroy = command.reader === "abandon" && command.then === "destroy"
  const client = destroy ? makeClient(world) : real.client
  const deltas = command.long ? LONG_TEXT : 3
  const message = world.scenario("consumer", () => [Script.text(Array.from({ length: deltas }, () => "x"))])
  // A client of its own starts a new thread (see `stop`).
  const requested = (destroy ? undefined : threadOf(real, command.target)) ?? client.getState().currentThreadId
  const stream = client.run(message, { threadId: requested, toolTimeout: TOOL_TIMEOUT })
  const iterator = stream[Symbol.asyncIterator]()
  const before = world.server.cancels.length
  /** Reads up to `count` events; true once the iterator ended. */
  const read = async (count: number, pause: boolean) => {
    for (let i = 0; i < count; i++) {
      const step = await iterator.next()
      if (step.done === true) return true
      world.deliver(stream, step.value.event)
      if (pause) await turn()
    }
    return false
  }
  /** A run that resolved gave its reader every event, to its last. */
  const readAll = async () => {
    if (!(await settle(stream.thread)).ok) return
    const delivered = world.delivered.get(stream) ?? []
    if (!readItAll(delivered, deltas)) {
      const texts = delivered.filter((type) => type === "TEXT_MESSAGE_CONTENT").length
      world.consumerFaults.push(`${where}: the run resolved; its reader got ${texts} of ${deltas} deltas, the last event ${delivered.at(-1)}`)
    }
  }
  if (command.reader === "slow") {
    await read(Infinity, true)
    await readAll()
    return [stream]
  }
  if (await read(command.reads, false)) return [stream]
  if (command.when === "serverDone") {
    await eventually(() => {
      const run = world.runs.get(message)?.[0]
      return run !== undefined && world.server.threads.get(run.threadId)?.runStatus === "idle"
    })
  }
  // A run the server ended completes, however far behind its reader is, unless destroy() or
  // another run ends it first; else either ending is the model's: the run completed if its last
  // event came before the stop.
  const serverEnded = command.when === "serverDone" &&
    (command.reader === "return" || command.then === "abort" || command.then === "cancelRun")
  const completedOrAborted = async () => {
    const outcome = await settle(stream.thread)
    world.outcomes.set(stream, serverEnded || outcome.ok ? "ok" : "AbortError")
    return outcome
  }
  world.stops.set(stream, { cancelsBefore: before, destroyed: destroy })
  if (command.reader === "return") {
    await iterator.return?.()
    await completedOrAborted()
    return [stream]
  }
  const named = await settle(stream.threadId)
  const threadId = named.ok ? named.value : requested
  const interrupting = command.then === "interrupt"
    ? client.run(world.scenario("interrupting", () => [Script.text(["in", "terrupt"])]), { threadId, onBusy: "interrupt" })
    : undefined
  const stopped = interrupting !== undefined
    ? drive(real, interrupting, "approve")
    : command.then === "abort"
    ? Promise.resolve(stream.abort())
    : command.then === "cancelRun"
    ? client.cancelRun(threadId)
    : client.destroy()
  await settle(stopped)
  const outcome = await completedOrAborted()
  // What the iterator holds, then the run's ending.
  const drained = await settle(read(Infinity, false))
  const ended = drained.ok ? "done" : (drained.error as { _tag?: string })._tag
  const expected = outcome.ok ? "done" : (outcome.error as { _tag?: string })._tag
  if (ended !== expected) world.consumerFaults.push(`${where}: the iterator left behind ended ${ended}, its run ${expected}`)
  await readAll()
  if (destroy) await readBack(real, stream, message, before, false)
  return interrupting === undefined ? [stream] : [stream, interrupting]
}

/**
 * A run read in a loop that, at the run's event `at`, reads another run of its thread to its end
 * (see the `nested` command). "reject" refuses that run; "queue" runs it once the first completed;
 * "interrupt" runs it, the first ending cancelled, or completed if its last event came first. The
 * loop ends as the first run did, having read every event of a run that resolved.
 */
const nested = async (real: Real, command: Extract<Command, { kind: "nested" }>): Promise<ReadonlyArray<TamboStream>> => {
  const { world, client } = real
  const where = `a run with onBusy: "${command.onBusy}" read inside the loop over its thread's run at its event ${command.at}`
  const deltas = command.long ? LONG_TEXT : 3
  const message = world.scenario("outer", () => [Script.text(Array.from({ length: deltas }, () => "x"))])
  const outer = client.run(message, { threadId: threadOf(real, command.target), toolTimeout: TOOL_TIMEOUT })
  let inner: TamboStream | undefined
  const looped = await settle((async () => {
    let seen = 0
    for await (const { event, threadId } of outer) {
      world.deliver(outer, event)
      if (seen++ !== command.at) continue
      const again = world.scenario("inner", () => [Script.text(["in", "ner"])])
      inner = client.run(again, { threadId, toolTimeout: TOOL_TIMEOUT, onBusy: command.onBusy })
      await drive(real, inner, "approve")
    }
  })())
  const outcome = await settle(outer.thread)
  const tag = (result: typeof outcome | typeof looped) => result.ok ? "ok" : (result.error as { _tag?: string })._tag
  if (command.onBusy === "interrupt") world.outcomes.set(outer, tag(outcome) === "ok" ? "ok" : "AbortError")
  if (inner === undefined) world.consumerFaults.push(`${where}: the loop never took that event`)
  else world.outcomes.set(inner, command.onBusy === "reject" ? "RunConflictError" : "ok")
  if (tag(looped) !== tag(outcome)) world.consumerFaults.push(`${where}: the loop ended ${tag(looped)}, its run ${tag(outcome)}`)
  if (outcome.ok && !readItAll(world.delivered.get(outer) ?? [], deltas)) {
    world.consumerFaults.push(`${where}: the run resolved; its loop got ${(world.delivered.get(outer) ?? []).join(", ").slice(-200)}`)
  }
  return inner === undefined ? [outer] : [outer, inner]
}

// -----------------------------------------------------------------------------
// Invariants
// -----------------------------------------------------------------------------

/** An assertion's failure: where its values differ. */
const explain = (error: unknown): string => {
  const assertion = error as { actual?: unknown; expected?: unknown }
  return "actual" in (error as object) ? `\n${differences(assertion.actual, assertion.expected).join("\n")}` : ""
}

/** Where two values differ, as `path: actual !== expected` lines (the first few). */
const differences = (actual: unknown, expected: unknown, path = "", out: Array<string> = []): Array<string> => {
  if (out.length >= 8) return out
  if (typeof actual === "object" && actual !== null && typeof expected === "object" && expected !== null) {
    const keys = new Set([...Object.keys(actual), ...Object.keys(expected)])
    for (const key of keys) {
      differences((actual as Record<string, unknown>)[key], (expected as Record<string, unknown>)[key], `${path}.${key}`, out)
    }
  } else if (!Object.is(actual, expected)) {
    out.push(`  ${path || "(value)"}: store ${JSON.stringify(actual)} !== server ${JSON.stringify(expected)}`)
  }
  return out
}

/** The switch, and the check of each invariant by name. */
const checks = new Model.Invariants<Invariant>(INVARIANTS, KNOWN_OPEN, explain)

interface ToolResultBlock {
  readonly type: "tool_result"
  readonly toolUseId: string
  readonly isError?: boolean
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
}

const textOf = (block: ToolResultBlock) => block.content.map((c) => c.text ?? "").join("")

/** Tools ran once per call; every result the server received is the one its call produced. */
const checkTools = (world: World) => {
  const seen = Model.executedOnce(world.executions)
  for (const thread of world.server.threads.list()) {
    const latestCall = new Map<string, number>()
    for (const message of thread.messages) {
      for (const block of message.content) {
        if (block.type === "tool_use") {
          const input = block.input as { n?: number }
          if (typeof input.n === "number") latestCall.set(block.id, input.n)
        }
        if (block.type !== "tool_result") continue
        const result = block as unknown as ToolResultBlock
        const expected = latestCall.get(result.toolUseId)
        const text = textOf(result)
        const probe = parseProbe<ProbeResult>(text)
        const where = `thread ${thread.id}, result for ${result.toolUseId} (call n=${expected})`
        if (probe !== undefined) {
          if (probe.thread !== thread.id || probe.toolCallId !== result.toolUseId || probe.n !== expected) {
            throw new Error(`${where} is ${text}: made for another call`)
          }
          if (!seen.has(`${probe.thread}/${probe.toolCallId}/${probe.n}`)) throw new Error(`${where} is ${text}, which no execution produced`)
        }
        const failed = /n=(\d+) thread=(\S+)/.exec(text)
        if (failed !== null && (Number(failed[1]) !== expected || failed[2] !== thread.id)) {
          throw new Error(`${where} is the error "${text}" of another call`)
        }
      }
    }
  }
  // Every result sent (stored or refused) names its own thread and call.
  for (const request of world.server.requests) {
    const match = /^\/v1\/threads\/([^/]+)\/runs$/.exec(request.path)
    if (request.method !== "POST" || match === null) continue
    const body = request.body as { message?: { content?: ReadonlyArray<{ type: string }> } } | undefined
    for (const block of body?.message?.content ?? []) {
      if (block.type !== "tool_result") continue
      const result = block as unknown as ToolResultBlock
      const probe = parseProbe<ProbeResult>(textOf(result))
      if (probe !== undefined && (probe.thread !== match[1] || probe.toolCallId !== result.toolUseId)) {
        throw new Error(`a result sent to thread ${match[1]} for ${result.toolUseId} was made for ${probe.thread}/${probe.toolCallId}`)
      }
    }
  }
}

const storeChecks = async (real: Real, threadIds: ReadonlyArray<string>) => {
  for (const threadId of threadIds) {
    // A forgotten thread is checked again once a run or a switch brought it back.
    if (real.world.forgotten.has(threadId) && real.client.getState().threadMap[threadId] === undefined) continue
    // The server winds a cancelled or dropped run down on its own time.
    await eventually(() => real.world.server.threads.get(threadId)?.runStatus === "idle")
    await storeMatchesServer(real.client.getState(), real.world.server, threadId)
  }
}

const expectedOutcome = (command: Command): Outcome => {
  switch (command.kind) {
    case "serverError":
      return "ApiError"
    case "drop":
      return "TransportError"
    case "stop":
      return "AbortError"
    default:
      return "ok"
  }
}

/**
 * Whether the server's run was still going when a stop came: `yes` after RUN_STARTED and before
 * its last event, `no` once it paused for tools or completed, `unknown` before the server named it.
 */
const stillGoing = (at: StopAt): "yes" | "no" | "unknown" =>
  typeof at === "number" ? (at >= 1 ? "yes" : "unknown") : at === "request" ? "unknown" : "no"

/** stop-as-modelled: each stopped run's outcome agrees with the server, and none is left in flight. */
const checkStop = async (
  real: Real,
  where: string,
  going: "yes" | "no" | "unknown",
  streams: ReadonlyArray<TamboStream>,
  /** A run on the thread came after the stopped one: a resolved run's thread is the start of the server's. */
  followed = false
) => {
  const { world, client } = real
  for (const stream of streams) {
    const stop = world.stops.get(stream)
    if (stop === undefined) continue
    const outcome = await settle(stream.thread)
    const threadId = await settle(stream.threadId)
    if (!stop.destroyed) {
      // Its stream settled, so its run is no longer in flight (on its thread, nor on the current one).
      if (client.hasActiveRun() || (threadId.ok && client.hasActiveRun(threadId.value))) {
        throw new Error(`${where}: the run settled ${outcome.ok ? "ok" : "rejected"} and is still in flight`)
      }
    }
    // A run the server never named left nothing there.
    if (!threadId.ok) continue
    const id = threadId.value
    await eventually(() => world.server.threads.get(id)?.runStatus === "idle")
    const cancels = () => world.server.cancels.slice(stop.cancelsBefore).filter((cancel) => cancel.threadId === id)
    if (outcome.ok) {
      const server = world.server.threads.get(id)
      if (cancels().length > 0) throw new Error(`${where}: the run resolved, and the server recorded a cancel (${cancels()[0]!.reason})`)
      if (server?.lastRunCancelled === true) throw new Error(`${where}: the run resolved, and the server's thread is cancelled`)
      const resolved = outcome.value.messages.map((message) => message.id)
      const stored = server?.messages.map((message) => message.id).slice(0, followed ? resolved.length : undefined)
      if (JSON.stringify(resolved) !== JSON.stringify(stored)) {
        throw new Error(`${where}: the run resolved with messages ${JSON.stringify(resolved)}, the server has ${JSON.stringify(stored)}`)
      }
      continue
    }
    const tag = (outcome.error as { _tag?: string })._tag
    if (tag !== "AbortError") throw new Error(`${where}: the run rejected with ${tag}, not AbortError`)
    if (going === "yes") {
      await eventually(() => cancels().length > 0)
      if (cancels().length === 0) throw new Error(`${where}: the run rejected while the server's run was going, and the server recorded no cancel`)
      if (world.server.threads.get(id)?.lastRunCancelled !== true) {
        throw new Error(`${where}: the run rejected while the server's run was going, and the server's thread is not cancelled`)
      }
    } else if (going === "no") {
      if (cancels().length > 0) {
        throw new Error(`${where}: the server's run had ended, and it recorded a cancel (${cancels()[0]!.reason})`)
      }
      if (world.server.threads.get(id)?.lastRunCancelled === true) {
        throw new Error(`${where}: the server's run had ended, and its thread is cancelled`)
      }
    }
  }
}

const afterCommand = async (real: Real, command: Command, streams: ReadonlyArray<TamboStream>) => {
  const { world, client } = real
  const touched: Array<string> = []
  for (const stream of streams) {
    const id = await settle(stream.threadId)
    if (id.ok) {
      world.learn(id.value)
      if (world.known.includes(id.value) && !touched.includes(id.value)) touched.push(id.value)
    }
  }
  await checks.settles(client, command)
  await checks.outcomes(streams, command.kind, (stream) => world.outcomes.get(stream) ?? expectedOutcome(command))
  await checks.check("one-terminal-event", () => {
    for (const stream of streams) {
      const events = world.delivered.get(stream) ?? []
      for (let i = 0, started = 0, ended = 0; i < events.length; i++) {
        if (events[i] === "RUN_STARTED") started++
        if (events[i] === "RUN_FINISHED" || events[i] === "RUN_ERROR") ended++
        if (ended > started || (events[i] === "RUN_ERROR" && i < events.length - 1)) {
          throw new Error(`a run of ${command.kind} delivered ${events.slice(Math.max(0, i - 3), i + 2).join(", ")}: a terminal event that is not its run's last`)
        }
      }
    }
  })
  if (command.kind === "stop" && typeof command.at === "number" && command.at >= 1) {
    await checks.check("stop-is-user-cancel", async () => {
      // The client saw RUN_STARTED, so it knows the run: it tells the server before it hangs up.
      const runs = world.runs.get(world.lastScenario) ?? []
      for (const run of runs) {
        await eventually(() => world.server.cancels.some((c) => c.runId === run.runId))
        const cancel = world.server.cancels.find((c) => c.runId === run.runId)
        if (cancel?.reason !== "user_cancelled") {
          throw new Error(`run ${run.runId} of a stop (${command.how} at ${command.at}) reached the server as ${cancel?.reason ?? "nothing"}`)
        }
      }
    })
  }
  if (command.kind === "stop") {
    const where = `a stop (${command.how} at ${command.at}${command.destroy === true ? ", then destroy()" : ""})`
    await checks.check("stop-as-modelled", () => checkStop(real, where, stillGoing(command.at), streams))
  }
  if (command.kind === "consumer") {
    await checks.check("stop-as-modelled", () =>
      checkStop(
        real,
        `a consumer's stop (${command.then} while ${command.when})`,
        command.when === "serverDone" ? "no" : "unknown",
        streams,
        command.then === "interrupt"
      ))
  }
  if (command.kind === "consumer" || command.kind === "nested") {
    await checks.check("consumer-as-modelled", () => {
      const faults = world.consumerFaults.splice(0)
      if (faults.length > 0) throw new Error(faults.join("\n"))
    })
  }
  await checks.noRejection(world)
  await checks.check("store-equals-server", () => storeChecks(real, world.known))
  await checks.check("deleted-thread-forgotten", () => {
    const state = client.getState()
    for (const threadId of world.deleted) {
      if (state.threadMap[threadId] !== undefined) throw new Error(`thread ${threadId}, deleted elsewhere and read since, is still in the store`)
      if (state.currentThreadId === threadId) throw new Error(`thread ${threadId}, deleted elsewhere, is still current`)
    }
  })
  await checks.check("forget-as-modelled", () => {
    const state = client.getState()
    if (command.kind === "forget" && world.lastForget !== undefined) {
      const { expected, forgot, threadId } = world.lastForget
      if (forgot !== expected) throw new Error(`forgetThread(${threadId}) gave ${forgot}, the model says ${expected}`)
      if (forgot && state.threadMap[threadId] !== undefined) {
        throw new Error(`thread ${threadId} is still in the store after forgetThread gave true`)
      }
    }
    // A forgotten thread that a run or a switch used is in the store again, and checked as any other.
    for (const threadId of world.forgotten) if (state.threadMap[threadId] !== undefined) world.forgotten.delete(threadId)
  })
  await checks.check("tool-once-and-own-result", () => checkTools(world))
  await checks.check("no-strict-null-shown", () => {
    if (world.nullShown !== undefined) throw new Error(`a published state showed ${world.nullShown}`)
  })
  await checks.check("thread-usable", async () => {
    for (const threadId of touched) {
      const result = await settle(client.run("ping", { threadId }).thread)
      Model.expectPong(threadId, result, result.ok ? result.value.messages.at(-1) : undefined)
    }
  })
  await checks.check("store-equals-server", () => storeChecks(real, touched))
}

// -----------------------------------------------------------------------------
// Sequences
// -----------------------------------------------------------------------------

/**
 * Plays `commands` against ONE fresh client of a fresh server noticing a closed connection as
 * `notice` says (through `fc.asyncModelRun`), checking every invariant after each, then destroys
 * the client and checks that it left no handle open.
 */
export const sequenceAgainst = (notice: Model.Notice) =>
(
  commands: Iterable<fc.AsyncCommand<object, Real, boolean>>,
  invariants: ReadonlySet<Invariant> = checks.defaults(),
  /** Called with the server before it closes, for tests of the harness itself. */
  inspect?: (server: TestServer) => void
): Promise<void> =>
  Model.runSequence({
    invariants: checks,
    checking: invariants,
    open: async () => {
      // A server per sequence: its own sockets go when it closes, so what is left is the client's.
      const server = await startTestServer({ script: serverScript, noticeClosedConnection: notice })
      const world = new World(server)
      return { world, close: () => server.close() }
    },
    current: (world) => (current = world),
    client: makeClient,
    commands,
    inspect: inspect === undefined ? undefined : (real) => inspect(real.world.server)
  })

/** `sequenceAgainst` a server that notices a closed connection at once. */
export const runSequence = sequenceAgainst("atOnce")

/** Plays one command, then checks the invariants. */
const playAndCheck = async (real: Real, command: Command): Promise<void> => {
  const streams = await checks.liveness(play(real, command), command)
  await afterCommand(real, command, streams)
}

/** Replays a list of commands (a counterexample) as the property plays it. */
export const replayAgainst = (notice: Model.Notice): (
  commands: ReadonlyArray<Command>,
  invariants?: ReadonlyArray<Invariant>,
  inspect?: (server: TestServer) => void
) => Promise<void> => Model.replayer(playAndCheck, sequenceAgainst(notice))

/** `replayAgainst` a server that notices a closed connection at once. */
export const replay = replayAgainst("atOnce")

/** The commands arbitrary of the property. */
export const commandsArbitrary = (maxCommands: number, replayPath?: string) =>
  Model.modelCommands(commandArbitrary, playAndCheck, maxCommands, replayPath)

/** The commands arbitrary of the consumers' property: mostly `consumer` and `nested` commands, among the others. */
export const consumerCommandsArbitrary = (maxCommands: number, replayPath?: string) =>
  Model.modelCommands(
    fc.oneof(
      { weight: 3, arbitrary: consumerCommand },
      { weight: 2, arbitrary: nestedCommand },
      { weight: 1, arbitrary: commandArbitrary }
    ),
    playAndCheck,
    maxCommands,
    replayPath
  )
