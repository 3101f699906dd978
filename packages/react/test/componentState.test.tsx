// @vitest-environment happy-dom
import { act, fireEvent, render, renderHook, screen, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import {
  TamboClient,
  type TamboComponent,
  TamboProvider,
  useTambo,
  useTamboClient,
  useTamboComponentState
} from "../src/index.js"
import { connection, isDestroyed, sleep, until, useServer, wrapperFor } from "./helpers.js"

const server = useServer()

function StarView({ title }: { readonly title?: string }) {
  const [favourite, setFavourite, { error, isPending }] = useTamboComponentState("favourite", false, 20)
  const [note, setNote] = useTamboComponentState("note", "", 20)
  return (
    <div>
      <button type="button" data-testid="star" aria-pressed={favourite} onClick={() => setFavourite((f) => !f)}>
        {title}
      </button>
      <button type="button" data-testid="note" onClick={() => setNote("rainy")}>{note}</button>
      <span data-testid="pending">{String(isPending)}</span>
      <span data-testid="error">{error?.message ?? ""}</span>
    </div>
  )
}

const Star: TamboComponent<{ readonly title?: string }> = {
  name: "Star",
  description: "A card one can star",
  propsSchema: { type: "object", properties: { title: { type: "string" } } },
  component: StarView
}

/** Renders the current thread's components. */
const Blocks = () => {
  const { messages } = useTambo()
  return <>{messages.flatMap((m) => m.content.flatMap((b) => (b.type === "component" ? [<div key={b.id}>{b.renderedComponent}</div>] : [])))}</>
}

const mountChat = () => {
  const Wrapper = wrapperFor(connection(server(), { components: [Star] }))
  return renderHook(() => ({ tambo: useTambo(), client: useTamboClient() }), {
    wrapper: ({ children }) => (
      <Wrapper>
        <Blocks />
        {children}
      </Wrapper>
    )
  })
}

const serverState = (threadId: string) =>
  server().threads.get(threadId)?.messages.flatMap((m) => m.content).find((b) => b.type === "component")?.state

const statePosts = (threadId: string) =>
  server().requests.filter((r) => r.method === "POST" && r.path === `/v1/threads/${threadId}/components/comp_star/state`)

describe("useTamboComponentState", () => {
  it("sends a change after the debounce, one key at a time, and shows it at once", async () => {
    server().setScript([Script.component("Star", { title: "Paris" }, { id: "comp_star" })])
    const { result } = mountChat()
    const { id: threadId } = await result.current.tambo.sendMessage("a card").thread
    await screen.findByTestId("star")
    expect(screen.getByTestId("star").getAttribute("aria-pressed")).toBe("false")

    fireEvent.click(screen.getByTestId("star"))
    fireEvent.click(screen.getByTestId("note"))
    expect(screen.getByTestId("star").getAttribute("aria-pressed")).toBe("true")
    expect(screen.getByTestId("pending").textContent).toBe("true")
    await waitFor(() => expect(serverState(threadId)).toEqual({ favourite: true, note: "rainy" }))
    await waitFor(() => expect(screen.getByTestId("pending").textContent).toBe("false"))
    const posts = server().requests.filter((r) => r.method === "POST" && r.path === `/v1/threads/${threadId}/components/comp_star/state`)
    expect(posts.map((r) => r.body)).toEqual([
      { userKey: "user-1", patch: [{ op: "add", path: "/favourite", value: true }] },
      { userKey: "user-1", patch: [{ op: "add", path: "/note", value: "rainy" }] }
    ])
    // The store's block has it too.
    const block = result.current.tambo.messages.flatMap((m) => m.content).find((b) => b.type === "component")
    expect(block?.type === "component" && block.state).toEqual({ favourite: true, note: "rainy" })
  })

  it("debounces: quick changes send the last value once", async () => {
    server().setScript([Script.component("Star", { title: "Rome" }, { id: "comp_star" })])
    const { result } = mountChat()
    const { id: threadId } = await result.current.tambo.sendMessage("a card").thread
    await screen.findByTestId("star")
    for (let i = 0; i < 3; i++) fireEvent.click(screen.getByTestId("star"))
    await waitFor(() => expect(screen.getByTestId("pending").textContent).toBe("false"))
    const posts = server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/components/comp_star/state"))
    expect(posts.map((r) => r.body)).toEqual([{ userKey: "user-1", patch: [{ op: "add", path: "/favourite", value: true }] }])
    expect(serverState(threadId)).toEqual({ favourite: true })
  })

  it("starts from the stored state when the thread is loaded again, and follows the server's changes", async () => {
    server().setScript([Script.component("Star", { title: "Oslo" }, { id: "comp_star", state: { favourite: true } })])
    const first = mountChat()
    const { id: threadId } = await first.result.current.tambo.sendMessage("a card").thread
    first.unmount()

    // A reload: a new provider loads the thread from the server.
    const { result } = mountChat()
    await act(() => result.current.client.switchThread(threadId))
    await screen.findByTestId("star")
    expect(screen.getByTestId("star").getAttribute("aria-pressed")).toBe("true")

    // Someone else (another tab, through the facade) changes it: the component follows.
    await act(() => result.current.client.updateComponentState(threadId, "comp_star", { state: { favourite: false } }))
    await waitFor(() => expect(screen.getByTestId("star").getAttribute("aria-pressed")).toBe("false"))
  })

  it("shows a failed change as its error, keeping the value", async () => {
    server().setScript([Script.component("Star", { title: "Lima" }, { id: "comp_star" })])
    const { result } = mountChat()
    const { id: threadId } = await result.current.tambo.sendMessage("a card").thread
    await screen.findByTestId("star")
    // The API refuses a change while a run is active on the thread: here another tab's.
    server().setScript([Script.hang()])
    const otherTab = new TamboClient({ apiKey: server().apiKey, tamboUrl: server().url, userKey: "user-1", maxRetries: 0 })
    const busy = otherTab.run("wait", { threadId })
    await until(() => server().threads.get(threadId)?.runStatus !== "idle", "the other tab's run to start")
    fireEvent.click(screen.getByTestId("star"))
    await waitFor(() => expect(screen.getByTestId("error").textContent).toContain("run is active"))
    expect(screen.getByTestId("star").getAttribute("aria-pressed")).toBe("true")
    expect(screen.getByTestId("pending").textContent).toBe("false")
    await otherTab.cancelRun(threadId)
    await busy.thread.catch(() => undefined)
    await otherTab.destroy()
  })

  it("a change made while a run of the client is in flight on the thread waits for its end, pending, then reaches the server", async () => {
    server().setScript([Script.component("Star", { title: "Lima" }, { id: "comp_star" })])
    const { result } = mountChat()
    const { id: threadId } = await result.current.tambo.sendMessage("a card").thread
    await screen.findByTestId("star")
    server().setScript([Script.text("Thinking"), Script.hang()])
    const busy = result.current.client.run("wait", { threadId })
    await waitFor(() => expect(result.current.tambo.isStreaming).toBe(true))
    fireEvent.click(screen.getByTestId("star"))
    // Well past the debounce: nothing was sent, for the server would refuse it.
    await act(() => sleep(100))
    expect(statePosts(threadId)).toHaveLength(0)
    expect(screen.getByTestId("pending").textContent).toBe("true")
    expect(screen.getByTestId("error").textContent).toBe("")

    // The run ends (here the user stops it): the change goes, once.
    await act(() => result.current.client.cancelRun(threadId))
    await busy.thread.catch(() => undefined)
    await waitFor(() => expect(serverState(threadId)).toEqual({ favourite: true }))
    await waitFor(() => expect(screen.getByTestId("pending").textContent).toBe("false"))
    expect(screen.getByTestId("error").textContent).toBe("")
    expect(screen.getByTestId("star").getAttribute("aria-pressed")).toBe("true")
    expect(statePosts(threadId)).toHaveLength(1)
    const block = result.current.tambo.messages.flatMap((m) => m.content).find((b) => b.type === "component")
    expect(block?.type === "component" && block.state).toEqual({ favourite: true })
  })

  it("a change waiting for the client's run when the whole provider unmounts: the run is cancelled, then the change reaches the server", async () => {
    server().setScript([Script.component("Star", { title: "Oslo" }, { id: "comp_star" })])
    const { result, unmount } = mountChat()
    const { id: threadId } = await result.current.tambo.sendMessage("a card").thread
    await screen.findByTestId("star")
    const client = result.current.client
    server().setScript([Script.text("Thinking"), Script.hang()])
    const busy = client.run("wait", { threadId })
    await waitFor(() => expect(result.current.tambo.isStreaming).toBe(true))
    fireEvent.click(screen.getByTestId("star"))
    await act(() => sleep(100))
    expect(statePosts(threadId)).toHaveLength(0)

    // The chat is closed: as at any unmount, its client goes and its run is cancelled.
    unmount()
    await expect(busy.thread).rejects.toMatchObject({ _tag: "AbortError" })
    await until(() => isDestroyed(client), "the client to be destroyed")
    await waitFor(() => expect(serverState(threadId)).toEqual({ favourite: true }))
    expect(server().threads.get(threadId)?.runStatus).toBe("idle")
    expect(statePosts(threadId)).toHaveLength(1)
  })

  it("a change waiting for a run of the app's client when the app destroys that client stays pending, no error, and reaches the server through the app's next client", async () => {
    const first = new TamboClient({ apiKey: server().apiKey, tamboUrl: server().url, userKey: "user-1", maxRetries: 0 })
    const second = new TamboClient({ apiKey: server().apiKey, tamboUrl: server().url, userKey: "user-1", maxRetries: 0 })
    const App = ({ client }: { readonly client: TamboClient }) => (
      <TamboProvider client={client} components={[Star]}>
        <Blocks />
      </TamboProvider>
    )
    server().setScript([Script.component("Star", { title: "Rome" }, { id: "comp_star" })])
    const view = render(<App client={first} />)
    const { id: threadId } = await first.run("a card").thread
    await screen.findByTestId("star")
    server().setScript([Script.text("Thinking"), Script.hang()])
    const busy = first.run("wait", { threadId })
    await until(() => first.hasActiveRun(threadId), "the run to start")
    fireEvent.click(screen.getByTestId("star"))
    await act(() => sleep(100))
    expect(screen.getByTestId("pending").textContent).toBe("true")

    // The app replaces its client while the change waits for the client's run: it awaits the
    // old one's end, then gives the new one.
    await act(() => first.destroy())
    await expect(busy.thread).rejects.toMatchObject({ _tag: "AbortError" })
    await act(() => sleep(0))
    expect(screen.getByTestId("pending").textContent).toBe("true")
    expect(screen.getByTestId("error").textContent).toBe("")
    expect(statePosts(threadId)).toHaveLength(0)

    await act(() => second.switchThread(threadId))
    view.rerender(<App client={second} />)
    await waitFor(() => expect(serverState(threadId)).toEqual({ favourite: true }))
    await waitFor(() => expect(screen.getByTestId("pending").textContent).toBe("false"))
    expect(screen.getByTestId("error").textContent).toBe("")
    expect(screen.getByTestId("star").getAttribute("aria-pressed")).toBe("true")
    expect(statePosts(threadId)).toHaveLength(1)

    // The user's next change goes through the new client too.
    fireEvent.click(screen.getByTestId("star"))
    await waitFor(() => expect(serverState(threadId)).toEqual({ favourite: false }))
    await waitFor(() => expect(screen.getByTestId("pending").textContent).toBe("false"))
    expect(screen.getByTestId("error").textContent).toBe("")
    expect(statePosts(threadId)).toHaveLength(2)
    await second.destroy()
  })

  it("sends a waiting change when the whole provider unmounts, before its client goes", async () => {
    server().setScript([Script.component("Star", { title: "Quito" }, { id: "comp_star" })])
    const { result, unmount } = mountChat()
    const { id: threadId } = await result.current.tambo.sendMessage("a card").thread
    await screen.findByTestId("star")
    const client = result.current.client
    fireEvent.click(screen.getByTestId("star"))
    // The page's use ends within the debounce: the chat is closed.
    unmount()
    await waitFor(() => expect(serverState(threadId)).toEqual({ favourite: true }))
    // Then the provider's client goes.
    await until(() => isDestroyed(client), "the client to be destroyed")
  })

  it("is a plain useState outside a rendered component", async () => {
    const { result } = renderHook(() => useTamboComponentState("count", 1, 0), { wrapper: wrapperFor(connection(server())) })
    act(() => result.current[1]((n) => n + 1))
    expect(result.current[0]).toBe(2)
    expect(result.current[2].isPending).toBe(false)
    await sleep(20)
    expect(server().requests).toHaveLength(0)
  })

  it("sends a waiting change when the component unmounts", async () => {
    server().setScript([Script.component("Star", { title: "Kyiv" }, { id: "comp_star" })])
    function SlowStar() {
      const [favourite, setFavourite] = useTamboComponentState("favourite", false, 60_000)
      return <button type="button" data-testid="slow" onClick={() => setFavourite(!favourite)}>{String(favourite)}</button>
    }
    const Wrapper = wrapperFor(connection(server(), {
      components: [{ name: "Star", description: "A card", propsSchema: { type: "object" }, component: SlowStar }]
    }))
    const view = render(<Wrapper><Blocks /></Wrapper>)
    const client = await new Promise<ReturnType<typeof useTamboClient>>((resolve) => {
      function Grab() {
        resolve(useTamboClient())
        return null
      }
      view.rerender(<Wrapper><Blocks /><Grab /></Wrapper>)
    })
    const { id: threadId } = await client.run("a card").thread
    fireEvent.click(await screen.findByTestId("slow"))
    await act(async () => {
      client.startNewThread()
    })
    await waitFor(() => expect(serverState(threadId)).toEqual({ favourite: true }))
  })
})
