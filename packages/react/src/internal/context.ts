import type {
  ContextHelperFn,
  InitialInputMessage,
  McpServerInfo,
  TamboComponentContent,
  TamboThreadMessage,
  ToolDefinition
} from "@tambo-effect/client"
import { type Context, createContext, createElement, type ReactNode, useContext, useMemo } from "react"
import type { TamboComponent, TamboConfig } from "../types.js"
import type { ClientHandle } from "./clientHandle.js"
import type { ElicitationStore, UrlElicitationStore } from "./elicitationStore.js"
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
  /** The URL elicitations waiting for the user's consent. */
  readonly urlElicitation: UrlElicitationStore
  /** The interactable components (`withTamboInteractable`). */
  readonly interactables: InteractableStore
  /** The provider's `initialMessages`, shown on a new conversation. */
  readonly initialMessages?: ReadonlyArray<InitialInputMessage> | undefined
  /** What `useTamboConfig` returns. */
  readonly config: TamboConfig
  /** Adds a component to those the provider renders and the client offers, for the provider's lifetime. */
  readonly registerComponent: (component: TamboComponent) => void
  /** Sets (or, with `undefined`, takes back) what a registry mounted below adds to the provider's own. */
  readonly contribute: (id: string, contribution: Contribution | undefined) => void
}

/**
 * What a `TamboRegistryProvider` or a `TamboContextHelpersProvider` adds to
 * its provider's tools, components, context helpers and MCP servers while it
 * is mounted.
 *
 * @since 0.2.0
 * @category Internal
 */
export interface Contribution {
  readonly tools?: ReadonlyArray<ToolDefinition> | undefined
  readonly components?: ReadonlyArray<TamboComponent> | undefined
  readonly contextHelpers?: Readonly<Record<string, ContextHelperFn>> | undefined
  readonly mcpServers?: ReadonlyArray<McpServerInfo> | undefined
}

/** Where the context is kept, so that each of the package's builds (`.`, `./mcp`) finds the same one. */
const CONTEXT_KEY = Symbol.for("@tambo-effect/react/TamboContext@1")

/**
 * The provider's context. One per page or process: the CommonJS build of
 * each entry point (`.` and `./mcp`) has its own copy of this module, and
 * they share the context through `globalThis`.
 *
 * @since 0.1.0
 * @category Internal
 */
export const TamboContext: Context<TamboContextValue | null> = ((globalThis as Record<symbol, unknown>)[CONTEXT_KEY] ??=
  createContext<TamboContextValue | null>(null)) as Context<TamboContextValue | null>

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
 * The provider's tree below, with `input` as the message being composed.
 *
 * @since 0.2.0
 * @category Internal
 */
export function InputScope({ children, input }: { readonly children?: ReactNode; readonly input: InputStore }): ReactNode {
  const outer = useTamboContext("useTamboThreadInput")
  const value = useMemo(() => ({ ...outer, input }), [outer, input])
  return createElement(TamboContext.Provider, { value }, children)
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

/**
 * A message given by `TamboMessageProvider`, with the interactable it stands
 * for, if any.
 *
 * @since 0.2.0
 * @category Internal
 */
export interface MessageContextValue {
  readonly message: TamboThreadMessage
  readonly threadId: string
  readonly interactable?: { readonly id: string; readonly componentName: string; readonly description: string } | undefined
}

/**
 * @since 0.2.0
 * @category Internal
 */
export const MessageContext = createContext<MessageContextValue | null>(null)

/**
 * A rendered component's tree: where it sits, and no message given from above (the nearest of a
 * component and a `TamboMessageProvider` is what the hooks read).
 *
 * @since 0.2.0
 * @category Internal
 */
export function ComponentScope(
  { children, value }: { readonly children?: ReactNode; readonly value: ComponentContextValue }
): ReactNode {
  return createElement(
    ComponentContext.Provider,
    { value },
    createElement(MessageContext.Provider, { value: null }, children)
  )
}
