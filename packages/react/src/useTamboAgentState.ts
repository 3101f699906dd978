/**
 * `useTamboAgentState`: the AG-UI agent's shared state of the current
 * thread, as a `useState` pair.
 *
 * @since 0.2.0
 */
import type { ClientState } from "@tambo-effect/client"
import { useCallback } from "react"
import { useTamboContext } from "./internal/context.js"
import { useTamboSelector } from "./useTamboSelector.js"

/**
 * What `useTamboAgentState` returns: the state, and how to set it.
 *
 * @since 0.2.0
 * @category Models
 */
export type UseTamboAgentStateReturn<S> = readonly [
  state: S,
  setState: (next: S | ((previous: S) => S)) => void
]

// One value for "no state yet": a fresh `{}` per read would re-render on every change of the state.
const NO_STATE: Readonly<Record<string, never>> = Object.freeze({})

const selectState = (state: ClientState): unknown => {
  const thread = state.threadMap[state.currentThreadId]?.thread
  return thread?.state === undefined ? NO_STATE : thread.state
}

/**
 * The shared state of the current thread with an AG-UI agent (a client made
 * with `agent`), like `useState`: what the agent's `STATE_SNAPSHOT` and
 * `STATE_DELTA` events made it, or what the app set, `{}` until either did.
 * It re-renders when the state changed (and only then), as the agent's
 * events arrive. `setState` takes the new state or a function of the state
 * as it is; the change shows at once and goes to the agent with the
 * thread's next run (a new conversation's too, before its first run). A
 * state that is not a JSON value throws the client's `ConfigError`.
 *
 * `S` is the app's word for the state's shape: what the agent sends is not
 * checked against it.
 *
 * @example
 * ```tsx
 * function Todos() {
 *   const [state, setState] = useTamboAgentState<{ todo?: Array<string> }>()
 *   return (
 *     <button onClick={() => setState((s) => ({ ...s, todo: [...(s.todo ?? []), "milk"] }))}>
 *       {state.todo?.length ?? 0} to do
 *     </button>
 *   )
 * }
 * ```
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useTamboAgentState = <S = Record<string, unknown>>(): UseTamboAgentStateReturn<S> => {
  const { handle } = useTamboContext("useTamboAgentState")
  // The app's word for the shape (see above): the store holds JSON the agent sent.
  const state = useTamboSelector(selectState) as S
  const setState = useCallback((next: S | ((previous: S) => S)) => void handle.client().setAgentState<S>(next), [handle])
  return [state, setState]
}
