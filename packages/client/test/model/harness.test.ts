// Tests of the model's own machinery: its commands reach the paths they are named for, and its
// store comparison sees what it must and ignores only what it lists.
import { Script, type TestServer } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import type { ClientState } from "../../src/index.js"
import { makeClient, useServer } from "../helpers.js"
import { type Command, replay, type ToolMode } from "./harness.js"
import { storeMatchesServer } from "./storeMatchesServer.js"

/** The tool results the server stored, as [isError, text]. */
const storedResults = (server: TestServer) =>
  server.threads.list().flatMap((thread) =>
    thread.messages.flatMap((message) =>
      message.content.flatMap((block) =>
        block.type === "tool_result" ? [[block.isError === true, block.content.map((c) => (c.type === "text" ? c.text : "")).join("")]] : []
      )
    )
  )

const toolRound = (mode: ToolMode, decision: "approve" | "approveEdited" | "deny" = "approve"): Command => ({
  kind: "tools",
  target: "current",
  mode,
  decision,
  calls: 1,
  reuseIds: false
})

describe("the model's commands", () => {
  it.each([
    ["a tool that returns", toolRound("ok"), false, /^\{"thread":"thr_[^"]+","toolCallId":"call_\w+","n":1\}$/],
    ["a tool that throws", toolRound("throw"), true, /probe failed n=1 thread=thr_/],
    ["a tool that hangs past its timeout", toolRound("hang"), true, /did not finish within 40ms/],
    ["an approved call", toolRound("approval", "approve"), false, /"n":1\}$/],
    ["a call approved with edited arguments", toolRound("approval", "approveEdited"), false, /"edited":true/],
    ["a denied call", toolRound("approval", "deny"), true, /denied/]
  ] as const)("%s reaches the server as its result", async (_, command, isError, text) => {
    let results: Array<[boolean, string]> = []
    await replay([command], [], (server) => (results = storedResults(server) as Array<[boolean, string]>))
    expect(results).toHaveLength(1)
    expect(results[0]![0]).toBe(isError)
    expect(results[0]![1]).toMatch(text)
  })

  it("a manual continuation answers every call with the caller's result", async () => {
    let results: Array<[boolean, string]> = []
    await replay([{ kind: "manual", target: "current", calls: 2, reuseIds: true }], [], (server) =>
      (results = storedResults(server) as Array<[boolean, string]>))
    expect(results.map(([error, text]) => [error, JSON.parse(text).toolCallId])).toEqual([[false, "call_0"], [false, "call_1"]])
  })
})

describe("storeMatchesServer", () => {
  const server = useServer()

  it("holds for a thread loaded from the server, and fails on any difference in what the server returns", async () => {
    const seeded = server().threads.create({
      userKey: "user-1",
      name: "Seeded",
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: [{ type: "text", text: "Hello" }, { type: "component", id: "c1", name: "Card", props: { title: "a" } }] }
      ]
    })
    server().setScript([Script.text("unused")])
    const client = makeClient(server())
    await client.switchThread(seeded.id)
    const state = client.getState()
    await storeMatchesServer(state, server(), seeded.id)

    const changed = (edit: (thread: ClientState["threadMap"][string]["thread"]) => void): ClientState => {
      const copy = structuredClone(state)
      edit(copy.threadMap[seeded.id]!.thread)
      return copy
    }
    await expect(storeMatchesServer(changed((t) => (t.messages[0]!.content = [{ type: "text", text: "Hey" }])), server(), seeded.id)).rejects.toThrow()
    await expect(storeMatchesServer(changed((t) => (t.messages[1]!.id = "local_1")), server(), seeded.id)).rejects.toThrow()
    await expect(storeMatchesServer(changed((t) => (t.lastRunCancelled = true)), server(), seeded.id)).rejects.toThrow()
    await expect(storeMatchesServer(changed((t) => t.messages.pop()), server(), seeded.id)).rejects.toThrow()
    // What only the client keeps does not count.
    await storeMatchesServer(changed((t) => (t.messages[1]!.reasoning = ["thinking"])), server(), seeded.id)
  })
})
