/**
 * Playing a script as the AG-UI agent's answer: each step written as AG-UI events, encoded by
 * `@ag-ui/encoder` as Server-Sent Events frames (the legacy `THINKING_*` names, which
 * `@ag-ui/core` 1.0 has no types for, as plain `data:` frames), between `RUN_STARTED` and
 * `RUN_FINISHED`. Ids the agent makes up are derived from the number of messages in the request,
 * so the same conversation gets the same ids from whichever client sends it.
 */
import type * as AgUi from "@ag-ui/core"
import { EventType } from "@ag-ui/core"
import { EventEncoder } from "@ag-ui/encoder"
import type * as http from "node:http"
import type * as net from "node:net"
import type * as AgUiAgent from "../../AgUiAgent.js"
import { dataFrame } from "../frames.js"

const encoder = new EventEncoder()

/** The `content-type` of the event stream the agent answers with. */
export const contentType: string = encoder.getContentType()

/** One answer being played: where it goes, and the ids handed out so far. */
interface Player {
  readonly response: http.ServerResponse
  readonly socket: net.Socket
  /** The number of messages in the request: the first part of every id the agent makes up. */
  readonly base: number
  messages: number
  calls: number
  /** The run's last text message: the parent of the tool calls that follow it. */
  lastTextId: string | undefined
}

const write = (player: Player, frame: string): void => {
  if (!player.response.destroyed) player.response.write(frame)
}

const emit = (player: Player, value: AgUi.BaseEvent): void => write(player, encoder.encodeSSE(value))

const playText = (player: Player, step: AgUiAgent.Text): void => {
  const messageId = step.messageId ?? `msg-${player.base}-${player.messages++}`
  player.lastTextId = messageId
  emit(player, { type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" } satisfies AgUi.TextMessageStartEvent)
  for (const delta of step.deltas) {
    emit(player, { type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta } satisfies AgUi.TextMessageContentEvent)
  }
  emit(player, { type: EventType.TEXT_MESSAGE_END, messageId } satisfies AgUi.TextMessageEndEvent)
}

const playReasoning = (player: Player, step: AgUiAgent.Reasoning): void => {
  if (step.legacy) {
    write(player, dataFrame({ type: "THINKING_START" }))
    write(player, dataFrame({ type: "THINKING_TEXT_MESSAGE_START" }))
    for (const delta of step.deltas) write(player, dataFrame({ type: "THINKING_TEXT_MESSAGE_CONTENT", delta }))
    write(player, dataFrame({ type: "THINKING_TEXT_MESSAGE_END" }))
    write(player, dataFrame({ type: "THINKING_END" }))
    return
  }
  const messageId = step.messageId ?? `reasoning-${player.base}-${player.messages++}`
  emit(player, { type: EventType.REASONING_START, messageId } satisfies AgUi.ReasoningStartEvent)
  emit(
    player,
    { type: EventType.REASONING_MESSAGE_START, messageId, role: "reasoning" } satisfies AgUi.ReasoningMessageStartEvent
  )
  for (const delta of step.deltas) {
    emit(player, { type: EventType.REASONING_MESSAGE_CONTENT, messageId, delta } satisfies AgUi.ReasoningMessageContentEvent)
  }
  emit(player, { type: EventType.REASONING_MESSAGE_END, messageId } satisfies AgUi.ReasoningMessageEndEvent)
  emit(player, { type: EventType.REASONING_END, messageId } satisfies AgUi.ReasoningEndEvent)
}

const playToolCall = (player: Player, step: AgUiAgent.ToolCall): void => {
  const toolCallId = step.id ?? `call-${player.base}-${player.calls++}`
  emit(player, {
    type: EventType.TOOL_CALL_START,
    toolCallId,
    toolCallName: step.name,
    ...(player.lastTextId === undefined ? {} : { parentMessageId: player.lastTextId })
  } satisfies AgUi.ToolCallStartEvent)
  for (const delta of step.argumentDeltas) {
    emit(player, { type: EventType.TOOL_CALL_ARGS, toolCallId, delta } satisfies AgUi.ToolCallArgsEvent)
  }
  emit(player, { type: EventType.TOOL_CALL_END, toolCallId } satisfies AgUi.ToolCallEndEvent)
  if (step.result !== undefined) {
    emit(player, {
      type: EventType.TOOL_CALL_RESULT,
      messageId: `result-${toolCallId}`,
      toolCallId,
      content: step.result,
      role: "tool"
    } satisfies AgUi.ToolCallResultEvent)
    // Text after a server-side tool's result is a new message, as agents stream it.
    player.lastTextId = undefined
  }
}

/** Plays the steps; `false` when the answer ended inside them (an error, a drop, a hang). */
const playSteps = async (player: Player, steps: AgUiAgent.Script): Promise<boolean> => {
  for (const step of steps) {
    switch (step._tag) {
      case "Text":
        playText(player, step)
        break
      case "Reasoning":
        playReasoning(player, step)
        break
      case "ToolCall":
        playToolCall(player, step)
        break
      case "Event":
        emit(player, step.event)
        break
      case "Frame":
        write(player, step.raw)
        break
      case "StepGroup": {
        emit(player, { type: EventType.STEP_STARTED, stepName: step.name } satisfies AgUi.StepStartedEvent)
        if (!(await playSteps(player, step.steps))) return false
        emit(player, { type: EventType.STEP_FINISHED, stepName: step.name } satisfies AgUi.StepFinishedEvent)
        break
      }
      case "RunError":
        emit(player, {
          type: EventType.RUN_ERROR,
          message: step.message,
          ...(step.code === undefined ? {} : { code: step.code })
        } satisfies AgUi.RunErrorEvent)
        player.response.end()
        return false
      case "HttpError":
        throw new Error("AgUiAgent: httpError must be the first step of a script")
      case "Drop":
        // What was written goes out before the socket closes.
        await new Promise<void>((done) => player.response.write("", () => done()))
        player.socket.destroy()
        return false
      case "Hang":
        return false
    }
  }
  return true
}

/** Plays a script on an open event stream; resolves once the answer is over. */
export const play = async (
  script: AgUiAgent.Script,
  input: AgUi.RunAgentInput,
  response: http.ServerResponse,
  socket: net.Socket
): Promise<void> => {
  const player: Player = { response, socket, base: input.messages.length, messages: 0, calls: 0, lastTextId: undefined }
  emit(player, { type: EventType.RUN_STARTED, threadId: input.threadId, runId: input.runId } satisfies AgUi.RunStartedEvent)
  if (await playSteps(player, script)) {
    emit(player, { type: EventType.RUN_FINISHED, threadId: input.threadId, runId: input.runId } satisfies AgUi.RunFinishedEvent)
    response.end()
  }
}
