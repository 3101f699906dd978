/**
 * Where the Tambo API is and who is calling it.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { ConfigError } from "./TamboError.js"

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
  /** Retries of idempotent reads and of run requests that failed before their first event. Default 2. */
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
   * is not retried. Default 60 seconds.
   */
  readonly maxRetryAfter?: Duration.DurationInput | undefined
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
}

/**
 * @since 0.1.0
 * @category Context
 */
export class TamboConfig extends Context.Tag("@tambo-effect/core/TamboConfig")<TamboConfig, Resolved>() {}

const toRedacted = (value: string | Redacted.Redacted<string>): Redacted.Redacted<string> =>
  Redacted.isRedacted(value) ? value : Redacted.make(value)

/** Whether `value` is a usable key: the types ask for one, but JavaScript callers and env reads may not give it. */
const isKey = (value: unknown): boolean => {
  const key = Redacted.isRedacted(value) ? Redacted.value(value) : value
  return typeof key === "string" && key.length > 0
}

const missingApiKey = (name: string) =>
  new ConfigError({ reason: "MissingApiKey", message: `${name} is missing or empty: an API key is required` })

/** A positive duration, or a `ConfigError` (`InvalidOption`) that names the option. */
const positiveDuration = (
  name: string,
  input: Duration.DurationInput | undefined,
  fallback: Duration.Duration
): Effect.Effect<Duration.Duration, ConfigError> => {
  if (input === undefined) return Effect.succeed(fallback)
  const duration = Option.filter(Duration.decodeUnknown(input), (d) => Duration.greaterThan(d, Duration.zero))
  return Option.isSome(duration)
    ? Effect.succeed(duration.value)
    : Effect.fail(
      new ConfigError({ reason: "InvalidOption", message: `${name} must be a positive duration, got ${String(input)}` })
    )
}

/** The default limit of one event of a run stream: 16 MiB. */
const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024

/**
 * Validates options into a configuration. A missing, empty or non-string
 * `apiKey` is a `ConfigError` (`MissingApiKey`) that names the option; a
 * timeout or limit that is not positive is one (`InvalidOption`) too.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (options: Options): Effect.Effect<Resolved, ConfigError> =>
  Effect.gen(function* () {
    if (!isKey(options.apiKey)) return yield* missingApiKey("The apiKey option")
    const apiKey = toRedacted(options.apiKey)
    if (options.tamboUrl !== undefined && options.environment !== undefined) {
      return yield* new ConfigError({
        reason: "ConflictingUrl",
        message: "Give either tamboUrl or environment, not both"
      })
    }
    if (options.userKey !== undefined && options.userToken !== undefined) {
      return yield* new ConfigError({
        reason: "ConflictingIdentity",
        message: "Give either userKey or userToken, not both"
      })
    }
    const rawUrl = options.tamboUrl ?? environments[options.environment ?? "production"]
    const baseUrl = yield* Effect.try({
      try: () => new URL(rawUrl).toString().replace(/\/+$/, ""),
      catch: () => new ConfigError({ reason: "InvalidUrl", message: `Not a URL: ${rawUrl}` })
    })
    const firstByteTimeout = yield* positiveDuration("firstByteTimeout", options.firstByteTimeout, Duration.seconds(60))
    const idleTimeout = yield* positiveDuration("idleTimeout", options.idleTimeout, Duration.seconds(120))
    const maxRetryAfter = yield* positiveDuration("maxRetryAfter", options.maxRetryAfter, Duration.seconds(60))
    const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES
    if (!Number.isInteger(maxFrameBytes) || maxFrameBytes <= 0) {
      return yield* new ConfigError({
        reason: "InvalidOption",
        message: `maxFrameBytes must be a positive integer, got ${String(maxFrameBytes)}`
      })
    }
    return {
      apiKey,
      baseUrl,
      userKey: Option.fromNullable(options.userKey),
      userToken: Option.map(Option.fromNullable(options.userToken), toRedacted),
      maxRetries: options.maxRetries ?? 2,
      requestTimeout: Duration.decode(options.requestTimeout ?? Duration.seconds(60)),
      firstByteTimeout,
      idleTimeout,
      maxFrameBytes,
      maxRetryAfter
    }
  })

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
 * `TAMBO_USER_KEY` and `TAMBO_USER_TOKEN`, and the stream's bounds from
 * `TAMBO_FIRST_BYTE_TIMEOUT` and `TAMBO_IDLE_TIMEOUT` (milliseconds) and
 * `TAMBO_MAX_FRAME_BYTES`. A missing or empty `TAMBO_API_KEY` is a
 * `ConfigError` (`MissingApiKey`) that names it.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerConfig: Layer.Layer<TamboConfig, ConfigError | import("effect/ConfigError").ConfigError> =
  Layer.effect(
    TamboConfig,
    Effect.gen(function* () {
      const apiKey = yield* Config.option(Config.redacted("TAMBO_API_KEY"))
      if (Option.isNone(apiKey) || !isKey(apiKey.value)) return yield* missingApiKey("TAMBO_API_KEY")
      const tamboUrl = yield* Config.option(Config.string("TAMBO_URL"))
      const environment = yield* Config.option(Config.literal("production", "staging")("TAMBO_ENVIRONMENT"))
      const userKey = yield* Config.option(Config.string("TAMBO_USER_KEY"))
      const userToken = yield* Config.option(Config.redacted("TAMBO_USER_TOKEN"))
      const firstByteTimeout = yield* Config.option(Config.integer("TAMBO_FIRST_BYTE_TIMEOUT"))
      const idleTimeout = yield* Config.option(Config.integer("TAMBO_IDLE_TIMEOUT"))
      const maxFrameBytes = yield* Config.option(Config.integer("TAMBO_MAX_FRAME_BYTES"))
      return yield* make({
        firstByteTimeout: Option.getOrUndefined(firstByteTimeout),
        idleTimeout: Option.getOrUndefined(idleTimeout),
        maxFrameBytes: Option.getOrUndefined(maxFrameBytes),
        apiKey: apiKey.value,
        tamboUrl: Option.getOrUndefined(tamboUrl),
        environment: Option.getOrUndefined(environment),
        userKey: Option.getOrUndefined(userKey),
        userToken: Option.getOrUndefined(userToken)
      })
    })
  )
