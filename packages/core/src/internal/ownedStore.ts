/**
 * What the in-memory store lets the run writer do beyond its public service:
 * read the state without handing it out, and publish a thread map changed in
 * place while nobody but the store has seen it. A client of thousands of
 * threads then pays, per publication, for the threads that changed, not for
 * a copy of them all.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type * as ClientState from "../ClientState.js"

/** @internal */
export interface OwnedStore {
  /** The state, read without handing it out: only what it holds may be given away. */
  readonly peek: () => ClientState.ClientState
  /**
   * `modify`, telling `f` whether the thread map of the state it gets may be
   * changed in place (nobody else has seen it since the store made it). The
   * thread map `f` returns, if new, must be its own.
   */
  readonly modifyInPlace: <A>(
    f: (state: ClientState.ClientState, inPlace: boolean) => readonly [A, ClientState.ClientState]
  ) => Effect.Effect<A>
}

const owned = new WeakMap<object, OwnedStore>()

/** @internal */
export const register = (service: object, store: OwnedStore): void => {
  owned.set(service, store)
}

/** What `service` lets the writer do, if it is the in-memory store. @internal */
export const of = (service: object): OwnedStore | undefined => owned.get(service)
