/**
 * The decoder of a run's SSE frames, made from the event schemas of
 * `Events.ts`: a table of validators by `type` and one by custom `name`
 * (each the schema's `Schema.is`, or the hand-written check of a frequent
 * event), the dispatch on them, and the `DecodeError`s it fails with. Full
 * Schema decoding only runs on failure, to build the error message.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import { isRecord as isPlainObject } from "effect/Predicate"
import * as Schema from "effect/Schema"
import type { TamboCustomEvent, TamboEvent, UnknownEvent } from "../../Events.js"
import { DecodeError } from "../../TamboError.js"
import { handWrittenFor, type Predicate } from "./checks.js"

/** The `type` of every `UnknownEvent`. */
export const UNKNOWN_EVENT_TYPE = "UNKNOWN" as const

/** The schema of an event dispatched on its `type`. */
export type ByType = Schema.Schema.AnyNoContext & {
  readonly Type: TamboEvent
  readonly fields: { readonly type: { readonly literals: readonly [string] } }
}

/** The schema of a custom event dispatched on its `name`. */
export type ByCustomName = Schema.Schema.AnyNoContext & {
  readonly Type: TamboCustomEvent
  readonly fields: { readonly name: { readonly literals: readonly [string] } }
}

/** What a decoder knows. */
export interface EventSchemas {
  readonly byType: ReadonlyArray<ByType>
  readonly byCustomName: ReadonlyArray<ByCustomName>
  /** Any CUSTOM event: one with an unknown `name` is kept when it passes this. */
  readonly anyCustom: Schema.Schema.AnyNoContext
}

/** A decoder, for the public `Events` module to hand out. */
export interface Decoder {
  readonly knownEventTypes: ReadonlySet<string>
  readonly knownCustomEventNames: ReadonlySet<string>
  readonly decodeFrame: (data: string) => Either.Either<TamboEvent | UnknownEvent, DecodeError>
  readonly decodeEvent: (u: unknown) => Either.Either<TamboEvent | UnknownEvent, DecodeError>
}

interface Validator<A> {
  readonly is: (u: unknown) => u is A
  readonly decode: (u: unknown) => Either.Either<A, ParseResult.ParseError>
}

/** `Schema.is` of the schema, or the hand-written check of a frequent event (see checks.ts). */
const validator = <A, I>(schema: Schema.Schema<A, I>, handWritten?: Predicate): Validator<A> => ({
  is: handWritten === undefined ? Schema.is(schema) : (u): u is A => handWritten(u),
  // `exact` so that a missing required key fails here as it does in `is`.
  decode: Schema.decodeUnknownEither(schema, { exact: true })
})

const invalidEvent = (message: string, frame: string | undefined): DecodeError =>
  new DecodeError(frame === undefined ? { reason: "InvalidEvent", message } : { reason: "InvalidEvent", message, frame })

const schemaFailure = (
  what: string,
  result: Either.Either<unknown, ParseResult.ParseError>,
  frame: string | undefined
): DecodeError =>
  invalidEvent(
    Either.isLeft(result)
      ? `Invalid ${what}: ${ParseResult.TreeFormatter.formatErrorSync(result.left)}`
      : `Invalid ${what}`,
    frame
  )

/** The validators a decoder dispatches to. */
interface Tables {
  readonly byType: ReadonlyMap<string, Validator<TamboEvent>>
  readonly byCustomName: ReadonlyMap<string, Validator<TamboCustomEvent>>
  readonly anyCustom: (u: unknown) => boolean
  readonly decodeAnyCustom: (u: unknown) => Either.Either<unknown, ParseResult.ParseError>
}

const tablesOf = (schemas: EventSchemas): Tables => {
  const byType = new Map<string, Validator<TamboEvent>>()
  for (const schema of schemas.byType) {
    const type = schema.fields.type.literals[0]
    byType.set(type, validator(schema, handWrittenFor(type)))
  }
  const byCustomName = new Map<string, Validator<TamboCustomEvent>>()
  for (const schema of schemas.byCustomName) {
    const name = schema.fields.name.literals[0]
    byCustomName.set(name, validator(schema, handWrittenFor(name)))
  }
  return {
    byType,
    byCustomName,
    anyCustom: Schema.is(schemas.anyCustom),
    decodeAnyCustom: Schema.decodeUnknownEither(schemas.anyCustom, { exact: true })
  }
}

const decodeParsed = (
  tables: Tables,
  u: unknown,
  frame: string | undefined
): Either.Either<TamboEvent | UnknownEvent, DecodeError> => {
  if (!isPlainObject(u) || typeof u.type !== "string") {
    return Either.left(invalidEvent("Expected a JSON object with a string \"type\"", frame))
  }
  const type = u.type
  if (type === "CUSTOM") {
    const name = u.name
    const known = typeof name === "string" ? tables.byCustomName.get(name) : undefined
    if (known !== undefined) {
      if (known.is(u)) return Either.right(u)
      return Either.left(schemaFailure(`${name} event`, known.decode(u), frame))
    }
    if (tables.anyCustom(u) && typeof name === "string") {
      return Either.right({ type: UNKNOWN_EVENT_TYPE, eventType: type, name, event: u })
    }
    return Either.left(schemaFailure("CUSTOM event", tables.decodeAnyCustom(u), frame))
  }
  const known = tables.byType.get(type)
  if (known === undefined) return Either.right({ type: UNKNOWN_EVENT_TYPE, eventType: type, event: u })
  if (known.is(u)) return Either.right(u)
  return Either.left(schemaFailure(`${type} event`, known.decode(u), frame))
}

const invalidJson = (error: unknown, frame: string): DecodeError =>
  new DecodeError({
    reason: "InvalidJson",
    message: `Event frame is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    frame
  })

/** The decoder of the events `schemas` knows; every other event is kept as an `UnknownEvent`. */
export const make = (schemas: EventSchemas): Decoder => {
  const tables = tablesOf(schemas)
  return {
    knownEventTypes: new Set([...tables.byType.keys(), "CUSTOM"]),
    knownCustomEventNames: new Set(tables.byCustomName.keys()),
    decodeFrame: (data) => {
      let parsed: unknown
      try {
        parsed = JSON.parse(data)
      } catch (error) {
        return Either.left(invalidJson(error, data))
      }
      return decodeParsed(tables, parsed, data)
    },
    decodeEvent: (u) => decodeParsed(tables, u, undefined)
  }
}
