/**
 * Calling the app's own functions (`beforeRun`, context helpers, approval
 * handlers), which may return a value, a promise or an Effect. Whatever goes
 * wrong in them (a throw, a rejection, an Effect's failure or defect) is the
 * caller's typed error, never a defect of the run; an interruption stays one.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import { CallbackError } from "../TamboError.js"

const isAsync = <A>(u: unknown): u is PromiseLike<A> =>
  typeof u === "object" && u !== null && "then" in u && typeof u.then === "function"

/** Runs `f`; what it throws, rejects with or fails with becomes `onFailure(cause)`. */
export const runCallback = <A, E>(
  f: () => A | PromiseLike<A> | Effect.Effect<A>,
  onFailure: (cause: unknown) => E
): Effect.Effect<A, E> =>
  Effect.suspend(() => {
    let out: A | PromiseLike<A> | Effect.Effect<A>
    try {
      out = f()
    } catch (cause) {
      return Effect.fail(onFailure(cause))
    }
    if (Effect.isEffect(out)) {
      // Typed as never failing, but an Effect from JavaScript (or one that dies) may.
      return Effect.catchAllCause(out as Effect.Effect<A, unknown>, (cause) =>
        Cause.isInterruptedOnly(cause) ? Effect.failCause(cause as Cause.Cause<never>) : Effect.fail(onFailure(Cause.squash(cause))))
    }
    if (isAsync<A>(out)) {
      const promise = out
      return Effect.tryPromise({ try: () => Promise.resolve(promise), catch: onFailure })
    }
    return Effect.succeed(out)
  })

/** A thrown value's message, for an error message. */
export const messageOf = (cause: unknown): string =>
  cause instanceof Error ? cause.message : typeof cause === "string" ? cause : String(cause)

/** The failure of the client-wide (`"client"`) or per-run (`"run"`) `beforeRun`. */
export const beforeRunFailed = (of: "client" | "run") => (cause: unknown): CallbackError =>
  new CallbackError({
    reason: "BeforeRun",
    message: `The ${of === "client" ? "client's" : "run's"} beforeRun failed: ${messageOf(cause)}`,
    cause
  })

/** The failure of the context helper `name`. */
export const contextHelperFailed = (name: string) => (cause: unknown): CallbackError =>
  new CallbackError({
    reason: "ContextHelper",
    message: `The context helper "${name}" failed: ${messageOf(cause)}`,
    helper: name,
    cause
  })

/** The failure of the approval handler on a call of `toolName`: the call is denied with it. */
export const approvalHandlerFailed = (toolName: string) => (cause: unknown): CallbackError =>
  new CallbackError({
    reason: "ApprovalHandler",
    message: `The approval handler failed on this call of ${toolName}, which was not run: ${messageOf(cause)}`,
    cause
  })
