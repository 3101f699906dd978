import { type ContextHelperRun, type TamboClient, ToolDefinitionError } from "@tambo-effect/client"
import * as Tool from "@tambo-effect/core/Tool"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { isRecord } from "effect/Predicate"
import type { InteractableComponent, InteractableContextEntry, NewInteractableComponent } from "../types.js"
import { giveBackIfUnsent } from "./unsent.js"

/** The name of the context helper and of the tools, as `@tambo-ai/react` has them. */
export const CONTEXT_HELPER_NAME = "interactables"
const PROPS_TOOL_PREFIX = "update_component_props_"
const STATE_TOOL_PREFIX = "update_component_state_"
const GLOBAL_TOOLS = [
  "get_all_interactable_components",
  "get_interactable_component_by_id",
  "remove_interactable_component"
] as const
/** Tool names stay within the API's 60 characters. */
const MAX_ID_LENGTH = 60 - PROPS_TOOL_PREFIX.length
const ID_PATTERN = /^[A-Za-z0-9_-]+$/

type Props = Record<string, unknown>

/** Functions and React elements are not data: they render, but are neither stored nor shown to the model. */
export const serializableProps = (props: Props): Props => {
  const out: Props = {}
  for (const [key, value] of Object.entries(props)) {
    if (typeof value === "function" || typeof value === "symbol") continue
    if (typeof value === "object" && value !== null && "$$typeof" in value) continue
    out[key] = value
  }
  return out
}

const shallowSame = (a: Props, b: Props): boolean => {
  const keys = Object.keys(b)
  return keys.length === Object.keys(a).length && keys.every((key) => Object.hasOwn(a, key) && Object.is(a[key], b[key]))
}

const jsonSchemaOf = (schema: Tool.SupportedSchema): Tool.JsonObject => {
  const exit = Effect.runSyncExit(Tool.toJsonSchema(schema))
  if (Exit.isSuccess(exit)) return exit.value
  throw Cause.squash(exit.cause)
}

/**
 * The input of an update tool: `componentId` and the changed keys of
 * props or state, each checked against its schema (no key required). Local
 * `$defs` move to the top, where their `$ref`s point.
 */
const updateInput = (
  key: "newProps" | "newState",
  schema: Tool.SupportedSchema | undefined,
  what: string
): Tool.JsonSchema => {
  const full = schema === undefined ? { type: "object", additionalProperties: true } : jsonSchemaOf(schema)
  const { $defs, $schema: _schema, definitions, required: _required, ...partial } = full
  const input = {
    type: "object",
    properties: {
      componentId: { type: "string", description: "The id of the interactable component" },
      [key]: { ...partial, description: `The ${what} to change; leave out those that stay as they are.` }
    },
    required: ["componentId", key],
    ...($defs === undefined ? {} : { $defs }),
    ...(definitions === undefined ? {} : { definitions })
  }
  // Plain JSON by construction: converted schemas are JSON.
  if (!Tool.isJsonSchema(input)) throw new Error("unreachable: a converted schema is not JSON")
  return input
}

const schemaNote = (schema: Tool.SupportedSchema | undefined, tool: string) =>
  schema === undefined ? "Not specified" : `Available: change it with ${tool}`

/**
 * The interactable components under one provider, in an external store
 * (`useSyncExternalStore`), and what the model is given for them on the
 * client it is attached to: two update tools per component
 * (`update_component_props_<id>`, `update_component_state_<id>`), three
 * tools over all of them while there are any, and the `interactables`
 * context helper, which reads the components when a run starts.
 *
 * @since 0.2.0
 * @category Internal
 */
export class InteractableStore {
  #components: ReadonlyArray<InteractableComponent> = []
  readonly #listeners = new Set<() => void>()
  readonly #onModelProps = new Map<string, (props: Props) => void>()
  /** Each component's update tools, built when it is added (so a bad schema throws there). */
  readonly #tools = new Map<string, ReadonlyArray<Tool.Any>>()
  #client: TamboClient | undefined

  readonly getSnapshot = (): ReadonlyArray<InteractableComponent> => this.#components

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /**
   * Registers the tools of every component and the context helper on
   * `client`; the returned function takes them off again.
   */
  attach(client: TamboClient): () => void {
    this.#client = client
    for (const tools of this.#tools.values()) client.registerTools(tools)
    this.#syncGlobalTools()
    return () => {
      if (this.#client !== client) return
      this.#client = undefined
      // The client may be destroyed already (a replaced client): then there is nothing to take off.
      try {
        if (client.getContextHelpers()[CONTEXT_HELPER_NAME] === this.contextHelper) client.removeContextHelper(CONTEXT_HELPER_NAME)
        for (const component of this.#components) this.#unregisterTools(client, component.id)
        for (const name of GLOBAL_TOOLS) client.unregisterTool(name)
      } catch {
        // nothing to do
      }
    }
  }

  /** Adds a component and registers its tools; throws a `ToolDefinitionError` for an id no tool name may hold. */
  add(component: NewInteractableComponent): string {
    const id = component.id ?? `${component.name}-${Math.random().toString(36).slice(2, 7)}`
    if (!ID_PATTERN.test(id) || id.length > MAX_ID_LENGTH) {
      throw new ToolDefinitionError({
        reason: "InvalidName",
        message: `Interactable component id ${
          JSON.stringify(id)
        } is invalid: use at most ${MAX_ID_LENGTH} letters, digits, "_" or "-"`,
        definitionName: id
      })
    }
    const entry: InteractableComponent = {
      ...component,
      id,
      props: serializableProps(isRecord(component.props) ? component.props : {}),
      state: component.state ?? {}
    }
    const tools = [this.#propsTool(entry), this.#stateTool(entry)]
    this.#client?.registerTools(tools)
    this.#tools.set(id, tools)
    this.#set([...this.#components.filter((c) => c.id !== id), entry])
    this.#syncGlobalTools()
    return id
  }

  remove(id: string): void {
    if (!this.#components.some((c) => c.id === id)) return
    if (this.#client !== undefined) this.#unregisterTools(this.#client, id)
    this.#onModelProps.delete(id)
    this.#tools.delete(id)
    this.#set(this.#components.filter((c) => c.id !== id))
    this.#syncGlobalTools()
  }

  clear(): void {
    for (const component of this.#components) this.remove(component.id)
  }

  get(id: string): InteractableComponent | undefined {
    return this.#components.find((c) => c.id === id)
  }

  /** Merges props in (shallowly); the answer is what the model is told. */
  updateProps(id: string, newProps: Props): string {
    if (Object.keys(newProps).length === 0) return `Warning: no props given for component ${id}.`
    this.#patch(id, (c) => {
      const props = { ...c.props, ...serializableProps(newProps) }
      return shallowSame(c.props, props) ? c : { ...c, props }
    })
    return "Updated successfully"
  }

  /** Merges state in (shallowly). */
  updateState(id: string, newState: Props): string {
    if (Object.keys(newState).length === 0) return `Warning: no state given for component ${id}.`
    this.#patch(id, (c) => {
      const previous = c.state ?? {}
      const state = { ...previous, ...newState }
      return shallowSame(previous, state) ? c : { ...c, state }
    })
    return "Updated successfully"
  }

  setSelected(id: string, isSelected: boolean): void {
    this.#patch(id, (c) => (c.isSelected ?? false) === isSelected ? c : { ...c, isSelected })
  }

  clearSelections(): void {
    if (!this.#components.some((c) => c.isSelected === true)) return
    this.#set(this.#components.map((c) => c.isSelected === true ? { ...c, isSelected: false } : c))
  }

  /** Called with the new props after each change the model makes through the props tool. */
  onModelProps(id: string, listener: ((props: Props) => void) | undefined): void {
    if (listener === undefined) this.#onModelProps.delete(id)
    else this.#onModelProps.set(id, listener)
  }

  /**
   * The context helper registered on the client: what the model is told
   * when a run starts; selections hold for that one message, so it takes them.
   */
  readonly contextHelper = (run?: ContextHelperRun): Record<string, unknown> | undefined => {
    const taken = this.take()
    // A run of the client's own `run` that leaves its message unsent gives the selections back.
    giveBackIfUnsent(this.#client, run, taken.giveBack)
    return taken.context
  }

  /**
   * What a message tells the model, taking the selections: `giveBack`
   * selects again those still here, if it is not sent.
   */
  take(): { readonly context: Record<string, unknown> | undefined; readonly giveBack: () => void } {
    const context = this.context()
    const selected = this.#components.filter((c) => c.isSelected === true).map((c) => c.id)
    this.clearSelections()
    return {
      context,
      giveBack: () => {
        for (const id of selected) this.setSelected(id, true)
      }
    }
  }

  /** What the next run will tell the model, without taking the selections. */
  context(): Record<string, unknown> | undefined {
    const components = this.#components
    if (components.length === 0) return undefined
    const entries = components.map((c): InteractableContextEntry => ({
      id: c.id,
      componentName: c.name,
      description: c.description,
      props: c.props,
      propsSchema: schemaNote(c.propsSchema, `${PROPS_TOOL_PREFIX}${c.id}`),
      state: c.state,
      isSelected: c.isSelected ?? false,
      stateSchema: schemaNote(c.stateSchema, `${STATE_TOOL_PREFIX}${c.id}`)
    }))
    return { components: entries }
  }

  #patch(id: string, change: (component: InteractableComponent) => InteractableComponent): void {
    const index = this.#components.findIndex((c) => c.id === id)
    if (index < 0) return
    const next = change(this.#components[index]!)
    if (next === this.#components[index]) return
    const components = [...this.#components]
    components[index] = next
    this.#set(components)
  }

  #set(components: ReadonlyArray<InteractableComponent>): void {
    this.#components = components
    for (const listener of [...this.#listeners]) listener()
  }

  #unregisterTools(client: TamboClient, id: string): void {
    client.unregisterTool(`${PROPS_TOOL_PREFIX}${id}`)
    client.unregisterTool(`${STATE_TOOL_PREFIX}${id}`)
  }

  /** The component a tool call names: its own, or an error for the model. */
  #target(own: string, componentId: unknown): Effect.Effect<InteractableComponent, Tool.ToolCallError> {
    return Effect.suspend(() => {
      const component = this.get(own)
      if (componentId !== own || component === undefined) {
        return Effect.fail(
          new Tool.ToolCallError({
            reason: "InvalidArguments",
            message: component === undefined
              ? `Component ${own} is no longer on the page.`
              : `This tool changes component ${own}; it was called with componentId ${JSON.stringify(componentId)}.`
          })
        )
      }
      return Effect.succeed(component)
    })
  }

  /** The merged props or state must satisfy the whole schema, not only the changed keys. */
  #checked(schema: Tool.SupportedSchema | undefined, merged: Props, what: string, id: string) {
    return schema === undefined ? Effect.void : Tool.validate(schema, merged).pipe(
      Effect.mapError((error) =>
        new Tool.ToolCallError({
          reason: "InvalidArguments",
          message: `The ${what} of component ${id} would not match its schema, so nothing changed:\n${error.message}`
        })
      ),
      Effect.asVoid
    )
  }

  #propsTool(component: InteractableComponent): Tool.Any {
    const { id, name } = component
    return Tool.make({
      name: `${PROPS_TOOL_PREFIX}${id}`,
      description:
        `Changes the props of the interactable component ${id} (${name}). Give only the props to change.`,
      input: updateInput("newProps", component.propsSchema, "props"),
      annotations: { tamboStreamableHint: true, ...component.annotations },
      execute: (args: unknown) =>
        Effect.gen(this, function*() {
          const { componentId, newProps } = isRecord(args) ? args : {}
          const current = yield* this.#target(id, componentId)
          const patch = isRecord(newProps) ? newProps : {}
          yield* this.#checked(current.propsSchema, { ...current.props, ...patch }, "props", id)
          const answer = this.updateProps(id, patch)
          const updated = this.get(id)
          if (updated !== undefined && updated !== current) this.#onModelProps.get(id)?.(updated.props)
          return answer
        })
    })
  }

  #stateTool(component: InteractableComponent): Tool.Any {
    const { id, name } = component
    return Tool.make({
      name: `${STATE_TOOL_PREFIX}${id}`,
      description:
        `Changes the state of the interactable component ${id} (${name}). Give only the state keys to change.`,
      input: updateInput("newState", component.stateSchema, "state values"),
      annotations: { tamboStreamableHint: true, ...component.annotations },
      execute: (args: unknown) =>
        Effect.gen(this, function*() {
          const { componentId, newState } = isRecord(args) ? args : {}
          const current = yield* this.#target(id, componentId)
          const patch = isRecord(newState) ? newState : {}
          yield* this.#checked(current.stateSchema, { ...current.state, ...patch }, "state", id)
          return this.updateState(id, patch)
        })
    })
  }

  /** The tools over all components exist while there is at least one. */
  #syncGlobalTools(): void {
    const client = this.#client
    if (client === undefined) return
    // The tools over all interactables and the context helper are there while one is on the page.
    if (this.#components.length === 0) {
      for (const name of GLOBAL_TOOLS) client.unregisterTool(name)
      if (client.getContextHelpers()[CONTEXT_HELPER_NAME] === this.contextHelper) client.removeContextHelper(CONTEXT_HELPER_NAME)
      return
    }
    if (!Object.hasOwn(client.getContextHelpers(), CONTEXT_HELPER_NAME)) {
      client.addContextHelper(CONTEXT_HELPER_NAME, this.contextHelper)
    }
    const byId: Tool.JsonSchema = {
      type: "object",
      properties: { componentId: { type: "string" } },
      required: ["componentId"]
    }
    const describe = (c: InteractableComponent) => ({
      id: c.id,
      componentName: c.name,
      description: c.description,
      props: c.props,
      state: c.state
    })
    const notFound = (componentId: unknown) => ({
      success: false,
      error: `No interactable component has the id ${JSON.stringify(componentId)}`
    })
    const idOf = (args: unknown) => (isRecord(args) ? args.componentId : undefined)
    client.registerTools([
      {
        name: "get_all_interactable_components",
        description:
          "Lists the interactable components on the page (components you can change for the user), with their props and state. Use it when the user asks about them.",
        inputSchema: { type: "object", properties: {} },
        tool: () => ({ components: this.#components.map(describe) })
      },
      {
        name: "get_interactable_component_by_id",
        description: "Reads one interactable component, by its id.",
        inputSchema: byId,
        tool: (args: unknown) => {
          const component = this.get(String(idOf(args)))
          return component === undefined ? notFound(idOf(args)) : { success: true, component: describe(component) }
        }
      },
      {
        name: "remove_interactable_component",
        description: "Stops a component from being interactable: you can no longer read or change it.",
        inputSchema: byId,
        tool: (args: unknown) => {
          const componentId = String(idOf(args))
          const component = this.get(componentId)
          if (component === undefined) return notFound(idOf(args))
          this.remove(componentId)
          return { success: true, componentId, removedComponent: describe(component) }
        }
      }
    ])
  }
}
