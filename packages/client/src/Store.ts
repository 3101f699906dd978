/**
 * Where a client keeps its state. Any object with `getState`, `setState`
 * and `subscribe` will do: the {@link InMemoryStore} shipped here, or a
 * Zustand vanilla store (`createStore(() => createInitialState())`), which
 * works unchanged.
 *
 * @since 0.1.0
 */
import * as CoreState from "@tambo-effect/core/ClientState"

/**
 * A store the client reads its state from and writes every change to.
 *
 * `setState` receives the whole next state; `subscribe` listeners are
 * called after each change and take no arguments (extra arguments, such as
 * Zustand's `(state, previous)`, are ignored).
 *
 * @since 0.1.0
 * @category Models
 */
export interface TamboStore<T> {
  readonly getState: () => T
  readonly setState: (state: T) => void
  readonly subscribe: (listener: () => void) => () => void
}

/**
 * Every thread the client knows, and the current one.
 *
 * @since 0.1.0
 * @category Models
 */
export type ClientState = CoreState.ClientState

/**
 * The state of a client that knows no thread yet: only the placeholder of a
 * new conversation, which is current.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const createInitialState = (): ClientState => CoreState.initial

/**
 * A store held in memory. `getState` returns the same object until
 * `setState` is given a different one; listeners are called synchronously
 * (the client batches its own notifications).
 *
 * @since 0.1.0
 * @category Constructors
 */
export class InMemoryStore<T> implements TamboStore<T> {
  #state: T
  readonly #listeners = new Set<() => void>()

  /** @since 0.1.0 */
  constructor(initial: T) {
    this.#state = initial
  }

  /** @since 0.1.0 */
  readonly getState = (): T => this.#state

  /** @since 0.1.0 */
  readonly setState = (state: T): void => {
    if (Object.is(state, this.#state)) return
    this.#state = state
    for (const listener of [...this.#listeners]) listener()
  }

  /** @since 0.1.0 */
  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }
}
