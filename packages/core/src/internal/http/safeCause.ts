/**
 * A copy of a failure's cause chain that holds no secret. The clients under
 * the transport keep the request in their errors (the platform's
 * `RequestError` holds it whole: headers with `x-api-key` and the bearer
 * token), so a cause is never kept as it is: each link becomes a plain
 * `Error` with its name, message (URLs without user info or query) and
 * system error fields, nothing else.
 */
import { scrubUrls as scrub } from "./connectionFailure.js"

const MAX_DEPTH = 8

const copy = (cause: unknown, depth: number): unknown => {
  if (typeof cause !== "object" || cause === null) {
    return typeof cause === "string" ? scrub(cause) : typeof cause === "function" ? undefined : cause
  }
  const source = cause as {
    readonly name?: unknown
    readonly message?: unknown
    readonly code?: unknown
    readonly errno?: unknown
    readonly syscall?: unknown
    readonly cause?: unknown
    readonly errors?: unknown
  }
  const message = typeof source.message === "string" ? scrub(source.message) : ""
  const error = new Error(message)
  const name = typeof source.name === "string" ? source.name : "Error"
  error.name = name
  error.stack = `${name}: ${message}`
  const fields = error as Error & Record<string, unknown>
  for (const key of ["code", "errno", "syscall"] as const) {
    const value = source[key]
    if (typeof value === "string" || typeof value === "number") fields[key] = value
  }
  if (depth < MAX_DEPTH) {
    if ("cause" in source && source.cause !== undefined) error.cause = copy(source.cause, depth + 1)
    if (Array.isArray(source.errors)) fields.errors = source.errors.map((e) => copy(e, depth + 1))
  }
  return error
}

/** The cause chain of `cause` with names, messages and error codes only. */
export const safeCause = (cause: unknown): unknown => copy(cause, 0)
