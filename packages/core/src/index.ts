/**
 * `@tambo-effect/core`: the Effect-TS SDK for the Tambo AI API.
 *
 * @since 0.1.0
 */

/**
 * The public Effect API: runs as Streams, threads, tools, components, suggestions.
 *
 * @since 0.1.0
 * @category Modules
 */
export * as Tambo from "./Tambo.js"

/**
 * One `Tambo` service per user, for a backend acting for many users.
 *
 * @since 0.2.0
 * @category Modules
 */
export * as TamboUsers from "./TamboUsers.js"

/**
 * Where the Tambo API is and who is calling it.
 *
 * @since 0.1.0
 * @category Modules
 */
export * as TamboConfig from "./TamboConfig.js"

/**
 * Every call the SDK makes to the Tambo API.
 *
 * @since 0.1.0
 * @category Modules
 */
export * as TamboTransport from "./TamboTransport.js"

/**
 * Who the client acts for, and the credentials each request carries.
 *
 * @since 0.1.0
 * @category Modules
 */
export * as Auth from "./Auth.js"

/**
 * The client's state: every known thread, and which one is current.
 *
 * @since 0.1.0
 * @category Modules
 */
export * as ThreadStore from "./ThreadStore.js"

/**
 * The pure accumulator: client state and the reducer over run events.
 *
 * @since 0.1.0
 * @category Modules
 */
export * as ClientState from "./ClientState.js"

/**
 * Schemas of the AG-UI and Tambo events of a run, and the frame decoder.
 *
 * @since 0.1.0
 * @category Modules
 */
export * as Events from "./Events.js"

/**
 * The public thread, message and content shapes (compatible with `@tambo-ai/client`).
 *
 * @since 0.1.0
 * @category Modules
 */
export * as Types from "./Types.js"

/**
 * Tools and components: the `TamboTool` shape, `Tool.make`, schema conversion and validation.
 *
 * @since 0.1.0
 * @category Modules
 */
export * as Tool from "./Tool.js"

/**
 * The registered tools and components.
 *
 * @since 0.1.0
 * @category Modules
 */
export * as ToolRegistry from "./ToolRegistry.js"

/**
 * Runs pending tool calls: validated, concurrent, timed, once per call of a paused step.
 *
 * @since 0.1.0
 * @category Modules
 */
export * as ToolExecutor from "./ToolExecutor.js"

/**
 * The errors a caller of the SDK can act on.
 *
 * @since 0.1.0
 * @category Modules
 */
export * as TamboError from "./TamboError.js"

/**
 * Update strategies for streamed runs: which snapshots are published, and when.
 *
 * @since 0.1.0
 * @category Modules
 */
export * as SnapshotStrategy from "./SnapshotStrategy.js"

/**
 * Connections to MCP servers: their tools join the registry; elicitation and sampling handlers.
 *
 * @since 0.1.0
 * @category Modules
 */
export * as Mcp from "./Mcp.js"

/**
 * Speech to text through the API's transcription endpoint.
 *
 * @since 0.2.0
 * @category Modules
 */
export * as Transcription from "./Transcription.js"

/**
 * Tambo's run loop against any AG-UI agent: a transport over the agent's
 * endpoint and a `Tambo` layer with it.
 *
 * @since 0.2.0
 * @category Modules
 */
export * as AgUi from "./AgUi.js"
