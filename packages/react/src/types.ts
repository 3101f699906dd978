/**
 * The shapes React code sees: the client's thread and message types, with
 * component blocks carrying the element that renders them, and the
 * registration of a generative component.
 *
 * @since 0.1.0
 */
import type {
  ResourceContent,
  SupportedSchema,
  TamboComponentContent as BaseTamboComponentContent,
  TamboThreadMessage,
  TamboToolUseContent,
  TextContent,
  ToolResultContent
} from "@tambo-effect/client"
import type { ComponentType, ReactElement } from "react"

/**
 * A component block of a message, with `renderedComponent`: the registered
 * React component rendered with the block's (streamed) props. `null` when
 * no registered component has the block's name.
 *
 * @since 0.1.0
 * @category Models
 */
export interface TamboComponentContent extends BaseTamboComponentContent {
  renderedComponent?: ReactElement | null
}

/**
 * Any content block of a message as `useTambo()` returns it.
 *
 * @since 0.1.0
 * @category Models
 */
export type Content =
  | TextContent
  | TamboToolUseContent
  | ToolResultContent
  | TamboComponentContent
  | ResourceContent

/**
 * A message as `useTambo()` returns it: component blocks carry
 * `renderedComponent`, tool calls carry `hasCompleted` and `statusMessage`.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ReactTamboThreadMessage extends TamboThreadMessage {
  content: Array<Content>
}

/**
 * A generative component: what the model is told (`name`, `description`,
 * `propsSchema`) and what renders it.
 *
 * `propsSchema` may be an Effect Schema, any Standard Schema (Zod 4,
 * Valibot, ArkType) or a JSON Schema. While the props stream the component
 * receives them partial (or `loadingComponent` renders instead, if given);
 * once complete they are validated with the schema and the decoded value is
 * passed (the raw props if validation fails or is asynchronous).
 *
 * @example
 * ```tsx
 * const WeatherCard: TamboComponent<{ city: string; temperature: number }> = {
 *   name: "WeatherCard",
 *   description: "Shows the weather in a city",
 *   propsSchema: { type: "object", properties: { city: { type: "string" }, temperature: { type: "number" } } },
 *   component: ({ city, temperature }) => <div>{city}: {temperature}°</div>,
 *   loadingComponent: () => <div>Loading…</div>
 * }
 * ```
 *
 * @since 0.1.0
 * @category Models
 */
export interface TamboComponent<Props = any> {
  readonly name: string
  readonly description: string
  readonly propsSchema: SupportedSchema
  readonly stateSchema?: SupportedSchema | undefined
  /** Rendered with the props (partial while they stream, unless `loadingComponent` is given). */
  readonly component: ComponentType<Props>
  /** Rendered instead of `component`, with the partial props, until the props are complete. */
  readonly loadingComponent?: ComponentType<Partial<Props>> | undefined
}
