/**
 * The app's side of the agent state: reading a thread's, and setting it (a
 * value, or an updater of the state as it is) in one change of the store.
 * What the app sets must be a JSON value, as it is sent with the thread's
 * next run: anything else is refused before the store changes.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as ClientState from "../../ClientState.js"
import { ConfigError } from "../../TamboError.js"
import type * as ThreadStore from "../../ThreadStore.js"
import { jsonProblem } from "../jsonSchema.js"

const invalid = (message: string) => new ConfigError({ reason: "InvalidOption", message })

const noThread = (method: string, threadId: string) =>
  invalid(`${method}: the client has no thread ${threadId} (set the state of a thread it holds, or of the current one)`)

/** A thread's agent state as it is sent: `{}` while neither the agent nor the app set one. */
const stateOf = (thread: ClientState.ThreadState): unknown => thread.thread.state === undefined ? {} : thread.thread.state

/**
 * The agent state of `threadId` (default: the current thread).
 *
 * @since 0.2.0
 * @category Getters
 */
export const getAgentState = (
  store: ThreadStore.ThreadStore.Service,
  threadId: string | undefined
): Effect.Effect<unknown, ConfigError> =>
  Effect.flatMap(store.get, (state) => {
    const id = threadId ?? state.currentThreadId
    const thread = ClientState.getThreadState(state, id)
    return thread === undefined ? Effect.fail(noThread("getAgentState", id)) : Effect.succeed(stateOf(thread))
  })

type Outcome =
  | { readonly _tag: "Set"; readonly state: unknown }
  | { readonly _tag: "Refused"; readonly error: ConfigError }
  | { readonly _tag: "Threw"; readonly cause: unknown }

/**
 * Sets the agent state of `threadId`: `update` is the new state, or a
 * function of the state as it is (called once, in the change of the store,
 * so nothing written meanwhile is lost). Succeeds with the new state.
 *
 * @since 0.2.0
 * @category Setters
 */
export const setAgentState = (
  store: ThreadStore.ThreadStore.Service,
  threadId: string,
  update: unknown
): Effect.Effect<unknown, ConfigError> =>
  Effect.flatMap(
    store.modify((state): readonly [Outcome, ClientState.ClientState] => {
      const thread = ClientState.getThreadState(state, threadId)
      if (thread === undefined) return [{ _tag: "Refused", error: noThread("setAgentState", threadId) }, state]
      let next: unknown
      try {
        next = typeof update === "function" ? update(stateOf(thread)) : update
      } catch (cause) {
        return [{ _tag: "Threw", cause }, state]
      }
      const why = jsonProblem(next, "(the state)")
      if (why !== undefined) {
        return [{ _tag: "Refused", error: invalid(`setAgentState: the state must be a JSON value; at ${why}`) }, state]
      }
      return [{ _tag: "Set", state: next }, ClientState.reduce(state, [{ type: "SET_AGENT_STATE", threadId, state: next }])]
    }),
    (outcome) =>
      outcome._tag === "Set"
        ? Effect.succeed(outcome.state)
        : outcome._tag === "Refused"
        ? Effect.fail(outcome.error)
        // An updater that throws is a bug of the app's, not a state to refuse.
        : Effect.die(outcome.cause)
  )
