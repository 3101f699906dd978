/**
 * A scripted Tambo v1 API on loopback.
 *
 * `startTestServer()` listens on `127.0.0.1` (a free port by default) and answers everything
 * `@tambo-ai/typescript-sdk` calls, the way the Tambo API answers it: runs stream AG-UI events as
 * server-sent events, threads and messages persist in memory, auth and validation fail with the
 * API's statuses and bodies. What a run streams is up to a {@link Script.Script} (default:
 * {@link Script.weatherAssistant}). Every request is recorded.
 *
 * @example
 * ```ts
 * import TamboAI from "@tambo-ai/typescript-sdk"
 * import { Script, startTestServer } from "@tambo-effect/testing"
 *
 * const server = await startTestServer({ script: [Script.text(["Hello", " world"])] })
 * const client = new TamboAI({ apiKey: server.apiKey, baseURL: server.url })
 * const stream = await client.threads.runs.create({
 *   message: { role: "user", content: [{ type: "text", text: "Hi" }] },
 *   thread: { userKey: "user-1" }
 * })
 * for await (const event of stream) console.log(event.type)
 * await server.close()
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type * as Scope from "effect/Scope"
import { start } from "./internal/server.js"
import type * as Script from "./Script.js"
import type * as Wire from "./Wire.js"

/**
 * One request the server received.
 *
 * @since 0.1.0
 * @category Models
 */
export interface RecordedRequest {
  readonly method: string
  /** The path without the query string, e.g. `/v1/threads/runs`. */
  readonly path: string
  /** Query parameters (the last value of a repeated one). */
  readonly query: { readonly [name: string]: string }
  /** Path and query string as requested. */
  readonly url: string
  /** Lower-cased header names; repeated headers joined with `, `. */
  readonly headers: { readonly [name: string]: string }
  /** The parsed body (JSON or form fields); `undefined` without a body or if it did not parse. */
  readonly body: unknown
  readonly rawBody: string
  /** When it arrived (per the server's clock). */
  readonly time: number
}

/**
 * A run the server cancelled, by `DELETE` or because its connection closed before the end.
 *
 * @since 0.1.0
 * @category Models
 */
export interface RecordedCancel {
  readonly threadId: string
  readonly runId: string
  readonly reason: "user_cancelled" | "connection_closed"
  readonly time: number
}

/**
 * Who a request to Tambo's MCP server (`/mcp`) is for: the thread of a
 * thread-bound MCP access token, or the context key of a sessionless one.
 *
 * @since 0.1.0
 * @category Models
 */
export type McpEndpointContext = { readonly threadId: string } | { readonly contextKey: string }

/**
 * A request `/mcp` accepted (its token was valid).
 *
 * @since 0.1.0
 * @category Models
 */
export type RecordedMcpRequest = { readonly method: string } & McpEndpointContext

/**
 * A thread to create directly in the server's memory.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ThreadSeed {
  /** The context the thread belongs to (a `userKey`, or `oauth:user:...` for a bearer user). */
  readonly userKey: string
  readonly name?: string
  readonly metadata?: Wire.JsonObject
  readonly messages?: ReadonlyArray<{
    readonly role: "user" | "assistant" | "system"
    /** A string is one text block. */
    readonly content: string | ReadonlyArray<Wire.Content>
    readonly metadata?: Wire.JsonObject
  }>
}

/**
 * Direct access to the server's threads, as the API would answer them.
 *
 * @since 0.1.0
 * @category Models
 */
export interface TestServerThreads {
  readonly get: (threadId: string) => Wire.ThreadWithMessages | undefined
  /** Every thread of every context, oldest first. */
  readonly list: () => ReadonlyArray<Wire.ThreadWithMessages>
  readonly create: (seed: ThreadSeed) => Wire.ThreadWithMessages
}

/**
 * An audio file `POST /audio/transcribe` received and accepted.
 *
 * @since 0.2.0
 * @category Models
 */
export interface RecordedAudio {
  readonly filename: string
  /** The part's media type, as sent (parameters such as `codecs` included). */
  readonly type: string
  readonly bytes: Uint8Array
}

/**
 * Computes the transcript `POST /audio/transcribe` answers for an accepted
 * audio file.
 *
 * @since 0.2.0
 * @category Models
 */
export type Transcriber = (audio: RecordedAudio) => string | PromiseLike<string>

/**
 * Computes what `POST .../suggestions` generates.
 *
 * @since 0.1.0
 * @category Models
 */
export type SuggestionGenerator = (input: {
  readonly thread: Wire.ThreadWithMessages
  readonly messageId: string
  readonly maxSuggestions: number
  readonly availableComponents: ReadonlyArray<Wire.AvailableComponent>
}) =>
  | ReadonlyArray<GeneratedSuggestion>
  | PromiseLike<ReadonlyArray<GeneratedSuggestion>>

/**
 * One suggestion a {@link SuggestionGenerator} makes; `metadata`, if any, is
 * stored and returned with it, as the API does.
 *
 * @since 0.2.0
 * @category Models
 */
export interface GeneratedSuggestion {
  readonly title: string
  readonly detailedSuggestion: string
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
}

/**
 * Computes the name `POST /threads/{id}/generate-name` gives a thread.
 *
 * @since 0.1.0
 * @category Models
 */
export type ThreadNamer = (messages: ReadonlyArray<Wire.Message>) => string | PromiseLike<string>

/**
 * @since 0.1.0
 * @category Models
 */
export interface TestServerOptions {
  /** The only API key accepted (`x-api-key`); default `"test-api-key"`. */
  readonly apiKey?: string
  /** Default `0`: a free port. */
  readonly port?: number
  /** Default `"127.0.0.1"`. */
  readonly host?: string
  /** What runs stream; default {@link Script.weatherAssistant}. */
  readonly script?: Script.ScriptSource
  /** Lifetime of the access tokens the token exchange issues; default 3600 (the API's). */
  readonly tokenTtlSeconds?: number
  /** The project the API key belongs to (the issuer of access tokens); default `"p_test"`. */
  readonly projectId?: string
  /** Whether the project has MCP servers; without, the MCP token endpoint answers `{}`. Default `true`. */
  readonly mcpServers?: boolean
  /**
   * What Tambo's MCP server at `/mcp` offers (the real one proxies the
   * project's MCP servers' prompts and resources): registers them on the
   * `McpServer` made for each request, told who the request is for. The
   * endpoint is always guarded by an MCP access token. Default: nothing.
   */
  readonly mcp?: ((server: McpServer, context: McpEndpointContext) => void) | undefined
  readonly suggestions?: SuggestionGenerator
  readonly threadName?: ThreadNamer
  /**
   * The transcript of an audio file `POST /audio/transcribe` accepted
   * (non-empty, at most 25 MB, of a type the API transcribes; WebM, WAV and
   * MP3 must start as such files do). Default: always
   * `"What is the weather in Paris?"`. An empty answer is the API's 400 for
   * silent audio.
   *
   * @since 0.2.0
   */
  readonly transcribe?: Transcriber
  /** The server's clock in epoch milliseconds (timestamps, token expiry); default `Date.now`. */
  readonly now?: () => number
  /**
   * When a run whose client closed its connection is cancelled (`connection_closed`), letting go
   * of its thread's run lock: `"atOnce"` (default), or `"onNextWrite"`, as the Tambo API, which
   * notices the closed connection only when the run writes next. Until then the thread refuses
   * another run (`409 CONCURRENT_RUN`): the run's script goes on (a `delay`, a promise it returns),
   * and a `hang()` holds the lock until the run is cancelled by a `DELETE`.
   *
   * @since 0.2.0
   */
  readonly noticeClosedConnection?: "atOnce" | "onNextWrite"
}

/**
 * A running test server.
 *
 * @since 0.1.0
 * @category Models
 */
export interface TestServer {
  /** The base URL, without a trailing slash: pass it as the SDK's `baseURL`. */
  readonly url: string
  readonly port: number
  /** The API key the server accepts. */
  readonly apiKey: string
  /** Every request received since the start (or the last `reset`), in order. */
  readonly requests: ReadonlyArray<RecordedRequest>
  /** Every run cancelled since the start (or the last `reset`), in order. */
  readonly cancels: ReadonlyArray<RecordedCancel>
  /** Every request `/mcp` accepted since the start (or the last `reset`), in order. */
  readonly mcpRequests: ReadonlyArray<RecordedMcpRequest>
  /** Every audio file `POST /audio/transcribe` accepted since the start (or the last `reset`), in order. @since 0.2.0 */
  readonly transcriptions: ReadonlyArray<RecordedAudio>
  readonly threads: TestServerThreads
  /** Replaces the script for the runs that start from now on. */
  readonly setScript: (script: Script.ScriptSource) => void
  /** Forgets threads, messages, suggestions, recorded requests and cancels, ends the runs in flight and restores the initial script. */
  readonly reset: () => void
  /** Stops listening and destroys every connection; resolves once the server is closed. */
  readonly close: () => Promise<void>
}

/**
 * Starting the server failed (the port is taken, the host cannot be bound, ...).
 *
 * @since 0.1.0
 * @category Errors
 */
export class TestServerError extends Schema.TaggedError<TestServerError>()("TestServerError", {
  reason: Schema.Literal("ListenFailed"),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

/**
 * Starts a test server. Close it when done (`afterEach`/`afterAll`), or use
 * {@link TestServer.scoped} to tie it to a scope.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const startTestServer = (options: TestServerOptions = {}): Promise<TestServer> => start(options)

/**
 * The Context tag of a {@link TestServer} service, with the scoped constructor and the layer.
 *
 * @since 0.1.0
 * @category Context
 */
export interface TestServerTag extends Context.Tag<TestServer, TestServer> {
  /** Starts a server, closed when the scope closes. */
  readonly scoped: (options?: TestServerOptions) => Effect.Effect<TestServer, TestServerError, Scope.Scope>
  /** A layer providing a server for the layer's lifetime. */
  readonly layer: (options?: TestServerOptions) => Layer.Layer<TestServer, TestServerError>
}

const tag = Context.GenericTag<TestServer>("@tambo-effect/testing/TestServer")

const scoped = (options: TestServerOptions = {}): Effect.Effect<TestServer, TestServerError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => start(options),
      catch: (cause) =>
        new TestServerError({
          reason: "ListenFailed",
          message: cause instanceof Error ? cause.message : String(cause),
          cause
        })
    }),
    (server) => Effect.promise(() => server.close())
  )

/**
 * The test server as an Effect service: `yield* TestServer` in a program given
 * `TestServer.layer()`, or `TestServer.scoped()` for a server bound to a scope.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { TestServer } from "@tambo-effect/testing"
 *
 * const program = Effect.gen(function* () {
 *   const server = yield* TestServer
 *   return server.url
 * }).pipe(Effect.provide(TestServer.layer()))
 * ```
 *
 * @since 0.1.0
 * @category Context
 */
export const TestServer: TestServerTag = Object.assign(tag, {
  scoped,
  layer: (options?: TestServerOptions): Layer.Layer<TestServer, TestServerError> => Layer.scoped(tag, scoped(options))
})
