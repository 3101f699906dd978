/**
 * The Promise API: `new TamboClient({...})`, `client.run("hi")`. The surface
 * is `@tambo-ai/client`'s, so switching is a change of import; underneath,
 * one `ManagedRuntime` of `@tambo-effect/core`'s Layers does the work.
 *
 * @since 0.1.0
 */
import TamboAI from "@tambo-ai/typescript-sdk"
import type * as Mcp from "@tambo-effect/core/Mcp"
import type * as SnapshotStrategy from "@tambo-effect/core/SnapshotStrategy"
import type * as Tambo from "@tambo-effect/core/Tambo"
import type * as Transport from "@tambo-effect/core/TamboTransport"
import type * as Tool from "@tambo-effect/core/Tool"
import * as Transcription from "@tambo-effect/core/Transcription"
import type {
  InitialInputMessage,
  ResourceContent,
  TamboThread,
  TextContent,
  ToolChoice,
  ToolResultContent
} from "@tambo-effect/core/Types"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { TamboClientError } from "./errors.js"
import * as CallSite from "./internal/callSite.js"
import * as Client from "./internal/client.js"
import * as HelperRun from "./internal/helperRun.js"
import { authStateFromCore, pageFromCore, suggestionFromCore } from "./internal/convert.js"
import * as Registration from "./internal/registration.js"
import type { ClientRuntime } from "./internal/runtime.js"
import type { ClientState, InMemoryStore, TamboStore } from "./Store.js"
import type { TamboStream } from "./TamboStream.js"

/**
 * A tool: a `TamboTool` object shaped for `@tambo-ai/client` (its input as
 * Zod 4 or any Standard Schema, Effect Schema or JSON Schema), or a core
 * `Tool.make(...)` tool.
 *
 * @since 0.1.0
 * @category Models
 */
export type ToolDefinition = Tool.Definition

/**
 * A component the model may render: metadata only (`name`, `description`,
 * `propsSchema`).
 *
 * @since 0.1.0
 * @category Models
 */
export type AvailableComponent = Tool.AvailableComponent

/**
 * The message of a run: text and resources (or tool results). Shaped like
 * `@tambo-ai/client`'s; `additionalContext` and `metadata` are sent when
 * they are objects.
 *
 * @since 0.1.0
 * @category Models
 */
export interface InputMessage {
  readonly role: "user"
  readonly content: ReadonlyArray<TextContent | ResourceContent | ToolResultContent>
  readonly additionalContext?: unknown
  readonly metadata?: unknown
}

/**
 * Returns context sent with every run as `additionalContext[name]`. Called
 * as a run starts, with that run (`undefined` when called outside one): a
 * helper that hands over something once (an attachment for the next
 * message) can take it back if the run fails before its message is sent.
 *
 * @since 0.1.0
 * @category Models
 */
export type ContextHelperFn = (run?: ContextHelperRun) =>
  | Record<string, unknown>
  | undefined
  | PromiseLike<Record<string, unknown> | undefined>

/**
 * The run a context helper is called for.
 *
 * @since 0.2.0
 * @category Models
 */
export interface ContextHelperRun {
  /** The run: its `thread` rejects if the run fails or is stopped. */
  readonly stream: TamboStream
  /** The thread the run was started on (a new conversation's placeholder id for a new thread). */
  readonly threadId: string
}

/**
 * What `beforeRun` is told.
 *
 * @since 0.1.0
 * @category Models
 */
export interface BeforeRunContext {
  /** `undefined` for a run that creates its thread. */
  readonly threadId: string | undefined
  /** The message as it will be sent. */
  readonly message: Transport.InputMessage
  readonly tools: Readonly<Record<string, ToolDefinition>>
}

/**
 * Called before every run, after the context helpers. An object it returns
 * (or resolves to) is merged into the message's `additionalContext`.
 *
 * @since 0.1.0
 * @category Models
 */
export type BeforeRun = (
  context: BeforeRunContext
) => void | Record<string, unknown> | PromiseLike<void | Record<string, unknown>>

/**
 * An MCP server to connect to: its `url`, `transport`, `customHeaders`,
 * `serverKey`, `oauth`, `handlers` of its own for its elicitations and
 * sampling requests (instead of the client's, see
 * `setMcpElicitationHandler`; a later connect of the same server that
 * gives `handlers` replaces them), the `logLevel` it is asked to log at,
 * and the `toolTimeout` (restarted by each progress notice) and
 * `maxToolTime` of the model's calls of its tools.
 *
 * @since 0.1.0
 * @category Models
 */
export type McpServerInfo = Mcp.McpServerInfo

/**
 * What a connected MCP server's `client` offers, as Promises: its tools
 * (listed again), a call of one (an `isError` result resolves), what it
 * said of itself (version, capabilities, instructions), and `close()`,
 * which disconnects it. A call rejects with an `McpError`, or an
 * `AbortError` once the client is destroyed.
 *
 * @since 0.2.0
 * @category Models
 */
export interface McpServerClient {
  listTools(): Promise<Array<Mcp.McpToolSpec>>
  /**
   * Calls a tool. `_meta` goes with the request, as upstream's
   * `MCPClient.callTool(name, args, _meta)` sends it. With `onProgress`, the
   * server is asked to tell its progress, and each notice restarts the
   * request's timeout.
   */
  callTool(
    name: string,
    args?: Readonly<Record<string, unknown>>,
    _meta?: Readonly<Record<string, unknown>>,
    options?: { readonly onProgress?: ((progress: Mcp.McpProgress) => void) | undefined }
  ): Promise<Mcp.McpToolResult>
  getServerVersion(): { readonly name: string; readonly version: string } | undefined
  getServerCapabilities(): Mcp.McpServerCapabilities | undefined
  getInstructions(): string | undefined
  /**
   * Gives the server its own elicitation handler, on the same session (as a
   * connect of it with new `handlers` does); `undefined` hands its
   * elicitations back to the client-wide handler. It never connects the
   * server. A client kept from an earlier connection (the server was
   * disconnected since, or connected again, or reconnected after a drop:
   * `getMcpClients()` shows a new `client` then) does nothing, as its
   * `callTool` rejects: the later connection keeps its handlers. The same
   * holds for the two methods below.
   *
   * @since 0.2.0
   */
  updateElicitationHandler(handler: Mcp.ElicitationHandler | undefined): void
  /**
   * Gives the server its own sampling handler, on the same session;
   * `undefined` hands its requests back to the client-wide handler. The
   * server was told when it connected whether the client samples: a server
   * told it does not never asks.
   *
   * @since 0.2.0
   */
  updateSamplingHandler(handler: Mcp.SamplingHandler | undefined): void
  /**
   * Gives the server its own URL elicitation handler, on the same session;
   * `undefined` hands them back to the client-wide handler. The server was
   * told when it connected whether the client takes URL elicitations: a
   * server told it does not never asks.
   *
   * @since 0.2.0
   */
  updateUrlElicitationHandler(handler: Mcp.UrlElicitationHandler | undefined): void
  /**
   * Disconnects the server (also while it reconnects after a drop). A
   * client kept from a connection disconnected since does nothing: a later
   * connection of the server under the same key stays connected.
   */
  close(): Promise<void>
}

/**
 * An MCP server's connection: its key, server key and settings, `status`
 * (`connecting`, `connected`, `reconnecting`, `failed`), `error`, `tools`,
 * and, while connected, its `client`.
 *
 * @since 0.2.0
 * @category Models
 */
export interface McpConnectionInfo extends Omit<Mcp.McpConnection, "client"> {
  /** Present while connected. */
  readonly client?: McpServerClient | undefined
}

/**
 * Every known MCP connection, by key, in the order they were first connected.
 *
 * @since 0.2.0
 * @category Models
 */
export type McpConnections = Readonly<Record<string, McpConnectionInfo>>

/**
 * Where an AG-UI agent is: each run is a `POST` of the whole conversation
 * (a `RunAgentInput`) to `url`, with `headers`.
 *
 * @since 0.2.0
 * @category Models
 */
export interface AgentConnection {
  readonly url: string
  /**
   * Sent with every run (the agent's credentials, for instance): a record,
   * or a function (which may return a promise) called anew for each run, for
   * a token that rotates. A throw or rejection, or a header HTTP cannot
   * carry (a name that is not a token; a value with a line break, a NUL or
   * a character past Latin-1), rejects that run with a `CallbackError`
   * (`Headers`) before anything is sent; so does a promise still pending
   * at `firstByteTimeout`, which counts from the run request's start.
   */
  readonly headers?:
    | Readonly<Record<string, string>>
    | (() => Readonly<Record<string, string>> | PromiseLike<Readonly<Record<string, string>>>)
    | undefined
}

/**
 * The options only the Tambo API has a use for. An agent client refuses the
 * first five beside `agent` (a `ConfigError`) and has no use for the rest.
 *
 * @since 0.2.0
 * @category Models
 */
export type TamboOnlyOption =
  | "apiKey"
  | "tamboUrl"
  | "environment"
  | "userKey"
  | "userToken"
  | "tamboMcpServer"
  | "initialMessages"
  | "autoGenerateThreadName"
  | "autoGenerateNameThreshold"
  | "requestTimeout"
  | "reconcileAfterRun"

/**
 * {@link TamboClientOptions} for any AG-UI agent (LangGraph, Mastra, CrewAI,
 * ... through their AG-UI adapters), typed so that a Tambo-only option does
 * not compile: no API key and no user. The client holds the conversation
 * and sends it with every run; tools run in the client as with Tambo.
 * Tambo-only methods reject with a `NotSupportedError`.
 *
 * @example
 * ```ts
 * const options: AgentClientOptions = { agent: { url: "http://localhost:8000/agent" }, tools: [getWeather] }
 * const client = new TamboClient(options)
 * ```
 *
 * @since 0.2.0
 * @category Models
 */
export type AgentClientOptions =
  & Omit<TamboClientOptions, TamboOnlyOption | "agent">
  & { readonly agent: AgentConnection }
  & { readonly [K in TamboOnlyOption]?: undefined }

/**
 * {@link TamboClientOptions} for the Tambo API, typed so that the API key is
 * required.
 *
 * @since 0.2.0
 * @category Models
 */
export type TamboApiClientOptions = TamboClientOptions & { readonly apiKey: string; readonly agent?: undefined }

/**
 * The client's options: the Tambo API's (`apiKey`, a user, ...) or an AG-UI
 * agent's (`agent`, see {@link AgentClientOptions}); the rest are shared.
 *
 * @since 0.1.0
 * @category Models
 */
export interface TamboClientOptions {
  /** The Tambo API's key. Required, unless the client talks to an `agent`. */
  readonly apiKey?: string | undefined
  /**
   * An AG-UI agent to talk to instead of the Tambo API: no `apiKey` or user
   * then (giving one is a `ConfigError`).
   *
   * @since 0.2.0
   */
  readonly agent?: AgentConnection | undefined
  /** The API's base URL. Give this or `environment`, not both. */
  readonly tamboUrl?: string | undefined
  /** A hosted environment (default `"production"`). Give this or `tamboUrl`, not both. */
  readonly environment?: "production" | "staging" | undefined
  /** Who the client acts for. Give this or `userToken`, not both. */
  readonly userKey?: string | undefined
  /** An OAuth token exchanged for an access token. Give this or `userKey`, not both. */
  readonly userToken?: string | undefined
  /** Where the state lives. Default: an {@link InMemoryStore}. A Zustand vanilla store works. */
  readonly store?: TamboStore<ClientState> | undefined
  readonly tools?: ReadonlyArray<ToolDefinition> | undefined
  readonly components?: ReadonlyArray<AvailableComponent> | undefined
  /**
   * MCP servers to connect (in the background): their tools are registered
   * for the model. Needs `@modelcontextprotocol/sdk` installed; it loads only
   * when a server is listed or connected.
   */
  readonly mcpServers?: ReadonlyArray<McpServerInfo> | undefined
  /**
   * The app's own resources, listed by `listMcpResources` with the server
   * key `"registry"` and read with `getResource`.
   */
  readonly resources?: ReadonlyArray<Mcp.McpResourceSpec> | undefined
  /** Lists the app's resources (given the search string of `listMcpResources`). */
  readonly listResources?: ((search?: string) => PromiseLike<ReadonlyArray<Mcp.McpResourceSpec>> | ReadonlyArray<Mcp.McpResourceSpec>) | undefined
  /** Reads one of the app's resources. */
  readonly getResource?: ((uri: string) => PromiseLike<Mcp.McpResourceContents> | Mcp.McpResourceContents) | undefined
  /**
   * The roots MCP servers are given (`roots/list`): the places the app lets
   * them work in. `setMcpRoots` changes them.
   *
   * @since 0.2.0
   */
  readonly mcpRoots?: ReadonlyArray<Mcp.McpRoot> | undefined
  /**
   * Answers MCP servers' URL elicitations, as `setMcpUrlElicitationHandler`
   * does; given here, the servers of `mcpServers` are told from their
   * first connection that the client takes them.
   *
   * @since 0.2.0
   */
  readonly mcpUrlElicitationHandler?: Mcp.UrlElicitationHandler | undefined
  /**
   * Connect Tambo's own MCP server (`<tamboUrl>/mcp`: the project's MCP
   * prompts and resources, server key `"tambo"`) with an MCP access token
   * for the current thread, or for `contextKey` while no thread is current;
   * renewed when the thread changes and before it expires. Default: off.
   */
  readonly tamboMcpServer?: boolean | { readonly contextKey?: string | undefined } | undefined
  /** Runs before every run; if it throws or rejects, that run rejects with a `CallbackError`. */
  readonly beforeRun?: BeforeRun | undefined
  /**
   * Answers the model's calls of tools the client did not register (a
   * `tool_result` with an error, without it): called with the tool's name
   * and its arguments as `@tambo-ai/react` passes them (`{ parameterName,
   * parameterValue }` per argument); what it returns or resolves to is the
   * call's result, and a throw or rejection is an error result. Timed out
   * like a tool.
   *
   * @since 0.2.0
   */
  readonly onCallUnregisteredTool?: UnregisteredToolHandler | undefined
  /**
   * Messages that open every thread this client creates (sent with the
   * run that creates it; `system`, `assistant` or `user`, text and
   * resources), as `@tambo-ai/react`'s `initialMessages`.
   *
   * @since 0.2.0
   */
  readonly initialMessages?: ReadonlyArray<InitialInputMessage> | undefined
  /**
   * Decides the tool calls that need approval. Without it, a run waiting on
   * one yields a `CLIENT_APPROVAL_REQUESTED` event and waits for
   * `approveToolCall` / `denyToolCall`. If it throws, rejects or answers
   * with no decision (`undefined` too), the call is denied and the model is
   * told why.
   */
  readonly onApproval?: ApprovalHandler | undefined
  /**
   * Context helpers registered from the start (see `addContextHelper`); if
   * one throws or rejects, that run rejects with a `CallbackError`.
   */
  readonly contextHelpers?: Readonly<Record<string, ContextHelperFn>> | undefined
  /**
   * Name a thread once a run on it finished with enough messages. Default `true`. A naming that
   * failed is tried again after the thread's next run.
   */
  readonly autoGenerateThreadName?: boolean | undefined
  /** How many messages a thread needs to be named. Default 3. */
  readonly autoGenerateNameThreshold?: number | undefined
  /**
   * Retries of reads, and of runs that failed before their first event (an
   * agent's run answered 429/502/503/504, or whose connection failed before
   * it went out): a
   * whole number from 0, else the constructor throws a `ConfigError`
   * (`InvalidOption`). Default 2. A run's request to the Tambo API whose
   * connection broke once it went out (reset, closed, timed out) may have
   * reached the server: it is sent again (once, not after a timeout, and not
   * with `maxRetries: 0`) only where the server shows it did not take its
   * message or tool results (a known thread's read; for a new conversation,
   * no new thread in the list holding the message), else the run rejects
   * with a `TransportError` that says the request may have reached the server
   * (`mayHaveReachedServer: true`, not `retryable`); a new conversation's
   * message found in a new thread of the server leaves that thread in the
   * store. An agent's run request is never sent again once it went out.
   */
  readonly maxRetries?: number | undefined
  /** Timeout of a REST call in milliseconds (not of a run). Default 60 000. */
  readonly requestTimeout?: number | undefined
  /**
   * Once a run ended (finished, failed, cancelled or dropped), read its thread
   * once and merge the server's copy into the store: message ids (a message
   * whose local id is replaced keeps it as `key`), the text a cancelled reply
   * kept, `lastRunError`, component props as stored. Best effort, bounded to
   * 2 s. Default `true`; `false` saves the read.
   */
  readonly reconcileAfterRun?: boolean | undefined
  /**
   * How long a run waits for its response and then its first event, in
   * milliseconds; past it the run fails with a `TransportError` (`Timeout`)
   * and is cancelled on the server. Default 60 000.
   */
  readonly firstByteTimeout?: number | undefined
  /**
   * How long a run's stream may go without any bytes once its first event
   * arrived, in milliseconds; past it the run fails as above. Default 120 000.
   */
  readonly idleTimeout?: number | undefined
  /**
   * The largest event of a run's stream, in characters of its data (bytes,
   * for ASCII JSON); a larger one fails the run with a `DecodeError`
   * (`FrameTooLarge`). Default 16 MiB.
   */
  readonly maxFrameBytes?: number | undefined
  /**
   * The longest `Retry-After` a retry waits for, in milliseconds; a server
   * that asks for longer gets no retry, and the `ApiError` carries
   * `retryAfter`. Default 60 000.
   */
  readonly maxRetryAfter?: number | undefined
  /**
   * Holds back the network work the client does of its own accord (the
   * exchange of its `userToken`, the connections of `mcpServers` and of
   * Tambo's MCP server) until {@link TamboClient.start} or its first run; a
   * request that needs the token before then exchanges it. For a client a
   * framework may make and throw away unseen: one a server render or a
   * hidden tree asks for. Default `false`: they start with the client.
   * Meanwhile a client with a `userToken` says it is `exchanging`
   * ({@link TamboClient.getAuthState}), as it will be once started.
   *
   * @since 0.2.0
   */
  readonly deferStart?: boolean | undefined
}

/**
 * Options of {@link TamboClient.transcribe}: core's, and a `signal` that
 * aborts the request.
 *
 * @since 0.2.0
 * @category Models
 */
export interface TranscribeOptions extends Transcription.TranscribeOptions {
  readonly signal?: AbortSignal | undefined
}

/**
 * Options of one run.
 *
 * @since 0.1.0
 * @category Models
 */
export interface RunOptions {
  /**
   * The thread to run on. Default: the thread current when the run is started (a new
   * one on the placeholder, even if another new-thread run becomes current meanwhile).
   * A new conversation's local thread (a `local:` id the state showed while its first
   * run waited for the server) is the thread that run creates: a run asked for there
   * meanwhile is a second run of it (`onBusy` decides), and once the server named it,
   * that thread.
   */
  readonly threadId?: string | undefined
  /** Run client-side tools and continue with their results. Default `true`. */
  readonly autoExecuteTools?: boolean | undefined
  /** The most tool rounds the run may take. Default 10; past it the run fails with `MaxStepsExceededError`. */
  readonly maxSteps?: number | undefined
  readonly toolChoice?: ToolChoice | undefined
  /** Log every event with `console.debug`. */
  readonly debug?: boolean | undefined
  /** Merged into the message's `additionalContext`. */
  readonly additionalContext?: Record<string, unknown> | undefined
  /** Aborting it aborts the request and cancels the run on the server. */
  readonly signal?: AbortSignal | undefined
  /** Timeout of one tool call in milliseconds. Default 30 000. */
  readonly toolTimeout?: number | undefined
  /**
   * When the thread already has a run in this client. Default `"reject"`.
   *
   * With `"interrupt"` or `"queue"`, the thread's runs no longer pause for an event iterator
   * that stopped reading (see `EVENT_BUFFER`): they end (cancelled, or as the server ends
   * them) while this run waits, and their iterators still yield every event, then their ending.
   * So a run queued inside the `for await` loop over its thread's run, and read to its end
   * there, runs once that run completed, rather than waiting on the loop that waits on it.
   */
  readonly onBusy?: BusyPolicy | undefined
  /** Decides this run's approvals (overrides the client's `onApproval`). */
  readonly onApproval?: ApprovalHandler | undefined
  /** Accepted for compatibility; the sent message is always shown at once. */
  readonly userMessageText?: string | undefined
  /**
   * Messages that open the thread, when this run creates it (instead of the
   * client's `initialMessages`); ignored on an existing thread.
   *
   * @since 0.2.0
   */
  readonly initialMessages?: ReadonlyArray<InitialInputMessage> | undefined
}

/**
 * Who the client acts for: `identified` (by its `userKey`, or by the access
 * token its `userToken` was exchanged for; an agent client is always), `exchanging`
 * (a `userToken` not exchanged yet, or one whose token no longer works:
 * requests wait for the exchange; with `deferStart`, also before
 * {@link TamboClient.start}, when none is under way: the first request that
 * needs the token exchanges it), `error` (the last exchange failed),
 * `invalid` (both a `userKey` and a `userToken`), `unauthenticated` (neither).
 *
 * @since 0.1.0
 * @category Models
 */
export type TamboAuthState =
  | { status: "identified"; source: "userKey" | "tokenExchange" }
  | { status: "exchanging" }
  | { status: "error"; error: Error }
  | { status: "invalid" }
  | { status: "unauthenticated" }

/**
 * One argument of a tool call, as `@tambo-ai/react`'s `onCallUnregisteredTool`
 * receives it.
 *
 * @since 0.2.0
 * @category Models
 */
export interface ToolCallParameter {
  readonly parameterName: string
  readonly parameterValue: unknown
}

/**
 * Answers a call of a tool the client did not register: its return (or
 * resolution) is the call's result.
 *
 * @since 0.2.0
 * @category Models
 */
export type UnregisteredToolHandler = (toolName: string, args: Array<ToolCallParameter>) => unknown

/**
 * A suggested next message.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Suggestion {
  id: string
  title: string
  detailedSuggestion: string
  description?: string | undefined
  messageId?: string | undefined
  /** What the API keeps beside the suggestion, if anything. @since 0.2.0 */
  metadata?: { readonly [key: string]: unknown } | undefined
}

/**
 * One page of the user's threads (see `listThreadsPage`): pass `nextCursor`
 * back as `cursor` for the next page while `hasMore` is true.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ThreadPage {
  readonly threads: Array<TamboThread>
  readonly hasMore: boolean
  readonly nextCursor?: string | undefined
}

/**
 * A component registered under a name, as `@tambo-ai/client`'s
 * `registerComponent(name, component)` takes it: `props` (or `propsSchema`)
 * is its props' schema; a `component` value is ignored.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ComponentRegistration {
  readonly description: string
  readonly propsSchema?: Tool.SupportedSchema | undefined
  readonly props?: unknown
  /** Ignored: rendering is the UI layer's business. */
  readonly component?: unknown
  /** Ignored. */
  readonly loadingComponent?: unknown
}

/**
 * A tool call a run waits on, its arguments decoded and validated by the
 * tool's input schema (`error` says why they are invalid).
 *
 * @since 0.1.0
 * @category Models
 */
export type PendingToolCallInfo = Tambo.PendingToolCallInfo

/**
 * The caller's answer to a pending tool call (see `continueRun`).
 *
 * @since 0.1.0
 * @category Models
 */
export type ToolCallResult = Tambo.ToolCallResult

/**
 * How a tool call that needs approval was decided. Approved arguments may
 * be edited; they are validated like the model's.
 *
 * @since 0.1.0
 * @category Models
 */
export type ApprovalDecision = Tambo.ApprovalDecision

/**
 * Decides the tool calls that need approval, instead of
 * `approveToolCall` / `denyToolCall`.
 *
 * @since 0.1.0
 * @category Models
 */
export type ApprovalHandler = (call: PendingToolCallInfo) => ApprovalDecision | PromiseLike<ApprovalDecision>

/**
 * What a run does when its thread already has one in this client: reject
 * with `RunConflictError` (default), wait for it (`"queue"`), or cancel it
 * first (`"interrupt"`). Runs waiting for a thread start in the order they
 * were asked for. An `"interrupt"` run takes the place of every run asked
 * for before it: the running one is cancelled, and the runs still waiting
 * for the thread reject with `AbortError`, having sent nothing. That
 * cancellation is carried out even if the new run is then aborted or its
 * thread stopped before it started, and waits for no iterator of the
 * running one's events that stopped reading. A new conversation whose first run the
 * server has not named a thread for yet counts as that run's thread: a
 * second message there is rejected, queued or interrupts as on any thread,
 * and goes on the thread the server names (it creates the thread only if the
 * first run ended without one); `cancelRun()` of the placeholder, or of the
 * thread the server named meanwhile, ends it too. After `startNewThread()`
 * the next message creates another thread, and a message still waiting goes
 * on with the run it waits for.
 *
 * @since 0.1.0
 * @category Models
 */
export type BusyPolicy = Tambo.BusyPolicy

/**
 * A snapshot of a run, as `subscribeToSnapshots` delivers it.
 *
 * @since 0.1.0
 * @category Models
 */
export interface RunSnapshot {
  /** The run (one stream per run: its identity). */
  readonly stream: TamboStream
  /** The thread's id (`thread.id`). */
  readonly threadId: string
  readonly thread: TamboThread
  /** The run's last snapshot: the thread as the run left it. */
  readonly final: boolean
}

/**
 * Options of `subscribeToSnapshots`.
 *
 * @since 0.1.0
 * @category Models
 */
export interface SubscribeToSnapshotsOptions {
  /** Which snapshots are delivered while a run streams. Default: every change (`SnapshotStrategy.immediate`). */
  readonly strategy?: SnapshotStrategy.Strategy | undefined
}

/**
 * A Tambo client.
 *
 * `getState` and `subscribe` are bound, so they can be passed as they are:
 * `useSyncExternalStore(client.subscribe, client.getState)`. `getState` is
 * synchronous and returns the same object until something changed;
 * listeners are called at most once per microtask.
 *
 * Call `destroy()` when done: it cancels the runs in flight and releases
 * everything, so a Node process can exit.
 *
 * @example
 * ```ts
 * const client = new TamboClient({ apiKey, userKey: "user-1" })
 * for await (const { event, snapshot } of client.run("Hello")) {
 *   if (event.type === "TEXT_MESSAGE_CONTENT") process.stdout.write(event.delta)
 * }
 * const thread = await client.run("And now?").thread
 * await client.destroy()
 * ```
 *
 * @since 0.1.0
 * @category Models
 */
export class TamboClient {
  /**
   * What the client talks to: the Tambo API, or an AG-UI agent (then
   * Tambo-only methods reject with a `NotSupportedError`). For a UI that
   * hides what the backend does not offer.
   *
   * @since 0.2.0
   */
  readonly backend: "tambo" | "ag-ui"
  readonly #parts: Client.Parts
  readonly #runtime: ClientRuntime

  /**
   * Throws a `ConfigError` for conflicting options (`tamboUrl` and
   * `environment`, `userKey` and `userToken`, `apiKey` and `agent`), a
   * missing API key or an agent URL that is not http(s), and a
   * `ToolDefinitionError` for an invalid tool or component.
   *
   * @since 0.1.0
   */
  constructor(options: TamboClientOptions) {
    const made = Client.make(options)
    if (Either.isLeft(made)) throw CallSite.attach(made.left, CallSite.capture(TamboClient))
    this.#parts = made.right
    this.#runtime = made.right.runtime
    this.backend = this.#runtime.backend
  }

  /**
   * Starts what the `deferStart` option held back: the exchange of the
   * `userToken`, the connections of `mcpServers` and of Tambo's MCP server.
   * Once; a client made without `deferStart` (or destroyed) has nothing to
   * start. A run starts the client.
   *
   * @since 0.2.0
   */
  start(): void {
    Client.start(this.#parts)
  }

  // ---------------------------------------------------------------------------
  // Runs
  // ---------------------------------------------------------------------------

  /**
   * Sends a message and returns the run as a {@link TamboStream}. The run
   * starts now; iterate the stream or await `stream.thread`. Client-side
   * tools run automatically (unless `autoExecuteTools: false`) and the run
   * continues with their results. A message that is neither a string nor
   * an object rejects the run with a `ConfigError` (`InvalidOption`).
   *
   * @since 0.1.0
   */
  run(message: string | InputMessage, options: RunOptions = {}): TamboStream {
    Client.start(this.#parts)
    return this.#parts.runs.run(message, options)
  }

  /**
   * The initial messages a thread opens with, as far as this client knows:
   * those of the thread it created (until then, the client's
   * `initialMessages` for a new conversation); `undefined` for any other.
   * For showing them before the thread read from the server has them. A
   * new conversation's local thread id is, once the server named it, that
   * thread (see `getThread`).
   *
   * @since 0.2.0
   */
  getInitialMessages(threadId: string): ReadonlyArray<InitialInputMessage> | undefined {
    return this.#parts.runs.initialMessagesOf(threadId)
  }

  /**
   * Answers the tool calls a run waits on (a run with `autoExecuteTools:
   * false` ends with a `CLIENT_AWAITING_TOOL_RESULTS` event listing them)
   * and streams the rest of the run. It may be called as soon as that
   * event is seen, inside the loop reading the run: it waits for the run to
   * finish ending. A result that is not an answer to a pending call rejects
   * with a `ToolError`. Results the server refuses with a `409` while it
   * still waits on them (the step that paused may hold its lock a moment
   * after its end) are sent again every 50 ms, for up to 3 s, before the
   * stream rejects with a `RunConflictError`. A new conversation's local thread id whose thread
   * was forgotten or deleted since rejects with a `ConfigError` saying the
   * client holds no thread of it, sending nothing, as `run` does.
   *
   * @since 0.1.0
   */
  continueRun(
    threadId: string,
    results: ReadonlyArray<ToolCallResult>,
    options: Omit<RunOptions, "threadId"> = {}
  ): TamboStream {
    Client.start(this.#parts)
    return this.#parts.runs.continueRun(threadId, results, options)
  }

  /**
   * The tool calls a thread's run waits on (loaded from the API for a
   * thread this client has not seen). The server tells no one which client
   * runs a call: a read of the thread while another client's run waits on
   * its own tools (another tab's) lists those calls too. This client never
   * executes them; a message it sends on the thread answers them as
   * cancelled, and that run's results are then refused (`ApiError`). A new
   * conversation's local thread id whose thread was forgotten or deleted
   * since rejects with a `ConfigError` saying the client holds no thread of
   * it, sending nothing, as `run` does.
   *
   * @since 0.1.0
   */
  getPendingToolCalls(threadId: string): Promise<Array<PendingToolCallInfo>> {
    return this.#runtime.promise(Effect.map(this.#runtime.tambo.getPendingToolCalls(threadId), (calls) => [...calls]))
  }

  /**
   * Approves a tool call that waits for approval, optionally with edited
   * arguments. Providers reuse call ids (`call_0` in every thread):
   * `threadId` says which thread's call. Throws a `ToolError` if none is
   * waiting under that id (`NotPending`), or if, without `threadId`, calls
   * of several threads wait under it (`Ambiguous`).
   *
   * @since 0.1.0
   */
  approveToolCall(toolCallId: string, options?: { readonly args?: unknown; readonly threadId?: string | undefined }): void {
    this.#parts.approvals.decide(
      toolCallId,
      this.#threadIdOf(options?.threadId),
      this.#runtime.tambo.approveToolCall(toolCallId, options)
    )
  }

  /**
   * Denies a tool call that waits for approval: the model is told, with
   * `reason`. `threadId` and the errors as for `approveToolCall`.
   *
   * @since 0.1.0
   */
  denyToolCall(toolCallId: string, reason?: string, options?: { readonly threadId?: string | undefined }): void {
    const decision = this.#runtime.tambo.denyToolCall(toolCallId, reason, options)
    this.#parts.approvals.decide(toolCallId, this.#threadIdOf(options?.threadId), decision)
  }

  /**
   * The tool calls that wait for `approveToolCall` / `denyToolCall`: those
   * this client's runs announced with a `CLIENT_APPROVAL_REQUESTED` event
   * (whether or not anyone iterated them), in order, until they are decided
   * or their run ended or was cancelled (`cancelRun`, a `signal`: from then
   * on a decision for them throws `NotPending`). Synchronous; the same array until it changed, and
   * `subscribe` listeners are called when it does. Filter by `threadId` for
   * one thread.
   *
   * @example
   * ```ts
   * client.subscribe(() => {
   *   for (const call of client.getPendingApprovals()) showApprovalDialog(call)
   * })
   * ```
   *
   * @since 0.1.0
   */
  getPendingApprovals(): ReadonlyArray<PendingToolCallInfo> {
    return this.#parts.approvals.pending
  }

  /**
   * Whether a run this client started is in flight on a thread (default:
   * the current one), tool rounds and approvals included. `subscribe`
   * listeners are called when it changes. A new conversation's local
   * thread id is, once the server named it, that thread (see `getThread`);
   * before that, the thread of the run `startNewThread()` moved there, as
   * for `cancelRun` and a run asked for there.
   *
   * @since 0.1.0
   */
  hasActiveRun(threadId?: string): boolean {
    return this.#parts.runs.onThread(threadId).length > 0
  }

  /**
   * Calls `listener` with snapshots of every run this client starts, and
   * of those in flight: for each run, its first snapshot (once its first
   * event arrived), the ones `strategy` publishes (core's
   * `SnapshotStrategy.snapshots`), and its final thread (`final: true`,
   * always, last). A listener that throws is logged as a warning and still
   * called with the next snapshot. Returns the unsubscribe function;
   * unsubscribing cancels no run. This is how a UI renders streamed text at word boundaries or a
   * few times a second without reading each run's stream itself.
   *
   * @example
   * ```ts
   * const unsubscribe = client.subscribeToSnapshots(
   *   ({ thread, final }) => render(thread.messages, { streaming: !final }),
   *   { strategy: SnapshotStrategy.any(SnapshotStrategy.wordBoundary, SnapshotStrategy.throttle("150 millis")) }
   * )
   * ```
   *
   * @since 0.1.0
   */
  subscribeToSnapshots(
    listener: (snapshot: RunSnapshot) => void,
    options: SubscribeToSnapshotsOptions = {}
  ): () => void {
    return this.#parts.snapshots.add(listener, options, this.#parts.runs.entries)
  }

  /**
   * Cancels the run on a thread (default: the current one): the run's
   * stream rejects with an `AbortError` and the thread is marked cancelled.
   * A run this client does not own (another tab's, as a read of the thread
   * showed it: its `status` is not `idle`) is cancelled on the server, and
   * the thread read again. Resolves once the run ended. A run whose last
   * event came has completed and is left to end as such, without waiting for
   * an iterator of its events that stopped reading; so is a run the server
   * ended while the cancellation was on its way (it answers 404 and the
   * run's last event comes within 3 s): once the server answered so, the
   * run waits no more for an iterator of its events (one that stopped
   * reading, or whose `for await` loop awaits this call), which still yields
   * every event the run had, then its end. While the server is told, a run
   * it still runs keeps waiting for such an iterator, which holds no more
   * than its bound. A run the server has
   * not answered yet is cancelled on the server once the answer names it
   * (within 3 s; else its request is aborted, and the server cancels the run
   * as the connection closes; a new conversation then becomes the thread its
   * message landed in, found among the user's newest threads, whose run is
   * cancelled by its id if still going; none holding it, the server never
   * got it, and the message leaves the conversation, as a refused message
   * does, for the caller to send again; should it reach the server later
   * all the same, the conversation's next run finds that thread first and
   * goes on there). A new conversation's local thread id is,
   * once the server named it, that thread (see `getThread`).
   *
   * @since 0.1.0
   */
  cancelRun(threadId?: string): Promise<void> {
    return this.#parts.runs.cancel(threadId)
  }

  // ---------------------------------------------------------------------------
  // Threads
  // ---------------------------------------------------------------------------

  /**
   * Makes a thread current, loading it from the API if the client does not
   * know it.
   *
   * @since 0.1.0
   */
  switchThread(threadId: string): Promise<void> {
    return this.#runtime.promise(this.#runtime.tambo.switchThread(threadId))
  }

  /**
   * Makes the placeholder of a new conversation current; the next run
   * creates the thread. Returns the placeholder's id. A run still creating
   * its thread in the placeholder (the server has not named it yet), also
   * one still waiting to start there (for its credentials), goes on in a
   * local thread of its own (a `local:` id in the state): the thread the
   * server names for it holds its messages and its ending, and does not
   * become current; `cancelRun()` and `hasActiveRun` of the new conversation
   * no longer find it, those of its local thread do.
   *
   * @since 0.1.0
   */
  startNewThread(): string {
    return this.#parts.runs.startNewThread(() => this.#runtime.sync(this.#runtime.tambo.startNewThread))
  }

  /**
   * A thread from the client's state (default: the current one). A new
   * conversation's local thread id (a `local:` id the state showed while its
   * first run waited for the server) is, once the server named that thread,
   * the thread it became, as in every call about a thread
   * (`hasActiveRun`, `cancelRun`, `forgetThread`, the approvals), for as
   * long as the state holds it.
   *
   * @since 0.1.0
   */
  getThread(threadId?: string): TamboThread | undefined {
    const state = this.#runtime.store.getState()
    return state.threadMap[this.#threadIdOf(threadId) ?? state.currentThreadId]?.thread
  }

  /** The thread an app's id names, as the store holds it (see `getThread`); none stays none. */
  #threadIdOf(threadId: string | undefined): string | undefined {
    return threadId === undefined ? undefined : this.#runtime.threadIdOf(threadId)
  }

  /**
   * The AG-UI agent's shared state of a thread (default: the current one):
   * the thread's `state`, or `{}` while neither the agent nor the app set
   * one. Synchronous. Throws a `ConfigError` (`InvalidOption`) for a thread
   * the client does not hold.
   *
   * @since 0.2.0
   */
  getAgentState<S = unknown>(threadId?: string): S {
    return this.#runtime.sync(this.#runtime.tambo.getAgentState<S>(threadId))
  }

  /**
   * Sets the AG-UI agent's shared state of a thread (default: the current
   * one, also a new conversation's before its first run), sent with the
   * thread's next run: `state` is the new state, or a function of the state
   * as it is. Synchronous; returns the new state, and `subscribe` listeners
   * hear of it. A state that is not a JSON value (a cycle, a BigInt, a
   * function, `undefined`, a class instance such as a `Date`), or a thread
   * the client does not hold, throws a `ConfigError` (`InvalidOption`) and
   * the state stays.
   *
   * @example
   * ```ts
   * client.setAgentState<{ todo: Array<string> }>((previous) => ({ todo: [...previous.todo, "milk"] }))
   * ```
   *
   * @since 0.2.0
   */
  setAgentState<S = unknown>(state: S | ((previous: S) => S), threadId?: string): S {
    const id = threadId ?? this.#runtime.store.getState().currentThreadId
    return this.#runtime.sync(this.#runtime.tambo.setAgentState<S>(id, state))
  }

  /**
   * The user's threads, newest first, without their messages.
   *
   * @since 0.1.0
   */
  listThreads(params: { readonly cursor?: string; readonly limit?: number } = {}): Promise<Array<TamboThread>> {
    return this.listThreadsPage(params).then((page) => page.threads)
  }

  /**
   * One page of the user's threads, newest first, without their messages, and
   * whether there are more: `listThreads` with what paging needs.
   *
   * @example
   * ```ts
   * let page = await client.listThreadsPage({ limit: 20 })
   * while (page.hasMore) page = await client.listThreadsPage({ limit: 20, cursor: page.nextCursor })
   * ```
   *
   * @since 0.1.0
   */
  listThreadsPage(params: { readonly cursor?: string | undefined; readonly limit?: number } = {}): Promise<ThreadPage> {
    return this.#runtime.promise(Effect.map(this.#runtime.tambo.listThreads(params), pageFromCore), "listThreadsPage")
  }

  /**
   * Loads a thread and its messages from the API into the state. A run
   * another client has on the thread shows as the API has it (`status`
   * `"waiting"` or `"streaming"`, the last component of the message it
   * writes `streamingState: "streaming"`) until a later read finds it ended;
   * a run of this client keeps its own status. A thread
   * the API no longer has (deleted in another tab or by another device)
   * rejects as the API answers, and leaves the state. A thread id that is
   * not a non-empty string rejects with a `ConfigError` (`InvalidOption`)
   * before anything is sent, here and in every other call about a thread.
   *
   * @since 0.1.0
   */
  fetchThread(threadId: string): Promise<TamboThread> {
    return this.#runtime.promise(this.#runtime.tambo.fetchThread(threadId), "fetchThread")
  }

  /**
   * @since 0.1.0
   */
  updateThreadName(threadId: string, name: string): Promise<void> {
    return this.#runtime.promise(this.#runtime.tambo.updateThreadName(threadId, name), "updateThreadName")
  }

  /**
   * Asks the API to name the thread; resolves with the name (`""` if none).
   * A rename (`updateThreadName`) sent meanwhile wins, in the state and on
   * the server.
   *
   * @since 0.1.0
   */
  generateThreadName(threadId: string): Promise<string> {
    return this.#runtime.promise(
      Effect.map(this.#runtime.tambo.generateThreadName(threadId), Option.getOrElse(() => "")),
      "generateThreadName"
    )
  }

  /**
   * Deletes a thread on the server, then forgets it. A run in flight on the
   * thread is cancelled (as `cancelRun` would) before the thread is
   * forgotten, so it does not come back with the run's last events. A
   * thread the API no longer has (deleted in another tab or by another
   * device) rejects as the API answers, and leaves the state.
   *
   * @since 0.1.0
   */
  deleteThread(threadId: string): Promise<void> {
    return this.#runtime.promise(this.#runtime.tambo.deleteThread(threadId), "deleteThread")
  }

  /**
   * Drops a thread from the client's state, not from the server, and says
   * whether it did: for a long-lived client (a server serving many
   * conversations) that would otherwise keep every thread it ran. The next
   * run on the thread, or a later `fetchThread`, reads it back (a
   * `fetchThread` already in flight does not); what only this client knew
   * of it (reasoning text, a message's `key`) does not come back. Refused
   * (`false`) for a thread the state does not hold, the current thread, a
   * thread with a run in flight, and a thread only this client holds (not
   * yet saved, or an AG-UI agent's).
   *
   * @since 0.2.0
   */
  forgetThread(threadId: string): boolean {
    return this.#runtime.sync(this.#runtime.tambo.forgetThread(threadId))
  }

  // ---------------------------------------------------------------------------
  // Tools, components, context
  // ---------------------------------------------------------------------------

  /**
   * Registers a tool, replacing any of the same name. Throws a
   * `ToolDefinitionError` if it is invalid.
   *
   * @since 0.1.0
   */
  registerTool(tool: ToolDefinition): void {
    this.#runtime.sync(this.#runtime.tambo.registerTool(tool))
  }

  /**
   * Registers tools: all of them, or none if one is invalid.
   *
   * @since 0.1.0
   */
  registerTools(tools: ReadonlyArray<ToolDefinition>): void {
    this.#runtime.sync(this.#runtime.tambo.registerTools(tools))
  }

  /**
   * The registered tools' definitions as they were given, by name (MCP
   * servers' tools included).
   *
   * @since 0.2.0
   */
  getTools(): Readonly<Record<string, ToolDefinition>> {
    return this.#runtime.sync(this.#runtime.registry.toolMap)
  }

  /**
   * Withdraws a registered tool: the next run's request no longer lists it
   * (a run in flight keeps the tools it started with; a call of it from then
   * on is a call of an unregistered tool). An unknown name changes nothing.
   *
   * @since 0.2.0
   */
  unregisterTool(name: string): void {
    this.#runtime.sync(this.#runtime.registry.unregister(name))
  }

  /**
   * Withdraws a registered component: the next run's request no longer
   * offers it (a run in flight keeps what it started with). An unknown name
   * changes nothing.
   *
   * @since 0.2.0
   */
  unregisterComponent(name: string): void {
    this.#runtime.sync(this.#runtime.registry.unregisterComponent(name))
  }

  /**
   * A component block's props as its registered component's schema wrote
   * them, for rendering it. The API gives the model every prop as required,
   * the optional ones nullable, so the model sends `null` for each optional
   * prop it leaves out: those are left out here (or the prop's `default`
   * given), as `@tambo-effect/react` does before it renders a component. The
   * props of a block whose component is not registered come as they are. The
   * store keeps the props as sent.
   *
   * @since 0.2.0
   */
  getComponentProps(block: { readonly name: string; readonly props: unknown }): Record<string, unknown> {
    return this.#runtime.sync(Registration.componentProps(this.#runtime.registry, block))
  }

  #sdkClient: TamboAI | undefined

  /**
   * The `@tambo-ai/typescript-sdk` client of this client's API key and
   * URL, as `@tambo-ai/client`'s `getSdkClient()` gives it: for the API
   * calls this client does not offer. Its calls are the SDK's own: they
   * reject with its errors, retry as it does, and carry no user token (a
   * call takes the `userKey` or the headers it needs). Made when first
   * asked for. Throws a `NotSupportedError` for an AG-UI agent.
   *
   * @since 0.2.0
   */
  getSdkClient(): TamboAI {
    return this.#runtime.sync(
      Effect.sync(() => {
        const config = Option.getOrThrow(this.#runtime.config)
        this.#sdkClient ??= new TamboAI({ apiKey: Redacted.value(config.apiKey), baseURL: config.baseUrl })
        return this.#sdkClient
      }),
      "getSdkClient"
    )
  }

  /**
   * Registers a component the model may render (metadata only), replacing
   * any of the same name. Also accepts `@tambo-ai/client`'s
   * `(name, { description, props })` form.
   *
   * @since 0.1.0
   */
  registerComponent(component: AvailableComponent): void
  registerComponent(name: string, component: ComponentRegistration): void
  registerComponent(nameOrComponent: string | AvailableComponent, registration?: ComponentRegistration): void {
    this.#runtime.sync(
      Effect.flatMap(
        Registration.component(nameOrComponent, registration),
        (component) => this.#runtime.tambo.registerComponent(component)
      )
    )
  }

  /**
   * Adds (or replaces) a context helper: its result is sent with every run
   * as `additionalContext[name]`; `undefined` (or `null`) sends nothing.
   *
   * @since 0.1.0
   */
  addContextHelper(name: string, helper: ContextHelperFn): void {
    this.#runtime.sync(this.#runtime.tambo.addContextHelper(name, HelperRun.toCore(helper)))
    this.#parts.contextHelpers.set(name, helper)
  }

  /**
   * @since 0.1.0
   */
  removeContextHelper(name: string): void {
    this.#runtime.sync(this.#runtime.tambo.removeContextHelper(name))
    this.#parts.contextHelpers.delete(name)
  }

  /**
   * The context helpers registered now (from the options and
   * `addContextHelper`), by name.
   *
   * @since 0.2.0
   */
  getContextHelpers(): Readonly<Record<string, ContextHelperFn>> {
    return Object.fromEntries(this.#parts.contextHelpers)
  }

  // ---------------------------------------------------------------------------
  // Suggestions
  // ---------------------------------------------------------------------------

  /**
   * The suggestions stored for a message (arguments in `@tambo-ai/client`'s
   * order).
   *
   * @since 0.1.0
   */
  listSuggestions(messageId: string, threadId: string): Promise<Array<Suggestion>> {
    return this.#runtime.promise(
      Effect.map(this.#runtime.tambo.listSuggestions(threadId, messageId), (list) => list.map(suggestionFromCore)),
      "listSuggestions"
    )
  }

  /**
   * Generates suggestions for a message, given the registered components.
   *
   * @since 0.1.0
   */
  generateSuggestions(
    messageId: string,
    threadId: string,
    options?: { readonly maxSuggestions?: number }
  ): Promise<Array<Suggestion>> {
    return this.#runtime.promise(
      Effect.map(
        this.#runtime.tambo.generateSuggestions(threadId, messageId, options),
        (list) => list.map(suggestionFromCore)
      ),
      "generateSuggestions"
    )
  }

  // ---------------------------------------------------------------------------
  // Component state
  // ---------------------------------------------------------------------------

  /**
   * Replaces (`{ state }`) or patches (`{ patch }`, RFC 6902 operations) the
   * state of a component block, on the server and then in the state (a
   * thread the state holds is read again, for the time the server changed
   * it at); resolves with its new state. The model sees it in later runs, and a
   * thread loaded again has it. Rejects with a `ConfigError`
   * (`InvalidOption`) for a bad update or a new conversation's id
   * (`startNewThread()`'s placeholder: the server has no thread of it until
   * its first message), nothing sent; with an `ApiError`
   * (404) for an unknown component, a `RunConflictError` while a run is
   * active on the thread.
   *
   * @example
   * ```ts
   * await client.updateComponentState(threadId, "comp_1", { patch: [{ op: "add", path: "/favourite", value: true }] })
   * ```
   *
   * @since 0.2.0
   */
  updateComponentState(
    threadId: string,
    componentId: string,
    update: Transport.ComponentStateUpdate
  ): Promise<Record<string, unknown>> {
    return this.#runtime.promise(
      this.#runtime.tambo.updateComponentState(threadId, componentId, update),
      "updateComponentState"
    )
  }

  // ---------------------------------------------------------------------------
  // Voice
  // ---------------------------------------------------------------------------

  /**
   * Transcribes recorded speech through the API (`POST /audio/transcribe`)
   * and resolves with the text. `audio` is a `Blob` or `File` of MP3, WAV,
   * MP4, M4A or WebM (what a browser's `MediaRecorder` records), at most
   * 25 MB; anything else rejects with a `TranscriptionError` before it is
   * sent. Not retried. Aborting `options.signal` aborts the request and
   * rejects with an `AbortError` (`SignalAborted`).
   *
   * @since 0.2.0
   */
  transcribe(audio: Blob, options?: TranscribeOptions): Promise<string> {
    const { signal, ...rest } = options ?? {}
    return this.#runtime.promise(
      this.#runtime.withConfig(Transcription.transcribe(audio, rest), "transcription"),
      "transcribe",
      signal
    )
  }

  // ---------------------------------------------------------------------------
  // State
  // ---------------------------------------------------------------------------

  /**
   * The store the state lives in: the one given in the options, or the
   * client's {@link InMemoryStore}.
   *
   * @since 0.1.0
   */
  getStore(): TamboStore<ClientState> {
    return this.#runtime.store
  }

  /**
   * The current state. Bound; the same object until something changed.
   *
   * @since 0.1.0
   */
  readonly getState = (): ClientState => this.#runtime.store.getState()

  /**
   * Calls `listener` after changes, at most once per microtask: of the
   * state, of `getPendingApprovals()` and of `hasActiveRun()`. Bound.
   * Returns the unsubscribe function: once it is called, the listener is
   * not called again, also in a notification under way. A listener that
   * throws is logged as a warning; the other listeners are called all the
   * same.
   *
   * @since 0.1.0
   */
  readonly subscribe = (listener: () => void): (() => void) => this.#parts.notifier.subscribe(listener)

  /**
   * Who the client acts for now (see {@link TamboAuthState}): a client with
   * a `userToken` is `exchanging` from its construction until the exchange
   * succeeds or fails, also while `deferStart` holds the exchange back.
   *
   * @since 0.1.0
   */
  getAuthState(): TamboAuthState {
    return authStateFromCore(this.#runtime.sync(this.#runtime.tambo.authState))
  }

  /**
   * Calls `listener` after every change of `getAuthState()` (a token
   * exchange starting or ending, a failure). Returns the unsubscribe
   * function.
   *
   * @since 0.2.0
   */
  subscribeToAuthState(listener: () => void): () => void {
    return this.#runtime.subscribe(this.#runtime.tambo.authChanges, this.#runtime.tambo.authState, listener)
  }

  /**
   * Takes a new user token in place, as an identity provider rotates it
   * (about hourly), without a new client: runs in flight go on, threads
   * stay. The same token again changes nothing. Otherwise the access token
   * of the old one is dropped and the new one is exchanged at once; every
   * request from then on waits for that exchange and carries its token,
   * except a run in flight's: its tool rounds, its `cancelRun` and its end's
   * read of the thread carry the credentials it started with (until the API
   * refuses them as expired), so it goes on, or stops, as the user it
   * started for. To act for another user, make a new client: this one's
   * threads stay. Throws an `AuthError` (`InvalidCredentials`) on a client
   * made with a `userKey` or no identity.
   *
   * @example
   * ```ts
   * identityProvider.onTokenRefreshed((token) => client.setUserToken(token))
   * ```
   *
   * @since 0.1.0
   */
  setUserToken(userToken: string): void {
    this.#runtime.sync(this.#runtime.auth.setUserToken(Redacted.make(userToken)), "setUserToken")
  }

  /**
   * The MCP servers given in the options.
   *
   * @since 0.1.0
   */
  get mcpServers(): ReadonlyArray<McpServerInfo> {
    return this.#parts.mcpServers
  }

  /**
   * Connects an MCP server (or joins the connection in progress); its tools
   * are registered for the model. Rejects with an `McpError` when it cannot connect.
   * Its `handlers` replace a known server's after the replacements asked
   * before (`updateMcpServerHandlers`, the `update*Handler` calls of its
   * connection `client`).
   *
   * @since 0.1.0
   */
  connectMcpServer(server: McpServerInfo): Promise<McpConnectionInfo> {
    const connect = () => this.#runtime.promise(this.#runtime.mcp.connectMcpServer(server))
    const connected = server.handlers === undefined ? connect() : this.#parts.mcpConnections.afterUpdates(connect)
    return connected.then((connection) => this.#parts.mcpConnections.connection(connection))
  }

  /**
   * Disconnects an MCP server (by its key or its info); its tools are withdrawn.
   *
   * @since 0.1.0
   */
  disconnectMcpServer(keyOrServer: string | McpServerInfo): Promise<void> {
    return this.#runtime.promise(
      this.#runtime.mcp.disconnectMcpServer(keyOrServer)
    )
  }

  /**
   * Replaces the handlers of a known MCP server (by its key): they answer
   * its next requests, on the same session. Never connects: a server whose
   * connection failed keeps them for its next connect; nothing for a key no
   * connection has. A `connectMcpServer` with `handlers` replaces them too,
   * but connects a failed server again. Applied in the order asked, with
   * the `update*Handler` calls of the server's connection `client`: the
   * handlers asked for last are in force.
   *
   * @since 0.2.0
   */
  updateMcpServerHandlers(key: string, handlers: Partial<Mcp.McpHandlers>): Promise<void> {
    return this.#parts.mcpConnections.updateHandlers(key, () => handlers)
  }

  /**
   * The MCP connections by key, with their status (`connecting`,
   * `connected`, `reconnecting`, `failed`), tools, and the `client` of a
   * connected server. The same object until something changes.
   *
   * @since 0.1.0
   */
  getMcpClients(): McpConnections {
    return this.#parts.mcpConnections.record(this.#runtime.sync(this.#runtime.mcp.getMcpClients))
  }

  /**
   * Calls `listener` after every change of `getMcpClients()` (a status, the
   * tools of a server). Returns the unsubscribe function.
   *
   * @since 0.1.0
   */
  subscribeToMcpClients(listener: () => void): () => void {
    return this.#runtime.subscribe(this.#runtime.mcp.changes, this.#runtime.mcp.getMcpClients, listener)
  }

  /**
   * Sets (or with `undefined` removes) the handler of MCP servers'
   * elicitations (a form the user fills). Without one, they are declined.
   *
   * @since 0.1.0
   */
  setMcpElicitationHandler(handler: Mcp.ElicitationHandler | undefined): void {
    this.#runtime.sync(this.#runtime.mcp.setElicitationHandler(handler))
    this.#parts.mcpElicitationHandler = handler
  }

  /**
   * The handler of MCP servers' elicitations set last with
   * `setMcpElicitationHandler`, if any.
   *
   * @since 0.1.0
   */
  getMcpElicitationHandler(): Mcp.ElicitationHandler | undefined {
    return this.#parts.mcpElicitationHandler
  }

  /**
   * Sets (or with `undefined` removes) the handler of MCP servers' sampling
   * requests (a completion asked of the app's model), for the servers
   * without one of their own. Servers are told the client samples when
   * they connect, so a server connected while no handler was set is never
   * asked; without one, a request fails.
   *
   * @since 0.2.0
   */
  setMcpSamplingHandler(handler: Mcp.SamplingHandler | undefined): void {
    this.#runtime.sync(this.#runtime.mcp.setSamplingHandler(handler))
    this.#parts.mcpSamplingHandler = handler
  }

  /**
   * The handler of MCP servers' sampling requests set last with
   * `setMcpSamplingHandler`, if any.
   *
   * @since 0.2.0
   */
  getMcpSamplingHandler(): Mcp.SamplingHandler | undefined {
    return this.#parts.mcpSamplingHandler
  }

  /**
   * Sets (or with `undefined` removes) the handler of MCP servers' URL
   * elicitations, for the servers without one of their own: a server asks
   * the user to go to a URL (to sign in to a third party, to pay). The
   * handler shows the message and the whole URL and answers `accept` only
   * with the user's consent; only `http` and `https` URLs reach it, others
   * are declined. Servers are told the client takes URL elicitations when
   * they connect while a handler is set.
   *
   * @since 0.2.0
   */
  setMcpUrlElicitationHandler(handler: Mcp.UrlElicitationHandler | undefined): void {
    this.#runtime.sync(this.#runtime.mcp.setUrlElicitationHandler(handler))
    this.#parts.mcpUrlElicitationHandler = handler
  }

  /**
   * The handler of MCP servers' URL elicitations set last with
   * `setMcpUrlElicitationHandler` (or given as `mcpUrlElicitationHandler`), if any.
   *
   * @since 0.2.0
   */
  getMcpUrlElicitationHandler(): Mcp.UrlElicitationHandler | undefined {
    return this.#parts.mcpUrlElicitationHandler
  }

  /**
   * Calls `listener` each time an MCP server says a URL elicitation
   * finished (`{ serverKey, elicitationId }`), until the returned function
   * is called: a UI that said "continue in your browser" may move on.
   *
   * @since 0.2.0
   */
  subscribeToMcpElicitationCompletions(listener: (completion: Mcp.McpElicitationComplete) => void): () => void {
    return this.#runtime.each(this.#runtime.mcp.elicitationCompletions, listener, "subscribeToMcpElicitationCompletions")
  }

  /**
   * Connects Tambo's own MCP server (`<tamboUrl>/mcp`, server key
   * `"tambo"`: the prompts and resources of the project's MCP servers)
   * until the returned function is called: with an MCP access token for the
   * current thread, or for `contextKey` while no thread is current, renewed
   * when the thread changes or the token nears its expiry. What the
   * `tamboMcpServer` option does for the client's life; with that option
   * set, this does nothing. Calls made while one is running share it (and
   * its `contextKey`); the server is disconnected when the last one stops.
   * Throws a `NotSupportedError` for an AG-UI agent.
   *
   * @since 0.2.0
   */
  followTamboMcpServer(options: { readonly contextKey?: string | undefined } = {}): () => void {
    // Throws for an AG-UI agent, and for a destroyed client.
    this.#runtime.sync(Effect.void, "followTamboMcpServer")
    const parts = this.#parts
    if (parts.followsTamboMcp) return () => undefined
    const shared = parts.tamboMcp ?? { count: 0, stop: this.#runtime.followTamboMcp(options) }
    parts.tamboMcp = shared
    shared.count++
    let stopped = false
    return () => {
      if (stopped) return
      stopped = true
      if (--shared.count > 0 || parts.tamboMcp !== shared) return
      parts.tamboMcp = undefined
      shared.stop()
    }
  }

  /**
   * A token for Tambo's MCP access (`contextKey` defaults to the user key).
   *
   * @since 0.1.0
   */
  getMcpToken(contextKey?: string, threadId?: string): Promise<Mcp.McpToken> {
    return this.#runtime.promise(this.#runtime.mcp.getMcpToken(contextKey, threadId), "getMcpToken")
  }

  /**
   * The prompts of every connected MCP server, each with its `serverKey`.
   * A server whose listing fails is left out.
   *
   * @since 0.1.0
   */
  listMcpPrompts(): Promise<ReadonlyArray<Mcp.McpPrompt>> {
    return this.#runtime.promise(this.#runtime.mcp.listMcpPrompts)
  }

  /**
   * Fetches a prompt of a connected MCP server with its arguments, as its
   * messages. Rejects with an `McpError` (`NotConnected` for an unknown
   * server key, `CallFailed` when the server refuses).
   *
   * @since 0.1.0
   */
  getMcpPrompt(serverKey: string, name: string, args?: Readonly<Record<string, string>>): Promise<Mcp.McpPromptResult> {
    return this.#runtime.promise(this.#runtime.mcp.getMcpPrompt(serverKey, name, args))
  }

  /**
   * The resources of every connected MCP server, then the app's own (server
   * key `"registry"`), optionally filtered by a search string.
   *
   * @since 0.1.0
   */
  listMcpResources(search?: string): Promise<ReadonlyArray<Mcp.McpResource>> {
    return this.#runtime.promise(this.#runtime.mcp.listMcpResources(search))
  }

  /**
   * The resource templates of every connected MCP server.
   *
   * @since 0.1.0
   */
  listMcpResourceTemplates(): Promise<ReadonlyArray<Mcp.McpResourceTemplate>> {
    return this.#runtime.promise(this.#runtime.mcp.listMcpResourceTemplates)
  }

  /**
   * Reads a resource of a connected MCP server (or of the app, with the
   * server key `"registry"`). Rejects with an `McpError`.
   *
   * @since 0.1.0
   */
  readMcpResource(serverKey: string, uri: string): Promise<Mcp.McpResourceContents> {
    return this.#runtime.promise(this.#runtime.mcp.readMcpResource(serverKey, uri))
  }

  /**
   * Watches a resource of a connected MCP server: `listener` gets its
   * contents, then its contents again each time the server says it
   * changed, until the returned function is called (the subscription on
   * the server ends then). A server that does not offer subscriptions (and
   * the app's own resources) gives the contents once. `onError` gets an
   * `McpError` when the resource cannot be read or the server goes away
   * (`Disconnected`: watch again once it is reconnected); the watch is over
   * then.
   *
   * @since 0.2.0
   */
  watchMcpResource(
    serverKey: string,
    uri: string,
    listener: (contents: Mcp.McpResourceContents) => void,
    onError?: (error: TamboClientError) => void
  ): () => void {
    return this.#runtime.watch(this.#runtime.mcp.watchMcpResource(serverKey, uri), listener, onError)
  }

  /**
   * The values a connected MCP server suggests for an argument of one of
   * its prompts (`{ type: "ref/prompt", name }`) or resource templates
   * (`{ type: "ref/resource", uri }`), given what was typed so far and the
   * arguments already chosen (`context`): for an autocompleting prompt
   * form. A server that offers no completions suggests nothing. Rejects
   * with an `McpError` (`NotConnected` for an unknown server key,
   * `CallFailed` when the server refuses).
   *
   * @since 0.2.0
   */
  completeMcpArgument(
    serverKey: string,
    ref: Mcp.McpCompletionRef,
    argument: { readonly name: string; readonly value: string },
    context?: Readonly<Record<string, string>>
  ): Promise<Mcp.McpCompletion> {
    return this.#runtime.promise(this.#runtime.mcp.completeMcpArgument(serverKey, ref, argument, context))
  }

  /**
   * Asks a connected MCP server to send log messages of `level` and above,
   * now and after each reconnection (`McpServerInfo.logLevel` sets it from
   * the start). A server that offers no logging is not asked. Rejects with
   * an `McpError` (`NotConnected` for an unknown server key, `CallFailed`
   * when the server refuses).
   *
   * @since 0.2.0
   */
  setMcpLogLevel(serverKey: string, level: Mcp.McpLogLevel): Promise<void> {
    return this.#runtime.promise(this.#runtime.mcp.setMcpLogLevel(serverKey, level))
  }

  /**
   * Calls `listener` with each log message a connected MCP server sends,
   * until the returned function is called. A listener that throws is
   * logged as a warning and still called with the next one.
   *
   * @since 0.2.0
   */
  subscribeToMcpLogs(listener: (message: Mcp.McpLogMessage) => void): () => void {
    return this.#runtime.each(this.#runtime.mcp.logs, listener, "subscribeToMcpLogs")
  }

  /**
   * Calls `listener` with each progress notice an MCP server sends about a
   * call of the model's (its `toolCallId` is the call's `tool_use` block's
   * id), until the returned function is called: for a progress bar beside
   * the call. A listener that throws is logged as a warning and still
   * called with the next one.
   *
   * @since 0.2.0
   */
  subscribeToMcpToolProgress(listener: (progress: Mcp.McpToolProgress) => void): () => void {
    return this.#runtime.each(this.#runtime.mcp.toolProgress, listener, "subscribeToMcpToolProgress")
  }

  /**
   * The latest progress an MCP server told of the model's call `toolCallId`
   * while the call runs; `undefined` before its first notice and once it
   * ended. A UI that appears in the middle of a call reads this, then
   * follows {@link TamboClient.subscribeToMcpToolProgress}.
   *
   * @since 0.2.0
   */
  getMcpToolProgress(toolCallId: string): Mcp.McpToolProgress | undefined {
    return Option.getOrUndefined(this.#runtime.sync(this.#runtime.mcp.currentToolProgress(toolCallId)))
  }

  /**
   * Sets the roots MCP servers are given (or with `undefined` stops giving
   * any), and tells each connected server that was given roots that they
   * changed. Servers connected while no roots were set are not told until
   * they reconnect. Resolves once they were told.
   *
   * @since 0.2.0
   */
  setMcpRoots(roots: ReadonlyArray<Mcp.McpRoot> | undefined): Promise<void> {
    return this.#runtime.promise(this.#runtime.mcp.setMcpRoots(roots))
  }

  // ---------------------------------------------------------------------------
  // Lifecycle
  // ---------------------------------------------------------------------------

  /**
   * Cancels the runs in flight (they reject with an `AbortError`), stops
   * notifying listeners and releases the runtime: afterwards the client
   * holds no timer, socket or fiber, and a Node process can exit. Calls on
   * a destroyed client reject with an `AbortError`. Idempotent.
   *
   * @since 0.1.0
   */
  destroy(): Promise<void> {
    return Client.destroy(this.#parts)
  }

  /**
   * Calls `listener` once the client is destroyed: when the Promise of
   * `destroy()` settles (its runs ended, their cancels sent), whoever
   * called it. Called in a microtask if the client is destroyed already.
   * Returns the unsubscribe function. For code handed a client it does not
   * own (a `TamboProvider` given one) and waiting on something only the
   * client's end would settle: `subscribe`'s listeners are not called once
   * `destroy()` began.
   *
   * @since 0.2.0
   */
  subscribeToDestroy(listener: () => void): () => void {
    return Client.subscribeToDestroy(this.#parts, listener)
  }
}
