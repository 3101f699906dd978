/**
 * The stream of snapshots of a strategy without time rules: no fibers, no
 * timers; the source is read as the snapshots are pulled.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Stream from "effect/Stream"
import type * as Tambo from "../../Tambo.js"
import type * as Types from "../../Types.js"
import type { Plan } from "./plan.js"
import { Publisher, withFinal } from "./publisher.js"

/** The snapshots `plan` publishes of `source`, decided as each chunk is pulled. */
export const untimed = <E, R>(
  source: Stream.Stream<Tambo.RunEvent, E, R>,
  plan: Plan
): Stream.Stream<Types.TamboThread, E, R> =>
  Stream.suspend(() => {
    const publisher = new Publisher(plan)
    const published = Stream.mapChunks(source, (chunk) => {
      const out: Array<Types.TamboThread> = []
      for (const runEvent of chunk) {
        const snapshot = publisher.arrive(runEvent, 0)
        if (snapshot !== undefined) out.push(snapshot)
      }
      return Chunk.unsafeFromArray(out)
    })
    return withFinal(published, publisher)
  })
