/**
 * Tambo's run loop against any AG-UI agent: a `TamboTransport` over the
 * agent's endpoint, and `layer`, the `Tambo` service with it.
 *
 * An AG-UI agent keeps no thread: the client names the thread
 * (`thr_<uuid>`), holds the conversation (the `ThreadStore`) and sends all of
 * it with every run. A run that ends with calls of the client's tools pauses
 * as a Tambo run does (`tambo.run.awaiting_input`, made by the transport just
 * before `RUN_FINISHED`): the run loop runs them (once, validated, approvals,
 * `maxSteps`) and the next run carries their results. A server-side tool's
 * `TOOL_CALL_RESULT` is shown, never run. `RUN_ERROR` fails the run with an
 * `ApiError` (`RunError`) carrying the agent's message and code. A
 * conversation that cannot be sent as a `RunAgentInput` fails the run with an
 * `AgUiError` (`InvalidInput`) before any request.
 *
 * Interrupting a run, or `Tambo.cancelRun`, aborts its request; there is
 * nothing to cancel on a server (the transport's `cancelRun` does nothing).
 * The Tambo API's other calls (threads,
 * suggestions, names, component state, MCP tokens, token exchange) fail with
 * an `ApiError` (`BadRequest`, code `NOT_SUPPORTED_BY_AG_UI_AGENT`). No API
 * key or user identity is needed.
 *
 * A run request answered 429/502/503/504, or whose connection failed, is
 * sent again as a Tambo run's (never once its body is read); its first event
 * is due within `firstByteTimeout`; AG-UI 1.0's `*_CHUNK` events are
 * expanded as `@ag-ui/client` does. A new thread's `initialMessages` come
 * before the user's message and are the thread's first messages in the
 * store.
 *
 * The agent's shared state is kept per thread (`TamboThread.state`):
 * `STATE_SNAPSHOT` replaces it, `STATE_DELTA` patches it, and a delta that is
 * refused (a prototype key, a failing operation) leaves it and is an anomaly
 * on the thread while the run goes on. The app reads and sets it with
 * `Tambo.getAgentState` / `setAgentState`; each run sends the thread's
 * state. `MESSAGES_SNAPSHOT` replaces the thread's conversation (two
 * messages under one id: the last is kept, where the first stood, and an
 * anomaly says so). `STEP_*`
 * and `ACTIVITY_*` are run events for the app to read; activities are not
 * kept in the store.
 *
 * @since 0.2.0
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Auth from "./Auth.js"
import type * as ClientState from "./ClientState.js"
import type { ConfigError } from "./TamboError.js"
import * as Tambo from "./Tambo.js"
import * as Transport from "./TamboTransport.js"
import * as ThreadStore from "./ThreadStore.js"
import type * as Tool from "./Tool.js"
import * as ToolExecutor from "./ToolExecutor.js"
import * as ToolRegistry from "./ToolRegistry.js"
import * as internalAuth from "./internal/agui/auth.js"
import type * as Headers from "./internal/agui/headers.js"
import * as internal from "./internal/agui/service.js"

/**
 * The headers of the agent's requests: a record, or an Effect or a function
 * (which may return a promise) read anew for each request.
 *
 * @since 0.2.0
 * @category Models
 */
export type AgentHeaders = Headers.AgentHeaders

/**
 * Where the agent is and how to reach it.
 *
 * @since 0.2.0
 * @category Models
 */
export interface AgentOptions {
  /** The agent's endpoint: each run is a POST of a `RunAgentInput` to it. */
  readonly url: string
  /**
   * Sent with every run request (credentials, for instance): a record, or
   * an Effect or a function (which may return a promise) read anew for each
   * request, for a token that rotates. A failure to read them, or a header
   * HTTP cannot carry (a name that is not a token; a value with a line
   * break, a NUL or a character past Latin-1), fails the run with a
   * `CallbackError` (`Headers`) before anything is sent; so does an Effect or
   * a promise that has not settled within `firstByteTimeout`.
   */
  readonly headers?: AgentHeaders | undefined
  /**
   * How long to wait for the response's status and headers, and for its
   * first event, counted from the run request's start: reading `headers` is
   * part of it (a retry counts anew from its own start). Default 60 s.
   */
  readonly firstByteTimeout?: Duration.DurationInput | undefined
  /** How long any read of the body after its first event may wait (until then, `firstByteTimeout` applies). Default 120 s. */
  readonly idleTimeout?: Duration.DurationInput | undefined
  /** The largest event, in characters of its data. Default 16 MiB. */
  readonly maxFrameBytes?: number | undefined
  /**
   * How many times a run request answered 429/502/503/504, or whose
   * connection failed before it went out (refused, no such host), is sent
   * again (never once its body is being read, nor after a connection that
   * broke once it went out or no answer in time: the agent may have started
   * the run): a whole number from 0. Default 2.
   *
   * @since 0.2.0
   */
  readonly maxRetries?: number | undefined
  /** The longest `Retry-After` waited for; an answer asking for more is not retried. Default 60 s. @since 0.2.0 */
  readonly maxRetryAfter?: Duration.DurationInput | undefined
}

/**
 * The options of {@link layer}: the agent's, and `Tambo.layer`'s that apply
 * to an AG-UI agent (tools, approvals, context helpers, an external store).
 *
 * @since 0.2.0
 * @category Models
 */
export interface Options extends
  AgentOptions,
  Pick<
    Tambo.Options,
    "tools" | "beforeRun" | "contextHelpers" | "toolConcurrency" | "onApproval"
  >
{
  readonly store?: ThreadStore.ExternalStore<ClientState.ClientState> | undefined
}

/**
 * The transport: runs go to the agent with the conversation from the
 * `ThreadStore` in the context (the one the `Tambo` service writes); every
 * other call fails with an `ApiError` saying an AG-UI agent does not offer it.
 * Options that cannot work (a `url` that does not parse, a timeout that is
 * not a positive duration, a `maxFrameBytes` that is not a positive integer,
 * a `maxRetries` that is not a whole number from 0)
 * fail it with a `ConfigError`, as `TamboConfig` does for the Tambo API.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const makeTransport: (
  options: AgentOptions
) => Effect.Effect<Transport.TamboTransport.Service, ConfigError, ThreadStore.ThreadStore | HttpClient.HttpClient> =
  internal.makeTransport

/**
 * The transport as a Layer (see {@link makeTransport}).
 *
 * @since 0.2.0
 * @category Layers
 */
export const layerTransport = (
  options: AgentOptions
): Layer.Layer<Transport.TamboTransport, ConfigError, ThreadStore.ThreadStore | HttpClient.HttpClient> =>
  Layer.effect(Transport.TamboTransport, makeTransport(options))

/**
 * `Auth` for an agent: it needs no identity. The credentials are a
 * placeholder the transport ignores; the agent's own credentials go in
 * `headers`.
 *
 * @since 0.2.0
 * @category Layers
 */
export const layerAuth: Layer.Layer<Auth.Auth> = Layer.succeed(Auth.Auth, internalAuth.auth)

/**
 * What {@link layer} provides.
 *
 * @since 0.2.0
 * @category Layers
 */
export type Provided =
  | Tambo.Tambo
  | ThreadStore.ThreadStore
  | ToolRegistry.ToolRegistry
  | ToolExecutor.ToolExecutor
  | Auth.Auth
  | Transport.TamboTransport

/**
 * The `Tambo` service against an AG-UI agent, over `fetch`: `Tambo.run`,
 * `continueRun`, tools, approvals and `cancelRun` work as with the Tambo
 * API; after a run nothing is reconciled (the store is the conversation).
 *
 * @since 0.2.0
 * @category Layers
 */
export const layer = (options: Options): Layer.Layer<Provided, Tool.ToolDefinitionError | ConfigError> => {
  const service = Layer.scoped(
    Tambo.Tambo,
    Effect.gen(function*() {
      const tambo = yield* Tambo.make({
        beforeRun: options.beforeRun,
        contextHelpers: options.contextHelpers,
        toolConcurrency: options.toolConcurrency,
        onApproval: options.onApproval,
        // Nothing to reconcile with: the agent keeps no thread.
        reconcileAfterRun: false,
        autoGenerateThreadName: false
      })
      if (options.tools !== undefined) yield* tambo.registerTools(options.tools)
      return tambo
    })
  )
  const store = options.store === undefined ? ThreadStore.layer : ThreadStore.layerExternal(options.store)
  const transport = layerTransport(options).pipe(Layer.provide(FetchHttpClient.layer))
  const tools = ToolExecutor.layer.pipe(Layer.provideMerge(ToolRegistry.layer))
  const base = Layer.mergeAll(transport, layerAuth, tools).pipe(Layer.provideMerge(store))
  return service.pipe(Layer.provideMerge(base))
}
