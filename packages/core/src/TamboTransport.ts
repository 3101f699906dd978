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
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import TamboAI from "@tambo-ai/typescript-sdk"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import * as Events from "./Events.js"
import * as Api from "./internal/apiSchemas.js"
import { describeConnectionFailure, displayUrl, hasConnectionCode } from "./internal/connectionFailure.js"
import { decideRedirect, isRedirect, type RedirectDecision, RedirectRefused, sameOriginFetch } from "./internal/redirects.js"
import { errorFromStatus } from "./internal/apiError.js"
import { parseRetryAfter } from "./internal/retryAfter.js"
import { safeCause } from "./internal/safeCause.js"
import { makeSseDecoder } from "./internal/sse.js"
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
    readonly getMcpToken: (
      credentials: Credentials,
      params: { readonly contextKey?: string; readonly threadId?: string }
    ) => Effect.Effect<{ readonly token: Option.Option<Redacted.Redacted<string>>; readonly expiresAt: Option.Option<number> }, TamboError>
    /** RFC 8693 token exchange of a user token for an access token. */
    readonly exchangeToken: (subjectToken: Redacted.Redacted<string>) => Effect.Effect<AccessToken, AuthError | TamboError>
  }
}

// ---------------------------------------------------------------------------
// errors

const isRetryable = (error: TamboError): boolean =>
  (error._tag === "ApiError" && error.retryable) ||
  (error._tag === "TransportError" && (error.reason === "Connect" || error.reason === "Timeout"))

/** Runs `effect` with the fetch client (if it is the one) told not to follow redirects. */
const manualRedirects = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(
    Effect.serviceOption(FetchHttpClient.RequestInit),
    (init) => Effect.provideService(effect, FetchHttpClient.RequestInit, { ...Option.getOrUndefined(init), redirect: "manual" })
  )

/** Timeouts of our own: a server that let one pass is not asked again. */
const ownTimeouts = new WeakSet<TamboError>()

const isRetryableRun = (error: TamboError): boolean => isRetryable(error) && !ownTimeouts.has(error)

const retryAfterOf = (error: TamboError): number | undefined =>
  error._tag === "ApiError" ? error.retryAfter : undefined

/**
 * Backoff, or the server's `Retry-After` when it asks for longer. An answer
 * asking for more than `maxRetryAfter` is not retried (see `withinRetryAfter`).
 */
const retrySchedule = (maxRetries: number): Schedule.Schedule<unknown, TamboError> =>
  Schedule.exponential(Duration.millis(200), 2).pipe(
    Schedule.jittered,
    Schedule.intersect(Schedule.recurs(maxRetries)),
    Schedule.intersect(Schedule.identity<TamboError>()),
    Schedule.modifyDelay(([, error], delay) => {
      const after = retryAfterOf(error)
      return after === undefined ? delay : Duration.max(delay, Duration.millis(after))
    })
  )

const withinRetryAfter = (maxRetryAfter: Duration.Duration) => {
  const max = Duration.toMillis(maxRetryAfter)
  return (error: TamboError): boolean => (retryAfterOf(error) ?? 0) <= max
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

const redirectError = (
  refused: RedirectRefused | Extract<RedirectDecision, { _tag: "Refuse" }>,
  method: string,
  url: string
): TransportError => {
  const decision = refused instanceof RedirectRefused ? refused.decision : refused
  return new TransportError({
    reason: "Redirect",
    message: decision.message,
    method,
    url: displayUrl(url),
    status: decision.status,
    ...(decision.location === undefined ? {} : { location: decision.location })
  })
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
    const retryableRun = (error: TamboError) => isRetryableRun(error) && inBounds(error)

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
    // run streams through HttpClient

    const client = httpClient.pipe(HttpClient.withScope)

    const openRun = (
      credentials: Credentials,
      path: string,
      body: Record<string, unknown>,
      threadId: string | undefined,
      hooks: RunHooks | undefined
    ): Stream.Stream<RunStreamEvent, TamboError> => {
      const url = `${config.baseUrl}${path}`
      const shownUrl = displayUrl(url)
      const request = HttpClientRequest.post(url).pipe(
        HttpClientRequest.setHeaders({
          "x-api-key": Redacted.value(config.apiKey),
          accept: "text/event-stream",
          ...headersOf(credentials)
        }),
        HttpClientRequest.bodyUnsafeJson(body)
      )
      // The first-byte deadline runs from the last attempt's start; a retry's wait is not in it.
      let openedAt = 0
      const firstByteTimeout = (): TransportError => {
        const error = new TransportError({
          reason: "Timeout",
          message: `No response within firstByteTimeout (${Duration.toMillis(config.firstByteTimeout)} ms) from ${shownUrl}`,
          method: "POST",
          url: shownUrl
        })
        ownTimeouts.add(error)
        return error
      }
      // Sent with redirects left to us (a fetch client would follow them to any origin, and
      // fails a 307 with a body): same-origin 307/308 are sent again, the others refused.
      const send = (
        request: HttpClientRequest.HttpClientRequest,
        hops: number
      ): Effect.Effect<HttpClientResponse.HttpClientResponse, TamboError, Scope.Scope> =>
        manualRedirects(client.execute(request)).pipe(
          Effect.mapError((error) => {
            // The platform's message is only "Transport error (...)": what failed is in its cause.
            if (error._tag !== "RequestError" || error.reason !== "Transport") {
              return new TransportError({ reason: "Connect", message: error.message, method: "POST", url, cause: safeCause(error) })
            }
            const failure = describeConnectionFailure(error, url)
            return new TransportError({ reason: failure.reason, message: failure.message, method: "POST", url: failure.url, cause: safeCause(error) })
          }),
          Effect.flatMap((response) => {
            if (!isRedirect(response.status) && response.status !== 0) return Effect.succeed(response)
            const decision = decideRedirect(response.status, response.headers["location"], request.url, "POST", hops)
            return decision._tag === "Follow"
              ? send(HttpClientRequest.setUrl(request, decision.url), hops + 1)
              : Effect.fail(redirectError(decision, "POST", url))
          })
        )
      const attempt: Effect.Effect<HttpClientResponse.HttpClientResponse, TamboError, Scope.Scope> = Effect.zipRight(
        Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => openedAt = now)),
        send(request, 0).pipe(
          Effect.flatMap((response) =>
            response.status >= 200 && response.status < 300
              ? Effect.sync(() => {
                if (hooks?.onOpen !== undefined) {
                  // Each read of `headers` converts the response's headers anew.
                  const headers = response.headers
                  hooks.onOpen({ threadId: headers["x-thread-id"], runId: headers["x-run-id"] })
                }
                return response
              })
              : response.json.pipe(
                Effect.orElseSucceed(() => undefined),
                Effect.zip(Clock.currentTimeMillis),
                Effect.flatMap(([errorBody, now]) =>
                  Effect.fail(errorFromStatus(response.status, errorBody, {
                    method: "POST",
                    url,
                    threadId,
                    retryAfter: parseRetryAfter(response.headers["retry-after"], now)
                  }))
                )
              )
          ),
          Effect.timeoutFail({ duration: config.firstByteTimeout, onTimeout: firstByteTimeout })
        )
      )
      // A run may be retried only before it produced anything: the status comes first. A server
      // that let our own timeout pass is not asked again (the run may have started there).
      const open = Effect.retry(attempt, { schedule, while: retryableRun })
      const timeouts: ReadTimeouts = {
        finished: hooks?.finished,
        firstEventBy: () => openedAt + Duration.toMillis(config.firstByteTimeout),
        firstByte: firstByteTimeout,
        idle: config.idleTimeout,
        idleTimeout: () =>
          new TransportError({
            reason: "Timeout",
            message: `The run's stream got nothing for idleTimeout (${Duration.toMillis(config.idleTimeout)} ms) from ${shownUrl}`,
            method: "POST",
            url: shownUrl
          })
      }
      const broke = (error: { readonly message: string }) =>
        new TransportError({
          reason: "Disconnected",
          // undici says only "terminated"; a system error's code under it says why.
          message: `The run's stream broke: ${
            hasConnectionCode(error) ? describeConnectionFailure(error, url).message : error.message
          }`,
          method: "POST",
          url,
          cause: safeCause(error)
        })
      // The request lives in a scope of its own, which closing aborts (HttpClient.withScope):
      // the stream closes it with its exit, and the caller may close it sooner (registerAbort).
      // A body read to its end has nothing left to abort: its scope, whose finalizers would
      // only abort the finished request (which builds an error object and signals the fetch's
      // own controller: about a tenth of the transport's CPU time in 100 short concurrent runs)
      // and let go of an ended reader, is dropped unclosed.
      return Stream.fromChannel(Channel.unwrap(Effect.map(Scope.make(), (requestScope) => {
        let ended = false
        const end = () => {
          ended = true
        }
        return Channel.ensuringWith(
          Channel.unwrap(Effect.gen(function* () {
            if (hooks?.registerAbort !== undefined) yield* hooks.registerAbort(Scope.close(requestScope, Exit.void))
            // The body's reader is let go after the request is aborted (finalizers run last added,
            // first run): a read waiting for bytes fails as the connection's end, not as a body's.
            let release: Effect.Effect<void> = Effect.void
            yield* Scope.addFinalizer(requestScope, Effect.suspend(() => release))
            // The request in its own scope, with the step's span as its parent.
            const span = hooks?.span
            const scoped = Scope.extend(open, requestScope)
            const response = yield* (span === undefined ? scoped : Effect.withParentSpan(scoped, span))
            const body = webBodyOf(response)
            if (body === undefined) {
              // Any other HttpClient: each read is bounded by the idle timeout.
              const bytes = response.stream.pipe(
                Stream.mapError(broke),
                Stream.timeoutFail(timeouts.idleTimeout, config.idleTimeout)
              )
              return Stream.toChannel(decodeSse(bytes, { maxFrameBytes: config.maxFrameBytes }).pipe(
                Stream.onEnd(Effect.sync(end))
              ))
            }
            const decoded = decodeSseBody(
              body,
              (cause) => broke(cause instanceof Error ? cause : { message: String(cause) }),
              end,
              config.maxFrameBytes,
              timeouts
            )
            release = decoded.release
            return Stream.toChannel(decoded.events)
          })),
          (exit) =>
            ended
              ? Effect.void
              : hooks?.beforeAbort === undefined
              ? Scope.close(requestScope, exit)
              : Effect.zipRight(hooks.beforeAbort, Scope.close(requestScope, exit))
        )
      })))
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
        if (Object.keys(thread).length > 0) body.thread = thread
        return openRun(credentials, "/v1/threads/runs", body, undefined, hooks)
      },
      runOnThread: (credentials, threadId, request, hooks) => {
        const body = runBody(request)
        const userKey = userKeyOf(credentials)
        if (userKey !== undefined) body.userKey = userKey
        return openRun(credentials, `/v1/threads/${encode(threadId)}/runs`, body, threadId, hooks)
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
): Stream.Stream<RunStreamEvent, E | DecodeError | TransportError> =>
  Stream.suspend(() => {
    const decoder = makeEventDecoder(options?.maxFrameBytes)
    // One synchronous step per network chunk, written as a plain read loop: an effectful
    // mapping stage (`mapChunksEffect`) here made the events of every chunk outlive their
    // young generation, doubling the collector's work on a long run.
    const loop: Channel.Channel<
      Chunk.Chunk<RunStreamEvent>,
      Chunk.Chunk<Uint8Array>,
      E | DecodeError,
      E,
      unknown,
      unknown
    > = Channel.readWithCause({
      onInput: (chunk: Chunk.Chunk<Uint8Array>) => {
        for (const piece of chunk) decoder.push(piece)
        return decoder.emit(loop)
      },
      onFailure: Channel.failCause,
      onDone: () => Channel.suspend(decoder.end)
    })
    return Stream.fromChannel(Channel.pipeTo(Stream.toChannel(bytes), loop))
  })

/**
 * The web `ReadableStream` under a response from a fetch-based `HttpClient`,
 * if it has one: read directly, a run's events are decoded in the same stage
 * that reads the bytes. `@effect/platform`'s fetch client keeps the web
 * `Response` as `source`; that field is not part of the `HttpClientResponse`
 * interface, so it is checked for what it is, and any other response goes
 * through its byte stream.
 */
const webBodyOf = (response: HttpClientResponse.HttpClientResponse): ReadableStream<Uint8Array> | undefined => {
  const source: unknown = (response as { readonly source?: unknown }).source
  return typeof Response === "function" && source instanceof Response && source.body !== null
    ? source.body
    : undefined
}

/**
 * How long each read of a run's body may wait: until the first event, what is
 * left of the first-byte timeout; after it, the idle timeout, per network read.
 */
interface ReadTimeouts {
  /** Whether the run has all it waits for: the rest of the body gets `lingerMillis`. */
  readonly finished: (() => boolean) | undefined
  /** When the first event is due (Clock milliseconds). */
  readonly firstEventBy: () => number
  readonly firstByte: () => TransportError
  readonly idle: Duration.Duration
  readonly idleTimeout: () => TransportError
}

/** How long a body is read once its run finished: the API ends it right after `RUN_FINISHED`. */
const lingerMillis = 1_000

const lingeredTooLong = (): TransportError =>
  new TransportError({
    reason: "Timeout",
    message: "The server kept the run's stream open after RUN_FINISHED"
  })

/**
 * Decodes a web byte stream into run events in one stage: each read is
 * decoded as it arrives, with no byte stream in between. `onEnd` is called
 * once the body has ended. `release` cancels the reader unless the body
 * ended: the caller runs it when it is done with the events, however that
 * happens.
 */
const decodeSseBody = <E>(
  body: ReadableStream<Uint8Array>,
  onError: (cause: unknown) => E,
  onEnd: () => void,
  maxFrameBytes: number,
  timeouts: ReadTimeouts
): {
  readonly events: Stream.Stream<RunStreamEvent, E | DecodeError | TransportError>
  readonly release: Effect.Effect<void>
} => {
  const decoder = makeEventDecoder(maxFrameBytes)
  const reader = body.getReader()
  let ended = false
  let sawEvent = false
  // A plain timer per read, on real time (Effect.timeoutFail races a fiber per read: see the
  // bench notes).
  const readWithin = (millis: number, onTimeout: () => TransportError) =>
    Effect.async<ReadableStreamReadResult<Uint8Array>, E | TransportError>((resume) => {
      const timer = setTimeout(() => resume(Effect.fail(onTimeout())), millis)
      reader.read().then(
        (result) => {
          clearTimeout(timer)
          resume(Effect.succeed(result))
        },
        (cause) => {
          clearTimeout(timer)
          resume(Effect.fail(onError(cause)))
        }
      )
      return Effect.sync(() => clearTimeout(timer))
    })
  const idleMillis = Duration.toMillis(timeouts.idle)
  const idleRead = readWithin(idleMillis, timeouts.idleTimeout)
  const lingerRead = readWithin(lingerMillis, lingeredTooLong)
  const firstRead = Effect.flatMap(
    Clock.currentTimeMillis,
    (now) => readWithin(Math.max(0, timeouts.firstEventBy() - now), timeouts.firstByte)
  )
  const loop: Channel.Channel<
    Chunk.Chunk<RunStreamEvent>,
    unknown,
    E | DecodeError | TransportError,
    unknown,
    void,
    unknown
  > = Channel.flatMap(Channel.fromEffect(Effect.suspend(() =>
    !sawEvent ? firstRead : timeouts.finished?.() === true ? lingerRead : idleRead
  )), (result) => {
    if (result.done) {
      ended = true
      onEnd()
      return Channel.suspend(decoder.end)
    }
    decoder.push(result.value)
    if (!sawEvent) sawEvent = decoder.hasEvents()
    return decoder.emit(loop)
  })
  return {
    events: Stream.fromChannel(loop),
    release: Effect.suspend(() => ended ? Effect.void : Effect.promise(() => reader.cancel().catch(() => undefined)))
  }
}

/** An empty chunk, written after each chunk of events (see `decodeSse`). */
const writeEmpty = Channel.write(Chunk.empty<never>())

/**
 * The decoding shared by both readers: bytes in, events out per network
 * chunk, the first undecodable frame failing the stream after what came
 * before it.
 */
const makeEventDecoder = (maxFrameBytes = 16 * 1024 * 1024) => {
  const decoder = makeSseDecoder({ maxFrameLength: maxFrameBytes })
  let failure: DecodeError | undefined
  // A fresh array per network chunk, handed on as is. Made at its first event, not when the
  // previous chunk is handed on: an array that waits for the network outlives young
  // collections, and V8 then allocates every array of this site old, where each one keeps
  // its young events alive through every young collection until the next full one.
  let out: Array<RunStreamEvent> | undefined
  const onData = (data: string) => {
    if (failure !== undefined) return
    const decoded = Events.decodeFrame(data)
    if (decoded._tag === "Left") failure = decoded.left
    else if (out === undefined) out = [decoded.right]
    else out.push(decoded.right)
  }
  return {
    /** Whether the reads so far completed an event not yet emitted. */
    hasEvents: () => out !== undefined,
    push: (bytes: Uint8Array) => {
      // A frame over the limit fails the stream before it fills memory: the decoder let go of it.
      if (!decoder.push(bytes, onData) && failure === undefined) {
        failure = new DecodeError({
          reason: "FrameTooLarge",
          message: `An event of the run's stream is larger than maxFrameBytes (${maxFrameBytes}); it begins ${
            JSON.stringify(decoder.overLimitPrefix())
          }`
        })
      }
    },
    /** Writes what the last chunks completed, then goes on with `next` (or fails). */
    emit: <In, E, InE>(
      next: Channel.Channel<Chunk.Chunk<RunStreamEvent>, In, E | DecodeError, InE, unknown, unknown>
    ): Channel.Channel<Chunk.Chunk<RunStreamEvent>, In, E | DecodeError, InE, unknown, unknown> => {
      const events = out
      out = undefined
      if (failure !== undefined) {
        // Deliver what decoded before the bad frame, then fail.
        const error = failure
        return events !== undefined
          ? Channel.zipRight(Channel.write(Chunk.unsafeFromArray(events)), Channel.fail(error))
          : Channel.fail(error)
      }
      // The empty chunk lets go of the events before the next read (see decodeSse).
      return events !== undefined
        ? Channel.zipRight(Channel.write(Chunk.unsafeFromArray(events)), Channel.zipRight(writeEmpty, next))
        : next
    },
    end: (): Channel.Channel<Chunk.Chunk<RunStreamEvent>, unknown, DecodeError> => {
      const { pending } = decoder.end()
      if (pending === undefined) return Channel.void
      // A final event without its blank line: decode it rather than lose it.
      const decoded = Events.decodeFrame(pending)
      return decoded._tag === "Left" ? Channel.fail(decoded.left) : Channel.write(Chunk.of(decoded.right))
    }
  }
}

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

