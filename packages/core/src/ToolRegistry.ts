/**
 * The registered tools and components, and their API payloads.
 *
 * Registration validates a definition and converts its schemas to JSON
 * Schema once; an invalid definition fails with a `ToolDefinitionError` and
 * changes nothing. Registering a name again replaces the earlier entry.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Tool from "./Tool.js"

/**
 * @since 0.1.0
 * @category Context
 */
export class ToolRegistry extends Context.Tag("@tambo-effect/core/ToolRegistry")<
  ToolRegistry,
  ToolRegistry.Service
>() {}

/**
 * @since 0.1.0
 */
export declare namespace ToolRegistry {
  /**
   * @since 0.1.0
   * @category Models
   */
  export interface Service {
    /** Registers a tool, replacing any tool of the same name. */
    readonly register: (tool: Tool.Definition) => Effect.Effect<void, Tool.ToolDefinitionError>
    /** Registers several tools: all of them, or none if one is invalid. */
    readonly registerMany: (tools: Iterable<Tool.Definition>) => Effect.Effect<void, Tool.ToolDefinitionError>
    /** Removes a tool; succeeds with whether it was registered. */
    readonly unregister: (name: string) => Effect.Effect<boolean>
    readonly get: (name: string) => Effect.Effect<Option.Option<Tool.ResolvedTool>>
    /** The registered tools, in registration order. */
    readonly list: Effect.Effect<ReadonlyArray<Tool.ResolvedTool>>
    /** The registered tools' definitions as given, by name (e.g. for `beforeRun` hooks). */
    readonly toolMap: Effect.Effect<Readonly<Record<string, Tool.Definition>>>
    /** The run request's `tools` payload. */
    readonly toApiTools: Effect.Effect<ReadonlyArray<Tool.ApiTool>>
    /** Registers a component, replacing any component of the same name. */
    readonly registerComponent: (component: Tool.AvailableComponent) => Effect.Effect<void, Tool.ToolDefinitionError>
    /** Registers several components: all of them, or none if one is invalid. */
    readonly registerComponents: (
      components: Iterable<Tool.AvailableComponent>
    ) => Effect.Effect<void, Tool.ToolDefinitionError>
    /** Removes a component; succeeds with whether it was registered. */
    readonly unregisterComponent: (name: string) => Effect.Effect<boolean>
    /** The registered components as given, in registration order. */
    readonly listComponents: Effect.Effect<ReadonlyArray<Tool.AvailableComponent>>
    /** The run request's `availableComponents` payload. */
    readonly toApiComponents: Effect.Effect<ReadonlyArray<Tool.ApiComponent>>
    /**
     * Sets (or with `undefined` removes) what answers calls of tools that are
     * not registered: given the name called, a tool definition to run for it.
     * It is not a registered tool: `get`, `list` and the API payloads do not
     * show it.
     *
     * @since 0.2.0
     */
    readonly setFallback: (fallback: Fallback | undefined) => Effect.Effect<void>
    /**
     * The registered tool of that name, else the fallback's tool for it (none
     * without a fallback, or when its definition is invalid, e.g. a name no
     * tool may have).
     *
     * @since 0.2.0
     */
    readonly getOrFallback: (name: string) => Effect.Effect<Option.Option<Tool.ResolvedTool>>
  }

  /**
   * Makes a tool for a call of an unregistered tool, from the name called.
   *
   * @since 0.2.0
   * @category Models
   */
  export type Fallback = (toolName: string) => Tool.Definition
}

interface RegisteredComponent {
  readonly component: Tool.AvailableComponent
  readonly api: Tool.ApiComponent
}

interface State {
  readonly tools: ReadonlyMap<string, Tool.ResolvedTool>
  readonly components: ReadonlyMap<string, RegisteredComponent>
  readonly fallback?: ToolRegistry.Fallback | undefined
}

const withEntries = <V>(map: ReadonlyMap<string, V>, entries: ReadonlyArray<readonly [string, V]>) => {
  const next = new Map(map)
  // A replaced entry keeps its place in the registration order.
  for (const [key, value] of entries) next.set(key, value)
  return next
}

const without = <V>(map: ReadonlyMap<string, V>, key: string) => {
  const next = new Map(map)
  next.delete(key)
  return next
}

/**
 * An in-memory registry.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make: Effect.Effect<ToolRegistry.Service> = Effect.gen(function*() {
  const state = yield* Ref.make<State>({ tools: new Map(), components: new Map() })

  const registerMany = (tools: Iterable<Tool.Definition>) =>
    Effect.forEach(Array.from(tools), Tool.resolve).pipe(
      Effect.flatMap((resolved) =>
        Ref.update(state, (s) => ({
          ...s,
          tools: withEntries(s.tools, resolved.map((tool) => [tool.name, tool] as const))
        }))
      ),
      Effect.withSpan("ToolRegistry.register")
    )

  const registerComponents = (components: Iterable<Tool.AvailableComponent>) =>
    Effect.forEach(
      Array.from(components),
      (component) => Effect.map(Tool.toApiComponent(component), (api) => [api.name, { component, api }] as const)
    ).pipe(
      Effect.flatMap((entries) => Ref.update(state, (s) => ({ ...s, components: withEntries(s.components, entries) }))),
      Effect.withSpan("ToolRegistry.registerComponent")
    )

  const unregisterFrom = (key: "tools" | "components", name: string) =>
    Ref.modify(state, (s): readonly [boolean, State] => {
      if (!s[key].has(name)) return [false, s]
      return [true, key === "tools" ? { ...s, tools: without(s.tools, name) } : { ...s, components: without(s.components, name) }]
    })

  const getOrFallback = (name: string) =>
    Effect.flatMap(Ref.get(state), (s): Effect.Effect<Option.Option<Tool.ResolvedTool>> => {
      const registered = s.tools.get(name)
      if (registered !== undefined) return Effect.succeed(Option.some(registered))
      const fallback = s.fallback
      if (fallback === undefined) return Effect.succeed(Option.none())
      return Effect.suspend(() => Tool.resolve(fallback(name))).pipe(Effect.option)
    })

  return ToolRegistry.of({
    register: (tool) => registerMany([tool]),
    registerMany,
    unregister: (name) => unregisterFrom("tools", name),
    get: (name) => Effect.map(Ref.get(state), (s) => Option.fromNullable(s.tools.get(name))),
    list: Effect.map(Ref.get(state), (s) => Array.from(s.tools.values())),
    toolMap: Effect.map(
      Ref.get(state),
      (s) => Object.fromEntries(Array.from(s.tools.values(), (tool) => [tool.name, tool.definition] as const))
    ),
    toApiTools: Effect.map(Ref.get(state), (s) => Array.from(s.tools.values(), (tool) => tool.api)),
    registerComponent: (component) => registerComponents([component]),
    registerComponents,
    unregisterComponent: (name) => unregisterFrom("components", name),
    listComponents: Effect.map(Ref.get(state), (s) => Array.from(s.components.values(), (entry) => entry.component)),
    toApiComponents: Effect.map(Ref.get(state), (s) => Array.from(s.components.values(), (entry) => entry.api)),
    setFallback: (fallback) => Ref.update(state, (s) => ({ ...s, fallback })),
    getOrFallback
  })
})

/**
 * An in-memory registry, empty at start.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer: Layer.Layer<ToolRegistry> = Layer.effect(ToolRegistry, make)
