import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
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

/**
 * Reads the first `count` elements of a store's changes in a fiber, handed back once it read the
 * first (the state as it was): every change made from then on is one it sees.
 */
const readChanges = <A>(changes: Stream.Stream<A>, count: number) =>
  Effect.gen(function* () {
    const subscribed = yield* Deferred.make<void>()
    const fiber = yield* changes.pipe(
      Stream.tap(() => Deferred.succeed(subscribed, undefined)),
      Stream.take(count),
      Stream.runCollect,
      Effect.fork
    )
    yield* Deferred.await(subscribed)
    return fiber
  })

describe("ThreadStore", () => {
  it.effect("a batch of actions is one change: listeners are called once per apply", () =>
    Effect.gen(function* () {
      const store = yield* ThreadStore.make()
      let calls = 0
      const unsubscribe = store.subscribe(() => calls++)
      const before = store.getSnapshot()
      const after = yield* store.apply(textRun("t1", "r1", "hello"))
      expect(calls).toBe(1)
      expect(store.getSnapshot()).toBe(after)
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
      const before = store.getSnapshot()
      expect(yield* store.apply([])).toBe(before)
      expect(calls).toBe(0)
    }))

  it.effect("update and modify change the state as a SubscriptionRef does; get and getSnapshot see it at once", () =>
    Effect.gen(function* () {
      const store = yield* ThreadStore.make()
      yield* store.update((state) => ClientState.reduce(state, textRun("t1", "r1", "one")))
      const name = yield* store.modify((state) => {
        const next = ClientState.reduce(state, [{ type: "UPDATE_THREAD", threadId: "t1", patch: { name: "named" } }])
        return [ClientState.getThread(next, "t1")?.name, next] as const
      })
      expect(name).toBe("named")
      expect(yield* store.get).toBe(store.getSnapshot())
      expect((yield* store.getThread("t1"))?.thread.name).toBe("named")
      expect(yield* store.currentThreadId).toBe(ClientState.PLACEHOLDER_THREAD_ID)
    }))

  it.effect("changes: the current state, then each change, none twice", () =>
    Effect.gen(function* () {
      const store = yield* ThreadStore.make()
      const fiber = yield* readChanges(store.changes, 3)
      const first = yield* store.apply(textRun("t1", "r1", "one"))
      // No change: nothing emitted.
      yield* store.apply([])
      const second = yield* store.apply(textRun("t2", "r2", "two"))
      const seen = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
      expect(seen).toEqual([ClientState.initial, first, second])
      expect(seen[1]).toBe(first)
    }))

  it.effect("threadChanges emits a thread only when it changed, by identity", () =>
    Effect.gen(function* () {
      const store = yield* ThreadStore.make()
      yield* store.apply(textRun("t1", "r1", "one"))
      const fiber = yield* readChanges(ThreadStore.threadChanges(store, "t1"), 2)
      // Another thread changing does not wake t1's subscribers.
      yield* store.apply(textRun("t2", "r2", "two"))
      yield* store.apply([{ type: "UPDATE_THREAD", threadId: "t1", patch: { name: "renamed" } }])
      const seen = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
      expect(seen.map((t) => t?.thread.name)).toEqual([undefined, "renamed"])
    }))

  it.effect("an external store is kept in step both ways", () =>
    Effect.gen(function* () {
      const external = externalStore()
      const store = yield* ThreadStore.makeExternal(external)
      let calls = 0
      store.subscribe(() => calls++)
      const changes = yield* readChanges(store.changes, 3)
      yield* store.apply(textRun("t1", "r1", "hi"))
      expect(external.getState().threadMap.t1?.thread.messages).toHaveLength(1)
      expect(store.getSnapshot()).toBe(external.getState())
      expect(calls).toBe(1)
      // A change made behind the SDK's back is seen at once, by every reader.
      const appWrote = { ...external.getState(), currentThreadId: "t1" }
      external.setState(appWrote)
      expect(store.getSnapshot()).toBe(appWrote)
      expect(calls).toBe(2)
      expect((yield* store.get).currentThreadId).toBe("t1")
      const seen = Chunk.toReadonlyArray(yield* Fiber.join(changes))
      expect(seen[1]!.threadMap.t1).toBeDefined()
      expect(seen[2]).toBe(appWrote)
      // The next change builds on what the app wrote.
      yield* store.apply([{ type: "UPDATE_THREAD", threadId: "t1", patch: { name: "named" } }])
      expect(external.getState().currentThreadId).toBe("t1")
      expect(external.getState().threadMap.t1?.thread.name).toBe("named")
    }).pipe(Effect.scoped))

  it.effect("an external store is let go with the scope", () =>
    Effect.gen(function* () {
      const external = externalStore()
      let calls = 0
      const store = yield* Effect.scoped(ThreadStore.makeExternal(external))
      store.subscribe(() => calls++)
      external.setState({ ...external.getState(), currentThreadId: "t1" })
      expect(calls).toBe(0)
    }))

  it.effect("a state handed out never changes after", () =>
    Effect.gen(function* () {
      const store = yield* ThreadStore.make()
      const before = yield* store.apply([...textRun("t1", "r1", "a"), ...textRun("t2", "r2", "x")])
      const keys = Object.keys(before.threadMap)
      const t1 = before.threadMap.t1
      yield* store.apply([...textRun("t3", "r3", "new"), { type: "UPDATE_THREAD", threadId: "t1", patch: { name: "one" } }])
      expect(Object.keys(before.threadMap)).toEqual(keys)
      expect(before.threadMap.t1).toBe(t1)
      expect(t1?.thread.name).toBeUndefined()
    }))

  it.effect("listeners are those of the change: one subscribed again, added or removed while notified is called at most once for it", () =>
    Effect.gen(function* () {
      const store = yield* ThreadStore.make()
      const calls = { again: 0, added: 0, removed: 0 }
      // Subscribes itself again each time it is called (as a component re-rendered at once would).
      let unsubscribeAgain = () => {}
      const again = () => {
        calls.again++
        if (calls.again > 10) throw new Error("called again for the same change")
        unsubscribeAgain()
        unsubscribeAgain = store.subscribe(again)
      }
      unsubscribeAgain = store.subscribe(again)
      let unsubscribeRemoved = () => {}
      let added = false
      store.subscribe(() => {
        unsubscribeRemoved()
        if (!added) {
          added = true
          store.subscribe(() => calls.added++)
        }
      })
      unsubscribeRemoved = store.subscribe(() => calls.removed++)
      yield* store.update((state) => ({ ...state, currentThreadId: "t1" }))
      expect(calls).toEqual({ again: 1, added: 0, removed: 0 })
      yield* store.update((state) => ({ ...state, currentThreadId: "t2" }))
      expect(calls).toEqual({ again: 2, added: 1, removed: 0 })
    }))
})
