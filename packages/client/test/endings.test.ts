import { Script, startTestServer, type TestServer } from "@tambo-effect/testing"
import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { EVENT_BUFFER, type TamboThread, type TamboTool } from "../src/index.js"
import { holdingProxy, makeClient, settle, sleep, texts, useServer, waitFor } from "./helpers.js"

const server = useServer()

/** A tool that never answers, and whether it was started. */
const waitingTool = () => {
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
  return { wait, started: () => started }
}

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
    await waitFor(() => own!.threads.list()[0]?.currentRunId !== undefined, "the run to start")
    stream.abort()
    expect((await settle(stream.thread)).ok).toBe(false)
    await waitFor(() => own!.cancels.length > 0, "the server to see the cancel")
    await sleep(20)
    expect(own.cancels.map((c) => c.reason)).toEqual(["user_cancelled"])
    expect(own.requests.filter((r) => r.method === "DELETE")).toHaveLength(1)
  })

  it("abort() while a tool runs: the call stays pending, and the next message answers it as cancelled", async () => {
    const { wait, started } = waitingTool()
    server().setScript((request) =>
      request.text === "next"
        ? [Script.text(`next | ${request.toolResults.map((r) => `${r.isError ? "error" : "ok"}: ${r.text}`).join("; ")}`)]
        : [Script.toolCall("wait", {})]
    )
    const client = makeClient(server(), { tools: [wait] })
    const stream = client.run("go")
    const threadId = await stream.threadId
    await waitFor(started, "the tool to start")
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

describe("a run that finished, ended while its end reads the thread", () => {
  /** A client through a proxy that holds the end-of-run read of the run's new thread. */
  const heldEndOfRun = async () => {
    const proxy = await holdingProxy(server())
    const client = makeClient(server(), { tamboUrl: proxy.url })
    const read = proxy.holdRequest((request) => request.method === "GET" && /^\/v1\/threads\/[^/?]+\?/.test(request.url))
    return { proxy, client, read }
  }

  /** The run completed: its thread is the server's, nothing was cancelled, and the store agrees. */
  const expectCompleted = async (client: ReturnType<typeof makeClient>, thread: Promise<TamboThread>) => {
    const outcome = await settle(thread)
    expect(outcome.ok ? "ok" : outcome.error._tag).toBe("ok")
    const stored = server().threads.list()[0]!
    expect(outcome.ok && outcome.value.messages.map((m) => m.id)).toEqual(stored.messages.map((m) => m.id))
    expect(client.getState().threadMap[stored.id]!.thread.messages.map((m) => m.id)).toEqual(stored.messages.map((m) => m.id))
    expect(client.getState().threadMap[stored.id]!.thread.lastRunCancelled).not.toBe(true)
    expect(server().cancels).toEqual([])
    expect(server().requests.filter((r) => r.method === "DELETE")).toEqual([])
  }

  it("abort() after the last RUN_FINISHED lets the run complete: thread resolves, nothing is cancelled", async () => {
    server().setScript([Script.text("done")])
    const { client, read } = await heldEndOfRun()
    const stream = client.run("hi")
    await read.arrived
    const aborted = stream.abort()
    read.release()
    await aborted
    await expectCompleted(client, stream.thread)
  })

  it("breaking out of for await at the last RUN_FINISHED: thread resolves with the completed thread", async () => {
    server().setScript([Script.text("done")])
    const { client, read } = await heldEndOfRun()
    const stream = client.run("hi")
    let last: string | undefined
    const looped = (async () => {
      for await (const { event } of stream) {
        last = event.type
        if (event.type === "RUN_FINISHED") break
      }
    })()
    await read.arrived
    await waitFor(() => last === "RUN_FINISHED", "the consumer to see RUN_FINISHED")
    read.release()
    await looped
    await expectCompleted(client, stream.thread)
  })

  it("breaking out of for await behind a full buffer once the run's last event came: the loop ends and thread resolves", async () => {
    // More events than the iterator's buffer holds, all sent before the client reads any.
    server().setScript([Script.text(Array.from({ length: 3 * EVENT_BUFFER }, () => "x"))])
    const proxy = await holdingProxy(server())
    const body = proxy.holdBody((request) => request.method === "POST" && request.path === "/v1/threads/runs")
    const client = makeClient(server(), { tamboUrl: proxy.url })
    const stream = client.run("hi")
    await body.arrived
    await waitFor(() => server().threads.list()[0]?.runStatus === "idle", "the server to finish the run")
    const threadId = server().threads.list()[0]!.id
    body.release()
    const seen: Array<string> = []
    for await (const { event } of stream) {
      seen.push(event.type)
      // The run's last event reached the client; this loop is far behind it.
      await waitFor(() => client.getState().threadMap[threadId]?.streaming.status === "idle", "the client to take the last event")
      break
    }
    expect(seen).toEqual(["RUN_STARTED"])
    await expectCompleted(client, stream.thread)
  })

  it("abort() after a RUN_FINISHED that paused for a tool still cancels the run", async () => {
    const { wait, started } = waitingTool()
    server().setScript([Script.toolCall("wait", {})])
    const client = makeClient(server(), { tools: [wait] })
    const stream = client.run("go")
    const seen: Array<string> = []
    const looped = (async () => {
      for await (const { event } of stream) seen.push(event.type)
    })()
    await waitFor(started, "the tool to start")
    expect(seen).toContain("RUN_FINISHED")
    stream.abort()
    const outcome = await settle(stream.thread)
    expect(outcome.ok ? "ok" : outcome.error._tag).toBe("AbortError")
    await looped.catch(() => undefined)
    expect(await client.getPendingToolCalls(await stream.threadId)).toHaveLength(1)
  })
})

describe("a run stopped after the server took its message, before any of its events came", () => {
  it("a message queued behind a new conversation's first run, aborted while its answer is held, rejects with an AbortError naming the thread that holds it", async () => {
    server().setScript((request) => [Script.text(`re: ${request.text}`)])
    const proxy = await holdingProxy(server())
    const client = makeClient(server(), { tamboUrl: proxy.url })
    const answer = proxy.holdResponse((request) => request.method === "POST" && /^\/v1\/threads\/[^/]+\/runs$/.test(request.path))
    const firstRequest = proxy.holdRequest((request) => request.method === "POST" && request.path === "/v1/threads/runs")
    const first = client.run("first")
    // Asked for while the first run creates the new conversation's thread: it goes on that thread.
    await firstRequest.arrived
    const second = client.run("second", { onBusy: "queue" })
    firstRequest.release()
    const threadId = await first.threadId
    await first.thread
    // The server took the second message and answered; the answer waits at the proxy.
    await answer.arrived
    second.abort()
    const outcome = await settle(second.thread)
    expect(outcome.ok ? "ok" : outcome.error._tag).toBe("AbortError")
    expect(outcome.ok ? undefined : outcome.error.threadId).toBe(threadId)
    expect(await second.threadId).toBe(threadId)
    const named = server().threads.get(threadId)!
    const ids = named.messages.map((message) => message.id)
    expect(named.messages.filter((message) => message.role === "user")).toHaveLength(2)
    expect(client.getState().threadMap[threadId]!.thread.messages.map((message) => message.id)).toEqual(ids)
  })
})
