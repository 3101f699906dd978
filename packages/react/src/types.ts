/**
 * The shapes React code sees: the client's thread and message types, with
 * component blocks carrying the element that renders them, the
 * registration of a generative component, and what the hooks return about
 * streamed props, reads, staged images, context attachments and
 * interactable components.
 *
 * @since 0.1.0
 */
import type {
  InitialInputMessage,
  ResourceContent,
  Suggestion,
  ToolDefinition,
  SupportedSchema,
  TamboComponentContent as BaseTamboComponentContent,
  TamboThreadMessage,
  TamboToolUseContent,
  TextContent,
  ToolResultContent
} from "@tambo-effect/client"
import type { ToolAnnotations } from "@tambo-effect/core/Tool"
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
 * passed (the raw props if validation fails or is asynchronous). Either way
 * they are read as the schema wrote them: the API gives the model every prop
 * as required, the optional ones nullable, so the `null` it sends for an
 * optional prop that does not take `null` is left out (or the prop's
 * `default` given); the store keeps the props as sent.
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
  /**
   * Tools that come with the component: registered with it (and like the
   * provider's `tools`, they stay registered for the client's lifetime).
   *
   * @since 0.2.0
   */
  readonly associatedTools?: ReadonlyArray<ToolDefinition> | undefined
}

/**
 * Where a component's props are, as a whole.
 *
 * @since 0.1.0
 * @category Models
 */
export interface StreamStatus {
  /** Nothing received yet. */
  readonly isPending: boolean
  /** Props are arriving. */
  readonly isStreaming: boolean
  /** Every prop arrived: the props are final. */
  readonly isSuccess: boolean
  /** The run failed or was cancelled before the props were complete. */
  readonly isError: boolean
  readonly streamError?: Error | undefined
}

/**
 * Where one prop is.
 *
 * @since 0.1.0
 * @category Models
 */
export interface PropStatus {
  /** Not received yet. */
  readonly isPending: boolean
  /** Receiving: its value may still grow. */
  readonly isStreaming: boolean
  /** Complete. */
  readonly isSuccess: boolean
  readonly error?: Error | undefined
}

/**
 * The state of a read: the last data, the last error, and whether a read is
 * in flight.
 *
 * @since 0.1.0
 * @category Models
 */
export interface QueryState<A> {
  readonly data: A | undefined
  readonly error: Error | undefined
  /**
   * As TanStack Query says it: `error` once the last read failed,
   * `success` while there is data, else `pending`.
   *
   * @since 0.2.0
   */
  readonly status: "pending" | "error" | "success"
  /** `status` is `pending`: no data yet, no failure. @since 0.2.0 */
  readonly isPending: boolean
  /** No data yet and a read is due or in flight. */
  readonly isLoading: boolean
  /** A read is in flight (the first one or a refresh). */
  readonly isFetching: boolean
  /** `fetching` while a read is in flight, else `idle`. @since 0.2.0 */
  readonly fetchStatus: "fetching" | "idle"
  /** A read is in flight while there is data or a failure already (a refresh). @since 0.2.0 */
  readonly isRefetching: boolean
  /** `status` is `error`. */
  readonly isError: boolean
  /** The read failed before any data came. @since 0.2.0 */
  readonly isLoadingError: boolean
  /** A refresh failed; the data of the read before stays. @since 0.2.0 */
  readonly isRefetchError: boolean
  /** `status` is `success` (also while a refresh is in flight). */
  readonly isSuccess: boolean
  /** A read of this key has ended, well or not. @since 0.2.0 */
  readonly isFetched: boolean
  /** Whether the hook reads at all (see its `enabled`). @since 0.2.0 */
  readonly isEnabled: boolean
  /** When `data` arrived (epoch ms), `0` without data. @since 0.2.0 */
  readonly dataUpdatedAt: number
  /** When the last failure arrived (epoch ms), `0` without one. @since 0.2.0 */
  readonly errorUpdatedAt: number
  /** Failed reads in a row since the last success. @since 0.2.0 */
  readonly failureCount: number
  /** The last failure while `failureCount` is not 0, else `null`. @since 0.2.0 */
  readonly failureReason: Error | null
  /**
   * Reads again; resolves once a read answered (this one, or a newer one
   * that replaced it), so awaited, the data is the new read's.
   */
  readonly refetch: () => Promise<void>
}

/**
 * How a thread hook reads, by the names of TanStack Query's options (those
 * `@tambo-ai/react`'s hooks take as their last argument).
 *
 * @since 0.2.0
 * @category Models
 */
export interface TamboQueryOptions {
  /** `false` reads nothing (and refreshes nothing). Default `true`. */
  readonly enabled?: boolean | undefined
  /** How old (ms) what was read may be when the page becomes visible again before it is read again. */
  readonly staleTime?: number | undefined
  /** `false`: not read again when the page becomes visible. Default `true`. */
  readonly refetchOnWindowFocus?: boolean | undefined
  /** Read again every this many ms while mounted; `false` (the default) never. */
  readonly refetchInterval?: number | false | undefined
}

/**
 * How store changes reach React: at most once per animation frame, or as
 * the client notifies (at most once per microtask).
 *
 * @since 0.1.0
 * @category Models
 */
export type NotifyMode = "animationFrame" | "microtask"

/**
 * An image added to the message being composed, read into a data URL (to
 * show it before it is sent).
 *
 * @since 0.2.0
 * @category Models
 */
export interface StagedImage {
  readonly id: string
  readonly name: string
  /** `data:<type>;base64,<data>`: usable as an `<img src>`. */
  readonly dataUrl: string
  readonly file: File
  readonly size: number
  /** The MIME type, `image/…`. */
  readonly type: string
}

/**
 * Context attached to the next message: sent as
 * `additionalContext.contextAttachments` (a list of these), then dropped.
 *
 * @since 0.2.0
 * @category Models
 */
export interface ContextAttachment {
  readonly id: string
  /** What a UI shows for it. */
  readonly displayName?: string | undefined
  /** What the model reads. */
  readonly context: string
  /** To group attachments of one kind. */
  readonly type?: string | undefined
}

/**
 * A component on the page that the model can read and change: its props
 * and state as they are now, and how to describe it.
 *
 * @since 0.2.0
 * @category Models
 */
export interface InteractableComponent<Props = Record<string, unknown>, State = Record<string, unknown>> {
  /** Unique per mounted instance: `<name>-<random>` unless given. */
  readonly id: string
  readonly name: string
  readonly description: string
  readonly component?: ComponentType<any> | undefined
  /** The props as they are now: the parent's, with the model's changes on top (serializable ones only). */
  readonly props: Props
  readonly propsSchema?: SupportedSchema | undefined
  readonly state?: State | undefined
  readonly stateSchema?: SupportedSchema | undefined
  /** Set for the next message only: the model is told the user picked this component. */
  readonly isSelected?: boolean | undefined
  /** Annotations of its update tools (default `tamboStreamableHint: true`). */
  readonly annotations?: ToolAnnotations | undefined
}

/**
 * What `addInteractableComponent` takes: a component without its id (or
 * with one chosen by the caller).
 *
 * @since 0.2.0
 * @category Models
 */
export type NewInteractableComponent =
  & Omit<InteractableComponent, "id">
  & { readonly id?: string | undefined }

/**
 * What the model sees of one interactable, under `additionalContext.interactables.components`.
 *
 * @since 0.2.0
 * @category Models
 */
export interface InteractableContextEntry {
  readonly id: string
  readonly componentName: string
  readonly description: string
  readonly props: unknown
  readonly propsSchema: string
  readonly state: unknown
  readonly isSelected: boolean
  readonly stateSchema: string
}

/**
 * What `useTamboConfig` returns: the provider's settings of the conversation
 * (the props it was given, as given; unset when the provider was given a
 * `client`, whose options are its own).
 *
 * @since 0.2.0
 * @category Models
 */
export interface TamboConfig {
  /** The user the threads belong to. */
  readonly userKey?: string | undefined
  /** Whether threads are named after a few messages (the client's default: `true`). */
  readonly autoGenerateThreadName?: boolean | undefined
  /** After how many messages a thread is named (the client's default: 3). */
  readonly autoGenerateNameThreshold?: number | undefined
  /** Messages that open every new thread. */
  readonly initialMessages?: ReadonlyArray<InitialInputMessage> | undefined
}

// -----------------------------------------------------------------------------
// The names `@tambo-ai/react` 1.3 gives these shapes: code that names them
// compiles against this package unchanged.
// -----------------------------------------------------------------------------

/**
 * What `accept` of `useTamboSuggestions()` takes.
 *
 * @since 0.2.0
 * @category Models
 */
export interface AcceptSuggestionOptions {
  readonly suggestion: Suggestion
  /** Submit the suggestion's text at once, rather than only putting it in the input. Default `false`. */
  readonly shouldSubmit?: boolean | undefined
}

/**
 * A registered generative component.
 *
 * @since 0.2.0
 * @category Models
 */
export type RegisteredComponent = TamboComponent

/**
 * Registered generative components by name.
 *
 * @since 0.2.0
 * @category Models
 */
export type ComponentRegistry = Record<string, RegisteredComponent>
