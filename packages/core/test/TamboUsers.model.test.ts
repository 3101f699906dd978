// A model-based test of TamboUsers: fast-check generates sequences of runs for four users (three
// user keys, and one who signs in with a token that rotates; through `get` and through `run`),
// invalidations and the passing of time (the TestClock; the runs themselves go to the testing
// server on loopback), against one pool with a one-minute idleTimeToLive, and no `maxUsers`, 2 or
// 3 (a new user past it evicts the user idle the longest). After every step: the pool holds a service for exactly the users the model says
// are alive; a user's run finds the service (and the thread) of the user's last run while it lives,
// and a new, empty one once it was released; no two users share a service.
//
// Seeded, so a failure reproduces; MODEL_RUNS and MODEL_SEED for longer or other runs.
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as fc from "effect/FastCheck"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as ClientState from "../src/ClientState.js"
import type * as Tambo from "../src/Tambo.js"
import * as TamboUsers from "../src/TamboUsers.js"
import { useServer } from "./helpers.js"

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

const user = fc.constantFrom<User>("ann", "ben", "cy", "dee")
const token = fc.constantFrom<0 | 1>(0, 1)

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("get" as const), user, token }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("run" as const), user, token }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("invalidate" as const), user }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("wait" as const), seconds: fc.constantFrom(30 as const, 59 as const, 60 as const, 120 as const) }) }
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

interface Model {
  now: number
  /** The live services, the one idle the longest first (a user's call moves them to the end). */
  readonly alive: Map<User, Alive>
  /** The pool's `maxUsers`, if any: a new user past it evicts the first of `alive`. */
  readonly maxUsers: number | undefined
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

/** One run for the user, through `get`: checks the service it finds, and the thread it continues. */
const runThroughGet = (users: TamboUsers.TamboUsers.Service, model: Model, seen: Seen, name: User, token: 0 | 1) =>
  Effect.scoped(Effect.gen(function*() {
    const tambo = yield* users.get(asUser(name, token))
    const alive = model.alive.get(name)
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

const step = (users: TamboUsers.TamboUsers.Service, model: Model, seen: Seen, cmd: Command) =>
  Effect.gen(function*() {
    switch (cmd.kind) {
      case "get":
      case "run": {
        if (cmd.kind === "get") yield* runThroughGet(users, model, seen, cmd.user, cmd.token)
        else yield* Stream.runDrain(users.run(asUser(cmd.user, cmd.token), "hi"))
        const alive = model.alive.get(cmd.user)
        if (alive === undefined) {
          // Between commands nothing is in use: a new user past the bound evicts the one idle the longest.
          if (model.maxUsers !== undefined && model.alive.size >= model.maxUsers) {
            model.alive.delete(model.alive.keys().next().value!)
          }
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
        yield* users.invalidate(cmd.user === "dee" ? { id: "dee" } : cmd.user)
        model.alive.delete(cmd.user)
        return
      }
      case "wait": {
        yield* TestClock.adjust(Duration.seconds(cmd.seconds))
        model.now += cmd.seconds * 1000
        for (const [name, alive] of model.alive) {
          if (model.now - alive.releasedAt >= Duration.toMillis(TTL)) model.alive.delete(name)
        }
        return
      }
    }
  })

/** The pool holds a service for exactly the users the model says are alive. */
const checkUsers = (users: TamboUsers.TamboUsers.Service, model: Model, after: string) =>
  Effect.map(users.users, (names) =>
    expect(names.map(nameOf).sort(), `users after ${after}`).toEqual([...model.alive.keys()].sort()))

const play = (maxUsers: number | undefined, commands: ReadonlyArray<Command>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const users = yield* Scope.extend(
      TamboUsers.make({ apiKey: server().apiKey, tamboUrl: server().url, maxRetries: 0, idleTimeToLive: TTL, maxUsers }),
      scope
    )
    const model: Model = { now: 0, alive: new Map(), maxUsers }
    const seen: Seen = { current: new Map(), all: new Set() }
    yield* Effect.forEach(commands, (cmd) =>
      Effect.zipRight(step(users, model, seen, cmd), checkUsers(users, model, JSON.stringify(cmd))), { discard: true }).pipe(
        Effect.ensuring(Scope.close(scope, Exit.void))
      )
  })

const runs = Number(process.env.MODEL_RUNS ?? 60)
const seed = Number(process.env.MODEL_SEED ?? 35)

describe("TamboUsers, model-based", () => {
  it.effect("every sequence of runs, invalidations and waits keeps one live service per user, for as long as it should", () =>
    Effect.gen(function*() {
      server().setScript([Script.text("ok")])
      const runtime = yield* Effect.runtime<never>()
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.constantFrom(undefined, 2, 3),
            fc.array(command, { maxLength: 8 }),
            (maxUsers, commands) => Runtime.runPromise(runtime)(play(maxUsers, commands))
          ),
          { numRuns: runs, seed }
        )
      )
    }), 60_000)
})
