/** Conversions between core's shapes and the facade's (the shapes of `@tambo-ai/client`). */
import type * as Auth from "@tambo-effect/core/Auth"
import { isRecord } from "effect/Predicate"
import type * as Transport from "@tambo-effect/core/TamboTransport"
import type { TamboThread } from "@tambo-effect/core/Types"
import type { InputMessage, Suggestion, TamboAuthState, ThreadPage } from "../TamboClient.js"

/** A thread of a list call: its messages are not loaded. */
export const threadFromSummary = (summary: Transport.ThreadSummary): TamboThread => ({
  id: summary.id,
  messages: [],
  status: summary.runStatus,
  createdAt: summary.createdAt,
  updatedAt: summary.updatedAt,
  lastRunCancelled: summary.lastRunCancelled ?? false,
  ...(summary.name === undefined ? {} : { name: summary.name }),
  ...(isRecord(summary.metadata) ? { metadata: summary.metadata } : {})
})

/** A page of a list call, its threads without their messages. */
export const pageFromCore = (list: Transport.ThreadList): ThreadPage => ({
  threads: list.threads.map(threadFromSummary),
  hasMore: list.hasMore,
  ...(list.nextCursor === undefined ? {} : { nextCursor: list.nextCursor })
})

export const authStateFromCore = (state: Auth.AuthState): TamboAuthState => {
  switch (state.status) {
    case "identified":
      return { status: "identified", source: state.source }
    case "error":
      return { status: "error", error: state.error }
    default:
      return { status: state.status }
  }
}

export const suggestionFromCore = (suggestion: Transport.Suggestion): Suggestion => ({ ...suggestion })

/** The message core sends: only object contexts and metadata are kept (the API takes nothing else). */
export const messageToCore = (message: InputMessage): Transport.InputMessage => ({
  role: message.role,
  content: message.content,
  ...(isRecord(message.additionalContext) ? { additionalContext: message.additionalContext } : {}),
  ...(isRecord(message.metadata) ? { metadata: message.metadata } : {})
})

