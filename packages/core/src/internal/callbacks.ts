/**
 * Calling the app's own functions (tools, `beforeRun`, context helpers,
 * approval handlers, MCP handlers), which may return a value, a promise or an
 * Effect.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import { CallbackError } from "../TamboError.js"
import { describeError, isPromiseLike } from "./toolSupport.js"

/**
 * The app's function `f` as an Effect, whatever it returns: a value, a
 * promise (`onReject` turns its rejection into a failure) or an Effect (run
 * as it is). A throw is `onThrow(cause)`. `f` gets an `AbortSignal` that is
 * aborted if the Effect is interrupted. The one way the SDK calls app code
 * (tools, callbacks, MCP handlers).
 */
export const callApp = <A, E, E2>(
  f: (signal: AbortSignal) => A | PromiseLike<A> | Effect.Effect<A, E>,
  onThrow: (cause: unknown) => E2,
  onReject: (cause: unknown) => E2 = onThrow
): Effect.Effect<A, E | E2> =>
  Effect.suspend((): Effect.Effect<A, E | E2> => {
    const controller = new AbortController()
    let out: A | PromiseLike<A> | Effect.Effect<A, E>
    try {
      out = f(controller.signal)
    } catch (cause) {
      return Effect.fail(onThrow(cause))
    }
    if (Effect.isEffect(out)) return Effect.onInterrupt(out, () => Effect.sync(() => controller.abort()))
    if (isPromiseLike(out)) {
      const promise = out as PromiseLike<A>
      return Effect.onInterrupt(
        Effect.async<A, E2>((resume) => {
          promise.then(
            (value) => resume(Effect.succeed(value)),
            (rejection: unknown) => resume(Effect.fail(onReject(rejection)))
          )
        }),
        () => Effect.sync(() => controller.abort())
      )
    }
    return Effect.succeed(out)
  })

/**
 * Runs a callback (`beforeRun`, a context helper, an approval handler); what
 * it throws, rejects with or fails with (a defect too) becomes
 * `onFailure(cause)`, never a defect of the run. So does an interruption of
 * its Effect's own (it awaited something interrupted elsewhere): an
 * interruption of the run itself skips the handler, and stays one.
 */
export const runCallback = <A, E>(
  f: () => A | PromiseLike<A> | Effect.Effect<A>,
  onFailure: (cause: unknown) => E
): Effect.Effect<A, E> =>
  callApp(() => {
    const out = f()
    // Typed as never failing, but an Effect from JavaScript (or one that dies) may.
    return Effect.isEffect(out)
      ? Effect.catchAllCause(out as Effect.Effect<A, unknown>, (cause) =>
        Effect.fail(onFailure(
          Cause.isInterruptedOnly(cause) ? new Error("it was interrupted before it returned") : Cause.squash(cause)
        )))
      : out
  }, onFailure)

/**
 * A callback's value (or its promise's, or its Effect's), failing as the
 * callback would if it cannot be sent as JSON (a BigInt, a cycle, a throwing
 * `toJSON`): the request body is JSON, and such a value would only fail there.
 */
export const sendable = <A>(out: A | PromiseLike<A> | Effect.Effect<A>): A | PromiseLike<A> | Effect.Effect<A> => {
  const check = (value: A): A => {
    try {
      JSON.stringify(value)
    } catch (error) {
      throw new Error(`its value cannot be sent as JSON: ${describeError(error)}`)
    }
    return value
  }
  if (Effect.isEffect(out)) return Effect.map(out as Effect.Effect<A>, check)
  if (isPromiseLike(out)) return (out as PromiseLike<A>).then(check)
  return check(out as A)
}

/** A thrown value's message, for an error message; anything may be thrown, an object `String` refuses too. */
export const messageOf = (cause: unknown): string => describeError(cause)

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

/** An approval handler's answer that is no decision (e.g. `undefined`): the call is denied with it. */
export const approvalHandlerGaveNoDecision = (toolName: string, answer: unknown): CallbackError =>
  new CallbackError({
    reason: "ApprovalHandler",
    message: `The approval handler answered this call of ${toolName} with ${
      answer === undefined ? "undefined" : describeError(answer)
    }, which is not a decision ({ approved: true } or { approved: false }); the call was not run.`
  })
