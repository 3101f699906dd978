// The model-based test of two clients on one thread: this tab (`A`) and another tab of the same
// user (`B`), each a TamboClient of the same testing server, with one thread they share. Commands
// start runs on it (run to their end, or held by the server: after RUN_STARTED before the reply, or
// mid-reply; or paused for a tool of its client, whose execution waits), finish or stop the held run (by its own client, or by the other one through
// `cancelRun`), and read the thread (`fetchThread`) from either side at any point. The invariants
// of INVARIANTS are checked after every command, and once more when the sequence winds down.
// The property is twoClients.model.test.ts; the named counterexamples go to counterexamples.test.ts.
import { type HoldingProxy, Script, type TestServer } from "@tambo-effect/testing"
import { FastCheck as fc } from "effect"
import * as Schema from "effect/Schema"
import { type ClientState, TamboClient, type TamboStream, type TamboThread, type TamboTool } from "../../src/index.js"
import * as OneThread from "./oneThread.js"
import * as Model from "./support.js"
import { eventually, settle } from "./support.js"

// -----------------------------------------------------------------------------
// The switch
// -----------------------------------------------------------------------------

/** Every invariant the model checks, in the order it checks them after a command. */
export const INVARIANTS = [
  /** The command ends (a liveness bound, not a timing assertion). */
  "command-settles",
  /**
   * Each run that ended ends as the model says: with its reply as its thread's last message, with
   * RunConflictError (started while a run was active on the thread), or with AbortError (stopped
   * by its own client, or by the other client's `cancelRun` on the server).
   */
  "run-outcome",
  /**
   * A read of the thread while the other client's run is held shows that run: `status` not idle.
   * A run paused for its client's tools is over on the server (its calls pending): that shows idle.
   */
  "read-shows-run",
  /**
   * A held run is still in flight in its client, its thread not idle there (but while its tools
   * run: the server's step is over), whatever the other client did.
   */
  "own-run-undisturbed",
  /**
   * Each tool call is executed once, by the client whose run it is: never by the other client, to
   * which a read of the thread shows the call pending while that run's tool works on it.
   */
  "tool-runs-once",
  /** A client without a held run has no run in flight and no approval pending. */
  "no-run-in-flight",
  /** Every message the server took, it took once; every run was cancelled (and asked to be) at most once. */
  "sent-once",
  /** No unhandled rejection during the command. */
  "no-unhandled-rejection",
  /** A client that read the thread since it last changed on the server has it as the server has it. */
  "store-equals-server",
  /** After both clients' `destroy()`, no handle of them is left open. */
  "no-open-handles"
] as const

/** @see INVARIANTS */
export type Invariant = (typeof INVARIANTS)[number]

/** Invariants the property does not check because a known defect breaks them (see harness.ts). */
export const KNOWN_OPEN: ReadonlySet<Invariant> = new Set<Invariant>([])

// -----------------------------------------------------------------------------
// Commands
// -----------------------------------------------------------------------------

/** This tab (`A`) or the other one (`B`). */
export type Who = "A" | "B"

/** What a run streams: text, or text and a component (whose props stream). */
export type Reply = "text" | "component"

/**
 * Whether the server holds a run: `none` plays it to its end; `gate` holds it after RUN_STARTED,
 * before its reply, until `finish`; `text` holds it after its whole reply streamed, until a stop;
 * `tool` pauses it for the `probe` tool of its client, whose execution waits for `finish` (or a
 * stop): the server's run is over meanwhile, its call pending, and the other client may run on
 * the thread (its message answers the call as cancelled).
 */
export type Hold = "none" | "gate" | "text" | "tool"

/**
 * How a held run is stopped: by its client's `cancelRun` or `abort()`, or by the other client's
 * `cancelRun` (which stops it where a read showed that client the run).
 */
export type StopHow = "cancelRun" | "abort" | "otherCancelRun"

/** One command: plain data, so a counterexample can be replayed as a table. */
export type Command =
  | { readonly kind: "start"; readonly who: Who; readonly reply: Reply; readonly hold: Hold }
  /** Lets `who`'s run held at its gate play its reply to its end (nothing otherwise). */
  | { readonly kind: "finish"; readonly who: Who }
  /** Stops `who`'s held run (nothing without one). */
  | { readonly kind: "stop"; readonly who: Who; readonly how: StopHow }
  /**
   * `fetchThread` of the shared thread by `who`; `late`: its answer, given by the server at once,
   * reaches the client only after the next command (an answer arriving late).
   */
  | { readonly kind: "read"; readonly who: Who; readonly late: boolean }

const who = fc.constantFrom<Who>("A", "B")

/** The generator of commands. */
export const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("start" as const),
      who,
      reply: fc.constantFrom<Reply>("text", "component"),
      hold: fc.constantFrom<Hold>("none", "gate", "text", "tool")
    })
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("finish" as const), who }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("stop" as const), who, how: fc.constantFrom<StopHow>("cancelRun", "abort", "otherCancelRun") })
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("read" as const), who, late: fc.boolean() }) }
)

// -----------------------------------------------------------------------------
// The world
// -----------------------------------------------------------------------------

/**
 * What the model expects a run to end with. A run whose tool round the other client's run
 * overtook (it answered the call as cancelled) has its results refused: `ApiError`.
 */
type Expected = "ok" | "RunConflictError" | "AbortError" | "ApiError"

/** A run the server holds, started by `who`. */
interface Held {
  readonly who: Who
  readonly hold: Exclude<Hold, "none">
  readonly reply: Reply
  readonly message: string
  readonly stream: TamboStream
  /** Lets a run held at its gate play its reply. */
  readonly release: () => void
  /** Its driver: resolves once the stream ended. */
  readonly driven: Promise<void>
  /** A `tool` hold the other client's run overtook: that run answered the call, as cancelled. */
  overtaken: boolean
}

/** One execution of the probe tool: by which client, for a call of whose run. */
interface ProbeRun {
  readonly by: Who
  readonly of: Who
  readonly n: number
}

const CARD = {
  name: "Card",
  description: "A card",
  propsSchema: { type: "object", properties: { title: { type: "string" } } }
} as const

/** The replies, as streamed. */
const REPLY: Record<Reply, Script.Script> = {
  text: [Script.text(["Hel", "lo"])],
  component: [Script.text("A card"), Script.component("Card", [{ title: "a" }, { title: "ab" }])]
}

/** The text the reply's message starts with. */
const REPLY_TEXT: Record<Reply, string> = { text: "Hello", component: "A card" }

/** The shared thread (`threadId`), and both clients on it. */
class World extends OneThread.OneThreadWorld {
  readonly clients: Record<Who, TamboClient>
  /** The run the server holds, if any (at most one: one run at a time on a thread). */
  held: Held | undefined
  /** Whether each client read the thread since it last changed on the server (its store must equal it). */
  readonly fresh: Record<Who, boolean> = { A: false, B: false }
  /** Each run's expected ending. */
  readonly expected = new Map<TamboStream, Expected>()
  /** Each run's reply. */
  readonly replies = new Map<TamboStream, Reply>()
  /** The runs that ended in the command being checked. */
  ended: Array<TamboStream> = []
  /** The last read, for `read-shows-run`: who read, whether the other's run was held, and what the store then showed. */
  lastRead: { readonly who: Who; readonly otherHeld: Held | undefined; readonly state: ClientState } | undefined
  /** A read whose answer the proxy holds until the next command played. */
  lateRead: { readonly who: Who; readonly read: Promise<unknown>; readonly release: () => void; readonly changes: number } | undefined
  /** How many times the thread changed on the server. */
  changes = 0
  /** Every execution of the probe tool, by either client. */
  readonly probeRuns: Array<ProbeRun> = []
  /** The tool calls' gates, by call number: the execution returns once its gate opens. */
  readonly toolGates = new Map<number, Promise<void>>()
  /** The reply of a `tool` run once its call is answered, by call number. */
  readonly toolReplies = new Map<number, Reply>()

  constructor(server: TestServer, proxy: HoldingProxy.HoldingProxy) {
    super(server, proxy, "Shared")
    this.clients = { A: makeClient(this, "A"), B: makeClient(this, "B") }
  }

  /** A tool round's results get the reply of the run that called the probe; a run's message, its scenario. */
  override script(request: Script.RunRequest, context: Script.ScriptContext) {
    if (request.text === "" && request.toolResults.length > 0) {
      const answer = /"n":(\d+)/.exec(request.toolResults[0]!.text)
      const reply = answer === null ? undefined : this.toolReplies.get(Number(answer[1]))
      return reply === undefined ? [Script.text("unknown tool round")] : REPLY[reply]
    }
    return super.script(request, context)
  }

  /** Something changed the thread on the server: neither store is known to equal it. */
  changed(): void {
    this.changes++
    this.fresh.A = false
    this.fresh.B = false
  }

  /** Lets a late read's answer reach its client, and waits for the read. */
  async releaseLateRead(): Promise<void> {
    const late = this.lateRead
    if (late === undefined) return
    this.lateRead = undefined
    late.release()
    await late.read
    // Its answer is still what the server has, if nothing changed since and no run of its client is on the thread.
    if (this.changes === late.changes && this.held?.who !== late.who) this.fresh[late.who] = true
  }
}

const other = (w: Who): Who => (w === "A" ? "B" : "A")

/**
 * The probe tool of client `by`: records the execution, then returns once the call's gate opened
 * (or its executor gave up on it).
 */
const probeOf = (world: World, by: Who): TamboTool<{ readonly of: Who; readonly n: number }, { readonly n: number }> => ({
  name: "probe",
  description: "Records its call and waits",
  inputSchema: Schema.Struct({ of: Schema.Literal("A", "B"), n: Schema.Number }),
  tool: async ({ n, of }, { signal }) => {
    world.probeRuns.push({ by, of, n })
    world.started.get(n)?.()
    await OneThread.openedOrAborted(world.toolGates.get(n), signal)
    return { n }
  }
})

const makeClient = (world: World, by: Who): TamboClient =>
  world.track(new TamboClient({ ...world.clientOptions(), components: [CARD], tools: [probeOf(world, by)] }))

// -----------------------------------------------------------------------------
// Playing commands
// -----------------------------------------------------------------------------

/** Reads a run's stream to its end; `seen` hears every event. */
const driveRun = async (stream: TamboStream, seen: (type: string) => void = () => {}): Promise<void> => {
  try {
    for await (const { event } of stream) seen(event.type)
  } catch {
    // Its ending is judged by run-outcome.
  }
}

/** The server's copy of the shared thread holds the whole reply of a run held mid-reply. */
const replyStreamed = (world: World, reply: Reply): boolean => {
  const last = world.serverThread()?.messages.at(-1)
  if (last?.role !== "assistant") return false
  const text = last.content[0]
  if (text?.type !== "text" || text.text !== REPLY_TEXT[reply]) return false
  if (reply === "text") return true
  const card = last.content[1]
  return card?.type === "component" && JSON.stringify(card.props) === JSON.stringify({ title: "ab" })
}

const start = async (world: World, given: Extract<Command, { kind: "start" }>): Promise<void> => {
  const client = world.clients[given.who]
  // The other client's run paused for its tools: the server's thread is idle, and this run takes
  // it (answering that call as cancelled); it is played to its end.
  const overtaking = world.held?.hold === "tool" && world.held.who !== given.who
  const command = overtaking ? { ...given, hold: "none" as const } : given
  const gate = OneThread.gate()
  const n = command.hold === "tool" ? world.nextN() : 0
  if (command.hold === "tool") {
    world.toolGates.set(n, gate.opened)
    world.toolReplies.set(n, command.reply)
  }
  const message = world.scenario(`${command.who} ${command.reply} ${command.hold}`, async (_request, context) => {
    // Held until `finish`, or until the run is cancelled (then what it returns is not played).
    if (command.hold === "gate") await OneThread.openedOrAborted(gate.opened, context.signal)
    if (command.hold === "tool") return [Script.toolCall("probe", { of: command.who, n })]
    return command.hold === "text" ? [...REPLY[command.reply], Script.hang()] : REPLY[command.reply]
  })
  const stream = client.run(message, { threadId: world.threadId })
  world.replies.set(stream, command.reply)
  if (overtaking) world.held!.overtaken = true
  else if (world.held !== undefined) {
    // A run is active on the thread: in this client (ActiveInClient) or on the server (ActiveOnServer).
    world.expected.set(stream, "RunConflictError")
    await driveRun(stream)
    world.ended.push(stream)
    return
  }
  world.expected.set(stream, "ok")
  world.changed()
  if (command.hold === "none") {
    await driveRun(stream)
    world.ended.push(stream)
    // Its end read the thread, with no other run on it.
    world.fresh[command.who] = true
    return
  }
  const runStarted = OneThread.gate()
  const driven = driveRun(stream, (type) => type === "RUN_STARTED" && runStarted.open())
  world.held = { who: command.who, hold: command.hold, reply: command.reply, message, stream, release: gate.open, driven, overtaken: false }
  if (command.hold === "tool") {
    // Held once its tool runs: the server's step is over, the call pending there.
    await Promise.race([world.startedPromises.get(n), driven])
    await eventually(() => world.serverIdle())
    return
  }
  // Held where the command says: after RUN_STARTED, or once the server holds the whole reply.
  await Promise.race([runStarted.opened, driven])
  if (command.hold === "text") await eventually(() => replyStreamed(world, command.reply), 4_000)
  await eventually(() => !world.serverIdle())
}

/** The held run's end: the server's thread changed, and its client read it at its end. */
const ended = async (world: World, held: Held, expected: Expected, readBy: ReadonlyArray<Who>): Promise<void> => {
  world.expected.set(held.stream, expected)
  await held.driven
  world.held = undefined
  world.ended.push(held.stream)
  world.changed()
  for (const who of readBy) world.fresh[who] = true
}

const play = async (world: World, command: Command): Promise<void> => {
  world.ended = []
  world.lastRead = undefined
  switch (command.kind) {
    case "start":
      return start(world, command)
    case "finish": {
      const held = world.held
      if (held === undefined || held.who !== command.who || (held.hold !== "gate" && held.hold !== "tool")) return
      held.release()
      return ended(world, held, held.overtaken ? "ApiError" : "ok", [held.who])
    }
    case "stop": {
      const held = world.held
      if (held === undefined || held.who !== command.who) return
      switch (command.how) {
        case "cancelRun":
          await settle(world.clients[held.who].cancelRun(world.threadId))
          return ended(world, held, "AbortError", [held.who])
        case "abort":
          held.stream.abort()
          return ended(world, held, "AbortError", [held.who])
        case "otherCancelRun": {
          // The other tab cancels the run its store shows (a read of the thread showed it), on the
          // server, and reads the thread again; the run's own client learns it from its stream. A
          // tab that shows no run cancels nothing.
          const canceller = other(held.who)
          const shows = world.clients[canceller].getThread(world.threadId)?.status
          const cancelled = await settle(world.clients[canceller].cancelRun(world.threadId))
          if (!cancelled.ok) throw new Error(`cancelRun by ${canceller} failed: ${String(cancelled.error)}`)
          if (shows === undefined || shows === "idle") return
          await ended(world, held, "AbortError", [held.who, canceller])
          return
        }
      }
      return
    }
    case "read": {
      const client = world.clients[command.who]
      const held = world.held
      if (command.late && world.lateRead === undefined) {
        const path = `/v1/threads/${world.threadId}`
        const answer = world.proxy.holdResponse((request) => request.method === "GET" && request.path === path)
        const read = settle(client.fetchThread(world.threadId))
        await answer.arrived
        world.lateRead = { who: command.who, read, release: answer.release, changes: world.changes }
        return
      }
      const read = await settle(client.fetchThread(world.threadId))
      if (!read.ok) throw new Error(`fetchThread by ${command.who} failed: ${String(read.error)}`)
      const otherHeld = held !== undefined && held.who !== command.who ? held : undefined
      world.lastRead = { who: command.who, otherHeld, state: client.getState() }
      // A read by a run's own client is not applied while its run streams.
      if (held?.who !== command.who) world.fresh[command.who] = true
      return
    }
  }
}

// -----------------------------------------------------------------------------
// Invariants
// -----------------------------------------------------------------------------

const checks = new Model.Invariants<Invariant>(INVARIANTS, KNOWN_OPEN)

const lastText = (thread: TamboThread): string | undefined => {
  const last = thread.messages.at(-1)
  return last?.role === "assistant" && last.content[0]?.type === "text" ? last.content[0].text : undefined
}

const afterCommand = async (world: World, command: Command): Promise<void> => {
  await checks.outcomes(world.ended, JSON.stringify(command), (stream) => world.expected.get(stream)!)
  await checks.check("run-outcome", async () => {
    for (const stream of world.ended) {
      const outcome = await settle(stream.thread)
      if (!outcome.ok) continue
      const text = lastText(outcome.value)
      const reply = world.replies.get(stream)!
      if (text !== REPLY_TEXT[reply]) throw new Error(`a run of ${JSON.stringify(command)} resolved with ${JSON.stringify(text)} last, not its reply`)
    }
  })
  await checks.check("read-shows-run", () => {
    const read = world.lastRead
    if (read?.otherHeld === undefined || read.otherHeld.hold === "tool") return
    const thread = read.state.threadMap[world.threadId]?.thread
    if (thread === undefined) throw new Error(`a read by ${read.who} while ${read.otherHeld.who}'s run is held left the thread out of the store`)
    if (thread.status === "idle") throw new Error(`a read by ${read.who} while ${read.otherHeld.who}'s run is held shows the thread idle`)
    if (read.otherHeld.hold === "text" && read.otherHeld.reply === "component") {
      const card = thread.messages.at(-1)?.content.find((block) => block.type === "component")
      if (card?.type !== "component" || card.streamingState !== "streaming") {
        throw new Error(`a read by ${read.who} mid-reply of ${read.otherHeld.who}'s run shows its component ${card?.type === "component" ? card.streamingState : "missing"}`)
      }
    }
  })
  await checks.check("own-run-undisturbed", () => {
    const held = world.held
    if (held === undefined) return
    const client = world.clients[held.who]
    if (!client.hasActiveRun(world.threadId)) throw new Error(`${held.who}'s held run is no longer in flight`)
    if (held.hold === "tool") return
    const status = client.getState().threadMap[world.threadId]?.thread.status
    if (status === undefined || status === "idle") throw new Error(`${held.who}'s held run shows its thread ${status ?? "missing"}`)
  })
  await checks.check("no-run-in-flight", async () => {
    for (const w of ["A", "B"] as const) {
      if (world.held?.who === w) continue
      const client = world.clients[w]
      const idle = await eventually(() => !client.hasActiveRun() && !client.hasActiveRun(world.threadId) && client.getPendingApprovals().length === 0)
      if (!idle) throw new Error(`${w} has a run in flight and holds none`)
    }
  })
  // A request the server refused before any work (a stale previousRunId: the other client moved
  // the thread on) is asked again once; what counts is what the server took.
  await checks.check("sent-once", () => OneThread.sentOnce(world))
  await checks.check("tool-runs-once", () => {
    const seen = new Set<number>()
    for (const execution of world.probeRuns) {
      if (execution.by !== execution.of) throw new Error(`${execution.by} executed call ${execution.n} of ${execution.of}'s run`)
      if (seen.has(execution.n)) throw new Error(`call ${execution.n} was executed twice`)
      seen.add(execution.n)
    }
  })
  await checks.noRejection(world)
  await checks.check("store-equals-server", () => storeChecks(world))
}

const storeChecks = async (world: World): Promise<void> => {
  // A held run's server copy is still while it is held; others wind down on the server's time.
  if (world.held === undefined) await eventually(() => world.serverIdle())
  for (const w of ["A", "B"] as const) {
    if (!world.fresh[w]) continue
    try {
      await world.storeEqualsServer(world.clients[w])
    } catch (error) {
      throw new Error(`${w}'s store: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
}

/** Once no run is held: both clients read the thread, and each store equals the server. */
const windDown = async (world: World): Promise<void> => {
  await world.releaseLateRead()
  const held = world.held
  if (held !== undefined) {
    if (held.hold === "gate" || held.hold === "tool") {
      held.release()
      await ended(world, held, held.overtaken ? "ApiError" : "ok", [held.who])
    } else {
      held.stream.abort()
      await ended(world, held, "AbortError", [held.who])
    }
    await afterCommand(world, { kind: "finish", who: held.who })
  }
  for (const w of ["A", "B"] as const) {
    await settle(world.clients[w].fetchThread(world.threadId))
    world.fresh[w] = true
  }
  await checks.check("store-equals-server", () => storeChecks(world))
}

// -----------------------------------------------------------------------------
// Sequences
// -----------------------------------------------------------------------------

/** One command: played (it must end), the late read of the command before let go, then the invariants checked. */
const step = async (world: World, command: Command): Promise<void> => {
  const late = world.lateRead
  await checks.liveness(play(world, command), command)
  // The answer held since the command before reaches its client now.
  if (late !== undefined) await checks.liveness(world.releaseLateRead(), "a late read")
  await afterCommand(world, command)
}

/**
 * The property's sequences (`runSequence`, `replay` of a counterexample, `commandsArbitrary`):
 * commands played against two fresh clients of a fresh server (behind a holding proxy), every
 * invariant checked after each and once both read the thread at the end; then what is still held
 * is let go, both clients destroyed, and checked to have left no handle.
 */
export const { commandsArbitrary, replay, replayAgainst, runSequence, sequenceAgainst } = OneThread.entryPoints({
  invariants: checks,
  command: commandArbitrary,
  step,
  world: (server: TestServer, proxy: HoldingProxy.HoldingProxy) => new World(server, proxy),
  windDown,
  letGo: (world: World) => {
    world.lateRead?.release()
    world.held?.release()
    world.held?.stream.abort()
  }
})
