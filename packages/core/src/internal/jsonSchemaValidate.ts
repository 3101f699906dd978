/**
 * A small JSON Schema validator for the subset tool schemas use: `type`
 * (incl. `integer` and type lists), `enum`, `const`, `properties`,
 * `required`, `additionalProperties`, `patternProperties`, `propertyNames`,
 * `min/maxProperties`, `items` (schema or tuple), `prefixItems`,
 * `additionalItems`, `contains`, `min/maxItems`, `uniqueItems`,
 * `min/maxLength`, `pattern`, `minimum` / `maximum` / `exclusive*` (number
 * and draft-04 boolean forms), `multipleOf`, `allOf` / `anyOf` / `oneOf` /
 * `not`, `if` / `then` / `else`, local `$ref`, OpenAPI `nullable`, boolean
 * schemas. `format` and unknown keywords are ignored. The schema is untrusted
 * data: malformed keywords are ignored rather than thrown on.
 *
 * @internal
 */
import { isRecord } from "effect/Predicate"
import { type JsonRecord, resolvePointer } from "./jsonSchema.js"

/** @internal */
export interface Issue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const MAX_DEPTH = 128

const typeOf = (value: unknown): string => {
  if (value === null) return "null"
  if (Array.isArray(value)) return "array"
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number"
  return typeof value
}

const matchesType = (name: unknown, value: unknown): boolean => {
  switch (name) {
    case "null":
      return value === null
    case "boolean":
      return typeof value === "boolean"
    case "string":
      return typeof value === "string"
    case "number":
      return typeof value === "number" && Number.isFinite(value)
    case "integer":
      return typeof value === "number" && Number.isInteger(value)
    case "array":
      return Array.isArray(value)
    case "object":
      return isRecord(value)
    default:
      return false
  }
}

const knownTypes = new Set(["null", "boolean", "string", "number", "integer", "array", "object"])

/** Structural equality of JSON values. @internal */
export const jsonEquals = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEquals(item, b[i]))
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length &&
      keys.every((key) => Object.prototype.hasOwnProperty.call(b, key) && jsonEquals(a[key], b[key]))
  }
  return false
}

const show = (value: unknown): string => {
  try {
    const text = JSON.stringify(value)
    if (text === undefined) return String(value)
    return text.length > 80 ? `${text.slice(0, 77)}...` : text
  } catch {
    return String(value)
  }
}

const regexCache = new Map<string, RegExp | null>()
const compile = (pattern: string): RegExp | null => {
  let compiled = regexCache.get(pattern)
  if (compiled === undefined) {
    try {
      compiled = new RegExp(pattern, "u")
    } catch {
      compiled = null
    }
    if (regexCache.size > 500) regexCache.clear()
    regexCache.set(pattern, compiled)
  }
  return compiled
}

const numberKeyword = (schema: JsonRecord, key: string): number | undefined => {
  const value = schema[key]
  return typeof value === "number" && Number.isFinite(value) ? value : undefined
}

/**
 * Validates a value against a JSON Schema, returning the issues found (empty
 * when valid), at most `maxIssues` of them.
 *
 * @internal
 */
export const validate = (root: unknown, value: unknown, maxIssues = 10): ReadonlyArray<Issue> => {
  const issues: Array<Issue> = []
  check(root, root, value, [], issues, 0)
  return issues.slice(0, maxIssues)
}

const isValid = (root: unknown, schema: unknown, value: unknown, path: ReadonlyArray<string | number>, depth: number) => {
  const scratch: Array<Issue> = []
  check(root, schema, value, path, scratch, depth)
  return scratch
}

const check = (
  root: unknown,
  schema: unknown,
  value: unknown,
  path: ReadonlyArray<string | number>,
  issues: Array<Issue>,
  depth: number
): void => {
  if (depth > MAX_DEPTH) {
    issues.push({ path, message: "the schema nests too deeply (circular $ref?)" })
    return
  }
  if (schema === false) {
    issues.push({ path, message: "no value is allowed here" })
    return
  }
  if (!isRecord(schema)) return
  const add = (message: string, at: ReadonlyArray<string | number> = path) => issues.push({ path: at, message })

  const ref = schema["$ref"]
  if (typeof ref === "string") {
    const target = resolvePointer(root, ref)
    if (!target.found) add(`the schema refers to ${ref}, which does not exist`)
    else check(root, target.value, value, path, issues, depth + 1)
  }

  if (schema["nullable"] === true && value === null) return

  const type = schema["type"]
  const typeNames = typeof type === "string" ? [type] : Array.isArray(type) ? type : []
  const known = typeNames.filter((name) => typeof name === "string" && knownTypes.has(name))
  if (known.length > 0 && !known.some((name) => matchesType(name, value))) {
    add(`expected ${known.join(" or ")}, got ${typeOf(value)}`)
    return
  }

  const enumValues = schema["enum"]
  if (Array.isArray(enumValues) && !enumValues.some((candidate) => jsonEquals(candidate, value))) {
    add(`expected one of ${enumValues.map(show).join(", ")}, got ${show(value)}`)
  }
  if ("const" in schema && !jsonEquals(schema["const"], value)) {
    add(`expected ${show(schema["const"])}, got ${show(value)}`)
  }

  if (typeof value === "number") checkNumber(schema, value, add)
  if (typeof value === "string") checkString(schema, value, add)
  if (Array.isArray(value)) checkArray(root, schema, value, path, issues, depth, add)
  if (isRecord(value)) checkObject(root, schema, value, path, issues, depth, add)

  const allOf = schema["allOf"]
  if (Array.isArray(allOf)) for (const sub of allOf) check(root, sub, value, path, issues, depth + 1)

  const anyOf = schema["anyOf"]
  if (Array.isArray(anyOf) && anyOf.length > 0) {
    const results = anyOf.map((sub) => isValid(root, sub, value, path, depth + 1))
    if (!results.some((r) => r.length === 0)) add(noAlternative(results))
  }
  const oneOf = schema["oneOf"]
  if (Array.isArray(oneOf) && oneOf.length > 0) {
    const results = oneOf.map((sub) => isValid(root, sub, value, path, depth + 1))
    const matching = results.filter((r) => r.length === 0).length
    if (matching === 0) add(noAlternative(results))
    else if (matching > 1) add(`matches ${matching} of the alternatives, but exactly one is allowed`)
  }
  if ("not" in schema && isValid(root, schema["not"], value, path, depth + 1).length === 0) {
    add("matches a schema it must not match")
  }
  if ("if" in schema) {
    const branch = isValid(root, schema["if"], value, path, depth + 1).length === 0 ? "then" : "else"
    if (branch in schema) check(root, schema[branch], value, path, issues, depth + 1)
  }
}

const noAlternative = (results: ReadonlyArray<ReadonlyArray<Issue>>): string => {
  const reasons = results
    .map((r) => r[0])
    .filter((issue): issue is Issue => issue !== undefined)
    .map((issue) => issue.path.length > 0 ? `${formatPath(issue.path)}: ${issue.message}` : issue.message)
  const unique = [...new Set(reasons)]
  return `does not match any of the allowed alternatives (${unique.join("; ")})`
}

const checkNumber = (schema: JsonRecord, value: number, add: (message: string) => void) => {
  const minimum = numberKeyword(schema, "minimum")
  const maximum = numberKeyword(schema, "maximum")
  const exclusiveMinimum = schema["exclusiveMinimum"]
  const exclusiveMaximum = schema["exclusiveMaximum"]
  if (minimum !== undefined) {
    if (exclusiveMinimum === true ? value <= minimum : value < minimum) {
      add(`must be ${exclusiveMinimum === true ? ">" : ">="} ${minimum}, got ${value}`)
    }
  }
  if (maximum !== undefined) {
    if (exclusiveMaximum === true ? value >= maximum : value > maximum) {
      add(`must be ${exclusiveMaximum === true ? "<" : "<="} ${maximum}, got ${value}`)
    }
  }
  if (typeof exclusiveMinimum === "number" && value <= exclusiveMinimum) add(`must be > ${exclusiveMinimum}, got ${value}`)
  if (typeof exclusiveMaximum === "number" && value >= exclusiveMaximum) add(`must be < ${exclusiveMaximum}, got ${value}`)
  const multipleOf = numberKeyword(schema, "multipleOf")
  if (multipleOf !== undefined && multipleOf > 0) {
    const quotient = value / multipleOf
    if (Math.abs(quotient - Math.round(quotient)) > 1e-9) add(`must be a multiple of ${multipleOf}, got ${value}`)
  }
}

const checkString = (schema: JsonRecord, value: string, add: (message: string) => void) => {
  const minLength = numberKeyword(schema, "minLength")
  const maxLength = numberKeyword(schema, "maxLength")
  if (minLength !== undefined || maxLength !== undefined) {
    const length = [...value].length
    if (minLength !== undefined && length < minLength) add(`must be at least ${minLength} characters long`)
    if (maxLength !== undefined && length > maxLength) add(`must be at most ${maxLength} characters long`)
  }
  const pattern = schema["pattern"]
  if (typeof pattern === "string") {
    const regex = compile(pattern)
    if (regex !== null && !regex.test(value)) add(`must match the pattern ${pattern}`)
  }
}

const checkArray = (
  root: unknown,
  schema: JsonRecord,
  value: ReadonlyArray<unknown>,
  path: ReadonlyArray<string | number>,
  issues: Array<Issue>,
  depth: number,
  add: (message: string) => void
) => {
  const minItems = numberKeyword(schema, "minItems")
  const maxItems = numberKeyword(schema, "maxItems")
  if (minItems !== undefined && value.length < minItems) add(`must have at least ${minItems} items, got ${value.length}`)
  if (maxItems !== undefined && value.length > maxItems) add(`must have at most ${maxItems} items, got ${value.length}`)

  const items = schema["items"]
  const prefixItems = schema["prefixItems"]
  // A tuple: draft 2020-12 `prefixItems` (then `items` covers the rest), or
  // draft-07 `items` as an array (then `additionalItems` covers the rest).
  const tuple = Array.isArray(prefixItems) ? prefixItems : Array.isArray(items) ? items : undefined
  const rest = Array.isArray(prefixItems) ? items : Array.isArray(items) ? schema["additionalItems"] : items
  value.forEach((item, index) => {
    const itemSchema = tuple !== undefined && index < tuple.length ? tuple[index] : rest
    if (itemSchema === false && tuple !== undefined) {
      add(`must have at most ${tuple.length} items, got ${value.length}`)
    } else if (itemSchema !== undefined) {
      check(root, itemSchema, item, [...path, index], issues, depth + 1)
    }
  })

  if (schema["uniqueItems"] === true) {
    for (let i = 1; i < value.length; i++) {
      if (value.slice(0, i).some((earlier) => jsonEquals(earlier, value[i]))) {
        add(`must not contain duplicate items (item ${i} repeats an earlier one)`)
        break
      }
    }
  }
  if ("contains" in schema && !value.some((item, i) => isValid(root, schema["contains"], item, [...path, i], depth + 1).length === 0)) {
    add("must contain at least one matching item")
  }
}

const checkObject = (
  root: unknown,
  schema: JsonRecord,
  value: JsonRecord,
  path: ReadonlyArray<string | number>,
  issues: Array<Issue>,
  depth: number,
  add: (message: string, at?: ReadonlyArray<string | number>) => void
) => {
  const keys = Object.keys(value)
  const required = schema["required"]
  if (Array.isArray(required)) {
    for (const key of required) {
      if (typeof key === "string" && !Object.prototype.hasOwnProperty.call(value, key)) add("is required", [...path, key])
    }
  }
  const minProperties = numberKeyword(schema, "minProperties")
  const maxProperties = numberKeyword(schema, "maxProperties")
  if (minProperties !== undefined && keys.length < minProperties) add(`must have at least ${minProperties} properties`)
  if (maxProperties !== undefined && keys.length > maxProperties) add(`must have at most ${maxProperties} properties`)

  const properties = isRecord(schema["properties"]) ? schema["properties"] : {}
  const patternProperties = isRecord(schema["patternProperties"]) ? schema["patternProperties"] : {}
  const patterns = Object.entries(patternProperties).flatMap(([pattern, sub]) => {
    const regex = compile(pattern)
    return regex === null ? [] : [{ regex, sub }]
  })
  const additional = schema["additionalProperties"]
  const propertyNames = schema["propertyNames"]

  for (const key of keys) {
    const at = [...path, key]
    let covered = false
    if (Object.prototype.hasOwnProperty.call(properties, key)) {
      covered = true
      check(root, properties[key], value[key], at, issues, depth + 1)
    }
    for (const { regex, sub } of patterns) {
      if (regex.test(key)) {
        covered = true
        check(root, sub, value[key], at, issues, depth + 1)
      }
    }
    if (!covered) {
      if (additional === false) add("is not an allowed property", at)
      else if (additional !== undefined) check(root, additional, value[key], at, issues, depth + 1)
    }
    if (propertyNames !== undefined) {
      const nameIssues = isValid(root, propertyNames, key, at, depth + 1)
      if (nameIssues.length > 0) add(`is not an allowed property name (${nameIssues[0]?.message ?? "invalid"})`, at)
    }
  }

  const dependencies = isRecord(schema["dependencies"]) ? schema["dependencies"] : {}
  for (const [key, dependency] of Object.entries(dependencies)) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue
    if (Array.isArray(dependency)) {
      for (const needed of dependency) {
        if (typeof needed === "string" && !Object.prototype.hasOwnProperty.call(value, needed)) {
          add(`is required when ${key} is present`, [...path, needed])
        }
      }
    } else {
      check(root, dependency, value, path, issues, depth + 1)
    }
  }
}

/**
 * Formats a path as `a.b[0]`, or `(root)` for the empty path.
 *
 * @internal
 */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string => {
  if (path.length === 0) return "(root)"
  let out = ""
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`
    else {
      const name = String(segment)
      out += /^[A-Za-z_$][\w$]*$/.test(name) ? (out === "" ? name : `.${name}`) : `[${JSON.stringify(name)}]`
    }
  }
  return out
}

/**
 * One line per issue: `path: message`.
 *
 * @internal
 */
export const formatIssues = (issues: ReadonlyArray<Issue>): string =>
  issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`).join("\n")
