import { describe, expect, it } from "@effect/vitest"
import { HoldingProxy, Script } from "@tambo-effect/testing"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { isLocalThreadId } from "../src/ClientState.js"
import * as Tambo from "../src/Tambo.js"
import { expectStoreEqualsServer, runAll, tamboLayer, textsOf, useServer } from "./helpers.js"
import { cancelledByTheClient, stopBeforeAnswerOn, until } from "./stopBeforeAnswer.js"

const server = useServer()

const { aThread, stopBeforeAnswer } = stopBeforeAnswerOn(server)

describe("a Stop before the server answered the run's request", () => {
  it.live("on a thread, the answer coming while the Stop waits: the server cancels the run it names, the message stays as the server has it, and the next message runs", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* aThread
      const { answer, run, stopping } = yield* stopBeforeAnswer(tambo, "slow", threadId)
      answer([Script.text("slow..."), Script.hang()])
      yield* Fiber.join(stopping)
      cancelledByTheClient(yield* Fiber.join(run))
      expect(server().cancels.map((c) => [c.threadId, c.reason])).toEqual([[threadId, "user_cancelled"]])
      expect(server().threads.get(threadId)?.runStatus).toBe("idle")
      expect(yield* textsOf(tambo, threadId)).toContain("slow")
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      const next = yield* runAll("next", { threadId })
      expect(next.at(-1)!.event.type).toBe("RUN_FINISHED")
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("on a new conversation, the answer coming while the Stop waits: the server cancels the run on the thread it names, which the conversation becomes, and the next message goes there", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const { answer, run, stopping } = yield* stopBeforeAnswer(tambo, "slow")
      answer([Script.text("slow..."), Script.hang()])
      yield* Fiber.join(stopping)
      cancelledByTheClient(yield* Fiber.join(run))
      const threadId = (yield* tambo.state).currentThreadId
      expect(isLocalThreadId(threadId)).toBe(false)
      expect(server().cancels.map((c) => [c.threadId, c.reason])).toEqual([[threadId, "user_cancelled"]])
      expect(yield* textsOf(tambo, threadId)).toContain("slow")
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      const next = yield* runAll("next", { threadId })
      expect(next.at(-1)!.threadId).toBe(threadId)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("on a thread, the request refused while the Stop waits: the run ends cancelled, as the Stop asked, nothing is left running, and the next message runs", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* aThread
      const { answer, run, stopping } = yield* stopBeforeAnswer(tambo, "refused", threadId)
      answer([Script.httpError(503, { message: "busy" })])
      yield* Fiber.join(stopping)
      cancelledByTheClient(yield* Fiber.join(run))
      expect(server().cancels).toEqual([])
      expect(server().threads.get(threadId)?.runStatus).toBe("idle")
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      const next = yield* runAll("next", { threadId })
      expect(next.at(-1)!.event.type).toBe("RUN_FINISHED")
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("on a thread, no answer within the Stop's bound: the connection closes, the server cancels the run when it notices, the store then equals the server, the message stays as the server has it, and the next message runs", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* aThread
      const { run, stopping } = yield* stopBeforeAnswer(tambo, "never", threadId)
      yield* Fiber.join(stopping)
      cancelledByTheClient(yield* Fiber.join(run))
      yield* until(() => server().cancels.length > 0)
      expect(server().cancels.map((c) => [c.threadId, c.reason])).toEqual([[threadId, "connection_closed"]])
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      const next = yield* runAll("next", { threadId })
      expect(next.at(-1)!.event.type).toBe("RUN_FINISHED")
      expect(yield* textsOf(tambo, threadId)).toEqual(["first", "hi", "never", "next", "re: next"])
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live.each([503, 409])("on a new conversation, the request refused (%i) while the Stop waits: the run ends cancelled, and the conversation keeps no message the server does not have", (status) =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const { answer, run, stopping } = yield* stopBeforeAnswer(tambo, "refused")
      answer([Script.httpError(status, { message: "busy" })])
      yield* Fiber.join(stopping)
      cancelledByTheClient(yield* Fiber.join(run))
      const threadId = (yield* tambo.state).currentThreadId
      expect(server().threads.list().flatMap((thread) => thread.messages)).toEqual([])
      expect(yield* textsOf(tambo, threadId)).not.toContain("refused")
      const next = yield* runAll("next")
      const named = next.at(-1)!.threadId
      expect(yield* textsOf(tambo, named)).toEqual(["next", "re: next"])
      yield* expectStoreEqualsServer(tambo, server(), named)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("on a new conversation, no answer within the Stop's bound: the conversation becomes the thread the message landed in, which the server cancelled the run on, and the next message goes there", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const { run, stopping } = yield* stopBeforeAnswer(tambo, "never")
      yield* Fiber.join(stopping)
      cancelledByTheClient(yield* Fiber.join(run))
      yield* until(() => server().cancels.length > 0)
      expect(server().cancels).toHaveLength(1)
      const threadId = (yield* tambo.state).currentThreadId
      expect(server().threads.list().map((thread) => thread.id)).toEqual([threadId])
      expect(yield* textsOf(tambo, threadId)).toContain("never")
      const next = yield* runAll("next")
      expect(next.at(-1)!.threadId).toBe(threadId)
      expect(server().threads.list()).toHaveLength(1)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))
})

describe("an interruption before the server answered a new conversation's request", () => {
  const server = useServer()
  const { holdingAnswerTo } = stopBeforeAnswerOn(server)

  it.live("the server took it: the conversation becomes the thread the message landed in, nothing runs there any more, and the next message goes there", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const { arrived } = yield* holdingAnswerTo("taken")
      const run = yield* Effect.fork(Effect.either(runAll("taken")))
      yield* arrived
      yield* Fiber.interrupt(run)
      const threadId = (yield* tambo.state).currentThreadId
      expect(server().threads.list().map((thread) => thread.id)).toEqual([threadId])
      expect(yield* textsOf(tambo, threadId)).toContain("taken")
      yield* until(() => server().threads.get(threadId)?.runStatus === "idle")
      const next = yield* runAll("next")
      expect(next.at(-1)!.threadId).toBe(threadId)
      expect(server().threads.list()).toHaveLength(1)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))
})

describe("a Stop before the server answered a new conversation's request (the server notices a closed connection on its next write, as the Tambo API)", () => {
  const server = useServer({ noticeClosedConnection: "onNextWrite" })
  const { stopBeforeAnswer } = stopBeforeAnswerOn(server)

  it.live("no answer within the Stop's bound: the run still going on the thread the message landed in is cancelled by its id, and the conversation becomes that thread", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const { run, stopping } = yield* stopBeforeAnswer(tambo, "never")
      yield* Fiber.join(stopping)
      cancelledByTheClient(yield* Fiber.join(run))
      const threadId = (yield* tambo.state).currentThreadId
      expect(server().cancels.map((c) => [c.threadId, c.reason])).toEqual([[threadId, "user_cancelled"]])
      expect(server().threads.get(threadId)?.runStatus).toBe("idle")
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      const next = yield* runAll("next")
      expect(next.at(-1)!.threadId).toBe(threadId)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("no answer within the Stop's bound, another client's thread holding the same message made meanwhile: the client cannot tell which, and the Stop ends the run as before", () =>
    Effect.gen(function* () {
      server().setScript((request) => [Script.text(`re: ${request.text}`)])
      yield* Effect.provide(runAll("never"), tamboLayer(server()))
      const tambo = yield* Tambo.Tambo
      const { run, stopping } = yield* stopBeforeAnswer(tambo, "never")
      yield* Fiber.join(stopping)
      cancelledByTheClient(yield* Fiber.join(run))
      expect(isLocalThreadId((yield* tambo.state).currentThreadId)).toBe(true)
      expect(server().cancels).toEqual([])
    }).pipe(Effect.provide(tamboLayer(server()))))
})

describe("a Stop before a new conversation's request reached the server (held on its way), the request let go only once the run ended", () => {
  const server = useServer()

  const isNewRun = (request: HoldingProxy.ProxiedRequest) => request.method === "POST" && request.path === "/v1/threads/runs"

  /**
   * `body` once a new conversation's run of "lost", held on its way to the server, was stopped by
   * `stop` and its request let go after the proxy saw the client go: with `late`, it reaches the
   * server then, as a request on its way to a slow server does; without, it reaches nothing.
   */
  const stoppedBeforeReaching = <A, E>(
    stop: "cancelRun" | "interruption",
    late: boolean,
    body: (tambo: Tambo.Tambo.Service) => Effect.Effect<A, E, Tambo.Tambo>
  ) =>
    Effect.scoped(Effect.gen(function* () {
      server().setScript((request) => [Script.text(`re: ${request.text}`)])
      const proxy = yield* HoldingProxy.scoped(server())
      return yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const held = proxy.holdRequest(isNewRun, { forwardAfterClientGone: late })
        const run = yield* Effect.fork(Effect.either(runAll("lost")))
        yield* Effect.promise(() => held.arrived)
        if (stop === "cancelRun") {
          yield* tambo.cancelRun()
          cancelledByTheClient(yield* Fiber.join(run))
        } else {
          yield* Fiber.interrupt(run)
        }
        yield* until(() => proxy.abandoned() > 0)
        const threadId = (yield* tambo.state).currentThreadId
        expect(yield* textsOf(tambo, threadId)).not.toContain("lost")
        held.release()
        return yield* body(tambo)
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url })))
    }))

  it.live.each(["cancelRun", "interruption"] as const)("%s: no thread of the server holds the message, the conversation keeps none the server does not have, the request let go reaches nothing, and the next message runs", (stop) =>
    stoppedBeforeReaching(stop, false, (tambo) =>
      Effect.gen(function* () {
        const next = yield* runAll("next")
        const named = next.at(-1)!.threadId
        expect(yield* textsOf(tambo, named)).toEqual(["next", "re: next"])
        expect(server().threads.list().flatMap((thread) => thread.messages).map((m) => JSON.stringify(m.content)).join()).not.toContain("lost")
        yield* expectStoreEqualsServer(tambo, server(), named)
      })))

  it.live.each(["cancelRun", "interruption"] as const)("%s, the request reaching the server late: the next message of the conversation goes on the thread the first landed in, which the conversation becomes, with both and their replies", (stop) =>
    stoppedBeforeReaching(stop, true, (tambo) =>
      Effect.gen(function* () {
        yield* until(() => server().threads.list().some((thread) => thread.runStatus === "idle" && thread.messages.length === 2))
        const [late] = server().threads.list()
        const next = yield* runAll("next")
        expect(next.at(-1)!.threadId).toBe(late!.id)
        expect(server().threads.list()).toHaveLength(1)
        expect((yield* tambo.state).currentThreadId).toBe(late!.id)
        expect(yield* textsOf(tambo, late!.id)).toEqual(["lost", "re: lost", "next", "re: next"])
        yield* expectStoreEqualsServer(tambo, server(), late!.id)
      })))
})
