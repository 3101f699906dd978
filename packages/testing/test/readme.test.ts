// The README's quick start, verbatim, so the documented example keeps working.
import TamboAI from "@tambo-ai/typescript-sdk"
import { afterEach, beforeEach, expect, it } from "vitest"
import { Script, startTestServer, type TestServer } from "../src/index.js"

let server: TestServer
beforeEach(async () => {
  server = await startTestServer()
})
afterEach(() => server.close())

it("streams a scripted reply and records the request", async () => {
  server.setScript([Script.text(["Hello", ", world"])])
  const client = new TamboAI({ apiKey: server.apiKey, baseURL: server.url })

  const stream = await client.threads.runs.create({
    message: { role: "user", content: [{ type: "text", text: "Hi" }] },
    thread: { userKey: "user-1" }
  })
  const types: Array<string> = []
  for await (const event of stream) types.push(event.type)

  expect(types).toEqual([
    "RUN_STARTED",
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "RUN_FINISHED"
  ])
  expect(server.requests[0]).toMatchObject({
    method: "POST",
    path: "/v1/threads/runs",
    body: { thread: { userKey: "user-1" } }
  })
  const [thread] = server.threads.list()
  expect(thread?.messages.map((message) => message.role)).toEqual(["user", "assistant"])
})
