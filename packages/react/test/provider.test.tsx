// @vitest-environment happy-dom
import { act, render, renderHook, screen, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { type ClientState, ConfigError, createInitialState, InMemoryStore, type TamboStore } from "@tambo-effect/client"
import { Activity, Component, type ReactNode, StrictMode, Suspense, use, useEffect, useState } from "react"
import { describe, expect, it, vi } from "vitest"
import {
  TamboClient,
  TamboProvider,
  TamboRegistryProvider,
  TamboThreadInputProvider,
  useTambo,
  useTamboClient,
  type UseTamboThreadInputReturn,
  useTamboThreadInput,
  useTamboThreadList
} from "../src/index.js"
import { createRoot } from "react-dom/client"
import { connection, countingProxy, isDestroyed, jwtFor, sleep, until, useServer, WeatherCard, weatherTool, wrapperFor } from "./helpers.js"

const server = useServer()

/** Records every client its renders saw. */
const ClientSpy = ({ seen }: { readonly seen: Set<TamboClient> }) => {
  seen.add(useTamboClient())
  useTambo()
  return null
}

/** Shows what its children threw. */
class Boundary extends Component<{ readonly children: ReactNode; readonly onError: (error: unknown) => void }, { readonly failed: boolean }> {
  override state = { failed: false }
  static getDerivedStateFromError() {
    return { failed: true }
  }
  override componentDidCatch(error: unknown) {
    this.props.onError(error)
  }
  override render() {
    return this.state.failed ? <p>failed</p> : this.props.children
  }
}

describe("TamboProvider", () => {
  it("without an apiKey, the error boundary gets a ConfigError naming apiKey", async () => {
    // React reports what a boundary caught on the console; that is expected here.
    const quiet = vi.spyOn(console, "error").mockImplementation(() => {})
    try {
      const caught: Array<unknown> = []
      const props = { userKey: "user-1", tamboUrl: server().url } as unknown as Parameters<typeof TamboProvider>[0]
      render(
        <Boundary onError={(error) => caught.push(error)}>
          <TamboProvider {...props}>
            <p>chat</p>
          </TamboProvider>
        </Boundary>
      )
      await screen.findByText("failed")
      expect(caught[0]).toBeInstanceOf(ConfigError)
      expect(caught[0]).toMatchObject({ _tag: "ConfigError", reason: "MissingApiKey" })
      expect((caught[0] as Error).message).toContain("apiKey")
    } finally {
      quiet.mockRestore()
    }
  })

  it("creates one client for its lifetime and destroys it on unmount", async () => {
    const seen = new Set<TamboClient>()
    const view = render(
      <TamboProvider {...connection(server())}>
        <ClientSpy seen={seen} />
      </TamboProvider>
    )
    view.rerender(
      <TamboProvider {...connection(server())}>
        <ClientSpy seen={seen} />
      </TamboProvider>
    )
    expect(seen.size).toBe(1)
    const [client] = [...seen]
    expect(isDestroyed(client!)).toBe(false)
    view.unmount()
    await sleep(0)
    expect(isDestroyed(client!)).toBe(true)
  })

  it("keeps a single live client under StrictMode's double render and double mount", async () => {
    const seen = new Set<TamboClient>()
    const view = render(
      <StrictMode>
        <TamboProvider {...connection(server())}>
          <ClientSpy seen={seen} />
        </TamboProvider>
      </StrictMode>
    )
    await sleep(10)
    // StrictMode rendered twice and mounted, unmounted and mounted again: still one client, alive.
    expect(seen.size).toBe(1)
    const [client] = [...seen]
    expect(isDestroyed(client!)).toBe(false)

    // And it works: a run updates the tree.
    const { result } = renderHook(() => useTambo(), {
      wrapper: ({ children }) => <StrictMode><TamboProvider {...connection(server())}>{children}</TamboProvider></StrictMode>
    })
    server().setScript([Script.text(["Hello", " there"])])
    result.current.sendMessage("Hi")
    await waitFor(() => expect(result.current.messages.at(-1)?.content).toEqual([{ type: "text", text: "Hello there" }]))
    const runs = server().requests.filter((request) => request.method === "POST" && request.path.endsWith("/runs"))
    expect(runs).toHaveLength(1)

    view.unmount()
    await sleep(0)
    expect(isDestroyed(client!)).toBe(true)
  })

  it("destroys the client of a render React threw away: a Suspense boundary's first render leaves one live client", async () => {
    const seen = new Set<TamboClient>()
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    const Gate = () => {
      use(gate)
      return <p>ready</p>
    }
    // Outside `act`, as an app renders: React then retries the boundary when the gate opens.
    const container = document.body.appendChild(document.createElement("div"))
    const root = createRoot(container)
    root.render(
      <Suspense fallback={<p>waiting</p>}>
        <TamboProvider {...connection(server())}>
          <ClientSpy seen={seen} />
          <Gate />
        </TamboProvider>
      </Suspense>
    )
    try {
      await screen.findByText("waiting")
      open()
      await screen.findByText("ready", undefined, { timeout: 5_000 })
      await sleep(0)
      // The first render was discarded with its provider: its client is gone, the committed one lives.
      expect(seen.size).toBeGreaterThan(1)
      expect([...seen].filter((client) => !isDestroyed(client))).toHaveLength(1)
    } finally {
      root.unmount()
      container.remove()
    }
    await sleep(0)
    expect([...seen].filter((client) => !isDestroyed(client))).toHaveLength(0)
  })

  it("a client of its own whose destroy fails is reported as a warning, not left as an unhandled rejection", async () => {
    // An app's store that fails to let go of the client's subscription: the client's release fails.
    const inner = new InMemoryStore(createInitialState())
    let subscriptions = 0
    const store: TamboStore<ClientState> = {
      getState: () => inner.getState(),
      setState: (state) => inner.setState(state),
      subscribe: (listener) => {
        const unsubscribe = inner.subscribe(listener)
        const first = ++subscriptions === 1
        return () => {
          unsubscribe()
          if (first) throw new Error("the store could not let go")
        }
      }
    }
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {})
    try {
      const seen = new Set<TamboClient>()
      const view = render(
        <TamboProvider {...connection(server(), { store })}>
          <ClientSpy seen={seen} />
        </TamboProvider>
      )
      const [client] = [...seen]
      const destroyed = new Promise<void>((resolve) => client!.subscribeToDestroy(resolve))
      view.unmount()
      await destroyed
      await sleep(0)
      expect(isDestroyed(client!)).toBe(true)
      expect(warn).toHaveBeenCalledTimes(1)
      expect(String(warn.mock.calls[0]?.at(-1))).toContain("the store could not let go")
    } finally {
      warn.mockRestore()
    }
  })

  it("uses a given client and leaves its lifetime to the app", async () => {
    const client = new TamboClient({ apiKey: server().apiKey, tamboUrl: server().url, userKey: "user-1", maxRetries: 0 })
    const { result, unmount } = renderHook(() => useTamboClient(), { wrapper: wrapperFor({ client }) })
    expect(result.current).toBe(client)
    unmount()
    await sleep(0)
    expect(isDestroyed(client)).toBe(false)
    await client.destroy()
  })

  it("a tree rendering again after the app destroyed the client it gave shows it unauthenticated, and takes the app's next client", async () => {
    const first = new TamboClient({ apiKey: server().apiKey, tamboUrl: server().url, userKey: "user-1", maxRetries: 0 })
    const second = new TamboClient({ apiKey: server().apiKey, tamboUrl: server().url, userKey: "user-1", maxRetries: 0 })
    let client = first
    const { result, rerender } = renderHook(() => useTambo(), {
      wrapper: ({ children }) => <TamboProvider client={client}>{children}</TamboProvider>
    })
    expect(result.current.client).toBe(first)
    // The app is done with its client; something in the tree renders before it gives the next one.
    await act(() => first.destroy())
    rerender()
    expect(result.current.authState).toEqual({ status: "unauthenticated" })
    expect(result.current.isIdentified).toBe(false)
    client = second
    rerender()
    expect(result.current.client).toBe(second)
    await second.destroy()
  })

  it("a tree rendering again after the app destroyed the client it gave, with inline tools and context helpers, keeps rendering and registers them with the app's next client", async () => {
    const first = new TamboClient({ apiKey: server().apiKey, tamboUrl: server().url, userKey: "user-1", maxRetries: 0 })
    const second = new TamboClient({ apiKey: server().apiKey, tamboUrl: server().url, userKey: "user-1", maxRetries: 0 })
    const caught: Array<unknown> = []
    const App = ({ client }: { readonly client: TamboClient }) => (
      <Boundary onError={(error) => caught.push(error)}>
        <TamboProvider client={client} tools={[weatherTool]} contextHelpers={{ page: () => ({ path: "/" }) }}>
          <p>chat</p>
        </TamboProvider>
      </Boundary>
    )
    const view = render(<App client={first} />)
    await act(() => first.destroy())
    // Something re-renders the app before it gives the next client: its inline props are new.
    view.rerender(<App client={first} />)
    await act(() => sleep(0))
    expect(caught).toEqual([])
    expect(screen.getByText("chat")).toBeTruthy()
    view.rerender(<App client={second} />)
    await waitFor(() => expect(Object.keys(second.getTools())).toContain(weatherTool.name))
    expect(Object.keys(second.getContextHelpers())).toContain("page")
    await second.destroy()
  })

  it("replaces the client when the user changes", async () => {
    const seen = new Set<TamboClient>()
    const Switcher = () => {
      const [user, setUser] = useState("user-1")
      return (
        <TamboProvider {...connection(server(), { userKey: user })}>
          <ClientSpy seen={seen} />
          <button onClick={() => setUser("user-2")}>switch</button>
        </TamboProvider>
      )
    }
    render(<Switcher />)
    screen.getByText("switch").click()
    await waitFor(() => expect(seen.size).toBe(2))
    const [first, second] = [...seen]
    await sleep(0)
    expect(isDestroyed(first!)).toBe(true)
    expect(isDestroyed(second!)).toBe(false)
  })

  it("keeps its client, its threads and a run in flight when only updates changes", async () => {
    const seen = new Set<TamboClient>()
    const Chat = ({ updates }: { readonly updates: "animationFrame" | "microtask" }) => (
      <TamboProvider {...connection(server(), { updates })}>
        <ClientSpy seen={seen} />
      </TamboProvider>
    )
    const view = render(<Chat updates="animationFrame" />)
    const [client] = [...seen]
    server().setScript([Script.text("Hello"), Script.hang()])
    const stream = client!.run("Hi")
    const threadId = await stream.threadId
    await until(() => client!.getState().threadMap[threadId]?.streaming.status === "streaming", "the run to stream")
    view.rerender(<Chat updates="microtask" />)
    await sleep(0)
    expect(seen.size).toBe(1)
    expect(isDestroyed(client!)).toBe(false)
    expect(client!.hasActiveRun(threadId)).toBe(true)
    await client!.cancelRun(threadId)
    await expect(stream.thread).rejects.toMatchObject({ _tag: "AbortError" })
    expect(client!.getState().threadMap[threadId]?.thread.messages.at(-1)?.content).toEqual([{ type: "text", text: "Hello" }])
  })

  it("a tree hidden by <Activity> that renders again exchanges no token and connects no MCP server", async () => {
    const jwt = jwtFor("alice")
    const proxy = await countingProxy(server().url)
    try {
      const seen = new Set<TamboClient>()
      const App = ({ mode, label }: { readonly mode: "visible" | "hidden"; readonly label: string }) => (
        <Activity mode={mode}>
          <TamboProvider
            {...connection(server(), {
              tamboUrl: proxy.url,
              userKey: undefined,
              userToken: jwt,
              mcpServers: [{ url: `${proxy.url}/mcp`, serverKey: "project" }]
            })}
          >
            <p>{label}</p>
            <ClientSpy seen={seen} />
          </TamboProvider>
        </Activity>
      )
      const view = render(<App mode="visible" label="chat" />)
      const [shown] = [...seen]
      await waitFor(() => expect(shown!.getAuthState().status).toBe("identified"))
      await waitFor(() => expect(server().requests.some((r) => r.path === "/mcp")).toBe(true))
      view.rerender(<App mode="hidden" label="chat" />)
      await new Promise<void>((resolve) => shown!.subscribeToDestroy(resolve))
      const before = { connections: await proxy.opened(), requests: server().requests.length }

      // Rendered again while hidden: its effects do not run, so nothing keeps the client it asks for.
      view.rerender(<App mode="hidden" label="settings" />)
      await waitFor(() => expect(seen.size).toBe(2))
      const hidden = [...seen][1]!
      await new Promise<void>((resolve) => hidden.subscribeToDestroy(resolve))
      expect(await proxy.opened()).toBe(before.connections)
      expect(server().requests.length).toBe(before.requests)
    } finally {
      await proxy.close()
    }
  })

  it("a tree hidden by <Activity> keeps its conversation: a run stopped while hidden shows as the server has it, the next run goes on in that thread", async () => {
    const seen = new Set<TamboClient>()
    const App = ({ mode, label }: { readonly mode: "visible" | "hidden"; readonly label: string }) => (
      <Activity mode={mode}>
        <TamboProvider {...connection(server())}>
          <p>{label}</p>
          <ClientSpy seen={seen} />
        </TamboProvider>
      </Activity>
    )
    const view = render(<App mode="visible" label="chat" />)
    const [first] = [...seen]
    server().setScript([Script.text("Hello")])
    const threadId = await first!.run("Hi").threadId
    await until(() => !first!.hasActiveRun(threadId), "the first run to end")
    server().setScript([Script.text("Hel"), Script.hang()])
    const stream = first!.run("Again")
    await until(() => first!.getState().threadMap[threadId]?.streaming.status === "streaming", "the run to stream")

    view.rerender(<App mode="hidden" label="chat" />)
    await act(() => sleep(0))
    // Its effects were cleaned up as at an unmount: the client is destroyed, its run cancelled.
    expect(isDestroyed(first!)).toBe(true)
    await expect(stream.thread).rejects.toMatchObject({ _tag: "AbortError" })
    // A render of the hidden tree asks for a client: it goes a microtask later, changing nothing.
    view.rerender(<App mode="hidden" label="still hidden" />)
    await act(() => sleep(0))
    expect([...seen].filter((client) => !isDestroyed(client))).toHaveLength(0)

    view.rerender(<App mode="visible" label="chat" />)
    await act(() => sleep(0))
    const live = [...seen].filter((client) => !isDestroyed(client))
    expect(live).toHaveLength(1)
    const second = live[0]!
    expect(second).not.toBe(first)
    // The same current thread, as the server has it: the stopped run cancelled, its partial reply kept.
    const held = second.getState().threadMap[threadId]!.thread
    const stored = await second.fetchThread(threadId)
    expect(second.getState().currentThreadId).toBe(threadId)
    expect(held.lastRunCancelled).toBe(true)
    expect(held.messages.map((m) => [m.role, m.content])).toEqual(stored.messages.map((m) => [m.role, m.content]))
    expect(held.messages.map((m) => m.content)).toEqual([
      [{ type: "text", text: "Hi" }],
      [{ type: "text", text: "Hello" }],
      [{ type: "text", text: "Again" }],
      [{ type: "text", text: "Hel" }]
    ])

    server().setScript([Script.text("Here again")])
    await act(() => second.run("Still there?").thread)
    expect(second.getState().threadMap[threadId]!.thread.messages).toHaveLength(6)
    expect(screen.getByText("chat")).toBeDefined()
  })

  it("a component's effect that uses the client gets a live one when a hidden tree shows again", async () => {
    const used: Array<string> = []
    const Child = () => {
      const client = useTamboClient()
      useEffect(() => {
        used.push(isDestroyed(client) ? "destroyed" : "live")
      }, [client])
      return null
    }
    const App = ({ mode }: { readonly mode: "visible" | "hidden" }) => (
      <Activity mode={mode}>
        <TamboProvider {...connection(server())}>
          <Child />
        </TamboProvider>
      </Activity>
    )
    const view = render(<App mode="visible" />)
    view.rerender(<App mode="hidden" />)
    await act(() => sleep(0))
    view.rerender(<App mode="visible" />)
    await act(() => sleep(0))
    expect(used).toEqual(["live", "live"])
  })

  it("another user sees nothing of the last one's: neither the thread list, nor the composer's text and images", async () => {
    server().threads.create({ userKey: "user-1", name: "Secret of user 1" })
    server().threads.create({ userKey: "user-2", name: "Thread of user 2" })
    const seen = { names: [] as Array<ReadonlyArray<string | undefined>>, inputs: new Map<string, UseTamboThreadInputReturn>() }
    // The provider's composer, and one of its own below it.
    const Page = ({ composer }: { readonly composer: string }) => {
      seen.names.push(useTamboThreadList().threads.map((thread) => thread.name))
      seen.inputs.set(composer, useTamboThreadInput())
      return null
    }
    const App = ({ user }: { readonly user: string }) => (
      <TamboProvider {...connection(server(), { userKey: user })}>
        <Page composer="provider's" />
        <TamboThreadInputProvider>
          <Page composer="scoped" />
        </TamboThreadInputProvider>
      </TamboProvider>
    )
    const composers = () => [...seen.inputs.values()].map((input) => [input.value, input.images.map((image) => image.name)])
    const { rerender } = render(<App user="user-1" />)
    await waitFor(() => expect(seen.names.at(-1)).toEqual(["Secret of user 1"]))
    for (const composer of seen.inputs.keys()) {
      await act(async () => {
        seen.inputs.get(composer)!.setValue("my password is hunter2")
        await seen.inputs.get(composer)!.addImage(new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], "private.png", { type: "image/png" }))
      })
    }
    expect(composers()).toEqual([["my password is hunter2", ["private.png"]], ["my password is hunter2", ["private.png"]]])
    const before = seen.names.length
    rerender(<App user="user-2" />)
    await waitFor(() => expect(seen.names.at(-1)).toEqual(["Thread of user 2"]))
    // Not even for a render while the new user's list loaded.
    expect(seen.names.slice(before).flat()).not.toContain("Secret of user 1")
    expect(composers()).toEqual([["", []], ["", []]])
  })

  it("takes a new userToken in place: the run in flight completes with the token it started with, threads stay, the next run carries the new token", async () => {
    const nowSeconds = Math.floor(Date.now() / 1000)
    // A rotation by the identity provider: the same user, a later expiry (which the access token inherits).
    const oldToken = jwtFor("alice", nowSeconds + 1_000)
    const newToken = jwtFor("alice", nowSeconds + 2_000)
    const bearerExpiry = (headers: { readonly [name: string]: string }): number =>
      JSON.parse(Buffer.from(headers.authorization!.split(".")[1]!, "base64url").toString("utf8")).exp
    let releaseTool!: () => void
    const toolReleased = new Promise<void>((resolve) => (releaseTool = resolve))
    let toolStarted = false
    const waitHere = {
      name: "wait_here",
      description: "Waits until the test lets it go",
      inputSchema: { type: "object" as const, properties: {} },
      tool: async () => {
        toolStarted = true
        await toolReleased
        return "released"
      }
    }
    const tools = [waitHere]
    server().setScript((request) =>
      request.toolResults.length === 0
        ? [Script.text("Waiting. "), Script.toolCall("wait_here", {})]
        : [Script.text("after the tool")]
    )
    const seen = new Set<TamboClient>()
    const props = (userToken: string) => connection(server(), { userKey: undefined, userToken, tools })
    let tambo!: ReturnType<typeof useTambo>
    const Probe = () => {
      tambo = useTambo()
      return <ClientSpy seen={seen} />
    }
    const view = render(<TamboProvider {...props(oldToken)}><Probe /></TamboProvider>)
    const run = tambo.sendMessage("first")
    await until(() => toolStarted, "the tool to start")

    view.rerender(<TamboProvider {...props(newToken)}><Probe /></TamboProvider>)
    releaseTool()
    const thread = await run.thread
    expect(thread.messages.at(-1)?.content).toEqual([{ type: "text", text: "after the tool" }])
    // The same client, whose store keeps the thread, current, as the run left it.
    expect(seen.size).toBe(1)
    const [client] = [...seen]
    await waitFor(() => expect(tambo.messages.at(-1)?.content).toEqual([{ type: "text", text: "after the tool" }]))
    expect(client!.getState().currentThreadId).toBe(thread.id)
    expect(client!.getState().threadMap[thread.id]?.thread.messages).toHaveLength(thread.messages.length)

    const subjects = server().requests.filter((r) => r.method === "POST" && r.path === "/oauth/token").map((r) =>
      (r.body as { subject_token: string }).subject_token
    )
    expect(subjects).toEqual([oldToken, newToken])
    // The run and its continuation after the tool carry the token it started with; the next run
    // (which calls the tool again) and its continuation, the new one.
    await tambo.sendMessage("second").thread
    const runs = server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs"))
    expect(runs.map((r) => bearerExpiry(r.headers))).toEqual([
      nowSeconds + 1_000,
      nowSeconds + 1_000,
      nowSeconds + 2_000,
      nowSeconds + 2_000
    ])
    expect(isDestroyed(client!)).toBe(false)
    view.unmount()
  })

  /**
   * Renders a provider whose props `Harness` sets (`change` is a button that changes them), and
   * returns a function that sends a message and resolves with its run's request body.
   */
  const mountSending = (Harness: (props: { readonly sender: ReactNode }) => ReactNode) => {
    const runs: Array<Promise<unknown>> = []
    const Sender = () => {
      const { sendMessage } = useTambo()
      return <button onClick={() => runs.push(sendMessage("hi").thread)}>send</button>
    }
    render(<Harness sender={<Sender />} />)
    return async (): Promise<any> => {
      const n = runs.length + 1
      screen.getByText("send").click()
      await until(() => runs.length === n, `run ${n}`)
      await runs[n - 1]
      return server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs")).map((r) => r.body)[n - 1]
    }
  }
  const names = (list: ReadonlyArray<{ readonly name: string }> | undefined) => (list ?? []).map((item) => item.name)

  it("registers tools, components and context helpers, and follows their changes", async () => {
    server().setScript([Script.text("ok")])
    const send = mountSending(({ sender }) => {
      const [version, setVersion] = useState(1)
      return (
        <TamboProvider
          {...connection(server())}
          tools={[weatherTool]}
          components={[WeatherCard]}
          contextHelpers={{ version: () => ({ version }) }}
        >
          {sender}
          <button onClick={() => setVersion(2)}>change</button>
        </TamboProvider>
      )
    })
    const first = await send()
    expect(names(first.tools)).toEqual(["get_weather"])
    expect(names(first.availableComponents)).toEqual(["WeatherCard"])
    expect(first.message.additionalContext).toMatchObject({ version: { version: 1 } })

    screen.getByText("change").click()
    await sleep(10)
    expect((await send()).message.additionalContext).toMatchObject({ version: { version: 2 } })
  })

  it("withdraws the tools, components and context helpers its props no longer hold: the model can no longer call them", async () => {
    server().setScript([Script.text("ok")])
    const send = mountSending(({ sender }) => {
      const [full, setFull] = useState(true)
      return (
        <TamboProvider
          {...connection(server())}
          tools={full ? [weatherTool] : []}
          components={full ? [WeatherCard] : []}
          contextHelpers={full ? { page: () => ({ page: "settings" }) } : {}}
        >
          {sender}
          <button onClick={() => setFull(false)}>change</button>
        </TamboProvider>
      )
    })
    const first = await send()
    expect(names(first.tools)).toEqual(["get_weather"])
    expect(names(first.availableComponents)).toEqual(["WeatherCard"])

    screen.getByText("change").click()
    await sleep(10)
    const second = await send()
    expect(second.tools).toBeUndefined()
    expect(names(second.availableComponents)).toEqual([])
    expect(second.message.additionalContext?.page).toBeUndefined()
  })

  it("a TamboRegistryProvider's tool of a name the provider's props have: the props' one runs", async () => {
    server().setScript((request) =>
      request.toolResults.length === 0 ? [Script.toolCall("get_weather", { city: "Rome" })] : [Script.text("done")]
    )
    const called: Array<string> = []
    const own = { ...weatherTool, tool: () => (called.push("provider's"), { temperature: 20 }) }
    const page = { ...weatherTool, tool: () => (called.push("page's"), { temperature: 30 }) }
    const send = mountSending(({ sender }) => (
      <TamboProvider {...connection(server())} tools={[own]}>
        <TamboRegistryProvider tools={[page]}>{sender}</TamboRegistryProvider>
      </TamboProvider>
    ))
    await send()
    expect(called).toEqual(["provider's"])
  })

  it("tells hooks used outside a provider where they belong", () => {
    expect(() => renderHook(() => useTambo())).toThrow(/inside a <TamboProvider>/)
  })
})
