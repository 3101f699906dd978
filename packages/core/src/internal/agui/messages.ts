/**
 * An AG-UI conversation as this SDK's thread messages: what a
 * `MESSAGES_SNAPSHOT` replaces a thread's messages with. The inverse of
 * `toAgUiMessages` (`runAgentInput.ts`) for what both can hold.
 *
 * - `user`: text, and media parts as resources (data as `blob`, a URL as `uri`);
 * - `system` and `developer`: a system message;
 * - `assistant`: its text, and each tool call as a `tool_use` block whose
 *   input is the parsed arguments (`{}` when they are not a JSON object);
 * - `tool`: a user message holding the `tool_result` (how Tambo keeps a
 *   client's results), `isError` when it carries an `error`;
 * - `reasoning`: the `reasoning` of the assistant message after it;
 * - `activity`: not a thread message (the run loop keeps activities apart).
 *
 * Pure and total.
 *
 * @since 0.2.0
 */
import type * as Types from "../../Types.js"
import type * as Wire from "./wire.js"

const textOf = (content: string | ReadonlyArray<Wire.ContentPart>): string =>
  typeof content === "string" ? content : content.map((part) => (part.type === "text" ? part.text : "")).join("")

const userContent = (content: string | ReadonlyArray<Wire.ContentPart>): Array<Types.Content> => {
  if (typeof content === "string") return [{ type: "text", text: content }]
  return content.map((part): Types.Content => {
    if (part.type === "text") return { type: "text", text: part.text }
    const source = part.source
    return {
      type: "resource",
      resource: source.type === "data"
        ? { blob: source.value, mimeType: source.mimeType }
        : { uri: source.value, ...(source.mimeType === undefined ? {} : { mimeType: source.mimeType }) }
    }
  })
}

/** A call's arguments as the thread reads them: the JSON object, else `{}`. */
export const parseArguments = (json: string): Record<string, unknown> => {
  try {
    const value: unknown = JSON.parse(json)
    return typeof value === "object" && value !== null && !Array.isArray(value) ? { ...value } : {}
  } catch {
    return {}
  }
}

/**
 * A snapshot's conversation with one message per id: a snapshot is the conversation by message
 * id (`@ag-ui/client` keys it so), so a later message under an id replaces an earlier one, where
 * the first stood. `repeated`: the ids that came more than once.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const lastOfEachId = (
  messages: ReadonlyArray<Wire.Message>
): { readonly messages: ReadonlyArray<Wire.Message>; readonly repeated: ReadonlyArray<string> } => {
  const byId = new Map(messages.map((message) => [message.id, message]))
  if (byId.size === messages.length) return { messages, repeated: [] }
  const seen = new Set<string>()
  const repeated = new Set<string>()
  for (const message of messages) {
    if (seen.has(message.id)) repeated.add(message.id)
    seen.add(message.id)
  }
  return { messages: [...byId.values()], repeated: [...repeated] }
}

/**
 * The conversation as thread messages (see the module's notes).
 *
 * @since 0.2.0
 * @category Constructors
 */
export const fromAgUiMessages = (messages: ReadonlyArray<Wire.Message>): Array<Types.TamboThreadMessage> => {
  const out: Array<Types.TamboThreadMessage> = []
  let reasoning: Array<string> = []
  for (const message of messages) {
    switch (message.role) {
      case "user":
        out.push({ id: message.id, role: "user", content: userContent(message.content) })
        break
      case "system":
      case "developer":
        out.push({ id: message.id, role: "system", content: [{ type: "text", text: message.content }] })
        break
      case "assistant": {
        const content: Array<Types.Content> = []
        if (message.content !== undefined && message.content !== "") content.push({ type: "text", text: message.content })
        for (const call of message.toolCalls ?? []) {
          content.push({ type: "tool_use", id: call.id, name: call.function.name, input: parseArguments(call.function.arguments) })
        }
        out.push({ id: message.id, role: "assistant", content, ...(reasoning.length === 0 ? {} : { reasoning }) })
        reasoning = []
        break
      }
      case "tool":
        out.push({
          id: message.id,
          role: "user",
          content: [{
            type: "tool_result",
            toolUseId: message.toolCallId,
            content: [{ type: "text", text: textOf(message.content) }],
            ...(message.error === undefined ? {} : { isError: true })
          }]
        })
        break
      case "reasoning":
        reasoning = [...reasoning, message.content]
        break
      case "activity":
        break
    }
  }
  return out
}
