/**
 * `SnapshotStrategy.snapshots`: a strategy compiled, then run by the
 * publisher it needs (without time rules, no fibers or timers).
 *
 * @internal
 */
import type * as Stream from "effect/Stream"
import type { Strategy } from "../../SnapshotStrategy.js"
import type * as Tambo from "../../Tambo.js"
import type * as Types from "../../Types.js"
import { compile } from "./plan.js"
import { timed } from "./timed.js"
import { untimed } from "./untimed.js"

/** The snapshots `strategy` publishes of a run's events. */
export const snapshots = <E, R>(
  self: Stream.Stream<Tambo.RunEvent, E, R>,
  strategy: Strategy
): Stream.Stream<Types.TamboThread, E, R> => {
  const plan = compile(strategy)
  return plan.gates.length === 0 ? untimed(self, plan) : timed(self, plan)
}
