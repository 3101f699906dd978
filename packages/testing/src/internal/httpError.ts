import { uuid } from "./ids.js"

/** A response the handler wants sent as is: status, JSON body, extra headers. */
export class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: { readonly [name: string]: string } = {}
  ) {
    super(`HTTP ${status}`)
  }
}

const reasonPhrases: { readonly [status: number]: string } = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  413: "Payload Too Large",
  500: "Internal Server Error"
}

/** NestJS's body for a built-in HttpException: `{ message, error, statusCode }`. */
export const nestError = (status: number, message: string | ReadonlyArray<string>): HttpFailure =>
  new HttpFailure(status, { message, error: reasonPhrases[status] ?? "Error", statusCode: status })

export const badRequest = (message: string | ReadonlyArray<string>): HttpFailure => nestError(400, message)
export const notFound = (message: string): HttpFailure => nestError(404, message)
export const unauthorized = (message: string): HttpFailure => nestError(401, message)
/** What NestJS answers when a guard returns false. */
export const forbidden = (): HttpFailure => nestError(403, "Forbidden resource")

/** The v1 API's RFC 9457 problem codes, with their titles and statuses. */
const problems = {
  CONCURRENT_RUN: ["Concurrent Run", 409],
  RUN_ACTIVE: ["Run Active", 409],
  INVALID_TOOL_RESULT: ["Invalid Tool Result", 400],
  INVALID_PREVIOUS_RUN: ["Invalid Previous Run", 400],
  INVALID_JSON_PATCH: ["Invalid JSON Patch", 400],
  INVALID_CURSOR: ["Invalid Cursor", 400],
  VALIDATION_ERROR: ["Validation Error", 400]
} as const

export type ProblemCode = keyof typeof problems

/** A v1 problem detail, sent as the exception body (NestJS serializes it as is). */
export const problem = (code: ProblemCode, detail: string, extra: { readonly [key: string]: unknown } = {}): HttpFailure => {
  const [title, status] = problems[code]
  return new HttpFailure(status, {
    type: `urn:tambo:error:${code.toLowerCase()}`,
    title,
    status,
    detail,
    instance: `urn:tambo:error-instance:${uuid()}`,
    ...extra
  })
}
