import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import { EVENT_BUFFER, SnapshotStrategy, type TamboThread } from "../src/index.js"
import { holdingProxy, makeClient, settle, sleep, useServer, waitFor } from "./helpers.js"

const server = useServer()

const DELTAS = 20_000

/** Characters of assistant text the store holds for a thread: how far the run got. */
const progress = (thread: TamboThread | undefined) =>
  thread?.messages
    .filter((m) => m.role === "assistant")
    .flatMap((m) => m.content)
    .reduce((n, c) => n + (c.type === "text" ? c.text.length : 0), 0) ?? 0

describe("backpressure", () => {
  it("a slow iterator pauses the run instead of buffering without bound", async () => {
    server().setScript([Script.text(Array.from({ length: DELTAS }, () => "x"))])
    const client = makeClient(server())
    const stream = client.run("flood")
    const iterator = stream[Symbol.asyncIterator]()
    await iterator.next()
    const threadId = await stream.threadId

    // The consumer stops reading: the run must stall well before the end.
    let stalled = progress(client.getThread(threadId))
    for (let settled = false, deadline = Date.now() + 10_000; !settled && Date.now() < deadline;) {
      await sleep(150)
      const now = progress(client.getThread(threadId))
      settled = now === stalled && now > 0
      stalled = now
    }
    expect(stalled).toBeGreaterThanOrEqual(EVENT_BUFFER)
    await sleep(200)
    expect(progress(client.getThread(threadId))).toBe(stalled)
    // At most the queue, the iterator's batch and a network read or two of events.
    expect(stalled).toBeLessThan(2_500)

    // Reading again lets it finish.
    let events = 1
    while (!(await iterator.next()).done) events++
    expect(events).toBeGreaterThan(DELTAS)
    expect(progress(await stream.thread)).toBe(DELTAS)
  })

  it("snapshots() is conflated: a slow reader gets the latest thread, not a backlog", async () => {
    server().setScript([Script.text(Array.from({ length: 300 }, () => "y"))])
    const client = makeClient(server())
    const stream = client.run("conflate")
    let reads = 0
    let last: TamboThread | undefined
    // The slowest reader: after its first snapshot it reads nothing more until the run ended.
    for await (const snapshot of stream.snapshots()) {
      reads++
      last = snapshot
      if (reads === 1) await stream.thread
    }
    expect(reads).toBeLessThan(100)
    expect(progress(last)).toBe(300)
    expect(last).toBe(await stream.thread)
  })

  it("promises alone consume the run without holding its events", async () => {
    server().setScript([Script.text(Array.from({ length: DELTAS }, () => "z"))])
    const client = makeClient(server())
    const thread = await client.run("drain").thread
    expect(progress(thread)).toBe(DELTAS)
  })

  it("snapshot iterators that stop reading, and listeners of snapshots, hold no run: it completes, and each iterator then yields its final thread", async () => {
    const events = 3 * EVENT_BUFFER
    server().setScript([Script.text(Array.from({ length: events }, () => "s"))])
    const client = makeClient(server())
    const heard: Array<boolean> = []
    client.subscribeToSnapshots(({ final }) => heard.push(final), { strategy: SnapshotStrategy.throttle("1 hour") })
    const stream = client.run("left behind")
    const iterators = [
      stream.snapshots(),
      stream.snapshots({ strategy: SnapshotStrategy.everyN(1) }),
      stream.snapshots({ strategy: SnapshotStrategy.debounce("1 hour") })
    ]
    // Each read once (the last never), then left without return().
    await Promise.all(iterators.slice(0, 2).map((iterator) => iterator.next()))
    const final = await stream.thread
    expect(progress(final)).toBe(events)
    await waitFor(() => heard.at(-1) === true, "the listener to hear the final thread")
    for (const iterator of iterators) {
      const left: Array<TamboThread> = []
      for await (const thread of iterator) left.push(thread)
      expect(left.at(-1)).toBe(final)
    }
  })

  for (const stop of ["abort", "cancelRun", "destroy"] as const) {
    it(`${stop} of a run held by an event iterator that stopped reading: it settles with an AbortError, and the iterator yields what it holds, then throws it`, async () => {
      server().setScript([Script.text(Array.from({ length: 3 * EVENT_BUFFER }, () => "h")), Script.hang()])
      const client = makeClient(server())
      const stream = client.run("held")
      const iterator = stream.events()
      expect((await iterator.next()).value?.type).toBe("RUN_STARTED")
      const threadId = await stream.threadId
      await waitFor(() => progress(client.getThread(threadId)) >= EVENT_BUFFER, "the run to fill the iterator's buffer")
      const stopped = stop === "abort" ? stream.abort() : stop === "cancelRun" ? client.cancelRun(threadId) : client.destroy()
      const outcome = await settle(stream.thread)
      await stopped
      expect(outcome.ok ? "ok" : outcome.error._tag).toBe("AbortError")
      let held = 0
      const drained = await settle((async () => {
        while (!(await iterator.next()).done) held++
      })())
      expect(held).toBeGreaterThan(0)
      expect(drained.ok ? "ok" : drained.error._tag).toBe("AbortError")
    })
  }

  it("cancelRun awaited inside the for await loop of a run the server goes on with, once the loop held up the run: it resolves, the run settles with an AbortError, and the loop reads what it holds, then throws it", async () => {
    server().setScript([Script.text(Array.from({ length: 3 * EVENT_BUFFER }, () => "h")), Script.hang()])
    const client = makeClient(server())
    const stream = client.run("held")
    let read = 0
    const looped = await settle((async () => {
      for await (const _ of stream) {
        if (read++ > 0) continue
        const threadId = await stream.threadId
        await waitFor(() => progress(client.getThread(threadId)) >= EVENT_BUFFER, "the run to fill the iterator's buffer")
        await client.cancelRun(threadId)
        const outcome = await settle(stream.thread)
        expect(outcome.ok ? "ok" : outcome.error._tag).toBe("AbortError")
      }
    })())
    expect(read).toBeGreaterThan(EVENT_BUFFER)
    expect(looped.ok ? "ok" : looped.error._tag).toBe("AbortError")
    expect(server().cancels.map((c) => c.reason)).toEqual(["user_cancelled"])
  })

  for (const stop of ["abort", "cancelRun"] as const) {
    it(`${stop} of a run the server goes on with, whose iterator stopped reading: while the server is told, the run waits for the iterator as before, and the iterator holds no more than its bound, then the AbortError`, async () => {
      server().setScript([Script.text(Array.from({ length: DELTAS }, () => "x")), Script.hang()])
      const proxy = await holdingProxy(server())
      const deleted = proxy.holdRequest((request) => request.method === "DELETE")
      const client = makeClient(server(), { tamboUrl: proxy.url })
      const stream = client.run("flood")
      const iterator = stream[Symbol.asyncIterator]()
      await iterator.next()
      const threadId = await stream.threadId
      await waitFor(() => progress(client.getThread(threadId)) >= EVENT_BUFFER, "the run to fill the iterator's buffer")
      const stopped = stop === "abort" ? stream.abort() : client.cancelRun(threadId)
      await deleted.arrived
      // A run let go of its iterator reads on through every read the network has for it meanwhile.
      for (let turn = 0; turn < 200; turn++) await new Promise((resolve) => setImmediate(resolve))
      const held = progress(client.getThread(threadId))
      deleted.release()
      await stopped
      // Settled before the iterator reads on: what it yields is what it held.
      expect((await settle(stream.thread)).ok).toBe(false)
      let buffered = 0
      const drained = await settle((async () => {
        for (let step = await iterator.next(); step.done !== true; step = await iterator.next()) buffered++
      })())
      expect(drained.ok ? "ok" : drained.error._tag).toBe("AbortError")
      // At most the queue, the iterator's batch and a network read or two of events.
      expect(held).toBeLessThan(2_500)
      expect(buffered).toBeLessThan(2_500)
      expect(server().cancels.map((c) => c.reason)).toEqual(["user_cancelled"])
    })
  }

  it("a run that interrupts one an event iterator that stopped reading holds: the held run rejects with an AbortError, and the new one runs", async () => {
    server().setScript((request) =>
      request.text === "held" ? [Script.text(Array.from({ length: 3 * EVENT_BUFFER }, () => "h")), Script.hang()] : [Script.text("next")]
    )
    const client = makeClient(server())
    const stream = client.run("held")
    const iterator = stream.events()
    await iterator.next()
    const threadId = await stream.threadId
    await waitFor(() => progress(client.getThread(threadId)) >= EVENT_BUFFER, "the run to fill the iterator's buffer")
    const next = await settle(client.run("next", { threadId, onBusy: "interrupt" }).thread)
    expect(next.ok && next.value.messages.at(-1)?.content).toEqual([{ type: "text", text: "next" }])
    const held = await settle(stream.thread)
    expect(held.ok ? "ok" : held.error._tag).toBe("AbortError")
    const drained = await settle((async () => {
      while (!(await iterator.next()).done);
    })())
    expect(drained.ok ? "ok" : drained.error._tag).toBe("AbortError")
  })
})
