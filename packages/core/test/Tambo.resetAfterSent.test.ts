// A run request whose connection broke after it went out: the server may have taken it (stored
// its message, started its run), and the API takes no idempotency key.
import { describe, expect, it } from "@effect/vitest"
import { HoldingProxy, Script, type TestServer } from "@tambo-effect/testing"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Auth from "../src/Auth.js"
import { PLACEHOLDER_THREAD_ID } from "../src/ClientState.js"
import * as Tambo from "../src/Tambo.js"
import * as Tool from "../src/Tool.js"
import { isRetryable, type TamboError, TransportError } from "../src/TamboError.js"
import { contextKeyOf, expectStoreEqualsServer, fields, runAll, runInLocalThread, suspended, tamboLayer, textsOf, useServer } from "./helpers.js"
import { stopBeforeAnswerOn, until } from "./stopBeforeAnswer.js"

/** How many user messages of `threadId` on the server hold the text `text`. */
const storedOn = (server: TestServer, threadId: string, text: string): number =>
  server.threads.get(threadId)?.messages.filter((m) => m.role === "user" && JSON.stringify(m.content).includes(`"text":"${text}"`)).length ?? 0

/** The threads on the server that hold the message `text`. */
const threadsHolding = (server: TestServer, text: string): ReadonlyArray<string> =>
  server.threads.list().map((thread) => thread.id).filter((id) => storedOn(server, id, text) > 0)

/** The one thread of `server` holding `text`, once its run there ended. */
const landedIn = (server: TestServer, text: string) =>
  Effect.gen(function* () {
    const landed = threadsHolding(server, text)
    expect(landed).toHaveLength(1)
    yield* until(() => server.threads.get(landed[0]!)?.runStatus === "idle")
    return landed[0]!
  })

const isRunRequest = (threadId?: string) => (request: HoldingProxy.ProxiedRequest) =>
  request.method === "POST" && request.path === (threadId === undefined ? "/v1/threads/runs" : `/v1/threads/${threadId}/runs`)

/**
 * Has the next run request through `proxy` (on `threadId`, a new conversation without) reset:
 * `"taken"` once the server took it and answered, before the answer's status reaches the client;
 * `"unsent"` before it reaches the server (a pooled connection the server had closed).
 */
const resetNext = (proxy: HoldingProxy.HoldingProxy, when: "taken" | "unsent", threadId: string | undefined) => {
  if (when === "unsent") {
    proxy.holdRequest(isRunRequest(threadId)).reset()
  } else {
    const held = proxy.holdResponse(isRunRequest(threadId))
    void held.arrived.then(held.reset)
  }
}

/** `body` with the service through a proxy in front of the server, retries allowed unless `options` say. */
const throughProxy = <A, E>(
  server: () => TestServer,
  options: Parameters<typeof tamboLayer>[1],
  body: (tambo: Tambo.Tambo.Service, proxy: HoldingProxy.HoldingProxy) => Effect.Effect<A, E, Tambo.Tambo | Auth.Auth>
) =>
  Effect.scoped(Effect.gen(function* () {
    const proxy = yield* HoldingProxy.scoped(server())
    return yield* Effect.flatMap(Tambo.Tambo, (tambo) => body(tambo, proxy)).pipe(
      Effect.provide(tamboLayer(server(), { tamboUrl: proxy.url, maxRetries: 2, ...options }))
    )
  }))

/** `body` through a proxy whose next run request is reset (see `resetNext`). The client may retry. */
const resetOnce = <A, E>(
  server: () => TestServer,
  when: "taken" | "unsent",
  threadId: string | undefined,
  body: (tambo: Tambo.Tambo.Service, proxy: HoldingProxy.HoldingProxy) => Effect.Effect<A, E, Tambo.Tambo>
) =>
  throughProxy(server, {}, (tambo, proxy) => {
    resetNext(proxy, when, threadId)
    return body(tambo, proxy)
  })

/** The read of `threadId`'s thread with its messages. */
const isThreadRead = (threadId: string) => (request: HoldingProxy.ProxiedRequest) =>
  request.method === "GET" && request.url.startsWith(`/v1/threads/${threadId}?`)

/** The list of the newest threads, by which a new conversation's run looks for where its message landed. */
const isThreadList = (request: HoldingProxy.ProxiedRequest) => request.method === "GET" && request.path === "/v1/threads"

/** Stops the run `run` reads: by `cancelRun` (of the current thread), or by interrupting its reader. */
const stopBy = <A, E>(tambo: Tambo.Tambo.Service, run: Fiber.RuntimeFiber<A, E>, stop: "cancelRun" | "interruption") =>
  stop === "cancelRun" ? tambo.cancelRun() : Fiber.interrupt(run)

/**
 * A new conversation's run of "hello", stopped by `stop` while its search lists the newest threads
 * (held until then); a Stop by `cancelRun` ends it cancelled.
 */
const stoppedWhileListing = (tambo: Tambo.Tambo.Service, proxy: HoldingProxy.HoldingProxy, stop: "cancelRun" | "interruption") =>
  Effect.gen(function* () {
    const list = proxy.holdResponse(isThreadList)
    const run = yield* Effect.fork(Effect.either(runAll("hello")))
    yield* Effect.promise(() => list.arrived)
    yield* stopBy(tambo, run, stop)
    list.release()
    const ended = yield* Fiber.await(run)
    if (stop === "cancelRun") {
      const either = yield* ended
      expect(Either.isLeft(either) && either.left._tag).toBe("RunCancelledError")
    }
  })

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

  it.live("not taken, on a known thread, maxRetries 0: not sent again; the run fails, the thread has no such message, and the store equals the server", () =>
    Effect.gen(function* () {
      const threadId = yield* aThread
      replying()
      yield* throughProxy(server, { maxRetries: 0 }, (tambo, proxy) =>
        Effect.gen(function* () {
          resetNext(proxy, "unsent", threadId)
          failedMaybeSent(yield* Effect.either(runAll("hello", { threadId })))
          expect(sent("hello")).toBe(0)
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

  /**
   * The message `text` on a new conversation whose run request's connection is reset `when` (see
   * `resetNext`): how the run ended, and the thread its caller was told, if any.
   */
  const newConversation = (tambo: Tambo.Tambo.Service, text: string) =>
    Effect.gen(function* () {
      let told: string | undefined
      const ended = yield* Effect.either(runAll(text, { onThreadId: (id) => (told = id) }))
      const state = yield* tambo.state
      return { ended, told, state }
    })

  /** `text` run by another client of the same user, on a new conversation: a thread this client does not know. */
  const byAnotherClient = (text: string) => Effect.provide(runAll(text), tamboLayer(server()))

  it.live("taken, on a new conversation: not sent again (no second thread); the run fails saying it may have reached the server, and the store holds the thread the message landed in, which the next message goes on", () =>
    Effect.gen(function* () {
      replying()
      yield* resetOnce(server, "taken", undefined, (tambo) =>
        Effect.gen(function* () {
          const { ended, told } = yield* newConversation(tambo, "hello")
          failedMaybeSent(ended)
          expect(sent("hello")).toBe(1)
          const landed = yield* landedIn(server(), "hello")
          expect(told).toBe(landed)
          yield* expectStoreEqualsServer(tambo, server(), landed)
          finished(yield* Effect.either(runAll("next", { threadId: landed })))
          expect(storedOn(server(), landed, "next")).toBe(1)
          yield* expectStoreEqualsServer(tambo, server(), landed)
        }))
    }))

  it.live("taken, on a new conversation moved to a local thread: that local id names the thread the message landed in, and the next message goes there", () =>
    Effect.gen(function* () {
      replying()
      yield* resetOnce(server, "taken", undefined, (tambo) =>
        Effect.gen(function* () {
          const { localId, release, run } = yield* runInLocalThread("hello")
          yield* release
          failedMaybeSent(yield* Effect.either(Fiber.join(run)))
          const landed = yield* landedIn(server(), "hello")
          expect((yield* tambo.fetchThread(localId)).id).toBe(landed)
          finished(yield* Effect.either(runAll("next", { threadId: localId })))
          expect(storedOn(server(), landed, "next")).toBe(1)
          expect(server().threads.list()).toHaveLength(1)
        }))
    }))

  it.live("taken, on a new conversation, another client's older thread holding the same message before one this client knows: only the new thread is taken for it", () =>
    Effect.gen(function* () {
      replying()
      const older = (yield* byAnotherClient("hello")).at(-1)!.threadId
      yield* throughProxy(server, {}, (tambo, proxy) =>
        Effect.gen(function* () {
          const known = (yield* runAll("first")).at(-1)!.threadId
          yield* tambo.startNewThread
          resetNext(proxy, "taken", undefined)
          const { ended, told } = yield* newConversation(tambo, "hello")
          failedMaybeSent(ended)
          const landed = threadsHolding(server(), "hello").filter((id) => id !== older)
          expect(landed).toHaveLength(1)
          expect(told).toBe(landed[0])
          expect(told).not.toBe(known)
        }))
    }))

  it.live("taken, on a new conversation, another client's thread holding the same message made meanwhile: the client cannot tell which, and the run fails saying so", () =>
    Effect.gen(function* () {
      replying()
      yield* byAnotherClient("hello")
      yield* resetOnce(server, "taken", undefined, (tambo) =>
        Effect.gen(function* () {
          const { ended, told } = yield* newConversation(tambo, "hello")
          failedMaybeSent(ended)
          expect(Either.isLeft(ended) && ended.left.message).toMatch(/could not be told: 2 new threads hold the same message/)
          expect(told).toBeUndefined()
          expect(sent("hello")).toBe(2)
        }))
    }))

  it.live.each(["cancelRun", "interruption"] as const)("taken, on a new conversation, a Stop (%s) while the newest threads are listed to tell: the run ends cancelled, nothing is sent again, and the conversation becomes the thread the message landed in, which the next message goes on", (stop) =>
    Effect.gen(function* () {
      replying()
      yield* resetOnce(server, "taken", undefined, (tambo, proxy) =>
        Effect.gen(function* () {
          yield* stoppedWhileListing(tambo, proxy, stop)
          expect(sent("hello")).toBe(1)
          const landed = yield* landedIn(server(), "hello")
          const state = yield* tambo.state
          expect(state.currentThreadId).toBe(landed)
          yield* expectStoreEqualsServer(tambo, server(), landed)
          finished(yield* Effect.either(runAll("next")))
          expect(storedOn(server(), landed, "next")).toBe(1)
          expect(server().threads.list()).toHaveLength(1)
          yield* expectStoreEqualsServer(tambo, server(), landed)
        }))
    }))

  it.live.each(["cancelRun", "interruption"] as const)("not taken, on a new conversation, a Stop (%s) while the newest threads are listed to tell: the run ends cancelled, nothing is sent again, the conversation keeps no message the server does not have, and the next message runs", (stop) =>
    Effect.gen(function* () {
      replying()
      yield* resetOnce(server, "unsent", undefined, (tambo, proxy) =>
        Effect.gen(function* () {
          yield* stoppedWhileListing(tambo, proxy, stop)
          expect(sent("hello")).toBe(0)
          expect(server().threads.list()).toEqual([])
          const state = yield* tambo.state
          expect(JSON.stringify(state.threadMap[state.currentThreadId]?.thread.messages ?? [])).not.toContain("hello")
          const next = yield* Effect.either(runAll("next"))
          finished(next)
          const named = Either.getOrThrow(next).at(-1)!.threadId
          expect(threadsHolding(server(), "hello")).toEqual([])
          yield* expectStoreEqualsServer(tambo, server(), named)
        }))
    }))

  it.live("not taken, on a new conversation: no thread holds it, so the message is sent again and runs, once", () =>
    Effect.gen(function* () {
      replying()
      yield* resetOnce(server, "unsent", undefined, (tambo) =>
        Effect.gen(function* () {
          const { ended, told } = yield* newConversation(tambo, "hello")
          finished(ended)
          expect(sent("hello")).toBe(1)
          expect(threadsHolding(server(), "hello")).toEqual([told])
          yield* expectStoreEqualsServer(tambo, server(), told!)
        }))
    }))

  it.live("not taken, on a new conversation, maxRetries 0: not sent again; the run fails, and the next message runs", () =>
    Effect.gen(function* () {
      replying()
      yield* throughProxy(server, { maxRetries: 0 }, (tambo, proxy) =>
        Effect.gen(function* () {
          resetNext(proxy, "unsent", undefined)
          failedMaybeSent((yield* newConversation(tambo, "hello")).ended)
          expect(sent("hello")).toBe(0)
          finished(yield* Effect.either(runAll("again")))
          expect(threadsHolding(server(), "hello")).toEqual([])
        }))
    }))

  it.live("a first byte that did not come in time, on a new conversation: not sent again; the run fails with the timeout, and the store holds the thread the message landed in", () =>
    Effect.gen(function* () {
      yield* holdingAnswerTo("slow")
      yield* Effect.gen(function* () {
        const tambo = yield* Tambo.Tambo
        const { ended, told } = yield* newConversation(tambo, "slow")
        expect(Either.isLeft(ended) && fields(ended.left)).toMatchObject({ _tag: "TransportError", reason: "Timeout", mayHaveReachedServer: true })
        expect(sent("slow")).toBe(1)
        const landed = threadsHolding(server(), "slow")
        expect(landed).toEqual([told])
        yield* until(() => server().threads.get(told!)?.runStatus === "idle")
        yield* expectStoreEqualsServer(tambo, server(), told!)
      }).pipe(Effect.provide(tamboLayer(server(), { maxRetries: 2, firstByteTimeout: 300 })))
    }))

  it.live("a first byte that did not come in time, on a new conversation, the request not at the server when its threads are listed: the run fails with the timeout and the conversation keeps no copy of the message; a thread holding it made later is not the conversation's, only the user's threads list it", () =>
    Effect.gen(function* () {
      replying()
      yield* throughProxy(server, { firstByteTimeout: 300 }, (tambo, proxy) =>
        Effect.gen(function* () {
          const held = proxy.holdRequest(isRunRequest())
          const { ended, state, told } = yield* newConversation(tambo, "slow")
          expect(Either.isLeft(ended) && fields(ended.left)).toMatchObject({ _tag: "TransportError", reason: "Timeout", mayHaveReachedServer: true })
          expect(told).toBeUndefined()
          expect(JSON.stringify(state.threadMap[state.currentThreadId]?.thread.messages ?? [])).not.toContain("slow")
          // The request the client gave up on, let go once the proxy saw it go, reaches nothing.
          yield* until(() => proxy.abandoned() > 0)
          held.release()
          expect(sent("slow")).toBe(0)
          // What a request arriving late would leave: a thread holding the message, made after the search.
          yield* byAnotherClient("slow")
          const [late] = threadsHolding(server(), "slow")
          expect((yield* tambo.state).threadMap[late!]).toBeUndefined()
          expect((yield* tambo.listThreads()).threads.map((thread) => thread.id)).toContain(late)
        }))
    }))

  /** A new conversation's run of "slow", on the placeholder: how it ended, and its conversation's id. */
  const onPlaceholder = (tambo: Tambo.Tambo.Service) =>
    Effect.map(newConversation(tambo, "slow"), ({ ended, state }) => ({ ended, conversation: state.currentThreadId }))

  /** A new conversation's run of "slow", moved to a local thread by startNewThread: how it ended, and the local id. */
  const inLocalThread = Effect.gen(function* () {
    const { localId, release, run } = yield* runInLocalThread("slow")
    yield* release
    return { ended: yield* Effect.either(Fiber.join(run)), conversation: localId }
  })

  /**
   * A new conversation's run of "slow" (`first`) whose first byte did not come in time, its request
   * held on its way until the search found no thread holding it, then let go: it reaches the
   * server late. The thread it landed in, once its run there ended, and the conversation's id.
   */
  const timedOutThenLate = <R>(
    tambo: Tambo.Tambo.Service,
    proxy: HoldingProxy.HoldingProxy,
    first: Effect.Effect<{ readonly ended: Either.Either<unknown, TamboError>; readonly conversation: string }, never, R>
  ) =>
    Effect.gen(function* () {
      const held = proxy.holdRequest(isRunRequest(), { forwardAfterClientGone: true })
      const { conversation, ended } = yield* first
      expect(Either.isLeft(ended) && fields(ended.left)).toMatchObject({ _tag: "TransportError", reason: "Timeout" })
      expect(yield* textsOf(tambo, conversation)).not.toContain("slow")
      yield* until(() => proxy.abandoned() > 0)
      held.release()
      yield* until(() => threadsHolding(server(), "slow").length > 0)
      return { late: yield* landedIn(server(), "slow"), conversation }
    })

  it.live("a first byte that did not come in time, on a new conversation, the request reaching the server only after the search found nothing: the next message of the conversation goes on the thread the first landed in, which the store shows with both", () =>
    Effect.gen(function* () {
      replying()
      yield* throughProxy(server, { firstByteTimeout: 300 }, (tambo, proxy) =>
        Effect.gen(function* () {
          const { late } = yield* timedOutThenLate(tambo, proxy, onPlaceholder(tambo))
          const { ended: next, told } = yield* newConversation(tambo, "again")
          finished(next)
          expect(told).toBe(late)
          expect(threadsHolding(server(), "again")).toEqual([late])
          expect(server().threads.list()).toHaveLength(1)
          yield* expectStoreEqualsServer(tambo, server(), late)
          expect((yield* tambo.state).currentThreadId).toBe(late)
        }))
    }))

  it.live("a first byte that did not come in time, on a new conversation moved to a local thread, the request reaching the server only after the search found nothing: the next message there goes on the thread the first landed in; the local id names it, the local thread leaves the store, the selection follows, and the store shows the thread with both", () =>
    Effect.gen(function* () {
      replying()
      yield* throughProxy(server, { firstByteTimeout: 300 }, (tambo, proxy) =>
        Effect.gen(function* () {
          const { conversation: localId, late } = yield* timedOutThenLate(tambo, proxy, inLocalThread)
          yield* tambo.switchThread(localId)
          const next = yield* Effect.either(runAll("again"))
          finished(next)
          expect(Either.getOrThrow(next).at(-1)!.threadId).toBe(late)
          expect(threadsHolding(server(), "again")).toEqual([late])
          expect(server().threads.list()).toHaveLength(1)
          yield* expectStoreEqualsServer(tambo, server(), late)
          expect(yield* textsOf(tambo, late)).toEqual(["slow", "re: slow", "again", "re: again"])
          const state = yield* tambo.state
          expect(state.threadMap[localId]).toBeUndefined()
          expect(state.currentThreadId).toBe(late)
          expect((yield* tambo.fetchThread(localId)).id).toBe(late)
        }))
    }))

  /**
   * Two messages of a conversation whose first message was withdrawn, at once: "one", then "two"
   * (with `onBusy`) asked while the run of "one" lists the newest threads to look for the first.
   * How each ended.
   */
  const twoAtOnce = (proxy: HoldingProxy.HoldingProxy, onBusy: Tambo.BusyPolicy) =>
    Effect.gen(function* () {
      const list = proxy.holdResponse(isThreadList)
      const first = yield* Effect.fork(Effect.either(runAll("one")))
      yield* Effect.promise(() => list.arrived)
      const second = yield* Effect.fork(Effect.either(runAll("two", { onBusy })))
      list.release()
      return { one: yield* Fiber.join(first), two: yield* Fiber.join(second) }
    })

  /** `twoAtOnce` after `timedOutThenLate`, and the thread the first message landed in. */
  const twoAtOnceAfterLate = (tambo: Tambo.Tambo.Service, proxy: HoldingProxy.HoldingProxy, onBusy: Tambo.BusyPolicy) =>
    Effect.gen(function* () {
      const { late } = yield* timedOutThenLate(tambo, proxy, onPlaceholder(tambo))
      return { late, ...yield* twoAtOnce(proxy, onBusy) }
    })

  it.live("a first byte that did not come in time, on a new conversation, the request reaching nothing, then two messages at once, the second queued while the first looks for the thread: the second follows the first on the thread it creates", () =>
    Effect.gen(function* () {
      replying()
      yield* throughProxy(server, { firstByteTimeout: 300 }, (tambo, proxy) =>
        Effect.gen(function* () {
          const held = proxy.holdRequest(isRunRequest())
          expect(Either.isLeft((yield* newConversation(tambo, "slow")).ended)).toBe(true)
          yield* until(() => proxy.abandoned() > 0)
          held.release()
          const { one, two } = yield* twoAtOnce(proxy, "queue")
          finished(one)
          finished(two)
          const [thread] = server().threads.list().map((thread) => thread.id)
          expect(server().threads.list()).toHaveLength(1)
          expect(yield* textsOf(tambo, thread!)).toEqual(["one", "re: one", "two", "re: two"])
          yield* expectStoreEqualsServer(tambo, server(), thread!)
        }))
    }))

  it.live("a first byte that did not come in time, on a new conversation, the request reaching the server late, then two messages at once, the second queued while the first looks for the thread: both go on the thread the first landed in, in the order asked", () =>
    Effect.gen(function* () {
      replying()
      yield* throughProxy(server, { firstByteTimeout: 300 }, (tambo, proxy) =>
        Effect.gen(function* () {
          const { late, one, two } = yield* twoAtOnceAfterLate(tambo, proxy, "queue")
          finished(one)
          finished(two)
          expect(server().threads.list().map((thread) => thread.id)).toEqual([late])
          expect(yield* textsOf(tambo, late)).toEqual(["slow", "re: slow", "one", "re: one", "two", "re: two"])
          yield* expectStoreEqualsServer(tambo, server(), late)
          expect((yield* tambo.state).currentThreadId).toBe(late)
        }))
    }))

  it.live("a first byte that did not come in time, on a new conversation, the request reaching the server late, then two messages at once, the second (onBusy reject) asked while the first looks for the thread: it is refused with RunConflictError on that thread, having sent nothing, and starts no thread", () =>
    Effect.gen(function* () {
      replying()
      yield* throughProxy(server, { firstByteTimeout: 300 }, (tambo, proxy) =>
        Effect.gen(function* () {
          const { late, one, two } = yield* twoAtOnceAfterLate(tambo, proxy, "reject")
          finished(one)
          expect(Either.isLeft(two) && two.left._tag).toBe("RunConflictError")
          expect(sent("two")).toBe(0)
          expect(server().threads.list().map((thread) => thread.id)).toEqual([late])
          expect(yield* textsOf(tambo, late)).toEqual(["slow", "re: slow", "one", "re: one"])
          yield* expectStoreEqualsServer(tambo, server(), late)
        }))
    }))

  it.live("a first byte that did not come in time, on a new conversation, the request reaching the server late, then two messages at once while a new exchange of the user token is held, the second queued while the first waits for it: both go on the thread the first landed in, in the order asked", () =>
    Effect.gen(function* () {
      replying()
      const userToken = "opaque-subject-token-of-alice"
      yield* throughProxy(server, { firstByteTimeout: 300, userKey: undefined, userToken }, (tambo, proxy) =>
        Effect.gen(function* () {
          const { late } = yield* timedOutThenLate(tambo, proxy, onPlaceholder(tambo))
          const exchange = proxy.holdRequest((request) => request.path === "/oauth/token")
          // The cached access token forgotten: the next runs wait for a new exchange.
          yield* (yield* Auth.Auth).invalidate()
          const first = yield* Effect.fork(Effect.either(runAll("one")))
          yield* Effect.promise(() => exchange.arrived)
          yield* suspended(first)
          const second = yield* Effect.fork(Effect.either(runAll("two", { onBusy: "queue" })))
          yield* suspended(second)
          exchange.release()
          finished(yield* Fiber.join(first))
          finished(yield* Fiber.join(second))
          expect(server().threads.list().map((thread) => thread.id)).toEqual([late])
          expect(yield* textsOf(tambo, late)).toEqual(["slow", "re: slow", "one", "re: one", "two", "re: two"])
          yield* expectStoreEqualsServer(tambo, server(), late, contextKeyOf(userToken))
          expect((yield* tambo.state).currentThreadId).toBe(late)
        }))
    }))

  /**
   * A new conversation's run of "slow" whose first byte did not come in time, its request reaching
   * the server late (see `timedOutThenLate`), the run there held until the returned effect lets it
   * go on; the thread it landed in, its run still going.
   */
  const lateRunGoing = (tambo: Tambo.Tambo.Service, proxy: HoldingProxy.HoldingProxy) =>
    Effect.gen(function* () {
      let goOn!: () => void
      const held = new Promise<void>((resolve) => (goOn = resolve))
      server().setScript((request) => request.text === "slow" ? [Script.hold(held), Script.text("re: slow")] : [Script.text(`re: ${request.text}`)])
      const request = proxy.holdRequest(isRunRequest(), { forwardAfterClientGone: true })
      expect(Either.isLeft((yield* newConversation(tambo, "slow")).ended)).toBe(true)
      yield* until(() => proxy.abandoned() > 0)
      request.release()
      yield* until(() => threadsHolding(server(), "slow").length > 0)
      const [late] = threadsHolding(server(), "slow")
      expect(server().threads.get(late!)?.runStatus).not.toBe("idle")
      return { late: late!, goOn: Effect.sync(goOn) }
    })

  /** How many run requests on `threadId` the server got (while its run goes on, each is refused with a 409). */
  const runRequestsOn = (threadId: string) =>
    server().requests.filter((request) => request.method === "POST" && request.path === `/v1/threads/${threadId}/runs`).length

  it.live("a first byte that did not come in time, on a new conversation, the request reaching the server late, its run there still going when the next message is asked: the next message waits out the server's lock and goes on in that thread once the late run ended", () =>
    Effect.gen(function* () {
      yield* throughProxy(server, { firstByteTimeout: 300 }, (tambo, proxy) =>
        Effect.gen(function* () {
          const { goOn, late } = yield* lateRunGoing(tambo, proxy)
          const next = yield* Effect.fork(Effect.either(runAll("again")))
          yield* until(() => runRequestsOn(late) > 0)
          yield* goOn
          finished(yield* Fiber.join(next))
          expect(server().threads.list().map((thread) => thread.id)).toEqual([late])
          expect(yield* textsOf(tambo, late)).toEqual(["slow", "re: slow", "again", "re: again"])
          yield* expectStoreEqualsServer(tambo, server(), late)
        }))
    }))

  it.live("a first byte that did not come in time, on a new conversation, the request reaching the server late, its run there going on past the next message's wait: the next message fails with RunConflictError (ActiveOnServer) on that thread, which the conversation is, no thread holding the message; once that run ended, the message goes there", () =>
    Effect.gen(function* () {
      yield* throughProxy(server, { firstByteTimeout: 300 }, (tambo, proxy) =>
        Effect.gen(function* () {
          const { goOn, late } = yield* lateRunGoing(tambo, proxy)
          const next = yield* Effect.either(runAll("again"))
          expect(Either.isLeft(next) && fields(next.left)).toMatchObject({ _tag: "RunConflictError", reason: "ActiveOnServer", threadId: late })
          expect(runRequestsOn(late)).toBeGreaterThan(1)
          expect(threadsHolding(server(), "again")).toEqual([])
          expect((yield* tambo.state).currentThreadId).toBe(late)
          expect(yield* textsOf(tambo, late)).not.toContain("again")
          yield* goOn
          yield* until(() => server().threads.get(late)?.runStatus === "idle")
          finished(yield* Effect.either(runAll("again")))
          expect(server().threads.list().map((thread) => thread.id)).toEqual([late])
          yield* expectStoreEqualsServer(tambo, server(), late)
        }))
    }))

  it.live("a first byte that did not come in time, on a new conversation, the request reaching the server late, then two messages at once, then startNewThread and a Stop of the new conversation while the first looks for the thread: the Stop ends neither; the second follows the first, which starts a thread of its own, and the new conversation stays selected and empty; the late thread is only in the user's threads", () =>
    Effect.gen(function* () {
      replying()
      yield* throughProxy(server, { firstByteTimeout: 300 }, (tambo, proxy) =>
        Effect.gen(function* () {
          const { late } = yield* timedOutThenLate(tambo, proxy, onPlaceholder(tambo))
          const list = proxy.holdResponse(isThreadList)
          const first = yield* Effect.fork(Effect.either(runAll("one")))
          yield* Effect.promise(() => list.arrived)
          const second = yield* Effect.fork(Effect.either(runAll("two", { onBusy: "queue" })))
          yield* suspended(second)
          yield* tambo.startNewThread
          yield* tambo.cancelRun()
          list.release()
          const one = yield* Fiber.join(first)
          const two = yield* Fiber.join(second)
          finished(one)
          finished(two)
          const thread = Either.getOrThrow(one).at(-1)!.threadId
          expect(thread).not.toBe(late)
          expect(Either.getOrThrow(two).at(-1)!.threadId).toBe(thread)
          expect(server().threads.list()).toHaveLength(2)
          expect(yield* textsOf(tambo, thread)).toEqual(["one", "re: one", "two", "re: two"])
          yield* expectStoreEqualsServer(tambo, server(), thread)
          const state = yield* tambo.state
          expect(state.currentThreadId).toBe(PLACEHOLDER_THREAD_ID)
          expect(state.threadMap[PLACEHOLDER_THREAD_ID]?.thread.messages ?? []).toEqual([])
          expect(state.threadMap[late]).toBeUndefined()
        }))
    }))

  it.live("a first byte that did not come in time, on a new conversation, the request reaching the server late, then the next message, and startNewThread as that message's search, which found the thread, reads it into the store: the message starts a thread of its own, the new conversation stays selected and empty, and the late thread is only in the user's threads", () =>
    Effect.gen(function* () {
      replying()
      yield* throughProxy(server, { firstByteTimeout: 300 }, (tambo, proxy) =>
        Effect.gen(function* () {
          const { late } = yield* timedOutThenLate(tambo, proxy, onPlaceholder(tambo))
          // The search's read of the thread, which finds the message there, then the read into the store.
          const searchRead = proxy.holdRequest(isThreadRead(late))
          const next = yield* Effect.fork(Effect.either(runAll("again")))
          yield* Effect.promise(() => searchRead.arrived)
          const storeRead = proxy.holdRequest(isThreadRead(late))
          searchRead.release()
          yield* Effect.promise(() => storeRead.arrived)
          yield* tambo.startNewThread
          storeRead.release()
          const again = yield* Fiber.join(next)
          finished(again)
          const thread = Either.getOrThrow(again).at(-1)!.threadId
          expect(thread).not.toBe(late)
          expect(threadsHolding(server(), "again")).toEqual([thread])
          yield* expectStoreEqualsServer(tambo, server(), thread)
          const state = yield* tambo.state
          expect(state.currentThreadId).toBe(PLACEHOLDER_THREAD_ID)
          expect(state.threadMap[PLACEHOLDER_THREAD_ID]?.thread.messages ?? []).toEqual([])
          expect(state.threadMap[late]).toBeUndefined()
        }))
    }))

  it.live("a first byte that did not come in time, on a new conversation, the request reaching the server late, then startNewThread: the next message starts a thread of its own; the late one is only in the user's threads", () =>
    Effect.gen(function* () {
      replying()
      yield* throughProxy(server, { firstByteTimeout: 300 }, (tambo, proxy) =>
        Effect.gen(function* () {
          const { late } = yield* timedOutThenLate(tambo, proxy, onPlaceholder(tambo))
          yield* tambo.startNewThread
          const { ended: next, told } = yield* newConversation(tambo, "again")
          finished(next)
          expect(told).not.toBe(late)
          expect(threadsHolding(server(), "again")).toEqual([told])
          expect((yield* tambo.state).threadMap[late]).toBeUndefined()
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

/** How many results of the call `toolUseId` the server's thread `threadId` holds. */
const resultsOn = (server: TestServer, threadId: string, toolUseId: string): number =>
  server.threads.get(threadId)?.messages.filter((m) =>
    m.content.some((block) => block.type === "tool_result" && block.toolUseId === toolUseId)
  ).length ?? 0

describe("a new conversation's run request whose connection was reset once the server took it, its run going on there (the server notices on its next write, as the Tambo API)", () => {
  const { sent, server } = onServer({ noticeClosedConnection: "onNextWrite" })

  it.live.each(["cancelRun", "interruption"] as const)("a Stop (%s) while the newest threads are listed to tell: the run the message started is cancelled on the thread it landed in, which the conversation becomes", (stop) =>
    Effect.gen(function* () {
      server().setScript((request) =>
        request.text === "hello" ? [Script.text("slow..."), Script.hang()] : [Script.text(`re: ${request.text}`)]
      )
      yield* resetOnce(server, "taken", undefined, (tambo, proxy) =>
        Effect.gen(function* () {
          yield* stoppedWhileListing(tambo, proxy, stop)
          expect(sent("hello")).toBe(1)
          const landed = threadsHolding(server(), "hello")
          expect(landed).toHaveLength(1)
          expect(server().cancels.map((c) => [c.threadId, c.reason])).toEqual([[landed[0], "user_cancelled"]])
          expect(server().threads.get(landed[0]!)?.runStatus).toBe("idle")
          expect((yield* tambo.state).currentThreadId).toBe(landed[0])
          yield* expectStoreEqualsServer(tambo, server(), landed[0]!)
          finished(yield* Effect.either(runAll("next")))
          expect(server().threads.list()).toHaveLength(1)
        }))
    }))
})

describe("a request carrying tool results whose connection was reset once it went out", () => {
  const { aThread, server } = onServer()

  /** A weather tool that counts its runs and calls `onRun` as it runs (before its result is sent). */
  const countingWeather = () => {
    const state = { runs: 0, onRun: () => {} }
    const tool = Tool.make({
      name: "get_weather",
      description: "Current weather in a city",
      input: Schema.Struct({ city: Schema.String }),
      execute: ({ city }) => Effect.sync(() => {
        state.runs++
        state.onRun()
        return { city, temperature: 21 }
      })
    })
    return { state, tool }
  }

  /** To `weather?` a call of the weather tool (`call_w`), then a reply quoting its result; to others a reply. */
  const callThenReply = () =>
    server().setScript((request) =>
      request.toolResults.length > 0
        ? [Script.text(`It is ${request.toolResults[0]!.text}`)]
        : request.text === "weather?"
        ? [Script.toolCall("get_weather", { city: "Paris" }, { id: "call_w" })]
        : [Script.text(`re: ${request.text}`)]
    )

  /**
   * A run of a message on a known thread whose tool round's request is reset `when`, then `after`
   * with how it ended; the tool ran once, and the store equals the server once it let go of the thread.
   */
  const roundReset = <E>(
    when: "taken" | "unsent",
    maxRetries: number,
    after: (ended: Either.Either<ReadonlyArray<Tambo.RunEvent>, TamboError>, threadId: string) => Effect.Effect<void, E, Tambo.Tambo>
  ) =>
    Effect.gen(function* () {
      const threadId = yield* aThread
      callThenReply()
      const { state, tool } = countingWeather()
      yield* throughProxy(server, { maxRetries, tools: [tool] }, (tambo, proxy) =>
        Effect.gen(function* () {
          // The round's request is the next one once the tool ran.
          state.onRun = () => resetNext(proxy, when, threadId)
          const ended = yield* Effect.either(runAll("weather?", { threadId }))
          yield* until(() => server().threads.get(threadId)?.runStatus === "idle")
          yield* expectStoreEqualsServer(tambo, server(), threadId)
          yield* after(ended, threadId)
          expect(state.runs).toBe(1)
        }))
    })

  it.live("the tool round's, taken: the results are not sent again; the run fails saying they may have reached the server, the server holds them once, the store equals the server, and the next message runs", () =>
    roundReset("taken", 2, (ended, threadId) =>
      Effect.gen(function* () {
        failedMaybeSent(ended)
        expect(resultsOn(server(), threadId, "call_w")).toBe(1)
        finished(yield* Effect.either(runAll("next", { threadId })))
        expect(resultsOn(server(), threadId, "call_w")).toBe(1)
      })))

  it.live("the tool round's, not taken: the read of the thread shows the server still waits on the call, and the results are sent again, once; the run finishes", () =>
    roundReset("unsent", 2, (ended, threadId) =>
      Effect.sync(() => {
        finished(ended)
        expect(resultsOn(server(), threadId, "call_w")).toBe(1)
      })))

  it.live("the tool round's, not taken, maxRetries 0: not sent again; the run fails, and the next message answers the call with the result the tool gave", () =>
    roundReset("unsent", 0, (ended, threadId) =>
      Effect.gen(function* () {
        failedMaybeSent(ended)
        expect(resultsOn(server(), threadId, "call_w")).toBe(0)
        finished(yield* Effect.either(runAll("next", { threadId })))
        expect(resultsOn(server(), threadId, "call_w")).toBe(1)
        expect(JSON.stringify(server().threads.get(threadId)!.messages)).toContain("temperature")
      })))

  /**
   * A run paused for the caller's tool on a known thread, then `continueRun` with its result, whose
   * request is reset `when`, then `after` with how it ended; the store equals the server then.
   */
  const continueReset = <E>(
    when: "taken" | "unsent",
    maxRetries: number,
    after: (ended: Either.Either<unknown, TamboError>, threadId: string) => Effect.Effect<void, E, Tambo.Tambo>
  ) =>
    Effect.gen(function* () {
      const threadId = yield* aThread
      callThenReply()
      yield* throughProxy(server, { maxRetries, tools: [countingWeather().tool] }, (tambo, proxy) =>
        Effect.gen(function* () {
          yield* runAll("weather?", { threadId, autoExecuteTools: false })
          resetNext(proxy, when, threadId)
          const ended = yield* Effect.either(Stream.runCollect(tambo.continueRun(threadId, [{ toolCallId: "call_w", result: "sunny" }])))
          yield* until(() => server().threads.get(threadId)?.runStatus === "idle")
          yield* expectStoreEqualsServer(tambo, server(), threadId)
          yield* after(ended, threadId)
        }))
    })

  it.live("continueRun's, taken: not sent again; it fails saying the results may have reached the server, which holds them once, and the store equals the server", () =>
    continueReset("taken", 2, (ended, threadId) =>
      Effect.gen(function* () {
        failedMaybeSent(ended)
        expect(resultsOn(server(), threadId, "call_w")).toBe(1)
        finished(yield* Effect.either(runAll("next", { threadId })))
      })))

  it.live("continueRun's, not taken: the results are sent again, once, and the run finishes", () =>
    continueReset("unsent", 2, (ended, threadId) =>
      Effect.sync(() => {
        expect(Either.isRight(ended)).toBe(true)
        expect(resultsOn(server(), threadId, "call_w")).toBe(1)
        expect(JSON.stringify(server().threads.get(threadId)!.messages)).toContain("It is sunny")
      })))

  it.live("continueRun's, not taken, maxRetries 0: not sent again; it fails, and the call stays answerable", () =>
    continueReset("unsent", 0, (ended, threadId) =>
      Effect.gen(function* () {
        failedMaybeSent(ended)
        expect(resultsOn(server(), threadId, "call_w")).toBe(0)
        const tambo = yield* Tambo.Tambo
        yield* Stream.runDrain(tambo.continueRun(threadId, [{ toolCallId: "call_w", result: "sunny" }]))
        expect(resultsOn(server(), threadId, "call_w")).toBe(1)
      })))
})
