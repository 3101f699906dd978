/**
 * Which run a context helper is asked for: each run's fiber carries it, and
 * the helpers given to core are called with it.
 *
 * @internal
 */
import type * as Tambo from "@tambo-effect/core/Tambo"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import type { ContextHelperFn, ContextHelperRun } from "../TamboClient.js"

/** The run whose fiber this is (its fibers inherit it). @internal */
export const current: FiberRef.FiberRef<ContextHelperRun | undefined> = FiberRef.unsafeMake<ContextHelperRun | undefined>(
  undefined
)

/** The app's helper as core calls it: with the run it is asked for. @internal */
export const toCore = (helper: ContextHelperFn): Tambo.ContextHelper => () =>
  helper(Option.getOrUndefined(Option.map(Fiber.getCurrentFiber(), (fiber) => fiber.getFiberRef(current))))

/** The app's helpers, by name, as core calls them. @internal */
export const allToCore = (
  helpers: Readonly<Record<string, ContextHelperFn>> | undefined
): Readonly<Record<string, Tambo.ContextHelper>> | undefined =>
  helpers === undefined ? undefined : Object.fromEntries(Object.entries(helpers).map(([name, helper]) => [name, toCore(helper)]))
