/**
 * The errors the facade rejects with. Each is an `Error` subclass whose
 * `_tag` is the tag of the core error it stands for (`err._tag ===
 * "RunConflictError"`), with that error's `reason`, what is known of
 * `status`, `code` and `retryable`, and `cause` set to the core error.
 *
 * Cancellation of any kind (`abort()`, an aborted `signal`, `cancelRun`,
 * leaving a `for await` loop, `destroy()`, a cancel from the server) is an
 * {@link AbortError}: `name` and `_tag` are both `"AbortError"`.
 *
 * @since 0.1.0
 */

/**
 * The `_tag` of every facade error.
 *
 * @since 0.1.0
 * @category Models
 */
export type ErrorTag =
  | "ApiError"
  | "TransportError"
  | "DecodeError"
  | "RunConflictError"
  | "MaxStepsExceededError"
  | "AuthError"
  | "ToolError"
  | "McpError"
  | "ConfigError"
  | "CallbackError"
  | "ToolDefinitionError"
  | "AbortError"
  | "UnknownError"

/**
 * What every facade error carries besides its message.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ErrorDetails {
  readonly reason: string
  readonly retryable?: boolean | undefined
  readonly status?: number | undefined
  readonly code?: string | undefined
  readonly cause?: unknown
}

/**
 * The base class of every error the facade throws or rejects with.
 *
 * @since 0.1.0
 * @category Errors
 */
export abstract class TamboClientError extends Error {
  /** The tag of the core error this stands for. */
  readonly _tag: ErrorTag
  /** Why it failed, one of the core error's `reason` literals. */
  readonly reason: string
  /** Whether retrying the same call may succeed. */
  readonly retryable: boolean
  /** The HTTP status, when the failure came with one. */
  declare readonly status?: number
  /** The API's error code, when it sent one. */
  declare readonly code?: string

  protected constructor(tag: ErrorTag, message: string, details: ErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    this._tag = tag
    this.name = tag
    this.reason = details.reason
    this.retryable = details.retryable ?? false
    if (details.status !== undefined) this.status = details.status
    if (details.code !== undefined) this.code = details.code
  }
}

/**
 * The Tambo API answered with an HTTP error status, or a run ended with
 * `RUN_ERROR` (`reason: "RunError"`, with the event's `code`, `category`,
 * `status` and `isRetryable`).
 *
 * @since 0.1.0
 * @category Errors
 */
export class ApiError extends TamboClientError {
  declare readonly _tag: "ApiError"
  /** Whether the API blamed the request or itself. */
  declare readonly category?: "client_error" | "server_error"
  /** The request that failed, when it was a REST call. */
  declare readonly method?: string
  declare readonly url?: string
  /** The error body the API sent. */
  declare readonly body?: unknown

  /** @since 0.1.0 */
  constructor(
    message: string,
    details: ErrorDetails & {
      readonly category?: "client_error" | "server_error" | undefined
      readonly method?: string | undefined
      readonly url?: string | undefined
      readonly body?: unknown
    }
  ) {
    super("ApiError", message, details)
    if (details.category !== undefined) this.category = details.category
    if (details.method !== undefined) this.method = details.method
    if (details.url !== undefined) this.url = details.url
    if (details.body !== undefined) this.body = details.body
  }

  /** The AG-UI name of `retryable`. @since 0.1.0 */
  get isRetryable(): boolean {
    return this.retryable
  }
}

/**
 * The connection failed: refused, reset, dropped mid-stream, timed out.
 *
 * @since 0.1.0
 * @category Errors
 */
export class TransportError extends TamboClientError {
  declare readonly _tag: "TransportError"
  /** @since 0.1.0 */
  constructor(message: string, details: ErrorDetails) {
    super("TransportError", message, details)
  }
}

/**
 * A frame of the run's event stream, or a response, could not be decoded.
 *
 * @since 0.1.0
 * @category Errors
 */
export class DecodeError extends TamboClientError {
  declare readonly _tag: "DecodeError"
  /** The raw frame, when a stream frame failed. */
  declare readonly frame?: string
  /** @since 0.1.0 */
  constructor(message: string, details: ErrorDetails & { readonly frame?: string | undefined }) {
    super("DecodeError", message, details)
    if (details.frame !== undefined) this.frame = details.frame
  }
}

/**
 * A run is already active on the thread, in this client
 * (`reason: "ActiveInClient"`) or on the server (`"ActiveOnServer"`, 409).
 *
 * @since 0.1.0
 * @category Errors
 */
export class RunConflictError extends TamboClientError {
  declare readonly _tag: "RunConflictError"
  declare readonly threadId?: string
  /** @since 0.1.0 */
  constructor(message: string, details: ErrorDetails & { readonly threadId?: string | undefined }) {
    super("RunConflictError", message, details)
    if (details.threadId !== undefined) this.threadId = details.threadId
  }
}

/**
 * The run asked for more tool rounds than `maxSteps` allows.
 *
 * @since 0.1.0
 * @category Errors
 */
export class MaxStepsExceededError extends TamboClientError {
  declare readonly _tag: "MaxStepsExceededError"
  readonly maxSteps: number
  readonly threadId: string
  /** @since 0.1.0 */
  constructor(message: string, details: ErrorDetails & { readonly maxSteps: number; readonly threadId: string }) {
    super("MaxStepsExceededError", message, details)
    this.maxSteps = details.maxSteps
    this.threadId = details.threadId
  }
}

/**
 * Authentication failed: a refused token exchange, invalid or missing
 * credentials.
 *
 * @since 0.1.0
 * @category Errors
 */
export class AuthError extends TamboClientError {
  declare readonly _tag: "AuthError"
  /** @since 0.1.0 */
  constructor(message: string, details: ErrorDetails) {
    super("AuthError", message, details)
  }
}

/**
 * A tool result could not be sent: unknown call, already answered, invalid.
 *
 * @since 0.1.0
 * @category Errors
 */
export class ToolError extends TamboClientError {
  declare readonly _tag: "ToolError"
  /** @since 0.1.0 */
  constructor(message: string, details: ErrorDetails) {
    super("ToolError", message, details)
  }
}

/**
 * An MCP server could not be reached or failed.
 *
 * @since 0.1.0
 * @category Errors
 */
export class McpError extends TamboClientError {
  declare readonly _tag: "McpError"
  /** @since 0.1.0 */
  constructor(message: string, details: ErrorDetails) {
    super("McpError", message, details)
  }
}

/**
 * Invalid client options: both `tamboUrl` and `environment`, both `userKey`
 * and `userToken`, no API key, an unparsable URL. Thrown by the constructor.
 *
 * @since 0.1.0
 * @category Errors
 */
export class ConfigError extends TamboClientError {
  declare readonly _tag: "ConfigError"
  /** @since 0.1.0 */
  constructor(message: string, details: ErrorDetails) {
    super("ConfigError", message, details)
  }
}

/**
 * A function the app gave the client threw or rejected before a run was
 * sent: `beforeRun` (`reason: "BeforeRun"`) or a context helper
 * (`"ContextHelper"`, named in `helper`). That run rejects with it; the
 * thread stays usable. `cause` is core's error, whose own `cause` is what
 * the function threw.
 *
 * @since 0.1.0
 * @category Errors
 */
export class CallbackError extends TamboClientError {
  declare readonly _tag: "CallbackError"
  /** The context helper's name. */
  declare readonly helper?: string
  /** @since 0.1.0 */
  constructor(message: string, details: ErrorDetails & { readonly helper?: string | undefined }) {
    super("CallbackError", message, details)
    if (details.helper !== undefined) this.helper = details.helper
  }
}

/**
 * A tool or component could not be registered (invalid name, unsupported or
 * unconvertible schema). Thrown by the constructor and the `register*`
 * methods.
 *
 * @since 0.1.0
 * @category Errors
 */
export class ToolDefinitionError extends TamboClientError {
  declare readonly _tag: "ToolDefinitionError"
  /** The tool's or component's name, when it had a usable one. */
  declare readonly definitionName?: string
  /** @since 0.1.0 */
  constructor(message: string, details: ErrorDetails & { readonly definitionName?: string | undefined }) {
    super("ToolDefinitionError", message, details)
    if (details.definitionName !== undefined) this.definitionName = details.definitionName
  }
}

/**
 * Why a run was cancelled.
 *
 * @since 0.1.0
 * @category Models
 */
export type AbortReason =
  /** `stream.abort()` */
  | "Aborted"
  /** The run's `signal` was aborted. */
  | "SignalAborted"
  /** The consumer left a `for await` loop (or called the iterator's `return`). */
  | "IteratorClosed"
  /** `client.cancelRun(...)` */
  | "CancelledByClient"
  /** The server cancelled the run (`RUN_ERROR` with code `CANCELLED`). */
  | "CancelledByServer"
  /** `client.destroy()`, or a call on a destroyed client. */
  | "ClientDestroyed"

/**
 * The run (or call) was cancelled. The thread is marked cancelled
 * (`lastRunCancelled`), not errored.
 *
 * @since 0.1.0
 * @category Errors
 */
export class AbortError extends TamboClientError {
  declare readonly _tag: "AbortError"
  declare readonly reason: AbortReason
  declare readonly threadId?: string
  /** @since 0.1.0 */
  constructor(
    message: string,
    details: { readonly reason: AbortReason; readonly cause?: unknown; readonly threadId?: string | undefined }
  ) {
    super("AbortError", message, details)
    if (details.threadId !== undefined) this.threadId = details.threadId
  }
}

/**
 * A failure the SDK did not expect (a defect): a bug, or a callback that
 * threw where it must not. `cause` is what was thrown.
 *
 * @since 0.1.0
 * @category Errors
 */
export class UnknownError extends TamboClientError {
  declare readonly _tag: "UnknownError"
  /** @since 0.1.0 */
  constructor(message: string, details: { readonly cause?: unknown }) {
    super("UnknownError", message, { reason: "Defect", cause: details.cause })
  }
}

/**
 * @since 0.1.0
 * @category Guards
 */
export const isTamboClientError = (u: unknown): u is TamboClientError => u instanceof TamboClientError

/**
 * @since 0.1.0
 * @category Guards
 */
export const isAbortError = (u: unknown): u is AbortError => u instanceof AbortError
