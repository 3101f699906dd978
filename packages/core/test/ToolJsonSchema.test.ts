import { describe, expect, it } from "@effect/vitest"
import { dereference, findRecord, isPlainJson, undoStrictMode } from "../src/internal/jsonSchema.js"
import { formatIssues, validate } from "../src/internal/jsonSchemaValidate.js"

const messages = (schema: unknown, value: unknown) => formatIssues(validate(schema, value))

describe("JSON Schema validator", () => {
  const person = {
    type: "object",
    properties: {
      name: { type: "string", minLength: 1 },
      age: { type: "integer", minimum: 0, maximum: 150 },
      tags: { type: "array", items: { type: "string" }, maxItems: 2, uniqueItems: true },
      unit: { enum: ["c", "f"] },
      kind: { const: "person" },
      nickname: { type: "string", nullable: true }
    },
    required: ["name", "age"],
    additionalProperties: false
  }

  it("accepts a valid value", () => {
    expect(validate(person, { name: "Ada", age: 36, tags: ["a"], unit: "c", kind: "person", nickname: null })).toEqual([])
  })

  it.each([
    [{ age: 3 }, "name: is required"],
    [{ name: "Ada", age: 3.5 }, "age: expected integer, got number"],
    [{ name: "Ada", age: -1 }, "age: must be >= 0, got -1"],
    [{ name: "", age: 1 }, "name: must be at least 1 characters long"],
    [{ name: "Ada", age: 1, tags: ["a", 2] }, "tags[1]: expected string, got integer"],
    [{ name: "Ada", age: 1, tags: ["a", "a"] }, "tags: must not contain duplicate items"],
    [{ name: "Ada", age: 1, tags: ["a", "b", "c"] }, "tags: must have at most 2 items, got 3"],
    [{ name: "Ada", age: 1, unit: "k" }, "unit: expected one of \"c\", \"f\", got \"k\""],
    [{ name: "Ada", age: 1, kind: "robot" }, "kind: expected \"person\", got \"robot\""],
    [{ name: "Ada", age: 1, extra: true }, "extra: is not an allowed property"],
    [[1], "(root): expected object, got array"],
    [null, "(root): expected object, got null"]
  ])("reports %j", (value, expected) => {
    expect(messages(person, value)).toContain(expected)
  })

  it("handles anyOf, oneOf, allOf, not and if/then/else", () => {
    const anyOf = { anyOf: [{ type: "string" }, { type: "number" }] }
    expect(validate(anyOf, 1)).toEqual([])
    expect(messages(anyOf, true)).toContain("does not match any of the allowed alternatives")
    const oneOf = { oneOf: [{ type: "number" }, { type: "integer" }] }
    expect(validate(oneOf, 1.5)).toEqual([])
    expect(messages(oneOf, 1)).toContain("matches 2 of the alternatives")
    expect(messages({ allOf: [{ minimum: 1 }, { maximum: 2 }] }, 3)).toContain("must be <= 2")
    expect(messages({ not: { type: "string" } }, "x")).toContain("must not match")
    const conditional = { if: { minimum: 10 }, then: { multipleOf: 5 }, else: { maximum: 3 } }
    expect(validate(conditional, 15)).toEqual([])
    expect(messages(conditional, 12)).toContain("multiple of 5")
    expect(messages(conditional, 5)).toContain("must be <= 3")
  })

  it("handles tuples, exclusive bounds, patterns, type lists and boolean schemas", () => {
    expect(messages({ items: [{ type: "string" }], additionalItems: false }, ["a", 1])).toContain("at most 1 items")
    expect(validate({ prefixItems: [{ type: "string" }], items: { type: "number" } }, ["a", 1, 2])).toEqual([])
    expect(messages({ exclusiveMinimum: 0 }, 0)).toContain("must be > 0")
    expect(messages({ minimum: 0, exclusiveMinimum: true }, 0)).toContain("must be > 0")
    expect(messages({ pattern: "^a+$" }, "ab")).toContain("must match the pattern ^a+$")
    expect(validate({ type: ["string", "null"] }, null)).toEqual([])
    expect(validate({ format: "email", type: "string" }, "not an email")).toEqual([])
    expect(messages(false, 1)).toContain("no value is allowed")
    expect(validate(true, 1)).toEqual([])
    expect(messages({ type: "object", patternProperties: { "^x-": { type: "number" } }, additionalProperties: false }, {
      "x-a": "1",
      b: 1
    })).toBe("[\"x-a\"]: expected number, got string\nb: is not an allowed property")
  })

  it("resolves local $refs, and survives recursive ones", () => {
    const tree = {
      $defs: { node: { type: "object", properties: { kids: { type: "array", items: { $ref: "#/$defs/node" } } } } },
      $ref: "#/$defs/node"
    }
    expect(validate(tree, { kids: [{ kids: [] }] })).toEqual([])
    expect(messages(tree, { kids: [{ kids: 1 }] })).toBe("kids[0].kids: expected array, got integer")
    expect(messages({ $ref: "#/$defs/missing" }, 1)).toContain("#/$defs/missing, which does not exist")
    expect(messages({ $ref: "#" }, 1)).toContain("nests too deeply")
  })

  it("ignores malformed keywords instead of throwing", () => {
    expect(validate({ type: 42, properties: "nope", required: "x", minimum: "1", pattern: "(" }, "x")).toEqual([])
  })
})

describe("dereference", () => {
  it("inlines local definitions, keeping sibling keywords", () => {
    const result = dereference({
      type: "object",
      $defs: { Date: { type: "string", description: "a date" } },
      properties: { when: { $ref: "#/$defs/Date", description: "when" }, list: { items: { $ref: "#/$defs/Date" } } }
    })
    expect(result).toEqual({
      _tag: "Ok",
      schema: {
        type: "object",
        properties: {
          when: { type: "string", description: "when" },
          list: { items: { type: "string", description: "a date" } }
        }
      }
    })
  })

  it("reports cycles and unresolvable references", () => {
    expect(dereference({ $defs: { a: { items: { $ref: "#/$defs/a" } } }, $ref: "#/$defs/a" })).toEqual({
      _tag: "Cycle",
      ref: "#/$defs/a"
    })
    expect(dereference({ properties: { a: { $ref: "https://example.com/schema" } } })).toEqual({
      _tag: "Unresolvable",
      ref: "https://example.com/schema"
    })
  })
})

describe("undoStrictMode", () => {
  const schema = {
    type: "object",
    properties: {
      required: { type: "string" },
      optional: { type: "string" },
      nullable: { anyOf: [{ type: "string" }, { type: "null" }] },
      anything: {},
      nested: { type: "object", properties: { deep: { type: "number" } } },
      list: { type: "array", items: { type: "object", properties: { x: { type: "number" } } } }
    },
    required: ["required"]
  }

  it("removes nulls of optional, non-nullable properties only", () => {
    const input = {
      required: null,
      optional: null,
      nullable: null,
      anything: null,
      nested: { deep: null },
      list: [{ x: null }, { x: 1 }],
      unknown: null
    }
    expect(undoStrictMode(schema, input)).toEqual({
      required: null,
      nullable: null,
      anything: null,
      nested: {},
      list: [{}, { x: 1 }],
      unknown: null
    })
    // The input is left alone.
    expect(input.optional).toBeNull()
  })

  it("puts an optional property's default in place of its null, a copy each time", () => {
    const withDefaults = {
      type: "object",
      properties: {
        unit: { type: "string", enum: ["c", "f"], default: "c" },
        range: { type: "object", properties: { days: { type: "number" } }, default: { days: 3 } },
        city: { type: "string", default: "Paris" }
      },
      required: ["city"]
    }
    const first = undoStrictMode(withDefaults, { unit: null, range: null, city: null }) as { range: { days: number } }
    // A required property's null is the model's answer: left for validation.
    expect(first).toEqual({ unit: "c", range: { days: 3 }, city: null })
    first.range.days = 99
    expect(undoStrictMode(withDefaults, { range: null })).toEqual({ range: { days: 3 } })
  })

  it("reads a string sent for an object as the JSON object it holds", () => {
    const input = { nested: "{\"deep\":null}", list: ["{\"x\":2}"], required: "{\"a\":1}" }
    // Objects only where the schema wants one, and cleaned like any other.
    expect(undoStrictMode(schema, input)).toEqual({ nested: {}, list: [{ x: 2 }], required: "{\"a\":1}" })
    // Not JSON, not an object, or with an own `__proto__` key: left as sent, for validation to refuse.
    for (const text of ["{not json", "[1]", "null", "{\"__proto__\":{\"admin\":true}}"]) {
      expect(undoStrictMode(schema, { nested: text })).toEqual({ nested: text })
    }
  })
})

describe("findRecord", () => {
  const record = { type: "object", additionalProperties: { type: "string" } }
  it.each([
    ["the root", record, "(root)"],
    ["a property", { type: "object", properties: { tags: record } }, "tags"],
    ["a nested property", { type: "object", properties: { a: { type: "object", properties: { b: record } } } }, "a.b"],
    ["array items", { type: "object", properties: { rows: { type: "array", items: record } } }, "rows.[]"],
    ["a union's branch", { type: "object", properties: { v: { anyOf: [{ type: "null" }, record] } } }, "v.anyOf[1]"],
    ["a definition", { type: "object", $defs: { Tags: record } }, "$defs.Tags"],
    ["a nullable type list", { type: "object", properties: { m: { type: ["object", "null"], additionalProperties: {} } } }, "m"]
  ])("finds a record in %s", (_, schema, path) => {
    expect(findRecord(schema)).toBe(path)
  })

  it("leaves objects with named keys alone, closed or open", () => {
    expect(findRecord({ type: "object", properties: { a: { type: "string" } }, additionalProperties: false })).toBeUndefined()
    expect(findRecord({ type: "object", properties: { a: { type: "object" } }, additionalProperties: true })).toBeUndefined()
    expect(findRecord({ type: "array", items: { type: "string" } })).toBeUndefined()
    expect(findRecord("not a schema")).toBeUndefined()
  })
})

describe("isPlainJson", () => {
  it("tells JSON data from schema objects of libraries", () => {
    expect(isPlainJson({ type: "object", properties: { a: { type: "string" } }, required: ["a"] })).toBe(true)
    expect(isPlainJson({ parse: () => 1 })).toBe(false)
    expect(isPlainJson(new (class Schema {})())).toBe(false)
    expect(isPlainJson({ n: Number.NaN })).toBe(false)
  })
})
