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
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as internalScripts from "./internal/agUiAgent/scripts.js"
import * as internalServer from "./internal/agUiAgent/server.js"
import * as internalSteps from "./internal/agUiAgent/steps.js"

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

/**
 * An assistant text message. A string is one delta.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const text: (deltas: string | ReadonlyArray<string>, options?: { readonly messageId?: string }) => Text =
  internalSteps.text

/**
 * Reasoning under AG-UI 1.0's `REASONING_*` names; `legacy: true` sends the
 * `THINKING_*` names instead. A string is one delta.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const reasoning: (
  deltas: string | ReadonlyArray<string>,
  options?: { readonly legacy?: boolean; readonly messageId?: string }
) => Reasoning = internalSteps.reasoning

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

/**
 * A call of a frontend tool (one the client offered): the client runs it and
 * starts the next run with its result. `args` is serialized with
 * `JSON.stringify`; a string is sent as is.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const toolCall: (name: string, args?: unknown, options?: ToolCallOptions) => ToolCall = internalSteps.toolCall

/**
 * A call of a server-side tool: the call, then its `TOOL_CALL_RESULT`
 * (`result`, a string; anything else is `JSON.stringify`d).
 *
 * @since 0.2.0
 * @category Constructors
 */
export const serverToolCall: (name: string, args: unknown, result: unknown, options?: ToolCallOptions) => ToolCall =
  internalSteps.serverToolCall

/**
 * Any AG-UI event, encoded as it is.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const event: (value: AgUi.BaseEvent) => Event = internalSteps.event

/**
 * `STATE_SNAPSHOT`: the agent's whole state.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const stateSnapshot: (snapshot: unknown) => Event = internalSteps.stateSnapshot

/**
 * `STATE_DELTA`: RFC 6902 operations on the agent's state. Not checked: a
 * hostile path (`/__proto__/...`) is sent as given.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const stateDelta: (operations: ReadonlyArray<AgUi.JsonPatchOperation>) => Event = internalSteps.stateDelta

/**
 * `MESSAGES_SNAPSHOT`: the conversation as the agent has it, replacing the
 * client's.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const messagesSnapshot: (messages: ReadonlyArray<AgUi.Message>) => Event = internalSteps.messagesSnapshot

/**
 * `ACTIVITY_SNAPSHOT`: an activity message's whole content (progress that is
 * not conversation content: a plan, a search).
 *
 * @since 0.2.0
 * @category Constructors
 */
export const activitySnapshot: (
  messageId: string,
  activityType: string,
  content: Record<string, unknown>,
  options?: { readonly replace?: boolean }
) => Event = internalSteps.activitySnapshot

/**
 * `ACTIVITY_DELTA`: RFC 6902 operations on an activity message's content.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const activityDelta: (
  messageId: string,
  activityType: string,
  patch: ReadonlyArray<AgUi.JsonPatchOperation>
) => Event = internalSteps.activityDelta

/**
 * `STEP_STARTED name`, the steps, `STEP_FINISHED name`.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const step: (name: string, steps: Script) => StepGroup = internalSteps.step

/**
 * A frame written verbatim: `frame("data: {not json\n\n")`.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const frame: (raw: string) => Frame = internalSteps.frame

/**
 * Fails the run with `RUN_ERROR` (see {@link RunError}).
 *
 * @since 0.2.0
 * @category Constructors
 */
export const runError: (message: string, options?: { readonly code?: string }) => RunError = internalSteps.runError

/**
 * Answers with an HTTP error instead of a stream (body default
 * `{ error: "HTTP <status>" }`).
 *
 * @since 0.2.0
 * @category Constructors
 */
export const httpError: (status: number, body?: unknown) => HttpError = internalSteps.httpError

/**
 * Destroys the connection here.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const drop: () => Drop = internalSteps.drop

/**
 * Keeps the connection open without sending anything more.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const hang: () => Hang = internalSteps.hang

// -----------------------------------------------------------------------------
// Scripts
// -----------------------------------------------------------------------------

/**
 * A frontend tool round: the first run says `before` and calls `name` with
 * `args`, which ends the run; the run whose messages end with that call's
 * result gets `reply(result)`.
 *
 * @since 0.2.0
 * @category Scripts
 */
export const frontendToolRound: (options: {
  readonly name: string
  readonly args: unknown
  readonly before?: string
  readonly reply: (result: string) => Script
}) => ScriptFn = internalScripts.frontendToolRound

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
export const scripts: {
  readonly text: readonly [Text]
  readonly reasoning: readonly [Reasoning, Text]
  readonly legacyReasoning: readonly [Reasoning, Text]
  readonly frontendTool: ScriptFn
  readonly serverTool: readonly [Text, ToolCall, Text]
  readonly state: readonly [Event, Text, Event, Event]
  readonly messagesSnapshot: (request: AgentRequest) => Script
  readonly steps: readonly [StepGroup, StepGroup]
  readonly activity: readonly [Event, Event, Text]
  readonly hostileState: readonly [Event, Event, Text]
  readonly chunks: (request: AgentRequest) => Script
  readonly runError: readonly [Text, RunError]
  readonly dropped: readonly [Text, Drop]
  /**
   * Not one of the cases above: a conversation like the Tambo testing server's default, for demos
   * and the example app (`serve-api --agui`). "What is the weather in Paris?" gets a
   * `get_weather` round; anything else an echo.
   */
  readonly weatherAssistant: ScriptFn
} = internalScripts.scripts

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
export const start: (options?: StartOptions) => Promise<AgUiAgent> = internalServer.start

/**
 * A scripted AG-UI agent closed when the scope closes.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const scoped: (options?: StartOptions) => Effect.Effect<AgUiAgent, never, Scope.Scope> = internalServer.scoped
