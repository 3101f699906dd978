// Update strategies through the facade: `stream.snapshots({ strategy })` and `subscribeToSnapshots`.
import { Script } from "@tambo-effect/testing"
import { describe, expect, it, vi } from "vitest"
import { type RunSnapshot, SnapshotStrategy, type TamboStream, type TamboThread } from "../src/index.js"
import { makeClient, settle, until, useServer, waitFor, whenTrue } from "./helpers.js"

const server = useServer()

const SENTENCE = "The quick brown fox jumps over the lazy dog, then naps in the warm afternoon sun."
/** Word pieces as a model streams them: a leading space starts a word. */
const DELTAS = SENTENCE.split(/(?= )/u).flatMap((word) => word.length > 4 ? [word.slice(0, 3), word.slice(3)] : [word])

/** The text of a thread's last assistant message. */
const replyOf = (thread: TamboThread): string => {
  const message = thread.messages.filter((m) => m.role === "assistant").at(-1)
  return (message?.content ?? []).map((block) => (block.type === "text" ? block.text : "")).join("")
}

/**
 * Reads a run's events (the iterator is created now, before any arrived): pushes the reply's
 * text at each event to `live`, counts them, and collects the texts of the snapshots several
 * text deltas shared (deltas the network delivered together share their chunk's snapshot,
 * which may run into the next word).
 */
const readEvents = (stream: TamboStream, live: Array<string> = []): Promise<{ readonly count: number; readonly coalesced: Set<string> }> =>
  (async () => {
    let count = 0
    const deltas = new Map<TamboThread, number>()
    for await (const { event, snapshot } of stream) {
      count++
      live.push(replyOf(snapshot))
      if (event.type === "TEXT_MESSAGE_CONTENT") deltas.set(snapshot, (deltas.get(snapshot) ?? 0) + 1)
    }
    return { count, coalesced: new Set([...deltas].filter(([, n]) => n > 1).map(([thread]) => replyOf(thread))) }
  })()

/** Settles once `shown` holds `text`, looking from when the run reaches it. */
const whenShown = (shown: ReadonlyArray<string>, text: string) => whenTrue(() => shown.includes(text), `"${text}" shown`)

/** The reply's first `n` deltas. */
const prefix = (n: number) => DELTAS.slice(0, n).join("")

/**
 * The reply delta by delta from delta `from`: after each delta `i` the run waits until every
 * `[shown, text]` that `waits(i)` gives was shown, so each delta reaches the readers a test
 * counts on on its own, however slow the machine.
 */
const deltaByDelta = (waits: (i: number) => ReadonlyArray<readonly [shown: ReadonlyArray<string>, text: string]>, from = 0) =>
  DELTAS.slice(from).flatMap((delta, j) => [Script.text(delta), ...waits(from + j).map((pair) => Script.hold(whenShown(...pair)))])

describe("stream.snapshots({ strategy })", () => {
  it("throttle: fewer snapshots than events, the last one the final thread", async () => {
    expect(DELTAS.join("")).toBe(SENTENCE)
    const live: Array<string> = []
    const shown: Array<string> = []
    const half = Math.floor(DELTAS.length / 2)
    // Each delta goes on once the event reader saw it, so it reaches the throttle on its own
    // however slow the machine; after the first half the run waits for the throttle to show it,
    // so a snapshot comes while the run streams.
    server().setScript(() =>
      deltaByDelta((i) => [[live, prefix(i + 1)], ...(i + 1 === half ? [[shown, prefix(half)] as const] : [])])
    )
    const client = makeClient(server())
    const stream = client.run("go")
    const events = readEvents(stream, live)
    const seen: Array<TamboThread> = []
    for await (const thread of stream.snapshots({ strategy: SnapshotStrategy.throttle("1 second") })) {
      seen.push(thread)
      shown.push(replyOf(thread))
    }
    const final = await stream.thread
    expect((await events).count).toBeGreaterThan(DELTAS.length)
    expect(seen.length).toBeGreaterThan(1)
    expect(seen.length).toBeLessThan(DELTAS.length / 2)
    expect(seen.at(-1)).toBe(final)
    expect(replyOf(seen.at(-1)!)).toBe(SENTENCE)
    // Never the same snapshot twice in a row.
    expect(seen.every((thread, i) => i === 0 || thread !== seen[i - 1])).toBe(true)
  })

  it("wordBoundary: every snapshot shows whole words", async () => {
    const live: Array<string> = []
    const texts: Array<string> = []
    // Each delta goes on once the event reader saw it, and a delta that starts a word once the
    // strategy showed the words before it: every word shows, whatever the machine's speed.
    server().setScript(() =>
      deltaByDelta((i) => [[live, prefix(i + 1)], ...(i > 0 && DELTAS[i]!.startsWith(" ") ? [[texts, prefix(i)] as const] : [])])
    )
    const client = makeClient(server())
    const stream = client.run("go")
    const events = readEvents(stream, live)
    for await (const thread of stream.snapshots({ strategy: SnapshotStrategy.wordBoundary })) texts.push(replyOf(thread))
    expect(texts.at(-1)).toBe(SENTENCE)
    const shared = (await events).coalesced
    const partial = texts.filter((text) => text.length > 0 && text !== SENTENCE && !shared.has(text))
    expect(partial.length).toBeGreaterThan(3)
    for (const text of partial) {
      expect(SENTENCE.startsWith(text)).toBe(true)
      // The next character starts a word: the snapshot ends on a whole word.
      expect(SENTENCE[text.length]).toBe(" ")
    }
  })

  it("the default is every change, conflated; several strategies can read one run", async () => {
    const shown: Array<string> = []
    // Each delta goes on once the conflating reader showed it, so none is conflated away.
    server().setScript(() => deltaByDelta((i) => [[shown, prefix(i + 1)]]))
    const client = makeClient(server())
    const stream = client.run("go")
    const read = async (iterator: AsyncIterableIterator<TamboThread>, texts: Array<string> = []) => {
      const seen: Array<TamboThread> = []
      for await (const thread of iterator) {
        seen.push(thread)
        texts.push(replyOf(thread))
      }
      return seen
    }
    const [all, everyFifth] = await Promise.all([
      read(stream.snapshots(), shown),
      read(stream.snapshots({ strategy: SnapshotStrategy.everyN(5) }))
    ])
    const final = await stream.thread
    expect(all.at(-1)).toBe(final)
    expect(everyFifth.at(-1)).toBe(final)
    expect(everyFifth.length).toBeLessThan(all.length)
  })

  it("a failed run yields its final thread, then throws the run's error", async () => {
    // The server keeps the partial reply: the thread read once the run ended still holds it.
    server().setScript([Script.pace(5), Script.text(["Half", " a", " reply"]), Script.runError({ message: "model down", keepPartial: true })])
    const client = makeClient(server())
    const stream = client.run("go")
    const seen: Array<TamboThread> = []
    const outcome = await settle((async () => {
      for await (const thread of stream.snapshots({ strategy: SnapshotStrategy.debounce("1 second") })) seen.push(thread)
    })())
    expect(outcome.ok).toBe(false)
    if (!outcome.ok) expect(outcome.error).toMatchObject({ _tag: "ApiError", reason: "RunError" })
    const last = seen.at(-1)!
    expect(last).toBe(client.getThread(last.id))
    expect(client.getState().threadMap[last.id]?.streaming.error?.message).toBe("model down")
    expect(replyOf(last)).toBe("Half a reply")
  })

  it("an iterator made after the run ended yields the final thread once", async () => {
    server().setScript([Script.text("done")])
    const client = makeClient(server())
    const stream = client.run("go")
    const final = await stream.thread
    const seen: Array<TamboThread> = []
    for await (const thread of stream.snapshots({ strategy: SnapshotStrategy.throttle("1 second") })) seen.push(thread)
    expect(seen).toEqual([final])
  })

  it("leaving the loop early cancels the run", async () => {
    server().setScript([Script.pace(20), Script.text(DELTAS), Script.hang()])
    const client = makeClient(server())
    const stream = client.run("go")
    for await (const thread of stream.snapshots({ strategy: SnapshotStrategy.wordBoundary })) {
      if (replyOf(thread).length > 10) break
    }
    const outcome = await settle(stream.thread)
    expect(outcome.ok || outcome.error.name).toBe("AbortError")
    await waitFor(() => server().cancels.length === 1, "the server to record the cancel")
  })

  it("return() while a next() waits for a snapshot ends that next() too, as the other iterators do", async () => {
    let open!: () => void
    const opened = new Promise<void>((resolve) => (open = resolve))
    // The server answers nothing until the end of the test: every next() waits.
    server().setScript(Script.beforeResponse(async () => {
      await opened
      return [Script.text("late")]
    }))
    const client = makeClient(server())
    try {
      const iterators = {
        events: (stream: TamboStream) => stream[Symbol.asyncIterator](),
        snapshots: (stream: TamboStream) => stream.snapshots(),
        strategy: (stream: TamboStream) => stream.snapshots({ strategy: SnapshotStrategy.wordBoundary })
      }
      for (const [name, make] of Object.entries(iterators)) {
        const iterator = make(client.run(name, { threadId: client.startNewThread() }))
        const waiting = iterator.next()
        await iterator.return!()
        expect([name, await waiting]).toEqual([name, { done: true, value: undefined }])
      }
    } finally {
      open()
    }
  })
})

describe("client.subscribeToSnapshots", () => {
  it("delivers each run's first snapshot, the strategy's, and the final one; unsubscribing cancels nothing", async () => {
    const live: Array<string> = []
    const shown: Array<string> = []
    const half = Math.floor(DELTAS.length / 2)
    // The reply starts once the listener got the run's first snapshot; then, as in the throttle
    // test, it goes delta by delta as the event reader sees each, and after the first half waits
    // until the listener was shown it.
    server().setScript(() => [
      Script.hold(whenShown(shown, "")),
      ...deltaByDelta((i) => [[live, prefix(i + 1)], ...(i + 1 === half ? [[shown, prefix(half)] as const] : [])])
    ])
    const client = makeClient(server())
    const received: Array<RunSnapshot> = []
    const unsubscribe = client.subscribeToSnapshots((snapshot) => {
      received.push(snapshot)
      shown.push(replyOf(snapshot.thread))
    }, { strategy: SnapshotStrategy.throttle("1 second") })
    const stream = client.run("go")
    const events = readEvents(stream, live)
    const final = await stream.thread
    // The final snapshot follows the run's end, once the pipeline drained.
    await waitFor(() => received.at(-1)?.final === true, "the final snapshot")
    expect(received.length).toBeGreaterThan(2)
    expect(received.length).toBeLessThan((await events).count / 2)
    expect(received.every((s) => s.stream === stream && s.threadId === final.id)).toBe(true)
    expect(received.map((s) => s.final)).toEqual([...received.slice(1).map(() => false), true])
    expect(received.at(-1)!.thread).toBe(final)
    // The first snapshot came with the run's first event: no text yet.
    expect(replyOf(received[0]!.thread)).toBe("")

    // A second run, observed from its middle; unsubscribing leaves it running.
    // The second run waits after its first half until the late listener subscribed, then goes on
    // delta by delta as that listener is shown each.
    let subscribed!: () => void
    const lateSubscribed = new Promise<void>((resolve) => (subscribed = resolve))
    const lateShown: Array<string> = []
    server().setScript(() => [
      Script.text(DELTAS.slice(0, half)),
      Script.hold(lateSubscribed),
      ...deltaByDelta((i) => [[lateShown, prefix(i + 1)]], half)
    ])
    const second = client.run("again", { threadId: final.id })
    await until(() => replyOf(client.getThread(final.id)!) === prefix(half), "the second run's first half")
    const late: Array<RunSnapshot> = []
    const unsubscribeLate = client.subscribeToSnapshots((snapshot) => {
      late.push(snapshot)
      lateShown.push(replyOf(snapshot.thread))
    })
    unsubscribe()
    subscribed()
    const count = received.length
    const secondFinal = await second.thread
    await waitFor(() => late.at(-1)?.final === true, "the final snapshot")
    expect(received.length).toBe(count)
    expect(late.at(-1)).toMatchObject({ final: true, thread: secondFinal, stream: second })
    expect(late.length).toBeGreaterThan(2)
    unsubscribeLate()
  })

  it("a listener that throws is logged and still gets the run's next snapshots, the final one last", async () => {
    server().setScript([Script.text(["a", "b", "c"])])
    const client = makeClient(server())
    // The facade logs a throwing listener through Effect's default logger, to the console.
    const consoleLog = vi.spyOn(console, "log").mockImplementation(() => undefined)
    const received: Array<RunSnapshot> = []
    client.subscribeToSnapshots((snapshot) => {
      received.push(snapshot)
      if (received.length === 1) throw new Error("the listener broke")
    })
    const final = await client.run("go").thread
    await waitFor(() => received.at(-1)?.final === true, "the final snapshot")
    // The first snapshot threw; the final one still came.
    expect(received.map((snapshot) => snapshot.final)).toEqual([...received.slice(1).map(() => false), true])
    expect(received.at(-1)!.thread).toBe(final)
    expect(consoleLog.mock.calls.map((call) => String(call[0]))).toEqual([
      expect.stringContaining("A listener of subscribeToSnapshots threw: Error: the listener broke")
    ])
    consoleLog.mockRestore()
  })

  it("a custom strategy that throws is logged and publishes nothing more; its iterator and listeners still get the final thread", async () => {
    server().setScript([Script.text(["a", "b", "c"])])
    const client = makeClient(server())
    const consoleLog = vi.spyOn(console, "log").mockImplementation(() => undefined)
    const broken = SnapshotStrategy.custom(() => {
      throw new Error("the strategy broke")
    })
    const heard: Array<RunSnapshot> = []
    client.subscribeToSnapshots((snapshot) => heard.push(snapshot), { strategy: broken })
    const stream = client.run("go")
    const seen: Array<TamboThread> = []
    for await (const thread of stream.snapshots({ strategy: broken })) seen.push(thread)
    const final = await stream.thread
    expect(seen.at(-1)).toBe(final)
    await waitFor(() => heard.at(-1)?.final === true, "the final snapshot")
    expect(heard.at(-1)!.thread).toBe(final)
    expect(consoleLog.mock.calls.map((call) => String(call[0]))).toContainEqual(
      expect.stringContaining("A snapshot strategy threw: Error: the strategy broke")
    )
    consoleLog.mockRestore()
  })
})
