// The reference half of the AG-UI differential tests: `@ag-ui/client`'s HttpAgent runs a
// conversation against an agent the way its users must, running the frontend tools itself
// and starting the next run with their results, and records what it ends with. The SDK half
// runs the same scripts and is compared with this.
import { HttpAgent } from "@ag-ui/client"
import type { BaseEvent, Context, Message, State, Tool } from "@ag-ui/client"

// The 1.0 client explains each legacy event it converts on the console; the tests need not.
process.env.SUPPRESS_TRANSFORMATION_WARNINGS = "true"

/** A frontend tool: offered to the agent, run by the app when a run ends with a call of it. */
export interface ReferenceTool extends Tool {
  readonly execute: (args: unknown) => string | Promise<string>
}

export interface ReferenceOptions {
  readonly url: string
  readonly threadId?: string
  readonly messages: ReadonlyArray<Message>
  readonly state?: State
  readonly tools?: ReadonlyArray<ReferenceTool>
  readonly context?: ReadonlyArray<Context>
  readonly headers?: Record<string, string>
  /** At most this many runs (tool rounds included); default 5. */
  readonly maxRuns?: number
}

export interface ReferenceOutcome {
  /** The conversation the client holds at the end. */
  readonly messages: ReadonlyArray<Message>
  readonly state: State
  /** How many runs were started. */
  readonly runs: number
  /** The calls the app ran, in order, with their results. */
  readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly args: unknown; readonly result: string }>
  /** The agent's RUN_ERROR, if a run ended with one. */
  readonly runError: { readonly message: string; readonly code: string | undefined } | undefined
  /** What `runAgent` rejected with (a dropped connection, an HTTP error), if it did. */
  readonly failure: string | undefined
  /** Every event the client applied, per run. */
  readonly events: ReadonlyArray<ReadonlyArray<BaseEvent>>
}

/**
 * HttpAgent 1.0.0 cancels its body reader when a stream fails and rethrows the cancel's
 * rejection from a detached promise, so a dropped connection also surfaces as an unhandled
 * rejection. The body is handed over behind a reader whose `cancel` settles quietly; reads
 * (and so the run's own failure) are the response's.
 */
const fetchWithQuietCancel = async (url: string, init: RequestInit): Promise<Response> => {
  const response = await fetch(url, init)
  const body = response.body
  if (body === null) return response
  const quiet = {
    ok: response.ok,
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
    text: () => response.text(),
    json: () => response.json(),
    body: {
      getReader: () => {
        const reader = body.getReader()
        return {
          read: () => reader.read(),
          cancel: (reason?: unknown) => reader.cancel(reason).catch(() => undefined),
          releaseLock: () => reader.releaseLock(),
          closed: reader.closed
        }
      }
    }
  }
  // Only the members HttpAgent reads; a test double of the platform's type, not wire data.
  return quiet as unknown as Response
}

const isFrontendCall = (
  message: Message,
  names: ReadonlySet<string>
): message is Message & { readonly role: "assistant" } => message.role === "assistant" && message.toolCalls !== undefined &&
  message.toolCalls.some((call) => names.has(call.function.name))

/** Runs the conversation with HttpAgent until a run ends without frontend tool calls to answer. */
export const runReference = async (options: ReferenceOptions): Promise<ReferenceOutcome> => {
  const tools = options.tools ?? []
  const names = new Set(tools.map((tool) => tool.name))
  const agent = new HttpAgent({
    url: options.url,
    threadId: options.threadId ?? "thread-ref",
    initialMessages: structuredClone([...options.messages]),
    initialState: structuredClone(options.state ?? {}),
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    fetch: fetchWithQuietCancel
  })
  const maxRuns = options.maxRuns ?? 5
  const events: Array<Array<BaseEvent>> = []
  const toolCalls: Array<{ id: string; name: string; args: unknown; result: string }> = []
  let runError: ReferenceOutcome["runError"]
  let failure: string | undefined
  let runs = 0
  while (runs < maxRuns) {
    const seen: Array<BaseEvent> = []
    events.push(seen)
    runs++
    try {
      await agent.runAgent(
        {
          runId: `ref-run-${runs}`,
          tools: tools.map(({ description, name, parameters }) => ({ name, description, parameters })),
          context: [...(options.context ?? [])]
        },
        {
          onEvent: ({ event }) => {
            seen.push(event)
          },
          onRunErrorEvent: ({ event }) => {
            runError = { message: event.message, code: event.code }
          },
          // Taken here rather than as runAgent's rejection, which the client also logs as an error.
          // Its types leave `stopPropagation` out of what this callback returns, but the client reads it.
          onRunFailed: ({ error }) => {
            failure = error.message
            return { stopPropagation: true } as unknown as void
          }
        }
      )
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error)
    }
    if (runError !== undefined || failure !== undefined) break
    // The calls of our tools that no tool message answers yet.
    const answered = new Set(agent.messages.flatMap((m) => (m.role === "tool" ? [m.toolCallId] : [])))
    const pending = agent.messages.filter((m) => isFrontendCall(m, names)).flatMap((m) =>
      (m.toolCalls ?? []).filter((call) => names.has(call.function.name) && !answered.has(call.id))
    )
    if (pending.length === 0) break
    for (const call of pending) {
      const tool = tools.find((t) => t.name === call.function.name)!
      const args: unknown = JSON.parse(call.function.arguments)
      const result = await tool.execute(args)
      toolCalls.push({ id: call.id, name: call.function.name, args, result })
      agent.addMessage({ id: `tool-result-${call.id}`, role: "tool", toolCallId: call.id, content: result })
    }
  }
  return { messages: structuredClone(agent.messages), state: structuredClone(agent.state), runs, toolCalls, runError, failure, events }
}
