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
import * as HttpClient from "@effect/platform/HttpClient"
import TamboAI from "@tambo-ai/typescript-sdk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import type * as Events from "./Events.js"
import * as Api from "./internal/apiSchemas.js"
import { errorFromStatus } from "./internal/apiError.js"
import { describeConnectionFailure, displayUrl } from "./internal/connectionFailure.js"
import { redirectError, RedirectRefused, sameOriginFetch } from "./internal/redirects.js"
import { parseRetryAfter } from "./internal/retryAfter.js"
import { isRetryable, retrySchedule, withinRetryAfter } from "./internal/retryPolicy.js"
import * as RunStream from "./internal/runStream.js"
import { safeCause } from "./internal/safeCause.js"
import { TamboConfig } from "./TamboConfig.js"
import { type ApiError, AuthError, DecodeError, type TamboError, TransportError } from "./TamboError.js"
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
    readonly generateThreadName: (
      credentials: Credentials,
      threadId: string
    ) => Effect.Effect<Option.Option<string>, TamboError>
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

// ---------------------------------------------------------------------------
// REST through the typescript-sdk

const refusedRedirectIn = (cause: unknown): RedirectRefused | undefined => {
  for (let current = cause, depth = 0; typeof current === "object" && current !== null && depth < 8; depth++) {
    if (current instanceof RedirectRefused) return current
    current = (current as { readonly cause?: unknown }).cause
  }
  return undefined
}

const mapSdkError = (method: string, url: string, now: number) => (cause: unknown): TamboError => {
  if (cause instanceof TamboAI.APIConnectionTimeoutError) {
    const shown = displayUrl(url)
    return new TransportError({ reason: "Timeout", message: `request timed out at ${shown}`, method, url: shown, cause: safeCause(cause) })
  }
  const refused = refusedRedirectIn(cause)
  if (refused !== undefined) return redirectError(refused, method, url)
  if (cause instanceof TamboAI.APIConnectionError) {
    // The SDK's own message is only "Connection error.": what failed is in its cause.
    const failure = describeConnectionFailure(cause, url)
    return new TransportError({ reason: failure.reason, message: failure.message, method, url: failure.url, cause: safeCause(cause) })
  }
  if (cause instanceof TamboAI.APIError && typeof cause.status === "number") {
    const retryAfter = parseRetryAfter(cause.headers?.get("retry-after"), now)
    return errorFromStatus(cause.status, cause.error, { method, url, retryAfter })
  }
  const safe = safeCause(cause)
  return new TransportError({
    reason: "Protocol",
    message: safe instanceof Error ? safe.message : String(safe),
    method,
    url: displayUrl(url),
    cause: safe
  })
}

/**
 * Builds the transport from a configuration and an `HttpClient`.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make: Effect.Effect<TamboTransport.Service, never, TamboConfig | HttpClient.HttpClient> = Effect.gen(
  function* () {
    const config = yield* TamboConfig
    const httpClient = yield* HttpClient.HttpClient
    const sdk = new TamboAI({
      apiKey: Redacted.value(config.apiKey),
      baseURL: config.baseUrl,
      maxRetries: 0,
      timeout: Duration.toMillis(config.requestTimeout),
      // No credential is sent to another origin: redirects are followed only on the API's own.
      fetch: sameOriginFetch()
    })
    const schedule = retrySchedule(config.maxRetries)
    const inBounds = withinRetryAfter(config.maxRetryAfter)
    const retryableRest = (error: TamboError) => isRetryable(error) && inBounds(error)

    const userKeyOf = (credentials: Credentials) => credentials._tag === "UserKey" ? credentials.userKey : undefined
    const headersOf = (credentials: Credentials): Record<string, string> =>
      credentials._tag === "Bearer" ? { authorization: `Bearer ${Redacted.value(credentials.token)}` } : {}

    /** One REST call: abortable, timed by the SDK, decoded, spanned. */
    const rest = <S extends Schema.Schema.AnyNoContext>(
      name: string,
      method: string,
      path: string,
      schema: S,
      call: (options: { signal: AbortSignal }) => PromiseLike<unknown>,
      idempotent: boolean
    ): Effect.Effect<Schema.Schema.Type<S>, TamboError> => {
      const url = `${config.baseUrl}${path}`
      const attempt = Effect.tryPromise({
        try: (signal) => call({ signal }),
        catch: (cause) => cause
      }).pipe(
        // The clock is read only on failure: an HTTP-date Retry-After is relative to it.
        Effect.catchAll((cause) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(mapSdkError(method, url, now)(cause)))
        ),
        Effect.flatMap((body) =>
          Schema.decodeUnknown(schema)(body).pipe(
            Effect.mapError((error) =>
              new DecodeError({ reason: "InvalidResponse", message: `${name}: ${error.message}` })
            )
          )
        )
      )
      const retried = idempotent ? Effect.retry(attempt, { schedule, while: retryableRest }) : attempt
      // The thread (and run) a call is about, from its path: traces are searched by them.
      const ids = /^\/(?:v1\/)?threads\/([^/]+)(?:\/runs\/([^/]+))?/.exec(path)
      return retried.pipe(
        Effect.withSpan(`TamboTransport.${name}`, {
          attributes: {
            "http.method": method,
            "url.path": path,
            ...(ids?.[1] === undefined ? {} : { "tambo.thread_id": ids[1] }),
            ...(ids?.[2] === undefined ? {} : { "tambo.run_id": ids[2] })
          }
        })
      )
    }

    const options = (credentials: Credentials, signal: AbortSignal) => ({ signal, headers: headersOf(credentials) })
    const Void = Schema.Unknown

    // -------------------------------------------------------------------------
    // run streams through HttpClient (see internal/runStream.ts)

    const runDeps: RunStream.Deps = {
      config,
      client: httpClient.pipe(HttpClient.withScope),
      schedule,
      retryable: retryableRest
    }

    const runBody = (request: RunRequest): Record<string, unknown> => {
      const body: Record<string, unknown> = { message: request.message }
      if (request.previousRunId !== undefined) body.previousRunId = request.previousRunId
      if (request.tools !== undefined && request.tools.length > 0) body.tools = request.tools
      if (request.availableComponents !== undefined && request.availableComponents.length > 0) {
        body.availableComponents = request.availableComponents
      }
      if (request.toolChoice !== undefined) body.toolChoice = request.toolChoice
      if (request.runMetadata !== undefined) body.runMetadata = request.runMetadata
      if (request.model !== undefined) body.model = request.model
      if (request.maxTokens !== undefined) body.maxTokens = request.maxTokens
      if (request.temperature !== undefined) body.temperature = request.temperature
      return body
    }

    const encode = encodeURIComponent

    return TamboTransport.of({
      createRun: (credentials, request, hooks) => {
        const body = runBody(request)
        const userKey = userKeyOf(credentials)
        const thread: Record<string, unknown> = {}
        if (userKey !== undefined) thread.userKey = userKey
        if (request.threadMetadata !== undefined) thread.metadata = request.threadMetadata
        if (request.initialMessages !== undefined && request.initialMessages.length > 0) {
          thread.initialMessages = request.initialMessages
        }
        if (Object.keys(thread).length > 0) body.thread = thread
        return RunStream.openRun(runDeps, headersOf(credentials), "/v1/threads/runs", body, undefined, hooks)
      },
      runOnThread: (credentials, threadId, request, hooks) => {
        const body = runBody(request)
        const userKey = userKeyOf(credentials)
        if (userKey !== undefined) body.userKey = userKey
        return RunStream.openRun(runDeps, headersOf(credentials), `/v1/threads/${encode(threadId)}/runs`, body, threadId, hooks)
      },
      cancelRun: (credentials, threadId, runId) =>
        Effect.asVoid(
          rest(
            "cancelRun",
            "DELETE",
            `/v1/threads/${threadId}/runs/${runId}`,
            Void,
            ({ signal }) =>
              sdk.threads.runs.delete(runId, withUserKey({ threadId }, credentials), options(credentials, signal)),
            false
          )
        ),
      listThreads: (credentials, params = {}) =>
        rest(
          "listThreads",
          "GET",
          "/v1/threads",
          Api.ThreadList,
          ({ signal }) =>
            sdk.threads.list(
              withUserKey(definedOnly({ cursor: params.cursor, limit: params.limit }), credentials),
              options(credentials, signal)
            ),
          true
        ),
      retrieveThread: (credentials, threadId) =>
        rest(
          "retrieveThread",
          "GET",
          `/v1/threads/${threadId}`,
          Api.ThreadWithMessages,
          ({ signal }) => sdk.threads.retrieve(threadId, withUserKey({}, credentials), options(credentials, signal)),
          true
        ),
      createThread: (credentials, params = {}) =>
        rest(
          "createThread",
          "POST",
          "/v1/threads",
          Api.ThreadSummary,
          ({ signal }) =>
            sdk.threads.create(
              withUserKey(definedOnly({ metadata: params.metadata }), credentials),
              options(credentials, signal)
            ),
          false
        ),
      updateThread: (credentials, threadId, patch) =>
        rest(
          "updateThread",
          "PATCH",
          `/v1/threads/${threadId}`,
          Api.ThreadSummary,
          ({ signal }) =>
            sdk.threads.update(
              threadId,
              withUserKey(definedOnly({ name: patch.name, metadata: patch.metadata }), credentials),
              options(credentials, signal)
            ),
          true
        ),
      deleteThread: (credentials, threadId) =>
        Effect.asVoid(
          rest(
            "deleteThread",
            "DELETE",
            `/v1/threads/${threadId}`,
            Void,
            ({ signal }) => sdk.threads.delete(threadId, withUserKey({}, credentials), options(credentials, signal)),
            true
          )
        ),
      listMessages: (credentials, threadId, params = {}) =>
        rest(
          "listMessages",
          "GET",
          `/v1/threads/${threadId}/messages`,
          Api.MessageList,
          ({ signal }) =>
            sdk.threads.messages.list(
              threadId,
              withUserKey(definedOnly({ cursor: params.cursor, limit: params.limit, order: params.order }), credentials),
              options(credentials, signal)
            ),
          true
        ),
      listSuggestions: (credentials, threadId, messageId) =>
        Effect.map(
          rest(
            "listSuggestions",
            "GET",
            `/v1/threads/${threadId}/messages/${messageId}/suggestions`,
            Api.SuggestionList,
            ({ signal }) =>
              sdk.threads.suggestions.list(messageId, withUserKey({ threadId }, credentials), options(credentials, signal)),
            true
          ),
          (response) => response.suggestions
        ),
      generateSuggestions: (credentials, threadId, messageId, params = {}) =>
        Effect.map(
          rest(
            "generateSuggestions",
            "POST",
            `/v1/threads/${threadId}/messages/${messageId}/suggestions`,
            Api.SuggestionList,
            ({ signal }) =>
              sdk.threads.suggestions.create(
                messageId,
                withUserKey(
                  {
                    threadId,
                    ...(params.maxSuggestions === undefined ? {} : { maxSuggestions: params.maxSuggestions }),
                    ...(params.availableComponents === undefined
                      ? {}
                      : { availableComponents: [...params.availableComponents] })
                  },
                  credentials
                ),
                options(credentials, signal)
              ),
            false
          ),
          (response) => response.suggestions
        ),
      updateComponentState: (credentials, threadId, componentId, update) =>
        Effect.map(
          rest(
            "updateComponentState",
            "POST",
            `/v1/threads/${threadId}/components/${componentId}/state`,
            Api.ComponentStateResponse,
            ({ signal }) =>
              sdk.threads.state.updateState(
                componentId,
                withUserKey(
                  update.patch === undefined
                    ? { threadId, state: update.state }
                    : { threadId, patch: update.patch.map((operation) => ({ ...operation })) },
                  credentials
                ),
                options(credentials, signal)
              ),
            // A replacement sent twice leaves the same state; a patch may not.
            update.patch === undefined
          ),
          (response) => response.state
        ),
      generateThreadName: (credentials, threadId) =>
        Effect.map(
          rest(
            "generateThreadName",
            "POST",
            `/threads/${threadId}/generate-name`,
            Api.GenerateNameResponse,
            ({ signal }) =>
              sdk.beta.threads.generateName(
                threadId,
                credentials._tag === "UserKey" ? { contextKey: credentials.userKey } : {},
                options(credentials, signal)
              ),
            false
          ),
          (response) => Option.fromNullable(response.name)
        ),
      getMcpToken: (credentials, params) =>
        Effect.map(
          rest(
            "getMcpToken",
            "POST",
            "/auth/mcp/access-token",
            Api.McpToken,
            ({ signal }) =>
              sdk.beta.auth.getMcpToken(
                definedOnly({ contextKey: params.contextKey, threadId: params.threadId }),
                options(credentials, signal)
              ),
            false
          ),
          (response) => ({
            token: Option.map(Option.fromNullable(response.mcpAccessToken), Redacted.make),
            expiresAt: Option.fromNullable(response.expiresAt)
          })
        ),
      exchangeToken: (subjectToken) =>
        rest(
          "exchangeToken",
          "POST",
          "/oauth/token",
          Api.TokenExchange,
          ({ signal }) =>
            sdk.beta.auth.getToken({
              grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
              subject_token: Redacted.value(subjectToken),
              subject_token_type: "urn:ietf:params:oauth:token-type:access_token"
            }, { signal }),
          false
        ).pipe(
          Effect.map((response): AccessToken => ({
            token: Redacted.make(response.access_token),
            expiresInSeconds: response.expires_in
          })),
          Effect.catchIf(
            (error): error is ApiError => error._tag === "ApiError",
            (error) =>
              Effect.fail(
                new AuthError({
                  reason: "ExchangeFailed",
                  message: `Token exchange failed: ${error.message}`,
                  ...(error.status === undefined ? {} : { status: error.status })
                })
              )
          )
        )
    })
  }
)

const withUserKey = <A extends object>(params: A, credentials: Credentials): A & { userKey?: string } =>
  credentials._tag === "UserKey" ? { ...params, userKey: credentials.userKey } : params

/** Drops undefined fields: the SDK would otherwise send `key=undefined`-like noise. */
const definedOnly = <A extends Record<string, unknown>>(params: A): { [K in keyof A]?: Exclude<A[K], undefined> } => {
  const out: Record<string, unknown> = {}
  for (const key in params) {
    if (params[key] !== undefined) out[key] = params[key]
  }
  return out as { [K in keyof A]?: Exclude<A[K], undefined> }
}

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

