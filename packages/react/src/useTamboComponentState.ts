/**
 * `useTamboComponentState`: a generative component's own state, kept on the
 * server with its component block.
 *
 * @since 0.2.0
 */
import { isAbortError } from "@tambo-effect/client"
import { isRecord } from "effect/Predicate"
import { useCallback, useContext, useEffect, useMemo, useState, useSyncExternalStore } from "react"
import { ComponentStateSync } from "./internal/componentStateSync.js"
import { ComponentContext, useTamboContext } from "./internal/context.js"

/**
 * What `useTamboComponentState` returns: `useState`'s pair, and how the
 * last change is doing on its way to the server.
 *
 * @since 0.2.0
 * @category Models
 */
export type UseTamboComponentStateReturn<S> = readonly [
  state: S,
  setState: (next: S | ((previous: S) => S)) => void,
  meta: {
    /** A change waits for the debounce or for the server. */
    readonly isPending: boolean
    /**
     * Why the last send could not store the value (the next change tries
     * again); over once a send succeeds or the server's value is shown.
     */
    readonly error: Error | null
    /** Sends a waiting change now. */
    readonly flush: () => void
  }
]

const isClientDestroyed = (error: unknown): boolean => isAbortError(error) && error.reason === "ClientDestroyed"

/** A JSON Pointer token (RFC 6901). */
const pointerToken = (key: string): string => key.replaceAll("~", "~0").replaceAll("/", "~1")

/**
 * One value of the rendered component's state, like `useState`, kept on
 * the server under `key` in the component block's `state`: a change shows
 * at once and is sent `debounceMs` after the last one (as a JSON Patch of
 * that key, so several keys of one component do not overwrite each other),
 * and when the component unmounts (the provider too: its client stays until
 * the server answered). While a run of the client is in flight on the
 * thread (the server takes no state then), it waits for the run's end,
 * pending (an unmounted provider's run is cancelled, then the change goes).
 * A change whose client the app destroyed (to give the provider another)
 * stays pending, with no error, and goes through the app's next client.
 * One send is on its way at a time: a
 * change made meanwhile goes after it, so the server ends with the last
 * value. The model sees the state in its later
 * turns, and a thread loaded again (a reload, another device) shows it:
 * the value starts from the block's `state[key]`, else `initial`. A change
 * from the server (a run, a reload) replaces the value unless a local one
 * is still on its way.
 *
 * In an interactable component (`withTamboInteractable`) the value is the
 * interactable's state on the page instead, set at once (no server, no
 * debounce): the model reads it next, and its `update_component_state_<id>`
 * tool changes it. Outside a component rendered by Tambo it is a plain
 * `useState`.
 *
 * @example
 * ```tsx
 * function WeatherCard({ city }: { city: string }) {
 *   const [favourite, setFavourite, { isPending }] = useTamboComponentState("favourite", false)
 *   return (
 *     <button aria-pressed={favourite} disabled={isPending} onClick={() => setFavourite((f) => !f)}>
 *       ★ {city}
 *     </button>
 *   )
 * }
 * ```
 *
 * @since 0.2.0
 * @category Hooks
 */
export function useTamboComponentState<S>(
  key: string,
  initial: S,
  debounceMs = 500
): UseTamboComponentStateReturn<S> {
  const { handle, interactables } = useTamboContext("useTamboComponentState")
  const component = useContext(ComponentContext)
  const interactableId = component?.interactable?.id
  const threadId = interactableId === undefined ? component?.threadId : undefined
  const componentId = component?.content.id
  const stored = component !== null && isRecord(component.content.state) && Object.hasOwn(component.content.state, key)
    ? component.content.state[key] as S
    : undefined

  const send = useMemo(
    () =>
      threadId === undefined || componentId === undefined
        ? undefined
        : (value: S) =>
          handle.client().updateComponentState(threadId, componentId, {
            patch: [{ op: "add", path: `/${pointerToken(key)}`, value }]
          }),
    [handle, threadId, componentId, key]
  )
  const [sync] = useState(() => new ComponentStateSync<S>(stored ?? initial, send, debounceMs))
  sync.send = send
  sync.debounceMs = debounceMs
  sync.retain = () => handle.retain()
  // The server takes no state while a run is active on the thread: a change waits for the client's run.
  sync.ready = threadId === undefined ? undefined : () => handle.noRunOn(threadId)
  // A client the app destroyed to give another is no failure of the change: it goes by the next one.
  sync.clientGone = isClientDestroyed
  const snapshot = useSyncExternalStore(sync.subscribe, sync.getSnapshot, sync.getSnapshot)
  useEffect(() => {
    sync.resume()
  }, [sync, send])

  useEffect(() => {
    sync.server(stored)
  }, [sync, stored])
  // An interactable's state starts with `initial` where it has none, once the interactable is
  // registered (its wrapper's effect runs after this component's): the model reads it from the first run on.
  const registered = useSyncExternalStore(
    interactables.subscribe,
    () => interactableId !== undefined && interactables.get(interactableId) !== undefined,
    () => false
  )
  useEffect(() => {
    if (registered && stored === undefined) interactables.updateState(interactableId!, { [key]: sync.getSnapshot().value })
  }, [interactables, interactableId, key, registered, stored, sync])
  // A change still waiting is sent when the component goes (a thread switch, the end of the page's use).
  useEffect(() => () => sync.flush(), [sync])

  const setState = useCallback((next: S | ((previous: S) => S)) => {
    const previous = sync.getSnapshot().value
    const value = typeof next === "function" ? (next as (previous: S) => S)(previous) : next
    sync.set(value)
    if (interactableId !== undefined) interactables.updateState(interactableId, { [key]: value })
  }, [sync, interactables, interactableId, key])

  const meta = useMemo(
    () => ({ isPending: snapshot.isPending, error: snapshot.error ?? null, flush: sync.flush }),
    [snapshot.isPending, snapshot.error, sync]
  )
  return [snapshot.value, setState, meta]
}
