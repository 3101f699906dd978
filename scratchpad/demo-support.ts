/**
 * What the demo (`pnpm demo`) and the chat (`pnpm chat`) share: where they
 * talk to, the weather tool and card, and a printer that renders a run live.
 */
import {
  type AvailableComponent,
  type StreamEvent,
  type TamboClientOptions,
  type TamboTool,
  type TamboThread
} from "@tambo-effect/client"
import { AgUiAgent, Script, startTestServer } from "@tambo-effect/testing"

// -----------------------------------------------------------------------------
// Backend: Tambo Cloud with TAMBO_API_KEY, else the embedded testing server
// -----------------------------------------------------------------------------

export interface Backend {
  readonly label: string
  readonly options: Pick<TamboClientOptions, "apiKey" | "tamboUrl" | "userKey" | "agent">
  readonly close: () => Promise<void>
}

/**
 * `TAMBO_API_KEY` set: Tambo Cloud (`TAMBO_URL` and `TAMBO_USER_KEY`
 * optional). Otherwise a testing server on loopback playing its default
 * weather assistant, each event `paceMillis` apart so streaming is visible.
 */
export const startBackend = async (paceMillis: number): Promise<Backend> => {
  const apiKey = process.env["TAMBO_API_KEY"]
  if (apiKey !== undefined && apiKey !== "") {
    const tamboUrl = process.env["TAMBO_URL"] || undefined
    return {
      label: `Tambo Cloud (${tamboUrl ?? "https://api.tambo.co"})`,
      options: { apiKey, tamboUrl, userKey: process.env["TAMBO_USER_KEY"] || "tambo-effect-demo" },
      close: async () => {}
    }
  }
  const server = await startTestServer(
    paceMillis > 0
      ? { script: async (request, context) => [Script.pace(paceMillis), ...(await Script.weatherAssistant(request, context))] }
      : {}
  )
  return {
    label: `the embedded testing server (${server.url}), playing its weather assistant`,
    options: { apiKey: server.apiKey, tamboUrl: server.url, userKey: "demo-user" },
    close: () => server.close()
  }
}

/**
 * The embedded AG-UI agent (`@tambo-effect/testing`'s `AgUiAgent`) playing its weather
 * assistant: the client talks to it with `agent: { url }`, no API key or user.
 */
export const startAgentBackend = async (): Promise<Backend> => {
  const agent = await AgUiAgent.start({ script: AgUiAgent.scripts.weatherAssistant })
  return {
    label: `the embedded AG-UI agent (${agent.url}), playing its weather assistant`,
    options: { agent: { url: agent.url } },
    close: () => agent.close()
  }
}

/**
 * Milliseconds between the testing server's events: `TAMBO_DEMO_PACE_MS`,
 * else 25 on a terminal (to watch it stream) and 5 in a pipe (events that
 * arrive together share one snapshot, and the props would seem to jump).
 */
export const paceMillis = (): number => {
  const configured = process.env["TAMBO_DEMO_PACE_MS"]
  if (configured !== undefined && configured !== "" && Number.isFinite(Number(configured))) return Number(configured)
  return process.stdout.isTTY ? 25 : 5
}

// -----------------------------------------------------------------------------
// The tool and the component
// -----------------------------------------------------------------------------

interface Weather {
  readonly city: string
  readonly temperature: number
  readonly conditions: string
  readonly humidity: number
}

const conditions = ["sunny", "partly cloudy", "cloudy", "light rain", "windy"]

/** Made-up but stable weather: the same city always gets the same. */
const weatherIn = (city: string): Weather => {
  let hash = 0
  for (const char of city) hash = (hash * 31 + char.charCodeAt(0)) >>> 0
  return {
    city,
    temperature: 8 + (hash % 20),
    conditions: conditions[hash % conditions.length]!,
    humidity: 30 + (hash % 60)
  }
}

/** A client-side tool: the model calls it, the client runs it, the run goes on with its result. */
export const weatherTool: TamboTool<{ city: string }, Weather> = {
  name: "get_weather",
  description: "The current weather in a city",
  inputSchema: {
    type: "object",
    properties: { city: { type: "string", description: "The city, e.g. Paris" } },
    required: ["city"]
  },
  outputSchema: {
    type: "object",
    properties: {
      city: { type: "string" },
      temperature: { type: "number" },
      conditions: { type: "string" },
      humidity: { type: "number" }
    }
  },
  tool: async ({ city }) => {
    await new Promise((resolve) => setTimeout(resolve, 50))
    return weatherIn(city)
  }
}

/** A component the model may render; its props stream in. */
export const weatherCard: AvailableComponent = {
  name: "WeatherCard",
  description: "Shows the weather in a city",
  propsSchema: {
    type: "object",
    properties: {
      city: { type: "string" },
      temperature: { type: "number", description: "Degrees Celsius" },
      conditions: { type: "string" },
      humidity: { type: "number", description: "Percent" }
    },
    required: ["city", "temperature"]
  }
}

// -----------------------------------------------------------------------------
// Printing a run live
// -----------------------------------------------------------------------------

export interface Out {
  readonly write: (text: string) => void
  /** ANSI colours and in-place updates: only on a terminal. */
  readonly tty: boolean
}

export const stdoutOut = (): Out => ({
  write: (text) => void process.stdout.write(text),
  tty: process.stdout.isTTY === true && process.env["NO_COLOR"] === undefined
})

const codes = { dim: 2, bold: 1, red: 31, green: 32, yellow: 33, magenta: 35, cyan: 36 } as const

/** Renders events as they come: text as it streams, tool calls and results, component props. */
export class Printer {
  /** Characters written on the current line. */
  #column = 0
  #componentLine = false
  readonly #printedResults = new Set<string>()
  readonly #lastProps = new Map<string, string>()

  constructor(readonly out: Out) {}

  paint(style: keyof typeof codes, text: string): string {
    return this.out.tty ? `\x1b[${codes[style]}m${text}\x1b[0m` : text
  }

  #write(text: string) {
    if (text === "") return
    this.out.write(text)
    const newline = text.lastIndexOf("\n")
    this.#column = newline < 0 ? this.#column + text.length : text.length - newline - 1
  }

  endLine() {
    if (this.#column > 0) this.#write("\n")
    this.#componentLine = false
  }

  line(text: string) {
    this.endLine()
    this.#write(`${text}\n`)
  }

  user(message: string) {
    this.line(`${this.paint("cyan", "you>")} ${message}`)
  }

  event({ event, snapshot }: StreamEvent) {
    switch (event.type) {
      case "RUN_STARTED":
        // A continuation: the tool results went out with it.
        this.#printToolResults(snapshot)
        return
      case "TEXT_MESSAGE_START":
        if (event.role !== "user") {
          this.endLine()
          this.#write(`${this.paint("green", "assistant>")} `)
        }
        return
      case "TEXT_MESSAGE_CONTENT":
        if (this.#componentLine) this.endLine()
        this.#write(event.delta)
        return
      case "TEXT_MESSAGE_END":
        this.endLine()
        return
      case "TOOL_CALL_END": {
        const call = findBlock(snapshot, (c) => c.type === "tool_use" && c.id === event.toolCallId)
        if (call?.type === "tool_use") {
          this.line(`  ${this.paint("yellow", "tool call:")} ${call.name} ${JSON.stringify(call.input)}`)
        }
        return
      }
      case "CUSTOM":
        if (event.name === "tambo.component.props_delta" || event.name === "tambo.component.end") {
          const done = event.name === "tambo.component.end"
          const block = findBlock(snapshot, (c) => c.type === "component" && c.id === event.value.componentId)
          if (block?.type !== "component") return
          const props = JSON.stringify(block.props)
          if (!done && this.#lastProps.get(block.id) === props) return
          this.#lastProps.set(block.id, props)
          const label = this.paint("magenta", `component ${block.name}${done ? " (final)" : ""}:`)
          const text = `  ${label} ${props}`
          if (this.out.tty) {
            // Update the same line as the props grow.
            if (this.#componentLine) this.out.write("\r\x1b[2K")
            else this.endLine()
            this.out.write(text)
            this.#column = text.length
            this.#componentLine = !done
            if (done) this.endLine()
          } else {
            this.line(text)
          }
        }
        return
      case "RUN_ERROR":
        this.line(this.paint("red", `  run error: ${event.message}`))
        return
      default:
        return
    }
  }

  #printToolResults(snapshot: TamboThread) {
    for (const message of snapshot.messages) {
      for (const block of message.content) {
        if (block.type !== "tool_result" || this.#printedResults.has(block.toolUseId)) continue
        this.#printedResults.add(block.toolUseId)
        const text = block.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("")
        const label = block.isError === true ? this.paint("red", "tool error:") : this.paint("yellow", "tool result:")
        this.line(`  ${label} ${text}`)
      }
    }
  }
}

type Block = TamboThread["messages"][number]["content"][number]

/** The newest content block matching `test` (searching from the end: it is almost always in the last message). */
const findBlock = (thread: TamboThread, test: (block: Block) => boolean): Block | undefined => {
  for (let m = thread.messages.length - 1; m >= 0; m--) {
    const found = thread.messages[m]!.content.find(test)
    if (found !== undefined) return found
  }
  return undefined
}

/** A failure, one line: its tag and message. */
export const describeError = (error: unknown): string =>
  error instanceof Error ? `${(error as { _tag?: string })._tag ?? error.name}: ${error.message}` : String(error)
