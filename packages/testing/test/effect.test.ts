// The Effect API: TestServer as a service from a Layer, and a scoped server.
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { Script, TestServer } from "../src/index.js"
import { frames, parseFrame, post, types, USER, userMessage } from "./helpers.js"

layer(TestServer.layer({ script: [Script.text("from a layer")] }))("TestServer.layer", (it) => {
  it.effect("provides a running server as a service", () =>
    Effect.gen(function* () {
      const server = yield* TestServer
      const body = yield* Effect.promise(() =>
        post(server, "/v1/threads/runs", { message: userMessage("Hi"), thread: { userKey: USER } }).then((response) => response.text())
      )
      const events = frames(body).map(parseFrame)
      expect(types(events)).toEqual(["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"])
      expect(events[2]).toMatchObject({ delta: "from a layer" })
      expect(server.requests.map((request) => request.path)).toContain("/v1/threads/runs")
    }))
})

describe("TestServer.scoped", () => {
  it.effect("closes the server when its scope closes", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const server = yield* TestServer.scoped().pipe(Scope.extend(scope))
      const status = yield* Effect.promise(() =>
        fetch(`${server.url}/v1/threads?userKey=${USER}`, { headers: { "x-api-key": server.apiKey } }).then((response) => response.status)
      )
      expect(status).toBe(200)
      yield* Scope.close(scope, Exit.void)
      const after = yield* Effect.promise(() => fetch(`${server.url}/v1/threads`).then(() => "reachable", () => "refused"))
      expect(after).toBe("refused")
    }))

  it.scoped("fails with a TestServerError when the port is taken", () =>
    Effect.gen(function* () {
      const first = yield* TestServer.scoped()
      const error = yield* TestServer.scoped({ port: first.port }).pipe(Effect.flip)
      expect(error._tag).toBe("TestServerError")
      expect(error.reason).toBe("ListenFailed")
      expect(error.message).toContain("EADDRINUSE")
    }))
})
