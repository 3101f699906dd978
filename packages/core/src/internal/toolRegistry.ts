/**
 * The in-memory `ToolRegistry`: the registered tools and components in a
 * `Ref`, each resolved once at registration (its schemas converted, its API
 * payload made), kept in registration order, and the optional fallback that
 * answers calls of tools that are not registered.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Tool from "../Tool.js"
import type { ToolRegistry } from "../ToolRegistry.js"

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

/** An in-memory registry, empty at start. @internal */
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

  return {
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
  }
})
