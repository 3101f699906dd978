import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as SnapshotStrategy from "../src/SnapshotStrategy.js"
import type * as Tambo from "../src/Tambo.js"
import type * as Transport from "../src/TamboTransport.js"
import type * as Types from "../src/Types.js"

// ---------------------------------------------------------------------------
// Synthetic runs: every event carries its own snapshot, a distinct object
// labelled through `name`, so the output reads as a list of labels.
// ---------------------------------------------------------------------------

const thread = (label: string): Types.TamboThread => ({
  id: "thread-1",
  name: label,
  messages: [],
  status: "streaming",
  createdAt: "2025-01-01T00:00:00.000Z",
  updatedAt: "2025-01-01T00:00:00.000Z",
  lastRunCancelled: false
})

const at = (event: Transport.RunStreamEvent, label: string, snapshot = thread(label)): Tambo.RunEvent => ({
  event,
  threadId: "thread-1",
  snapshot
})

const text = (delta: string, label = delta) => at({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta }, label)
const messageStart = (label = "start") => at({ type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" }, label)
const messageEnd = (label = "end") => at({ type: "TEXT_MESSAGE_END", messageId: "m1" }, label)
const toolArgs = (delta: string, label = delta) => at({ type: "TOOL_CALL_ARGS", toolCallId: "c1", delta }, label)
const runFinished = (label = "finished") => at({ type: "RUN_FINISHED", threadId: "thread-1", runId: "r1" }, label)
const step = (label: string) => at({ type: "STEP_STARTED", stepName: label }, label)

const labels = (threads: Iterable<Types.TamboThread>) => Array.from(threads, (t) => t.name ?? "?")

/** The labels a strategy lets through an untimed run. */
const published = (events: ReadonlyArray<Tambo.RunEvent>, strategy: SnapshotStrategy.Strategy) =>
  Stream.fromIterable(events).pipe(
    SnapshotStrategy.snapshots(strategy),
    Stream.runCollect,
    Effect.map(labels)
  )

const sleepUntil = (millis: number) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sleep(Duration.millis(Math.max(0, millis - now))))

/**
 * Each event at its time (ms on the TestClock, from when the stream starts);
 * the stream ends at `endAt` (default: right after the last event).
 */
const timeline = (events: ReadonlyArray<readonly [number, Tambo.RunEvent]>, endAt?: number) =>
  Stream.unwrap(Effect.map(Clock.currentTimeMillis, (start) =>
    Stream.fromIterable(events).pipe(
      Stream.mapEffect(([millis, event]) => Effect.as(sleepUntil(start + millis), event)),
      Stream.concat(endAt === undefined ? Stream.empty : Stream.drain(Stream.fromEffect(sleepUntil(start + endAt))))
    )))

/** Runs a timed stream on the TestClock; `label@ms` (from the start) for each published snapshot. */
const publishedOverTime = <E>(source: Stream.Stream<Tambo.RunEvent, E>, strategy: SnapshotStrategy.Strategy) =>
  Effect.gen(function* () {
    const start = yield* Clock.currentTimeMillis
    const fiber = yield* source.pipe(
      SnapshotStrategy.snapshots(strategy),
      Stream.mapEffect((t) => Effect.map(Clock.currentTimeMillis, (now) => `${t.name}@${now - start}`)),
      Stream.runCollect,
      Effect.fork
    )
    yield* TestClock.adjust("1 hour")
    return Chunk.toReadonlyArray(yield* Fiber.join(fiber))
  })

/** Everything emitted before the stream ended, and how it ended. */
const publishedUntilExit = <E>(source: Stream.Stream<Tambo.RunEvent, E>, strategy: SnapshotStrategy.Strategy) =>
  Effect.gen(function* () {
    const seen: Array<string> = []
    const fiber = yield* source.pipe(
      SnapshotStrategy.snapshots(strategy),
      Stream.runForEach((t) => Effect.sync(() => seen.push(t.name ?? "?"))),
      Effect.fork
    )
    yield* TestClock.adjust("1 hour")
    const exit = yield* Fiber.await(fiber)
    return { seen, exit }
  })

// ---------------------------------------------------------------------------

describe("immediate", () => {
  it.effect("publishes every snapshot, in order", () =>
    Effect.gen(function* () {
      const events = [messageStart(), text("Hel"), text("lo"), messageEnd(), runFinished()]
      expect(yield* published(events, SnapshotStrategy.immediate)).toEqual(["start", "Hel", "lo", "end", "finished"])
    }))

  it.effect("a snapshot shared by consecutive events (one chunk of the run) is emitted once", () =>
    Effect.gen(function* () {
      const chunk = thread("chunk")
      const events = [
        text("a"),
        at({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "b" }, "chunk", chunk),
        at({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "c" }, "chunk", chunk),
        at({ type: "TEXT_MESSAGE_END", messageId: "m1" }, "chunk", chunk)
      ]
      expect(yield* published(events, SnapshotStrategy.immediate)).toEqual(["a", "chunk"])
    }))

  it.effect("an empty run publishes nothing", () =>
    Effect.gen(function* () {
      expect(yield* published([], SnapshotStrategy.immediate)).toEqual([])
      expect(yield* published([], SnapshotStrategy.throttle("1 second"))).toEqual([])
    }))
})

describe("everyN", () => {
  it.effect("publishes every n-th event, then the final one", () =>
    Effect.gen(function* () {
      const events = ["1", "2", "3", "4", "5", "6", "7"].map((d) => text(d))
      expect(yield* published(events, SnapshotStrategy.everyN(3))).toEqual(["3", "6", "7"])
      expect(yield* published(events.slice(0, 6), SnapshotStrategy.everyN(3))).toEqual(["3", "6"])
    }))

  it.effect("counts every event, not only text", () =>
    Effect.gen(function* () {
      const events = [messageStart(), text("a"), toolArgs("{"), step("s"), text("b"), runFinished()]
      expect(yield* published(events, SnapshotStrategy.everyN(2))).toEqual(["a", "s", "finished"])
    }))

  it.effect("n below 1, NaN or fractional is clamped", () =>
    Effect.gen(function* () {
      const events = ["1", "2", "3", "4", "5"].map((d) => text(d))
      expect(SnapshotStrategy.everyN(0)).toEqual({ _tag: "EveryN", n: 1 })
      expect(SnapshotStrategy.everyN(Number.NaN)).toEqual({ _tag: "EveryN", n: 1 })
      expect(yield* published(events, SnapshotStrategy.everyN(-3))).toEqual(["1", "2", "3", "4", "5"])
      expect(yield* published(events, SnapshotStrategy.everyN(2.9))).toEqual(["2", "4", "5"])
      // A hand-built value goes through the same clamp.
      expect(yield* published(events, { _tag: "EveryN", n: 0 })).toEqual(["1", "2", "3", "4", "5"])
    }))
})

describe("wordBoundary", () => {
  it.effect("a delta starting with whitespace publishes the event before it", () =>
    Effect.gen(function* () {
      const events = [
        messageStart(),
        text("Hel"),
        text("lo"),
        text(" wor"),
        text("ld"),
        text("."),
        text(" Bye"),
        messageEnd(),
        runFinished()
      ]
      expect(yield* published(events, SnapshotStrategy.wordBoundary)).toEqual(["start", "lo", ".", "end", "finished"])
    }))

  it.effect("a delta ending with whitespace is published at once", () =>
    Effect.gen(function* () {
      const events = [text("Hello "), text("wor"), text("ld\n"), text("again"), text("\tand")]
      expect(yield* published(events, SnapshotStrategy.wordBoundary)).toEqual(["Hello ", "ld\n", "again", "\tand"])
    }))

  it.effect("every event that is not a text delta passes; reasoning text is judged as text", () =>
    Effect.gen(function* () {
      const events = [
        at({ type: "REASONING_MESSAGE_CONTENT", messageId: "r1", delta: "hmm" }, "hmm"),
        at({ type: "THINKING_TEXT_MESSAGE_CONTENT", delta: "ok " }, "ok "),
        text("Par"),
        toolArgs("{\"ci"),
        text("is"),
        step("step")
      ]
      expect(yield* published(events, SnapshotStrategy.wordBoundary)).toEqual(["ok ", "{\"ci", "step"])
    }))

  it.effect("a word without an end waits for the final snapshot", () =>
    Effect.gen(function* () {
      const events = [text("super"), text("cali"), text("fragilistic")]
      expect(yield* published(events, SnapshotStrategy.wordBoundary)).toEqual(["fragilistic"])
    }))
})

describe("punctuation", () => {
  it.effect("publishes when a delta ends a clause", () =>
    Effect.gen(function* () {
      const events = [
        messageStart(),
        text("Hello"),
        text(", wor"),
        text("ld!"),
        text(" How"),
        text(" are"),
        text(" you?\n"),
        text("Fine")
      ]
      expect(yield* published(events, SnapshotStrategy.punctuation)).toEqual(["start", "ld!", " you?\n", "Fine"])
    }))

  it.effect("closing quotes, brackets, trailing space and full-width marks count", () =>
    Effect.gen(function* () {
      const events = [
        text("He said"),
        text(" \"no.\""),
        text(" (see"),
        text(" above)"),
        text(" end;) "),
        text("你好"),
        text("。"),
        text("x")
      ]
      expect(yield* published(events, SnapshotStrategy.punctuation)).toEqual([" \"no.\"", " end;) ", "。", "x"])
    }))
})

describe("custom", () => {
  it.effect("sees every event once, with the count since the last published one", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const strategy = SnapshotStrategy.custom((runEvent, since) => {
        calls.push(`${runEvent.event.type}:${since}`)
        return runEvent.event.type === "TEXT_MESSAGE_END" || since >= 3
      })
      const events = [messageStart(), text("a"), text("b"), text("c"), messageEnd(), runFinished()]
      expect(yield* published(events, strategy)).toEqual(["b", "end", "finished"])
      expect(calls).toEqual([
        "TEXT_MESSAGE_START:1",
        "TEXT_MESSAGE_CONTENT:2",
        "TEXT_MESSAGE_CONTENT:3",
        "TEXT_MESSAGE_CONTENT:1",
        "TEXT_MESSAGE_END:2",
        "RUN_FINISHED:1"
      ])
    }))

  it.effect("one predicate used twice in a combination is still called once per event", () =>
    Effect.gen(function* () {
      let calls = 0
      const predicate = () => {
        calls++
        return false
      }
      const events = [text("a"), text("b"), text("c")]
      const strategy = SnapshotStrategy.any(SnapshotStrategy.custom(predicate), SnapshotStrategy.custom(predicate))
      expect(yield* published(events, strategy)).toEqual(["c"])
      expect(calls).toBe(3)
    }))
})

describe("throttle", () => {
  it.effect("leading and trailing: at most one snapshot per duration, the newest one", () =>
    Effect.gen(function* () {
      const source = timeline([
        [0, text("a")],
        [10, text("b")],
        [50, text("c")],
        [120, text("d")],
        [130, text("e")],
        [400, text("f")]
      ])
      expect(yield* publishedOverTime(source, SnapshotStrategy.throttle("100 millis"))).toEqual([
        "a@0",
        "c@100",
        "e@200",
        "f@400"
      ])
    }))

  it.effect("the final snapshot is not held back by the window", () =>
    Effect.gen(function* () {
      const source = timeline([[0, text("a")], [10, text("b")], [20, text("c")]], 30)
      expect(yield* publishedOverTime(source, SnapshotStrategy.throttle("100 millis"))).toEqual(["a@0", "c@30"])
    }))

  it.effect("a steady stream is published once per window", () =>
    Effect.gen(function* () {
      // Every 7 ms, so no event lands on a window's edge.
      const events = Array.from({ length: 50 }, (_, i) => [i * 7, text(`t${i}`)] as const)
      const out = yield* publishedOverTime(timeline(events), SnapshotStrategy.throttle("100 millis"))
      expect(out).toEqual(["t0@0", "t14@100", "t28@200", "t42@300", "t49@343"])
    }))
})

describe("debounce", () => {
  it.effect("publishes the newest snapshot after a quiet period", () =>
    Effect.gen(function* () {
      const source = timeline([
        [0, text("a")],
        [10, text("b")],
        [20, text("c")],
        [100, text("d")],
        [200, text("e")]
      ])
      expect(yield* publishedOverTime(source, SnapshotStrategy.debounce("50 millis"))).toEqual([
        "c@70",
        "d@150",
        "e@200"
      ])
    }))

  it.effect("a stream that never pauses only publishes its final snapshot", () =>
    Effect.gen(function* () {
      const events = Array.from({ length: 50 }, (_, i) => [i * 10, text(`t${i}`)] as const)
      const out = yield* publishedOverTime(timeline(events), SnapshotStrategy.debounce("20 millis"))
      expect(out).toEqual(["t49@490"])
    }))

  it.effect("a zero duration is immediate", () =>
    Effect.gen(function* () {
      const source = timeline([[0, text("a")], [10, text("b")]])
      expect(yield* publishedOverTime(source, SnapshotStrategy.debounce(0))).toEqual(["a@0", "b@10"])
      expect(yield* publishedOverTime(source, SnapshotStrategy.throttle(Duration.zero))).toEqual(["a@0", "b@10"])
    }))
})

describe("combinations", () => {
  it.effect("any(wordBoundary, throttle): boundaries at once, otherwise at least once per window", () =>
    Effect.gen(function* () {
      const source = timeline([
        [0, text("super")],
        [40, text("cali")],
        [80, text("fragi")],
        [120, text("listic")],
        [130, text(" and")],
        [300, text("more")]
      ], 500)
      const strategy = SnapshotStrategy.any(SnapshotStrategy.wordBoundary, SnapshotStrategy.throttle("100 millis"))
      expect(yield* publishedOverTime(source, strategy)).toEqual([
        "super@0", // leading edge of the throttle
        "fragi@100", // trailing edge
        "listic@130", // the word ended: " and" starts with a space
        " and@230", // trailing edge, a window after that publish
        "more@330" // the window after 230 was still closed at 300
      ])
    }))

  it.effect("all(wordBoundary, throttle): boundaries only, at most once per window; the trailing edge shows the newest boundary", () =>
    Effect.gen(function* () {
      const source = timeline([
        [0, text("One ")],
        [20, text("two ")],
        [40, text("thr")],
        [60, text("ee ")],
        [80, text("fo")],
        [250, text("ur")]
      ])
      const strategy = SnapshotStrategy.all(SnapshotStrategy.wordBoundary, SnapshotStrategy.throttle("100 millis"))
      expect(yield* publishedOverTime(source, strategy)).toEqual(["One @0", "ee @100", "ur@250"])
    }))

  it.effect("any(everyN, debounce): every n events, and what is left once the run pauses", () =>
    Effect.gen(function* () {
      const source = timeline([
        [0, text("1")],
        [5, text("2")],
        [10, text("3")],
        [15, text("4")],
        [200, text("5")],
        [205, text("6")],
        [210, text("7")],
        [215, text("8")]
      ], 1000)
      const strategy = SnapshotStrategy.any(SnapshotStrategy.everyN(3), SnapshotStrategy.debounce("50 millis"))
      expect(yield* publishedOverTime(source, strategy)).toEqual(["3@10", "4@65", "7@210", "8@265"])
    }))

  it.effect("all(everyN, wordBoundary): at a word boundary once at least n events went by", () =>
    Effect.gen(function* () {
      const events = [text("Hel"), text("lo "), text("wor"), text("ld"), text(" and"), text(" so "), text("on")]
      const strategy = SnapshotStrategy.all(SnapshotStrategy.everyN(3), SnapshotStrategy.wordBoundary)
      expect(yield* published(events, strategy)).toEqual(["ld", "on"])
    }))

  it.effect("nested: any(all(wordBoundary, throttle), debounce)", () =>
    Effect.gen(function* () {
      const source = timeline([
        [0, text("a ")],
        [10, text("b ")],
        [20, text("c")],
        [200, text("d")]
      ])
      const strategy = SnapshotStrategy.any(
        SnapshotStrategy.all(SnapshotStrategy.wordBoundary, SnapshotStrategy.throttle("100 millis")),
        SnapshotStrategy.debounce("60 millis")
      )
      // "b " is the newest boundary when the window reopens at 100, but the
      // debounce already published c at 80, which settled b.
      expect(yield* publishedOverTime(source, strategy)).toEqual(["a @0", "c@80", "d@200"])
    }))

  it.effect("any() publishes only the final snapshot; all() is immediate", () =>
    Effect.gen(function* () {
      const events = [text("a"), text("b"), text("c")]
      expect(yield* published(events, SnapshotStrategy.any())).toEqual(["c"])
      expect(yield* published(events, SnapshotStrategy.all())).toEqual(["a", "b", "c"])
      expect(yield* published(events, SnapshotStrategy.any(SnapshotStrategy.everyN(2), SnapshotStrategy.immediate)))
        .toEqual(["a", "b", "c"])
    }))
})

describe("final snapshot and conflation", () => {
  it.effect("the last event's snapshot is always the last one emitted", () =>
    Effect.gen(function* () {
      const events = [messageStart(), text("a"), text("b"), step("last")]
      const strategies: ReadonlyArray<SnapshotStrategy.Strategy> = [
        SnapshotStrategy.immediate,
        SnapshotStrategy.everyN(100),
        SnapshotStrategy.wordBoundary,
        SnapshotStrategy.punctuation,
        SnapshotStrategy.custom(() => false),
        SnapshotStrategy.any(),
        SnapshotStrategy.all(SnapshotStrategy.everyN(2), SnapshotStrategy.custom(() => false))
      ]
      for (const strategy of strategies) {
        const out = yield* published(events, strategy)
        expect(out.at(-1)).toBe("last")
      }
      const timed = [SnapshotStrategy.throttle("1 second"), SnapshotStrategy.debounce("1 second")]
      for (const strategy of timed) {
        const out = yield* publishedOverTime(timeline(events.map((e, i) => [i, e] as const)), strategy)
        expect(out.at(-1)).toBe("last@3")
      }
    }))

  it.effect("the final snapshot is not repeated when it was already published", () =>
    Effect.gen(function* () {
      const events = [text("a"), text("b"), messageEnd()]
      expect(yield* published(events, SnapshotStrategy.wordBoundary)).toEqual(["end"])
      const final = thread("shared")
      const sharing = [
        text("a"),
        at({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "b " }, "shared", final),
        at({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "c" }, "shared", final)
      ]
      expect(yield* published(sharing, SnapshotStrategy.wordBoundary)).toEqual(["shared"])
    }))

  it.effect("several snapshots due at once: only the newest is emitted", () =>
    Effect.gen(function* () {
      // All arrive before the window reopens; the trailing edge emits only e.
      const source = timeline([
        [0, text("a")],
        [1, text("b")],
        [2, text("c")],
        [3, text("d")],
        [4, text("e")]
      ], 500)
      expect(yield* publishedOverTime(source, SnapshotStrategy.throttle("100 millis"))).toEqual(["a@0", "e@100"])
    }))

  it.effect("the output does not depend on how the source is chunked", () =>
    Effect.gen(function* () {
      const events = [
        messageStart(),
        text("Hel"),
        text("lo"),
        text(" wor"),
        text("ld."),
        toolArgs("{"),
        text(" Bye"),
        messageEnd(),
        runFinished()
      ]
      const strategies: ReadonlyArray<SnapshotStrategy.Strategy> = [
        SnapshotStrategy.wordBoundary,
        SnapshotStrategy.punctuation,
        SnapshotStrategy.everyN(2),
        SnapshotStrategy.all(SnapshotStrategy.everyN(2), SnapshotStrategy.wordBoundary)
      ]
      for (const strategy of strategies) {
        const whole = yield* published(events, strategy)
        const single = yield* Stream.fromIterable(events).pipe(
          Stream.rechunk(1),
          SnapshotStrategy.snapshots(strategy),
          Stream.runCollect,
          Effect.map(labels)
        )
        expect(single).toEqual(whole)
      }
    }))
})

describe("failure", () => {
  const boom = { _tag: "Boom" } as const

  it.effect("the last snapshot is emitted before the failure (untimed)", () =>
    Effect.gen(function* () {
      const source = Stream.concat(Stream.make(text("a"), text("b"), text("c")), Stream.fail(boom))
      const { exit, seen } = yield* publishedUntilExit(source, SnapshotStrategy.everyN(2))
      expect(seen).toEqual(["b", "c"])
      expect(exit).toStrictEqual(Exit.fail(boom))
    }))

  it.effect("the last snapshot is emitted before the failure (timed)", () =>
    Effect.gen(function* () {
      const source = Stream.concat(
        timeline([[0, text("a")], [10, text("b")], [20, text("c")]]),
        Stream.fromEffect(Effect.zipRight(sleepUntil(50), Effect.fail(boom)))
      )
      const { exit, seen } = yield* publishedUntilExit(source, SnapshotStrategy.throttle("100 millis"))
      expect(seen).toEqual(["a", "c"])
      expect(exit).toStrictEqual(Exit.fail(boom))
    }))

  it.effect("nothing extra when the last snapshot was already emitted", () =>
    Effect.gen(function* () {
      const source = Stream.concat(Stream.make(text("a"), text("b")), Stream.fail(boom))
      const { exit, seen } = yield* publishedUntilExit(source, SnapshotStrategy.immediate)
      expect(seen).toEqual(["a", "b"])
      expect(exit).toStrictEqual(Exit.fail(boom))
    }))
})

describe("snapshots", () => {
  it.effect("data-first and data-last forms agree", () =>
    Effect.gen(function* () {
      const events = [text("a"), text("b"), text("c")]
      const dataFirst = yield* Stream.runCollect(
        SnapshotStrategy.snapshots(Stream.fromIterable(events), SnapshotStrategy.everyN(2))
      )
      expect(labels(dataFirst)).toEqual(yield* published(events, SnapshotStrategy.everyN(2)))
    }))

  it.effect("a timed strategy ends with its source (no timer outlives it)", () =>
    Effect.gen(function* () {
      // The debounce timer would fire at 1000; the stream ends at 10 without waiting.
      const source = timeline([[0, text("a")], [10, text("b")]])
      const fiber = yield* source.pipe(
        SnapshotStrategy.snapshots(SnapshotStrategy.debounce("1 second")),
        Stream.runCollect,
        Effect.fork
      )
      yield* TestClock.adjust("10 millis")
      const out = yield* Fiber.join(fiber)
      expect(labels(out)).toEqual(["b"])
      expect(yield* Clock.currentTimeMillis).toBe(10)
    }))

  it.effect("taking fewer snapshots than the run has stops the source and the timers", () =>
    Effect.gen(function* () {
      const source = Stream.concat(timeline([[0, text("a")], [10, text("b")]]), Stream.never)
      const fiber = yield* source.pipe(
        SnapshotStrategy.snapshots(SnapshotStrategy.throttle("100 millis")),
        Stream.take(2),
        Stream.runCollect,
        Effect.fork
      )
      yield* TestClock.adjust("1 second")
      expect(labels(yield* Fiber.join(fiber))).toEqual(["a", "b"])
    }))

  it.effect("long runs: 50k events, untimed and timed", () =>
    Effect.gen(function* () {
      const size = 50_000
      const events = Array.from({ length: size }, (_, i) => text(i % 5 === 0 ? ` w${i}` : `x${i}`))
      // Boundaries after x4, x9, x14...: every other one is 10 events on.
      const untimed = yield* published(events, SnapshotStrategy.all(SnapshotStrategy.wordBoundary, SnapshotStrategy.everyN(10)))
      expect(untimed.length).toBe(size / 10)
      expect(untimed.slice(0, 3)).toEqual(["x9", "x19", "x29"])
      expect(untimed.at(-1)).toBe(`x${size - 1}`)
      // All at time 0, the clock never moves: the leading edge, then the final snapshot.
      const timed = yield* Stream.fromIterable(events).pipe(
        Stream.rechunk(16),
        SnapshotStrategy.snapshots(
          SnapshotStrategy.any(SnapshotStrategy.throttle("10 millis"), SnapshotStrategy.debounce("5 millis"))
        ),
        Stream.runCollect,
        Effect.map(labels)
      )
      expect(timed).toEqual([" w0", `x${size - 1}`])
    }))
})
