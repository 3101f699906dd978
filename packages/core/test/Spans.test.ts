import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Tambo from "../src/Tambo.js"
import type { TamboError } from "../src/TamboError.js"
import { runAll, tamboLayer, useServer, weather } from "./helpers.js"
import { ancestors, makeTracer, type RecordedSpan } from "./tracing.js"

const SECRET_API_KEY = "sk-tambo-secret-api-key-7f3a9c"
const SECRET_USER_TOKEN = "user-token-secret-4b1d22e8"

const serverClock = { offsetMillis: 0 }
const server = useServer({ apiKey: SECRET_API_KEY, now: () => Date.now() + serverClock.offsetMillis })

const named = (spans: ReadonlyArray<RecordedSpan>, name: string) => spans.filter((s) => s.name === name)

/** A run that streams a little then hangs, forked; resumes with its fiber once RUN_STARTED named it. */
const startHangingRun = Effect.gen(function* () {
  server().setScript([Script.text("Partial"), Script.hang()])
  const tambo = yield* Tambo.Tambo
  const started = yield* Deferred.make<{ readonly threadId: string; readonly runId: string }>()
  const running = yield* tambo.run("wait forever").pipe(
    Stream.tap((e) =>
      e.event.type === "RUN_STARTED"
        ? Deferred.succeed(started, { threadId: e.event.threadId, runId: e.event.runId })
        : Effect.void
    ),
    Stream.runDrain,
    Effect.fork
  )
  return { running, ...(yield* Deferred.await(started)) }
})

// ---------------------------------------------------------------------------

/** Two tool rounds (Paris, then Lyon), then the answer: three HTTP run streams. */
const twoToolRounds = () =>
  server().setScript((request) =>
    request.toolResults.length === 0
      ? [Script.text("Let me check. "), Script.toolCall("get_weather", { city: "Paris" }, { id: "call-paris" })]
      : request.toolResults[0]!.toolUseId === "call-paris"
      ? [Script.toolCall("get_weather", { city: "Lyon" }, { id: "call-lyon" })]
      : [Script.text("Sunny in both.")]
  )

describe("spans", () => {
  it.live("a run is the root of its steps, tool calls and HTTP requests, with thread and run ids", () => {
    const { layer, spans } = makeTracer()
    return Effect.gen(function* () {
      serverClock.offsetMillis = 0
      twoToolRounds()
      const events = yield* runAll("weather in Paris and Lyon?")
      const threadId = events.at(-1)!.threadId
      const runIds = events.flatMap((e) => e.event.type === "RUN_STARTED" ? [e.event.runId] : [])
      expect(runIds).toHaveLength(3)

      const [run, ...otherRuns] = named(spans, "Tambo.run")
      expect(otherRuns).toEqual([])
      expect(run!.status._tag).toBe("Ended")
      expect(Object.fromEntries(run!.attributes)).toMatchObject({
        "tambo.thread_id": threadId,
        "tambo.run_id": runIds[0],
        "tambo.max_steps": 10
      })
      const inRun = (span: RecordedSpan) => ancestors(span).includes(run!)

      // One step per HTTP run stream, each a child of the run, with its own run id.
      const steps = named(spans, "Tambo.step")
      expect(steps).toHaveLength(3)
      for (const step of steps) expect(step.parent).toEqual(Option.some(run))
      expect(steps.map((s) => s.attributes.get("tambo.thread_id"))).toEqual([threadId, threadId, threadId])
      expect(steps.map((s) => s.attributes.get("tambo.run_id"))).toEqual(runIds)

      // Tool rounds run between steps, under the run, with the run id that asked for them.
      const rounds = named(spans, "Tambo.executeTools")
      expect(rounds).toHaveLength(2)
      for (const round of rounds) expect(inRun(round)).toBe(true)
      expect(rounds.map((r) => r.attributes.get("tambo.thread_id"))).toEqual([threadId, threadId])
      expect(rounds.map((r) => r.attributes.get("tambo.run_id"))).toEqual(runIds.slice(0, 2))
      const calls = named(spans, "ToolExecutor.call")
      expect(calls.map((c) => [c.attributes.get("tool.name"), c.attributes.get("tool.call_id")])).toEqual([
        ["get_weather", "call-paris"],
        ["get_weather", "call-lyon"]
      ])
      calls.forEach((call, i) => expect(ancestors(call)).toContain(rounds[i]))
      for (const call of calls) expect(inRun(call)).toBe(true)

      // The HTTP requests (the platform's client spans) sit in their step.
      const http = spans.filter((s) => s.kind === "client")
      expect(http.map((s) => s.attributes.get("url.path"))).toEqual([
        "/v1/threads/runs",
        `/v1/threads/${threadId}/runs`,
        `/v1/threads/${threadId}/runs`
      ])
      http.forEach((request, i) => {
        expect(ancestors(request)).toContain(steps[i])
        expect(inRun(request)).toBe(true)
        expect(request.attributes.get("http.request.method")).toBe("POST")
      })

      // One trace, every span of it ended.
      const tree = spans.filter((s) => s === run || inRun(s))
      expect(tree.length).toBeGreaterThanOrEqual(1 + 3 + 2 + 2 + 3)
      for (const span of tree) {
        expect(span.traceId).toBe(run!.traceId)
        expect(span.status._tag).toBe("Ended")
      }
    }).pipe(Effect.provide(tamboLayer(server(), { tools: [weather] })), Effect.provide(layer))
  })

  it.live("a run on a thread the client has not loaded fetches it inside the run's span", () => {
    const { layer, spans } = makeTracer()
    return Effect.gen(function* () {
      serverClock.offsetMillis = 0
      server().setScript([Script.text("hello again")])
      const seeded = server().threads.create({ userKey: "user-1", messages: [{ role: "user", content: "before" }] })
      yield* runAll("hi", { threadId: seeded.id })
      const [run] = named(spans, "Tambo.run")
      expect(run!.attributes.get("tambo.thread_id")).toBe(seeded.id)
      const [retrieve] = named(spans, "TamboTransport.retrieveThread")
      expect(ancestors(retrieve!)).toContain(run)
      expect(retrieve!.attributes.get("tambo.thread_id")).toBe(seeded.id)
    }).pipe(Effect.provide(tamboLayer(server())), Effect.provide(layer))
  })

  it.live("an interrupted run tells the server inside its span, which ends interrupted", () => {
    const { layer, spans } = makeTracer()
    return Effect.gen(function* () {
      serverClock.offsetMillis = 0
      const { running, runId } = yield* startHangingRun
      yield* Fiber.interrupt(running)
      const [run] = named(spans, "Tambo.run")
      expect(run!.exit !== undefined && Exit.isInterrupted(run!.exit)).toBe(true)
      const [cancel] = named(spans, "TamboTransport.cancelRun")
      expect(ancestors(cancel!)).toContain(run)
      expect(cancel!.attributes.get("tambo.run_id")).toBe(runId)
      const [step] = named(spans, "Tambo.step")
      expect(step!.parent).toEqual(Option.some(run))
      expect(step!.status._tag).toBe("Ended")
      expect(server().cancels.map((c) => c.runId)).toEqual([runId])
    }).pipe(Effect.provide(tamboLayer(server())), Effect.provide(layer))
  })

  it.live("a step whose stream breaks ends its span with the failure the run fails with", () => {
    const { layer, spans } = makeTracer()
    return Effect.gen(function* () {
      serverClock.offsetMillis = 0
      server().setScript([Script.text("Partial"), Script.drop()])
      const tambo = yield* Tambo.Tambo
      const failure = yield* Effect.flip(Stream.runDrain(tambo.run("break")))
      expect(failure._tag).toBe("TransportError")
      const [step, ...others] = named(spans, "Tambo.step")
      expect(others).toEqual([])
      const [run] = named(spans, "Tambo.run")
      expect(step!.parent).toEqual(Option.some(run))
      expect(step!.ends).toBe(1)
      const exit = step!.exit!
      expect(Exit.isFailure(exit) && Option.map(Cause.failureOption(exit.cause), (e) => (e as TamboError)._tag))
        .toEqual(Option.some("TransportError"))
      // Ended as the step broke, before the run's end tells the server.
      const [cancel] = named(spans, "TamboTransport.cancelRun")
      expect(step!.status._tag === "Ended" && cancel!.status.startTime >= step!.status.endTime).toBe(true)
    }).pipe(Effect.provide(tamboLayer(server())), Effect.provide(layer))
  })

  it.live("a step on a known thread whose stream breaks ends its span before the run's end tells the server", () => {
    const { layer, spans } = makeTracer()
    return Effect.gen(function* () {
      serverClock.offsetMillis = 0
      const tambo = yield* Tambo.Tambo
      server().setScript([Script.text("Hello")])
      const threadId = (yield* runAll("first")).at(-1)!.threadId
      server().setScript([Script.text("Partial"), Script.drop()])
      const failure = yield* Effect.flip(Stream.runDrain(tambo.run("break", { threadId })))
      expect(failure._tag).toBe("TransportError")
      const step = named(spans, "Tambo.step").at(-1)!
      expect(step.ends).toBe(1)
      const [cancel] = named(spans, "TamboTransport.cancelRun")
      expect(step.status._tag === "Ended" && cancel!.status.startTime >= step.status.endTime).toBe(true)
    }).pipe(Effect.provide(tamboLayer(server())), Effect.provide(layer))
  })

  it.live("cancelRun cancels on the server (DELETE before the connection closes) inside its span, with the ids; the step's span ends once, before the run's", () => {
    const { layer, spans } = makeTracer()
    return Effect.gen(function* () {
      serverClock.offsetMillis = 0
      const tambo = yield* Tambo.Tambo
      const { running, ...ids } = yield* startHangingRun
      yield* tambo.cancelRun(ids.threadId)
      const exit = yield* Fiber.await(running)
      expect(Exit.isFailure(exit) && Option.map(Cause.failureOption(exit.cause), (e) => e._tag)).toEqual(
        Option.some("RunCancelledError")
      )
      const [cancelRun] = named(spans, "Tambo.cancelRun")
      const [cancel] = named(spans, "TamboTransport.cancelRun")
      expect(ancestors(cancel!)).toContain(cancelRun)
      expect(Object.fromEntries(cancelRun!.attributes)).toMatchObject({ "tambo.thread_id": ids.threadId })
      expect(Object.fromEntries(cancel!.attributes)).toMatchObject({
        "tambo.thread_id": ids.threadId,
        "tambo.run_id": ids.runId
      })
      expect(server().cancels.map((c) => [c.runId, c.reason])).toEqual([[ids.runId, "user_cancelled"]])
      // The cancelled step ends its span once, with the failure, no later than the run's.
      const [step, ...others] = named(spans, "Tambo.step")
      expect(others).toEqual([])
      const [run] = named(spans, "Tambo.run")
      expect([step!.ends, run!.ends]).toEqual([1, 1])
      expect(step!.status._tag === "Ended" && run!.status._tag === "Ended" && step!.status.endTime <= run!.status.endTime)
        .toBe(true)
      expect(step!.exit !== undefined && Exit.isFailure(step!.exit)).toBe(true)
    }).pipe(Effect.provide(tamboLayer(server())), Effect.provide(layer))
  })
})

// ---------------------------------------------------------------------------

/** Everything a span, a log line or an error can show. */
const safeJson = (u: unknown): string => {
  try {
    return JSON.stringify(u, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value)) ?? ""
  } catch {
    return String(u)
  }
}

const describeSpan = (span: RecordedSpan): string =>
  [
    span.name,
    safeJson(Object.fromEntries(span.attributes)),
    safeJson(span.events),
    span.exit === undefined || span.exit._tag === "Success" ? "" : Cause.pretty(span.exit.cause),
    span.exit === undefined || span.exit._tag === "Success"
      ? ""
      : Cause.failures(span.exit.cause).pipe((failures) => safeJson([...failures]))
  ].join("\n")

const describeError = (error: unknown): string =>
  [String(error), safeJson(error), Cause.pretty(Cause.fail(error))].join("\n")

describe("secrets", () => {
  it.live("the API key and tokens appear in no span, log line or error", () => {
    const { layer: tracing, spans } = makeTracer()
    const logs: Array<string> = []
    const logger = Logger.make(({ annotations, cause, logLevel, message }) => {
      logs.push(
        [logLevel.label, safeJson(message), safeJson(Object.fromEntries(annotations)), Cause.pretty(cause)].join(" ")
      )
    })
    const observed = Layer.mergeAll(
      tracing,
      Logger.replace(Logger.defaultLogger, logger),
      Logger.minimumLogLevel(LogLevel.All)
    )
    const errors: Array<unknown> = []
    const expiredSubjectToken = [
      Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url"),
      Buffer.from(JSON.stringify({ sub: "secret-subject", exp: 1_000 })).toString("base64url"),
      "secret-signature-91be"
    ].join(".")

    const withToken = Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      twoToolRounds()
      const events = yield* runAll("weather?")
      const threadId = events.at(-1)!.threadId
      // The server expires the access token: 401, a new exchange, a retried run.
      serverClock.offsetMillis = Duration.toMillis(Duration.hours(1)) + 1_000
      server().setScript([Script.text("again")])
      yield* runAll("again")
      // Failures: an HTTP 500 run, a thread of nobody's.
      server().setScript([Script.httpError(500)])
      errors.push(yield* Effect.flip(runAll("boom")))
      errors.push(yield* Effect.flip(tambo.fetchThread("thread-of-nobody")))
      logs.push(safeJson(yield* tambo.authState))
      return threadId
    }).pipe(
      Effect.provide(
        Tambo.layer({
          apiKey: SECRET_API_KEY,
          tamboUrl: server().url,
          userToken: SECRET_USER_TOKEN,
          maxRetries: 0,
          tools: [weather]
        })
      )
    )

    const refused = Effect.gen(function* () {
      const tambo = yield* Tambo.Tambo
      errors.push(yield* Effect.flip(runAll("hi")))
      const state = yield* tambo.authState
      expect(state.status).toBe("error")
      if (state.status === "error") errors.push(state.error)
      logs.push(safeJson(state))
    }).pipe(
      Effect.provide(
        Tambo.layer({ apiKey: SECRET_API_KEY, tamboUrl: server().url, userToken: expiredSubjectToken, maxRetries: 0 })
      )
    )

    return Effect.gen(function* () {
      serverClock.offsetMillis = 0
      yield* withToken
      yield* refused
      expect(errors.map((e) => (e as { _tag: string })._tag)).toEqual([
        "ApiError",
        "ApiError",
        "AuthError",
        "AuthError"
      ])

      const accessTokens = server().requests.flatMap((r) =>
        r.headers.authorization === undefined ? [] : [r.headers.authorization.replace(/^Bearer /, "")]
      )
      expect(new Set(accessTokens).size).toBe(2)
      const secrets = [SECRET_API_KEY, SECRET_USER_TOKEN, expiredSubjectToken, "secret-signature-91be", ...accessTokens]

      const haystacks = {
        spans: spans.map(describeSpan).join("\n"),
        logs: logs.join("\n"),
        errors: errors.map(describeError).join("\n")
      }
      // What was captured is substantial: request headers (redacted), exchange logs, failures.
      expect(spans.length).toBeGreaterThan(20)
      expect(haystacks.spans).toContain("http.request.header.authorization")
      expect(haystacks.spans).toContain("<redacted>")
      expect(haystacks.logs).toContain("Tambo access token obtained")
      expect(haystacks.logs).toContain("Tambo token exchange failed")
      expect(haystacks.errors).toContain("Token has expired")
      for (const [where, text] of Object.entries(haystacks)) {
        for (const secret of secrets) {
          expect({ where, leaked: text.includes(secret) }).toEqual({ where, leaked: false })
        }
      }
    }).pipe(Effect.provide(observed))
  })
})
