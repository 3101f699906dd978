// @vitest-environment happy-dom
import { renderHook, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import {
  call0WeatherScript,
  guardedWeather,
  makeClient,
  runMovedToLocalThread,
  weatherScript
} from "../../client/test/helpers.js"
import {
  type ReactTamboThreadMessage,
  type TamboTool,
  useTambo,
  useTamboPendingApprovals,
  useTamboPendingToolCalls
} from "../src/index.js"
import { connection, holdingProxy, useServer, wrapperFor } from "./helpers.js"

const server = useServer()

/** A weather tool the app runs itself (manual mode): never executed by the client. */
const manualWeather: TamboTool<{ readonly city: string }> = {
  name: "get_weather",
  description: "Current weather in a city",
  inputSchema: Schema.Struct({ city: Schema.String }),
  tool: () => {
    throw new Error("not called")
  }
}

const textOf = (message: ReactTamboThreadMessage | undefined): string =>
  (message?.content ?? []).flatMap((block) => (block.type === "text" ? [block.text] : [])).join("")

const useBoth = () => ({ tambo: useTambo(), approvals: useTamboPendingApprovals() })

describe("useTamboPendingApprovals", () => {
  it("lists the call waiting for approval; approve() runs it and clears it", async () => {
    weatherScript(server())
    const calls: Array<string> = []
    const { result } = renderHook(useBoth, {
      wrapper: wrapperFor(connection(server(), { tools: [guardedWeather(calls)] }))
    })
    expect(result.current.approvals).toEqual([])
    const stream = result.current.tambo.sendMessage("weather?")
    await waitFor(() => expect(result.current.approvals).toHaveLength(1))
    const [approval] = result.current.approvals
    expect(approval).toMatchObject({
      threadId: result.current.tambo.currentThreadId,
      toolName: "get_weather",
      args: { city: "Paris" },
      needsApproval: true
    })
    expect(calls).toEqual([])
    // The same array while nothing changed.
    const before = result.current.approvals
    approval!.approve()
    await waitFor(() => expect(result.current.approvals).toEqual([]))
    expect(before).toHaveLength(1)
    await stream.thread
    expect(calls).toEqual(["Paris"])
    await waitFor(() => expect(textOf(result.current.tambo.messages.at(-1))).toBe('Result: {"city":"Paris","temperature":21}'))
  })

  it("a plain tool object with needsApproval (true, or a predicate) waits for approval too", async () => {
    for (const needsApproval of [true, (args: { readonly city: string }) => Promise.resolve(args.city === "Paris")]) {
      weatherScript(server())
      const calls: Array<string> = []
      const plain: TamboTool<{ readonly city: string }> = {
        name: "get_weather",
        description: "Current weather in a city",
        inputSchema: Schema.Struct({ city: Schema.String }),
        needsApproval,
        tool: ({ city }) => {
          calls.push(city)
          return { city, temperature: 21 }
        }
      }
      const { result, unmount } = renderHook(useBoth, { wrapper: wrapperFor(connection(server(), { tools: [plain] })) })
      const stream = result.current.tambo.sendMessage("weather?")
      await waitFor(() => expect(result.current.approvals).toHaveLength(1))
      expect(result.current.approvals[0]).toMatchObject({ toolName: "get_weather", args: { city: "Paris" } })
      expect(calls).toEqual([])
      result.current.approvals[0]!.approve()
      await stream.thread
      expect(calls).toEqual(["Paris"])
      unmount()
    }
  })

  it("approve(args) runs the call with edited arguments", async () => {
    weatherScript(server())
    const calls: Array<string> = []
    const { result } = renderHook(useBoth, {
      wrapper: wrapperFor(connection(server(), { tools: [guardedWeather(calls)] }))
    })
    const stream = result.current.tambo.sendMessage("weather?")
    await waitFor(() => expect(result.current.approvals).toHaveLength(1))
    result.current.approvals[0]!.approve({ city: "Lyon" })
    const thread = await stream.thread
    expect(calls).toEqual(["Lyon"])
    expect(thread.messages.at(-1)?.content[0]).toMatchObject({ type: "text", text: expect.stringContaining("Lyon") })
    await waitFor(() => expect(result.current.approvals).toEqual([]))
  })

  it("deny(reason) tells the model; useTambo's denyToolCall and a cancelled run clear the list too", async () => {
    weatherScript(server())
    const calls: Array<string> = []
    const { result } = renderHook(useBoth, {
      wrapper: wrapperFor(connection(server(), { tools: [guardedWeather(calls)] }))
    })
    const denied = result.current.tambo.sendMessage("weather?")
    await waitFor(() => expect(result.current.approvals).toHaveLength(1))
    result.current.approvals[0]!.deny("not now")
    await denied.thread
    expect(calls).toEqual([])
    await waitFor(() => expect(textOf(result.current.tambo.messages.at(-1))).toMatch(/^Result: error .*not now/))
    expect(result.current.approvals).toEqual([])

    // Through useTambo(): the same decision by id.
    const again = result.current.tambo.sendMessage("weather again?")
    await waitFor(() => expect(result.current.approvals).toHaveLength(1))
    const { approveToolCall, denyToolCall } = result.current.tambo
    result.current.tambo.denyToolCall(result.current.approvals[0]!.toolCallId, "no")
    await again.thread
    await waitFor(() => expect(result.current.approvals).toEqual([]))
    // Stable callbacks.
    expect(result.current.tambo.approveToolCall).toBe(approveToolCall)
    expect(result.current.tambo.denyToolCall).toBe(denyToolCall)

    // A run that ends undecided takes its approvals with it.
    const cancelled = result.current.tambo.sendMessage("and once more?")
    await waitFor(() => expect(result.current.approvals).toHaveLength(1))
    await result.current.tambo.cancel()
    await cancelled.thread.catch(() => undefined)
    await waitFor(() => expect(result.current.approvals).toEqual([]))
    expect(calls).toEqual([])
  })

  it("two threads waiting at once for approval of call_0: each item decides its own thread's call", async () => {
    call0WeatherScript(server())
    const calls: Array<string> = []
    const { result, rerender } = renderHook(
      ({ a, b }: { readonly a: string; readonly b: string }) => ({
        tambo: useTambo(),
        a: useTamboPendingApprovals(a),
        b: useTamboPendingApprovals(b)
      }),
      { initialProps: { a: "none", b: "none" }, wrapper: wrapperFor(connection(server(), { tools: [guardedWeather(calls)] })) }
    )
    const client = result.current.tambo.client
    const paris = client.run("Paris", { threadId: "placeholder" })
    const lima = client.run("Lima", { threadId: "placeholder" })
    rerender({ a: await paris.threadId, b: await lima.threadId })
    await waitFor(() => expect([result.current.a.length, result.current.b.length]).toEqual([1, 1]))
    expect(result.current.a[0]).toMatchObject({ toolCallId: "call_0", args: { city: "Paris" } })
    expect(result.current.b[0]).toMatchObject({ toolCallId: "call_0", args: { city: "Lima" } })
    // By id alone, useTambo's action cannot tell them apart.
    expect(() => result.current.tambo.approveToolCall("call_0")).toThrow(expect.objectContaining({ reason: "Ambiguous" }))

    result.current.b[0]!.deny("not now")
    await waitFor(() => expect(result.current.b).toEqual([]))
    expect(result.current.a).toHaveLength(1)
    result.current.a[0]!.approve()
    await waitFor(() => expect(result.current.a).toEqual([]))
    expect(textOf((await paris.messages).at(-1))).toBe('Result: {"city":"Paris","temperature":21}')
    expect(textOf((await lima.messages).at(-1))).toMatch(/^Result: error .*not now/)
    expect(calls).toEqual(["Paris"])
  })

  it("useTambo's approveToolCall and denyToolCall take the thread of the call", async () => {
    call0WeatherScript(server())
    const calls: Array<string> = []
    const { result } = renderHook(useBoth, { wrapper: wrapperFor(connection(server(), { tools: [guardedWeather(calls)] })) })
    const client = result.current.tambo.client
    const paris = client.run("Paris", { threadId: "placeholder" })
    const lima = client.run("Lima", { threadId: "placeholder" })
    const [parisId, limaId] = [await paris.threadId, await lima.threadId]
    await waitFor(() => expect(client.getPendingApprovals()).toHaveLength(2))
    result.current.tambo.denyToolCall("call_0", "not now", { threadId: limaId })
    result.current.tambo.approveToolCall("call_0", { threadId: parisId })
    expect(textOf((await paris.messages).at(-1))).toBe('Result: {"city":"Paris","temperature":21}')
    expect(textOf((await lima.messages).at(-1))).toMatch(/^Result: error .*not now/)
    expect(calls).toEqual(["Paris"])
  })

  it("lists only the given thread's approvals", async () => {
    weatherScript(server())
    const { result } = renderHook(() => ({ tambo: useTambo(), elsewhere: useTamboPendingApprovals("thr_other") }), {
      wrapper: wrapperFor(connection(server(), { tools: [guardedWeather([])] }))
    })
    const stream = result.current.tambo.sendMessage("weather?")
    await waitFor(() => expect(result.current.tambo.client.getPendingApprovals()).toHaveLength(1))
    expect(result.current.elsewhere).toEqual([])
    stream.abort()
    await stream.thread.catch(() => undefined)
  })
})

describe("useTamboPendingToolCalls", () => {
  it("manual mode: lists what the run ended waiting for; continueRun answers it", async () => {
    weatherScript(server())
    const { result } = renderHook(() => ({ tambo: useTambo(), manual: useTamboPendingToolCalls() }), {
      wrapper: wrapperFor(connection(server(), { tools: [manualWeather] }))
    })
    expect(result.current.manual.pendingToolCalls).toEqual([])
    const stream = result.current.tambo.sendMessage("weather?", { autoExecuteTools: false })
    const threadId = await stream.threadId
    await stream.thread
    await waitFor(() => expect(result.current.manual.pendingToolCalls).toHaveLength(1))
    expect(result.current.manual.threadId).toBe(threadId)
    const [call] = result.current.manual.pendingToolCalls
    expect(call).toMatchObject({ threadId, toolName: "get_weather", args: { city: "Paris" }, needsApproval: false })
    expect(result.current.tambo.isIdle).toBe(true)

    const continued = result.current.manual.continueRun([{ toolCallId: call!.toolCallId, result: { city: "Paris", temperature: 7 } }])
    // While the continuation runs, nothing waits for the app.
    await waitFor(() => expect(result.current.manual.pendingToolCalls).toEqual([]))
    await continued.thread
    await waitFor(() => expect(textOf(result.current.tambo.messages.at(-1))).toBe('Result: {"city":"Paris","temperature":7}'))
    expect(result.current.manual.pendingToolCalls).toEqual([])
  })

  it("a second round that reuses call_0 is not shown completed by the first round's result", async () => {
    server().setScript((request) =>
      request.toolResults.length === 0
        ? [Script.toolCall("get_weather", { city: "Paris" }, { id: "call_0" })]
        : request.toolResults[0]!.text.includes("Paris")
        ? [Script.toolCall("get_weather", { city: "Lyon" }, { id: "call_0" })]
        : [Script.text(`Result: ${request.toolResults[0]!.text}`)]
    )
    const { result } = renderHook(() => ({ tambo: useTambo(), manual: useTamboPendingToolCalls() }), {
      wrapper: wrapperFor(connection(server(), { tools: [manualWeather] }))
    })
    await result.current.tambo.sendMessage("weather?", { autoExecuteTools: false }).thread
    await waitFor(() => expect(result.current.manual.pendingToolCalls).toHaveLength(1))
    await result.current.manual.continueRun([{ toolCallId: "call_0", result: { city: "Paris", temperature: 7 } }], {
      autoExecuteTools: false
    }).thread
    await waitFor(() => expect(result.current.manual.pendingToolCalls).toMatchObject([{ toolCallId: "call_0", args: { city: "Lyon" } }]))
    const toolUses = result.current.tambo.messages.flatMap((m) => m.content.filter((b) => b.type === "tool_use"))
    expect(toolUses).toMatchObject([
      { id: "call_0", input: { city: "Paris" }, hasCompleted: true },
      { id: "call_0", input: { city: "Lyon" }, hasCompleted: false }
    ])
  })

  it("useTambo().continueRun answers on the current thread", async () => {
    weatherScript(server())
    const { result } = renderHook(() => ({ tambo: useTambo(), manual: useTamboPendingToolCalls() }), {
      wrapper: wrapperFor(connection(server(), { tools: [manualWeather] }))
    })
    await result.current.tambo.sendMessage("weather?", { autoExecuteTools: false }).thread
    await waitFor(() => expect(result.current.manual.pendingToolCalls).toHaveLength(1))
    const continueRun = result.current.tambo.continueRun
    const thread = await continueRun([
      { toolCallId: result.current.manual.pendingToolCalls[0]!.toolCallId, result: "sunny", isError: false }
    ]).thread
    expect(thread.id).toBe(result.current.tambo.currentThreadId)
    await waitFor(() => expect(textOf(result.current.tambo.messages.at(-1))).toBe("Result: sunny"))
    expect(result.current.tambo.continueRun).toBe(continueRun)
  })

  it("after a reload: a new provider finds a thread's pending calls on the server and continues", async () => {
    weatherScript(server())
    const first = renderHook(() => useTambo(), { wrapper: wrapperFor(connection(server(), { tools: [manualWeather] })) })
    const threadId = (await first.result.current.sendMessage("weather?", { autoExecuteTools: false }).thread).id
    first.unmount()

    // A fresh provider (a new client) that never saw the thread.
    const { result } = renderHook(() => useTamboPendingToolCalls(threadId), {
      wrapper: wrapperFor(connection(server(), { tools: [manualWeather] }))
    })
    expect(result.current.isLoading).toBe(true)
    await waitFor(() => expect(result.current.pendingToolCalls).toHaveLength(1))
    expect(result.current.isLoading).toBe(false)
    expect(result.current.pendingToolCalls[0]).toMatchObject({ threadId, toolName: "get_weather", args: { city: "Paris" } })
    const thread = await result.current.continueRun([
      { toolCallId: result.current.pendingToolCalls[0]!.toolCallId, result: { city: "Paris", temperature: 12 } }
    ]).thread
    expect(textOf(thread.messages.at(-1))).toBe('Result: {"city":"Paris","temperature":12}')
    await waitFor(() => expect(result.current.pendingToolCalls).toEqual([]))
  })

  it("lists nothing while an auto-executing run waits for approval", async () => {
    weatherScript(server())
    const { result } = renderHook(
      () => ({ tambo: useTambo(), manual: useTamboPendingToolCalls(), approvals: useTamboPendingApprovals() }),
      { wrapper: wrapperFor(connection(server(), { tools: [guardedWeather([])] })) }
    )
    const stream = result.current.tambo.sendMessage("weather?")
    await waitFor(() => expect(result.current.approvals).toHaveLength(1))
    // The state names the call, but the run handles it.
    expect(result.current.tambo.thread?.pendingToolCalls).toHaveLength(1)
    expect(result.current.manual.pendingToolCalls).toEqual([])
    result.current.approvals[0]!.approve()
    await stream.thread
    expect(result.current.manual.pendingToolCalls).toEqual([])
  })
})

describe("a new conversation's local thread id, once the server named its thread", () => {
  it("useTamboPendingApprovals lists the call its run waits to have approved there; approve() runs it", async () => {
    weatherScript(server())
    const calls: Array<string> = []
    const proxy = await holdingProxy(server())
    const client = makeClient(server(), { tamboUrl: proxy.url, tools: [guardedWeather(calls)] })
    const { localId, stream, threadId } = await runMovedToLocalThread(client, proxy, () => client.run("weather?"))
    const { result } = renderHook(() => useTamboPendingApprovals(localId), { wrapper: wrapperFor({ client }) })
    await waitFor(() => expect(result.current).toHaveLength(1))
    expect(result.current[0]).toMatchObject({ threadId, toolName: "get_weather", args: { city: "Paris" } })
    result.current[0]!.approve()
    await stream.thread
    expect(calls).toEqual(["Paris"])
    await waitFor(() => expect(result.current).toEqual([]))
  })

  it("useTamboPendingToolCalls lists what its run ended waiting for there; continueRun answers it", async () => {
    weatherScript(server())
    const proxy = await holdingProxy(server())
    const client = makeClient(server(), { tamboUrl: proxy.url, tools: [manualWeather] })
    const { localId, stream, threadId } = await runMovedToLocalThread(
      client,
      proxy,
      () => client.run("weather?", { autoExecuteTools: false })
    )
    await stream.thread
    const { result } = renderHook(() => useTamboPendingToolCalls(localId), { wrapper: wrapperFor({ client }) })
    await waitFor(() => expect(result.current.pendingToolCalls).toHaveLength(1))
    expect(result.current.threadId).toBe(threadId)
    const [call] = result.current.pendingToolCalls
    expect(call).toMatchObject({ threadId, toolName: "get_weather", args: { city: "Paris" } })
    const continued = result.current.continueRun([{ toolCallId: call!.toolCallId, result: { city: "Paris", temperature: 7 } }])
    expect(await continued.threadId).toBe(threadId)
    await continued.thread
    await waitFor(() => expect(result.current.pendingToolCalls).toEqual([]))
  })

  it("once its thread was forgotten, useTamboPendingToolCalls reports the client's ConfigError, as for a thread that does not exist, and asks the API nothing; useTamboPendingApprovals lists nothing", async () => {
    weatherScript(server())
    const proxy = await holdingProxy(server())
    const client = makeClient(server(), { tamboUrl: proxy.url, tools: [manualWeather] })
    const { localId, stream } = await runMovedToLocalThread(
      client,
      proxy,
      () => client.run("weather?", { autoExecuteTools: false })
    )
    await stream.thread
    const { result } = renderHook(
      () => ({ calls: useTamboPendingToolCalls(localId), approvals: useTamboPendingApprovals(localId), missing: useTamboPendingToolCalls("thr_missing") }),
      { wrapper: wrapperFor({ client }) }
    )
    await waitFor(() => expect(result.current.calls.pendingToolCalls).toHaveLength(1))
    await waitFor(() => expect(result.current.missing.error).toBeDefined())
    client.forgetThread(localId)
    await waitFor(() => expect(result.current.calls.error).toBeDefined())
    expect(result.current.calls.error).toMatchObject({ name: "ConfigError", reason: "InvalidOption" })
    expect(String(result.current.calls.error?.message)).toMatch(/holds no thread of/)
    expect(result.current.calls).toMatchObject({ threadId: localId, pendingToolCalls: [], isLoading: false })
    expect(result.current.missing).toMatchObject({ pendingToolCalls: [], isLoading: false })
    expect(result.current.approvals).toEqual([])
    expect(server().requests.filter((request) => request.path.includes(localId))).toEqual([])
  })
})
