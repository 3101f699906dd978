// The interactable components' store (what withTamboInteractable and useTamboInteractable share),
// model-based: fast-check generates sequences of the page's actions (components added, re-added,
// removed, their props and state changed, selected, the store attached to and detached from its
// client) and of the model's (runs on the testing server whose tool calls change a component's
// props, with a valid value or not, for its own id or another's, or remove one; a run that only
// reads the context; the context shown without a run). After every step the store's components,
// the tools and the context helper on the client, and what the model was sent and answered equal
// a plain model; a change of the components is always told to the store's subscribers.
//
// Seeded, so a failure reproduces; MODEL_RUNS and MODEL_SEED for longer or other runs.
import { Script } from "@tambo-effect/testing"
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { type TamboClient, ToolDefinitionError } from "../src/index.js"
import { InteractableStore } from "../src/internal/interactableStore.js"
import { clientFor, useServer } from "./helpers.js"

const server = useServer()

type Id = "a" | "b" | "c"

const GLOBAL_TOOLS = ["get_all_interactable_components", "get_interactable_component_by_id", "remove_interactable_component"]

interface ModelComponent {
  readonly id: Id
  readonly withSchema: boolean
  props: Record<string, unknown>
  state: Record<string, unknown>
  isSelected: boolean
}

interface Model {
  attached: boolean
  components: Array<ModelComponent>
}

interface Real {
  readonly store: InteractableStore
  readonly client: TamboClient
  detach: (() => void) | undefined
  /** How many times the store told its subscribers of a change. */
  notified: number
}

const find = (model: Model, id: string) => model.components.find((c) => c.id === id)

/** Whether the model is given the components (their tools and the context helper). */
const offered = (model: Model) => model.attached && model.components.length > 0

const snapshotOf = (store: InteractableStore) =>
  store.getSnapshot().map((c) => ({ id: c.id, props: c.props, state: c.state, isSelected: c.isSelected ?? false }))

const expectedSnapshot = (model: Model) =>
  model.components.map(({ id, isSelected, props, state }) => ({ id, props, state, isSelected }))

/** The components as the context helper tells the model of them. */
const expectedContext = (model: Model) =>
  offered(model)
    ? {
      components: model.components.map((c) => ({
        id: c.id,
        componentName: "Counter",
        description: "A counter",
        props: c.props,
        propsSchema: c.withSchema ? `Available: change it with update_component_props_${c.id}` : "Not specified",
        state: c.state,
        isSelected: c.isSelected,
        stateSchema: c.withSchema ? `Available: change it with update_component_state_${c.id}` : "Not specified"
      }))
    }
    : undefined

const ours = (name: string) => name.startsWith("update_component_") || GLOBAL_TOOLS.includes(name)

/** The invariants: the store's components, and what its client offers the model. */
const check = (model: Model, real: Real) => {
  expect(snapshotOf(real.store)).toEqual(expectedSnapshot(model))
  const tools = Object.keys(real.client.getTools()).filter(ours).sort()
  const expectedTools = model.attached
    ? [
      ...model.components.flatMap((c) => [`update_component_props_${c.id}`, `update_component_state_${c.id}`]),
      ...(model.components.length > 0 ? GLOBAL_TOOLS : [])
    ].sort()
    : []
  expect(tools).toEqual(expectedTools)
  expect(Object.hasOwn(real.client.getContextHelpers(), "interactables")).toBe(offered(model))
}

/** Runs `step` on the store and checks that a change of its components was told, with a new snapshot. */
const observed = (real: Real, step: () => void) => {
  const before = real.store.getSnapshot()
  const beforeValue = snapshotOf(real.store)
  const notifiedBefore = real.notified
  step()
  const after = real.store.getSnapshot()
  if (JSON.stringify(snapshotOf(real.store)) !== JSON.stringify(beforeValue)) {
    expect(after).not.toBe(before)
    expect(real.notified).toBeGreaterThan(notifiedBefore)
  }
}

const counter = (id: Id, n: number, withSchema: boolean) => ({
  id,
  name: "Counter",
  description: "A counter",
  props: { n },
  ...(withSchema ? { propsSchema: z.object({ n: z.number() }), stateSchema: z.object({ s: z.number() }) } : {})
})

class Add implements fc.AsyncCommand<Model, Real> {
  constructor(readonly id: Id, readonly n: number, readonly withSchema: boolean) {}
  check = () => true
  async run(model: Model, real: Real) {
    observed(real, () => expect(real.store.add(counter(this.id, this.n, this.withSchema))).toBe(this.id))
    // Added again: it replaces the one of its id, last in the list.
    model.components = [
      ...model.components.filter((c) => c.id !== this.id),
      { id: this.id, withSchema: this.withSchema, props: { n: this.n }, state: {}, isSelected: false }
    ]
    check(model, real)
  }
  toString = () => `add(${this.id}, ${this.n}${this.withSchema ? ", schema" : ""})`
}

class AddInvalid implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    observed(real, () =>
      expect(() => real.store.add({ ...counter("a", 0, false), id: "not a tool name" })).toThrow(ToolDefinitionError))
    check(model, real)
  }
  toString = () => "addInvalid"
}

class Remove implements fc.AsyncCommand<Model, Real> {
  constructor(readonly id: Id) {}
  check = () => true
  async run(model: Model, real: Real) {
    observed(real, () => real.store.remove(this.id))
    model.components = model.components.filter((c) => c.id !== this.id)
    check(model, real)
  }
  toString = () => `remove(${this.id})`
}

class SetProps implements fc.AsyncCommand<Model, Real> {
  constructor(readonly id: Id, readonly n: number) {}
  check = () => true
  async run(model: Model, real: Real) {
    observed(real, () => real.store.updateProps(this.id, { n: this.n }))
    const component = find(model, this.id)
    if (component !== undefined) component.props = { ...component.props, n: this.n }
    check(model, real)
  }
  toString = () => `setProps(${this.id}, ${this.n})`
}

class SetState implements fc.AsyncCommand<Model, Real> {
  constructor(readonly id: Id, readonly s: number) {}
  check = () => true
  async run(model: Model, real: Real) {
    observed(real, () => real.store.updateState(this.id, { s: this.s }))
    const component = find(model, this.id)
    if (component !== undefined) component.state = { ...component.state, s: this.s }
    check(model, real)
  }
  toString = () => `setState(${this.id}, ${this.s})`
}

class Select implements fc.AsyncCommand<Model, Real> {
  constructor(readonly id: Id, readonly selected: boolean) {}
  check = () => true
  async run(model: Model, real: Real) {
    observed(real, () => real.store.setSelected(this.id, this.selected))
    const component = find(model, this.id)
    if (component !== undefined) component.isSelected = this.selected
    check(model, real)
  }
  toString = () => `select(${this.id}, ${this.selected})`
}

class Attach implements fc.AsyncCommand<Model, Real> {
  check = (model: Readonly<Model>) => !model.attached
  async run(model: Model, real: Real) {
    real.detach = real.store.attach(real.client)
    model.attached = true
    check(model, real)
  }
  toString = () => "attach"
}

class Detach implements fc.AsyncCommand<Model, Real> {
  check = (model: Readonly<Model>) => model.attached
  async run(model: Model, real: Real) {
    real.detach?.()
    real.detach = undefined
    model.attached = false
    check(model, real)
  }
  toString = () => "detach"
}

interface Answer {
  readonly isError: boolean
  readonly text: string
}

/**
 * A run whose model calls `call` (or only answers, without one): the context it was sent, and
 * the result the client answered the call with.
 */
const runOnce = async (real: Real, call: { readonly name: string; readonly args: unknown } | undefined) => {
  const answers: Array<Answer> = []
  server().setScript((request) => {
    if (call === undefined) return [Script.text("ok")]
    if (request.toolResults.length === 0) return [Script.toolCall(call.name, call.args)]
    answers.push(...request.toolResults.map(({ isError, text }) => ({ isError, text })))
    return [Script.text("ok")]
  })
  const requestsBefore = server().requests.length
  await real.client.run("go").thread
  const first = server().requests.slice(requestsBefore).find((r) => r.method === "POST" && r.path.endsWith("/runs"))
  const body = first?.body as { readonly message?: { readonly additionalContext?: { readonly interactables?: unknown } } }
  return { context: body?.message?.additionalContext?.interactables, answer: answers[0] }
}

/** A run start reads the context, and the selections hold for that one message. */
const contextRead = (model: Model) => {
  const sent = expectedContext(model)
  if (offered(model)) for (const c of model.components) c.isSelected = false
  return sent
}

class ModelSetsProps implements fc.AsyncCommand<Model, Real> {
  constructor(readonly id: Id, readonly target: Id, readonly value: number | "text") {}
  check = () => true
  async run(model: Model, real: Real) {
    const sent = contextRead(model)
    const component = find(model, this.id)
    const registered = model.attached && component !== undefined
    const valid = this.target === this.id && (this.value !== "text" || component?.withSchema === false)
    const { answer, context } = await runOnce(real, {
      name: `update_component_props_${this.id}`,
      args: { componentId: this.target, newProps: { n: this.value } }
    })
    expect(context).toEqual(sent)
    // A tool the run did not offer is not the client's to answer: the server does not pause for it.
    if (!registered) expect(answer).toBeUndefined()
    else expect(answer?.isError).toBe(!valid)
    if (registered && valid) {
      expect(answer?.text).toBe("Updated successfully")
      component.props = { ...component.props, n: this.value }
    }
    check(model, real)
  }
  toString = () => `modelSetsProps(${this.id}, componentId ${this.target}, ${JSON.stringify(this.value)})`
}

class ModelRemoves implements fc.AsyncCommand<Model, Real> {
  constructor(readonly id: Id) {}
  check = () => true
  async run(model: Model, real: Real) {
    const registered = offered(model)
    const sent = contextRead(model)
    const there = find(model, this.id) !== undefined
    const { answer, context } = await runOnce(real, { name: "remove_interactable_component", args: { componentId: this.id } })
    expect(context).toEqual(sent)
    // Not offered, it is not the client's to answer; offered, an unknown id is an answer saying so.
    if (!registered) expect(answer).toBeUndefined()
    else expect(answer?.isError).toBe(false)
    if (registered) {
      expect(JSON.parse(answer!.text)).toMatchObject({ success: there })
      if (there) model.components = model.components.filter((c) => c.id !== this.id)
    }
    check(model, real)
  }
  toString = () => `modelRemoves(${this.id})`
}

class ReadContext implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    const sent = contextRead(model)
    const { context } = await runOnce(real, undefined)
    expect(context).toEqual(sent)
    check(model, real)
  }
  toString = () => "readContext"
}

/** The context shown without a run (`getAdditionalContext`): it takes no selection. */
class PeekContext implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    expect(real.store.context()).toEqual(model.components.length === 0 ? undefined : expectedContext({ ...model, attached: true }))
    check(model, real)
  }
  toString = () => "peekContext"
}

const id = fc.constantFrom<Id>("a", "b", "c")

const add = fc.tuple(id, fc.integer({ min: 0, max: 3 }), fc.boolean()).map(([i, n, withSchema]) => new Add(i, n, withSchema))
const select = fc.tuple(id, fc.boolean()).map(([i, selected]) => new Select(i, selected))
const modelSetsProps = fc.tuple(id, id, fc.constantFrom<number | "text">(7, "text")).map(([i, target, value]) =>
  new ModelSetsProps(i, target, value)
)

const commands = fc.commands(
  [
    add,
    add,
    add,
    fc.constant(new AddInvalid()),
    id.map((i) => new Remove(i)),
    fc.tuple(id, fc.integer({ min: 0, max: 3 })).map(([i, n]) => new SetProps(i, n)),
    fc.tuple(id, fc.integer({ min: 0, max: 3 })).map(([i, s]) => new SetState(i, s)),
    select,
    select,
    fc.constant(new Attach()),
    fc.constant(new Detach()),
    modelSetsProps,
    modelSetsProps,
    id.map((i) => new ModelRemoves(i)),
    id.map((i) => new ModelRemoves(i)),
    fc.constant(new ReadContext()),
    fc.constant(new ReadContext()),
    fc.constant(new PeekContext())
  ],
  { maxCommands: 16 }
)

const runs = Number(process.env.MODEL_RUNS ?? 150)
const seed = Number(process.env.MODEL_SEED ?? 61)

/** Plays commands on a fresh store and client, checking them against the model after each. */
const play = async (sequence: Iterable<fc.AsyncCommand<Model, Real>>) => {
  const client = clientFor(server())
  const store = new InteractableStore()
  const real: Real = { store, client, detach: undefined, notified: 0 }
  const unsubscribe = store.subscribe(() => {
    real.notified++
  })
  // Attached, as under a mounted provider; sequences detach and attach again.
  real.detach = store.attach(client)
  try {
    await fc.asyncModelRun(() => ({ model: { attached: true, components: [] }, real }), sequence)
  } finally {
    unsubscribe()
    real.detach?.()
    await client.destroy()
  }
}

describe("interactable components, model-based", () => {
  it("every sequence of the page's and the model's actions leaves the store and the client as the model says", async () => {
    await fc.assert(fc.asyncProperty(commands, play), { numRuns: runs, seed })
  }, 300_000)

  // What the property shrank planted defects to, kept as named cases.
  it("a selection holds for one message: the run that reads it clears it", () =>
    play([new Add("a", 0, false), new Select("a", true), new ModelSetsProps("a", "a", 7)]))

  it("a selection shown without a run stays for the next message", () =>
    play([new Add("a", 0, false), new Select("a", true), new PeekContext(), new ReadContext()]))

  it("the model removing the last component withdraws the tools over all of them and the context", () =>
    play([new Add("c", 0, false), new ModelRemoves("c")]))

  it("attached again, the store registers its components' tools again", () =>
    play([new Add("a", 0, false), new Detach(), new Attach()]))

  it("a props tool called with another component's id changes nothing and says why", () =>
    play([new Add("c", 0, false), new ModelSetsProps("c", "a", 7)]))
})
