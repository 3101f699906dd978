import { Script, startTestServer, type TestServer } from "@tambo-effect/testing"
import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"
import type { TamboTool } from "../src/index.js"
import { makeClient, settle, sleep, texts, useServer, waitFor } from "./helpers.js"

const server = useServer()

describe("how a run ends", () => {
  // A server of the test's own: its first DELETE needs a connection of its own, which the closed
  // connection would beat unless the client waits for the DELETE before closing.
  let own: TestServer | undefined
  afterEach(async () => {
    await own?.close()
    own = undefined
  })

  it("abort() tells the server before closing the connection: it records user_cancelled, once", async () => {
    own = await startTestServer()
    own.setScript([Script.text("partial"), Script.hang()])
    const client = makeClient(own)
    const stream = client.run("hang")
    await stream.threadId
    await waitFor(() => own!.threads.list()[0]?.messages.length === 1, "the run to start")
    stream.abort()
    expect((await settle(stream.thread)).ok).toBe(false)
    await waitFor(() => own!.cancels.length > 0, "the server to see the cancel")
    await sleep(20)
    expect(own.cancels.map((c) => c.reason)).toEqual(["user_cancelled"])
    expect(own.requests.filter((r) => r.method === "DELETE")).toHaveLength(1)
  })

  it("abort() while a tool runs: the call stays pending, and the next message answers it as cancelled", async () => {
    let started = false
    const wait: TamboTool<Record<string, never>, string> = {
      name: "wait",
      description: "waits",
      inputSchema: z.object({}),
      outputSchema: z.string(),
      tool: () => {
        started = true
        return new Promise<string>(() => {})
      }
    }
    server().setScript((request) =>
      request.text === "next"
        ? [Script.text(`next | ${request.toolResults.map((r) => `${r.isError ? "error" : "ok"}: ${r.text}`).join("; ")}`)]
        : [Script.toolCall("wait", {})]
    )
    const client = makeClient(server(), { tools: [wait] })
    const stream = client.run("go")
    const threadId = await stream.threadId
    await waitFor(() => started, "the tool to start")
    stream.abort()
    expect((await settle(stream.thread)).ok).toBe(false)
    const pending = await client.getPendingToolCalls(threadId)
    expect(pending.map((p) => p.toolName)).toEqual(["wait"])

    const thread = await client.run("next", { threadId }).thread
    expect(texts(thread.messages).at(-1)).toBe(
      "assistant: next | error: This call of wait was cancelled before it returned a result."
    )
    expect(await client.getPendingToolCalls(threadId)).toEqual([])
  })
})
