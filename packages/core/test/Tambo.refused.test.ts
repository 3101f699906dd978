// A message refused before anything answered it (an HTTP error, a connection refused or never
// answered) was not taken: it leaves the store, on a new conversation as on a known thread, against
// the Tambo API as against an AG-UI agent, and the next message goes alone.
import { describe, expect, it } from "@effect/vitest"
import { AgUiAgent, HoldingProxy, Script } from "@tambo-effect/testing"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as AgUi from "../src/AgUi.js"
import type * as ClientState from "../src/ClientState.js"
import * as Tambo from "../src/Tambo.js"
import { closedPort, runAll, tamboLayer, useServer } from "./helpers.js"
import { storeEqualsServer } from "./storeEqualsServer.js"

const server = useServer()

const texts = (state: ClientState.ClientState) =>
  Object.values(state.threadMap).flatMap((t) =>
    t.thread.messages.flatMap((m) => m.content.flatMap((c) => (c.type === "text" ? [c.text] : []))))

type Refusal = "400" | "409" | "429" | "500" | "refused" | "timeout"
const refusals: ReadonlyArray<Refusal> = ["400", "409", "429", "500", "refused", "timeout"]
const expectedTag: Record<Refusal, string> = {
  "400": "ApiError",
  "409": "RunConflictError",
  "429": "ApiError",
  "500": "ApiError",
  refused: "TransportError",
  timeout: "TransportError"
}

/**
 * The bound of the first byte. It fires only where the test clock is moved past it: the timeout
 * case runs on the test clock (`it.effect`), which moves once the held request came, so no other
 * request is bound by how fast the machine answers; the other cases run on the real clock, where
 * it is far off.
 */
const firstByteTimeout = Duration.millis(200)

/** The test for `refusal`: on the test clock for the timeout, which the test moves, else live. */
const itFor = (refusal: Refusal) => refusal === "timeout" ? it.effect : it.live

/** The layer's options for `refusal`: the first byte bounded only where the test clock runs. */
const boundsOf = (refusal: Refusal) => ({ maxRetries: 1, ...(refusal === "timeout" ? { firstByteTimeout } : {}) })

/**
 * Runs "first" (on a known thread) then "hello", refused as `refusal` says, through a proxy in
 * front of `url` that answers, holds or is gone; returns the store and the known thread.
 */
const refuse = <R>(
  url: string,
  refusal: Refusal,
  known: boolean,
  layerOf: (url: string, refusal: Refusal) => import("effect/Layer").Layer<Tambo.Tambo, unknown, R>
) =>
  Effect.scoped(Effect.gen(function* () {
    const proxy = yield* HoldingProxy.scoped(url)
    return yield* Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = known ? (yield* runAll("first")).at(-1)!.threadId : undefined
      const target = threadId ?? "placeholder"
      const isRun = (r: HoldingProxy.ProxiedRequest) => r.method === "POST"
      let held: HoldingProxy.Held | undefined
      if (refusal === "refused") yield* Effect.promise(() => proxy.close())
      else if (refusal === "timeout") {
        // Never answered; not asked again (the server may have taken it).
        held = proxy.holdRequest(isRun)
      }
      else {
        const status = Number(refusal)
        const body = status === 409 ? { code: "CONCURRENT_RUN", message: "busy" } : { message: "no" }
        proxy.holdRequest(isRun).fail(status, body)
        // The 429 is asked again once (maxRetries: 1) and refused again.
        if (status === 429) proxy.holdRequest(isRun).fail(status, body, { "retry-after": "0" })
      }
      const running = yield* Effect.fork(Effect.flip(Stream.runDrain(tambo.run("hello", { threadId: target }))))
      if (held !== undefined) {
        yield* Effect.promise(() => held.arrived)
        yield* TestClock.adjust(firstByteTimeout)
      }
      const failed = yield* Fiber.join(running)
      expect(failed._tag).toBe(expectedTag[refusal])
      const state = yield* tambo.state
      expect(texts(state)).not.toContain("hello")
      return { state, threadId }
    }).pipe(Effect.provide(layerOf(proxy.url, refusal)))
  }))

describe("a message refused before any event, against the Tambo API", () => {
  const layerOf = (url: string, refusal: Refusal) => tamboLayer(server(), { tamboUrl: url, ...boundsOf(refusal) })

  for (const known of [false, true]) {
    for (const refusal of refusals) {
      itFor(refusal)(`${refusal}, ${known ? "on a known thread" : "on a new conversation"}: the message leaves the store`, () =>
        Effect.gen(function* () {
          server().setScript([Script.text("Hi.")])
          const { state, threadId } = yield* refuse(server().url, refusal, known, layerOf)
          if (threadId !== undefined && refusal !== "timeout") {
            yield* Effect.promise(() => storeEqualsServer(state, server(), threadId))
          }
          if (threadId === undefined) expect(state.threadMap["placeholder"]?.thread.messages ?? []).toEqual([])
        }))
    }
  }

  it.live("a new conversation whose first run was refused: the next message there goes alone", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      server().setScript((request) => request.text === "hello" ? [Script.httpError(500)] : [Script.text("Hi.")])
      yield* Effect.flip(runAll("hello", { threadId: "placeholder" }))
      const threadId = (yield* runAll("again", { threadId: "placeholder" })).at(-1)!.threadId
      const state = yield* tambo.state
      expect(texts(state)).toEqual(["again", "Hi."])
      yield* Effect.promise(() => storeEqualsServer(state, server(), threadId))
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("the API cannot be reached on a new conversation: the message leaves the store", () =>
    Effect.gen(function* () {
      const port = yield* closedPort
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const failed = yield* Effect.flip(runAll("hello"))
        expect(failed._tag).toBe("TransportError")
        expect(texts(yield* tambo.state)).toEqual([])
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: `http://127.0.0.1:${port}` })))
    }))
})

describe("a message refused before any event, against an AG-UI agent", () => {
  const layerOf = (url: string, refusal: Refusal) => AgUi.layer({ url, ...boundsOf(refusal) })

  for (const known of [false, true]) {
    for (const refusal of refusals.filter((r) => r !== "409")) {
      itFor(refusal)(`${refusal}, ${known ? "on a known thread" : "on a new conversation"}: the message leaves the store, the next run sends it no more`, () =>
        Effect.scoped(Effect.gen(function* () {
          const agent = yield* AgUiAgent.scoped({ script: AgUiAgent.scripts.text })
          const { state, threadId } = yield* refuse(agent.url, refusal, known, layerOf)
          const thread = threadId === undefined ? state.threadMap["placeholder"] : state.threadMap[threadId]
          expect(thread?.thread.messages.map((m) => m.role) ?? []).toEqual(known ? ["user", "assistant"] : [])
        })))
    }
  }

  it.live("a new conversation whose first run was refused: the next run sends its initial messages once and the new message alone", () =>
    Effect.scoped(Effect.gen(function* () {
      const agent = yield* AgUiAgent.scoped({
        script: (_request, { runIndex }) => runIndex === 0 ? [AgUiAgent.httpError(500, { message: "down" })] : [AgUiAgent.text("Here.")]
      })
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const seed = [{ role: "system" as const, content: [{ type: "text" as const, text: "Be terse." }] }]
        yield* Effect.flip(runAll("hello", { initialMessages: seed }))
        expect(texts(yield* tambo.state)).toEqual([])
        yield* runAll("again", { initialMessages: seed })
        expect(agent.requests[1]!.input!.messages.map((m) => [m.role, m.content])).toEqual([
          ["system", "Be terse."],
          ["user", "again"]
        ])
      }).pipe(Effect.provide(AgUi.layer({ url: agent.url })))
    })))
})
