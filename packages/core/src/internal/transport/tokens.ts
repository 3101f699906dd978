/**
 * The calls that obtain tokens: an MCP access token for Tambo's own MCP
 * server, and the RFC 8693 exchange of a user token for an access token
 * (whose refusal is an `AuthError`, not an `ApiError`).
 *
 * @internal
 */
import type TamboAI from "@tambo-ai/typescript-sdk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { type ApiError, AuthError } from "../../TamboError.js"
import type { AccessToken, TamboTransport } from "../../TamboTransport.js"
import * as Api from "./apiSchemas.js"
import { definedOnly, requestOptions, type Rest } from "./rest.js"

/** The token members of the service. */
export type Tokens = Pick<TamboTransport.Service, "getMcpToken" | "exchangeToken">

/** The token calls, sent by `sdk` through `rest`. */
export const make = (sdk: TamboAI, rest: Rest): Tokens => ({
  getMcpToken: (credentials, params) =>
    Effect.map(
      rest({
        name: "getMcpToken",
        method: "POST",
        path: "/auth/mcp/access-token",
        schema: Api.McpToken,
        idempotent: false,
        holdsSecret: true,
        send: ({ signal }) =>
          sdk.beta.auth.getMcpToken(
            definedOnly({ contextKey: params.contextKey, threadId: params.threadId }),
            requestOptions(credentials, signal)
          )
      }),
      (response) => ({
        token: Option.map(Option.fromNullable(response.mcpAccessToken), Redacted.make),
        expiresAt: Option.fromNullable(response.expiresAt)
      })
    ),
  exchangeToken: (subjectToken) =>
    rest({
      name: "exchangeToken",
      method: "POST",
      path: "/oauth/token",
      schema: Api.TokenExchange,
      idempotent: false,
      holdsSecret: true,
      send: ({ signal }) =>
        sdk.beta.auth.getToken({
          grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
          subject_token: Redacted.value(subjectToken),
          subject_token_type: "urn:ietf:params:oauth:token-type:access_token"
        }, { signal })
    }).pipe(
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
              ...(error.status === undefined ? {} : { status: error.status }),
              ...(error.retryAfter === undefined ? {} : { retryAfter: error.retryAfter })
            })
          )
      )
    )
})
