// @vitest-environment happy-dom
// `@tambo-effect/react/mcp`: `@tambo-ai/react/mcp`'s names and shapes, against real MCP servers and
// the testing server.
import { act, render, renderHook, waitFor } from "@testing-library/react"
import type { McpRequestContext } from "@tambo-effect/core/Mcp"
import { useState } from "react"
import { describe, expect, it } from "vitest"
import { TamboProvider, type TamboProviderProps, useTamboMcpElicitation as useElicitationQueue } from "../src/index.js"
import * as UpstreamMcp from "../src/upstreamMcp.js"
import {
  type ConnectedMcpServer,
  type ElicitationRequestedSchema,
  type FailedMcpServer,
  isMcpResourceEntry,
  type ListPromptItem,
  type ListResourceItem,
  type MCPElicitationHandler,
  type MCPHandlers,
  type MCPSamplingHandler,
  type McpServerInfo,
  type NormalizedMcpServerInfo,
  type PrimitiveSchemaDefinition,
  type ProviderMCPHandlers,
  type TamboElicitationRequest,
  type TamboElicitationResponse,
  type ListPromptEntry,
  type ListResourceEntry,
  type McpServer,
  type McpServerConfig,
  MCPTransport,
  TamboMcpProvider,
  useTamboElicitationContext,
  useTamboMcpElicitation,
  useTamboMcpPrompt,
  useTamboMcpPromptList,
  useTamboMcpResource,
  useTamboMcpResourceList,
  useTamboMcpServers
} from "../src/upstreamMcp.js"
import { connection, useServer, wrapperFor } from "./helpers.js"
import { useMcpServers } from "./mcpServers.js"

const server = useServer()
const start = useMcpServers()

const text = (result: { readonly content: ReadonlyArray<unknown> }) =>
  result.content.map((block) => (block !== null && typeof block === "object" && "text" in block ? String(block.text) : "")).join("")

const connected = (servers: ReadonlyArray<McpServer>, serverKey: string): ConnectedMcpServer | undefined =>
  servers.find((s): s is ConnectedMcpServer => s.serverKey === serverKey && s.client !== undefined)

/**
 * `TamboMcpProvider` with `props`, inside a `TamboProvider` of `providerProps`, around a probe that
 * reads the MCP servers and the main entry's elicitation queue. `unmountMcpProvider` takes the MCP
 * provider away and leaves the probe.
 */
const renderMcpProvider = (
  props: Omit<Parameters<typeof TamboMcpProvider>[0], "children">,
  providerProps: TamboProviderProps
) => {
  const seen: { servers: Array<McpServer>; queue: ReturnType<typeof useElicitationQueue> | undefined } = {
    servers: [],
    queue: undefined
  }
  let setMounted: (mounted: boolean) => void = () => undefined
  function Probe() {
    seen.queue = useElicitationQueue()
    seen.servers = useTamboMcpServers()
    return null
  }
  function App() {
    const [mounted, mount] = useState(true)
    setMounted = mount
    return mounted ? <TamboMcpProvider {...props}><Probe /></TamboMcpProvider> : <Probe />
  }
  render(
    <TamboProvider {...providerProps}>
      <App />
    </TamboProvider>
  )
  return { seen, unmountMcpProvider: () => setMounted(false) }
}

/** The values `@tambo-ai/react/mcp` 1.3 exports (`react-sdk/src/mcp/index.ts`); its types are imported above. */
const UPSTREAM_VALUES = [
  "MCPTransport",
  "TamboMcpProvider",
  "isMcpResourceEntry",
  "useTamboElicitationContext",
  "useTamboMcpElicitation",
  "useTamboMcpPrompt",
  "useTamboMcpPromptList",
  "useTamboMcpResource",
  "useTamboMcpResourceList",
  "useTamboMcpServers"
]

describe("@tambo-effect/react/mcp", () => {
  it("exports every name @tambo-ai/react/mcp exports (its types are checked by the type checker)", () => {
    type Types = [
      ConnectedMcpServer,
      ElicitationRequestedSchema,
      FailedMcpServer,
      ListPromptEntry,
      ListPromptItem,
      ListResourceEntry,
      ListResourceItem,
      MCPElicitationHandler,
      MCPHandlers,
      MCPSamplingHandler,
      McpServer,
      McpServerInfo,
      NormalizedMcpServerInfo,
      PrimitiveSchemaDefinition,
      ProviderMCPHandlers,
      TamboElicitationRequest,
      TamboElicitationResponse
    ]
    const count: Types["length"] = 17
    expect(count).toBe(17)
    expect(UPSTREAM_VALUES.filter((name) => !(name in UpstreamMcp))).toEqual([])
  })

  it("useTamboMcpServers: a connected server with its client, and a failed one with its connectionError", async () => {
    const mcp = await start("calculator")
    const unreachable = "http://127.0.0.1:1/mcp"
    const wrapper = wrapperFor(connection(server(), {
      mcpServers: [{ url: mcp.url, serverKey: "calc" }, { url: unreachable, serverKey: "gone" }]
    }))
    const { result, rerender } = renderHook(() => useTamboMcpServers(), { wrapper })
    await waitFor(() => expect(result.current.map((s) => s.serverKey).sort()).toEqual(["calc", "gone"]), { timeout: 10_000 })

    const calc = connected(result.current, "calc")!
    expect(calc).toMatchObject({ url: mcp.url, serverKey: "calc", transport: MCPTransport.HTTP, serverType: "browser-side" })
    expect(calc.key).toBe(`${mcp.url}|http`)
    expect(calc.client.getServerVersion()).toMatchObject({ name: expect.any(String) })
    expect(calc.client.getServerCapabilities()).toMatchObject({ tools: {} })
    expect(calc.client.getServerCapabilities()?.prompts).toBeUndefined()
    expect((await calc.client.listTools()).map((tool) => tool.name)).toContain("add")
    expect(text(await calc.client.callTool("add", { a: 2, b: 40 }))).toBe("42")
    await expect(calc.client.callTool("nope")).resolves.toMatchObject({ isError: true })

    const gone = result.current.find((s) => s.serverKey === "gone")!
    expect(gone.client).toBeUndefined()
    expect("connectionError" in gone && gone.connectionError).toMatchObject({ _tag: "McpError", reason: "Connect" })

    // The same array and objects while nothing changes.
    const before = result.current
    rerender()
    expect(result.current).toBe(before)
    // Closing its client disconnects the server: it leaves the list.
    await calc.client.close()
    await waitFor(() => expect(result.current.map((s) => s.serverKey)).toEqual(["gone"]))
  })

  it("prompts: listed as { server, prompt } named serverKey:name, searched, and fetched by that name", async () => {
    const mcp = await start("prompter")
    const wrapper = wrapperFor(connection(server(), { mcpServers: [{ url: mcp.url, serverKey: "docs" }] }))
    const { result, rerender } = renderHook(
      ({ search, name }: { search?: string; name?: string }) => ({
        list: useTamboMcpPromptList(search),
        prompt: useTamboMcpPrompt(name, { code: "x = 1" })
      }),
      { wrapper, initialProps: {} }
    )
    expect(result.current.list.data).toEqual([])
    expect(result.current.list.error).toBeNull()
    await waitFor(() => expect(result.current.list.data.map((e) => e.prompt.name)).toEqual(["docs:review", "docs:hello"]), { timeout: 10_000 })
    const review: ListPromptEntry = result.current.list.data[0]!
    expect(review.server).toMatchObject({ serverKey: "docs", url: mcp.url })
    expect(review.prompt).toMatchObject({ description: "Reviews a piece of code", arguments: [{ name: "code", required: true }, { name: "language" }] })
    expect(result.current.list).toMatchObject({ isSuccess: true, isPending: false, isError: false, isPaused: false, errors: [] })
    // Nothing fetched without a name.
    expect(result.current.prompt).toMatchObject({ data: undefined, isEnabled: false, error: null })

    rerender({ search: "HEL" })
    expect(result.current.list.data.map((e) => e.prompt.name)).toEqual(["docs:hello"])
    rerender({ name: "docs:review" })
    await waitFor(() => expect(result.current.prompt.data?.messages).toEqual([{ role: "user", content: { type: "text", text: "Review this code: x = 1" } }]))
    // A name of no connected server, or without a prefix, reads nothing.
    rerender({ name: "other:review" })
    expect(result.current.prompt).toMatchObject({ isEnabled: false, data: undefined })
    rerender({ name: "review" })
    expect(result.current.prompt).toMatchObject({ isEnabled: false, data: undefined })
    await expect(result.current.list.refetch()).resolves.toBeUndefined()
  })

  it("resources: the app's own first (server null, registry:uri), then the servers' (serverKey:uri); read by those URIs", async () => {
    const mcp = await start("library")
    const wrapper = wrapperFor(connection(server(), {
      mcpServers: [{ url: mcp.url, serverKey: "docs" }],
      resources: [{ uri: "app://notes", name: "notes" }],
      getResource: async (uri: string) => ({ contents: [{ uri, mimeType: "text/plain", text: `my ${uri}` }] })
    }))
    const { result, rerender } = renderHook(
      ({ search, uri }: { search?: string; uri?: string }) => ({
        list: useTamboMcpResourceList(search),
        resource: useTamboMcpResource(uri)
      }),
      { wrapper, initialProps: {} }
    )
    await waitFor(() =>
      expect(result.current.list.data.map((e) => e.resource.uri)).toEqual([
        "registry:app://notes",
        "docs:file:///readme.md",
        "docs:file:///logo.png"
      ]), { timeout: 10_000 })
    const [own, readme]: ReadonlyArray<ListResourceEntry> = result.current.list.data
    expect(own!.server).toBeNull()
    expect(isMcpResourceEntry(own!)).toBe(false)
    expect(isMcpResourceEntry(readme!)).toBe(true)
    expect(isMcpResourceEntry(readme!) && readme.server.serverKey).toBe("docs")
    expect(readme!.resource).toEqual({ uri: "docs:file:///readme.md", name: "readme", title: "README", description: "The readme", mimeType: "text/markdown" })

    rerender({ search: "logo" })
    await waitFor(() => expect(result.current.list.data.map((e) => e.resource.uri)).toEqual(["docs:file:///logo.png"]))
    rerender({ uri: "docs:file:///readme.md" })
    await waitFor(() => expect(result.current.resource.data?.contents).toEqual([{ uri: "file:///readme.md", mimeType: "text/markdown", text: "# Hello" }]))
    rerender({ uri: "registry:app://notes" })
    await waitFor(() => expect(result.current.resource.data?.contents).toEqual([{ uri: "app://notes", mimeType: "text/plain", text: "my app://notes" }]))
    // An unprefixed URI names no server: nothing is read.
    rerender({ uri: "file:///readme.md" })
    expect(result.current.resource).toMatchObject({ isEnabled: false, data: undefined, error: null })
  })

  it("an awaited refetch of a list resolves once the list was read again: the data is then the new list", async () => {
    let names = ["first"]
    const wrapper = wrapperFor(connection(server(), {
      listResources: async () => {
        await new Promise((resolve) => setTimeout(resolve, 50))
        return names.map((name) => ({ uri: `app://${name}`, name }))
      },
      getResource: async (uri: string) => ({ contents: [{ uri, mimeType: "text/plain", text: uri }] })
    }))
    const { result } = renderHook(() => useTamboMcpResourceList(), { wrapper })
    await waitFor(() => expect(result.current.data.map((e) => e.resource.name)).toEqual(["first"]))
    names = ["second"]
    await act(() => result.current.refetch())
    expect(result.current).toMatchObject({ isFetching: false, data: [{ resource: { name: "second" } }] })
  })

  it("useTamboMcpElicitation shows the oldest elicitation as { elicitation, resolveElicitation }; the answer reaches the server", async () => {
    const mcp = await start("greeter")
    const wrapper = wrapperFor(connection(server(), { mcpServers: [{ url: mcp.url, serverKey: "hello" }] }))
    const { result } = renderHook(() => ({
      servers: useTamboMcpServers(),
      state: useTamboMcpElicitation(),
      alias: useTamboElicitationContext()
    }), { wrapper })
    await waitFor(() => expect(connected(result.current.servers, "hello")).toBeDefined(), { timeout: 10_000 })
    expect(result.current.state).toEqual({ elicitation: null, resolveElicitation: null })

    const greeting = connected(result.current.servers, "hello")!.client.callTool("greet")
    await waitFor(() => expect(result.current.state.elicitation).not.toBeNull())
    const { elicitation, resolveElicitation } = result.current.state
    expect(elicitation).toMatchObject({
      message: "What is your name?",
      requestedSchema: { type: "object", properties: { name: { type: "string", title: "Name" } }, required: ["name"] }
    })
    expect(elicitation!.signal).toBeInstanceOf(AbortSignal)
    expect(result.current.alias.elicitation).toEqual(elicitation)
    resolveElicitation!({ action: "accept", content: { name: "Ada" } })
    expect(text(await greeting)).toBe("Hello, Ada!")
    await waitFor(() => expect(result.current.state.elicitation).toBeNull())
    // Called again once answered, it answers nothing (a later request waits for its own answer).
    resolveElicitation!({ action: "decline" })
  })

  describe("TamboMcpProvider", () => {
    it("handlers.elicitation answers instead of the queue, told which server asks; unmounted, the queue answers again", async () => {
      const mcp = await start("greeter")
      const asked: Array<McpServerConfig> = []
      const contexts: Array<McpRequestContext> = []
      const { seen, unmountMcpProvider } = renderMcpProvider({
        handlers: {
          elicitation: async (request, extra, serverInfo) => {
            asked.push(serverInfo)
            contexts.push(extra)
            return { action: "accept", content: { name: `provider (${request.params.message})` } }
          }
        }
      }, connection(server(), { mcpServers: [{ url: mcp.url, serverKey: "hello" }] }))
      await waitFor(() => expect(connected(seen.servers, "hello")).toBeDefined(), { timeout: 10_000 })
      expect(text(await connected(seen.servers, "hello")!.client.callTool("greet"))).toBe("Hello, provider (What is your name?)!")
      expect(asked).toMatchObject([{ serverKey: "hello", url: mcp.url, serverType: "browser-side" }])
      expect(contexts[0]!.signal).toBeInstanceOf(AbortSignal)
      expect(seen.queue?.request).toBeUndefined()

      unmountMcpProvider()
      await waitFor(() => expect(seen.servers).toHaveLength(1))
      const greeting = connected(seen.servers, "hello")!.client.callTool("greet")
      await waitFor(() => expect(seen.queue?.request?.message).toBe("What is your name?"))
      seen.queue!.accept({ name: "queue" })
      expect(text(await greeting)).toBe("Hello, queue!")
      expect(asked).toHaveLength(1)
    })

    it("handlers.sampling answers the sampling requests of servers connected with it mounted; unmounted, none does", async () => {
      const mcp = await start("summarizer")
      const { seen, unmountMcpProvider } = renderMcpProvider({
        handlers: {
          sampling: (request, _extra, serverInfo) => ({
            model: "app-model",
            role: "assistant",
            content: { type: "text", text: `${serverInfo.serverKey} of ${request.params.maxTokens}` }
          })
        }
      }, connection(server(), { mcpServers: [{ url: mcp.url, serverKey: "sum" }] }))
      await waitFor(() => expect(connected(seen.servers, "sum")).toBeDefined(), { timeout: 10_000 })
      expect(text(await connected(seen.servers, "sum")!.client.callTool("summarize", { text: "a long story" }))).toBe("Summary: sum of 50")
      // Unmounted, the client's sampling handler is what it was (none): the server's request fails.
      unmountMcpProvider()
      await waitFor(async () => {
        const result = await connected(seen.servers, "sum")!.client.callTool("summarize", { text: "again" })
        expect(result.isError).toBe(true)
      })
    })

    it("handlers of two providers mounted at once: the last mounted answers; one that leaves hands over to the other, never to one gone", async () => {
      const mcp = await start("summarizer", "greeter")
      const answering = (who: string): UpstreamMcp.ProviderMCPHandlers => ({
        sampling: () => ({ model: "app-model", role: "assistant", content: { type: "text", text: who } }),
        elicitation: () => ({ action: "accept", content: { name: who } })
      })
      let show: (shown: { readonly first: boolean; readonly second: boolean }) => void = () => undefined
      let servers: Array<McpServer> = []
      let queue: ReturnType<typeof useElicitationQueue> | undefined
      function Probe() {
        servers = useTamboMcpServers()
        queue = useElicitationQueue()
        return null
      }
      function App() {
        const [shown, setShown] = useState({ first: true, second: false })
        show = setShown
        return (
          <>
            {shown.first ? <TamboMcpProvider handlers={answering("first")} /> : null}
            {shown.second ? <TamboMcpProvider handlers={answering("second")} /> : null}
            <Probe />
          </>
        )
      }
      render(
        <TamboProvider {...connection(server(), { mcpServers: [{ url: mcp.url, serverKey: "both" }] })}>
          <App />
        </TamboProvider>
      )
      await waitFor(() => expect(connected(servers, "both")).toBeDefined(), { timeout: 10_000 })
      const call = (tool: string, args: Record<string, unknown> = {}) => connected(servers, "both")!.client.callTool(tool, args)
      const answers = async () => [text(await call("summarize", { text: "a long story" })), text(await call("greet"))]
      expect(await answers()).toEqual(["Summary: first", "Hello, first!"])
      act(() => show({ first: true, second: true }))
      expect(await answers()).toEqual(["Summary: second", "Hello, second!"])
      // The one mounted last leaves (a dialog closing): the other answers again.
      act(() => show({ first: true, second: false }))
      expect(await answers()).toEqual(["Summary: first", "Hello, first!"])
      act(() => show({ first: true, second: true }))
      // The one mounted first leaves (a route's exit, after the next route's entry).
      act(() => show({ first: false, second: true }))
      expect(await answers()).toEqual(["Summary: second", "Hello, second!"])
      // Both gone: no sampling handler, and the queue takes the elicitations.
      act(() => show({ first: false, second: false }))
      expect((await call("summarize", { text: "a long story" })).isError).toBe(true)
      const greeting = call("greet")
      await waitFor(() => expect(queue?.request?.message).toBe("What is your name?"))
      act(() => queue!.accept({ name: "queue" }))
      expect(text(await greeting)).toBe("Hello, queue!")
    })

    it("connects Tambo's own MCP server while mounted, with a token for its contextKey", async () => {
      const { seen, unmountMcpProvider } = renderMcpProvider({ contextKey: "page-1" }, connection(server()))
      await waitFor(() => expect(seen.servers.map((s) => [s.serverKey, s.serverType])).toEqual([["tambo", "tambo-internal"]]), { timeout: 10_000 })
      // The testing server's `/mcp` cannot answer in a DOM environment (its `Response` is happy-dom's), so
      // the connection fails here; the client's own test sees it connected and its prompts listed.
      expect(seen.servers[0]).toMatchObject({ url: `${server().url}/mcp`, name: "__tambo_internal_mcp_server__", transport: "http" })
      // (happy-dom sends a CORS preflight first.)
      expect(server().requests.filter((r) => r.method === "POST" && r.path === "/auth/mcp/access-token").map((r) => r.body)).toEqual([{ contextKey: "page-1" }])
      unmountMcpProvider()
      await waitFor(() => expect(seen.servers).toEqual([]))
    })
  })
})
