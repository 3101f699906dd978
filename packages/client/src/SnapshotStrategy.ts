/**
 * Update strategies for streamed runs, from `@tambo-effect/core`: which of
 * a run's snapshots are published, and when. Build one here and pass it to
 * `stream.snapshots({ strategy })` or `client.subscribeToSnapshots(listener,
 * { strategy })`; no Effect code needed.
 *
 * ```ts
 * import { SnapshotStrategy } from "@tambo-effect/client"
 *
 * // At word boundaries, and at least every 100 ms while text flows.
 * const strategy = SnapshotStrategy.any(SnapshotStrategy.wordBoundary, SnapshotStrategy.throttle("100 millis"))
 * ```
 *
 * Constructors: `immediate`, `everyN(n)`, `wordBoundary`, `punctuation`,
 * `throttle(duration)`, `debounce(duration)`, `custom(shouldPublish)`;
 * combinators: `any(...)`, `all(...)`. Durations are Effect duration inputs:
 * `"100 millis"`, `"1 second"` or a number of milliseconds.
 *
 * @since 0.1.0
 */
export * from "@tambo-effect/core/SnapshotStrategy"
