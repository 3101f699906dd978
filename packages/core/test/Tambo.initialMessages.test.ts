import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { InitialInputMessage } from "../src/Types.js"
import { runAll, tamboLayer, useServer } from "./helpers.js"

const server = useServer()

const seed: ReadonlyArray<InitialInputMessage> = [
  { role: "system", content: [{ type: "text", text: "You are a terse assistant." }] },
  { role: "assistant", content: [{ type: "text", text: "Hi! Ask me anything." }] }
]

const runBodies = () =>
  server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs")).map((r) => r.body as Record<string, any>)

describe("Tambo.run with initialMessages", () => {
  it.live("sends them as the new thread's initialMessages, and not on a thread that exists", () =>
    Effect.gen(function* () {
      server().setScript([Script.text("ok")])
      const events = yield* runAll("hi", { initialMessages: seed })
      const threadId = events.at(-1)!.threadId
      yield* runAll("again", { threadId, initialMessages: seed })
      const [create, onThread] = runBodies()
      expect(create!["thread"]).toEqual({ userKey: "user-1", initialMessages: seed })
      expect(onThread!["initialMessages"]).toBeUndefined()
      expect(onThread!["thread"]).toBeUndefined()
      // The server seeded the thread with them, before the user's message.
      const stored = server().threads.get(threadId)!.messages.map((m) => m.role)
      expect(stored.slice(0, 3)).toEqual(["system", "assistant", "user"])
    }).pipe(Effect.provide(tamboLayer(server()))))
})
