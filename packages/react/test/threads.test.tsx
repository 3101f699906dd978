// @vitest-environment happy-dom
import { renderHook, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { afterEach, describe, expect, it, vi } from "vitest"
import { makeClient, runMovedToLocalThread } from "../../client/test/helpers.js"
import { TamboClient, useTambo, useTamboRunStatus, useTamboThread, useTamboThreadList } from "../src/index.js"
import { connection, holdingProxy, useServer, wrapperFor } from "./helpers.js"

const server = useServer()

describe("useTamboThreadList", () => {
  it("lists the user's threads and reads again when a run creates one", async () => {
    server().threads.create({ userKey: "user-1", name: "Seeded", messages: [{ role: "user", content: "Hello" }] })
    server().threads.create({ userKey: "someone-else", name: "Not mine" })
    server().setScript([Script.text("Hi")])
    const { result } = renderHook(() => ({ list: useTamboThreadList(), tambo: useTambo() }), {
      wrapper: wrapperFor(connection(server()))
    })
    expect(result.current.list.isLoading).toBe(true)
    expect(result.current.list).toMatchObject({ status: "pending", isPending: true, fetchStatus: "fetching", isFetched: false })
    await waitFor(() => expect(result.current.list.isSuccess).toBe(true))
    expect(result.current.list.threads.map((thread) => thread.name)).toEqual(["Seeded"])
    // As a TanStack Query result says it.
    expect(result.current.list).toMatchObject({
      status: "success",
      isPending: false,
      fetchStatus: "idle",
      isFetched: true,
      isRefetching: false,
      isEnabled: true,
      failureCount: 0,
      failureReason: null
    })
    expect(result.current.list.dataUpdatedAt).toBeGreaterThan(0)
    // `data` is the page, as upstream's hook gives it (code reads `data?.threads`).
    expect(result.current.list.data).toEqual({ threads: result.current.list.threads, hasMore: false })

    const thread = await result.current.tambo.sendMessage("Make a new one").thread
    await waitFor(() => expect(result.current.list.threads.map((t) => t.id)).toContain(thread.id))
    expect(result.current.list.threads).toHaveLength(2)
    // Newest first.
    expect(result.current.list.threads[0]?.id).toBe(thread.id)
  })

  it("reads nothing when disabled, and pages with limit", async () => {
    for (const name of ["a", "b", "c"]) server().threads.create({ userKey: "user-1", name })
    const { rerender, result } = renderHook(({ enabled }) => useTamboThreadList({ enabled, limit: 2 }), {
      wrapper: wrapperFor(connection(server())),
      initialProps: { enabled: false }
    })
    expect(result.current.isLoading).toBe(false)
    expect(result.current.threads).toEqual([])
    expect(server().requests.filter((request) => request.method === "GET")).toHaveLength(0)
    rerender({ enabled: true })
    await waitFor(() => expect(result.current.threads).toHaveLength(2))
    expect(result.current.threads.map((thread) => thread.name)).toEqual(["c", "b"])
    expect(result.current).toMatchObject({ hasMore: true, nextCursor: expect.any(String) })
  })

  it("reads the next page with the cursor it gave", async () => {
    for (const name of ["a", "b", "c"]) server().threads.create({ userKey: "user-1", name })
    const { rerender, result } = renderHook(
      ({ cursor }: { readonly cursor: string | undefined }) => useTamboThreadList({ limit: 2, cursor }),
      { wrapper: wrapperFor(connection(server())), initialProps: { cursor: undefined as string | undefined } }
    )
    await waitFor(() => expect(result.current.hasMore).toBe(true))
    rerender({ cursor: result.current.nextCursor })
    await waitFor(() => expect(result.current.threads.map((thread) => thread.name)).toEqual(["a"]))
    expect(result.current).toMatchObject({ hasMore: false, nextCursor: undefined })
  })

  it("reports a failed read", async () => {
    const { result } = renderHook(() => useTamboThreadList(), {
      wrapper: wrapperFor(connection(server(), { apiKey: "wrong-key" }))
    })
    await waitFor(() => expect(result.current.isError).toBe(true))
    expect(result.current.error).toMatchObject({ _tag: "ApiError", status: 403 })
    expect(result.current.threads).toEqual([])
  })
})

describe("useTamboThread", () => {
  it("loads a thread the client does not know, then follows it live", async () => {
    const seeded = server().threads.create({
      userKey: "user-1",
      name: "Old chat",
      messages: [{ role: "user", content: "Hello" }, { role: "assistant", content: "Hi!" }]
    })
    server().setScript([Script.text("Again")])
    const { result } = renderHook(() => ({ thread: useTamboThread(seeded.id), tambo: useTambo() }), {
      wrapper: wrapperFor(connection(server()))
    })
    expect(result.current.thread.isLoading).toBe(true)
    expect(result.current.thread).toMatchObject({ status: "pending", isPending: true, isFetching: true, data: undefined })
    await waitFor(() => expect(result.current.thread.thread?.messages).toHaveLength(2))
    expect(result.current.thread.thread?.name).toBe("Old chat")
    expect(result.current.thread.isLoading).toBe(false)
    expect(result.current.thread).toMatchObject({ status: "success", isSuccess: true, isPending: false })
    expect(result.current.thread.data).toBe(result.current.thread.thread)
    // Not the current thread: loading it did not switch to it.
    expect(result.current.tambo.currentThreadId).not.toBe(seeded.id)

    // A run on it shows up.
    await result.current.tambo.sendMessage("Once more", { threadId: seeded.id }).thread
    await waitFor(() => expect(result.current.thread.thread?.messages).toHaveLength(4))
    expect(result.current.thread.streamingState?.status).toBe("idle")
  })

  it("a read the client's state does not take (the thread renamed meanwhile) ends in success with the thread read", async () => {
    const seeded = server().threads.create({
      userKey: "user-1",
      name: "Old chat",
      messages: [{ role: "user", content: "Hello" }, { role: "assistant", content: "Hi!" }]
    })
    const proxy = await holdingProxy(server().url)
    const read = proxy.holdRequest((request) => request.method === "GET" && request.url.startsWith(`/v1/threads/${seeded.id}?`))
    const { result } = renderHook(() => ({ thread: useTamboThread(seeded.id), tambo: useTambo() }), {
      wrapper: wrapperFor(connection(server(), { tamboUrl: proxy.url }))
    })
    await read.arrived
    // The rename is newer than the read: the client does not take the read's copy into its state.
    await result.current.tambo.updateThreadName(seeded.id, "New name")
    read.release()
    await waitFor(() => expect(result.current.thread.isFetching).toBe(false))
    expect(result.current.thread).toMatchObject({ status: "success", isSuccess: true, isPending: false, isError: false })
    expect(result.current.thread.thread?.name).toBe("New name")
    expect(result.current.thread.thread?.messages).toHaveLength(2)
    expect(result.current.thread.data).toBe(result.current.thread.thread)
  })

  it("reports a thread that does not exist", async () => {
    const { result } = renderHook(() => useTamboThread("thr_missing"), { wrapper: wrapperFor(connection(server())) })
    await waitFor(() => expect(result.current.isError).toBe(true))
    expect(result.current.thread).toBeUndefined()
    expect(result.current.isLoading).toBe(false)
    expect(result.current).toMatchObject({ status: "error", isPending: false, isSuccess: false })
  })
})

describe("back on the page: what another tab changed shows", () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  /** The page becomes visible again, `ms` later. */
  const comeBackAfter = (ms: number) => {
    vi.setSystemTime(Date.now() + ms)
    document.dispatchEvent(new Event("visibilitychange"))
  }

  /** Another tab of the same user. */
  const otherTab = () =>
    new TamboClient({ apiKey: server().apiKey, tamboUrl: server().url, userKey: "user-1", maxRetries: 0, autoGenerateThreadName: false })

  it("the thread list is read again once it is older than 5 s, not before", async () => {
    vi.useFakeTimers({ toFake: ["Date"] })
    server().threads.create({ userKey: "user-1", name: "First" })
    const { result } = renderHook(() => useTamboThreadList(), { wrapper: wrapperFor(connection(server())) })
    await waitFor(() => expect(result.current.threads.map((t) => t.name)).toEqual(["First"]))
    server().threads.create({ userKey: "user-1", name: "From another tab" })
    const reads = () => server().requests.filter((r) => r.method === "GET" && r.path === "/v1/threads").length
    comeBackAfter(1_000)
    expect(reads()).toBe(1)
    comeBackAfter(5_000)
    await waitFor(() => expect(result.current.threads.map((t) => t.name)).toEqual(["From another tab", "First"]))
    expect(reads()).toBe(2)
  })

  it("a thread is read again: another tab's run on it shows; its deletion too", async () => {
    vi.useFakeTimers({ toFake: ["Date"] })
    const seeded = server().threads.create({ userKey: "user-1", name: "Shared", messages: [{ role: "user", content: "Hello" }] })
    server().setScript([Script.text("Answered elsewhere")])
    const { result } = renderHook(() => useTamboThread(seeded.id), { wrapper: wrapperFor(connection(server())) })
    await waitFor(() => expect(result.current.thread?.messages).toHaveLength(1))
    const other = otherTab()
    try {
      await other.run("From the other tab", { threadId: seeded.id }).thread
      comeBackAfter(2_000)
      await waitFor(() => expect(result.current.thread?.messages).toHaveLength(3))
      await other.deleteThread(seeded.id)
      comeBackAfter(2_000)
      await waitFor(() => expect(result.current.thread).toBeUndefined())
    } finally {
      await other.destroy()
    }
  })
})

describe("TanStack Query's options, as upstream's thread hooks take them", () => {
  const threadReads = (threadId: string) => server().requests.filter((r) => r.method === "GET" && r.path === `/v1/threads/${threadId}`).length
  const listReads = () => server().requests.filter((r) => r.method === "GET" && r.path === "/v1/threads").length

  it("enabled: false reads nothing", async () => {
    const seeded = server().threads.create({ userKey: "user-1", name: "Quiet" })
    const { result } = renderHook(
      () => ({ list: useTamboThreadList({}, { enabled: false }), thread: useTamboThread(seeded.id, { enabled: false }) }),
      { wrapper: wrapperFor(connection(server())) }
    )
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(listReads()).toBe(0)
    expect(threadReads(seeded.id)).toBe(0)
    expect(result.current.list.isEnabled).toBe(false)
    expect(result.current.thread.thread).toBeUndefined()
  })

  it("refetchInterval reads again while mounted: another tab's thread and messages show", async () => {
    const seeded = server().threads.create({ userKey: "user-1", name: "Shared", messages: [{ role: "user", content: "Hello" }] })
    server().setScript([Script.text("From elsewhere")])
    const { result, unmount } = renderHook(
      () => ({ list: useTamboThreadList({}, { refetchInterval: 40 }), thread: useTamboThread(seeded.id, { refetchInterval: 40 }) }),
      { wrapper: wrapperFor(connection(server())) }
    )
    await waitFor(() => expect(result.current.thread.thread?.messages).toHaveLength(1))
    const other = new TamboClient({ apiKey: server().apiKey, tamboUrl: server().url, userKey: "user-1", maxRetries: 0, autoGenerateThreadName: false })
    try {
      await other.run("Hi from the other tab", { threadId: seeded.id }).thread
      const made = await other.run("A new one").thread
      await waitFor(() => expect(result.current.thread.thread?.messages).toHaveLength(3))
      await waitFor(() => expect(result.current.list.threads.map((t) => t.id)).toContain(made.id))
    } finally {
      await other.destroy()
    }
    const atUnmount = listReads()
    unmount()
    // Unmounted: no more reads. One in flight at the unmount may still arrive; polling every 40 ms
    // would have made several in this time.
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(listReads() - atUnmount).toBeLessThanOrEqual(1)
  })

  it("refetchOnWindowFocus: false, and staleTime, decide what the page coming back reads", async () => {
    vi.useFakeTimers({ toFake: ["Date"] })
    try {
      server().threads.create({ userKey: "user-1", name: "First" })
      const { result } = renderHook(
        () => ({ quiet: useTamboThreadList({ limit: 5 }, { refetchOnWindowFocus: false }), eager: useTamboThreadList({ limit: 6 }, { staleTime: 0 }) }),
        { wrapper: wrapperFor(connection(server())) }
      )
      await waitFor(() => expect(result.current.quiet.isSuccess && result.current.eager.isSuccess).toBe(true))
      const reads = listReads()
      vi.setSystemTime(Date.now() + 1)
      document.dispatchEvent(new Event("visibilitychange"))
      // Only the eager one (stale at once) reads again.
      await waitFor(() => expect(listReads()).toBe(reads + 1))
      await new Promise((resolve) => setTimeout(resolve, 30))
      expect(listReads()).toBe(reads + 1)
    } finally {
      vi.useRealTimers()
    }
  })
})

describe("a new conversation's local thread id, once the server named its thread", () => {
  it("useTamboThread and useTamboRunStatus show the thread it became, live, without reading the local id from the API", async () => {
    server().setScript([Script.text("named..."), Script.hang()])
    const proxy = await holdingProxy(server())
    const client = makeClient(server(), { tamboUrl: proxy.url })
    const { localId, stream, threadId } = await runMovedToLocalThread(client, proxy, () => client.run("first conversation"))
    const { result } = renderHook(() => ({ thread: useTamboThread(localId), status: useTamboRunStatus(localId) }), {
      wrapper: wrapperFor({ client })
    })
    await waitFor(() => expect(result.current.thread.thread?.messages).toHaveLength(2))
    expect(result.current.thread).toMatchObject({ status: "success", isSuccess: true, isError: false })
    expect(result.current.thread.thread?.id).toBe(threadId)
    expect(result.current.thread.streamingState?.status).toBe("streaming")
    expect(result.current.status).toBe("streaming")
    await client.cancelRun(localId)
    await stream.thread.catch(() => undefined)
    await waitFor(() => expect(result.current.status).toBe("idle"))
    expect(result.current.thread.thread?.id).toBe(threadId)
    expect(server().requests.filter((request) => request.path.includes(localId))).toEqual([])
  })

  it("useTamboThread given it once its thread was forgotten reports an error, as for a thread that does not exist, and asks the API nothing", async () => {
    server().setScript([Script.text("first.")])
    const proxy = await holdingProxy(server())
    const client = makeClient(server(), { tamboUrl: proxy.url })
    const { localId, stream } = await runMovedToLocalThread(client, proxy, () => client.run("first conversation"))
    await stream.thread
    client.forgetThread(localId)
    const { result } = renderHook(() => useTamboThread(localId), { wrapper: wrapperFor({ client }) })
    await waitFor(() => expect(result.current.isError).toBe(true))
    expect(result.current.error).toMatchObject({ name: "ConfigError", reason: "InvalidOption" })
    expect(String(result.current.error?.message)).toMatch(/holds no thread of/)
    expect(result.current).toMatchObject({ status: "error", isPending: false, isSuccess: false, isLoading: false, thread: undefined })
    expect(server().requests.filter((request) => request.path.includes(localId))).toEqual([])
  })
})
