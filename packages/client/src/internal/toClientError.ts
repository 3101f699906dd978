/** The error a failed effect of core's reaches the facade's user as. */
import type { TamboError } from "@tambo-effect/core/TamboError"
import * as Cause from "effect/Cause"
import * as Option from "effect/Option"
import { AbortError, type AbortReason, NotSupportedError, type TamboClientError, UnknownError } from "../errors.js"

/** What core's effects fail with. */
export type CoreError = TamboError

const abortMessages: Record<AbortReason, string> = {
  Aborted: "The run was aborted",
  SignalAborted: "The run was aborted by its signal",
  IteratorClosed: "The run was cancelled: its consumer stopped reading",
  CancelledByClient: "The run was cancelled",
  CancelledByServer: "The run was cancelled by the server",
  ClientDestroyed: "The client was destroyed"
}

export const abortError = (reason: AbortReason, options: { cause?: unknown; threadId?: string | undefined } = {}) =>
  new AbortError({ reason, message: abortMessages[reason], ...options })

/** The code of core's `ApiError` for a call an AG-UI agent has no counterpart of (`AgUi.ts`). */
const NOT_OFFERED_BY_AGENT = "NOT_SUPPORTED_BY_AG_UI_AGENT"

export const notSupported = (message: string, options: { method?: string; cause?: unknown } = {}) =>
  new NotSupportedError({ reason: "NotOfferedByAgent", message, ...options })

/** The error of a Tambo-only method called on an agent client. */
export const notOffered = (method: string) =>
  notSupported(
    `An AG-UI agent does not offer ${method}: it has no API besides its runs (its threads live in this client)`,
    { method }
  )

/**
 * Core's failure as it is (not a copy; unwrapped from the proxy Effect puts
 * around an error that crossed a span), except a cancellation, which is an
 * `AbortError` with core's `RunCancelledError` as its cause, and a call an
 * AG-UI agent does not offer, a `NotSupportedError`. An interruption
 * is an `AbortError` with the reason whoever interrupted recorded; a defect
 * an `UnknownError`.
 */
export const fromCause = (
  cause: Cause.Cause<CoreError>,
  interruptedBecause: AbortReason = "Aborted"
): TamboClientError => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = Cause.originalError(failure.value)
    if (error._tag === "ApiError" && error.code === NOT_OFFERED_BY_AGENT) return notSupported(error.message, { cause: error })
    return error._tag === "RunCancelledError"
      ? new AbortError({ reason: error.reason, message: error.message, threadId: error.threadId, cause: error })
      : error
  }
  if (Cause.isInterruptedOnly(cause)) return abortError(interruptedBecause)
  const defect = Cause.originalError(Cause.squash(cause))
  const message = defect instanceof Error ? defect.message : String(defect)
  return new UnknownError({ reason: "Defect", message: `Unexpected failure: ${message}`, cause: defect })
}
