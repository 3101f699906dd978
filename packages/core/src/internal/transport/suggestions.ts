/**
 * What the model generates about a thread on request: suggestions of what
 * the user may say next (listed or generated for a message), and a name for
 * the thread.
 *
 * @internal
 */
import type TamboAI from "@tambo-ai/typescript-sdk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { TamboTransport } from "../../TamboTransport.js"
import * as Api from "../apiSchemas.js"
import { withUserKey } from "./credentials.js"
import { requestOptions, type Rest } from "./rest.js"

/** The suggestion and naming members of the service. */
export type Suggestions = Pick<TamboTransport.Service, "listSuggestions" | "generateSuggestions" | "generateThreadName">

/** The suggestion and naming calls, sent by `sdk` through `rest`. */
export const make = (sdk: TamboAI, rest: Rest): Suggestions => ({
  listSuggestions: (credentials, threadId, messageId) =>
    Effect.map(
      rest({
        name: "listSuggestions",
        method: "GET",
        path: `/v1/threads/${threadId}/messages/${messageId}/suggestions`,
        schema: Api.SuggestionList,
        idempotent: true,
        send: ({ signal }) =>
          sdk.threads.suggestions.list(messageId, withUserKey({ threadId }, credentials), requestOptions(credentials, signal))
      }),
      (response) => response.suggestions
    ),
  generateSuggestions: (credentials, threadId, messageId, params = {}) =>
    Effect.map(
      rest({
        name: "generateSuggestions",
        method: "POST",
        path: `/v1/threads/${threadId}/messages/${messageId}/suggestions`,
        schema: Api.SuggestionList,
        idempotent: false,
        send: ({ signal }) =>
          sdk.threads.suggestions.create(
            messageId,
            withUserKey(
              {
                threadId,
                ...(params.maxSuggestions === undefined ? {} : { maxSuggestions: params.maxSuggestions }),
                ...(params.availableComponents === undefined
                  ? {}
                  : { availableComponents: [...params.availableComponents] })
              },
              credentials
            ),
            requestOptions(credentials, signal)
          )
      }),
      (response) => response.suggestions
    ),
  generateThreadName: (credentials, threadId) =>
    Effect.map(
      rest({
        name: "generateThreadName",
        method: "POST",
        path: `/threads/${threadId}/generate-name`,
        schema: Api.GenerateNameResponse,
        idempotent: false,
        send: ({ signal }) =>
          sdk.beta.threads.generateName(
            threadId,
            credentials._tag === "UserKey" ? { contextKey: credentials.userKey } : {},
            requestOptions(credentials, signal)
          )
      }),
      (response) => Option.fromNullable(response.name)
    )
})
