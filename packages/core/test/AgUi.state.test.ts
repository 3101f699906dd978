// The AG-UI agent's shared state through the Tambo service (AgUi.layer, against the scripted
// agent on loopback): what the agent sets is kept on the thread and sent back with the next run,
// and so is what the app sets (Tambo.setAgentState).
import { describe, expect, it } from "@effect/vitest"
import { AgUiAgent, HoldingProxy } from "@tambo-effect/testing"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as AgUi from "../src/AgUi.js"
import * as ClientState from "../src/ClientState.js"
import * as Tambo from "../src/Tambo.js"

const withAgent = <A, E>(
  script: AgUiAgent.ScriptSource,
  f: (agent: AgUiAgent.AgUiAgent) => Effect.Effect<A, E, AgUi.Provided>
) =>
  Effect.scoped(Effect.gen(function*() {
    const agent = yield* AgUiAgent.scoped({ script })
    return yield* f(agent).pipe(Effect.provide(AgUi.layer({ url: agent.url })))
  }))

/** Runs `message` to its end; the id of the thread it ran on. */
const runOn = (message: string, threadId?: string) =>
  Effect.gen(function*() {
    const tambo = yield* Tambo.Tambo
    const last = yield* Stream.runLast(tambo.run(message, threadId === undefined ? {} : { threadId }))
    return Option.getOrThrow(last).threadId
  })

describe("the agent state of a thread, sent with each run", () => {
  it.live("what the agent's STATE_SNAPSHOT and STATE_DELTAs made it is on the thread and goes out with the next run", () =>
    withAgent(AgUiAgent.scripts.state, (agent) =>
      Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const threadId = yield* runOn("hello")
        expect(agent.requests[0]!.input!.state).toEqual({})
        const thread = Option.getOrThrow(yield* tambo.getThread(threadId))
        expect(thread.state).toEqual({ count: 2, items: ["a"] })
        expect(yield* tambo.getAgentState(threadId)).toEqual({ count: 2, items: ["a"] })
        yield* runOn("again", threadId)
        expect(agent.requests[1]!.input!.state).toEqual({ count: 2, items: ["a"] })
      })))

  it.live("what the app sets goes out with the next run; an updater gets the state as it is", () =>
    withAgent(AgUiAgent.scripts.text, (agent) =>
      Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const threadId = yield* runOn("hello")
        expect(yield* tambo.getAgentState(threadId)).toEqual({})
        expect(yield* tambo.setAgentState(threadId, { todo: ["buy milk"] })).toEqual({ todo: ["buy milk"] })
        const next = yield* tambo.setAgentState<{ readonly todo: ReadonlyArray<string> }>(
          threadId,
          (previous) => ({ todo: [...previous.todo, "call mum"] })
        )
        expect(next).toEqual({ todo: ["buy milk", "call mum"] })
        yield* runOn("again", threadId)
        expect(agent.requests[1]!.input!.state).toEqual({ todo: ["buy milk", "call mum"] })
      })))

  it.live("set on a new conversation (the current thread, before its first run), it goes with the first run and stays with its thread", () =>
    withAgent(AgUiAgent.scripts.text, (agent) =>
      Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        yield* tambo.setAgentState(yield* (yield* Tambo.Tambo).store.currentThreadId, { mode: "draft" })
        expect(yield* tambo.getAgentState()).toEqual({ mode: "draft" })
        const threadId = yield* runOn("hello")
        expect(agent.requests[0]!.input!.state).toEqual({ mode: "draft" })
        expect(yield* tambo.getAgentState(threadId)).toEqual({ mode: "draft" })
        // A new conversation starts without it.
        yield* tambo.startNewThread
        expect(yield* tambo.getAgentState()).toEqual({})
      })))

  it.live("the agent's STATE_DELTA applies to what the app set", () =>
    withAgent(
      [AgUiAgent.stateDelta([{ op: "add", path: "/seen", value: true }]), AgUiAgent.text("Noted.")],
      (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          yield* tambo.setAgentState(ClientState.PLACEHOLDER_THREAD_ID, { mode: "draft" })
          const threadId = yield* runOn("hello")
          expect(agent.requests[0]!.input!.state).toEqual({ mode: "draft" })
          expect(yield* tambo.getAgentState(threadId)).toEqual({ mode: "draft", seen: true })
        })
    ))

  describe("a state JSON cannot carry is refused with a ConfigError, and the state stays", () => {
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    const cases: ReadonlyArray<{ readonly name: string; readonly state: unknown; readonly where: string }> = [
      { name: "a BigInt", state: { n: 1n }, where: "/n" },
      { name: "a function", state: { items: [() => 1] }, where: "/items/0" },
      { name: "undefined", state: undefined, where: "(the state)" },
      { name: "a member that is undefined", state: { a: undefined }, where: "/a" },
      { name: "NaN", state: { n: Number.NaN }, where: "/n" },
      { name: "a Date", state: { at: new Date(0) }, where: "/at" },
      { name: "a Map", state: new Map(), where: "(the state)" },
      { name: "a cycle", state: cyclic, where: "/self" }
    ]
    it.live.each(cases)("$name", ({ state, where }) =>
      withAgent(AgUiAgent.scripts.text, (agent) =>
        Effect.gen(function*() {
          const tambo = yield* Tambo.Tambo
          const threadId = yield* runOn("hello")
          yield* tambo.setAgentState(threadId, { ok: true })
          const error = yield* Effect.flip(tambo.setAgentState(threadId, state))
          expect(error).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
          expect(error.message).toContain("setAgentState")
          expect(error.message).toContain(where)
          const fromUpdater = yield* Effect.flip(tambo.setAgentState(threadId, () => state))
          expect(fromUpdater).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
          expect(yield* tambo.getAgentState(threadId)).toEqual({ ok: true })
          yield* runOn("again", threadId)
          expect(agent.requests[1]!.input!.state).toEqual({ ok: true })
        })))
  })

  it.live("a thread the client does not know is refused with a ConfigError", () =>
    withAgent(AgUiAgent.scripts.text, () =>
      Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const set = yield* Effect.flip(tambo.setAgentState("thr_nowhere", {}))
        expect(set).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
        expect(set.message).toContain("thr_nowhere")
        const get = yield* Effect.flip(tambo.getAgentState("thr_nowhere"))
        expect(get).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
      })))

  it.live("the module accessors reach the service of the context", () =>
    withAgent(AgUiAgent.scripts.text, () =>
      Effect.gen(function*() {
        yield* Tambo.setAgentState(ClientState.PLACEHOLDER_THREAD_ID, { via: "accessor" })
        expect(yield* Tambo.getAgentState()).toEqual({ via: "accessor" })
      })))
})

describe("a new conversation (startNewThread): the next run sends it alone, and the store shows it alone", () => {
  /** The texts of a thread's messages, by role. */
  const conversationOf = (tambo: Tambo.Tambo.Service, threadId?: string) =>
    Effect.map(tambo.getThread(threadId), (thread) =>
      Option.getOrThrow(thread).messages.map((m) => [m.role, m.content.flatMap((c) => c.type === "text" ? [c.text] : []).join("")]))
  const sentBy = (agent: AgUiAgent.AgUiAgent, index: number) =>
    agent.requests[index]!.input!.messages.map((m) => [m.role, m.content])

  it.live("after a run that ended", () =>
    withAgent(AgUiAgent.scripts.state, (agent) =>
      Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const first = yield* runOn("hello")
        yield* tambo.startNewThread
        expect(yield* conversationOf(tambo)).toEqual([])
        expect(yield* tambo.getAgentState()).toEqual({})
        const second = yield* runOn("again")
        expect(second).not.toBe(first)
        expect(sentBy(agent, 1)).toEqual([["user", "again"]])
        expect(agent.requests[1]!.input!.state).toEqual({})
        expect(agent.requests[1]!.input!.threadId).toBe(second)
        expect((yield* conversationOf(tambo)).map(([role]) => role)).toEqual(["user", "assistant"])
        expect((yield* conversationOf(tambo))[0]).toEqual(["user", "again"])
        expect((yield* conversationOf(tambo, first))[0]).toEqual(["user", "hello"])
        // The agent keeps nothing: the client's copy is the only one, so it is not forgotten.
        expect(yield* tambo.forgetThread(first)).toBe(false)
        expect((yield* conversationOf(tambo, first))[0]).toEqual(["user", "hello"])
      })))

  it.live("while the first conversation's run still streams: each conversation holds its own messages alone", () =>
    Effect.scoped(Effect.gen(function*() {
      const agent = yield* AgUiAgent.scoped({ script: AgUiAgent.scripts.text })
      const proxy = yield* HoldingProxy.scoped(agent.url)
      yield* Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const held = proxy.holdBody(() => true)
        const firstRun = yield* Effect.fork(runOn("hello"))
        yield* Effect.promise(() => held.arrived)
        yield* tambo.startNewThread
        expect(yield* conversationOf(tambo)).toEqual([])
        const second = yield* runOn("again")
        expect(sentBy(agent, 1)).toEqual([["user", "again"]])
        held.release()
        const first = yield* Fiber.join(firstRun)
        expect(first).not.toBe(second)
        expect(yield* tambo.store.currentThreadId).toBe(second)
        expect((yield* conversationOf(tambo, second)).map(([role, text]) => role === "user" ? text : role)).toEqual(["again", "assistant"])
        expect((yield* conversationOf(tambo, first)).map(([role, text]) => role === "user" ? text : role)).toEqual(["hello", "assistant"])
      }).pipe(Effect.provide(AgUi.layer({ url: proxy.url })))
    })))
})
