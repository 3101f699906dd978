import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as ClientState from "../src/ClientState.js"
import * as ThreadStore from "../src/ThreadStore.js"
import { externalStore } from "./helpers.js"

const textRun = (threadId: string, runId: string, text: string): ReadonlyArray<ClientState.Action> => [
  { type: "EVENT", threadId, event: { type: "RUN_STARTED", threadId, runId }, at: 1 },
  { type: "EVENT", threadId, event: { type: "TEXT_MESSAGE_START", messageId: `m-${runId}`, role: "assistant" }, at: 1 },
  { type: "EVENT", threadId, event: { type: "TEXT_MESSAGE_CONTENT", messageId: `m-${runId}`, delta: text }, at: 1 },
  { type: "EVENT", threadId, event: { type: "TEXT_MESSAGE_END", messageId: `m-${runId}` }, at: 1 },
  { type: "EVENT", threadId, event: { type: "RUN_FINISHED", threadId, runId }, at: 1 }
]

/** Once the event loop has gone round: the store has written what was recorded. */
const nextTurn = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 5)))

describe("ThreadStore", () => {
  it.effect("a batch of actions is one change: listeners are called once per apply", () =>
    Effect.gen(function* () {
      const store = yield* ThreadStore.make()
      let calls = 0
      const unsubscribe = store.subscribe(() => calls++)
      const before = store.unsafeGet()
      const after = yield* store.apply(textRun("t1", "r1", "hello"))
      expect(calls).toBe(1)
      expect(store.unsafeGet()).toBe(after)
      expect(after).not.toBe(before)
      unsubscribe()
      yield* store.apply(textRun("t2", "r2", "again"))
      expect(calls).toBe(1)
    }))

  it.effect("an empty batch changes nothing and notifies nobody", () =>
    Effect.gen(function* () {
      const store = yield* ThreadStore.make()
      let calls = 0
      store.subscribe(() => calls++)
      const before = store.unsafeGet()
      expect(yield* store.apply([])).toBe(before)
      expect(calls).toBe(0)
    }))

  it.live("threadChanges emits a thread only when it changed, by identity", () =>
    Effect.gen(function* () {
      const store = yield* ThreadStore.make()
      yield* store.apply(textRun("t1", "r1", "one"))
      const fiber = yield* ThreadStore.threadChanges(store, "t1").pipe(Stream.take(2), Stream.runCollect, Effect.fork)
      // Let the subscriber start before anything changes.
      yield* Effect.sleep("20 millis")
      // Another thread changing does not wake t1's subscribers.
      yield* store.apply(textRun("t2", "r2", "two"))
      yield* store.apply([{ type: "UPDATE_THREAD", threadId: "t1", patch: { name: "renamed" } }])
      const seen = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
      expect(seen.map((t) => t?.thread.name)).toEqual([undefined, "renamed"])
    }))

  it.live("an external store is the source of truth", () =>
    Effect.gen(function* () {
      const external = externalStore()
      const store = ThreadStore.makeExternal(external)
      const changes = yield* store.changes.pipe(Stream.take(2), Stream.runCollect, Effect.fork)
      // Let the subscriber start before anything changes.
      yield* Effect.sleep("20 millis")
      yield* store.apply(textRun("t1", "r1", "hi"))
      expect(external.getState().threadMap.t1?.thread.messages).toHaveLength(1)
      expect(store.unsafeGet()).toBe(external.getState())
      // A change made behind the SDK's back is seen too.
      external.setState({ ...external.getState(), currentThreadId: "t1" })
      expect((yield* store.get).currentThreadId).toBe("t1")
      const seen = Chunk.toReadonlyArray(yield* Fiber.join(changes))
      expect(seen[1]!.threadMap.t1).toBeDefined()
    }))

  describe("unsafeRecord", () => {
    const delta = (threadId: string, runId: string, text: string): ClientState.Action => ({
      type: "EVENT",
      threadId,
      event: { type: "TEXT_MESSAGE_CONTENT", messageId: `m-${runId}`, delta: text },
      at: 2
    })
    const textOf = (state: ClientState.ThreadState | undefined) =>
      state?.thread.messages[0]?.content[0]?.type === "text" ? state.thread.messages[0].content[0].text : undefined

    it.live("returns the thread at once and writes once per round of I/O, for every thread recorded in it", () =>
      Effect.gen(function* () {
        const store = yield* ThreadStore.make()
        yield* store.apply([...textRun("t1", "r1", "a"), ...textRun("t2", "r2", "x")])
        let calls = 0
        store.subscribe(() => calls++)
        const written = store.unsafeGet()
        const t1 = store.unsafeRecord("t1", [delta("t1", "r1", "b")])
        const t1Again = store.unsafeRecord("t1", [delta("t1", "r1", "c")])
        store.unsafeRecord("t2", [delta("t2", "r2", "y")])
        expect(textOf(t1)).toBe("ab")
        expect(textOf(t1Again)).toBe("abc")
        // Not written yet: readers of the written state and subscribers hear of it in one change.
        expect(store.unsafeGet()).toBe(written)
        expect(calls).toBe(0)
        yield* nextTurn
        expect(calls).toBe(1)
        expect(store.unsafeGet().threadMap.t1).toBe(t1Again)
        expect(textOf(store.unsafeGet().threadMap.t2)).toBe("xy")
        // The untouched parts keep their identity.
        expect(store.unsafeGet().threadMap.placeholder).toBe(written.threadMap.placeholder)
      }))

    it.live("applyBatched with no actions waits for what is pending, and shares its write", () =>
      Effect.gen(function* () {
        const store = yield* ThreadStore.make()
        yield* store.apply([...textRun("t1", "r1", "a"), ...textRun("t2", "r2", "x")])
        // Nothing pending: the state as written, at once.
        expect(yield* store.applyBatched([])).toBe(store.unsafeGet())
        let calls = 0
        store.subscribe(() => calls++)
        const t1 = store.unsafeRecord("t1", [delta("t1", "r1", "b")])
        const t2 = store.unsafeRecord("t2", [delta("t2", "r2", "y")])
        // Two runs ending together: both wait for the one write that holds their chunks.
        const [first, second] = yield* Effect.all([store.applyBatched([]), store.applyBatched([])], {
          concurrency: "unbounded"
        })
        expect(first).toBe(second)
        expect(first.threadMap.t1).toBe(t1)
        expect(first.threadMap.t2).toBe(t2)
        expect(store.unsafeGet()).toBe(first)
        expect(calls).toBe(1)
      }))

    it.effect("get and apply see what is recorded at once, in order", () =>
      Effect.gen(function* () {
        const store = yield* ThreadStore.make()
        yield* store.apply(textRun("t1", "r1", "a"))
        const recorded = store.unsafeRecord("t1", [delta("t1", "r1", "b")])
        expect((yield* store.get).threadMap.t1).toBe(recorded)
        store.unsafeRecord("t1", [delta("t1", "r1", "c")])
        const after = yield* store.apply([{ type: "UPDATE_THREAD", threadId: "t1", patch: { name: "named" } }])
        expect(textOf(after.threadMap.t1)).toBe("abc")
        expect(after.threadMap.t1?.thread.name).toBe("named")
      }))

    it.live("a thread changed behind the store's back gets the recorded actions again, nothing lost", () =>
      Effect.gen(function* () {
        const backing = externalStore()
        const store = ThreadStore.makeExternal(backing)
        yield* store.apply(textRun("t1", "r1", "a"))
        store.unsafeRecord("t1", [delta("t1", "r1", "b")])
        // Another writer renames the thread before the store writes the recorded chunk.
        const state = backing.getState()
        const t1 = state.threadMap.t1!
        backing.setState({ ...state, threadMap: { ...state.threadMap, t1: { ...t1, thread: { ...t1.thread, name: "renamed" } } } })
        yield* nextTurn
        expect(textOf(backing.getState().threadMap.t1)).toBe("ab")
        expect(backing.getState().threadMap.t1?.thread.name).toBe("renamed")
      }))

    it.effect("what is recorded without a pause for I/O is written every so many events, however they are chunked", () =>
      Effect.gen(function* () {
        const store = yield* ThreadStore.make()
        yield* store.apply(textRun("t1", "r1", ""))
        let calls = 0
        store.subscribe(() => calls++)
        const chunk = (events: number): ClientState.Action => ({
          type: "EVENTS",
          threadId: "t1",
          events: Array.from({ length: events }, () => ({ type: "TEXT_MESSAGE_CONTENT", messageId: "m-r1", delta: "x" })),
          at: 2
        })
        // 1,000 events in 10 chunks are held for the next turn of the event loop...
        for (let i = 0; i < 10; i++) store.unsafeRecord("t1", [chunk(100)])
        expect(calls).toBe(0)
        // ...the 1,024th is not: everything pending is written at once.
        store.unsafeRecord("t1", [chunk(24)])
        expect(calls).toBe(1)
        expect(textOf(store.unsafeGet().threadMap.t1)).toBe("x".repeat(1_024))
        // Single events count one each.
        for (let i = 0; i < 1_023; i++) store.unsafeRecord("t1", [delta("t1", "r1", "y")])
        expect(calls).toBe(1)
        store.unsafeRecord("t1", [delta("t1", "r1", "y")])
        expect(calls).toBe(2)
        expect(textOf(store.unsafeGet().threadMap.t1)).toBe("x".repeat(1_024) + "y".repeat(1_024))
      }))

    it.effect("a store of many threads writes after proportionally more events: a write copies every thread", () =>
      Effect.gen(function* () {
        const store = yield* ThreadStore.make()
        for (let i = 0; i < 500; i++) yield* store.apply(textRun(`t${i}`, `r${i}`, ""))
        // 500 threads and the placeholder: the write waits for 4 events a thread.
        const threads = Object.keys(store.unsafeGet().threadMap).length
        expect(threads).toBe(501)
        let calls = 0
        store.subscribe(() => calls++)
        for (let i = 0; i < 4 * threads - 1; i++) store.unsafeRecord("t0", [delta("t0", "r0", "x")])
        expect(calls).toBe(0)
        store.unsafeRecord("t0", [delta("t0", "r0", "x")])
        expect(calls).toBe(1)
        expect(textOf(store.unsafeGet().threadMap.t0)).toBe("x".repeat(4 * threads))
      }))

    it.effect("an unread store writes its batch in place: however many threads, it writes every 1,024 events", () =>
      Effect.gen(function* () {
        const store = yield* ThreadStore.make()
        for (let i = 0; i < 500; i++) yield* store.apply(textRun(`t${i}`, `r${i}`, ""))
        // A listener that does not read the state leaves it unseen.
        let calls = 0
        store.subscribe(() => calls++)
        // The first write after the state was handed out (by apply) copies the map: it waits for more.
        for (let i = 0; i < 4 * 501; i++) store.unsafeRecord("t0", [delta("t0", "r0", "x")])
        expect(calls).toBe(1)
        // Nobody has seen the map since: the next writes change it in place, and are due sooner.
        for (let i = 0; i < 1_024; i++) store.unsafeRecord("t1", [delta("t1", "r1", "y")])
        expect(calls).toBe(2)
        expect(textOf(yield* store.getThread("t0"))).toBe("x".repeat(4 * 501))
        expect(textOf(yield* store.getThread("t1"))).toBe("y".repeat(1_024))
        // Reading one thread hands out nothing else; the whole state, once read, is copied again.
        const seen = yield* store.get
        for (let i = 0; i < 1_024; i++) store.unsafeRecord("t2", [delta("t2", "r2", "z")])
        expect(calls).toBe(2)
        // Written at the next read: into a copy, the state seen stays as it was.
        expect(textOf(yield* store.getThread("t2"))).toBe("z".repeat(1_024))
        expect(calls).toBe(3)
        expect(textOf(seen.threadMap.t2)).toBe("")
      }))

    it.live("a state handed out never changes after, however it was read", () =>
      Effect.gen(function* () {
        const store = yield* ThreadStore.make()
        yield* store.apply([...textRun("t1", "r1", "a"), ...textRun("t2", "r2", "x")])
        const frozen: Array<readonly [string, ClientState.ClientState, ClientState.ClientState]> = []
        const keep = (how: string, state: ClientState.ClientState) =>
          frozen.push([how, state, { ...state, threadMap: { ...state.threadMap } }])
        const changes = yield* Stream.runCollect(Stream.take(store.changes, 3)).pipe(Effect.fork)
        let fromListener: ClientState.ClientState | undefined
        const unsubscribe = store.subscribe(() => {
          fromListener ??= store.unsafeGet()
        })
        // Each way of reading, each followed by writes of every kind: the last ones hand out
        // nothing, so the next read is the first to see their state.
        const writes = (n: number) =>
          Effect.gen(function* () {
            yield* store.apply(textRun(`n${n}`, `rn${n}`, "new"))
            store.unsafeRecord("t1", [delta("t1", "r1", `b${n}`)])
            yield* nextTurn
            store.unsafeRecord("t2", [delta("t2", "r2", `y${n}`)])
            yield* store.recordBatched("t2", [delta("t2", "r2", `z${n}`)])
          })
        keep("get", yield* store.get)
        yield* writes(1)
        keep("unsafeGet", store.unsafeGet())
        yield* writes(2)
        keep("apply", yield* store.apply([{ type: "UPDATE_THREAD", threadId: "t1", patch: { name: "one" } }]))
        yield* writes(3)
        keep("applyBatched", yield* store.applyBatched([delta("t1", "r1", "c")]))
        yield* writes(4)
        keep("listener", fromListener!)
        unsubscribe()
        yield* writes(5)
        for (const state of yield* Fiber.join(changes)) keep("changes", state)
        yield* writes(6)
        for (const [how, state, copy] of frozen) {
          expect({ how, map: Object.keys(state.threadMap) }).toEqual({ how, map: Object.keys(copy.threadMap) })
          for (const id of Object.keys(copy.threadMap)) expect(state.threadMap[id], `${how} ${id}`).toBe(copy.threadMap[id])
        }
        // And every write is there to read.
        const t1 = textOf(yield* store.getThread("t1"))
        expect(t1).toBe("ab1b2b3c" + "b4b5b6")
        expect(textOf(yield* store.getThread("t2"))).toBe("xy1z1y2z2y3z3y4z4y5z5y6z6")
        expect(Object.keys((yield* store.get).threadMap)).toHaveLength(9)
      }))

    it.live("recordBatched resumes with its thread once written; getThread and currentThreadId see what is pending", () =>
      Effect.gen(function* () {
        const backing = externalStore()
        const store = ThreadStore.makeExternal(backing)
        yield* store.apply(textRun("t1", "r1", "a"))
        let writes = 0
        backing.subscribe(() => writes++)
        const recorded = store.unsafeRecord("t1", [delta("t1", "r1", "b")])
        // Nothing to add: waits for the pending write.
        expect(yield* store.recordBatched("t1", [])).toBe(recorded)
        expect(writes).toBe(1)
        const [t1, none] = yield* Effect.all([
          store.recordBatched("t1", [delta("t1", "r1", "c")]),
          store.recordBatched("nope", [{ type: "UPDATE_THREAD", threadId: "t1", patch: { name: "named" } }])
        ], { concurrency: "unbounded" })
        // Both in one write; each gets its own thread.
        expect(writes).toBe(2)
        expect(textOf(t1)).toBe("abc")
        expect(t1?.thread.name).toBe("named")
        expect(none).toBeUndefined()
        store.unsafeRecord("t1", [delta("t1", "r1", "d")])
        expect(textOf(yield* store.getThread("t1"))).toBe("abcd")
        expect(writes).toBe(3)
        // A change of the current thread waiting for its batch is seen at once, and written then.
        const before = backing.getState().currentThreadId
        expect(before).not.toBe("t1")
        const switched = yield* Effect.fork(store.recordBatched("t1", [{ type: "SET_CURRENT_THREAD", threadId: "t1" }]))
        yield* Effect.yieldNow()
        expect(backing.getState().currentThreadId).toBe(before)
        expect(yield* store.currentThreadId).toBe("t1")
        expect(backing.getState().currentThreadId).toBe("t1")
        expect(writes).toBe(4)
        yield* Fiber.join(switched)
      }))

    it.live("tryRecord writes a chunk that moves a run to its thread at once only while it can write in place", () =>
      Effect.gen(function* () {
        const store = yield* ThreadStore.make()
        yield* store.apply(textRun("t1", "r1", "a"))
        // A new-thread run's first chunk: recorded in the placeholder, it moves to thread srv.
        const moving: ClientState.Action = {
          type: "EVENTS",
          threadId: "placeholder",
          events: [
            { type: "RUN_STARTED", threadId: "srv", runId: "r2" },
            { type: "TEXT_MESSAGE_START", messageId: "m-r2", role: "assistant" },
            { type: "TEXT_MESSAGE_CONTENT", messageId: "m-r2", delta: "hi" }
          ],
          at: 2
        }
        // apply handed the state out: a write now would copy the thread map. Nothing is recorded.
        expect(store.tryRecord("srv", [moving])).toBeUndefined()
        expect(yield* store.getThread("srv")).toBeUndefined()
        // A thread's own chunk is always recorded, for the next write.
        expect(textOf(store.tryRecord("t1", [delta("t1", "r1", "b")]))).toBe("ab")
        yield* nextTurn
        // Handed out again: the next write copies the map, and nobody sees that copy.
        const map = store.unsafeGet().threadMap
        store.unsafeRecord("t1", [delta("t1", "r1", "c")])
        yield* nextTurn
        // Now the move is written at once, in place, in one write with what is pending.
        let calls = 0
        store.subscribe(() => calls++)
        store.unsafeRecord("t1", [delta("t1", "r1", "d")])
        const moved = store.tryRecord("srv", [moving])
        expect(textOf(moved)).toBe("hi")
        expect(calls).toBe(1)
        const written = store.unsafeGet()
        expect(written.threadMap.srv).toBe(moved)
        expect(textOf(written.threadMap.t1)).toBe("abcd")
        // The map handed out before the writes stayed as it was.
        expect(textOf(map.t1)).toBe("ab")
        expect(map.srv).toBeUndefined()
        // A store the app owns copies on every write: always the batch.
        const external = ThreadStore.makeExternal(externalStore())
        expect(external.tryRecord("srv", [moving])).toBeUndefined()
        expect(textOf(yield* external.recordBatched("srv", [moving]))).toBe("hi")
      }))

    it.live("a thread id of __proto__ is an ordinary key", () =>
      Effect.gen(function* () {
        const store = yield* ThreadStore.make()
        yield* store.apply(textRun("__proto__", "r1", "a"))
        store.unsafeRecord("__proto__", [delta("__proto__", "r1", "b")])
        yield* nextTurn
        const state = store.unsafeGet()
        expect(Object.getPrototypeOf(state.threadMap)).toBe(Object.prototype)
        expect(Object.hasOwn(state.threadMap, "__proto__")).toBe(true)
        expect(textOf(state.threadMap["__proto__"])).toBe("ab")
      }))

    it.effect("actions that reach beyond the thread, or an unknown thread, are applied to the whole state", () =>
      Effect.gen(function* () {
        const store = yield* ThreadStore.make()
        const unknown = store.unsafeRecord("t9", textRun("t9", "r9", "new"))
        expect(textOf(unknown)).toBe("new")
        expect(store.unsafeGet().threadMap.t9).toBe(unknown)
        // A run started from the placeholder moves its messages to the real thread.
        yield* store.apply([{
          type: "USER_MESSAGE",
          threadId: ClientState.PLACEHOLDER_THREAD_ID,
          message: { id: "u1", role: "user", content: [{ type: "text", text: "hi" }] },
          at: 1
        }])
        const moved = store.unsafeRecord("t9", [{
          type: "EVENT",
          threadId: ClientState.PLACEHOLDER_THREAD_ID,
          event: { type: "RUN_STARTED", threadId: "t9", runId: "r10" },
          at: 3
        }])
        expect(moved.thread.messages.map((m) => m.id)).toContain("u1")
        expect(store.unsafeGet().threadMap.placeholder?.thread.messages).toEqual([])
      }))
  })
})
