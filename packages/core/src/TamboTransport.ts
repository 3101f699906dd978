/**
 * Every call the SDK makes to the Tambo API.
 *
 * REST calls go through `@tambo-ai/typescript-sdk` (kept internal). Run
 * streams go through `@effect/platform`'s `HttpClient` with a chunk-level
 * SSE decoder: the typescript-sdk decodes each event through several
 * async-generator hops, which costs several times the floor on long runs.
 *
 * @since 0.1.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import type * as Events from "./Events.js"
import type * as Api from "./internal/transport/apiSchemas.js"
import * as RunStream from "./internal/transport/runStream.js"
import * as internal from "./internal/transport/service.js"
import type { TamboConfig } from "./TamboConfig.js"
import type { AuthError, DecodeError, TamboError, TransportError } from "./TamboError.js"
import type * as Tool from "./Tool.js"
import type * as Types from "./Types.js"

/**
 * Who a request acts for: a user key (sent as `userKey`), or a bearer token
 * obtained by exchanging a user token.
 *
 * @since 0.1.0
 * @category Models
 */
export type Credentials =
  | { readonly _tag: "UserKey"; readonly userKey: string }
  | { readonly _tag: "Bearer"; readonly token: Redacted.Redacted<string> }

/**
 * A tool as the API receives it: `Tool.ApiTool`, what the registry makes of a
 * registered tool.
 *
 * @since 0.1.0
 * @category Models
 */
export type ApiTool = Tool.ApiTool

/**
 * A component as the API receives it: `Tool.ApiComponent`.
 *
 * @since 0.1.0
 * @category Models
 */
export type ApiComponent = Tool.ApiComponent

/**
 * The user message of a run: text and resources, or the results of
 * client-side tools.
 *
 * @since 0.1.0
 * @category Models
 */
export interface InputMessage {
  readonly role: "user"
  readonly content: ReadonlyArray<Types.TextContent | Types.ResourceContent | Types.ToolResultContent>
  readonly additionalContext?: Record<string, unknown>
  readonly metadata?: Record<string, unknown>
}

/**
 * The body of a run request.
 *
 * @since 0.1.0
 * @category Models
 */
export interface RunRequest {
  readonly message: InputMessage
  readonly previousRunId?: string
  readonly tools?: ReadonlyArray<ApiTool>
  readonly availableComponents?: ReadonlyArray<ApiComponent>
  readonly toolChoice?: Types.ToolChoice
  readonly threadMetadata?: Record<string, unknown>
  /** Messages that open the thread `createRun` creates (not sent on an existing thread). @since 0.2.0 */
  readonly initialMessages?: ReadonlyArray<Types.InitialInputMessage>
  /**
   * The AG-UI agent state of the run's thread (`TamboThread.state`), given
   * to a transport that reads the conversation from the store
   * (`conversationFromStore`); the Tambo API has no such field.
   *
   * @since 0.2.0
   */
  readonly agentState?: unknown
  /**
   * The run's thread as the store holds it when the request is made (the
   * conversation, the new message last), given to a transport that reads
   * the conversation from the store (`conversationFromStore`): a new
   * thread's first request sends its messages under the ids every later
   * request sends them.
   *
   * @since 0.2.0
   */
  readonly conversation?: ReadonlyArray<Types.TamboThreadMessage>
  readonly runMetadata?: Record<string, unknown>
  readonly model?: string
  readonly maxTokens?: number
  readonly temperature?: number
}

/**
 * Callbacks of a run request. `onOpen` receives the ids the response headers
 * carry (`X-Thread-Id`, `X-Run-Id`) before any event: a run cancelled before
 * its `RUN_STARTED` can still be cancelled on the server.
 *
 * @since 0.1.0
 * @category Models
 */
export interface RunHooks {
  readonly onOpen?: (ids: { readonly threadId: string | undefined; readonly runId: string | undefined }) => void
  /**
   * Called once per request, before it is sent, with an effect that aborts
   * it: the stream then ends at once, even while it waits for bytes. The
   * caller keeps it and runs it to cancel (no fiber watches for it, so it
   * costs nothing while the run streams). A caller that cancelled already
   * fails here instead, and the request is not sent.
   *
   * @since 0.1.0
   */
  readonly registerAbort?: (abort: Effect.Effect<void>) => Effect.Effect<void, TamboError>
  /**
   * Runs before the request is aborted because its stream ended before the
   * response's end (interrupted, its reader stopped, a failure): the caller
   * tells the server first, which then records why the run ended rather than
   * a closed connection.
   *
   * @since 0.1.0
   */
  readonly beforeAbort?: Effect.Effect<void>
  /**
   * Whether the run has all it waits for from this response (it saw
   * `RUN_FINISHED`): the rest of the body is then waited for at most a
   * second, and a server that keeps the stream open past it is hung up on.
   *
   * @since 0.2.0
   */
  readonly finished?: () => boolean
  /**
   * The parent of the request's span, when the caller traces the run with a
   * span it does not put in the stream's context.
   */
  readonly span?: Tracer.AnySpan
}

/**
 * A decoded event of a run stream.
 *
 * @since 0.1.0
 * @category Models
 */
export type RunStreamEvent = Events.TamboEvent | Events.UnknownEvent

/**
 * Paging of a list call.
 *
 * @since 0.1.0
 * @category Models
 */
export interface PageParams {
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

/**
 * @since 0.1.0
 * @category Models
 */
export type ThreadSummary = Api.ThreadSummary
/**
 * The name the API made and stored for a thread (`generateThreadName`), and
 * when the thread changed with it, as the API answered: the store takes both,
 * as it takes a rename's.
 *
 * @since 0.2.0
 * @category Models
 */
export interface GeneratedName {
  readonly name: string
  readonly updatedAt?: string | undefined
}
/**
 * @since 0.1.0
 * @category Models
 */
export type ThreadWithMessages = Api.ThreadWithMessages
/**
 * @since 0.1.0
 * @category Models
 */
export type ThreadList = Api.ThreadList
/**
 * @since 0.1.0
 * @category Models
 */
export type MessageList = Api.MessageList
/**
 * @since 0.1.0
 * @category Models
 */
export type Suggestion = Api.Suggestion
/**
 * @since 0.1.0
 * @category Models
 */
export type ApiMessage = Api.Message

/**
 * A change of a component's state: the whole state, or JSON Patch
 * operations applied to the state the server holds.
 *
 * @since 0.2.0
 * @category Models
 */
export type ComponentStateUpdate =
  | { readonly state: Record<string, unknown>; readonly patch?: undefined }
  | { readonly patch: ReadonlyArray<Events.JsonPatchOperation>; readonly state?: undefined }

/**
 * An access token obtained by exchanging a user token.
 *
 * @since 0.1.0
 * @category Models
 */
export interface AccessToken {
  readonly token: Redacted.Redacted<string>
  readonly expiresInSeconds: number
}

/**
 * @since 0.1.0
 * @category Context
 */
export class TamboTransport extends Context.Tag("@tambo-effect/core/TamboTransport")<
  TamboTransport,
  TamboTransport.Service
>() {}

/**
 * @since 0.1.0
 */
export declare namespace TamboTransport {
  /**
   * @since 0.1.0
   * @category Models
   */
  export interface Service {
    /**
     * Creates a thread and runs on it. Chunks of the stream follow the
     * network's, each followed by an empty one (see {@link decodeSse}).
     */
    readonly createRun: (
      credentials: Credentials,
      request: RunRequest,
      hooks?: RunHooks
    ) => Stream.Stream<RunStreamEvent, TamboError>
    /** Runs on an existing thread; also how tool results continue a paused run. */
    readonly runOnThread: (
      credentials: Credentials,
      threadId: string,
      request: RunRequest,
      hooks?: RunHooks
    ) => Stream.Stream<RunStreamEvent, TamboError>
    readonly cancelRun: (credentials: Credentials, threadId: string, runId: string) => Effect.Effect<void, TamboError>
    /**
     * Whether `runOnThread` reads the conversation from the `ThreadStore`
     * (an AG-UI agent keeps no thread): the run then has what it recorded
     * (the user's message, tool results) published to the store before each
     * request. Default: false.
     *
     * @since 0.2.0
     */
    readonly conversationFromStore?: boolean | undefined
    /**
     * Whether the run pauses for the client's tools by itself: the server (an
     * AG-UI agent) sends no `tambo.run.awaiting_input` and ends each run with
     * the calls it made. At each `RUN_FINISHED` the run then puts one just
     * before it, for the calls of the client's tools that the request started
     * and the thread, as recorded, holds unanswered, with the arguments the
     * thread shows. Default: false.
     *
     * @since 0.2.0
     */
    readonly pausesForClientTools?: boolean | undefined
    readonly listThreads: (credentials: Credentials, params?: PageParams) => Effect.Effect<ThreadList, TamboError>
    readonly retrieveThread: (
      credentials: Credentials,
      threadId: string
    ) => Effect.Effect<ThreadWithMessages, TamboError>
    readonly createThread: (
      credentials: Credentials,
      params?: { readonly metadata?: Record<string, unknown> }
    ) => Effect.Effect<ThreadSummary, TamboError>
    readonly updateThread: (
      credentials: Credentials,
      threadId: string,
      patch: { readonly name?: string; readonly metadata?: Record<string, unknown> }
    ) => Effect.Effect<ThreadSummary, TamboError>
    readonly deleteThread: (credentials: Credentials, threadId: string) => Effect.Effect<void, TamboError>
    readonly listMessages: (
      credentials: Credentials,
      threadId: string,
      params?: PageParams & { readonly order?: "asc" | "desc" }
    ) => Effect.Effect<MessageList, TamboError>
    readonly listSuggestions: (
      credentials: Credentials,
      threadId: string,
      messageId: string
    ) => Effect.Effect<ReadonlyArray<Suggestion>, TamboError>
    readonly generateSuggestions: (
      credentials: Credentials,
      threadId: string,
      messageId: string,
      params?: { readonly maxSuggestions?: number; readonly availableComponents?: ReadonlyArray<ApiComponent> }
    ) => Effect.Effect<ReadonlyArray<Suggestion>, TamboError>
    /**
     * Asks the API to name a thread; the name it stored, with the time the
     * thread changed at (none when the API made no name).
     *
     * @since 0.1.0
     */
    readonly generateThreadName: (
      credentials: Credentials,
      threadId: string
    ) => Effect.Effect<Option.Option<GeneratedName>, TamboError>
    /**
     * Replaces (`state`) or patches (`patch`, RFC 6902) the state of a
     * component block; resolves with its new state. The API refuses it while
     * a run is active on the thread.
     *
     * @since 0.2.0
     */
    readonly updateComponentState: (
      credentials: Credentials,
      threadId: string,
      componentId: string,
      update: ComponentStateUpdate
    ) => Effect.Effect<Record<string, unknown>, TamboError>
    readonly getMcpToken: (
      credentials: Credentials,
      params: { readonly contextKey?: string; readonly threadId?: string }
    ) => Effect.Effect<{ readonly token: Option.Option<Redacted.Redacted<string>>; readonly expiresAt: Option.Option<number> }, TamboError>
    /** RFC 8693 token exchange of a user token for an access token. */
    readonly exchangeToken: (subjectToken: Redacted.Redacted<string>) => Effect.Effect<AccessToken, AuthError | TamboError>
  }
}

/**
 * Builds the transport from a configuration and an `HttpClient`.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make: Effect.Effect<TamboTransport.Service, never, TamboConfig | HttpClient.HttpClient> = internal.make

/**
 * Decodes an SSE byte stream into run events, one output chunk per input
 * chunk that completes at least one event (so downstream work is batched by
 * network reads).
 *
 * Each chunk of events is followed by an empty chunk. A channel holds the
 * last chunk it wrote until it writes another, so without it the events a
 * consumer has already handled would stay reachable for as long as the stream
 * waits for its next bytes: with many runs streaming at once, that is long
 * enough for the collector to copy them to the old generation.
 *
 * @since 0.1.0
 * @category Decoding
 */
export const decodeSse = <E>(
  bytes: Stream.Stream<Uint8Array, E>,
  options?: {
    /** The largest event, in characters of its data; a larger one fails the stream. Default 16 MiB. */
    readonly maxFrameBytes?: number | undefined
  }
): Stream.Stream<RunStreamEvent, E | DecodeError | TransportError> => RunStream.decodeSse(bytes, options?.maxFrameBytes)

/**
 * The transport, given a configuration and an `HttpClient`.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer: Layer.Layer<TamboTransport, never, TamboConfig | HttpClient.HttpClient> = Layer.effect(
  TamboTransport,
  make
)

