/**
 * `unwrap`, and a scoped stream inside a span, sequenced as channels.
 *
 * `Stream.unwrap` and `Stream.unwrapScoped` are a `flatMap` over a stream of
 * one element, so every element of the inner stream passes through a concat
 * layer on its way out: a few allocations and executor steps per chunk, paid
 * again for each one stacked on a run. These run the effect, then the inner
 * stream's channel, one after the other (a channel `flatMap`): elements flow
 * straight through, and a scope still lasts as long as the stream.
 * `unwrapScopedInSpan` is `Stream.unwrapScoped` inside a span for the price
 * of one resource, and adds no layer around the stream's effects either.
 * `withScopeAndParent` gives such an effect its scope and parent span with
 * one copy of its context (the transport's run request uses it too).
 */
import * as Channel from "effect/Channel"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"

/** The stream an effect computes, with no per-element layer. */
export const unwrap = <A, E2, R2, E, R>(
  effect: Effect.Effect<Stream.Stream<A, E2, R2>, E, R>
): Stream.Stream<A, E | E2, R | R2> => Stream.fromChannel(Channel.unwrap(Effect.map(effect, Stream.toChannel)))

/**
 * A context with a scope and, if given, a parent span added: one copy of the
 * context's map (each `Context.add` copies it).
 */
export const withScopeAndParent = <R>(
  context: Context.Context<R>,
  scope: Scope.Scope,
  span: Tracer.AnySpan | undefined
): Context.Context<R | Scope.Scope> => {
  const map = new Map(context.unsafeMap)
  map.set(Scope.Scope.key, scope)
  if (span !== undefined) map.set(Tracer.ParentSpan.key, span)
  return Context.unsafeMake(map)
}

/** Ends a span with an exit, timed as the tracer wants. */
const endSpan = (span: Tracer.Span, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> =>
  Effect.flatMap(
    FiberRef.get(FiberRef.currentTracerTimingEnabled),
    (timing) => Effect.clockWith((clock) => Effect.sync(() => span.end(timing ? clock.unsafeCurrentTimeNanos() : 0n, exit)))
  )

/**
 * The stream a scoped effect computes, inside a span made when it starts and
 * ended with its exit: `Stream.unwrapScoped` and the span as one resource.
 * The effect runs with the scope and the span as its parent in its context
 * (one context change for both); the stream's own effects do not get the
 * span (`Stream.withSpan` would wrap every effect its executor runs in one
 * more layer): it is handed to `f` for those that need it as their parent.
 * The scope closes with the stream's exit, then the span ends with it (even
 * if a finalizer dies).
 */
export const unwrapScopedInSpan = <A, E2, R2, E, R>(
  name: string,
  options: Tracer.SpanOptions,
  f: (span: Tracer.Span) => Effect.Effect<Stream.Stream<A, E2, R2>, E, R>
): Stream.Stream<A, E | E2, Exclude<R, Scope.Scope> | R2> =>
  Stream.fromChannel(Channel.acquireUseRelease(
    Effect.flatMap(Effect.makeSpan(name, options), (span) => Effect.map(Scope.make(), (scope) => ({ span, scope }))),
    ({ scope, span }) =>
      Channel.unwrap(Effect.map(
        Effect.mapInputContext(
          f(span),
          (context: Context.Context<Exclude<R, Scope.Scope>>) => withScopeAndParent(context, scope, span) as Context.Context<R>
        ),
        Stream.toChannel
      )),
    // The span ends even if a finalizer of the scope dies.
    ({ scope, span }, exit) => Effect.ensuring(Scope.close(scope, exit), endSpan(span, exit))
  ))
