/**
 * The events of a run's stream: AG-UI events plus Tambo's custom events,
 * as Effect Schemas, and a fast decoder for SSE `data:` frames.
 *
 * Decoding runs once per event on streams of 100k+ events, so
 * {@link decodeFrame} dispatches on `type` (and a custom event's `name`) to
 * the schema's `Schema.is`, except for the few events long streams are made
 * of, which have hand-written checks held to the same verdicts; since no
 * event schema transforms its input, a valid parsed object is returned as is,
 * without copying. Full Schema decoding only runs on failure, to build the
 * error message.
 *
 * Events whose `type` (or custom `name`) is not known are kept, wrapped as
 * {@link UnknownEvent}: the protocol grows, and ignoring is the safe default.
 *
 * @since 0.1.0
 */
import type * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as internal from "./internal/events/decoder.js"
import type { DecodeError } from "./TamboError.js"

const baseFields = {
  timestamp: Schema.optional(Schema.Number),
  rawEvent: Schema.optional(Schema.Unknown)
}

const event = <const T extends string, Fields extends Schema.Struct.Fields>(type: T, fields: Fields) =>
  Schema.Struct({ type: Schema.Literal(type), ...baseFields, ...fields })

// ---------------------------------------------------------------------------
// Run lifecycle
// ---------------------------------------------------------------------------

/**
 * A run started on a thread. For a new thread this is where its id appears.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const RunStartedEvent = event("RUN_STARTED", {
  threadId: Schema.String,
  runId: Schema.String,
  parentRunId: Schema.optional(Schema.String),
  input: Schema.optional(Schema.Unknown)
})
/** @since 0.1.0 @category Models */
export type RunStartedEvent = typeof RunStartedEvent.Type

/**
 * The run ended normally (possibly paused for client-side tools).
 *
 * @since 0.1.0
 * @category Schemas
 */
export const RunFinishedEvent = event("RUN_FINISHED", {
  threadId: Schema.String,
  runId: Schema.String,
  result: Schema.optional(Schema.Unknown),
  /** AG-UI 1.0: `{ type: "success" | "interrupt" | "cancelled", ... }`. */
  outcome: Schema.optional(Schema.Unknown)
})
/** @since 0.1.0 @category Models */
export type RunFinishedEvent = typeof RunFinishedEvent.Type

/**
 * The run failed, or was cancelled (`code: "CANCELLED"`). Tambo adds its
 * error classification; `category` is kept as a string so a new category
 * does not fail the stream.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const RunErrorEvent = event("RUN_ERROR", {
  message: Schema.String,
  code: Schema.optional(Schema.String),
  category: Schema.optional(Schema.String),
  isRetryable: Schema.optional(Schema.Boolean),
  status: Schema.optional(Schema.Number)
})
/** @since 0.1.0 @category Models */
export type RunErrorEvent = typeof RunErrorEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const StepStartedEvent = event("STEP_STARTED", { stepName: Schema.String })
/** @since 0.1.0 @category Models */
export type StepStartedEvent = typeof StepStartedEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const StepFinishedEvent = event("STEP_FINISHED", { stepName: Schema.String })
/** @since 0.1.0 @category Models */
export type StepFinishedEvent = typeof StepFinishedEvent.Type

// ---------------------------------------------------------------------------
// Text messages
// ---------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category Schemas
 */
export const TextMessageRole = Schema.Literal("developer", "system", "assistant", "user")

/**
 * @since 0.1.0
 * @category Schemas
 */
export const TextMessageStartEvent = event("TEXT_MESSAGE_START", {
  messageId: Schema.String,
  role: Schema.optional(TextMessageRole),
  name: Schema.optional(Schema.String)
})
/** @since 0.1.0 @category Models */
export type TextMessageStartEvent = typeof TextMessageStartEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const TextMessageContentEvent = event("TEXT_MESSAGE_CONTENT", {
  messageId: Schema.String,
  delta: Schema.String
})
/** @since 0.1.0 @category Models */
export type TextMessageContentEvent = typeof TextMessageContentEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const TextMessageEndEvent = event("TEXT_MESSAGE_END", { messageId: Schema.String })
/** @since 0.1.0 @category Models */
export type TextMessageEndEvent = typeof TextMessageEndEvent.Type

// ---------------------------------------------------------------------------
// Tool calls
// ---------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category Schemas
 */
export const ToolCallStartEvent = event("TOOL_CALL_START", {
  toolCallId: Schema.String,
  toolCallName: Schema.String,
  parentMessageId: Schema.optional(Schema.String)
})
/** @since 0.1.0 @category Models */
export type ToolCallStartEvent = typeof ToolCallStartEvent.Type

/**
 * A fragment of the call's JSON arguments.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const ToolCallArgsEvent = event("TOOL_CALL_ARGS", {
  toolCallId: Schema.String,
  delta: Schema.String
})
/** @since 0.1.0 @category Models */
export type ToolCallArgsEvent = typeof ToolCallArgsEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const ToolCallEndEvent = event("TOOL_CALL_END", { toolCallId: Schema.String })
/** @since 0.1.0 @category Models */
export type ToolCallEndEvent = typeof ToolCallEndEvent.Type

/**
 * What a server-side tool returned. AG-UI 1.0 also allows content parts
 * instead of a string.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const ToolCallResultEvent = event("TOOL_CALL_RESULT", {
  messageId: Schema.String,
  toolCallId: Schema.String,
  content: Schema.Union(Schema.String, Schema.Array(Schema.Unknown)),
  role: Schema.optional(Schema.Literal("tool"))
})
/** @since 0.1.0 @category Models */
export type ToolCallResultEvent = typeof ToolCallResultEvent.Type

// ---------------------------------------------------------------------------
// State and snapshots
// ---------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category Schemas
 */
export const StateSnapshotEvent = event("STATE_SNAPSHOT", { snapshot: Schema.Unknown })
/** @since 0.1.0 @category Models */
export type StateSnapshotEvent = typeof StateSnapshotEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const StateDeltaEvent = event("STATE_DELTA", { delta: Schema.Array(Schema.Unknown) })
/** @since 0.1.0 @category Models */
export type StateDeltaEvent = typeof StateDeltaEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const MessagesSnapshotEvent = event("MESSAGES_SNAPSHOT", { messages: Schema.Array(Schema.Unknown) })
/** @since 0.1.0 @category Models */
export type MessagesSnapshotEvent = typeof MessagesSnapshotEvent.Type

/**
 * AG-UI 1.0: an activity message's whole content — progress that is not
 * conversation content (a plan, a search) — replacing what the message had
 * unless `replace` is `false`.
 *
 * @since 0.2.0
 * @category Schemas
 */
export const ActivitySnapshotEvent = event("ACTIVITY_SNAPSHOT", {
  messageId: Schema.String,
  activityType: Schema.String,
  content: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  replace: Schema.optional(Schema.Boolean)
})
/** @since 0.2.0 @category Models */
export type ActivitySnapshotEvent = typeof ActivitySnapshotEvent.Type

/**
 * AG-UI 1.0: RFC 6902 operations on an activity message's content.
 *
 * @since 0.2.0
 * @category Schemas
 */
export const ActivityDeltaEvent = event("ACTIVITY_DELTA", {
  messageId: Schema.String,
  activityType: Schema.String,
  patch: Schema.Array(Schema.Unknown)
})
/** @since 0.2.0 @category Models */
export type ActivityDeltaEvent = typeof ActivityDeltaEvent.Type

// ---------------------------------------------------------------------------
// Reasoning: the names Tambo sends today (AG-UI 0.0.x "thinking", without
// message ids) and their AG-UI 1.0 "reasoning" successors.
// ---------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category Schemas
 */
export const ThinkingStartEvent = event("THINKING_START", { title: Schema.optional(Schema.String) })
/** @since 0.1.0 @category Models */
export type ThinkingStartEvent = typeof ThinkingStartEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const ThinkingEndEvent = event("THINKING_END", {})
/** @since 0.1.0 @category Models */
export type ThinkingEndEvent = typeof ThinkingEndEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const ThinkingTextMessageStartEvent = event("THINKING_TEXT_MESSAGE_START", {})
/** @since 0.1.0 @category Models */
export type ThinkingTextMessageStartEvent = typeof ThinkingTextMessageStartEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const ThinkingTextMessageContentEvent = event("THINKING_TEXT_MESSAGE_CONTENT", { delta: Schema.String })
/** @since 0.1.0 @category Models */
export type ThinkingTextMessageContentEvent = typeof ThinkingTextMessageContentEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const ThinkingTextMessageEndEvent = event("THINKING_TEXT_MESSAGE_END", {})
/** @since 0.1.0 @category Models */
export type ThinkingTextMessageEndEvent = typeof ThinkingTextMessageEndEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const ReasoningStartEvent = event("REASONING_START", { messageId: Schema.String })
/** @since 0.1.0 @category Models */
export type ReasoningStartEvent = typeof ReasoningStartEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const ReasoningMessageStartEvent = event("REASONING_MESSAGE_START", {
  messageId: Schema.String,
  // AG-UI 1.0 says "reasoning"; the value changes nothing here, so any is accepted.
  role: Schema.optional(Schema.String)
})
/** @since 0.1.0 @category Models */
export type ReasoningMessageStartEvent = typeof ReasoningMessageStartEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const ReasoningMessageContentEvent = event("REASONING_MESSAGE_CONTENT", {
  messageId: Schema.String,
  delta: Schema.String
})
/** @since 0.1.0 @category Models */
export type ReasoningMessageContentEvent = typeof ReasoningMessageContentEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const ReasoningMessageEndEvent = event("REASONING_MESSAGE_END", { messageId: Schema.String })
/** @since 0.1.0 @category Models */
export type ReasoningMessageEndEvent = typeof ReasoningMessageEndEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const ReasoningMessageChunkEvent = event("REASONING_MESSAGE_CHUNK", {
  messageId: Schema.optional(Schema.String),
  delta: Schema.optional(Schema.String)
})
/** @since 0.1.0 @category Models */
export type ReasoningMessageChunkEvent = typeof ReasoningMessageChunkEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const ReasoningEndEvent = event("REASONING_END", { messageId: Schema.String })
/** @since 0.1.0 @category Models */
export type ReasoningEndEvent = typeof ReasoningEndEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const ReasoningEncryptedValueEvent = event("REASONING_ENCRYPTED_VALUE", {
  subtype: Schema.String,
  entityId: Schema.String,
  encryptedValue: Schema.String
})
/** @since 0.1.0 @category Models */
export type ReasoningEncryptedValueEvent = typeof ReasoningEncryptedValueEvent.Type

// ---------------------------------------------------------------------------
// Custom events
// ---------------------------------------------------------------------------

/**
 * One RFC 6902 operation, as carried by the component delta events.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const JsonPatchOperation = Schema.Union(
  Schema.Struct({ op: Schema.Literal("add"), path: Schema.String, value: Schema.Unknown }),
  Schema.Struct({ op: Schema.Literal("remove"), path: Schema.String }),
  Schema.Struct({ op: Schema.Literal("replace"), path: Schema.String, value: Schema.Unknown }),
  Schema.Struct({ op: Schema.Literal("move"), from: Schema.String, path: Schema.String }),
  Schema.Struct({ op: Schema.Literal("copy"), from: Schema.String, path: Schema.String }),
  Schema.Struct({ op: Schema.Literal("test"), path: Schema.String, value: Schema.Unknown })
)
/** @since 0.1.0 @category Models */
export type JsonPatchOperation = typeof JsonPatchOperation.Type

const custom = <const Name extends string, Value extends Schema.Schema.Any>(name: Name, value: Value) =>
  event("CUSTOM", { name: Schema.Literal(name), value })

/**
 * A component block starts in a message (which may not exist yet).
 *
 * @since 0.1.0
 * @category Schemas
 */
export const ComponentStartEvent = custom(
  "tambo.component.start",
  Schema.Struct({ messageId: Schema.String, componentId: Schema.String, componentName: Schema.String })
)
/** @since 0.1.0 @category Models */
export type ComponentStartEvent = typeof ComponentStartEvent.Type

/**
 * A JSON Patch to a component's props.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const ComponentPropsDeltaEvent = custom(
  "tambo.component.props_delta",
  Schema.Struct({
    componentId: Schema.String,
    operations: Schema.Array(JsonPatchOperation),
    /** Per prop: `started`, `streaming` or `done` (kept as strings: new values must not fail the stream). */
    streamingStatus: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
  })
)
/** @since 0.1.0 @category Models */
export type ComponentPropsDeltaEvent = typeof ComponentPropsDeltaEvent.Type

/**
 * A JSON Patch to a component's state.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const ComponentStateDeltaEvent = custom(
  "tambo.component.state_delta",
  Schema.Struct({ componentId: Schema.String, operations: Schema.Array(JsonPatchOperation) })
)
/** @since 0.1.0 @category Models */
export type ComponentStateDeltaEvent = typeof ComponentStateDeltaEvent.Type

/**
 * @since 0.1.0
 * @category Schemas
 */
export const ComponentEndEvent = custom("tambo.component.end", Schema.Struct({ componentId: Schema.String }))
/** @since 0.1.0 @category Models */
export type ComponentEndEvent = typeof ComponentEndEvent.Type

/**
 * A tool call the client must run before the run can continue.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const PendingToolCall = Schema.Struct({
  toolCallId: Schema.String,
  toolName: Schema.String,
  arguments: Schema.String
})
/** @since 0.1.0 @category Models */
export type PendingToolCall = typeof PendingToolCall.Type

/**
 * The run paused for client-side tools; it continues with their results.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const RunAwaitingInputEvent = custom(
  "tambo.run.awaiting_input",
  Schema.Struct({ pendingToolCalls: Schema.Array(PendingToolCall) })
)
/** @since 0.1.0 @category Models */
export type RunAwaitingInputEvent = typeof RunAwaitingInputEvent.Type

/**
 * A message was created while another was generated (MCP sampling or
 * elicitation); sent before the message's own events.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const MessageParentEvent = custom(
  "tambo.message.parent",
  Schema.Struct({ messageId: Schema.String, parentMessageId: Schema.String })
)
/** @since 0.1.0 @category Models */
export type MessageParentEvent = typeof MessageParentEvent.Type

/**
 * The shape of any CUSTOM event.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const CustomEvent = event("CUSTOM", { name: Schema.String, value: Schema.optional(Schema.Unknown) })

/**
 * Tambo's own custom events.
 *
 * @since 0.1.0
 * @category Models
 */
export type TamboCustomEvent =
  | ComponentStartEvent
  | ComponentPropsDeltaEvent
  | ComponentStateDeltaEvent
  | ComponentEndEvent
  | RunAwaitingInputEvent
  | MessageParentEvent

/**
 * Every event this SDK knows.
 *
 * @since 0.1.0
 * @category Models
 */
export type TamboEvent =
  | RunStartedEvent
  | RunFinishedEvent
  | RunErrorEvent
  | StepStartedEvent
  | StepFinishedEvent
  | TextMessageStartEvent
  | TextMessageContentEvent
  | TextMessageEndEvent
  | ToolCallStartEvent
  | ToolCallArgsEvent
  | ToolCallEndEvent
  | ToolCallResultEvent
  | StateSnapshotEvent
  | StateDeltaEvent
  | MessagesSnapshotEvent
  | ActivitySnapshotEvent
  | ActivityDeltaEvent
  | ThinkingStartEvent
  | ThinkingEndEvent
  | ThinkingTextMessageStartEvent
  | ThinkingTextMessageContentEvent
  | ThinkingTextMessageEndEvent
  | ReasoningStartEvent
  | ReasoningMessageStartEvent
  | ReasoningMessageContentEvent
  | ReasoningMessageEndEvent
  | ReasoningMessageChunkEvent
  | ReasoningEndEvent
  | ReasoningEncryptedValueEvent
  | TamboCustomEvent

/**
 * An event this SDK does not know — an unknown `type`, or a CUSTOM event
 * with an unknown `name` — kept (the protocol grows) and ignored by the
 * accumulator.
 *
 * The received object is wrapped under the fixed type `"UNKNOWN"` so that
 * `type` stays a discriminant: comparing `event.type` with a known type
 * narrows `TamboEvent | UnknownEvent` to exactly that event, which a member
 * typed `type: string` would prevent.
 *
 * @since 0.1.0
 * @category Models
 */
export interface UnknownEvent {
  readonly type: "UNKNOWN"
  /** The received event's own `type` (`"CUSTOM"` for an unknown custom event). */
  readonly eventType: string
  /** The custom event's `name`, for an unknown custom event. */
  readonly name?: string
  /** The event as received. */
  readonly event: Readonly<Record<string, unknown>>
}

/**
 * The `type` of every {@link UnknownEvent}.
 *
 * @since 0.1.0
 * @category Constants
 */
export const UNKNOWN_EVENT_TYPE: "UNKNOWN" = internal.UNKNOWN_EVENT_TYPE

/**
 * Whether the decoder kept this event without knowing it.
 *
 * @since 0.1.0
 * @category Guards
 */
export const isUnknownEvent = (event: TamboEvent | UnknownEvent): event is UnknownEvent =>
  event.type === UNKNOWN_EVENT_TYPE

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------

// The events the decoder knows, by `type` and by custom `name`; the decoder is
// internal/events/decoder.ts.
const decoder = internal.make({
  byType: [
    RunStartedEvent,
    RunFinishedEvent,
    RunErrorEvent,
    StepStartedEvent,
    StepFinishedEvent,
    TextMessageStartEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    ToolCallStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    StateSnapshotEvent,
    StateDeltaEvent,
    MessagesSnapshotEvent,
    ActivitySnapshotEvent,
    ActivityDeltaEvent,
    ThinkingStartEvent,
    ThinkingEndEvent,
    ThinkingTextMessageStartEvent,
    ThinkingTextMessageContentEvent,
    ThinkingTextMessageEndEvent,
    ReasoningStartEvent,
    ReasoningMessageStartEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageChunkEvent,
    ReasoningEndEvent,
    ReasoningEncryptedValueEvent
  ],
  byCustomName: [
    ComponentStartEvent,
    ComponentPropsDeltaEvent,
    ComponentStateDeltaEvent,
    ComponentEndEvent,
    RunAwaitingInputEvent,
    MessageParentEvent
  ],
  anyCustom: CustomEvent
})

/**
 * The `type`s with a schema here.
 *
 * @since 0.1.0
 * @category Constants
 */
export const knownEventTypes: ReadonlySet<string> = decoder.knownEventTypes

/**
 * The custom event `name`s with a schema here.
 *
 * @since 0.1.0
 * @category Constants
 */
export const knownCustomEventNames: ReadonlySet<string> = decoder.knownCustomEventNames

/**
 * Decodes one SSE `data:` frame.
 *
 * - not JSON → `DecodeError` `InvalidJson`, with the frame;
 * - not an object with a string `type` → `InvalidEvent`;
 * - a known `type` (or custom `name`) that fails its schema → `InvalidEvent`,
 *   with the frame and the schema's explanation;
 * - an unknown `type` or custom `name` → kept, wrapped as an
 *   {@link UnknownEvent}.
 *
 * Known events are the parsed objects themselves, not copies.
 *
 * @since 0.1.0
 * @category Decoding
 */
export const decodeFrame: (data: string) => Either.Either<TamboEvent | UnknownEvent, DecodeError> = decoder.decodeFrame

/**
 * Decodes an already-parsed value, with the rules of {@link decodeFrame}
 * (errors carry no frame).
 *
 * @since 0.1.0
 * @category Decoding
 */
export const decodeEvent: (u: unknown) => Either.Either<TamboEvent | UnknownEvent, DecodeError> = decoder.decodeEvent
