// AG-UI 1.0's convenience events expanded into start / content / end, by the rule of
// @ag-ui/client (pinned against HttpAgent itself in test/AgUi.run.test.ts, "chunks").
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import * as Events from "../../src/Events.js"
import { expandChunks } from "../../src/internal/agui/chunks.js"
import type { RunStreamEvent } from "../../src/TamboTransport.js"

/** Frames as the wire has them, decoded as the transport does, in one network chunk. */
const decoded = (frames: ReadonlyArray<Record<string, unknown>>): Array<RunStreamEvent> =>
  frames.map((frame) => Either.getOrThrow(Events.decodeEvent(frame)))

const expand = (frames: ReadonlyArray<Record<string, unknown>>) =>
  Stream.fromChunk(Chunk.unsafeFromArray(decoded(frames))).pipe(expandChunks, Stream.runCollect, Effect.map(Chunk.toReadonlyArray))

const run = { threadId: "t", runId: "r" }

describe("expandChunks", () => {
  it.effect("text chunks: a start at the first, the deltas, an end before the next event", () =>
    Effect.gen(function*() {
      const events = yield* expand([
        { type: "RUN_STARTED", ...run },
        { type: "TEXT_MESSAGE_CHUNK", messageId: "m1", delta: "Hel" },
        { type: "TEXT_MESSAGE_CHUNK", delta: "lo" },
        { type: "TEXT_MESSAGE_CHUNK", messageId: "m1", delta: "!" },
        { type: "RUN_FINISHED", ...run }
      ])
      expect(events).toEqual([
        { type: "RUN_STARTED", ...run },
        { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
        { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "Hel" },
        { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "lo" },
        { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "!" },
        { type: "TEXT_MESSAGE_END", messageId: "m1" },
        { type: "RUN_FINISHED", ...run }
      ])
    }))

  it.effect("a chunk with a new id ends the open message and starts its own; a tool call chunk ends a text", () =>
    Effect.gen(function*() {
      const events = yield* expand([
        { type: "TEXT_MESSAGE_CHUNK", messageId: "m1", role: "assistant", delta: "a" },
        { type: "TEXT_MESSAGE_CHUNK", messageId: "m2", delta: "b" },
        { type: "TOOL_CALL_CHUNK", toolCallId: "c1", toolCallName: "get_weather", parentMessageId: "m2", delta: "{\"city\":" },
        { type: "TOOL_CALL_CHUNK", delta: "\"Paris\"}" },
        { type: "REASONING_MESSAGE_CHUNK", messageId: "r1", delta: "hmm" },
        { type: "RUN_FINISHED", ...run }
      ])
      expect(events.map((e) => e.type)).toEqual([
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "RUN_FINISHED"
      ])
      expect(events[6]).toEqual({ type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "get_weather", parentMessageId: "m2" })
      expect(events[8]).toEqual({ type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: "\"Paris\"}" })
      expect(events[10]).toEqual({ type: "REASONING_MESSAGE_START", messageId: "r1", role: "reasoning" })
    }))

  it.effect("an activity passes an open message by; a state event ends it", () =>
    Effect.gen(function*() {
      const events = yield* expand([
        { type: "TEXT_MESSAGE_CHUNK", messageId: "m1", delta: "a" },
        { type: "ACTIVITY_SNAPSHOT", messageId: "act", activityType: "plan", content: {} },
        { type: "TEXT_MESSAGE_CHUNK", delta: "b" },
        { type: "STATE_SNAPSHOT", snapshot: {} },
        { type: "TEXT_MESSAGE_CHUNK", messageId: "m1", delta: "c" }
      ])
      expect(events.map((e) => e.type)).toEqual([
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "ACTIVITY_SNAPSHOT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STATE_SNAPSHOT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT"
      ])
    }))

  it.effect("events with no chunk among them pass as they are, the same chunk", () =>
    Effect.gen(function*() {
      const input = Chunk.unsafeFromArray(decoded([{ type: "RUN_STARTED", ...run }, { type: "RUN_FINISHED", ...run }]))
      const chunks = yield* Stream.fromChunk(input).pipe(expandChunks, Stream.chunks, Stream.runCollect)
      expect(Chunk.toReadonlyArray(chunks)[0]).toBe(input)
    }))

  it.effect.each([
    ["a first text chunk without a messageId", [{ type: "TEXT_MESSAGE_CHUNK", delta: "a" }], "must have a messageId"],
    ["a first tool call chunk without its name", [{ type: "TOOL_CALL_CHUNK", toolCallId: "c1" }], "must have a toolCallId and a toolCallName"],
    ["a first reasoning chunk without a messageId", [{ type: "REASONING_MESSAGE_CHUNK", delta: "a" }], "must have a messageId"],
    ["a continuation that changes the call's name", [
      { type: "TOOL_CALL_CHUNK", toolCallId: "c1", toolCallName: "a" },
      { type: "TOOL_CALL_CHUNK", toolCallName: "b" }
    ], "changes the name or parent"],
    ["a continuation that changes the message's role", [
      { type: "TEXT_MESSAGE_CHUNK", messageId: "m1" },
      { type: "TEXT_MESSAGE_CHUNK", role: "user" }
    ], "changes the role or name"],
    ["a chunk that is not one", [{ type: "TEXT_MESSAGE_CHUNK", messageId: 7 }], "TEXT_MESSAGE_CHUNK"]
  ] as const)("%s: DecodeError (InvalidEvent) with the chunk, after the events before it", ([, frames, message]) =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const error = yield* Stream.fromChunk(Chunk.unsafeFromArray(decoded([{ type: "RUN_STARTED", ...run }, ...frames]))).pipe(
        expandChunks,
        Stream.runForEach((event) => Effect.sync(() => seen.push(event.type))),
        Effect.flip
      )
      expect(seen[0]).toBe("RUN_STARTED")
      expect(error).toMatchObject({ _tag: "DecodeError", reason: "InvalidEvent" })
      expect(error.message).toContain(message)
      expect(JSON.parse(error.frame!)).toEqual(frames.at(-1))
    }))
})
