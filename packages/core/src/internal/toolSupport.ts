/**
 * Small helpers of the tool model and executor.
 *
 * @internal
 */
import { isRecord } from "effect/Predicate"

const MAX_MESSAGE_LENGTH = 2_000

const truncate = (text: string): string =>
  text.length > MAX_MESSAGE_LENGTH ? `${text.slice(0, MAX_MESSAGE_LENGTH - 3)}...` : text

/**
 * Whether a call's arguments, as text, are blank (empty or only whitespace): no arguments, read as
 * `{}` alike by the reducer, the pending calls shown for approval and the executor.
 *
 * @internal
 */
export const isBlankArgs = (raw: string): boolean => raw.trim() === ""

/**
 * A one-line, human (and model) readable description of anything thrown,
 * rejected or failed with.
 *
 * @internal
 */
export const describeError = (error: unknown): string => {
  if (typeof error === "string") return truncate(error.length > 0 ? error : "(empty error message)")
  if (isRecord(error) || error instanceof Error) {
    const message = "message" in error && typeof error.message === "string" ? error.message : ""
    const tag = "_tag" in error && typeof error._tag === "string" ? error._tag : undefined
    if (message.length > 0) return truncate(tag !== undefined && !message.includes(tag) ? `${tag}: ${message}` : message)
    if (tag !== undefined) return truncate(tag)
    if (error instanceof Error) return truncate(error.name)
  }
  try {
    const json = JSON.stringify(error)
    if (json !== undefined) return truncate(json)
  } catch {
    // not serialisable: fall through
  }
  return truncate(String(error))
}

/** @internal */
export const isPromiseLike = (u: unknown): u is PromiseLike<unknown> =>
  (typeof u === "object" || typeof u === "function") && u !== null && "then" in u && typeof u.then === "function"

/**
 * The text the model receives for a tool's result: strings as they are,
 * everything else as JSON. The API rejects empty text blocks, so an empty
 * string is sent as `""` and `undefined` as `null`.
 *
 * @internal
 */
export const resultText = (result: unknown): { readonly _tag: "Ok"; readonly text: string } | {
  readonly _tag: "Unserialisable"
  readonly reason: string
} => {
  if (typeof result === "string") return { _tag: "Ok", text: result.length > 0 ? result : "\"\"" }
  try {
    const json = JSON.stringify(result === undefined ? null : result)
    return json === undefined
      ? { _tag: "Unserialisable", reason: `a value of type ${typeof result} has no JSON representation` }
      : { _tag: "Ok", text: json }
  } catch (error) {
    return { _tag: "Unserialisable", reason: describeError(error) }
  }
}
