// SSE frames: one AG-UI event per `data: <json>\n\n`, fields in the order the API writes them.
// The per-delta events are hot (100k deltas in a benchmark run), so they are assembled as strings.
import type * as Wire from "../Wire.js"

export const dataFrame = (event: object): string => `data: ${JSON.stringify(event)}\n\n`

export const textContentFrame = (messageIdJson: string, delta: string, timestamp: number): string =>
  `data: {"type":"TEXT_MESSAGE_CONTENT","messageId":${messageIdJson},"delta":${JSON.stringify(delta)},"timestamp":${timestamp}}\n\n`

export const toolCallArgsFrame = (toolCallIdJson: string, delta: string, timestamp: number): string =>
  `data: {"type":"TOOL_CALL_ARGS","toolCallId":${toolCallIdJson},"delta":${JSON.stringify(delta)},"timestamp":${timestamp}}\n\n`

export const thinkingContentFrame = (delta: string, timestamp: number): string =>
  `data: {"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":${JSON.stringify(delta)},"timestamp":${timestamp}}\n\n`

export const customFrame = (name: string, value: object, timestamp: number): string =>
  dataFrame({ type: "CUSTOM", name, value, timestamp })

export const awaitingInputFrame = (pendingToolCalls: ReadonlyArray<Wire.PendingToolCall>, timestamp: number): string =>
  customFrame("tambo.run.awaiting_input", { pendingToolCalls }, timestamp)
