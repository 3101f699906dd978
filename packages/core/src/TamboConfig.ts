/**
 * Where the Tambo API is and who is calling it.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as internal from "./internal/config.js"
import type { ConfigError } from "./TamboError.js"

/**
 * The hosted Tambo environments.
 *
 * @since 0.1.0
 * @category Models
 */
export const environments = {
  production: "https://api.tambo.co",
  staging: "https://hydra-api-dev.up.railway.app"
} as const

/**
 * @since 0.1.0
 * @category Models
 */
export type Environment = keyof typeof environments

/**
 * What a user passes to configure the SDK. Give at most one of `tamboUrl`
 * and `environment`, and at most one of `userKey` and `userToken`.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  readonly apiKey: string | Redacted.Redacted<string>
  readonly tamboUrl?: string | undefined
  readonly environment?: Environment | undefined
  readonly userKey?: string | undefined
  readonly userToken?: string | Redacted.Redacted<string> | undefined
  /**
   * Retries of idempotent reads and of run requests that failed before their
   * first event with nothing of them on the server (refused, no such host,
   * 429, 502-504): a whole number from 0. Default 2. A run request whose
   * connection broke once it went out (reset, closed, timed out) is not sent
   * again blindly: on a known thread it is sent again, once, only if a read of
   * the thread shows the server did not take its message or tool results (and
   * it did not time out, and `maxRetries` is above 0); on a new conversation
   * the newest threads are listed: one made since, holding the message, is
   * taken as the run's thread (the run fails with the `TransportError`, the
   * store shows that thread); none, and it is sent again, once, on the same
   * terms; several, and it fails with a `TransportError` saying so.
   */
  readonly maxRetries?: number | undefined
  /** Timeout of a REST request (not of a run stream). Default 60 seconds. */
  readonly requestTimeout?: Duration.DurationInput | undefined
  /**
   * How long a run request may wait for its response headers and then its
   * first event (a number is milliseconds). Default 60 seconds.
   */
  readonly firstByteTimeout?: Duration.DurationInput | undefined
  /**
   * How long a run stream may go without receiving any bytes once its first
   * event arrived (a number is milliseconds). Default 120 seconds.
   */
  readonly idleTimeout?: Duration.DurationInput | undefined
  /**
   * The largest event a run stream may send, in characters of its data
   * (bytes, for ASCII JSON). Default 16 MiB.
   */
  readonly maxFrameBytes?: number | undefined
  /**
   * The longest `Retry-After` a retry waits for; an answer asking for longer
   * is not retried. A failed token refresh is tried again after at most this
   * long, whatever the token endpoint asked. Default 60 seconds.
   */
  readonly maxRetryAfter?: Duration.DurationInput | undefined
  /**
   * With a `userToken`: exchange it at the first request that needs it, not
   * as soon as `Auth` starts. For a service that may be built and closed
   * unused (a client a server render makes). Default `false`.
   *
   * @since 0.2.0
   */
  readonly deferTokenExchange?: boolean | undefined
}

/**
 * The validated configuration.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Resolved {
  readonly apiKey: Redacted.Redacted<string>
  /** Base URL without a trailing slash. */
  readonly baseUrl: string
  readonly userKey: Option.Option<string>
  readonly userToken: Option.Option<Redacted.Redacted<string>>
  readonly maxRetries: number
  readonly requestTimeout: Duration.Duration
  readonly firstByteTimeout: Duration.Duration
  readonly idleTimeout: Duration.Duration
  readonly maxFrameBytes: number
  readonly maxRetryAfter: Duration.Duration
  /**
   * The `userToken` is exchanged at the first request that needs it, not as
   * soon as `Auth` starts.
   *
   * @since 0.2.0
   */
  readonly deferTokenExchange?: boolean | undefined
}

/**
 * @since 0.1.0
 * @category Context
 */
export class TamboConfig extends Context.Tag("@tambo-effect/core/TamboConfig")<TamboConfig, Resolved>() {}

/**
 * Validates options into a configuration. A missing, empty or non-string
 * `apiKey` is a `ConfigError` (`MissingApiKey`) that names the option; a
 * timeout or limit that is not positive, a timeout or `maxRetryAfter` longer
 * than a timer can wait (2^31 − 1 ms, about 24.8 days: a longer one would
 * never fire, and wait forever), or a `maxRetries` that is not a whole number
 * from 0, is one (`InvalidOption`) too.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (options: Options): Effect.Effect<Resolved, ConfigError> => internal.make(options, environments)

/**
 * A configuration from options.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer = (options: Options): Layer.Layer<TamboConfig, ConfigError> =>
  Layer.effect(TamboConfig, make(options))

/**
 * A configuration read from `TAMBO_API_KEY`, `TAMBO_URL`, `TAMBO_ENVIRONMENT`,
 * `TAMBO_USER_KEY` and `TAMBO_USER_TOKEN`, the bounds from
 * `TAMBO_REQUEST_TIMEOUT`, `TAMBO_FIRST_BYTE_TIMEOUT` and
 * `TAMBO_IDLE_TIMEOUT` (milliseconds) and `TAMBO_MAX_FRAME_BYTES`. A
 * missing or empty `TAMBO_API_KEY` is a
 * `ConfigError` (`MissingApiKey`) that names it.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerConfig: Layer.Layer<TamboConfig, ConfigError | import("effect/ConfigError").ConfigError> =
  Layer.effect(TamboConfig, Effect.flatMap(internal.optionsFromEnv, make))
