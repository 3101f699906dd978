import { describe, expect, it } from "vitest"
import { applyPatch, type Operation, parsePointer } from "../src/internal/jsonPatch.js"

const prototypeKeys = () => Object.getOwnPropertyNames(Object.prototype).sort()

describe("applyPatch", () => {
  const doc = { a: 1, list: [1, 2, 3], nested: { deep: { x: "y" } }, "k/ey": 1, "t~ilde": 2 }

  const ok: ReadonlyArray<{ name: string; ops: ReadonlyArray<Operation>; expected: unknown }> = [
    { name: "add a key", ops: [{ op: "add", path: "/b", value: 2 }], expected: { ...doc, b: 2 } },
    { name: "add replaces an existing key", ops: [{ op: "add", path: "/a", value: 9 }], expected: { ...doc, a: 9 } },
    { name: "add appends with -", ops: [{ op: "add", path: "/list/-", value: 4 }], expected: { ...doc, list: [1, 2, 3, 4] } },
    { name: "add inserts at an index", ops: [{ op: "add", path: "/list/0", value: 0 }], expected: { ...doc, list: [0, 1, 2, 3] } },
    { name: "add at index == length", ops: [{ op: "add", path: "/list/3", value: 4 }], expected: { ...doc, list: [1, 2, 3, 4] } },
    { name: "add replaces the root", ops: [{ op: "add", path: "", value: { z: 1 } }], expected: { z: 1 } },
    { name: "remove a key", ops: [{ op: "remove", path: "/a" }], expected: { list: [1, 2, 3], nested: doc.nested, "k/ey": 1, "t~ilde": 2 } },
    { name: "remove an element", ops: [{ op: "remove", path: "/list/1" }], expected: { ...doc, list: [1, 3] } },
    { name: "replace deep", ops: [{ op: "replace", path: "/nested/deep/x", value: "z" }], expected: { ...doc, nested: { deep: { x: "z" } } } },
    { name: "replace the root", ops: [{ op: "replace", path: "", value: [1] }], expected: [1] },
    { name: "~1 escapes /", ops: [{ op: "replace", path: "/k~1ey", value: 5 }], expected: { ...doc, "k/ey": 5 } },
    { name: "~0 escapes ~", ops: [{ op: "replace", path: "/t~0ilde", value: 5 }], expected: { ...doc, "t~ilde": 5 } },
    { name: "move", ops: [{ op: "move", from: "/a", path: "/nested/a" }], expected: { list: [1, 2, 3], nested: { deep: { x: "y" }, a: 1 }, "k/ey": 1, "t~ilde": 2 } },
    { name: "move to itself", ops: [{ op: "move", from: "/a", path: "/a" }], expected: doc },
    { name: "move within an array", ops: [{ op: "move", from: "/list/0", path: "/list/-" }], expected: { ...doc, list: [2, 3, 1] } },
    { name: "copy", ops: [{ op: "copy", from: "/nested", path: "/copy" }], expected: { ...doc, copy: doc.nested } },
    { name: "test passes", ops: [{ op: "test", path: "/nested", value: { deep: { x: "y" } } }], expected: doc },
    {
      name: "several operations on one path",
      ops: [
        { op: "add", path: "/items", value: [] },
        { op: "add", path: "/items/-", value: { t: "a" } },
        { op: "add", path: "/items/-", value: { t: "b" } },
        { op: "replace", path: "/items/0/t", value: "A" }
      ],
      expected: { ...doc, items: [{ t: "A" }, { t: "b" }] }
    }
  ]

  it.each(ok)("$name", ({ expected, ops }) => {
    const before = structuredClone(doc)
    const result = applyPatch(doc, ops)
    expect(result).toEqual({ ok: true, value: expected })
    expect(doc).toEqual(before)
  })

  const failing: ReadonlyArray<{ name: string; ops: ReadonlyArray<Operation>; reason: RegExp; index?: number }> = [
    { name: "remove a missing key", ops: [{ op: "remove", path: "/missing" }], reason: /does not exist/ },
    { name: "replace a missing key", ops: [{ op: "replace", path: "/missing", value: 1 }], reason: /does not exist/ },
    { name: "add under a missing parent", ops: [{ op: "add", path: "/missing/x", value: 1 }], reason: /does not exist/ },
    { name: "add through a scalar", ops: [{ op: "add", path: "/a/x", value: 1 }], reason: /does not exist/ },
    { name: "index out of bounds", ops: [{ op: "add", path: "/list/9", value: 1 }], reason: /out of bounds/ },
    { name: "leading-zero index", ops: [{ op: "replace", path: "/list/01", value: 1 }], reason: /does not exist/ },
    { name: "- is only for add", ops: [{ op: "remove", path: "/list/-" }], reason: /does not exist/ },
    { name: "inherited key is not a path", ops: [{ op: "replace", path: "/toString", value: 1 }], reason: /does not exist/ },
    { name: "pointer without /", ops: [{ op: "add", path: "a", value: 1 }], reason: /start with/ },
    { name: "bad ~ escape", ops: [{ op: "add", path: "/a~2", value: 1 }], reason: /escape/ },
    { name: "missing value", ops: [{ op: "add", path: "/b" } as unknown as Operation], reason: /no value/ },
    { name: "unknown op", ops: [{ op: "merge", path: "/b", value: 1 } as unknown as Operation], reason: /unknown operation/ },
    { name: "test fails", ops: [{ op: "test", path: "/a", value: 2 }], reason: /test/ },
    { name: "move into own child", ops: [{ op: "move", from: "/nested", path: "/nested/deep/n" }], reason: /own child/ },
    { name: "remove the root", ops: [{ op: "remove", path: "" }], reason: /root/ },
    {
      name: "atomic: a later failure undoes earlier operations",
      ops: [{ op: "add", path: "/b", value: 1 }, { op: "remove", path: "/missing" }],
      reason: /does not exist/,
      index: 1
    }
  ]

  it.each(failing)("refuses: $name", ({ index, ops, reason }) => {
    const before = structuredClone(doc)
    const result = applyPatch(doc, ops)
    expect(result.ok).toBe(false)
    if (!result.ok) {
      expect(result.reason).toMatch(reason)
      expect(result.operationIndex).toBe(index ?? 0)
    }
    expect(doc).toEqual(before)
  })

  const hostile: ReadonlyArray<Operation> = [
    { op: "add", path: "/__proto__/polluted", value: true },
    { op: "replace", path: "/__proto__", value: { polluted: true } },
    { op: "add", path: "/constructor/prototype/polluted", value: true },
    { op: "add", path: "/nested/__proto__", value: { polluted: true } },
    { op: "add", path: "/prototype/x", value: true },
    { op: "copy", from: "/__proto__", path: "/x" },
    { op: "move", from: "/constructor", path: "/x" },
    { op: "add", path: "/nested/constructor", value: true },
    { op: "test", path: "/__proto__", value: {} }
  ]

  it.each(hostile)("refuses the hostile path $path", (op) => {
    const keys = prototypeKeys()
    const result = applyPatch({ nested: {} }, [op])
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.reason).toMatch(/forbidden/)
    expect(prototypeKeys()).toEqual(keys)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it("shares everything off the patched path", () => {
    const input = { a: { big: [1, 2, 3] }, b: { deep: { x: 1 } }, c: [{ id: 1 }, { id: 2 }] }
    const result = applyPatch(input, [{ op: "replace", path: "/b/deep/x", value: 2 }, { op: "add", path: "/c/1/n", value: 1 }])
    expect(result.ok).toBe(true)
    if (!result.ok) return
    const out = result.value as typeof input
    expect(out).not.toBe(input)
    expect(out.a).toBe(input.a)
    expect(out.b).not.toBe(input.b)
    expect(out.c[0]).toBe(input.c[0])
    expect(out.c[1]).not.toBe(input.c[1])
    expect(input.b.deep.x).toBe(1)
  })

  it("a copied value does not alias its source", () => {
    const result = applyPatch({ a: { x: 1 } }, [
      { op: "add", path: "/a/y", value: 2 },
      { op: "copy", from: "/a", path: "/b" },
      { op: "replace", path: "/b/x", value: 9 }
    ])
    expect(result).toEqual({ ok: true, value: { a: { x: 1, y: 2 }, b: { x: 9, y: 2 } } })
  })

  it("is total on absurd input", () => {
    let deep: unknown = 1
    for (let i = 0; i < 100_000; i++) deep = [deep]
    expect(() => applyPatch({}, [{ op: "test", path: "", value: deep }])).not.toThrow()
    expect(applyPatch({}, [null as unknown as Operation]).ok).toBe(false)
  })
})

describe("parsePointer", () => {
  it.each([
    ["", []],
    ["/", [""]],
    ["/a/b", ["a", "b"]],
    ["/a~1b/c~0d", ["a/b", "c~d"]],
    ["/~01", ["~1"]]
  ] as const)("%j", (pointer, tokens) => {
    expect(parsePointer(pointer)).toEqual({ ok: true, tokens })
  })

  it("parses a long pointer, and an invalid one, the same way every time", () => {
    const long = `/${"a".repeat(5_000)}/b~1c`
    expect(parsePointer(long)).toEqual({ ok: true, tokens: ["a".repeat(5_000), "b/c"] })
    expect(parsePointer(long)).toEqual(parsePointer(long))
    const hostile = `/${"a".repeat(5_000)}/__proto__`
    expect(parsePointer(hostile)).toMatchObject({ ok: false, reason: expect.stringContaining("__proto__") })
    expect(parsePointer(hostile)).toEqual(parsePointer(hostile))
  })
})
