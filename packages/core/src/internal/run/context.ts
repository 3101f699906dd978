/**
 * The `additionalContext` a run's message carries: the message's own, the
 * context helpers', the run's, then what `beforeRun` (the client's, then the
 * run's) returns. A helper or `beforeRun` that goes wrong, or gives a value
 * that cannot be sent as JSON, fails the run with a `CallbackError` before
 * anything is sent.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type { RunOptions } from "../../Tambo.js"
import type { CallbackError } from "../../TamboError.js"
import type * as Transport from "../../TamboTransport.js"
import * as Callbacks from "../callbacks.js"
import { namesMcpResource } from "../mcp/resources.js"
import type { Env } from "./env.js"

/**
 * Whether gathering a message's context may wait on the app (its context helpers, a `beforeRun`)
 * or on an MCP server (a resource the message names): only then may a Stop have to end the wait.
 *
 * @internal
 */
export const mayWait = (env: Env, message: Transport.InputMessage, runOptions: RunOptions): boolean =>
  env.contextHelpers.size > 0 || env.options.beforeRun !== undefined || runOptions.beforeRun !== undefined ||
  (env.mcp._tag === "Some" && message.content.some(namesMcpResource))

/** @internal */
export const gather = (
  env: Env,
  threadId: string | undefined,
  message: Transport.InputMessage,
  runOptions: RunOptions
): Effect.Effect<Record<string, unknown> | undefined, CallbackError> =>
  Effect.gen(function* () {
    const context: Record<string, unknown> = { ...(message.additionalContext ?? {}) }
    // Most runs have no helpers: no concurrent forEach to set up for them.
    const helpers = env.contextHelpers.size === 0 ? [] : yield* Effect.forEach(
      [...env.contextHelpers.entries()],
      ([name, helper]) =>
        Effect.map(
          Callbacks.runCallback(() => Callbacks.sendable(helper()), Callbacks.contextHelperFailed(name)),
          (value) => [name, value] as const
        ),
      { concurrency: "unbounded" }
    )
    // Nothing, as upstream's helpers: `null` (from untyped code) sends nothing either.
    for (const [name, value] of helpers) if (value !== undefined && value !== null) context[name] = value
    if (runOptions.additionalContext !== undefined) Object.assign(context, runOptions.additionalContext)
    // Read for a beforeRun only: most runs have none.
    let tools: Effect.Effect.Success<typeof env.registry.toolMap> | undefined
    for (const [before, of] of [[env.options.beforeRun, "client"], [runOptions.beforeRun, "run"]] as const) {
      if (before === undefined) continue
      const toolMap = tools ??= yield* env.registry.toolMap
      const extra = yield* Callbacks.runCallback(
        () => Callbacks.sendable(before({ threadId, message, tools: toolMap })),
        Callbacks.beforeRunFailed(of)
      )
      if (extra !== undefined && extra !== null && typeof extra === "object") Object.assign(context, extra)
    }
    return Object.keys(context).length > 0 ? context : undefined
  })
