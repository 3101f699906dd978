// Threads, messages, suggestions, naming and component state through the real SDK.
import TamboAI from "@tambo-ai/typescript-sdk"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Script, startTestServer, type TestServer } from "../src/index.js"
import { client, collect, field, latch, rejection, str, USER, userMessage } from "./helpers.js"

let server: TestServer
let sdk: TamboAI
let clock: number
beforeEach(async () => {
  clock = Date.parse("2025-01-01T00:00:00.000Z")
  // A clock that ticks 1 ms per reading keeps creation order visible in timestamps.
  server = await startTestServer({ script: [Script.text("Sure.")], now: () => clock++ })
  sdk = client(server)
})
afterEach(() => server.close())

/** Runs one exchange on a new thread; returns its id and the assistant message id. */
const exchange = async (text: string, userKey = USER) => {
  const events = await collect(await sdk.threads.runs.create({ message: userMessage(text), thread: { userKey } }))
  // The assistant message id is announced by TEXT_MESSAGE_START or tambo.component.start.
  const assistantId = String(events[1]!["messageId"] ?? field(events[1], "value", "messageId"))
  return { threadId: str(events[0]!, "threadId"), runId: str(events[0]!, "runId"), assistantId }
}

describe("threads", () => {
  it("creates, retrieves, updates and deletes a thread", async () => {
    const created = await sdk.threads.create({
      userKey: USER,
      metadata: { topic: "tests" },
      initialMessages: [{ role: "system", content: [{ type: "text", text: "Be brief." }] }]
    })
    expect(created).toEqual({
      id: expect.stringMatching(/^thr_/),
      userKey: USER,
      runStatus: "idle",
      metadata: { topic: "tests" },
      createdAt: expect.stringMatching(/^2025-01-01T00:00:00\.\d{3}Z$/),
      updatedAt: expect.any(String)
    })
    expect(server.requests.at(-1)).toMatchObject({ method: "POST", path: "/v1/threads", body: { userKey: USER, metadata: { topic: "tests" } } })

    const retrieved = await sdk.threads.retrieve(created.id, { userKey: USER })
    expect(retrieved.messages).toEqual([
      { id: expect.stringMatching(/^msg_/), role: "system", content: [{ type: "text", text: "Be brief." }], createdAt: expect.any(String) }
    ])

    const updated = await sdk.threads.update(created.id, { userKey: USER, name: "Renamed", metadata: { topic: "other" } })
    expect(updated).toMatchObject({ id: created.id, name: "Renamed", metadata: { topic: "other" } })
    expect(server.requests.at(-1)).toMatchObject({ method: "PATCH", query: { userKey: USER }, body: { name: "Renamed" } })

    await expect(sdk.threads.delete(created.id, { userKey: USER })).resolves.toBeNull()
    const gone = await rejection(sdk.threads.retrieve(created.id, { userKey: USER }))
    // The thread guard answers 403 for a thread it cannot find.
    expect(gone).toBeInstanceOf(TamboAI.PermissionDeniedError)
  })

  it("lists a user's threads newest first, with cursor pagination", async () => {
    const ids = []
    for (let i = 0; i < 3; i++) ids.push((await sdk.threads.create({ userKey: USER })).id)
    await sdk.threads.create({ userKey: "someone-else" })

    const first = await sdk.threads.list({ userKey: USER, limit: 2 })
    expect(first.threads.map((thread) => thread.id)).toEqual([ids[2], ids[1]])
    expect(first.hasMore).toBe(true)
    expect(first.nextCursor).toEqual(expect.any(String))
    const second = await sdk.threads.list({ userKey: USER, limit: 2, cursor: first.nextCursor! })
    expect(second.threads.map((thread) => thread.id)).toEqual([ids[0]])
    expect(second).not.toHaveProperty("nextCursor")
    expect(second.hasMore).toBe(false)

    const invalid = await rejection(sdk.threads.list({ userKey: USER, cursor: "garbage" }))
    expect(field(invalid, "error")).toEqual({ message: "Invalid cursor", error: "Bad Request", statusCode: 400 })
    const tooMany = await rejection(sdk.threads.list({ userKey: USER, limit: 1000 }))
    expect(field(tooMany, "error", "message")).toEqual(["limit must not be greater than 100"])
  })

  it("keeps threads to their user: another userKey gets 403", async () => {
    const { threadId } = await exchange("Hi")
    const denied = await rejection(sdk.threads.retrieve(threadId, { userKey: "intruder" }))
    expect(denied).toBeInstanceOf(TamboAI.PermissionDeniedError)
    expect(field(denied, "error")).toEqual({ message: "Forbidden resource", error: "Forbidden", statusCode: 403 })
    const run = await rejection(sdk.threads.runs.run(threadId, { message: userMessage("x"), userKey: "intruder" }))
    expect(run).toBeInstanceOf(TamboAI.PermissionDeniedError)
  })
})

describe("messages", () => {
  it("lists messages in either order with pagination, and gets one", async () => {
    const { threadId, runId, assistantId } = await exchange("one")
    await collect(await sdk.threads.runs.run(threadId, { message: userMessage("two"), userKey: USER, previousRunId: runId }))

    const all = await sdk.threads.messages.list(threadId, { userKey: USER })
    expect(all.messages.map((message) => [message.role, message.content[0]])).toEqual([
      ["user", { type: "text", text: "one" }],
      ["assistant", { type: "text", text: "Sure." }],
      ["user", { type: "text", text: "two" }],
      ["assistant", { type: "text", text: "Sure." }]
    ])
    expect(all.hasMore).toBe(false)

    const newest = await sdk.threads.messages.list(threadId, { userKey: USER, order: "desc", limit: 3 })
    expect(newest.messages.map((message) => message.id)).toEqual(all.messages.slice(1).reverse().map((message) => message.id))
    expect(newest.hasMore).toBe(true)
    const rest = await sdk.threads.messages.list(threadId, { userKey: USER, order: "desc", limit: 3, cursor: newest.nextCursor! })
    expect(rest.messages.map((message) => message.id)).toEqual([all.messages[0]!.id])

    const message = await sdk.threads.messages.get(assistantId, { threadId, userKey: USER })
    expect(message).toEqual({ id: assistantId, role: "assistant", content: [{ type: "text", text: "Sure." }], createdAt: expect.any(String) })
    const missing = await rejection(sdk.threads.messages.get("msg_nope", { threadId, userKey: USER }))
    expect(missing).toBeInstanceOf(TamboAI.NotFoundError)
    expect(field(missing, "error", "message")).toBe(`Message msg_nope not found in thread ${threadId}`)

    const badOrder = await rejection(fetch(`${server.url}/v1/threads/${threadId}/messages?userKey=${USER}&order=up`, {
      headers: { "x-api-key": server.apiKey }
    }).then(async (response) => {
      if (!response.ok) throw await response.json()
    }))
    expect(badOrder).toEqual({ message: ["order must be one of the following values: asc, desc"], error: "Bad Request", statusCode: 400 })
  })
})

describe("suggestions", () => {
  it("generates (201), replaces and lists suggestions with pagination", async () => {
    const { threadId, assistantId } = await exchange("Hi")
    const generated = await sdk.threads.suggestions.create(assistantId, { threadId, userKey: USER, maxSuggestions: 2 })
    expect(generated.hasMore).toBe(false)
    expect(generated.suggestions).toEqual([
      {
        id: expect.stringMatching(/^sug_/),
        messageId: assistantId,
        title: "Tell me more",
        description: "Ask for more details about the last answer.",
        detailedSuggestion: "Ask for more details about the last answer.",
        createdAt: expect.any(String)
      },
      expect.objectContaining({ title: "Check the weather" })
    ])
    const created = await fetch(`${server.url}/v1/threads/${threadId}/messages/${assistantId}/suggestions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": server.apiKey },
      body: JSON.stringify({ userKey: USER, maxSuggestions: 3 })
    })
    expect(created.status).toBe(201)

    const first = await sdk.threads.suggestions.list(assistantId, { threadId, userKey: USER, limit: 2 })
    expect(first.suggestions).toHaveLength(2)
    expect(first.hasMore).toBe(true)
    const second = await sdk.threads.suggestions.list(assistantId, { threadId, userKey: USER, limit: 2, cursor: first.nextCursor! })
    expect(second.suggestions.map((suggestion) => suggestion.title)).toEqual(["Summarize"])

    const { assistantId: otherMessage, threadId: otherThread } = await exchange("Other")
    await sdk.threads.suggestions.create(otherMessage, { threadId: otherThread, userKey: USER })
    const foreign = await sdk.threads.suggestions.list(otherMessage, { threadId: otherThread, userKey: USER, limit: 1 })
    const wrongCursor = await rejection(
      sdk.threads.suggestions.list(assistantId, { threadId, userKey: USER, cursor: foreign.nextCursor! })
    )
    expect(field(wrongCursor, "error")).toMatchObject({ type: "urn:tambo:error:invalid_cursor", detail: "Cursor does not belong to this message" })
  })

  it("uses the suggestion generator given in the options", async () => {
    await server.close()
    server = await startTestServer({
      script: [Script.text("ok")],
      suggestions: ({ maxSuggestions, thread }) =>
        Array.from({ length: maxSuggestions }, (_, i) => ({ title: `S${i}`, detailedSuggestion: `${thread.messages.length} messages` }))
    })
    sdk = client(server)
    const { threadId, assistantId } = await exchange("Hi")
    const generated = await sdk.threads.suggestions.create(assistantId, { threadId, userKey: USER })
    expect(generated.suggestions.map((suggestion) => [suggestion.title, suggestion.description])).toEqual([
      ["S0", "2 messages"],
      ["S1", "2 messages"],
      ["S2", "2 messages"]
    ])
  })
})

describe("thread names", () => {
  it("generates a name at the pre-v1 path /threads/{id}/generate-name", async () => {
    const { threadId } = await exchange("Plan a trip to Lisbon")
    const named = await sdk.beta.threads.generateName(threadId, { contextKey: USER })
    expect(named).toMatchObject({ id: threadId, name: "Plan a trip to Lisbon", projectId: "p_test", generationStage: "COMPLETE" })
    expect(server.requests.at(-1)).toMatchObject({ method: "POST", path: `/threads/${threadId}/generate-name`, query: { contextKey: USER } })
    expect((await sdk.threads.retrieve(threadId, { userKey: USER })).name).toBe("Plan a trip to Lisbon")

    const empty = await sdk.threads.create({ userKey: USER })
    const none = await rejection(sdk.beta.threads.generateName(empty.id, { contextKey: USER }))
    expect(field(none, "error")).toEqual({ message: "No messages found for thread", error: "Not Found", statusCode: 404 })
  })
})

describe("component state", () => {
  it("replaces or patches a component's state once the run is over", async () => {
    server.setScript([Script.component("Counter", { count: 1 }, { id: "comp_counter", state: { clicks: 0 } })])
    const { threadId } = await exchange("Counter")
    const replaced = await sdk.threads.state.updateState("comp_counter", { threadId, userKey: USER, state: { clicks: 5, log: [] } })
    expect(replaced).toEqual({ state: { clicks: 5, log: [] } })
    const patched = await sdk.threads.state.updateState("comp_counter", {
      threadId,
      userKey: USER,
      patch: [
        { op: "replace", path: "/clicks", value: 6 },
        { op: "add", path: "/log/-", value: "click" }
      ]
    })
    expect(patched).toEqual({ state: { clicks: 6, log: ["click"] } })
    const thread = await sdk.threads.retrieve(threadId, { userKey: USER })
    expect(thread.messages[1]!.content[1]).toEqual({
      type: "component",
      id: "comp_counter",
      name: "Counter",
      props: { count: 1 },
      state: { clicks: 6, log: ["click"] }
    })

    const both = await rejection(sdk.threads.state.updateState("comp_counter", { threadId, userKey: USER, state: {}, patch: [] }))
    expect(field(both, "error", "detail")).toBe("Provide either 'state' or 'patch', not both")
    const bad = await rejection(sdk.threads.state.updateState("comp_counter", {
      threadId,
      userKey: USER,
      patch: [{ op: "remove", path: "/missing" }]
    }))
    expect(field(bad, "error")).toMatchObject({
      type: "urn:tambo:error:invalid_json_patch",
      detail: "Invalid JSON Patch: Cannot perform the operation at a path that does not exist"
    })
    const unknown = await rejection(sdk.threads.state.updateState("comp_nope", { threadId, userKey: USER, state: {} }))
    expect(field(unknown, "error", "message")).toBe(`Component comp_nope not found in thread ${threadId}`)
  })

  it("refuses while a run is active (409 RUN_ACTIVE)", async () => {
    server.setScript([Script.component("Counter", { count: 1 }, { id: "comp_busy" })])
    const { threadId, runId } = await exchange("Counter")
    server.setScript([Script.hang()])
    const stream = await sdk.threads.runs.run(threadId, { message: userMessage("more"), userKey: USER, previousRunId: runId })
    const iterator = stream[Symbol.asyncIterator]()
    await iterator.next()
    const busy = await rejection(sdk.threads.state.updateState("comp_busy", { threadId, userKey: USER, state: {} }))
    expect(busy).toBeInstanceOf(TamboAI.ConflictError)
    expect(field(busy, "error")).toMatchObject({ type: "urn:tambo:error:run_active", runStatus: "streaming" })
    await iterator.return?.()
  })
})

describe("direct access", () => {
  it("seeds threads the SDK can then read and continue", async () => {
    const seeded = server.threads.create({
      userKey: USER,
      name: "Seeded",
      messages: [
        { role: "user", content: "Hello" },
        { role: "assistant", content: [{ type: "text", text: "Hi!" }] }
      ]
    })
    const retrieved = await sdk.threads.retrieve(seeded.id, { userKey: USER })
    expect(retrieved).toEqual(seeded)
    // No run completed yet, so no previousRunId is needed.
    await collect(await sdk.threads.runs.run(seeded.id, { message: userMessage("Next"), userKey: USER }))
    expect(server.threads.get(seeded.id)?.messages).toHaveLength(4)
  })

  it("reset() ends a run whose response waits for its script (beforeResponse): the request fails, nothing stays open", async () => {
    const { fire: entered, fired: called } = latch()
    server.setScript(Script.beforeResponse(() => {
      entered()
      return new Promise<Script.Script>(() => {})
    }))
    const response = fetch(`${server.url}/v1/threads/runs`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": server.apiKey },
      body: JSON.stringify({ message: userMessage("Hi"), thread: { userKey: USER } })
    })
    await called
    server.reset()
    await expect(response).rejects.toThrow()
  })

  it("forgets everything on reset()", async () => {
    await exchange("Hi")
    server.setScript([Script.text("changed")])
    server.reset()
    expect(server.threads.list()).toEqual([])
    expect(server.requests).toEqual([])
    const events = await collect(await sdk.threads.runs.create({ message: userMessage("Hi"), thread: { userKey: USER } }))
    // Back to the initial script.
    expect(events.filter((event) => event.type === "TEXT_MESSAGE_CONTENT").map((event) => event["delta"])).toEqual(["Sure."])
  })
})
