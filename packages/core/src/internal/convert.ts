/** Conversions from the API's decoded thread and message shapes to the client's. */
import { isRecord } from "effect/Predicate"
import type * as Api from "./transport/apiSchemas.js"
import type * as Types from "../Types.js"


const contentFromApi = (content: Api.Message["content"][number]): Types.Content => {
  switch (content.type) {
    case "text":
      return { type: "text", text: content.text }
    case "resource":
      return { type: "resource", resource: { ...content.resource } }
    case "tool_use":
      return {
        type: "tool_use",
        id: content.id,
        name: content.name,
        input: isRecord(content.input) ? content.input : {},
        hasCompleted: true
      }
    case "tool_result":
      return {
        type: "tool_result",
        toolUseId: content.toolUseId,
        content: content.content.map((c) =>
          c.type === "text"
            ? { type: "text" as const, text: c.text }
            : { type: "resource" as const, resource: { ...c.resource } }
        ),
        ...(content.isError === undefined ? {} : { isError: content.isError })
      }
    case "component":
      return {
        type: "component",
        id: content.id,
        name: content.name,
        props: content.props,
        ...(content.state === undefined ? {} : { state: content.state }),
        streamingState: "done"
      }
  }
}

export const messageFromApi = (message: Api.Message): Types.TamboThreadMessage => ({
  id: message.id,
  role: message.role,
  content: message.content.map(contentFromApi),
  ...(message.createdAt === undefined ? {} : { createdAt: message.createdAt }),
  ...(isRecord(message.metadata) ? { metadata: message.metadata } : {}),
  ...(message.parentMessageId === undefined ? {} : { parentMessageId: message.parentMessageId }),
  ...(message.isCancelled === true ? { isCancelled: true } : {})
})

export const threadFromApi = (thread: Api.ThreadSummary): Partial<Types.TamboThread> => ({
  id: thread.id,
  createdAt: thread.createdAt,
  updatedAt: thread.updatedAt,
  lastRunCancelled: thread.lastRunCancelled ?? false,
  ...(thread.name === undefined ? {} : { name: thread.name }),
  ...(isRecord(thread.metadata) ? { metadata: thread.metadata } : {}),
  ...(thread.lastRunError === undefined
    ? {}
    : {
      lastRunError: {
        message: thread.lastRunError.message,
        ...(thread.lastRunError.code === undefined ? {} : { code: thread.lastRunError.code })
      }
    })
})
