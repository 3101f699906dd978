/**
 * A component's own state, kept on the server: the update call, checked
 * before it is sent, and the store's copy of the block brought in line with
 * what the server answered.
 *
 * The API stores one state object per component block and returns it as the
 * block's `state` when the thread is read; the model sees it in its later
 * turns. So a thread loaded again shows the state it was left with.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as ClientState from "../ClientState.js"
import * as Events from "../Events.js"
import { ConfigError, type TamboError } from "../TamboError.js"
import type * as Transport from "../TamboTransport.js"
import type * as ThreadStore from "../ThreadStore.js"
import type { Content, TamboThread } from "../Types.js"

const isPlainObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const isOperation = Schema.is(Events.JsonPatchOperation)

const invalid = (message: string) => new ConfigError({ reason: "InvalidOption", message })

/**
 * Checks an update the way the API does, so a bad one fails here with a
 * typed error instead of a round trip: exactly one of `state` (an object)
 * or `patch` (a non-empty list of RFC 6902 operations).
 *
 * @since 0.2.0
 * @category Validation
 */
export const checkUpdate = (
  componentId: string,
  update: Transport.ComponentStateUpdate
): Effect.Effect<Transport.ComponentStateUpdate, ConfigError> => {
  if (typeof componentId !== "string" || componentId === "") {
    return Effect.fail(invalid("updateComponentState: the component id must be a non-empty string"))
  }
  const { patch, state } = update as { readonly state?: unknown; readonly patch?: unknown }
  if (state !== undefined && patch !== undefined) {
    return Effect.fail(invalid("updateComponentState: give either `state` or `patch`, not both"))
  }
  if (state !== undefined) {
    return isPlainObject(state)
      ? Effect.succeed({ state })
      : Effect.fail(invalid("updateComponentState: `state` must be a JSON object"))
  }
  if (patch === undefined) return Effect.fail(invalid("updateComponentState: give `state` or `patch`"))
  if (!Array.isArray(patch) || patch.length === 0) {
    return Effect.fail(invalid("updateComponentState: `patch` must be a non-empty list of JSON Patch operations"))
  }
  const bad = patch.findIndex((operation) => !isOperation(operation))
  if (bad >= 0) {
    return Effect.fail(invalid(`updateComponentState: patch operation ${bad} is not a JSON Patch operation`))
  }
  return Effect.succeed({ patch: patch as ReadonlyArray<Events.JsonPatchOperation> })
}

/**
 * The thread with the state of component `componentId` replaced, or
 * `undefined` when it holds no such block.
 *
 * @since 0.2.0
 * @category Merging
 */
export const withComponentState = (
  thread: TamboThread,
  componentId: string,
  state: Record<string, unknown>
): TamboThread | undefined => {
  for (let m = thread.messages.length - 1; m >= 0; m--) {
    const message = thread.messages[m]!
    const b = message.content.findIndex((block) => block.type === "component" && block.id === componentId)
    if (b < 0) continue
    const content: Array<Content> = message.content.slice()
    content[b] = { ...message.content[b]!, state } as Content
    const messages = thread.messages.slice()
    messages[m] = { ...message, content }
    return { ...thread, messages }
  }
  return undefined
}

/**
 * Sends the update, then puts the state the server answered into the
 * store's block (merged as a read of the thread would be, so the rest of
 * the thread stays as it is), which every reader of the thread then sees.
 * Storing the state changed the thread on the server (its `updatedAt`),
 * which the answer does not carry: the thread is read again (`readBack`),
 * so the store equals the server once the update returns.
 *
 * @since 0.2.0
 * @category Effects
 */
export const updateComponentState = (
  services: {
    readonly transport: Transport.TamboTransport.Service
    readonly store: ThreadStore.ThreadStore.Service
    readonly withCredentials: <A>(
      f: (credentials: Transport.Credentials) => Effect.Effect<A, TamboError>
    ) => Effect.Effect<A, TamboError>
    /** The server took the state: a read of the thread in flight may be older, and is not applied. */
    readonly stored?: (threadId: string) => void
    /** The store's thread read again from the server; a failed read leaves the store as it is. */
    readonly readBack?: (threadId: string) => Effect.Effect<void>
  },
  threadId: string,
  componentId: string,
  update: Transport.ComponentStateUpdate
): Effect.Effect<Record<string, unknown>, TamboError> =>
  Effect.gen(function* () {
    const checked = yield* checkUpdate(componentId, update)
    const state = yield* services.withCredentials((c) =>
      services.transport.updateComponentState(c, threadId, componentId, checked)
    )
    services.stored?.(threadId)
    const local = yield* services.store.getThread(threadId)
    const thread = local === undefined ? undefined : withComponentState(local.thread, componentId, state)
    if (local !== undefined && thread !== undefined) {
      const action: ClientState.Action = {
        type: "RECONCILE_THREAD",
        threadId,
        thread,
        pendingToolCallIds: local.pendingToolCalls.map((call) => call.toolCallId),
        ...(local.lastCompletedRunId === undefined ? {} : { lastCompletedRunId: local.lastCompletedRunId })
      }
      yield* services.store.apply([action])
    }
    if (services.readBack !== undefined) yield* services.readBack(threadId)
    return state
  })
