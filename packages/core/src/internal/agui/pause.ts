/**
 * An AG-UI run has no `tambo.run.awaiting_input`: it ends (`RUN_FINISHED`)
 * with the tool calls it made. This stage follows the run's calls and, when
 * some are calls of the client's (frontend) tools that no `TOOL_CALL_RESULT`
 * answered, puts the pause the Tambo API would send just before
 * `RUN_FINISHED`, so the run loop's tool round runs them as for a Tambo run.
 * A server-side tool's call (answered by its `TOOL_CALL_RESULT`, or not one
 * of the client's tools) is never run here; nor is a call a later
 * `MESSAGES_SNAPSHOT` answers or leaves out (the thread no longer holds it
 * unanswered, so a result for it would be one nothing asked for).
 *
 * A call runs with the arguments the thread shows for it, read by the
 * reducer's rules (`internal/state/events.ts`): `TOOL_CALL_ARGS` after the
 * call's `TOOL_CALL_END` are not its arguments, a later `MESSAGES_SNAPSHOT`'s
 * are, and a `TOOL_CALL_START` of a
 * call this run made and nothing answered starts nothing (the call keeps its
 * arguments, which go on while it has not ended), as a call started twice in
 * one message is. An id a result answered is a new call when started again.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import type * as Events from "../../Events.js"
import type { RunStreamEvent } from "../../TamboTransport.js"
import { messagesOf } from "./agentState.js"
import { parseArguments } from "./messages.js"

interface Call {
  readonly toolCallId: string
  readonly toolName: string
  args: string
  /** Its TOOL_CALL_END came: later arguments are not its. */
  ended: boolean
}

/**
 * `events` with a `tambo.run.awaiting_input` before `RUN_FINISHED` when the
 * run left calls of `frontendTools` unanswered. O(1) work per event.
 *
 * @internal
 */
export const withPause = (frontendTools: ReadonlySet<string>) =>
<E, R>(events: Stream.Stream<RunStreamEvent, E, R>): Stream.Stream<RunStreamEvent, E, R> => {
  if (frontendTools.size === 0) return events
  return Stream.suspend(() => {
    // This run's open calls of frontend tools, by id, in the order they were made.
    const open = new Map<string, Call>()
    // The ids of this run's calls (of any tool) nothing answered yet.
    const started = new Set<string>()
    return Stream.mapChunks(events, (chunk) => {
      const events = Chunk.toReadonlyArray(chunk)
      let out: Array<RunStreamEvent> | undefined
      for (let i = 0; i < events.length; i++) {
        const event = events[i]!
        switch (event.type) {
          case "TOOL_CALL_START":
            // Started again while unanswered, the call stays as it was (the thread ignores the start).
            if (started.has(event.toolCallId)) break
            started.add(event.toolCallId)
            if (frontendTools.has(event.toolCallName)) {
              open.set(event.toolCallId, { toolCallId: event.toolCallId, toolName: event.toolCallName, args: "", ended: false })
            }
            break
          case "TOOL_CALL_ARGS": {
            const call = open.get(event.toolCallId)
            if (call !== undefined && !call.ended) call.args += event.delta
            break
          }
          case "TOOL_CALL_END": {
            const call = open.get(event.toolCallId)
            if (call !== undefined) call.ended = true
            break
          }
          case "TOOL_CALL_RESULT":
            // Answered: the id started again is a new call.
            open.delete(event.toolCallId)
            started.delete(event.toolCallId)
            break
          case "MESSAGES_SNAPSHOT": {
            // The snapshot is the conversation now (an invalid one changes nothing, as in the reducer).
            if (started.size === 0) break
            const unanswered = unansweredIn(event)
            if (unanswered === undefined) break
            for (const [id, call] of open) {
              const args = unanswered.get(id)
              if (args === undefined) open.delete(id)
              // An ended call's arguments are the snapshot's now, as the thread shows them.
              else if (call.ended) call.args = args
            }
            for (const id of started) if (!unanswered.has(id)) started.delete(id)
            break
          }
          case "RUN_FINISHED":
            if (open.size > 0) {
              out = events.slice(0, i)
              out.push(awaitingInput([...open.values()]))
              open.clear()
            }
            break
        }
        out?.push(event)
      }
      return out === undefined ? chunk : Chunk.unsafeFromArray(out)
    })
  })
}

/**
 * The calls a valid `MESSAGES_SNAPSHOT` holds that no later tool message answers (an answered id
 * made again is a new call), with their arguments as the thread reads them: `{}` for any that are
 * not a JSON object.
 */
const unansweredIn = (event: Events.MessagesSnapshotEvent): ReadonlyMap<string, string> | undefined => {
  const messages = messagesOf(event)
  if (Either.isLeft(messages)) return undefined
  const unanswered = new Map<string, string>()
  for (const message of messages.right) {
    if (message.role === "assistant") {
      for (const call of message.toolCalls ?? []) unanswered.set(call.id, JSON.stringify(parseArguments(call.function.arguments)))
    } else if (message.role === "tool") {
      unanswered.delete(message.toolCallId)
    }
  }
  return unanswered
}


const awaitingInput = (calls: ReadonlyArray<Call>): Events.RunAwaitingInputEvent => ({
  type: "CUSTOM",
  name: "tambo.run.awaiting_input",
  value: {
    pendingToolCalls: calls.map((call) => ({
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      arguments: call.args === "" ? "{}" : call.args
    }))
  }
})
