/**
 * The `TamboTransport` service, wired from its parts: the typescript-sdk
 * client (sdk.ts) and the REST calls through it (rest.ts), retried by the
 * configuration's policy; the run streams through `HttpClient`
 * (runs.ts, runStream.ts over sse.ts); the calls about threads (threads.ts),
 * suggestions and names (suggestions.ts) and tokens (tokens.ts).
 *
 * @internal
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Effect from "effect/Effect"
import { TamboConfig } from "../../TamboConfig.js"
import type { TamboError } from "../../TamboError.js"
import type { TamboTransport } from "../../TamboTransport.js"
import { isRetryable, retrySchedule, withinRetryAfter } from "../http/retryPolicy.js"
import type * as RunStream from "./runStream.js"
import * as Rest from "./rest.js"
import * as Runs from "./runs.js"
import { makeSdk } from "./sdk.js"
import * as Suggestions from "./suggestions.js"
import * as Threads from "./threads.js"
import * as Tokens from "./tokens.js"

/** Builds the transport from a configuration and an `HttpClient`. */
export const make: Effect.Effect<TamboTransport.Service, never, TamboConfig | HttpClient.HttpClient> = Effect.gen(
  function*() {
    const config = yield* TamboConfig
    const httpClient = yield* HttpClient.HttpClient
    const sdk = makeSdk(config)
    const schedule = retrySchedule(config.maxRetries)
    const inBounds = withinRetryAfter(config.maxRetryAfter)
    const retryable = (error: TamboError) => isRetryable(error) && inBounds(error)
    const rest = Rest.make(config.baseUrl, schedule, retryable)
    const runDeps: RunStream.Deps = { config, client: httpClient.pipe(HttpClient.withScope), schedule, retryable }
    return {
      ...Runs.make(runDeps, sdk, rest),
      ...Threads.make(sdk, rest),
      ...Suggestions.make(sdk, rest),
      ...Tokens.make(sdk, rest)
    }
  }
)
