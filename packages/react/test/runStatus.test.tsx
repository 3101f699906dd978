// @vitest-environment happy-dom
import { render, renderHook, screen, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import {
  type TamboComponent,
  TamboProvider,
  type TamboTool,
  useTambo,
  useTamboRunStatus,
  useTamboSelector,
  useTamboStreamStatus
} from "../src/index.js"
import { waitsAfterRead } from "../src/internal/followShownRun.js"
import { clientFor, connection, holdingProxy, otherClientRunning, sleep, useServer, wrapperFor } from "./helpers.js"

const server = useServer()

const toolRoundScript = () =>
  server().setScript((request) =>
    request.toolResults.length === 0
      ? [Script.text("Checking. "), Script.toolCall("get_weather", { city: "Paris" })]
      : [Script.text(`Result: ${request.toolResults[0]!.text}`)]
  )

/** A weather tool that answers only once released: the run's tool round lasts as long as the test wants. */
const heldWeather = () => {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let called = false
  const tool: TamboTool<{ readonly city: string }> = {
    name: "get_weather",
    description: "Current weather in a city",
    inputSchema: Schema.Struct({ city: Schema.String }),
    tool: async ({ city }) => {
      called = true
      await released
      return { city, temperature: 12 }
    }
  }
  return { tool, release, called: () => called }
}

const useAll = () => ({
  status: useTamboRunStatus(),
  stored: useTamboSelector((state) => state.threadMap[state.currentThreadId]?.streaming.status ?? "idle"),
  tambo: useTambo()
})

/** How many times the server was asked for thread `id`. */
const readsOf = (id: string) => () =>
  server().requests.filter((r) => r.method === "GET" && r.path === `/v1/threads/${id}`).length

/** `useTambo` in `options`' provider, switched to thread `id`, where a read shows another client's run. */
const showingOtherRun = async (id: string, options: Parameters<typeof wrapperFor>[0]) => {
  const hook = renderHook(() => useTambo(), { wrapper: wrapperFor(options) })
  await hook.result.current.switchThread(id)
  await waitFor(() => expect(hook.result.current.isIdle).toBe(false))
  return hook
}

/**
 * Another client's run going on a thread this provider shows, read through a holding proxy:
 * `isRead` matches the provider's reads of the thread, `reads` counts them.
 */
const otherRunBehindProxy = async () => {
  const { other, id, busy } = await otherClientRunning(server(), [Script.text("Working")])
  await waitFor(() => expect(server().threads.get(id)?.runStatus).toBe("streaming"))
  const proxy = await holdingProxy(server())
  const isRead = (request: { readonly method: string; readonly path: string }) =>
    request.method === "GET" && request.path === `/v1/threads/${id}`
  const { result } = await showingOtherRun(id, connection(server(), { tamboUrl: proxy.url }))
  return { other, id, busy, proxy, isRead, result, reads: readsOf(id) }
}

describe("useTamboRunStatus", () => {
  it("is never idle during a run, its tool round included, though the state says idle between the steps", async () => {
    toolRoundScript()
    const weather = heldWeather()
    const statuses: Array<string> = []
    const { result } = renderHook(() => {
      const all = useAll()
      statuses.push(all.status)
      return all
    }, { wrapper: wrapperFor(connection(server(), { tools: [weather.tool] })) })
    expect(result.current.status).toBe("idle")

    const stream = result.current.tambo.sendMessage("weather?")
    await waitFor(() => expect(weather.called()).toBe(true))
    // The first step finished on the server: the state says idle while the tool runs.
    await waitFor(() => expect(result.current.stored).toBe("idle"))
    expect(result.current.status).toBe("waiting")
    expect(result.current.tambo.isIdle).toBe(false)
    expect(result.current.tambo.isWaiting).toBe(true)

    weather.release()
    await stream.thread
    await waitFor(() => expect(result.current.status).toBe("idle"))
    expect(result.current.tambo.isIdle).toBe(true)
    // idle, then never idle again until the run's end.
    const firstBusy = statuses.findIndex((status) => status !== "idle")
    const lastBusy = statuses.length - 1 - [...statuses].reverse().findIndex((status) => status !== "idle")
    expect(firstBusy).toBeGreaterThan(0)
    expect(statuses.slice(firstBusy, lastBusy + 1)).not.toContain("idle")
    expect(statuses.at(-1)).toBe("idle")
  })

  it("follows a given thread, and is idle for one without a run", async () => {
    server().setScript([Script.text("Hi")])
    const { result } = renderHook(() => ({ tambo: useTambo(), other: useTamboRunStatus("thr_other") }), {
      wrapper: wrapperFor(connection(server()))
    })
    await result.current.tambo.sendMessage("hello").thread
    expect(result.current.other).toBe("idle")
  })

  it("shows another client's run a read found streaming: not idle, and its component still streaming, not failed", async () => {
    // The other client's reply: its component is stored (with a first prop) and the server then holds the run.
    const { other, id, busy } = await otherClientRunning(server(), [Script.text("Here:"), Script.component("Card", { title: "t" })])
    await waitFor(() =>
      expect(server().threads.get(id)?.messages.at(-1)?.content.some((c) => c.type === "component")).toBe(true)
    )
    const statuses: { current?: ReturnType<typeof useAll> } = {}
    function Card() {
      const { streamStatus } = useTamboStreamStatus()
      return <div data-testid="card" data-error={String(streamStatus.isError)} data-streaming={String(streamStatus.isStreaming || streamStatus.isPending)} />
    }
    const card: TamboComponent = {
      name: "Card",
      description: "A card",
      propsSchema: { type: "object", properties: { title: { type: "string" } } },
      component: Card
    }
    function App() {
      const all = useAll()
      statuses.current = all
      return <>{all.tambo.messages.map((message) => message.content.map((block, i) => block.type === "component" ? <div key={`${message.id}${i}`}>{block.renderedComponent}</div> : null))}</>
    }
    render(<TamboProvider {...connection(server(), { components: [card] })}><App /></TamboProvider>)
    await statuses.current!.tambo.switchThread(id)
    await waitFor(() => expect(statuses.current!.tambo.thread?.thread.status).toBe("streaming"))
    expect(statuses.current!.status).toBe("streaming")
    expect(statuses.current!.tambo.isIdle).toBe(false)
    expect(statuses.current!.tambo.isStreaming).toBe(true)
    const shown = await screen.findByTestId("card")
    expect(shown.dataset["error"]).toBe("false")
    expect(shown.dataset["streaming"]).toBe("true")

    await other.cancelRun(id)
    await busy.thread.catch(() => undefined)
    await statuses.current!.tambo.client.fetchThread(id)
    await waitFor(() => expect(statuses.current!.tambo.isIdle).toBe(true))
    await other.destroy()
  })
  it("a read while another client's run starts, before the server stored its message, shows the run but not the reply before it as streaming", async () => {
    const other = clientFor(server())
    server().setScript([Script.text("Here:"), Script.component("Card", { title: "old" })])
    const { id } = await other.run("one").thread
    const statuses: { current?: ReturnType<typeof useAll> } = {}
    function Card({ title }: { readonly title?: string }) {
      const { streamStatus } = useTamboStreamStatus()
      return <div data-testid={`card-${title}`} data-success={String(streamStatus.isSuccess)} data-streaming={String(streamStatus.isStreaming || streamStatus.isPending)} />
    }
    const card: TamboComponent = {
      name: "Card",
      description: "A card",
      propsSchema: { type: "object", properties: { title: { type: "string" } } },
      component: Card,
      loadingComponent: () => <div data-testid="card-loading" />
    }
    function App() {
      const all = useAll()
      statuses.current = all
      return <>{all.tambo.messages.map((message) => message.content.map((block, i) => block.type === "component" ? <div key={`${message.id}${i}`}>{block.renderedComponent}</div> : null))}</>
    }
    render(<TamboProvider {...connection(server(), { components: [card] })}><App /></TamboProvider>)
    await statuses.current!.tambo.switchThread(id)
    expect((await screen.findByTestId("card-old")).dataset["success"]).toBe("true")

    // The other client's next run: the server took it, and holds it before storing its user message.
    let answer!: () => void
    const answered = new Promise<void>((resolve) => (answer = resolve))
    server().setScript(Script.beforeUserMessage(async () => {
      await answered
      return [Script.text("New:"), Script.component("Card", { title: "new" })]
    }))
    const busy = other.run("two", { threadId: id })
    await waitFor(() => expect(server().threads.get(id)?.runStatus).toBe("streaming"))
    expect(server().threads.get(id)?.messages.at(-1)?.role).toBe("assistant")

    await statuses.current!.tambo.client.fetchThread(id)
    await waitFor(() => expect(statuses.current!.tambo.isIdle).toBe(false))
    expect(screen.queryByTestId("card-loading")).toBeNull()
    const old = screen.getByTestId("card-old")
    expect(old.dataset["success"]).toBe("true")
    expect(old.dataset["streaming"]).toBe("false")

    answer()
    await busy.thread
    await statuses.current!.tambo.client.fetchThread(id)
    await waitFor(() => expect(statuses.current!.tambo.isIdle).toBe(true))
    expect((await screen.findByTestId("card-new")).dataset["success"]).toBe("true")
    expect(screen.getByTestId("card-old").dataset["success"]).toBe("true")
    await other.destroy()
  })
  it("follows another client's run a read showed: once it ends on the server the thread is read again, and isIdle turns true with no read by the app", async () => {
    const { other, id, busy } = await otherClientRunning(server(), [Script.text("Working")])
    await waitFor(() => expect(server().threads.get(id)?.runStatus).toBe("streaming"))
    const { result } = await showingOtherRun(id, connection(server()))
    const reads = readsOf(id)
    const readsWhileShown = reads()

    await other.cancelRun(id)
    await busy.thread.catch(() => undefined)
    await waitFor(() => expect(result.current.isIdle).toBe(true), { timeout: 10_000 })
    expect(reads()).toBeGreaterThan(readsWhileShown)
    expect(result.current.thread?.thread.status).toBe("idle")
    expect(result.current.messages.at(-1)?.content).toEqual(server().threads.get(id)?.messages.at(-1)?.content)
    await other.destroy()
  })
  it("a read again the API refuses as unauthorized (401) stops the reads again until the page shows again or the thread changes; its run is then followed to its end", async () => {
    const { other, id, busy, proxy, isRead, result, reads } = await otherRunBehindProxy()

    // The first read again is refused; the one after it would come two seconds later.
    const refused = proxy.holdRequest(isRead)
    refused.fail(401, { message: "Unauthorized" })
    await refused.arrived
    const afterRefusal = reads()
    await sleep(3_500)
    expect(reads()).toBe(afterRefusal)
    expect(result.current.isIdle).toBe(false)

    // The page shows again: the reads start over, and the next one is refused too.
    const refusedAgain = proxy.holdRequest(isRead)
    refusedAgain.fail(401, { message: "Unauthorized" })
    document.dispatchEvent(new Event("visibilitychange"))
    await refusedAgain.arrived
    // The thread changes (the app renames it): the reads again start over.
    await result.current.client.updateThreadName(id, "Renamed")
    const afterRename = reads()
    await waitFor(() => expect(reads()).toBeGreaterThan(afterRename), { timeout: 5_000 })
    await other.cancelRun(id)
    await busy.thread.catch(() => undefined)
    await waitFor(() => expect(result.current.isIdle).toBe(true), { timeout: 10_000 })
    await other.destroy()
  })

  it("a read again the API answers with 429 and a Retry-After waits that long before the next, and the run is then followed to its end", async () => {
    const { other, id, busy, proxy, isRead, result, reads } = await otherRunBehindProxy()

    // The first read again is rate limited for four seconds; without it the next would come after two.
    const limited = proxy.holdRequest(isRead)
    limited.fail(429, { message: "Too many requests" }, { "retry-after": "4" })
    await limited.arrived
    const afterLimit = reads()
    await sleep(3_000)
    expect(reads()).toBe(afterLimit)
    expect(result.current.isIdle).toBe(false)

    await waitFor(() => expect(reads()).toBeGreaterThan(afterLimit), { timeout: 5_000 })
    await other.cancelRun(id)
    await busy.thread.catch(() => undefined)
    await waitFor(() => expect(result.current.isIdle).toBe(true), { timeout: 10_000 })
    await other.destroy()
  })

  describe("the waits between reads again", () => {
    const passed = { _tag: "Passed" } as const
    const failed = (retryAfter?: number) => ({ _tag: "Failed", retryAfter }) as const
    const delays = (from: number, reads: ReadonlyArray<Parameters<typeof waitsAfterRead>[1]>) => {
      let wait = from
      return reads.map((read) => {
        const waits = waitsAfterRead(wait, read)
        wait = waits.wait
        return waits.delay
      })
    }

    it("reads that pass double the wait up to eight seconds", () => {
      expect(delays(1_000, [passed, passed, passed, passed, passed])).toEqual([2_000, 4_000, 8_000, 8_000, 8_000])
    })
    it("reads that fail in a row (a network error, a 5xx) double it on up to thirty seconds, and one that passes brings it back within eight", () => {
      expect(delays(1_000, [failed(), failed(), failed(), failed(), failed(), failed(), passed, passed]))
        .toEqual([2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 8_000, 8_000])
    })
    it("a Retry-After is the next wait, from a second up to a minute, and the backoff goes on after it", () => {
      expect(delays(1_000, [failed(5_000), failed()])).toEqual([5_000, 4_000])
      expect(delays(1_000, [failed(3_600_000)])).toEqual([60_000])
      expect(delays(1_000, [failed(0)])).toEqual([1_000])
      expect(delays(8_000, [failed(500), passed])).toEqual([1_000, 8_000])
    })
  })

  it("a thread the other client deleted while its run showed leaves the state at the next read again, and the reads stop", async () => {
    const { other, id, busy } = await otherClientRunning(server(), [Script.text("Working")])
    await waitFor(() => expect(server().threads.get(id)?.runStatus).toBe("streaming"))
    const { result } = await showingOtherRun(id, connection(server()))
    const reads = readsOf(id)

    await other.deleteThread(id)
    await busy.thread.catch(() => undefined)
    await waitFor(() => expect(result.current.client.getState().threadMap[id]).toBeUndefined(), { timeout: 5_000 })
    const afterLeaving = reads()
    await sleep(3_500)
    expect(reads()).toBe(afterLeaving)
    await other.destroy()
  })
  it("stops reading the thread again once the provider unmounts, though another client's run still shows on it and the app keeps its client", async () => {
    const { other, id, busy } = await otherClientRunning(server(), [Script.text("Working")])
    await waitFor(() => expect(server().threads.get(id)?.runStatus).toBe("streaming"))
    // The app's own client outlives the provider: only the provider's unmount can stop the reads.
    const client = clientFor(server())
    const { unmount } = await showingOtherRun(id, { client })
    const reads = readsOf(id)
    // One read again while it shows, then the unmount: the next would come after two seconds.
    const shown = reads()
    await waitFor(() => expect(reads()).toBeGreaterThan(shown), { timeout: 5_000 })
    unmount()
    const atUnmount = reads()
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    expect(reads()).toBe(atUnmount)
    await other.cancelRun(id)
    await busy.thread.catch(() => undefined)
    await Promise.all([client.destroy(), other.destroy()])
  })
})
