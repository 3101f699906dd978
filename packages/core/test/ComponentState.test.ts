import { Script, type TestServer } from "@tambo-effect/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Tambo from "../src/Tambo.js"
import type * as Types from "../src/Types.js"
import { expectStoreEqualsServer, runAll, tamboLayer, useServer, useTickingServer } from "./helpers.js"

const server = useServer()
const ticking = useTickingServer()

const componentState = (thread: Types.TamboThread | undefined, componentId: string): unknown => {
  for (const message of thread?.messages ?? []) {
    for (const block of message.content) if (block.type === "component" && block.id === componentId) return block.state
  }
  return undefined
}

const serverState = (threadId: string, componentId: string): unknown => {
  for (const message of server().threads.get(threadId)?.messages ?? []) {
    for (const block of message.content) {
      if (block.type === "component" && block.id === componentId) return block.state
    }
  }
  return undefined
}

/** A run that renders `comp_card`; returns its thread's id. */
const renderCardOn = (on: () => TestServer) =>
  Effect.gen(function* () {
    on().setScript([Script.component("Card", { title: "hi" }, { id: "comp_card" })])
    const events = yield* runAll("show a card")
    return events[events.length - 1]!.threadId
  })
const renderCard = renderCardOn(server)

describe("component state", () => {
  it.live("replaces and patches a component's state on the server and in the store", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* renderCard

      const replaced = yield* tambo.updateComponentState(threadId, "comp_card", { state: { favourite: true, notes: [] } })
      expect(replaced).toEqual({ favourite: true, notes: [] })
      expect(serverState(threadId, "comp_card")).toEqual({ favourite: true, notes: [] })
      expect(componentState((yield* tambo.getThread(threadId)).pipe((o) => o._tag === "Some" ? o.value : undefined), "comp_card"))
        .toEqual({ favourite: true, notes: [] })

      const patched = yield* Tambo.updateComponentState(threadId, "comp_card", {
        patch: [{ op: "add", path: "/notes/-", value: "rainy" }, { op: "replace", path: "/favourite", value: false }]
      })
      expect(patched).toEqual({ favourite: false, notes: ["rainy"] })
      const local = yield* tambo.getThread(threadId)
      expect(componentState(local._tag === "Some" ? local.value : undefined, "comp_card")).toEqual(patched)

      const request = server().requests.filter((r) => r.path.endsWith("/components/comp_card/state"))
      expect(request.map((r) => [r.method, r.body])).toEqual([
        ["POST", { userKey: "user-1", state: { favourite: true, notes: [] } }],
        ["POST", {
          userKey: "user-1",
          patch: [{ op: "add", path: "/notes/-", value: "rainy" }, { op: "replace", path: "/favourite", value: false }]
        }]
      ])
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("is there when the thread is loaded again, and the model sees it in the next run", () =>
    Effect.gen(function* () {
      const threadId = yield* renderCard.pipe(Effect.provide(tamboLayer(server())))
      yield* Tambo.updateComponentState(threadId, "comp_card", { state: { favourite: true } }).pipe(
        Effect.provide(tamboLayer(server()))
      )
      // Another client (a reload) reads the thread from the server.
      const loaded = yield* Effect.flatMap(Tambo.Tambo, (tambo) => tambo.fetchThread(threadId)).pipe(
        Effect.provide(tamboLayer(server()))
      )
      expect(componentState(loaded, "comp_card")).toEqual({ favourite: true })

      const seen: Array<Script.RunRequest> = []
      server().setScript((request) => {
        seen.push(request)
        return [Script.text("noted")]
      })
      yield* runAll("what did I pick?", { threadId }).pipe(Effect.provide(tamboLayer(server())))
      const history = seen[0]!.history.flatMap((message) => message.content)
      expect(history.find((block) => block.type === "component")).toMatchObject({ id: "comp_card", state: { favourite: true } })
    }))

  it.live("refuses a bad update before sending it, with a ConfigError", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* renderCard
      const before = server().requests.length
      const attempts: ReadonlyArray<[string, unknown]> = [
        ["both", { state: {}, patch: [{ op: "remove", path: "/a" }] }],
        ["neither", {}],
        ["array state", { state: [1, 2] }],
        ["empty patch", { patch: [] }],
        ["not an operation", { patch: [{ op: "frobnicate", path: "/a" }] }]
      ]
      for (const [, update] of attempts) {
        const result = yield* Effect.either(tambo.updateComponentState(threadId, "comp_card", update as never))
        expect(Either.isLeft(result) && result.left).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
      }
      const empty = yield* Effect.either(tambo.updateComponentState(threadId, "", { state: {} }))
      expect(Either.isLeft(empty) && empty.left).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
      expect(server().requests.length).toBe(before)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("reports what the API refuses: an unknown component, an impossible patch", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* renderCard
      const unknown = yield* Effect.either(tambo.updateComponentState(threadId, "comp_nope", { state: {} }))
      expect(Either.isLeft(unknown) && unknown.left).toMatchObject({ _tag: "ApiError", status: 404 })
      const impossible = yield* Effect.either(
        tambo.updateComponentState(threadId, "comp_card", { patch: [{ op: "remove", path: "/missing" }] })
      )
      expect(Either.isLeft(impossible) && impossible.left).toMatchObject({ _tag: "ApiError", status: 400 })
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("leaves the thread in the store as the server has it: the time it changed at too", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* renderCardOn(ticking)
      yield* tambo.updateComponentState(threadId, "comp_card", { state: { favourite: true } })
      yield* expectStoreEqualsServer(tambo, ticking(), threadId)
      yield* tambo.updateComponentState(threadId, "comp_card", { patch: [{ op: "add", path: "/notes", value: [] }] })
      yield* expectStoreEqualsServer(tambo, ticking(), threadId)
    }).pipe(Effect.provide(tamboLayer(ticking()))))

  it.live("of a component another tab's run rendered since the store read the thread: the store takes the thread as the server has it, the component in it", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      ticking().setScript([Script.text("hello")])
      const threadId = (yield* runAll("hi")).at(-1)!.threadId
      yield* Effect.gen(function* () {
        yield* Effect.flatMap(Tambo.Tambo, (other) => other.fetchThread(threadId))
        ticking().setScript([Script.component("Card", { title: "hi" }, { id: "comp_card" })])
        yield* runAll("show a card", { threadId })
      }).pipe(Effect.provide(tamboLayer(ticking())))
      yield* tambo.updateComponentState(threadId, "comp_card", { state: { favourite: true } })
      expect(componentState(Option.getOrUndefined(yield* tambo.getThread(threadId)), "comp_card")).toEqual({ favourite: true })
      yield* expectStoreEqualsServer(tambo, ticking(), threadId)
    }).pipe(Effect.provide(tamboLayer(ticking()))))
})
