/**
 * The API's strict mode, both ways: what a model in it sends for a value of a tool's schema (each
 * object's missing properties as `null`, see `Script.strictArgs`), and what the API stores of
 * such arguments (the `null`s of optional parameters undone).
 */
import * as Predicate from "effect/Predicate"

const declaresObject = (schema: Record<string, unknown>): boolean =>
  schema["type"] === "object" || (schema["type"] === undefined && Predicate.isRecord(schema["properties"]))

/** `value` with `null` for each property of `schema` it leaves out, recursively. */
export const strictValue = (schema: unknown, value: unknown, depth: number): unknown => {
  if (!Predicate.isRecord(schema) || depth > 64) return value
  if (Array.isArray(value)) {
    const items = schema["items"]
    return Predicate.isRecord(items) ? value.map((item) => strictValue(items, item, depth + 1)) : value
  }
  if (!Predicate.isRecord(value)) return value
  if (!declaresObject(schema)) {
    // A union (a nullable object, say): the branch that describes an object.
    const branches = [schema["anyOf"], schema["oneOf"]].flatMap((list) => Array.isArray(list) ? list : [])
    const branch = branches.find((candidate) => Predicate.isRecord(candidate) && declaresObject(candidate))
    return branch === undefined ? value : strictValue(branch, value, depth + 1)
  }
  const properties = Predicate.isRecord(schema["properties"]) ? schema["properties"] : {}
  const out: Record<string, unknown> = {}
  for (const [key, property] of Object.entries(properties)) {
    out[key] = Object.hasOwn(value, key) ? strictValue(property, value[key], depth + 1) : null
  }
  for (const [key, item] of Object.entries(value)) if (!Object.hasOwn(out, key)) out[key] = item
  return out
}

/** The API's test of whether a parameter's schema takes `null`: a `null` type, or a union with one. */
const takesNull = (schema: unknown): boolean =>
  Predicate.isRecord(schema) &&
  (schema["type"] === "null" || (Array.isArray(schema["anyOf"]) && schema["anyOf"].some(takesNull)))

/**
 * The arguments as the API stores them once a model in strict mode sent them: guided by the
 * tool's own schema, a `null` for an optional parameter that does not take `null` is dropped (or
 * its `default` put in its place), through nested objects and arrays of objects, and an object
 * sent as a JSON string is parsed.
 */
export const unstrictValue = (schema: unknown, value: unknown, depth = 0): unknown => {
  if (!Predicate.isRecord(schema) || !Predicate.isRecord(value) || depth > 64) return value
  const properties = Predicate.isRecord(schema["properties"]) ? schema["properties"] : {}
  const required = Array.isArray(schema["required"]) ? schema["required"] : []
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    const property = Object.hasOwn(properties, key) ? properties[key] : undefined
    if (!Predicate.isRecord(property)) {
      out[key] = item
    } else if (item === null && !required.includes(key) && !takesNull(property)) {
      if ("default" in property) out[key] = property["default"]
    } else if (property["type"] === "array" && Array.isArray(item) && Predicate.isRecord(property["items"])) {
      const items = property["items"]
      out[key] = items["type"] === "object" ? item.map((entry) => unstrictValue(items, entry, depth + 1)) : item
    } else if (property["type"] === "object") {
      out[key] = unstrictValue(property, typeof item === "string" ? parsedObject(item) ?? item : item, depth + 1)
    } else {
      out[key] = item
    }
  }
  return out
}

const parsedObject = (text: string): Record<string, unknown> | undefined => {
  try {
    const parsed: unknown = JSON.parse(text)
    return Predicate.isRecord(parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}
