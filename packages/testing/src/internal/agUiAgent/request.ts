/**
 * A run request as the agent reads it: the body checked against `@ag-ui/core`'s `RunAgentInput`
 * schema (or why it was refused, with the status to answer), and what a script function is
 * handed besides the input: the tool results the conversation ends with and the last user text.
 */
import type * as AgUi from "@ag-ui/core"
import { RunAgentInputSchema } from "@ag-ui/core/schemas"
import type * as AgUiAgent from "../../AgUiAgent.js"

/** A run request's body, read: the input, or the answer refusing it and its issues to record. */
export type Decoded =
  | { readonly _tag: "Valid"; readonly input: AgUi.RunAgentInput }
  | {
    readonly _tag: "Refused"
    readonly status: number
    readonly body: unknown
    readonly issues: ReadonlyArray<string>
  }

/** Reads a request's method and body as a run request: a `POST` of a JSON `RunAgentInput`. */
export const decode = (method: string | undefined, body: string): Decoded => {
  if (method !== "POST") {
    return {
      _tag: "Refused",
      status: 405,
      body: { error: "Method not allowed" },
      issues: [`method ${method ?? "?"} is not POST`]
    }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return { _tag: "Refused", status: 400, body: { error: "The body is not JSON" }, issues: ["the body is not JSON"] }
  }
  const decoded = RunAgentInputSchema.safeParse(parsed)
  if (!decoded.success) {
    const issues = decoded.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
    return { _tag: "Refused", status: 422, body: { error: "Invalid RunAgentInput", issues }, issues }
  }
  // Validated by the schema above; zod types optional fields as `T | undefined`, which
  // `exactOptionalPropertyTypes` tells apart from `RunAgentInput`'s absent ones.
  return { _tag: "Valid", input: decoded.data as AgUi.RunAgentInput }
}

/** The text parts of a message's content, joined. */
export const textOf = (content: string | ReadonlyArray<AgUi.ContentPart>): string =>
  typeof content === "string"
    ? content
    : content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("")

/** What a script function receives for a valid input. */
export const requestOf = (input: AgUi.RunAgentInput, headers: Record<string, string>): AgUiAgent.AgentRequest => {
  const toolResults: Array<AgUi.ToolMessage> = []
  for (let at = input.messages.length - 1; at >= 0; at--) {
    const message = input.messages[at]!
    if (message.role !== "tool") break
    toolResults.unshift(message)
  }
  let lastUserText: string | undefined
  for (let at = input.messages.length - 1; at >= 0 && lastUserText === undefined; at--) {
    const message = input.messages[at]!
    if (message.role === "user") lastUserText = textOf(message.content)
  }
  return { input, headers, toolResults, lastUserText }
}
