// The wire itself, through plain fetch: status, headers, exact SSE frames, CORS, error bodies.
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Script, startTestServer, type TestServer } from "../src/index.js"
import { field, frames, getJson, parseFrame, post, types, USER, userMessage } from "./helpers.js"

let server: TestServer
beforeEach(async () => {
  server = await startTestServer({ script: [Script.text(["Hel", "lo"])] })
})
afterEach(() => server.close())

describe("run responses", () => {
  it("answer 201 with an event stream of `data: <json>` frames and the run headers, which a page cannot read", async () => {
    const response = await post(server, "/v1/threads/runs", { message: userMessage("Hi"), thread: { userKey: USER } })
    expect(response.status).toBe(201)
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    expect(response.headers.get("cache-control")).toBe("no-cache")
    expect(response.headers.get("access-control-allow-origin")).toBe("*")
    // The API's CORS exposes no headers: in a browser, a run is named by its RUN_STARTED only.
    expect(response.headers.get("access-control-expose-headers")).toBeNull()
    const threadId = response.headers.get("x-thread-id")
    const runId = response.headers.get("x-run-id")
    expect(threadId).toMatch(/^thr_/)
    expect(runId).toMatch(/^run_/)

    const body = await response.text()
    expect(body).toMatch(/^(data: \{[^\n]*\}\n\n)+$/)
    const events = frames(body).map(parseFrame)
    expect(types(events)).toEqual([
      "RUN_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "RUN_FINISHED"
    ])
    const [started, start, first, , end, finished] = events
    expect(started).toEqual({ type: "RUN_STARTED", threadId, runId, timestamp: expect.any(Number) })
    expect(start).toEqual({ type: "TEXT_MESSAGE_START", messageId: expect.stringMatching(/^msg_/), role: "assistant", timestamp: expect.any(Number) })
    expect(first).toEqual({ type: "TEXT_MESSAGE_CONTENT", messageId: start!["messageId"], delta: "Hel", timestamp: expect.any(Number) })
    expect(end).toEqual({ type: "TEXT_MESSAGE_END", messageId: start!["messageId"], timestamp: expect.any(Number) })
    expect(finished).toEqual({ type: "RUN_FINISHED", threadId, runId, timestamp: expect.any(Number) })
  })

  it("on an existing thread carry X-Run-Id but no X-Thread-Id", async () => {
    const created = await post(server, "/v1/threads", { userKey: USER })
    expect(created.status).toBe(201)
    const threadId = String(field(await getJson(created), "id"))
    const response = await post(server, `/v1/threads/${threadId}/runs`, { message: userMessage("Hi"), userKey: USER })
    expect(response.status).toBe(201)
    expect(response.headers.get("x-thread-id")).toBeNull()
    const runId = response.headers.get("x-run-id")
    const events = frames(await response.text()).map(parseFrame)
    expect(events[0]).toMatchObject({ type: "RUN_STARTED", threadId, runId })
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED", threadId, runId })
  })

  it("write raw frames verbatim and any event type as is", async () => {
    server.setScript([Script.frame("data: {not json\n\n"), Script.event({ type: "SOMETHING_NEW", value: 1 })])
    const response = await post(server, "/v1/threads/runs", { message: userMessage("Hi"), thread: { userKey: USER } })
    const body = await response.text()
    expect(body).toContain("\n\ndata: {not json\n\ndata: {\"type\":\"SOMETHING_NEW\",\"value\":1}\n\n")
  })

  it("batch 100k text deltas into few writes and deliver all of them in order", async () => {
    const deltas = Array.from({ length: 100_000 }, (_, i) => `${i} `)
    server.setScript([Script.text(deltas)])
    const started = performance.now()
    const response = await post(server, "/v1/threads/runs", { message: userMessage("Hi"), thread: { userKey: USER } })
    const events = frames(await response.text()).map(parseFrame)
    const elapsed = performance.now() - started
    const contents = events.filter((event) => event.type === "TEXT_MESSAGE_CONTENT")
    expect(contents).toHaveLength(100_000)
    expect(contents[99_999]!["delta"]).toBe("99999 ")
    expect(events.at(-1)!.type).toBe("RUN_FINISHED")
    // Generous bound: this guards against per-event writes or quadratic work, not for speed.
    expect(elapsed).toBeLessThan(15_000)
    const thread = server.threads.get(String(events[0]!["threadId"]))
    // Stored trimmed, as the API stores it.
    expect(thread?.messages[1]?.content[0]).toEqual({ type: "text", text: deltas.join("").trim() })
  })

  it("serve 100 concurrent runs of 2,000 deltas each", async () => {
    server.setScript([Script.text(Array.from({ length: 2_000 }, (_, i) => `${i},`))])
    const bodies = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        post(server, "/v1/threads/runs", { message: userMessage(`run ${i}`), thread: { userKey: `user-${i}` } }).then((r) => r.text()))
    )
    for (const body of bodies) {
      const events = frames(body).map(parseFrame)
      expect(events.filter((event) => event.type === "TEXT_MESSAGE_CONTENT")).toHaveLength(2_000)
      expect(events.at(-1)!.type).toBe("RUN_FINISHED")
    }
    expect(server.threads.list()).toHaveLength(100)
  })
})

describe("CORS", () => {
  it("answers preflights with 204 without requiring an API key", async () => {
    const response = await fetch(`${server.url}/v1/threads/runs`, {
      method: "OPTIONS",
      headers: {
        origin: "http://localhost:3000",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,x-api-key"
      }
    })
    expect(response.status).toBe(204)
    expect(response.headers.get("access-control-allow-origin")).toBe("*")
    expect(response.headers.get("access-control-allow-methods")).toBe("GET,HEAD,PUT,PATCH,POST,DELETE")
    expect(response.headers.get("access-control-allow-headers")).toBe("content-type,x-api-key")
    expect(await response.text()).toBe("")
    expect(server.requests.at(-1)).toMatchObject({ method: "OPTIONS", path: "/v1/threads/runs" })
  })

  it("allows any origin on JSON responses too", async () => {
    const response = await fetch(`${server.url}/v1/threads?userKey=${USER}`, { headers: { "x-api-key": server.apiKey } })
    expect(response.status).toBe(200)
    expect(response.headers.get("access-control-allow-origin")).toBe("*")
  })
})

describe("errors", () => {
  it("answers a missing API key with the guard's 403", async () => {
    const response = await fetch(`${server.url}/v1/threads?userKey=${USER}`)
    expect(response.status).toBe(403)
    expect(response.headers.get("content-type")).toContain("application/json")
    expect(await getJson(response)).toEqual({ message: "Forbidden resource", error: "Forbidden", statusCode: 403 })
  })

  it("answers unknown routes like NestJS", async () => {
    const response = await fetch(`${server.url}/v2/nothing`, { headers: { "x-api-key": server.apiKey } })
    expect(response.status).toBe(404)
    expect(await getJson(response)).toEqual({ message: "Cannot GET /v2/nothing", error: "Not Found", statusCode: 404 })
  })

  it("rejects a body that is not JSON with 400", async () => {
    const response = await fetch(`${server.url}/v1/threads`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": server.apiKey },
      body: "{\"userKey\":"
    })
    expect(response.status).toBe(400)
    expect(await getJson(response)).toMatchObject({ error: "Bad Request", statusCode: 400 })
  })

  it("validates run bodies with the ValidationPipe's message list", async () => {
    const response = await post(server, "/v1/threads/runs", {
      message: { role: "assistant", content: [] },
      thread: { userKey: USER }
    })
    expect(response.status).toBe(400)
    expect(await getJson(response)).toEqual({
      message: ["message.role must be one of the following values: user", "message.content should not be empty"],
      error: "Bad Request",
      statusCode: 400
    })
    // Nothing was created.
    expect(server.threads.list()).toHaveLength(0)
  })
})
