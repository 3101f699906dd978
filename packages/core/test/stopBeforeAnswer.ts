import { Script, type TestServer } from "@tambo-effect/testing"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import { expect } from "vitest"
import type * as Tambo from "../src/Tambo.js"
import { fields, runAll } from "./helpers.js"

/** Waits until `fiber` is suspended: a Stop waiting for the server to name the run. */
export const suspended = <A, E>(fiber: Fiber.RuntimeFiber<A, E>): Effect.Effect<void> =>
  Effect.flatMap(Fiber.status(fiber), (status) =>
    status._tag === "Suspended" ? Effect.void : Effect.zipRight(Effect.yieldNow(), suspended(fiber)))

/** Waits until `check` holds: the server's side of something it does on its own. */
export const until = (check: () => boolean) =>
  Effect.repeat(Effect.sync(check), { until: (done) => done, schedule: Schedule.spaced("5 millis") })

export const cancelledByTheClient = (ended: Either.Either<unknown, Error>) =>
  expect(Either.isLeft(ended) && fields(ended.left)).toMatchObject({ _tag: "RunCancelledError", reason: "CancelledByClient" })

/** A run's message stopped before the server answered it, on `server()`. */
export const stopBeforeAnswerOn = (server: () => TestServer) => {
  /**
   * A server whose answer to the message `held` (its status, headers and first event) waits until
   * `answer` is called, with what the script gives then: the server took the request, stored its
   * message and holds the thread's run lock, the client has no name for the run yet. Other
   * messages are answered at once.
   */
  const holdingAnswerTo = (held: string) =>
    Effect.sync(() => {
      let answer!: (script: Script.Script) => void
      const answered = new Promise<Script.Script>((resolve) => (answer = resolve))
      let arrived = false
      server().setScript(Script.beforeResponse((request) => {
        if (request.text !== held) return [Script.text(`re: ${request.text}`)]
        arrived = true
        return answered
      }))
      return { answer, arrived: until(() => arrived) }
    })

  /** A thread with one finished run on it. */
  const aThread = Effect.map(
    Effect.zipRight(Effect.sync(() => server().setScript([Script.text("hi")])), runAll("first")),
    (events) => events.at(-1)!.threadId
  )

  /** The message `text` on `threadId` (a new conversation without), stopped before the server answered it. */
  const stopBeforeAnswer = (tambo: Tambo.Tambo.Service, text: string, threadId?: string) =>
    Effect.gen(function* () {
      const { answer, arrived } = yield* holdingAnswerTo(text)
      const run = yield* Effect.fork(Effect.either(runAll(text, threadId === undefined ? undefined : { threadId })))
      yield* arrived
      const stopping = yield* Effect.fork(tambo.cancelRun(threadId))
      yield* suspended(stopping)
      return { answer, run, stopping }
    })

  /** How many run requests of the message `text` the server received. */
  const sent = (text: string): number =>
    server().requests.filter((request) => request.method === "POST" && request.rawBody.includes(`"text":"${text}"`)).length

  return { aThread, holdingAnswerTo, sent, stopBeforeAnswer }
}
