/**
 * A tool's result as the content of the `tool_result` block that answers
 * its call: JSON text, or the parts a `transformToContent` gives.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { ToolCallError } from "../../TamboError.js"
import type { ToolResultContent, ToolResultPart } from "../../Tool.js"
import { resultText } from "../toolSupport.js"

/**
 * @internal
 * @since 0.2.0
 * @category Constructors
 */
export const toolResult = (toolUseId: string, content: ReadonlyArray<ToolResultPart>): ToolResultContent => ({
  type: "tool_result",
  toolUseId,
  content: [...content]
})

/**
 * @internal
 * @since 0.2.0
 * @category Constructors
 */
export const errorResult = (toolUseId: string, message: string): ToolResultContent => ({
  type: "tool_result",
  toolUseId,
  content: [{ type: "text", text: message.length > 0 ? message : "The tool call failed." }],
  isError: true
})

/**
 * A result as one text part: its JSON (strings as they are); one that has none is an `InvalidResult`.
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const serialise = (
  toolName: string,
  result: unknown
): Effect.Effect<ReadonlyArray<ToolResultPart>, ToolCallError> => {
  const text = resultText(result)
  return text._tag === "Ok"
    ? Effect.succeed([{ type: "text", text: text.text }])
    : Effect.fail(
      new ToolCallError({
        reason: "InvalidResult",
        message: `Tool "${toolName}" returned a result that cannot be sent as JSON: ${text.reason}`,
        toolName
      })
    )
}

// Decodes the content parts a `transformToContent` returns (untrusted).
const ToolResultPartSchema = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
  Schema.Struct({
    type: Schema.Literal("resource"),
    resource: Schema.Struct({
      uri: Schema.optionalWith(Schema.String, { exact: true }),
      text: Schema.optionalWith(Schema.String, { exact: true }),
      blob: Schema.optionalWith(Schema.String, { exact: true }),
      mimeType: Schema.optionalWith(Schema.String, { exact: true }),
      name: Schema.optionalWith(Schema.String, { exact: true }),
      description: Schema.optionalWith(Schema.String, { exact: true }),
      annotations: Schema.optionalWith(Schema.Struct({
        audience: Schema.optionalWith(Schema.mutable(Schema.Array(Schema.String)), { exact: true }),
        priority: Schema.optionalWith(Schema.Number, { exact: true })
      }), { exact: true })
    })
  })
)

const decodePart = Schema.decodeUnknownOption(ToolResultPartSchema)

/**
 * A result with no content: the text of an empty string's JSON, as for a tool
 * that returns `""`. The API refuses an empty text (400), and takes a result
 * without parts as none: the model's history then drops the call.
 */
const emptyContent: ReadonlyArray<ToolResultPart> = [{ type: "text", text: "\"\"" }]

/**
 * The parts a `transformToContent` gave: text and resource parts as they
 * are (empty texts dropped), anything else as its JSON text; none at all
 * (or only empty texts) as one text, `""`. Anything but an array is an
 * `InvalidResult`.
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const normaliseParts = (
  toolName: string,
  parts: unknown
): Effect.Effect<ReadonlyArray<ToolResultPart>, ToolCallError> =>
  Array.isArray(parts)
    ? Effect.succeed(partsOf(parts))
    : Effect.fail(
      new ToolCallError({
        reason: "InvalidResult",
        message: `Tool "${toolName}": transformToContent returned ${
          parts === null ? "null" : typeof parts
        }, not an array of content parts`,
        toolName
      })
    )

const partsOf = (parts: ReadonlyArray<unknown>): ReadonlyArray<ToolResultPart> => {
  const out: Array<ToolResultPart> = []
  for (const part of parts) {
    const decoded = decodePart(part)
    if (decoded._tag === "Some") {
      if (decoded.value.type === "text" && decoded.value.text.length === 0) continue
      out.push(decoded.value)
    } else {
      const text = resultText(part)
      out.push({ type: "text", text: text._tag === "Ok" ? text.text : String(part) })
    }
  }
  return out.length === 0 ? emptyContent : out
}
