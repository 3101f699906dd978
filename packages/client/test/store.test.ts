import { Script } from "@tambo-effect/testing"
import { describe, expect, it, vi } from "vitest"
import { createStore } from "zustand/vanilla"
import { type ClientState, createInitialState, InMemoryStore, type TamboStore } from "../src/index.js"
import { makeClient, texts, useServer, waitFor } from "./helpers.js"

const server = useServer()

describe("getState / subscribe", () => {
  it("getState returns the same object until something changed", async () => {
    server().setScript([Script.text("hi")])
    const client = makeClient(server())
    const before = client.getState()
    expect(client.getState()).toBe(before)
    await client.run("change").thread
    const after = client.getState()
    expect(after).not.toBe(before)
    expect(client.getState()).toBe(after)
    // Unbound, as useSyncExternalStore calls it.
    const { getState } = client
    expect(getState()).toBe(after)
  })

  it("listeners are called at most once per microtask, after the changes", async () => {
    const client = makeClient(server())
    const store = client.getStore()
    let calls = 0
    const { subscribe } = client
    const unsubscribe = subscribe(() => calls++)
    const state = client.getState()
    store.setState({ ...state, currentThreadId: "a" })
    store.setState({ ...state, currentThreadId: "b" })
    store.setState({ ...state, currentThreadId: "c" })
    expect(calls).toBe(0)
    await Promise.resolve()
    expect(calls).toBe(1)
    expect(client.getState().currentThreadId).toBe("c")
    unsubscribe()
    store.setState({ ...state, currentThreadId: "d" })
    await Promise.resolve()
    expect(calls).toBe(1)
  })

  it("a listener that throws is logged: the other listeners still hear of the change, and so does it of the next", async () => {
    const client = makeClient(server())
    const store = client.getStore()
    const state = client.getState()
    // The facade logs a throwing listener through Effect's default logger, to the console.
    const consoleLog = vi.spyOn(console, "log").mockImplementation(() => undefined)
    let throwing = 0
    let other = 0
    client.subscribe(() => {
      throwing++
      throw new Error("the listener broke")
    })
    client.subscribe(() => other++)
    store.setState({ ...state, currentThreadId: "a" })
    await Promise.resolve()
    expect([throwing, other]).toEqual([1, 1])
    store.setState({ ...state, currentThreadId: "b" })
    await Promise.resolve()
    expect([throwing, other]).toEqual([2, 2])
    await waitFor(() => consoleLog.mock.calls.length === 2)
    expect(consoleLog.mock.calls.map((call) => String(call[0]))).toEqual([
      expect.stringContaining("A listener of subscribe threw: Error: the listener broke"),
      expect.stringContaining("A listener of subscribe threw: Error: the listener broke")
    ])
    consoleLog.mockRestore()
  })

  it("a listener unsubscribed by another while notified is not called after its unsubscribe", async () => {
    const client = makeClient(server())
    const state = client.getState()
    let unsubscribeSecond = () => {}
    let second = 0
    client.subscribe(() => unsubscribeSecond())
    unsubscribeSecond = client.subscribe(() => second++)
    client.getStore().setState({ ...state, currentThreadId: "a" })
    await Promise.resolve()
    expect(second).toBe(0)
  })

  it("a streamed run notifies no more often than what subscribers see changes, and at least once", async () => {
    server().setScript([Script.text(Array.from({ length: 200 }, (_, i) => `${i} `))])
    const client = makeClient(server())
    let storeChanges = 0
    let notifications = 0
    const unsubscribeStore = client.getStore().subscribe(() => storeChanges++)
    const unsubscribe = client.subscribe(() => notifications++)
    await client.run("many").thread
    await Promise.resolve()
    unsubscribe()
    unsubscribeStore()
    expect(notifications).toBeGreaterThan(0)
    // Besides the state, `hasActiveRun` changes: when the run starts, when its thread is named, when it ends.
    expect(notifications).toBeLessThanOrEqual(storeChanges + 3)
  })
})

describe("external stores", () => {
  it("an InMemoryStore given in the options holds the state", async () => {
    server().setScript([Script.text("stored")])
    const store = new InMemoryStore<ClientState>(createInitialState())
    const client = makeClient(server(), { store })
    expect(client.getStore()).toBe(store)
    const thread = await client.run("where").thread
    expect(store.getState()).toBe(client.getState())
    expect(texts(store.getState().threadMap[thread.id]!.thread.messages)).toEqual(["user: where", "assistant: stored"])
  })

  it("a Zustand vanilla store works unchanged", async () => {
    server().setScript([Script.text("zustand")])
    const store = createStore<ClientState>()(() => createInitialState())
    const seen: Array<string> = []
    store.subscribe((state) => seen.push(state.currentThreadId))
    const client = makeClient(server(), { store })
    const thread = await client.run("hello zustand").thread
    expect(client.getState()).toBe(store.getState())
    expect(store.getState().currentThreadId).toBe(thread.id)
    expect(texts(store.getState().threadMap[thread.id]!.thread.messages)).toEqual([
      "user: hello zustand",
      "assistant: zustand"
    ])
    expect(seen).toContain(thread.id)
    // The store's own subscribers and the client's both see changes.
    let notified = 0
    client.subscribe(() => notified++)
    client.startNewThread()
    await Promise.resolve()
    expect(notified).toBe(1)
    expect(store.getState().currentThreadId).toBe("placeholder")
  })

  it("a store is any { getState, setState, subscribe }", async () => {
    server().setScript([Script.text("custom")])
    let state = createInitialState()
    const listeners = new Set<() => void>()
    let writes = 0
    const store: TamboStore<ClientState> = {
      getState: () => state,
      setState: (next) => {
        writes++
        state = next
        for (const listener of listeners) listener()
      },
      subscribe: (listener) => {
        listeners.add(listener)
        return () => listeners.delete(listener)
      }
    }
    const client = makeClient(server(), { store })
    await client.run("custom store").thread
    expect(writes).toBeGreaterThan(0)
    expect(client.getState()).toBe(state)
  })
})
