/**
 * AG-UI 1.0's convenience events, expanded as `@ag-ui/client` does before it
 * applies a run's events: `TEXT_MESSAGE_CHUNK`, `TOOL_CALL_CHUNK` and
 * `REASONING_MESSAGE_CHUNK` each stand for a start / content / end sequence
 * whose boundaries the producer did not know.
 *
 * - A chunk with a new id (or the first one) ends the open message or call,
 *   if any, and starts its own: `TEXT_MESSAGE_START` (role `assistant`
 *   unless given), `TOOL_CALL_START`, `REASONING_MESSAGE_START`. The first
 *   chunk needs an id (and a call its `toolCallName`).
 * - A chunk with the open one's id, or none, continues it; its `delta`, when
 *   it has one, is a `*_CONTENT` / `TOOL_CALL_ARGS` event.
 * - The open one ends (`*_END`) at the next event of a message, call,
 *   result, state, step, custom event or run boundary, as `@ag-ui/client`
 *   ends it; activities pass it by.
 *
 * A chunk that cannot be expanded (no id to start with, a call without its
 * name, a continuation that changes the role, name or parent) fails the run
 * with a `DecodeError` (`InvalidEvent`) carrying the chunk. One lane only: a
 * chunk's `subagentRunId` is not told apart.
 *
 * @internal
 */
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Events from "../../Events.js"
import { DecodeError } from "../../TamboError.js"
import type { RunStreamEvent } from "../../TamboTransport.js"

const TextMessageChunk = Schema.Struct({
  messageId: Schema.optional(Schema.String),
  role: Schema.optional(Events.TextMessageRole),
  name: Schema.optional(Schema.String),
  delta: Schema.optional(Schema.String)
})

const ToolCallChunk = Schema.Struct({
  toolCallId: Schema.optional(Schema.String),
  toolCallName: Schema.optional(Schema.String),
  parentMessageId: Schema.optional(Schema.String),
  delta: Schema.optional(Schema.String)
})

const decodeTextChunk = Schema.decodeUnknownEither(TextMessageChunk)
const decodeToolChunk = Schema.decodeUnknownEither(ToolCallChunk)

/** The message or call the chunks so far opened and did not end. */
type Open =
  | {
    readonly kind: "text"
    readonly id: string
    readonly role: typeof Events.TextMessageRole.Type
    readonly name: string | undefined
  }
  | { readonly kind: "tool"; readonly id: string; readonly name: string; readonly parentMessageId: string | undefined }
  | { readonly kind: "reasoning"; readonly id: string }

const invalid = (type: string, message: string, event: unknown) =>
  new DecodeError({ reason: "InvalidEvent", message: `Invalid ${type}: ${message}`, frame: JSON.stringify(event) })

const endOf = (open: Open): RunStreamEvent =>
  open.kind === "text"
    ? { type: "TEXT_MESSAGE_END", messageId: open.id }
    : open.kind === "tool"
    ? { type: "TOOL_CALL_END", toolCallId: open.id }
    : { type: "REASONING_MESSAGE_END", messageId: open.id }

/** Whether `event` ends the open message or call before it is applied (as `@ag-ui/client` has it). */
const endsOpen = (event: RunStreamEvent): boolean => {
  switch (event.type) {
    case "UNKNOWN":
      return event.eventType === "CUSTOM"
    case "ACTIVITY_SNAPSHOT":
    case "ACTIVITY_DELTA":
    case "REASONING_ENCRYPTED_VALUE":
      return false
    default:
      return true
  }
}

/**
 * The expansion as a stream stage: O(1) work per event, and a chunk of
 * events without a convenience event and with nothing open is passed on as
 * it is.
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const expandChunks = <E, R>(
  events: Stream.Stream<RunStreamEvent, E, R>
): Stream.Stream<RunStreamEvent, E | DecodeError, R> =>
  Stream.suspend(() => {
    let open: Open | undefined
    const close = (out: Array<RunStreamEvent>) => {
      if (open !== undefined) out.push(endOf(open))
      open = undefined
    }
    /** The events one chunk event stands for, appended to `out`; or why it stands for none. */
    const expand = (event: RunStreamEvent, out: Array<RunStreamEvent>): DecodeError | undefined => {
      if (event.type === "REASONING_MESSAGE_CHUNK") {
        const { delta, messageId } = event
        if (open?.kind !== "reasoning" || (messageId !== undefined && messageId !== open.id)) {
          close(out)
          if (messageId === undefined) {
            return invalid(event.type, "the first chunk of a reasoning message must have a messageId", event)
          }
          open = { kind: "reasoning", id: messageId }
          out.push({ type: "REASONING_MESSAGE_START", messageId, role: "reasoning" })
        }
        if (delta !== undefined) out.push({ type: "REASONING_MESSAGE_CONTENT", messageId: open.id, delta })
        return undefined
      }
      if (event.type !== "UNKNOWN") return undefined
      if (event.eventType === "TEXT_MESSAGE_CHUNK") {
        const decoded = decodeTextChunk(event.event)
        if (Either.isLeft(decoded)) return invalid(event.eventType, decoded.left.message, event.event)
        const { delta, messageId, name, role } = decoded.right
        if (open?.kind === "text" && (messageId === undefined || messageId === open.id)) {
          if ((role !== undefined && role !== open.role) || (name !== undefined && name !== open.name)) {
            return invalid(event.eventType, `it changes the role or name of message ${open.id}`, event.event)
          }
        } else {
          close(out)
          if (messageId === undefined) {
            return invalid(event.eventType, "the first chunk of a message must have a messageId", event.event)
          }
          open = { kind: "text", id: messageId, role: role ?? "assistant", name }
          out.push({
            type: "TEXT_MESSAGE_START",
            messageId,
            role: open.role,
            ...(name === undefined ? {} : { name })
          })
        }
        if (delta !== undefined) out.push({ type: "TEXT_MESSAGE_CONTENT", messageId: open.id, delta })
        return undefined
      }
      if (event.eventType === "TOOL_CALL_CHUNK") {
        const decoded = decodeToolChunk(event.event)
        if (Either.isLeft(decoded)) return invalid(event.eventType, decoded.left.message, event.event)
        const { delta, parentMessageId, toolCallId, toolCallName } = decoded.right
        if (open?.kind === "tool" && (toolCallId === undefined || toolCallId === open.id)) {
          if (
            (toolCallName !== undefined && toolCallName !== open.name) ||
            (parentMessageId !== undefined && parentMessageId !== open.parentMessageId)
          ) {
            return invalid(event.eventType, `it changes the name or parent of tool call ${open.id}`, event.event)
          }
        } else {
          close(out)
          if (toolCallId === undefined || toolCallName === undefined) {
            return invalid(event.eventType, "the first chunk of a tool call must have a toolCallId and a toolCallName", event.event)
          }
          open = { kind: "tool", id: toolCallId, name: toolCallName, parentMessageId }
          out.push({
            type: "TOOL_CALL_START",
            toolCallId,
            toolCallName,
            ...(parentMessageId === undefined ? {} : { parentMessageId })
          })
        }
        if (delta !== undefined) out.push({ type: "TOOL_CALL_ARGS", toolCallId: open.id, delta })
      }
      return undefined
    }
    const isChunkEvent = (event: RunStreamEvent) =>
      event.type === "REASONING_MESSAGE_CHUNK" ||
      (event.type === "UNKNOWN" && (event.eventType === "TEXT_MESSAGE_CHUNK" || event.eventType === "TOOL_CALL_CHUNK"))
    // A read loop, as `decodeSse`'s: the events before a chunk that cannot be expanded are
    // delivered, then the stream fails.
    const loop: Channel.Channel<
      Chunk.Chunk<RunStreamEvent>,
      Chunk.Chunk<RunStreamEvent>,
      E | DecodeError,
      E,
      unknown,
      unknown
    > = Channel.readWithCause({
      onInput: (chunk: Chunk.Chunk<RunStreamEvent>) => {
        const input = Chunk.toReadonlyArray(chunk)
        if (open === undefined && !input.some(isChunkEvent)) return Channel.zipRight(Channel.write(chunk), loop)
        const out: Array<RunStreamEvent> = []
        for (const event of input) {
          if (isChunkEvent(event)) {
            const error = expand(event, out)
            if (error !== undefined) return Channel.zipRight(Channel.write(Chunk.unsafeFromArray(out)), Channel.fail(error))
            continue
          }
          if (open !== undefined && endsOpen(event)) close(out)
          out.push(event)
        }
        return Channel.zipRight(Channel.write(Chunk.unsafeFromArray(out)), loop)
      },
      onFailure: Channel.failCause,
      onDone: () => Channel.void
    })
    return Stream.fromChannel(Channel.pipeTo(Stream.toChannel(events), loop))
  })
