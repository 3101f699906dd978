import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
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
})
