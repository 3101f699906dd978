/**
 * The REST calls about threads: list, read, create, rename or tag, delete;
 * a thread's messages; the state of one of its components.
 *
 * @internal
 */
import type TamboAI from "@tambo-ai/typescript-sdk"
import * as Effect from "effect/Effect"
import type { TamboTransport } from "../../TamboTransport.js"
import * as Api from "./apiSchemas.js"
import { withUserKey } from "./credentials.js"
import { AnyBody, definedOnly, requestOptions, type Rest } from "./rest.js"

/** The thread members of the service. */
export type Threads = Pick<
  TamboTransport.Service,
  | "listThreads"
  | "retrieveThread"
  | "createThread"
  | "updateThread"
  | "deleteThread"
  | "listMessages"
  | "updateComponentState"
>

/** The thread calls, sent by `sdk` through `rest`. */
export const make = (sdk: TamboAI, rest: Rest): Threads => ({
  listThreads: (credentials, params = {}) =>
    rest({
      name: "listThreads",
      method: "GET",
      path: "/v1/threads",
      schema: Api.ThreadList,
      idempotent: true,
      send: ({ signal }) =>
        sdk.threads.list(
          withUserKey(definedOnly({ cursor: params.cursor, limit: params.limit }), credentials),
          requestOptions(credentials, signal)
        )
    }),
  retrieveThread: (credentials, threadId) =>
    rest({
      name: "retrieveThread",
      method: "GET",
      path: `/v1/threads/${threadId}`,
      schema: Api.ThreadWithMessages,
      idempotent: true,
      send: ({ signal }) => sdk.threads.retrieve(threadId, withUserKey({}, credentials), requestOptions(credentials, signal))
    }),
  createThread: (credentials, params = {}) =>
    rest({
      name: "createThread",
      method: "POST",
      path: "/v1/threads",
      schema: Api.ThreadSummary,
      idempotent: false,
      send: ({ signal }) =>
        sdk.threads.create(
          withUserKey(definedOnly({ metadata: params.metadata }), credentials),
          requestOptions(credentials, signal)
        )
    }),
  updateThread: (credentials, threadId, patch) =>
    rest({
      name: "updateThread",
      method: "PATCH",
      path: `/v1/threads/${threadId}`,
      schema: Api.ThreadSummary,
      idempotent: true,
      send: ({ signal }) =>
        sdk.threads.update(
          threadId,
          withUserKey(definedOnly({ name: patch.name, metadata: patch.metadata }), credentials),
          requestOptions(credentials, signal)
        )
    }),
  deleteThread: (credentials, threadId) =>
    Effect.asVoid(rest({
      name: "deleteThread",
      method: "DELETE",
      path: `/v1/threads/${threadId}`,
      schema: AnyBody,
      idempotent: true,
      send: ({ signal }) => sdk.threads.delete(threadId, withUserKey({}, credentials), requestOptions(credentials, signal))
    })),
  listMessages: (credentials, threadId, params = {}) =>
    rest({
      name: "listMessages",
      method: "GET",
      path: `/v1/threads/${threadId}/messages`,
      schema: Api.MessageList,
      idempotent: true,
      send: ({ signal }) =>
        sdk.threads.messages.list(
          threadId,
          withUserKey(definedOnly({ cursor: params.cursor, limit: params.limit, order: params.order }), credentials),
          requestOptions(credentials, signal)
        )
    }),
  updateComponentState: (credentials, threadId, componentId, update) =>
    Effect.map(
      rest({
        name: "updateComponentState",
        method: "POST",
        path: `/v1/threads/${threadId}/components/${componentId}/state`,
        schema: Api.ComponentStateResponse,
        // A replacement sent twice leaves the same state; a patch may not.
        idempotent: update.patch === undefined,
        send: ({ signal }) =>
          sdk.threads.state.updateState(
            componentId,
            withUserKey(
              update.patch === undefined
                ? { threadId, state: update.state }
                : { threadId, patch: update.patch.map((operation) => ({ ...operation })) },
              credentials
            ),
            requestOptions(credentials, signal)
          )
      }),
      (response) => response.state
    )
})
