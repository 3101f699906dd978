/**
 * The opening of a run request: the `POST`, sent with redirects left to us
 * (same-origin 307/308 sent again with the body, the others refused), a
 * status other than 2xx turned into its typed error, each attempt bounded by
 * the first-byte timeout, and retried only while nothing may have reached the server.
 *
 * @internal
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import type { Resolved } from "../../TamboConfig.js"
import { type TamboError, TransportError } from "../../TamboError.js"
import type { RunHooks } from "../../TamboTransport.js"
import { errorFromStatus } from "../http/apiError.js"
import {
  describeConnectionFailure,
  displayUrl,
  failedBeforeSending,
  scrubUrls
} from "../http/connectionFailure.js"
import { decideRedirect, isRedirect, redirectError } from "../http/redirects.js"
import { parseRetryAfter } from "../http/retryAfter.js"
import { safeCause } from "../http/safeCause.js"

/** What run requests share: the configuration, the client and the retry policy. @internal */
export interface Deps {
  readonly config: Resolved
  /** Each request in a scope of its own, which closing aborts (`HttpClient.withScope`). */
  readonly client: HttpClient.HttpClient.With<HttpClientError.HttpClientError, Scope.Scope>
  readonly schedule: Schedule.Schedule<unknown, TamboError>
  /** Whether a failed attempt may be sent again (`retryPolicy.isRetryable`: never one that may have reached the server). */
  readonly retryable: (error: TamboError) => boolean
}

/** Where a run request goes: its URL, and the URL errors show (no query). @internal */
export interface Target {
  readonly url: string
  readonly shownUrl: string
}

/** The target of a request to `path` of the API. @internal */
export const targetOf = (config: Resolved, path: string): Target => {
  const url = `${config.baseUrl}${path}`
  return { url, shownUrl: displayUrl(url) }
}

/** A run request being opened. @internal */
export interface Opening {
  /** Sends the request, retried while the policy allows; the response is 2xx. */
  readonly open: Effect.Effect<HttpClientResponse.HttpClientResponse, TamboError, Scope.Scope>
  /**
   * `open`, ended by `abort` (a Deferred that fails, and that aborts the attempt under way): at
   * once, where a retry's wait or the retry of the aborted attempt would go on.
   */
  readonly openUntil: (
    abort: Deferred.Deferred<never, TamboError>
  ) => Effect.Effect<HttpClientResponse.HttpClientResponse, TamboError, Scope.Scope>
  /** When the first event is due (Clock milliseconds): `firstByteTimeout` after the last attempt's start. */
  readonly firstEventBy: () => number
  /** The error of a first byte that did not come in time. */
  readonly firstByteTimeout: () => TransportError
}


/** Runs `effect` with the fetch client (if it is the one) told not to follow redirects. */
const manualRedirects = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(
    Effect.serviceOption(FetchHttpClient.RequestInit),
    (init) => Effect.provideService(effect, FetchHttpClient.RequestInit, { ...Option.getOrUndefined(init), redirect: "manual" })
  )

/** A failure of the client itself (no response), as a `TransportError` that says what failed. @internal */
export const connectError = (error: HttpClientError.HttpClientError, url: string): TransportError => {
  // The platform's message is only "Transport error (...)": what failed is in its cause.
  if (error._tag !== "RequestError" || error.reason !== "Transport") {
    return new TransportError({
      reason: "Connect",
      message: scrubUrls(error.message),
      method: "POST",
      url: displayUrl(url),
      cause: safeCause(error)
    })
  }
  const failure = describeConnectionFailure(error, url)
  return new TransportError({ reason: failure.reason, message: failure.message, method: "POST", url: failure.url, cause: safeCause(error) })
}

/**
 * A run request's failed connection. Unless it failed before the request went out (refused, no
 * such host), the server may have taken the request, stored its message and started its run
 * (the API has no idempotency key): it says so, and is not sent again (see `opening`). An AG-UI
 * agent's run request likewise (`internal/agui/transport.ts`).
 *
 * @internal
 */
export const runConnectError = (error: HttpClientError.HttpClientError, url: string): TransportError => {
  const failed = connectError(error, url)
  if (error._tag !== "RequestError" || error.reason !== "Transport" || failedBeforeSending(error)) return failed
  return new TransportError({
    reason: failed.reason,
    message: `${failed.message}: the run's request may have reached the server, so it was not sent again`,
    method: "POST",
    url: failed.url,
    mayHaveReachedServer: true,
    cause: failed.cause
  })
}

/**
 * Sends `request` with redirects left to us (a fetch client would follow them to any origin, and
 * fails a 307 with a body): same-origin 307/308 are sent again, the others refused.
 */
const send = (
  client: Deps["client"],
  url: string,
  request: HttpClientRequest.HttpClientRequest,
  hops: number
): Effect.Effect<HttpClientResponse.HttpClientResponse, TamboError, Scope.Scope> =>
  Effect.flatMap(Effect.scope, (scope) =>
    // Each hop in a scope of its own: a redirect's request is let go of (its body unread) before
    // the next hop, and the answer's stays with the request's scope.
    Effect.flatMap(Scope.fork(scope, ExecutionStrategy.sequential), (hop) =>
      Scope.extend(manualRedirects(client.execute(request)), hop).pipe(
        Effect.mapError((error) => runConnectError(error, url)),
        Effect.flatMap((response) => {
          if (!isRedirect(response.status) && response.status !== 0) return Effect.succeed(response)
          const decision = decideRedirect(response.status, response.headers["location"], request.url, "POST", hops)
          return Effect.zipRight(
            Scope.close(hop, Exit.void),
            decision._tag === "Follow"
              ? send(client, url, HttpClientRequest.setUrl(request, decision.url), hops + 1)
              : Effect.fail(redirectError(decision, "POST", url))
          )
        })
      )))

/** A 2xx response, its ids told to `hooks`; any other status fails with its typed error. */
const accepted = (
  response: HttpClientResponse.HttpClientResponse,
  url: string,
  threadId: string | undefined,
  hooks: RunHooks | undefined
): Effect.Effect<HttpClientResponse.HttpClientResponse, TamboError> =>
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

/** Opens the run request `POST target` with `headers` and `body`. @internal */
export const opening = (
  deps: Deps,
  target: Target,
  headers: Record<string, string>,
  body: Record<string, unknown>,
  threadId: string | undefined,
  hooks: RunHooks | undefined
): Opening => {
  const { config } = deps
  const request = HttpClientRequest.post(target.url).pipe(
    HttpClientRequest.setHeaders({
      "x-api-key": Redacted.value(config.apiKey),
      accept: "text/event-stream",
      ...headers
    }),
    HttpClientRequest.bodyUnsafeJson(body)
  )
  // The first-byte deadline runs from the last attempt's start; a retry's wait is not in it.
  let openedAt = 0
  // A server that let it pass may have taken the request: it is not asked again.
  const firstByteTimeout = (): TransportError =>
    new TransportError({
      reason: "Timeout",
      message: `No response within firstByteTimeout (${Duration.toMillis(config.firstByteTimeout)} ms) from ${target.shownUrl}`,
      method: "POST",
      url: target.shownUrl,
      mayHaveReachedServer: true
    })
  const attempt = Effect.zipRight(
    Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => openedAt = now)),
    send(deps.client, target.url, request, 0).pipe(
      Effect.flatMap((response) => accepted(response, target.url, threadId, hooks)),
      Effect.timeoutFail({ duration: config.firstByteTimeout, onTimeout: firstByteTimeout })
    )
  )
  // A run may be retried only before it produced anything: the status comes first. A server
  // that let our own timeout pass, or whose connection broke once the request went out, is not
  // asked again (the run may have started there).
  const retried = (first: Effect.Effect<HttpClientResponse.HttpClientResponse, TamboError, Scope.Scope>) =>
    Effect.retry(first, { schedule: deps.schedule, while: deps.retryable })
  return {
    open: retried(attempt),
    // Only the retries race the abort: the first attempt ends with it, and most runs need no more.
    openUntil: (abort) =>
      Effect.catchAll(attempt, (error) =>
        Effect.flatMap(Deferred.isDone(abort), (aborted) => {
          if (aborted) return Deferred.await(abort)
          if (!deps.retryable(error)) return Effect.fail(error)
          // The schedule judges the first attempt's failure, as `open`'s does.
          let first = true
          const again = Effect.suspend(() => {
            if (!first) return attempt
            first = false
            return Effect.fail(error)
          })
          return Effect.raceFirst(retried(again), Deferred.await(abort))
        })),
    firstEventBy: () => openedAt + Duration.toMillis(config.firstByteTimeout),
    firstByteTimeout
  }
}
