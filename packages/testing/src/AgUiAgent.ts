/**
 * A scripted AG-UI agent on loopback: an HTTP server that takes a
 * `RunAgentInput` POST, validates it with `@ag-ui/core`'s schema, records it,
 * and answers with a Server-Sent Events stream of AG-UI events encoded by
 * `@ag-ui/encoder`.
 *
 * An AG-UI agent keeps no thread: every run carries the whole conversation.
 * So a script that depends on the conversation is a {@link ScriptFn}: it gets
 * the decoded input, and a frontend tool round is two runs, the first ending
 * with the tool call, the second carrying the tool's result in its messages.
 *
 * Ids the agent makes up (messages, tool calls) are derived from the number of
 * messages in the request, so the same conversation gets the same ids from
 * whichever client sends it.
 *
 * @example
 * ```ts
 * import { AgUiAgent } from "@tambo-effect/testing"
 *
 * const agent = await AgUiAgent.start()
 * agent.setScript((request) =>
 *   request.toolResults.length === 0
 *     ? [AgUiAgent.text("Let me check."), AgUiAgent.toolCall("get_weather", { city: "Paris" })]
 *     : [AgUiAgent.text(`It is ${request.toolResults[0]!.content} in Paris.`)]
 * )
 * // ... POST a RunAgentInput to agent.url ...
 * await agent.close()
 * ```
 *
 * @since 0.2.0
 */
import type * as AgUi from "@ag-ui/core"
import { EventType } from "@ag-ui/core"
import { RunAgentInputSchema } from "@ag-ui/core/schemas"
import { EventEncoder } from "@ag-ui/encoder"
import * as Effect from "effect/Effect"
import { isRecord } from "effect/Predicate"
import type * as Scope from "effect/Scope"
import { Buffer } from "node:buffer"
import * as http from "node:http"
import type * as net from "node:net"

// -----------------------------------------------------------------------------
// Requests
// -----------------------------------------------------------------------------

/**
 * A validated run request, as a {@link ScriptFn} receives it.
 *
 * @since 0.2.0
 * @category Requests
 */
export interface AgentRequest {
  readonly input: AgUi.RunAgentInput
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string>>
  /**
   * The tool messages at the end of the conversation: the results of the
   * frontend tool calls the previous run ended with.
   */
  readonly toolResults: ReadonlyArray<AgUi.ToolMessage>
  /** The text of the last user message, if any. */
  readonly lastUserText: string | undefined
}

/**
 * What a {@link ScriptFn} gets besides the request.
 *
 * @since 0.2.0
 * @category Requests
 */
export interface ScriptContext {
  /** How many valid runs the agent answered before this one (0 for the first). */
  readonly runIndex: number
}

/**
 * One request the agent received, valid or not.
 *
 * @since 0.2.0
 * @category Requests
 */
export interface RecordedRequest {
  readonly method: string
  /** Path and query string as requested. */
  readonly url: string
  /** Lower-cased header names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** The decoded input, when the body was a valid `RunAgentInput`. */
  readonly input: AgUi.RunAgentInput | undefined
  /** Why the body was refused (one line per schema issue), when it was. */
  readonly issues: ReadonlyArray<string>
  /**
   * Settles when the exchange is over: `"completed"` when the agent ended its
   * answer, `"closed"` when the connection closed first (the client aborted,
   * or a scripted drop).
   */
  readonly ended: Promise<"completed" | "closed">
}

// -----------------------------------------------------------------------------
// Steps
// -----------------------------------------------------------------------------

/**
 * An assistant text message: `TEXT_MESSAGE_START`, one `TEXT_MESSAGE_CONTENT`
 * per delta, `TEXT_MESSAGE_END`.
 *
 * @since 0.2.0
 * @category Steps
 */
export interface Text {
  readonly _tag: "Text"
  readonly deltas: ReadonlyArray<string>
  readonly messageId: string | undefined
}

/**
 * Reasoning, under AG-UI 1.0's names (`REASONING_START`,
 * `REASONING_MESSAGE_START` / `_CONTENT` / `_END`, `REASONING_END`, with a
 * message id) or, `legacy`, the earlier `THINKING_*` ones (no message id).
 *
 * @since 0.2.0
 * @category Steps
 */
export interface Reasoning {
  readonly _tag: "Reasoning"
  readonly deltas: ReadonlyArray<string>
  readonly legacy: boolean
  readonly messageId: string | undefined
}

/**
 * A tool call: `TOOL_CALL_START` (its parent the run's last text message, if
 * any), one `TOOL_CALL_ARGS` per delta, `TOOL_CALL_END`. With a `result`, a
 * server-side tool: `TOOL_CALL_RESULT` follows.
 *
 * @since 0.2.0
 * @category Steps
 */
export interface ToolCall {
  readonly _tag: "ToolCall"
  readonly name: string
  readonly id: string | undefined
  readonly argumentDeltas: ReadonlyArray<string>
  readonly result: string | undefined
}

/**
 * One event, encoded as it is (`STATE_SNAPSHOT`, `STATE_DELTA`,
 * `MESSAGES_SNAPSHOT`, `ACTIVITY_*`, `CUSTOM`, ...).
 *
 * @since 0.2.0
 * @category Steps
 */
export interface Event {
  readonly _tag: "Event"
  readonly event: AgUi.BaseEvent
}

/**
 * A frame written verbatim (an event under a name `@ag-ui/core` 1.0 no longer
 * has, or a malformed frame).
 *
 * @since 0.2.0
 * @category Steps
 */
export interface Frame {
  readonly _tag: "Frame"
  readonly raw: string
}

/**
 * A named step around other steps: `STEP_STARTED`, the steps,
 * `STEP_FINISHED`.
 *
 * @since 0.2.0
 * @category Steps
 */
export interface StepGroup {
  readonly _tag: "StepGroup"
  readonly name: string
  readonly steps: Script
}

/**
 * Fails the run: `RUN_ERROR` with `message` and `code`, then the response
 * ends without `RUN_FINISHED`.
 *
 * @since 0.2.0
 * @category Steps
 */
export interface RunError {
  readonly _tag: "RunError"
  readonly message: string
  readonly code: string | undefined
}

/**
 * Answers with this HTTP status and JSON body instead of a stream. Must be
 * the first step.
 *
 * @since 0.2.0
 * @category Steps
 */
export interface HttpError {
  readonly _tag: "HttpError"
  readonly status: number
  readonly body: unknown
}

/**
 * Destroys the connection here: what was written is flushed, then the socket
 * is closed without ending the response.
 *
 * @since 0.2.0
 * @category Steps
 */
export interface Drop {
  readonly _tag: "Drop"
}

/**
 * Stops here and keeps the connection open until the client goes away or the
 * agent closes.
 *
 * @since 0.2.0
 * @category Steps
 */
export interface Hang {
  readonly _tag: "Hang"
}

/**
 * One step of a {@link Script}.
 *
 * @since 0.2.0
 * @category Steps
 */
export type Step =
  | Text
  | Reasoning
  | ToolCall
  | Event
  | Frame
  | StepGroup
  | RunError
  | HttpError
  | Drop
  | Hang

/**
 * A scripted answer: the steps played between `RUN_STARTED` and
 * `RUN_FINISHED`.
 *
 * @since 0.2.0
 * @category Models
 */
export type Script = ReadonlyArray<Step>

/**
 * A script computed per run request.
 *
 * @since 0.2.0
 * @category Models
 */
export type ScriptFn = (request: AgentRequest, context: ScriptContext) => Script | PromiseLike<Script>

/**
 * What `setScript` accepts.
 *
 * @since 0.2.0
 * @category Models
 */
export type ScriptSource = Script | ScriptFn

// -----------------------------------------------------------------------------
// Constructors
// -----------------------------------------------------------------------------

const toDeltas = (deltas: string | ReadonlyArray<string>): ReadonlyArray<string> =>
  typeof deltas === "string" ? [deltas] : deltas

/**
 * An assistant text message. A string is one delta.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const text = (deltas: string | ReadonlyArray<string>, options?: { readonly messageId?: string }): Text => ({
  _tag: "Text",
  deltas: toDeltas(deltas),
  messageId: options?.messageId
})

/**
 * Reasoning under AG-UI 1.0's `REASONING_*` names; `legacy: true` sends the
 * `THINKING_*` names instead. A string is one delta.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const reasoning = (
  deltas: string | ReadonlyArray<string>,
  options?: { readonly legacy?: boolean; readonly messageId?: string }
): Reasoning => ({
  _tag: "Reasoning",
  deltas: toDeltas(deltas),
  legacy: options?.legacy ?? false,
  messageId: options?.messageId
})

/**
 * Options of {@link toolCall} and {@link serverToolCall}.
 *
 * @since 0.2.0
 * @category Constructors
 */
export interface ToolCallOptions {
  /** The tool call id (default: derived from the conversation's length). */
  readonly id?: string
  /** Stream the JSON arguments in deltas of this many characters (default: one delta). */
  readonly chunkSize?: number
}

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

/**
 * A call of a frontend tool (one the client offered): the client runs it and
 * starts the next run with its result. `args` is serialized with
 * `JSON.stringify`; a string is sent as is.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const toolCall = (name: string, args: unknown = {}, options?: ToolCallOptions): ToolCall => ({
  _tag: "ToolCall",
  name,
  id: options?.id,
  argumentDeltas: argumentDeltas(args, options?.chunkSize),
  result: undefined
})

/**
 * A call of a server-side tool: the call, then its `TOOL_CALL_RESULT`
 * (`result`, a string; anything else is `JSON.stringify`d).
 *
 * @since 0.2.0
 * @category Constructors
 */
export const serverToolCall = (name: string, args: unknown, result: unknown, options?: ToolCallOptions): ToolCall => ({
  _tag: "ToolCall",
  name,
  id: options?.id,
  argumentDeltas: argumentDeltas(args, options?.chunkSize),
  result: typeof result === "string" ? result : JSON.stringify(result)
})

/**
 * Any AG-UI event, encoded as it is.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const event = (value: AgUi.BaseEvent): Event => ({ _tag: "Event", event: value })

/**
 * `STATE_SNAPSHOT`: the agent's whole state.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const stateSnapshot = (snapshot: unknown): Event =>
  event({ type: EventType.STATE_SNAPSHOT, snapshot } satisfies AgUi.StateSnapshotEvent)

/**
 * `STATE_DELTA`: RFC 6902 operations on the agent's state. Not checked: a
 * hostile path (`/__proto__/...`) is sent as given.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const stateDelta = (operations: ReadonlyArray<AgUi.JsonPatchOperation>): Event =>
  event({ type: EventType.STATE_DELTA, delta: [...operations] } satisfies AgUi.StateDeltaEvent)

/**
 * `MESSAGES_SNAPSHOT`: the conversation as the agent has it, replacing the
 * client's.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const messagesSnapshot = (messages: ReadonlyArray<AgUi.Message>): Event =>
  event({ type: EventType.MESSAGES_SNAPSHOT, messages: [...messages] } satisfies AgUi.MessagesSnapshotEvent)

/**
 * `ACTIVITY_SNAPSHOT`: an activity message's whole content (progress that is
 * not conversation content: a plan, a search).
 *
 * @since 0.2.0
 * @category Constructors
 */
export const activitySnapshot = (
  messageId: string,
  activityType: string,
  content: Record<string, unknown>,
  options?: { readonly replace?: boolean }
): Event =>
  event({
    type: EventType.ACTIVITY_SNAPSHOT,
    messageId,
    activityType,
    content,
    ...(options?.replace === undefined ? {} : { replace: options.replace })
  } satisfies AgUi.ActivitySnapshotEvent)

/**
 * `ACTIVITY_DELTA`: RFC 6902 operations on an activity message's content.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const activityDelta = (
  messageId: string,
  activityType: string,
  patch: ReadonlyArray<AgUi.JsonPatchOperation>
): Event =>
  event({ type: EventType.ACTIVITY_DELTA, messageId, activityType, patch: [...patch] } satisfies AgUi.ActivityDeltaEvent)

/**
 * `STEP_STARTED name`, the steps, `STEP_FINISHED name`.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const step = (name: string, steps: Script): StepGroup => ({ _tag: "StepGroup", name, steps })

/**
 * A frame written verbatim: `frame("data: {not json\n\n")`.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const frame = (raw: string): Frame => ({ _tag: "Frame", raw })

/**
 * Fails the run with `RUN_ERROR` (see {@link RunError}).
 *
 * @since 0.2.0
 * @category Constructors
 */
export const runError = (message: string, options?: { readonly code?: string }): RunError => ({
  _tag: "RunError",
  message,
  code: options?.code
})

/**
 * Answers with an HTTP error instead of a stream (body default
 * `{ error: "HTTP <status>" }`).
 *
 * @since 0.2.0
 * @category Constructors
 */
export const httpError = (status: number, body?: unknown): HttpError => ({
  _tag: "HttpError",
  status,
  body: body === undefined ? { error: `HTTP ${status}` } : body
})

/**
 * Destroys the connection here.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const drop = (): Drop => ({ _tag: "Drop" })

/**
 * Keeps the connection open without sending anything more.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const hang = (): Hang => ({ _tag: "Hang" })

// -----------------------------------------------------------------------------
// Scripts
// -----------------------------------------------------------------------------

/** The text parts of a message's content, joined. */
const textOf = (content: string | ReadonlyArray<AgUi.ContentPart>): string =>
  typeof content === "string"
    ? content
    : content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("")

/**
 * A frontend tool round: the first run says `before` and calls `name` with
 * `args`, which ends the run; the run whose messages end with that call's
 * result gets `reply(result)`.
 *
 * @since 0.2.0
 * @category Scripts
 */
export const frontendToolRound = (options: {
  readonly name: string
  readonly args: unknown
  readonly before?: string
  readonly reply: (result: string) => Script
}): ScriptFn =>
(request) => {
  const result = request.toolResults[request.toolResults.length - 1]
  if (result !== undefined) return options.reply(textOf(result.content))
  return [
    ...(options.before === undefined ? [] : [text(options.before)]),
    toolCall(options.name, options.args)
  ]
}

/** Streams like a model would: one delta per word (with its leading space). */
const words = (sentence: string): Array<string> => sentence.match(/\s*\S+/g) ?? [sentence]

const cityIn = (message: string): string =>
  /\b(?:in|for|at)\s+([A-Z][\p{L}'-]*(?:\s+[A-Z][\p{L}'-]*)*)/u.exec(message)?.[1] ?? "San Francisco"

/** A tool's result in words: `21°, sunny` from `{ temperature, conditions }`, else the text itself. */
const weatherInWords = (result: string): { readonly city: string | undefined; readonly words: string } => {
  try {
    const record: unknown = JSON.parse(result)
    if (isRecord(record)) {
      const parts = [
        typeof record["temperature"] === "number" ? `${record["temperature"]}°` : undefined,
        typeof record["conditions"] === "string" ? record["conditions"] : undefined
      ].filter((part) => part !== undefined)
      if (parts.length > 0) {
        return { city: typeof record["city"] === "string" ? record["city"] : undefined, words: parts.join(", ") }
      }
    }
  } catch {
    // Not JSON: said as it is.
  }
  return { city: undefined, words: result }
}

/**
 * The weather assistant, as an AG-UI agent (the counterpart of the Tambo testing server's
 * `Script.weatherAssistant`): a message that mentions the weather, in a run that offers a
 * `get_weather` tool, gets "Let me check the weather in <city>." and a call of it with
 * `{ city }`; the run that carries its result gets the weather in words. Anything else gets
 * "You said: <message>". Text streams one word per delta.
 */
const weatherAssistant: ScriptFn = (request) => {
  const result = request.toolResults[request.toolResults.length - 1]
  if (result !== undefined) {
    const weather = weatherInWords(textOf(result.content))
    return [text(words(`Here is the weather${weather.city === undefined ? "" : ` in ${weather.city}`}: ${weather.words}.`))]
  }
  const said = (request.lastUserText ?? "").trim()
  if (/\bweather\b/i.test(said)) {
    if (!request.input.tools.some((tool) => tool.name === "get_weather")) {
      return [text(words("I would need a get_weather tool to check the weather."))]
    }
    const city = cityIn(said)
    return [text(words(`Let me check the weather in ${city}.`)), toolCall("get_weather", { city })]
  }
  return [text(words(said === "" ? "Hello! Ask me about the weather." : `You said: ${said}`))]
}

/**
 * The scripts every AG-UI client should handle, by name: text, reasoning
 * (1.0 and legacy names), a frontend tool round (`get_weather`), a
 * server-side tool, shared state, a state delta through `__proto__`, a
 * messages snapshot, named steps, activities, a frontend tool round told in
 * AG-UI 1.0's chunk events (`chunks`), a run error and a dropped
 * connection. The differential tests
 * play each against the SDK and `@ag-ui/client`. Besides them, `weatherAssistant`: an
 * echo, or a `get_weather` round for a message about the weather.
 *
 * @since 0.2.0
 * @category Scripts
 */
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
  messagesSnapshot: (request: AgentRequest): Script => [
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
  chunks: (request: AgentRequest): Script => {
    // AG-UI 1.0's convenience events: no start or end, ids only on each message's first chunk.
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
  },
  runError: [text("Starting."), runError("The model is unavailable", { code: "MODEL_UNAVAILABLE" })],
  dropped: [text(["Half ", "a reply"]), drop()],
  /**
   * Not one of the cases above: a conversation like the Tambo testing server's default, for demos
   * and the example app (`serve-api --agui`). "What is the weather in Paris?" gets a
   * `get_weather` round; anything else an echo.
   */
  weatherAssistant
} as const satisfies Record<string, ScriptSource>

// -----------------------------------------------------------------------------
// The agent
// -----------------------------------------------------------------------------

/**
 * A running scripted agent.
 *
 * @since 0.2.0
 * @category Models
 */
export interface AgUiAgent {
  /** The agent's endpoint: `http://127.0.0.1:<port>/agent`. Any path answers. */
  readonly url: string
  /** Every request received since the last `reset`, in order. */
  readonly requests: ReadonlyArray<RecordedRequest>
  /** The script of the runs from now on (default: {@link scripts}`.text`). */
  readonly setScript: (script: ScriptSource) => void
  /** Back to the default script; forgets the requests. */
  readonly reset: () => void
  /** Closes the server and every connection it holds open. */
  readonly close: () => Promise<void>
}

/**
 * Options of {@link start}.
 *
 * @since 0.2.0
 * @category Models
 */
export interface StartOptions {
  readonly script?: ScriptSource
  /** The port to listen on. Default: a free one. */
  readonly port?: number | undefined
}

const encoder = new EventEncoder()

/** A frame of an event `@ag-ui/core` 1.0 has no type for (the legacy `THINKING_*` names). */
const legacyFrame = (value: { readonly type: string; readonly [key: string]: unknown }): string =>
  `data: ${JSON.stringify(value)}\n\n`

const headersOf = (request: http.IncomingMessage): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value
  }
  return headers
}

/** Every answer may be read from any origin: the example app calls the agent from a page. */
const CORS = { "access-control-allow-origin": "*" } as const

const sendJson = (response: http.ServerResponse, status: number, body: unknown) => {
  const payload = JSON.stringify(body)
  response.writeHead(status, {
    ...CORS,
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(payload).toString()
  })
  response.end(payload)
}

const requestOf = (input: AgUi.RunAgentInput, headers: Record<string, string>): AgentRequest => {
  const toolResults: Array<AgUi.ToolMessage> = []
  for (let at = input.messages.length - 1; at >= 0; at--) {
    const message = input.messages[at]!
    if (message.role !== "tool") break
    toolResults.unshift(message)
  }
  let lastUserText: string | undefined
  for (let at = input.messages.length - 1; at >= 0 && lastUserText === undefined; at--) {
    const message = input.messages[at]!
    if (message.role === "user") lastUserText = textOf(message.content)
  }
  return { input, headers, toolResults, lastUserText }
}

/** Plays a script on an open event stream; resolves once the answer is over. */
const play = async (
  script: Script,
  input: AgUi.RunAgentInput,
  response: http.ServerResponse,
  socket: net.Socket
): Promise<void> => {
  const base = input.messages.length
  let messages = 0
  let calls = 0
  let lastTextId: string | undefined
  const write = (frame: string) => {
    if (!response.destroyed) response.write(frame)
  }
  const emit = (value: AgUi.BaseEvent) => write(encoder.encodeSSE(value))

  // `false`: the answer ended inside the script (an error, a drop, a hang).
  const run = async (steps: Script): Promise<boolean> => {
    for (const step of steps) {
      switch (step._tag) {
        case "Text": {
          const messageId = step.messageId ?? `msg-${base}-${messages++}`
          lastTextId = messageId
          emit({ type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" } satisfies AgUi.TextMessageStartEvent)
          for (const delta of step.deltas) {
            emit({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta } satisfies AgUi.TextMessageContentEvent)
          }
          emit({ type: EventType.TEXT_MESSAGE_END, messageId } satisfies AgUi.TextMessageEndEvent)
          break
        }
        case "Reasoning": {
          if (step.legacy) {
            write(legacyFrame({ type: "THINKING_START" }))
            write(legacyFrame({ type: "THINKING_TEXT_MESSAGE_START" }))
            for (const delta of step.deltas) write(legacyFrame({ type: "THINKING_TEXT_MESSAGE_CONTENT", delta }))
            write(legacyFrame({ type: "THINKING_TEXT_MESSAGE_END" }))
            write(legacyFrame({ type: "THINKING_END" }))
            break
          }
          const messageId = step.messageId ?? `reasoning-${base}-${messages++}`
          emit({ type: EventType.REASONING_START, messageId } satisfies AgUi.ReasoningStartEvent)
          emit({ type: EventType.REASONING_MESSAGE_START, messageId, role: "reasoning" } satisfies AgUi.ReasoningMessageStartEvent)
          for (const delta of step.deltas) {
            emit({ type: EventType.REASONING_MESSAGE_CONTENT, messageId, delta } satisfies AgUi.ReasoningMessageContentEvent)
          }
          emit({ type: EventType.REASONING_MESSAGE_END, messageId } satisfies AgUi.ReasoningMessageEndEvent)
          emit({ type: EventType.REASONING_END, messageId } satisfies AgUi.ReasoningEndEvent)
          break
        }
        case "ToolCall": {
          const toolCallId = step.id ?? `call-${base}-${calls++}`
          emit({
            type: EventType.TOOL_CALL_START,
            toolCallId,
            toolCallName: step.name,
            ...(lastTextId === undefined ? {} : { parentMessageId: lastTextId })
          } satisfies AgUi.ToolCallStartEvent)
          for (const delta of step.argumentDeltas) {
            emit({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta } satisfies AgUi.ToolCallArgsEvent)
          }
          emit({ type: EventType.TOOL_CALL_END, toolCallId } satisfies AgUi.ToolCallEndEvent)
          if (step.result !== undefined) {
            emit({
              type: EventType.TOOL_CALL_RESULT,
              messageId: `result-${toolCallId}`,
              toolCallId,
              content: step.result,
              role: "tool"
            } satisfies AgUi.ToolCallResultEvent)
            // Text after a server-side tool's result is a new message, as agents stream it.
            lastTextId = undefined
          }
          break
        }
        case "Event":
          emit(step.event)
          break
        case "Frame":
          write(step.raw)
          break
        case "StepGroup": {
          emit({ type: EventType.STEP_STARTED, stepName: step.name } satisfies AgUi.StepStartedEvent)
          if (!(await run(step.steps))) return false
          emit({ type: EventType.STEP_FINISHED, stepName: step.name } satisfies AgUi.StepFinishedEvent)
          break
        }
        case "RunError":
          emit({
            type: EventType.RUN_ERROR,
            message: step.message,
            ...(step.code === undefined ? {} : { code: step.code })
          } satisfies AgUi.RunErrorEvent)
          response.end()
          return false
        case "HttpError":
          throw new Error("AgUiAgent: httpError must be the first step of a script")
        case "Drop":
          // What was written goes out before the socket closes.
          await new Promise<void>((done) => response.write("", () => done()))
          socket.destroy()
          return false
        case "Hang":
          return false
      }
    }
    return true
  }

  emit({ type: EventType.RUN_STARTED, threadId: input.threadId, runId: input.runId } satisfies AgUi.RunStartedEvent)
  if (await run(script)) {
    emit({ type: EventType.RUN_FINISHED, threadId: input.threadId, runId: input.runId } satisfies AgUi.RunFinishedEvent)
    response.end()
  }
}

/**
 * Starts a scripted AG-UI agent on `127.0.0.1` (a free port).
 *
 * Every request must be a `POST` of a JSON `RunAgentInput`: another method is
 * answered 405 (a browser's CORS preflight is answered, and not recorded;
 * every answer allows any origin), a body that is not JSON 400, and one that fails the schema 422
 * with `{ error, issues }`. Each is recorded.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const start = (options: StartOptions = {}): Promise<AgUiAgent> => {
  const sockets = new Set<net.Socket>()
  const requests: Array<RecordedRequest> = []
  const initial: ScriptSource = options.script ?? scripts.text
  let script: ScriptSource = initial
  let runIndex = 0

  const answer = async (
    request: http.IncomingMessage,
    response: http.ServerResponse,
    body: string,
    ended: Promise<"completed" | "closed">
  ) => {
    const headers = headersOf(request)
    // A browser's preflight is the browser's business, not a request to the agent: not recorded.
    if (request.method === "OPTIONS" && headers["access-control-request-method"] !== undefined) {
      const requested = headers["access-control-request-headers"]
      response.writeHead(204, {
        ...CORS,
        "access-control-allow-methods": "POST",
        ...(requested === undefined ? {} : { "access-control-allow-headers": requested }),
        "access-control-max-age": "600",
        "content-length": "0"
      })
      return response.end()
    }
    const record = (input: AgUi.RunAgentInput | undefined, issues: ReadonlyArray<string>) =>
      requests.push({ method: request.method ?? "GET", url: request.url ?? "/", headers, body, input, issues, ended })
    if (request.method !== "POST") {
      record(undefined, [`method ${request.method ?? "?"} is not POST`])
      return sendJson(response, 405, { error: "Method not allowed" })
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(body)
    } catch {
      record(undefined, ["the body is not JSON"])
      return sendJson(response, 400, { error: "The body is not JSON" })
    }
    const decoded = RunAgentInputSchema.safeParse(parsed)
    if (!decoded.success) {
      const issues = decoded.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
      record(undefined, issues)
      return sendJson(response, 422, { error: "Invalid RunAgentInput", issues })
    }
    // Validated by the schema above; zod types optional fields as `T | undefined`, which
    // `exactOptionalPropertyTypes` tells apart from `RunAgentInput`'s absent ones.
    const input = decoded.data as AgUi.RunAgentInput
    record(input, [])
    const context: ScriptContext = { runIndex: runIndex++ }
    const steps = typeof script === "function" ? await script(requestOf(input, headers), context) : script
    const first = steps[0]
    if (first?._tag === "HttpError") return sendJson(response, first.status, first.body)
    response.writeHead(200, { ...CORS, "content-type": encoder.getContentType(), "cache-control": "no-cache" })
    response.flushHeaders()
    await play(steps, input, response, request.socket)
  }

  const server = http.createServer((request, response) => {
    const parts: Array<Buffer> = []
    let settle: (outcome: "completed" | "closed") => void = () => {}
    const ended = new Promise<"completed" | "closed">((resolve) => {
      settle = resolve
    })
    response.on("finish", () => settle("completed"))
    response.on("close", () => settle("closed"))
    // A client that goes away mid-answer is part of the script's world, not a failure of the server.
    response.on("error", () => {})
    request.on("data", (part: Buffer) => parts.push(part))
    request.on("end", () => {
      answer(request, response, Buffer.concat(parts).toString("utf8"), ended).catch((error: unknown) => {
        if (!response.headersSent) {
          sendJson(response, 500, { error: error instanceof Error ? error.message : String(error) })
        } else {
          response.destroy()
        }
      })
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}/agent`,
        requests,
        setScript: (next) => {
          script = next
        },
        reset: () => {
          script = initial
          runIndex = 0
          requests.length = 0
        },
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })
}

/**
 * A scripted AG-UI agent closed when the scope closes.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const scoped = (options: StartOptions = {}): Effect.Effect<AgUiAgent, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(() => start(options)), (agent) => Effect.promise(() => agent.close()))
