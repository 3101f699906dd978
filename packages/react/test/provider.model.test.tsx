// @vitest-environment happy-dom
// What the provider offers the model, model-based: fast-check generates sequences of prop changes
// (tools, components with their associated tools, context helpers), registries mounted below it
// (TamboRegistryProvider, TamboContextHelpersProvider) and unmounted, what the app registers at
// runtime (a component, and tools through `useTambo().registerTool`), a change of user (a new
// client), of `updates` (the same client), and the tree hidden by `<Activity>` and shown again (a
// new client on the same conversation, the app's tools given back, some registered while hidden);
// after every step a run's request, as the testing server received it, offers exactly what the
// model says: nothing the app took away, nothing missing.
//
// Seeded, so a failure reproduces; MODEL_RUNS and MODEL_SEED for longer or other runs.
import { act, cleanup, render } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { FastCheck as fc } from "effect"
import * as Schema from "effect/Schema"
import { Activity, useState } from "react"
import { afterEach, describe, expect, it } from "vitest"
import {
  type TamboComponent,
  TamboContextHelpersProvider,
  TamboProvider,
  TamboRegistryProvider,
  type TamboTool,
  useTambo,
  useTamboClient,
  type UseTamboReturn
} from "../src/index.js"
import { connection, isDestroyed, sleep, useServer } from "./helpers.js"

const server = useServer()
afterEach(cleanup)

const tool = (name: string): TamboTool => ({
  name,
  description: `the ${name} tool`,
  inputSchema: Schema.Struct({}),
  tool: () => name
})
const TOOLS = { a: tool("tool_a"), b: tool("tool_b"), c: tool("tool_c"), r: tool("tool_r") }
const ASSOCIATED = tool("tool_of_x")

const component = (name: string, associatedTools?: ReadonlyArray<TamboTool>): TamboComponent => ({
  name,
  description: `the ${name} card`,
  propsSchema: { type: "object", properties: {} },
  component: () => null,
  ...(associatedTools === undefined ? {} : { associatedTools })
})
const COMPONENTS = { x: component("X", [ASSOCIATED]), y: component("Y"), w: component("W") }
const RUNTIME = { z: component("Z") }
/** Tools the app registers through `useTambo()`: one of its own name, one named like a props tool. */
const RUNTIME_TOOLS = { rt: tool("tool_rt"), a: tool("tool_a") }
const HELPERS = { h1: () => ({ one: 1 }), h2: () => ({ two: 2 }), h3: () => ({ three: 3 }) }

interface Registrations {
  readonly tools: ReadonlyArray<keyof typeof TOOLS>
  readonly components: ReadonlyArray<keyof typeof COMPONENTS>
  readonly helpers: ReadonlyArray<keyof typeof HELPERS>
}

interface Props extends Registrations {
  readonly user: "user-1" | "user-2"
  /** How changes reach React: no reason for a new client. */
  readonly updates: "animationFrame" | "microtask"
  /** What a registry mounted below the provider adds, if one is mounted. */
  readonly registry: Registrations | undefined
  /** The tree is hidden by `<Activity>`: its effects are cleaned up, its client destroyed. */
  readonly hidden: boolean
}

interface Model {
  props: Props
  runtime: Set<keyof typeof RUNTIME>
  /**
   * The client's tools by name, and who registered the one it holds: the provider (at each change
   * of what it offers, all of its tools again), or the app at runtime (until a new client).
   */
  tools: Map<string, "provider" | "app">
}

interface Real {
  setProps: (props: Props) => void
  tambo: () => UseTamboReturn
}

const sorted = (names: Iterable<string>) => [...names].sort()

/** The names of the tools the provider offers with these props. */
const providerTools = (props: Props): ReadonlySet<string> => {
  const registry = props.registry ?? { tools: [], components: [], helpers: [] }
  const components = new Set([...props.components, ...registry.components])
  return new Set([
    ...[...props.tools, ...registry.tools].map((t) => TOOLS[t].name),
    ...(components.has("x") ? [ASSOCIATED.name] : [])
  ])
}

/**
 * What the provider offers after `before`: those tools it no longer has are withdrawn if the
 * client still holds its own, and those it did not have are its own from then on. One it had
 * already stays as the client holds it (the app's, if the app registered one since).
 */
const provide = (model: Model, before: Props) => {
  const was = providerTools(before)
  const now = providerTools(model.props)
  for (const name of was) {
    if (!now.has(name) && model.tools.get(name) === "provider") model.tools.delete(name)
  }
  for (const name of now) if (!was.has(name)) model.tools.set(name, "provider")
}

/** A run's request offers what the model says. */
const check = async (model: Model, real: Real) => {
  const before = server().requests.length
  await act(() => real.tambo().sendMessage("hi").thread)
  const body = server().requests.slice(before).find((r) => r.method === "POST" && r.path.endsWith("/runs"))!.body as {
    readonly tools?: ReadonlyArray<{ readonly name: string }>
    readonly availableComponents?: ReadonlyArray<{ readonly name: string }>
    readonly message: { readonly additionalContext?: Record<string, unknown> }
  }
  const { props } = model
  const registry = props.registry ?? { tools: [], components: [], helpers: [] }
  const componentKeys = new Set([...props.components, ...registry.components])
  const components = new Set([...[...componentKeys].map((c) => COMPONENTS[c].name), ...[...model.runtime].map((c) => RUNTIME[c].name)])
  expect(sorted((body.tools ?? []).map((t) => t.name))).toEqual(sorted(model.tools.keys()))
  expect(sorted((body.availableComponents ?? []).map((c) => c.name))).toEqual(sorted(components))
  expect(sorted(Object.keys(body.message.additionalContext ?? {}))).toEqual(sorted(new Set([...props.helpers, ...registry.helpers])))
}

class SetProps implements fc.AsyncCommand<Model, Real> {
  constructor(readonly props: Partial<Omit<Props, "user" | "updates">>) {}
  check = () => true
  async run(model: Model, real: Real) {
    const before = model.props
    model.props = { ...model.props, ...this.props }
    act(() => real.setProps(model.props))
    provide(model, before)
    await check(model, real)
  }
  toString = () => `props(${JSON.stringify(this.props, (_, value) => value === undefined ? null : value)})`
}

class ChangeUser implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    model.props = { ...model.props, user: model.props.user === "user-1" ? "user-2" : "user-1" }
    act(() => real.setProps(model.props))
    // A new client: it holds the provider's tools only.
    model.tools = new Map(Array.from(providerTools(model.props), (name) => [name, "provider"]))
    await check(model, real)
  }
  toString = () => "changeUser"
}

class ChangeUpdates implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    model.props = { ...model.props, updates: model.props.updates === "animationFrame" ? "microtask" : "animationFrame" }
    act(() => real.setProps(model.props))
    // The same client: what the app registered at runtime stays.
    await check(model, real)
  }
  toString = () => "changeUpdates"
}

class RegisterAtRuntime implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    act(() => real.tambo().registerComponent(RUNTIME.z))
    model.runtime.add("z")
    // Its components changed, not its tools: the client holds the tools as it did.
    await check(model, real)
  }
  toString = () => "registerComponent(Z)"
}

class RegisterToolAtRuntime implements fc.AsyncCommand<Model, Real> {
  constructor(readonly tool: keyof typeof RUNTIME_TOOLS) {}
  check = () => true
  async run(model: Model, real: Real) {
    act(() => real.tambo().registerTool(RUNTIME_TOOLS[this.tool]))
    model.tools.set(RUNTIME_TOOLS[this.tool].name, "app")
    await check(model, real)
  }
  toString = () => `registerTool(${RUNTIME_TOOLS[this.tool].name})`
}

class HideAndShow implements fc.AsyncCommand<Model, Real> {
  /** `registered`: a tool the app registers while the tree is hidden. */
  constructor(readonly registered: keyof typeof RUNTIME_TOOLS | undefined) {}
  check = () => true
  async run(model: Model, real: Real) {
    const before = real.tambo()
    const conversation = { threadId: before.currentThreadId, messages: before.messages.length }
    const client = before.client
    act(() => real.setProps({ ...model.props, hidden: true }))
    await act(() => sleep(0))
    expect(isDestroyed(client)).toBe(true)
    // Rendered again while hidden: its render asks for a client, which goes at once.
    act(() => real.setProps({ ...model.props, hidden: true }))
    await act(() => sleep(0))
    if (this.registered !== undefined) {
      const tool = RUNTIME_TOOLS[this.registered]
      act(() => real.tambo().registerTool(tool))
      model.tools.set(tool.name, "app")
    }
    act(() => real.setProps(model.props))
    // A new client, on the same conversation, holding what the last one held.
    const after = real.tambo()
    expect(after.client).not.toBe(client)
    expect({ threadId: after.currentThreadId, messages: after.messages.length }).toEqual(conversation)
    await check(model, real)
  }
  toString = () => `hideAndShow(${this.registered ?? ""})`
}

const subsetOf = <K extends string>(keys: ReadonlyArray<K>) => fc.subarray([...keys])

const registrations = (
  tools: ReadonlyArray<keyof typeof TOOLS>,
  components: ReadonlyArray<keyof typeof COMPONENTS>,
  helpers: ReadonlyArray<keyof typeof HELPERS>
) => fc.record({ tools: subsetOf(tools), components: subsetOf(components), helpers: subsetOf(helpers) })

const commands = fc.commands(
  [
    registrations(["a", "b", "c"], ["x", "y"], ["h1", "h2"]).map((props) => new SetProps(props)),
    // A registry mounts (or changes), with its own and some of the provider's names; or unmounts.
    fc.option(registrations(["a", "r"], ["y", "w"], ["h1", "h3"]), { nil: undefined })
      .map((registry) => new SetProps({ registry })),
    fc.constant(new ChangeUser()),
    fc.constant(new ChangeUpdates()),
    fc.constant(new RegisterAtRuntime()),
    fc.constantFrom<keyof typeof RUNTIME_TOOLS>("rt", "a").map((name) => new RegisterToolAtRuntime(name)),
    fc.constantFrom<keyof typeof RUNTIME_TOOLS | undefined>(undefined, "rt", "a").map((name) => new HideAndShow(name))
  ],
  { maxCommands: 6 }
)

/** Mounts a provider driven by the returned setter, with `initial` props. */
const mount = (initial: Props): Real => {
  let setProps!: (props: Props) => void
  let tambo!: UseTamboReturn
  const Grab = () => {
    tambo = useTambo()
    // A render that asks for the client (a hidden tree's too, which then gets one that goes at once).
    useTamboClient()
    return null
  }
  const Harness = () => {
    const [props, set] = useState(initial)
    setProps = set
    return (
      <Activity mode={props.hidden ? "hidden" : "visible"}>
        <TamboProvider
          {...connection(server(), { userKey: props.user, updates: props.updates })}
          tools={props.tools.map((t) => TOOLS[t])}
          components={props.components.map((c) => COMPONENTS[c])}
          contextHelpers={Object.fromEntries(props.helpers.map((h) => [h, HELPERS[h]]))}
        >
          <Grab />
          {props.registry === undefined ? null : (
            <TamboRegistryProvider
              tools={props.registry.tools.map((t) => TOOLS[t])}
              components={props.registry.components.map((c) => COMPONENTS[c])}
            >
              <TamboContextHelpersProvider contextHelpers={Object.fromEntries(props.registry.helpers.map((h) => [h, HELPERS[h]]))}>
                <span />
              </TamboContextHelpersProvider>
            </TamboRegistryProvider>
          )}
        </TamboProvider>
      </Activity>
    )
  }
  render(<Harness />)
  return { setProps: (props) => setProps(props), tambo: () => tambo }
}

const play = async (sequence: Iterable<fc.AsyncCommand<Model, Real>>) => {
  server().setScript([Script.text("ok")])
  const initial: Props = {
    user: "user-1",
    updates: "animationFrame",
    tools: ["a"],
    components: ["x"],
    helpers: ["h1"],
    registry: undefined,
    hidden: false
  }
  const model: Model = {
    props: initial,
    runtime: new Set(),
    tools: new Map(Array.from(providerTools(initial), (name) => [name, "provider"]))
  }
  const real = mount(initial)
  try {
    await check(model, real)
    await fc.asyncModelRun(() => ({ model, real }), sequence)
  } finally {
    cleanup()
  }
}

const runs = Number(process.env.MODEL_RUNS ?? 100)
const seed = Number(process.env.MODEL_SEED ?? 33)

describe("what the provider offers the model, model-based", () => {
  it("after every change of its props, a runtime registration or a new client, a run offers exactly what they hold", async () => {
    await fc.assert(fc.asyncProperty(commands, play), { numRuns: runs, seed })
  }, 60_000)

  // What the property shrank the provider before the fix to: tools, components and context helpers
  // taken out of its props stayed offered to the model.
  it("a change of updates keeps the client: a tool the app registered at runtime stays offered", () =>
    play([new RegisterToolAtRuntime("rt"), new ChangeUpdates()]))

  it("props emptied: nothing stays offered", () => play([new SetProps({ tools: [], components: [], helpers: [] })]))

  it("a tool the app registered at runtime stays offered when the registry that had that name unmounts", () =>
    play([
      new SetProps({ tools: [], components: [], helpers: [] }),
      new SetProps({ registry: { tools: ["a"], components: [], helpers: [] } }),
      new RegisterToolAtRuntime("a"),
      new SetProps({ registry: undefined })
    ]))

  it("a registry below the provider: its names join while it is mounted, and leave with it, but those the provider also has", () =>
    play([
      new SetProps({ registry: { tools: ["a", "r"], components: ["y", "w"], helpers: ["h1", "h3"] } }),
      new SetProps({ registry: { tools: [], components: ["w"], helpers: [] } }),
      new SetProps({ registry: undefined })
    ]))

  // What the property shrank the provider to when it withdrew tools by name: the app's own tool
  // of a name the props dropped was withdrawn with the props' one.
  it("the app's tool of a name the props drop stays offered", () =>
    play([new RegisterToolAtRuntime("a"), new SetProps({ tools: [], components: [], helpers: [] })]))

  it("a tool the app registered under a name the props drop stays offered; one the props registered again over it does not", () =>
    play([
      new RegisterToolAtRuntime("a"),
      new RegisterToolAtRuntime("rt"),
      new SetProps({ tools: ["b"] }),
      new SetProps({ tools: ["a"] }),
      new SetProps({ tools: [] })
    ]))

  // What the property shrank the provider to before a hidden tree kept its conversation: the
  // client made when it showed again started empty, and without the tools the app registered.
  it("a tree hidden and shown again: the same conversation, in a new client offering the same", () => play([new HideAndShow(undefined)]))

  it("a tool the app registers while the tree is hidden is offered once it shows", () => play([new HideAndShow("rt")]))

  it("the app's tools, one of them over a props tool's name, are offered again after the tree was hidden", () =>
    play([new RegisterToolAtRuntime("rt"), new RegisterToolAtRuntime("a"), new HideAndShow(undefined)]))

  // What the property shrank the handle to when a client a hidden render made went: it held none
  // of the app's tools, which were then forgotten.
  it("a tree hidden twice: the tool the app registered while it was hidden the first time stays offered", () =>
    play([new HideAndShow("rt"), new HideAndShow(undefined)]))

  it("a props tool registered again over the app's before the tree hid stays the props' one", () =>
    play([
      new RegisterToolAtRuntime("a"),
      new SetProps({ tools: [] }),
      new SetProps({ tools: ["a"] }),
      new HideAndShow(undefined)
    ]))

  it("a new client after a component left: it is not offered again, the runtime one is", () =>
    play([new RegisterAtRuntime(), new SetProps({ tools: ["b"], components: ["y"], helpers: ["h2"] }), new ChangeUser()]))
})
