/**
 * The client's runtime: one `ManagedRuntime` of core's Layers, built once
 * from the options, the services it holds, and the calls every method of
 * the facade makes through it (a Promise, or a synchronous result), each
 * failing with the caller's stack. Once the client is destroyed every call
 * is refused with an `AbortError`.
 *
 * @internal
 */
import * as Auth from "@tambo-effect/core/Auth"
import { LOCAL_THREAD_PREFIX } from "@tambo-effect/core/ClientState"
import * as Mcp from "@tambo-effect/core/Mcp"
import * as Tambo from "@tambo-effect/core/Tambo"
import * as TamboConfig from "@tambo-effect/core/TamboConfig"
import * as ThreadStore from "@tambo-effect/core/ThreadStore"
import * as ToolRegistry from "@tambo-effect/core/ToolRegistry"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import type * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import type { AbortReason, TamboClientError } from "../errors.js"
import type { ClientState, TamboStore } from "../Store.js"
import type { TamboClientOptions } from "../TamboClient.js"
import type * as Agent from "./agent.js"
import * as CallSite from "./callSite.js"
import * as ClientLayer from "./layer.js"
import { unregisteredTool } from "./registration.js"
import { abortError, type CoreError, fromCause, notOffered } from "./toClientError.js"

/**
 * A new conversation's local thread id (`local:`): the one kind of id that may name another thread,
 * the one the server named for it. The placeholder stays the next new conversation.
 */
const isLocalId = (threadId: string): boolean => typeof threadId === "string" && threadId.startsWith(LOCAL_THREAD_PREFIX)

/** @internal */
export class ClientRuntime {
  readonly tambo: Tambo.Tambo.Service
  readonly mcp: Mcp.Mcp.Service
  readonly auth: Auth.Auth.Service
  readonly registry: ToolRegistry.ToolRegistry.Service
  /** The Tambo API's configuration; `None` for an agent. */
  readonly config: Option.Option<TamboConfig.Resolved>
  /** The built runtime, for queue operations that must outlive `destroy()`. */
  readonly built: Runtime.Runtime<never>
  /** Aborted by `destroy()`: interrupts the calls in flight. */
  readonly lifetime = new AbortController()
  /** Set by `destroy()`, once. */
  destroying: Promise<void> | undefined
  /** The fibers of `watch` and `subscribe` not stopped yet: `destroy()` stops them (disposing the runtime does not). */
  readonly #watchers = new Set<Fiber.RuntimeFiber<unknown, unknown>>()

  constructor(
    readonly backend: "tambo" | "ag-ui",
    readonly store: TamboStore<ClientState>,
    readonly runtime: ManagedRuntime.ManagedRuntime<Agent.Services, CoreError>,
    services: Pick<ClientRuntime, "tambo" | "mcp" | "auth" | "registry" | "config" | "built">
  ) {
    this.tambo = services.tambo
    this.mcp = services.mcp
    this.auth = services.auth
    this.registry = services.registry
    this.config = services.config
    this.built = services.built
  }

  /**
   * Runs `effect` as a Promise that rejects with the facade's error, with
   * the stack of the method that called this. `tamboOnly`: the method's
   * name, when an AG-UI agent has no counterpart of it. `signal`: the
   * caller's, which interrupts it too (an `AbortError`, `SignalAborted`).
   */
  promise<A>(effect: Effect.Effect<A, CoreError, Agent.Services>, tamboOnly?: string, signal?: AbortSignal): Promise<A> {
    const site = CallSite.capture(this.promise)
    if (this.destroying !== undefined) return Promise.reject(CallSite.attach(abortError("ClientDestroyed"), site))
    if (tamboOnly !== undefined && this.backend === "ag-ui") {
      return Promise.reject(CallSite.attach(notOffered(tamboOnly), site))
    }
    if (signal?.aborted === true) {
      return Promise.reject(CallSite.attach(abortError("SignalAborted", { cause: signal.reason }), site))
    }
    if (signal === undefined) return this.#settle(this.runtime.runPromiseExit(effect, { signal: this.lifetime.signal }), "ClientDestroyed", site)
    // Interrupted by the client's end or the caller's signal, whichever comes first.
    const interrupt = new AbortController()
    const abort = () => interrupt.abort()
    this.lifetime.signal.addEventListener("abort", abort)
    signal.addEventListener("abort", abort)
    const done = this.runtime.runPromiseExit(effect, { signal: interrupt.signal }).finally(() => {
      this.lifetime.signal.removeEventListener("abort", abort)
      signal.removeEventListener("abort", abort)
    })
    return this.#settle(done, () => this.lifetime.signal.aborted ? "ClientDestroyed" : "SignalAborted", site)
  }

  /** The value of an exit, or the facade's error of its cause; an interruption is an `AbortError` for `reason`. */
  #settle<A>(
    exit: Promise<Exit.Exit<A, CoreError>>,
    reason: AbortReason | (() => AbortReason),
    site: CallSite.CallSite
  ): Promise<A> {
    return exit.then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      throw CallSite.attach(fromCause(exit.cause, typeof reason === "function" ? reason() : reason), site)
    })
  }

  /** Runs `effect` synchronously; throws the facade's error. `tamboOnly` as for `promise`. */
  sync<A>(effect: Effect.Effect<A, CoreError>, tamboOnly?: string): A {
    if (tamboOnly !== undefined && this.backend === "ag-ui") {
      throw CallSite.attach(notOffered(tamboOnly), CallSite.capture(this.sync))
    }
    if (this.destroying !== undefined) throw CallSite.attach(abortError("ClientDestroyed"), CallSite.capture(this.sync))
    const exit = this.runtime.runSyncExit(effect)
    if (Exit.isSuccess(exit)) return exit.value
    throw CallSite.attach(fromCause(exit.cause), CallSite.capture(this.sync))
  }

  /**
   * The id under which the store holds the thread an app's `threadId` names: the thread the server
   * named for a new conversation's local thread id (core's `getThread` follows it, as every call
   * about a thread does), else the id itself.
   */
  threadIdOf(threadId: string): string {
    // Hooks ask at every change of the state: only a local id can name another thread, so only
    // it costs a call into the runtime.
    if (this.destroying !== undefined || !isLocalId(threadId)) return threadId
    const held = this.runtime.runSyncExit(this.tambo.getThread(threadId))
    return Exit.isSuccess(held) && Option.isSome(held.value) ? held.value.value.id : threadId
  }

  /** `effect` given the Tambo API's configuration, which only an agent client lacks. */
  withConfig<A, E, R>(
    effect: Effect.Effect<A, E, R>,
    method: string
  ): Effect.Effect<A, E, Exclude<R, TamboConfig.TamboConfig>> {
    const config = this.config
    return config._tag === "None"
      ? Effect.dieMessage(`unreachable: an agent client has no ${method}`)
      : Effect.provideService(effect, TamboConfig.TamboConfig, config.value)
  }

  /**
   * Runs `stream` in the runtime, giving each element to `listener` and a
   * failure to `onError` (not an interruption: the returned function's, or
   * `destroy()`'s). The returned function stops it.
   */
  watch<A>(
    stream: Stream.Stream<A, CoreError, Agent.Services>,
    listener: (value: A) => void,
    onError: ((error: TamboClientError) => void) | undefined
  ): () => void {
    if (this.destroying !== undefined) return () => undefined
    return this.#track(this.runtime.runFork(
      stream.pipe(
        Stream.runForEach((value) => Effect.sync(() => listener(value))),
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause) ? Effect.void : Effect.sync(() => onError?.(fromCause(cause)))
        )
      )
    ))
  }

  /** Keeps `fiber` until it ends, for `stopWatching`; the returned function stops it. */
  #track(fiber: Fiber.RuntimeFiber<unknown, unknown>): () => void {
    this.#watchers.add(fiber)
    fiber.addObserver(() => this.#watchers.delete(fiber))
    return () => {
      fiber.unsafeInterruptAsFork(FiberId.none)
    }
  }

  /** Stops every `watch` and `subscribe` still running, and waits for them to end (`destroy()`). */
  stopWatching(): Promise<void> {
    const fibers = [...this.#watchers]
    this.#watchers.clear()
    return this.runtime.runPromise(Fiber.interruptAll(fibers))
  }

  /**
   * Gives each element of `stream` to `listener` until the returned function
   * is called; a throw of the listener is logged as a warning and the next
   * element still comes.
   */
  each<A>(stream: Stream.Stream<A, never, Agent.Services>, listener: (value: A) => void, what: string): () => void {
    const guarded = Stream.tap(stream, (value) =>
      Effect.try(() => listener(value)).pipe(
        Effect.catchAll((error) => Effect.logWarning(`A listener of ${what} threw: ${String(error.error)}`))
      ))
    return this.watch(guarded, () => undefined, undefined)
  }

  /**
   * Connects Tambo's own MCP server, following the current thread, until
   * the returned function is called (or `destroy()`).
   */
  followTamboMcp(options: { readonly contextKey?: string | undefined }): () => void {
    const follow = Mcp.followTamboServer(options).pipe(
      Effect.zipRight(Effect.never),
      Effect.scoped,
      Effect.provideService(ThreadStore.ThreadStore, this.tambo.store)
    )
    return this.watch(Stream.fromEffect(this.withConfig(follow, "followTamboMcpServer")), () => undefined, undefined)
  }

  /**
   * Calls `listener` after every change `changes` announces (it starts with
   * the value then: that one is not a change, unless it is not `current`'s
   * now). Returns the unsubscribe function.
   */
  subscribe<A>(changes: Stream.Stream<A>, current: Effect.Effect<A>, listener: () => void): () => void {
    if (this.destroying !== undefined) return () => undefined
    // The stream subscribes a turn later: a change made meanwhile (a `setUserToken` right after
    // subscribing) shows as a first value other than the one now.
    const now = this.runtime.runSync(current)
    let first = true
    return this.#track(this.runtime.runFork(changes.pipe(
      Stream.runForEach((value) =>
        Effect.sync(() => {
          const unchanged = first && value === now
          first = false
          if (!unchanged) listener()
        })
      )
    )))
  }
}

/**
 * Builds the runtime for the options. Core's Layers build synchronously, so
 * bad options fail here (the constructor throws the error).
 *
 * @internal
 */
export const make = (
  options: TamboClientOptions,
  store: TamboStore<ClientState>
): Either.Either<ClientRuntime, TamboClientError> => {
  const runtime = ManagedRuntime.make(ClientLayer.layer(options, store))
  const built = runtime.runSyncExit(
    Effect.all({
      tambo: Tambo.Tambo,
      mcp: Mcp.Mcp,
      built: Effect.runtime<never>(),
      auth: Auth.Auth,
      registry: ToolRegistry.ToolRegistry,
      config: Effect.serviceOption(TamboConfig.TamboConfig)
    }).pipe(Effect.tap(({ registry }) =>
      options.onCallUnregisteredTool === undefined
        ? Effect.void
        : registry.setFallback(unregisteredTool(options.onCallUnregisteredTool))
    ))
  )
  if (Exit.isFailure(built)) {
    void runtime.dispose()
    return Either.left(fromCause(built.cause))
  }
  return Either.right(new ClientRuntime(options.agent === undefined ? "tambo" : "ag-ui", store, runtime, built.value))
}
