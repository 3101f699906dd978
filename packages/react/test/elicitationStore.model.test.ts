// The queue of MCP servers' requests for input (what useTamboMcpElicitation shows), model-based:
// fast-check generates sequences of servers asking, the user answering (accept, decline, cancel),
// servers giving up on a request, an answering handler put in front of the queue and taken away
// (TamboMcpProvider's `handlers.elicitation`), and the queue detached from its client and attached
// again (the provider unmounting and mounting). After every step the request shown is the oldest
// waiting, every request was answered as the model says and only once, and the client's handler is
// the queue's exactly while it is attached. The requests come as the client's MCP service hands them
// to its handler; what is tested is the queue's bookkeeping, not a server's.
//
// Seeded, so a failure reproduces; MODEL_RUNS and MODEL_SEED for longer or other runs.
import type { ElicitationResult, McpRequestContext } from "@tambo-effect/core/Mcp"
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "vitest"
import { TamboClient } from "../src/index.js"
import { ClientHandle } from "../src/internal/clientHandle.js"
import { ElicitationStore } from "../src/internal/elicitationStore.js"
import { useServer } from "./helpers.js"

const server = useServer()

type Action = "accept" | "decline" | "cancel"

interface Asked {
  readonly n: number
  readonly abort: AbortController
  /** Every answer it got, in order (one, once it was answered). */
  readonly answers: Array<ElicitationResult>
}

interface Model {
  attached: boolean
  overridden: boolean
  /** The requests waiting in the queue, oldest first. */
  waiting: Array<number>
  /** The answer each request must have got by now. */
  readonly answered: Map<number, ElicitationResult["action"]>
  asked: number
}

interface Real {
  readonly store: ElicitationStore
  readonly handle: ClientHandle
  readonly client: TamboClient
  detach: (() => void) | undefined
  undoOverride: (() => void) | undefined
  readonly asked: Map<number, Asked>
}

/** Lets answered requests' promises settle. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 0))

const check = (model: Model, real: Real) => {
  expect(real.store.getSnapshot()?.message).toBe(model.waiting[0] === undefined ? undefined : `request ${model.waiting[0]}`)
  for (const [n, asked] of real.asked) {
    const expected = model.answered.get(n)
    expect(asked.answers.map((answer) => answer.action)).toEqual(expected === undefined ? [] : [expected])
    if (expected === "accept" && !model.waiting.includes(n)) expect(asked.answers[0]).toHaveProperty("content")
  }
  const handler = real.client.getMcpElicitationHandler()
  expect(handler !== undefined).toBe(model.attached)
}

class Ask implements fc.AsyncCommand<Model, Real> {
  check = (model: Readonly<Model>) => model.attached
  async run(model: Model, real: Real) {
    const n = ++model.asked
    const abort = new AbortController()
    const asked: Asked = { n, abort, answers: [] }
    real.asked.set(n, asked)
    const context = { key: "k", serverKey: "docs", server: { url: "http://127.0.0.1:1/mcp" }, signal: abort.signal } as McpRequestContext
    const handler = real.client.getMcpElicitationHandler()!
    void Promise.resolve(
      handler({
        method: "elicitation/create",
        params: { mode: "form", message: `request ${n}`, requestedSchema: { type: "object", properties: {} } }
      }, context)
    ).then((answer) => asked.answers.push(answer as ElicitationResult))
    await settled()
    // The handler in front answers at once; otherwise it waits in the queue.
    if (model.overridden) model.answered.set(n, "decline")
    else model.waiting.push(n)
    check(model, real)
  }
  toString = () => "ask"
}

class Answer implements fc.AsyncCommand<Model, Real> {
  constructor(readonly action: Action) {}
  check = () => true
  async run(model: Model, real: Real) {
    real.store.respond(this.action === "accept" ? { action: "accept", content: { ok: true } } : { action: this.action })
    await settled()
    const first = model.waiting.shift()
    if (first !== undefined) model.answered.set(first, this.action)
    check(model, real)
  }
  toString = () => `answer(${this.action})`
}

class ServerGivesUp implements fc.AsyncCommand<Model, Real> {
  constructor(readonly which: number) {}
  check = () => true
  async run(model: Model, real: Real) {
    const n = this.which % (model.asked + 1)
    real.asked.get(n)?.abort.abort()
    await settled()
    // A request still waiting leaves the queue, cancelled; one answered before stays as it was.
    if (model.waiting.includes(n)) {
      model.waiting = model.waiting.filter((w) => w !== n)
      model.answered.set(n, "cancel")
    }
    check(model, real)
  }
  toString = () => `serverGivesUp(${this.which})`
}

class Override implements fc.AsyncCommand<Model, Real> {
  constructor(readonly on: boolean) {}
  check = () => true
  async run(model: Model, real: Real) {
    if (this.on && real.undoOverride === undefined) {
      real.undoOverride = real.store.override(() => ({ action: "decline" }))
      model.overridden = true
    }
    if (!this.on && real.undoOverride !== undefined) {
      real.undoOverride()
      real.undoOverride = undefined
      model.overridden = false
    }
    check(model, real)
  }
  toString = () => `override(${this.on})`
}

class Detach implements fc.AsyncCommand<Model, Real> {
  check = (model: Readonly<Model>) => model.attached
  async run(model: Model, real: Real) {
    real.detach?.()
    real.detach = undefined
    await settled()
    // Nobody is left to answer: what waits is cancelled.
    for (const n of model.waiting) model.answered.set(n, "cancel")
    model.waiting = []
    model.attached = false
    check(model, real)
  }
  toString = () => "detach"
}

class Attach implements fc.AsyncCommand<Model, Real> {
  check = (model: Readonly<Model>) => !model.attached
  async run(model: Model, real: Real) {
    real.detach = real.store.attach(real.handle)
    model.attached = true
    check(model, real)
  }
  toString = () => "attach"
}

const commands = fc.commands(
  [
    fc.constant(new Ask()),
    fc.constant(new Ask()),
    fc.constant(new Ask()),
    fc.constantFrom<Action>("accept", "decline", "cancel").map((action) => new Answer(action)),
    fc.constantFrom<Action>("accept", "decline", "cancel").map((action) => new Answer(action)),
    fc.nat(6).map((which) => new ServerGivesUp(which)),
    fc.boolean().map((on) => new Override(on)),
    fc.constant(new Detach()),
    fc.constant(new Attach())
  ],
  { maxCommands: 20 }
)

const runs = Number(process.env.MODEL_RUNS ?? 200)
const seed = Number(process.env.MODEL_SEED ?? 83)

/** Plays commands on a fresh queue, attached to a fresh client, checking them against the model after each. */
const play = async (sequence: Iterable<fc.AsyncCommand<Model, Real>>) => {
  const client = new TamboClient({ apiKey: server().apiKey, tamboUrl: server().url, userKey: "user-1", maxRetries: 0 })
  const handle = new ClientHandle(client, "microtask")
  const store = new ElicitationStore()
  const real: Real = { store, handle, client, detach: store.attach(handle), undoOverride: undefined, asked: new Map() }
  const model: Model = { attached: true, overridden: false, waiting: [], answered: new Map(), asked: 0 }
  try {
    await fc.asyncModelRun(() => ({ model, real }), sequence)
  } finally {
    real.detach?.()
    await client.destroy()
  }
}

describe("the queue of MCP elicitations, model-based", () => {
  it("every sequence of requests, answers, give-ups, handlers in front and re-attachments keeps the model's promises", async () => {
    await fc.assert(fc.asyncProperty(commands, play), { numRuns: runs, seed })
  }, 300_000)

  // What the property shrank planted defects to, kept as named cases.
  it("detached, the queue cancels what waits", () => play([new Ask(), new Detach()]))

  it("detached, the queue takes its handler off the client", () => play([new Detach()]))

  it("a handler in front answers instead of the queue", () => play([new Override(true), new Ask()]))

  it("a request its server gave up on leaves the queue, cancelled", () => play([new Ask(), new ServerGivesUp(1)]))
})
