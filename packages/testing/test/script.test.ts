// The DSL's pure helpers, and scripts that are mistakes.
import TamboAI from "@tambo-ai/typescript-sdk"
import { afterEach, describe, expect, it, vi } from "vitest"
import { Script, startTestServer, type TestServer } from "../src/index.js"
import { client, field, rejection, USER, userMessage } from "./helpers.js"

describe("propsDeltas", () => {
  it("adds each new top-level key, then replaces its whole value on every change", () => {
    expect(Script.propsDeltas([
      { title: "W" },
      { title: "Weather" },
      { title: "Weather", days: [1] },
      { title: "Weather", days: [1, 2] },
      { title: "Weather", days: [1, 2] },
      { days: [1, 2] }
    ])).toEqual([
      { operations: [{ op: "add", path: "/title", value: "W" }], streamingStatus: { title: "started" } },
      { operations: [{ op: "replace", path: "/title", value: "Weather" }], streamingStatus: { title: "streaming" } },
      { operations: [{ op: "add", path: "/days", value: [1] }], streamingStatus: { title: "done", days: "started" } },
      { operations: [{ op: "replace", path: "/days", value: [1, 2] }], streamingStatus: { title: "done", days: "streaming" } },
      // An unchanged snapshot yields no delta; a key that disappears is removed.
      { operations: [{ op: "remove", path: "/title" }], streamingStatus: { days: "streaming" } }
    ])
  })

  it("escapes JSON Pointer segments", () => {
    expect(Script.propsDeltas([{ "a/b~c": 1 }])[0]!.operations).toEqual([{ op: "add", path: "/a~1b~0c", value: 1 }])
  })
})

describe("constructors", () => {
  it("chunks strings and tool arguments", () => {
    expect(Script.chunks("abcdefg", 3)).toEqual(["abc", "def", "g"])
    expect(() => Script.chunks("abc", 0)).toThrow(RangeError)
    expect(Script.toolCall("t", { a: 1 }, { chunkSize: 4 }).argumentDeltas).toEqual(["{\"a\"", ":1}"])
    expect(Script.toolCall("t", "{broken").argumentDeltas).toEqual(["{broken"])
  })

  it("defaults runError to what a failing model provider produces", () => {
    expect(Script.runError()).toEqual({
      _tag: "RunError",
      message: "An internal error occurred",
      code: "INTERNAL_ERROR",
      category: "server_error",
      isRetryable: false,
      status: 500,
      storedMessage: "An internal error occurred",
      twice: true,
      keepPartial: true
    })
    expect(Script.runError({ status: null }).status).toBeUndefined()
  })
})

describe("strictArgs", () => {
  const schema = {
    type: "object",
    properties: {
      query: { type: "string" },
      limit: { type: "number" },
      filter: {
        anyOf: [{ type: "object", properties: { from: { type: "string" }, to: { type: "string" } } }, { type: "null" }]
      },
      sort: { type: "array", items: { type: "object", properties: { field: { type: "string" }, desc: { type: "boolean" } } } }
    },
    required: ["query"]
  }

  it("sends null for each property left out, through nested objects, unions and arrays", () => {
    expect(Script.strictArgs(schema, { query: "tambo", filter: { from: "a" }, sort: [{ field: "date" }] })).toEqual({
      query: "tambo",
      limit: null,
      filter: { from: "a", to: null },
      sort: [{ field: "date", desc: null }]
    })
    expect(Script.strictArgs(schema, { query: "x" })).toEqual({ query: "x", limit: null, filter: null, sort: null })
  })

  it("keeps what it cannot place, and leaves non-objects alone", () => {
    expect(Script.strictArgs(schema, { query: "x", extra: 1, limit: 2, filter: null, sort: [] })).toEqual({
      query: "x",
      limit: 2,
      filter: null,
      sort: [],
      extra: 1
    })
    expect(Script.strictArgs(schema, "not an object")).toBe("not an object")
    expect(Script.strictArgs(undefined, { a: 1 })).toEqual({ a: 1 })
  })
})

describe("invalid scripts", () => {
  let server: TestServer | undefined
  afterEach(() => server?.close())

  it("answer 500 when httpError is not the first step of its round, or the script throws", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined)
    server = await startTestServer({ script: [Script.text("a"), Script.httpError(503)] })
    const misplaced = await rejection(client(server).threads.runs.create({ message: userMessage("Hi"), thread: { userKey: USER } }))
    expect(misplaced).toBeInstanceOf(TamboAI.InternalServerError)
    expect(field(misplaced, "error")).toEqual({ statusCode: 500, message: "Internal server error" })

    server.setScript(() => {
      throw new Error("bug in the test")
    })
    const thrown = await rejection(client(server).threads.runs.create({ message: userMessage("Hi"), thread: { userKey: USER } }))
    expect(thrown).toBeInstanceOf(TamboAI.InternalServerError)
    expect(logged).toHaveBeenCalledTimes(2)
    // The run lock was released: the thread is usable.
    const [thread] = server.threads.list()
    expect(thread).toMatchObject({ runStatus: "idle" })
    logged.mockRestore()
  })
})
