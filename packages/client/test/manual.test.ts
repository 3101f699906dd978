// Manual tool execution, approvals and busy policies, through the facade.
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import type { PendingToolCallInfo, StreamEvent, TamboTool } from "../src/index.js"
import {
  call0WeatherScript,
  guardedWeather,
  holdingProxy,
  makeClient,
  runMovedToLocalThread,
  settle,
  texts,
  useServer,
  waitFor,
  weatherScript
} from "./helpers.js"

const server = useServer()

/** A client whose weather tool the caller answers (`continueRun`): run, it would throw. */
const manualClient = () =>
  makeClient(server(), {
    tools: [{
      name: "get_weather",
      description: "Current weather in a city",
      inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      tool: () => {
        throw new Error("not called")
      }
    }]
  })

describe("manual tool execution", () => {
  it("autoExecuteTools: false ends with the pending calls; continueRun answers them", async () => {
    weatherScript(server())
    const client = manualClient()
    const stream = client.run("weather?", { autoExecuteTools: false })
    let last: StreamEvent | undefined
    for await (const element of stream) last = element
    expect(last?.event.type).toBe("CLIENT_AWAITING_TOOL_RESULTS")
    const pending = last?.event.type === "CLIENT_AWAITING_TOOL_RESULTS" ? last.event.pendingToolCalls : []
    expect(pending).toMatchObject([{ toolName: "get_weather", args: { city: "Paris" } }])
    const threadId = await stream.threadId
    expect(await client.getPendingToolCalls(threadId)).toMatchObject([{ toolCallId: pending[0]!.toolCallId }])

    const thread = await client.continueRun(threadId, [
      { toolCallId: pending[0]!.toolCallId, result: { city: "Paris", temperature: 9 } }
    ]).thread
    expect(texts(thread.messages).at(-1)).toBe('assistant: Result: {"city":"Paris","temperature":9}')

    await expect(client.continueRun(threadId, [{ toolCallId: "nope", result: 1 }]).thread).rejects.toMatchObject({
      _tag: "ToolError",
      reason: "UnknownToolCall"
    })
  })
  it("continueRun as soon as the run asks for the results, inside the loop, goes on once the run ended", async () => {
    weatherScript(server())
    const client = manualClient()
    const stream = client.run("weather?", { autoExecuteTools: false })
    let continued: ReturnType<typeof client.continueRun> | undefined
    for await (const { event, threadId } of stream) {
      if (event.type === "CLIENT_AWAITING_TOOL_RESULTS") {
        continued = client.continueRun(threadId, [
          { toolCallId: event.pendingToolCalls[0]!.toolCallId, result: { city: "Paris", temperature: 9 } }
        ])
      }
    }
    const thread = await continued!.thread
    expect(texts(thread.messages).at(-1)).toBe('assistant: Result: {"city":"Paris","temperature":9}')
    // Another message meanwhile is still refused: only the answer the run asked for waits.
    const other = client.run("again?", { threadId: thread.id, autoExecuteTools: false })
    for await (const { event } of other) {
      if (event.type === "CLIENT_AWAITING_TOOL_RESULTS") {
        await expect(client.run("and now?", { threadId: thread.id }).thread).rejects.toMatchObject({ _tag: "RunConflictError" })
      }
    }
  })
})

describe("a page reload", () => {
  it("a new client, on the same thread, finds the pending calls and continues", async () => {
    weatherScript(server())
    const manualWeather = {
      name: "get_weather",
      description: "Current weather in a city",
      inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      tool: () => {
        throw new Error("not called")
      }
    } as const
    const before = makeClient(server(), { tools: [manualWeather] })
    const threadId = (await before.run("weather?", { autoExecuteTools: false }).thread).id
    await before.destroy()

    // After the reload: a fresh client knows nothing of the thread.
    const after = makeClient(server(), { tools: [manualWeather] })
    expect(after.getThread(threadId)).toBeUndefined()
    const pending = await after.getPendingToolCalls(threadId)
    expect(pending).toEqual([
      expect.objectContaining({ threadId, toolName: "get_weather", args: { city: "Paris" }, needsApproval: false })
    ])
    // The thread was loaded, with the calls it waits on.
    expect(after.getState().threadMap[threadId]?.pendingToolCalls).toEqual([
      { toolCallId: pending[0]!.toolCallId, toolName: "get_weather" }
    ])
    const stream = after.continueRun(threadId, [{ toolCallId: pending[0]!.toolCallId, result: { city: "Paris", temperature: 4 } }])
    expect(after.hasActiveRun(threadId)).toBe(true)
    const thread = await stream.thread
    expect(texts(thread.messages).at(-1)).toBe('assistant: Result: {"city":"Paris","temperature":4}')
    expect(await after.getPendingToolCalls(threadId)).toEqual([])
    expect(after.hasActiveRun(threadId)).toBe(false)
  })
})

/** The weather tool as a plain `TamboTool` object, with `needsApproval` as given. */
const plainWeather = (
  calls: Array<string>,
  needsApproval: TamboTool<{ readonly city: string }>["needsApproval"]
): TamboTool<{ readonly city: string }> => ({
  name: "get_weather",
  description: "Current weather in a city",
  inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  needsApproval,
  tool: ({ city }) => {
    calls.push(city)
    return { city, temperature: 21 }
  }
})

describe("approvals of plain tool objects", () => {
  /** Runs the weather script, approving what is announced; what the tool ran for, and what was announced. */
  const runApproving = async (tool: TamboTool<{ readonly city: string }>, calls: Array<string>) => {
    const client = makeClient(server(), { tools: [tool] })
    const announced: Array<unknown> = []
    const stream = client.run("weather?")
    for await (const event of stream.events()) {
      if (event.type === "CLIENT_APPROVAL_REQUESTED") {
        announced.push(event.args)
        expect(calls).toEqual([])
        client.approveToolCall(event.toolCallId)
      }
    }
    return { announced, text: texts(await stream.messages).at(-1) }
  }

  it("needsApproval: true waits for approval, as with Tool.make", async () => {
    weatherScript(server())
    const calls: Array<string> = []
    const { announced, text } = await runApproving(plainWeather(calls, true), calls)
    expect(announced).toEqual([{ city: "Paris" }])
    expect(calls).toEqual(["Paris"])
    expect(text).toContain("Paris")
  })

  it("a predicate (sync or async) decides per call with the decoded arguments", async () => {
    for (const needsApproval of [
      (args: { readonly city: string }) => args.city === "Paris",
      async (args: { readonly city: string }) => args.city === "Paris"
    ]) {
      weatherScript(server())
      const calls: Array<string> = []
      const { announced } = await runApproving(plainWeather(calls, needsApproval), calls)
      expect(announced).toEqual([{ city: "Paris" }])
      expect(calls).toEqual(["Paris"])
    }
    for (const needsApproval of [() => false, async () => false, false, undefined]) {
      weatherScript(server())
      const calls: Array<string> = []
      const { announced } = await runApproving(plainWeather(calls, needsApproval), calls)
      expect(announced).toEqual([])
      expect(calls).toEqual(["Paris"])
    }
  })

  it("a denied call is not run; the model is told", async () => {
    weatherScript(server())
    const calls: Array<string> = []
    const client = makeClient(server(), { tools: [plainWeather(calls, true)] })
    client.subscribe(() => {
      for (const approval of client.getPendingApprovals()) client.denyToolCall(approval.toolCallId, "policy")
    })
    const thread = await client.run("weather?").thread
    expect(calls).toEqual([])
    expect(texts(thread.messages).at(-1)).toMatch(/Result: error .*policy/)
  })

  it("a needsApproval that is neither a boolean nor a function is a ToolDefinitionError", () => {
    const bad = { ...plainWeather([], true), needsApproval: "yes" } as unknown as TamboTool
    expect(() => makeClient(server(), { tools: [bad] })).toThrow(
      expect.objectContaining({ _tag: "ToolDefinitionError", reason: "InvalidDefinition" })
    )
  })
})

/**
 * A client whose weather tool needs approval, the server scripted to ask for the weather in Paris;
 * `calls`: the cities the tool ran for.
 */
const guardedClient = () => {
  weatherScript(server())
  const calls: Array<string> = []
  return { calls, client: makeClient(server(), { tools: [guardedWeather(calls)] }) }
}

describe("approvals", () => {
  it("approve immediately when the event arrives: the call is registered before it is announced", async () => {
    const { calls, client } = guardedClient()
    const stream = client.run("weather?")
    for await (const event of stream.events()) {
      // No await between seeing the event and deciding.
      if (event.type === "CLIENT_APPROVAL_REQUESTED") client.approveToolCall(event.toolCallId)
    }
    expect(calls).toEqual(["Paris"])
    expect(texts(await stream.messages).at(-1)).toContain("Paris")
  })

  it("approveToolCall with a new conversation's local thread id, once the server named that thread, decides the call its run announced there", async () => {
    weatherScript(server())
    const calls: Array<string> = []
    const proxy = await holdingProxy(server())
    const client = makeClient(server(), { tamboUrl: proxy.url, tools: [guardedWeather(calls)] })
    const { localId, stream, threadId } = await runMovedToLocalThread(client, proxy, () => client.run("weather?"))
    await waitFor(() => client.getPendingApprovals().length === 1, "the approval")
    const [approval] = client.getPendingApprovals()
    expect(approval).toMatchObject({ threadId })
    client.approveToolCall(approval!.toolCallId, { threadId: localId })
    expect(client.getPendingApprovals()).toEqual([])
    expect(texts(await stream.messages).at(-1)).toContain("Paris")
    expect(calls).toEqual(["Paris"])
  })

  it("getPendingApprovals lists the announced calls until decided; a subscriber may decide at once", async () => {
    const { calls, client } = guardedClient()
    const lists: Array<ReadonlyArray<PendingToolCallInfo>> = [client.getPendingApprovals()]
    client.subscribe(() => {
      const approvals = client.getPendingApprovals()
      if (lists.at(-1) !== approvals) lists.push(approvals)
      // Decided in the listener that first sees it, as a UI auto-approving would.
      for (const approval of approvals) client.denyToolCall(approval.toolCallId, "policy")
    })
    // Nobody iterates the run: the client still sees its approvals.
    const thread = await client.run("weather?").thread
    expect(calls).toEqual([])
    expect(texts(thread.messages).at(-1)).toMatch(/Result: error .*policy/)
    expect(lists).toEqual([
      [],
      [expect.objectContaining({ threadId: thread.id, toolName: "get_weather", args: { city: "Paris" }, needsApproval: true })],
      []
    ])
    expect(client.getPendingApprovals()).toEqual([])
  })

  it("a pending approval is listed while the run waits, and dropped when the run ends undecided", async () => {
    const { client } = guardedClient()
    const stream = client.run("weather?")
    const threadId = await stream.threadId
    await waitFor(() => client.getPendingApprovals().length === 1, "the approval")
    const approvals = client.getPendingApprovals()
    expect(client.getPendingApprovals()).toBe(approvals)
    expect(approvals[0]).toMatchObject({ threadId, toolName: "get_weather" })
    expect(client.hasActiveRun(threadId)).toBe(true)

    await client.cancelRun(threadId)
    expect((await settle(stream.thread)).ok).toBe(false)
    expect(client.getPendingApprovals()).toEqual([])
    expect(client.hasActiveRun(threadId)).toBe(false)
    // Nothing waits on it any more.
    expect(() => client.approveToolCall(approvals[0]!.toolCallId)).toThrow(
      expect.objectContaining({ _tag: "ToolError", reason: "NotPending" })
    )
  })

  it("a decision sent while cancelRun is on its way is refused as NotPending, the approval is no longer listed, and the tool does not run", async () => {
    const { calls, client } = guardedClient()
    const stream = client.run("weather?")
    const threadId = await stream.threadId
    await waitFor(() => client.getPendingApprovals().length === 1, "the approval")
    const [approval] = client.getPendingApprovals()

    const cancelled = client.cancelRun(threadId)
    expect(client.getPendingApprovals()).toEqual([])
    const notPending = expect.objectContaining({ _tag: "ToolError", reason: "NotPending" })
    expect(() => client.approveToolCall(approval!.toolCallId, { threadId })).toThrow(notPending)
    expect(() => client.denyToolCall(approval!.toolCallId, "no", { threadId })).toThrow(notPending)
    await cancelled
    expect(await settle(stream.thread)).toMatchObject({ ok: false, error: { _tag: "AbortError" } })
    expect(calls).toEqual([])
    expect(client.getPendingApprovals()).toEqual([])
  })

  it("stream.abort() while an approval waits: from then on it is no longer listed, a decision is refused as NotPending, and the tool does not run", async () => {
    const { calls, client } = guardedClient()
    const stream = client.run("weather?")
    const threadId = await stream.threadId
    await waitFor(() => client.getPendingApprovals().length === 1, "the approval")
    const [approval] = client.getPendingApprovals()

    stream.abort()
    expect(client.getPendingApprovals()).toEqual([])
    const notPending = expect.objectContaining({ _tag: "ToolError", reason: "NotPending" })
    expect(() => client.approveToolCall(approval!.toolCallId, { threadId })).toThrow(notPending)
    expect(await settle(stream.thread)).toMatchObject({ ok: false, error: { _tag: "AbortError", reason: "Aborted" } })
    expect(calls).toEqual([])
    expect(client.getPendingApprovals()).toEqual([])
  })

  it("a call that needs approval waits for approveToolCall", async () => {
    const { calls, client } = guardedClient()
    const stream = client.run("weather?")
    for await (const { event } of stream) {
      if (event.type === "CLIENT_APPROVAL_REQUESTED") {
        expect(event).toMatchObject({ toolName: "get_weather", args: { city: "Paris" }, needsApproval: true })
        client.approveToolCall(event.toolCallId, { args: { city: "Lyon" } })
      }
    }
    expect(calls).toEqual(["Lyon"])
    expect(texts(await stream.messages).at(-1)).toContain("Lyon")
    expect(() => client.approveToolCall("nothing-pending")).toThrow(expect.objectContaining({ _tag: "ToolError" }))
  })

  it("two threads waiting at once for approval of call_0: each is decided by its thread; without one, the id is ambiguous", async () => {
    call0WeatherScript(server())
    const calls: Array<string> = []
    const client = makeClient(server(), { tools: [guardedWeather(calls)] })
    const paris = client.run("Paris", { threadId: "placeholder" })
    const lima = client.run("Lima", { threadId: "placeholder" })
    const [parisId, limaId] = await Promise.all([paris.threadId, lima.threadId])
    await waitFor(() => client.getPendingApprovals().length === 2, "both approvals")
    expect(client.getPendingApprovals()).toEqual(expect.arrayContaining([
      expect.objectContaining({ threadId: parisId, toolCallId: "call_0", args: { city: "Paris" } }),
      expect.objectContaining({ threadId: limaId, toolCallId: "call_0", args: { city: "Lima" } })
    ]))

    // Without a thread, neither is picked, and both stay listed.
    const ambiguous = expect.objectContaining({ _tag: "ToolError", reason: "Ambiguous", message: expect.stringContaining("threadId") })
    expect(() => client.approveToolCall("call_0")).toThrow(ambiguous)
    expect(() => client.denyToolCall("call_0", "no")).toThrow(ambiguous)
    expect(client.getPendingApprovals()).toHaveLength(2)

    client.approveToolCall("call_0", { threadId: parisId })
    // Only Lima's is left listed.
    expect(client.getPendingApprovals()).toEqual([expect.objectContaining({ threadId: limaId, toolCallId: "call_0" })])
    client.denyToolCall("call_0", "not now", { threadId: limaId })
    expect(client.getPendingApprovals()).toEqual([])
    expect(texts(await paris.messages).at(-1)).toBe('assistant: Result: {"city":"Paris","temperature":21}')
    expect(texts(await lima.messages).at(-1)).toMatch(/Result: error .*not now/)
    expect(calls).toEqual(["Paris"])
    expect(() => client.approveToolCall("call_0", { threadId: parisId })).toThrow(
      expect.objectContaining({ _tag: "ToolError", reason: "NotPending" })
    )
  })

  it("denyToolCall tells the model; onApproval decides without a human", async () => {
    const { calls, client } = guardedClient()
    const denied = client.run("weather?")
    for await (const { event } of denied) {
      if (event.type === "CLIENT_APPROVAL_REQUESTED") client.denyToolCall(event.toolCallId, "not now")
    }
    expect(calls).toEqual([])
    expect(texts(await denied.messages).at(-1)).toMatch(/Result: error .*not now/)

    const approved = await client.run("weather again?", {
      onApproval: async (call) => ({ approved: call.toolName === "get_weather" })
    }).thread
    expect(calls).toEqual(["Paris"])
    expect(texts(approved.messages).at(-1)).toContain("Paris")
  })
})

describe("busy threads", () => {
  it("onBusy: reject (the default) fails the second run with RunConflictError and leaves the first alone", async () => {
    server().setScript((request) => [Script.pace(10), Script.text(["re: ", request.text])])
    const client = makeClient(server())
    const threadId = (await client.run("first").thread).id

    const running = client.run("second", { threadId })
    await waitFor(() => client.getThread(threadId)?.status === "streaming", "the run to stream")
    await expect(client.run("third", { threadId }).thread).rejects.toMatchObject({
      _tag: "RunConflictError",
      reason: "ActiveInClient"
    })
    await expect(client.run("fourth", { threadId, onBusy: "reject" }).thread).rejects.toMatchObject({
      _tag: "RunConflictError"
    })
    const thread = await running.thread
    expect(texts(thread.messages).slice(-2)).toEqual(["user: second", "assistant: re: second"])
  })

  it("onBusy: queue waits for the thread's run; interrupt cancels it", async () => {
    server().setScript((request) => [Script.pace(10), Script.text(["re: ", request.text])])
    const client = makeClient(server())
    const threadId = (await client.run("first").thread).id

    const running = client.run("second", { threadId })
    await waitFor(() => client.getThread(threadId)?.status === "streaming", "the run to stream")
    const queued = await client.run("third", { threadId, onBusy: "queue" }).thread
    expect((await running.thread).id).toBe(threadId)
    expect(texts(queued.messages).slice(-4)).toEqual(["user: second", "assistant: re: second", "user: third", "assistant: re: third"])

    server().setScript([Script.text("slow"), Script.hang()])
    const hanging = client.run("hang", { threadId })
    await waitFor(() => client.getThread(threadId)?.status === "streaming", "the run to stream")
    server().setScript([Script.text("took over")])
    const interrupting = await client.run("take over", { threadId, onBusy: "interrupt" }).thread
    const displaced = await settle(hanging.thread)
    expect(displaced.ok).toBe(false)
    if (!displaced.ok) expect(displaced.error).toMatchObject({ name: "AbortError" })
    expect(server().cancels.map((cancel) => cancel.threadId)).toContain(threadId)
    expect(texts(interrupting.messages).at(-1)).toBe("assistant: took over")
  })
})
