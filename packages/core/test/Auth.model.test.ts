// A model-based test of Auth's token exchange and refresh. fast-check generates sequences of
// commands (requests for credentials, calls through withCredentials that may answer 401 once,
// time passing (by a fixed time, or to the next scheduled refresh), the token endpoint's next
// answers, a refresh it fails once, releases of hung exchanges, setUserToken (also twice in one
// synchronous step, the second while the first one's exchange is being forked),
// invalidate, several requests at once, a waiting request giving up) played against the real
// Auth service for a userToken, over a token endpoint the test controls, on the TestClock. A
// plain model of the documented behaviour predicts, after every command, the exchanges asked of
// the endpoint, the published AuthState, and what every request got; the invariants named in
// ./auth/model.ts are checked besides. At the end the service's scope closes: no fiber and no
// refresh timer may be left.
//
// Seeded, so a failure reproduces. Environment, for longer or targeted local runs:
//   MODEL_RUNS (default 300), MODEL_SEED (default 8693), MODEL_MAX_COMMANDS (default 20);
//   MODEL_INVARIANTS: a comma list of the invariants to check (default: all of them).
// A counterexample it shrinks to goes to Auth.counterexamples.test.ts as a named test.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import { commandsArbitrary, runSequence, type Sequence } from "./auth/model.js"

const MODEL_RUNS = Number(process.env.MODEL_RUNS ?? 300)
const MODEL_SEED = Number(process.env.MODEL_SEED ?? 8693)
const MODEL_MAX_COMMANDS = Number(process.env.MODEL_MAX_COMMANDS ?? 20)

const ok = (lifetime: number) => ({ _tag: "ok" as const, lifetime })

/**
 * What the property shrank to when a defect was planted in internal/auth (each named by the
 * defect): replayed as they are, so they keep telling the defect apart whatever the generator
 * becomes.
 */
const knownDefects: ReadonlyArray<readonly [string, Sequence]> = [
  ["setUserToken keeps the old user token's access token", {
    initial: ok(10),
    commands: [{ kind: "setUserToken", which: "new" }, { kind: "ask", asks: ["credentials"] }]
  }],
  ["an exchange sends the user token current when it runs, not the one it was started for", {
    initial: ok(10),
    commands: [{ kind: "setUserTokens", which: ["new", "new"] }]
  }],
  ["an old user token's exchange lands in the slot of the new one's", {
    initial: ok(10),
    commands: [
      { kind: "answer", answer: { _tag: "hang" } },
      { kind: "invalidate", which: "latest" },
      { kind: "ask", asks: ["credentials"] },
      { kind: "setUserToken", which: "new" },
      { kind: "release", outcome: ok(10) }
    ]
  }],
  ["a 401 retries with the token it was refused", { initial: ok(10), commands: [{ kind: "ask", asks: ["call401"] }] }],
  ["a stream's 401 reopens it with the token it was refused", {
    initial: ok(10),
    commands: [{ kind: "ask", asks: ["stream401"] }]
  }],
  ["a token is used until it expires rather than refreshed before", {
    initial: { _tag: "hang" },
    commands: [
      { kind: "advance", millis: 5000 },
      { kind: "release", outcome: ok(10) },
      { kind: "ask", asks: ["credentials", "credentials"] }
    ]
  }],
  ["the refresh timer outlives the service's scope", { initial: ok(10), commands: [] }],
  ["a refusal is asked again", {
    initial: { _tag: "refuse", status: 400 },
    commands: [{ kind: "ask", asks: ["credentials"] }]
  }],
  ["a refresh that fails with a 503 drops the token that still works", {
    initial: ok(10),
    commands: [
      { kind: "answer", answer: { _tag: "fail", status: 503 } },
      { kind: "advance", millis: 5000 },
      { kind: "ask", asks: ["credentials"] }
    ]
  }],
  ["a token kept through a failed refresh is handed out after it expired", {
    initial: ok(10),
    commands: [
      { kind: "answer", answer: { _tag: "fail", status: null } },
      { kind: "advance", millis: 15_000 },
      { kind: "ask", asks: ["credentials"] }
    ]
  }],
  ["a refresh of a token that still works says exchanging", {
    initial: ok(10),
    commands: [{ kind: "answer", answer: { _tag: "hang" } }, { kind: "advance", millis: 5000 }]
  }],
  ["a refresh still in flight when its token expires says identified", {
    initial: ok(10),
    commands: [{ kind: "answer", answer: { _tag: "hang" } }, { kind: "advance", millis: 5000 }, { kind: "advance", millis: 5000 }]
  }],
  ["a request during a refresh of a token that still works waits for the refresh", {
    initial: ok(10),
    commands: [{ kind: "answer", answer: { _tag: "hang" } }, { kind: "advance", millis: 5000 }, { kind: "ask", asks: ["credentials"] }]
  }],
  ["a 401 during a refresh retries with the token it was refused", {
    initial: ok(10),
    commands: [{ kind: "answer", answer: { _tag: "hang" } }, { kind: "advance", millis: 5000 }, { kind: "ask", asks: ["call401"] }]
  }],
  ["a 429's Retry-After is ignored", {
    initial: ok(10),
    commands: [
      { kind: "blip", status: 429, retryAfter: 3 },
      { kind: "untilRefresh" },
      { kind: "advance", millis: 1000 },
      { kind: "ask", asks: ["credentials"] }
    ]
  }],
  ["a 503's Retry-After past maxRetryAfter is ignored rather than cut to it", {
    initial: ok(3600),
    commands: [
      { kind: "blip", status: 503, retryAfter: 20 },
      { kind: "untilRefresh" },
      { kind: "advance", millis: 5000 },
      { kind: "ask", asks: ["credentials"] }
    ]
  }],
  ["a request while no token is held and the token endpoint just failed exchanges again at once", {
    initial: { _tag: "fail", status: 503 },
    commands: [{ kind: "ask", asks: ["credentials", "call", "stream"] }]
  }],
  ["a failed exchange's Retry-After is ignored while no token is held", {
    initial: { _tag: "fail", status: 429, retryAfter: 3 },
    commands: [
      { kind: "advance", millis: 1000 },
      { kind: "ask", asks: ["credentials"] },
      { kind: "advance", millis: 2000 },
      { kind: "ask", asks: ["credentials"] }
    ]
  }],
  ["a 429 is taken for a refusal", {
    initial: ok(10),
    commands: [
      { kind: "answer", answer: { _tag: "fail", status: 429 } },
      { kind: "ask", asks: ["stream401", "credentials", "credentials"] },
      // Failed, not refused: once its backoff is over, a request asks again.
      { kind: "advance", millis: 1000 },
      { kind: "ask", asks: ["credentials"] }
    ]
  }]
]

describe("Auth's token exchange and refresh, model-based", () => {
  it.each(knownDefects)("known defect: %s", (_, sequence) => Effect.runPromise(Effect.asVoid(runSequence(sequence))))

  it("every command leaves the service where the model says, and closing leaves nothing behind", async () => {
    await fc.assert(
      fc.asyncProperty(commandsArbitrary(MODEL_MAX_COMMANDS), (sequence: Sequence) => Effect.runPromise(Effect.asVoid(runSequence(sequence)))),
      { numRuns: MODEL_RUNS, seed: MODEL_SEED }
    )
  }, Math.max(60_000, MODEL_RUNS * 200))

  // The property is only as good as what it generates: every kind of step comes up often.
  it("the sequences cover refreshes, hung exchanges, refusals, failures, 401 retries and rotations", () => {
    const seen = new Map<string, number>()
    for (const sequence of fc.sample(commandsArbitrary(MODEL_MAX_COMMANDS), { numRuns: 400, seed: 34 })) {
      for (const [label, count] of Effect.runSync(runSequence(sequence, { modelOnly: true }))) {
        seen.set(label, (seen.get(label) ?? 0) + count)
      }
    }
    const atLeast = {
      "refresh": 50,
      "hung": 50,
      "refused": 50,
      "failed": 50,
      "retried after 401": 50,
      "rotated while hung": 50,
      "waited": 50,
      "served from cache": 50,
      "kept through a failed refresh": 50,
      "served after a failed refresh": 30,
      "gave up": 50,
      "expired while refreshing": 30,
      "served during a refresh": 50,
      "forgotten during a refresh": 20,
      "retried after Retry-After": 20,
      "failed fast after a failed exchange": 30,
      "exchanged again after a failed exchange": 20,
      // Two user tokens set in one step, both exchanged.
      "set twice in one step": 30,
      // Requests still waiting on an exchange of a replaced user token when it answers: rarer.
      "stale old waiter": 10
    }
    for (const [label, least] of Object.entries(atLeast)) expect(seen.get(label) ?? 0, label).toBeGreaterThanOrEqual(least)
  })
})
