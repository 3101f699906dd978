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
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as internal from "./internal/toolRegistry.js"
import type * as Tool from "./Tool.js"

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

/**
 * An in-memory registry.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make: Effect.Effect<ToolRegistry.Service> = internal.make

/**
 * An in-memory registry, empty at start.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer: Layer.Layer<ToolRegistry> = Layer.effect(ToolRegistry, make)
