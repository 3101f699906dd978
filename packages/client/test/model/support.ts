// What the model-based tests share (the Tambo API path's, ./harness.ts, and the AG-UI path's,
// ../model-agui/harness.ts; the models of one thread, ./twoClients.ts and ./onBusy.ts, through
// ./oneThread.ts): the invariant switch and its reporting, the probe tool and the record of its
// executions, driving and stopping a run, the checks every command ends with, and the sequence
// runner of one client. What differs by domain (commands, scenarios, the domain's invariants)
// stays in each harness.
import * as Tool from "@tambo-effect/core/Tool"
import type { TestServerOptions } from "@tambo-effect/testing"
import { it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import {
  type ClientState,
  createInitialState,
  InMemoryStore,
  type StreamEvent,
  type TamboClient,
  type TamboStore,
  type TamboStream,
  type TamboThreadMessage
} from "../../src/index.js"

/**
 * When a model's server notices that a client closed a run's connection: `"atOnce"`, or
 * `"onNextWrite"`, as the Tambo API (the run keeps its thread's lock until it writes next).
 */
export type Notice = NonNullable<TestServerOptions["noticeClosedConnection"]>

// -----------------------------------------------------------------------------
// Small helpers
// -----------------------------------------------------------------------------

/** What a promise settled with. */
export type Settled<A> = { ok: true; value: A } | { ok: false; error: unknown }

/** What a promise settled with, never a rejection. */
export const settle = <A>(promise: Promise<A>): Promise<Settled<A>> =>
  promise.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }))

/** Resolves after `ms` (real time: the models run live). */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Polls `predicate` (a liveness bound, not a timing assertion). */
export const eventually = async (predicate: () => boolean, timeoutMs = 3_000): Promise<boolean> => {
  const start = Date.now()
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) return false
    await sleep(2)
  }
  return true
}

/** How long a step of a sequence may take, and each part of its teardown after one that did not end (a liveness bound). */
const STEP_BOUND_MS = 5_000

/** `promise`'s value, or `undefined` once `ms` passed: for a liveness bound. */
const within = async <A>(promise: Promise<A>, ms: number): Promise<Settled<A> | undefined> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms)
  })
  try {
    return await Promise.race([settle(promise), late])
  } finally {
    clearTimeout(timer)
  }
}

/** The process's open handles, by type. */
export const resourceCounts = () => {
  const counts = new Map<string, number>()
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1)
  return counts
}

/** The handle types of which more are open than `before` counted. */
export const excess = (before: Map<string, number>) =>
  [...resourceCounts()].filter(([type, count]) => count > (before.get(type) ?? 0))

/**
 * The store of one client of a model, which knows how many listen to it: a client listens to its
 * store until `destroy()`, so one that still does was not destroyed (an idle client holds no
 * handle once the other side closed, but keeps its store's listener, its fibers and its scope).
 */
export class ListenedStore implements TamboStore<ClientState> {
  readonly #store = new InMemoryStore(createInitialState())
  listeners = 0

  readonly getState = (): ClientState => this.#store.getState()
  readonly setState = (state: ClientState): void => this.#store.setState(state)
  readonly subscribe = (listener: () => void): (() => void) => {
    const unsubscribe = this.#store.subscribe(listener)
    this.listeners++
    let subscribed = true
    return () => {
      if (subscribed) this.listeners--
      subscribed = false
      unsubscribe()
    }
  }
}

/** The text blocks of a message, joined. */
export const messageText = (message: TamboThreadMessage | undefined) =>
  message?.content.map((c) => (c.type === "text" ? c.text : "")).join("")

/** A short tool timeout, for the `hang` tool; long enough for every other tool. */
export const TOOL_TIMEOUT = 40

// -----------------------------------------------------------------------------
// The switch and its reporting
// -----------------------------------------------------------------------------

/** The invariants both models check under the same name, by the code below (each model names them among its own). */
export type SharedInvariant = "command-settles" | "run-outcome" | "no-unhandled-rejection" | "no-open-handles"

/** A failed invariant, named, with what failed. */
export class InvariantError<I extends string> extends Error {
  constructor(readonly invariant: I, readonly detail: string) {
    super(`invariant "${invariant}" failed: ${detail}`)
  }
}

/** How the model says every run of a command ends: its thread, or a rejection with this `_tag`. */
export type Outcome = "ok" | "ApiError" | "TransportError" | "AbortError" | "RunConflictError"

/**
 * The invariants of one model: which of them a sequence checks, and `check`, which runs one
 * invariant's body when it is checked and reports its failure by name. `explain` adds to the
 * message of a failure (e.g. where two values differ).
 */
export class Invariants<I extends string> {
  #checking: ReadonlySet<I>
  /** The step the sequence plays now (1 for its first command), and that command. */
  #step = 0
  #playing = ""
  /** What a step that did not end (see `liveness`) still does: the sequence's teardown waits for it. */
  #hung: Promise<unknown> | undefined

  constructor(
    readonly all: ReadonlyArray<I>,
    readonly knownOpen: ReadonlySet<I>,
    readonly explain: (error: unknown) => string = () => ""
  ) {
    this.#checking = new Set(all)
  }

  /**
   * Which invariants a sequence checks: all but `knownOpen`, unless `MODEL_INVARIANTS` (a comma
   * list, or `all`) says otherwise (to explore one invariant alone).
   */
  defaults(): ReadonlySet<I> {
    const env = process.env.MODEL_INVARIANTS
    if (env === "all") return new Set(this.all)
    if (env !== undefined) return new Set(env.split(",") as Array<I>)
    return new Set(this.all.filter((invariant) => !this.knownOpen.has(invariant)))
  }

  /** The invariants the sequence about to run checks; its steps are counted from here. */
  use(checking: ReadonlySet<I>): void {
    this.#checking = checking
    this.#step = 0
    this.#playing = ""
    this.#hung = undefined
  }

  /** `commands`, each noting as it runs that the sequence plays it (what `liveness` names). */
  *counted<M extends object, R>(commands: Iterable<fc.AsyncCommand<M, R, boolean>>): Iterable<fc.AsyncCommand<M, R, boolean>> {
    for (const command of commands) {
      yield {
        check: (model) => command.check(model),
        run: (model, real) => {
          this.#step++
          this.#playing = command.toString()
          return command.run(model, real)
        },
        toString: () => command.toString()
      }
    }
  }

  /** Whether the sequence checks `invariant`. */
  has(invariant: I): boolean {
    return this.#checking.has(invariant)
  }

  /** Runs `body` if `invariant` is checked; its failure becomes an InvariantError. */
  async check(invariant: I, body: () => void | Promise<void>): Promise<void> {
    if (!this.#checking.has(invariant)) return
    try {
      await body()
    } catch (error) {
      throw new InvariantError(invariant, (error instanceof Error ? error.message : String(error)) + this.explain(error))
    }
  }

  /**
   * `promise`, or a `command-settles` failure naming the step if it does not end (a liveness
   * bound). What it still does is the teardown's (`stopHung`) to wait for: it must not run on
   * into the next sequence, which a shrink starts at once.
   */
  async liveness<A>(promise: Promise<A>, command: unknown): Promise<A> {
    if (!this.has("command-settles" as I)) return promise
    const ended = await within(promise, STEP_BOUND_MS)
    if (ended === undefined) {
      this.#hung = promise
      const what = JSON.stringify(command)
      const at = this.#step === 0 ? "" : this.#playing === what ? ` (step ${this.#step})` : ` (after step ${this.#step}, ${this.#playing})`
      throw new InvariantError("command-settles", `${what} did not end within ${STEP_BOUND_MS} ms${at}`)
    }
    if (ended.ok) return ended.value
    throw ended.error
  }

  /**
   * After a sequence: waits (bounded) for what a step that did not end still does, once its
   * clients were destroyed and its server closed; what is still going then is named.
   */
  async stopHung(): Promise<string | undefined> {
    const hung = this.#hung
    this.#hung = undefined
    if (hung === undefined || (await within(hung, STEP_BOUND_MS)) !== undefined) return undefined
    return `the step that did not end was still going ${STEP_BOUND_MS} ms after its clients were destroyed and its server closed`
  }

  /** command-settles: no run of the command is left active or waiting for an approval. */
  settles(client: TamboClient, command: unknown): Promise<void> {
    return this.check("command-settles" as I, async () => {
      const ended = await eventually(() => !client.hasActiveRun() && client.getPendingApprovals().length === 0)
      if (!ended) throw new Error(`a run of ${JSON.stringify(command)} is still active`)
    })
  }

  /** run-outcome: each stream ends as `expected` says; `tagOf` names a rejection. */
  outcomes(
    streams: ReadonlyArray<TamboStream>,
    kind: string,
    expected: (stream: TamboStream) => Outcome,
    tagOf: (error: unknown) => string | undefined = (error) => (error as { _tag?: string })._tag
  ): Promise<void> {
    return this.check("run-outcome" as I, async () => {
      for (const stream of streams) {
        const outcome = await settle(stream.thread)
        const tag = outcome.ok ? "ok" : tagOf(outcome.error)
        if (tag !== expected(stream)) {
          const detail = outcome.ok ? "" : ` (${(outcome.error as Error).message})`
          throw new Error(`a run of ${kind} ended ${tag}${detail}, the model says ${expected(stream)}`)
        }
      }
    })
  }

  /**
   * no-open-handles: no more handles are open than `before` counted (once the other side closed),
   * and no client listens to its store any more (each let go of it by the time its `destroy()` resolved).
   */
  noOpenHandles(before: Map<string, number>, stores: ReadonlyArray<ListenedStore> = []): Promise<void> {
    return this.check("no-open-handles" as I, async () => {
      await eventually(() => excess(before).length === 0)
      const left = excess(before)
      if (left.length > 0) throw new Error(`open after destroy(): ${JSON.stringify(left)}`)
      const listened = stores.filter((store) => store.listeners > 0).length
      if (listened > 0) throw new Error(`${listened} of ${stores.length} clients still listen to their store after destroy()`)
    })
  }

  /** no-unhandled-rejection, once what the command left pending had a turn. */
  async noRejection(world: ModelWorld<unknown>): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve))
    await this.check("no-unhandled-rejection" as I, () => {
      if (world.rejections.length > 0) throw new Error(`unhandled rejection: ${String(world.rejections[0])}`)
    })
  }
}

/** Throws unless a plain run (`ping`) on `threadId` succeeded and its last message says `pong`. */
export const expectPong = (threadId: string | undefined, run: Settled<unknown>, last: TamboThreadMessage | undefined) => {
  if (!run.ok) {
    const error = run.error as { _tag?: string; message?: string }
    throw new Error(`a plain run on thread ${threadId} failed: ${error._tag}: ${error.message}`)
  }
  if (messageText(last) !== "pong") throw new Error(`a plain run on thread ${threadId} ended with ${JSON.stringify(last)}`)
}

// -----------------------------------------------------------------------------
// The world and the probe tool
// -----------------------------------------------------------------------------

/** One execution of the probe tool (or a manual answer): which call of which thread it ran for. */
export interface Execution {
  readonly thread: string
  readonly toolCallId: string
  readonly n: number
}

/** Per-sequence state both harnesses keep; each extends it with its own. */
export class ModelWorld<Scenario> {
  readonly scenarios = new Map<string, Scenario>()
  readonly executions: Array<Execution> = []
  /** Resolved when the execution of call `n` starts. */
  readonly started = new Map<number, () => void>()
  readonly startedPromises = new Map<number, Promise<void>>()
  readonly known: Array<string> = []
  readonly rejections: Array<unknown> = []
  /** Streams whose outcome is not the one of their command (see each harness's expectedOutcome). */
  readonly outcomes = new Map<TamboStream, Outcome>()
  /** The stores of the world's clients (`store()`), each checked to be let go of by no-open-handles. */
  readonly stores: Array<ListenedStore> = []
  /** The clients the sequence made (`track`), each destroyed when it ends, however it ends. */
  readonly madeClients: Array<TamboClient> = []
  #scenarioCount = 0
  #n = 0

  /** `client`, destroyed with the others when the sequence ends. */
  track(client: TamboClient): TamboClient {
    if (!this.madeClients.includes(client)) this.madeClients.push(client)
    return client
  }

  /** A new client's store. */
  store(): ListenedStore {
    const store = new ListenedStore()
    this.stores.push(store)
    return store
  }

  nextN(): number {
    const n = ++this.#n
    this.startedPromises.set(n, new Promise<void>((resolve) => this.started.set(n, resolve)))
    return n
  }

  /** Registers a scenario and returns the message that plays it. */
  scenario(name: string, scenario: Scenario): string {
    const tag = `#${++this.#scenarioCount} ${name}`
    this.scenarios.set(tag, scenario)
    return tag
  }
}

/** What the probe does: returns, throws, waits until given up on (`hang` by its timeout, `block` by a stop), or asks for approval. */
export const PROBE_MODES = ["ok", "throw", "hang", "block", "approval"] as const

/** The probe's arguments both models give it. */
export const probeFields = { n: Schema.Number, thread: Schema.String, mode: Schema.Literal(...PROBE_MODES) }

type ProbeArgs = Schema.Struct.Type<typeof probeFields>

/**
 * The probe tool: records each execution in the world, then returns `result`, fails with
 * `failure`, or (`hang`, `block`) waits until the executor gives up on it.
 */
export const makeProbe = <A extends ProbeArgs, R>(options: {
  readonly input: Tool.EffectSchema<A>
  readonly world: () => ModelWorld<unknown>
  readonly result: (args: A, toolCallId: string) => R
  readonly failure: (args: A) => string
}) =>
  Tool.make({
    name: "probe",
    description: "Records its call and answers with it",
    input: options.input,
    needsApproval: (args) => args.mode === "approval",
    execute: (args, { signal, toolCallId }): Promise<R> => {
      const w = options.world()
      w.executions.push({ thread: args.thread, toolCallId, n: args.n })
      w.started.get(args.n)?.()
      const result = options.result(args, toolCallId)
      switch (args.mode) {
        case "throw":
          return Promise.reject(new Error(options.failure(args)))
        case "hang":
        case "block":
          // Until the executor gives up on it (timeout, cancellation).
          return new Promise((resolve) => signal.addEventListener("abort", () => resolve(result), { once: true }))
        default:
          return Promise.resolve(result)
      }
    }
  })

/** A probe result in a tool result's text, if it is one. */
export const parseProbe = <P>(text: string): P | undefined => {
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === "object" && parsed !== null && "n" in parsed ? (parsed as P) : undefined
  } catch {
    return undefined
  }
}

/** The executions as `thread/toolCallId/n` keys; throws if one ran twice. */
export const executedOnce = (executions: ReadonlyArray<Execution>): Set<string> => {
  const seen = new Set<string>()
  for (const e of executions) {
    const key = `${e.thread}/${e.toolCallId}/${e.n}`
    if (seen.has(key)) throw new Error(`call ${key} executed twice`)
    seen.add(key)
  }
  return seen
}

// -----------------------------------------------------------------------------
// Driving runs
// -----------------------------------------------------------------------------

/**
 * Where a run goes: the current thread (a new thread's placeholder, or a switched-to thread), or
 * the i-th known thread.
 */
export type Target = "current" | { readonly known: number }

/** Targets, the current thread twice as often as a known one. */
export const targetArbitrary: fc.Arbitrary<Target> = fc.oneof(
  { weight: 2, arbitrary: fc.constant("current" as const) },
  { weight: 1, arbitrary: fc.nat(3).map((known) => ({ known })) }
)

/** The thread a target names; undefined for the current one, or when no thread is known yet. */
export const threadOf = (world: ModelWorld<unknown>, t: Target): string | undefined => {
  if (t === "current") return undefined
  const { known } = world
  return known.length === 0 ? undefined : known[t.known % known.length]
}

/** Switches to the i-th known thread, if any. */
export const switchTo = async (real: Real<ModelWorld<unknown>>, known: number): Promise<void> => {
  const threadId = threadOf(real.world, { known })
  if (threadId !== undefined) await settle(real.client.switchThread(threadId))
}

/**
 * Two runs of `scenario` at once on the known threads `a` and `b` (no thread for `b` when it is
 * `a`'s). A run without a known thread goes to a new one, from a fresh placeholder (`startNew`).
 */
export const concurrentRuns = async <S>(
  real: Real<ModelWorld<S>>,
  known: { readonly a: number; readonly b: number },
  scenario: S,
  drive: (stream: TamboStream) => Promise<void>,
  startNew: () => void
): Promise<ReadonlyArray<TamboStream>> => {
  const { world, client } = real
  const a = threadOf(world, { known: known.a })
  let b = threadOf(world, { known: known.b })
  if (b === a) b = undefined
  const start = (threadId: string | undefined) => {
    if (threadId === undefined) startNew()
    return client.run(world.scenario("concurrent", scenario), { threadId, toolTimeout: TOOL_TIMEOUT })
  }
  const first = start(a)
  const second = start(b)
  await Promise.all([drive(first), drive(second)])
  return [first, second]
}

/**
 * The command of two runs at once on a new conversation (see `concurrentNewRuns`), as both models
 * generate it; `newBetween`: `startNewThread()` again between the two, while the first has not started.
 */
export const concurrentNewCommand = fc.record({
  kind: fc.constant("concurrentNew" as const),
  tools: fc.boolean(),
  abortFirst: fc.boolean(),
  newBetween: fc.boolean()
})

/**
 * Two runs at once on the current thread (a new one's placeholder); `abortFirst`: the first plays
 * `hanging` and is aborted once started (its events go to `seen`); `between` runs after the first
 * starts and before the second does (a new conversation: then the current thread must end as the
 * second run's, not the first's).
 */
export const concurrentNewRuns = async <S>(
  real: Real<ModelWorld<S>>,
  abortFirst: boolean,
  scenario: S,
  hanging: S,
  drive: (stream: TamboStream) => Promise<void>,
  seen?: (stream: TamboStream, event: Event) => void,
  between?: () => void
): Promise<ReadonlyArray<TamboStream>> => {
  const { world, client } = real
  const first = client.run(world.scenario("concurrentNew", abortFirst ? hanging : scenario), { toolTimeout: TOOL_TIMEOUT })
  between?.()
  const second = client.run(world.scenario("concurrentNew", scenario), { toolTimeout: TOOL_TIMEOUT })
  if (abortFirst) world.outcomes.set(first, "AbortError")
  const driveFirst = async () => {
    if (!abortFirst) return drive(first)
    try {
      for await (const { event } of first) {
        seen?.(first, event)
        first.abort()
      }
    } catch {
      // Its AbortError.
    }
  }
  await Promise.all([driveFirst(), drive(second)])
  if (between !== undefined) {
    // The new conversation follows its own run to its thread, not the run that left it.
    const created = await second.threadId
    const current = client.getState().currentThreadId
    if (current !== created) throw new Error(`the current thread is ${current}, not the second run's ${created}`)
  }
  return [first, second]
}

type Event = StreamEvent["event"]

/** How a command decides a call that needs approval (`approveEdited`: with `edited: true` added to its arguments). */
export type Decision = "approve" | "approveEdited" | "deny"

/** Iterates a run to its end, deciding approvals as `decision` says; `seen` hears every event. */
export const drive = async (client: TamboClient, stream: TamboStream, decision: Decision, seen?: (event: Event) => void) => {
  try {
    for await (const { event } of stream) {
      seen?.(event)
      if (event.type === "CLIENT_APPROVAL_REQUESTED") {
        if (decision === "deny") client.denyToolCall(event.toolCallId, "no")
        else if (decision === "approveEdited") client.approveToolCall(event.toolCallId, { args: { ...(event.args as object), edited: true } })
        else client.approveToolCall(event.toolCallId)
      }
    }
  } catch {
    // Outcomes of the command's own run are judged by run-outcome; the invariants judge what it left.
  }
}

/**
 * Reads a run started with `autoExecuteTools: false` to its end and answers the calls it left by
 * hand (each recorded as an execution); undefined if the run failed.
 */
export const answerByHand = async <A extends ProbeArgs, R>(
  world: ModelWorld<unknown>,
  stream: TamboStream,
  result: (args: A, toolCallId: string) => R,
  seen?: (event: Event) => void
) => {
  let pending: ReadonlyArray<{ readonly toolCallId: string; readonly args: unknown }> = []
  try {
    for await (const { event } of stream) {
      seen?.(event)
      if (event.type === "CLIENT_AWAITING_TOOL_RESULTS") pending = event.pendingToolCalls
    }
  } catch {
    return undefined
  }
  const threadId = await stream.threadId
  const results = pending.map((call) => {
    const args = call.args as A
    world.executions.push({ thread: args.thread, toolCallId: call.toolCallId, n: args.n })
    return { toolCallId: call.toolCallId, result: result(args, call.toolCallId) }
  })
  return { threadId, results }
}

/** How `stopRun` stops a run, and when. */
export interface StopPlan {
  readonly world: ModelWorld<unknown>
  readonly stream: TamboStream
  /**
   * `how`: `break` leaves the loop, any other way is `stop`'s. `at`: 0, right after `run()`;
   * `tool`, once the tool of call `toolCall()` started; else when `reached` says.
   */
  readonly command: { readonly how: string; readonly at: unknown }
  /** The thread the run was started on, until an event names the run's own. */
  readonly threadId: string
  readonly stop: (threadId: string) => Promise<unknown> | void
  /** Started right after the stop, without waiting for it (`destroy()`); the stop waits for both. */
  readonly afterStop?: (() => Promise<unknown>) | undefined
  readonly toolCall: () => number | undefined
  /** Played after a stop at 0, before the loop; gets the stop. */
  readonly before?: (stop: () => Promise<void>) => Promise<void>
  /** Hears every event. */
  readonly seen?: (event: Event) => void
  /** Whether the stop is due at this event, the `seen`-th of the stream. */
  readonly reached: (event: Event, seen: number) => boolean
}

/** Reads a run until the stop is due, stops it once, and reads on to its end. */
export const stopRun = async (plan: StopPlan): Promise<TamboStream> => {
  const { stream } = plan
  const { how, at } = plan.command
  let lastThreadId = plan.threadId
  let stopped = false
  const iterator = stream[Symbol.asyncIterator]()
  const doStop = async () => {
    if (stopped) return
    stopped = true
    const stopping = how === "break" ? settle(Promise.resolve(iterator.return?.())) : plan.stop(lastThreadId)
    const after = plan.afterStop === undefined ? undefined : settle(plan.afterStop())
    await stopping
    await after
  }
  let seen = 0
  let toolStarted: Promise<void> | undefined
  try {
    if (at === 0) await doStop()
    await plan.before?.(doStop)
    while (true) {
      const next = iterator.next()
      // While the tool runs nothing arrives: the tool's start is what to wait for. A tool that
      // never starts (its result came from elsewhere) lets the run go on; the invariants judge that.
      const first = toolStarted === undefined || stopped
        ? await next
        : await Promise.race([next, toolStarted.then(() => "started" as const)])
      if (first === "started") {
        await doStop()
        await settle(next)
        if (how === "break") break
        continue
      }
      if (first.done === true) break
      seen++
      lastThreadId = first.value.threadId
      const event = first.value.event
      plan.seen?.(event)
      if (stopped) continue
      if (at === "tool") {
        const n = plan.toolCall()
        if (event.type === "CUSTOM" && event.name === "tambo.run.awaiting_input" && n !== undefined) {
          toolStarted = plan.world.startedPromises.get(n)
        }
        continue
      }
      if (!plan.reached(event, seen)) continue
      // Keep reading (the stream ends once the stop took effect) while the stop goes out.
      if (how === "break") {
        await doStop()
        break
      }
      void doStop()
    }
  } catch {
    // The stop's own AbortError, or whatever the run failed with.
  }
  return stream
}

// -----------------------------------------------------------------------------
// Sequences
// -----------------------------------------------------------------------------

/** What the commands act on. */
export interface Real<W> {
  readonly world: W
  readonly client: TamboClient
}

/** A command for `fc.commands`: plain data, played and checked by `play`. */
export class ModelCommand<C, R> implements fc.AsyncCommand<object, R> {
  constructor(readonly command: C, readonly play: (real: R, command: C) => Promise<void>) {}
  check(): boolean {
    return true
  }
  run(_model: object, real: R): Promise<void> {
    return this.play(real, this.command)
  }
  toString(): string {
    return JSON.stringify(this.command)
  }
}

/**
 * A replay of a list of commands (a counterexample) as the property plays it: each command
 * through `play`, the sequence through `run` (no invariants given: `run`'s default).
 */
export const replayer = <C, R, I, Inspect>(
  play: (real: R, command: C) => Promise<void>,
  run: (
    commands: Iterable<fc.AsyncCommand<object, R, boolean>>,
    invariants: ReadonlySet<I> | undefined,
    inspect: Inspect | undefined
  ) => Promise<void>
) =>
(commands: ReadonlyArray<C>, invariants?: ReadonlyArray<I>, inspect?: Inspect): Promise<void> =>
  run(
    commands.map((command) => new ModelCommand(command, play)),
    invariants === undefined ? undefined : new Set(invariants),
    inspect
  )

/** The commands arbitrary of a property. */
export const modelCommands = <C, R>(
  arbitrary: fc.Arbitrary<C>,
  play: (real: R, command: C) => Promise<void>,
  maxCommands: number,
  replayPath?: string
) =>
  fc.commands([arbitrary.map((command) => new ModelCommand(command, play))], {
    maxCommands,
    ...(replayPath === undefined ? {} : { replayPath })
  })

/**
 * Plays `commands` against ONE fresh client (through `fc.asyncModelRun`) of what `open` starts,
 * recording unhandled rejections in the world, then destroys every client it made (`track`) and
 * closes, and checks that the clients left no handle open. A step that did not end (see
 * `liveness`) is waited for, bounded, once they went: nothing of it runs into the next sequence.
 */
export const runSequence = async <I extends string, W extends ModelWorld<unknown>>(options: {
  readonly invariants: Invariants<I>
  readonly checking: ReadonlySet<I>
  /** Starts the other side and a world over it; `close` stops it. */
  readonly open: () => Promise<{ readonly world: W; readonly close: () => Promise<void> }>
  /** Hears the world of the sequence, then undefined once the client is gone. */
  readonly current: (world: W | undefined) => void
  readonly client: (world: W) => TamboClient
  readonly commands: Iterable<fc.AsyncCommand<object, Real<W>, boolean>>
  /** Called before the client goes, for tests of the harness itself. */
  readonly inspect?: ((real: Real<W>) => void) | undefined
}): Promise<void> => {
  const { invariants } = options
  invariants.use(options.checking)
  const before = resourceCounts()
  // The other side per sequence: its own sockets go when it closes, so what is left is the client's.
  const { world, close } = await options.open()
  options.current(world)
  const client = world.track(options.client(world))
  try {
    await playInWorld({
      invariants,
      world,
      play: async () => {
        await fc.asyncModelRun(() => ({ model: {}, real: { world, client } }), invariants.counted(options.commands))
        options.inspect?.({ world, client })
      },
      close
    })
  } finally {
    options.current(undefined)
  }
  await invariants.noOpenHandles(before, world.stores)
}

/**
 * Plays a sequence in `world` (`play`), recording unhandled rejections in it, then ends it however
 * `play` ended: lets go of what the world still holds (`letGo`), destroys every client the
 * sequence made (`track`), and closes the other side; a step that did not end (see `liveness`) is
 * waited for, bounded, once they went, so nothing of it runs into the next sequence (a shrink's).
 * Rejects with `play`'s failure, with what was still stuck added to it, or with a
 * `command-settles` failure naming what was stuck.
 */
export const playInWorld = async <I extends string>(options: {
  readonly invariants: Invariants<I>
  readonly world: ModelWorld<unknown>
  readonly play: () => Promise<void>
  readonly letGo?: () => void
  readonly close: () => Promise<void>
}): Promise<void> => {
  const { invariants, world } = options
  const onRejection = (reason: unknown) => world.rejections.push(reason)
  process.on("unhandledRejection", onRejection)
  let failure: { readonly error: unknown } | undefined
  try {
    await options.play()
  } catch (error) {
    failure = { error }
  }
  // Every client the sequence made goes, then its server: a step that did not end ends with them,
  // before the next sequence starts, and its rejections are still this world's.
  options.letGo?.()
  const destroyed = await Promise.all(world.madeClients.map(async (each, i) =>
    (await within(each.destroy(), STEP_BOUND_MS)) === undefined ? `the destroy() of client ${i + 1} did not end` : undefined
  ))
  await options.close()
  const stuck = [...destroyed, await invariants.stopHung()].filter((each) => each !== undefined)
  await new Promise((resolve) => setImmediate(resolve))
  process.off("unhandledRejection", onRejection)
  if (failure !== undefined) {
    if (failure.error instanceof Error && stuck.length > 0) failure.error.message += `; ${stuck.join("; ")}`
    throw failure.error
  }
  if (stuck.length > 0) throw new InvariantError("command-settles" as I, stuck.join("; "))
}

/**
 * The property: `numRuns` and `seed` are the model's defaults unless `MODEL_RUNS` / `MODEL_SEED`
 * say otherwise; `MODEL_MAX_COMMANDS`, `MODEL_PATH` and `MODEL_REPLAY_PATH` likewise.
 */
export const modelProperty = <Commands>(
  defaults: { readonly runs: number; readonly seed: number; readonly maxCommands: number },
  commandsArbitrary: (maxCommands: number, replayPath?: string) => fc.Arbitrary<Commands>,
  run: (commands: Commands) => Promise<void>
) => {
  const path = process.env.MODEL_PATH
  // `live`: real sockets and real timers (tool timeouts, the other side's pacing, retry backoff), not the TestClock.
  it.live.prop(
    "every sequence of commands keeps the invariants",
    [commandsArbitrary(Number(process.env.MODEL_MAX_COMMANDS ?? defaults.maxCommands), process.env.MODEL_REPLAY_PATH)],
    ([commands]) => Effect.promise(() => run(commands)),
    {
      timeout: 600_000,
      fastCheck: {
        numRuns: Number(process.env.MODEL_RUNS ?? defaults.runs),
        seed: Number(process.env.MODEL_SEED ?? defaults.seed),
        ...(path === undefined ? {} : { path })
      }
    }
  )
}
