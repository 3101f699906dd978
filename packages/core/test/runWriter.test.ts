import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as ClientState from "../src/ClientState.js"
import * as RunWriter from "../src/internal/runWriter.js"
import * as ThreadStore from "../src/ThreadStore.js"
import { externalStore } from "./helpers.js"

const textRun = (threadId: string, runId: string, text: string): ReadonlyArray<ClientState.Action> => [
  { type: "EVENT", threadId, event: { type: "RUN_STARTED", threadId, runId }, at: 1 },
  { type: "EVENT", threadId, event: { type: "TEXT_MESSAGE_START", messageId: `m-${runId}`, role: "assistant" }, at: 1 },
  { type: "EVENT", threadId, event: { type: "TEXT_MESSAGE_CONTENT", messageId: `m-${runId}`, delta: text }, at: 1 }
]

const delta = (threadId: string, runId: string, text: string): ClientState.Action => ({
  type: "EVENT",
  threadId,
  event: { type: "TEXT_MESSAGE_CONTENT", messageId: `m-${runId}`, delta: text },
  at: 2
})

const textOf = (state: ClientState.ThreadState | undefined) =>
  state?.thread.messages[0]?.content[0]?.type === "text" ? state.thread.messages[0].content[0].text : undefined

/** The warnings logged while `self` runs. */
const withWarnings = <A, E, R>(self: (warnings: Array<unknown>) => Effect.Effect<A, E, R>) => {
  const warnings: Array<unknown> = []
  const captured = Logger.make(({ logLevel, message }) => {
    if (logLevel._tag === "Warning") warnings.push(message)
  })
  return Effect.provide(self(warnings), Logger.replace(Logger.defaultLogger, captured))
}

/**
 * Once the event loop has gone round: the drafts are published. After the writer's own turn (its
 * `setImmediate`, queued first), whatever the load: a timer may fire before it on a busy loop.
 */
const nextTurn = Effect.promise(() => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve))))

const setup = Effect.gen(function* () {
  const store = yield* ThreadStore.make()
  yield* store.apply([...textRun("t1", "r1", "a"), ...textRun("t2", "r2", "x")])
  const writer = yield* RunWriter.make(store)
  return { store, writer }
})

describe("RunWriter", () => {
  it.live("returns the thread at once and publishes every run's draft in one change per turn", () =>
    Effect.gen(function* () {
      const { store, writer } = yield* setup
      let calls = 0
      store.subscribe(() => calls++)
      const written = store.getSnapshot()
      const t1 = writer.record("t1", [delta("t1", "r1", "b")])
      const t1Again = writer.record("t1", [delta("t1", "r1", "c")])
      writer.record("t2", [delta("t2", "r2", "y")])
      expect(textOf(t1)).toBe("ab")
      expect(textOf(t1Again)).toBe("abc")
      // Not published yet.
      expect(store.getSnapshot()).toBe(written)
      expect(calls).toBe(0)
      yield* nextTurn
      expect(calls).toBe(1)
      expect(store.getSnapshot().threadMap.t1).toBe(t1Again)
      expect(textOf(store.getSnapshot().threadMap.t2)).toBe("xy")
      // The untouched parts keep their identity.
      expect(store.getSnapshot().threadMap.placeholder).toBe(written.threadMap.placeholder)
      // The next draft starts from the thread as published.
      expect(textOf(writer.record("t1", [delta("t1", "r1", "d")]))).toBe("abcd")
    }))

  it.live("a state anyone was handed (get, getSnapshot) is never changed by a later publication", () =>
    Effect.gen(function* () {
      const { store, writer } = yield* setup
      // Published with nobody looking: the next publication may change its thread map in place.
      writer.record("t1", [delta("t1", "r1", "b")])
      yield* nextTurn
      for (const read of [() => store.getSnapshot(), () => Effect.runSync(store.get)]) {
        const seen = read()
        const t1 = seen.threadMap.t1
        writer.record("t1", [delta("t1", "r1", "c")])
        yield* nextTurn
        expect(seen.threadMap.t1).toBe(t1)
        expect(store.getSnapshot().threadMap.t1).not.toBe(t1)
        // Unread since: changed in place again, which no one can tell.
        writer.record("t1", [delta("t1", "r1", "d")])
        yield* nextTurn
      }
    }))

  it.live("actions beyond one thread (a new thread) never change a state anyone was handed, and reach the store", () =>
    Effect.gen(function* () {
      const { store, writer } = yield* setup
      writer.record("t1", [delta("t1", "r1", "b")])
      yield* nextTurn
      const seen = store.getSnapshot()
      const seenIds = Object.keys(seen.threadMap)
      // A draft and a new thread in one publication: the map is copied once, then written.
      writer.record("t1", [delta("t1", "r1", "c")])
      yield* writer.write("t9", textRun("t9", "r9", "new"))
      expect(Object.keys(seen.threadMap)).toEqual(seenIds)
      expect(textOf(seen.threadMap.t1)).toBe("ab")
      // Unread since: the next new thread is written into the store's own map.
      yield* writer.write("t8", textRun("t8", "r8", "newer"))
      const now = store.getSnapshot()
      expect(Object.keys(seen.threadMap)).toEqual(seenIds)
      expect(textOf(now.threadMap.t1)).toBe("abc")
      expect(textOf(now.threadMap.t9)).toBe("new")
      expect(textOf(now.threadMap.t8)).toBe("newer")
      // What was read once stays as it was read.
      yield* writer.write("t7", textRun("t7", "r7", "newest"))
      expect(now.threadMap.t7).toBeUndefined()
      expect(textOf(store.getSnapshot().threadMap.t7)).toBe("newest")
    }))

  it.live("a reader of changes that comes after publications no one read starts from the state as it is, then sees each one", () =>
    Effect.gen(function* () {
      const { store, writer } = yield* setup
      // Published with nobody reading `changes`.
      writer.record("t1", [delta("t1", "r1", "b")])
      yield* nextTurn
      writer.record("t1", [delta("t1", "r1", "c")])
      yield* nextTurn
      const states: Array<ClientState.ClientState> = []
      const reader = yield* Effect.fork(Stream.runForEach(store.changes, (state) => Effect.sync(() => states.push(state))))
      yield* nextTurn
      writer.record("t1", [delta("t1", "r1", "d")])
      yield* nextTurn
      writer.record("t1", [delta("t1", "r1", "e")])
      yield* nextTurn
      yield* Fiber.interrupt(reader)
      expect(states.map((state) => textOf(state.threadMap.t1))).toEqual(["abc", "abcd", "abcde"])
      expect(states.at(-1)).toBe(store.getSnapshot())
      // Published without the ref again once nobody reads: the next reader still starts from it.
      writer.record("t1", [delta("t1", "r1", "f")])
      yield* nextTurn
      const head = yield* Stream.runHead(store.changes)
      expect(textOf(Option.getOrThrow(head).threadMap.t1)).toBe("abcdef")
    }))

  it.live("a thread written by someone else meanwhile keeps that write, and the draft's actions are applied again", () =>
    Effect.gen(function* () {
      const { store, writer } = yield* setup
      writer.record("t1", [delta("t1", "r1", "b")])
      yield* store.apply([{ type: "UPDATE_THREAD", threadId: "t1", patch: { name: "renamed" } }])
      writer.record("t1", [delta("t1", "r1", "c")])
      yield* nextTurn
      const t1 = yield* store.getThread("t1")
      expect(t1?.thread.name).toBe("renamed")
      expect(textOf(t1)).toBe("abc")
    }))

  it.effect("write publishes what is pending first, then its actions, in order", () =>
    Effect.gen(function* () {
      const { store, writer } = yield* setup
      writer.record("t1", [delta("t1", "r1", "b")])
      const after = yield* writer.write("t1", [delta("t1", "r1", "c")])
      expect(textOf(after)).toBe("abc")
      expect(store.getSnapshot().threadMap.t1).toBe(after)
      // Nothing left to publish: the draft was taken.
      expect(yield* writer.write("t1", [])).toBe(after)
    }))

  it.live("what several runs write in one turn is one change, in the order written", () =>
    Effect.gen(function* () {
      const { store, writer } = yield* setup
      let calls = 0
      store.subscribe(() => calls++)
      const [t9, t1, t2] = yield* Effect.all([
        // An unknown thread: applied to the whole state.
        writer.write("t9", textRun("t9", "r9", "new")),
        writer.write("t1", [delta("t1", "r1", "b")]),
        writer.write("t2", [delta("t2", "r2", "y")])
      ], { concurrency: "unbounded" })
      expect(calls).toBe(1)
      expect([textOf(t9), textOf(t1), textOf(t2)]).toEqual(["new", "ab", "xy"])
      expect(store.getSnapshot().threadMap.t9).toBe(t9)
      // Recorded after a write that reaches beyond one thread: on a thread it touches, it waits
      // with it, after it; on any other, it goes into its draft.
      const beyond = yield* Effect.fork(
        writer.write("t9", [{ type: "UPDATE_THREAD", threadId: "t9", patch: { name: "n" } }, ...textRun("t8", "r8", "z")])
      )
      yield* Effect.yieldNow()
      expect(writer.record("t8", [delta("t8", "r8", "!")])).toBeUndefined()
      expect(textOf(writer.record("t1", [delta("t1", "r1", "c")]))).toBe("abc")
      const after = yield* writer.write("t8", [delta("t8", "r8", "!")])
      yield* Fiber.join(beyond)
      expect(textOf(after)).toBe("z!")
      expect(store.getSnapshot().threadMap.t9?.thread.name).toBe("n")
      expect(textOf(store.getSnapshot().threadMap.t1)).toBe("abc")
    }))

  it.effect("actions that reach beyond the thread, or an unknown thread, are left to write", () =>
    Effect.gen(function* () {
      const { store, writer } = yield* setup
      expect(writer.record("t9", textRun("t9", "r9", "new"))).toBeUndefined()
      const unknown = yield* writer.recordOrWrite("t9", textRun("t9", "r9", "new"))
      expect(textOf(unknown)).toBe("new")
      expect(store.getSnapshot().threadMap.t9).toBe(unknown)
      // A run started from the placeholder moves its messages to the real thread.
      yield* store.apply([{
        type: "USER_MESSAGE",
        threadId: ClientState.PLACEHOLDER_THREAD_ID,
        message: { id: "u1", role: "user", content: [{ type: "text", text: "hi" }] },
        at: 1
      }])
      const start: ClientState.Action = {
        type: "EVENT",
        threadId: ClientState.PLACEHOLDER_THREAD_ID,
        event: { type: "RUN_STARTED", threadId: "t9", runId: "r10" },
        at: 3
      }
      expect(writer.record("t9", [start])).toBeUndefined()
      const moved = yield* writer.recordOrWrite("t9", [start])
      expect(moved?.thread.messages.map((m) => m.id)).toContain("u1")
      expect(store.getSnapshot().threadMap.placeholder?.thread.messages).toEqual([])
    }))

  it.live("drafts holding 1,024 events are published without waiting for the event loop", () =>
    Effect.gen(function* () {
      const { store, writer } = yield* setup
      let immediate = false
      setImmediate(() => (immediate = true))
      for (let i = 0; i < 1_023; i++) writer.record("t1", [delta("t1", "r1", "b")])
      for (let i = 0; i < 3; i++) yield* Effect.yieldNow()
      expect(textOf(store.getSnapshot().threadMap.t1)).toBe("a")
      writer.record("t1", [delta("t1", "r1", "b")])
      for (let i = 0; i < 3; i++) yield* Effect.yieldNow()
      expect(immediate).toBe(false)
      expect(textOf(store.getSnapshot().threadMap.t1)).toBe("a" + "b".repeat(1_024))
    }))

  it.live("a thread id of __proto__ is an ordinary key", () =>
    Effect.gen(function* () {
      const store = yield* ThreadStore.make()
      yield* store.apply(textRun("__proto__", "r1", "a"))
      const writer = yield* RunWriter.make(store)
      writer.record("__proto__", [delta("__proto__", "r1", "b")])
      yield* nextTurn
      const state = store.getSnapshot()
      expect(Object.getPrototypeOf(state.threadMap)).toBe(Object.prototype)
      expect(Object.hasOwn(state.threadMap, "__proto__")).toBe(true)
      expect(textOf(state.threadMap["__proto__"])).toBe("ab")
    }))

  it.live("drafts are published into an external store too", () =>
    Effect.gen(function* () {
      const external = externalStore()
      const store = yield* ThreadStore.makeExternal(external)
      yield* store.apply(textRun("t1", "r1", "a"))
      const writer = yield* RunWriter.make(store)
      const recorded = writer.record("t1", [delta("t1", "r1", "b")])
      yield* nextTurn
      expect(external.getState().threadMap.t1).toBe(recorded)
    }).pipe(Effect.scoped))

  it.live("a listener that throws is logged as a warning and stops nothing: the writers waiting go on, the other listeners hear of each change", () =>
    withWarnings((warnings) =>
      Effect.gen(function* () {
        const { store, writer } = yield* setup
        let other = 0
        store.subscribe(() => {
          throw new Error("the listener broke")
        })
        store.subscribe(() => other++)
        // Published at once, with nobody reading `changes`.
        const first = yield* writer.write("t1", [delta("t1", "r1", "b")])
        expect(textOf(first)).toBe("ab")
        expect(store.getSnapshot().threadMap.t1).toBe(first)
        // Published through the ref, for a reader of `changes`.
        const reader = yield* Effect.fork(Stream.runDrain(store.changes))
        yield* nextTurn
        const second = yield* writer.write("t1", [delta("t1", "r1", "c")])
        expect(textOf(second)).toBe("abc")
        expect((yield* store.get).threadMap.t1).toBe(second)
        yield* Fiber.interrupt(reader)
        yield* nextTurn
        expect(other).toBe(2)
        expect(warnings).toEqual([
          ["A listener of the ThreadStore threw: the listener broke"],
          ["A listener of the ThreadStore threw: the listener broke"]
        ])
      })
    ))

  it.live("an app's store whose own subscriber throws on setState keeps the draft, and the writer waiting goes on", () =>
    withWarnings((warnings) =>
      Effect.gen(function* () {
        const external = externalStore()
        const store = yield* ThreadStore.makeExternal(external)
        yield* store.apply(textRun("t1", "r1", "a"))
        const writer = yield* RunWriter.make(store)
        let heard = 0
        store.subscribe(() => heard++)
        external.subscribe(() => {
          throw new Error("the app's subscriber broke")
        })
        const after = yield* writer.write("t1", [delta("t1", "r1", "b")])
        expect(textOf(after)).toBe("ab")
        expect(external.getState().threadMap.t1).toBe(after)
        expect(store.getSnapshot()).toBe(external.getState())
        expect(heard).toBe(1)
        yield* nextTurn
        expect(warnings).toEqual([["The app's store threw on setState: the app's subscriber broke"]])
      }).pipe(Effect.scoped)
    ))
})
