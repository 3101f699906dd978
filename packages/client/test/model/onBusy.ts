// The model-based test of overlapping runs on one thread of one client: runs started with each
// `onBusy` policy while the thread's run is held by the server (at a gate, until `finish`), Stop
// (`cancelRun` of the thread), the caller giving up on a run (`abort()`), the held run finishing,
// the server holding the answer to a Stop's `DELETE` while another run starts, a second message
// on a new conversation while its first run creates the thread (`startNewThread` between or not),
// and runs asked for while the client exchanges its renewed user token (stopped, given up on or
// interrupted while they wait for it; the exchange answered, refused or its connection reset).
// The invariants of INVARIANTS are checked after every command once the client settled (every run
// ended, held by the server, or queued behind the held one), and once more when the sequence winds
// down.
// The property is onBusy.model.test.ts; the named counterexamples go to counterexamples.test.ts.
import { type HoldingProxy, Script, type TestServer } from "@tambo-effect/testing"
import { FastCheck as fc } from "effect"
import { type BusyPolicy, TamboClient, type TamboStream } from "../../src/index.js"
import * as OneThread from "./oneThread.js"
import * as Model from "./support.js"
import { eventually, settle } from "./support.js"

// -----------------------------------------------------------------------------
// The switch
// -----------------------------------------------------------------------------

/** Every invariant the model checks, in the order it checks them after a command. */
export const INVARIANTS = [
  /** The command ends, and the client settles after it (a liveness bound, not a timing assertion). */
  "command-settles",
  /**
   * Each run ends as one of the outcomes the model allows it: its reply (ok), RunConflictError (a
   * `reject` run started while a run of the client was in flight), AbortError (stopped, given up
   * on, displaced by an `interrupt` run). A Stop ends every run started before it as AbortError.
   */
  "run-outcome",
  /** At no point has the server more than one run of the client streaming on the thread. */
  "one-run-on-server",
  /** The server took the runs' messages in the order the runs were asked for. */
  "start-order",
  /**
   * A run that waited for the thread when a Stop came, or when an `interrupt` run was asked for,
   * never reaches the server: its message is not sent.
   */
  "stopped-never-sent",
  /** Every message the server took, it took once; every run was cancelled (and asked to be) at most once. */
  "sent-once",
  /** A run cut once its client knew the server's run (RUN_STARTED) is cancelled on the server by the client (`user_cancelled`), not by a closed connection. */
  "cut-is-user-cancel",
  /**
   * A new conversation's runs end on the threads they should: a run that followed the run creating
   * the thread (queue, interrupt) on that thread, a run after `startNewThread` on a thread of its
   * own; each of those threads holds each message once, is idle on the server, and the store equals it.
   */
  "run-thread",
  /** No unhandled rejection during the command. */
  "no-unhandled-rejection",
  /** With no run in flight: the server's thread is idle, the client has no run in flight, and its store equals the server. */
  "idle-and-equal",
  /** After `client.destroy()`, no handle of it is left open. */
  "no-open-handles"
] as const

/** @see INVARIANTS */
export type Invariant = (typeof INVARIANTS)[number]

/** Invariants the property does not check because a known defect breaks them (see harness.ts). */
export const KNOWN_OPEN: ReadonlySet<Invariant> = new Set<Invariant>([])

// -----------------------------------------------------------------------------
// Commands
// -----------------------------------------------------------------------------

/** `gate`: the server holds the run after RUN_STARTED until `finish` (or a stop); `none`: it plays to its end. */
export type Hold = "none" | "gate"

/** One command: plain data, so a counterexample can be replayed as a table. */
export type Command =
  | { readonly kind: "start"; readonly onBusy: BusyPolicy; readonly hold: Hold }
  /** Lets the run the server holds play its reply to its end (nothing without one). */
  | { readonly kind: "finish" }
  /**
   * `cancelRun` of the thread. `holdDelete`: the server's answer to its `DELETE` waits until
   * `then` started (a run with that policy, meanwhile) and settled as far as it can.
   */
  | {
    readonly kind: "stop"
    readonly holdDelete: boolean
    readonly then?: { readonly onBusy: BusyPolicy; readonly hold: Hold } | undefined
  }
  /** The caller gives up on the i-th run in flight, oldest first (`abort()`; nothing without one). */
  | { readonly kind: "abort"; readonly which: number }
  /**
   * Cuts the run the server holds (nothing without one): by a Stop, by its caller giving up on it,
   * or by a new `interrupt` run (held as `hold` says) displacing it. `holdDelete`: the server's
   * answer to the cancellation's `DELETE` waits until `meanwhile` was done.
   */
  | {
    readonly kind: "cut"
    readonly how: "stop" | "abort" | "interrupt"
    readonly hold: Hold
    /** `request`: the `DELETE` itself waits before it reaches the server; `answer`: the server's answer to it waits. */
    readonly holdDelete: "no" | "request" | "answer"
    readonly meanwhile?: Meanwhile | undefined
  }
  | LateAnswer
  | NewConversation
  | Credentials

/**
 * With no run in flight: the client's user token renewed and its exchange held by the server, runs
 * asked for meanwhile (each `onBusy`, held as `hold` says; they wait for the credentials), cut as
 * `how` says while they wait (a Stop, the caller giving up on the `which`-th, an `interrupt` run),
 * then the exchange answered (`release`), refused (`fail`: a 401) or its connection reset (`reset`).
 * A run the exchange failed ends with its AuthError; the next token's exchange is then let through.
 */
export type Credentials = {
  readonly kind: "credentials"
  readonly runs: ReadonlyArray<{ readonly onBusy: BusyPolicy; readonly hold: Hold }>
  readonly how: "stop" | "abort" | "interrupt" | "none"
  readonly which: number
  readonly exchange: "release" | "fail" | "reset"
}

/**
 * With no run in flight: `startNewThread()`, a run on the new conversation (held at its gate) whose
 * thread the server has not named to the client yet (`answer`: its answer is held) or has
 * (`started`: the client saw its RUN_STARTED), then `startNewThread()` again if `newBetween`, then a
 * second run on the new conversation (`onBusy`, not held), then the answer let go and the first run
 * finished. Without `newBetween` the second run is a second run of the first one's thread: it
 * conflicts, or waits or displaces the first and goes on that thread (the answer that came late
 * still names it); with `newBetween` it creates another thread.
 */
export type NewConversation = {
  readonly kind: "newConversation"
  readonly named: "answer" | "started"
  readonly newBetween: boolean
  readonly onBusy: BusyPolicy
}

/**
 * With no run in flight: a run (`onBusy`, held at its gate) whose request the server took and
 * answers late (its answer, which names the run, is held), cut meanwhile as `cut` says, `meanwhile`
 * done, then the answer let go.
 */
export type LateAnswer = {
  readonly kind: "lateAnswer"
  readonly onBusy: BusyPolicy
  readonly how: "stop" | "abort" | "interrupt"
  readonly hold: Hold
  readonly meanwhile?: Meanwhile | undefined
}

/** What happens while a cancellation's `DELETE` (or a run's answer) is unanswered. */
export type Meanwhile =
  | { readonly kind: "start"; readonly onBusy: BusyPolicy; readonly hold: Hold }
  | { readonly kind: "stop" }
  | { readonly kind: "abort"; readonly which: number }

const policy = fc.constantFrom<BusyPolicy>("reject", "queue", "interrupt")
const hold = fc.constantFrom<Hold>("none", "gate", "gate")
const how = fc.constantFrom<"stop" | "abort" | "interrupt">("stop", "abort", "interrupt")
const meanwhile = fc.option(
  fc.oneof(
    fc.record({ kind: fc.constant("start" as const), onBusy: policy, hold }),
    fc.constant({ kind: "stop" as const }),
    fc.record({ kind: fc.constant("abort" as const), which: fc.nat(2) })
  ),
  { nil: undefined }
)

/** The generator of commands. */
export const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("start" as const), onBusy: policy, hold }) },
  { weight: 2, arbitrary: fc.constant({ kind: "finish" as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("stop" as const),
      holdDelete: fc.boolean(),
      then: fc.option(fc.record({ onBusy: policy, hold }), { nil: undefined })
    })
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("abort" as const), which: fc.nat(2) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("cut" as const),
      how,
      hold,
      holdDelete: fc.constantFrom<"no" | "request" | "answer">("no", "request", "answer"),
      meanwhile
    })
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("lateAnswer" as const), onBusy: policy, how, hold, meanwhile })
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("newConversation" as const),
      named: fc.constantFrom<"answer" | "started">("answer", "started"),
      newBetween: fc.boolean(),
      onBusy: policy
    })
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("credentials" as const),
      runs: fc.array(fc.record({ onBusy: policy, hold }), { minLength: 1, maxLength: 2 }),
      how: fc.constantFrom<Credentials["how"]>("stop", "abort", "interrupt", "none"),
      which: fc.nat(2),
      exchange: fc.constantFrom<Credentials["exchange"]>("release", "fail", "reset")
    })
  }
)

// -----------------------------------------------------------------------------
// The world
// -----------------------------------------------------------------------------

type Outcome = "ok" | "RunConflictError" | "AbortError" | "AuthError"

/** A run the model started. */
interface Run {
  readonly n: number
  readonly message: string
  readonly onBusy: BusyPolicy
  readonly hold: Hold
  readonly stream: TamboStream
  /** Resolves once its stream ended. */
  driven: Promise<void>
  /** A `reject` run started while a run of the client was in flight. */
  conflict: boolean
  /** Stopped, or given up on by its caller: it ends cancelled. */
  mustEnd: boolean
  /** The `interrupt` runs (by number) that displace it: it ends cancelled. */
  readonly displacers: Set<number>
  /** It may be displaced (or survive a displacement): it ends with its reply or cancelled. */
  mayBeDisplaced: boolean
  ended: boolean
  /** Opens its gate on the server. */
  release: () => void
  /** The server started playing its script. */
  arrived: boolean
  /** The client saw its RUN_STARTED: it knows the server's run. */
  started: boolean
  runId: string | undefined
  /** It was cut (stopped, given up on, displaced) once its client knew the server's run. */
  cutKnown: boolean
  /** Its script is past its gate (or was stopped there): the server's run no longer waits on it. */
  left: boolean
  /** A Stop came while it waited for the thread (nothing of it on the server). */
  stoppedWaiting: boolean
  /** The thread the server played its script on. */
  threadOnServer: string | undefined
  /** Asked for on the model's thread, not on a new conversation. */
  readonly onModelThread: boolean
  /** It waited for credentials whose exchange failed: it ends with the AuthError unless cut. */
  noCredentials: boolean
}

/** The thread (`threadId`), the client, and every run the model started on the thread. */
class World extends OneThread.OneThreadWorld {
  readonly client: TamboClient
  readonly runs: Array<Run> = []
  /** How many scripts are at their gate on the server now, and the most there ever were. */
  atGate = 0
  mostAtGate = 0
  /** The paths of the `DELETE`s the proxy held (requests or answers). */
  readonly deletesSeen = new Set<string>()
  /** The runs (by number) in the order the server started them. */
  readonly arrivals: Array<number> = []
  /**
   * Nothing happened since the client settled: a run in flight not on the server waits for the
   * thread, behind the run the server holds.
   */
  steady = true

  constructor(server: TestServer, proxy: HoldingProxy.HoldingProxy) {
    // The user signs in with a token the client exchanges, as a browser app does.
    super(server, proxy, "Busy", "userToken")
    this.client = this.track(new TamboClient(this.clientOptions()))
  }

  /** The user's token renewed: the client exchanges it at once. */
  renewUserToken(): void {
    this.client.setUserToken(this.userToken())
  }

  live(): Array<Run> {
    return this.runs.filter((run) => !run.ended)
  }

  /** Whether `request` is the `DELETE` of a run on the thread (a Stop's, or a cancellation's). */
  deletesARun(request: HoldingProxy.ProxiedRequest): boolean {
    return request.method === "DELETE" && request.path.startsWith(`/v1/threads/${this.threadId}/runs/`)
  }
}

const ALL: ReadonlySet<Outcome> = new Set(["ok", "AbortError"])
const OK: ReadonlySet<Outcome> = new Set(["ok"])
const ABORTED: ReadonlySet<Outcome> = new Set(["AbortError"])
const CONFLICT: ReadonlySet<Outcome> = new Set(["RunConflictError"])
const NO_CREDENTIALS: ReadonlySet<Outcome> = new Set(["AuthError"])

const startRun = (world: World, onBusy: BusyPolicy, hold: Hold, newConversation = false): Run => {
  const n = world.nextN()
  // A new conversation's run is on no thread of another run unless the command says so.
  const busy = !newConversation && world.live().length > 0
  const gate = OneThread.gate()
  const message = world.scenario(`run ${n} ${onBusy} ${hold}`, async (request, context) => {
    run.arrived = true
    run.threadOnServer = request.threadId
    world.arrivals.push(n)
    if (hold === "gate") {
      world.atGate++
      world.mostAtGate = Math.max(world.mostAtGate, world.atGate)
      await OneThread.openedOrAborted(gate.opened, context.signal)
      world.atGate--
    }
    run.left = true
    return [Script.text(`re ${n}`)]
  })
  const stream = world.client.run(message, newConversation ? { onBusy } : { threadId: world.threadId, onBusy })
  // A run of the client in flight: `reject` conflicts; the others wait for it (or displace it).
  const conflict = busy && onBusy === "reject"
  // A run waits behind the runs asked for before it: an `interrupt` run still waiting for the
  // thread displaces the run holding it, or the runs waiting, when it gets there, never this one.
  const mayBeDisplaced = false
  const steady = world.steady
  world.steady = false
  const run: Run = {
    n,
    message,
    onBusy,
    hold,
    stream,
    driven: Promise.resolve(),
    conflict,
    mustEnd: false,
    displacers: new Set(),
    mayBeDisplaced,
    ended: false,
    release: gate.open,
    arrived: false,
    started: false,
    runId: undefined,
    cutKnown: false,
    left: false,
    stoppedWaiting: false,
    threadOnServer: undefined,
    onModelThread: !newConversation,
    noCredentials: false
  }
  if (busy && onBusy === "interrupt") {
    // It displaces whatever holds the thread when it gets there: the held run, or a queued run
    // that took the thread first.
    for (const other of world.live()) {
      if (other.arrived && !other.left) {
        other.displacers.add(n)
        other.cutKnown ||= other.started
      } // A run waiting for the thread ends, having sent nothing.
      else if (steady) {
        other.mustEnd = true
        other.stoppedWaiting = true
      } // One that may have taken the thread meanwhile is displaced there.
      else other.mayBeDisplaced = true
    }
  }
  run.driven = drive(run)
  world.runs.push(run)
  return run
}

/** Reads a run's stream to its end. */
const drive = async (run: Run): Promise<void> => {
  try {
    for await (const { event } of run.stream) {
      if (event.type === "RUN_STARTED") {
        run.runId = event.runId
        run.started = true
      }
    }
  } catch {
    // Its ending is judged by run-outcome.
  }
  run.ended = true
}

/** What a run may end with. */
const allowed = (run: Run): ReadonlySet<Outcome> =>
  run.conflict
    ? CONFLICT
    : run.mustEnd || run.displacers.size > 0
    ? ABORTED
    : run.noCredentials
    ? NO_CREDENTIALS
    : run.mayBeDisplaced
    ? ALL
    : OK

/** The client sent a `DELETE` of the run (the proxy holds it, or the server has it). */
const deleteReached = (world: World, run: Run): boolean =>
  run.runId !== undefined &&
  ([...world.deletesSeen].some((path) => path.endsWith(`/runs/${run.runId}`)) ||
    world.server.requests.some((request) => request.method === "DELETE" && request.path.endsWith(`/runs/${run.runId}`)))

/** The run the server holds at its gate, as its client knows it (it saw RUN_STARTED), if any. */
const heldRun = (world: World): Run | undefined => world.live().find((run) => run.arrived && run.started && !run.left)

/**
 * Settled: no run in flight; or one run held by the server at its gate and every other run in
 * flight a `queue` run that has not reached the server (it waits for the held one).
 */
const isSettled = (world: World): boolean => {
  const live = world.live()
  if (live.length === 0) return true
  const held = heldRun(world)
  // A run cut (stopped, given up on, displaced) is on its way out.
  if (held === undefined || !allowed(held).has("ok")) return false
  return live.every((run) => run === held || (run.onBusy === "queue" && !run.arrived))
}

const settleWorld = async (world: World): Promise<void> => {
  if (!(await eventually(() => isSettled(world), 5_000))) {
    const live = world.live().map((run) => ({ n: run.n, onBusy: run.onBusy, arrived: run.arrived, left: run.left, allowed: [...allowed(run)] }))
    throw new Model.InvariantError("command-settles", `the client did not settle: ${JSON.stringify(live)}`)
  }
  world.steady = true
}

/** A Stop: every run in flight ends cancelled; those still waiting for the thread send nothing. */
const stopping = (world: World): void => {
  world.steady = false
  for (const run of world.live()) {
    run.mustEnd = true
    run.cutKnown ||= run.started
    if (!run.arrived) run.stoppedWaiting = true
  }
}

/** Gives up on the i-th run in flight (nothing without one); resolves once it ended. */
const abortRun = (world: World, which: number): Promise<void> => {
  world.steady = false
  const live = world.live()
  const run = live[which % Math.max(live.length, 1)]
  if (run === undefined) return Promise.resolve()
  run.mustEnd = true
  run.cutKnown ||= run.started
  run.stream.abort()
  // An `interrupt` run given up on before it asked for the cancellation of the run it displaces
  // (the server has no DELETE of it yet) may have asked for nothing: that run may go on.
  for (const other of world.live()) {
    if (!other.displacers.has(run.n) || deleteReached(world, other)) continue
    other.displacers.delete(run.n)
    other.mayBeDisplaced = true
  }
  return run.driven
}

/** A Stop of the thread; resolves once `cancelRun` did. */
const stop = (world: World): Promise<void> => {
  stopping(world)
  return world.client.cancelRun(world.threadId).then(
    () => undefined,
    (error: unknown) => {
      throw new Error(`cancelRun failed: ${String(error)}`)
    }
  )
}

/** Does `meanwhile` (a `reject` run started: until it ended); `done` resolves once what it started did. */
const doMeanwhile = async (world: World, meanwhile: Meanwhile | undefined): Promise<{ readonly done: Promise<void> }> => {
  if (meanwhile === undefined) return { done: Promise.resolve() }
  switch (meanwhile.kind) {
    case "start": {
      const run = startRun(world, meanwhile.onBusy, meanwhile.hold)
      // A run started meanwhile finds the cut run still in flight in the client.
      if (run.conflict) await run.driven
      return { done: Promise.resolve() }
    }
    case "stop":
      return { done: stop(world) }
    case "abort":
      return { done: abortRun(world, meanwhile.which) }
  }
}

const cut = async (world: World, command: Extract<Command, { kind: "cut" }>): Promise<void> => {
  const held = heldRun(world)
  if (held === undefined) return
  const deleting = (request: HoldingProxy.ProxiedRequest) => {
    const matches = world.deletesARun(request)
    if (matches) world.deletesSeen.add(request.path)
    return matches
  }
  const answer = command.holdDelete === "request"
    ? world.proxy.holdRequest(deleting)
    : command.holdDelete === "answer"
    ? world.proxy.holdResponse(deleting)
    : undefined
  const cutting = cutBy(world, held, command.how, command.hold)
  if (answer !== undefined) await answer.arrived
  const meanwhile = await doMeanwhile(world, command.meanwhile)
  answer?.release()
  await Promise.all([cutting, meanwhile.done])
  return settleWorld(world)
}

/** Starts the cut of the run `held` as `how` says; resolves once it is done. */
const cutBy = (world: World, held: Run, how: "stop" | "abort" | "interrupt", hold: Hold): Promise<void> => {
  switch (how) {
    case "stop":
      return stop(world)
    case "abort":
      return abortRun(world, world.live().indexOf(held))
    case "interrupt":
      startRun(world, "interrupt", hold)
      return Promise.resolve()
  }
}

const lateAnswer = async (world: World, command: LateAnswer): Promise<void> => {
  if (world.live().length > 0) return
  const path = `/v1/threads/${world.threadId}/runs`
  const answer = world.proxy.holdResponse((request) => request.method === "POST" && request.path === path)
  const run = startRun(world, command.onBusy, "gate")
  await answer.arrived
  const cutting = cutBy(world, run, command.how, command.hold)
  const meanwhile = await doMeanwhile(world, command.meanwhile)
  answer.release()
  await Promise.all([cutting, meanwhile.done])
  return settleWorld(world)
}

/** The thread a run ended on, if it ended with its reply. */
const endedOn = async (run: Run): Promise<string | undefined> => {
  const thread = await settle(run.stream.thread)
  return thread.ok ? thread.value.id : undefined
}

const newConversation = async (world: World, command: NewConversation): Promise<void> => {
  if (world.live().length > 0) return
  world.client.startNewThread()
  const answer = command.named === "answer"
    ? world.proxy.holdResponse((request) => request.method === "POST" && request.path === "/v1/threads/runs")
    : undefined
  const first = startRun(world, "reject", "gate", true)
  if (answer !== undefined) await answer.arrived
  else if (!(await eventually(() => first.started || first.ended, 5_000))) {
    throw new Model.InvariantError("command-settles", "the first run of the new conversation never started")
  }
  if (command.newBetween) world.client.startNewThread()
  const second = startRun(world, command.onBusy, "none", true)
  // Without a new conversation between, the second run is a second run of the first one's thread.
  const follows = !command.newBetween
  if (follows && command.onBusy === "reject") second.conflict = true
  if (follows && command.onBusy === "interrupt") {
    first.displacers.add(second.n)
    first.cutKnown ||= first.started
  }
  if (follows && command.onBusy === "reject") await second.driven
  answer?.release()
  // The second run waits for the first (queue) or has displaced it (interrupt): let the first go.
  if (follows && command.onBusy === "interrupt") await first.driven
  else if (!(await eventually(() => first.arrived, 5_000))) {
    throw new Model.InvariantError("command-settles", "the first run of the new conversation never reached the server")
  }
  first.release()
  await Promise.all([first.driven, second.driven])
  await checks.check("run-thread", async () => {
    const [a, b] = await Promise.all([endedOn(first), endedOn(second)])
    if (a === world.threadId || b === world.threadId) throw new Error("a new conversation's run ended on the model's thread")
    if (follows && command.onBusy === "queue" && a !== b) {
      throw new Error(`run ${second.n} (queue) followed run ${first.n} on its new conversation and ended on ${b}, not on ${a}`)
    }
    // Displaced before its answer came, the first run's answer still names its thread: the second goes there.
    if (follows && command.onBusy === "interrupt" && b !== first.threadOnServer) {
      throw new Error(`run ${second.n} (interrupt) displaced run ${first.n} on thread ${first.threadOnServer} and ended on ${b}`)
    }
    if (command.newBetween && b !== undefined && b === first.threadOnServer) {
      throw new Error(`run ${second.n} should have created a thread of its own, and ended on run ${first.n}'s ${b}`)
    }
    for (const threadId of new Set([a, b, first.threadOnServer])) {
      if (threadId === undefined) continue
      const texts = world.userTexts(threadId)
      for (const text of new Set(texts)) {
        if (texts.filter((t) => t === text).length > 1) throw new Error(`the message ${JSON.stringify(text)} is on thread ${threadId} more than once`)
      }
      if (!(await eventually(() => world.server.threads.get(threadId)?.runStatus === "idle"))) {
        throw new Error(`the server's thread ${threadId} is not idle after both runs ended`)
      }
      await world.storeEqualsServer(world.client, threadId)
    }
    if (b !== undefined && !world.userTexts(b).includes(second.message)) {
      throw new Error(`run ${second.n} ended on ${b}, which does not hold its message`)
    }
  })
  return settleWorld(world)
}

/**
 * What the runs that waited for their credentials end with, once the exchange is answered
 * (`granted`) or failed. They take the thread in the order they were asked for once they have
 * credentials: an `interrupt` run then displaces the runs before it (they end having sent nothing),
 * unless its caller gave up on it first; a `reject` run conflicts with a run asked for before it
 * that took the thread. A failed exchange ends every run it did not cut with its AuthError.
 */
const judgeWaiting = (runs: ReadonlyArray<Run>, byCaller: ReadonlySet<Run>, granted: boolean): void => {
  let holder = false
  runs.forEach((run, i) => {
    const displaced = runs.slice(i + 1).some((later) => later.onBusy === "interrupt" && !byCaller.has(later))
    run.mustEnd = byCaller.has(run) || (granted && displaced)
    run.stoppedWaiting = run.mustEnd
    run.conflict = granted && holder && run.onBusy === "reject" && !byCaller.has(run)
    run.noCredentials = !granted && !run.mustEnd
    holder ||= !byCaller.has(run)
  })
}

/** Resolves once the client exchanged its user token. */
const identified = async (world: World): Promise<void> => {
  if (!(await eventually(() => world.client.getAuthState().status === "identified", 5_000))) {
    throw new Model.InvariantError("command-settles", "the user token was never exchanged")
  }
}

/** Cuts the runs waiting for their credentials as `how` says (an `interrupt` run joins `runs`); resolves once done. */
const cutWaiting = (world: World, { how, which }: Credentials, runs: Array<Run>): Promise<void> => {
  switch (how) {
    case "stop":
      return stop(world)
    case "abort":
      return abortRun(world, which)
    case "interrupt":
      runs.push(startRun(world, "interrupt", "gate"))
      return Promise.resolve()
    case "none":
      return Promise.resolve()
  }
}

const credentials = async (world: World, command: Credentials): Promise<void> => {
  if (world.live().length > 0) return
  // The exchange held is the renewal's, not one the client started before.
  await identified(world)
  const exchange = world.proxy.holdRequest((request) => request.method === "POST" && request.path === "/oauth/token")
  world.renewUserToken()
  await exchange.arrived
  // Each run waits for the credentials: none of them sent anything.
  const runs = command.runs.map(({ hold, onBusy }) => startRun(world, onBusy, hold))
  // Ended by a Stop or by their caller: decided by the cut alone, not by the `interrupt` runs.
  for (const run of runs) run.mustEnd = false
  const cutting = cutWaiting(world, command, runs)
  const byCaller = new Set(command.how === "interrupt" ? [] : runs.filter((run) => run.mustEnd))
  judgeWaiting(runs, byCaller, command.exchange === "release")
  if (command.exchange === "release") exchange.release()
  else if (command.exchange === "fail") exchange.fail(401, { message: "invalid subject token" })
  else exchange.reset()
  await cutting
  if (command.exchange !== "release") {
    // A token renewed before the failure came would be exchanged for the runs instead.
    await Promise.all(runs.map((run) => run.driven))
    // The user signs in again: the runs after this one have new credentials.
    world.renewUserToken()
    await identified(world)
  }
  return settleWorld(world)
}

const play = async (world: World, command: Command): Promise<void> => {
  switch (command.kind) {
    case "start": {
      startRun(world, command.onBusy, command.hold)
      return settleWorld(world)
    }
    case "finish": {
      const held = heldRun(world)
      if (held === undefined) return
      held.release()
      await held.driven
      return settleWorld(world)
    }
    case "abort":
      await abortRun(world, command.which)
      return settleWorld(world)
    case "cut":
      return cut(world, command)
    case "lateAnswer":
      return lateAnswer(world, command)
    case "newConversation":
      return newConversation(world, command)
    case "credentials":
      return credentials(world, command)
    case "stop": {
      // Only a run the server holds is DELETEd: without one, nothing comes to hold.
      const answer = command.holdDelete && heldRun(world) !== undefined
        ? world.proxy.holdResponse((request) => world.deletesARun(request))
        : undefined
      stopping(world)
      const stopped = settle(world.client.cancelRun(world.threadId))
      if (answer !== undefined) {
        await answer.arrived
        const then = command.then === undefined ? undefined : startRun(world, command.then.onBusy, command.then.hold)
        // A run started meanwhile finds the stopped run still in flight in the client.
        if (then !== undefined && then.conflict) await then.driven
        answer.release()
      } else if (command.then !== undefined) {
        startRun(world, command.then.onBusy, command.then.hold)
      }
      const result = await stopped
      if (!result.ok) throw new Error(`cancelRun failed: ${String(result.error)}`)
      return settleWorld(world)
    }
  }
}

// -----------------------------------------------------------------------------
// Invariants
// -----------------------------------------------------------------------------

const checks = new Model.Invariants<Invariant>(INVARIANTS, KNOWN_OPEN)

const afterCommand = async (world: World, command: Command | "wind-down"): Promise<void> => {
  await checks.check("run-outcome", async () => {
    for (const run of world.runs) {
      if (!run.ended) continue
      const outcome = await settle(run.stream.thread)
      const tag = outcome.ok ? "ok" : (outcome.error as { _tag?: string })._tag ?? String(outcome.error)
      if (!allowed(run).has(tag as Outcome)) {
        const detail = outcome.ok ? "" : ` (${(outcome.error as Error).message})`
        throw new Error(`run ${run.n} (${run.onBusy}, ${run.hold}) ended ${tag}${detail} after ${JSON.stringify(command)}; the model allows ${[...allowed(run)].join(" | ")}`)
      }
    }
  })
  await checks.check("run-outcome", () => {
    const held = heldRun(world)
    if (held !== undefined && !allowed(held).has("ok")) {
      throw new Error(`run ${held.n} (${held.onBusy}, ${held.hold}), cut by ${JSON.stringify(command)} or before, is still held by the server`)
    }
  })
  await checks.check("one-run-on-server", () => {
    if (world.mostAtGate > 1) throw new Error(`${world.mostAtGate} runs were held on the server at once`)
  })
  await checks.check("start-order", () => {
    const out = world.arrivals.findIndex((n, i) => i > 0 && n < world.arrivals[i - 1]!)
    if (out > 0) throw new Error(`run ${world.arrivals[out]} reached the server after run ${world.arrivals[out - 1]}, asked for after it: ${world.arrivals.join(", ")}`)
  })
  await checks.check("stopped-never-sent", () => {
    const texts = new Set(world.userTexts())
    for (const run of world.runs) {
      if (!run.stoppedWaiting) continue
      if (run.arrived) throw new Error(`run ${run.n}, waiting when a Stop or an interrupting run came, reached the server afterwards`)
      if (texts.has(run.message)) throw new Error(`run ${run.n}, waiting when a Stop or an interrupting run came, has its message on the server`)
    }
  })
  await checks.check("sent-once", () => OneThread.sentOnce(world))
  await checks.check("cut-is-user-cancel", () => {
    for (const cancel of world.server.cancels) {
      if (cancel.reason === "user_cancelled") continue
      const run = world.runs.find((r) => r.runId === cancel.runId)
      if (run?.cutKnown === true) throw new Error(`run ${run.n}, cut once its client knew the server's run, was cancelled by a closed connection`)
    }
  })
  await checks.noRejection(world)
  await checks.check("idle-and-equal", async () => {
    // The client reads the thread before a run of it reaches the server (a run stopped or refused
    // while it waited for its credentials read nothing).
    if (world.live().length > 0 || !world.runs.some((run) => run.onModelThread && run.arrived)) return
    const idle = await eventually(() => world.serverIdle())
    if (!idle) throw new Error(`the server's thread is ${world.serverThread()?.runStatus} with no run in flight`)
    const quiet = await eventually(() => !world.client.hasActiveRun(world.threadId) && !world.client.hasActiveRun())
    if (!quiet) throw new Error("the client has a run in flight after every run ended")
    await world.storeEqualsServer(world.client)
  })
}

/** Lets every held run finish, then checks once more. */
const windDown = async (world: World): Promise<void> => {
  for (let i = 0; i < world.runs.length && world.live().length > 0; i++) await play(world, { kind: "finish" })
  await afterCommand(world, "wind-down")
}

// -----------------------------------------------------------------------------
// Sequences
// -----------------------------------------------------------------------------

/** One command: played (it must end, and the client settle), then the invariants checked. */
const step = async (world: World, command: Command): Promise<void> => {
  await checks.liveness(play(world, command), command)
  await afterCommand(world, command)
}

/**
 * The property's sequences (`runSequence`, `replay` of a counterexample, `commandsArbitrary`):
 * commands played against a fresh client of a fresh server (behind a holding proxy), every
 * invariant checked after each and once every run ended; then what is still held is let go, the
 * client destroyed, and checked to have left no handle.
 */
export const { commandsArbitrary, replay, replayAgainst, runSequence, sequenceAgainst } = OneThread.entryPoints({
  invariants: checks,
  command: commandArbitrary,
  step,
  world: (server: TestServer, proxy: HoldingProxy.HoldingProxy) => new World(server, proxy),
  windDown,
  letGo: (world: World) => {
    for (const run of world.runs) run.release()
  }
})
