// @vitest-environment happy-dom
import { act, renderHook, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import { useTambo, useTamboSuggestions, useTamboThreadInput } from "../src/index.js"
import { connection, holdingProxy, sleep, until, useServer, wrapperFor } from "./helpers.js"
import { storeEqualsServer } from "../../core/test/storeEqualsServer.js"

const server = useServer()

const useBoth = () => ({ input: useTamboThreadInput(), tambo: useTambo() })

describe("useTamboThreadInput", () => {
  it("holds the value, submits it on the current thread and reports the run as pending", async () => {
    server().setScript([Script.pace(20), Script.text(["Got", " it"])])
    const { result } = renderHook(useBoth, { wrapper: wrapperFor(connection(server())) })
    // A new conversation: the placeholder's thread, then the thread the run created.
    expect(result.current.input.threadId).toBe(result.current.tambo.currentThreadId)
    expect(result.current.input.threadId).toBe("placeholder")
    act(() => result.current.input.setValue("  Hello  "))
    expect(result.current.input.value).toBe("  Hello  ")
    act(() => result.current.input.setValue((previous) => previous.trim()))
    expect(result.current.input.value).toBe("Hello")

    let submitted!: Promise<{ readonly threadId: string }>
    act(() => {
      submitted = result.current.input.submit()
    })
    expect(result.current.input.value).toBe("")
    expect(result.current.input.isPending).toBe(true)
    expect(result.current.input.isDisabled).toBe(true)
    const { threadId } = await submitted
    await waitFor(() => expect(result.current.input.isPending).toBe(false))
    expect(threadId).toBe(result.current.tambo.currentThreadId)
    expect(result.current.input.threadId).toBe(threadId)
    expect(result.current.tambo.messages.map((message) => message.content)).toEqual([
      [{ type: "text", text: "Hello" }],
      [{ type: "text", text: "Got it" }]
    ])
    expect(result.current.input.error).toBeUndefined()
  })

  it("is shared by every component under the provider", () => {
    const { result } = renderHook(() => ({ a: useTamboThreadInput(), b: useTamboThreadInput() }), {
      wrapper: wrapperFor(connection(server()))
    })
    act(() => result.current.a.setValue("shared"))
    expect(result.current.b.value).toBe("shared")
  })

  it("refuses an empty message", async () => {
    const { result } = renderHook(useTamboThreadInput, { wrapper: wrapperFor(connection(server())) })
    await expect(result.current.submit()).rejects.toThrow("Message cannot be empty")
    expect(server().requests).toHaveLength(0)
  })

  it("reports a failed run as its error", async () => {
    server().setScript([Script.httpError(500, { message: "boom" })])
    const { result } = renderHook(useTamboThreadInput, { wrapper: wrapperFor(connection(server())) })
    act(() => result.current.setValue("Hi"))
    await act(() => expect(result.current.submit()).rejects.toMatchObject({ _tag: "ApiError" }))
    await waitFor(() => expect(result.current.isError).toBe(true))
    expect(result.current.error).toMatchObject({ _tag: "ApiError", status: 500 })
    expect(result.current.isPending).toBe(false)
    // What was written is back in the input, to send again.
    expect(result.current.value).toBe("Hi")
  })

  it("a failed send keeps what the user typed meanwhile, rather than putting its own text back", async () => {
    let answer!: () => void
    const answered = new Promise<void>((resolve) => (answer = resolve))
    server().setScript(Script.beforeResponse(async () => {
      await answered
      return [Script.httpError(500, { message: "boom" })]
    }))
    const { result } = renderHook(useTamboThreadInput, { wrapper: wrapperFor(connection(server())) })
    act(() => result.current.setValue("first"))
    let submitted!: Promise<unknown>
    act(() => {
      submitted = result.current.submit().catch((error: { _tag?: string }) => error._tag)
    })
    expect(result.current.value).toBe("")
    act(() => result.current.setValue("second"))
    answer()
    expect(await submitted).toBe("ApiError")
    await waitFor(() => expect(result.current.isPending).toBe(false))
    expect(result.current.value).toBe("second")
  })

  it("does not report a cancelled run as an error: the submit resolves with the run's thread", async () => {
    server().setScript([Script.text("Partial"), Script.hang()])
    const { result } = renderHook(useBoth, { wrapper: wrapperFor(connection(server())) })
    act(() => result.current.input.setValue("Hi"))
    let submitted!: Promise<unknown>
    act(() => {
      submitted = result.current.input.submit().catch((error: Error) => error.name)
    })
    await waitFor(() => expect(result.current.tambo.isStreaming).toBe(true))
    await act(() => result.current.tambo.cancel())
    expect(await submitted).toEqual({ threadId: result.current.tambo.currentThreadId })
    expect(result.current.tambo.currentThreadId).toMatch(/^thr_/)
    await waitFor(() => expect(result.current.input.isPending).toBe(false))
    expect(result.current.input.error).toBeUndefined()
    // The message was sent: the input stays empty.
    expect(result.current.input.value).toBe("")
    expect(result.current.input.status).toBe("idle")
  })

  it("a run cancelled before its message was sent gives the text back: nothing reached the server", async () => {
    server().setScript([Script.text("ok")])
    let asked!: () => void
    const helperAsked = new Promise<void>((resolve) => (asked = resolve))
    const { result } = renderHook(useBoth, {
      wrapper: wrapperFor(connection(server(), {
        contextHelpers: {
          // Holds the run while its context is built.
          slow: () => {
            asked()
            return new Promise<undefined>(() => {})
          }
        }
      }))
    })
    act(() => result.current.input.setValue("Hi"))
    let submitted!: Promise<unknown>
    act(() => {
      submitted = result.current.input.submit().catch((error: Error) => error.name)
    })
    await helperAsked
    await act(() => result.current.tambo.cancel())
    await submitted
    await waitFor(() => expect(result.current.input.isPending).toBe(false))
    expect(server().requests.filter((request) => request.method === "POST")).toEqual([])
    expect(result.current.tambo.messages).toEqual([])
    expect(result.current.input.value).toBe("Hi")
  })

  it("Stop of a message queued behind a new conversation's first run, once the server took it, keeps the composer empty: the thread holds it", async () => {
    server().setScript((request) => [Script.text(`re: ${request.text}`)])
    const proxy = await holdingProxy(server())
    const firstRequest = proxy.holdRequest((request) => request.method === "POST" && request.path === "/v1/threads/runs")
    const secondAnswer = proxy.holdResponse((request) => request.method === "POST" && /^\/v1\/threads\/[^/]+\/runs$/.test(request.path))
    const { result } = renderHook(useBoth, { wrapper: wrapperFor(connection(server(), { tamboUrl: proxy.url })) })
    act(() => result.current.input.setValue("first"))
    let first!: Promise<unknown>
    act(() => {
      first = result.current.input.submit()
    })
    await firstRequest.arrived
    act(() => result.current.input.setValue("second"))
    let second!: Promise<unknown>
    act(() => {
      second = result.current.input.submit({ onBusy: "queue" })
    })
    firstRequest.release()
    await first
    // The server took the second message and answered; its answer waits at the proxy.
    await secondAnswer.arrived
    await act(() => result.current.tambo.cancel())
    await second
    await waitFor(() => expect(result.current.input.isPending).toBe(false))
    const [thread] = server().threads.list()
    expect(thread!.messages.filter((message) => message.role === "user")).toHaveLength(2)
    expect(result.current.input.value).toBe("")
  })

  it("tells how the last submit went, as a TanStack Query mutation: status, data, variables, failures, reset", async () => {
    const { result } = renderHook(useTamboThreadInput, { wrapper: wrapperFor(connection(server())) })
    expect(result.current).toMatchObject({ status: "idle", isIdle: true, data: undefined, submittedAt: 0, failureCount: 0, failureReason: null })

    server().setScript([Script.httpError(500, { message: "boom" })])
    act(() => result.current.setValue("Hi"))
    await act(() => expect(result.current.submit({ maxSteps: 3 })).rejects.toMatchObject({ _tag: "ApiError" }))
    await waitFor(() => expect(result.current.status).toBe("error"))
    expect(result.current).toMatchObject({ isIdle: false, isSuccess: false, failureCount: 1, variables: { maxSteps: 3 } })
    expect(result.current.failureReason).toMatchObject({ _tag: "ApiError", status: 500 })
    expect(result.current.submittedAt).toBeGreaterThan(0)

    server().setScript([Script.text("Hello")])
    let submitted!: Promise<{ readonly threadId: string }>
    act(() => {
      submitted = result.current.submit()
    })
    expect(result.current.status).toBe("pending")
    const { threadId } = await submitted
    await waitFor(() => expect(result.current.status).toBe("success"))
    expect(result.current).toMatchObject({ isSuccess: true, data: { threadId }, failureCount: 0, failureReason: null, error: undefined })

    act(() => result.current.reset())
    expect(result.current).toMatchObject({ status: "idle", isIdle: true, data: undefined, variables: undefined })
  })

  it("tells how the latest submit went: an earlier one that ends after it changes nothing shown", async () => {
    let secondEnds!: () => void
    const refused = new Promise<void>((resolve) => (secondEnds = resolve))
    // The second run streams until the third send was refused, however long that took.
    server().setScript((request) =>
      request.text === "second" ? [Script.text("re: second"), Script.hold(refused)] : [Script.text(`re: ${request.text}`)]
    )
    const { result } = renderHook(useBoth, { wrapper: wrapperFor(connection(server())) })
    act(() => result.current.input.setValue("first"))
    await act(() => result.current.input.submit())
    // A slow run on the thread, then a second send while it streams, refused (the default).
    act(() => result.current.input.setValue("second"))
    let older!: Promise<{ readonly threadId: string }>
    act(() => {
      older = result.current.input.submit()
    })
    await waitFor(() => expect(result.current.tambo.isStreaming).toBe(true))
    act(() => result.current.input.setValue("third"))
    const newer = await act(() => result.current.input.submit().then(() => "resolved", (error: { readonly _tag?: string }) => error._tag))
    expect(newer).toBe("RunConflictError")
    expect(result.current.input).toMatchObject({ status: "error", isPending: false, error: { _tag: "RunConflictError" }, value: "third" })
    secondEnds()
    await act(() => older)
    expect(result.current.input).toMatchObject({ status: "error", isPending: false, error: { _tag: "RunConflictError" }, value: "third" })
    expect(result.current.tambo.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"])
  })
})

describe("useTamboSuggestions", () => {
  it("reads or generates suggestions for the latest reply, and fills the input with one", async () => {
    server().setScript([Script.text("Hello! Ask me about the weather.")])
    const { result } = renderHook(
      () => ({ suggestions: useTamboSuggestions({ maxSuggestions: 2 }), input: useTamboThreadInput(), tambo: useTambo() }),
      { wrapper: wrapperFor(connection(server())) }
    )
    // Nothing to suggest before there is a reply.
    expect(result.current.suggestions.suggestions).toEqual([])
    expect(result.current.suggestions.isLoading).toBe(false)
    expect(result.current.suggestions).toMatchObject({ data: undefined, isSuccess: false, isFetching: false })

    await result.current.tambo.sendMessage("Hi").thread
    await waitFor(() => expect(result.current.suggestions.suggestions).toHaveLength(2))
    expect(result.current.suggestions).toMatchObject({ isSuccess: true, isFetching: false, generateError: undefined })
    expect(result.current.suggestions.data).toBe(result.current.suggestions.suggestions)
    const paths = server().requests.filter((request) => request.method !== "OPTIONS").map((request) => `${request.method} ${request.path.replace(/[^/]+_[^/]+/g, ":id")}`)
    // Listed first (none), then generated.
    expect(paths.filter((path) => path.endsWith("/suggestions"))).toEqual([
      "GET /v1/threads/:id/messages/:id/suggestions",
      "POST /v1/threads/:id/messages/:id/suggestions"
    ])
    const [first] = result.current.suggestions.suggestions
    await act(() => result.current.suggestions.accept({ suggestion: first! }))
    expect(result.current.input.value).toBe(first!.detailedSuggestion)
    expect(result.current.suggestions.selectedSuggestionId).toBe(first!.id)

    const regenerated = await act(() => result.current.suggestions.generate())
    expect(regenerated).toHaveLength(2)

    // Accepted and sent: isAccepting while it runs; a refused send is acceptError.
    server().setScript([Script.httpError(500, { message: "boom" })])
    let accepted!: Promise<unknown>
    act(() => {
      accepted = result.current.suggestions.accept({ suggestion: first!, shouldSubmit: true }).catch((error: { _tag?: string }) => error._tag)
    })
    await waitFor(() => expect(result.current.suggestions.isAccepting).toBe(true))
    expect(await accepted).toBe("ApiError")
    await waitFor(() => expect(result.current.suggestions.isAccepting).toBe(false))
    expect(result.current.suggestions.acceptError).toMatchObject({ _tag: "ApiError", status: 500 })
  })

  it("leaves generation to the app when autoGenerate is off", async () => {
    server().setScript([Script.text("Hi there")])
    const { result } = renderHook(
      () => ({ suggestions: useTamboSuggestions({ autoGenerate: false }), tambo: useTambo() }),
      { wrapper: wrapperFor(connection(server())) }
    )
    await result.current.tambo.sendMessage("Hi").thread
    await waitFor(() => expect(result.current.tambo.isIdle).toBe(true))
    await waitFor(() => expect(result.current.suggestions.isLoading).toBe(false))
    expect(result.current.suggestions.suggestions).toEqual([])
    expect(server().requests.some((request) => request.method === "POST" && request.path.endsWith("/suggestions"))).toBe(false)
  })

  it("queryOptions.refetchInterval reads them again: suggestions made elsewhere show", async () => {
    server().setScript([Script.text("Hi there")])
    const { result } = renderHook(
      () => ({ suggestions: useTamboSuggestions({ autoGenerate: false, queryOptions: { refetchInterval: 40 } }), tambo: useTambo() }),
      { wrapper: wrapperFor(connection(server())) }
    )
    const thread = await result.current.tambo.sendMessage("Hi").thread
    await waitFor(() => expect(result.current.suggestions.isSuccess).toBe(true))
    expect(result.current.suggestions.suggestions).toEqual([])
    // Made outside the hook, as another tab would make them.
    const reply = thread.messages.at(-1)!
    const made = await result.current.tambo.client.generateSuggestions(reply.id, thread.id, { maxSuggestions: 2 })
    await waitFor(() => expect(result.current.suggestions.suggestions.map((s) => s.id)).toEqual(made.map((s) => s.id)))
  })
  describe("asks only for a reply the server knows", () => {
    /**
     * The paths of the suggestions requests made so far about the test's thread. Only its own: a
     * request the last test's hook sent as it was unmounted can reach the server after its reset.
     */
    const suggestionRequests = (threadId: string) =>
      server().requests.filter((request) =>
        request.method !== "OPTIONS" && request.path.startsWith(`/v1/threads/${threadId}/`) && request.path.endsWith("/suggestions")
      ).map((request) => `${request.method} ${request.path}`)
    const weatherTool = {
      name: "get_weather",
      description: "Current weather in a city",
      inputSchema: { type: "object" as const, properties: { city: { type: "string" as const } }, required: ["city"] },
      tool: ({ city }: { readonly city: string }) => ({ city, temperature: 21 })
    }
    const weatherScript = () =>
      server().setScript((request) =>
        request.toolResults.length === 0
          ? [Script.text("Checking. "), Script.toolCall("get_weather", { city: "Paris" })]
          : [Script.text("Sunny in Paris.")]
      )

    it("a tool round: nothing for the tool call or its result, only for the final reply", async () => {
      weatherScript()
      const { result } = renderHook(
        () => ({ suggestions: useTamboSuggestions(), tambo: useTambo() }),
        { wrapper: wrapperFor(connection(server(), { tools: [weatherTool] })) }
      )
      const thread = await result.current.tambo.sendMessage("weather?").thread
      await waitFor(() => expect(result.current.suggestions.suggestions.length).toBeGreaterThan(0))
      const reply = thread.messages.at(-1)!
      expect(reply.content).toEqual([{ type: "text", text: "Sunny in Paris." }])
      expect(suggestionRequests(thread.id)).toEqual([
        `GET /v1/threads/${thread.id}/messages/${reply.id}/suggestions`,
        `POST /v1/threads/${thread.id}/messages/${reply.id}/suggestions`
      ])
    })

    it("a run that ends on a tool call (manual mode): nothing", async () => {
      weatherScript()
      const { result } = renderHook(
        () => ({ suggestions: useTamboSuggestions(), tambo: useTambo() }),
        { wrapper: wrapperFor(connection(server(), { tools: [weatherTool] })) }
      )
      const thread = await result.current.tambo.sendMessage("weather?", { autoExecuteTools: false }).thread
      expect(thread.messages.at(-1)?.content.map((block) => block.type)).toContain("tool_use")
      await until(() => result.current.tambo.isIdle, "the thread to be idle")
      // What a request would have been given time to start.
      await sleep(50)
      expect(suggestionRequests(thread.id)).toEqual([])
      expect(result.current.suggestions.suggestions).toEqual([])
    })

    it("a reply the client named itself (reasoning only, no text message): nothing", async () => {
      server().setScript([Script.reasoning("Thinking it over.")])
      // The server stores no message for it: a reconciliation would take the reply out of the store.
      const { result } = renderHook(
        () => ({ suggestions: useTamboSuggestions(), tambo: useTambo() }),
        { wrapper: wrapperFor(connection(server(), { reconcileAfterRun: false })) }
      )
      const thread = await result.current.tambo.sendMessage("Hi").thread
      await until(() => result.current.tambo.isIdle, "the thread to be idle")
      await sleep(50)
      expect(thread.messages.at(-1)?.role).toBe("assistant")
      expect(suggestionRequests(thread.id)).toEqual([])
    })
  })
})

// The composer gets back what a message took exactly when the message is not in the store after
// its run: one refused before any event left it; one the server took and then failed is in the
// thread, as the server has it, and sending it again would send it twice.
describe("where a failed send's message ends up", () => {
  type Refusal = "400" | "500" | "refused"
  type Failure = "RUN_ERROR" | "dropped" | "cut"
  const failures: Record<Failure, Script.Script> = {
    RUN_ERROR: [Script.text("Partial"), Script.runError({ message: "model down" })],
    dropped: [Script.text("Partial"), Script.drop()],
    // The server took the message and answered; the answer's headers reach the client, its body never does.
    cut: [Script.text("never read")]
  }

  /**
   * A composer on a known thread (one reply to "first") or a new conversation, through a proxy in
   * front of the server; "Hi" with an image is then sent, answered as `ending` says.
   */
  const sendHi = async (known: boolean, ending: Refusal | Failure) => {
    server().setScript((request) =>
      request.text !== "Hi"
        ? [Script.text("ok")]
        : ending === "400" || ending === "500"
        ? [Script.httpError(Number(ending), { message: "no" })]
        : ending === "refused"
        ? [Script.text("never sent")]
        : failures[ending]
    )
    const proxy = await holdingProxy(server())
    const { result } = renderHook(useBoth, { wrapper: wrapperFor(connection(server(), { tamboUrl: proxy.url })) })
    if (known) {
      act(() => result.current.input.setValue("first"))
      await act(() => result.current.input.submit())
    }
    if (ending === "refused") await proxy.close()
    if (ending === "cut") proxy.holdBody((request) => request.method === "POST" && request.path.endsWith("/runs")).fail()
    await act(() => result.current.input.addImage(new File([new Uint8Array([1, 2, 3])], "a.png", { type: "image/png" })))
    act(() => result.current.input.setValue("Hi"))
    const failed = await act(() => result.current.input.submit().then(() => undefined, (error: { readonly _tag?: string }) => error._tag))
    await waitFor(() => expect(result.current.input.isPending).toBe(false))
    return { result, failed }
  }

  const his = (result: { readonly current: ReturnType<typeof useBoth> }) =>
    Object.values(result.current.tambo.client.getState().threadMap).flatMap((thread) =>
      thread.thread.messages.filter((message) =>
        message.role === "user" && message.content.some((block) => block.type === "text" && block.text === "Hi")
      )
    )

  it("a message queued behind another on a known thread, then refused: its text comes back, though the other reached the thread meanwhile", async () => {
    server().setScript((request) => request.text === "second" ? [Script.httpError(500, { message: "no" })] : [Script.text(`re: ${request.text}`)])
    const { result } = renderHook(useBoth, { wrapper: wrapperFor(connection(server())) })
    act(() => result.current.input.setValue("zero"))
    await act(() => result.current.input.submit())
    act(() => result.current.input.setValue("first"))
    let first!: Promise<unknown>
    let second!: Promise<unknown>
    act(() => {
      first = result.current.input.submit()
      result.current.input.setValue("second")
      second = result.current.input.submit({ onBusy: "queue" }).catch((error: { readonly _tag?: string }) => error._tag)
    })
    expect(await second).toBe("ApiError")
    await first
    await waitFor(() => expect(result.current.input.isPending).toBe(false))
    expect(result.current.input.value).toBe("second")
    expect(result.current.tambo.messages.filter((message) => message.role === "user").map((message) => message.content)).toEqual([
      [{ type: "text", text: "zero" }],
      [{ type: "text", text: "first" }]
    ])
  })

  for (const known of [false, true]) {
    const where = known ? "on a known thread" : "on a new conversation"

    it.each<Refusal>(["400", "500", "refused"])(`refused (%s) ${where}: the text and the image come back, the store holds no message`, async (refusal) => {
      const { result, failed } = await sendHi(known, refusal)
      expect(failed).toBe(refusal === "refused" ? "TransportError" : "ApiError")
      expect(result.current.input.value).toBe("Hi")
      expect(result.current.input.images.map((image) => image.name)).toEqual(["a.png"])
      expect(his(result)).toEqual([])
    })

    it.each<Failure>(["RUN_ERROR", "dropped", "cut"])(`taken, then failed (%s) ${where}: the composer stays empty, the message is in the store once, as the server has it`, async (failure) => {
      const { result, failed } = await sendHi(known, failure)
      expect(failed).toBe(failure === "RUN_ERROR" ? "ApiError" : "TransportError")
      expect(result.current.input.value).toBe("")
      expect(result.current.input.images).toEqual([])
      expect(his(result)).toHaveLength(1)
      const threadId = result.current.tambo.currentThreadId
      await storeEqualsServer(result.current.tambo.client.getState(), server(), threadId)
    })
  }
})
