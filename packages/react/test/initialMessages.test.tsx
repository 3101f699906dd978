// @vitest-environment happy-dom
import { renderHook, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import { type InitialInputMessage, type ReactTamboThreadMessage, useTambo } from "../src/index.js"
import { connection, useServer, wrapperFor } from "./helpers.js"

const server = useServer()

const seed: Array<InitialInputMessage> = [
  { role: "system", content: [{ type: "text", text: "Answer in French." }] },
  { role: "assistant", content: [{ type: "text", text: "Bonjour ! Que puis-je faire ?" }] }
]

const summary = (messages: ReadonlyArray<ReactTamboThreadMessage>) =>
  messages.map((message) =>
    `${message.role}: ${message.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("")}`
  )

describe("TamboProvider's initialMessages", () => {
  it("shows them on a new conversation, sends them with the run that creates the thread, and keeps them", async () => {
    server().setScript([Script.pace(10), Script.text(["D'", "acc", "ord."])])
    const renders: Array<ReadonlyArray<string>> = []
    const { result } = renderHook(() => {
      const tambo = useTambo()
      renders.push(summary(tambo.messages))
      return tambo
    }, {
      wrapper: wrapperFor(connection(server(), { initialMessages: seed }))
    })
    expect(summary(result.current.messages)).toEqual(["system: Answer in French.", "assistant: Bonjour ! Que puis-je faire ?"])
    const thread = await result.current.sendMessage("Salut").thread
    await waitFor(() => expect(result.current.isIdle).toBe(true))
    expect(summary(result.current.messages)).toEqual([
      "system: Answer in French.",
      "assistant: Bonjour ! Que puis-je faire ?",
      "user: Salut",
      "assistant: D'accord."
    ])
    const [body] = server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs"))
    expect((body!.body as { thread: { initialMessages: unknown } }).thread.initialMessages).toEqual(seed)
    expect(result.current.currentThreadId).toBe(thread.id)
    // Shown all along: before the run, while it streams, and from the server's thread after it.
    expect(renders.length).toBeGreaterThan(3)
    for (const shown of renders) expect(shown.slice(0, 2)).toEqual(summary(result.current.messages).slice(0, 2))

    // A new conversation shows them again.
    result.current.startNewThread()
    await waitFor(() => expect(summary(result.current.messages)).toHaveLength(2))
  })
})
