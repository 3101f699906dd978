import { Script, startTestServer, type TestServer } from "@tambo-effect/testing"
import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"
import {
  EVENT_BUFFER,
  type RunOptions,
  SnapshotStrategy,
  type StreamEvent,
  type TamboClientOptions,
  type TamboStream,
  type TamboThread,
  type TamboTool
} from "../src/index.js"
import { storeEqualsServer } from "../../core/test/storeEqualsServer.js"
import { holdingProxy, jwtFor, makeClient, settle, sleep, texts, useServer, waitFor, weatherTool } from "./helpers.js"

const server = useServer()

/** Fails once `ms` passed: a loop that waits on itself fails the test instead of hanging it. */
const failAfter = (ms: number, what: string) =>
  sleep(ms).then(() => {
    throw new Error(`${what} did not end`)
  })

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

  /**
   * The run completed: its thread is the server's, nothing was cancelled, and the store agrees.
   * `deletes`: the cancellations sent that found no run (404), none unless said.
   */
  const expectCompleted = async (client: ReturnType<typeof makeClient>, thread: Promise<TamboThread>, deletes = 0) => {
    const outcome = await settle(thread)
    expect(outcome.ok ? "ok" : outcome.error._tag).toBe("ok")
    const stored = server().threads.list()[0]!
    expect(outcome.ok && outcome.value.messages.map((m) => m.id)).toEqual(stored.messages.map((m) => m.id))
    expect(client.getState().threadMap[stored.id]!.thread.messages.map((m) => m.id)).toEqual(stored.messages.map((m) => m.id))
    expect(client.getState().threadMap[stored.id]!.thread.lastRunCancelled).not.toBe(true)
    expect(server().cancels).toEqual([])
    expect(server().requests.filter((r) => r.method === "DELETE")).toHaveLength(deletes)
  }

  /** Runs `script`, and aborts the run while its end-of-run read is held; resolves once the abort settled. */
  const abortedWhileEnding = async (script: Script.Script) => {
    server().setScript(script)
    const { client, read } = await heldEndOfRun()
    const stream = client.run("hi")
    await read.arrived
    const aborted = stream.abort()
    read.release()
    await aborted
    return { client, stream }
  }

  it("abort() after the last RUN_FINISHED lets the run complete: thread resolves, nothing is cancelled", async () => {
    const { client, stream } = await abortedWhileEnding([Script.text("done")])
    await expectCompleted(client, stream.thread)
  })

  it("abort() after a RUN_ERROR, while the run records its end: the run fails with the server's error, not as aborted, and nothing is cancelled", async () => {
    const { stream } = await abortedWhileEnding([Script.text("so far"), Script.runError({ message: "down", code: "DOWN" })])
    const outcome = await settle(stream.thread)
    expect(outcome.ok ? "ok" : { _tag: outcome.error._tag, code: (outcome.error as { code?: string }).code })
      .toEqual({ _tag: "ApiError", code: "DOWN" })
    expect(server().cancels).toEqual([])
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

  /**
   * A run whose events, more than an iterator's buffer holds, the server all sent before the client
   * read any, iterated from its start; resolves once the client took the run's last event, which
   * then waits for room behind the events the iterator has not read.
   */
  const lastEventBehindIterator = async (script: Script.ScriptSource, options: Partial<TamboClientOptions> = {}, runOptions: RunOptions = {}) => {
    server().setScript(script)
    const proxy = await holdingProxy(server())
    const body = proxy.holdBody((request) => request.method === "POST" && request.path === "/v1/threads/runs")
    const client = makeClient(server(), { ...options, tamboUrl: proxy.url })
    const stream = client.run("hi", runOptions)
    const iterator = stream[Symbol.asyncIterator]()
    await body.arrived
    await waitFor(() => server().threads.list()[0]?.runStatus === "idle", "the server to finish the run")
    const threadId = server().threads.list()[0]!.id
    body.release()
    const tookLastEvent = () =>
      waitFor(() => client.getState().threadMap[threadId]?.streaming.status === "idle", "the client to take the last event")
    return { client, stream, iterator, threadId, tookLastEvent }
  }

  /** More text than an iterator's buffer holds. */
  const flood = () => Script.text(Array.from({ length: 3 * EVENT_BUFFER }, () => "x"))

  /** The types of the events an iterator has left, to its end. */
  const drain = async (iterator: AsyncIterator<StreamEvent>) => {
    const types: Array<string> = []
    for (let step = await iterator.next(); step.done !== true; step = await iterator.next()) types.push(step.value.event.type)
    return types
  }

  it("breaking out of for await behind a full buffer once the run's last event came: the loop ends and thread resolves", async () => {
    const { client, stream, iterator, tookLastEvent } = await lastEventBehindIterator([flood()])
    const first = await iterator.next()
    // The run's last event reached the client; this loop is far behind it.
    await tookLastEvent()
    await iterator.return!()
    expect(first.value?.event.type).toBe("RUN_STARTED")
    await expectCompleted(client, stream.thread)
  })

  it("abort() of a run whose last event waits behind an iterator that stopped reading: the run completes, and the iterator still reads to its end", async () => {
    const { client, stream, iterator, tookLastEvent } = await lastEventBehindIterator([flood()])
    expect((await iterator.next()).value?.event.type).toBe("RUN_STARTED")
    await tookLastEvent()
    stream.abort()
    await expectCompleted(client, stream.thread)
    expect((await drain(iterator)).at(-1)).toBe("RUN_FINISHED")
  })

  it("abort() of a run whose last event waits behind an iterator never read: the run completes", async () => {
    const { client, stream, iterator, tookLastEvent } = await lastEventBehindIterator([flood()])
    await tookLastEvent()
    stream.abort()
    await expectCompleted(client, stream.thread)
    const types = await drain(iterator)
    expect([types[0], types.at(-1)]).toEqual(["RUN_STARTED", "RUN_FINISHED"])
  })

  it("cancelRun of a thread whose run's last event waits behind an unread iterator: it resolves, and the thread takes the next message", async () => {
    const { client, stream, iterator, threadId, tookLastEvent } = await lastEventBehindIterator([flood()])
    await tookLastEvent()
    await client.cancelRun(threadId)
    await expectCompleted(client, stream.thread)
    expect(client.hasActiveRun(threadId)).toBe(false)
    server().setScript([Script.text("again")])
    const next = await client.run("next", { threadId }).thread
    expect(texts(next.messages).at(-1)).toBe("assistant: again")
    expect((await drain(iterator)).at(-1)).toBe("RUN_FINISHED")
  })

  it("a run that interrupts one whose last event waits behind an unread iterator: that run ends, the iterator ends as it did, and the new one runs", async () => {
    const { client, stream, iterator, threadId, tookLastEvent } = await lastEventBehindIterator([flood()])
    await tookLastEvent()
    server().setScript([Script.text("again")])
    const next = await client.run("next", { threadId, onBusy: "interrupt" }).thread
    expect(texts(next.messages).at(-1)).toBe("assistant: again")
    const held = await settle(stream.thread)
    const types: Array<string> = []
    const drained = await settle((async () => types.push(...(await drain(iterator))))())
    expect(drained.ok ? "ok" : drained.error._tag).toBe(held.ok ? "ok" : held.error._tag)
    if (held.ok) expect(types.at(-1)).toBe("RUN_FINISHED")
  })

  /** Far more text than an iterator's buffer and a network read hold: the run's last event comes only while the client reads on. */
  const deluge = () => Script.text(Array.from({ length: 40 * EVENT_BUFFER }, () => "x"))

  /** Characters of assistant text the client holds for the thread: how far the run got. */
  const textSoFar = (client: ReturnType<typeof makeClient>, threadId: string) =>
    (client.getThread(threadId)?.messages ?? []).flatMap((m) => m.role === "assistant" ? m.content : [])
      .reduce((n, c) => n + (c.type === "text" ? c.text.length : 0), 0)

  /** A run the server ended, whose last event waits far behind its iterator's full buffer. */
  const endedBehindFullBuffer = async () => {
    const behind = await lastEventBehindIterator([deluge()])
    const { client, threadId, iterator } = behind
    expect((await iterator.next()).value?.event.type).toBe("RUN_STARTED")
    await waitFor(() => textSoFar(client, threadId) >= EVENT_BUFFER, "the run to fill the iterator's buffer")
    return behind
  }

  for (const stop of ["abort", "cancelRun"] as const) {
    it(`${stop} of a run the server ended, whose last event waits far behind an iterator that stopped reading: the DELETE answers 404, the run completes, and the iterator reads every event to its end`, async () => {
      const { client, stream, iterator, threadId } = await endedBehindFullBuffer()
      const stopped = stop === "abort" ? stream.abort() : client.cancelRun(threadId)
      await expectCompleted(client, stream.thread, 1)
      await stopped
      expect((await drain(iterator)).at(-1)).toBe("RUN_FINISHED")
    })
  }

  it("cancelRun awaited inside the loop over a run the server ended, whose last event waits far behind: it resolves, the run completes, and the loop reads on to its end", async () => {
    const { client, stream, iterator, threadId } = await endedBehindFullBuffer()
    const types: Array<string> = []
    for (let step = await iterator.next(); step.done !== true; step = await iterator.next()) {
      if (types.push(step.value.event.type) === 1) await client.cancelRun(threadId)
    }
    expect(types.at(-1)).toBe("RUN_FINISHED")
    await expectCompleted(client, stream.thread, 1)
  })

  it("cancelRun of a manual run whose calls wait behind an unread iterator: it resolves, and the calls stay the caller's to answer", async () => {
    // The events up to the step's RUN_FINISHED (eight besides the text's deltas) fill the
    // iterator's buffer: the client's CLIENT_AWAITING_TOOL_RESULTS, the run's last event, waits.
    const { client, stream, iterator, threadId } = await lastEventBehindIterator(
      [Script.text(Array.from({ length: EVENT_BUFFER - 8 }, () => "x")), Script.toolCall("get_weather", { city: "Paris" })],
      { tools: [weatherTool] },
      { autoExecuteTools: false }
    )
    let awaiting = false
    client.subscribeToSnapshots(() => {
      awaiting = true
    }, { strategy: SnapshotStrategy.custom(({ event }) => event.type === "CLIENT_AWAITING_TOOL_RESULTS") })
    await waitFor(() => awaiting, "the client to take the run's last event")
    await client.cancelRun(threadId)
    await expectCompleted(client, stream.thread)
    expect((await client.getPendingToolCalls(threadId)).map((call) => call.toolName)).toEqual(["get_weather"])
    expect((await drain(iterator)).at(-1)).toBe("CLIENT_AWAITING_TOOL_RESULTS")
  })

  /**
   * A run whose answer's body the proxy holds while the server ends it, stopped by `stop`: its
   * `DELETE` answers 404 (the run is no longer the thread's), then its events come, and the run's
   * end reads the thread only once the Stop resolved in core.
   */
  const stoppedAsTheServerEndedIt = async (stop: (client: ReturnType<typeof makeClient>, stream: TamboStream) => unknown) => {
    server().setScript([Script.text("done")])
    const { proxy, client, read } = await heldEndOfRun()
    const body = proxy.holdBody((request) => request.method === "POST" && request.path === "/v1/threads/runs")
    const deleted = proxy.holdResponse((request) => request.method === "DELETE")
    const stream = client.run("hi")
    const types: Array<string> = []
    const looped = settle((async () => {
      for await (const { event } of stream) types.push(event.type)
    })())
    await body.arrived
    await waitFor(() => server().threads.list()[0]?.runStatus === "idle", "the server to finish the run")
    const stopped = Promise.resolve(stop(client, stream))
    await deleted.arrived
    deleted.release()
    body.release()
    await read.arrived
    read.release()
    await stopped
    return { client, stream, looped, types }
  }

  it("abort() whose DELETE answers 404 as the run's last event is on its way: the run completes, thread resolves, and the iterator reads every event to its end", async () => {
    const { client, stream, looped, types } = await stoppedAsTheServerEndedIt((_, stream) => stream.abort())
    await expectCompleted(client, stream.thread, 1)
    expect((await looped).ok).toBe(true)
    expect(types.at(-1)).toBe("RUN_FINISHED")
  })

  it("cancelRun whose DELETE answers 404 as the run's last event is on its way: it resolves, the run completes, and the thread takes the next message", async () => {
    const { client, stream, looped } = await stoppedAsTheServerEndedIt((client) => client.cancelRun())
    await expectCompleted(client, stream.thread, 1)
    expect((await looped).ok).toBe(true)
    const threadId = await stream.threadId
    server().setScript([Script.text("again")])
    expect(texts((await client.run("next", { threadId }).thread).messages).at(-1)).toBe("assistant: again")
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

describe("a run stopped while it waits for its credentials, beside another run of the client on its thread", () => {
  it("abort() ends it at once, having sent nothing, and the run behind it goes on once the credentials come", async () => {
    server().setScript((request) => [Script.text(`re: ${request.text}`)])
    const proxy = await holdingProxy(server())
    const hourFromNow = Math.floor(Date.now() / 1000) + 3600
    const client = makeClient(server(), { tamboUrl: proxy.url, userKey: undefined, userToken: jwtFor("user-x", hourFromNow) })
    const threadId = (await client.run("first").thread).id
    // The same user's token, renewed: the runs asked for now wait for its exchange.
    const exchange = proxy.holdRequest((request) => request.method === "POST" && request.path === "/oauth/token")
    client.setUserToken(jwtFor("user-x", hourFromNow + 60))
    await exchange.arrived
    const stopped = client.run("stopped", { threadId })
    const queued = client.run("queued", { threadId, onBusy: "queue" })
    const aborting = stopped.abort()
    // The credentials come as the abort is on its way.
    exchange.release()
    await aborting
    const outcome = await settle(stopped.thread)
    expect(outcome.ok ? "ok" : outcome.error._tag).toBe("AbortError")
    expect(texts((await queued.thread).messages)).toEqual(["user: first", "assistant: re: first", "user: queued", "assistant: re: queued"])
    expect(server().cancels).toEqual([])
    expect(texts(server().threads.get(threadId)!.messages)).toEqual(["user: first", "assistant: re: first", "user: queued", "assistant: re: queued"])
  })
})

describe("a run started inside the loop over another run of its thread", () => {
  for (const ended of [false, true]) {
    it(`a run with onBusy: "interrupt" started inside the loop over the thread's run${ended ? ", which the server ended meanwhile" : ""}: it runs, and the loop over the first run ends as that run did`, async () => {
      const client = makeClient(server())
      server().setScript([Script.text("first")])
      const threadId = (await client.run("first").thread).id
      let answer!: () => void
      server().setScript((request) =>
        request.text === "again"
          ? [Script.text("again")]
          : new Promise((resolve) => (answer = () => resolve([Script.text("second")])))
      )
      const stream = client.run("second", { threadId })
      const again: Array<string> = []
      const loop = (async () => {
        for await (const { event } of stream) {
          if (event.type !== "RUN_STARTED") continue
          if (ended) {
            answer()
            await waitFor(() => server().threads.get(threadId)?.runStatus === "idle", "the server to end the run")
          }
          for await (const next of client.run("again", { threadId, onBusy: "interrupt" })) again.push(next.event.type)
        }
      })()
      const looped = await settle(Promise.race([loop, failAfter(10_000, "the loop")]))
      if (!ended) answer()
      expect(again.at(-1)).toBe("RUN_FINISHED")
      const first = await settle(stream.thread)
      expect(looped.ok ? "ok" : looped.error._tag).toBe(first.ok ? "ok" : first.error._tag)
      if (!ended) expect(first.ok ? "ok" : first.error._tag).toBe("AbortError")
      expect(texts(client.getThread(threadId)!.messages).at(-1)).toBe("assistant: again")
    })
  }
})

describe("a Stop whose DELETE is lost, against a server that notices a closed connection only when the run next writes", () => {
  const noticing = useServer({ noticeClosedConnection: "onNextWrite" })

  it("ends the run at its client; the other tab's run is refused while the server holds the run, and goes on once the server noticed", async () => {
    let open!: () => void
    const opened = new Promise<void>((resolve) => (open = resolve))
    noticing().setScript(async (request, context) => {
      if (request.text === "held") await Promise.race([opened, new Promise((resolve) => context.signal.addEventListener("abort", resolve))])
      return [Script.text(`re: ${request.text}`)]
    })
    const proxy = await holdingProxy(noticing())
    // No retries: the DELETE is lost for good.
    const [a, b] = [makeClient(noticing(), { tamboUrl: proxy.url, maxRetries: 0 }), makeClient(noticing(), { tamboUrl: proxy.url, maxRetries: 0 })]
    const threadId = (await a.run("first").thread).id
    const held = a.run("held", { threadId })
    await waitFor(() => noticing().threads.get(threadId)?.runStatus !== "idle", "the server's run")
    await waitFor(() => a.getState().threadMap[threadId]?.streaming.runId !== undefined, "the held run's start")
    // The Stop's DELETE never reaches the server: its connection is reset.
    const lost = proxy.holdRequest((request) => request.method === "DELETE")
    const stopping = a.cancelRun(threadId)
    await lost.arrived
    lost.reset()
    await stopping
    const stopped = await settle(held.thread)
    expect(stopped.ok ? "ok" : stopped.error._tag).toBe("AbortError")
    // The server holds the run until it next writes: another client's run is refused at once.
    const refused = await settle(b.run("refused", { threadId }).thread)
    expect(refused.ok ? "ok" : [refused.error._tag, refused.error.reason]).toEqual(["RunConflictError", "ActiveOnServer"])
    open()
    await waitFor(() => noticing().threads.get(threadId)?.runStatus === "idle", "the server's notice of the closed connection")
    const after = await b.run("after", { threadId }).thread
    expect(texts(after.messages).slice(-2)).toEqual(["user: after", "assistant: re: after"])
    expect(texts(noticing().threads.get(threadId)!.messages).filter((text) => text.startsWith("user:"))).toEqual(["user: first", "user: held", "user: after"])
    await a.fetchThread(threadId)
    await storeEqualsServer(a.getState(), noticing(), threadId)
    await storeEqualsServer(b.getState(), noticing(), threadId)
    await proxy.close()
  })
})

describe("a run queued inside the loop over its thread's run", () => {
  it(`a run with onBusy: "queue" started inside the loop over the thread's run, which has more than ${EVENT_BUFFER} events left: the first run completes, then the queued one runs, and both loops end`, async () => {
    const client = makeClient(server())
    const long = Array.from({ length: 20 * EVENT_BUFFER }, () => "x")
    server().setScript((request) => request.text === "again" ? [Script.text("again")] : [Script.text(long)])
    const threadId = (await client.run("first").thread).id
    const stream = client.run("second", { threadId })
    const queued: Array<string> = []
    const loop = (async () => {
      for await (const { event } of stream) {
        if (event.type !== "RUN_STARTED" || queued.length > 0) continue
        for await (const next of client.run("again", { threadId, onBusy: "queue" })) queued.push(next.event.type)
      }
    })()
    const looped = await settle(Promise.race([loop, failAfter(10_000, "the loop")]))
    expect(looped.ok ? "ok" : looped.error.message).toBe("ok")
    expect(queued.at(-1)).toBe("RUN_FINISHED")
    expect((await settle(stream.thread)).ok).toBe(true)
    expect(texts(client.getThread(threadId)!.messages).slice(-4)).toEqual([
      "user: second",
      `assistant: ${long.join("")}`,
      "user: again",
      "assistant: again"
    ])
    await storeEqualsServer(client.getState(), server(), threadId)
  })
})
