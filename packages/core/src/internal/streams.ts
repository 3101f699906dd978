/**
 * `unwrap` and `unwrapScoped` for streams, sequenced as channels.
 *
 * `Stream.unwrap` and `Stream.unwrapScoped` are a `flatMap` over a stream of
 * one element, so every element of the inner stream passes through a concat
 * layer on its way out: a few allocations and executor steps per chunk, paid
 * again for each one stacked on a run. These run the effect, then the inner
 * stream's channel, one after the other (a channel `flatMap`): elements flow
 * straight through, and a scope still lasts as long as the stream.
 */
import * as Channel from "effect/Channel"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

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
