import * as CoreErrors from "@tambo-effect/core/TamboError"
import * as CoreTool from "@tambo-effect/core/Tool"
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import * as Client from "../src/index.js"
import { holdingProxy, makeClient, settle, texts, useServer, waitFor, weatherScript, weatherTool } from "./helpers.js"

const server = useServer()

const thisFile = "errors.test.ts"

/** The frames of a stack, without its message. */
const framesOf = (error: Error) => (error.stack ?? "").split("\n").filter((line) => /^\s+at /.test(line))

/** The stack's frames point at the caller: this file, with no Effect runtime frame before it. */
const expectCallersStack = (error: Error) => {
  expect(error.stack).toMatch(new RegExp(`^${error.name}: `))
  const frames = framesOf(error)
  const caller = frames.findIndex((frame) => frame.includes(thisFile))
  expect(caller, error.stack).toBeGreaterThanOrEqual(0)
  expect(frames.slice(0, caller).filter((frame) => /[/\\]effect[/\\](dist|src)[/\\]/.test(frame)), error.stack).toEqual([])
}

describe("the facade's errors are core's", () => {
  it("exports core's error classes themselves", () => {
    expect(Client.ApiError).toBe(CoreErrors.ApiError)
    expect(Client.TransportError).toBe(CoreErrors.TransportError)
    expect(Client.DecodeError).toBe(CoreErrors.DecodeError)
    expect(Client.RunConflictError).toBe(CoreErrors.RunConflictError)
    expect(Client.RunCancelledError).toBe(CoreErrors.RunCancelledError)
    expect(Client.MaxStepsExceededError).toBe(CoreErrors.MaxStepsExceededError)
    expect(Client.AuthError).toBe(CoreErrors.AuthError)
    expect(Client.ToolError).toBe(CoreErrors.ToolError)
    expect(Client.McpError).toBe(CoreErrors.McpError)
    expect(Client.ConfigError).toBe(CoreErrors.ConfigError)
    expect(Client.ToolDefinitionError).toBe(CoreTool.ToolDefinitionError)
    expect(Client.ToolCallError).toBe(CoreTool.ToolCallError)
    expect(Client.TranscriptionError).toBe(CoreErrors.TranscriptionError)
    expect(Client.AgUiError).toBe(CoreErrors.AgUiError)
  })

  it("an ApiError from a run is core's ApiError, an Error with its tag, reason and status", async () => {
    server().setScript([Script.httpError(500)])
    const client = makeClient(server())
    const result = await settle(client.run("hi").thread)
    const error = result.ok ? undefined : result.error
    expect(error).toBeInstanceOf(CoreErrors.ApiError)
    expect(error).toBeInstanceOf(Error)
    expect(error).toMatchObject({ name: "ApiError", _tag: "ApiError", reason: "ServerError", status: 500 })
    expect(CoreErrors.isTamboError(error)).toBe(true)
    expect(Client.isTamboClientError(error)).toBe(true)
    expect(Client.isAbortError(error)).toBe(false)
  })

  it("cancelRun's cancellation is an AbortError", async () => {
    server().setScript([Script.text("partial"), Script.hang()])
    const client = makeClient(server())
    const stream = client.run("hang")
    const threadId = await stream.threadId
    await client.cancelRun(threadId)
    const result = await settle(stream.thread)
    const error = result.ok ? undefined : result.error
    expect(error).toBeInstanceOf(Client.AbortError)
    expect(error).toBeInstanceOf(Error)
    expect(error).toMatchObject({ name: "AbortError", _tag: "AbortError", reason: "CancelledByClient", threadId })
    expect(Client.isAbortError(error)).toBe(true)
    expect(Client.isTamboClientError(error)).toBe(true)
    await waitFor(() => server().cancels.length > 0, "the server to see the cancel")
  })

  it("a cancellation by the server is an AbortError whose cause is core's RunCancelledError", async () => {
    server().setScript([Script.text("partial"), Script.runError({ code: "CANCELLED", message: "stopped" })])
    const client = makeClient(server())
    const result = await settle(client.run("hi").thread)
    const error = result.ok ? undefined : result.error
    expect(error).toBeInstanceOf(Client.AbortError)
    expect(error).toMatchObject({ _tag: "AbortError", reason: "CancelledByServer" })
    expect(error.cause).toBeInstanceOf(CoreErrors.RunCancelledError)
  })
})

describe("a run whose request may have reached the server", () => {
  it("rejects with core's TransportError saying so, which is not retryable, nor is the error its thread records: sending the message again may duplicate it", async () => {
    server().setScript((request) => [Script.text(`re: ${request.text}`)])
    const proxy = await holdingProxy(server())
    const client = makeClient(server(), { tamboUrl: proxy.url })
    const threadId = (await client.run("first").thread).id
    // The server takes the message; the connection breaks before its answer reaches the client.
    const held = proxy.holdResponse((request) => request.method === "POST" && request.path === `/v1/threads/${threadId}/runs`)
    void held.arrived.then(held.reset)
    const result = await settle(client.run("hello", { threadId }).thread)
    const error = result.ok ? undefined : result.error
    expect(error).toBeInstanceOf(CoreErrors.TransportError)
    expect(error).toMatchObject({ _tag: "TransportError", mayHaveReachedServer: true, retryable: false })
    expect(error?.message).toMatch(/may have reached the server/)
    expect(CoreErrors.isRetryable(error as CoreErrors.TamboError)).toBe(false)
    await waitFor(() => client.getState().threadMap[threadId]?.streaming.error !== undefined, "the thread's error")
    expect(client.getState().threadMap[threadId]!.streaming.error).toMatchObject({ code: "TransportError", isRetryable: false })
  })
  it("a tool round's results whose connection was reset before the server saw them are sent again, once, where the server still waits on the call: the run completes, and the tool ran once", async () => {
    weatherScript(server())
    const proxy = await holdingProxy(server())
    let runs = 0
    const counting: typeof weatherTool = {
      ...weatherTool,
      tool: (args, context) => {
        runs++
        // The round's request is the next run request.
        proxy.holdRequest((request) => request.method === "POST" && /^\/v1\/threads\/[^/]+\/runs$/.test(request.path)).reset()
        return weatherTool.tool(args, context)
      }
    }
    const client = makeClient(server(), { tamboUrl: proxy.url, maxRetries: 2, tools: [counting] })
    const thread = await client.run("weather?").thread
    expect(runs).toBe(1)
    expect(texts(thread.messages).at(-1)).toMatch(/^assistant: Result: .*sunny/)
    expect(texts(server().threads.get(thread.id)!.messages).filter((text) => text.includes("[tool_result]"))).toHaveLength(1)
  })
})

describe("the facade's errors carry the caller's stack", () => {
  it("a run's rejected thread", async () => {
    server().setScript([Script.httpError(500)])
    const client = makeClient(server())
    const result = await settle(client.run("hi").thread)
    expect(result.ok).toBe(false)
    if (!result.ok) expectCallersStack(result.error)
  })

  it("an error thrown from for await, with the original cause kept", async () => {
    const client = makeClient(server(), { tamboUrl: "http://127.0.0.1:1" })
    const iterate = async () => {
      for await (const _ of client.run("hi")) {
        // nothing arrives
      }
    }
    const result = await settle(iterate())
    const error = result.ok ? undefined : result.error
    expect(error).toBeInstanceOf(CoreErrors.TransportError)
    expectCallersStack(error)
    expect(error.cause).toBeDefined()
  })

  it("an abort()", async () => {
    server().setScript([Script.text("partial"), Script.hang()])
    const client = makeClient(server())
    const stream = client.run("hang")
    await stream.threadId
    stream.abort()
    const result = await settle(stream.messages)
    const error = result.ok ? undefined : result.error
    expect(error).toBeInstanceOf(Client.AbortError)
    expectCallersStack(error)
  })

  it("a rejected call", async () => {
    const client = makeClient(server())
    const result = await settle(client.fetchThread("thr_missing"))
    const error = result.ok ? undefined : result.error
    expect(error).toBeInstanceOf(CoreErrors.ApiError)
    expectCallersStack(error)
  })

  it("a thrown call", () => {
    const client = makeClient(server())
    let error: any
    try {
      client.approveToolCall("call_unknown")
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(CoreErrors.ToolError)
    expectCallersStack(error)
  })
})
