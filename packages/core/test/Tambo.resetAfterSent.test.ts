// A run request whose connection broke after it went out: the server may have taken it (stored
// its message, started its run), and the API takes no idempotency key.
import { describe, expect, it } from "@effect/vitest"
import { HoldingProxy, Script, type TestServer } from "@tambo-effect/testing"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Tambo from "../src/Tambo.js"
import { isRetryable, TransportError } from "../src/TamboError.js"
import { expectStoreEqualsServer, fields, runAll, tamboLayer, useServer } from "./helpers.js"
import { stopBeforeAnswerOn, until } from "./stopBeforeAnswer.js"

/** How many user messages of `threadId` on the server hold the text `text`. */
const storedOn = (server: TestServer, threadId: string, text: string): number =>
  server.threads.get(threadId)?.messages.filter((m) => m.role === "user" && JSON.stringify(m.content).includes(`"text":"${text}"`)).length ?? 0

/** The threads on the server that hold the message `text`. */
const threadsHolding = (server: TestServer, text: string): ReadonlyArray<string> =>
  server.threads.list().map((thread) => thread.id).filter((id) => storedOn(server, id, text) > 0)

const isRunRequest = (threadId?: string) => (request: HoldingProxy.ProxiedRequest) =>
  request.method === "POST" && request.path === (threadId === undefined ? "/v1/threads/runs" : `/v1/threads/${threadId}/runs`)

/**
 * `body` through a proxy whose next run request (on `threadId`, a new conversation without) has
 * its connection reset: `"taken"` once the server took it and answered, before the answer's
 * status reaches the client; `"unsent"` before it reaches the server (a pooled connection the
 * server had closed). The client may retry.
 */
const resetOnce = <A, E>(
  server: () => TestServer,
  when: "taken" | "unsent",
  threadId: string | undefined,
  body: (tambo: Tambo.Tambo.Service, proxy: HoldingProxy.HoldingProxy) => Effect.Effect<A, E, Tambo.Tambo>
) =>
  Effect.scoped(Effect.gen(function* () {
    const proxy = yield* HoldingProxy.scoped(server())
    if (when === "unsent") {
      proxy.holdRequest(isRunRequest(threadId)).reset()
    } else {
      const held = proxy.holdResponse(isRunRequest(threadId))
      void held.arrived.then(held.reset)
    }
    return yield* Effect.flatMap(Tambo.Tambo, (tambo) => body(tambo, proxy)).pipe(
      Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url, maxRetries: 2 }))
    )
  }))

/** The read of `threadId`'s thread with its messages. */
const isThreadRead = (threadId: string) => (request: HoldingProxy.ProxiedRequest) =>
  request.method === "GET" && request.url.startsWith(`/v1/threads/${threadId}?`)

/**
 * The run failed with the connection's error, which says the request may have reached the server
 * and is not retryable (sending it again may duplicate the message), also as a copy of it.
 */
const failedMaybeSent = (ended: Either.Either<unknown, Error>) => {
  const error = Either.getLeft(ended).pipe(Option.getOrThrow)
  expect(fields(error)).toMatchObject({ _tag: "TransportError", reason: "Connect", mayHaveReachedServer: true })
  expect(error.message).toMatch(/may have reached the server/)
  const copy = Schema.decodeUnknownSync(TransportError)(Schema.encodeSync(TransportError)(error as TransportError))
  for (const each of [error as TransportError, copy]) {
    expect(each.retryable).toBe(false)
    expect(isRetryable(each)).toBe(false)
  }
}

const finished = (ended: Either.Either<ReadonlyArray<Tambo.RunEvent>, unknown>) =>
  expect(Either.getOrThrowWith(ended, (error) => error).at(-1)?.event.type).toBe("RUN_FINISHED")

/** A server answering each message at once, a thread on it with one run, and what it received. */
const onServer = (options?: Parameters<typeof useServer>[0]) => {
  const server = useServer(options)
  const { aThread, holdingAnswerTo, sent } = stopBeforeAnswerOn(server)
  const replying = () => server().setScript((request) => [Script.text(`re: ${request.text}`)])
  return { aThread: Effect.suspend(() => Effect.provide(aThread, tamboLayer(server()))), holdingAnswerTo, replying, sent, server }
}

describe("a run request whose connection was reset once it went out (the server notices at once)", () => {
  const { aThread, holdingAnswerTo, replying, sent, server } = onServer()

  it.live("a first byte that did not come in time, on a known thread: not sent again, retries allowed; the run fails with the timeout, and the store shows the message the server took", () =>
    Effect.gen(function* () {
      const threadId = yield* aThread
      yield* holdingAnswerTo("slow")
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const ended = yield* Effect.either(runAll("slow", { threadId }))
        expect(Either.isLeft(ended) && fields(ended.left)).toMatchObject({ _tag: "TransportError", reason: "Timeout", mayHaveReachedServer: true })
        expect(Either.isLeft(ended) && isRetryable(ended.left)).toBe(false)
        expect(sent("slow")).toBe(1)
        yield* until(() => server().threads.get(threadId)?.runStatus === "idle")
        expect(storedOn(server(), threadId, "slow")).toBe(1)
        yield* expectStoreEqualsServer(tambo, server(), threadId)
      }).pipe(Effect.provide(tamboLayer(server(), { maxRetries: 2, firstByteTimeout: 300 })))
    }))

  it.live("taken, on a known thread: not sent again; the run fails, the thread holds the message once, the store equals the server, and the next message runs", () =>
    Effect.gen(function* () {
      const threadId = yield* aThread
      replying()
      yield* resetOnce(server, "taken", threadId, (tambo) =>
        Effect.gen(function* () {
          failedMaybeSent(yield* Effect.either(runAll("hello", { threadId })))
          expect(sent("hello")).toBe(1)
          expect(storedOn(server(), threadId, "hello")).toBe(1)
          yield* expectStoreEqualsServer(tambo, server(), threadId)
          expect((yield* tambo.state).threadMap[threadId]?.streaming.error).toMatchObject({ code: "TransportError", isRetryable: false })
          finished(yield* Effect.either(runAll("next", { threadId })))
          yield* expectStoreEqualsServer(tambo, server(), threadId)
        }))
    }))

  it.live("not taken, on a known thread: the read of the thread shows it missing, and the message is sent again and runs, once", () =>
    Effect.gen(function* () {
      const threadId = yield* aThread
      replying()
      yield* resetOnce(server, "unsent", threadId, (tambo) =>
        Effect.gen(function* () {
          finished(yield* Effect.either(runAll("hello", { threadId })))
          expect(sent("hello")).toBe(1)
          expect(storedOn(server(), threadId, "hello")).toBe(1)
          yield* expectStoreEqualsServer(tambo, server(), threadId)
        }))
    }))

  it.live("taken, on a known thread, a Stop while the thread is read to tell: nothing is sent again, the run ends cancelled, the store equals the server, and the next message runs", () =>
    Effect.gen(function* () {
      const threadId = yield* aThread
      replying()
      yield* resetOnce(server, "taken", threadId, (tambo, proxy) =>
        Effect.gen(function* () {
          // The store holds the thread: the run's first read of it is the one that tells.
          yield* tambo.fetchThread(threadId)
          const read = proxy.holdResponse(isThreadRead(threadId))
          const run = yield* Effect.fork(Effect.either(runAll("hello", { threadId })))
          yield* Effect.promise(() => read.arrived)
          yield* tambo.cancelRun(threadId)
          read.release()
          const ended = yield* Fiber.join(run)
          expect(Either.isLeft(ended) && ended.left._tag).toBe("RunCancelledError")
          expect(sent("hello")).toBe(1)
          expect(storedOn(server(), threadId, "hello")).toBe(1)
          yield* expectStoreEqualsServer(tambo, server(), threadId)
          finished(yield* Effect.either(runAll("next", { threadId })))
          yield* expectStoreEqualsServer(tambo, server(), threadId)
        }))
    }))

  it.live("taken, on a known thread, the read to tell refused: not sent again; the run fails with the connection's error, and its end's read shows the message the server took", () =>
    Effect.gen(function* () {
      const threadId = yield* aThread
      replying()
      yield* resetOnce(server, "taken", threadId, (tambo, proxy) =>
        Effect.gen(function* () {
          yield* tambo.fetchThread(threadId)
          proxy.holdRequest(isThreadRead(threadId)).fail(500)
          failedMaybeSent(yield* Effect.either(runAll("hello", { threadId })))
          expect(sent("hello")).toBe(1)
          expect(storedOn(server(), threadId, "hello")).toBe(1)
          yield* expectStoreEqualsServer(tambo, server(), threadId)
        }))
    }))

  it.live("taken, on a new conversation: not sent again (no second thread); the run fails saying it may have reached the server", () =>
    Effect.gen(function* () {
      replying()
      yield* resetOnce(server, "taken", undefined, () =>
        Effect.gen(function* () {
          failedMaybeSent(yield* Effect.either(runAll("hello")))
          expect(sent("hello")).toBe(1)
          expect(threadsHolding(server(), "hello")).toHaveLength(1)
        }))
    }))

  it.live("not taken, on a new conversation: the client cannot tell, so the run fails the same, and the next message runs", () =>
    Effect.gen(function* () {
      replying()
      yield* resetOnce(server, "unsent", undefined, () =>
        Effect.gen(function* () {
          failedMaybeSent(yield* Effect.either(runAll("hello")))
          expect(sent("hello")).toBe(0)
          finished(yield* Effect.either(runAll("again")))
          expect(threadsHolding(server(), "hello")).toEqual([])
        }))
    }))
})

describe("a run request whose connection was reset once the server took it (the server notices on its next write, as the Tambo API)", () => {
  const { aThread, sent, server } = onServer({ noticeClosedConnection: "onNextWrite" })

  it.live("on a known thread: the run fails and is not refused as a conflict, the store equals the server, and the next message runs once the server let go of the thread", () =>
    Effect.gen(function* () {
      const threadId = yield* aThread
      let write!: () => void
      const writes = new Promise<void>((resolve) => (write = resolve))
      server().setScript((request) =>
        request.text === "hello" ? writes.then(() => [Script.text("late")]) : [Script.text(`re: ${request.text}`)]
      )
      yield* resetOnce(server, "taken", threadId, (tambo) =>
        Effect.gen(function* () {
          failedMaybeSent(yield* Effect.either(runAll("hello", { threadId })))
          expect(sent("hello")).toBe(1)
          expect(storedOn(server(), threadId, "hello")).toBe(1)
          yield* expectStoreEqualsServer(tambo, server(), threadId)
          const next = yield* Effect.fork(Effect.either(runAll("next", { threadId })))
          yield* until(() => sent("next") >= 2 || next.unsafePoll() !== null)
          write()
          finished(yield* Fiber.join(next))
          expect(storedOn(server(), threadId, "next")).toBe(1)
          yield* expectStoreEqualsServer(tambo, server(), threadId)
        }))
    }))
})
