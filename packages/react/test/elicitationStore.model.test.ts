// The queues of MCP servers' requests for input (forms, what useTamboMcpElicitation shows, and URLs,
// what useTamboMcpUrlElicitation shows), model-based: fast-check generates sequences of servers
// asking, the user answering (accept, decline, cancel),
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
import { describe, expect, it, vi } from "vitest"
import { startMcpServer } from "../../core/test/mcp/server.js"
import { all, greeter, hastyGreeter } from "../../core/test/mcp/tools.js"
import { TamboClient } from "../src/index.js"
import { ClientHandle } from "../src/internal/clientHandle.js"
import { ElicitationStore, UrlElicitationStore } from "../src/internal/elicitationStore.js"
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

/** A client's handler of one kind of request, as the client's MCP service calls it. */
type Handler = (request: never, context: McpRequestContext) => unknown

/** The queue of one kind of request (forms, or URLs), and how the client's MCP service asks it. */
interface Kind {
  readonly name: string
  readonly make: () => ElicitationStore | UrlElicitationStore
  readonly handlerOf: (client: TamboClient) => Handler | undefined
  readonly request: (n: number) => unknown
  /** What the user's acceptance carries. */
  readonly accepted: ElicitationResult
}

const kinds: ReadonlyArray<Kind> = [
  {
    name: "forms",
    make: () => new ElicitationStore(),
    handlerOf: (client) => client.getMcpElicitationHandler(),
    request: (n) => ({
      method: "elicitation/create",
      params: { mode: "form", message: `request ${n}`, requestedSchema: { type: "object", properties: {} } }
    }),
    accepted: { action: "accept", content: { ok: true } }
  },
  {
    name: "URLs",
    make: () => new UrlElicitationStore(),
    handlerOf: (client) => client.getMcpUrlElicitationHandler(),
    request: (n) => ({
      method: "elicitation/create",
      params: { mode: "url", message: `request ${n}`, url: `https://example.com/${n}`, elicitationId: `e-${n}` }
    }),
    accepted: { action: "accept" }
  }
]

interface Real {
  readonly kind: Kind
  readonly store: ElicitationStore | UrlElicitationStore
  readonly handle: ClientHandle
  readonly client: TamboClient
  detach: (() => void) | undefined
  undoOverride: (() => void) | undefined
  readonly asked: Map<number, Asked>
  /** Each request as the hook showed it, while it was the oldest waiting. */
  readonly shown: Map<number, unknown>
}

/** Lets answered requests' promises settle. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 0))

const check = (model: Model, real: Real) => {
  expect(real.store.getSnapshot()?.message).toBe(model.waiting[0] === undefined ? undefined : `request ${model.waiting[0]}`)
  if (model.waiting[0] !== undefined) real.shown.set(model.waiting[0], real.store.getSnapshot())
  for (const [n, asked] of real.asked) {
    const expected = model.answered.get(n)
    expect(asked.answers.map((answer) => answer.action)).toEqual(expected === undefined ? [] : [expected])
    if (expected === "accept") expect(asked.answers[0]).toEqual(real.kind.accepted)
  }
  const handler = real.kind.handlerOf(real.client)
  expect(handler !== undefined).toBe(model.attached)
}

class Ask implements fc.AsyncCommand<Model, Real> {
  /** `givenUp`: the server gave up on it before the handler ran (its signal comes aborted). */
  constructor(readonly givenUp = false) {}
  check = (model: Readonly<Model>) => model.attached
  async run(model: Model, real: Real) {
    const n = ++model.asked
    const abort = new AbortController()
    if (this.givenUp) abort.abort()
    const asked: Asked = { n, abort, answers: [] }
    real.asked.set(n, asked)
    const context = { key: "k", serverKey: "docs", server: { url: "http://127.0.0.1:1/mcp" }, signal: abort.signal } as McpRequestContext
    const handler = real.kind.handlerOf(real.client)!
    void Promise.resolve(handler(real.kind.request(n) as never, context)).then((answer) =>
      asked.answers.push(answer as ElicitationResult)
    )
    await settled()
    // The handler in front answers at once; otherwise it waits in the queue, unless given up on already.
    if (model.overridden) model.answered.set(n, "decline")
    else if (this.givenUp) model.answered.set(n, "cancel")
    else model.waiting.push(n)
    check(model, real)
  }
  toString = () => (this.givenUp ? "ask(givenUp)" : "ask")
}

class Answer implements fc.AsyncCommand<Model, Real> {
  constructor(readonly action: Action) {}
  check = () => true
  async run(model: Model, real: Real) {
    ;(real.store as ElicitationStore).respond(this.action === "accept" ? real.kind.accepted : { action: this.action })
    await settled()
    const first = model.waiting.shift()
    if (first !== undefined) model.answered.set(first, this.action)
    check(model, real)
  }
  toString = () => `answer(${this.action})`
}

/** The user answers a request shown before (a form submitted late): only that one, if it still waits. */
class LateAnswer implements fc.AsyncCommand<Model, Real> {
  constructor(readonly which: number, readonly action: Action) {}
  check = () => true
  async run(model: Model, real: Real) {
    const n = this.which % (model.asked + 1)
    const shown = real.shown.get(n)
    if (shown !== undefined) {
      ;(real.store as ElicitationStore).respond(
        this.action === "accept" ? real.kind.accepted : { action: this.action },
        shown as NonNullable<ReturnType<ElicitationStore["getSnapshot"]>>
      )
    }
    await settled()
    if (shown !== undefined && model.waiting.includes(n)) {
      model.waiting = model.waiting.filter((w) => w !== n)
      model.answered.set(n, this.action)
    }
    check(model, real)
  }
  toString = () => `lateAnswer(${this.which}, ${this.action})`
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
      real.undoOverride = (real.store as ElicitationStore).override(() => ({ action: "decline" }))
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
    fc.constant(new Ask(true)),
    fc.constantFrom<Action>("accept", "decline", "cancel").map((action) => new Answer(action)),
    fc.constantFrom<Action>("accept", "decline", "cancel").map((action) => new Answer(action)),
    fc.nat(6).map((which) => new ServerGivesUp(which)),
    fc.tuple(fc.nat(6), fc.constantFrom<Action>("accept", "decline", "cancel")).map(([which, action]) =>
      new LateAnswer(which, action)
    ),
    fc.boolean().map((on) => new Override(on)),
    fc.constant(new Detach()),
    fc.constant(new Attach())
  ],
  { maxCommands: 20 }
)

const runs = Number(process.env.MODEL_RUNS ?? 200)
const seed = Number(process.env.MODEL_SEED ?? 83)

/** Plays commands on a fresh queue of `kind`, attached to a fresh client, checking them against the model after each. */
const play = async (kind: Kind, sequence: Iterable<fc.AsyncCommand<Model, Real>>) => {
  const client = new TamboClient({ apiKey: server().apiKey, tamboUrl: server().url, userKey: "user-1", maxRetries: 0 })
  const handle = new ClientHandle(client, "microtask")
  const store = kind.make()
  const real: Real = { kind, store, handle, client, detach: store.attach(handle), undoOverride: undefined, asked: new Map(), shown: new Map() }
  const model: Model = { attached: true, overridden: false, waiting: [], answered: new Map(), asked: 0 }
  try {
    await fc.asyncModelRun(() => ({ model, real }), sequence)
  } finally {
    real.detach?.()
    await client.destroy()
  }
}

describe("the queue of MCP elicitations, against a real MCP server", () => {
  it("a request its server gave up on as soon as it sent it is not shown: the next one is", async () => {
    const mcp = await startMcpServer({ setup: all(hastyGreeter, greeter) })
    const client = new TamboClient({
      apiKey: server().apiKey,
      tamboUrl: server().url,
      userKey: "user-1",
      maxRetries: 0,
      mcpServers: [{ url: mcp.url, serverKey: "hello" }]
    })
    const store = new ElicitationStore()
    const detach = store.attach(new ClientHandle(client, "microtask"))
    try {
      await vi.waitFor(() => expect(Object.values(client.getMcpClients())[0]?.status).toBe("connected"), { timeout: 10_000 })
      const call = (tool: string) => Object.values(client.getMcpClients())[0]!.client!.callTool(tool)
      const textOf = (answer: Awaited<ReturnType<typeof call>>) => answer.content.map((block) => ("text" in block ? block.text : "")).join("")
      // Asked and cancelled in one go: the cancel can reach the client before its handler runs.
      expect(textOf(await call("greet_hastily"))).toBe("No name (gave up)")
      const greeting = call("greet")
      await vi.waitFor(() => expect(store.getSnapshot()).toBeDefined())
      expect(store.getSnapshot()?.message).toBe("What is your name?")
      store.respond({ action: "accept", content: { name: "Ada" } }, store.getSnapshot())
      expect(textOf(await greeting)).toBe("Hello, Ada!")
      expect(store.getSnapshot()).toBeUndefined()
    } finally {
      detach()
      await client.destroy()
      await mcp.close()
    }
  })
})

describe.each(kinds)("the queue of MCP elicitations ($name), model-based", (kind) => {
  it("every sequence of requests, answers, give-ups, handlers in front and re-attachments keeps the model's promises", async () => {
    await fc.assert(fc.asyncProperty(commands, (sequence) => play(kind, sequence)), { numRuns: runs, seed })
  }, 300_000)

  // What the property shrank planted defects to, kept as named cases.
  it("detached, the queue cancels what waits", () => play(kind, [new Ask(), new Detach()]))

  it("detached, the queue takes its handler off the client", () => play(kind, [new Detach()]))

  it("a handler in front answers instead of the queue", () => play(kind, [new Override(true), new Ask()]))

  it("a request its server gave up on leaves the queue, cancelled", () => play(kind, [new Ask(), new ServerGivesUp(1)]))

  it("a request its server gave up on before it reached the queue is answered cancelled and never shown", () =>
    play(kind, [new Ask(true)]))

  it("an answer to a request its server gave up on does not answer the next one", () =>
    play(kind, [new Ask(), new ServerGivesUp(1), new Ask(), new LateAnswer(1, "accept")]))
})
