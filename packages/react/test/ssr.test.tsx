// Server rendering: node environment, no DOM.
import { renderToString } from "react-dom/server"
import { describe, expect, it } from "vitest"
import {
  ComponentContentProvider,
  SnapshotStrategy,
  TamboClient,
  TamboMessageProvider,
  TamboProvider,
  TamboThreadInputProvider,
  useComponentContent,
  useTamboConfig,
  useTamboClient,
  useTamboCurrentMessage,
  useTambo,
  useTamboPendingApprovals,
  useTamboPendingToolCalls,
  useTamboRunStatus,
  useTamboSelector,
  useTamboStreamingMessages,
  useTamboSuggestions,
  useTamboThreadInput,
  useTamboThreadList,
  useTamboVoice
} from "../src/index.js"
import { countingProxy, jwtFor, useServer, WeatherCard } from "./helpers.js"

const server = useServer()

const Page = () => {
  const { currentThreadId, isIdle, messages } = useTambo()
  const { isPending, value } = useTamboThreadInput()
  const { isLoading, threads } = useTamboThreadList()
  const { suggestions } = useTamboSuggestions()
  const threadCount = useTamboSelector((state) => Object.keys(state.threadMap).length)
  const transcript = useTamboStreamingMessages({ strategy: SnapshotStrategy.throttle("100 millis") })
  const approvals = useTamboPendingApprovals()
  const { pendingToolCalls } = useTamboPendingToolCalls()
  const runStatus = useTamboRunStatus()
  const voice = useTamboVoice()
  const { authState, isIdentified } = useTambo()
  const config = useTamboConfig()
  return (
    <main>
      <p id="auth">{authState.status} {String(isIdentified)} {config.userKey}</p>
      <p id="thread">{currentThreadId}</p>
      <p id="idle">{String(isIdle)}</p>
      <p id="messages">{messages.length}</p>
      <p id="input">[{value}] {String(isPending)}</p>
      <p id="list">{isLoading ? "loading" : threads.length}</p>
      <p id="suggestions">{suggestions.length}</p>
      <p id="count">{threadCount}</p>
      <p id="transcript">{transcript.messages.length}</p>
      <p id="pending">{approvals.length}/{pendingToolCalls.length}</p>
      <p id="status">{runStatus}</p>
      <p id="voice">{String(voice.isSupported)} {String(voice.isRecording)}</p>
    </main>
  )
}

describe("server rendering", () => {
  it("renders a provider and its hooks without a window", () => {
    expect(typeof window).toBe("undefined")
    const html = renderToString(
      <TamboProvider apiKey={server().apiKey} tamboUrl={server().url} userKey="user-1" components={[WeatherCard]}>
        <Page />
      </TamboProvider>
    )
    expect(html).toContain("<p id=\"thread\">placeholder</p>")
    expect(html).toContain("<p id=\"idle\">true</p>")
    expect(html).toContain("<p id=\"messages\">0</p>")
    expect(html).toContain("<p id=\"list\">loading</p>")
    expect(html).toContain("<p id=\"suggestions\">0</p>")
    expect(html).toContain("<p id=\"count\">1</p>")
    expect(html).toContain("<p id=\"transcript\">0</p>")
    expect(html).toContain("<p id=\"pending\">0<!-- -->/<!-- -->0</p>")
    expect(html).toContain("<p id=\"status\">idle</p>")
    expect(html).toContain("<p id=\"voice\">false<!-- --> <!-- -->false</p>")
    // No client while rendering, yet a userKey identifies from the start.
    expect(html).toContain("<p id=\"auth\">identified<!-- --> <!-- -->true<!-- --> <!-- -->user-1</p>")
    // Effects do not run on the server: nothing was requested.
    expect(server().requests).toHaveLength(0)
  })

  it("a server render tells who the client will act for: identified with a userKey or an agent, exchanging with a userToken, unauthenticated with neither", () => {
    const Auth = () => {
      const { authState, isIdentified } = useTambo()
      return <p id="auth">{authState.status}/{authState.status === "identified" ? authState.source : ""}/{String(isIdentified)}</p>
    }
    const rendered = (props: { readonly userKey?: string; readonly userToken?: string }) =>
      renderToString(<TamboProvider apiKey={server().apiKey} tamboUrl={server().url} {...props}><Auth /></TamboProvider>)
    expect(rendered({ userKey: "user-1" })).toContain("<p id=\"auth\">identified<!-- -->/<!-- -->userKey<!-- -->/<!-- -->true</p>")
    expect(rendered({ userToken: jwtFor("alice") })).toContain("<p id=\"auth\">exchanging<!-- -->/<!-- -->/<!-- -->false</p>")
    expect(rendered({})).toContain("<p id=\"auth\">unauthenticated<!-- -->/<!-- -->/<!-- -->false</p>")
    expect(renderToString(<TamboProvider agent={{ url: "http://127.0.0.1:1/agent" }}><Auth /></TamboProvider>))
      .toContain("<p id=\"auth\">identified<!-- -->/<!-- -->userKey<!-- -->/<!-- -->true</p>")
    expect(server().requests).toHaveLength(0)
  })

  it("renders the providers of a tree the app renders itself", () => {
    const Where = () => {
      const { componentId, componentName } = useComponentContent()
      return <p id="where">{componentName} {componentId}</p>
    }
    const Said = () => <p id="said">{useTamboCurrentMessage().id}</p>
    const html = renderToString(
      <TamboProvider apiKey={server().apiKey} tamboUrl={server().url} userKey="user-1">
        <TamboThreadInputProvider>
          <TamboMessageProvider message={{ id: "msg_1", role: "assistant", content: [], createdAt: "2026-01-01T00:00:00.000Z" }}>
            <Said />
          </TamboMessageProvider>
          <ComponentContentProvider threadId="thr_1" messageId="msg_1" componentId="comp_1" componentName="Card">
            <Where />
          </ComponentContentProvider>
        </TamboThreadInputProvider>
      </TamboProvider>
    )
    expect(html).toContain("<p id=\"said\">msg_1</p>")
    expect(html).toContain("<p id=\"where\">Card<!-- --> <!-- -->comp_1</p>")
    expect(server().requests).toHaveLength(0)
  })

  it("creates no client while rendering", () => {
    // An empty API key makes the client's constructor throw: rendering must not call it.
    const html = renderToString(
      <TamboProvider apiKey="" userKey="user-1">
        <Page />
      </TamboProvider>
    )
    expect(html).toContain("<p id=\"messages\">0</p>")
  })

  it("a server render that asks for the client leaves none behind and does no network work: the client it made is destroyed once the render is over, having exchanged no token and connected no MCP server", async () => {
    const proxy = await countingProxy(server().url)
    try {
      const made = new Set<TamboClient>()
      const UsesClient = () => {
        const client = useTamboClient()
        made.add(client)
        return <p id="backend">{client.backend}</p>
      }
      const html = renderToString(
        <TamboProvider
          apiKey={server().apiKey}
          tamboUrl={proxy.url}
          userToken={jwtFor("alice")}
          mcpServers={[{ url: `${proxy.url}/mcp`, serverKey: "project" }]}
        >
          <UsesClient />
        </TamboProvider>
      )
      expect(html).toContain("<p id=\"backend\">tambo</p>")
      expect(made.size).toBe(1)
      const [client] = [...made]
      // The render's task is over: no effect will ever keep the client.
      await new Promise((resolve) => setTimeout(resolve, 0))
      expect(() => client!.getAuthState()).toThrow(expect.objectContaining({ reason: "ClientDestroyed" }))
      // Whatever it had started is over too.
      await client!.destroy()
      expect(await proxy.opened()).toBe(0)
      expect(server().requests).toEqual([])
    } finally {
      await proxy.close()
    }
  })

  it("renders the state of a given client", async () => {
    const client = new TamboClient({ apiKey: server().apiKey, tamboUrl: server().url, userKey: "user-1", maxRetries: 0 })
    try {
      await client.run("Hello").thread
      const html = renderToString(
        <TamboProvider client={client}>
          <Page />
        </TamboProvider>
      )
      expect(html).toContain("<p id=\"messages\">2</p>")
      expect(html).toContain("<p id=\"transcript\">2</p>")
      expect(html).toContain("<p id=\"thread\">thr_")
    } finally {
      await client.destroy()
    }
  })
})
