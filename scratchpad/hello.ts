/**
 * A first script: the scripted Tambo server on loopback, one run through the
 * Promise client and one through core's Effect API. A copy of this file is
 * where a script of your own starts; any file in `scratchpad/` resolves
 * `effect`, `@tambo-effect/core`, `@tambo-effect/client` and
 * `@tambo-effect/testing` to the workspace's sources.
 *
 *   pnpm scratch scratchpad/hello.ts
 */
import { TamboClient } from "@tambo-effect/client"
import { Tambo } from "@tambo-effect/core"
import { Script, startTestServer } from "@tambo-effect/testing"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

const server = await startTestServer({ script: [Script.text(["Hello", " from", " the", " testing", " server."])] })
try {
  // The Promise client: what a plain TypeScript app writes.
  const client = new TamboClient({ apiKey: server.apiKey, tamboUrl: server.url, userKey: "hello" })
  let text = ""
  for await (const { event } of client.run("Hi!")) {
    if (event.type === "TEXT_MESSAGE_CONTENT") text += event.delta
  }
  console.log(`client: ${text}`)
  await client.destroy()

  // Core: the same run as an Effect Stream, with the Layer built from the same options.
  const reply = await Effect.runPromise(
    Effect.gen(function*() {
      const tambo = yield* Tambo.Tambo
      return yield* tambo.run("Hi again!").pipe(
        Stream.runFold("", (text, { event }) => (event.type === "TEXT_MESSAGE_CONTENT" ? text + event.delta : text))
      )
    }).pipe(Effect.provide(Tambo.layer({ apiKey: server.apiKey, tamboUrl: server.url, userKey: "hello" })))
  )
  console.log(`core: ${reply}`)
} finally {
  await server.close()
}
