/**
 * `@tambo-effect/testing`: a scripted Tambo v1 API on loopback, for testing Tambo apps through
 * real HTTP.
 *
 * @since 0.1.0
 */

/**
 * The script DSL: steps (`text`, `toolCall`, `component`, `runError`, ...), the request a script
 * function receives, and the default `weatherAssistant` script.
 *
 * @since 0.1.0
 * @category Scripts
 */
export * as Script from "./Script.js"

/**
 * A loopback server that answers with scripted faults (silence, stalls, a
 * status with headers, redirects, huge frames, raw bytes), to test an app
 * against a broken or hostile server.
 *
 * @since 0.2.0
 * @category Hostile server
 */
export * as HostileServer from "./HostileServer.js"

/**
 * A scripted AG-UI agent on loopback: takes a `RunAgentInput` POST, validates
 * and records it, and answers with an SSE stream of AG-UI events (text,
 * reasoning, tool calls, state, snapshots, steps, activities, errors, drops).
 *
 * @since 0.2.0
 * @category AG-UI agent
 */
export * as AgUiAgent from "./AgUiAgent.js"

/**
 * A loopback proxy in front of a server that passes everything through, except the requests,
 * responses or response bodies a test holds until it releases them, to make two things overlap
 * deterministically.
 *
 * @since 0.2.0
 * @category Holding proxy
 */
export * as HoldingProxy from "./HoldingProxy.js"

/**
 * The wire shapes of threads, messages, content blocks and requests.
 *
 * @since 0.1.0
 * @category Models
 */
export type * as Wire from "./Wire.js"

export {
  /**
   * @since 0.1.0
   * @category Models
   */
  type McpEndpointContext,
  /**
   * @since 0.2.0
   * @category Models
   */
  type RecordedAudio,
  /**
   * @since 0.1.0
   * @category Models
   */
  type RecordedCancel,
  /**
   * @since 0.1.0
   * @category Models
   */
  type RecordedMcpRequest,
  /**
   * @since 0.1.0
   * @category Models
   */
  type RecordedRequest,
  /**
   * @since 0.1.0
   * @category Models
   */
  type SuggestionGenerator,
  /**
   * @since 0.2.0
   * @category Models
   */
  type GeneratedSuggestion,
  /**
   * @since 0.1.0
   * @category Constructors
   */
  startTestServer,
  /**
   * @since 0.1.0
   * @category Context
   */
  TestServer,
  /**
   * @since 0.1.0
   * @category Errors
   */
  TestServerError,
  /**
   * @since 0.1.0
   * @category Models
   */
  type TestServerOptions,
  /**
   * @since 0.2.0
   * @category Models
   */
  type Transcriber,
  /**
   * @since 0.1.0
   * @category Context
   */
  type TestServerTag,
  /**
   * @since 0.1.0
   * @category Models
   */
  type TestServerThreads,
  /**
   * @since 0.1.0
   * @category Models
   */
  type ThreadNamer,
  /**
   * @since 0.1.0
   * @category Models
   */
  type ThreadSeed
} from "./TestServer.js"
