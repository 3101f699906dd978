import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Streams from "../src/internal/streams.js"
import { makeTracer, type RecordedSpan } from "./tracing.js"

describe("Streams", () => {
  it.effect("unwrap: the effect runs when the stream runs, then its stream, chunks kept", () =>
    Effect.gen(function* () {
      let runs = 0
      const stream = Streams.unwrap(Effect.sync(() => {
        runs++
        return Stream.fromChunks(Chunk.make(1, 2), Chunk.make(3))
      }))
      expect(runs).toBe(0)
      const chunks = yield* Stream.runCollect(Stream.mapChunks(stream, (c) => Chunk.of(Chunk.toReadonlyArray(c))))
      expect(Chunk.toReadonlyArray(chunks)).toEqual([[1, 2], [3]])
      expect(runs).toBe(1)
      expect(yield* Effect.flip(Stream.runCollect(Streams.unwrap(Effect.fail("no") as Effect.Effect<Stream.Stream<number>, string>)))).toBe("no")
    }))

  describe("unwrapScopedInSpan", () => {
    const named = (spans: ReadonlyArray<RecordedSpan>, name: string) => spans.find((s) => s.name === name)!
    /** What happened, in order: the scope's release and the span's end, as the span's status tells. */
    const scoped = (log: Array<string>, spans: ReadonlyArray<RecordedSpan>, inner: Stream.Stream<number, string>) =>
      Streams.unwrapScopedInSpan("work", {}, (span) =>
        Effect.gen(function* () {
          // The effect runs with the span as its parent and with the scope.
          const child = yield* Effect.makeSpan("child")
          log.push(`parent ${Option.map(child.parent, (p) => p === span).pipe(Option.getOrElse(() => false))}`)
          yield* Effect.addFinalizer((exit) =>
            Effect.sync(() =>
              log.push(
                `release ${Exit.isSuccess(exit) ? "done" : Exit.isInterrupted(exit) ? "interrupted" : "failed"}, span ${
                  named(spans, "work").status._tag
                }`
              )
            )
          )
          return inner
        }))

    it.effect("the effect sees the span as parent and the scope; the scope closes with the exit, then the span ends", () => {
      const { layer, spans } = makeTracer()
      return Effect.gen(function* () {
        const log: Array<string> = []
        const stream = scoped(log, spans, Stream.make(1, 2))
        expect(spans).toHaveLength(0)
        expect(Chunk.toReadonlyArray(yield* Stream.runCollect(stream))).toEqual([1, 2])
        expect(log).toEqual(["parent true", "release done, span Started"])
        const work = named(spans, "work")
        expect(work.status._tag === "Ended" && Exit.isSuccess(work.status.exit)).toBe(true)
      }).pipe(Effect.provide(layer))
    })

    it.effect("a failing stream releases as failed and ends its span with the failure", () => {
      const { layer, spans } = makeTracer()
      return Effect.gen(function* () {
        const log: Array<string> = []
        const exit = yield* Effect.exit(Stream.runDrain(scoped(log, spans, Stream.concat(Stream.make(1), Stream.fail("boom")))))
        expect(exit).toEqual(Exit.fail("boom"))
        expect(log).toEqual(["parent true", "release failed, span Started"])
        expect(named(spans, "work").exit).toEqual(Exit.fail("boom"))
      }).pipe(Effect.provide(layer))
    })

    it.live("an interrupted consumer releases as interrupted and ends the span interrupted", () => {
      const { layer, spans } = makeTracer()
      return Effect.gen(function* () {
        const log: Array<string> = []
        const started = yield* Effect.makeLatch()
        const fiber = yield* Effect.fork(
          Stream.runDrain(scoped(log, spans, Stream.concat(Stream.fromEffect(Effect.as(started.open, 1)), Stream.never)))
        )
        yield* started.await
        yield* Fiber.interrupt(fiber)
        expect(log).toEqual(["parent true", "release interrupted, span Started"])
        const work = named(spans, "work")
        expect(work.exit !== undefined && Exit.isInterrupted(work.exit)).toBe(true)
      }).pipe(Effect.provide(layer))
    })

    it.effect("a consumer that stops early releases once and ends the span", () => {
      const { layer, spans } = makeTracer()
      return Effect.gen(function* () {
        const log: Array<string> = []
        const taken = yield* Stream.runCollect(Stream.take(scoped(log, spans, Stream.iterate(1, (n) => n + 1)), 2))
        expect(Chunk.toReadonlyArray(taken)).toEqual([1, 2])
        expect(log.filter((line) => line.startsWith("release"))).toHaveLength(1)
        expect(log.at(-1)).toMatch(/^release .*, span Started$/)
        expect(named(spans, "work").status._tag).toBe("Ended")
      }).pipe(Effect.provide(layer))
    })

    it.effect("a finalizer that dies still lets the span end", () => {
      const { layer, spans } = makeTracer()
      return Effect.gen(function* () {
        const stream = Streams.unwrapScopedInSpan("work", {}, () =>
          Effect.as(Effect.addFinalizer(() => Effect.die("finalizer broke")), Stream.make(1)))
        const exit = yield* Effect.exit(Stream.runDrain(stream))
        expect(Exit.isFailure(exit) && exit.cause._tag !== "Empty").toBe(true)
        expect(named(spans, "work").status._tag).toBe("Ended")
      }).pipe(Effect.provide(layer))
    })

    it.effect("a failure in the effect releases what it acquired and ends the span with it", () => {
      const { layer, spans } = makeTracer()
      return Effect.gen(function* () {
        const log: Array<string> = []
        const stream = Streams.unwrapScopedInSpan("work", {}, () =>
          Effect.zipRight(
            Effect.acquireRelease(Effect.sync(() => log.push("open")), () => Effect.sync(() => log.push("close"))),
            Effect.fail("refused") as Effect.Effect<Stream.Stream<number>, string>
          ))
        expect(yield* Effect.exit(Stream.runDrain(stream))).toEqual(Exit.fail("refused"))
        expect(log).toEqual(["open", "close"])
        expect(named(spans, "work").exit).toEqual(Exit.fail("refused"))
      }).pipe(Effect.provide(layer))
    })
  })
})
