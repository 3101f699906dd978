/**
 * The headers of an AG-UI run request: fixed, or read anew for each request
 * from an Effect or a function (a token that rotates).
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import { CallbackError } from "../../TamboError.js"
import { messageOf, runCallback } from "../callbacks.js"

/**
 * The headers of an agent's requests: a record sent as it is, or an Effect
 * or a function (which may return a promise) run before each request.
 *
 * @since 0.2.0
 * @category Models
 */
export type AgentHeaders =
  | Readonly<Record<string, string>>
  | Effect.Effect<Readonly<Record<string, string>>, unknown>
  | (() => Readonly<Record<string, string>> | PromiseLike<Readonly<Record<string, string>>>)

const failed = (cause: unknown) =>
  new CallbackError({ reason: "Headers", message: `The agent's headers could not be read: ${messageOf(cause)}`, cause })

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/**
 * Why fetch would refuse a header, if it would: a name that is not a token, or a value that holds
 * a line break or a NUL (past the whitespace fetch trims) or a character past Latin-1. Refused
 * there, the request would fail as a connection that failed, and be sent again. The value is
 * not shown: it may be a secret.
 */
const headerProblem = (name: string, value: string): string | undefined => {
  if (!TOKEN.test(name)) return `${JSON.stringify(name)} is not a header name`
  if (/[\0\r\n]/.test(value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, ""))) return `the value of ${name} holds a line break or a NUL`
  if (/[^\u0000-\u00ff]/.test(value)) return `the value of ${name} holds a character HTTP cannot carry`
  return undefined
}

/** What the app gave us is checked: it may come from JavaScript, where nothing typed it. */
const checked = (value: unknown): Effect.Effect<Readonly<Record<string, string>>, CallbackError> => {
  if (
    typeof value !== "object" || value === null || Array.isArray(value) ||
    !Object.values(value).every((header) => typeof header === "string")
  ) {
    return Effect.fail(
      new CallbackError({
        reason: "Headers",
        message: `The agent's headers must be an object of strings, got ${Array.isArray(value) ? "an array" : typeof value === "object" ? "an object with a value that is not a string" : typeof value}`
      })
    )
  }
  for (const [name, header] of Object.entries(value as Readonly<Record<string, string>>)) {
    const problem = headerProblem(name, header)
    if (problem !== undefined) {
      return Effect.fail(new CallbackError({ reason: "Headers", message: `The agent's headers cannot be sent: ${problem}` }))
    }
  }
  return Effect.succeed(value as Readonly<Record<string, string>>)
}

/**
 * The headers for one request: what `headers` gives now. A function that
 * throws or rejects, an Effect that fails, or anything but an object of
 * strings fails with a `CallbackError` (`Headers`), and nothing is sent.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const resolveHeaders = (
  headers: AgentHeaders | undefined
): Effect.Effect<Readonly<Record<string, string>>, CallbackError> => {
  if (headers === undefined) return Effect.succeed({})
  if (Effect.isEffect(headers)) {
    // Typed as failing with anything: runCallback makes any failure the CallbackError.
    return Effect.flatMap(runCallback(() => headers as Effect.Effect<unknown>, failed), checked)
  }
  if (typeof headers === "function") return Effect.flatMap(runCallback(headers, failed), checked)
  return checked(headers)
}
