/**
 * The step constructors of the scripted AG-UI agent: each builds one step of a script as a plain
 * object. They live here, not in `AgUiAgent.ts`, so that the built-in scripts (`scripts.ts`) can
 * be built from them without an import cycle; the public module hands each of them out with its
 * signature and docs.
 */
import type * as AgUi from "@ag-ui/core"
import { EventType } from "@ag-ui/core"
import type * as AgUiAgent from "../../AgUiAgent.js"

const toDeltas = (deltas: string | ReadonlyArray<string>): ReadonlyArray<string> =>
  typeof deltas === "string" ? [deltas] : deltas

/** A tool's arguments as JSON, in deltas of `chunkSize` characters (one delta without). */
const argumentDeltas = (args: unknown, chunkSize: number | undefined): ReadonlyArray<string> => {
  const json = typeof args === "string" ? args : JSON.stringify(args)
  if (chunkSize === undefined) return [json]
  if (!Number.isInteger(chunkSize) || chunkSize < 1) {
    throw new RangeError(`chunk size must be a positive integer, got ${chunkSize}`)
  }
  const out: Array<string> = []
  for (let at = 0; at < json.length; at += chunkSize) out.push(json.slice(at, at + chunkSize))
  return out
}

/** `AgUiAgent.text`. */
export const text = (
  deltas: string | ReadonlyArray<string>,
  options?: { readonly messageId?: string }
): AgUiAgent.Text => ({
  _tag: "Text",
  deltas: toDeltas(deltas),
  messageId: options?.messageId
})

/** `AgUiAgent.reasoning`. */
export const reasoning = (
  deltas: string | ReadonlyArray<string>,
  options?: { readonly legacy?: boolean; readonly messageId?: string }
): AgUiAgent.Reasoning => ({
  _tag: "Reasoning",
  deltas: toDeltas(deltas),
  legacy: options?.legacy ?? false,
  messageId: options?.messageId
})

/** `AgUiAgent.toolCall`. */
export const toolCall = (name: string, args: unknown = {}, options?: AgUiAgent.ToolCallOptions): AgUiAgent.ToolCall => ({
  _tag: "ToolCall",
  name,
  id: options?.id,
  argumentDeltas: argumentDeltas(args, options?.chunkSize),
  result: undefined
})

/** `AgUiAgent.serverToolCall`. */
export const serverToolCall = (
  name: string,
  args: unknown,
  result: unknown,
  options?: AgUiAgent.ToolCallOptions
): AgUiAgent.ToolCall => ({
  _tag: "ToolCall",
  name,
  id: options?.id,
  argumentDeltas: argumentDeltas(args, options?.chunkSize),
  result: typeof result === "string" ? result : JSON.stringify(result)
})

/** `AgUiAgent.event`. */
export const event = (value: AgUi.BaseEvent): AgUiAgent.Event => ({ _tag: "Event", event: value })

/** `AgUiAgent.stateSnapshot`. */
export const stateSnapshot = (snapshot: unknown): AgUiAgent.Event =>
  event({ type: EventType.STATE_SNAPSHOT, snapshot } satisfies AgUi.StateSnapshotEvent)

/** `AgUiAgent.stateDelta`. */
export const stateDelta = (operations: ReadonlyArray<AgUi.JsonPatchOperation>): AgUiAgent.Event =>
  event({ type: EventType.STATE_DELTA, delta: [...operations] } satisfies AgUi.StateDeltaEvent)

/** `AgUiAgent.messagesSnapshot`. */
export const messagesSnapshot = (messages: ReadonlyArray<AgUi.Message>): AgUiAgent.Event =>
  event({ type: EventType.MESSAGES_SNAPSHOT, messages: [...messages] } satisfies AgUi.MessagesSnapshotEvent)

/** `AgUiAgent.activitySnapshot`. */
export const activitySnapshot = (
  messageId: string,
  activityType: string,
  content: Record<string, unknown>,
  options?: { readonly replace?: boolean }
): AgUiAgent.Event =>
  event({
    type: EventType.ACTIVITY_SNAPSHOT,
    messageId,
    activityType,
    content,
    ...(options?.replace === undefined ? {} : { replace: options.replace })
  } satisfies AgUi.ActivitySnapshotEvent)

/** `AgUiAgent.activityDelta`. */
export const activityDelta = (
  messageId: string,
  activityType: string,
  patch: ReadonlyArray<AgUi.JsonPatchOperation>
): AgUiAgent.Event =>
  event({ type: EventType.ACTIVITY_DELTA, messageId, activityType, patch: [...patch] } satisfies AgUi.ActivityDeltaEvent)

/** `AgUiAgent.step`. */
export const step = (name: string, steps: AgUiAgent.Script): AgUiAgent.StepGroup => ({ _tag: "StepGroup", name, steps })

/** `AgUiAgent.frame`. */
export const frame = (raw: string): AgUiAgent.Frame => ({ _tag: "Frame", raw })

/** `AgUiAgent.runError`. */
export const runError = (message: string, options?: { readonly code?: string }): AgUiAgent.RunError => ({
  _tag: "RunError",
  message,
  code: options?.code
})

/** `AgUiAgent.httpError`. */
export const httpError = (status: number, body?: unknown): AgUiAgent.HttpError => ({
  _tag: "HttpError",
  status,
  body: body === undefined ? { error: `HTTP ${status}` } : body
})

/** `AgUiAgent.drop`. */
export const drop = (): AgUiAgent.Drop => ({ _tag: "Drop" })

/** `AgUiAgent.hang`. */
export const hang = (): AgUiAgent.Hang => ({ _tag: "Hang" })
