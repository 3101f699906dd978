// What the Auth tests build a userToken service from: a configuration and a transport whose only
// working call is the token exchange (each test scripts that exchange its own way).
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as TamboConfig from "../../src/TamboConfig.js"
import { TamboTransport } from "../../src/TamboTransport.js"

/** A configuration with `identity` and nothing reachable behind it. */
export const config = (identity: { readonly userKey?: string; readonly userToken?: string }) =>
  Layer.succeed(TamboConfig.TamboConfig, {
    apiKey: Redacted.make("api-key"),
    baseUrl: "http://127.0.0.1:1",
    userKey: Option.fromNullable(identity.userKey),
    userToken: Option.map(Option.fromNullable(identity.userToken), Redacted.make),
    maxRetries: 0,
    requestTimeout: Duration.seconds(5),
    firstByteTimeout: Duration.seconds(5),
    idleTimeout: Duration.seconds(5),
    maxFrameBytes: 1024 * 1024,
    maxRetryAfter: Duration.seconds(5)
  })

const unused = (name: string) => () => Effect.dieMessage(`${name} is not part of this test`)

/** A transport whose only working call is the token exchange. */
export const transport = (exchangeToken: TamboTransport.Service["exchangeToken"]) =>
  Layer.succeed(
    TamboTransport,
    TamboTransport.of({
      createRun: () => Stream.dieMessage("createRun is not part of this test"),
      runOnThread: () => Stream.dieMessage("runOnThread is not part of this test"),
      cancelRun: unused("cancelRun"),
      listThreads: unused("listThreads"),
      retrieveThread: unused("retrieveThread"),
      createThread: unused("createThread"),
      updateThread: unused("updateThread"),
      deleteThread: unused("deleteThread"),
      listMessages: unused("listMessages"),
      listSuggestions: unused("listSuggestions"),
      generateSuggestions: unused("generateSuggestions"),
      generateThreadName: unused("generateThreadName"),
      updateComponentState: unused("updateComponentState"),
      getMcpToken: unused("getMcpToken"),
      exchangeToken
    })
  )
