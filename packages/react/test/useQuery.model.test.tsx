// @vitest-environment happy-dom
// The small query behind the hooks that read from the server (MCP prompts and resources, threads,
// suggestions, completions), model-based: fast-check generates sequences of the key changing (or
// going away), the scope changing (another client), refetches, and reads answering or failing in
// any order, with and without `keepData`. After every step what the hook returns equals a plain
// model: the data is the answer of the newest read that answered for the key and scope shown (an
// older read's answer, or one for another key, is never shown, except the last key's data kept
// while the next key of the same scope loads with `keepData`; another scope's, never), and
// `isFetching`, the error and `failureCount` follow; an awaited `refetch` resolves once a read
// answered (or at once with nothing to read, or on unmount). The reads are scripted promises: what is tested
// is the hook's bookkeeping, not a server's.
//
// Seeded, so a failure reproduces; MODEL_RUNS and MODEL_SEED for longer or other runs.
import { act, renderHook } from "@testing-library/react"
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "vitest"
import { useQuery } from "../src/internal/useQuery.js"
import type { QueryState } from "../src/types.js"

type Key = "a" | "b" | undefined
type Scope = 1 | 2

const scopes: Record<Scope, object> = { 1: {}, 2: {} }

interface Read {
  readonly key: string
  readonly seq: number
  readonly settle: (ok: boolean) => void
}

interface Model {
  readonly keepData: boolean
  key: Key
  scope: Scope
  /** What the hook holds, for the key and scope it read last. */
  slotKey: string | undefined
  slotScope: Scope | undefined
  data: string | undefined
  error: boolean
  fetching: boolean
  failureCount: number
  /** The read whose answer counts: the newest, while its key is the hook's. */
  live: number | undefined
  /** Reads not answered yet (the scope and key read), by sequence number. */
  readonly pending: Map<number, string>
  reads: number
  /** The refetches not resolved yet. */
  readonly waiting: Set<number>
  refetches: number
}

interface Real {
  readonly reads: Array<Read>
  readonly rerender: (props: { readonly key: Key; readonly scope: Scope }) => void
  readonly result: { readonly current: QueryState<string> }
  /** Whether each refetch's promise resolved, by number. */
  readonly refetched: Map<number, boolean>
}

/** A read starts (a new key, or a refetch): what the hook holds for it. */
const startRead = (model: Model, key: string) => {
  const seq = ++model.reads
  const sameScope = model.slotScope === model.scope
  const same = sameScope && model.slotKey === key
  if (!((model.keepData && sameScope) || same)) model.data = undefined
  if (!same) model.failureCount = 0
  model.slotKey = key
  model.slotScope = model.scope
  model.error = false
  model.fetching = true
  model.live = seq
  // What its answer will be: the scope and key read, then the read's number.
  model.pending.set(seq, `${model.scope}:${key}`)
}

const check = (model: Model, real: Real) => {
  const state = real.result.current
  const sameScope = model.slotScope === model.scope
  const fresh = sameScope && model.slotKey === model.key
  const data = fresh || (model.keepData && sameScope) ? model.data : undefined
  expect(state.data).toBe(data)
  // Without keepData, the data shown is the key's own; with it, the scope's own.
  if (!model.keepData && state.data !== undefined) expect(state.data.startsWith(`${model.scope}:${model.key}#`)).toBe(true)
  if (state.data !== undefined) expect(state.data.startsWith(`${model.scope}:`)).toBe(true)
  for (const [refetch, resolved] of real.refetched) expect([refetch, resolved]).toEqual([refetch, !model.waiting.has(refetch)])
  expect(state.isError).toBe(fresh && model.error)
  expect(state.isFetching).toBe(model.key !== undefined && (!fresh || model.fetching))
  expect(state.failureCount).toBe(fresh ? model.failureCount : 0)
  expect(state.isEnabled).toBe(model.key !== undefined)
  expect(state.status).toBe(fresh && model.error ? "error" : data !== undefined ? "success" : "pending")
}

class SetKey implements fc.AsyncCommand<Model, Real> {
  constructor(readonly key: Key) {}
  check = () => true
  async run(model: Model, real: Real) {
    await act(async () => real.rerender({ key: this.key, scope: model.scope }))
    if (this.key !== model.key) {
      model.key = this.key
      // The read of the key before no longer counts.
      model.live = undefined
      if (this.key !== undefined) startRead(model, this.key)
      // Nothing to read: the refetches waiting resolve.
      else model.waiting.clear()
    }
    check(model, real)
  }
  toString = () => `setKey(${this.key})`
}

class SetScope implements fc.AsyncCommand<Model, Real> {
  constructor(readonly scope: Scope) {}
  check = () => true
  async run(model: Model, real: Real) {
    await act(async () => real.rerender({ key: model.key, scope: this.scope }))
    if (this.scope !== model.scope) {
      model.scope = this.scope
      model.live = undefined
      if (model.key !== undefined) startRead(model, model.key)
    }
    check(model, real)
  }
  toString = () => `setScope(${this.scope})`
}

class Refetch implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    const refetch = ++model.refetches
    real.refetched.set(refetch, false)
    await act(async () => {
      void real.result.current.refetch().then(() => real.refetched.set(refetch, true))
    })
    if (model.key !== undefined) {
      model.waiting.add(refetch)
      startRead(model, model.key)
    }
    check(model, real)
  }
  toString = () => "refetch"
}

class Answer implements fc.AsyncCommand<Model, Real> {
  constructor(readonly which: number, readonly ok: boolean) {}
  check = (model: Readonly<Model>) => model.pending.size > 0
  async run(model: Model, real: Real) {
    const seqs = Array.from(model.pending.keys())
    const seq = seqs[this.which % seqs.length]!
    const key = model.pending.get(seq)!
    model.pending.delete(seq)
    await act(async () => real.reads.find((read) => read.seq === seq)!.settle(this.ok))
    if (seq === model.live) {
      model.live = undefined
      model.fetching = false
      model.waiting.clear()
      if (this.ok) {
        model.data = `${key}#${seq}`
        model.error = false
        model.failureCount = 0
      } else {
        model.error = true
        model.failureCount++
      }
    }
    check(model, real)
  }
  toString = () => `answer(${this.which}, ${this.ok ? "ok" : "failed"})`
}

const key = fc.constantFrom<Key>("a", "b", undefined)

const commands = fc.commands(
  [
    key.map((k) => new SetKey(k)),
    key.map((k) => new SetKey(k)),
    fc.constant(new Refetch()),
    fc.constantFrom<Scope>(1, 2).map((scope) => new SetScope(scope)),
    fc.tuple(fc.nat(4), fc.boolean()).map(([which, ok]) => new Answer(which, ok)),
    fc.tuple(fc.nat(4), fc.boolean()).map(([which, ok]) => new Answer(which, ok)),
    fc.tuple(fc.nat(4), fc.boolean()).map(([which, ok]) => new Answer(which, ok))
  ],
  { maxCommands: 20 }
)

const runs = Number(process.env.MODEL_RUNS ?? 150)
const seed = Number(process.env.MODEL_SEED ?? 97)

/** Plays commands on a freshly rendered hook, starting with key `a`. */
const play = async (keepData: boolean, sequence: Iterable<fc.AsyncCommand<Model, Real>>) => {
  const reads: Array<Read> = []
  let seq = 0
  const hook = renderHook(
    ({ key, scope }: { readonly key: Key; readonly scope: Scope }) =>
      useQuery(scopes[scope], key, () =>
        new Promise<string>((resolve, reject) => {
          const read = ++seq
          reads.push({
            key: key!,
            seq: read,
            settle: (ok) => (ok ? resolve(`${scope}:${key}#${read}`) : reject(new Error(`reading ${key}#${read} failed`)))
          })
        }), { keepData }),
    { initialProps: { key: "a" as Key, scope: 1 as Scope } }
  )
  const model: Model = {
    keepData,
    key: "a",
    scope: 1,
    slotKey: undefined,
    slotScope: undefined,
    data: undefined,
    error: false,
    fetching: false,
    failureCount: 0,
    live: undefined,
    pending: new Map(),
    reads: 0,
    waiting: new Set(),
    refetches: 0
  }
  startRead(model, "a")
  const real: Real = { reads, rerender: hook.rerender, result: hook.result, refetched: new Map() }
  try {
    check(model, real)
    await fc.asyncModelRun(() => ({ model, real }), sequence)
    // One read per key or scope change and refetch, none more.
    expect(reads.map((read) => read.key)).toHaveLength(model.reads)
  } finally {
    hook.unmount()
  }
  // Unmounted: every refetch resolved.
  await act(async () => {})
  expect([...real.refetched.values()].every((resolved) => resolved)).toBe(true)
}

describe("useQuery, model-based", () => {
  it("every sequence of key changes, refetches and answers in any order shows what the model says", async () => {
    await fc.assert(fc.asyncProperty(commands, (sequence) => play(false, sequence)), { numRuns: runs, seed })
  }, 300_000)

  it("the same with keepData", async () => {
    await fc.assert(fc.asyncProperty(commands, (sequence) => play(true, sequence)), { numRuns: runs, seed })
  }, 300_000)

  // What the property shrank planted defects to, kept as named cases.
  it("the answer of a read made for a key the hook left is not shown", () =>
    play(false, [new SetKey(undefined), new SetKey("a"), new Answer(0, true)]))

  it("without keepData, a new key starts empty", () => play(false, [new Answer(0, true), new SetKey("b")]))

  it("a new key starts counting its failures anew", () => play(false, [new Answer(0, false), new SetKey("b")]))

  it("with keepData, another scope's data is not kept while the new scope's loads", () =>
    play(true, [new Answer(0, true), new SetScope(2)]))

  it("an awaited refetch resolves when the read that replaced its own answered", () =>
    play(false, [new Refetch(), new SetKey("b"), new Answer(0, true), new Answer(0, true)]))

  it("an awaited refetch resolves at once while there is nothing to read", () =>
    play(false, [new SetKey(undefined), new Refetch()]))
})
