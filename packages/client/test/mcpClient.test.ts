// `MCPClient`: one MCP server without a Tambo client, against real MCP servers.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { startMcpServer, type TestMcpServer } from "../../core/test/mcp/server.js"
import { all, calculator, gate, greeter, metaReader, sleeper, summarizer, worker } from "../../core/test/mcp/tools.js"
import { MCPClient, MCPTransport, type MCPHandlers } from "../src/index.js"

const servers: Array<TestMcpServer> = []
const clients: Array<MCPClient> = []
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()))
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const serve = async (setup: Parameters<typeof startMcpServer>[0]["setup"], transport: "http" | "sse" = "http") => {
  const server = await startMcpServer({ setup, transport })
  servers.push(server)
  return server
}

const create = async (...args: Parameters<typeof MCPClient.create>) => {
  const client = await MCPClient.create(...args)
  clients.push(client)
  return client
}

const textOf = (result: { readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }> }) =>
  result.content.map((block) => block.text ?? "").join("")

describe("MCPClient", () => {
  for (const transport of [MCPTransport.HTTP, MCPTransport.SSE]) {
    it(`connects over ${transport}, lists and calls the server's tools, and says what the server is`, async () => {
      const server = await serve(calculator, transport)
      const mcp = await create(server.url, transport)
      expect((await mcp.listTools()).map((tool) => tool.name).sort()).toEqual(["add", "divide", "explode", "math.square"])
      expect(textOf(await mcp.callTool("add", { a: 2, b: 40 }))).toBe("42")
      expect(mcp.getServerVersion()?.name).toBeTypeOf("string")
      expect(mcp.getServerCapabilities()?.tools).toBeDefined()
      expect(mcp.sessionId).toBeUndefined()
    })
  }

  it("sends the headers it is given", async () => {
    const server = await serve(calculator)
    await create(server.url, MCPTransport.HTTP, { "x-team": "blue" })
    expect(server.requests.filter((request) => request.method === "POST").every((request) => request.headers["x-team"] === "blue")).toBe(true)
  })

  it("a tool that fails, or that the server does not have, is the server's answer: a result with isError", async () => {
    const server = await serve(calculator)
    const mcp = await create(server.url)
    expect((await mcp.callTool("explode", {})).isError).toBe(true)
    const unknown = await mcp.callTool("nope", {})
    expect(unknown.isError).toBe(true)
    expect(textOf(unknown)).toContain("nope")
  })

  it("a server that cannot be reached rejects create with an McpError (Connect), with the caller's stack", async () => {
    const error = await MCPClient.create("http://127.0.0.1:9/mcp", MCPTransport.HTTP, undefined, undefined, undefined, {}, {
      connectTimeout: "2 seconds"
    }).catch((error: unknown) => error)
    expect(error).toMatchObject({ _tag: "McpError", reason: "Connect" })
    expect((error as Error).stack).toContain("mcpClient.test.ts")
  })

  it("an endpoint that is not a URL, or a server that answers 500, rejects create with an McpError (Connect)", async () => {
    await expect(MCPClient.create("not a url")).rejects.toMatchObject({ _tag: "McpError", reason: "Connect" })
    const failing = createServer((_request, response) => {
      response.writeHead(500, { "content-type": "text/plain" }).end("broken")
    })
    await new Promise<void>((resolve) => failing.listen(0, "127.0.0.1", resolve))
    try {
      const { port } = failing.address() as AddressInfo
      const error = await MCPClient.create(`http://127.0.0.1:${port}/mcp`).catch((error: unknown) => error)
      expect(error).toMatchObject({ _tag: "McpError", reason: "Connect" })
      expect((error as Error).message).toContain("HTTP 500: ")
    } finally {
      await new Promise((resolve) => failing.close(resolve))
    }
  })

  it("a server that never answers the handshake rejects create within connectTimeout", async () => {
    const silent = createServer(() => {
      // Takes the request, never answers.
    })
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
    try {
      const { port } = silent.address() as AddressInfo
      const error = await MCPClient.create(`http://127.0.0.1:${port}/mcp`, MCPTransport.HTTP, undefined, undefined, undefined, {}, {
        connectTimeout: "300 millis"
      }).catch((error: unknown) => error)
      expect(error).toMatchObject({ _tag: "McpError", reason: "Connect" })
      expect((error as Error).message).toContain("no answer within")
    } finally {
      silent.closeAllConnections()
      await new Promise((resolve) => silent.close(resolve))
    }
  })

  it("a connectTimeout or requestTimeout no timer can wait (zero, over 2^31 - 1 ms) rejects create with a ConfigError naming it, and opens no session", async () => {
    const server = await serve(calculator)
    for (const [name, value] of [["connectTimeout", 0], ["requestTimeout", "30 days"]] as const) {
      const error = await MCPClient.create(server.url, MCPTransport.HTTP, undefined, undefined, undefined, {}, { [name]: value })
        .then((client) => {
          clients.push(client)
          return client
        }, (error: unknown) => error)
      expect(error).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
      expect((error as Error).message).toContain(name)
      expect((error as Error).stack).toContain("mcpClient.test.ts")
    }
    expect(server.sessions.opened).toBe(0)
  })

  it("a tool that outlasts requestTimeout rejects with an McpError, and the server is told to stop it", async () => {
    const endings: Array<string> = []
    const server = await serve(sleeper((ending) => endings.push(ending)))
    const mcp = await create(server.url, MCPTransport.HTTP, undefined, undefined, undefined, {}, { requestTimeout: "200 millis" })
    await expect(mcp.callTool("sleep", { ms: 5_000 })).rejects.toMatchObject({ _tag: "McpError" })
    for (let waited = 0; endings.length === 0 && waited < 2_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(endings).toEqual(["cancelled"])
    // The session goes on: a short call answers.
    expect(textOf(await mcp.callTool("sleep", { ms: 1 }))).toBe("slept")
  })

  it("close ends the session on the server; calls after it reject with an McpError (NotConnected)", async () => {
    const server = await serve(calculator)
    const mcp = await create(server.url)
    await mcp.close()
    for (let waited = 0; server.sessions.closed < 1 && waited < 2_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(server.sessions).toEqual({ opened: 1, closed: 1 })
    await expect(mcp.listTools()).rejects.toMatchObject({ _tag: "McpError", reason: "NotConnected" })
    expect(mcp.getServerVersion()).toBeUndefined()
    // Closing again does nothing more.
    await mcp.close()
  })

  it("close during a call: the call rejects as closed, the server is told to stop the tool, and the session ends", async () => {
    const endings: Array<string> = []
    let arrive!: () => void
    const arrived = new Promise<void>((resolve) => (arrive = resolve))
    let end!: () => void
    const ended = new Promise<void>((resolve) => (end = resolve))
    // The call waits at the server until the client stops it; the client closes once it arrived.
    const server = await serve(gate(new Promise<void>(() => undefined), arrive, (ending) => {
      endings.push(ending)
      end()
    }))
    const mcp = await create(server.url)
    const call = mcp.callTool("wait", {}).catch((error: unknown) => error)
    await arrived
    await mcp.close()
    expect(await call).toMatchObject({ _tag: "McpError", reason: "NotConnected", message: "The MCP client was closed" })
    await ended
    for (let waited = 0; server.sessions.closed < 1 && waited < 2_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(endings).toEqual(["cancelled"])
    expect(server.sessions).toEqual({ opened: 1, closed: 1 })
  })

  it("a server that goes away is reconnected: calls fail meanwhile, then work again", async () => {
    const server = await serve(calculator)
    const mcp = await create(server.url)
    await server.kill()
    await expect(mcp.callTool("add", { a: 1, b: 1 })).rejects.toMatchObject({ _tag: "McpError" })
    await server.restart()
    let result: unknown
    for (let waited = 0; result === undefined && waited < 10_000; waited += 100) {
      result = await mcp.callTool("add", { a: 1, b: 2 }).catch(() => undefined)
      if (result === undefined) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(textOf(result as { content: Array<{ type: string; text?: string }> })).toBe("3")
    // The model's sequence kill, restart, close: closing ends the session it reconnected with.
    await mcp.close()
    for (let waited = 0; server.sessions.closed < 1 && waited < 2_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(server.sessions).toEqual({ opened: 2, closed: 1 })
  })

  it("answers elicitations with its handler; a new handler answers the next, and without one they are declined", async () => {
    const server = await serve(greeter)
    const asked: Array<string> = []
    const handlers: Partial<MCPHandlers> = {
      elicitation: (request) => {
        asked.push(request.params.message)
        return { action: "accept", content: { name: "Ada" } }
      }
    }
    const mcp = await create(server.url, MCPTransport.HTTP, undefined, undefined, undefined, handlers)
    expect(textOf(await mcp.callTool("greet", {}))).toBe("Hello, Ada!")
    expect(asked).toEqual(["What is your name?"])
    mcp.updateElicitationHandler(async (_request, context) => {
      expect(context.signal).toBeInstanceOf(AbortSignal)
      return { action: "accept", content: { name: "Grace" } }
    })
    expect(textOf(await mcp.callTool("greet", {}))).toBe("Hello, Grace!")
    mcp.updateElicitationHandler(undefined)
    expect(textOf(await mcp.callTool("greet", {}))).toBe("No name (decline)")
    // One session all along.
    expect(server.sessions.opened).toBe(1)
  })

  it("a handler replaced while the server is away opens nothing: the session it reconnects with answers with it", async () => {
    const server = await serve(greeter)
    const named = (name: string): Partial<MCPHandlers> => ({ elicitation: () => ({ action: "accept", content: { name } }) })
    const mcp = await create(server.url, MCPTransport.HTTP, undefined, undefined, undefined, named("Ada"))
    await server.kill()
    await expect(mcp.callTool("greet", {})).rejects.toMatchObject({ _tag: "McpError" })
    mcp.updateElicitationHandler(named("Grace").elicitation)
    expect(server.sessions.opened).toBe(1)
    await server.restart()
    let result: unknown
    for (let waited = 0; result === undefined && waited < 10_000; waited += 100) {
      result = await mcp.callTool("greet", {}).catch(() => undefined)
      if (result === undefined) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(textOf(result as { content: Array<{ type: string; text?: string }> })).toBe("Hello, Grace!")
    expect(server.sessions.opened).toBe(2)
  })

  it("samples with the handler given at create, which can be replaced or removed but not added later", async () => {
    const server = await serve(all(summarizer, calculator))
    const sampling: MCPHandlers["sampling"] = () => ({ model: "m", role: "assistant", content: { type: "text", text: "short" } })
    const mcp = await create(server.url, MCPTransport.HTTP, undefined, undefined, undefined, { sampling })
    expect(textOf(await mcp.callTool("summarize", { text: "a long text" }))).toBe("Summary: short")
    mcp.updateSamplingHandler(() => ({ model: "m", role: "assistant", content: { type: "text", text: "shorter" } }))
    expect(textOf(await mcp.callTool("summarize", { text: "a long text" }))).toBe("Summary: shorter")
    mcp.updateSamplingHandler(undefined)
    expect((await mcp.callTool("summarize", { text: "a long text" })).isError).toBe(true)

    const other = await create(server.url)
    expect(() => other.updateSamplingHandler(sampling)).toThrow(/must be given to MCPClient.create/)
    // The server was not told that client samples.
    expect((await other.callTool("summarize", { text: "x" })).isError).toBe(true)
  })

  it("a sampling handler removed can be given again on the same session; after a reconnect without one, it is refused", async () => {
    const server = await serve(all(summarizer, calculator))
    const reply = (text: string): MCPHandlers["sampling"] => () => ({ model: "m", role: "assistant", content: { type: "text", text } })
    const mcp = await create(server.url, MCPTransport.HTTP, undefined, undefined, undefined, { sampling: reply("short") })
    mcp.updateSamplingHandler(undefined)
    expect((await mcp.callTool("summarize", { text: "a long text" })).isError).toBe(true)
    mcp.updateSamplingHandler(reply("again"))
    expect(textOf(await mcp.callTool("summarize", { text: "a long text" }))).toBe("Summary: again")

    // Reconnected while it has none: the new session was told the client does not sample.
    mcp.updateSamplingHandler(undefined)
    await server.kill()
    await expect(mcp.callTool("add", { a: 1, b: 1 })).rejects.toMatchObject({ _tag: "McpError" })
    await server.restart()
    let result: unknown
    for (let waited = 0; result === undefined && waited < 10_000; waited += 100) {
      result = await mcp.callTool("add", { a: 1, b: 1 }).catch(() => undefined)
      if (result === undefined) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(server.sessions.opened).toBe(2)
    expect(() => mcp.updateSamplingHandler(reply("late"))).toThrow(expect.objectContaining({ _tag: "NotSupportedError" }))
    expect((await mcp.callTool("summarize", { text: "x" })).isError).toBe(true)
  })

  it("a sampling handler added after create, which the server was told there would not be, throws a NotSupportedError", async () => {
    const server = await serve(all(summarizer, calculator))
    const mcp = await create(server.url)
    let thrown: unknown
    try {
      mcp.updateSamplingHandler(() => ({ model: "m", role: "assistant", content: { type: "text", text: "short" } }))
    } catch (error) {
      thrown = error
    }
    expect(thrown).toMatchObject({
      _tag: "NotSupportedError",
      reason: "UnsupportedOption",
      method: "MCPClient.updateSamplingHandler",
      message: expect.stringMatching(/must be given to MCPClient.create/)
    })
    expect((thrown as Error).stack).toContain("mcpClient.test.ts")
  })

  it("refuses upstream's arguments it does not take, with a NotSupportedError", async () => {
    const server = await serve(calculator)
    const untyped = MCPClient.create as (...args: ReadonlyArray<unknown>) => Promise<MCPClient>
    await expect(untyped(server.url, "http", undefined, { tokens: () => undefined })).rejects.toMatchObject({
      _tag: "NotSupportedError",
      reason: "UnsupportedOption",
      method: "MCPClient.create"
    })
    await expect(untyped(server.url, "http", undefined, undefined, "session-1")).rejects.toMatchObject({
      _tag: "NotSupportedError",
      reason: "UnsupportedOption"
    })
    // Nothing was opened for the refused creates.
    expect(server.sessions.opened).toBe(0)
  })

  it("sends a call's _meta with it, as upstream does", async () => {
    const server = await serve(metaReader)
    const mcp = await create(server.url)
    const result = await mcp.callTool("meta", {}, { traceId: "t-1", tags: ["a"] })
    expect(JSON.parse(result.content.map((part) => ("text" in part ? part.text : "")).join(""))).toEqual({
      traceId: "t-1",
      tags: ["a"]
    })
    expect((await mcp.callTool("meta")).content).toEqual([{ type: "text", text: "{}" }])
  })

  it("hears a call's progress, with onProgress after upstream's arguments", async () => {
    const server = await serve(worker)
    const mcp = await create(server.url)
    const heard: Array<string> = []
    const result = await mcp.callTool("work", { steps: 2, gapMs: 0 }, undefined, {
      onProgress: (progress) => heard.push(`${progress.progress}/${progress.total} ${progress.message}`)
    })
    expect(result.content).toEqual([{ type: "text", text: "done" }])
    expect(heard).toEqual(["1/2 step 1", "2/2 step 2"])
  })
})
