/**
 * What a model in the API's strict mode sends for a value of a schema: each object's missing
 * properties as `null` (see `Script.strictArgs`).
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
