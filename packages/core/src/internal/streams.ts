/**
 * `unwrap`, `unwrapScoped` and a span for streams, sequenced as channels.
 *
 * `Stream.unwrap` and `Stream.unwrapScoped` are a `flatMap` over a stream of
 * one element, so every element of the inner stream passes through a concat
 * layer on its way out: a few allocations and executor steps per chunk, paid
 * again for each one stacked on a run. These run the effect, then the inner
 * stream's channel, one after the other (a channel `flatMap`): elements flow
 * straight through, and a scope still lasts as long as the stream.
 * `withSpanOf` likewise adds no layer around the stream's effects.
 */
import * as Channel from "effect/Channel"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"

/** The stream an effect computes, with no per-element layer. */
export const unwrap = <A, E2, R2, E, R>(
  effect: Effect.Effect<Stream.Stream<A, E2, R2>, E, R>
): Stream.Stream<A, E | E2, R | R2> => Stream.fromChannel(Channel.unwrap(Effect.map(effect, Stream.toChannel)))

/**
 * The stream a scoped effect computes; the scope closes when the stream ends,
 * fails or is interrupted (its exit is the stream's).
 */
export const unwrapScoped = <A, E2, R2, E, R>(
  effect: Effect.Effect<Stream.Stream<A, E2, R2>, E, R>
): Stream.Stream<A, E | E2, Exclude<R, Scope.Scope> | R2> =>
  Stream.fromChannel(Channel.unwrap(Effect.map(Scope.make(), (scope) =>
    Channel.ensuringWith(
      Channel.unwrap(Effect.map(Scope.extend(effect, scope), Stream.toChannel)),
      (exit) => Scope.close(scope, exit)
    ))))

/**
 * A stream inside a span made when it starts and ended with its exit.
 *
 * `Stream.withSpan` puts the span in the context of everything the stream
 * runs, which wraps every effect its executor runs in one more layer; this
 * hands the span to `f` instead, for the few effects that need it as their
 * parent (`Effect.withParentSpan`).
 */
export const withSpanOf = <A, E, R>(
  name: string,
  options: Tracer.SpanOptions,
  f: (span: Tracer.Span) => Stream.Stream<A, E, R>
): Stream.Stream<A, E, R> =>
  // Made uninterruptibly with its release: a span made is always ended.
  Stream.fromChannel(Channel.acquireUseRelease(
    Effect.makeSpan(name, options),
    (span) => Stream.toChannel(f(span)),
    (span, exit) =>
      Effect.flatMap(
        FiberRef.get(FiberRef.currentTracerTimingEnabled),
        (timing) => Effect.clockWith((clock) => Effect.sync(() => span.end(timing ? clock.unsafeCurrentTimeNanos() : 0n, exit)))
      )
  ))
