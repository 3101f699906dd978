import { describe, expect, it } from "vitest"
import { parsePartialJson } from "../src/internal/partialJson.js"

describe("parsePartialJson", () => {
  const table: ReadonlyArray<readonly [input: string, expected: unknown]> = [
    // nothing parsable
    ["", undefined],
    ["   ", undefined],
    ["x", undefined],
    ["-", undefined],
    ["NaN", undefined],
    // complete values parse like JSON.parse
    ["{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}", { a: 1, b: [true, false, null], c: { d: "e" } }],
    ["  [ 1 , 2 ]  ", [1, 2]],
    ["\"\\u00e9\\n\\\"\\\\\\/\"", "é\n\"\\/"],
    ["-12.5e-1", -1.25],
    // truncated objects and keys
    ["{", {}],
    ["{\"", {}],
    ["{\"ke", {}],
    ["{\"key\"", {}],
    ["{\"key\":", {}],
    ["{\"key\": ", {}],
    ["{\"a\":1,", { a: 1 }],
    ["{\"a\":1,\"b", { a: 1 }],
    ["{\"a\":{\"b\":[{\"c\":\"d", { a: { b: [{ c: "d" }] } }],
    // truncated strings
    ["{\"a\": \"hel", { a: "hel" }],
    ["{\"a\": \"hel\\", { a: "hel" }],
    ["{\"a\": \"h\\u00", { a: "h" }],
    ["{\"a\": \"h\\u00e9", { a: "hé" }],
    ["\"abc", "abc"],
    // truncated numbers: longest valid prefix
    ["{\"a\": 1", { a: 1 }],
    ["{\"a\": 1.", { a: 1 }],
    ["{\"a\": -", {}],
    ["{\"a\": 1e", { a: 1 }],
    ["{\"a\": 1e-", { a: 1 }],
    ["[1.", [1]],
    ["[-", []],
    // truncated literals
    ["t", true],
    ["{\"a\": tr", { a: true }],
    ["{\"a\": nul", { a: null }],
    ["[true, fa", [true, false]],
    // truncated arrays
    ["[", []],
    ["[[[[", [[[[]]]]],
    ["[1, ", [1]],
    ["[1, 2", [1, 2]],
    ["[{}, {\"b\": 2}", [{}, { b: 2 }]],
    // not a JSON prefix: keep what was built, stop there
    ["{\"a\": 1}x", { a: 1 }],
    ["[1 2]", [1]],
    ["{\"a\" 1}", {}],
    ["{\"a\": [1}", { a: [1] }],
    ["\"\\q\"", ""]
  ]

  it.each(table)("%j", (input, expected) => {
    expect(parsePartialJson(input)).toEqual(expected)
  })

  it("agrees with JSON.parse on every prefix that is complete JSON", () => {
    const text = JSON.stringify({ title: "Weather \"now\"", days: [{ t: -3.5, ok: true }, { t: 12, note: null }], n: 1e21 })
    expect(parsePartialJson(text)).toEqual(JSON.parse(text))
    for (let i = 0; i <= text.length; i++) expect(() => parsePartialJson(text.slice(0, i))).not.toThrow()
  })

  it("creates __proto__ as an own key, like JSON.parse", () => {
    const value = parsePartialJson("{\"__proto__\": {\"polluted\": true}, \"a\": 1") as Record<string, unknown>
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
    expect(Object.keys(value)).toEqual(["__proto__", "a"])
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it("is total on hostile input (deep nesting, long escaped strings, non-strings)", () => {
    expect(() => parsePartialJson("[".repeat(200_000))).not.toThrow()
    expect(() => parsePartialJson("{\"a\":".repeat(50_000))).not.toThrow()
    const escapes = `{"text": "${"a\\n".repeat(100_000)}`
    expect((parsePartialJson(escapes) as { text: string }).text.length).toBe(200_000)
    expect(parsePartialJson(42 as unknown as string)).toBeUndefined()
  })
})
