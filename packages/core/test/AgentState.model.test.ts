// A model-based test of a thread's AG-UI agent state: random sequences of the agent's
// STATE_SNAPSHOTs and STATE_DELTAs (valid, failing and hostile ones, alone or in one chunk) and
// the app's setAgentState calls (values, updaters, values JSON cannot carry), applied to a real
// ThreadStore through the reducer and Tambo's setter. After every step: the state equals a
// plain model (a naive RFC 6902 over deep copies), Object.prototype is untouched, every refused
// delta is one anomaly, and nothing given to the store was mutated.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as fc from "effect/FastCheck"
import * as ClientState from "../src/ClientState.js"
import type * as Events from "../src/Events.js"
import * as ThreadStore from "../src/ThreadStore.js"
import * as AppState from "../src/internal/agui/appState.js"

// ---------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

type Op =
  | { readonly op: "add" | "replace" | "test"; readonly path: string; readonly value: Json }
  | { readonly op: "remove"; readonly path: string }
  | { readonly op: "move" | "copy"; readonly from: string; readonly path: string }

type Command =
  | { readonly kind: "snapshot"; readonly value: Json }
  | { readonly kind: "delta"; readonly ops: ReadonlyArray<Op> }
  /** Not a JSON Patch at all: refused by the decoder. */
  | { readonly kind: "garbage"; readonly delta: ReadonlyArray<unknown> }
  /** Several agent events in one chunk (one reduce). */
  | { readonly kind: "chunk"; readonly commands: ReadonlyArray<Command> }
  | { readonly kind: "set"; readonly value: Json }
  | { readonly kind: "setKey"; readonly key: string; readonly value: Json }
  | { readonly kind: "setInvalid"; readonly which: "bigint" | "function" | "undefined" | "cycle" | "date"; readonly viaUpdater: boolean }

const key = fc.constantFrom("a", "b", "list")

const leaf: fc.Arbitrary<Json> = fc.oneof(
  fc.integer({ min: 0, max: 3 }),
  fc.constantFrom("x", "y"),
  fc.constant(null),
  fc.boolean()
)

const json: fc.Arbitrary<Json> = fc.oneof(
  { weight: 3, arbitrary: leaf },
  { weight: 1, arbitrary: fc.array(leaf, { maxLength: 3 }) },
  { weight: 2, arbitrary: fc.dictionary(fc.constantFrom("a", "b", "x"), leaf, { maxKeys: 3 }) }
)

const snapshotValue: fc.Arbitrary<Json> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ a: json, b: json, list: fc.array(leaf, { maxLength: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ a: json, b: json, list: fc.array(leaf, { maxLength: 3 }) }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: json }
)

const hostilePath = fc.constantFrom("/__proto__/polluted", "/constructor/prototype/polluted", "/a/__proto__/polluted", "/prototype")

const path: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("/a", "/b", "/list", "/list/-", "/list/0", "/list/1", "/list/5", "/a/x", "/a/0", "/b/-", "/x") },
  { weight: 1, arbitrary: hostilePath }
)

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constantFrom("add" as const, "replace" as const, "test" as const), path, value: json }),
  fc.record({ op: fc.constant("remove" as const), path }),
  fc.record({ op: fc.constantFrom("move" as const, "copy" as const), from: path, path })
)

const agentCommand: fc.Arbitrary<Command> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("snapshot" as const), value: snapshotValue }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("delta" as const), ops: fc.array(op, { minLength: 1, maxLength: 2 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("garbage" as const),
      delta: fc.constantFrom<ReadonlyArray<unknown>>([{ op: "merge", path: "/a", value: 1 }], [{ op: "add", path: 5, value: 1 }], [
        "add"
      ])
    })
  }
)

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 8, arbitrary: agentCommand },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("chunk" as const), commands: fc.array(agentCommand, { minLength: 2, maxLength: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("set" as const), value: snapshotValue }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("setKey" as const), key, value: json }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("setInvalid" as const),
      which: fc.constantFrom("bigint" as const, "function" as const, "undefined" as const, "cycle" as const, "date" as const),
      viaUpdater: fc.boolean()
    })
  }
)

// ---------------------------------------------------------------------------
// The model: RFC 6902 the naive way, on a deep copy
// ---------------------------------------------------------------------------

class Refused {}
const refuse = (): never => {
  throw new Refused()
}

const hostile = new Set(["__proto__", "constructor", "prototype"])

const tokensOf = (pointer: string): ReadonlyArray<string> => {
  const tokens = pointer === "" ? [] : pointer.slice(1).split("/")
  if (tokens.some((token) => hostile.has(token))) refuse()
  return tokens
}

type Container = Array<unknown> | Record<string, unknown>
const isContainer = (u: unknown): u is Container => typeof u === "object" && u !== null
const index = (token: string): number => (/^(0|[1-9][0-9]*)$/.test(token) ? Number(token) : -1)

const child = (container: unknown, token: string): unknown => {
  if (!isContainer(container)) return refuse()
  if (Array.isArray(container)) {
    const i = index(token)
    return i >= 0 && i < container.length ? container[i] : refuse()
  }
  return Object.hasOwn(container, token) ? container[token] : refuse()
}

const at = (root: unknown, tokens: ReadonlyArray<string>): unknown => tokens.reduce(child, root)

const parentOf = (root: unknown, tokens: ReadonlyArray<string>): Container => {
  const parent = at(root, tokens.slice(0, -1))
  return isContainer(parent) ? parent : refuse()
}

// Fast-check's records may have no prototype: equality is by keys and values only.
const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (!isContainer(a) || !isContainer(b) || Array.isArray(a) !== Array.isArray(b)) return false
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length &&
    keys.every((k) => Object.hasOwn(b, k) && jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
}

class Model {
  constructor(public root: unknown) {}

  add(tokens: ReadonlyArray<string>, value: unknown): void {
    if (tokens.length === 0) return void (this.root = value)
    const parent = parentOf(this.root, tokens)
    const last = tokens.at(-1)!
    if (!Array.isArray(parent)) return void (parent[last] = value)
    if (last === "-") return void parent.push(value)
    const i = index(last)
    if (i < 0 || i > parent.length) refuse()
    parent.splice(i, 0, value)
  }

  remove(tokens: ReadonlyArray<string>): unknown {
    if (tokens.length === 0) refuse()
    const parent = parentOf(this.root, tokens)
    const last = tokens.at(-1)!
    const removed = child(parent, last)
    if (Array.isArray(parent)) parent.splice(index(last), 1)
    else delete parent[last]
    return removed
  }

  replace(tokens: ReadonlyArray<string>, value: unknown): void {
    if (tokens.length === 0) return void (this.root = value)
    const parent = parentOf(this.root, tokens)
    const last = tokens.at(-1)!
    child(parent, last)
    if (Array.isArray(parent)) parent[index(last)] = value
    else parent[last] = value
  }

  apply(operation: Op): void {
    const tokens = tokensOf(operation.path)
    switch (operation.op) {
      case "add":
        return this.add(tokens, structuredClone(operation.value))
      case "replace":
        return this.replace(tokens, structuredClone(operation.value))
      case "test":
        if (!jsonEqual(at(this.root, tokens), operation.value)) refuse()
        return
      case "remove":
        return void this.remove(tokens)
      case "copy":
        return this.add(tokens, structuredClone(at(this.root, tokensOf(operation.from))))
      case "move": {
        const from = tokensOf(operation.from)
        if (operation.from === operation.path) return void at(this.root, from)
        const isPrefix = from.length < tokens.length && from.every((token, i) => tokens[i] === token)
        if (isPrefix) refuse()
        return this.add(tokens, this.remove(from))
      }
    }
  }
}

/** The state after a delta, or `undefined` when the delta is refused (atomic: nothing applies). */
const modelDelta = (state: unknown, ops: ReadonlyArray<Op>): { readonly state: unknown } | undefined => {
  const model = new Model(structuredClone(state === undefined ? {} : state))
  try {
    for (const operation of ops) model.apply(operation)
    return { state: model.root }
  } catch (error) {
    if (error instanceof Refused) return undefined
    throw error
  }
}

// ---------------------------------------------------------------------------
// The system, and the property
// ---------------------------------------------------------------------------

const THREAD = "t1"

const invalidValue = (which: Extract<Command, { readonly kind: "setInvalid" }>["which"]): unknown => {
  switch (which) {
    case "bigint":
      return { n: 1n }
    case "function":
      return { f: () => 1 }
    case "undefined":
      return undefined
    case "date":
      return { at: new Date(0) }
    case "cycle": {
      const cyclic: Record<string, unknown> = {}
      cyclic.self = cyclic
      return cyclic
    }
  }
}

const eventOf = (command: Command): Array<Events.StateSnapshotEvent | Events.StateDeltaEvent> => {
  switch (command.kind) {
    case "snapshot":
      return [{ type: "STATE_SNAPSHOT", snapshot: command.value }]
    case "delta":
      return [{ type: "STATE_DELTA", delta: command.ops }]
    case "garbage":
      return [{ type: "STATE_DELTA", delta: command.delta }]
    case "chunk":
      return command.commands.flatMap(eventOf)
    default:
      return []
  }
}

interface Expected {
  state: unknown
  refused: number
}

/** The model's step for an agent command. */
const expectAgent = (expected: Expected, command: Command): void => {
  switch (command.kind) {
    case "snapshot":
      expected.state = structuredClone(command.value)
      return
    case "delta": {
      const next = modelDelta(expected.state, command.ops)
      if (next === undefined) expected.refused++
      else expected.state = next.state
      return
    }
    case "garbage":
      expected.refused++
      return
    case "chunk":
      for (const inner of command.commands) expectAgent(expected, inner)
      return
  }
}

const prototypeKeys = () => Object.getOwnPropertyNames(Object.prototype).sort()

/** Runs `commands`, checking the invariants after each; throws at the first that fails. */
const check = (commands: ReadonlyArray<Command>): void => {
  const prototypeBefore = prototypeKeys()
  const store = Effect.runSync(ThreadStore.make())
  Effect.runSync(store.apply([{ type: "INIT_THREAD", threadId: THREAD, at: 0 }]))
  const expected: Expected = { state: undefined, refused: 0 }
  // Every value handed to the store, with a copy taken then: none may change.
  const given: Array<readonly [unknown, unknown]> = []
  for (const command of commands) {
    const before = ClientState.getThread(store.getSnapshot(), THREAD)!.state
    let stateMayChange = true
    switch (command.kind) {
      case "set":
      case "setKey": {
        const update = command.kind === "set"
          ? command.value
          : (previous: unknown) =>
            typeof previous === "object" && previous !== null && !Array.isArray(previous)
              ? { ...previous, [command.key]: command.value }
              : { [command.key]: command.value }
        const result = Effect.runSync(AppState.setAgentState(store, THREAD, update))
        const value = command.kind === "set" ? command.value : result
        given.push([value, structuredClone(value)])
        expected.state = structuredClone(value)
        break
      }
      case "setInvalid": {
        const value = invalidValue(command.which)
        const exit = Effect.runSyncExit(AppState.setAgentState(store, THREAD, command.viaUpdater ? () => value : value))
        if (!Exit.isFailure(exit) || exit.cause._tag !== "Fail" || exit.cause.error.reason !== "InvalidOption") {
          throw new Error(`setAgentState accepted ${command.which}`)
        }
        stateMayChange = false
        break
      }
      default: {
        const events = eventOf(command)
        for (const event of events) {
          if (event.type === "STATE_SNAPSHOT") given.push([event.snapshot, structuredClone(event.snapshot)])
        }
        const refusedBefore = expected.refused
        expectAgent(expected, command)
        stateMayChange = command.kind !== "garbage" && !(command.kind === "delta" && expected.refused > refusedBefore)
        Effect.runSync(store.apply([{ type: "EVENTS", threadId: THREAD, events, at: 1 }]))
      }
    }
    const thread = ClientState.getThreadState(store.getSnapshot(), THREAD)!
    expect(thread.thread.state).toEqual(expected.state)
    // A refused delta or setter leaves the very same value.
    if (!stateMayChange) expect(thread.thread.state).toBe(before)
    expect(thread.anomalies.length).toBe(Math.min(expected.refused, ClientState.MAX_ANOMALIES))
    expect(thread.anomalies.every((a) => a.eventType === "STATE_DELTA")).toBe(true)
    expect(prototypeKeys()).toEqual(prototypeBefore)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    for (const [value, copy] of given) expect(value).toEqual(copy)
  }
}

describe("the agent state of a thread, against a model", () => {
  it.prop(
    "snapshots, deltas (valid, failing, hostile) and the app's setAgentState keep the state equal to the model's",
    [fc.array(command, { maxLength: 40 })],
    ([commands]) => check(commands),
    { fastCheck: { numRuns: 300 } }
  )

  // The property is only as good as what it generates: every kind of step comes up often.
  it("the commands cover accepted, failing and hostile deltas, chunks and every kind of app call", () => {
    const seen = new Map<string, number>()
    const count = (label: string) => seen.set(label, (seen.get(label) ?? 0) + 1)
    const visit = (c: Command, state: { value: unknown }) => {
      if (c.kind === "chunk") {
        count("chunk")
        for (const inner of c.commands) visit(inner, state)
        return
      }
      count(c.kind)
      if (c.kind === "snapshot") state.value = c.value
      if (c.kind !== "delta") return
      if (c.ops.some((o) => /__proto__|constructor|prototype/.test(o.path + ("from" in o ? o.from : "")))) count("hostile")
      const next = modelDelta(state.value, c.ops)
      if (next === undefined) count("refused")
      else {
        count("accepted")
        state.value = next.state
      }
    }
    for (const commands of fc.sample(fc.array(command, { maxLength: 40 }), { numRuns: 300, seed: 34 })) {
      const state = { value: undefined as unknown }
      for (const c of commands) visit(c, state)
    }
    for (const label of ["snapshot", "delta", "garbage", "chunk", "set", "setKey", "setInvalid", "hostile", "refused", "accepted"]) {
      expect(seen.get(label) ?? 0, label).toBeGreaterThan(50)
    }
  })
})
