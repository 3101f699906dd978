// The composer's state (useTamboThreadInput's store), model-based: fast-check generates sequences of
// typing, staged images, submits, their runs ending (answered, failed or cancelled before or after the message reached
// its thread, cut by the client's end, in any order) and resets; after every step the store equals a plain model of
// what the hook promises: as a TanStack mutation's, the state tells of the submit started last, a pending submit's
// images are not sent twice, and what a message took comes back exactly when it did not reach its thread.
// The runs are scripted promises: what is tested is the store's bookkeeping, not a server's.
//
// Seeded, so a failure reproduces; MODEL_RUNS and MODEL_SEED for longer or other runs.
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "vitest"
import { AbortError } from "../src/index.js"
import { InputStore } from "../src/internal/inputStore.js"

/**
 * How a run ends: answered; failed with its message refused (`fail`) or after the server took it
 * (`failTaken`); cancelled after its message reached the thread (`cancel`) or before (`cancelUnsent`);
 * cut by the client's end.
 */
type Outcome = "answer" | "fail" | "failTaken" | "cancel" | "cancelUnsent" | "destroyed"

/** The message is in its thread once the run ended. */
const reached = (outcome: Outcome) => outcome === "answer" || outcome === "failTaken" || outcome === "cancel"

interface Submitted {
  readonly tag: number
  readonly text: string
  readonly images: ReadonlyArray<string>
  readonly settle: (outcome: Outcome) => void
  /** How the submit settled. */
  readonly done: Promise<"resolved" | "rejected">
}

interface Model {
  value: string
  images: Array<string>
  inFlight: Array<Submitted>
  /** The submit the state tells of: the last started, none after a reset. */
  latest: number | undefined
  status: "idle" | "pending" | "error" | "success"
  error: boolean
  data: string | undefined
  variables: number | undefined
  failureCount: number
}

interface Real {
  readonly store: InputStore
  readonly sent: Array<{ readonly tag: number; readonly message: unknown }>
}

const check = (model: Model, { store }: Real) => {
  const snapshot = store.getSnapshot()
  expect(snapshot.value).toBe(model.value)
  expect(snapshot.images.map((image) => image.name)).toEqual(model.images)
  expect(snapshot.isPending).toBe(model.status === "pending")
  expect(snapshot.status).toBe(model.status)
  expect(snapshot.error !== undefined).toBe(model.error)
  expect(snapshot.data?.threadId).toBe(model.data)
  expect((snapshot.variables as { readonly tag?: number } | undefined)?.tag).toBe(model.variables)
  expect(snapshot.failureCount).toBe(model.failureCount)
  expect(snapshot.failureReason === null).toBe(model.failureCount === 0)
}

class Type implements fc.AsyncCommand<Model, Real> {
  constructor(readonly text: string) {}
  check = () => true
  async run(model: Model, real: Real) {
    real.store.setValue(this.text)
    model.value = this.text
    check(model, real)
  }
  toString = () => `type(${JSON.stringify(this.text)})`
}

let files = 0

class AddImage implements fc.AsyncCommand<Model, Real> {
  constructor(readonly name: string) {}
  check = () => true
  async run(model: Model, real: Real) {
    // Each file its own name: the store tells images apart by identity, the model by name.
    const name = `${++files}-${this.name}`
    await real.store.addImage(new File([new Uint8Array([1, 2, 3])], name, { type: "image/png" }))
    model.images.push(name)
    check(model, real)
  }
  toString = () => `addImage(${this.name})`
}

let tags = 0

class Submit implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    const tag = ++tags
    const text = model.value.trim()
    const sending = new Set(model.inFlight.flatMap((submitted) => submitted.images))
    const images = model.images.filter((name) => !sending.has(name))
    if (text === "" && images.length === 0) {
      await expect(real.store.submit(() => {
        throw new Error("sent an empty message")
      }, { tag })).rejects.toThrow("Message cannot be empty")
      check(model, real)
      return
    }
    let settle!: (outcome: Outcome) => void
    let inThread = false
    const answer = new Promise<{ readonly id: string }>((resolve, reject) => {
      settle = (outcome) => {
        inThread = reached(outcome)
        return outcome === "answer"
          ? resolve({ id: `thr_${tag}` })
          : reject(
            outcome === "fail" || outcome === "failTaken"
              ? new Error(`failed ${tag}`)
              : outcome === "cancel" || outcome === "cancelUnsent"
              ? new AbortError({ reason: "CancelledByClient", message: "The run was cancelled", threadId: `thr_${tag}` })
              : new AbortError({ reason: "ClientDestroyed", message: "The client was destroyed" })
          )
      }
    })
    const done = real.store.submit((message) => {
      real.sent.push({ tag, message })
      return { thread: answer, threadId: Promise.resolve(`thr_${tag}`) }
    }, { tag }, () => `thr_${tag}`, undefined, () => (threadId) => threadId === `thr_${tag}` && inThread).then(
      (data) => {
        // A cancelled run resolves as an answered one, with its thread.
        expect(data).toEqual({ threadId: `thr_${tag}` })
        return "resolved" as const
      },
      () => "rejected" as const
    )
    model.inFlight.push({ tag, text, images, settle, done })
    model.latest = tag
    model.value = ""
    model.status = "pending"
    model.error = false
    model.variables = tag
    check(model, real)
    // What was sent: the trimmed text, then the images no other pending submit is sending.
    const sent = real.sent.at(-1)!
    expect(sent.tag).toBe(tag)
    if (images.length === 0) expect(sent.message).toBe(text)
    else {
      expect(sent.message).toMatchObject({
        role: "user",
        content: [...(text === "" ? [] : [{ type: "text", text }]), ...images.map(() => ({ type: "resource" }))]
      })
    }
  }
  toString = () => "submit"
}

class Settle implements fc.AsyncCommand<Model, Real> {
  constructor(readonly which: number, readonly outcome: Outcome) {}
  check = (model: Readonly<Model>) => model.inFlight.length > 0
  async run(model: Model, real: Real) {
    const index = this.which % model.inFlight.length
    const submitted = model.inFlight[index]!
    model.inFlight.splice(index, 1)
    submitted.settle(this.outcome)
    const failed = this.outcome === "fail" || this.outcome === "failTaken"
    // Only a failure, and a client destroyed meanwhile, reject.
    expect(await submitted.done).toBe(failed || this.outcome === "destroyed" ? "rejected" : "resolved")
    // What reached the thread leaves the staged images; what was written comes back when the message did not
    // (refused, or cancelled before), unless something was typed meanwhile. Only the latest submit's end changes
    // how the last submit went.
    const latest = submitted.tag === model.latest
    if (reached(this.outcome)) {
      const sent = new Set(submitted.images)
      model.images = model.images.filter((name) => !sent.has(name))
    } else if (this.outcome !== "destroyed" && model.value === "") model.value = submitted.text
    if (this.outcome === "answer") {
      if (latest) {
        model.data = `thr_${submitted.tag}`
        model.failureCount = 0
        model.error = false
        model.status = "success"
      }
    } else if (failed) {
      if (latest) {
        model.failureCount++
        model.error = true
        model.status = "error"
      }
    } else if (latest) {
      model.error = false
      model.status = "idle"
    }
    check(model, real)
  }
  toString = () => `settle(${this.which}, ${this.outcome})`
}

class Reset implements fc.AsyncCommand<Model, Real> {
  check = () => true
  async run(model: Model, real: Real) {
    real.store.reset()
    model.latest = undefined
    model.status = "idle"
    model.error = false
    model.data = undefined
    model.variables = undefined
    model.failureCount = 0
    check(model, real)
  }
  toString = () => "reset"
}

const outcomes: ReadonlyArray<Outcome> = ["answer", "fail", "failTaken", "cancel", "cancelUnsent", "destroyed"]

const commands = fc.commands(
  [
    fc.constantFrom("", "  ", "hi", " hello ", "again").map((text) => new Type(text)),
    fc.constantFrom("a.png", "b.png").map((name) => new AddImage(name)),
    fc.constant(new Submit()),
    fc.constant(new Submit()),
    fc.tuple(fc.nat(3), fc.constantFrom<Outcome>(...outcomes)).map(([which, outcome]) => new Settle(which, outcome)),
    fc.tuple(fc.nat(3), fc.constantFrom<Outcome>(...outcomes)).map(([which, outcome]) => new Settle(which, outcome)),
    fc.constant(new Reset())
  ],
  { maxCommands: 25 }
)

const runs = Number(process.env.MODEL_RUNS ?? 300)
const seed = Number(process.env.MODEL_SEED ?? 32)

/** Plays commands on a fresh store, checking it against the model after each. */
const play = async (sequence: Iterable<fc.AsyncCommand<Model, Real>>) => {
  const model: Model = {
    value: "",
    images: [],
    inFlight: [],
    latest: undefined,
    status: "idle",
    error: false,
    data: undefined,
    variables: undefined,
    failureCount: 0
  }
  const real: Real = { store: new InputStore(), sent: [] }
  await fc.asyncModelRun(() => ({ model, real }), sequence)
  // Nothing left hanging: end what is still in flight.
  for (const submitted of model.inFlight.splice(0)) {
    submitted.settle("cancel")
    await submitted.done
  }
  expect(real.store.getSnapshot().isPending).toBe(false)
}

describe("the composer's state, model-based", () => {
  it("every sequence of typing, images, submits, endings and resets leaves the store as the model says", async () => {
    await fc.assert(fc.asyncProperty(commands, play), { numRuns: runs, seed })
  })

  // What the property shrank planted defects to, kept as named cases.
  it("a failed send keeps what was typed meanwhile, whitespace included", () =>
    play([new Type("hi"), new Submit(), new Type("  "), new Settle(0, "fail")]))

  it("reset forgets the failures counted so far", () =>
    play([new Type("again"), new Submit(), new Settle(0, "fail"), new Reset()]))

  it("two sends in flight: the first failing leaves the state pending, the second's answer ends it as a success", () =>
    play([new Type("one"), new Submit(), new Type("two"), new Submit(), new Settle(0, "fail"), new Settle(0, "answer")]))

  it("two sends in flight: the second failing shows its error, the first's later answer does not hide it", () =>
    play([new Type("one"), new Submit(), new Type("two"), new Submit(), new Settle(1, "fail"), new Settle(0, "answer")]))

  it("an image a pending send is sending is not sent again by the next, which sends only its text", () =>
    play([new AddImage("a.png"), new Submit(), new Type("two"), new Submit(), new Settle(1, "answer"), new Settle(0, "answer")]))

  it("a send made of a pending send's images alone is empty", () =>
    play([new AddImage("a.png"), new Submit(), new Submit(), new Settle(0, "fail"), new Submit()]))

  it("a message the server took and then failed leaves the composer empty and its images gone: sent again, it would go twice", () =>
    play([new AddImage("a.png"), new Submit(), new Settle(0, "failTaken")]))

  it("a message cancelled after it reached its thread drops its images, as an answered one does", () =>
    play([new AddImage("a.png"), new Submit(), new Settle(0, "cancel")]))

  it("a message cancelled before it reached its thread gives its text back and keeps its images", () =>
    play([new AddImage("a.png"), new Type("hi"), new Submit(), new Settle(0, "cancelUnsent")]))

  it("reset while a send is pending: idle, and its end shows nothing", () =>
    play([new Type("one"), new Submit(), new Reset(), new Settle(0, "fail")]))
})
