/**
 * The ledger that makes a call run at most once per step: completed results
 * by key (thread, step and call id for a named step), and the calls in flight,
 * which a second execution of the same call waits for rather than running the
 * tool again. A named step's results are kept in the executor's own ledger
 * (the most recently used ones); an unnamed step gets one for its `execute`
 * alone, keyed by call id.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Tool from "../../Tool.js"
import { LruMap } from "./lruMap.js"

/**
 * Where results are looked up: the executor's own for named steps, or one
 * made for a single `execute`. `None` in `running` tells waiters that the run
 * was interrupted and they may run it.
 *
 * @internal
 */
export interface Ledger {
  readonly completed: {
    get(key: string): Tool.ToolResultContent | undefined
    set(key: string, result: Tool.ToolResultContent): void
  }
  readonly running: Map<string, Deferred.Deferred<Option.Option<Tool.ToolResultContent>>>
}

/** The executor's ledger of named steps, keeping the `remembered` most recently used results. @internal */
export const remembering = (remembered: number): Ledger & { readonly completed: LruMap<string, Tool.ToolResultContent> } => ({
  completed: new LruMap<string, Tool.ToolResultContent>(Math.max(1, remembered)),
  running: new Map()
})

const stepKey = (threadId: string, runId: string, toolCallId: string): string => JSON.stringify([threadId, runId, toolCallId])

/**
 * Lets go of the completed results of a thread's steps (see `forStep`'s keys); calls in flight
 * keep theirs until they end.
 *
 * @internal
 */
export const forgetThread = (steps: ReturnType<typeof remembering>, threadId: string): void =>
  forgetUnder(steps, [threadId])

/**
 * Lets go of the completed results of one step of a thread (see `forStep`'s keys); calls in
 * flight keep theirs until they end.
 *
 * @internal
 */
export const forgetStep = (steps: ReturnType<typeof remembering>, threadId: string, runId: string): void =>
  forgetUnder(steps, [threadId, runId])

/** The keys that begin with `parts` (whole parts only: a thread whose id begins another's is not its). */
const forgetUnder = (steps: ReturnType<typeof remembering>, parts: ReadonlyArray<string>): void => {
  const prefix = JSON.stringify(parts).slice(0, -1) + ","
  steps.completed.deleteWhere((key) => key.startsWith(prefix))
}

/**
 * The ledger of one `execute` and the key of each of its calls. A call is
 * known by its id only within its step: only a named step (`threadId` and
 * `runId`) is looked up in `steps`.
 *
 * @internal
 */
export const forStep = (
  steps: Ledger,
  threadId: string | undefined,
  runId: string | undefined
): { readonly ledger: Ledger; readonly keyOf: (toolCallId: string) => string } =>
  threadId !== undefined && runId !== undefined
    ? { ledger: steps, keyOf: (toolCallId) => stepKey(threadId, runId, toolCallId) }
    : { ledger: { completed: new Map(), running: new Map() }, keyOf: (toolCallId) => toolCallId }

/**
 * Runs `body` unless a result for the key is remembered or already being
 * computed. A run that is interrupted leaves no result behind.
 *
 * @internal
 */
export const once = (
  ledger: Ledger,
  key: string,
  body: Effect.Effect<Tool.ToolResultContent>
): Effect.Effect<Tool.ToolResultContent> =>
  Effect.flatMap(Deferred.make<Option.Option<Tool.ToolResultContent>>(), (mine) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend((): Effect.Effect<Option.Option<Tool.ToolResultContent>> => {
        const { completed, running } = ledger
        const remembered = completed.get(key)
        if (remembered !== undefined) {
          return Effect.as(Effect.annotateCurrentSpan("tool.outcome", "replayed"), Option.some(remembered))
        }
        const other = running.get(key)
        if (other !== undefined) return restore(Deferred.await(other))
        running.set(key, mine)
        return restore(body).pipe(
          Effect.onExit((exit) =>
            Effect.suspend(() => {
              running.delete(key)
              if (Exit.isSuccess(exit)) {
                completed.set(key, exit.value)
                return Deferred.succeed(mine, Option.some(exit.value))
              }
              return Deferred.succeed(mine, Option.none())
            })
          ),
          Effect.map(Option.some)
        )
      })
    )).pipe(
      Effect.flatMap(Option.match({
        onNone: () => once(ledger, key, body),
        onSome: Effect.succeed
      }))
    )
