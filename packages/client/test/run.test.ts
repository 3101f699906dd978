import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import {
  AbortError,
  ApiError,
  SnapshotStrategy,
  type StreamEvent,
  type TamboClient,
  type TamboStream,
  type TamboThread
} from "../src/index.js"
import { holdingProxy, jwtFor, makeClient, runMovedToLocalThread, settle, texts, useServer, waitFor, whenTrue } from "./helpers.js"

const server = useServer()

describe("consuming a run", () => {
  it("for await yields every event with the thread after it", async () => {
    server().setScript([Script.text(["Hel", "lo ", "there"])])
    const client = makeClient(server())
    const seen: Array<StreamEvent> = []
    for await (const element of client.run("hi")) seen.push(element)

    expect(seen[0]!.event.type).toBe("RUN_STARTED")
    expect(seen.at(-1)!.event.type).toBe("RUN_FINISHED")
    const deltas = seen.flatMap(({ event }) => (event.type === "TEXT_MESSAGE_CONTENT" ? [event.delta] : []))
    expect(deltas).toEqual(["Hel", "lo ", "there"])
    // Each snapshot includes its event: the text grows delta by delta.
    const lengths = seen
      .filter(({ event }) => event.type === "TEXT_MESSAGE_CONTENT")
      .map(({ snapshot }) => texts(snapshot.messages).at(-1)!.length)
    expect(lengths).toEqual([...lengths].sort((a, b) => a - b))
    expect(texts(seen.at(-1)!.snapshot.messages)).toEqual(["user: hi", "assistant: Hello there"])
    expect(seen.at(-1)!.threadId).not.toBe("placeholder")
  })

  it("thread, messages and threadId resolve without iterating", async () => {
    server().setScript([Script.text(["a", "b"])])
    const client = makeClient(server())
    const stream = client.run("promises")
    const [thread, messages, threadId] = await Promise.all([stream.thread, stream.messages, stream.threadId])
    expect(thread.id).toBe(threadId)
    expect(messages).toBe(thread.messages)
    expect(texts(messages)).toEqual(["user: promises", "assistant: ab"])
    expect(thread.status).toBe("idle")
    expect(client.getState().currentThreadId).toBe(threadId)
    expect(server().threads.get(threadId)).toBeDefined()
    // The properties are promises; the stream itself is not a thenable.
    expect("then" in stream).toBe(false)
  })

  it("the promises also resolve after (and while) iterating, each the same promise", async () => {
    server().setScript([Script.text("x")])
    const client = makeClient(server())
    const stream = client.run("both")
    const early = stream.thread
    const events: Array<string> = []
    for await (const event of stream.events()) events.push(event.type)
    expect(stream.thread).toBe(early)
    const thread = await stream.thread
    expect(events.at(-1)).toBe("RUN_FINISHED")
    expect(await stream.threadId).toBe(thread.id)
    expect(texts(await stream.messages)).toEqual(["user: both", "assistant: x"])
  })

  it("threadId resolves as soon as the server named the thread, before the run ends", async () => {
    server().setScript([Script.text("started"), Script.hang()])
    const client = makeClient(server())
    const stream = client.run("long")
    const threadId = await stream.threadId
    expect(server().threads.get(threadId)?.runStatus).toBe("streaming")
    stream.abort()
    expect((await settle(stream.thread)).ok).toBe(false)
  })

  it("snapshots() yields the thread as it changes, ending with the final thread", async () => {
    server().setScript([Script.text(["one ", "two ", "three"])])
    const client = makeClient(server())
    const stream = client.run("snap")
    const snapshots: Array<TamboThread> = []
    for await (const snapshot of stream.snapshots()) snapshots.push(snapshot)
    const thread = await stream.thread
    expect(snapshots.at(-1)).toBe(thread)
    expect(new Set(snapshots).size).toBe(snapshots.length)
    expect(texts(thread.messages).at(-1)).toBe("assistant: one two three")
  })

  it("events can be iterated once", async () => {
    server().setScript([Script.text("once")])
    const client = makeClient(server())
    const stream = client.run("once")
    const first = stream[Symbol.asyncIterator]()
    expect(() => stream.events()).toThrow(TypeError)
    while (!(await first.next()).done) {
      // drain
    }
  })

  it("next() called again before the last call resolved loses no event: each call gets the next one, in order", async () => {
    server().setScript([Script.text(["a", "b", "c", "d", "e"])])
    const client = makeClient(server())
    const iterator = client.run("hi").events()
    const types: Array<string> = []
    for (;;) {
      // Three calls at once, as a consumer reading ahead does.
      const results = await Promise.all([iterator.next(), iterator.next(), iterator.next()])
      for (const result of results) if (!result.done) types.push(result.value.type)
      if (results.some((result) => result.done)) break
    }
    expect(types[0]).toBe("RUN_STARTED")
    expect(types.at(-1)).toBe("RUN_FINISHED")
    expect(types.filter((type) => type === "TEXT_MESSAGE_CONTENT")).toHaveLength(5)
  })

  it("snapshots() with a strategy: next() called again before the last call resolved ends too, with the final thread last", async () => {
    server().setScript([Script.pace(5), Script.text(["a", "b", "c"])])
    const client = makeClient(server())
    const stream = client.run("hi")
    const iterator = stream.snapshots({ strategy: SnapshotStrategy.throttle("1 millis") })
    const threads: Array<TamboThread> = []
    for (;;) {
      const results = await Promise.all([iterator.next(), iterator.next()])
      for (const result of results) if (!result.done) threads.push(result.value)
      if (results.some((result) => result.done)) break
    }
    expect(texts(threads.at(-1)!.messages)).toEqual(texts((await stream.thread).messages))
  })

  it("a run nobody consumes still runs and updates the state", async () => {
    server().setScript([Script.text("fire and forget")])
    const client = makeClient(server())
    client.run("hello")
    await waitFor(() => {
      const state = client.getState()
      const thread = state.threadMap[state.currentThreadId]?.thread
      return thread !== undefined && thread.status === "idle" && thread.messages.length === 2
    }, "the run to finish")
    const state = client.getState()
    expect(texts(state.threadMap[state.currentThreadId]!.thread.messages)).toEqual([
      "user: hello",
      "assistant: fire and forget"
    ])
  })

  it("runs on the current thread continue it", async () => {
    server().setScript((request) => [Script.text(`echo ${request.text}`)])
    const client = makeClient(server())
    const first = await client.run("one").thread
    const second = await client.run("two").thread
    expect(second.id).toBe(first.id)
    expect(texts(second.messages)).toEqual(["user: one", "assistant: echo one", "user: two", "assistant: echo two"])
  })
})

describe("cancellation", () => {
  const cancelled = async (stream: { thread: Promise<TamboThread> }) => {
    const result = await settle(stream.thread)
    expect(result.ok).toBe(false)
    return result.ok ? undefined : result.error
  }

  it("abort() aborts the request, cancels on the server and marks the thread cancelled", async () => {
    server().setScript([Script.text("partial"), Script.hang()])
    const client = makeClient(server())
    const stream = client.run("hang")
    const threadId = await stream.threadId
    stream.abort()
    const error = await cancelled(stream)
    expect(error).toBeInstanceOf(AbortError)
    expect(error).toMatchObject({ name: "AbortError", _tag: "AbortError", reason: "Aborted" })
    await expect(stream.messages).rejects.toBeInstanceOf(AbortError)
    await waitFor(() => server().cancels.length > 0, "the server to see the cancel")
    expect(server().cancels[0]!.threadId).toBe(threadId)
    const thread = client.getThread(threadId)!
    expect(thread.lastRunCancelled).toBe(true)
    expect(thread.status).toBe("idle")
  })

  it("the server hears of a cancel (DELETE) before the connection closes: no DELETE of a run it already ended", async () => {
    const client = makeClient(server())
    const cancels: Array<{ readonly name: string; readonly cancel: (stream: TamboStream, threadId: string) => unknown }> = [
      { name: "cancelRun", cancel: (_, threadId) => client.cancelRun(threadId) },
      { name: "abort()", cancel: (stream) => stream.abort() }
    ]
    for (const { cancel, name } of cancels) {
      server().reset()
      server().setScript([Script.pace(20), Script.text(["a ", "b ", "c ", "d ", "e "]), Script.hang()])
      const stream = client.run(name, { threadId: client.startNewThread() })
      const threadId = await stream.threadId
      await waitFor(() => JSON.stringify(client.getThread(threadId)?.messages ?? []).includes("b "), "some text")
      cancel(stream, threadId)
      expect(await cancelled(stream)).toMatchObject({ _tag: "AbortError" })
      await waitFor(() => server().cancels.length > 0, "the server to see the cancel")
      // Cancelled by the DELETE, not by the closed connection (which would make the DELETE a 404).
      expect(server().cancels.map((c) => c.reason)).toEqual(["user_cancelled"])
      expect(server().requests.filter((r) => r.method === "DELETE")).toHaveLength(1)
    }
  })

  it("abort() makes an iterator throw the AbortError", async () => {
    server().setScript([Script.text("partial"), Script.hang()])
    const client = makeClient(server())
    const stream = client.run("hang")
    const iterate = async () => {
      for await (const { event } of stream) {
        if (event.type === "TEXT_MESSAGE_CONTENT") stream.abort()
      }
    }
    await expect(iterate()).rejects.toMatchObject({ _tag: "AbortError", reason: "Aborted" })
  })

  it("breaking out of for await cancels the run on the server", async () => {
    server().setScript([Script.text(["a", "b", "c"]), Script.hang()])
    const client = makeClient(server())
    const stream = client.run("break")
    let count = 0
    for await (const { event } of stream) {
      if (event.type === "TEXT_MESSAGE_CONTENT" && ++count === 2) break
    }
    // Leaving the loop waited for the cancellation: the state records it now.
    const threadId = await stream.threadId
    expect(client.getThread(threadId)!.lastRunCancelled).toBe(true)
    expect(await cancelled(stream)).toMatchObject({ _tag: "AbortError", reason: "IteratorClosed" })
    await waitFor(() => server().cancels.length > 0, "the server to see the cancel")
    expect(server().cancels[0]!.threadId).toBe(threadId)
  })

  it("breaking out of snapshots() cancels the run too", async () => {
    server().setScript([Script.text(["a", "b"]), Script.hang()])
    const client = makeClient(server())
    const stream = client.run("break snapshots")
    for await (const snapshot of stream.snapshots()) {
      if (snapshot.messages.length === 2) break
    }
    expect(await cancelled(stream)).toMatchObject({ reason: "IteratorClosed" })
    await waitFor(() => server().cancels.length > 0, "the server to see the cancel")
  })

  it("aborting the signal aborts the run", async () => {
    server().setScript([Script.text("partial"), Script.hang()])
    const client = makeClient(server())
    const controller = new AbortController()
    const stream = client.run("signal", { signal: controller.signal })
    const threadId = await stream.threadId
    controller.abort(new Error("user left"))
    const error = await cancelled(stream)
    expect(error).toMatchObject({ _tag: "AbortError", reason: "SignalAborted" })
    expect(error.cause).toMatchObject({ message: "user left" })
    await waitFor(() => server().cancels.length > 0, "the server to see the cancel")
    expect(client.getThread(threadId)!.lastRunCancelled).toBe(true)
  })

  it("an already aborted signal sends nothing", async () => {
    const client = makeClient(server())
    const stream = client.run("never", { signal: AbortSignal.abort() })
    expect(await cancelled(stream)).toMatchObject({ _tag: "AbortError", reason: "SignalAborted" })
    await expect(stream.threadId).rejects.toBeInstanceOf(AbortError)
    expect(server().requests.filter((r) => r.path.endsWith("/runs"))).toHaveLength(0)
  })

  it("abort() of a run that just let go of its thread leaves the queued run that took the thread alone", async () => {
    server().setScript((request) => [Script.text(["re: ", request.text])])
    let first: TamboStream | undefined
    // Called by the queued run once it holds the thread: the first run has let go of it and not
    // yet settled, and its abort must not reach the run now on the thread.
    const client = makeClient(server(), {
      beforeRun: ({ message }) => {
        if (message.content[0]?.type === "text" && message.content[0].text === "queued") first?.abort()
      }
    })
    const threadId = (await client.run("hi").thread).id
    first = client.run("first", { threadId })
    const queued = client.run("queued", { threadId, onBusy: "queue" })
    await settle(first.thread)
    const result = await settle(queued.thread)
    expect(result.ok ? texts(result.value.messages).slice(-2) : result.error).toEqual([
      "user: queued",
      "assistant: re: queued"
    ])
    expect(server().cancels).toEqual([])
  })

  it("cancelRun cancels the current thread's run, also before the server named the thread", async () => {
    let answer!: () => void
    const answered = new Promise<void>((resolve) => (answer = resolve))
    // Nothing answers the message, so no thread is named, until cancelRun was called.
    server().setScript(Script.beforeResponse(async () => {
      await answered
      return [Script.text("late"), Script.hang()]
    }))
    const client = makeClient(server())
    const stream = client.run("cancel me")
    await waitFor(() => server().requests.some((r) => r.path === "/v1/threads/runs"), "the request")
    const cancelling = client.cancelRun()
    answer()
    await cancelling
    expect(await cancelled(stream)).toMatchObject({ _tag: "AbortError", reason: "CancelledByClient" })

    server().setScript([Script.text("partial"), Script.hang()])
    const second = client.run("cancel me too")
    const threadId = await second.threadId
    await client.cancelRun(threadId)
    expect(await cancelled(second)).toMatchObject({ _tag: "AbortError", reason: "CancelledByClient" })
    expect(client.getThread(threadId)!.lastRunCancelled).toBe(true)
    await waitFor(() => server().cancels.some((c) => c.threadId === threadId), "the server to see the cancel")
  })
})

describe("failures", () => {
  it("a message that is not one rejects the run with ConfigError; no run is left in flight, cancelRun and destroy end", async () => {
    const client = makeClient(server())
    for (const message of [undefined, null]) {
      const stream = client.run(message as unknown as string)
      await expect(stream.thread).rejects.toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
      await expect(stream.threadId).rejects.toMatchObject({ _tag: "ConfigError" })
    }
    expect(client.hasActiveRun()).toBe(false)
    await client.cancelRun()
    await client.destroy()
    expect(server().requests.filter((r) => r.path.endsWith("/runs"))).toHaveLength(0)
  })

  it("RUN_ERROR rejects with its code, status and retryability, and the thread records it", async () => {
    server().setScript([
      Script.text("so far"),
      Script.runError({ message: "provider down", code: "LLM_SERVER_ERROR", status: 502, category: "server_error" })
    ])
    const client = makeClient(server())
    const stream = client.run("fail")
    const result = await settle(stream.thread)
    expect(result.ok).toBe(false)
    const error = result.ok ? undefined : result.error
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toBeInstanceOf(Error)
    expect(error).toMatchObject({
      _tag: "ApiError",
      reason: "RunError",
      message: "provider down",
      code: "LLM_SERVER_ERROR",
      status: 502,
      category: "server_error",
      retryable: false,
      isRetryable: false
    })
    // Core's own error, not a copy that holds it in `cause`.
    expect(error.cause).toBeUndefined()
    const state = client.getState()
    const threadState = state.threadMap[state.currentThreadId]!
    expect(threadState.streaming.error).toMatchObject({ message: "provider down", code: "LLM_SERVER_ERROR", status: 502 })
    expect(threadState.thread.lastRunCancelled).toBe(false)
  })

  it("an iterator throws the run's error after the events before it", async () => {
    server().setScript([Script.text("so far"), Script.runError()])
    const client = makeClient(server())
    const types: Array<string> = []
    const iterate = async () => {
      for await (const { event } of client.run("fail")) types.push(event.type)
    }
    await expect(iterate()).rejects.toMatchObject({ _tag: "ApiError", code: "INTERNAL_ERROR", status: 500 })
    expect(types).toContain("TEXT_MESSAGE_CONTENT")
    expect(types).toContain("RUN_ERROR")
  })

  it("HTTP 5xx and 4xx reject with ApiError and the status", async () => {
    const client = makeClient(server())
    server().setScript([Script.httpError(500)])
    await expect(client.run("500").thread).rejects.toMatchObject({
      _tag: "ApiError",
      reason: "ServerError",
      status: 500,
      retryable: false
    })
    server().setScript([Script.httpError(400, { statusCode: 400, message: "bad request body" })])
    client.startNewThread()
    await expect(client.run("400").thread).rejects.toMatchObject({ _tag: "ApiError", reason: "BadRequest", status: 400 })
    server().setScript([Script.httpError(429, { message: "slow down" })])
    client.startNewThread()
    await expect(client.run("429").thread).rejects.toMatchObject({ _tag: "ApiError", status: 429, retryable: true })
  })

  it("a wrong API key rejects with a Forbidden ApiError", async () => {
    const client = makeClient(server(), { apiKey: "wrong" })
    await expect(client.run("hi").thread).rejects.toMatchObject({ _tag: "ApiError", reason: "Forbidden", status: 403 })
  })

  it("a refused connection rejects with a TransportError", async () => {
    const client = makeClient(server(), { tamboUrl: "http://127.0.0.1:1" })
    await expect(client.run("hi").thread).rejects.toMatchObject({ _tag: "TransportError" })
  })

  it("a second run on a busy thread rejects with RunConflictError", async () => {
    server().setScript([Script.text("first")])
    const client = makeClient(server())
    const threadId = (await client.run("first").thread).id
    server().setScript([Script.text("slow"), Script.hang()])
    const busy = client.run("busy", { threadId })
    await waitFor(() => server().threads.get(threadId)?.runStatus === "streaming", "the run to stream")
    const conflict = await settle(client.run("again", { threadId }).thread)
    expect(conflict.ok).toBe(false)
    expect(conflict.ok ? undefined : conflict.error).toMatchObject({
      name: "RunConflictError",
      _tag: "RunConflictError",
      reason: "ActiveInClient",
      threadId
    })
    // Another client meets the server's 409.
    const other = makeClient(server())
    await expect(other.run("again", { threadId }).thread).rejects.toMatchObject({
      _tag: "RunConflictError",
      reason: "ActiveOnServer",
      status: 409
    })
    busy.abort()
    await settle(busy.thread)
  })

  it("concurrent runs from the placeholder create a thread each", async () => {
    server().setScript((request) => [Script.pace(10), Script.text(["re: ", request.text])])
    const client = makeClient(server())
    const [x, y] = await Promise.all([client.run("x").thread, client.run("y").thread])
    expect(x.id).not.toBe(y.id)
    expect(texts(x.messages)).toEqual(["user: x", "assistant: re: x"])
    expect(texts(y.messages)).toEqual(["user: y", "assistant: re: y"])
  })

  it("a queued run asked for on the placeholder while another creates its thread goes on that thread, also when it starts only after the thread was named", async () => {
    // A loopback proxy in front of the testing server that holds the first run request and the
    // second token exchange until told, so the second run (waiting for that exchange) takes its
    // thread only after the first run's thread became current.
    const proxy = await holdingProxy(server())
    server().setScript((request) => [Script.text(["re: ", request.text])])
    const hourFromNow = Math.floor(Date.now() / 1000) + 3600
    const client = makeClient(server(), {
      tamboUrl: proxy.url,
      userKey: undefined,
      // The same user's token, as an identity provider renews it.
      userToken: jwtFor("user-x", hourFromNow)
    })
    await waitFor(() => client.getAuthState().status === "identified", "the first exchange")
    const heldRun = proxy.holdRequest((request) => request.method === "POST" && request.path === "/v1/threads/runs")
    const heldExchange = proxy.holdRequest((request) => request.method === "POST" && request.path === "/oauth/token")
    const x = client.run("x")
    await heldRun.arrived
    client.setUserToken(jwtFor("user-x", hourFromNow + 60))
    // Called while the placeholder is current: the conversation x is creating the thread of.
    expect(client.getState().currentThreadId).toBe("placeholder")
    const y = client.run("y", { onBusy: "queue" })
    heldRun.release()
    const xId = await x.threadId
    expect(client.getState().currentThreadId).toBe(xId)
    heldExchange.release()
    const [xThread, yThread] = await Promise.all([x.thread, settle(y.thread)])
    expect(yThread.ok ? yThread.value.id : yThread.error._tag).toBe(xId)
    expect(texts(xThread.messages)).toEqual(["user: x", "assistant: re: x"])
    expect(yThread.ok && texts(yThread.value.messages)).toEqual(["user: x", "assistant: re: x", "user: y", "assistant: re: y"])
    expect(server().requests.filter((r) => r.path === "/v1/threads/runs")).toHaveLength(1)
    expect(client.getState().currentThreadId).toBe(xId)
  })

  it("runs on different threads go on concurrently", async () => {
    const client = makeClient(server())
    const streaming = () => Object.values(client.getState().threadMap).filter((t) => t.streaming.status === "streaming")
    // The second runs' replies go on once both stream, however long the other took to start.
    const bothStreaming = whenTrue(() => streaming().length === 2, "both runs streaming")
    server().setScript((request) => [
      Script.text("re: "),
      ...(request.text.endsWith("2") ? [Script.hold(bothStreaming)] : []),
      Script.text([request.text, " ..."])
    ])
    const a = await client.run("a").thread
    client.startNewThread()
    const b = await client.run("b").thread
    let mostStreaming = 0
    client.subscribe(() => {
      mostStreaming = Math.max(mostStreaming, streaming().length)
    })
    const [a2, b2] = await Promise.all([
      client.run("a2", { threadId: a.id }).thread,
      client.run("b2", { threadId: b.id }).thread
    ])
    expect(mostStreaming).toBe(2)
    expect(texts(a2.messages)).toEqual(["user: a", "assistant: re: a ...", "user: a2", "assistant: re: a2 ..."])
    expect(texts(b2.messages)).toEqual(["user: b", "assistant: re: b ...", "user: b2", "assistant: re: b2 ..."])
  })
})

describe("a new conversation while a new thread's run has not started", () => {
  /** A promise the server's script waits on: its runs answer once it is opened. */
  const gate = () => {
    let open!: () => void
    const opened = new Promise<void>((resolve) => (open = resolve))
    return { opened, open }
  }
  const runRequests = () => server().requests.filter((r) => r.path === "/v1/threads/runs").length
  /** `promise`, failing the test if it has not settled within 10 s rather than hanging it. */
  const within = <A>(promise: Promise<A>, what: string) =>
    Promise.race([
      promise,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} never settled`)), 10_000).unref())
    ])
  /** A client whose first run on a new conversation was sent, its answer held until `answers.open()`. */
  const firstHeld = async () => {
    const answers = gate()
    server().setScript(Script.beforeResponse(async (request) => {
      await answers.opened
      return [Script.text(["re: ", request.text])]
    }))
    const client = makeClient(server())
    const first = client.run("first conversation")
    await waitFor(() => runRequests() === 1, "the first request")
    return { answers, client, first }
  }

  /** The first run, held until `answers.open()`, then streaming without end; later runs are answered at once. */
  const firstHeldThenHanging = async () => {
    const answers = gate()
    server().setScript(Script.beforeResponse(async (request) => {
      if (request.text !== "first conversation") return [Script.text(["re: ", request.text])]
      await answers.opened
      return [Script.text("first..."), Script.hang()]
    }))
    const client = makeClient(server())
    const first = client.run("first conversation")
    await waitFor(() => runRequests() === 1, "the first request")
    return { answers, client, first }
  }

  it("startNewThread() while a new conversation's run waits for its credentials moves the run to a local thread of its own, which hasActiveRun and cancelRun find; the new conversation stays current and empty", async () => {
    const proxy = await holdingProxy(server())
    const answers = gate()
    server().setScript(Script.beforeResponse(async () => {
      await answers.opened
      return [Script.text("first..."), Script.hang()]
    }))
    const hourFromNow = Math.floor(Date.now() / 1000) + 3600
    const client = makeClient(server(), { tamboUrl: proxy.url, userKey: undefined, userToken: jwtFor("user-x", hourFromNow) })
    await waitFor(() => client.getAuthState().status === "identified", "the first exchange")
    const exchange = proxy.holdRequest((request) => request.method === "POST" && request.path === "/oauth/token")
    client.setUserToken(jwtFor("user-x", hourFromNow + 60))
    await exchange.arrived
    const first = client.run("first conversation")
    // Once the run started (it took the thread asked for, then waits for the exchange), as a user
    // opens a new conversation while the first one's message waits.
    await new Promise((resolve) => setImmediate(resolve))
    client.startNewThread()
    exchange.release()
    await waitFor(() => runRequests() === 1, "the first request")
    const localId = Object.keys(client.getState().threadMap).find((id) => id.startsWith("local:"))
    expect(localId && texts(client.getThread(localId)!.messages)).toEqual(["user: first conversation"])
    expect(client.getState().currentThreadId).toBe("placeholder")
    expect(client.getThread("placeholder")!.messages).toEqual([])
    expect(client.hasActiveRun(localId)).toBe(true)
    expect(client.hasActiveRun()).toBe(false)
    const cancelled = within(client.cancelRun(localId), "cancelRun of the run's local thread")
    answers.open()
    await cancelled
    const ended = await within(settle(first.thread), "the run's end")
    expect(ended.ok ? "succeeded" : ended.error).toBeInstanceOf(AbortError)
    expect(server().cancels.map((c) => c.threadId)).toEqual([await first.threadId])
    expect(client.getState().currentThreadId).toBe("placeholder")
  })

  it("a second message before the server named the thread is refused (RunConflictError), as on a named thread, and no second thread is made", async () => {
    const { answers, client, first } = await firstHeld()
    const refused = await settle(client.run("second message").thread)
    expect(refused.ok ? "succeeded" : refused.error).toMatchObject({ _tag: "RunConflictError", reason: "ActiveInClient" })
    answers.open()
    const thread = await first.thread
    expect(runRequests()).toBe(1)
    expect(client.getState().currentThreadId).toBe(thread.id)
    expect(texts(client.getThread(thread.id)!.messages)).toEqual(["user: first conversation", "assistant: re: first conversation"])
    expect(Object.keys(client.getState().threadMap).filter((id) => id !== thread.id && id !== "placeholder")).toEqual([])
  })

  it("a second message queued before the server named the thread goes on that thread once the first run ended; the screen stays on it", async () => {
    const { answers, client, first } = await firstHeld()
    const seen = new Set<string>()
    client.subscribe(() => seen.add(client.getState().currentThreadId))
    const second = client.run("second message", { onBusy: "queue" })
    answers.open()
    const [firstThread, secondThread] = await Promise.all([first.thread, second.thread])
    expect(secondThread.id).toBe(firstThread.id)
    expect(runRequests()).toBe(1)
    expect(texts(secondThread.messages)).toEqual([
      "user: first conversation",
      "assistant: re: first conversation",
      "user: second message",
      "assistant: re: second message"
    ])
    expect(client.getState().currentThreadId).toBe(firstThread.id)
    expect([...seen].filter((id) => id !== "placeholder")).toEqual([firstThread.id])
  })

  it("Stop of the thread the server named ends a message queued before it was named: it rejects with AbortError and is never sent", async () => {
    const { answers, client, first } = await firstHeldThenHanging()
    const second = client.run("second message", { onBusy: "queue" })
    answers.open()
    await waitFor(() => client.getState().currentThreadId !== "placeholder", "the thread named")
    const threadId = client.getState().currentThreadId
    await client.cancelRun()
    const [firstEnded, secondEnded] = await Promise.all([settle(first.thread), settle(second.thread)])
    expect(firstEnded.ok ? "succeeded" : firstEnded.error).toBeInstanceOf(AbortError)
    expect(secondEnded.ok ? "succeeded" : secondEnded.error).toBeInstanceOf(AbortError)
    expect(server().requests.filter((r) => r.method === "POST" && r.path === `/v1/threads/${threadId}/runs`)).toEqual([])
    expect(texts(client.getThread(threadId)!.messages)).toEqual(["user: first conversation", "assistant: first..."])
  })

  it("a second message with onBusy interrupt before the server named the thread cancels the first run and goes on its thread", async () => {
    const { answers, client, first } = await firstHeldThenHanging()
    const second = client.run("second message", { onBusy: "interrupt" })
    answers.open()
    const secondThread = await second.thread
    expect(runRequests()).toBe(1)
    const ended = await settle(first.thread)
    expect(ended.ok ? "succeeded" : ended.error).toBeInstanceOf(AbortError)
    expect(server().cancels.map((c) => c.threadId)).toEqual([secondThread.id])
    expect(texts(secondThread.messages).slice(-2)).toEqual(["user: second message", "assistant: re: second message"])
    expect(client.getState().currentThreadId).toBe(secondThread.id)
  })

  it("the run goes on in a thread of its own; the new conversation shows its own run, and follows it to its thread", async () => {
    const { answers, client, first } = await firstHeld()
    expect(client.startNewThread()).toBe("placeholder")
    expect(client.getThread("placeholder")!.messages).toEqual([])
    const second = client.run("second conversation")
    await waitFor(() => runRequests() === 2, "the second request")
    const current = () => client.getThread(client.getState().currentThreadId)!
    expect(client.getState().currentThreadId).toBe("placeholder")
    expect(texts(current().messages)).toEqual(["user: second conversation"])
    answers.open()
    const [firstThread, secondThread] = await Promise.all([first.thread, second.thread])
    // The user stays in the conversation they opened, now its run's thread.
    expect(client.getState().currentThreadId).toBe(secondThread.id)
    expect(texts(current().messages)).toEqual(["user: second conversation", "assistant: re: second conversation"])
    // The first run's thread is in the store under the server's id, whole, and no local one is left.
    expect(firstThread.id).not.toBe(secondThread.id)
    expect(texts(client.getThread(firstThread.id)!.messages)).toEqual([
      "user: first conversation",
      "assistant: re: first conversation"
    ])
    expect(Object.keys(client.getState().threadMap).filter((id) => id.startsWith("local:"))).toEqual([])
    expect(client.getThread("placeholder")!.messages).toEqual([])
  })

  it("the run's cancellation stays on its own thread, and a refused message leaves the store: the new conversation is not marked", async () => {
    const endings = [
      { name: "aborted", script: [Script.text("slow"), Script.hang()], end: (stream: TamboStream) => stream.abort() },
      { name: "refused", script: [Script.httpError(500)], end: () => undefined }
    ]
    for (const { end, name, script } of endings) {
      server().reset()
      const answers = gate()
      server().setScript(Script.beforeResponse(async () => {
        await answers.opened
        return script
      }))
      const client = makeClient(server())
      const stream = client.run(name)
      await waitFor(() => runRequests() === 1, "the request")
      client.startNewThread()
      end(stream)
      answers.open()
      expect((await settle(stream.thread)).ok, name).toBe(false)
      const fresh = client.getState().threadMap["placeholder"]!
      expect(client.getState().currentThreadId, name).toBe("placeholder")
      expect({ cancelled: fresh.thread.lastRunCancelled, error: fresh.streaming.error, messages: fresh.thread.messages }, name)
        .toEqual({ cancelled: false, error: undefined, messages: [] })
      // A message refused before any event was not taken: it is the caller's again, in no thread.
      const own = Object.values(client.getState().threadMap).filter((t) => texts(t.thread.messages)[0] === `user: ${name}`)
      expect(own.map((t) => ({ cancelled: t.thread.lastRunCancelled, failed: t.streaming.error !== undefined })), name)
        .toEqual(name === "aborted" ? [{ cancelled: true, failed: false }] : [])
    }
  })

  it("a message queued by a subscriber told the store shows the new conversation's thread goes on that thread, after the first run", async () => {
    const { answers, client, first } = await firstHeld()
    let second: TamboStream | undefined
    client.subscribe(() => {
      if (second === undefined && client.getState().currentThreadId !== "placeholder") {
        second = client.run("second message", { onBusy: "queue" })
      }
    })
    answers.open()
    await waitFor(() => second !== undefined, "the thread named")
    const [firstThread, secondThread] = await Promise.all([first.thread, second!.thread])
    expect(secondThread.id).toBe(firstThread.id)
    expect(runRequests()).toBe(1)
    expect(texts(secondThread.messages)).toEqual([
      "user: first conversation",
      "assistant: re: first conversation",
      "user: second message",
      "assistant: re: second message"
    ])
    expect(client.getState().currentThreadId).toBe(firstThread.id)
  })

  it("cancelRun and hasActiveRun on the new conversation see only its own run, not the one that left it", async () => {
    const { answers, client, first } = await firstHeld()
    expect(client.hasActiveRun("placeholder")).toBe(true)
    client.startNewThread()
    expect(client.hasActiveRun("placeholder")).toBe(false)
    const second = client.run("second conversation")
    await waitFor(() => runRequests() === 2, "the second request")
    await client.cancelRun()
    expect((await settle(second.thread)).ok).toBe(false)
    answers.open()
    const firstThread = await first.thread
    expect(texts(firstThread.messages)).toEqual(["user: first conversation", "assistant: re: first conversation"])
  })

  it("a subscriber sees hasActiveRun true on the new conversation's thread from the change that first shows it, until the run ends", async () => {
    server().setScript([Script.text("named..."), Script.hang()])
    const client = makeClient(server())
    const seen: Array<{ readonly current: boolean; readonly ofThread: boolean; readonly ofPlaceholder: boolean }> = []
    const unsubscribe = client.subscribe(() => {
      const { currentThreadId } = client.getState()
      if (currentThreadId === "placeholder") return
      seen.push({
        current: client.hasActiveRun(),
        ofThread: client.hasActiveRun(currentThreadId),
        ofPlaceholder: client.hasActiveRun("placeholder")
      })
    })
    const run = client.run("hi")
    const threadId = await run.threadId
    await waitFor(() => texts(client.getThread(threadId)?.messages ?? []).includes("assistant: named..."), "the text")
    unsubscribe()
    await client.cancelRun(threadId)
    await settle(run.thread)
    expect(seen.length).toBeGreaterThan(0)
    expect(seen).toEqual(seen.map(() => ({ current: true, ofThread: true, ofPlaceholder: false })))
  })

  /** A client through a holding proxy whose first run, on a new conversation, went on in a local thread (see `runMovedToLocalThread`). */
  const firstMovedToLocal = async (script: Script.Script) => {
    server().setScript(script)
    const proxy = await holdingProxy(server())
    const client = makeClient(server(), { tamboUrl: proxy.url })
    return { client, ...(await runMovedToLocalThread(client, proxy, () => client.run("first conversation"))) }
  }

  it("hasActiveRun, getThread and cancelRun with a new conversation's local thread id, once the server named it, see the thread its run went on", async () => {
    const { client, localId, stream, threadId } = await firstMovedToLocal([Script.text("first..."), Script.hang()])
    expect(client.hasActiveRun(localId)).toBe(true)
    expect(client.getThread(localId)?.id).toBe(threadId)
    await client.cancelRun(localId)
    const ended = await settle(stream.thread)
    expect(ended.ok ? "succeeded" : ended.error).toBeInstanceOf(AbortError)
    expect(server().cancels.map((c) => c.threadId)).toEqual([threadId])
    expect(client.hasActiveRun(localId)).toBe(false)
  })

  /** The first run, still waiting for the server's answer, moved to a local thread of its own by `startNewThread()`: the local id the state shows. */
  const movedToLocal = (client: TamboClient) => {
    client.startNewThread()
    const localId = Object.keys(client.getState().threadMap).find((id) => id.startsWith("local:"))
    if (localId === undefined) throw new Error("startNewThread() left no local thread of the run")
    return localId
  }

  it("hasActiveRun and cancelRun with a new conversation's local thread id, before the server named it, find the run the state shows there", async () => {
    const { answers, client, first } = await firstHeldThenHanging()
    const localId = movedToLocal(client)
    const seen: Array<boolean> = []
    const unsubscribe = client.subscribe(() => seen.push(client.hasActiveRun(localId)))
    expect(client.hasActiveRun(localId)).toBe(true)
    expect(client.hasActiveRun()).toBe(false)
    const cancelled = client.cancelRun(localId)
    answers.open()
    await cancelled
    const ended = await settle(first.thread)
    expect(ended.ok ? "succeeded" : ended.error).toBeInstanceOf(AbortError)
    const threadId = await first.threadId
    expect(server().cancels.map((c) => c.threadId)).toEqual([threadId])
    expect(client.hasActiveRun(localId)).toBe(false)
    unsubscribe()
    expect(seen.at(-1)).toBe(false)
  })

  it("a run asked for on a new conversation's local thread id before the server named it, with onBusy: \"interrupt\", ends the run there and goes on the thread it creates", async () => {
    const { answers, client, first } = await firstHeldThenHanging()
    const localId = movedToLocal(client)
    const second = client.run("second message", { threadId: localId, onBusy: "interrupt" })
    answers.open()
    const ended = await settle(first.thread)
    expect(ended.ok ? "succeeded" : ended.error).toBeInstanceOf(AbortError)
    const [threadId, secondThread] = await Promise.all([first.threadId, second.thread])
    expect(secondThread.id).toBe(threadId)
    expect(texts(secondThread.messages).at(-1)).toBe("assistant: re: second message")
    expect(client.hasActiveRun(localId)).toBe(false)
  })

  it("forgetThread with a new conversation's local thread id forgets the thread the server named; the id then names no thread the client holds", async () => {
    const { client, localId, stream, threadId } = await firstMovedToLocal([Script.text("first.")])
    await stream.thread
    expect(client.forgetThread(localId)).toBe(true)
    expect(client.getState().threadMap[threadId]).toBeUndefined()
    expect(client.getThread(localId)).toBeUndefined()
    const stale = await settle(client.fetchThread(localId))
    expect(stale.ok ? "succeeded" : stale.error).toMatchObject({ name: "ConfigError", reason: "InvalidOption" })
    expect(stale.ok ? "" : String(stale.error.message)).toMatch(/holds no thread of/)
    // A message asked for there is refused, not sent as a new conversation.
    const sent = server().requests.length
    const refused = await settle(client.run("again", { threadId: localId }).thread)
    expect(refused.ok ? "succeeded" : refused.error).toMatchObject({ name: "ConfigError", reason: "InvalidOption" })
    expect(refused.ok ? "" : String(refused.error.message)).toMatch(/holds no thread of/)
    expect(server().requests.length).toBe(sent)
    // The thread itself is still the server's, by its own id.
    expect((await client.fetchThread(threadId)).id).toBe(threadId)
  })
})

describe("a new conversation's local thread id whose thread left the client", () => {
  /** A client whose first run went on in a local thread (see `runMovedToLocalThread`), ended, and whose thread it then forgot. */
  const forgotten = async () => {
    server().setScript([Script.text("first.")])
    const proxy = await holdingProxy(server())
    const client = makeClient(server(), { tamboUrl: proxy.url })
    const { localId, stream, threadId } = await runMovedToLocalThread(client, proxy, () => client.run("first conversation"))
    await stream.thread
    expect(client.forgetThread(localId)).toBe(true)
    return { client, localId, threadId }
  }
  const noLongerHeld = { name: "ConfigError", reason: "InvalidOption", message: expect.stringMatching(/holds no thread of/) }

  it("continueRun with it rejects with a ConfigError saying the client holds no thread of it, sending nothing, as run() does", async () => {
    const { client, localId, threadId } = await forgotten()
    const sent = server().requests.length
    const refused = await settle(client.continueRun(localId, [{ toolCallId: "call_1", result: "done" }]).thread)
    expect(refused.ok ? "succeeded" : refused.error).toMatchObject({ name: "ConfigError", reason: "InvalidOption" })
    expect(refused.ok ? "" : String(refused.error.message)).toMatch(/holds no thread of/)
    expect(server().requests.length).toBe(sent)
    expect(client.getState().threadMap[threadId]).toBeUndefined()
  })

  it("getPendingToolCalls with it rejects with a ConfigError saying the client holds no thread of it, sending nothing", async () => {
    const { client, localId, threadId } = await forgotten()
    const sent = server().requests.length
    const refused = await settle(client.getPendingToolCalls(localId))
    expect(refused.ok ? "succeeded" : refused.error).toMatchObject(noLongerHeld)
    expect(server().requests.length).toBe(sent)
    expect(client.getState().threadMap[threadId]).toBeUndefined()
  })

  it("approveToolCall and denyToolCall with it as threadId throw a ToolError (NotPending) naming it, as for a thread no call waits in, sending nothing", async () => {
    const { client, localId } = await forgotten()
    const sent = server().requests.length
    const notPending = { name: "ToolError", reason: "NotPending", toolCallId: "call_1", threadId: localId }
    expect(() => client.approveToolCall("call_1", { threadId: localId })).toThrow(expect.objectContaining(notPending))
    expect(() => client.denyToolCall("call_1", "no", { threadId: localId })).toThrow(expect.objectContaining(notPending))
    expect(server().requests.length).toBe(sent)
  })
})

describe("reconciliation after a run", () => {
  it("the thread takes the server's ids once the run ended; a replaced local id stays as the message's key", async () => {
    server().setScript([Script.text("Hello")])
    const client = makeClient(server())
    const thread = await client.run("hi").thread
    const stored = server().threads.get(thread.id)!
    expect(thread.messages.map((message) => message.id)).toEqual(stored.messages.map((message) => message.id))
    expect(thread.messages[0]!.key).toMatch(/^local_user_/)
  })

  it("reconcileAfterRun: false reads nothing after the run", async () => {
    server().setScript([Script.text("Hello")])
    const client = makeClient(server(), { reconcileAfterRun: false })
    const thread = await client.run("hi").thread
    expect(server().requests.filter((request) => request.method === "GET")).toEqual([])
    expect(thread.messages[0]!.id).toMatch(/^local_user_/)
  })
})
