import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as ClientState from "../src/ClientState.js"
import * as ThreadStore from "../src/ThreadStore.js"

const textRun = (threadId: string, runId: string, text: string): ReadonlyArray<ClientState.Action> => [
  { type: "EVENT", threadId, event: { type: "RUN_STARTED", threadId, runId }, at: 1 },
  { type: "EVENT", threadId, event: { type: "TEXT_MESSAGE_START", messageId: `m-${runId}`, role: "assistant" }, at: 1 },
  { type: "EVENT", threadId, event: { type: "TEXT_MESSAGE_CONTENT", messageId: `m-${runId}`, delta: text }, at: 1 },
  { type: "EVENT", threadId, event: { type: "TEXT_MESSAGE_END", messageId: `m-${runId}` }, at: 1 },
  { type: "EVENT", threadId, event: { type: "RUN_FINISHED", threadId, runId }, at: 1 }
]

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
      let state = ClientState.initial
      const listeners = new Set<() => void>()
      const external: ThreadStore.ExternalStore<ClientState.ClientState> = {
        getState: () => state,
        setState: (next) => {
          state = next
          for (const l of listeners) l()
        },
        subscribe: (l) => {
          listeners.add(l)
          return () => void listeners.delete(l)
        }
      }
      const store = ThreadStore.makeExternal(external)
      const changes = yield* store.changes.pipe(Stream.take(2), Stream.runCollect, Effect.fork)
      // Let the subscriber start before anything changes.
      yield* Effect.sleep("20 millis")
      yield* store.apply(textRun("t1", "r1", "hi"))
      expect(state.threadMap.t1?.thread.messages).toHaveLength(1)
      expect(store.unsafeGet()).toBe(state)
      // A change made behind the SDK's back is seen too.
      external.setState({ ...state, currentThreadId: "t1" })
      expect((yield* store.get).currentThreadId).toBe("t1")
      const seen = Chunk.toReadonlyArray(yield* Fiber.join(changes))
      expect(seen[1]!.threadMap.t1).toBeDefined()
    }))
})
