import type {
  TamboComponentContent as BaseComponentContent,
  TamboThreadMessage,
  TamboToolUseContent
} from "@tambo-effect/client"
import { type ComponentType, createElement, type ReactElement } from "react"
import type { Content, ReactTamboThreadMessage } from "../types.js"

/**
 * The component that renders a component block (injected to keep this module free of JSX and cycles).
 *
 * @since 0.1.0
 * @category Internal
 */
export type RendererComponent = ComponentType<{
  readonly content: BaseComponentContent
  readonly threadId: string
  readonly messageId: string
}>

interface MessageEntry {
  readonly threadId: string
  /** The completion of the message's tool calls when it was converted. */
  readonly toolsDone: string
  readonly message: ReactTamboThreadMessage
}

interface ElementEntry {
  readonly threadId: string
  readonly messageId: string
  readonly element: ReactElement
}

const TAMBO_PREFIX = "_tambo_"

/**
 * Turns the client's messages into the messages `useTambo` returns,
 * keeping identity: a message is converted once per version (core's
 * reducer copies only what changed), and a component block's element is
 * made once per version of the block. Messages without tool calls or
 * components are returned as they are. One per set of registered
 * components: a new registry starts afresh.
 *
 * @since 0.1.0
 * @category Internal
 */
export class MessageRenderer {
  readonly #renderer: RendererComponent
  readonly #has: (name: string) => boolean
  readonly #messages = new WeakMap<TamboThreadMessage, MessageEntry>()
  readonly #elements = new WeakMap<BaseComponentContent, ElementEntry>()
  #lastInput: ReadonlyArray<TamboThreadMessage> | undefined
  #lastThreadId: string | undefined
  #lastOutput: Array<ReactTamboThreadMessage> = []

  constructor(renderer: RendererComponent, has: (name: string) => boolean) {
    this.#renderer = renderer
    this.#has = has
  }

  render(messages: ReadonlyArray<TamboThreadMessage>, threadId: string): Array<ReactTamboThreadMessage> {
    if (messages === this.#lastInput && threadId === this.#lastThreadId) return this.#lastOutput
    const completed = completedToolCalls(messages)
    const output = messages.map((message) => this.#message(message, threadId, completed))
    this.#lastInput = messages
    this.#lastThreadId = threadId
    this.#lastOutput = output
    return output
  }

  #message(message: TamboThreadMessage, threadId: string, completed: ReadonlySet<TamboToolUseContent>): ReactTamboThreadMessage {
    let special = false
    let toolsDone = ""
    for (const block of message.content) {
      if (block.type === "component") special = true
      else if (block.type === "tool_use") {
        special = true
        toolsDone += completed.has(block) ? "1" : "0"
      }
    }
    if (!special) return message
    const cached = this.#messages.get(message)
    if (cached !== undefined && cached.threadId === threadId && cached.toolsDone === toolsDone) return cached.message
    const converted: ReactTamboThreadMessage = {
      ...message,
      content: message.content.map((block): Content => {
        if (block.type === "component") return { ...block, renderedComponent: this.#element(block, threadId, message.id) }
        if (block.type === "tool_use") return toolUse(block, completed.has(block))
        return block
      })
    }
    this.#messages.set(message, { threadId, toolsDone, message: converted })
    return converted
  }

  #element(block: BaseComponentContent, threadId: string, messageId: string): ReactElement | null {
    if (!this.#has(block.name)) return null
    const cached = this.#elements.get(block)
    if (cached !== undefined && cached.threadId === threadId && cached.messageId === messageId) return cached.element
    const element = createElement(this.#renderer, { key: block.id, content: block, threadId, messageId })
    this.#elements.set(block, { threadId, messageId, element })
    return element
  }
}

/**
 * The tool calls a result answers. Providers reuse call ids (`call_0` in
 * every round), so a result answers the latest call with its id before it,
 * not every call with that id.
 */
const completedToolCalls = (messages: ReadonlyArray<TamboThreadMessage>): ReadonlySet<TamboToolUseContent> => {
  const latest = new Map<string, TamboToolUseContent>()
  const completed = new Set<TamboToolUseContent>()
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === "tool_use") {
        latest.set(block.id, block)
      } else if (block.type === "tool_result") {
        const call = latest.get(block.toolUseId)
        if (call !== undefined) completed.add(call)
      }
    }
  }
  return completed
}

/** Adds what UI layers compute (core leaves it to them): completion and status messages; hides `_tambo_*` arguments. */
const toolUse = (block: TamboToolUseContent, hasCompleted: boolean): TamboToolUseContent => {
  const input: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(block.input)) if (!key.startsWith(TAMBO_PREFIX)) input[key] = value
  const status = block.input["_tambo_statusMessage"]
  const completion = block.input["_tambo_completionStatusMessage"]
  return {
    ...block,
    input,
    hasCompleted,
    statusMessage: hasCompleted
      ? typeof completion === "string" ? completion : `Called ${block.name}`
      : typeof status === "string" ? status : `Calling ${block.name}`,
    tamboDisplayProps: {
      ...(typeof status === "string" ? { _tambo_statusMessage: status } : {}),
      ...(typeof completion === "string" ? { _tambo_completionStatusMessage: completion } : {})
    }
  }
}
