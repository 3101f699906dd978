// The facade against an AG-UI agent (`new TamboClient({ agent: { url } })`): the scripted
// agent of @tambo-effect/testing on loopback, no API key, no user.
import { AgUiAgent } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import {
  type AgentClientOptions,
  ApiError,
  ConfigError,
  isAbortError,
  isNotSupportedError,
  isTamboClientError,
  NotSupportedError,
  TamboClient,
  type TamboClientOptions
} from "../src/index.js"
import { startMcpServer } from "../../core/test/mcp/server.js"
import { calculator } from "../../core/test/mcp/tools.js"
import { makeAgentClient, settle, texts, useAgent, weatherTool } from "./helpers.js"

const agent = useAgent()

const makeClient = (options: Partial<Omit<AgentClientOptions, "agent">> = {}) =>
  makeAgentClient(agent(), options, { authorization: "Bearer agent-token" })

describe("TamboClient with an AG-UI agent", () => {
  it("streams a text reply; thread, messages and threadId resolve; no API key or user is sent", async () => {
    const client = makeClient()
    expect(client.backend).toBe("ag-ui")
    const stream = client.run("hi")
    const deltas: Array<string> = []
    for await (const { event } of stream) {
      if (event.type === "TEXT_MESSAGE_CONTENT") deltas.push(event.delta)
    }
    expect(deltas.join("")).toBe("Hello, world.")
    const thread = await stream.thread
    expect(texts(thread.messages)).toEqual(["user: hi", "assistant: Hello, world."])
    expect(await stream.threadId).toBe(thread.id)
    expect((await stream.messages).length).toBe(2)
    expect(client.getState().currentThreadId).toBe(thread.id)
    expect(agent().requests).toHaveLength(1)
    const request = agent().requests[0]!
    expect(request.input?.threadId).toBe(thread.id)
    expect(request.headers["authorization"]).toBe("Bearer agent-token")
    expect(request.headers["x-api-key"]).toBeUndefined()
  })

  it("a second run on the thread sends the whole conversation", async () => {
    const client = makeClient()
    const first = await client.run("hi").thread
    const second = await client.run("again").thread
    expect(second.id).toBe(first.id)
    expect(texts(second.messages)).toEqual([
      "user: hi",
      "assistant: Hello, world.",
      "user: again",
      "assistant: Hello, world."
    ])
    expect(agent().requests[1]!.input?.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"])
  })

  it("runs a frontend tool once and continues with its result in a new run", async () => {
    agent().setScript(AgUiAgent.scripts.frontendTool)
    const calls: Array<string> = []
    const client = makeClient({
      tools: [{ ...weatherTool, tool: (input: { city: string }) => (calls.push(input.city), { city: input.city, temperature: 21, conditions: "sunny" }) }]
    })
    const thread = await client.run("What is the weather in Paris?").thread
    expect(calls).toEqual(["Paris"])
    expect(agent().requests).toHaveLength(2)
    // The tool is offered to the agent; the second run carries its result.
    expect(agent().requests[0]!.input?.tools.map((tool) => tool.name)).toEqual(["get_weather"])
    const toolMessage = agent().requests[1]!.input?.messages.at(-1)
    expect(toolMessage?.role).toBe("tool")
    const last = thread.messages.at(-1)!
    expect(last.role).toBe("assistant")
    expect(last.content[0]).toMatchObject({ type: "text", text: expect.stringContaining("The weather in Paris:") })
    expect(last.content[0]).toMatchObject({ text: expect.stringContaining("sunny") })
  })

  it("an MCP server's tools are offered to the agent and run in the client", async () => {
    const mcp = await startMcpServer({ setup: calculator })
    try {
      const client = makeClient({ mcpServers: [{ url: mcp.url, serverKey: "calc" }] })
      expect((await client.connectMcpServer({ url: mcp.url, serverKey: "calc" })).status).toBe("connected")
      agent().setScript(AgUiAgent.frontendToolRound({ name: "add", args: { a: 2, b: 40 }, reply: (sum) => [AgUiAgent.text(`sum: ${sum}`)] }))
      const thread = await client.run("add 2 and 40").thread
      expect(texts(thread.messages).at(-1)).toBe("assistant: sum: 42")
      expect(agent().requests[0]!.input?.tools.map((tool) => tool.name)).toContain("add")
    } finally {
      await mcp.close()
    }
  })

  it("headers from a function are read for each run: two runs carry two tokens", async () => {
    let token = 0
    const rotating = new TamboClient({ agent: { url: agent().url, headers: async () => ({ authorization: `Bearer t${++token}` }) } })
    try {
      const thread = await rotating.run("one").thread
      await rotating.run("two", { threadId: thread.id }).thread
      expect(agent().requests.map((request) => request.headers["authorization"])).toEqual(["Bearer t1", "Bearer t2"])
      // A function that throws rejects the run before anything is sent.
      const failing = new TamboClient({ agent: { url: agent().url, headers: () => { throw new Error("no token") } } })
      const failed = await settle(failing.run("three").thread)
      expect(failed.ok === false && failed.error).toMatchObject({ _tag: "CallbackError", reason: "Headers" })
      expect(agent().requests).toHaveLength(2)
      failing.destroy()
    } finally {
      rotating.destroy()
    }
  })

  it("maxRetries applies to an agent's runs: a 503 is sent again, and with 0 it is not", async () => {
    let runs = 0
    agent().setScript(() => (++runs === 1 ? [AgUiAgent.httpError(503)] : AgUiAgent.scripts.text))
    const thread = await makeAgentClient(agent(), { maxRetries: 1 }).run("hi").thread
    expect(thread.messages.at(-1)).toMatchObject({ role: "assistant" })
    expect(agent().requests).toHaveLength(2)
    runs = 0
    const failed = await settle(makeAgentClient(agent(), { maxRetries: 0 }).run("hi").thread)
    expect(failed.ok === false && failed.error).toMatchObject({ _tag: "ApiError", status: 503 })
    expect(agent().requests).toHaveLength(3)
  })

  it("a RUN_ERROR rejects the run with the agent's message and code; the thread stays usable", async () => {
    agent().setScript(AgUiAgent.scripts.runError)
    const client = makeClient()
    const failed = await settle(client.run("hi").thread)
    expect(failed.ok).toBe(false)
    if (failed.ok) return
    expect(failed.error).toBeInstanceOf(ApiError)
    expect(failed.error).toMatchObject({ reason: "RunError", code: "MODEL_UNAVAILABLE" })
    expect(failed.error.message).toContain("The model is unavailable")
    agent().setScript(AgUiAgent.scripts.text)
    const thread = await client.run("again").thread
    expect(thread.messages.at(-1)).toMatchObject({ role: "assistant" })
  })

  it("abort() aborts the request: the stream rejects with an AbortError and the agent sees the connection close", async () => {
    agent().setScript([AgUiAgent.text("Half a reply"), AgUiAgent.hang()])
    const client = makeClient()
    const stream = client.run("hi")
    const seen: Array<string> = []
    const iterated = (async () => {
      for await (const { event } of stream) {
        seen.push(event.type)
        if (event.type === "TEXT_MESSAGE_END") stream.abort()
      }
    })()
    const outcome = await settle(iterated)
    expect(outcome.ok).toBe(false)
    if (outcome.ok) return
    expect(isAbortError(outcome.error)).toBe(true)
    expect(await agent().requests[0]!.ended).toBe("closed")
    expect(client.hasActiveRun()).toBe(false)
    const thread = client.getThread(await stream.threadId)!
    expect(thread.lastRunCancelled).toBe(true)
  })

  it("cancelRun() cancels the current thread's run", async () => {
    agent().setScript([AgUiAgent.text("Half a reply"), AgUiAgent.hang()])
    const client = makeClient()
    const stream = client.run("hi")
    await stream.threadId
    const ended = settle(stream.thread)
    while (agent().requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    await client.cancelRun()
    const outcome = await ended
    expect(outcome.ok === false && isAbortError(outcome.error)).toBe(true)
    expect(await agent().requests[0]!.ended).toBe("closed")
  })

  it("Tambo-only methods reject with a NotSupportedError that says the agent does not offer them", async () => {
    const client = makeClient()
    const { id } = await client.run("hi").thread
    const calls: Array<[string, () => Promise<unknown>]> = [
      ["listThreads", () => client.listThreads()],
      ["fetchThread", () => client.fetchThread(id)],
      ["updateThreadName", () => client.updateThreadName(id, "x")],
      ["generateThreadName", () => client.generateThreadName(id)],
      ["deleteThread", () => client.deleteThread(id)],
      ["listSuggestions", () => client.listSuggestions("m", id)],
      ["generateSuggestions", () => client.generateSuggestions("m", id)],
      ["getMcpToken", () => client.getMcpToken()],
      ["updateComponentState", () => client.updateComponentState(id, "c", { state: {} })],
      ["transcribe", () => client.transcribe(new Blob(["x"], { type: "audio/webm" }))]
    ]
    for (const [method, call] of calls) {
      const outcome = await settle(call())
      expect(outcome.ok, method).toBe(false)
      if (outcome.ok) continue
      expect(outcome.error, method).toBeInstanceOf(NotSupportedError)
      expect(isNotSupportedError(outcome.error)).toBe(true)
      expect(isTamboClientError(outcome.error)).toBe(true)
      expect(outcome.error).toMatchObject({ _tag: "NotSupportedError", reason: "NotOfferedByAgent", method: expect.stringContaining(method) })
      expect(outcome.error.message, method).toMatch(/AG-UI agent does not offer/)
    }
    expect(() => client.setUserToken("token")).toThrow(NotSupportedError)
    expect(() => client.getSdkClient()).toThrow(NotSupportedError)
    expect(() => client.followTamboMcpServer()).toThrow(NotSupportedError)
    // Only runs went to the agent.
    expect(agent().requests).toHaveLength(1)
    // A new thread's initial messages are offered: they go first in the conversation sent.
    client.startNewThread()
    await client.run("hi", { initialMessages: [{ role: "system", content: [{ type: "text", text: "Be brief." }] }] }).thread
    expect(agent().requests).toHaveLength(2)
    expect(agent().requests[1]?.input?.messages.map((m) => m.role)).toEqual(["system", "user"])
  })

  it("an apiKey with an agent, or an agent without a usable url, throws a ConfigError", () => {
    const both = { agent: { url: agent().url }, apiKey: "k" } as unknown as TamboClientOptions
    expect(() => new TamboClient(both)).toThrow(expect.objectContaining({ _tag: "ConfigError", reason: "InvalidOption" }))
    expect(() => new TamboClient(both)).toThrow(/apiKey/)
    expect(() => new TamboClient({ agent: { url: agent().url }, userKey: "u" })).toThrow(
      expect.objectContaining({ _tag: "ConfigError", reason: "InvalidOption", message: expect.stringContaining("userKey") })
    )
    // With neither, the Tambo API's key is missing.
    expect(() => new TamboClient({})).toThrow(expect.objectContaining({ reason: "MissingApiKey" }))
    for (const url of ["", "not a url", "ftp://example.com/agent"]) {
      const create = () => new TamboClient({ agent: { url } })
      expect(create, url).toThrow(ConfigError)
      expect(create, url).toThrow(expect.objectContaining({ reason: "InvalidUrl" }))
    }
    // Nor does the error show what may be a password or a token.
    expect(() => new TamboClient({ agent: { url: "http://user:PASSWORD@host:99999/agent?token=TOKEN" } })).toThrow(
      expect.objectContaining({ reason: "InvalidUrl", message: expect.not.stringMatching(/PASSWORD|TOKEN/) })
    )
  })

  it("a Tambo client's backend is \"tambo\"", async () => {
    const client = new TamboClient({ apiKey: "k", tamboUrl: "http://127.0.0.1:9", userKey: "u" })
    expect(client.backend).toBe("tambo")
    await client.destroy()
  })
})
