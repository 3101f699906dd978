import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TamboConfig from "../src/TamboConfig.js"

// What a JavaScript caller (or a value read at run time) can pass despite the types.
const untyped = (options: Record<string, unknown>) => options as unknown as TamboConfig.Options

describe("TamboConfig", () => {
  it.effect.each([
    ["no apiKey at all", { userKey: "u" }],
    ["apiKey undefined", { apiKey: undefined, userKey: "u" }],
    ["apiKey null", { apiKey: null, userKey: "u" }],
    ["apiKey not a string", { apiKey: 42, userKey: "u" }],
    ["apiKey empty", { apiKey: "", userKey: "u" }]
  ] as const)("%s is a ConfigError naming apiKey, from make and from layer", ([, options]) =>
    Effect.gen(function* () {
      const fromMake = yield* Effect.flip(TamboConfig.make(untyped(options)))
      expect(fromMake).toMatchObject({ _tag: "ConfigError", reason: "MissingApiKey" })
      expect(fromMake.message).toContain("apiKey")
      const fromLayer = yield* Effect.flip(Layer.build(TamboConfig.layer(untyped(options))).pipe(Effect.scoped))
      expect(fromLayer).toMatchObject({ _tag: "ConfigError", reason: "MissingApiKey" })
    }))

  it.effect("layerConfig without TAMBO_API_KEY is a ConfigError naming the variable", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Layer.build(TamboConfig.layerConfig).pipe(Effect.scoped))
      expect(error).toMatchObject({ _tag: "ConfigError", reason: "MissingApiKey" })
      expect(error.message).toContain("TAMBO_API_KEY")
    }).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["TAMBO_USER_KEY", "u"]])))))

  it.effect("layerConfig with an empty TAMBO_API_KEY is a ConfigError naming the variable", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Layer.build(TamboConfig.layerConfig).pipe(Effect.scoped))
      expect(error).toMatchObject({ _tag: "ConfigError", reason: "MissingApiKey" })
      expect(error.message).toContain("TAMBO_API_KEY")
    }).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["TAMBO_API_KEY", ""]])))))

  it.effect("layerConfig reads the key and the URL", () =>
    Effect.gen(function* () {
      const config = yield* TamboConfig.TamboConfig
      expect(config.baseUrl).toBe("http://127.0.0.1:1")
    }).pipe(
      Effect.provide(TamboConfig.layerConfig),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["TAMBO_API_KEY", "k"], ["TAMBO_URL", "http://127.0.0.1:1"]])))
    ))

  it.effect("the stream's bounds default to 60 s, 120 s, 16 MiB and a 60 s Retry-After, and are read from options and env, as is the request timeout", () =>
    Effect.gen(function* () {
      const defaults = yield* TamboConfig.make({ apiKey: "k" })
      expect([defaults.firstByteTimeout, defaults.idleTimeout, defaults.maxFrameBytes, defaults.maxRetryAfter].map(String))
        .toEqual([String(Duration.seconds(60)), String(Duration.seconds(120)), String(16 * 1024 * 1024), String(Duration.seconds(60))])
      const given = yield* TamboConfig.make({ apiKey: "k", firstByteTimeout: 1500, idleTimeout: "3 seconds", maxFrameBytes: 10, maxRetryAfter: 2000 })
      expect([given.firstByteTimeout, given.idleTimeout, given.maxRetryAfter].map(Duration.toMillis)).toEqual([1500, 3000, 2000])
      expect(given.maxFrameBytes).toBe(10)
      const fromEnv = yield* TamboConfig.TamboConfig.pipe(
        Effect.provide(TamboConfig.layerConfig),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([
          ["TAMBO_API_KEY", "k"],
          ["TAMBO_FIRST_BYTE_TIMEOUT", "1500"],
          ["TAMBO_IDLE_TIMEOUT", "2500"],
          ["TAMBO_MAX_FRAME_BYTES", "4096"],
          ["TAMBO_REQUEST_TIMEOUT", "7000"]
        ])))
      )
      expect([Duration.toMillis(fromEnv.firstByteTimeout), Duration.toMillis(fromEnv.idleTimeout), fromEnv.maxFrameBytes])
        .toEqual([1500, 2500, 4096])
      expect(Duration.toMillis(fromEnv.requestTimeout)).toBe(7000)
    }))

  it.effect.each([
    ["firstByteTimeout", { firstByteTimeout: 0 }],
    ["idleTimeout", { idleTimeout: -5 }],
    ["maxRetryAfter", { maxRetryAfter: "soon" }],
    ["maxFrameBytes", { maxFrameBytes: 0 }],
    ["maxFrameBytes", { maxFrameBytes: 1.5 }]
  ] as const)("%s that is not positive is a ConfigError (InvalidOption) naming it", ([name, options]) =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(TamboConfig.make(untyped({ apiKey: "k", ...options })))
      expect(error).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
      expect(error.message).toContain(name)
    }))

  // Effect's clock never fires a sleep longer than a JavaScript timer can wait: such a bound would wait forever.
  it.effect.each([
    ["maxRetryAfter", { maxRetryAfter: "30 days" }],
    ["maxRetryAfter", { maxRetryAfter: Duration.infinity }],
    ["requestTimeout", { requestTimeout: "30 days" }],
    ["firstByteTimeout", { firstByteTimeout: 2 ** 31 }],
    ["idleTimeout", { idleTimeout: Duration.infinity }]
  ] as const)("a %s longer than a timer can wait is a ConfigError (InvalidOption) naming it and its bound", ([name, options]) =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(TamboConfig.make(untyped({ apiKey: "k", ...options })))
      expect(error).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
      expect(error.message).toContain(name)
      expect(error.message).toContain("2147483647 ms")
    }))

  it.effect.each([
    ["requestTimeout", { requestTimeout: 0 }],
    ["requestTimeout", { requestTimeout: "soon" }]
  ] as const)("a %s that is not a positive duration is a ConfigError (InvalidOption), not a defect", ([name, options]) =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(TamboConfig.make(untyped({ apiKey: "k", ...options })))
      expect(error).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
      expect(error.message).toContain(name)
    }))

  it.effect("the longest bound a timer can wait is taken", () =>
    Effect.gen(function* () {
      const config = yield* TamboConfig.make({ apiKey: "k", maxRetryAfter: 2 ** 31 - 1, requestTimeout: "1 day" })
      expect([Duration.toMillis(config.maxRetryAfter), Duration.toMillis(config.requestTimeout)]).toEqual([2 ** 31 - 1, 86_400_000])
    }))

  it.effect.each([Infinity, -1, Number.NaN, 1.5])(
    "a maxRetries of %s (retrying forever, or silently never) is a ConfigError (InvalidOption) naming it, from make and the layer",
    (maxRetries) =>
      Effect.gen(function* () {
        const fromMake = yield* Effect.flip(TamboConfig.make({ apiKey: "k", maxRetries }))
        expect(fromMake).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
        expect(fromMake.message).toContain("maxRetries")
        const fromLayer = yield* Effect.flip(Layer.build(TamboConfig.layer({ apiKey: "k", maxRetries })).pipe(Effect.scoped))
        expect(fromLayer).toMatchObject({ _tag: "ConfigError", reason: "InvalidOption" })
      })
  )

  it.effect("a maxRetries of 0 is no retry, and none is 2", () =>
    Effect.gen(function* () {
      expect((yield* TamboConfig.make({ apiKey: "k", maxRetries: 0 })).maxRetries).toBe(0)
      expect((yield* TamboConfig.make({ apiKey: "k" })).maxRetries).toBe(2)
    }))

  it.effect("a tamboUrl that is not a URL is a ConfigError (InvalidUrl) that shows neither its password nor its query", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(TamboConfig.make({ apiKey: "k", tamboUrl: "http://user:PASSWORD@host:99999/api?token=TOKEN" }))
      expect(error).toMatchObject({ _tag: "ConfigError", reason: "InvalidUrl" })
      expect(error.message).toContain("http://host:99999/api")
      expect(error.message).not.toMatch(/PASSWORD|TOKEN/)
    }))
})
