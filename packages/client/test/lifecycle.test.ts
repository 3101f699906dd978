import { spawn } from "node:child_process"
import { join } from "node:path"
import { Script, startTestServer } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import { AbortError, TamboClient } from "../src/index.js"
import { makeClient, settle, sleep, useServer, weatherTool } from "./helpers.js"
import { eventually, resourceCounts } from "./model/support.js"

const server = useServer()
const root = join(import.meta.dirname, "../../..")
const tsx = join(root, "node_modules/.bin/tsx")

describe("destroy()", () => {
  it("cancels the runs in flight, which reject with an AbortError", async () => {
    server().setScript([Script.text("partial"), Script.hang()])
    const client = makeClient(server())
    const stream = client.run("hang")
    const threadId = await stream.threadId
    await client.destroy()
    const result = await settle(stream.thread)
    expect(result.ok ? undefined : result.error).toMatchObject({ _tag: "AbortError", reason: "ClientDestroyed" })
    expect(server().cancels.map((c) => c.threadId)).toContain(threadId)
    expect(client.getThread(threadId)!.lastRunCancelled).toBe(true)
  })

  it("makes later calls fail with an AbortError, and is idempotent", async () => {
    const client = makeClient(server())
    const destroyed = client.destroy()
    expect(client.destroy()).toBe(destroyed)
    await destroyed
    await expect(client.run("late").thread).rejects.toBeInstanceOf(AbortError)
    await expect(client.listThreads()).rejects.toMatchObject({ reason: "ClientDestroyed" })
    expect(() => client.registerTool(weatherTool)).toThrow(AbortError)
    expect(server().requests).toHaveLength(0)
  })

  it("stops notifying listeners: one subscribed once destroy began is never called, though a run ends meanwhile", async () => {
    server().setScript([Script.text("partial"), Script.hang()])
    const client = makeClient(server())
    const stream = client.run("hang")
    await stream.threadId
    let before = 0
    let after = 0
    client.subscribe(() => before++)
    const destroyed = client.destroy()
    const unsubscribe = client.subscribe(() => after++)
    await destroyed
    await settle(stream.thread)
    await sleep(20)
    unsubscribe()
    expect(after).toBe(0)
    const heard = before
    await sleep(20)
    expect(before).toBe(heard)
  })

  it("subscribeToDestroy tells its listener once, when destroy() is done and the runs ended, whoever called it", async () => {
    server().setScript([Script.text("partial"), Script.hang()])
    const client = makeClient(server())
    const stream = client.run("hang")
    const threadId = await stream.threadId
    const heard: Array<boolean> = []
    client.subscribeToDestroy(() => heard.push(client.hasActiveRun(threadId)))
    let unsubscribedHeard = 0
    client.subscribeToDestroy(() => unsubscribedHeard++)()
    const destroyed = client.destroy()
    expect(heard).toEqual([])
    await destroyed
    expect(heard).toEqual([false])
    expect(unsubscribedHeard).toBe(0)
    // A listener subscribed once the client is destroyed hears of it at once.
    const late = new Promise<void>((resolve) => client.subscribeToDestroy(resolve))
    await late
    await client.destroy()
    expect(heard).toEqual([false])
  })

  it("leaves no timer, socket or handle of its own behind", async () => {
    const before = resourceCounts()
    const local = await startTestServer()
    const client = new TamboClient({
      apiKey: local.apiKey,
      tamboUrl: local.url,
      userKey: "user-1",
      tools: [weatherTool],
      autoGenerateNameThreshold: 1
    })
    client.subscribe(() => {})
    await client.run("What is the weather in Paris?").thread
    local.setScript([Script.text("partial"), Script.hang()])
    const hanging = client.run("hang")
    await hanging.threadId
    await client.destroy()
    await local.close()
    // Sockets close as their peers answer: wait (bounded) for the counts to come back down.
    const settledBack = () => [...resourceCounts()].every(([type, count]) => count <= (before.get(type) ?? 0))
    await eventually(settledBack)
    const after = resourceCounts()
    for (const [type, count] of after) expect({ type, count }).toEqual({ type, count: Math.min(count, before.get(type) ?? 0) })
  })

  it("a Node process that used a client exits by itself once it is destroyed", async () => {
    server().setScript((request, context) =>
      request.text === "hang" ? [Script.text("partial"), Script.hang()] : Script.weatherAssistant(request, context)
    )
    const child = spawn(tsx, ["--conditions=tambo-source", join(import.meta.dirname, "fixtures/exit-after-destroy.ts")], {
      cwd: root,
      env: { ...process.env, TEST_URL: server().url, TEST_API_KEY: server().apiKey },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (data: Buffer) => (stdout += data.toString()))
    child.stderr.on("data", (data: Buffer) => (stderr += data.toString()))
    const exitCode = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        resolve(null)
      }, 20_000)
      child.on("exit", (code) => {
        clearTimeout(timer)
        resolve(code)
      })
    })
    const exitedAt = Date.now()
    expect(stderr).toBe("")
    expect(exitCode).toBe(0)
    expect(stdout).toMatch(/thread \S+ has 4 messages/)
    expect(stdout).toContain("hanging run ended with AbortError:ClientDestroyed")
    const destroyedAt = Number(/destroyed at (\d+)/.exec(stdout)?.[1])
    // Well under the server's 5 s keep-alive: nothing of the client held the process.
    expect(exitedAt - destroyedAt).toBeLessThan(2_000)
  })
})
