/**
 * An AG-UI run has no `tambo.run.awaiting_input`: it ends (`RUN_FINISHED`)
 * with the tool calls it made. Its transport says so
 * (`TamboTransport.pausesForClientTools`), and the run's step puts the pause
 * the Tambo API would send just before `RUN_FINISHED`
 * (`internal/run/step.ts`), so the run loop's tool round runs the calls as for
 * a Tambo run.
 *
 * The calls come from the thread the reducer built from the step's events
 * (`internal/state/events.ts`), not from a second reading of the events, so
 * what runs is what the thread shows and sends back: a call of one of the
 * client's (frontend) tools, by the name the thread gives it, that the step's
 * request started (`TOOL_CALL_START`) and whose latest `tool_use` block no
 * `tool_result` after it answers, with that block's `input`. So a server-side
 * tool's call, one a `TOOL_CALL_RESULT` or a later `MESSAGES_SNAPSHOT`
 * answers, one a snapshot leaves out, or a start the thread refused (a call
 * started again in its own message) is not run; a call only a snapshot brings
 * in is not this request's, and is not run either. A call of a tool the client
 * did not offer that nothing answered goes with the client's calls into the
 * round (which answers it as unknown), since the round's next request sends
 * it; alone, it makes no round. A call the agent leaves
 * open at `RUN_FINISHED` (no `TOOL_CALL_END`, which AG-UI forbids) is closed
 * there first, with all its arguments (`endsOfOpenCalls`). A call whose arguments ended as text
 * that is not valid JSON (cut short by that `RUN_FINISHED`, or malformed) is not run on what they
 * parse to: its pause carries them as they arrived, which the tool round refuses as not valid
 * JSON, a result the agent reads.
 *
 * @internal
 */
import type * as ClientState from "../../ClientState.js"
import type * as Events from "../../Events.js"
import type { RunStreamEvent } from "../../TamboTransport.js"
import type * as Types from "../../Types.js"

/**
 * Adds the ids of the calls `events` start to `started`. O(1) work per event.
 *
 * @internal
 */
export const noteStarted = (started: Set<string>, events: ReadonlyArray<RunStreamEvent>): void => {
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!
    if (event.type === "TOOL_CALL_START") started.add(event.toolCallId)
  }
}

/**
 * A `TOOL_CALL_END` for each call `state` (the thread, as recorded before
 * `RUN_FINISHED`) still streams the arguments of: recorded before the pause
 * is read, they close each with all its arguments, as the agent's own end
 * would, so the thread, the tool and the next request see all of them. Once
 * per step.
 *
 * @internal
 */
export const endsOfOpenCalls = (state: ClientState.ThreadState): ReadonlyArray<RunStreamEvent> => {
  const open = state.internal.toolArgs
  if (open.size === 0) return []
  return Array.from(open.keys(), (toolCallId): RunStreamEvent => ({ type: "TOOL_CALL_END", toolCallId }))
}

/**
 * The `tambo.run.awaiting_input` for the calls among `started` that
 * `messages` (the thread, as recorded before `RUN_FINISHED`) hold unanswered,
 * in the order of their latest `tool_use` blocks, when one of them is of
 * `frontendTools`; else `undefined`. Only a result after a call answers it: an
 * id used again is a new call. A call of `invalidArgs` (the thread's
 * `internal.invalidToolArgs`) carries its arguments as they arrived, not its
 * block's `input`. One pass over the thread, once per step.
 *
 * @internal
 */
export const pauseOf = (
  messages: ReadonlyArray<Types.TamboThreadMessage>,
  started: ReadonlySet<string>,
  frontendTools: ReadonlySet<string>,
  invalidArgs: ReadonlyMap<string, string> = new Map()
): Events.RunAwaitingInputEvent | undefined => {
  if (started.size === 0 || frontendTools.size === 0) return undefined
  const open = new Map<string, Events.PendingToolCall>()
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === "tool_result") {
        open.delete(block.toolUseId)
      } else if (block.type === "tool_use") {
        open.delete(block.id)
        if (started.has(block.id)) {
          const args = invalidArgs.get(block.id) ?? JSON.stringify(block.input)
          open.set(block.id, { toolCallId: block.id, toolName: block.name, arguments: args })
        }
      }
    }
  }
  const calls = [...open.values()]
  // The round's next request sends the whole conversation: a call of another tool left beside the
  // client's must be answered in it too (its tool is unknown here, so it fails, or the registry's
  // fallback runs it). Without a call of the client's, no round: the run's end leaves it pending.
  if (!calls.some((call) => frontendTools.has(call.toolName))) return undefined
  return { type: "CUSTOM", name: "tambo.run.awaiting_input", value: { pendingToolCalls: calls } }
}
