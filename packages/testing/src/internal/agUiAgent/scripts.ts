/**
 * The AG-UI agent's built-in scripts (`AgUiAgent.scripts`): the cases every AG-UI client should
 * handle, each a script or a script function, and `frontendToolRound`, the two-run shape of a
 * frontend tool call that several of them share.
 */
import type * as AgUi from "@ag-ui/core"
import { EventType } from "@ag-ui/core"
import type * as AgUiAgent from "../../AgUiAgent.js"
import { textOf } from "./request.js"
import {
  activityDelta,
  activitySnapshot,
  drop,
  event,
  messagesSnapshot,
  reasoning,
  runError,
  serverToolCall,
  stateDelta,
  stateSnapshot,
  step,
  text,
  toolCall
} from "./steps.js"
import { weatherAssistant } from "./weatherAssistant.js"

/** `AgUiAgent.frontendToolRound`: the call in the first run, `reply(result)` in the run that answers it. */
export const frontendToolRound = (options: {
  readonly name: string
  readonly args: unknown
  readonly before?: string
  readonly reply: (result: string) => AgUiAgent.Script
}): AgUiAgent.ScriptFn =>
(request) => {
  const result = request.toolResults[request.toolResults.length - 1]
  if (result !== undefined) return options.reply(textOf(result.content))
  return [
    ...(options.before === undefined ? [] : [text(options.before)]),
    toolCall(options.name, options.args)
  ]
}

/**
 * A frontend tool round told in AG-UI 1.0's convenience events: no start or end, ids only on each
 * message's first chunk.
 */
const chunks = (request: AgUiAgent.AgentRequest): AgUiAgent.Script => {
  const base = request.input.messages.length
  const result = request.toolResults[request.toolResults.length - 1]
  if (result !== undefined) {
    return [
      event(
        {
          type: EventType.TEXT_MESSAGE_CHUNK,
          messageId: `chunk-${base}-0`,
          delta: "The weather in Paris: "
        } satisfies AgUi.TextMessageChunkEvent
      ),
      event({ type: EventType.TEXT_MESSAGE_CHUNK, delta: `${textOf(result.content)}.` } satisfies AgUi.TextMessageChunkEvent)
    ]
  }
  return [
    event(
      { type: EventType.TEXT_MESSAGE_CHUNK, messageId: `chunk-${base}-0`, delta: "Let me " } satisfies AgUi.TextMessageChunkEvent
    ),
    event({ type: EventType.TEXT_MESSAGE_CHUNK, delta: "check." } satisfies AgUi.TextMessageChunkEvent),
    event({
      type: EventType.TOOL_CALL_CHUNK,
      toolCallId: `chunk-call-${base}`,
      toolCallName: "get_weather",
      parentMessageId: `chunk-${base}-0`,
      delta: "{\"city\":"
    } satisfies AgUi.ToolCallChunkEvent),
    event({ type: EventType.TOOL_CALL_CHUNK, delta: "\"Paris\"}" } satisfies AgUi.ToolCallChunkEvent)
  ]
}

/** `AgUiAgent.scripts`. */
export const scripts = {
  text: [text(["Hello", ", ", "world."])],
  reasoning: [reasoning(["Thinking ", "it over."]), text("Done thinking.")],
  legacyReasoning: [reasoning(["Thinking ", "the old way."], { legacy: true }), text("Done thinking.")],
  frontendTool: frontendToolRound({
    name: "get_weather",
    args: { city: "Paris" },
    before: "Let me check.",
    reply: (result) => [text(`The weather in Paris: ${result}.`)]
  }),
  serverTool: [
    text("Searching."),
    serverToolCall("search", { query: "effect" }, "3 results"),
    text("Found 3 results.")
  ],
  state: [
    stateSnapshot({ count: 0, items: [] }),
    text("Counting."),
    stateDelta([{ op: "replace", path: "/count", value: 1 }, { op: "add", path: "/items/-", value: "a" }]),
    stateDelta([{ op: "replace", path: "/count", value: 2 }])
  ],
  messagesSnapshot: (request: AgUiAgent.AgentRequest): AgUiAgent.Script => [
    text("Replacing the conversation."),
    messagesSnapshot([
      { id: "snap-user", role: "user", content: request.lastUserText ?? "" },
      { id: "snap-assistant", role: "assistant", content: "The conversation, as the agent has it." }
    ])
  ],
  steps: [step("plan", [text("Planning.")]), step("act", [text("Acting.")])],
  activity: [
    activitySnapshot("activity-1", "plan", { steps: ["search"], done: 0 }),
    activityDelta("activity-1", "plan", [{ op: "replace", path: "/done", value: 1 }]),
    text("Planned.")
  ],
  hostileState: [
    stateSnapshot({ count: 0 }),
    stateDelta([{ op: "add", path: "/__proto__/polluted", value: true }]),
    text("Tried.")
  ],
  chunks,
  runError: [text("Starting."), runError("The model is unavailable", { code: "MODEL_UNAVAILABLE" })],
  dropped: [text(["Half ", "a reply"]), drop()],
  weatherAssistant
} as const satisfies Record<string, AgUiAgent.ScriptSource>
