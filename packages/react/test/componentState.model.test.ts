// A component's state kept in step with the server (what useTamboComponentState shows), model-based:
// fast-check generates sequences of the user's changes, debounces running out, flushes (an unmount),
// sends succeeding or failing, the server's value arriving (a run or a reload), and runs of the client
// on the thread starting and ending (a change waits for the run's end, holding no client), and the client
// going under a send (the app destroyed it) and the app giving the next one (the change waits for it, pending,
// with no error, and goes through it). After every step
// the value, `isPending` and the error equal a plain model; one send at a time is on its way, each
// with the newest value, and the provider's client is held while one is (from one to the next); once everything settled, the server holds the value shown, or the error of
// the send that failed to save it is shown.
// The sends are scripted promises: what is tested is the bookkeeping, not a server's.
//
// Seeded, so a failure reproduces; MODEL_RUNS and MODEL_SEED for longer or other runs.
import { FastCheck as fc } from "effect"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { ComponentStateSync } from "../src/internal/componentStateSync.js"

const DEBOUNCE_MS = 50

type Outcome = "ok" | "failed" | "gone"

/** What a send through a client the app destroyed rejects with. */
const GONE = new Error("the client was destroyed")

interface Send {
  readonly value: number
  /** The client it went through (the app's first, second, ...). */
  readonly client: number
  readonly settle: (outcome: Outcome) => void
}

interface Model {
  shown: number
  /** Changed and not sent yet. */
  dirty: boolean
  /** A debounce is running. */
  timer: boolean
  /** The value on its way to the server. */
  inFlight: number | undefined
  error: boolean
  /** What the server holds: the last value a send saved. */
  saved: number
  /** A run of the client is in flight on the thread: the server would refuse a send. */
  running: boolean
  /** A flush waits for the run's end, holding no client; then the newest value goes. */
  waiting: boolean
  /** The client sends go through now. */
  client: number
  /** The client the send on its way went through. */
  inFlightClient: number | undefined
  /** A send's client went: the change waits for the next client. */
  stranded: boolean
}

interface Real {
  readonly sync: ComponentStateSync<number>
  readonly sends: Array<Send>
  /** Every value sent, in order. */
  readonly sent: Array<number>
  /** The holds on the provider's client (`retain`), and the fewest there were since the last step. */
  readonly holds: { current: number; lowest: number }
  /** The run in flight: ends it. */
  run: { readonly end: () => void; readonly ended: Promise<void> } | undefined
  /** Gives the sync the send of the app's next client. */
  readonly nextClient: () => void
}

/** Lets the settled promise's callbacks run. */
const settled = () => Promise.resolve().then(() => Promise.resolve())

const check = (model: Model, real: Real) => {
  const snapshot = real.sync.getSnapshot()
  expect(snapshot.value).toBe(model.shown)
  expect(snapshot.isPending).toBe(model.dirty || model.inFlight !== undefined || model.waiting)
  expect(snapshot.error !== undefined).toBe(model.error)
  // One send at a time, so the server applies them in the order the user made them.
  expect(real.sends.map((send) => send.value)).toEqual(model.inFlight === undefined ? [] : [model.inFlight])
  expect(real.sends.map((send) => send.client)).toEqual(model.inFlight === undefined ? [] : [model.inFlightClient])
  // The client is held while a send is on its way (an unmounted provider's too), and only then.
  expect(real.holds.current).toBe(model.inFlight === undefined ? 0 : 1)
}

/**
 * What a flush does in the model: the newest value goes, unless one is on its way (it goes after)
 * or a run is in flight (it goes at the run's end).
 */
const flushModel = (model: Model) => {
  model.timer = false
  if (!model.dirty || model.inFlight !== undefined || model.waiting) return
  model.dirty = false
  if (model.running) model.waiting = true
  else send(model)
}

const send = (model: Model) => {
  model.inFlight = model.shown
  model.inFlightClient = model.client
}

class SetValue implements fc.AsyncCommand<Model, Real> {
  constructor(readonly value: number) {}
  check = () => true
  async run(model: Model, real: Real) {
    real.sync.set(this.value)
    model.shown = this.value
    model.dirty = true
    model.timer = true
    check(model, real)
  }
  toString = () => `set(${this.value})`
}

class DebounceEnds implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    vi.advanceTimersByTime(DEBOUNCE_MS)
    if (model.timer) flushModel(model)
    check(model, real)
  }
  toString = () => "debounceEnds"
}

class Flush implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    real.sync.flush()
    flushModel(model)
    check(model, real)
  }
  toString = () => "flush"
}

class SendSettles implements fc.AsyncCommand<Model, Real> {
  constructor(readonly outcome: Outcome) {}
  check = (model: Readonly<Model>) => model.inFlight !== undefined
  async run(model: Model, real: Real) {
    real.holds.lowest = real.holds.current
    real.sends.shift()!.settle(this.outcome)
    await settled()
    if (this.outcome === "gone") {
      // Not the user's error: the change waits, pending, for the next client; if the app gave it
      // meanwhile, it goes through it now.
      const replaced = model.inFlightClient !== model.client
      model.inFlight = undefined
      model.inFlightClient = undefined
      model.dirty = true
      model.stranded = !replaced
      if (replaced) flushModel(model)
      check(model, real)
      return
    }
    const ok = this.outcome === "ok"
    if (ok) model.saved = model.inFlight!
    model.error = !ok
    model.stranded = false
    model.inFlight = undefined
    model.inFlightClient = undefined
    // A change made meanwhile goes now, unless its debounce still runs.
    if (model.dirty && !model.timer) flushModel(model)
    // Then the client was held throughout: let go of between two sends, an unmounted provider's would be destroyed.
    if (model.inFlight !== undefined) expect(real.holds.lowest).toBeGreaterThan(0)
    check(model, real)
  }
  toString = () => `sendSettles(${this.outcome})`
}

class NextClient implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    real.nextClient()
    await settled()
    model.client++
    // A change whose client went goes now, through this one (unless one is on its way, or a run holds it).
    if (model.stranded) {
      model.stranded = false
      if (model.dirty && model.inFlight === undefined) flushModel(model)
    }
    check(model, real)
  }
  toString = () => "nextClient"
}

class ServerValue implements fc.AsyncCommand<Model, Real> {
  constructor(readonly value: number | undefined) {}
  check = () => true
  async run(model: Model, real: Real) {
    real.sync.server(this.value)
    // The server holds it now (a run changed it); it is shown, but never over a change of the
    // user's that is not saved yet.
    if (this.value !== undefined) model.saved = this.value
    if (this.value !== undefined && !model.dirty && model.inFlight === undefined && !model.waiting) {
      model.shown = this.value
      // What is shown is saved: a failed send's error is over.
      model.error = false
    }
    check(model, real)
  }
  toString = () => `serverValue(${this.value})`
}

class RunStarts implements fc.AsyncCommand<Model, Real> {
  check = (model: Readonly<Model>) => !model.running
  async run(model: Model, real: Real) {
    let end!: () => void
    const ended = new Promise<void>((resolve) => {
      end = resolve
    })
    real.run = { end, ended }
    model.running = true
    check(model, real)
  }
  toString = () => "runStarts"
}

class RunEnds implements fc.AsyncCommand<Model, Real> {
  check = (model: Readonly<Model>) => model.running
  async run(model: Model, real: Real) {
    real.run!.end()
    real.run = undefined
    await settled()
    model.running = false
    if (model.waiting) {
      // The newest value goes, changes made while it waited included.
      model.waiting = false
      model.dirty = false
      send(model)
    }
    check(model, real)
  }
  toString = () => "runEnds"
}

const commands = fc.commands(
  [
    fc.integer({ min: 1, max: 5 }).map((value) => new SetValue(value)),
    fc.integer({ min: 1, max: 5 }).map((value) => new SetValue(value)),
    fc.constant(new DebounceEnds()),
    fc.constant(new Flush()),
    fc.constantFrom<Outcome>("ok", "failed", "gone").map((outcome) => new SendSettles(outcome)),
    fc.constantFrom<Outcome>("ok", "failed").map((outcome) => new SendSettles(outcome)),
    fc.constant(new NextClient()),
    fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }).map((value) => new ServerValue(value)),
    fc.constant(new RunStarts()),
    fc.constant(new RunEnds())
  ],
  { maxCommands: 20, size: "max" }
)

const runs = Number(process.env.MODEL_RUNS ?? 300)
const seed = Number(process.env.MODEL_SEED ?? 71)

/** Plays commands on a fresh sync; then lets everything settle, and checks the server holds the last value. */
const play = async (sequence: Iterable<fc.AsyncCommand<Model, Real>>) => {
  const sends: Array<Send> = []
  const sent: Array<number> = []
  const sendThrough = (client: number) => (value: number) =>
    new Promise((resolve, reject) => {
      sent.push(value)
      sends.push({
        value,
        client,
        settle: (outcome) =>
          outcome === "ok" ? resolve(undefined) : reject(outcome === "gone" ? GONE : new Error(`saving ${value} failed`))
      })
    })
  const sync = new ComponentStateSync<number>(0, sendThrough(0), DEBOUNCE_MS)
  sync.clientGone = (error) => error === GONE
  let client = 0
  const holds = { current: 0, lowest: 0 }
  sync.retain = () => {
    holds.current++
    let released = false
    return () => {
      if (released) return
      released = true
      holds.current--
      holds.lowest = Math.min(holds.lowest, holds.current)
    }
  }
  const model: Model = {
    shown: 0,
    dirty: false,
    timer: false,
    inFlight: undefined,
    error: false,
    saved: 0,
    running: false,
    waiting: false,
    client: 0,
    inFlightClient: undefined,
    stranded: false
  }
  const real: Real = {
    sync,
    sends,
    sent,
    holds,
    run: undefined,
    // What the hook does when the provider renders with the app's next client.
    nextClient: () => {
      sync.send = sendThrough(++client)
      sync.resume()
    }
  }
  sync.ready = () => real.run?.ended
  await fc.asyncModelRun(() => ({ model, real }), sequence)
  // The end: the run ends, debounces run out, and every send succeeds.
  if (model.running) await new RunEnds().run(model, real)
  if (model.stranded) await new NextClient().run(model, real)
  for (let round = 0; round < 10 && (model.dirty || model.inFlight !== undefined); round++) {
    await new DebounceEnds().run(model, real)
    if (model.inFlight !== undefined) await new SendSettles("ok").run(model, real)
  }
  expect(sync.getSnapshot().isPending).toBe(false)
  // The server holds what is shown, or the failed send that carried it says so.
  if (model.error) expect(sync.getSnapshot().error?.message).toBe(`saving ${model.shown} failed`)
  else expect(model.saved).toBe(model.shown)
}

describe("a component's state, model-based", () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it("every sequence of changes, debounces, flushes, sends' endings and server values keeps the model's promises", async () => {
    await fc.assert(fc.asyncProperty(commands, play), { numRuns: runs, seed })
  })

  // What the property shrank defects to, kept as named cases.
  it("a change made while a send is on its way goes after it, not beside it", () =>
    play([new SetValue(1), new Flush(), new SetValue(2), new DebounceEnds()]))

  it("a send that ends after a newer one cannot leave the server with the older value", () =>
    play([new SetValue(1), new Flush(), new SetValue(2), new Flush(), new SendSettles("ok"), new SendSettles("failed")]))

  it("the client stays held from a send to the one made meanwhile, which goes after it", () =>
    play([new SetValue(1), new Flush(), new SetValue(2), new Flush(), new SendSettles("ok")]))

  it("a client that cannot be held fails that send, which the next change tries again", async () => {
    const sent: Array<number> = []
    const sync = new ComponentStateSync<number>(0, (value) => {
      sent.push(value)
      return Promise.resolve()
    }, DEBOUNCE_MS)
    let refuse = true
    sync.retain = () => {
      if (refuse) throw new Error("no client")
      return () => undefined
    }
    sync.set(1)
    sync.flush()
    await settled()
    expect(sync.getSnapshot()).toMatchObject({ value: 1, isPending: false, error: new Error("no client") })
    refuse = false
    sync.set(2)
    sync.flush()
    await settled()
    expect(sent).toEqual([2])
    expect(sync.getSnapshot()).toMatchObject({ value: 2, isPending: false, error: undefined })
  })

  it("a change made while the client's run is in flight waits for its end, holding no client; one made meanwhile goes with it", () =>
    play([new RunStarts(), new SetValue(1), new DebounceEnds(), new SetValue(2), new DebounceEnds(), new RunEnds(), new SendSettles("ok")]))

  it("a send whose client went waits, pending and with no error, and goes through the app's next client", () =>
    play([new SetValue(1), new Flush(), new SendSettles("failed"), new SetValue(2), new Flush(), new SendSettles("gone"), new NextClient(), new SendSettles("ok")]))

  it("the app's next client given while a send is on its way through the one that went: the change goes through it once that send ended", () =>
    play([new SetValue(1), new Flush(), new SetValue(2), new NextClient(), new SendSettles("gone"), new SendSettles("ok")]))

  it("the server's value shown after a failed send ends that send's error", () =>
    play([new SetValue(1), new Flush(), new SendSettles("failed"), new ServerValue(0)]))
})
