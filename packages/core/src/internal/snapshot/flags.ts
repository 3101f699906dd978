/**
 * The event rules: whether a flag holds for an event when it arrives. The
 * text rules read a text delta (of a message, thinking or reasoning); every
 * other event passes them.
 *
 * @internal
 */
import type * as Tambo from "../../Tambo.js"
import type { FlagRule } from "./plan.js"

/** The text an event adds, when it is a text delta. */
export const textDelta = (event: Tambo.RunEvent["event"]): string | undefined => {
  switch (event.type) {
    case "TEXT_MESSAGE_CONTENT":
    case "THINKING_TEXT_MESSAGE_CONTENT":
    case "REASONING_MESSAGE_CONTENT":
    case "REASONING_MESSAGE_CHUNK":
      return event.delta
    default:
      return undefined
  }
}

/** A delta that starts with whitespace: the text before it ended a word. */
export const startsWithSpace = /^\s/u
const endsWithSpace = /\s$/u
const endsClause = /[.,;:!?\n\u3001\u3002\uFF01\uFF0C\uFF0E\uFF1A\uFF1B\uFF1F]["'\u2019\u201D)\]]*\s*$/u

/** Whether `rule` holds for an event with text delta `text`, `since` events after the last published one. */
export const holds = (rule: FlagRule, runEvent: Tambo.RunEvent, text: string | undefined, since: number): boolean => {
  switch (rule._tag) {
    case "WordBoundary":
      return text === undefined || endsWithSpace.test(text)
    case "Punctuation":
      return text === undefined || endsClause.test(text)
    case "Custom":
      return rule.shouldPublish(runEvent, since)
  }
}
