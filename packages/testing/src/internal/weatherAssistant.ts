// Built from plain step objects (type-only imports) so that Script.ts can re-export it without an
// import cycle at runtime.
import { isRecord } from "effect/Predicate"
import type { RunRequest, Script, Step } from "../Script.js"
import type * as Wire from "../Wire.js"
import { diffProps } from "./props.js"

const TOOL = "get_weather"
const CARD = "WeatherCard"

const say = (sentence: string): Step => ({ _tag: "Text", deltas: words(sentence), close: false })

/**
 * Streams like a model would: one delta per word (with its leading space). The AG-UI agent's
 * weather assistant speaks the same way.
 */
export const words = (sentence: string): Array<string> => sentence.match(/\s*\S+/g) ?? [sentence]

/** The argument name: the tool's first string property, else `city`. */
const locationArgument = (tool: Wire.Tool): string => {
  const properties = tool.inputSchema["properties"]
  if (isRecord(properties)) {
    for (const preferred of ["city", "location"]) if (preferred in properties) return preferred
    for (const [name, schema] of Object.entries(properties)) {
      if (isRecord(schema) && schema["type"] === "string") return name
    }
  }
  return "city"
}

/** The city a message asks about (`in Paris`, `for New York`), else San Francisco; the AG-UI agent's too. */
export const cityIn = (message: string): string => {
  const match = /\b(?:in|for|at)\s+([A-Z][\p{L}'-]*(?:\s+[A-Z][\p{L}'-]*)*)/u.exec(message)
  return match?.[1] ?? "San Francisco"
}

const parseResult = (text: string): Record<string, unknown> => {
  try {
    const parsed: unknown = JSON.parse(text)
    return isRecord(parsed) ? parsed : { summary: text }
  } catch {
    return { summary: text }
  }
}

export const weatherAssistant = (request: RunRequest): Script => {
  const weatherResult = request.toolResults.find((result) => result.toolName === TOOL)
  if (weatherResult !== undefined) {
    const data = parseResult(weatherResult.text)
    const city = typeof data["city"] === "string" ? data["city"] : typeof data["location"] === "string" ? data["location"] : undefined
    if (weatherResult.isError) return [say(`Sorry, I could not get the weather: ${weatherResult.text}`)]
    const where = city === undefined ? "" : ` in ${city}`
    const steps: Array<Step> = [say(`Here is the weather${where}.`)]
    if (request.availableComponents.some((component) => component.name === CARD)) {
      // Grow the props one key at a time, as a model streaming JSON would.
      const snapshots: Array<Wire.JsonObject> = []
      let props: Record<string, unknown> = {}
      for (const [key, value] of Object.entries(data)) {
        props = { ...props, [key]: value }
        snapshots.push(props)
      }
      steps.push({ _tag: "Component", name: CARD, id: undefined, deltas: diffProps(snapshots), finalProps: props, state: undefined })
    } else {
      steps.push(say(` ${weatherResult.text}`))
    }
    return steps
  }
  if (request.toolResults.length > 0) {
    return [say("Thanks, I got the results.")]
  }
  if (/\bweather\b/i.test(request.text)) {
    const tool = request.tools.find((candidate) => candidate.name === TOOL)
    if (tool === undefined) return [say("I would need a get_weather tool to check the weather.")]
    const city = cityIn(request.text)
    return [
      say(`Let me check the weather in ${city}.`),
      { _tag: "ToolCall", name: TOOL, id: undefined, argumentDeltas: [JSON.stringify({ [locationArgument(tool)]: city })], pending: undefined }
    ]
  }
  const input = request.text.trim()
  return [say(input === "" ? "Hello! Ask me about the weather." : `You said: ${input}`)]
}
