import { Script } from "@tambo-effect/testing"
import { afterEach, describe, expect, it, vi } from "vitest"
import { startMcpServer, type TestMcpServer } from "../../core/test/mcp/server.js"
import { approve, oauthMcpServer } from "../../core/test/mcp/oauthServer.js"
import { all, calculator, counter, library, prompter } from "../../core/test/mcp/tools.js"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { makeClient, useServer } from "./helpers.js"

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
    await Effect.runPromise(connection.client!.callTool("bump"))
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
})
