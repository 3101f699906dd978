import { Script } from "@tambo-effect/testing"
import { afterEach, describe, expect, it, vi } from "vitest"
import { startMcpServer, type TestMcpServer } from "../../core/test/mcp/server.js"
import { approve, oauthMcpServer } from "../../core/test/mcp/oauthServer.js"
import {
  all,
  calculator,
  chatty,
  completer,
  counter,
  greeter,
  library,
  metaReader,
  prompter,
  rootsReader,
  summarizer,
  urlElicitor,
  worker
} from "../../core/test/mcp/tools.js"
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { TamboClient } from "../src/index.js"
import { jwtFor, makeClient, until, useServer, waitFor } from "./helpers.js"

const server = useServer()
const mcpServers: Array<TestMcpServer> = []
afterEach(async () => {
  await Promise.all(mcpServers.splice(0).map((s) => s.close()))
})

describe("MCP through the facade", () => {
  it("a server from the options is connected in the background and its tool runs in a run", async () => {
    const mcp = await startMcpServer({ setup: calculator })
    mcpServers.push(mcp)
    const client = makeClient(server(), { mcpServers: [{ url: mcp.url, serverKey: "calc" }] })
    // Connecting again joins the background connection.
    const connection = await client.connectMcpServer({ url: mcp.url, serverKey: "calc" })
    expect(connection.status).toBe("connected")
    expect(Object.values(client.getMcpClients()).map((c) => c.status)).toEqual(["connected"])
    server().setScript((request) =>
      request.toolResults.length === 0
        ? [Script.toolCall("add", { a: 2, b: 40 })]
        : [Script.text(`sum: ${request.toolResults[0]!.text}`)]
    )
    const thread = await client.run("add 2 and 40").thread
    const last = thread.messages.at(-1)!.content[0]!
    expect(last.type === "text" && last.text).toBe("sum: 42")
    const run = server().requests.find((r) => r.path.endsWith("/runs"))!
    expect((run.body as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toContain("add")
  })

  it("a connection's client calls the server as Promises; getMcpClients() is the same object until something changes", async () => {
    const mcp = await startMcpServer({ setup: calculator })
    mcpServers.push(mcp)
    const client = makeClient(server())
    const connection = await client.connectMcpServer({ url: mcp.url, serverKey: "calc" })
    const handle = connection.client!
    expect((await handle.listTools()).map((tool) => tool.name)).toEqual(["add", "divide", "explode", "math.square"])
    const sum = await handle.callTool("add", { a: 2, b: 40 })
    expect(sum.content).toEqual([{ type: "text", text: "42" }])
    expect(await handle.callTool("explode")).toMatchObject({ isError: true })
    expect(handle.getServerVersion()).toEqual({ name: "test-mcp-server", version: "1.0.0" })
    expect(handle.getServerCapabilities()).toMatchObject({ tools: {} })
    // The record and its connections stay the same objects while nothing changes.
    const before = client.getMcpClients()
    expect(client.getMcpClients()).toBe(before)
    expect(Object.values(before)[0]).toBe(connection)
    // Closing its client disconnects the server.
    await handle.close()
    expect(client.getMcpClients()).toEqual({})
    expect(client.getMcpClients()).not.toBe(before)
    const again = await client.connectMcpServer({ url: mcp.url, serverKey: "calc" })
    await client.destroy()
    await expect(again.client!.callTool("add", { a: 1, b: 1 })).rejects.toMatchObject({ _tag: "AbortError", reason: "ClientDestroyed" })
  })

  it("an unreachable server rejects with an McpError; disconnect withdraws the tools", async () => {
    const client = makeClient(server())
    await expect(client.connectMcpServer({ url: "http://127.0.0.1:1/mcp" })).rejects.toMatchObject({
      _tag: "McpError",
      reason: "Connect"
    })
    const mcp = await startMcpServer({ setup: calculator })
    mcpServers.push(mcp)
    await client.connectMcpServer({ url: mcp.url })
    await client.disconnectMcpServer({ url: mcp.url })
    server().setScript([Script.text("ok")])
    await client.run("hi").thread
    const run = server().requests.filter((r) => r.path.endsWith("/runs")).at(-1)!
    expect((run.body as { tools?: Array<unknown> }).tools ?? []).toEqual([])
  })

  it("a server's own handlers answer its elicitations and sampling requests; the client's answer the others", async () => {
    const greeting = await startMcpServer({ setup: all(greeter, summarizer) })
    const other = await startMcpServer({ setup: all(greeter, summarizer) })
    mcpServers.push(greeting, other)
    const signals: Array<AbortSignal> = []
    const client = makeClient(server(), {
      mcpServers: [{
        url: greeting.url,
        serverKey: "own",
        handlers: {
          elicitation: async (request, extra) => {
            signals.push(extra.signal)
            return { action: "accept", content: { name: `own ${request.params.message.length}` } }
          },
          sampling: async (request) => ({
            model: "own-model",
            role: "assistant",
            content: { type: "text", text: `own of ${request.params.maxTokens}` }
          })
        }
      }]
    })
    client.setMcpElicitationHandler(() => ({ action: "accept", content: { name: "client" } }))
    const sampling = () => ({ model: "m", role: "assistant" as const, content: { type: "text" as const, text: "client's" } })
    client.setMcpSamplingHandler(sampling)
    expect(client.getMcpSamplingHandler()).toBe(sampling)
    const own = await client.connectMcpServer({ url: greeting.url })
    const others = await client.connectMcpServer({ url: other.url, serverKey: "other" })
    const call = (connection: typeof own, name: string, args: Record<string, unknown> = {}) =>
      connection.client!.callTool(name, args).then((result) =>
        result.content.map((block) => ("text" in block ? block.text : "")).join("")
      )

    expect(await call(others, "greet")).toBe("Hello, client!")
    expect(await call(others, "summarize", { text: "x" })).toBe("Summary: client's")
    // The connect above gave no handlers: the options' ones stay.
    expect(await call(own, "greet")).toBe("Hello, own 18!")
    expect(signals).toHaveLength(1)
    expect(signals[0]).toBeInstanceOf(AbortSignal)
    expect(await call(own, "summarize", { text: "x" })).toBe("Summary: own of 50")
    // `handlers: {}` leaves the server to the client's handlers.
    await client.connectMcpServer({ url: greeting.url, handlers: {} })
    expect(await call(own, "greet")).toBe("Hello, client!")

    // Without a handler, elicitations are declined.
    client.setMcpElicitationHandler(undefined)
    expect(await call(others, "greet")).toBe("No name (decline)")
  })

  it("a server connected while no sampling handler is set is not asked to sample", async () => {
    const mcp = await startMcpServer({ setup: summarizer })
    mcpServers.push(mcp)
    const client = makeClient(server())
    const connection = await client.connectMcpServer({ url: mcp.url })
    client.setMcpSamplingHandler(() => ({ model: "m", role: "assistant", content: { type: "text", text: "late" } }))
    const result = await connection.client!.callTool("summarize", { text: "x" })
    expect(result.isError).toBe(true)
    expect(JSON.stringify(result.content)).toContain("Method not found")
  })

  it("a connection's client replaces the server's own handlers on its session; undefined hands it back to the client's", async () => {
    const mcp = await startMcpServer({ setup: all(greeter, summarizer) })
    mcpServers.push(mcp)
    const client = makeClient(server())
    client.setMcpElicitationHandler(() => ({ action: "accept", content: { name: "client" } }))
    client.setMcpSamplingHandler(() => ({ model: "m", role: "assistant", content: { type: "text", text: "client's" } }))
    const connection = await client.connectMcpServer({ url: mcp.url, serverKey: "own" })
    const handle = connection.client!
    const call = (name: string, args: Record<string, unknown> = {}) =>
      handle.callTool(name, args).then((result) => result.content.map((block) => ("text" in block ? block.text : "")).join(""))
    const handlers = () => Object.values(client.getMcpClients())[0]!.server.handlers ?? {}
    expect(await call("greet")).toBe("Hello, client!")

    const elicitation = () => ({ action: "accept" as const, content: { name: "own" } })
    const sampling = () => ({ model: "own", role: "assistant" as const, content: { type: "text" as const, text: "own" } })
    handle.updateElicitationHandler(elicitation)
    handle.updateSamplingHandler(sampling)
    await vi.waitFor(() => expect(handlers()).toEqual({ elicitation, sampling }))
    expect(await call("greet")).toBe("Hello, own!")
    expect(await call("summarize", { text: "x" })).toBe("Summary: own")

    // One handler handed back; the other stays the server's own.
    handle.updateElicitationHandler(undefined)
    await vi.waitFor(() => expect(handlers()).toEqual({ sampling }))
    expect(await call("greet")).toBe("Hello, client!")
    expect(await call("summarize", { text: "x" })).toBe("Summary: own")
    expect(mcp.sessions.opened).toBe(1)

    // Once the server is disconnected, an update does not connect it again.
    await handle.close()
    handle.updateElicitationHandler(elicitation)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(client.getMcpClients()).toEqual({})
    await client.destroy()
  })

  it("a client kept from an earlier connection does not replace the handlers of the server connected again under its key", async () => {
    const mcp = await startMcpServer({ setup: greeter })
    mcpServers.push(mcp)
    const client = makeClient(server())
    const named = (name: string) => () => ({ action: "accept" as const, content: { name } })
    const earlier = await client.connectMcpServer({ url: mcp.url, serverKey: "own" })
    const kept = earlier.client!
    await client.disconnectMcpServer(earlier.key)
    const later = await client.connectMcpServer({ url: mcp.url, serverKey: "own", handlers: { elicitation: named("new") } })
    expect(later.key).toBe(earlier.key)

    kept.updateElicitationHandler(named("stale"))
    // Applied in order: once a later replacement is done, the kept client's was decided.
    await client.updateMcpServerHandlers("no such server", {})
    await expect(kept.callTool("greet", {})).rejects.toMatchObject({ _tag: "McpError", reason: "NotConnected" })
    const greeting = await later.client!.callTool("greet", {})
    expect(greeting.content).toEqual([{ type: "text", text: "Hello, new!" }])
    await client.destroy()
  })

  it("closing a client kept from an earlier connection leaves the server connected again under its key", async () => {
    const mcp = await startMcpServer({ setup: calculator })
    mcpServers.push(mcp)
    const client = makeClient(server())
    const earlier = await client.connectMcpServer({ url: mcp.url, serverKey: "calc" })
    const kept = earlier.client!
    await client.disconnectMcpServer(earlier.key)
    const later = await client.connectMcpServer({ url: mcp.url, serverKey: "calc" })

    await kept.close()
    expect(client.getMcpClients()[later.key]?.status).toBe("connected")
    const sum = await later.client!.callTool("add", { a: 2, b: 40 })
    expect(sum.content).toEqual([{ type: "text", text: "42" }])
    // Its own client still disconnects it.
    await later.client!.close()
    expect(client.getMcpClients()).toEqual({})
    await client.destroy()
  })

  it("the handlers set last are in force, whether a connection's client or updateMcpServerHandlers set them", async () => {
    const mcp = await startMcpServer({ setup: all(greeter, summarizer) })
    mcpServers.push(mcp)
    const client = makeClient(server())
    const connection = await client.connectMcpServer({ url: mcp.url, serverKey: "own" })
    const handle = connection.client!
    const greet = () =>
      handle.callTool("greet", {}).then((result) => result.content.map((block) => ("text" in block ? block.text : "")).join(""))
    const handlers = () => client.getMcpClients()[connection.key]!.server.handlers ?? {}
    const named = (name: string) => () => ({ action: "accept" as const, content: { name } })
    const first = named("first")
    const last = named("last")

    handle.updateElicitationHandler(first)
    await client.updateMcpServerHandlers(connection.key, { elicitation: last })
    // Once a later update of the connection's client is in force, every update before it is too.
    const sampling = () => ({ model: "m", role: "assistant" as const, content: { type: "text" as const, text: "own" } })
    handle.updateSamplingHandler(sampling)
    await vi.waitFor(() => expect(handlers().sampling).toBe(sampling))
    expect(handlers().elicitation).toBe(last)
    expect(await greet()).toBe("Hello, last!")

    // And the other way round.
    const replaced = client.updateMcpServerHandlers(connection.key, { elicitation: first })
    handle.updateElicitationHandler(last)
    const samplingLast = () => ({ model: "m", role: "assistant" as const, content: { type: "text" as const, text: "last" } })
    handle.updateSamplingHandler(samplingLast)
    await replaced
    await vi.waitFor(() => expect(handlers().sampling).toBe(samplingLast))
    expect(handlers().elicitation).toBe(last)
    expect(await greet()).toBe("Hello, last!")
    await client.destroy()
  })

  it("handlers given to connectMcpServer for a connected server replace those its client was asked for before", async () => {
    const mcp = await startMcpServer({ setup: greeter })
    mcpServers.push(mcp)
    const client = makeClient(server())
    const connection = await client.connectMcpServer({ url: mcp.url, serverKey: "own" })
    const handle = connection.client!
    const first = () => ({ action: "accept" as const, content: { name: "first" } })
    const last = () => ({ action: "accept" as const, content: { name: "last" } })

    handle.updateElicitationHandler(first)
    await client.connectMcpServer({ url: mcp.url, serverKey: "own", handlers: { elicitation: last } })
    // Once a later update of the connection's client is in force, every update before it is too.
    const sampling = () => ({ model: "m", role: "assistant" as const, content: { type: "text" as const, text: "own" } })
    handle.updateSamplingHandler(sampling)
    await vi.waitFor(() => expect(client.getMcpClients()[connection.key]!.server.handlers?.sampling).toBe(sampling))
    expect(client.getMcpClients()[connection.key]!.server.handlers?.elicitation).toBe(last)
    const greeting = await handle.callTool("greet", {})
    expect(greeting.content).toEqual([{ type: "text", text: "Hello, last!" }])

    // And the other way round, also while an update waits.
    handle.updateSamplingHandler(undefined)
    const connecting = client.connectMcpServer({ url: mcp.url, serverKey: "own", handlers: { elicitation: first } })
    handle.updateElicitationHandler(last)
    await connecting
    const samplingLast = () => ({ model: "m", role: "assistant" as const, content: { type: "text" as const, text: "last" } })
    handle.updateSamplingHandler(samplingLast)
    await vi.waitFor(() => expect(client.getMcpClients()[connection.key]!.server.handlers?.sampling).toBe(samplingLast))
    expect(client.getMcpClients()[connection.key]!.server.handlers?.elicitation).toBe(last)
    expect(mcp.sessions.opened).toBe(1)
    await client.destroy()
  })

  it("a handler replaced while the server is being disconnected does not connect it again", async () => {
    let session: StreamableHTTPServerTransport | undefined
    let holdDeletes = false
    let deleteArrived: () => void = () => undefined
    const deleteHeld = new Promise<void>((resolve) => (deleteArrived = resolve))
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    const mcp = await startMcpServer({
      setup: greeter,
      beforeSessionRequest: async (request, transport) => {
        session ??= transport
        if (request.method !== "DELETE" || !holdDeletes) return
        deleteArrived()
        await gate
      }
    })
    mcpServers.push(mcp)
    try {
      const client = makeClient(server())
      const connection = await client.connectMcpServer({ url: mcp.url, serverKey: "own" })
      const handle = connection.client!

      // The server drops its event stream: the dropped session is ended while the connections are
      // locked, its DELETE held at the gate.
      holdDeletes = true
      session!.closeStandaloneSSEStream()
      await deleteHeld
      // A disconnect waits for the lock, then a handler is replaced: it reads the server as
      // known, and waits for the lock after the disconnect.
      const disconnecting = client.disconnectMcpServer(connection.key)
      handle.updateElicitationHandler(async () => ({ action: "cancel" }))
      await new Promise((resolve) => setImmediate(resolve))
      await new Promise((resolve) => setImmediate(resolve))
      release()
      await disconnecting
      await new Promise((resolve) => setImmediate(resolve))

      expect(client.getMcpClients()).toEqual({})
      await client.destroy()
    } finally {
      release()
    }
  })

  it("watches a resource: its contents, then its new contents at each change, until unwatched; a failure goes to onError", async () => {
    const log: Array<string> = []
    const mcp = await startMcpServer({ setup: counter(log) })
    mcpServers.push(mcp)
    const client = makeClient(server())
    const connection = await client.connectMcpServer({ url: mcp.url, serverKey: "counting" })
    const seen: Array<string> = []
    const unwatch = client.watchMcpResource("counting", "file:///counter.txt", (contents) => {
      seen.push(contents.contents.map((part) => ("text" in part ? part.text : "")).join(""))
    })
    await vi.waitFor(() => expect(seen).toEqual(["0"]))
    await connection.client!.callTool("bump")
    await vi.waitFor(() => expect(seen).toEqual(["0", "1"]))
    unwatch()
    await vi.waitFor(() => expect(log).toEqual(["subscribe file:///counter.txt", "unsubscribe file:///counter.txt"]))

    const errors: Array<unknown> = []
    client.watchMcpResource("nope", "file:///x", () => undefined, (error) => errors.push(error))
    await vi.waitFor(() => expect(errors).toMatchObject([{ _tag: "McpError", reason: "NotConnected" }]))
  })

  it("lists and fetches prompts, lists and reads resources, and sends a message that names one with its contents", async () => {
    const mcp = await startMcpServer({ setup: all(prompter, library) })
    mcpServers.push(mcp)
    const client = makeClient(server(), {
      resources: [{ uri: "app://notes", name: "notes" }],
      getResource: async (uri) => ({ contents: [{ uri, mimeType: "text/plain", text: "my notes" }] })
    })
    await client.connectMcpServer({ url: mcp.url, serverKey: "docs" })

    const prompts = await client.listMcpPrompts()
    expect(prompts.map(({ serverKey, name, arguments: args }) => ({ serverKey, name, args: args.map((a) => a.name) })))
      .toEqual([{ serverKey: "docs", name: "review", args: ["code", "language"] }, { serverKey: "docs", name: "hello", args: [] }])
    expect((await client.getMcpPrompt("docs", "review", { code: "1 + 1" })).messages).toEqual([
      { role: "user", content: { type: "text", text: "Review this code: 1 + 1" } }
    ])
    await expect(client.getMcpPrompt("nope", "review")).rejects.toMatchObject({ _tag: "McpError", reason: "NotConnected" })

    expect((await client.listMcpResources()).map(({ serverKey, uri, name, mimeType }) => ({ serverKey, uri, name, mimeType })))
      .toEqual([
        { serverKey: "docs", uri: "file:///readme.md", name: "readme", mimeType: "text/markdown" },
        { serverKey: "docs", uri: "file:///logo.png", name: "logo", mimeType: "image/png" },
        { serverKey: "registry", uri: "app://notes", name: "notes", mimeType: undefined }
      ])
    expect((await client.listMcpResourceTemplates()).map((t) => t.uriTemplate)).toEqual(["note://{id}"])
    expect(await client.readMcpResource("docs", "file:///readme.md")).toEqual({
      contents: [{ uri: "file:///readme.md", mimeType: "text/markdown", text: "# Hello" }]
    })
    expect(await client.readMcpResource("registry", "app://notes")).toEqual({
      contents: [{ uri: "app://notes", mimeType: "text/plain", text: "my notes" }]
    })

    server().setScript([Script.text("read it")])
    await client.run({
      role: "user",
      content: [
        { type: "text", text: "Summarize" },
        { type: "resource", resource: { uri: "file:///readme.md", serverKey: "docs" } },
        { type: "resource", resource: { uri: "app://notes", serverKey: "registry" } }
      ]
    }).thread
    const run = server().requests.find((r) => r.path.endsWith("/runs"))!
    expect((run.body as { message: { content: unknown } }).message.content).toEqual([
      { type: "text", text: "Summarize" },
      { type: "resource", resource: { uri: "file:///readme.md", mimeType: "text/markdown", text: "# Hello" } },
      { type: "resource", resource: { uri: "app://notes", mimeType: "text/plain", text: "my notes" } }
    ])
  })

  it("connects Tambo's own MCP server for the current thread when asked", async () => {
    const client = makeClient(server(), { tamboMcpServer: true })
    server().setScript([Script.text("hi")])
    const thread = await client.run("hello").thread
    await vi.waitFor(() => {
      expect(Object.values(client.getMcpClients()).map((c) => [c.serverKey, c.status])).toEqual([["tambo", "connected"]])
    }, { timeout: 10_000 })
    expect(server().requests.find((r) => r.path === "/auth/mcp/access-token")?.body).toEqual({ threadId: thread.id })
    expect(await client.listMcpPrompts()).toEqual([])
    await client.destroy()
  })

  it("followTamboMcpServer connects Tambo's own MCP server until the last of its calls stops", async () => {
    const client = makeClient(server())
    const tokenRequests = () => server().requests.filter((r) => r.path === "/auth/mcp/access-token")
    const tamboStatus = () => Object.values(client.getMcpClients()).map((c) => [c.serverKey, c.status])
    const stopFirst = client.followTamboMcpServer({ contextKey: "page-1" })
    const stopSecond = client.followTamboMcpServer({ contextKey: "ignored: the first call's is shared" })
    await vi.waitFor(() => expect(tamboStatus()).toEqual([["tambo", "connected"]]), { timeout: 10_000 })
    expect(tokenRequests().map((r) => r.body)).toEqual([{ contextKey: "page-1" }])
    stopFirst()
    stopFirst()
    expect(tamboStatus()).toEqual([["tambo", "connected"]])
    stopSecond()
    await vi.waitFor(() => expect(client.getMcpClients()).toEqual({}))
    // Started again after it stopped: a new following, with its own context key.
    const stopThird = client.followTamboMcpServer({ contextKey: "page-2" })
    await vi.waitFor(() => expect(tamboStatus()).toEqual([["tambo", "connected"]]), { timeout: 10_000 })
    expect(tokenRequests().at(-1)?.body).toEqual({ contextKey: "page-2" })
    stopThird()
    await vi.waitFor(() => expect(client.getMcpClients()).toEqual({}))

    // With the `tamboMcpServer` option, the client follows it already: the call adds nothing.
    const following = makeClient(server(), { tamboMcpServer: { contextKey: "opt" } })
    const followingStatus = () => Object.values(following.getMcpClients()).map((c) => c.status)
    await vi.waitFor(() => expect(followingStatus()).toEqual(["connected"]), { timeout: 10_000 })
    following.followTamboMcpServer({ contextKey: "other" })()
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(followingStatus()).toEqual(["connected"])
    expect(tokenRequests().filter((r) => JSON.stringify(r.body).includes("other"))).toEqual([])
    await Promise.all([client.destroy(), following.destroy()])
  })

  it("destroy stops following Tambo's MCP server: the token request in flight is given up and none follows", async () => {
    // A Tambo API that holds every MCP token request: the following waits on it.
    const held: Array<IncomingMessage> = []
    const api = createServer((req, res) => {
      if (req.url === "/auth/mcp/access-token") held.push(req)
      else res.writeHead(404).end()
    })
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve))
    try {
      const client = new TamboClient({
        apiKey: "key",
        tamboUrl: `http://127.0.0.1:${(api.address() as AddressInfo).port}`,
        userKey: "user-1",
        maxRetries: 0
      })
      client.followTamboMcpServer({ contextKey: "page" })
      await vi.waitFor(() => expect(held).toHaveLength(1))
      const givenUp = new Promise((resolve) => held[0]!.socket.once("close", resolve))
      // Never stopped by its caller: the client's end is its end.
      await client.destroy()
      await givenUp
      expect(held).toHaveLength(1)
    } finally {
      api.closeAllConnections()
      await new Promise((resolve) => api.close(resolve))
    }
  })

  it("authorizes with an OAuth-protected MCP server through the onAuthorize callback", async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const protectedServer = await Effect.runPromise(Scope.extend(oauthMcpServer(calculator), scope))
      const client = makeClient(server())
      const authorized: Array<string> = []
      const connection = await client.connectMcpServer({
        url: protectedServer.url,
        oauth: {
          redirectUrl: "http://127.0.0.1:1/callback",
          onAuthorize: async (url) => {
            authorized.push(new URL(url).pathname)
            return approve(url)
          }
        }
      })
      expect(connection.status).toBe("connected")
      expect(authorized).toEqual(["/authorize"])
      expect(connection.tools.map((tool) => tool.name)).toContain("add")
      await client.destroy()
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })

  it("an authorizeTimeout no timer can wait rejects connectMcpServer with an McpError naming it, and the user is never asked", async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const protectedServer = await Effect.runPromise(Scope.extend(oauthMcpServer(calculator), scope))
      const client = makeClient(server())
      let asked = 0
      const error = await client.connectMcpServer({
        url: protectedServer.url,
        oauth: {
          redirectUrl: "http://127.0.0.1:1/callback",
          authorizeTimeout: Infinity,
          onAuthorize: () => {
            asked++
            return new Promise<string>(() => undefined)
          }
        }
      }).catch((error: unknown) => error)
      expect(error).toMatchObject({ _tag: "McpError", reason: "Connect" })
      expect((error as Error).message).toContain("authorizeTimeout must be at most 2147483647 ms")
      expect(asked).toBe(0)
      expect(Object.values(client.getMcpClients()).map((c) => c.status)).toEqual(["failed"])
      await client.destroy()
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})

describe("MCP logging, progress, completions and roots through the facade", () => {
  it("log messages reach subscribers at the level asked for; the progress of the model's calls reaches its subscribers", async () => {
    const mcp = await startMcpServer({ setup: all(chatty(), worker) })
    mcpServers.push(mcp)
    const client = makeClient(server())
    // The facade logs a throwing listener through Effect's default logger, to the console.
    const consoleLog = vi.spyOn(console, "log").mockImplementation(() => undefined)
    const logs: Array<string> = []
    const progress: Array<string> = []
    const stopLogs = client.subscribeToMcpLogs((message) => {
      logs.push(`${message.serverKey} ${message.level}`)
      // A listener that throws still hears the next message.
      if (message.level === "alert") throw new Error("the log view broke")
    })
    const stopProgress = client.subscribeToMcpToolProgress((notice) =>
      progress.push(`${notice.toolCallId} ${notice.progress}/${notice.total}`)
    )
    const connection = await client.connectMcpServer({ url: mcp.url, serverKey: "work", logLevel: "critical" })
    await connection.client!.callTool("chatty", { n: 1 })
    await until(() => logs.length === 3)
    expect(logs).toEqual(["work critical", "work alert", "work emergency"])
    expect(consoleLog.mock.calls.map((call) => String(call[0]))).toEqual([
      expect.stringContaining("A listener of subscribeToMcpLogs threw: Error: the log view broke")
    ])

    await client.setMcpLogLevel("work", "error")
    await connection.client!.callTool("chatty", { n: 2 })
    await until(() => logs.length === 7)
    expect(logs.slice(3)).toEqual(["work error", "work critical", "work alert", "work emergency"])
    await expect(client.setMcpLogLevel("nope", "info")).rejects.toMatchObject({ _tag: "McpError", reason: "NotConnected" })

    server().setScript((request) =>
      request.toolResults.length === 0
        ? [Script.toolCall("work", { steps: 2, gapMs: 500 }, { id: "call_1" })]
        : [Script.text("worked")]
    )
    const stream = client.run("work")
    // While the call runs, its latest progress is there to read.
    await until(() => progress.length === 1)
    expect(client.getMcpToolProgress("call_1")).toMatchObject({ toolCallId: "call_1", total: 2 })
    expect([1, 2]).toContain(client.getMcpToolProgress("call_1")?.progress)
    await stream.thread
    await until(() => progress.length === 2)
    expect(progress).toEqual(["call_1 1/2", "call_1 2/2"])
    expect(client.getMcpToolProgress("call_1")).toBeUndefined()

    // A call through the connection's client hears its own progress.
    const heard: Array<number> = []
    const result = await connection.client!.callTool("work", { steps: 3, gapMs: 0 }, undefined, {
      onProgress: (notice) => heard.push(notice.progress)
    })
    expect(result.content).toEqual([{ type: "text", text: "done" }])
    expect(heard).toEqual([1, 2, 3])

    // A listener still subscribed hears the next messages: by then the stopped one would have too.
    const later: Array<string> = []
    const stopLater = client.subscribeToMcpLogs((message) => later.push(message.level))
    stopLogs()
    stopProgress()
    await connection.client!.callTool("chatty", { n: 3 })
    await until(() => later.includes("emergency"), "the last message of the call")
    expect(logs).toHaveLength(7)
    stopLater()
    await client.destroy()
    consoleLog.mockRestore()
  })

  it("a connection's client sends a call's _meta, as upstream's MCPClient does", async () => {
    const mcp = await startMcpServer({ setup: metaReader })
    mcpServers.push(mcp)
    const client = makeClient(server())
    const connection = await client.connectMcpServer({ url: mcp.url })
    const result = await connection.client!.callTool("meta", {}, { traceId: "t-1" })
    expect(result.content).toEqual([{ type: "text", text: JSON.stringify({ traceId: "t-1" }) }])
    await client.destroy()
  })

  it("completes prompt arguments, and gives servers the roots and tells them when they change", async () => {
    const changes: Array<string> = []
    const mcp = await startMcpServer({ setup: all(completer, rootsReader(changes)) })
    mcpServers.push(mcp)
    const client = makeClient(server(), { mcpRoots: [{ uri: "file:///app", name: "App" }] })
    const connection = await client.connectMcpServer({ url: mcp.url, serverKey: "people" })
    expect(await client.completeMcpArgument("people", { type: "ref/prompt", name: "greet" }, { name: "name", value: "al" }))
      .toEqual({ values: ["Alan"], total: 1, hasMore: false })
    await expect(
      client.completeMcpArgument("nope", { type: "ref/prompt", name: "greet" }, { name: "name", value: "" })
    ).rejects.toMatchObject({ _tag: "McpError", reason: "NotConnected" })

    const rootsText = async () => {
      const result = await connection.client!.callTool("roots")
      return result.content.map((part) => ("text" in part ? part.text : "")).join("")
    }
    expect(JSON.parse(await rootsText())).toEqual([{ uri: "file:///app", name: "App" }])
    await client.setMcpRoots([{ uri: "file:///app/src" }])
    await until(() => changes.length === 1)
    expect(changes).toEqual(["roots changed"])
    expect(JSON.parse(await rootsText())).toEqual([{ uri: "file:///app/src" }])
    await client.destroy()
  })
})

describe("MCP URL elicitations through the facade", () => {
  it("a handler given as mcpUrlElicitationHandler answers from the first connection of the servers listed", async () => {
    const mcp = await startMcpServer({ setup: urlElicitor })
    mcpServers.push(mcp)
    const asked: Array<string> = []
    const handler = (request: { readonly params: { readonly url: string } }) => {
      asked.push(request.params.url)
      return { action: "accept" as const }
    }
    const client = makeClient(server(), { mcpServers: [{ url: mcp.url, serverKey: "acme" }], mcpUrlElicitationHandler: handler })
    expect(client.getMcpUrlElicitationHandler()).toBe(handler)
    const connection = await client.connectMcpServer({ url: mcp.url, serverKey: "acme" })
    const result = await connection.client!.callTool("sign_in", { url: "https://acme.example/", elicitationId: "e-1" })
    expect(result.content.map((part) => ("text" in part ? part.text : "")).join("")).toBe("accept")
    expect(asked).toEqual(["https://acme.example/"])
    await client.destroy()
  })

  it("the client's handler answers them, a server's own replaces it on the same session, and completions reach subscribers", async () => {
    const mcp = await startMcpServer({ setup: urlElicitor })
    mcpServers.push(mcp)
    const client = makeClient(server())
    const asked: Array<string> = []
    client.setMcpUrlElicitationHandler((request) => {
      asked.push(`client ${request.params.url}`)
      return { action: "accept" }
    })
    expect(client.getMcpUrlElicitationHandler()).toBeDefined()
    const completions: Array<string> = []
    const stop = client.subscribeToMcpElicitationCompletions((completion) =>
      completions.push(`${completion.serverKey} ${completion.elicitationId}`)
    )
    const connection = await client.connectMcpServer({ url: mcp.url, serverKey: "acme" })
    const signIn = async (elicitationId: string) => {
      const result = await connection.client!.callTool("sign_in", { url: "https://acme.example/", elicitationId })
      return result.content.map((part) => ("text" in part ? part.text : "")).join("")
    }
    expect(await signIn("e-1")).toBe("accept")
    for (let n = 0; n < 200 && completions.length === 0; n++) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(completions).toEqual(["acme e-1"])

    connection.client!.updateUrlElicitationHandler(async (request) => {
      asked.push(`server ${request.params.elicitationId}`)
      return { action: "decline" }
    })
    for (let n = 0; n < 200; n++) {
      if (client.getMcpClients()[connection.key]?.server.handlers?.urlElicitation !== undefined) break
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    expect(await signIn("e-2")).toBe("decline")
    expect(asked).toEqual(["client https://acme.example/", "server e-2"])
    stop()
    await client.destroy()
  })
})

describe("deferStart", () => {
  const exchangedFor = (subject: string) =>
    server().requests.filter((r) =>
      r.path === "/oauth/token" && JSON.parse(
        Buffer.from((r.body as { subject_token: string }).subject_token.split(".")[1]!, "base64url").toString()
      ).sub === subject
    ).length

  it("holds back the token exchange and the MCP connections until start(), which starts them once", async () => {
    const expiry = Math.floor(Date.now() / 1000) + 1_000
    const held = await startMcpServer({ setup: calculator })
    const eager = await startMcpServer({ setup: calculator })
    mcpServers.push(held, eager)
    const deferred = makeClient(server(), {
      userKey: undefined,
      userToken: jwtFor("alice", expiry),
      mcpServers: [{ url: held.url, serverKey: "calc" }],
      deferStart: true
    })
    // A client made at the same time without the option: once it has exchanged and connected, the
    // deferred one has had the same turns to do so.
    const started = makeClient(server(), {
      userKey: undefined,
      userToken: jwtFor("bob", expiry),
      mcpServers: [{ url: eager.url, serverKey: "calc" }]
    })
    await waitFor(() => started.getAuthState().status === "identified", "the eager client's exchange")
    await waitFor(() => Object.values(started.getMcpClients()).some((c) => c.status === "connected"), "the eager client's session")
    expect(exchangedFor("alice")).toBe(0)
    expect(held.sessions.opened).toBe(0)
    expect(held.requests).toEqual([])
    // Nothing under way, yet not identified: the first request that needs the token exchanges it.
    expect(deferred.getAuthState()).toEqual({ status: "exchanging" })

    deferred.start()
    deferred.start()
    await waitFor(() => deferred.getAuthState().status === "identified", "the deferred client's exchange")
    await waitFor(() => Object.values(deferred.getMcpClients()).some((c) => c.status === "connected"), "the deferred session")
    // A run after start() starts nothing again.
    server().setScript([Script.text("hi")])
    await deferred.run("hello").thread
    expect(exchangedFor("alice")).toBe(1)
    expect(held.sessions.opened).toBe(1)
  })

  it("a request before start() exchanges the token it needs, and a run starts the held MCP connections in the background", async () => {
    const mcp = await startMcpServer({ setup: calculator })
    mcpServers.push(mcp)
    const client = makeClient(server(), {
      userKey: undefined,
      userToken: jwtFor("carol", Math.floor(Date.now() / 1000) + 1_000),
      mcpServers: [{ url: mcp.url, serverKey: "calc" }],
      deferStart: true
    })
    expect(await client.listThreads()).toEqual([])
    expect(exchangedFor("carol")).toBe(1)
    expect(mcp.sessions.opened).toBe(0)
    // As for a client that starts at once, the servers connect in the background, beside the run.
    server().setScript([Script.text("hi")])
    await client.run("hello").thread
    await waitFor(() => Object.values(client.getMcpClients()).some((c) => c.status === "connected"), "the held session")
    expect(mcp.sessions.opened).toBe(1)
    expect(exchangedFor("carol")).toBe(1)
  })
})
