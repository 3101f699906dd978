/**
 * The errors of the API's HTTP answers.
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ApiError, RunConflictError } from "../../TamboError.js"
import * as Api from "../transport/apiSchemas.js"

const codeOf = (body: typeof Api.ErrorBody.Type | undefined): string | undefined => {
  if (body === undefined) return undefined
  if (body.code !== undefined) return body.code
  if (body.type?.startsWith("urn:tambo:error:")) return body.type.slice("urn:tambo:error:".length).toUpperCase()
  return undefined
}

const decodeErrorBody = Schema.decodeUnknownOption(Api.ErrorBody)

/**
 * The typed error of an HTTP answer that is not a success: a 409 is a run
 * conflict, anything else an `ApiError` with its reason, code (from the
 * body), retryability and `Retry-After`.
 *
 * @internal
 */
export const errorFromStatus = (
  status: number,
  rawBody: unknown,
  context: {
    readonly method: string
    readonly url: string
    readonly threadId?: string | undefined
    /** The answer's `Retry-After`, in milliseconds. */
    readonly retryAfter?: number | undefined
  }
): ApiError | RunConflictError => {
  const body = Option.getOrUndefined(decodeErrorBody(rawBody))
  const message = body?.message
  const detail = body?.detail ??
    (typeof message === "string" ? message : message?.join("; ")) ??
    body?.title ??
    `HTTP ${status}`
  const code = codeOf(body)
  if (status === 409) {
    return new RunConflictError({
      reason: "ActiveOnServer",
      message: detail,
      status,
      ...(context.threadId === undefined ? {} : { threadId: context.threadId })
    })
  }
  const reason = status === 400 || status === 422
    ? "BadRequest"
    : status === 401
    ? "Unauthorized"
    : status === 403
    ? "Forbidden"
    : status === 404
    ? "NotFound"
    : status === 429
    ? "RateLimited"
    : status >= 500
    ? "ServerError"
    : "Unknown"
  // 500 INTERNAL_ERROR comes after the server's own retries: retrying won't help.
  const retryable = status === 429 || status === 502 || status === 503 || status === 504
  return new ApiError({
    reason,
    message: detail,
    status,
    retryable,
    category: status >= 500 ? "server_error" : "client_error",
    method: context.method,
    url: context.url,
    body: rawBody,
    ...(code === undefined ? {} : { code }),
    ...(context.retryAfter === undefined ? {} : { retryAfter: context.retryAfter })
  })
}
