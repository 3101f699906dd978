/**
 * Interactable components: components on the page, outside the thread, that
 * the model can read and change. `withTamboInteractable` registers each
 * mounted instance; the model gets its props and state with every message
 * (the `interactables` context helper) and tools to change them.
 *
 * @since 0.2.0
 */
import type { SupportedSchema } from "@tambo-effect/client"
import type { ToolAnnotations } from "@tambo-effect/core/Tool"
import {
  type ComponentType,
  type ReactElement,
  useCallback,
  useEffect,
  useMemo,
  useRef,
  useState,
  useSyncExternalStore
} from "react"
import { type ComponentContextValue, ComponentScope, useTamboContext } from "./internal/context.js"
import {
  serializableProps
} from "./internal/interactableStore.js"
import type { InteractableComponent, NewInteractableComponent } from "./types.js"

/**
 * How `withTamboInteractable` registers a component.
 *
 * @since 0.2.0
 * @category Models
 */
export interface InteractableConfig<Props = Record<string, unknown>, State = Record<string, unknown>> {
  /** The component's name for the model; the start of each instance's id. Letters, digits, `_`, `-`. */
  readonly componentName: string
  /** What it is and what changing it does, for the model. */
  readonly description: string
  /** Checks the model's changes of the props (each change, and the props they make). */
  readonly propsSchema?: SupportedSchema<Props> | undefined
  /** Checks the model's changes of the state. */
  readonly stateSchema?: SupportedSchema<State> | undefined
  /** Annotations of the update tools; `tamboStreamableHint` is `true` unless set. */
  readonly annotations?: ToolAnnotations | undefined
}

/**
 * The props `withTamboInteractable` adds to the wrapped component's.
 *
 * @since 0.2.0
 * @category Models
 */
export interface WithTamboInteractableProps {
  /** The instance's id (default: `<componentName>-<random>`), fixed at mount. */
  readonly interactableId?: string | undefined
  /** Called once the instance is registered, with its id. */
  readonly onInteractableReady?: ((id: string) => void) | undefined
  /** Called after the model changed the props, with the props as they are now (serializable ones only). */
  readonly onPropsUpdate?: ((newProps: Record<string, unknown>) => void) | undefined
}

/**
 * What `useTamboInteractable()` returns: the interactable components and
 * what can be done with them. The functions are stable and read the
 * components as they are when called.
 *
 * @since 0.2.0
 * @category Models
 */
export interface TamboInteractableContext {
  readonly interactableComponents: ReadonlyArray<InteractableComponent>
  /** Registers a component (its tools included); returns its id. Throws a `ToolDefinitionError` for an invalid id. */
  readonly addInteractableComponent: (component: NewInteractableComponent) => string
  readonly removeInteractableComponent: (id: string) => void
  /** Merges props in; returns what the model would be told. */
  readonly updateInteractableComponentProps: (id: string, newProps: Record<string, unknown>) => string
  readonly getInteractableComponent: <P = Record<string, unknown>, S = Record<string, unknown>>(
    id: string
  ) => InteractableComponent<P, S> | undefined
  readonly getInteractableComponentsByName: (componentName: string) => ReadonlyArray<InteractableComponent>
  readonly clearAllInteractableComponents: () => void
  /** Sets one key of a component's state. */
  readonly setInteractableState: (componentId: string, key: string, value: unknown) => void
  readonly getInteractableComponentState: (componentId: string) => Record<string, unknown> | undefined
  /** Marks a component as the one the user means, for the next message only. */
  readonly setInteractableSelected: (componentId: string, isSelected: boolean) => void
  readonly clearInteractableSelections: () => void
}

/**
 * The interactable components under the provider and what can be done with
 * them; re-renders when any of them changes.
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useTamboInteractable = (): TamboInteractableContext => {
  const { interactables: store } = useTamboContext("useTamboInteractable")
  const interactableComponents = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot)
  const actions = useMemo(() => ({
    addInteractableComponent: (component: NewInteractableComponent) => store.add(component),
    removeInteractableComponent: (id: string) => store.remove(id),
    updateInteractableComponentProps: (id: string, newProps: Record<string, unknown>) => store.updateProps(id, newProps),
    getInteractableComponent: <P, S>(id: string) => store.get(id) as InteractableComponent<P, S> | undefined,
    getInteractableComponentsByName: (componentName: string) =>
      store.getSnapshot().filter((component) => component.name === componentName),
    clearAllInteractableComponents: () => store.clear(),
    setInteractableState: (componentId: string, key: string, value: unknown) =>
      void store.updateState(componentId, { [key]: value }),
    getInteractableComponentState: (componentId: string) => store.get(componentId)?.state,
    setInteractableSelected: (componentId: string, isSelected: boolean) => store.setSelected(componentId, isSelected),
    clearInteractableSelections: () => store.clearSelections()
  }), [store])
  return useMemo(() => ({ interactableComponents, ...actions }), [interactableComponents, actions])
}

/**
 * A copy of the interactable components (each with its own copy of its
 * props): changing it changes nothing.
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useCurrentInteractablesSnapshot = (): Array<InteractableComponent> => {
  const { interactables: store } = useTamboContext("useCurrentInteractablesSnapshot")
  const components = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot)
  return useMemo(() => components.map((component) => ({ ...component, props: { ...component.props } })), [components])
}

const newId = (componentName: string) => `${componentName}-${Math.random().toString(36).slice(2, 7)}`

const safeJson = (value: unknown): string => {
  try {
    return JSON.stringify(value) ?? ""
  } catch {
    return ""
  }
}

/**
 * Makes a component interactable: each mounted instance is registered with
 * the model under a unique id (`<componentName>-<random>`, or
 * `interactableId`) while it is mounted.
 *
 * The model sees its props and state with every message (the
 * `interactables` context helper) and can change them with the tools
 * `update_component_props_<id>` and `update_component_state_<id>`
 * (arguments `{ componentId, newProps }` / `{ componentId, newState }`, only
 * the keys to change, checked against the schemas); `get_all_interactable_components`,
 * `get_interactable_component_by_id` and `remove_interactable_component`
 * exist while any instance is mounted. Unmounting withdraws them.
 *
 * The component renders with its parent's props, the model's changes on
 * top; when the parent passes new props they are what the model reads
 * next. Functions and elements among the props render but are not shown to
 * the model. Inside, `useTamboCurrentComponent()` gives the instance's id
 * and name.
 *
 * @example
 * ```tsx
 * const Note = withTamboInteractable(NoteView, {
 *   componentName: "Note",
 *   description: "A note the user is writing",
 *   propsSchema: z.object({ text: z.string() })
 * })
 *
 * function Page() {
 *   const [text, setText] = useState("")
 *   // The user's edits go through the parent; the model's come back through onPropsUpdate.
 *   return <Note text={text} onChange={setText} onPropsUpdate={(props) => setText(String(props.text))} />
 * }
 * ```
 *
 * @since 0.2.0
 * @category Components
 */
export function withTamboInteractable<ComponentProps extends object>(
  WrappedComponent: ComponentType<ComponentProps>,
  config: InteractableConfig<any, any>
): ComponentType<ComponentProps & WithTamboInteractableProps> {
  function TamboInteractableWrapper(props: ComponentProps & WithTamboInteractableProps): ReactElement {
    const { interactables: store } = useTamboContext("withTamboInteractable")
    const { interactableId, onInteractableReady, onPropsUpdate, ...rest } = props
    const componentProps = rest as Record<string, unknown>
    const [id] = useState(() => interactableId ?? newId(config.componentName))
    const entry = useSyncExternalStore(
      store.subscribe,
      useCallback(() => store.get(id), [store, id]),
      () => undefined
    )
    const latest = useRef({ componentProps, onInteractableReady, onPropsUpdate })
    latest.current = { componentProps, onInteractableReady, onPropsUpdate }

    useEffect(() => {
      store.add({
        id,
        name: config.componentName,
        description: config.description,
        component: WrappedComponent,
        props: latest.current.componentProps,
        propsSchema: config.propsSchema,
        stateSchema: config.stateSchema,
        annotations: config.annotations
      })
      latest.current.onInteractableReady?.(id)
      return () => store.remove(id)
    }, [store, id])

    // New props from the parent are what the model reads next.
    const serialized = safeJson(serializableProps(componentProps))
    const lastSynced = useRef(serialized)
    useEffect(() => {
      if (serialized === lastSynced.current) return
      lastSynced.current = serialized
      store.updateProps(id, latest.current.componentProps)
    }, [store, id, serialized])

    useEffect(() => {
      store.onModelProps(id, (newProps) => latest.current.onPropsUpdate?.(newProps))
      return () => store.onModelProps(id, undefined)
    }, [store, id])

    const effective = entry === undefined ? componentProps : { ...componentProps, ...entry.props }
    const context: ComponentContextValue = {
      threadId: "",
      messageId: id,
      content: { type: "component", id, name: config.componentName, props: effective, state: entry?.state },
      interactable: { id, componentName: config.componentName, description: config.description }
    }
    return (
      <ComponentScope value={context}>
        <WrappedComponent {...(effective as ComponentProps)} />
      </ComponentScope>
    )
  }
  const name = WrappedComponent.displayName ?? WrappedComponent.name
  TamboInteractableWrapper.displayName = `withTamboInteractable(${name === "" ? "Component" : name})`
  return TamboInteractableWrapper
}
