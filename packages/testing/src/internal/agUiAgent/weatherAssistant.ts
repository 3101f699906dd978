/**
 * The AG-UI agent's weather assistant (`AgUiAgent.scripts.weatherAssistant`): the Tambo testing
 * server's default conversation told the AG-UI way. An echo, or for a message about the weather a
 * `get_weather` round of two runs, the second carrying the tool's result. It speaks as the Tambo
 * server's assistant does (one word a delta, the same city), from the same helpers.
 */
import { isRecord } from "effect/Predicate"
import type * as AgUiAgent from "../../AgUiAgent.js"
import { cityIn, words } from "../weatherAssistant.js"
import { textOf } from "./request.js"
import { text, toolCall } from "./steps.js"

/** A tool's result in words: `21°, sunny` from `{ temperature, conditions }`, else the text itself. */
const weatherInWords = (result: string): { readonly city: string | undefined; readonly words: string } => {
  try {
    const record: unknown = JSON.parse(result)
    if (isRecord(record)) {
      const parts = [
        typeof record["temperature"] === "number" ? `${record["temperature"]}°` : undefined,
        typeof record["conditions"] === "string" ? record["conditions"] : undefined
      ].filter((part) => part !== undefined)
      if (parts.length > 0) {
        return { city: typeof record["city"] === "string" ? record["city"] : undefined, words: parts.join(", ") }
      }
    }
  } catch {
    // Not JSON: said as it is.
  }
  return { city: undefined, words: result }
}

/**
 * A message that mentions the weather, in a run that offers a `get_weather` tool, gets "Let me
 * check the weather in <city>." and a call of it with `{ city }`; the run that carries its result
 * gets the weather in words. Anything else gets "You said: <message>".
 */
export const weatherAssistant: AgUiAgent.ScriptFn = (request) => {
  const result = request.toolResults[request.toolResults.length - 1]
  if (result !== undefined) {
    const weather = weatherInWords(textOf(result.content))
    return [text(words(`Here is the weather${weather.city === undefined ? "" : ` in ${weather.city}`}: ${weather.words}.`))]
  }
  const said = (request.lastUserText ?? "").trim()
  if (/\bweather\b/i.test(said)) {
    if (!request.input.tools.some((tool) => tool.name === "get_weather")) {
      return [text(words("I would need a get_weather tool to check the weather."))]
    }
    const city = cityIn(said)
    return [text(words(`Let me check the weather in ${city}.`)), toolCall("get_weather", { city })]
  }
  return [text(words(said === "" ? "Hello! Ask me about the weather." : `You said: ${said}`))]
}
