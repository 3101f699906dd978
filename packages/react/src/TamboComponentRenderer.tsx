/**
 * Rendering generative components, and the hooks a rendered component can
 * call: `useTamboCurrentMessage`, `useTamboCurrentComponent`,
 * `useTamboStreamStatus`, `useComponentContent`; and the providers that set
 * what they read for a tree rendered by the app itself
 * (`ComponentContentProvider`, `TamboMessageProvider`).
 *
 * @since 0.1.0
 */
import type {
  ClientState,
  ComponentStreamingState,
  TamboComponentContent as BaseComponentContent,
  TamboThreadMessage
} from "@tambo-effect/client"
import { getThreadState } from "@tambo-effect/core/ClientState"
import * as Tool from "@tambo-effect/core/Tool"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { isRecord } from "effect/Predicate"
import { Component as ReactComponent, memo, type ReactElement, type ReactNode, useCallback, useContext, useMemo } from "react"
import {
  ComponentContext,
  type ComponentContextValue,
  ComponentScope,
  MessageContext,
  type MessageContextValue,
  useTamboContext
} from "./internal/context.js"
import { shownRunStatus } from "./internal/selectors.js"
import { deriveStreamStatus } from "./internal/streamStatus.js"
import type { InteractableConfig } from "./interactables.js"
import type { PropStatus, StreamStatus } from "./types.js"
import type { TamboComponent } from "./types.js"
import { useTamboSelector } from "./useTamboSelector.js"

/**
 * @since 0.1.0
 * @category Models
 */
export interface ComponentRendererProps {
  /** The component block of a message. */
  readonly content: BaseComponentContent
  readonly threadId: string
  readonly messageId: string
  /**
   * Rendered when no registered component has the block's name, and in
   * place of a component that threw while rendering this version of its
   * block. Default: nothing.
   */
  readonly fallback?: ReactNode
}

/**
 * Each props schema as JSON Schema, when it converts: by the schema, which an app usually
 * declares once, even where it writes its components inline.
 */
const jsonSchemas = new WeakMap<object, Tool.JsonObject | null>()

/**
 * The props as the component's schema wrote them: the API gives the model
 * every prop as required (the optional ones nullable), so the model sends
 * `null` for those it leaves out (see `Tool.undoStrictMode`).
 */
const readBack = (registered: TamboComponent, content: BaseComponentContent): Record<string, unknown> => {
  const raw = isRecord(content.props) ? content.props : {}
  const key: unknown = registered.propsSchema
  // Not a schema at all (its registration failed): nothing to read the props by.
  if ((typeof key !== "object" && typeof key !== "function") || key === null) return raw
  let schema = jsonSchemas.get(key)
  if (schema === undefined) {
    const converted = Effect.runSyncExit(Tool.toJsonSchema(registered.propsSchema))
    schema = Exit.isSuccess(converted) ? converted.value : null
    jsonSchemas.set(key, schema)
  }
  if (schema === null) return raw
  const read = Tool.undoStrictMode(schema, raw)
  return isRecord(read) ? read : raw
}

/** Final props, validated (and decoded) by the component's schema, once per block version. */
const validated = new WeakMap<BaseComponentContent, Record<string, unknown>>()

const finalProps = (registered: TamboComponent, content: BaseComponentContent): Record<string, unknown> => {
  const cached = validated.get(content)
  if (cached !== undefined) return cached
  const read = readBack(registered, content)
  // Synchronous validation only: an asynchronous Standard Schema cannot hold up a render.
  const exit = Effect.runSyncExit(Tool.validate(registered.propsSchema, read))
  const props = Exit.isSuccess(exit) && isRecord(exit.value) ? exit.value : read
  validated.set(content, props)
  return props
}

const isStreaming = (state: ComponentStreamingState | undefined): boolean =>
  state !== undefined && state !== "done"

interface ContainedProps {
  readonly content: BaseComponentContent
  readonly fallback: ReactNode
  readonly children: ReactNode
}

interface ContainedState {
  /** The version of the block rendered. */
  readonly content: BaseComponentContent
  /** Whether the component threw while rendering that version. */
  readonly failed: boolean
}

/**
 * Keeps what a generative component throws while rendering to itself: the
 * model wrote its props, and the rest of the thread (and of the page) must
 * not go with it. The block's next version (more props, the end of its
 * stream, its state) is tried again. React reports what it caught (on the
 * console, or to the root's `onCaughtError`).
 */
class Contained extends ReactComponent<ContainedProps, ContainedState> {
  override state: ContainedState = { content: this.props.content, failed: false }

  static getDerivedStateFromProps(props: ContainedProps, state: ContainedState): ContainedState | null {
    return props.content === state.content ? null : { content: props.content, failed: false }
  }

  static getDerivedStateFromError(): Partial<ContainedState> {
    return { failed: true }
  }

  override render(): ReactNode {
    return this.state.failed ? this.props.fallback : this.props.children
  }
}

/**
 * Renders a component block with the registered component of its name:
 * `loadingComponent` (if any) while the props stream, then `component` with
 * the final props. The rendered component can call
 * {@link useTamboCurrentMessage}, {@link useTamboCurrentComponent} and
 * {@link useTamboStreamStatus}. Re-renders only when the block changed.
 * A component that throws while rendering shows `fallback` instead, and
 * the rest of the page stays: the block's next version is rendered again.
 *
 * `useTambo()` already puts this element in `content.renderedComponent`;
 * use this to render a block yourself.
 *
 * @since 0.1.0
 * @category Components
 */
export const ComponentRenderer = memo(function ComponentRenderer(
  { content, fallback = null, messageId, threadId }: ComponentRendererProps
): ReactElement | null {
  const { components } = useTamboContext("ComponentRenderer")
  const registered = components.get(content.name)
  const streaming = isStreaming(content.streamingState)
  const props = useMemo(
    () =>
      registered === undefined
        ? {}
        : streaming
        ? readBack(registered, content)
        : finalProps(registered, content),
    [registered, streaming, content]
  )
  const context = useMemo<ComponentContextValue>(() => ({ threadId, messageId, content }), [threadId, messageId, content])
  if (registered === undefined) return <>{fallback}</>
  const Component = streaming && registered.loadingComponent !== undefined
    ? registered.loadingComponent
    : registered.component
  return (
    <Contained content={content} fallback={fallback}>
      <ComponentScope value={context}>
        <Component {...props} />
      </ComponentScope>
    </Contained>
  )
})

const useComponentContext = (hook: string): ComponentContextValue => {
  const value = useContext(ComponentContext)
  if (value === null) throw new Error(`${hook} must be used inside a component rendered by Tambo`)
  return value
}

/**
 * Inside a rendered generative component: the message it belongs to, kept
 * up to date while the message streams. Inside an interactable component
 * (`withTamboInteractable`): a message of its own, holding only itself.
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboCurrentMessage = (): TamboThreadMessage => {
  const given = useContext(MessageContext)
  const component = useContext(ComponentContext)
  if (given === null && component === null) {
    throw new Error("useTamboCurrentMessage must be used inside a component rendered by Tambo or a <TamboMessageProvider>")
  }
  const { content, interactable, messageId, threadId } = component ?? noComponent
  const select = useCallback(
    (state: ClientState) =>
      given !== null ? undefined : findMessage(getThreadState(state, threadId)?.thread.messages, messageId),
    [given, threadId, messageId]
  )
  const message = useTamboSelector(select)
  // An interactable is in no message: it gets one of its own, holding only itself.
  const own = useMemo<TamboThreadMessage | undefined>(
    () =>
      interactable === undefined
        ? undefined
        : { id: messageId, role: "assistant", content: [content], createdAt: "1970-01-01T00:00:00.000Z" },
    [interactable, messageId, content]
  )
  if (given !== null) return given.message
  if (message === undefined && own !== undefined) return own
  if (message === undefined) throw new Error(`message ${messageId} is not in thread ${threadId}`)
  return message
}

/** What the hooks read where a `TamboMessageProvider` gave the message: no component. */
const noComponent: ComponentContextValue = {
  threadId: "",
  messageId: "",
  content: { type: "component", id: "", name: "", props: {} }
}

/** The thread that holds a message: the current one first; the current one if none does. */
const threadOfMessage = (state: ClientState, messageId: string): string => {
  const current = state.currentThreadId
  if (findMessage(getThreadState(state, current)?.thread.messages, messageId) !== undefined) return current
  for (const [threadId, thread] of Object.entries(state.threadMap)) {
    if (findMessage(thread.thread.messages, messageId) !== undefined) return threadId
  }
  return current
}

/** Searches from the end: components live in recent messages. */
const findMessage = (
  messages: ReadonlyArray<TamboThreadMessage> | undefined,
  messageId: string
): TamboThreadMessage | undefined => {
  if (messages === undefined) return undefined
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.id === messageId) return messages[i]
  return undefined
}

/**
 * What a rendered component knows about itself.
 *
 * @since 0.1.0
 * @category Models
 */
export interface TamboCurrentComponent {
  readonly componentId: string
  readonly componentName: string
  /** The props so far (partial while they stream). */
  readonly props: Record<string, unknown>
  readonly state: unknown
  readonly streamingState: ComponentStreamingState
  readonly messageId: string
  readonly threadId: string
  /** Set inside an interactable component (`withTamboInteractable`): its id. */
  readonly interactableId?: string | undefined
  /** Set inside an interactable component: its description. */
  readonly description?: string | undefined
}

/**
 * Inside a rendered generative component: its id, name, props and
 * streaming state; `null` elsewhere.
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboCurrentComponent = (): TamboCurrentComponent | null => {
  const given = useContext(MessageContext)
  const value = useContext(ComponentContext)
  return useMemo(() => {
    if (given !== null) return componentOfMessage(given)
    if (value === null) return null
    const { content, interactable, messageId, threadId } = value
    return {
      componentId: content.id,
      componentName: content.name,
      props: isRecord(content.props) ? content.props : {},
      state: content.state,
      streamingState: content.streamingState ?? "done",
      messageId,
      threadId,
      ...(interactable === undefined ? {} : { interactableId: interactable.id, description: interactable.description })
    }
  }, [given, value])
}

/** A given message's first component (or the interactable it stands for), as `useTamboCurrentComponent` tells it. */
const componentOfMessage = ({ interactable, message, threadId }: MessageContextValue): TamboCurrentComponent | null => {
  const block = message.content.find((part): part is BaseComponentContent => part.type === "component")
  if (block === undefined && interactable === undefined) return null
  return {
    componentId: interactable?.id ?? block!.id,
    componentName: interactable?.componentName ?? block!.name,
    props: block !== undefined && isRecord(block.props) ? block.props : {},
    state: block?.state,
    streamingState: block?.streamingState ?? "done",
    messageId: message.id,
    threadId,
    ...(interactable === undefined ? {} : { interactableId: interactable.id, description: interactable.description })
  }
}

/**
 * Inside a rendered generative component: where its props are, as a whole
 * (`streamStatus`) and per prop (`propStatus`). A prop is complete once the
 * model moved on to the next one, or once the component is done.
 *
 * @example
 * ```tsx
 * function WeatherCard({ city, temperature }: Props) {
 *   const { propStatus, streamStatus } = useTamboStreamStatus<Props>()
 *   if (streamStatus.isPending) return <Skeleton />
 *   return <h2 className={propStatus.city?.isStreaming ? "typing" : ""}>{city} {temperature}</h2>
 * }
 * ```
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboStreamStatus = <Props extends object = Record<string, unknown>>(): {
  readonly streamStatus: StreamStatus
  readonly propStatus: Partial<Record<keyof Props, PropStatus>>
} => {
  const { content, threadId } = useComponentContext("useTamboStreamStatus")
  const runStatus = useTamboSelector(
    useCallback((state: ClientState) => shownRunStatus(getThreadState(state, threadId)), [threadId])
  )
  const runError = useTamboSelector(
    useCallback((state: ClientState) => getThreadState(state, threadId)?.streaming.error, [threadId])
  )
  return useMemo(() => {
    const { propStatus, streamStatus } = deriveStreamStatus(content, runStatus, runError)
    // The keys are the props' own keys: `keyof Props` as far as the schema holds.
    return { streamStatus, propStatus: propStatus as Partial<Record<keyof Props, PropStatus>> }
  }, [content, runStatus, runError])
}

/**
 * What `useComponentContent()` returns: where the rendered component sits.
 *
 * @since 0.2.0
 * @category Models
 */
export interface ComponentContentContext {
  /** The component block's id. */
  readonly componentId: string
  readonly threadId: string
  readonly messageId: string
  readonly componentName: string
}

/**
 * Inside a rendered generative component (or below a
 * {@link ComponentContentProvider}): its id, thread, message and name.
 * Throws elsewhere.
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useComponentContent = (): ComponentContentContext => {
  const value = useContext(ComponentContext)
  if (value === null) throw new Error("useComponentContent must be used inside a component rendered by Tambo")
  const { content, messageId, threadId } = value
  return useMemo(
    () => ({ componentId: content.id, threadId, messageId, componentName: content.name }),
    [content.id, content.name, threadId, messageId]
  )
}

/**
 * Sets, for a tree the app renders itself, which component block it is: the
 * hooks of a rendered component (`useTamboComponentState`,
 * `useTamboStreamStatus`, `useTamboCurrentComponent`,
 * `useTamboCurrentMessage`, `useComponentContent`) then read that block of
 * the store, kept up to date as it streams. A block the store does not hold
 * (yet) reads as a block of that id and name with no props. Inside a
 * `TamboProvider`; `ComponentRenderer` already does this for what it renders.
 *
 * @example
 * ```tsx
 * <ComponentContentProvider threadId={threadId} messageId={message.id} componentId={block.id} componentName={block.name}>
 *   <MyOwnCard />
 * </ComponentContentProvider>
 * ```
 *
 * @since 0.2.0
 * @category Components
 */
export function ComponentContentProvider(
  { children, componentId, componentName, messageId, threadId }: ComponentContentContext & { readonly children?: ReactNode }
): ReactElement {
  const select = useCallback(
    (state: ClientState) =>
      findMessage(getThreadState(state, threadId)?.thread.messages, messageId)?.content.find(
        (part): part is BaseComponentContent => part.type === "component" && part.id === componentId
      ),
    [threadId, messageId, componentId]
  )
  const stored = useTamboSelector(select)
  const value = useMemo<ComponentContextValue>(() => ({
    threadId,
    messageId,
    content: stored ?? { type: "component", id: componentId, name: componentName, props: {} }
  }), [stored, threadId, messageId, componentId, componentName])
  return <ComponentScope value={value}>{children}</ComponentScope>
}

/**
 * Props of {@link TamboMessageProvider}.
 *
 * @since 0.2.0
 * @category Models
 */
export interface TamboMessageProviderProps {
  readonly children?: ReactNode
  readonly message: TamboThreadMessage
  /** The interactable component the message stands for (its config and id), as `useTamboCurrentComponent` tells it. */
  readonly interactableMetadata?: (InteractableConfig<any, any> & { readonly id: string }) | undefined
}

/**
 * Gives the tree below a message: `useTamboCurrentMessage()` returns it, and
 * `useTamboCurrentComponent()` its first component block (or the
 * interactable of `interactableMetadata`). For messages the app renders
 * itself; the nearest of this and a rendered component is what the hooks
 * read. Its thread is the one of the store that holds the message, else the
 * current one. Inside a `TamboProvider`.
 *
 * @since 0.2.0
 * @category Components
 */
export function TamboMessageProvider({ children, interactableMetadata, message }: TamboMessageProviderProps): ReactElement {
  const { handle } = useTamboContext("TamboMessageProvider")
  // Looked up once per message, not at every change of the state: a message stays in its thread.
  const threadId = useMemo(() => threadOfMessage(handle.getState(), message.id), [handle, message.id])
  const value = useMemo<MessageContextValue>(
    () => ({ message, threadId, interactable: interactableMetadata }),
    [message, threadId, interactableMetadata]
  )
  // Keyed by the message: a tree swapped to another message starts afresh (its state included).
  return <MessageContext.Provider value={value} key={message.id}>{children}</MessageContext.Provider>
}
