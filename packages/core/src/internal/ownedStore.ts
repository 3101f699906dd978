/**
 * What the in-memory store lets the run writer do beyond its public service:
 * publish without a fiber while nobody reads the store's `changes` (only they
 * see its ref), and change its thread map in place while nobody but the store
 * has seen it.
 *
 * @internal
 */
import type * as ClientState from "../ClientState.js"

/** @internal */
export interface OwnedStore {
  /** The state, read without handing its thread map out. */
  readonly peek: () => ClientState.ClientState
  /**
   * Replaces the state with `f` of it at once, when nobody reads the store's
   * `changes`: `false`, and `f` not called, otherwise. `inPlace`: nobody but
   * the store has seen the state's thread map, which `f` may then change in
   * place; a new map `f` returns must be its own.
   */
  readonly modifyNow: (f: (state: ClientState.ClientState, inPlace: boolean) => ClientState.ClientState) => boolean
}

const owned = new WeakMap<object, OwnedStore>()

/** @internal */
export const register = (service: object, store: OwnedStore): void => {
  owned.set(service, store)
}

/** What `service` lets the writer do, if it is the in-memory store. @internal */
export const of = (service: object): OwnedStore | undefined => owned.get(service)
