// @vitest-environment happy-dom
import { act, render, renderHook, screen, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { type McpConnectionInfo, TamboClient } from "@tambo-effect/client"
import * as Duration from "effect/Duration"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Activity, StrictMode, useState } from "react"
import { describe, expect, it, vi } from "vitest"
import {
  TamboProvider,
  TamboRegistryProvider,
  useTambo,
  useTamboClient,
  useTamboMcpCompletion,
  useTamboMcpElicitation,
  useTamboMcpPrompt,
  useTamboMcpPromptList,
  useTamboMcpResource,
  useTamboMcpResourceList,
  useTamboMcpServers,
  useTamboMcpToolProgress,
  useTamboMcpUrlElicitation
} from "../src/index.js"
import { connection, useServer, wrapperFor } from "./helpers.js"
import { useMcpServers } from "./mcpServers.js"

const server = useServer()

const start = useMcpServers()

/** The provider listing one MCP server at `url` as "work", once per bounds given; and what it shows under `testId`. */
const workServers = (url: string, testId: string) => {
  let servers: ReadonlyArray<McpConnectionInfo> = []
  function Status() {
    servers = useTamboMcpServers()
    return <div data-testid={testId}>{servers.map((s) => `${s.status}:${String(s.server.toolTimeout ?? "none")}`).join(",")}</div>
  }
  const app = (list: ReadonlyArray<{ readonly toolTimeout?: Duration.DurationInput }>) => (
    <TamboProvider {...connection(server(), { mcpServers: list.map((bounds) => ({ url, serverKey: "work", ...bounds })) })}>
      <Status />
    </TamboProvider>
  )
  return { app, servers: () => servers }
}

/**
 * A component that keeps what `useTamboMcpServers()` gave last (`seen.servers`), and each status
 * the first server went through (`seen.statuses`).
 */
const serversSeen = () => {
  const seen = { servers: [] as ReturnType<typeof useTamboMcpServers>, statuses: [] as Array<string> }
  function Servers() {
    seen.servers = useTamboMcpServers()
    const status = seen.servers[0]?.status
    if (status !== undefined && seen.statuses.at(-1) !== status) seen.statuses.push(status)
    return null
  }
  /** The text of the first server's `greet` tool, called through its client. */
  const greet = async () => {
    const result = await seen.servers[0]!.client!.callTool("greet")
    return result.content.map((block) => ("text" in block ? block.text : "")).join("")
  }
  return { seen, Servers, greet }
}

describe("MCP hooks", () => {
  it("list the servers with their status, their prompts and resources, and fetch a prompt and a resource", async () => {
    const mcp = await start("prompter", "library", "calculator")
    const wrapper = wrapperFor(connection(server(), { mcpServers: [{ url: mcp.url, serverKey: "docs" }] }))
    const { result } = renderHook(() => ({
      servers: useTamboMcpServers(),
      prompts: useTamboMcpPromptList(),
      prompt: useTamboMcpPrompt("docs", "review", { code: "x = 1" }),
      resources: useTamboMcpResourceList(),
      resource: useTamboMcpResource("docs", "file:///readme.md")
    }), { wrapper })

    // The first connection of the file loads the MCP SDK: slow on a busy machine.
    await waitFor(() => expect(result.current.servers.map((s) => [s.serverKey, s.status, s.error?.message])).toEqual([["docs", "connected", undefined]]), { timeout: 10_000 })
    expect(result.current.servers[0]!.tools.map((tool) => tool.name)).toEqual(["add", "divide", "explode", "math.square"])
    await waitFor(() => expect(result.current.prompts.data?.map((p) => `${p.serverKey}:${p.name}`)).toEqual(["docs:review", "docs:hello"]))
    await waitFor(() =>
      expect(result.current.prompt.data?.messages).toEqual([
        { role: "user", content: { type: "text", text: "Review this code: x = 1" } }
      ])
    )
    await waitFor(() =>
      expect(result.current.resources.data?.map((r) => `${r.serverKey}:${r.uri}`)).toEqual([
        "docs:file:///readme.md",
        "docs:file:///logo.png"
      ])
    )
    await waitFor(() =>
      expect(result.current.resource.data?.contents).toEqual([
        { uri: "file:///readme.md", mimeType: "text/markdown", text: "# Hello" }
      ])
    )
  })

  it("read the prompts and the resources again when the server says they changed", async () => {
    const mcp = await start("publisher")
    const wrapper = wrapperFor(connection(server(), { mcpServers: [{ url: mcp.url, serverKey: "docs" }] }))
    const { result } = renderHook(() => ({
      servers: useTamboMcpServers(),
      prompts: useTamboMcpPromptList(),
      resources: useTamboMcpResourceList()
    }), { wrapper })
    await waitFor(() => expect(result.current.prompts.data?.map((p) => p.name)).toEqual(["hello"]), { timeout: 10_000 })
    await waitFor(() => expect(result.current.resources.data?.map((r) => r.uri)).toEqual(["file:///readme.md"]))

    const client = result.current.servers[0]!.client!
    expect(await client.callTool("publish")).toMatchObject({ content: [{ text: "published" }] })
    await waitFor(() => expect(result.current.prompts.data?.map((p) => p.name)).toEqual(["hello", "bye"]))
    await waitFor(() =>
      expect(result.current.resources.data?.map((r) => r.uri)).toEqual(["file:///readme.md", "file:///changelog.md"])
    )
    expect(result.current.servers[0]).toMatchObject({ promptsVersion: 1, resourcesVersion: 1 })
  })

  it("useTamboMcpResource shows a resource's new contents each time its server says it changed", async () => {
    const mcp = await start("counter")
    const wrapper = wrapperFor(connection(server(), { mcpServers: [{ url: mcp.url, serverKey: "counting" }] }))
    const { result } = renderHook(() => ({
      servers: useTamboMcpServers(),
      counter: useTamboMcpResource("counting", "file:///counter.txt")
    }), { wrapper })
    const count = () => result.current.counter.data?.contents.map((part) => ("text" in part ? part.text : "")).join("")
    await waitFor(() => expect(count()).toBe("0"), { timeout: 10_000 })
    const client = result.current.servers[0]!.client!
    await client.callTool("bump")
    await waitFor(() => expect(count()).toBe("1"))
    await client.callTool("bump")
    await waitFor(() => expect(count()).toBe("2"))
    expect(result.current.counter).toMatchObject({ status: "success", isFetching: false })
  })

  it("useTamboMcpCompletion suggests values for a prompt's argument as the user types", async () => {
    const mcp = await start("completer")
    const wrapper = wrapperFor(connection(server(), { mcpServers: [{ url: mcp.url, serverKey: "people" }] }))
    const { result, rerender } = renderHook(
      ({ typed, name }: { typed: string; name: string | undefined }) => ({
        servers: useTamboMcpServers(),
        names: useTamboMcpCompletion("people", { type: "ref/prompt", name: "greet" }, "name", typed),
        titles: useTamboMcpCompletion("people", { type: "ref/prompt", name: "greet" }, "title", "", name === undefined ? {} : { name }),
        idle: useTamboMcpCompletion(undefined, undefined, "name", typed)
      }),
      { wrapper, initialProps: { typed: "a", name: undefined as string | undefined } }
    )
    await waitFor(() => expect(result.current.names.data?.values).toEqual(["Ada", "Alan"]), { timeout: 10_000 })
    await waitFor(() => expect(result.current.titles.data?.values).toEqual(["Dr.", "Ms.", "Mr."]))
    rerender({ typed: "g", name: "Grace" })
    await waitFor(() => expect(result.current.names.data?.values).toEqual(["Grace"]))
    await waitFor(() => expect(result.current.titles.data?.values).toEqual(["Admiral", "Dr."]))
    expect(result.current.idle).toMatchObject({ data: undefined, isFetching: false })
  })

  it("useTamboMcpToolProgress shows the latest progress of the model's call of an MCP tool", async () => {
    const mcp = await start("worker")
    const wrapper = wrapperFor(connection(server(), { mcpServers: [{ url: mcp.url, serverKey: "work" }] }))
    const seen: Array<number | undefined> = []
    const { result } = renderHook(() => {
      const progress = useTamboMcpToolProgress("call_work")
      if (seen.length === 0 || seen.at(-1) !== progress?.progress) seen.push(progress?.progress)
      return { servers: useTamboMcpServers(), progress, other: useTamboMcpToolProgress("call_other"), tambo: useTambo() }
    }, { wrapper })
    await waitFor(() => expect(result.current.servers[0]?.status).toBe("connected"), { timeout: 10_000 })
    server().setScript((request) =>
      request.toolResults.length === 0
        ? [Script.toolCall("work", { steps: 3, gapMs: 30 }, { id: "call_work" })]
        : [Script.text("worked")]
    )
    await result.current.tambo.sendMessage("work").thread
    await waitFor(() => expect(result.current.progress).toMatchObject({ progress: 3, total: 3, message: "step 3", serverKey: "work" }))
    expect(seen[0]).toBeUndefined()
    expect(seen.at(-1)).toBe(3)
    expect(result.current.other).toBeUndefined()
  })

  it("useTamboMcpToolProgress in a component that mounts in the middle of a call shows its progress at once", async () => {
    const mcp = await start("worker")
    const wrapper = wrapperFor(connection(server(), { mcpServers: [{ url: mcp.url, serverKey: "work" }] }))
    /** What the late component rendered, render by render. */
    const lateRenders: Array<number | undefined> = []
    const Late = () => {
      const progress = useTamboMcpToolProgress("call_mid")
      lateRenders.push(progress?.progress)
      return null
    }
    let state!: {
      progress: ReturnType<typeof useTamboMcpToolProgress>
      servers: ReadonlyArray<McpConnectionInfo>
      tambo: ReturnType<typeof useTambo>
    }
    const Page = ({ showLate }: { readonly showLate: boolean }) => {
      state = { progress: useTamboMcpToolProgress("call_mid"), servers: useTamboMcpServers(), tambo: useTambo() }
      return showLate ? <Late /> : null
    }
    const { rerender } = render(<Page showLate={false} />, { wrapper })
    await waitFor(() => expect(state.servers[0]?.status).toBe("connected"), { timeout: 10_000 })
    server().setScript((request) =>
      request.toolResults.length === 0
        ? [Script.toolCall("work", { steps: 3, gapMs: 500 }, { id: "call_mid" })]
        : [Script.text("worked")]
    )
    const run = state.tambo.sendMessage("work")
    await waitFor(() => expect(state.progress?.progress).toBe(1))
    rerender(<Page showLate />)
    // Its first render already has the call's progress.
    expect(lateRenders[0]).toBeGreaterThanOrEqual(1)
    await run.thread
    await waitFor(() => expect(lateRenders.at(-1)).toBe(3))
  })

  it("a failed fetch is an error in the query state", async () => {
    const mcp = await start("prompter")
    const wrapper = wrapperFor(connection(server(), { mcpServers: [{ url: mcp.url, serverKey: "docs" }] }))
    const { result } = renderHook(() => ({
      servers: useTamboMcpServers(),
      prompt: useTamboMcpPrompt("nope", "review")
    }), { wrapper })
    await waitFor(() => expect(result.current.servers[0]?.status).toBe("connected"))
    await waitFor(() => expect(result.current.prompt.isError).toBe(true))
    expect(result.current.prompt.error).toMatchObject({ _tag: "McpError", reason: "NotConnected" })
  })

  it("shows a server that went away as reconnecting", async () => {
    const mcp = await start("calculator")
    const wrapper = wrapperFor(connection(server(), { mcpServers: [{ url: mcp.url, serverKey: "calc" }] }))
    const { result } = renderHook(() => useTamboMcpServers(), { wrapper })
    await waitFor(() => expect(result.current[0]?.status).toBe("connected"))
    mcp.stop()
    await waitFor(() => expect(result.current[0]?.status).toBe("reconnecting"))
    expect(result.current[0]?.tools).toEqual([])
  })

  it("a destroyed client does not reconnect the servers it closed", async () => {
    const mcp = await start("calculator")
    const wrapper = wrapperFor(connection(server(), { mcpServers: [{ url: mcp.url }] }))
    const view = renderHook(() => useTamboMcpServers(), { wrapper })
    await waitFor(() => expect(view.result.current.map((s) => s.status)).toEqual(["connected"]))
    view.unmount()
    await waitFor(async () => expect(await mcp.sessions()).toMatchObject({ closed: 1 }), { timeout: 10_000 })
    // A reconnection would start at once; give it the time to reach the server.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await mcp.sessions()).toMatchObject({ opened: 1, closed: 1 })
  })

  it("servers from the provider connect on mount and disconnect on unmount, once under StrictMode", async () => {
    const mcp = await start("calculator")
    const props = connection(server(), { mcpServers: [{ url: mcp.url }] })
    function Status() {
      const servers = useTamboMcpServers()
      return <div data-testid="status">{servers.map((s) => s.status).join(",")}</div>
    }
    const view = render(
      <StrictMode>
        <TamboProvider {...props}>
          <Status />
        </TamboProvider>
      </StrictMode>
    )
    await waitFor(() => expect(screen.getByTestId("status").textContent).toBe("connected"))
    expect(await mcp.sessions()).toMatchObject({ opened: 1, closed: 0 })
    view.unmount()
    await waitFor(async () => expect(await mcp.sessions()).toMatchObject({ opened: 1, closed: 1 }), { timeout: 10_000 })
  })

  it("a new mcpServers list connects the servers it adds and disconnects those it drops", async () => {
    const first = await start("calculator")
    const second = await start("prompter")
    function Status() {
      const servers = useTamboMcpServers()
      return <div data-testid="servers">{servers.map((s) => `${s.serverKey}:${s.status}`).join(",")}</div>
    }
    const view = render(
      <TamboProvider {...connection(server(), { mcpServers: [{ url: first.url, serverKey: "one" }] })}>
        <Status />
      </TamboProvider>
    )
    await waitFor(() => expect(screen.getByTestId("servers").textContent).toBe("one:connected"))
    view.rerender(
      <TamboProvider {...connection(server(), { mcpServers: [{ url: second.url, serverKey: "two" }] })}>
        <Status />
      </TamboProvider>
    )
    await waitFor(() => expect(screen.getByTestId("servers").textContent).toBe("two:connected"))
    await waitFor(async () => expect(await first.sessions()).toEqual({ opened: 1, closed: 1 }))
    expect(await second.sessions()).toEqual({ opened: 1, closed: 0 })
  })

  /**
   * `Levels` shows the servers as `key:status:level`; `logged` makes one call of `chatty` and
   * gives the levels of the messages it logs.
   */
  const levelsOf = () => {
    let seen: { servers: ReadonlyArray<McpConnectionInfo>; client: TamboClient } | undefined
    function Levels() {
      const servers = useTamboMcpServers()
      seen = { servers, client: useTamboClient() }
      return <div data-testid="level">{servers.map((s) => `${s.serverKey}:${s.status}:${s.logLevel ?? "none"}`).join(",")}</div>
    }
    const logged = async () => {
      const levels: Array<string> = []
      const stop = seen!.client.subscribeToMcpLogs((message) => levels.push(message.level))
      await seen!.servers[0]!.client!.callTool("chatty", { n: 1 })
      await waitFor(() => expect(levels.at(-1)).toBe("emergency"))
      stop()
      return levels
    }
    return { Levels, logged }
  }

  it("a server whose logLevel changed in the mcpServers prop is asked for the new level, on the same session", async () => {
    const chat = await start("chatty")
    const { Levels, logged } = levelsOf()
    const app = (logLevel: "error" | "debug") => (
      <TamboProvider {...connection(server(), { mcpServers: [{ url: chat.url, serverKey: "chat", logLevel }] })}>
        <Levels />
      </TamboProvider>
    )
    const view = render(app("error"))
    await waitFor(() => expect(screen.getByTestId("level").textContent).toBe("chat:connected:error"), { timeout: 10_000 })
    expect(await logged()).toEqual(["error", "critical", "alert", "emergency"])
    view.rerender(app("debug"))
    await waitFor(() => expect(screen.getByTestId("level").textContent).toBe("chat:connected:debug"))
    expect(await logged()).toHaveLength(8)
    expect(await chat.sessions()).toEqual({ opened: 1, closed: 0 })
  })

  it("a server whose logLevel is dropped from the mcpServers prop connects again, at the server's own level", async () => {
    const chat = await start("chatty")
    const { Levels, logged } = levelsOf()
    const app = (logLevel: "error" | undefined) => (
      <TamboProvider
        {...connection(server(), { mcpServers: [{ url: chat.url, serverKey: "chat", ...(logLevel === undefined ? {} : { logLevel }) }] })}
      >
        <Levels />
      </TamboProvider>
    )
    const view = render(app("error"))
    await waitFor(() => expect(screen.getByTestId("level").textContent).toBe("chat:connected:error"), { timeout: 10_000 })
    expect(await logged()).toEqual(["error", "critical", "alert", "emergency"])
    view.rerender(app(undefined))
    await waitFor(() => expect(screen.getByTestId("level").textContent).toBe("chat:connected:none"))
    // A session never asked for a level, as one connected without `logLevel` from the start.
    expect(await logged()).toHaveLength(8)
    expect(await chat.sessions()).toEqual({ opened: 2, closed: 1 })
  })

  it("a server whose toolTimeout changed in the mcpServers prop takes it on the same session; one that drops it connects again", async () => {
    const work = await start("worker")
    let servers: ReadonlyArray<McpConnectionInfo> = []
    function Bounds() {
      servers = useTamboMcpServers()
      const shown = servers.map((s) => `${s.status}:${String(s.server.toolTimeout ?? "none")}`)
      return <div data-testid="bounds">{shown.join(",")}</div>
    }
    const app = (toolTimeout: Duration.DurationInput | undefined) => (
      <TamboProvider
        {...connection(server(), { mcpServers: [{ url: work.url, serverKey: "work", ...(toolTimeout === undefined ? {} : { toolTimeout }) }] })}
      >
        <Bounds />
      </TamboProvider>
    )
    const view = render(app("1 second"))
    await waitFor(() => expect(screen.getByTestId("bounds").textContent).toBe("connected:1 second"), { timeout: 10_000 })
    view.rerender(app(2_000))
    await waitFor(() => expect(screen.getByTestId("bounds").textContent).toBe("connected:2000"))
    // The same duration written another way changes nothing.
    view.rerender(app(Duration.seconds(2)))
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(servers[0]!.server.toolTimeout).toBe(2_000)
    expect(await work.sessions()).toEqual({ opened: 1, closed: 0 })
    view.rerender(app(undefined))
    await waitFor(() => expect(screen.getByTestId("bounds").textContent).toBe("connected:none"))
    expect(await work.sessions()).toEqual({ opened: 2, closed: 1 })
  })

  it("quick changes of the mcpServers prop end where the last one says", async () => {
    const work = await start("worker")
    const { app, servers } = workServers(work.url, "quick")
    const view = render(app([{ toolTimeout: "1 second" }]))
    await waitFor(() => expect(screen.getByTestId("quick").textContent).toBe("connected:1 second"), { timeout: 10_000 })
    // Dropped and given again before the first change settled.
    view.rerender(app([{}]))
    view.rerender(app([{ toolTimeout: "3 seconds" }]))
    await waitFor(() => expect(screen.getByTestId("quick").textContent).toBe("connected:3 seconds"))
    // Removed and listed again at once.
    view.rerender(app([]))
    view.rerender(app([{ toolTimeout: "3 seconds" }]))
    await new Promise((resolve) => setTimeout(resolve, 300))
    await waitFor(() => expect(screen.getByTestId("quick").textContent).toBe("connected:3 seconds"))
    expect(servers()).toHaveLength(1)
  })

  it("a server removed from the mcpServers prop while it reconnects to drop its toolTimeout stays disconnected", async () => {
    const work = await start("worker")
    const { app, servers } = workServers(work.url, "removed")
    const view = render(app([{ toolTimeout: "1 second" }]))
    await waitFor(() => expect(screen.getByTestId("removed").textContent).toBe("connected:1 second"), { timeout: 10_000 })
    // Its bounds dropped (a new connection), then the server removed before that settled.
    view.rerender(app([{}]))
    view.rerender(app([]))
    await waitFor(async () => expect(await work.sessions()).toMatchObject({ closed: 1 }), { timeout: 10_000 })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(servers()).toEqual([])
    expect(await work.sessions()).toEqual({ opened: 1, closed: 1 })
  })

  it("a TamboRegistryProvider's servers connect while it is mounted, beside the provider's, and disconnect when it unmounts", async () => {
    const own = await start("calculator")
    const page = await start("prompter")
    function Status() {
      const servers = useTamboMcpServers()
      return <div data-testid="servers">{servers.map((s) => `${s.serverKey}:${s.status}`).sort().join(",")}</div>
    }
    const app = (withPage: boolean) => (
      <TamboProvider {...connection(server(), { mcpServers: [{ url: own.url, serverKey: "own" }] })}>
        <Status />
        {withPage ? <TamboRegistryProvider mcpServers={[{ url: page.url, serverKey: "page" }]} /> : null}
      </TamboProvider>
    )
    const view = render(app(true))
    await waitFor(() => expect(screen.getByTestId("servers").textContent).toBe("own:connected,page:connected"))
    view.rerender(app(false))
    await waitFor(() => expect(screen.getByTestId("servers").textContent).toBe("own:connected"))
    await waitFor(async () => expect(await page.sessions()).toEqual({ opened: 1, closed: 1 }))
    expect(await own.sessions()).toEqual({ opened: 1, closed: 0 })
  })

  it("a tree hidden by <Activity> closes its sessions, and connects the provider's and a registry's servers again when it shows", async () => {
    const own = await start("calculator")
    const page = await start("prompter")
    function Status() {
      const servers = useTamboMcpServers()
      return <div data-testid="servers">{servers.map((s) => `${s.serverKey}:${s.status}`).sort().join(",")}</div>
    }
    const app = (mode: "visible" | "hidden") => (
      <Activity mode={mode}>
        <TamboProvider {...connection(server(), { mcpServers: [{ url: own.url, serverKey: "own" }] })}>
          <Status />
          <TamboRegistryProvider mcpServers={[{ url: page.url, serverKey: "page" }]} />
        </TamboProvider>
      </Activity>
    )
    const view = render(app("visible"))
    await waitFor(() => expect(screen.getByTestId("servers").textContent).toBe("own:connected,page:connected"))
    view.rerender(app("hidden"))
    await waitFor(async () => expect(await own.sessions()).toEqual({ opened: 1, closed: 1 }))
    await waitFor(async () => expect(await page.sessions()).toEqual({ opened: 1, closed: 1 }))
    view.rerender(app("visible"))
    await waitFor(() => expect(screen.getByTestId("servers").textContent).toBe("own:connected,page:connected"))
    expect(await own.sessions()).toEqual({ opened: 2, closed: 1 })
    expect(await page.sessions()).toEqual({ opened: 2, closed: 1 })
  })

  it("a server's handlers in the mcpServers prop answer its elicitations; new ones in the props replace them", async () => {
    const mcp = await start("greeter")
    const { seen, Servers, greet } = serversSeen()
    const app = (name: string | undefined) => (
      <TamboProvider
        {...connection(server(), {
          mcpServers: [{
            url: mcp.url,
            ...(name === undefined ? {} : { handlers: { elicitation: async () => ({ action: "accept" as const, content: { name } }) } })
          }]
        })}
      >
        <Servers />
      </TamboProvider>
    )
    const view = render(app("Ada"))
    await waitFor(() => expect(seen.servers[0]?.status).toBe("connected"), { timeout: 10_000 })
    expect(await greet()).toBe("Hello, Ada!")
    view.rerender(app("Grace"))
    await waitFor(async () => expect(await greet()).toBe("Hello, Grace!"))
    // No handlers any more: the server's elicitations go to the provider's queue (`useTamboMcpElicitation`).
    view.rerender(app(undefined))
    await waitFor(() => expect(seen.servers[0]?.server.handlers).toEqual({}))
    // One session throughout.
    expect(await mcp.sessions()).toEqual({ opened: 1, closed: 0 })
  })

  it("new handlers in the props while a server connects again to drop its toolTimeout are the ones its new session has", async () => {
    const mcp = await start("greeter")
    const { seen, Servers, greet } = serversSeen()
    const app = (toolTimeout: Duration.DurationInput | undefined, name: string) => (
      <TamboProvider
        {...connection(server(), {
          mcpServers: [{
            url: mcp.url,
            ...(toolTimeout === undefined ? {} : { toolTimeout }),
            handlers: { elicitation: async () => ({ action: "accept" as const, content: { name } }) }
          }]
        })}
      >
        <Servers />
      </TamboProvider>
    )
    const view = render(app("1 second", "Ada"))
    await waitFor(() => expect(seen.servers[0]?.status).toBe("connected"), { timeout: 10_000 })
    expect(await greet()).toBe("Hello, Ada!")
    // Its bound dropped: a disconnect, then a connect, which waits for it; new handlers meanwhile.
    view.rerender(app(undefined, "Ada"))
    view.rerender(app(undefined, "Grace"))
    await waitFor(async () => expect(await mcp.sessions()).toEqual({ opened: 2, closed: 1 }), { timeout: 10_000 })
    await waitFor(() => expect(seen.servers[0]?.status).toBe("connected"), { timeout: 10_000 })
    expect(seen.servers[0]?.server.toolTimeout).toBeUndefined()
    expect(await greet()).toBe("Hello, Grace!")
    expect(await mcp.sessions()).toEqual({ opened: 2, closed: 1 })
  })

  it("a toolTimeout no timer can wait, in the props of a connected server, is reported with console.error naming the server and the option; the new handlers and log level of the same change are taken", async () => {
    const mcp = await start("greeter")
    const { seen, Servers, greet } = serversSeen()
    const app = (toolTimeout: Duration.DurationInput, name: string, logLevel: "error" | "debug") => (
      <TamboProvider
        {...connection(server(), {
          mcpServers: [{
            url: mcp.url,
            serverKey: "work",
            toolTimeout,
            logLevel,
            handlers: { elicitation: async () => ({ action: "accept" as const, content: { name } }) }
          }]
        })}
      >
        <Servers />
      </TamboProvider>
    )
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined)
    try {
      const view = render(app("1 second", "Ada", "error"))
      await waitFor(() => expect(seen.servers[0]?.status).toBe("connected"), { timeout: 10_000 })
      expect(await greet()).toBe("Hello, Ada!")

      view.rerender(app(0, "Grace", "debug"))
      await waitFor(() => expect(errors).toHaveBeenCalled())
      const logged = errors.mock.calls.map((args) => args.map(String).join(" ")).join("\n")
      expect(logged).toContain("\"work\"")
      expect(logged).toContain("toolTimeout")
      await waitFor(async () => expect(await greet()).toBe("Hello, Grace!"))
      await waitFor(() => expect(seen.servers[0]?.logLevel).toBe("debug"))
      // The bound it had stays, on the same session.
      expect(seen.servers[0]?.server.toolTimeout).toBe("1 second")
      expect(seen.servers[0]?.status).toBe("connected")
      expect(await mcp.sessions()).toEqual({ opened: 1, closed: 0 })
    } finally {
      errors.mockRestore()
    }
  })

  /** A server that refuses every request: the first connection to it fails for good. */
  const refusingServer = async () => {
    const seen = { received: 0 }
    const refusing = createServer((request, response) => {
      seen.received++
      response.setHeader("Access-Control-Allow-Origin", "*")
      if (request.method === "OPTIONS") {
        response.writeHead(204, {
          "Access-Control-Allow-Methods": "GET, POST, DELETE",
          "Access-Control-Allow-Headers": request.headers["access-control-request-headers"] ?? "*"
        }).end()
        return
      }
      response.writeHead(404, { "content-type": "application/json" }).end("{}")
    })
    await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve))
    return {
      url: `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/mcp`,
      seen,
      close: () =>
        new Promise<void>((resolve) => {
          refusing.close(() => resolve())
          refusing.closeAllConnections()
        })
    }
  }

  it("new handlers in the props of a server whose connection failed replace its handlers without connecting it", async () => {
    const refusing = await refusingServer()
    const url = refusing.url
    try {
      const { seen, Servers } = serversSeen()
      const app = (name: string) => (
        <TamboProvider
          {...connection(server(), {
            mcpServers: [{ url, handlers: { elicitation: async () => ({ action: "accept" as const, content: { name } }) } }]
          })}
        >
          <Servers />
        </TamboProvider>
      )
      const view = render(app("Ada"))
      await waitFor(() => expect(seen.servers[0]?.status).toBe("failed"), { timeout: 10_000 })
      const before = seen.servers[0]!.server.handlers
      const requests = refusing.seen.received

      view.rerender(app("Grace"))
      await waitFor(() => expect(seen.servers[0]?.server.handlers).not.toBe(before))
      expect(seen.servers[0]?.status).toBe("failed")
      expect(seen.statuses).toEqual(["connecting", "failed"])
      expect(refusing.seen.received).toBe(requests)
    } finally {
      await refusing.close()
    }
  })

  it("a new logLevel or toolTimeout in the props of a server whose connection failed, or one dropped, does not connect it again", async () => {
    const refusing = await refusingServer()
    try {
      const { seen, Servers } = serversSeen()
      type Settings = { readonly logLevel?: "error" | "debug" | undefined; readonly toolTimeout?: Duration.DurationInput | undefined; readonly name: string }
      const app = ({ name, ...settings }: Settings) => (
        <TamboProvider
          {...connection(server(), {
            mcpServers: [{
              url: refusing.url,
              ...settings,
              handlers: { elicitation: async () => ({ action: "accept" as const, content: { name } }) }
            }]
          })}
        >
          <Servers />
        </TamboProvider>
      )
      const view = render(app({ logLevel: "error", name: "Ada" }))
      await waitFor(() => expect(seen.servers[0]?.status).toBe("failed"), { timeout: 10_000 })
      const failed = seen.servers[0]!
      const requests = refusing.seen.received

      view.rerender(app({ logLevel: "debug", name: "Ada" }))
      view.rerender(app({ logLevel: "debug", toolTimeout: "5 seconds", name: "Ada" }))
      view.rerender(app({ toolTimeout: "5 seconds", name: "Ada" }))
      // New handlers, which reach the failed server in order after the changes above.
      view.rerender(app({ toolTimeout: "5 seconds", name: "Grace" }))
      await waitFor(() => expect(seen.servers[0]?.server.handlers).not.toBe(failed.server.handlers))
      expect(seen.servers[0]?.status).toBe("failed")
      // The failure of the first connection: none was made since.
      expect(seen.servers[0]?.error === failed.error).toBe(true)
      expect(seen.statuses).toEqual(["connecting", "failed"])
      expect(refusing.seen.received).toBe(requests)
    } finally {
      await refusing.close()
    }
  })

  it("an elicitation during a run waits for the form, and the answer reaches the server", async () => {
    const mcp = await start("greeter")
    const props = connection(server(), { mcpServers: [{ url: mcp.url }] })
    const seen: Array<unknown> = []
    function Form() {
      const { request, accept } = useTamboMcpElicitation()
      if (request === undefined) return null
      seen.push(request)
      return <button type="button" data-testid="accept" onClick={() => accept({ name: "Ada" })}>{request.message}</button>
    }
    const { result } = renderHook(() => ({ tambo: useTambo(), servers: useTamboMcpServers() }), {
      wrapper: ({ children }) => (
        <TamboProvider {...props}>
          <Form />
          {children}
        </TamboProvider>
      )
    })
    await waitFor(() => expect(result.current.servers[0]?.status).toBe("connected"))
    const results: Array<string> = []
    server().setScript((request) => {
      if (request.toolResults.length === 0) return [Script.toolCall("greet", {})]
      results.push(request.toolResults[0]!.text)
      return [Script.text("done")]
    })

    const run = result.current.tambo.sendMessage("greet me")
    const button = await screen.findByTestId("accept")
    expect(button.textContent).toBe("What is your name?")
    expect(seen[0]).toMatchObject({
      serverKey: "mcp",
      message: "What is your name?",
      requestedSchema: { type: "object", properties: { name: { type: "string", title: "Name" } }, required: ["name"] }
    })
    button.click()
    await run.thread
    expect(results).toEqual(["Hello, Ada!"])
    await waitFor(() => expect(screen.queryByTestId("accept")).toBeNull())
  })
  it("a URL elicitation of a server of mcpServers waits for the user's consent in useTamboMcpUrlElicitation", async () => {
    const mcp = await start("urlElicitor")
    const props = connection(server(), { mcpServers: [{ url: mcp.url, serverKey: "acme" }] })
    const seen: Array<unknown> = []
    function Consent() {
      const { request, accept, decline } = useTamboMcpUrlElicitation()
      if (request === undefined) return null
      seen.push(request)
      return (
        <div>
          <span data-testid="url">{request.url}</span>
          <button type="button" data-testid="open" onClick={accept}>{request.message}</button>
          <button type="button" data-testid="refuse" onClick={decline}>No</button>
        </div>
      )
    }
    const { result } = renderHook(() => ({ tambo: useTambo(), servers: useTamboMcpServers() }), {
      wrapper: ({ children }) => (
        <TamboProvider {...props}>
          <Consent />
          {children}
        </TamboProvider>
      )
    })
    await waitFor(() => expect(result.current.servers[0]?.status).toBe("connected"), { timeout: 10_000 })
    const results: Array<string> = []
    server().setScript((request) => {
      if (request.toolResults.length === 0) {
        return [Script.toolCall("sign_in", { url: "https://acme.example/login", elicitationId: `e-${results.length}` })]
      }
      results.push(request.toolResults[0]!.text)
      return [Script.text("done")]
    })

    const first = result.current.tambo.sendMessage("sign me in")
    const open = await screen.findByTestId("open")
    expect(open.textContent).toBe("Sign in to Acme")
    expect(screen.getByTestId("url").textContent).toBe("https://acme.example/login")
    expect(seen[0]).toMatchObject({ serverKey: "acme", url: "https://acme.example/login", elicitationId: "e-0" })
    open.click()
    await first.thread
    await waitFor(() => expect(screen.queryByTestId("open")).toBeNull())

    const second = result.current.tambo.sendMessage("again")
    ;(await screen.findByTestId("refuse")).click()
    await second.thread
    expect(results).toEqual(["accept", "decline"])
  })

  describe("elicitations that arrive while no form is shown", () => {
    const greetScript = (results: Array<string>) =>
      server().setScript((request) => {
        if (request.toolResults.length === 0) return [Script.toolCall("greet", {})]
        results.push(request.toolResults[0]!.text)
        return [Script.text("done")]
      })

    /** The form, shown once `show` is set. */
    function Form() {
      const { request, accept } = useTamboMcpElicitation()
      if (request === undefined) return null
      return <button type="button" data-testid="accept" onClick={() => accept({ name: "Ada" })}>{request.message}</button>
    }

    /** The provider connected to the MCP server at `url`, with the form hidden until `showForm(true)`. */
    const renderWithHiddenForm = async (url: string) => {
      const props = connection(server(), { mcpServers: [{ url }] })
      let showForm: (show: boolean) => void = () => undefined
      function Gate() {
        const [show, setShow] = useState(false)
        showForm = setShow
        return show ? <Form /> : null
      }
      const rendered = renderHook(() => ({ tambo: useTambo(), servers: useTamboMcpServers() }), {
        wrapper: ({ children }) => (
          <TamboProvider {...props}>
            <Gate />
            {children}
          </TamboProvider>
        )
      })
      await waitFor(() => expect(rendered.result.current.servers[0]?.status).toBe("connected"), { timeout: 10_000 })
      return { result: rendered.result, showForm: (show: boolean) => showForm(show) }
    }

    it("wait in a queue, and are shown as soon as a component uses useTamboMcpElicitation", async () => {
      const mcp = await start("greeter")
      const { result, showForm } = await renderWithHiddenForm(mcp.url)
      const results: Array<string> = []
      greetScript(results)

      const run = result.current.tambo.sendMessage("greet me")
      // The tool runs on the MCP server, which asks for the name: nobody shows the form yet.
      await waitFor(() =>
        expect(result.current.tambo.messages.flatMap((m) => m.content).some((block) => block.type === "tool_use")).toBe(true)
      )
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(results).toEqual([])

      showForm(true)
      const button = await screen.findByTestId("accept")
      expect(button.textContent).toBe("What is your name?")
      button.click()
      await run.thread
      expect(results).toEqual(["Hello, Ada!"])
    })

    it("leave the queue when the server gives up on them", async () => {
      const mcp = await start("impatientGreeter")
      const { result, showForm } = await renderWithHiddenForm(mcp.url)
      const results: Array<string> = []
      greetScript(results)
      await result.current.tambo.sendMessage("greet me").thread
      expect(results).toEqual(["No name (gave up)"])
      showForm(true)
      await waitFor(() => expect(screen.queryByTestId("accept")).toBeNull())
      // Nothing stale waits: a second request is the one shown.
      const second = result.current.tambo.sendMessage("greet me again")
      expect((await screen.findByTestId("accept")).textContent).toBe("What is your name? (quick)")
      await second.thread
    })

    it("are cancelled when the provider unmounts", async () => {
      const mcp = await start("greeter")
      const client = new TamboClient({ ...connection(server()), mcpServers: [{ url: mcp.url }] } as ConstructorParameters<typeof TamboClient>[0])
      try {
        const view = render(<TamboProvider client={client}>{null}</TamboProvider>)
        await waitFor(() => expect(Object.values(client.getMcpClients())[0]?.status).toBe("connected"), { timeout: 10_000 })
        const results: Array<string> = []
        greetScript(results)
        const run = client.run("greet me")
        await waitFor(() =>
          expect(
            Object.values(client.getState().threadMap)
              .flatMap(({ thread }) => thread.messages.flatMap((m) => m.content))
              .some((block) => block.type === "tool_use")
          ).toBe(true)
        )
        await new Promise((resolve) => setTimeout(resolve, 300))
        expect(results).toEqual([])
        view.unmount()
        await run.thread
        expect(results).toEqual(["No name (cancel)"])
      } finally {
        await client.destroy()
      }
    })

    it("an answer given for a request the server gave up on does not answer the next one", async () => {
      const impatient = await start("impatientGreeter")
      const patient = await start("greeter")
      const client = new TamboClient({
        ...connection(server()),
        mcpServers: [{ url: impatient.url, serverKey: "impatient" }, { url: patient.url, serverKey: "patient" }]
      } as ConstructorParameters<typeof TamboClient>[0])
      try {
        const { result } = renderHook(() => ({ form: useTamboMcpElicitation(), servers: useTamboMcpServers() }), {
          wrapper: ({ children }) => <TamboProvider client={client}>{children}</TamboProvider>
        })
        await waitFor(() => expect(result.current.servers.map((s) => s.status)).toEqual(["connected", "connected"]), {
          timeout: 10_000
        })
        const greet = (serverKey: string) => result.current.servers.find((s) => s.serverKey === serverKey)!.client!.callTool("greet")
        const textOf = (answer: Awaited<ReturnType<typeof greet>>) => answer.content.map((block) => ("text" in block ? block.text : "")).join("")

        const first = greet("impatient")
        await waitFor(() => expect(result.current.form.request?.serverKey).toBe("impatient"))
        // The app answers this form late (after a check of its own, say).
        const { accept: acceptFirst } = result.current.form
        const second = greet("patient")
        expect(textOf(await first)).toBe("No name (gave up)")
        await waitFor(() => expect(result.current.form.request?.serverKey).toBe("patient"))

        act(() => acceptFirst({ name: "Ada" }))
        expect(result.current.form.request?.serverKey).toBe("patient")
        act(() => result.current.form.accept({ name: "Grace" }))
        expect(textOf(await second)).toBe("Hello, Grace!")
      } finally {
        await client.destroy()
      }
    })

    it("go to the app's own handler when it set one: the hook shows nothing", async () => {
      const mcp = await start("greeter")
      const client = new TamboClient({ ...connection(server()), mcpServers: [{ url: mcp.url }] } as ConstructorParameters<typeof TamboClient>[0])
      client.setMcpElicitationHandler(() => ({ action: "accept", content: { name: "Grace" } }))
      try {
        render(
          <TamboProvider client={client}>
            <Form />
          </TamboProvider>
        )
        await waitFor(() => expect(Object.values(client.getMcpClients())[0]?.status).toBe("connected"), { timeout: 10_000 })
        const results: Array<string> = []
        greetScript(results)
        await client.run("greet me").thread
        expect(results).toEqual(["Hello, Grace!"])
        expect(screen.queryByTestId("accept")).toBeNull()
      } finally {
        await client.destroy()
      }
    })
  })
})
