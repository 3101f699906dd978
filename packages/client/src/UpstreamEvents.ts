/**
 * Tambo's custom events under the names `@tambo-ai/client` gives them, and
 * its two helpers that tell them apart from other events. A run's stream
 * carries them as `CUSTOM` events, each validated against its schema; a
 * custom event of another name reaches the stream as an `UNKNOWN` event
 * (see core's `Events.UnknownEvent`), never as one of these. Their fields
 * are upstream's; their arrays (a patch's operations, the pending calls) are
 * read-only here.
 *
 * @since 0.2.0
 */
import * as Events from "@tambo-effect/core/Events"

/**
 * A component block starts in a message: `{ messageId, componentId, componentName }`.
 *
 * @since 0.2.0
 * @category Models
 */
export type ComponentStartEvent = Events.ComponentStartEvent

/**
 * JSON Patch operations to a component's props: `{ componentId, operations }`.
 *
 * @since 0.2.0
 * @category Models
 */
export type ComponentPropsDeltaEvent = Events.ComponentPropsDeltaEvent

/**
 * JSON Patch operations to a component's state: `{ componentId, operations }`.
 *
 * @since 0.2.0
 * @category Models
 */
export type ComponentStateDeltaEvent = Events.ComponentStateDeltaEvent

/**
 * A component's props are complete: `{ componentId }`.
 *
 * @since 0.2.0
 * @category Models
 */
export type ComponentEndEvent = Events.ComponentEndEvent

/**
 * A tool call the run waits on: `{ toolCallId, toolName, arguments }`.
 *
 * @since 0.2.0
 * @category Models
 */
export type PendingToolCallEvent = Events.PendingToolCall

/**
 * The run paused for the app's tools: `{ pendingToolCalls }`. The client
 * runs them and continues the run itself.
 *
 * @since 0.2.0
 * @category Models
 */
export type RunAwaitingInputEvent = Events.RunAwaitingInputEvent

/**
 * A message made while another was being generated (an MCP server's sampling
 * or elicitation): `{ messageId, parentMessageId }`.
 *
 * @since 0.2.0
 * @category Models
 */
export type MessageParentEvent = Events.MessageParentEvent

/**
 * Any of Tambo's custom events; `name` tells which.
 *
 * @since 0.2.0
 * @category Models
 */
export type TamboCustomEvent = Events.TamboCustomEvent

/**
 * Whether an event of a run's stream is one of Tambo's custom events: a
 * `CUSTOM` event whose `name` is one of theirs.
 *
 * @example
 * ```ts
 * for await (const { event } of client.run("Show me the forecast")) {
 *   if (isTamboCustomEvent(event) && event.name === "tambo.component.start") {
 *     console.log("rendering", event.value.componentName)
 *   }
 * }
 * ```
 *
 * @since 0.2.0
 * @category Guards
 */
export const isTamboCustomEvent = (
  event: { readonly type?: string | undefined; readonly name?: string | undefined }
): event is TamboCustomEvent =>
  event.type === "CUSTOM" && typeof event.name === "string" && Events.knownCustomEventNames.has(event.name)

/**
 * A `CUSTOM` event as one of Tambo's custom events, or `undefined` when its
 * `name` is not one of theirs.
 *
 * @since 0.2.0
 * @category Utils
 */
export const asTamboCustomEvent = (
  event: { readonly type: "CUSTOM"; readonly name: string }
): TamboCustomEvent | undefined => isTamboCustomEvent(event) ? event : undefined
