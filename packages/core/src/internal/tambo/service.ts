/**
 * The `Tambo` service, wired from its parts: the run (`../run/`), threads as
 * the service reads and changes them (`../run/threads.ts`), approvals,
 * suggestions, component state, context helpers, and the services they use.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Auth from "../../Auth.js"
import * as ClientState from "../../ClientState.js"
import * as Mcp from "../../Mcp.js"
import type { ApprovalDecision, Tambo } from "../../Tambo.js"
import * as TamboConfig from "../../TamboConfig.js"
import { ConfigError } from "../../TamboError.js"
import * as Transport from "../../TamboTransport.js"
import * as ThreadStore from "../../ThreadStore.js"
import * as ToolExecutor from "../../ToolExecutor.js"
import * as ToolRegistry from "../../ToolRegistry.js"
import * as AppState from "../agui/appState.js"
import { Approvals } from "../approvals.js"
import * as ComponentState from "../componentState.js"
import * as Cancel from "../run/cancel.js"
import * as RunEnv from "../run/env.js"
import * as Pending from "../run/pending.js"
import * as Run from "../run/start.js"
import * as Threads from "../run/threads.js"
import * as RunWriter from "../runWriter.js"
import type { LayerOptions } from "./layer.js"

/**
 * A call about a thread, given its id: one that is not a non-empty string (an app's unset value)
 * would name another path of the API (`/v1/threads/` lists threads), so it fails before anything
 * is sent.
 */
const aboutThread = <A, E, R>(
  method: string,
  threadId: string,
  effect: () => Effect.Effect<A, E, R>
): Effect.Effect<A, E | ConfigError, R> =>
  typeof threadId === "string" && threadId !== ""
    ? effect()
    : Effect.fail(new ConfigError({ reason: "InvalidOption", message: `${method}: the thread id must be a non-empty string` }))

/**
 * A call that needs the server's thread (`aboutThread`), given its id there: a local thread a new
 * conversation's run went on in, once the server named that thread, is that thread. A new
 * conversation's id otherwise (the placeholder, a local thread not named yet) names none, and the
 * API would answer with a 403 that says nothing of why, so it fails before anything is sent. The
 * placeholder stays the next new conversation once its run's thread is named: it never follows.
 */
const aboutSavedThread = <A, E, R>(
  env: RunEnv.Env,
  method: string,
  given: string,
  effect: (threadId: string) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | ConfigError, R> =>
  Effect.suspend(() => {
    const threadId = RunEnv.savedThreadId(env, given)
    return ClientState.isLocalThreadId(threadId)
      ? Effect.flatMap(env.store.getThread(threadId), (held) => Effect.fail(RunEnv.unsaved(env, method, threadId, held !== undefined)))
      : aboutThread(method, threadId, () => effect(threadId))
  })

/** `savedThreadId` of an optional id: none stays none (the current thread, or any thread). */
const savedThreadIdOf = (env: RunEnv.Env, threadId: string | undefined): string | undefined =>
  threadId === undefined ? undefined : RunEnv.savedThreadId(env, threadId)

const toInputMessage = (message: string | Transport.InputMessage): Transport.InputMessage =>
  typeof message === "string" ? { role: "user", content: [{ type: "text", text: message }] } : message

/** Runs, their pending calls and their approvals. */
const runs = (
  env: RunEnv.Env
): Pick<Tambo.Service, "run" | "continueRun" | "getPendingToolCalls" | "approveToolCall" | "denyToolCall" | "cancelRun"> => ({
  run: (message, options) =>
    Run.startRun(env, { _tag: "Message", message: toInputMessage(message) }, options),
  continueRun: (threadId, results, options) => Run.continueRun(env, threadId, results, options),
  getPendingToolCalls: (threadId) =>
    aboutThread("getPendingToolCalls", threadId, () =>
      Effect.gen(function*() {
        const saved = RunEnv.savedThreadId(env, threadId)
        const held = yield* env.store.getThread(saved)
        // A new conversation's id the store holds no thread of (its named thread was forgotten or
        // deleted since) names none the server could be asked for: nothing is sent.
        if (held === undefined && ClientState.isLocalThreadId(saved)) {
          return yield* RunEnv.unsaved(env, "getPendingToolCalls", saved, false)
        }
        // From the thread's state as read: a copy the store did not take (a run took the thread, or
        // it left the store, while it was read) still says what the server waits on.
        const thread = held ?? (yield* Threads.ensureThread(env, saved))
        return yield* Pending.describe(env, saved, Pending.ofState(thread))
      })),
  approveToolCall: (toolCallId, approval) =>
    env.approvals.resolve(
      toolCallId,
      savedThreadIdOf(env, approval?.threadId),
      approval?.args === undefined ? { approved: true } : { approved: true, args: approval.args }
    ),
  denyToolCall: (toolCallId, reason, options) =>
    env.approvals.resolve(
      toolCallId,
      savedThreadIdOf(env, options?.threadId),
      reason === undefined ? { approved: false } : { approved: false, reason }
    ),
  cancelRun: (threadId, options) => Cancel.cancelThread(env, threadId, options?.runId)
})

/** Threads: the store's, and the API's through the transport. */
const threads = (
  env: RunEnv.Env
): Pick<
  Tambo.Service,
  | "state"
  | "store"
  | "switchThread"
  | "startNewThread"
  | "getThread"
  | "getAgentState"
  | "setAgentState"
  | "listThreads"
  | "fetchThread"
  | "updateThreadName"
  | "generateThreadName"
  | "deleteThread"
  | "forgetThread"
  | "updateComponentState"
> => ({
  state: env.store.get,
  store: env.store,
  switchThread: (threadId) =>
    aboutThread("switchThread", threadId, () => Threads.switchThread(env, RunEnv.savedThreadId(env, threadId))),
  startNewThread: Threads.startNewThread(env),
  getThread: (threadId) => Effect.suspend(() => Threads.getThread(env, savedThreadIdOf(env, threadId))),
  // The app's state is its own (see `S` in the interface): what the store holds is not checked.
  getAgentState: <S>(threadId?: string) =>
    Effect.suspend(() => AppState.getAgentState(env.store, savedThreadIdOf(env, threadId))) as Effect.Effect<S, ConfigError>,
  setAgentState: <S>(threadId: string, update: S | ((previous: S) => S)) =>
    Effect.suspend(() => AppState.setAgentState(env.store, RunEnv.savedThreadId(env, threadId), update)) as Effect.Effect<
      S,
      ConfigError
    >,
  listThreads: (params) => RunEnv.withCredentials(env, (c) => env.transport.listThreads(c, params)),
  fetchThread: (threadId) => aboutSavedThread(env, "fetchThread", threadId, (saved) => Threads.fetchThread(env, saved)),
  updateThreadName: (threadId, name) =>
    aboutSavedThread(env, "updateThreadName", threadId, (saved) => Threads.renameThread(env, saved, name)),
  generateThreadName: (threadId) =>
    aboutSavedThread(env, "generateThreadName", threadId, (saved) => Threads.generateThreadName(env, saved)),
  deleteThread: (threadId) => aboutSavedThread(env, "deleteThread", threadId, (saved) => Threads.deleteThread(env, saved)),
  forgetThread: (threadId) => Effect.suspend(() => Threads.forgetThread(env, RunEnv.savedThreadId(env, threadId))),
  // Goes on once its caller stops waiting, as a rename does: the server may have taken the state.
  updateComponentState: (threadId, componentId, update) =>
    aboutSavedThread(env, "updateComponentState", threadId, (saved) =>
      Threads.toTheEnd(
        env,
        ComponentState.updateComponentState(
          {
            transport: env.transport,
            store: env.store,
            withCredentials: (f) => RunEnv.withCredentials(env, f),
            stored: (key) => RunEnv.newEpoch(env, key),
            readBack: (key) => Effect.ignore(Threads.fetchIfHeld(env, key))
          },
          saved,
          componentId,
          update
        )
      ))
})

/** Tools, components and context helpers. */
const registration = (
  env: RunEnv.Env
): Pick<Tambo.Service, "registerTool" | "registerTools" | "registerComponent" | "addContextHelper" | "removeContextHelper"> => ({
  registerTool: env.registry.register,
  registerTools: env.registry.registerMany,
  registerComponent: env.registry.registerComponent,
  addContextHelper: (name, helper) =>
    Effect.sync(() => void env.contextHelpers.set(name, helper)),
  removeContextHelper: (name) => Effect.sync(() => void env.contextHelpers.delete(name))
})

/** Suggestions for an assistant message; the model is told the registered components. */
const suggestions = (env: RunEnv.Env): Pick<Tambo.Service, "listSuggestions" | "generateSuggestions"> => ({
  listSuggestions: (threadId, messageId) =>
    aboutSavedThread(env, "listSuggestions", threadId, (saved) =>
      RunEnv.withCredentials(env, (c) => env.transport.listSuggestions(c, saved, messageId))),
  generateSuggestions: (threadId, messageId, options) =>
    aboutSavedThread(env, "generateSuggestions", threadId, (saved) =>
      Effect.flatMap(env.registry.toApiComponents, (availableComponents) =>
        RunEnv.withCredentials(env, (c) =>
          env.transport.generateSuggestions(c, saved, messageId, {
            ...(options?.maxSuggestions === undefined ? {} : { maxSuggestions: options.maxSuggestions }),
            availableComponents
          })
        ))),
})

/** Builds the `Tambo` service from the services in the context (its type is the public `make`'s). */
export const make = (options: RunEnv.MakeOptions) =>
  Effect.gen(function* () {
    const auth = yield* Auth.Auth
    const store = yield* ThreadStore.ThreadStore
    const env = RunEnv.make({
      transport: yield* Transport.TamboTransport,
      auth,
      store,
      writer: yield* RunWriter.make(store),
      registry: yield* ToolRegistry.ToolRegistry,
      executor: yield* ToolExecutor.ToolExecutor,
      mcp: yield* Effect.serviceOption(Mcp.Mcp),
      resends: Option.match(yield* Effect.serviceOption(TamboConfig.TamboConfig), {
        onNone: () => true,
        onSome: (config) => config.maxRetries > 0
      }),
      options,
      scope: yield* Effect.scope,
      contextHelpers: new Map(Object.entries(options.contextHelpers ?? {})),
      approvals: new Approvals<ApprovalDecision>()
    })
    return {
      ...runs(env),
      ...threads(env),
      ...registration(env),
      ...suggestions(env),
      authState: auth.state,
      authChanges: auth.changes
    }
  })

/** `make`, then the tools and components the options list registered: what `Tambo.layer` provides. */
export const makeRegistered = (options: LayerOptions) =>
  Effect.gen(function* () {
    const tambo = yield* make(options)
    if (options.tools !== undefined) yield* tambo.registerTools(options.tools)
    for (const component of options.components ?? []) yield* tambo.registerComponent(component)
    return tambo
  })
