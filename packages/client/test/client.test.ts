import { Script } from "@tambo-effect/testing"
import * as net from "node:net"
import { describe, expect, it } from "vitest"
import { AuthError, ConfigError, TamboClient, type TamboClientOptions, ToolDefinitionError, TransportError } from "../src/index.js"
import { storeEqualsServer } from "../../core/test/storeEqualsServer.js"
import { jwtFor, makeClient, settle, texts, useServer, waitFor, weatherTool } from "./helpers.js"

const server = useServer()

describe("options", () => {
  it("tamboUrl with environment throws a ConfigError", () => {
    const create = () => new TamboClient({ apiKey: "k", tamboUrl: "http://127.0.0.1:1", environment: "staging" })
    expect(create).toThrow(ConfigError)
    expect(create).toThrow("Give either tamboUrl or environment, not both")
    try {
      create()
    } catch (error) {
      expect(error).toMatchObject({ name: "ConfigError", _tag: "ConfigError", reason: "ConflictingUrl" })
      // Core's own error, not a copy that holds it in `cause`; its stack starts at the caller.
      expect((error as Error).cause).toBeUndefined()
      expect((error as Error).stack?.split("\n")[1]).toContain("client.test.ts")
    }
  })

  it("userKey with userToken throws a ConfigError", () => {
    expect(() => new TamboClient({ apiKey: "k", userKey: "u", userToken: "t" })).toThrow(
      expect.objectContaining({ _tag: "ConfigError", reason: "ConflictingIdentity" })
    )
  })

  it("a missing API key or a bad URL throws a ConfigError", () => {
    expect(() => new TamboClient({ apiKey: "" })).toThrow(expect.objectContaining({ reason: "MissingApiKey" }))
    expect(() => new TamboClient({ apiKey: "k", tamboUrl: "not a url" })).toThrow(
      expect.objectContaining({ reason: "InvalidUrl" })
    )
  })

  it("no apiKey (a JavaScript caller, an unset variable) throws a ConfigError naming apiKey", () => {
    for (const options of [{ userKey: "u" }, { apiKey: undefined, userKey: "u" }, { apiKey: null, userKey: "u" }]) {
      const create = () => new TamboClient(options as unknown as TamboClientOptions)
      expect(create).toThrow(ConfigError)
      expect(create).toThrow(expect.objectContaining({ _tag: "ConfigError", reason: "MissingApiKey" }))
      expect(create).toThrow(/apiKey/)
    }
  })

  it("a maxRetries that is not a whole number from 0 throws a ConfigError (InvalidOption) naming it, for the Tambo API and for an agent", () => {
    for (const maxRetries of [Infinity, -1, Number.NaN, 1.5]) {
      for (const backend of [{ apiKey: "k" }, { agent: { url: "http://127.0.0.1:1/agent" } }]) {
        const create = () => new TamboClient({ ...backend, maxRetries })
        expect(create, String(maxRetries)).toThrow(
          expect.objectContaining({ _tag: "ConfigError", reason: "InvalidOption", message: expect.stringContaining("maxRetries") })
        )
      }
    }
    // None at all is a choice.
    new TamboClient({ apiKey: "k", maxRetries: 0 }).destroy()
  })

  it("an invalid tool throws a ToolDefinitionError, from the constructor and from registerTool", () => {
    const bad = { ...weatherTool, name: "not a valid name!" }
    expect(() => makeClient(server(), { tools: [bad] })).toThrow(ToolDefinitionError)
    const client = makeClient(server())
    expect(() => client.registerTool(bad)).toThrow(expect.objectContaining({ _tag: "ToolDefinitionError" }))
    expect(() => client.registerComponent("Broken", { description: "no schema" })).toThrow(ToolDefinitionError)
  })

  it("keeps the MCP servers it was given", () => {
    const mcpServers = [{ url: "http://127.0.0.1:9/mcp", transport: "http" as const }]
    const client = makeClient(server(), { mcpServers })
    expect(client.mcpServers).toEqual(mcpServers)
  })

  it("reports the auth state", () => {
    expect(makeClient(server()).getAuthState()).toEqual({ status: "identified", source: "userKey" })
    expect(makeClient(server(), { userKey: undefined }).getAuthState()).toEqual({ status: "unauthenticated" })
  })
})

describe("a server that is not there", () => {
  it("a run and a REST call reject with a TransportError saying `connection refused at <url>`", async () => {
    // A port nothing listens on: bound, then let go.
    const probe = net.createServer()
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve))
    const port = (probe.address() as net.AddressInfo).port
    await new Promise((resolve) => probe.close(resolve))
    const base = `http://127.0.0.1:${port}`
    const client = new TamboClient({ apiKey: "api-secret", tamboUrl: base, userKey: "user-1", maxRetries: 0 })
    try {
      const run = await client.run("hi").thread.catch((error: unknown) => error)
      expect(run).toBeInstanceOf(TransportError)
      expect(run).toMatchObject({ reason: "Connect", message: `connection refused at ${base}/v1/threads/runs` })
      const rest = await client.listThreads().catch((error: unknown) => error)
      expect(rest).toMatchObject({ _tag: "TransportError", message: `connection refused at ${base}/v1/threads` })
    } finally {
      await client.destroy()
    }
  })
})

/** The expiry of the access token a request carried: it tells which subject token it was exchanged from. */
const bearerExpiry = (headers: { readonly [name: string]: string }) =>
  JSON.parse(Buffer.from(headers.authorization!.replace(/^Bearer /, "").split(".")[1]!, "base64url").toString("utf8"))
    .exp as number

/** The subject of the access token a request carried. */
const bearerSubject = (headers: { readonly [name: string]: string }) =>
  JSON.parse(Buffer.from(headers.authorization!.replace(/^Bearer /, "").split(".")[1]!, "base64url").toString("utf8"))
    .sub as string

describe("setUserToken", () => {
  it("takes a rotated user token in place: the run goes on with the token it started with, the next run carries the new one", async () => {
    const nowSeconds = Math.floor(Date.now() / 1000)
    const oldToken = jwtFor("alice", nowSeconds + 1_000)
    const newToken = jwtFor("alice", nowSeconds + 2_000)
    server().setScript((request) =>
      request.text === "rotate, please" && request.toolResults.length === 0 ? [Script.toolCall("rotate", {})] : [Script.text("done")]
    )
    const client: TamboClient = makeClient(server(), {
      userKey: undefined,
      userToken: oldToken,
      tools: [{
        name: "rotate",
        description: "Rotates the user token while the run waits for it",
        inputSchema: { type: "object", properties: {} },
        tool: () => {
          client.setUserToken(newToken)
          return "rotated"
        }
      }]
    })
    const thread = await client.run("rotate, please").thread
    expect(texts(thread.messages).at(-1)).toBe("assistant: done")
    await client.run("again", { threadId: thread.id }).thread
    const runs = server().requests.filter((r) => r.path.endsWith("/runs"))
    expect(runs.map((r) => bearerExpiry(r.headers))).toEqual([nowSeconds + 1_000, nowSeconds + 1_000, nowSeconds + 2_000])
    const subjects = server().requests.filter((r) => r.path === "/oauth/token").map((r) =>
      (r.body as { subject_token: string }).subject_token
    )
    expect(subjects).toEqual([oldToken, newToken])
    expect(client.getAuthState()).toEqual({ status: "identified", source: "tokenExchange" })
  })

  it("another user's token while a run streams: cancelRun stops the run on the server as the user it started for", async () => {
    const nowSeconds = Math.floor(Date.now() / 1000)
    server().setScript([Script.text("partial"), Script.hang()])
    const client = makeClient(server(), { userKey: undefined, userToken: jwtFor("alice", nowSeconds + 1_000) })
    const stream = client.run("a long answer, please")
    const threadId = await stream.threadId
    await waitFor(() => client.getState().threadMap[threadId]?.streaming.status === "streaming", "the run to stream")
    client.setUserToken(jwtFor("bob", nowSeconds + 1_000))
    await client.cancelRun(threadId)
    await expect(stream.thread).rejects.toMatchObject({ _tag: "AbortError", reason: "CancelledByClient" })
    // The user's Stop reached the server (not only a closed connection), with the run's credentials.
    expect(server().cancels.map((cancel) => cancel.reason)).toEqual(["user_cancelled"])
    const deletes = server().requests.filter((r) => r.method === "DELETE")
    expect(deletes.map((r) => bearerSubject(r.headers))).toEqual(["alice"])
    // Its end read the thread as its user: the store keeps it, cancelled as the server has it.
    await waitFor(() => client.getState().threadMap[threadId]?.thread.lastRunCancelled === true, "the thread read")
  })

  it("throws an AuthError on a client without a userToken", () => {
    const client = makeClient(server())
    expect(() => client.setUserToken("token")).toThrow(AuthError)
    expect(() => client.setUserToken("token")).toThrow(expect.objectContaining({ reason: "InvalidCredentials" }))
    expect(client.getAuthState()).toEqual({ status: "identified", source: "userKey" })
  })
})

describe("threads", () => {
  it("lists, fetches, switches and starts threads", async () => {
    server().setScript((request) => [Script.text(`re: ${request.text}`)])
    const client = makeClient(server())
    const first = await client.run("first").thread
    expect(client.startNewThread()).toBe("placeholder")
    expect(client.getState().currentThreadId).toBe("placeholder")
    const second = await client.run("second").thread
    expect(second.id).not.toBe(first.id)

    const listed = await client.listThreads()
    expect(listed.map((t) => t.id).sort()).toEqual([first.id, second.id].sort())
    expect(listed[0]).toMatchObject({ messages: [], status: "idle", lastRunCancelled: false })

    // Paged: one thread a page, the cursor leading to the other, then no more.
    const firstPage = await client.listThreadsPage({ limit: 1 })
    expect(firstPage).toMatchObject({ hasMore: true, nextCursor: expect.any(String) })
    expect(firstPage.threads).toHaveLength(1)
    const lastPage = await client.listThreadsPage({ limit: 1, cursor: firstPage.nextCursor })
    expect(lastPage).toMatchObject({ hasMore: false })
    expect(lastPage.nextCursor).toBeUndefined()
    expect([...firstPage.threads, ...lastPage.threads].map((t) => t.id)).toEqual(listed.map((t) => t.id))
    expect((await client.listThreadsPage()).threads.map((t) => t.id)).toEqual(listed.map((t) => t.id))
    // A cursor the API did not give is refused, typed.
    await expect(client.listThreadsPage({ cursor: "not-a-cursor" })).rejects.toMatchObject({ _tag: "ApiError", status: 400 })

    // A second client knows nothing: it loads the thread.
    const other = makeClient(server())
    const fetched = await other.fetchThread(first.id)
    expect(texts(fetched.messages)).toEqual(["user: first", "assistant: re: first"])
    expect(other.getThread(first.id)).toBe(fetched)

    await client.switchThread(first.id)
    expect(client.getState().currentThreadId).toBe(first.id)
    expect(client.getThread()?.id).toBe(first.id)
    const continued = await client.run("third").thread
    expect(continued.id).toBe(first.id)
  })

  it("getSdkClient gives the typescript-sdk's client of the same API key and URL, for calls the client does not offer", async () => {
    server().setScript([Script.text("hello")])
    const client = makeClient(server())
    const { id } = await client.run("hi").thread
    const sdk = client.getSdkClient()
    expect(client.getSdkClient()).toBe(sdk)
    expect(sdk.baseURL).toBe(server().url)
    // Its calls carry no user token: they name the user themselves.
    const messages = await sdk.threads.messages.list(id, { userKey: "user-1" })
    expect(messages.messages.map((m) => m.role)).toEqual(["user", "assistant"])
    // And they fail with the SDK's errors (the API answers 403 for a thread it does not have).
    await expect(sdk.threads.retrieve("thr_missing", { userKey: "user-1" })).rejects.toMatchObject({ status: 403 })
  })

  it("names threads, by hand and by the API", async () => {
    server().setScript([Script.text("hello")])
    const client = makeClient(server())
    const thread = await client.run("name me").thread
    await client.updateThreadName(thread.id, "Chosen")
    expect(client.getThread(thread.id)!.name).toBe("Chosen")
    expect(server().threads.get(thread.id)!.name).toBe("Chosen")
    const generated = await client.generateThreadName(thread.id)
    expect(generated).toBe("name me")
    expect(client.getThread(thread.id)!.name).toBe("name me")
  })

  it("names a thread automatically once it has enough messages, once", async () => {
    server().setScript([Script.text("hello")])
    const client = makeClient(server(), { autoGenerateThreadName: true, autoGenerateNameThreshold: 4 })
    const namings = () => server().requests.filter((r) => r.path.endsWith("/generate-name")).length
    const thread = await client.run("one").thread
    expect(namings()).toBe(0)
    await client.run("two").thread
    await waitFor(() => client.getThread(thread.id)?.name !== undefined, "the thread to be named")
    expect(client.getThread(thread.id)!.name).toBe("one")
    await client.run("three").thread
    expect(namings()).toBe(1)
  })

  it("deletes a thread", async () => {
    server().setScript([Script.text("bye")])
    const client = makeClient(server())
    const thread = await client.run("delete me").thread
    await client.deleteThread(thread.id)
    expect(client.getThread(thread.id)).toBeUndefined()
    expect(server().threads.get(thread.id)).toBeUndefined()
  })

  it("forgets a thread from its state only; a run on it reads it back whole", async () => {
    server().setScript([Script.text("noted")])
    const client = makeClient(server())
    const thread = await client.run("remember this").thread
    // The current thread stays.
    expect(client.forgetThread(thread.id)).toBe(false)
    client.startNewThread()
    expect(client.forgetThread(thread.id)).toBe(true)
    expect(client.getThread(thread.id)).toBeUndefined()
    expect(server().threads.get(thread.id)?.messages).toHaveLength(2)
    const again = await client.run("and this", { threadId: thread.id }).thread
    expect(again.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"])
    expect(client.getThread(thread.id)?.messages.map((message) => message.id)).toEqual(
      server().threads.get(thread.id)?.messages.map((message) => message.id)
    )
  })

  it("a thread deleted in another tab leaves the state: at the end of a run on it, and when fetched", async () => {
    server().setScript([Script.text("first"), Script.delay(100), Script.text("second")])
    const client = makeClient(server())
    const other = makeClient(server())
    const first = await client.run("one").thread
    const second = client.run("two", { threadId: first.id })
    // Deleted while the second run streams on it: the run finishes, then the thread goes.
    await waitFor(() => client.getState().threadMap[first.id]?.streaming.status === "streaming")
    await other.deleteThread(first.id)
    await second.thread
    expect(client.getThread(first.id)).toBeUndefined()
    // Fetched after another tab deleted it: rejected as the API answers, and forgotten.
    const third = await client.run("three").thread
    await other.deleteThread(third.id)
    expect(client.getThread(third.id)).toBeDefined()
    await expect(client.fetchThread(third.id)).rejects.toMatchObject({ _tag: "ApiError", status: 403 })
    expect(client.getThread(third.id)).toBeUndefined()
    await Promise.all([client.destroy(), other.destroy()])
  })

  it("a read of a thread another client runs on shows the run active and its component still streaming; the next read after it ended shows it idle", async () => {
    const client = makeClient(server())
    const other = makeClient(server())
    server().setScript([Script.text("first")])
    const { id } = await client.run("one").thread
    await other.fetchThread(id)
    // The second run's component is stored (with no props yet) before its start event is sent,
    // which waits until the run is cancelled.
    server().setScript([Script.text("Here:"), Script.pace(600_000), Script.component("Card", { title: "t" })])
    const second = client.run("two", { threadId: id })
    await waitFor(
      () => server().threads.get(id)?.messages.some((m) => m.content.some((c) => c.type === "component")) === true,
      "the server to store the component"
    )
    const during = await other.fetchThread(id)
    expect(during.status).toBe("streaming")
    expect(other.getThread(id)?.status).toBe("streaming")
    const card = other.getThread(id)!.messages.at(-1)!.content.find((c) => c.type === "component")
    expect(card).toMatchObject({ type: "component", name: "Card", streamingState: "streaming" })
    await storeEqualsServer(other.getState(), server(), id)

    await client.cancelRun(id)
    await settle(second.thread)
    const after = await other.fetchThread(id)
    expect(after.status).toBe("idle")
    expect(after.messages.at(-1)!.content.find((c) => c.type === "component")).toMatchObject({ streamingState: "done" })
    await storeEqualsServer(other.getState(), server(), id)
  })

  it("a message sent on a thread another client runs on is refused (RunConflictError), and the state still shows that run as the server has it", async () => {
    const client = makeClient(server())
    const other = makeClient(server())
    server().setScript([Script.text("first")])
    const { id } = await client.run("one").thread
    server().setScript([Script.text("working"), Script.hang()])
    const busy = client.run("two", { threadId: id })
    await waitFor(() => server().threads.get(id)?.runStatus === "streaming", "the first client's run to start")
    await other.fetchThread(id)
    const refused = await settle(other.run("three", { threadId: id }).thread)
    expect(refused.ok ? "succeeded" : refused.error).toMatchObject({ _tag: "RunConflictError" })
    expect(other.getThread(id)?.status).toBe("streaming")
    await storeEqualsServer(other.getState(), server(), id)
    await client.cancelRun(id)
    await settle(busy.thread)
  })

  it("a read while another client's run waits on its own tool shows the call pending; a message sent then answers it as cancelled, and only that client runs the tool, once", async () => {
    const executions: Array<{ readonly by: string; readonly toolCallId: string }> = []
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    let started!: () => void
    const running = new Promise<void>((resolve) => (started = resolve))
    const weatherOf = (by: string): typeof weatherTool => ({
      ...weatherTool,
      tool: async ({ city }, context) => {
        executions.push({ by, toolCallId: context.toolCallId })
        started()
        await released
        return { city, temperature: 21, conditions: "sunny" }
      }
    })
    const client = makeClient(server(), { tools: [weatherOf("client")] })
    const other = makeClient(server(), { tools: [weatherOf("other")] })
    server().setScript([Script.text("first")])
    const { id } = await client.run("one").thread
    server().setScript((request) =>
      request.toolResults.length > 0 && request.text === ""
        ? [Script.text("It is sunny")]
        : request.text === "two"
        ? [Script.toolCall("get_weather", { city: "Paris" })]
        : [Script.text("Hi")]
    )
    const paused = client.run("two", { threadId: id })
    await running
    // The server's run is over, its call pending: the other client's read shows that call.
    await other.fetchThread(id)
    const call = executions[0]!.toolCallId
    expect(other.getState().threadMap[id]?.pendingToolCalls.map((c) => c.toolCallId)).toEqual([call])
    expect((await other.getPendingToolCalls(id)).map((c) => c.toolCallId)).toEqual([call])
    // A message from there answers it as cancelled, and runs no tool.
    const reply = await other.run("three", { threadId: id }).thread
    expect(texts(reply.messages).at(-1)).toBe("assistant: Hi")
    expect(server().threads.get(id)?.messages.some((m) =>
      m.content.some((c) => c.type === "tool_result" && c.toolUseId === call && c.isError === true)
    )).toBe(true)
    // The tool's result comes after the thread moved on: the server refuses it.
    release()
    const refused = await settle(paused.thread)
    expect(refused.ok ? "succeeded" : refused.error).toMatchObject({ _tag: "ApiError" })
    expect(executions).toEqual([{ by: "client", toolCallId: call }])
    await client.fetchThread(id)
    await storeEqualsServer(client.getState(), server(), id)
    await storeEqualsServer(other.getState(), server(), id)
  })

  it("a thread the API does not know rejects with an ApiError (403, as the API answers)", async () => {
    const client = makeClient(server())
    await expect(client.fetchThread("thr_missing")).rejects.toMatchObject({ _tag: "ApiError", status: 403 })
  })

  it("a new conversation's thread id rejects each call that needs the server's thread with a ConfigError (InvalidOption), sending nothing", async () => {
    const client = makeClient(server())
    const threadId = client.startNewThread()
    const before = client.getState()
    const calls: ReadonlyArray<readonly [string, () => Promise<unknown>]> = [
      ["fetchThread", () => client.fetchThread(threadId)],
      ["updateThreadName", () => client.updateThreadName(threadId, "name")],
      ["generateThreadName", () => client.generateThreadName(threadId)],
      ["deleteThread", () => client.deleteThread(threadId)],
      ["listSuggestions", () => client.listSuggestions("msg_1", threadId)],
      ["generateSuggestions", () => client.generateSuggestions("msg_1", threadId)]
    ]
    for (const [method, call] of calls) {
      const settled = await settle(call())
      expect(settled.ok).toBe(false)
      expect(settled.ok ? undefined : settled.error).toBeInstanceOf(ConfigError)
      expect(settled.ok ? undefined : settled.error).toMatchObject({
        reason: "InvalidOption",
        message: `${method}: "${threadId}" is a new conversation the server has not saved yet: its first message gets it a thread`
      })
    }
    expect(server().requests).toEqual([])
    expect(client.getState()).toBe(before)
  })
})

describe("suggestions", () => {
  it("generates and lists suggestions for a message (messageId, threadId)", async () => {
    server().setScript([Script.text("Ask me anything")])
    const client = makeClient(server())
    const thread = await client.run("suggest").thread
    const message = thread.messages.at(-1)!
    const generated = await client.generateSuggestions(message.id, thread.id, { maxSuggestions: 2 })
    expect(generated).toHaveLength(2)
    expect(generated[0]).toMatchObject({ title: expect.any(String), detailedSuggestion: expect.any(String) })
    const listed = await client.listSuggestions(message.id, thread.id)
    expect(listed.map((s) => s.id)).toEqual(generated.map((s) => s.id))
  })
})
