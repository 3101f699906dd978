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
import * as Api from "./apiSchemas.js"
import { withUserKey } from "./credentials.js"
import { type Call, requestOptions, type Rest } from "./rest.js"

/** The suggestion and naming members of the service. */
export type Suggestions = Pick<TamboTransport.Service, "listSuggestions" | "generateSuggestions" | "generateThreadName">

/** A call on a message's suggestions: listed or generated, the same path and response. */
const onSuggestions = (
  rest: Rest,
  threadId: string,
  messageId: string,
  call: Pick<Call<typeof Api.SuggestionList>, "name" | "method" | "idempotent" | "send">
) =>
  Effect.map(
    rest({ ...call, path: `/v1/threads/${threadId}/messages/${messageId}/suggestions`, schema: Api.SuggestionList }),
    (response) => response.suggestions
  )

/** The suggestion and naming calls, sent by `sdk` through `rest`. */
export const make = (sdk: TamboAI, rest: Rest): Suggestions => ({
  listSuggestions: (credentials, threadId, messageId) =>
    onSuggestions(rest, threadId, messageId, {
      name: "listSuggestions",
      method: "GET",
      idempotent: true,
      send: ({ signal }) =>
        sdk.threads.suggestions.list(messageId, withUserKey({ threadId }, credentials), requestOptions(credentials, signal))
    }),
  generateSuggestions: (credentials, threadId, messageId, params = {}) =>
    onSuggestions(rest, threadId, messageId, {
      name: "generateSuggestions",
      method: "POST",
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
      (response) => Option.map(Option.fromNullable(response.name), (name) => ({ name, updatedAt: response.updatedAt }))
    )
})
