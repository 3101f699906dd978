/**
 * Builds an AG-UI `RunAgentInput` from this SDK's thread messages, tools and
 * context. An AG-UI agent keeps no thread: every run sends the whole
 * conversation, so this runs once per run (not per event).
 *
 * How Tambo's content maps:
 * - a user or system message's text blocks are its content (one string; parts
 *   when a resource carries media);
 * - an assistant message's text blocks are its content and its `tool_use`
 *   blocks its `toolCalls` (arguments as JSON);
 * - every `tool_result` block becomes a `tool` message: before the rest of
 *   the user message that holds it (Tambo keeps results in a user message),
 *   after the assistant message that holds it (a server-side tool's); one that
 *   answers no earlier call (an agent's `TOOL_CALL_RESULT` or snapshot said
 *   so), or a call an earlier result already answered, is not sent: agents
 *   refuse a tool message that follows no open call, and the thread, which
 *   keeps it, could then never be sent again;
 * - components and reasoning are Tambo's own and are not sent.
 *
 * @since 0.2.0
 */
import * as Either from "effect/Either"
import type * as Tool from "../../Tool.js"
import type * as Types from "../../Types.js"
import { AgUiError } from "./errors.js"
import type * as Wire from "./wire.js"

/**
 * What a run request is built from.
 *
 * @since 0.2.0
 * @category Models
 */
export interface BuildOptions {
  readonly threadId: string
  readonly runId: string
  readonly parentRunId?: string | undefined
  /** The conversation so far, the new user message (or tool results) last. */
  readonly messages: ReadonlyArray<Types.TamboThreadMessage>
  /** The frontend tools, as registered (their JSON Schema converted at registration). */
  readonly tools?: ReadonlyArray<Tool.ApiTool> | undefined
  /** The context helpers' values by name (strings sent as they are, anything else as JSON). */
  readonly context?: Readonly<Record<string, unknown>> | undefined
  /** The agent's state as this client holds it (default `{}`). */
  readonly state?: unknown
  readonly forwardedProps?: unknown
}

const invalid = (message: string) => new AgUiError({ reason: "InvalidInput", message })

/** `JSON.stringify`, or why it cannot (a cycle, a BigInt, a value with no JSON form). */
const toJson = (value: unknown): Either.Either<string, string> => {
  try {
    const json = JSON.stringify(value)
    return json === undefined ? Either.left("it has no JSON form") : Either.right(json)
  } catch (error) {
    return Either.left(error instanceof Error ? error.message : String(error))
  }
}

const isJson = (value: unknown): boolean => Either.isRight(toJson(value))

const textOf = (blocks: ReadonlyArray<Types.Content>): string => {
  let text = ""
  for (const block of blocks) {
    if (block.type === "text") text += block.text
    else if (block.type === "resource" && block.resource.text !== undefined) text += block.resource.text
  }
  return text
}

/** A resource with media but no text becomes a part; `undefined` when it has neither. */
const mediaPart = (resource: Types.Resource): Wire.ContentPart | undefined => {
  const mimeType = resource.mimeType
  const kind = mimeType?.startsWith("image/")
    ? "image"
    : mimeType?.startsWith("audio/")
    ? "audio"
    : mimeType?.startsWith("video/")
    ? "video"
    : "document"
  if (resource.blob !== undefined && mimeType !== undefined) {
    return { type: kind, source: { type: "data", value: resource.blob, mimeType } }
  }
  if (resource.uri !== undefined) {
    return { type: kind, source: { type: "url", value: resource.uri, ...(mimeType === undefined ? {} : { mimeType }) } }
  }
  return undefined
}

const userContent = (blocks: ReadonlyArray<Types.Content>): string | ReadonlyArray<Wire.ContentPart> => {
  const parts: Array<Wire.ContentPart> = []
  let hasMedia = false
  for (const block of blocks) {
    if (block.type === "text") parts.push({ type: "text", text: block.text })
    else if (block.type === "resource") {
      if (block.resource.text !== undefined) parts.push({ type: "text", text: block.resource.text })
      else {
        const part = mediaPart(block.resource)
        if (part !== undefined) {
          parts.push(part)
          hasMedia = true
        }
      }
    }
  }
  return hasMedia ? parts : textOf(blocks)
}

/**
 * The tool messages of `message`'s results that answer a call of `open` (the
 * calls sent and not yet answered), each taking its call out of `open`.
 */
const toolMessages = (
  message: Types.TamboThreadMessage,
  open: Set<string>,
  idTaken: boolean
): Array<Wire.Message> => {
  const results = message.content.filter((block): block is Types.ToolResultContent =>
    block.type === "tool_result" && open.delete(block.toolUseId)
  )
  const out: Array<Wire.Message> = []
  for (const result of results) {
    const content = textOf(result.content)
    out.push({
      // A message that is one tool result and nothing else keeps its id; otherwise each gets its own.
      id: results.length === 1 && !idTaken ? message.id : `${message.id}:${result.toolUseId}`,
      role: "tool",
      toolCallId: result.toolUseId,
      content,
      ...(result.isError === true ? { error: content } : {})
    })
  }
  return out
}

/**
 * The conversation as AG-UI messages (see the module's notes for the mapping).
 *
 * @since 0.2.0
 * @category Constructors
 */
export const toAgUiMessages = (
  messages: ReadonlyArray<Types.TamboThreadMessage>
): Either.Either<Array<Wire.Message>, AgUiError> => {
  const out: Array<Wire.Message> = []
  // The calls sent so far that no result answers yet.
  const calls = new Set<string>()
  for (const message of messages) {
    const blocks = message.content
    if (message.role === "assistant") {
      const toolCalls: Array<Wire.ToolCall> = []
      for (const block of blocks) {
        if (block.type !== "tool_use") continue
        const args = toJson(block.input)
        if (Either.isLeft(args)) {
          return Either.left(invalid(`The arguments of tool call ${block.id} (${block.name}) cannot be sent: ${args.left}`))
        }
        calls.add(block.id)
        toolCalls.push({ id: block.id, type: "function", function: { name: block.name, arguments: args.right } })
      }
      const text = textOf(blocks)
      const sent = text !== "" || toolCalls.length > 0
      if (sent) {
        out.push({
          id: message.id,
          role: "assistant",
          ...(text === "" ? {} : { content: text }),
          ...(toolCalls.length === 0 ? {} : { toolCalls })
        })
      }
      // A server-side tool's result kept in the message follows its call.
      out.push(...toolMessages(message, calls, sent))
    } else {
      const rest = blocks.filter((block) => block.type !== "tool_result")
      const sent = rest.length > 0 || blocks.length === 0
      // Results first: an agent expects a call's result right after the call.
      out.push(...toolMessages(message, calls, sent))
      if (sent) {
        out.push(
          message.role === "system"
            ? { id: message.id, role: "system", content: textOf(rest) }
            : { id: message.id, role: "user", content: userContent(rest) }
        )
      }
    }
  }
  return Either.right(out)
}

/**
 * The frontend tools as AG-UI tools. Two of one name are refused: the agent
 * could not tell which one it calls.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const toAgUiTools = (tools: ReadonlyArray<Tool.ApiTool>): Either.Either<Array<Wire.Tool>, AgUiError> => {
  const names = new Set<string>()
  const out: Array<Wire.Tool> = []
  for (const tool of tools) {
    if (names.has(tool.name)) return Either.left(invalid(`Two tools are named ${tool.name}`))
    names.add(tool.name)
    out.push({ name: tool.name, description: tool.description, parameters: tool.inputSchema })
  }
  return Either.right(out)
}

/**
 * The context helpers' values as AG-UI context: one entry per helper, its
 * name the description, its value the string it returned or its JSON.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const toAgUiContext = (
  context: Readonly<Record<string, unknown>>
): Either.Either<Array<Wire.Context>, AgUiError> => {
  const out: Array<Wire.Context> = []
  for (const [description, value] of Object.entries(context)) {
    if (typeof value === "string") {
      out.push({ description, value })
      continue
    }
    const json = toJson(value)
    if (Either.isLeft(json)) return Either.left(invalid(`The context ${description} cannot be sent: ${json.left}`))
    out.push({ description, value: json.right })
  }
  return Either.right(out)
}

/**
 * The run request: conversation, frontend tools, context, state and
 * forwarded props, or an `AgUiError` (`InvalidInput`) saying what cannot be
 * sent.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const buildRunAgentInput = (options: BuildOptions): Either.Either<Wire.RunAgentInput, AgUiError> =>
  Either.gen(function*() {
    const messages = yield* toAgUiMessages(options.messages)
    const tools = yield* toAgUiTools(options.tools ?? [])
    const context = yield* toAgUiContext(options.context ?? {})
    const state = options.state ?? {}
    const forwardedProps = options.forwardedProps ?? {}
    if (!isJson(state)) yield* Either.left(invalid("The agent state cannot be sent: it has no JSON form"))
    if (!isJson(forwardedProps)) yield* Either.left(invalid("The forwarded props cannot be sent: they have no JSON form"))
    return {
      threadId: options.threadId,
      runId: options.runId,
      ...(options.parentRunId === undefined ? {} : { parentRunId: options.parentRunId }),
      state,
      messages,
      tools,
      context,
      forwardedProps
    }
  })
