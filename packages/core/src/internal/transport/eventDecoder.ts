/**
 * The decoding of a run's SSE body into run events, shared by both ways of
 * reading it (runBody.ts reads a fetch response's web body; `decodeSse` any
 * byte stream): bytes in, events out per network chunk, the first
 * undecodable frame failing the stream after what came before it.
 *
 * @internal
 */
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Stream from "effect/Stream"
import * as Events from "../../Events.js"
import { DecodeError, type TransportError } from "../../TamboError.js"
import type { RunStreamEvent } from "../../TamboTransport.js"
import { makeSseDecoder } from "./sse.js"

/** An empty chunk, written after each chunk of events (see `decodeSse`). */
const writeEmpty = Channel.write(Chunk.empty<never>())

/** The decoder of one body: `push` each network read, then `emit` what it completed. @internal */
export const makeEventDecoder = (maxFrameBytes = 16 * 1024 * 1024) => {
  const decoder = makeSseDecoder({ maxFrameLength: maxFrameBytes })
  let failure: DecodeError | undefined
  // A fresh array per network chunk, handed on as is. Made at its first event, not when the
  // previous chunk is handed on: an array that waits for the network outlives young
  // collections, and V8 then allocates every array of this site old, where each one keeps
  // its young events alive through every young collection until the next full one.
  let out: Array<RunStreamEvent> | undefined
  const onData = (data: string) => {
    if (failure !== undefined) return
    const decoded = Events.decodeFrame(data)
    if (decoded._tag === "Left") failure = decoded.left
    else if (out === undefined) out = [decoded.right]
    else out.push(decoded.right)
  }
  return {
    /** Whether the reads so far completed an event not yet emitted. */
    hasEvents: () => out !== undefined,
    push: (bytes: Uint8Array) => {
      // A frame over the limit fails the stream before it fills memory: the decoder let go of it.
      if (!decoder.push(bytes, onData) && failure === undefined) {
        failure = new DecodeError({
          reason: "FrameTooLarge",
          message: `An event of the run's stream is larger than maxFrameBytes (${maxFrameBytes}); it begins ${
            JSON.stringify(decoder.overLimitPrefix())
          }`
        })
      }
    },
    /** Writes what the last chunks completed, then goes on with `next` (or fails). */
    emit: <In, E, InE>(
      next: Channel.Channel<Chunk.Chunk<RunStreamEvent>, In, E | DecodeError, InE, unknown, unknown>
    ): Channel.Channel<Chunk.Chunk<RunStreamEvent>, In, E | DecodeError, InE, unknown, unknown> => {
      const events = out
      out = undefined
      if (failure !== undefined) {
        // Deliver what decoded before the bad frame, then fail.
        const error = failure
        return events !== undefined
          ? Channel.zipRight(Channel.write(Chunk.unsafeFromArray(events)), Channel.fail(error))
          : Channel.fail(error)
      }
      // The empty chunk lets go of the events before the next read (see decodeSse).
      return events !== undefined
        ? Channel.zipRight(Channel.write(Chunk.unsafeFromArray(events)), Channel.zipRight(writeEmpty, next))
        : next
    },
    end: (): Channel.Channel<Chunk.Chunk<RunStreamEvent>, unknown, DecodeError> => {
      const { pending } = decoder.end()
      if (pending === undefined) return Channel.void
      // A final event without its blank line: decode it rather than lose it.
      const decoded = Events.decodeFrame(pending)
      return decoded._tag === "Left" ? Channel.fail(decoded.left) : Channel.write(Chunk.of(decoded.right))
    }
  }
}

/** `TamboTransport.decodeSse`. @internal */
export const decodeSse = <E>(bytes: Stream.Stream<Uint8Array, E>, maxFrameBytes?: number | undefined): Stream.Stream<RunStreamEvent, E | DecodeError | TransportError> =>
  Stream.suspend(() => {
    const decoder = makeEventDecoder(maxFrameBytes)
    // One synchronous step per network chunk, written as a plain read loop: an effectful
    // mapping stage (`mapChunksEffect`) here made the events of every chunk outlive their
    // young generation (scratchpad/bench/NOTES.md).
    const loop: Channel.Channel<
      Chunk.Chunk<RunStreamEvent>,
      Chunk.Chunk<Uint8Array>,
      E | DecodeError,
      E,
      unknown,
      unknown
    > = Channel.readWithCause({
      onInput: (chunk: Chunk.Chunk<Uint8Array>) => {
        for (const piece of chunk) decoder.push(piece)
        return decoder.emit(loop)
      },
      onFailure: Channel.failCause,
      onDone: () => Channel.suspend(decoder.end)
    })
    return Stream.fromChannel(Channel.pipeTo(Stream.toChannel(bytes), loop))
  })
