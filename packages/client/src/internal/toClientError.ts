/** Turns core's typed failures (and defects, and interruptions) into the facade's `Error`s. */
import type { TamboError } from "@tambo-effect/core/TamboError"
import type { ToolDefinitionError as CoreToolDefinitionError } from "@tambo-effect/core/Tool"
import * as Cause from "effect/Cause"
import * as Option from "effect/Option"
import {
  AbortError,
  type AbortReason,
  ApiError,
  AuthError,
  CallbackError,
  ConfigError,
  DecodeError,
  MaxStepsExceededError,
  McpError,
  RunConflictError,
  type TamboClientError,
  ToolDefinitionError,
  ToolError,
  TransportError,
  UnknownError
} from "../errors.js"

export type CoreError = TamboError | CoreToolDefinitionError

export const fromCoreError = (error: CoreError): TamboClientError => {
  const cause = error
  switch (error._tag) {
    case "ApiError":
      return new ApiError(error.message, {
        reason: error.reason,
        retryable: error.retryable,
        status: error.status,
        code: error.code,
        category: error.category,
        method: error.method,
        url: error.url,
        body: error.body,
        cause
      })
    case "TransportError":
      return new TransportError(error.message, { reason: error.reason, retryable: error.retryable, cause })
    case "DecodeError":
      return new DecodeError(error.message, { reason: error.reason, frame: error.frame, cause })
    case "RunConflictError":
      return new RunConflictError(error.message, {
        reason: error.reason,
        status: error.status,
        threadId: error.threadId,
        cause
      })
    case "RunCancelledError":
      return new AbortError(error.message, { reason: error.reason, threadId: error.threadId, cause })
    case "MaxStepsExceededError":
      return new MaxStepsExceededError(error.message, {
        reason: error.reason,
        maxSteps: error.maxSteps,
        threadId: error.threadId,
        cause
      })
    case "AuthError":
      return new AuthError(error.message, { reason: error.reason, status: error.status, cause })
    case "ToolError":
      return new ToolError(error.message, { reason: error.reason, cause })
    case "McpError":
      return new McpError(error.message, { reason: error.reason, cause })
    case "ConfigError":
      return new ConfigError(error.message, { reason: error.reason, cause })
    case "CallbackError":
      return new CallbackError(error.message, { reason: error.reason, helper: error.helper, cause })
    case "ToolDefinitionError":
      return new ToolDefinitionError(error.message, {
        reason: error.reason,
        definitionName: error.definitionName,
        cause
      })
  }
}

const abortMessages: Record<AbortReason, string> = {
  Aborted: "The run was aborted",
  SignalAborted: "The run was aborted by its signal",
  IteratorClosed: "The run was cancelled: its consumer stopped reading",
  CancelledByClient: "The run was cancelled",
  CancelledByServer: "The run was cancelled by the server",
  ClientDestroyed: "The client was destroyed"
}

export const abortError = (reason: AbortReason, options: { cause?: unknown; threadId?: string | undefined } = {}) =>
  new AbortError(abortMessages[reason], { reason, ...options })

/**
 * The error a failed effect rejects with. An interruption is an
 * `AbortError` with the reason whoever interrupted recorded.
 */
export const fromCause = (
  cause: Cause.Cause<CoreError>,
  interruptedBecause: AbortReason = "Aborted"
): TamboClientError => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) return fromCoreError(failure.value)
  if (Cause.isInterruptedOnly(cause)) return abortError(interruptedBecause)
  const defect = Cause.squash(cause)
  const message = defect instanceof Error ? defect.message : String(defect)
  return new UnknownError(`Unexpected failure: ${message}`, { cause: defect })
}
