/**
 * JSON Schema plumbing shared by tool registration and validation: local
 * `$ref` resolution, dereferencing, plain-data checks and the reversal of the
 * server's "strict mode" nulls. Every function treats the schema as untrusted
 * `unknown` data.
 *
 * @internal
 */
import { isRecord } from "effect/Predicate"
import { findProtoKey } from "./protoKey.js"

/** A JSON object: a non-null, non-array object. @internal */
export type JsonRecord = { readonly [key: string]: unknown }


/** Keywords whose value is one subschema. */
const singleSchemaKeys = [
  "items",
  "additionalItems",
  "contains",
  "additionalProperties",
  "propertyNames",
  "if",
  "then",
  "else",
  "not",
  "unevaluatedItems",
  "unevaluatedProperties"
] as const

/** Keywords whose value is an array of subschemas. */
const schemaArrayKeys = ["items", "prefixItems", "allOf", "anyOf", "oneOf"] as const

/** Keywords whose value is a map of name → subschema (`dependencies` may also hold name lists, left as they are). */
const schemaMapKeys = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"] as const

/**
 * Resolves a local JSON pointer (`#`, `#/$defs/Name`, `#/properties/a`)
 * against the root schema. Remote references are not resolved.
 *
 * @internal
 */
export const resolvePointer = (root: unknown, ref: string): { readonly found: boolean; readonly value: unknown } => {
  if (ref === "#") return { found: true, value: root }
  if (!ref.startsWith("#/")) return { found: false, value: undefined }
  let current: unknown = root
  for (const raw of ref.slice(2).split("/")) {
    let segment: string
    try {
      segment = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~")
    } catch {
      return { found: false, value: undefined }
    }
    if (Array.isArray(current)) {
      const index = Number(segment)
      if (!Number.isInteger(index) || index < 0 || index >= current.length) return { found: false, value: undefined }
      current = current[index]
    } else if (isRecord(current) && Object.prototype.hasOwnProperty.call(current, segment)) {
      current = current[segment]
    } else {
      return { found: false, value: undefined }
    }
  }
  return { found: true, value: current }
}

const escape = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1")

const isPlainRecord = (value: object): boolean => {
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/** Why `value` is not a JSON value (where, as a JSON Pointer, and what), or `undefined` if it is. */
const problem = (value: unknown, path: string, ancestors: Set<object>, root: string): string | undefined => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined
    case "number":
      return Number.isFinite(value) ? undefined : `${path || root}: ${value} is not a JSON number`
    case "object": {
      if (value === null) return undefined
      const where = path || root
      if (ancestors.has(value)) return `${where}: it holds itself (a cycle)`
      if (!Array.isArray(value) && !isPlainRecord(value)) {
        return `${where}: a ${value.constructor?.name ?? "value"} is not a JSON object (give plain objects, arrays and primitives)`
      }
      ancestors.add(value)
      try {
        if (Array.isArray(value)) {
          for (let i = 0; i < value.length; i++) {
            const found = problem(value[i], `${path}/${i}`, ancestors, root)
            if (found !== undefined) return found
          }
        } else {
          for (const key of Object.keys(value)) {
            const found = problem((value as Record<string, unknown>)[key], `${path}/${escape(key)}`, ancestors, root)
            if (found !== undefined) return found
          }
        }
        return undefined
      } finally {
        ancestors.delete(value)
      }
    }
    default:
      return `${path || root}: ${typeof value === "undefined" ? "undefined" : `a ${typeof value}`} is not JSON`
  }
}

/**
 * Why a value is not plain JSON data (where, as a JSON Pointer, and what),
 * or `undefined` when it is: null, booleans, finite numbers, strings, arrays
 * and plain objects thereof, without cycles.
 *
 * @internal
 */
export const jsonProblem = (value: unknown, root = "(the value)"): string | undefined => {
  try {
    return problem(value, "", new Set(), root)
  } catch {
    // A structure deep enough to exhaust the stack cannot be sent either.
    return `${root}: it is nested too deeply`
  }
}

/**
 * Whether a value is plain JSON data (see {@link jsonProblem}). A schema
 * object of a validation library (functions, class instances with methods)
 * is not.
 *
 * @internal
 */
export const isPlainJson = (u: unknown): boolean => jsonProblem(u) === undefined

/** @internal */
export type DereferenceResult =
  | { readonly _tag: "Ok"; readonly schema: JsonRecord }
  | { readonly _tag: "Cycle"; readonly ref: string }
  | { readonly _tag: "Unresolvable"; readonly ref: string }
  | { readonly _tag: "TooLarge" }

const MAX_NODES = 20_000

/**
 * Inlines every local `$ref` of a schema, so that each property's schema is
 * self-contained (the Tambo API stores each tool parameter's schema on its
 * own, where a `#/$defs/...` reference would dangle). Sibling keywords of a
 * `$ref` are kept and win over the referenced schema's. Fails on a recursive
 * schema, an unresolvable or remote reference, or a pathological expansion.
 * The root's `$defs` / `definitions` are dropped once nothing refers to them.
 *
 * @internal
 */
export const dereference = (root: JsonRecord): DereferenceResult => {
  let nodes = 0
  type Failure = Exclude<DereferenceResult, { readonly _tag: "Ok" }>
  let failure: Failure | undefined

  const walk = (schema: unknown, expanding: ReadonlyArray<string>): unknown => {
    if (failure !== undefined) return schema
    if (++nodes > MAX_NODES) {
      failure = { _tag: "TooLarge" }
      return schema
    }
    if (!isRecord(schema)) return schema
    const ref = schema["$ref"]
    if (typeof ref === "string") {
      if (expanding.includes(ref)) {
        failure = { _tag: "Cycle", ref }
        return schema
      }
      const target = resolvePointer(root, ref)
      if (!target.found) {
        failure = { _tag: "Unresolvable", ref }
        return schema
      }
      const { $ref: _ignored, ...siblings } = schema
      const expanded = walk(target.value, [...expanding, ref])
      const rest = walkKeywords(siblings, expanding)
      if (expanded === true || expanded === undefined) return rest
      if (!isRecord(expanded)) return Object.keys(rest).length === 0 ? expanded : { allOf: [expanded], ...rest }
      return { ...expanded, ...rest }
    }
    return walkKeywords(schema, expanding)
  }

  const walkKeywords = (schema: JsonRecord, expanding: ReadonlyArray<string>): JsonRecord => {
    const out: Record<string, unknown> = { ...schema }
    for (const key of singleSchemaKeys) {
      const value = schema[key]
      if (value !== undefined && !Array.isArray(value)) out[key] = walk(value, expanding)
    }
    for (const key of schemaArrayKeys) {
      const value = schema[key]
      if (Array.isArray(value)) out[key] = value.map((item) => walk(item, expanding))
    }
    for (const key of schemaMapKeys) {
      const value = schema[key]
      if (isRecord(value)) {
        const mapped: Record<string, unknown> = {}
        for (const [name, sub] of Object.entries(value)) mapped[name] = walk(sub, expanding)
        out[key] = mapped
      }
    }
    return out
  }

  // Definitions are only reachable through references: expand the rest of the
  // document, and drop the definitions when the expansion succeeds.
  const { $defs: _defs, definitions: _definitions, ...body } = root
  const result = walk(body, [])
  if (failure !== undefined) return failure
  return isRecord(result) ? { _tag: "Ok", schema: result } : { _tag: "Ok", schema: body }
}

const declaresObject = (schema: JsonRecord): boolean => {
  const type = schema["type"]
  return type === "object" || (Array.isArray(type) && type.includes("object"))
}

/** How a subschema's place reads in {@link findRecord}'s path. */
const stepName = (key: string, name?: string | number): string => {
  if (key === "properties" && typeof name === "string") return name
  if (key === "items") return name === undefined ? "[]" : `[${name}]`
  if (key === "additionalProperties") return "[*]"
  if (name === undefined) return key
  return typeof name === "number" ? `${key}[${name}]` : `${key}.${name}`
}

/**
 * Where a schema declares a record, an object whose keys are not named (an
 * `additionalProperties` that is itself a schema, as `Schema.Record` and
 * `z.record` give), as a dotted path of property names (`(root)` for the
 * schema itself); `undefined` when it declares none. The API's strict mode
 * rewrites every object to its named properties only, so the model could
 * never fill a record's entries.
 *
 * @internal
 */
export const findRecord = (schema: unknown): string | undefined => {
  const go = (current: unknown, path: ReadonlyArray<string>): string | undefined => {
    if (!isRecord(current) || path.length > 64) return undefined
    if (declaresObject(current) && isRecord(current["additionalProperties"])) {
      return path.length === 0 ? "(root)" : path.join(".")
    }
    for (const key of singleSchemaKeys) {
      const value = current[key]
      const found = Array.isArray(value) ? undefined : go(value, [...path, stepName(key)])
      if (found !== undefined) return found
    }
    for (const key of schemaArrayKeys) {
      const value = current[key]
      if (!Array.isArray(value)) continue
      for (let i = 0; i < value.length; i++) {
        const found = go(value[i], [...path, stepName(key, i)])
        if (found !== undefined) return found
      }
    }
    for (const key of schemaMapKeys) {
      const value = current[key]
      if (!isRecord(value)) continue
      for (const [name, sub] of Object.entries(value)) {
        const found = go(sub, [...path, stepName(key, name)])
        if (found !== undefined) return found
      }
    }
    return undefined
  }
  return go(schema, [])
}

/** The JSON object a string holds, if it holds one without an own `__proto__` key. */
const objectInString = (text: string): JsonRecord | undefined => {
  try {
    const parsed: unknown = JSON.parse(text)
    return isRecord(parsed) && findProtoKey(parsed) === undefined ? parsed : undefined
  } catch {
    return undefined
  }
}

const follow = (root: unknown, schema: unknown, depth: number): unknown => {
  let current = schema
  let hops = 0
  while (isRecord(current) && typeof current["$ref"] === "string" && hops < 32 && depth < 64) {
    const target = resolvePointer(root, current["$ref"])
    if (!target.found) return current
    current = target.value
    hops++
  }
  return current
}

/**
 * Whether a schema accepts `null`. Conservative: a schema that does not
 * constrain the type (`{}`) accepts it.
 *
 * @internal
 */
export const allowsNull = (root: unknown, schema: unknown, depth = 0): boolean => {
  if (depth > 64) return true
  const resolved = follow(root, schema, depth)
  if (resolved === false) return false
  if (!isRecord(resolved)) return true
  if (resolved["nullable"] === true) return true
  const type = resolved["type"]
  if (typeof type === "string" && type !== "null") return false
  if (Array.isArray(type) && !type.includes("null")) return false
  if ("const" in resolved && resolved["const"] !== null) return false
  const enumValues = resolved["enum"]
  if (Array.isArray(enumValues) && !enumValues.includes(null)) return false
  const allOf = resolved["allOf"]
  if (Array.isArray(allOf) && !allOf.every((sub) => allowsNull(root, sub, depth + 1))) return false
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = resolved[key]
    if (Array.isArray(branches) && !branches.some((sub) => allowsNull(root, sub, depth + 1))) return false
  }
  return true
}

/**
 * Undoes the server's strict-mode rewrite of tool schemas: there every
 * optional parameter becomes required-and-nullable, so the model sends `null`
 * for parameters it means to leave out. Guided by the tool's original schema,
 * a `null` for an optional property whose schema does not accept `null` is
 * removed, or replaced by the property's `default` when it has one
 * (recursively through nested objects and arrays). A string sent where the
 * schema wants an object is read as the JSON object it holds, as models
 * sometimes send them (unless it holds an own `__proto__` key). Everything
 * else is left for validation to judge. Never mutates its input.
 *
 * @internal
 */
export const undoStrictMode = (root: unknown, value: unknown): unknown => {
  const go = (schema: unknown, current: unknown, depth: number): unknown => {
    if (depth > 64) return current
    const resolved = follow(root, schema, depth)
    if (!isRecord(resolved)) return current
    if (typeof current === "string" && resolved["type"] === "object") {
      const parsed = objectInString(current)
      return parsed === undefined ? current : go(schema, parsed, depth)
    }
    if (Array.isArray(current)) {
      const items = resolved["items"]
      if (items === undefined || Array.isArray(items)) return current
      return current.map((item) => go(items, item, depth + 1))
    }
    if (!isRecord(current)) return current
    const properties = resolved["properties"]
    if (!isRecord(properties)) return current
    const required = Array.isArray(resolved["required"]) ? resolved["required"] : []
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(current)) {
      const propertySchema = Object.prototype.hasOwnProperty.call(properties, key) ? properties[key] : undefined
      if (propertySchema === undefined) {
        out[key] = item
      } else if (item === null && !required.includes(key) && !allowsNull(root, propertySchema)) {
        const resolvedProperty = follow(root, propertySchema, depth + 1)
        if (isRecord(resolvedProperty) && "default" in resolvedProperty) {
          out[key] = structuredClone(resolvedProperty["default"])
        }
      } else {
        out[key] = go(propertySchema, item, depth + 1)
      }
    }
    return out
  }
  return go(root, value, 0)
}
