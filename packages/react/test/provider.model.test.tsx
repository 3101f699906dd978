// @vitest-environment happy-dom
// What the provider offers the model, model-based: fast-check generates sequences of prop changes
// (tools, components with their associated tools, context helpers), components registered at runtime,
// and a change of user (a new client); after every step a run's request, as the testing server
// received it, offers exactly what the model says: nothing the app took away, nothing missing.
//
// Seeded, so a failure reproduces; MODEL_RUNS and MODEL_SEED for longer or other runs.
import { act, cleanup, render } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { FastCheck as fc } from "effect"
import * as Schema from "effect/Schema"
import { useState } from "react"
import { afterEach, describe, expect, it } from "vitest"
import { type TamboComponent, TamboProvider, type TamboTool, useTambo, type UseTamboReturn } from "../src/index.js"
import { connection, useServer } from "./helpers.js"

const server = useServer()
afterEach(cleanup)

const tool = (name: string): TamboTool => ({
  name,
  description: `the ${name} tool`,
  inputSchema: Schema.Struct({}),
  tool: () => name
})
const TOOLS = { a: tool("tool_a"), b: tool("tool_b"), c: tool("tool_c") }
const ASSOCIATED = tool("tool_of_x")

const component = (name: string, associatedTools?: ReadonlyArray<TamboTool>): TamboComponent => ({
  name,
  description: `the ${name} card`,
  propsSchema: { type: "object", properties: {} },
  component: () => null,
  ...(associatedTools === undefined ? {} : { associatedTools })
})
const COMPONENTS = { x: component("X", [ASSOCIATED]), y: component("Y") }
const RUNTIME = { z: component("Z") }
const HELPERS = { h1: () => ({ one: 1 }), h2: () => ({ two: 2 }) }

interface Props {
  readonly user: "user-1" | "user-2"
  readonly tools: ReadonlyArray<keyof typeof TOOLS>
  readonly components: ReadonlyArray<keyof typeof COMPONENTS>
  readonly helpers: ReadonlyArray<keyof typeof HELPERS>
}

interface Model {
  props: Props
  runtime: Set<keyof typeof RUNTIME>
}

interface Real {
  setProps: (props: Props) => void
  tambo: () => UseTamboReturn
}

const sorted = (names: Iterable<string>) => [...names].sort()

/** A run's request offers what the model says. */
const check = async (model: Model, real: Real) => {
  const before = server().requests.length
  await act(() => real.tambo().sendMessage("hi").thread)
  const body = server().requests.slice(before).find((r) => r.method === "POST" && r.path.endsWith("/runs"))!.body as {
    readonly tools?: ReadonlyArray<{ readonly name: string }>
    readonly availableComponents?: ReadonlyArray<{ readonly name: string }>
    readonly message: { readonly additionalContext?: Record<string, unknown> }
  }
  const components = [...model.props.components.map((c) => COMPONENTS[c].name), ...[...model.runtime].map((c) => RUNTIME[c].name)]
  const tools = [
    ...model.props.tools.map((t) => TOOLS[t].name),
    ...(model.props.components.includes("x") ? [ASSOCIATED.name] : [])
  ]
  expect(sorted((body.tools ?? []).map((t) => t.name))).toEqual(sorted(tools))
  expect(sorted((body.availableComponents ?? []).map((c) => c.name))).toEqual(sorted(components))
  expect(sorted(Object.keys(body.message.additionalContext ?? {}))).toEqual(sorted(model.props.helpers))
}

class SetProps implements fc.AsyncCommand<Model, Real> {
  constructor(readonly props: Omit<Props, "user">) {}
  check = () => true
  async run(model: Model, real: Real) {
    model.props = { ...model.props, ...this.props }
    act(() => real.setProps(model.props))
    await check(model, real)
  }
  toString = () => `props(${JSON.stringify(this.props)})`
}

class ChangeUser implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    model.props = { ...model.props, user: model.props.user === "user-1" ? "user-2" : "user-1" }
    act(() => real.setProps(model.props))
    await check(model, real)
  }
  toString = () => "changeUser"
}

class RegisterAtRuntime implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    act(() => real.tambo().registerComponent(RUNTIME.z))
    model.runtime.add("z")
    await check(model, real)
  }
  toString = () => "registerComponent(Z)"
}

const subsetOf = <K extends string>(keys: ReadonlyArray<K>) => fc.subarray([...keys])

const commands = fc.commands(
  [
    fc.record({
      tools: subsetOf(["a", "b", "c"] as const),
      components: subsetOf(["x", "y"] as const),
      helpers: subsetOf(["h1", "h2"] as const)
    }).map((props) => new SetProps(props)),
    fc.constant(new ChangeUser()),
    fc.constant(new RegisterAtRuntime())
  ],
  { maxCommands: 6 }
)

/** Mounts a provider driven by the returned setter, with `initial` props. */
const mount = (initial: Props): Real => {
  let setProps!: (props: Props) => void
  let tambo!: UseTamboReturn
  const Grab = () => {
    tambo = useTambo()
    return null
  }
  const Harness = () => {
    const [props, set] = useState(initial)
    setProps = set
    return (
      <TamboProvider
        {...connection(server(), { userKey: props.user })}
        tools={props.tools.map((t) => TOOLS[t])}
        components={props.components.map((c) => COMPONENTS[c])}
        contextHelpers={Object.fromEntries(props.helpers.map((h) => [h, HELPERS[h]]))}
      >
        <Grab />
      </TamboProvider>
    )
  }
  render(<Harness />)
  return { setProps: (props) => setProps(props), tambo: () => tambo }
}

const play = async (sequence: Iterable<fc.AsyncCommand<Model, Real>>) => {
  server().setScript([Script.text("ok")])
  const initial: Props = { user: "user-1", tools: ["a"], components: ["x"], helpers: ["h1"] }
  const model: Model = { props: initial, runtime: new Set() }
  const real = mount(initial)
  try {
    await check(model, real)
    await fc.asyncModelRun(() => ({ model, real }), sequence)
  } finally {
    cleanup()
  }
}

const runs = Number(process.env.MODEL_RUNS ?? 40)
const seed = Number(process.env.MODEL_SEED ?? 33)

describe("what the provider offers the model, model-based", () => {
  it("after every change of its props, a runtime registration or a new client, a run offers exactly what they hold", async () => {
    await fc.assert(fc.asyncProperty(commands, play), { numRuns: runs, seed })
  }, 60_000)

  // What the property shrank the provider before the fix to: tools, components and context helpers
  // taken out of its props stayed offered to the model.
  it("props emptied: nothing stays offered", () => play([new SetProps({ tools: [], components: [], helpers: [] })]))

  it("a new client after a component left: it is not offered again, the runtime one is", () =>
    play([new RegisterAtRuntime(), new SetProps({ tools: ["b"], components: ["y"], helpers: ["h2"] }), new ChangeUser()]))
})
