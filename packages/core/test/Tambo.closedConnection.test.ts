import { describe, expect, it } from "@effect/vitest"
import { HoldingProxy, Script } from "@tambo-effect/testing"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as Tambo from "../src/Tambo.js"
import { expectStoreEqualsServer, fields, runAll, tamboLayer, useServer } from "./helpers.js"
import { cancelledByTheClient, stopBeforeAnswerOn, until } from "./stopBeforeAnswer.js"

// As the Tambo API: a run whose client closed its connection holds the thread's run lock until
// the run writes next.
const server = useServer({ noticeClosedConnection: "onNextWrite" })

const { aThread, holdingAnswerTo, sent, stopBeforeAnswer } = stopBeforeAnswerOn(server)

/**
 * The message `text` on `threadId`, sent while the server still holds a run this client closed
 * the connection of: once the server refused it (409), `notice` makes the server's run write
 * next, which lets go of the thread.
 */
const sendWhileHeld = (text: string, threadId: string, notice: () => void) =>
  Effect.gen(function* () {
    const next = yield* Effect.fork(Effect.either(runAll(text, { threadId })))
    yield* until(() => sent(text) >= 2 || next.unsafePoll() !== null)
    notice()
    return yield* Fiber.join(next)
  })

/** A script whose run of the message `held` writes its reply only once `write` is called. */
const writingLate = (held: string) =>
  Effect.sync(() => {
    let write!: () => void
    const writes = new Promise<void>((resolve) => (write = resolve))
    server().setScript((request) =>
      request.text === held ? writes.then(() => [Script.text("late")]) : [Script.text(`re: ${request.text}`)]
    )
    return write
  })

const finished = (ended: Either.Either<ReadonlyArray<Tambo.RunEvent>, unknown>) =>
  expect(Either.getOrThrowWith(ended, (error) => error).at(-1)?.event.type).toBe("RUN_FINISHED")

/** Another client's run on `threadId`, which holds the thread until it is interrupted. */
const anotherClientsRun = (threadId: string) =>
  Effect.gen(function* () {
    server().setScript((request) => request.text === "theirs" ? [Script.hang()] : [Script.text(`re: ${request.text}`)])
    const theirs = yield* Effect.fork(runAll("theirs", { threadId }).pipe(Effect.provide(tamboLayer(server()))))
    yield* until(() => server().threads.get(threadId)?.runStatus !== "idle")
    return theirs
  })

const refusedAtOnce = (text: string, ended: Either.Either<unknown, Error>) => {
  expect(Either.isLeft(ended) && fields(ended.left)).toMatchObject({ _tag: "RunConflictError", reason: "ActiveOnServer" })
  expect(sent(text)).toBe(1)
}

/**
 * A run on a new thread whose stream is interrupted once its request reached the server, before
 * the answer named its run (the server holds the answer: `answer` lets it go on).
 */
const interruptedBeforeNamed = Effect.gen(function* () {
  const tambo = yield* Tambo.Tambo
  const threadId = yield* aThread
  const { answer, arrived } = yield* holdingAnswerTo("unnamed")
  const reading = yield* Effect.fork(runAll("unnamed", { threadId }))
  yield* arrived
  yield* Fiber.interrupt(reading)
  return { answer, tambo, threadId }
})

describe("the next message after a run whose connection closed without a DELETE the server took", () => {
  it.live("a Stop with no answer in time: a message sent at once is refused while the server still holds the stopped run, sent again until the server let go of it, and runs", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* aThread
      const { answer, run, stopping } = yield* stopBeforeAnswer(tambo, "never", threadId)
      yield* Fiber.join(stopping)
      cancelledByTheClient(yield* Fiber.join(run))
      expect(server().threads.get(threadId)?.runStatus).not.toBe("idle")
      finished(yield* sendWhileHeld("next", threadId, () => answer([Script.text("late")])))
      expect(sent("next")).toBeGreaterThanOrEqual(2)
      expect(server().cancels.map((c) => [c.threadId, c.reason])).toEqual([[threadId, "connection_closed"]])
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a stream interrupted before the server named its run (nothing to DELETE, the connection closed at once): a message sent at once runs once the server let go of the interrupted run", () =>
    Effect.gen(function* () {
      const { answer, tambo, threadId } = yield* interruptedBeforeNamed
      expect(server().cancels).toEqual([])
      expect(server().threads.get(threadId)?.runStatus).not.toBe("idle")
      finished(yield* sendWhileHeld("next", threadId, () => answer([Script.text("late")])))
      expect(sent("next")).toBeGreaterThanOrEqual(2)
      expect(server().cancels.map((c) => c.reason)).toEqual(["connection_closed"])
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a stream interrupted once the server named its run: the server takes its DELETE, and a message sent at once runs at once", () =>
    Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      const threadId = yield* aThread
      yield* writingLate("long")
      const started = yield* Deferred.make<void>()
      const reading = yield* Effect.fork(Stream.runForEach(tambo.run("long", { threadId }), () => Deferred.succeed(started, undefined)))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(reading)
      expect(server().cancels.map((c) => c.reason)).toEqual(["user_cancelled"])
      finished(yield* Effect.either(runAll("next", { threadId })))
      expect(sent("next")).toBe(1)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a Stop while the message waits for the server to let go of the run before it: the message ends cancelled, is sent no more, and the thread shows what the server has", () =>
    Effect.gen(function* () {
      const { answer, tambo, threadId } = yield* interruptedBeforeNamed
      const next = yield* Effect.fork(Effect.either(runAll("next", { threadId })))
      yield* until(() => sent("next") >= 2)
      yield* tambo.cancelRun(threadId)
      cancelledByTheClient(yield* Fiber.join(next))
      const sentBeforeStop = sent("next")
      yield* expectStoreEqualsServer(tambo, server(), threadId)
      answer([Script.text("late")])
      yield* until(() => server().cancels.length === 1)
      expect(sent("next")).toBe(sentBeforeStop)
      expect(server().threads.get(threadId)?.messages.some((m) => JSON.stringify(m.content).includes('"next"'))).toBe(false)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("a dropped connection whose DELETE did not get through: a message sent at once runs once the server let go of the dropped run", () =>
    Effect.scoped(Effect.gen(function* () {
      const threadId = yield* aThread.pipe(Effect.provide(tamboLayer(server())))
      const write = yield* writingLate("dropped")
      const proxy = yield* HoldingProxy.scoped(server())
      const body = proxy.holdBody((request) => request.method === "POST" && request.path === `/v1/threads/${threadId}/runs`)
      proxy.holdRequest((request) => request.method === "DELETE").fail(503)
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const run = yield* Effect.fork(Effect.either(runAll("dropped", { threadId })))
        yield* Effect.promise(() => body.arrived)
        body.fail()
        const ended = yield* Fiber.join(run)
        expect(Either.isLeft(ended) && fields(ended.left)).toMatchObject({ _tag: "TransportError" })
        expect(server().cancels).toEqual([])
        finished(yield* sendWhileHeld("next", threadId, write))
        expect(sent("next")).toBeGreaterThanOrEqual(2)
        expect(server().cancels.map((c) => c.reason)).toEqual(["connection_closed"])
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      }).pipe(Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url })))
    })))

  it.live("another client's run holds the thread, and this client closed no connection there: the message is refused at once", () =>
    Effect.gen(function* () {
      const threadId = yield* aThread
      const theirs = yield* anotherClientsRun(threadId)
      refusedAtOnce("mine", yield* Effect.either(runAll("mine", { threadId })))
      yield* Fiber.interrupt(theirs)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("the message after the one that waited for the server to let go: another client's run holding the thread refuses it at once", () =>
    Effect.gen(function* () {
      const threadId = yield* aThread
      const { answer, arrived } = yield* holdingAnswerTo("unnamed")
      const reading = yield* Effect.fork(runAll("unnamed", { threadId }))
      yield* arrived
      yield* Fiber.interrupt(reading)
      finished(yield* sendWhileHeld("next", threadId, () => answer([Script.text("late")])))
      const theirs = yield* anotherClientsRun(threadId)
      refusedAtOnce("mine", yield* Effect.either(runAll("mine", { threadId })))
      yield* Fiber.interrupt(theirs)
    }).pipe(Effect.provide(tamboLayer(server()))))
})
