/**
 * The Tambo API's calls an AG-UI agent has no counterpart of (threads,
 * suggestions, names, component state, MCP tokens, token exchange): each
 * fails with an `ApiError` (`BadRequest`, code `NOT_SUPPORTED_BY_AG_UI_AGENT`)
 * and sends nothing.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { ApiError } from "../../TamboError.js"
import type * as Transport from "../../TamboTransport.js"

/** The code of the error of a call an AG-UI agent has no counterpart of. */
const NOT_SUPPORTED = "NOT_SUPPORTED_BY_AG_UI_AGENT"

const notSupported = (what: string) =>
  new ApiError({
    reason: "BadRequest",
    code: NOT_SUPPORTED,
    message: `An AG-UI agent does not offer ${what}: it keeps no threads and has no API besides its runs`,
    retryable: false
  })

/** The transport's members besides the runs, each failing with the "not offered" error. */
export const unsupported: Omit<
  Transport.TamboTransport.Service,
  "conversationFromStore" | "createRun" | "runOnThread" | "cancelRun"
> = {
  listThreads: () => Effect.fail(notSupported("a list of threads")),
  retrieveThread: () => Effect.fail(notSupported("threads to fetch")),
  createThread: () => Effect.fail(notSupported("threads to create")),
  updateThread: () => Effect.fail(notSupported("threads to update")),
  deleteThread: () => Effect.fail(notSupported("threads to delete")),
  listMessages: () => Effect.fail(notSupported("a thread's messages")),
  listSuggestions: () => Effect.fail(notSupported("suggestions")),
  generateSuggestions: () => Effect.fail(notSupported("suggestions")),
  generateThreadName: () => Effect.fail(notSupported("thread names")),
  updateComponentState: () => Effect.fail(notSupported("component state")),
  getMcpToken: () => Effect.fail(notSupported("MCP tokens")),
  exchangeToken: () => Effect.fail(notSupported("token exchange"))
}
