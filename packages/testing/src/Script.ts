/**
 * The script DSL: what the test server streams in reply to a run.
 *
 * A {@link Script} is a list of {@link Step}s. The server plays them in order between its own
 * `RUN_STARTED` and `RUN_FINISHED`, shaping the events exactly as the Tambo API does: the first
 * `text` opens the run's assistant message, which stays open across tool calls and components and
 * is closed at the end of the round; client-side tool calls make the run end with
 * `tambo.run.awaiting_input`.
 *
 * A script can span several rounds. A client-side tool call (one the request declared) ends its
 * round, together with any tool calls streamed right after it; so does `awaitToolResults()`. The
 * steps that follow play when the client continues the thread with its tool results. For anything
 * that depends on the request, give a {@link ScriptFn} instead: it is called for every run request
 * (including every continuation that has no rounds left to play) with the parsed request, tool
 * results included.
 *
 * @example
 * ```ts
 * import { Script } from "@tambo-effect/testing"
 *
 * server.setScript((request) =>
 *   request.toolResults.length === 0
 *     ? [Script.text("Let me check."), Script.toolCall("get_weather", { city: "Paris" })]
 *     : [Script.text(`It is ${request.toolResults[0]!.text} in Paris.`)]
 * )
 * ```
 *
 * @since 0.1.0
 */
import { diffProps } from "./internal/props.js"
import { strictValue } from "./internal/strict.js"
import { weatherAssistant as weatherAssistantImpl } from "./internal/weatherAssistant.js"
import type * as Wire from "./Wire.js"

// -----------------------------------------------------------------------------
// Requests
// -----------------------------------------------------------------------------

/**
 * A tool result the client sent in a continuation, with the name of the tool it answers (looked up
 * from the tool call the server streamed) and its text blocks joined for convenience.
 *
 * @since 0.1.0
 * @category Requests
 */
export interface ToolResult {
  readonly toolUseId: string
  readonly toolName: string | undefined
  readonly content: ReadonlyArray<Wire.TextContent | Wire.ResourceContent>
  readonly isError: boolean
  /** The text blocks of `content`, joined. */
  readonly text: string
}

/**
 * The run request a {@link ScriptFn} receives, decoded and validated.
 *
 * @since 0.1.0
 * @category Requests
 */
export interface RunRequest {
  readonly threadId: string
  readonly runId: string
  /** `true` for `POST /v1/threads/runs` (the thread was created by this request). */
  readonly isNewThread: boolean
  /** The context key the thread belongs to (the `userKey`, or the bearer token's user). */
  readonly contextKey: string
  readonly message: Wire.InputMessage
  /** The text blocks of the message, joined. */
  readonly text: string
  readonly toolResults: ReadonlyArray<ToolResult>
  readonly tools: ReadonlyArray<Wire.Tool>
  readonly availableComponents: ReadonlyArray<Wire.AvailableComponent>
  readonly toolChoice: Wire.ToolChoice | undefined
  readonly previousRunId: string | undefined
  readonly additionalContext: Wire.JsonObject | undefined
  readonly model: string | undefined
  /** The thread's messages before this request (its user message and tool results excluded). */
  readonly history: ReadonlyArray<Wire.Message>
  /** The raw request body, as parsed. */
  readonly body: unknown
}

/**
 * What a {@link ScriptFn} gets besides the request.
 *
 * @since 0.1.0
 * @category Requests
 */
export interface ScriptContext {
  /** How many runs the server started before this one (0 for the first). */
  readonly runIndex: number
  /** How many runs this thread had before this one. */
  readonly threadRunIndex: number
  /** Aborted when the run is cancelled or its connection closes. */
  readonly signal: AbortSignal
}

// -----------------------------------------------------------------------------
// Steps
// -----------------------------------------------------------------------------

/**
 * Streams text deltas into the round's assistant message (`TEXT_MESSAGE_START` on the first text
 * of the round, then one `TEXT_MESSAGE_CONTENT` per delta).
 *
 * @since 0.1.0
 * @category Steps
 */
export interface Text {
  readonly _tag: "Text"
  readonly deltas: ReadonlyArray<string>
  /** Send `TEXT_MESSAGE_END` right after these deltas, instead of at the end of the round where the API sends it. */
  readonly close: boolean
}

/**
 * Streams reasoning: `THINKING_TEXT_MESSAGE_START`, one `..._CONTENT` per delta, `..._END`, none
 * of them carrying a `messageId`.
 *
 * @since 0.1.0
 * @category Steps
 */
export interface Reasoning {
  readonly _tag: "Reasoning"
  readonly deltas: ReadonlyArray<string>
}

/**
 * Streams a tool call: `TOOL_CALL_START`, one `TOOL_CALL_ARGS` per delta, `TOOL_CALL_END`.
 *
 * @since 0.1.0
 * @category Steps
 */
export interface ToolCall {
  readonly _tag: "ToolCall"
  readonly name: string
  readonly id: string | undefined
  readonly argumentDeltas: ReadonlyArray<string>
  /**
   * Whether the run waits for the client's result. `undefined` (the default) does what the API
   * does: the call is pending if the request declared a client tool of that name.
   */
  readonly pending: boolean | undefined
}

/**
 * One `tambo.component.props_delta` payload.
 *
 * @since 0.1.0
 * @category Steps
 */
export interface PropsDelta {
  readonly operations: ReadonlyArray<Wire.JsonPatchOperation>
  readonly streamingStatus: { readonly [prop: string]: Wire.PropStreamingStatus }
}

/**
 * Streams a component: `tambo.component.start`, one `tambo.component.props_delta` per delta,
 * `tambo.component.end` with the final props.
 *
 * @since 0.1.0
 * @category Steps
 */
export interface Component {
  readonly _tag: "Component"
  readonly name: string
  readonly id: string | undefined
  readonly deltas: ReadonlyArray<PropsDelta>
  readonly finalProps: Wire.JsonObject
  /** Initial component state stored with the message (the API streams none). */
  readonly state: Wire.JsonObject | undefined
}

/**
 * Sends one event as a `data:` frame, verbatim (any `type`, known or not).
 *
 * @since 0.1.0
 * @category Steps
 */
export interface Event {
  readonly _tag: "Event"
  readonly event: Wire.JsonObject
}

/**
 * Writes raw text to the response body, verbatim (e.g. a malformed frame).
 *
 * @since 0.1.0
 * @category Steps
 */
export interface Frame {
  readonly _tag: "Frame"
  readonly raw: string
}

/**
 * Fails the run the way the API does: `RUN_ERROR` (twice by default: the service and the
 * controller each write one), then the response ends without `RUN_FINISHED`.
 *
 * @since 0.1.0
 * @category Steps
 */
export interface RunError {
  readonly _tag: "RunError"
  readonly message: string
  readonly code: string
  readonly category: "client_error" | "server_error"
  readonly isRetryable: boolean
  readonly status: number | undefined
  /** The message stored in the thread's `lastRunError` (the API stores the raw error's). */
  readonly storedMessage: string
  readonly twice: boolean
  /**
   * Store what was streamed of the assistant message before the error, as the API does: it writes
   * the message as the model streams it and keeps it when the run fails.
   */
  readonly keepPartial: boolean
}

/**
 * Answers the run request with this HTTP status and body instead of a stream. Must be the first
 * step of its round; the run is not started.
 *
 * @since 0.1.0
 * @category Steps
 */
export interface HttpError {
  readonly _tag: "HttpError"
  readonly status: number
  readonly body: unknown
  readonly headers: { readonly [name: string]: string }
}

/**
 * Waits before the next event (what was buffered is flushed first).
 *
 * @since 0.1.0
 * @category Steps
 */
export interface Delay {
  readonly _tag: "Delay"
  readonly millis: number
}

/**
 * From here on, waits `millis` before every event of the run.
 *
 * @since 0.1.0
 * @category Steps
 */
export interface Pace {
  readonly _tag: "Pace"
  readonly millis: number
}

/**
 * Destroys the connection: at this point (`afterEvents` undefined), or once `afterEvents` events
 * of the run (`RUN_STARTED` included) have been written. A dropped connection cancels the run,
 * as any closed connection does.
 *
 * @since 0.1.0
 * @category Steps
 */
export interface Drop {
  readonly _tag: "Drop"
  readonly afterEvents: number | undefined
}

/**
 * Stops here and keeps the connection open until the run is cancelled, the client goes away or
 * the server closes.
 *
 * @since 0.1.0
 * @category Steps
 */
export interface Hang {
  readonly _tag: "Hang"
}

/**
 * Sends what was buffered, then waits until `until` settles before the next event, or stops there
 * as {@link Hang} does when the run is cancelled, the client goes away or the server closes: a
 * test orders what the client saw before the run goes on, instead of waiting a number of
 * milliseconds.
 *
 * @since 0.2.0
 * @category Steps
 */
export interface Hold {
  readonly _tag: "Hold"
  readonly until: PromiseLike<unknown>
}

/**
 * The round ends as it would, but its run keeps the thread's lock until `until` settles (see
 * {@link keepLock}).
 *
 * @since 0.2.0
 * @category Steps
 */
export interface KeepLock {
  readonly _tag: "KeepLock"
  readonly until: PromiseLike<unknown>
}

/**
 * Ends the response here without a terminal event; the run completes server-side.
 *
 * @since 0.1.0
 * @category Steps
 */
export interface CloseStream {
  readonly _tag: "CloseStream"
}

/**
 * Ends the round: the run finishes (with `tambo.run.awaiting_input` if it made client tool calls)
 * and the steps that follow play when the client continues the thread with tool results. A client
 * tool call ends its round by itself; this step is for a delay before `RUN_FINISHED`, or for a
 * boundary after tool calls that do not pause.
 *
 * @since 0.1.0
 * @category Steps
 */
export interface AwaitToolResults {
  readonly _tag: "AwaitToolResults"
  /**
   * Time between `tambo.run.awaiting_input` and `RUN_FINISHED`, during which the run is still
   * active (the API completes the run in a database transaction there). A client that closes the
   * connection in that window gets the run cancelled.
   */
  readonly finishDelayMillis: number
}

/**
 * One step of a {@link Script}.
 *
 * @since 0.1.0
 * @category Steps
 */
export type Step =
  | Text
  | Reasoning
  | ToolCall
  | Component
  | Event
  | Frame
  | RunError
  | HttpError
  | Delay
  | Pace
  | Drop
  | Hang
  | Hold
  | KeepLock
  | CloseStream
  | AwaitToolResults

/**
 * A scripted reply: steps, split into rounds by client tool calls and `awaitToolResults()`.
 *
 * @since 0.1.0
 * @category Models
 */
export type Script = ReadonlyArray<Step>

/**
 * A script computed per run request (every continuation included). One that returns a promise
 * gets the response's headers and `RUN_STARTED` sent before it resolved, as the API sends them
 * before the model works (see {@link beforeResponse} to hold them).
 *
 * @since 0.1.0
 * @category Models
 */
export type ScriptFn = (request: RunRequest, context: ScriptContext) => Script | PromiseLike<Script>

/**
 * What `setScript` accepts.
 *
 * @since 0.1.0
 * @category Models
 */
export type ScriptSource = Script | ScriptFn

const beforeResponseKey: unique symbol = Symbol.for("@tambo-effect/testing/Script/beforeResponse")

/**
 * A script function whose answer the run's response waits for (see {@link beforeResponse}).
 *
 * @since 0.2.0
 * @category Models
 */
export interface BeforeResponse extends ScriptFn {
  readonly [beforeResponseKey]: true
}

/**
 * A script function the run's response waits for: its headers and `RUN_STARTED` are sent once
 * the script resolved, so a script that resolves to `httpError(...)` after a while still answers
 * with that HTTP status, and a new thread is not named (`X-Thread-Id`) before it. Without it, as
 * the API sends its headers and `RUN_STARTED` before the model works, a script function that
 * returns a promise gets them sent at once, and an `httpError(...)` it resolves to once they are
 * sent fails the run with the API's `INTERNAL_ERROR` instead. A script that answers at once (an
 * array, or a function returning one) decides the status itself, either way.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const beforeResponse = (script: ScriptFn): BeforeResponse =>
  Object.assign((request: RunRequest, context: ScriptContext) => script(request, context), {
    [beforeResponseKey]: true as const
  })

/**
 * Whether the run's response waits for this script (see {@link beforeResponse}).
 *
 * @since 0.2.0
 * @category Guards
 */
export const isBeforeResponse = (script: ScriptSource): script is BeforeResponse =>
  typeof script === "function" && Reflect.get(script, beforeResponseKey) === true

const beforeUserMessageKey: unique symbol = Symbol.for("@tambo-effect/testing/Script/beforeUserMessage")

/**
 * A script function the storing of the run's user message waits for (see {@link beforeUserMessage}).
 *
 * @since 0.2.0
 * @category Models
 */
export interface BeforeUserMessage extends ScriptFn {
  readonly [beforeUserMessageKey]: true
}

/**
 * A script function the run's user message is stored after, as the API stores it: it takes the
 * run lock, sends the headers and `RUN_STARTED` and shows the thread streaming, and only then
 * stores the message, as the model starts. While the function works a read of the thread shows
 * the run on it (`runStatus` not idle) and the messages of before it: the last one is the reply of
 * the run before. A run cancelled meanwhile stores no user message. Without it the message is
 * stored with the run lock.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const beforeUserMessage = (script: ScriptFn): BeforeUserMessage =>
  Object.assign((request: RunRequest, context: ScriptContext) => script(request, context), {
    [beforeUserMessageKey]: true as const
  })

/**
 * Whether the run's user message is stored once this script answered (see {@link beforeUserMessage}).
 *
 * @since 0.2.0
 * @category Guards
 */
export const isBeforeUserMessage = (script: ScriptSource): script is BeforeUserMessage =>
  typeof script === "function" && Reflect.get(script, beforeUserMessageKey) === true

// -----------------------------------------------------------------------------
// Constructors
// -----------------------------------------------------------------------------

const toDeltas = (deltas: string | ReadonlyArray<string>): ReadonlyArray<string> =>
  typeof deltas === "string" ? [deltas] : deltas

/**
 * Splits `text` into pieces of `size` characters: `text(chunks(longText, 5))` streams it in
 * 5-character deltas.
 *
 * @since 0.1.0
 * @category Helpers
 */
export const chunks = (text: string, size: number): Array<string> => {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`chunk size must be a positive integer, got ${size}`)
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

/**
 * Text deltas into the round's assistant message. A string is one delta.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const text = (deltas: string | ReadonlyArray<string>, options?: { readonly close?: boolean }): Text => ({
  _tag: "Text",
  deltas: toDeltas(deltas),
  close: options?.close ?? false
})

/**
 * Reasoning deltas. A string is one delta.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const reasoning = (deltas: string | ReadonlyArray<string>): Reasoning => ({
  _tag: "Reasoning",
  deltas: toDeltas(deltas)
})

/**
 * Options of {@link toolCall}.
 *
 * @since 0.1.0
 * @category Constructors
 */
export interface ToolCallOptions {
  /** The tool call id (default: a fresh `call_...`). */
  readonly id?: string
  /** Stream the JSON arguments in deltas of this many characters (default: one delta). */
  readonly chunkSize?: number
  /** Force (`true`) or prevent (`false`) the run from waiting for this call's result. */
  readonly pending?: boolean
}

/**
 * A tool call. `args` is serialized with `JSON.stringify`; a string is sent as is (so it can be
 * invalid JSON).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const toolCall = (name: string, args: unknown = {}, options?: ToolCallOptions): ToolCall => {
  const json = typeof args === "string" ? args : JSON.stringify(args)
  return {
    _tag: "ToolCall",
    name,
    id: options?.id,
    argumentDeltas: options?.chunkSize === undefined ? [json] : chunks(json, options.chunkSize),
    pending: options?.pending
  }
}

/**
 * The arguments a model in the API's strict mode sends: the API makes every property of every
 * object in a tool's schema required (and the optional ones nullable), so the model sends `null`
 * for each optional property it leaves out. Given the tool's `inputSchema` (as the run request
 * declares it, see {@link RunRequest.tools}) and the arguments meant, fills in those `null`s,
 * through nested objects and arrays of objects.
 *
 * @example
 * ```ts
 * const script: Script.ScriptFn = (request) => {
 *   const tool = request.tools.find((t) => t.name === "search")!
 *   return [Script.toolCall("search", Script.strictArgs(tool.inputSchema, { query: "tambo" }))]
 * }
 * // with an optional `limit`: the call's arguments are {"query":"tambo","limit":null}
 * ```
 *
 * @since 0.2.0
 * @category Constructors
 */
export const strictArgs = (inputSchema: unknown, args: unknown): unknown => strictValue(inputSchema, args, 0)

/**
 * Turns successive snapshots of a component's props into the deltas the API streams: a new
 * top-level key is `add`ed, and every later change of a key `replace`s its whole value (a key that
 * disappears is `remove`d). Each snapshot that changes something yields one delta; its
 * `streamingStatus` marks a prop `started` when it appears, `streaming` while it changes and
 * `done` once a later prop has appeared.
 *
 * @example
 * ```ts
 * propsDeltas([{ city: "Par" }, { city: "Paris" }, { city: "Paris", temp: 21 }])
 * // [{ operations: [{ op: "add", path: "/city", value: "Par" }], ... },
 * //  { operations: [{ op: "replace", path: "/city", value: "Paris" }], ... },
 * //  { operations: [{ op: "add", path: "/temp", value: 21 }], ... }]
 * ```
 *
 * @since 0.1.0
 * @category Helpers
 */
export const propsDeltas = (snapshots: ReadonlyArray<Wire.JsonObject>): Array<PropsDelta> => diffProps(snapshots)

/**
 * Options of {@link component}.
 *
 * @since 0.1.0
 * @category Constructors
 */
export interface ComponentOptions {
  /** The component id (default: a fresh id shaped like the API's). */
  readonly id?: string
  /** Initial state stored with the component. */
  readonly state?: Wire.JsonObject
  /**
   * Send these JSON Patch batches (one `props_delta` each) instead of deriving them from the
   * snapshots; the last snapshot is then only the final props.
   */
  readonly operations?: ReadonlyArray<ReadonlyArray<Wire.JsonPatchOperation>>
}

/**
 * A component whose props stream as the successive `snapshots` (see {@link propsDeltas}); the
 * last snapshot is the final props. A single object streams in one delta.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const component = (
  name: string,
  snapshots: Wire.JsonObject | ReadonlyArray<Wire.JsonObject>,
  options?: ComponentOptions
): Component => {
  const list: ReadonlyArray<Wire.JsonObject> = isSnapshotList(snapshots) ? snapshots : [snapshots]
  const finalProps = list.length === 0 ? {} : list[list.length - 1]!
  const deltas: ReadonlyArray<PropsDelta> = options?.operations === undefined
    ? diffProps(list)
    : options.operations.map((operations) => ({ operations, streamingStatus: {} }))
  return { _tag: "Component", name, id: options?.id, deltas, finalProps, state: options?.state }
}

const isSnapshotList = (
  value: Wire.JsonObject | ReadonlyArray<Wire.JsonObject>
): value is ReadonlyArray<Wire.JsonObject> => Array.isArray(value)

/**
 * A raw event, sent as one `data: <json>` frame. Use it for event types the server does not
 * generate (or that nobody knows yet).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const event = (value: Wire.JsonObject): Event => ({ _tag: "Event", event: value })

/**
 * Raw text written to the stream as is: `frame("data: {not json\n\n")`.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const frame = (raw: string): Frame => ({ _tag: "Frame", raw })

/**
 * Options of {@link runError}; the defaults are what the API sends when the model provider
 * fails after the server's own retries.
 *
 * @since 0.1.0
 * @category Constructors
 */
export interface RunErrorOptions {
  /** Default `"An internal error occurred"`. */
  readonly message?: string
  /** Default `"INTERNAL_ERROR"`. */
  readonly code?: string
  /** Default `"server_error"`. */
  readonly category?: "client_error" | "server_error"
  /** Default `false`. */
  readonly isRetryable?: boolean
  /** Default `500`; `null` omits it (the API omits it for provider errors without a status). */
  readonly status?: number | null
  /** Stored in the thread's `lastRunError.message` (default: `message`). */
  readonly storedMessage?: string
  /** Default `true`: the API writes `RUN_ERROR` twice. */
  readonly twice?: boolean
  /**
   * Default `true`: what streamed of the assistant message stays stored (not cancelled), as the
   * API keeps it; `false` stores nothing of it.
   */
  readonly keepPartial?: boolean
}

/**
 * Fails the run with `RUN_ERROR` (see {@link RunError}).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const runError = (options?: RunErrorOptions): RunError => {
  const message = options?.message ?? "An internal error occurred"
  const status = options?.status === undefined ? 500 : options.status === null ? undefined : options.status
  return {
    _tag: "RunError",
    message,
    code: options?.code ?? "INTERNAL_ERROR",
    category: options?.category ?? "server_error",
    isRetryable: options?.isRetryable ?? false,
    status,
    storedMessage: options?.storedMessage ?? message,
    twice: options?.twice ?? true,
    keepPartial: options?.keepPartial ?? true
  }
}

/**
 * Answers the run request with an HTTP error instead of a stream. The body defaults to NestJS's
 * for the status (`{ statusCode: 500, message: "Internal server error" }` for 500).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const httpError = (
  status: number,
  body?: unknown,
  headers?: { readonly [name: string]: string }
): HttpError => ({
  _tag: "HttpError",
  status,
  body: body === undefined ? defaultErrorBody(status) : body,
  headers: headers ?? {}
})

const defaultErrorBody = (status: number): unknown =>
  status === 500 ? { statusCode: 500, message: "Internal server error" } : { statusCode: status, message: `HTTP ${status}` }

/**
 * Waits `millis` before the next event.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const delay = (millis: number): Delay => ({ _tag: "Delay", millis })

/**
 * Waits `millis` before every following event of the run.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const pace = (millis: number): Pace => ({ _tag: "Pace", millis })

/**
 * Destroys the connection now.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const drop = (): Drop => ({ _tag: "Drop", afterEvents: undefined })

/**
 * Destroys the connection once `events` events of the run have been written (`RUN_STARTED`
 * counts as the first).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const dropAfter = (events: number): Drop => ({ _tag: "Drop", afterEvents: events })

/**
 * Sends what was buffered and waits until `until` settles (fulfilled or rejected) before the next
 * step: the run goes on when the test says so, e.g. once the client showed what came before.
 *
 * @example
 * ```ts
 * import { Script } from "@tambo-effect/testing"
 *
 * let goOn!: () => void
 * const shown = new Promise<void>((resolve) => (goOn = resolve))
 * server.setScript([Script.text("Hello"), Script.hold(shown), Script.text(", world")])
 * // ... once the client showed "Hello": goOn()
 * ```
 *
 * @since 0.2.0
 * @category Constructors
 */
export const hold = (until: PromiseLike<unknown>): Hold => ({ _tag: "Hold", until })

/**
 * Keeps the run's lock on its thread after the round's last event until `until` settles (fulfilled
 * or rejected), as the API may let go of a step's lock a moment after the client saw the step end.
 * The round ends as it would: its events, `RUN_FINISHED`, and what the thread records (its last
 * completed run, the calls it waits on) come as without this step; only the lock stays. Meanwhile
 * the thread's `runStatus` and `currentRunId` still name the run, and a run on the thread (the
 * tool results of a paused round included) is refused `409 CONCURRENT_RUN`. Anywhere in the round;
 * right after a client tool call it stays in that call's round.
 *
 * @example
 * ```ts
 * import { Script } from "@tambo-effect/testing"
 *
 * let letGo!: () => void
 * const released = new Promise<void>((resolve) => (letGo = resolve))
 * server.setScript((request) =>
 *   request.toolResults.length === 0
 *     ? [Script.toolCall("get_weather", { city: "Paris" }), Script.keepLock(released)]
 *     : [Script.text("Sunny.")]
 * )
 * // The results sent now meet a 409; after letGo() the thread takes them.
 * ```
 *
 * @since 0.2.0
 * @category Constructors
 */
export const keepLock = (until: PromiseLike<unknown>): KeepLock => ({ _tag: "KeepLock", until })

/**
 * Keeps the run open without sending anything more, until cancelled.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const hang = (): Hang => ({ _tag: "Hang" })

/**
 * Ends the response here without a terminal event.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const closeStream = (): CloseStream => ({ _tag: "CloseStream" })

/**
 * Ends the round; the next steps play on the continuation (see {@link AwaitToolResults}).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const awaitToolResults = (options?: { readonly finishDelayMillis?: number }): AwaitToolResults => ({
  _tag: "AwaitToolResults",
  finishDelayMillis: options?.finishDelayMillis ?? 0
})

/**
 * The default script: a small assistant with a client-side `get_weather` tool and a
 * `WeatherCard` component. It calls `get_weather` (arguments `{ city }`, or the first string
 * property of the tool's input schema) when the message mentions the weather and the request
 * declares the tool; on the continuation it answers with text and, if `WeatherCard` is available,
 * streams the card with the tool's result. Anything else gets a short text reply.
 *
 * @since 0.1.0
 * @category Scripts
 */
export const weatherAssistant: ScriptFn = weatherAssistantImpl
