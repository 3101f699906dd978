import type { InitialInputMessage, TamboComponentContent } from "@tambo-effect/client"
import { createContext, useContext } from "react"
import type { TamboComponent } from "../types.js"
import type { ClientHandle } from "./clientHandle.js"
import type { ElicitationStore } from "./elicitationStore.js"
import type { InputStore } from "./inputStore.js"
import type { InteractableStore } from "./interactableStore.js"
import type { MessageRenderer } from "./messageRenderer.js"

/**
 * What `TamboProvider` gives its subtree. Changes only with the client or the registered components.
 *
 * @since 0.1.0
 * @category Internal
 */
export interface TamboContextValue {
  readonly handle: ClientHandle
  readonly components: ReadonlyMap<string, TamboComponent>
  readonly renderer: MessageRenderer
  readonly input: InputStore
  readonly elicitation: ElicitationStore
  /** The interactable components (`withTamboInteractable`). */
  readonly interactables: InteractableStore
  /** The provider's `initialMessages`, shown on a new conversation. */
  readonly initialMessages?: ReadonlyArray<InitialInputMessage> | undefined
}

/**
 * @since 0.1.0
 * @category Internal
 */
export const TamboContext = createContext<TamboContextValue | null>(null)

/**
 * @since 0.1.0
 * @category Internal
 */
export const useTamboContext = (hook: string): TamboContextValue => {
  const value = useContext(TamboContext)
  if (value === null) throw new Error(`${hook} must be used inside a <TamboProvider>`)
  return value
}

/**
 * Where a rendered component sits: set by the component renderer.
 *
 * @since 0.1.0
 * @category Internal
 */
export interface ComponentContextValue {
  readonly threadId: string
  readonly messageId: string
  readonly content: TamboComponentContent
  /** Set for an interactable component (`withTamboInteractable`), which is in no message. */
  readonly interactable?: {
    readonly id: string
    readonly componentName: string
    readonly description: string
  } | undefined
}

/**
 * @since 0.1.0
 * @category Internal
 */
export const ComponentContext = createContext<ComponentContextValue | null>(null)
