import type { ServerResponse } from "node:http"
import type * as Script from "../Script.js"
import type { RecordedAudio, RecordedCancel, RecordedMcpRequest, RecordedRequest, SuggestionGenerator, TestServerOptions, ThreadNamer } from "../TestServer.js"
import type * as Wire from "../Wire.js"
import { TokenIssuer } from "./auth.js"
import type { EventStream } from "./eventStream.js"
import { Store } from "./store.js"
import type { StoredMessage, StoredThread } from "./store.js"
import { weatherAssistant } from "./weatherAssistant.js"

/** What the run player accumulates, to store the assistant message when the round ends. */
export interface Draft {
  readonly messageId: string
  /**
   * The model streamed something (text, reasoning, a tool call, a component): from then on the API
   * holds the run's assistant message, with `" "` as its text until text streams.
   */
  started: boolean
  /**
   * Text and components in streaming order; the stored message has one text block, first (as the
   * API stores it). A component still streaming its props has them as the deltas sent so far.
   */
  readonly parts: Array<{ readonly kind: "text" } | DraftComponent>
  readonly text: Array<string>
  /** Each call with the JSON the model sent, and the tool's schema when the request declared it. */
  readonly toolUses: Array<
    { readonly id: string; readonly name: string; readonly arguments: string; readonly inputSchema?: Wire.JsonObject }
  >
  /**
   * Final: the round ended (or was cut short) and the stored message holds its last content. Until
   * then the stored message (`stored`) shows the draft as it is now.
   */
  persisted: boolean
  /** The assistant message in the thread since the model's first chunk (see `syncDraft`). */
  stored: StoredMessage | undefined
  /** Bumped at every sync: a read between two syncs sees the same content. */
  version: number
}

/** A component of the draft: its final props once it ended, the deltas sent so far before. */
export interface DraftComponent {
  readonly kind: "component"
  block: Wire.ComponentContent
  streaming: { readonly deltas: ReadonlyArray<Script.PropsDelta>; sent: number } | undefined
}

export interface ActiveRun {
  readonly thread: StoredThread
  readonly runId: string
  readonly controller: AbortController
  readonly draft: Draft
  /** Cancelled by `DELETE` or by the connection closing. */
  cancelled: boolean
  /** Set once the response streams. */
  stream: EventStream | undefined
  /** The run request's response, before it streams too (its script still working). */
  readonly response: ServerResponse
}

const defaultSuggestions: SuggestionGenerator = ({ maxSuggestions }) =>
  [
    { title: "Tell me more", detailedSuggestion: "Ask for more details about the last answer." },
    { title: "Check the weather", detailedSuggestion: "What is the weather in Paris today?" },
    { title: "Summarize", detailedSuggestion: "Summarize our conversation so far." },
    { title: "Start over", detailedSuggestion: "Let's start a new topic." },
    { title: "Show an example", detailedSuggestion: "Show me an example of what you can do." }
  ].slice(0, maxSuggestions)

const defaultThreadName: ThreadNamer = (messages) => {
  for (const message of messages) {
    if (message.role !== "user") continue
    for (const block of message.content) {
      if (block.type === "text" && block.text.trim() !== "") {
        const text = block.text.trim().replace(/\s+/g, " ")
        return text.length > 40 ? `${text.slice(0, 37)}...` : text
      }
    }
  }
  return "New conversation"
}

/** Always the same sentence, whatever was said: tests type it in to compare. */
const defaultTranscript = (): string => "What is the weather in Paris?"

export class ServerState {
  readonly apiKey: string
  readonly projectId: string
  readonly tokenTtlSeconds: number
  readonly mcpServers: boolean
  readonly now: () => number
  readonly noticeClosedConnection: NonNullable<TestServerOptions["noticeClosedConnection"]>
  readonly suggest: SuggestionGenerator
  readonly nameThread: ThreadNamer
  readonly issuer: TokenIssuer
  readonly store: Store
  readonly activeRuns = new Map<string, ActiveRun>()
  requests: Array<RecordedRequest> = []
  mcpRequests: Array<RecordedMcpRequest> = []
  readonly mcpSetup: TestServerOptions["mcp"]
  cancels: Array<RecordedCancel> = []
  transcriptions: Array<RecordedAudio> = []
  readonly transcribe: NonNullable<TestServerOptions["transcribe"]>
  script: Script.ScriptSource
  runCount = 0

  constructor(private readonly options: TestServerOptions) {
    this.apiKey = options.apiKey ?? "test-api-key"
    this.projectId = options.projectId ?? "p_test"
    this.tokenTtlSeconds = options.tokenTtlSeconds ?? 3600
    this.mcpServers = options.mcpServers ?? true
    this.mcpSetup = options.mcp
    this.now = options.now ?? Date.now
    this.noticeClosedConnection = options.noticeClosedConnection ?? "atOnce"
    this.suggest = options.suggestions ?? defaultSuggestions
    this.nameThread = options.threadName ?? defaultThreadName
    this.transcribe = options.transcribe ?? defaultTranscript
    this.issuer = new TokenIssuer(this.projectId)
    this.store = new Store(this.now)
    this.script = options.script ?? weatherAssistant
  }

  nowSeconds(): number {
    return Math.floor(this.now() / 1000)
  }

  /** Forgets everything the server recorded and stops the runs in flight. */
  reset(): void {
    for (const run of this.activeRuns.values()) {
      run.cancelled = true
      run.controller.abort()
      // A response that waits for its script has no stream yet: it is closed all the same.
      if (run.stream === undefined) run.response.destroy()
      else void run.stream.drop()
    }
    this.activeRuns.clear()
    this.store.clear()
    this.requests = []
    this.mcpRequests = []
    this.cancels = []
    this.transcriptions = []
    this.runCount = 0
    this.script = this.options.script ?? weatherAssistant
  }
}
