/**
 * The errors the facade throws and rejects with: core's own error classes
 * (an `ApiError` caught from `client.run` is `@tambo-effect/core`'s
 * `ApiError`, with its `_tag`, `reason`, `status`, ...), and two of the
 * facade's own: {@link AbortError} for any cancellation and
 * {@link UnknownError} for a defect. All are `Error`s whose `name` is their
 * `_tag`, and whose `stack` points at the call that failed.
 *
 * Cancellation of any kind (`abort()`, an aborted `signal`, `cancelRun`,
 * leaving a `for await` loop, `destroy()`, a cancel from the server) is an
 * {@link AbortError}: `name` and `_tag` are both `"AbortError"`; a
 * cancellation core reported is its `cause` (a `RunCancelledError`).
 *
 * @since 0.1.0
 */
import { isTamboError, type TamboError } from "@tambo-effect/core/TamboError"
import * as Schema from "effect/Schema"

export {
  /**
   * A failure of AG-UI's own, against an AG-UI agent (`agent` option): a
   * conversation, context or state that cannot be sent as a `RunAgentInput`
   * (`InvalidInput`: the run rejects before anything is sent), a refused
   * `STATE_DELTA` (`InvalidStateDelta`), a `MESSAGES_SNAPSHOT` that is not
   * AG-UI messages (`InvalidMessages`). Its `message` says what, and why.
   *
   * @since 0.2.0
   * @category Errors
   */
  AgUiError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  ApiError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  AuthError,
  /**
   * A `beforeRun` or context helper threw, rejected or failed: that run
   * rejects with it before anything is sent; the thread stays usable.
   *
   * @since 0.1.0
   * @category Errors
   */
  CallbackError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  ConfigError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  DecodeError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  MaxStepsExceededError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  McpError,
  /**
   * Never thrown by the facade: a cancellation is an `AbortError`, with this
   * as its `cause` when core reported it.
   *
   * @since 0.2.0
   * @category Errors
   */
  RunCancelledError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  RunConflictError,
  /**
   * Never thrown by the facade: a failed tool call goes back to the model as
   * an error result.
   *
   * @since 0.2.0
   * @category Errors
   */
  ToolCallError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  ToolDefinitionError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  ToolError,
  /**
   * @since 0.2.0
   * @category Errors
   */
  TranscriptionError,
  /**
   * @since 0.1.0
   * @category Errors
   */
  TransportError
} from "@tambo-effect/core/TamboError"

/**
 * Why a run was cancelled: `"Aborted"` (`stream.abort()`), `"SignalAborted"`
 * (the run's `signal`), `"IteratorClosed"` (the consumer left a `for await`
 * loop, or called the iterator's `return`), `"CancelledByClient"`
 * (`client.cancelRun(...)`), `"CancelledByServer"` (`RUN_ERROR` with code
 * `CANCELLED`), `"ClientDestroyed"` (`client.destroy()`, or a call on a
 * destroyed client).
 *
 * @since 0.1.0
 * @category Models
 */
export type AbortReason =
  | "Aborted"
  | "SignalAborted"
  | "IteratorClosed"
  | "CancelledByClient"
  | "CancelledByServer"
  | "ClientDestroyed"

/**
 * The run (or call) was cancelled. The thread is marked cancelled
 * (`lastRunCancelled`), not errored. `name` is `"AbortError"`, as for a
 * `fetch` that was aborted.
 *
 * @since 0.1.0
 * @category Errors
 */
export class AbortError extends Schema.TaggedError<AbortError>("@tambo-effect/client/AbortError")("AbortError", {
  reason: Schema.Literal(
    "Aborted",
    "SignalAborted",
    "IteratorClosed",
    "CancelledByClient",
    "CancelledByServer",
    "ClientDestroyed"
  ),
  message: Schema.String,
  threadId: Schema.optional(Schema.String),
  /** The signal's reason, or core's `RunCancelledError`. */
  cause: Schema.optional(Schema.Defect)
}) {}

/**
 * A failure the SDK did not expect (a defect): a bug, or a callback that
 * threw where it must not. `cause` is what was thrown.
 *
 * @since 0.1.0
 * @category Errors
 */
export class UnknownError extends Schema.TaggedError<UnknownError>("@tambo-effect/client/UnknownError")(
  "UnknownError",
  {
    reason: Schema.Literal("Defect"),
    message: Schema.String,
    cause: Schema.optional(Schema.Defect)
  }
) {}

/**
 * What was asked is not offered. `reason`:
 *
 * - `"NotOfferedByAgent"`: the client talks to an AG-UI agent
 *   (`new TamboClient({ agent })`), which has no API besides its runs, so
 *   the Tambo API's threads on the server, suggestions, thread names,
 *   component state, MCP tokens, transcription and user tokens are not
 *   there; `cause` is core's `ApiError` (code `NOT_SUPPORTED_BY_AG_UI_AGENT`)
 *   when core refused it.
 * - `"UnsupportedOption"`: an argument upstream's API takes that this
 *   package does not (`MCPClient.create`'s `authProvider` or `sessionId`);
 *   the message says what to use instead.
 *
 * `method` names the method.
 *
 * @since 0.2.0
 * @category Errors
 */
export class NotSupportedError extends Schema.TaggedError<NotSupportedError>("@tambo-effect/client/NotSupportedError")(
  "NotSupportedError",
  {
    reason: Schema.Literal("NotOfferedByAgent", "UnsupportedOption"),
    message: Schema.String,
    method: Schema.optional(Schema.String),
    cause: Schema.optional(Schema.Defect)
  }
) {}

/**
 * Every error the facade throws or rejects with.
 *
 * @since 0.1.0
 * @category Models
 */
export type TamboClientError = TamboError | AbortError | UnknownError | NotSupportedError

/**
 * The `_tag` of every facade error.
 *
 * @since 0.1.0
 * @category Models
 */
export type ErrorTag = TamboClientError["_tag"]

/**
 * @since 0.1.0
 * @category Guards
 */
export const isTamboClientError = (u: unknown): u is TamboClientError =>
  isTamboError(u) || u instanceof AbortError || u instanceof UnknownError || u instanceof NotSupportedError

/**
 * @since 0.1.0
 * @category Guards
 */
export const isAbortError = (u: unknown): u is AbortError => u instanceof AbortError

/**
 * @since 0.2.0
 * @category Guards
 */
export const isNotSupportedError = (u: unknown): u is NotSupportedError => u instanceof NotSupportedError
