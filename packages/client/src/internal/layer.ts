/**
 * The client's options in core's terms: the Layer of the Tambo API
 * (`Tambo.layer`) or of an AG-UI agent (`agent.ts`). Core checks the
 * options as the Layer builds.
 *
 * @internal
 */
import * as Tambo from "@tambo-effect/core/Tambo"
import type * as Layer from "effect/Layer"
import type { TamboClientOptions } from "../TamboClient.js"
import type { ClientState, TamboStore } from "../Store.js"
import * as Agent from "./agent.js"
import * as HelperRun from "./helperRun.js"
import type { CoreError } from "./toClientError.js"

/** The Layer of the client's runtime, for the backend its options name. @internal */
export const layer = (
  options: TamboClientOptions,
  store: TamboStore<ClientState>
): Layer.Layer<Agent.Services, CoreError> =>
  options.agent === undefined ? tamboLayer(options, store) : agentLayer(options, options.agent, store)

/** The options both backends take alike. */
const common = (options: TamboClientOptions, store: TamboStore<ClientState>) => ({
  firstByteTimeout: options.firstByteTimeout,
  idleTimeout: options.idleTimeout,
  maxFrameBytes: options.maxFrameBytes,
  maxRetries: options.maxRetries,
  maxRetryAfter: options.maxRetryAfter,
  tools: options.tools,
  beforeRun: options.beforeRun,
  contextHelpers: HelperRun.allToCore(options.contextHelpers),
  onApproval: options.onApproval,
  // Held back: the client connects them when it starts.
  mcpServers: options.deferStart === true ? [] : options.mcpServers,
  resources: options.resources,
  listResources: options.listResources,
  getResource: options.getResource,
  mcpRoots: options.mcpRoots,
  mcpUrlElicitationHandler: options.mcpUrlElicitationHandler,
  store
})

const agentLayer = (
  options: TamboClientOptions,
  agent: NonNullable<TamboClientOptions["agent"]>,
  store: TamboStore<ClientState>
): Layer.Layer<Agent.Services, CoreError> => Agent.layer({ ...agent, given: options, ...common(options, store) })

const tamboLayer = (options: TamboClientOptions, store: TamboStore<ClientState>): Layer.Layer<Agent.Services, CoreError> =>
  Tambo.layer({
    ...common(options, store),
    // Missing (a JavaScript caller, an unset variable): core's `MissingApiKey` names the option.
    apiKey: options.apiKey ?? "",
    tamboUrl: options.tamboUrl,
    environment: options.environment,
    userKey: options.userKey,
    userToken: options.userToken,
    deferTokenExchange: options.deferStart,
    requestTimeout: options.requestTimeout,
    components: options.components,
    // Held back: the client follows it when it starts.
    tamboMcpServer: options.deferStart === true ? undefined : options.tamboMcpServer,
    autoGenerateThreadName: options.autoGenerateThreadName ?? true,
    autoGenerateNameThreshold: options.autoGenerateNameThreshold,
    reconcileAfterRun: options.reconcileAfterRun
  })
