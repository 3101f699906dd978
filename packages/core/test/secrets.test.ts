// No secret in any error, at any depth: the API key, the access token, the subject token.
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { HostileServer } from "@tambo-effect/testing"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as util from "node:util"
import * as TamboConfig from "../src/TamboConfig.js"
import * as Transport from "../src/TamboTransport.js"
import { closedPort } from "./helpers.js"

const apiKey = "sk-api-SECRET-0001"
const accessToken = "at-SECRET-0002"
const subjectToken = "st-SECRET-0003"
const bearer: Transport.Credentials = { _tag: "Bearer", token: Redacted.make(accessToken) }
const hello: Transport.RunRequest = { message: { role: "user", content: [{ type: "text", text: "hello" }] } }

const expectNoSecret = (error: unknown) => {
  const cause = Cause.fail(error)
  for (
    const text of [
      util.inspect(error, { depth: 20, showHidden: true }),
      JSON.stringify(error),
      util.inspect(cause, { depth: 20, showHidden: true }),
      JSON.stringify(cause),
      Cause.pretty(cause)
    ]
  ) {
    for (const secret of [apiKey, accessToken, subjectToken]) expect(text).not.toContain(secret)
  }
}

/** The failures of a run, a REST call and a token exchange against `url`. */
const failuresAt = (url: string) =>
  Effect.gen(function* () {
    const transport = yield* Transport.TamboTransport
    return [
      yield* Effect.flip(Stream.runDrain(transport.createRun(bearer, hello))),
      yield* Effect.flip(transport.listThreads(bearer)),
      yield* Effect.flip(transport.exchangeToken(Redacted.make(subjectToken)))
    ] as const
  }).pipe(
    Effect.provide(
      Transport.layer.pipe(
        Layer.provide(TamboConfig.layer({ apiKey, tamboUrl: url, maxRetries: 0 })),
        Layer.provide(FetchHttpClient.layer)
      )
    )
  )

describe("no secret in any error", () => {
  it.live("connection refused", () =>
    Effect.gen(function* () {
      const port = yield* closedPort
      const errors = yield* failuresAt(`http://127.0.0.1:${port}`)
      expect(errors.map((e) => e._tag)).toEqual(["TransportError", "TransportError", "TransportError"])
      errors.forEach(expectNoSecret)
    }))

  it.scopedLive.each([
    ["connection reset", () => HostileServer.reset(), "TransportError"],
    ["a 500 with a body", () => HostileServer.status(500, { headers: { "content-type": "application/json" }, body: "{\"message\":\"boom\"}" }), undefined],
    ["a redirect to another origin", () => HostileServer.redirect(307, "http://127.0.0.1:1/v1/x"), "TransportError"],
    ["a stream that breaks", () => HostileServer.raw(["HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n5\r\ndata:"]), undefined]
  ] as const)("%s", ([, fault, tag]) =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(fault())
      const errors = yield* failuresAt(server.url)
      if (tag !== undefined) expect(errors.map((e) => e._tag)).toEqual([tag, tag, tag])
      errors.forEach(expectNoSecret)
      // The server did get them: they were there to leak.
      expect(server.requests.some((r) => r.headers["x-api-key"] === apiKey)).toBe(true)
    }))
})

describe("no password of the tamboUrl in any error", () => {
  it.scopedLive("a tamboUrl with user info: fetch refuses it, and no error shows the password", () =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.status(500))
      const password = "pw-SECRET-0004"
      const errors = yield* failuresAt(server.url.replace("http://", `http://someone:${password}@`))
      expect(errors.map((e) => e._tag)).toEqual(["TransportError", "TransportError", "TransportError"])
      for (const error of errors) {
        const cause = Cause.fail(error)
        for (
          const text of [
            error.message,
            util.inspect(error, { depth: 20, showHidden: true }),
            JSON.stringify(error),
            Cause.pretty(cause)
          ]
        ) expect(text).not.toContain(password)
      }
    }))
})

describe("no token of an answer the SDK cannot read in any error", () => {
  it.scopedLive.each([
    ["the token exchange answers the token as plain text", "text/plain", accessToken],
    ["the token exchange answers the token in an object", "application/json", JSON.stringify({ access_token: { value: accessToken }, expires_in: 60, token_type: "Bearer" })],
    ["the MCP token comes as an object", "application/json", JSON.stringify({ mcpAccessToken: { value: accessToken } })]
  ] as const)("%s: a DecodeError that does not show it", ([name, type, body]) =>
    Effect.gen(function* () {
      const server = yield* HostileServer.scoped
      server.respond(HostileServer.status(200, { headers: { "content-type": type }, body }))
      const error = yield* Effect.flip(Effect.flatMap(Transport.TamboTransport, (transport) =>
        name.startsWith("the MCP")
          ? Effect.asVoid(transport.getMcpToken(bearer, {}))
          : Effect.asVoid(transport.exchangeToken(Redacted.make(subjectToken)))).pipe(
          Effect.provide(
            Transport.layer.pipe(
              Layer.provide(TamboConfig.layer({ apiKey, tamboUrl: server.url, maxRetries: 0 })),
              Layer.provide(FetchHttpClient.layer)
            )
          )
        ))
      expect(error).toMatchObject({ _tag: "DecodeError", reason: "InvalidResponse" })
      expectNoSecret(error)
    }))
})
