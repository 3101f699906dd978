import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import { makeClient, useServer } from "./helpers.js"

// The API keeps a suggestion's metadata beside it; the testing server's generator can make some.
const server = useServer({
  suggestions: ({ maxSuggestions }) =>
    Array.from({ length: maxSuggestions }, (_, i) => ({
      title: `Idea ${i}`,
      detailedSuggestion: `Try idea ${i}`,
      metadata: { rank: i, source: "test" }
    }))
})

describe("suggestions", () => {
  it("carry the metadata the API keeps, generated and listed", async () => {
    server().setScript([Script.text("Ask me anything")])
    const client = makeClient(server())
    const thread = await client.run("suggest").thread
    const message = thread.messages.at(-1)!
    const generated = await client.generateSuggestions(message.id, thread.id, { maxSuggestions: 2 })
    expect(generated.map((s) => s.metadata)).toEqual([{ rank: 0, source: "test" }, { rank: 1, source: "test" }])
    const listed = await client.listSuggestions(message.id, thread.id)
    expect(listed.map((s) => [s.title, s.metadata])).toEqual([["Idea 0", { rank: 0, source: "test" }], ["Idea 1", { rank: 1, source: "test" }]])
  })
})
