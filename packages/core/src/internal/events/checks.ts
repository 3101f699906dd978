/**
 * The hand-written checks of the events long streams are made of, which the
 * decoder uses in place of their schemas' `Schema.is`.
 *
 * @internal
 */
import { isRecord as isPlainObject } from "effect/Predicate"

/** A check of a value's shape. */
export type Predicate = (u: unknown) => boolean

// Text, argument and reasoning deltas and component patches are nearly every
// event of a long run: these checks are worth keeping over `Schema.is` (see
// scratchpad/bench/NOTES.md). Each takes an object whose `type` (and custom
// `name`) the dispatcher matched, and gives the verdict of `Schema.is` for its
// schema (the tests hold them to it on valid and broken variants).

/** The fields every event may carry: an optional numeric `timestamp` (and `rawEvent`, anything). */
const hasBaseFields = (u: Readonly<Record<string, unknown>>): boolean => {
  const timestamp = u.timestamp
  return timestamp === undefined || typeof timestamp === "number"
}

const isOperation = (u: unknown): boolean => {
  if (!isPlainObject(u) || typeof u.path !== "string") return false
  switch (u.op) {
    case "add":
    case "replace":
    case "test":
      return Object.hasOwn(u, "value")
    case "remove":
      return true
    case "move":
    case "copy":
      return typeof u.from === "string"
    default:
      return false
  }
}

const isOperationList = (u: unknown): boolean => {
  if (!Array.isArray(u)) return false
  for (let i = 0; i < u.length; i++) if (!isOperation(u[i])) return false
  return true
}

const isStringRecord = (u: unknown): boolean => {
  if (!isPlainObject(u)) return false
  for (const key in u) if (Object.hasOwn(u, key) && typeof u[key] !== "string") return false
  return true
}

const handWritten: { readonly [typeOrName: string]: Predicate } = {
  TEXT_MESSAGE_CONTENT: (u) => {
    const o = u as Record<string, unknown>
    return typeof o.messageId === "string" && typeof o.delta === "string" && hasBaseFields(o)
  },
  TOOL_CALL_ARGS: (u) => {
    const o = u as Record<string, unknown>
    return typeof o.toolCallId === "string" && typeof o.delta === "string" && hasBaseFields(o)
  },
  THINKING_TEXT_MESSAGE_CONTENT: (u) => {
    const o = u as Record<string, unknown>
    return typeof o.delta === "string" && hasBaseFields(o)
  },
  REASONING_MESSAGE_CONTENT: (u) => {
    const o = u as Record<string, unknown>
    return typeof o.messageId === "string" && typeof o.delta === "string" && hasBaseFields(o)
  },
  "tambo.component.props_delta": (u) => {
    const o = u as Record<string, unknown>
    const value = o.value
    if (!isPlainObject(value) || !hasBaseFields(o)) return false
    const status = value.streamingStatus
    return typeof value.componentId === "string" && isOperationList(value.operations) &&
      (status === undefined || isStringRecord(status))
  },
  "tambo.component.state_delta": (u) => {
    const o = u as Record<string, unknown>
    const value = o.value
    return isPlainObject(value) && typeof value.componentId === "string" && isOperationList(value.operations) &&
      hasBaseFields(o)
  }
}

/** The hand-written check of the event of this `type` (or custom `name`), if it has one. */
export const handWrittenFor = (typeOrName: string): Predicate | undefined =>
  Object.hasOwn(handWritten, typeOrName) ? handWritten[typeOrName] : undefined
