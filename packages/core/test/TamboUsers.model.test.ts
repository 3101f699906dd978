// A model-based test of TamboUsers: fast-check generates sequences of runs for four users (three
// user keys, and one who signs in with a token that rotates; through `get` and through `run`),
// invalidations, the passing of time (the TestClock, moved only once the closes held are released:
// a close's own bound runs on it), and the holding and releasing of the `DELETE`s that end MCP
// sessions, against one pool with a one-minute idleTimeToLive, and no
// `maxUsers`, 1, 2 or 3 (a new user past it evicts the user idle the longest). Every user's service
// connects to an MCP server on loopback (the runs go to the testing server), so a service released
// (invalidated, idle, evicted, or the pool closed) ends its session with a `DELETE`; while the
// server holds them, those services are closing: they count against `maxUsers`, and a call that
// needs room (or its user's service closed) waits. Such calls are forked, and the model knows which
// calls wait and that they end only after the release (or once a client gave up on its held
// `DELETE`, which it does after a while of real time: then the model releases too). After every step: the pool holds a service
// for exactly the users the model says are alive, no more sessions are open than `maxUsers`, a
// user's call finds the service (and the thread) of the user's last call while it lives, and a new,
// empty one (never one seen before) once it was released or while it closes; no two users share a
// service. Once released, the calls that waited have ended, each with a new service, and the pool
// holds at most `maxUsers` of them. Once the pool is closed (the closes held, then released), every
// service made is closed: every session got its `DELETE`.
//
// Seeded, so a failure reproduces; MODEL_RUNS and MODEL_SEED for longer or other runs.
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as fc from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as ClientState from "../src/ClientState.js"
import type * as Tambo from "../src/Tambo.js"
import * as TamboUsers from "../src/TamboUsers.js"
import { useServer } from "./helpers.js"
import { eventually, type GatedMcpServer, gatedMcpServer } from "./mcp/server.js"
import { calculator } from "./mcp/tools.js"

const server = useServer()

const TTL = Duration.minutes(1)

/** `dee` signs in with a token, one of two (a rotation), chosen at each call. */
type User = "ann" | "ben" | "cy" | "dee"

type Command =
  /** A run for the user through `get` (so the test sees the service), drained. */
  | { readonly kind: "get"; readonly user: User; readonly token: 0 | 1 }
  /** A run for the user through the pool's `run`, drained. */
  | { readonly kind: "run"; readonly user: User; readonly token: 0 | 1 }
  | { readonly kind: "invalidate"; readonly user: User }
  | { readonly kind: "wait"; readonly seconds: 30 | 59 | 60 | 120 }
  /** From now on the MCP server holds the `DELETE`s that end sessions: services released stay closing. */
  | { readonly kind: "holdCloses" }
  /** The `DELETE`s held are answered: the services closing close, the calls waiting go on. */
  | { readonly kind: "releaseCloses" }

const user = fc.constantFrom<User>("ann", "ben", "cy", "dee")
const token = fc.constantFrom<0 | 1>(0, 1)

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("get" as const), user, token }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("run" as const), user, token }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("invalidate" as const), user }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("wait" as const), seconds: fc.constantFrom(30 as const, 59 as const, 60 as const, 120 as const) }) },
  { weight: 2, arbitrary: fc.constant({ kind: "holdCloses" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "releaseCloses" as const }) }
)

/**
 * A user's service as the model sees it: when it was last let go, how many runs it has served,
 * and whether the test has seen it (one `run` made is only seen at the next `get`).
 */
interface Alive {
  releasedAt: number
  runs: number
  seen: boolean
}

/** A call forked because it waits: for room, for its user's service to close, or (`invalidate`) for the close it began. */
interface Waiter {
  readonly label: string
  readonly kind: "get" | "run" | "invalidate"
  readonly user: User
  readonly fiber: Fiber.RuntimeFiber<void, unknown>
  /** The hold it was forked in: it ends only after that hold is released. */
  readonly hold: number
}

interface Model {
  now: number
  /** The live services, the one idle the longest first (a user's call moves them to the end). */
  readonly alive: Map<User, Alive>
  /** The pool's `maxUsers`, if any: a new user past it evicts the first of `alive`, or waits. */
  readonly maxUsers: number | undefined
  /** Whether the server holds `DELETE`s now; which hold (counted from 1). */
  held: boolean
  hold: number
  /** Services closing while the `DELETE`s are held: they count against `maxUsers` until released. */
  closing: number
  waiters: Array<Waiter>
  /** The users of the `get`s and `run`s that waited, in the order they let go of their services. */
  ended: Array<{ readonly user: User; readonly kind: "get" | "run" }>
  /** Services made (each lists its MCP tools once connected), and closes begun (each sends a `DELETE`). */
  made: number
  closes: number
}

/** The services each user had, in order: a new one is never one seen before. */
interface Seen {
  readonly current: Map<User, Tambo.Tambo.Service>
  readonly all: Set<Tambo.Tambo.Service>
}

const messageCount = (tambo: Tambo.Tambo.Service) =>
  Effect.map(tambo.state, (state) => ClientState.getMessages(state, state.currentThreadId).length)

/** Two tokens of `dee`'s, as an identity provider rotates them. */
const exp = Math.floor(Date.now() / 1000) + 3_600
const DEE_TOKENS = [0, 1].map((i) =>
  [
    Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url"),
    Buffer.from(JSON.stringify({ sub: "dee", iss: "https://issuer.example", exp: exp + i })).toString("base64url"),
    "signature"
  ].join(".")
)

/** The user as the pool is given them. */
const asUser = (name: User, token: 0 | 1): TamboUsers.User =>
  name === "dee" ? { id: "dee", userToken: DEE_TOKENS[token]! } : name

/** The user as the pool names them, as a string to sort. */
const nameOf = (name: TamboUsers.UserName): string => (typeof name === "string" ? name : name.id)

/**
 * One run for the user, through `get`: checks the service it finds (the one of their last call, if
 * `alive` says it was seen, else one never seen), and the thread it continues.
 */
const runThroughGet = (users: TamboUsers.TamboUsers.Service, seen: Seen, name: User, token: 0 | 1, alive: Alive | undefined) =>
  Effect.scoped(Effect.gen(function*() {
    const tambo = yield* users.get(asUser(name, token))
    if (alive?.seen === true) {
      expect(tambo, `${name} gets the service of their last run`).toBe(seen.current.get(name))
    } else {
      expect(seen.all.has(tambo), `${name} gets a service not seen before`).toBe(false)
    }
    expect(yield* messageCount(tambo), `${name}'s thread holds the runs of their service`).toBe(2 * (alive?.runs ?? 0))
    seen.current.set(name, tambo)
    seen.all.add(tambo)
    yield* Stream.runDrain(tambo.run("hi"))
  }))

/** What a call needs: `inline` if it ends at once; `wait` if it waits for the release; `evict` the user it evicts first. */
const plan = (model: Model, name: User): { readonly wait: boolean; readonly evict: User | undefined } => {
  if (model.alive.has(name)) return { wait: false, evict: undefined }
  const full = model.maxUsers !== undefined && model.alive.size + model.closing >= model.maxUsers
  if (!full) return { wait: false, evict: undefined }
  const oldest: User | undefined = model.alive.keys().next().value
  // Every service counted is closing: only while the closes are held.
  if (oldest === undefined) return { wait: true, evict: undefined }
  return { wait: model.held, evict: oldest }
}

/**
 * `effect`, or a defect naming `what` if it has not ended after a while (it may be stuck: it is left
 * behind). The bound is interruptible even where `bounded` is not (a finalizer): else the race would
 * wait for the bound to run out every time `effect` ends first.
 */
const bounded = <A, E, R>(what: string, effect: Effect.Effect<A, E, R>) =>
  Effect.raceFirst(
    Effect.disconnect(effect),
    Effect.interruptible(Effect.zipRight(eventually(what, () => false, 8_000), Effect.never))
  )

/** Closes begun, not held: once their sessions ended on the server and their clients let go of them. */
const settle = (mcp: GatedMcpServer, model: Model) =>
  Effect.gen(function*() {
    yield* eventually(`${model.closes} DELETEs`, () => mcp.deletes() >= model.closes)
    expect(mcp.deletes(), "no service closed that the model keeps").toBe(model.closes)
    if (model.held) return
    yield* eventually("the sessions closed, their event streams ended", () => {
      const { closed, opened } = mcp.server.sessions
      return closed === model.closes && mcp.server.openRequests === opened - closed
    })
    // What is left of a close runs in this process, without input or output.
    for (let i = 0; i < 3; i++) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 0)))
  })

/**
 * Every service made has its MCP session opened, and every live one has it listed (its client holds
 * it): so closing it sends its DELETE then (one closed before would end its session later).
 */
const connected = (mcp: GatedMcpServer, model: Model) =>
  Effect.gen(function*() {
    yield* eventually(`${model.made} sessions opened`, () => mcp.server.sessions.opened >= model.made)
    expect(mcp.server.sessions.opened, "no service made that the model does not know").toBe(model.made)
    yield* eventually(`${model.alive.size} sessions listed`, () => mcp.listedOpen() >= model.alive.size)
  })

/** The calls waiting now have not ended (unless a `DELETE` held was given up on by its client: then they may). */
const checkWaiting = (mcp: GatedMcpServer, model: Model, abandoned: number) =>
  Effect.forEach(model.waiters, (waiter) =>
    Effect.gen(function*() {
      if (waiter.hold !== model.hold || !model.held || waiter.fiber.unsafePoll() === null) return
      const exit = waiter.fiber.unsafePoll()!
      if (Exit.isFailure(exit)) return yield* Effect.failCause(exit.cause)
      // Ended before the release: right only if its client gave up on a held DELETE.
      yield* eventually(`${waiter.label} ended while the closes were held`, () => mcp.abandoned() > abandoned, 3_000)
    }), { discard: true })

const step = (
  users: TamboUsers.TamboUsers.Service,
  mcp: GatedMcpServer,
  model: Model,
  seen: Seen,
  cmd: Command,
  /** Where the calls that wait are forked: they outlive the step (which is raced against a bound). */
  waiting: Scope.Scope
) =>
  Effect.gen(function*() {
    switch (cmd.kind) {
      case "get":
      case "run": {
        // A second call for a user whose call waits would race it on the user's thread.
        if (model.waiters.some((w) => w.user === cmd.user && w.kind !== "invalidate")) return
        const alive = model.alive.get(cmd.user)
        const call = cmd.kind === "get"
          ? runThroughGet(users, seen, cmd.user, cmd.token, alive)
          : Stream.runDrain(users.run(asUser(cmd.user, cmd.token), "hi"))
        const { evict, wait } = plan(model, cmd.user)
        if (evict !== undefined) {
          model.alive.delete(evict)
          model.closes++
          if (model.held) model.closing++
        }
        if (wait) {
          const kind = cmd.kind
          const label = `${cmd.kind} ${cmd.user}`
          const name = cmd.user
          const fiber = yield* Effect.forkIn(
            Effect.zipRight(call, Effect.sync(() => void model.ended.push({ user: name, kind }))),
            waiting
          )
          model.waiters.push({ label, kind, user: cmd.user, fiber, hold: model.hold })
          return
        }
        yield* call
        if (alive === undefined) {
          model.made++
          model.alive.set(cmd.user, { releasedAt: model.now, runs: 1, seen: cmd.kind === "get" })
        } else {
          alive.releasedAt = model.now
          alive.runs++
          alive.seen ||= cmd.kind === "get"
          model.alive.delete(cmd.user)
          model.alive.set(cmd.user, alive)
        }
        return
      }
      case "invalidate": {
        const invalidate = users.invalidate(cmd.user === "dee" ? { id: "dee" } : cmd.user)
        if (!model.alive.delete(cmd.user)) return yield* invalidate
        model.closes++
        if (!model.held) return yield* invalidate
        // Its close is held: it ends once released.
        model.closing++
        const fiber = yield* Effect.forkIn(invalidate, waiting)
        model.waiters.push({ label: `invalidate ${cmd.user}`, kind: "invalidate", user: cmd.user, fiber, hold: model.hold })
        return
      }
      case "wait": {
        // A close's own bound runs on the clock: moving it while a DELETE is held would end the
        // close at a time the model cannot know (or not, if the close began during the move).
        // So the closes held are released first.
        if (model.held) yield* release(users, mcp, model)
        yield* TestClock.adjust(Duration.seconds(cmd.seconds))
        model.now += cmd.seconds * 1000
        for (const [name, alive] of model.alive) {
          if (model.now - alive.releasedAt >= Duration.toMillis(TTL)) {
            model.alive.delete(name)
            model.closes++
          }
        }
        return
      }
      case "holdCloses": {
        if (model.held) return
        mcp.hold()
        model.held = true
        model.hold++
        return
      }
      case "releaseCloses": {
        if (model.held) yield* release(users, mcp, model)
        return
      }
    }
  })

/** Releases the closes held: every call waiting ends, each with a new service, and at most `maxUsers` of them stay. */
const release = (users: TamboUsers.TamboUsers.Service, mcp: GatedMcpServer, model: Model) =>
  Effect.gen(function*() {
    mcp.release()
    model.held = false
    model.closing = 0
    yield* Effect.forEach(model.waiters, (waiter) =>
      bounded(`${waiter.label} ends once the closes are released`, Fiber.join(waiter.fiber)), { discard: true })
    model.waiters = []
    // The users whose calls waited, in the order they let go: the newest idle last.
    const ended = model.ended.map((e) => e.user)
    const firstEnded = new Map(model.ended.map((e) => [e.user, e.kind] as const))
    model.ended = []
    model.made += ended.length
    const before = [...model.alive.keys()]
    const names = new Set((yield* users.users).map(nameOf) as Array<User>)
    const expected = before.length + ended.length
    if (model.maxUsers === undefined) {
      expect([...names].sort(), "after the release, every user that had or waited for a service").toEqual([...before, ...ended].sort())
    } else {
      expect(names.size, "after the release, users").toBeLessThanOrEqual(Math.min(model.maxUsers, expected))
      for (const name of names) expect([...before, ...ended], "after the release, users").toContain(name)
      // The users idle the longest made room first.
      const kept = before.filter((name) => names.has(name))
      expect(kept, "after the release, the users evicted were those idle the longest").toEqual(before.slice(before.length - kept.length))
      if (ended.length > 0) expect(names.has(ended[ended.length - 1]!), "the user whose call ended last keeps their service").toBe(true)
    }
    model.closes += expected - names.size
    const alive = new Map(model.alive)
    model.alive.clear()
    for (const name of before) if (names.has(name)) model.alive.set(name, alive.get(name)!)
    for (const name of ended) {
      if (names.has(name)) model.alive.set(name, { releasedAt: model.now, runs: 1, seen: firstEnded.get(name) === "get" })
    }
  })

/** After a step: no waiting call ended early, the users are the model's, the sessions bounded. */
const check = (users: TamboUsers.TamboUsers.Service, mcp: GatedMcpServer, model: Model, after: string, abandoned: { n: number }) =>
  Effect.gen(function*() {
    yield* checkWaiting(mcp, model, abandoned.n)
    if (mcp.abandoned() > abandoned.n) {
      // A client gave up on a DELETE held: what waited may have gone on, so release now and look again.
      abandoned.n = mcp.abandoned()
      if (model.held) yield* release(users, mcp, model)
    }
    yield* connected(mcp, model)
    yield* settle(mcp, model)
    const names = (yield* users.users).map(nameOf)
    expect(new Set(names).size, `one service per user after ${after}`).toBe(names.length)
    expect(names.sort(), `users after ${after}`).toEqual([...model.alive.keys()].sort())
    const { closed, opened } = mcp.server.sessions
    if (model.maxUsers !== undefined) {
      expect(opened - closed, `sessions open (services alive or closing) after ${after}`).toBeLessThanOrEqual(model.maxUsers)
    }
    if (!model.held || model.waiters.length === 0) {
      expect(opened - closed, `sessions open after ${after}`).toBe(model.alive.size + model.closing)
    }
  })

const play = (maxUsers: number | undefined, commands: ReadonlyArray<Command>) =>
  Effect.scoped(Effect.gen(function*() {
    const mcp = yield* gatedMcpServer(calculator)
    const waiting = yield* Effect.scope
    const scope = yield* Scope.make()
    const users = yield* Scope.extend(
      TamboUsers.make({
        apiKey: server().apiKey,
        tamboUrl: server().url,
        maxRetries: 0,
        idleTimeToLive: TTL,
        maxUsers,
        mcpServers: [{ url: mcp.url }]
      }),
      scope
    )
    const model: Model = {
      now: 0,
      alive: new Map(),
      maxUsers,
      held: false,
      hold: 0,
      closing: 0,
      waiters: [],
      ended: [],
      made: 0,
      closes: 0
    }
    const seen: Seen = { current: new Map(), all: new Set() }
    const abandoned = { n: 0 }
    const closePool = Effect.gen(function*() {
      // The calls waiting end first; then the pool closes while its services' closes are held.
      const held = model.held
      if (held) yield* release(users, mcp, model)
      yield* connected(mcp, model)
      mcp.hold()
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      // The services (all idle) close together: each one's DELETE is held, none waits for another's.
      if (model.alive.size > 0) {
        yield* eventually("every service closing", () => mcp.held() === model.alive.size)
        yield* Effect.yieldNow()
        if (mcp.abandoned() === abandoned.n) {
          expect(closing.unsafePoll(), "the pool's close waits for its services' closes").toBeNull()
        }
      }
      mcp.release()
      yield* bounded("the pool closes once its services' closes are released", Fiber.join(closing))
      expect(mcp.deletes(), "the pool closed: every service it made was closed").toBe(model.closes + model.alive.size)
      yield* eventually("every session ended", () => mcp.server.sessions.closed === mcp.server.sessions.opened)
      expect(mcp.deletes(), "every service made got its DELETE").toBe(model.made)
      expect(mcp.server.sessions.opened, "one session a service").toBe(model.made)
    })
    yield* Effect.forEach(commands, (cmd) =>
      Effect.zipRight(
        bounded(`${JSON.stringify(cmd)} ends`, step(users, mcp, model, seen, cmd, waiting)),
        check(users, mcp, model, JSON.stringify(cmd), abandoned)
      ), {
      discard: true
    }).pipe(
      Effect.zipRight(closePool),
      Effect.onExit(() => Effect.sync(() => mcp.release())),
      // A close stuck (the failure already told) is left behind.
      Effect.ensuring(Effect.ignore(bounded("the pool closes", Scope.close(scope, Exit.void))))
    )
  }))

const runs = Number(process.env.MODEL_RUNS ?? 60)
const seed = Number(process.env.MODEL_SEED ?? 35)

describe("TamboUsers, model-based", () => {
  it.effect("every sequence of runs, invalidations, waits and closes held keeps one live service per user, at most maxUsers, none leaked", () =>
    Effect.gen(function*() {
      server().setScript([Script.text("ok")])
      const runtime = yield* Effect.runtime<never>()
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.constantFrom(undefined, 1, 2, 3),
            fc.array(command, { maxLength: 10 }),
            (maxUsers, commands) => Runtime.runPromise(runtime)(play(maxUsers, commands))
          ),
          { numRuns: runs, seed }
        )
      )
    }), Number(process.env.MODEL_TIMEOUT ?? 120_000))
})
