/**
 * The stream of snapshots of a strategy with time rules: the source and a
 * timer feed one queue of signals, which the publisher reads. Unlike
 * `Stream.merge`, which forks a fiber per chunk, this costs one offer per
 * chunk and one take per batch of what arrived meanwhile; the timer fiber
 * only restarts when an earlier wake-up is needed.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Tambo from "../../Tambo.js"
import type * as Types from "../../Types.js"
import type { Plan } from "./plan.js"
import { Publisher, withFinal } from "./publisher.js"

/** What the publisher of a timed strategy reacts to, in arrival order. */
type Signal<E> =
  | { readonly _tag: "Events"; readonly events: Chunk.Chunk<Tambo.RunEvent> }
  | { readonly _tag: "Tick" }
  | { readonly _tag: "End" }
  | { readonly _tag: "Halt"; readonly cause: Cause.Cause<E> }

const tickSignal: Signal<never> = { _tag: "Tick" }
const endSignal: Signal<never> = { _tag: "End" }

const sleepUntil = (at: number) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sleep(Duration.millis(Math.max(0, at - now))))

/** Reads `source` in a fiber of the scope, each chunk a signal, then how it ended. */
const feed = <E, R>(
  source: Stream.Stream<Tambo.RunEvent, E, R>,
  signals: Queue.Enqueue<Signal<E>>
): Effect.Effect<unknown, never, R | Scope.Scope> =>
  source.pipe(
    // A run's stream writes an empty chunk after each one (see Tambo.run): nothing to signal.
    Stream.runForEachChunk((events) =>
      Chunk.isEmpty(events) ? Effect.void : Queue.offer(signals, { _tag: "Events", events })
    ),
    Effect.matchCauseEffect({
      onSuccess: () => Queue.offer(signals, endSignal),
      onFailure: (cause) => Queue.offer(signals, { _tag: "Halt", cause })
    }),
    Effect.forkScoped
  )

/** Signals a tick at each requested wake-up, in a fiber of the scope. */
const timer = <E>(
  wakeups: Queue.Dequeue<number>,
  signals: Queue.Enqueue<Signal<E>>
): Effect.Effect<unknown, never, Scope.Scope> =>
  Stream.fromQueue(wakeups).pipe(
    // A new, earlier wake-up interrupts the sleep in progress.
    Stream.flatMap((at) => Stream.fromEffect(sleepUntil(at)), { switch: true }),
    Stream.runForEach(() => Queue.offer(signals, tickSignal)),
    Effect.forkScoped
  )

/** The snapshots `publisher` publishes as it reads `signals`, asking `wakeups` for the next tick it needs. */
const read = <E>(
  publisher: Publisher,
  signals: Queue.Dequeue<Signal<E>>,
  wakeups: Queue.Enqueue<number>
): Stream.Stream<Types.TamboThread, E> => {
  // The time the timer sleeps until; a later wake-up is requested once it fires.
  let armedAt: number | undefined
  /** Emits what was published, after asking the timer for the next wake-up if it is earlier. */
  const emit = (out: Array<Types.TamboThread>, now: number) => {
    const published = Chunk.unsafeFromArray(out)
    if (armedAt !== undefined && armedAt <= now) armedAt = undefined
    const wake = publisher.nextWake(now)
    if (wake === undefined || (armedAt !== undefined && armedAt <= wake)) return Effect.succeed(published)
    armedAt = wake
    return Effect.as(Queue.offer(wakeups, wake), published)
  }
  // Set once the source has ended; the published snapshots before it go out first.
  let ended: Cause.Cause<Option.Option<E>> | undefined
  /** Everything that arrived since the last pull, at one clock reading. */
  const react = (batch: Chunk.Chunk<Signal<E>>, now: number) => {
    const out: Array<Types.TamboThread> = []
    for (const signal of batch) {
      switch (signal._tag) {
        case "Events": {
          for (const runEvent of signal.events) {
            const snapshot = publisher.arrive(runEvent, now)
            if (snapshot !== undefined) out.push(snapshot)
          }
          break
        }
        case "Tick": {
          const snapshot = publisher.tick(now)
          if (snapshot !== undefined) out.push(snapshot)
          break
        }
        case "End":
          ended = Cause.fail(Option.none())
          break
        case "Halt":
          ended = Cause.map(signal.cause, Option.some)
          break
      }
      if (ended !== undefined) break
    }
    return ended !== undefined && out.length === 0 ? Effect.failCause(ended) : emit(out, now)
  }
  const pull = Effect.suspend(() =>
    ended !== undefined
      ? Effect.failCause(ended)
      : Effect.flatMap(Queue.takeBetween(signals, 1, 64), (batch) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => react(batch, now)))
  )
  return Stream.repeatEffectChunkOption(pull)
}

/** The snapshots `plan` publishes of `source`, read by a fiber of its own, at most 16 chunks ahead. */
export const timed = <E, R>(
  source: Stream.Stream<Tambo.RunEvent, E, R>,
  plan: Plan
): Stream.Stream<Types.TamboThread, E, R> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const signals = yield* Effect.acquireRelease(Queue.bounded<Signal<E>>(16), Queue.shutdown)
    const wakeups = yield* Effect.acquireRelease(Queue.sliding<number>(1), Queue.shutdown)
    yield* feed(source, signals)
    yield* timer(wakeups, signals)
    const publisher = new Publisher(plan)
    return withFinal(read(publisher, signals, wakeups), publisher)
  }))
