/**
 * The errors a caller of the SDK can act on. Each is a `Schema.TaggedError`
 * with a `reason` literal; `TamboError` is their union.
 *
 * @since 0.1.0
 */
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/**
 * Identifies every error of this module.
 *
 * @since 0.1.0
 * @category Type IDs
 */
export const TypeId: unique symbol = Symbol.for("@tambo-effect/core/TamboError")

/**
 * @since 0.1.0
 * @category Type IDs
 */
export type TypeId = typeof TypeId

/**
 * Invalid SDK configuration: both `tamboUrl` and `environment`, both
 * `userKey` and `userToken`, a missing API key, an unparsable URL, a timeout
 * or limit that is not positive (`InvalidOption`). Also an invalid argument
 * (`InvalidOption`): an empty thread id, or a run's own message,
 * `additionalContext` or `initialMessages` that cannot be sent as JSON (a
 * BigInt, a cycle, a throwing `toJSON`); such a run fails before anything is
 * recorded or sent.
 *
 * @since 0.1.0
 * @category Errors
 */
export class ConfigError extends Schema.TaggedError<ConfigError>("@tambo-effect/core/ConfigError")(
  "ConfigError",
  {
    reason: Schema.Literal("MissingApiKey", "ConflictingUrl", "ConflictingIdentity", "InvalidUrl", "InvalidOption"),
    message: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * The Tambo API answered with an HTTP error status (4xx / 5xx), or a run
 * ended with `RUN_ERROR`.
 *
 * `reason` classifies it; `status`, `code` and `retryable` carry what the
 * API said, and `retryAfter` its `Retry-After` in milliseconds (seconds or
 * an HTTP-date on the wire) when it sent one.
 *
 * @since 0.1.0
 * @category Errors
 */
export class ApiError extends Schema.TaggedError<ApiError>("@tambo-effect/core/ApiError")("ApiError", {
  reason: Schema.Literal(
    "BadRequest",
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "RateLimited",
    "ServerError",
    "RunError",
    "Unknown"
  ),
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  code: Schema.optional(Schema.String),
  category: Schema.optional(Schema.Literal("client_error", "server_error")),
  retryable: Schema.Boolean,
  method: Schema.optional(Schema.String),
  url: Schema.optional(Schema.String),
  body: Schema.optional(Schema.Unknown),
  /** How long the server asked to wait before a retry (its `Retry-After`), in milliseconds. */
  retryAfter: Schema.optional(Schema.Number)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** The AG-UI name of `retryable`. @since 0.2.0 */
  get isRetryable(): boolean {
    return this.retryable
  }
}

/**
 * The connection failed: refused, reset, dropped mid-stream, or timed out
 * (`Timeout`: the message names which timeout and its value). Or the server
 * redirected the request where it is not followed (`Redirect`: another
 * origin, 301/302/303 on a request with a body, too many hops), with the
 * redirect's `status` and `location` (no query string).
 *
 * `mayHaveReachedServer` is `true` when a run's request failed after it went
 * out with no answer (its connection reset or closed, or its first byte did
 * not come in time): the server may have stored its message and started its
 * run, and the API takes no idempotency key. Such an error is not
 * `retryable`: sending the same message again may add it to the thread twice.
 * Read the thread to see whether the server took it.
 *
 * @since 0.1.0
 * @category Errors
 */
export class TransportError extends Schema.TaggedError<TransportError>("@tambo-effect/core/TransportError")(
  "TransportError",
  {
    reason: Schema.Literal("Connect", "Disconnected", "Timeout", "Protocol", "Redirect"),
    message: Schema.String,
    method: Schema.optional(Schema.String),
    url: Schema.optional(Schema.String),
    /** The redirect's status (`Redirect`). */
    status: Schema.optional(Schema.Number),
    /** Where the redirect pointed, without user info, query or fragment (`Redirect`). */
    location: Schema.optional(Schema.String),
    /** The request may have reached the server, which may have taken it (see above). @since 0.2.0 */
    mayHaveReachedServer: Schema.optional(Schema.Boolean),
    cause: Schema.optional(Schema.Defect)
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /**
   * A failed connection may succeed on retry; a refused redirect will not, and a request that may
   * have reached the server (`mayHaveReachedServer`) is not to be sent again blindly.
   *
   * @since 0.1.0
   */
  get retryable(): boolean {
    return this.reason !== "Protocol" && this.reason !== "Redirect" && this.mayHaveReachedServer !== true
  }
}

/**
 * A frame of the run's event stream could not be decoded: not JSON, or an
 * event that does not match its schema (`frame` holds the raw data), or an
 * event larger than `maxFrameBytes` (`FrameTooLarge`: the message shows only
 * its first characters, and no `frame`).
 *
 * @since 0.1.0
 * @category Errors
 */
export class DecodeError extends Schema.TaggedError<DecodeError>("@tambo-effect/core/DecodeError")("DecodeError", {
  reason: Schema.Literal("InvalidJson", "InvalidEvent", "InvalidResponse", "FrameTooLarge"),
  message: Schema.String,
  frame: Schema.optional(Schema.String)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * A run is already active on the thread: either in this client, or on the
 * server (HTTP 409).
 *
 * @since 0.1.0
 * @category Errors
 */
export class RunConflictError extends Schema.TaggedError<RunConflictError>("@tambo-effect/core/RunConflictError")(
  "RunConflictError",
  {
    reason: Schema.Literal("ActiveInClient", "ActiveOnServer"),
    message: Schema.String,
    threadId: Schema.optional(Schema.String),
    status: Schema.optional(Schema.Number)
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * The run was cancelled: by `cancelRun`, or by the server (`RUN_ERROR` with
 * code `CANCELLED`). The thread is marked cancelled, not errored.
 *
 * @since 0.1.0
 * @category Errors
 */
export class RunCancelledError extends Schema.TaggedError<RunCancelledError>("@tambo-effect/core/RunCancelledError")(
  "RunCancelledError",
  {
    reason: Schema.Literal("CancelledByClient", "CancelledByServer"),
    message: Schema.String,
    threadId: Schema.optional(Schema.String),
    runId: Schema.optional(Schema.String)
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * The run asked for more tool rounds than `maxSteps` allows. The thread's
 * state up to that point is kept.
 *
 * @since 0.1.0
 * @category Errors
 */
export class MaxStepsExceededError extends Schema.TaggedError<MaxStepsExceededError>(
  "@tambo-effect/core/MaxStepsExceededError"
)("MaxStepsExceededError", {
  reason: Schema.Literal("MaxSteps"),
  message: Schema.String,
  maxSteps: Schema.Number,
  threadId: Schema.String,
  runId: Schema.optional(Schema.String)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * Authentication failed: a token exchange was refused, credentials are
 * invalid (both `userKey` and `userToken`), or none were given.
 *
 * `status` is the token endpoint's HTTP status, and `retryAfter` its
 * `Retry-After` in milliseconds when it sent one (a 429 or 503).
 *
 * @since 0.1.0
 * @category Errors
 */
export class AuthError extends Schema.TaggedError<AuthError>("@tambo-effect/core/AuthError")("AuthError", {
  reason: Schema.Literal("ExchangeFailed", "InvalidCredentials", "Unauthenticated", "Expired"),
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  /**
   * How long the token endpoint asked to wait before asking again (its
   * `Retry-After`), in milliseconds.
   *
   * @since 0.2.0
   */
  retryAfter: Schema.optional(Schema.Number)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * A tool call could not be answered: unknown call id, a result for a call
 * already answered, a result that fails the tool's output schema, no
 * approval pending for the call (`NotPending`), or an approval by an id that
 * waits in several threads without saying which (`Ambiguous`: providers reuse
 * call ids, so pass the `threadId`).
 *
 * @since 0.1.0
 * @category Errors
 */
export class ToolError extends Schema.TaggedError<ToolError>("@tambo-effect/core/ToolError")("ToolError", {
  reason: Schema.Literal("UnknownToolCall", "AlreadyAnswered", "InvalidResult", "NotPending", "Ambiguous"),
  message: Schema.String,
  toolCallId: Schema.optional(Schema.String),
  threadId: Schema.optional(Schema.String)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * An MCP server could not be reached or failed during a session.
 *
 * @since 0.1.0
 * @category Errors
 */
export class McpError extends Schema.TaggedError<McpError>("@tambo-effect/core/McpError")("McpError", {
  reason: Schema.Literal("Connect", "Disconnected", "CallFailed", "NotConnected"),
  message: Schema.String,
  serverKey: Schema.optional(Schema.String)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * A function the app gave the SDK threw, rejected or failed: the client-wide
 * or per-run `beforeRun` (`BeforeRun`), or a context helper
 * (`ContextHelper`, named in `helper`), or the function or Effect that gives
 * an AG-UI agent's headers (`Headers`; also headers that are not an object
 * of strings). The run it was called for fails before anything is sent; the
 * thread stays as it was.
 *
 * (A failing approval handler does not fail the run: the call is denied and
 * the model is told why.)
 *
 * @since 0.1.0
 * @category Errors
 */
export class CallbackError extends Schema.TaggedError<CallbackError>("@tambo-effect/core/CallbackError")(
  "CallbackError",
  {
    reason: Schema.Literal("BeforeRun", "ContextHelper", "ApprovalHandler", "Headers"),
    message: Schema.String,
    /** The context helper's name. */
    helper: Schema.optional(Schema.String),
    /** What the function threw, rejected with, or failed with. */
    cause: Schema.optional(Schema.Defect)
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * A tool or component could not be registered: an invalid name or
 * definition, a schema that is none of the supported kinds, or one that
 * cannot be converted to the JSON Schema the API needs. Also exported as
 * `Tool.ToolDefinitionError`.
 *
 * @since 0.1.0
 * @category Errors
 */
export class ToolDefinitionError extends Schema.TaggedError<ToolDefinitionError>(
  "@tambo-effect/core/ToolDefinitionError"
)("ToolDefinitionError", {
  reason: Schema.Literal("InvalidName", "InvalidDefinition", "UnsupportedSchema", "UnconvertibleSchema"),
  message: Schema.String,
  /** The name of the tool or component, when it has a usable one. */
  definitionName: Schema.optional(Schema.String),
  cause: Schema.optional(Schema.Defect)
}) {
  /** @since 0.2.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * One tool call failed. The executor never fails with it: it becomes the
 * error `tool_result` whose text is `message`. Also exported as
 * `Tool.ToolCallError`.
 *
 * @since 0.1.0
 * @category Errors
 */
export class ToolCallError extends Schema.TaggedError<ToolCallError>("@tambo-effect/core/ToolCallError")(
  "ToolCallError",
  {
    reason: Schema.Literal(
      "UnknownTool",
      "InvalidJson",
      "InvalidArguments",
      "Threw",
      "Rejected",
      "Failed",
      "Defect",
      "Timeout",
      "InvalidResult",
      "Denied",
      "MaxCallsExceeded"
    ),
    message: Schema.String,
    toolName: Schema.optional(Schema.String),
    toolCallId: Schema.optional(Schema.String),
    cause: Schema.optional(Schema.Defect)
  }
) {
  /** @since 0.2.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * Audio the SDK will not send for transcription (`EmptyAudio`, `TooLarge`
 * over the API's 25 MB, `UnsupportedType`: not one of the formats the API
 * transcribes), or a transcription that came back empty
 * (`EmptyTranscript`).
 *
 * @since 0.2.0
 * @category Errors
 */
export class TranscriptionError extends Schema.TaggedError<TranscriptionError>("@tambo-effect/core/TranscriptionError")(
  "TranscriptionError",
  {
    reason: Schema.Literal("EmptyAudio", "TooLarge", "UnsupportedType", "EmptyTranscript"),
    message: Schema.String
  }
) {
  /** @since 0.2.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * A failure of AG-UI's own (a Tambo run against an AG-UI agent, `AgUi`):
 *
 * - `InvalidInput`: the conversation, tools, context or state cannot be sent
 *   as a `RunAgentInput` (a value JSON cannot carry, two tools of one name, a
 *   tool result for a call the conversation does not have). The run fails
 *   before anything is sent.
 * - `InvalidStateDelta`: a `STATE_DELTA` that is not a JSON Patch, names a
 *   prototype key (`__proto__`, `constructor`, `prototype`), or fails to
 *   apply; `operationIndex` says which operation. The state stays as it was.
 * - `InvalidMessages`: a `MESSAGES_SNAPSHOT` whose messages are not AG-UI
 *   messages.
 *
 * @since 0.2.0
 * @category Errors
 */
export class AgUiError extends Schema.TaggedError<AgUiError>("@tambo-effect/core/AgUiError")("AgUiError", {
  reason: Schema.Literal("InvalidInput", "InvalidStateDelta", "InvalidMessages"),
  message: Schema.String,
  /** The failing operation of a `STATE_DELTA` (`InvalidStateDelta`). */
  operationIndex: Schema.optional(Schema.Number)
}) {
  /** @since 0.2.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * Every error the SDK puts in the error channel.
 *
 * @since 0.1.0
 * @category Models
 */
export type TamboError =
  | ConfigError
  | ApiError
  | TransportError
  | DecodeError
  | RunConflictError
  | RunCancelledError
  | MaxStepsExceededError
  | AuthError
  | ToolError
  | McpError
  | CallbackError
  | ToolDefinitionError
  | ToolCallError
  | TranscriptionError
  | AgUiError

/**
 * @since 0.1.0
 * @category Guards
 */
export const isTamboError = (u: unknown): u is TamboError => Predicate.hasProperty(u, TypeId)

/**
 * Whether retrying the failed operation may succeed and does no harm: not a
 * `TransportError` whose request may have reached the server
 * (`mayHaveReachedServer`), which sending again may duplicate.
 *
 * @since 0.1.0
 * @category Utils
 */
export const isRetryable = (error: TamboError): boolean => {
  switch (error._tag) {
    case "ApiError":
      return error.retryable
    case "TransportError":
      return error.retryable
    default:
      return false
  }
}
