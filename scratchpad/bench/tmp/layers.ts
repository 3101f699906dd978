import { Effect, Stream, Layer } from "effect"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { Tambo, TamboTransport, TamboConfig } from "@tambo-effect/core"
import { Script, startTestServer } from "@tambo-effect/testing"
const server = await startTestServer()
server.setScript([Script.text(Array.from({ length: 100_000 }, () => "tok "))])
const cfg = { apiKey: server.apiKey, tamboUrl: server.url, userKey: "b", maxRetries: 0 }
const transportLayer = TamboTransport.layer.pipe(Layer.provide(TamboConfig.layer(cfg)), Layer.provide(FetchHttpClient.layer))
for (let i = 0; i < 3; i++) {
  let t = performance.now()
  let chunks = 0
  const n = await Effect.runPromise(Effect.gen(function* () {
    const tr = yield* TamboTransport.TamboTransport
    return yield* Stream.runFold(Stream.mapChunks(tr.createRun({ _tag: "UserKey", userKey: "b" }, { message: { role: "user", content: [{ type: "text", text: "x" }] } }), (c) => { chunks++; return c }), 0, (n) => n + 1)
  }).pipe(Effect.provide(transportLayer)))
  console.log("transport", n, chunks, (performance.now() - t).toFixed(0))
  t = performance.now()
  const m = await Effect.runPromise(Effect.gen(function* () {
    const tambo = yield* Tambo.Tambo
    return yield* Stream.runFold(tambo.run("go"), 0, (n) => n + 1)
  }).pipe(Effect.provide(Tambo.layer(cfg))))
  console.log("tambo.run", m, (performance.now() - t).toFixed(0))
}
await server.close()
