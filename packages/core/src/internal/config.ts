/**
 * The checks behind `TamboConfig`: options validated into a configuration
 * with their defaults (every problem a `ConfigError` that names the option),
 * and the options read from `TAMBO_*` environment variables.
 *
 * @internal
 */
import * as Config from "effect/Config"
import type * as ConfigErrorModule from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { Environment, Options, Resolved } from "../TamboConfig.js"
import { ConfigError } from "../TamboError.js"
import { displayUrl } from "./http/connectionFailure.js"

/** The default limit of one event of a run stream: 16 MiB. */
const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024

const toRedacted = (value: string | Redacted.Redacted<string>): Redacted.Redacted<string> =>
  Redacted.isRedacted(value) ? value : Redacted.make(value)

/** Whether `value` is a usable key: the types ask for one, but JavaScript callers and env reads may not give it. */
const isKey = (value: unknown): boolean => {
  const key = Redacted.isRedacted(value) ? Redacted.value(value) : value
  return typeof key === "string" && key.length > 0
}

const missingApiKey = (name: string) =>
  new ConfigError({ reason: "MissingApiKey", message: `${name} is missing or empty: an API key is required` })

/**
 * The longest a timer waits: Effect's clock never fires a longer sleep (nor does `setTimeout`), so a
 * timeout or a wait bounded by a longer duration would wait forever.
 */
const LONGEST_TIMER_MILLIS = 2 ** 31 - 1

/**
 * Why `input`, given as the option `name`, is not a positive duration a timer can wait (at most
 * 2^31 − 1 ms, about 24.8 days), or the duration. `infinite`: also `Infinity`, a bound never
 * reached (Effect's clock never fires it). @internal
 */
export const checkDuration = (
  name: string,
  input: unknown,
  { infinite = false }: { readonly infinite?: boolean } = {}
): Either.Either<Duration.Duration, string> => {
  const duration = Option.filter(Duration.decodeUnknown(input), (d) => Duration.greaterThan(d, Duration.zero))
  if (Option.isNone(duration)) return Either.left(`${name} must be a positive duration, got ${String(input)}`)
  if (Duration.toMillis(duration.value) <= LONGEST_TIMER_MILLIS) return Either.right(duration.value)
  if (infinite && !Duration.isFinite(duration.value)) return Either.right(duration.value)
  return Either.left(
    `${name} must be at most ${LONGEST_TIMER_MILLIS} ms (about 24.8 days, the longest a timer waits)${
      infinite ? " or Infinity" : ""
    }, got ${Duration.format(duration.value)}`
  )
}

/**
 * A positive duration a timer can wait (at most 2^31 − 1 ms, about 24.8 days), or a `ConfigError`
 * (`InvalidOption`) that names the option. @internal
 */
export const positiveDuration = (
  name: string,
  input: Duration.DurationInput | undefined,
  fallback: Duration.Duration
): Effect.Effect<Duration.Duration, ConfigError> =>
  input === undefined
    ? Effect.succeed(fallback)
    : Either.match(checkDuration(name, input), {
      onLeft: (message) => Effect.fail(new ConfigError({ reason: "InvalidOption", message })),
      onRight: Effect.succeed
    })

/** Fails when options that exclude each other are both given. */
const checkExclusive = (options: Options): Effect.Effect<void, ConfigError> => {
  if (options.tamboUrl !== undefined && options.environment !== undefined) {
    return Effect.fail(
      new ConfigError({ reason: "ConflictingUrl", message: "Give either tamboUrl or environment, not both" })
    )
  }
  if (options.userKey !== undefined && options.userToken !== undefined) {
    return Effect.fail(
      new ConfigError({ reason: "ConflictingIdentity", message: "Give either userKey or userToken, not both" })
    )
  }
  return Effect.void
}

/** The base URL without a trailing slash: `tamboUrl`, else the environment's (production by default). */
const baseUrlOf = (
  options: Options,
  environments: Readonly<Record<Environment, string>>
): Effect.Effect<string, ConfigError> => {
  const rawUrl = options.tamboUrl ?? environments[options.environment ?? "production"]
  return Effect.try({
    try: () => new URL(rawUrl).toString().replace(/\/+$/, ""),
    catch: () => notAUrl(rawUrl)
  })
}

/** A URL that does not parse, shown without what may be a password or a token in it. */
const notAUrl = (rawUrl: string): ConfigError =>
  new ConfigError({ reason: "InvalidUrl", message: `Not a URL: ${displayUrl(rawUrl)}` })

/** `maxFrameBytes`, a positive integer, or a `ConfigError` (`InvalidOption`). @internal */
export const positiveFrameBytes = (maxFrameBytes: number): Effect.Effect<number, ConfigError> =>
  Number.isInteger(maxFrameBytes) && maxFrameBytes > 0
    ? Effect.succeed(maxFrameBytes)
    : Effect.fail(
      new ConfigError({ reason: "InvalidOption", message: `maxFrameBytes must be a positive integer, got ${String(maxFrameBytes)}` })
    )

/**
 * `maxRetries`, a whole number of retries from 0 (2 by default), or a `ConfigError` (`InvalidOption`):
 * taken as given, `Infinity` would retry forever and a negative number or NaN would silently never retry.
 * @internal
 */
export const retryCount = (maxRetries: number | undefined): Effect.Effect<number, ConfigError> =>
  maxRetries === undefined
    ? Effect.succeed(2)
    : Number.isSafeInteger(maxRetries) && maxRetries >= 0
    ? Effect.succeed(maxRetries)
    : Effect.fail(
      new ConfigError({ reason: "InvalidOption", message: `maxRetries must be a whole number from 0, got ${String(maxRetries)}` })
    )

/** The run stream's bounds, each checked and defaulted. */
const streamBoundsOf = (options: Options) =>
  Effect.gen(function* () {
    const firstByteTimeout = yield* positiveDuration("firstByteTimeout", options.firstByteTimeout, Duration.seconds(60))
    const idleTimeout = yield* positiveDuration("idleTimeout", options.idleTimeout, Duration.seconds(120))
    const maxRetryAfter = yield* positiveDuration("maxRetryAfter", options.maxRetryAfter, Duration.seconds(60))
    const maxFrameBytes = yield* positiveFrameBytes(options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES)
    return { firstByteTimeout, idleTimeout, maxRetryAfter, maxFrameBytes }
  })

/** Options validated into a configuration; `environments` names the hosted base URLs. */
export const make = (
  options: Options,
  environments: Readonly<Record<Environment, string>>
): Effect.Effect<Resolved, ConfigError> =>
  Effect.gen(function* () {
    if (!isKey(options.apiKey)) return yield* missingApiKey("The apiKey option")
    const apiKey = toRedacted(options.apiKey)
    yield* checkExclusive(options)
    const baseUrl = yield* baseUrlOf(options, environments)
    const { firstByteTimeout, idleTimeout, maxFrameBytes, maxRetryAfter } = yield* streamBoundsOf(options)
    const maxRetries = yield* retryCount(options.maxRetries)
    const requestTimeout = yield* positiveDuration("requestTimeout", options.requestTimeout, Duration.seconds(60))
    return {
      apiKey,
      baseUrl,
      userKey: Option.fromNullable(options.userKey),
      userToken: Option.map(Option.fromNullable(options.userToken), toRedacted),
      maxRetries,
      requestTimeout,
      firstByteTimeout,
      idleTimeout,
      maxFrameBytes,
      maxRetryAfter,
      ...(options.deferTokenExchange === true ? { deferTokenExchange: true } : {})
    }
  })

/** The options `TAMBO_*` environment variables give; a missing or empty `TAMBO_API_KEY` is a `ConfigError`. */
export const optionsFromEnv: Effect.Effect<Options, ConfigError | ConfigErrorModule.ConfigError> = Effect.gen(
  function* () {
    const apiKey = yield* Config.option(Config.redacted("TAMBO_API_KEY"))
    if (Option.isNone(apiKey) || !isKey(apiKey.value)) return yield* missingApiKey("TAMBO_API_KEY")
    const tamboUrl = yield* Config.option(Config.string("TAMBO_URL"))
    const environment = yield* Config.option(Config.literal("production", "staging")("TAMBO_ENVIRONMENT"))
    const userKey = yield* Config.option(Config.string("TAMBO_USER_KEY"))
    const userToken = yield* Config.option(Config.redacted("TAMBO_USER_TOKEN"))
    const firstByteTimeout = yield* Config.option(Config.integer("TAMBO_FIRST_BYTE_TIMEOUT"))
    const idleTimeout = yield* Config.option(Config.integer("TAMBO_IDLE_TIMEOUT"))
    const maxFrameBytes = yield* Config.option(Config.integer("TAMBO_MAX_FRAME_BYTES"))
    const requestTimeout = yield* Config.option(Config.integer("TAMBO_REQUEST_TIMEOUT"))
    return {
      requestTimeout: Option.getOrUndefined(requestTimeout),
      firstByteTimeout: Option.getOrUndefined(firstByteTimeout),
      idleTimeout: Option.getOrUndefined(idleTimeout),
      maxFrameBytes: Option.getOrUndefined(maxFrameBytes),
      apiKey: apiKey.value,
      tamboUrl: Option.getOrUndefined(tamboUrl),
      environment: Option.getOrUndefined(environment),
      userKey: Option.getOrUndefined(userKey),
      userToken: Option.getOrUndefined(userToken)
    }
  }
)
