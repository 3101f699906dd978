/**
 * The `Mcp` service, wired from its parts: the shared state (env.ts), the
 * requests to servers (requests.ts), their tools in the registry (tools.ts),
 * OAuth (oauth.ts), the life of a connection (connection.ts), the set of
 * connections (connections.ts), prompts and resources (resources.ts).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Auth from "../../Auth.js"
import type { MakeOptions, Mcp, McpRoot } from "../../Mcp.js"
import { ConfigError } from "../../TamboError.js"
import { TamboTransport } from "../../TamboTransport.js"
import { ToolRegistry } from "../../ToolRegistry.js"
import * as Registry from "../toolRegistry.js"
import * as Connection from "./connection.js"
import * as Connections from "./connections.js"
import * as Env from "./env.js"
import * as Logging from "./logging.js"
import * as OAuth from "./oauth.js"
import * as Requests from "./requests.js"
import * as Resources from "./resources.js"
import * as Tools from "./tools.js"

/** What the public module shows of the parts. @internal */
export { uniqueKey } from "./connections.js"
/** @internal */
export { REGISTRY_SERVER_KEY } from "./resources.js"
/** @internal */
export { deriveServerKey } from "./support.js"

/** An MCP access token for Tambo's own MCP server, for a context key or a thread. */
const tamboMcpToken: Effect.Effect<Mcp.Service["getMcpToken"], never, TamboTransport | Auth.Auth> = Effect.gen(function*() {
  const transport = yield* TamboTransport
  const auth = yield* Auth.Auth
  return (contextKey, threadId) =>
    Auth.withCredentials(auth, (credentials) => {
      // A sessionless token needs a context key: a user key is one.
      const key = contextKey ?? (threadId === undefined && credentials._tag === "UserKey"
        ? credentials.userKey
        : undefined)
      return transport.getMcpToken(credentials, {
        ...(key === undefined ? {} : { contextKey: key }),
        ...(threadId === undefined ? {} : { threadId })
      })
    }).pipe(Effect.withSpan("Mcp.getMcpToken"))
})

/** A standalone service has no Tambo API, so no token of Tambo's MCP server to get. */
const noTamboApi: Mcp.Service["getMcpToken"] = () =>
  Effect.fail(
    new ConfigError({
      reason: "MissingApiKey",
      message: "This MCP service is standalone (Mcp.makeStandalone): it has no Tambo API to get an MCP token from"
    })
  )

/**
 * @internal
 * @since 0.2.0
 * @category Constructors
 */
export const makeWith = (
  options: MakeOptions = {}
): Effect.Effect<Mcp.Service, ConfigError, ToolRegistry | TamboTransport | Auth.Auth | Scope.Scope> =>
  Effect.flatMap(tamboMcpToken, (getMcpToken) => makeServers(options, getMcpToken))

/**
 * @internal
 * @since 0.2.0
 * @category Constructors
 */
export const makeStandalone = (options: MakeOptions = {}): Effect.Effect<Mcp.Service, ConfigError, Scope.Scope> =>
  Effect.flatMap(Registry.make, (registry) =>
    Effect.provideService(makeServers(options, noTamboApi), ToolRegistry, registry))

/**
 * Sets the roots, then tells each connected server that was offered roots
 * that they changed (a server that cannot be told is let be: it asks again
 * when it next needs them). A session still opening is told when it is
 * installed (`Connection.install`), if they changed since it opened.
 */
const setRoots = (env: Env.Env, roots: ReadonlyArray<McpRoot> | undefined): Effect.Effect<void> =>
  Ref.update(env.handlers, (current) => ({ ...current, roots: roots === undefined ? undefined : [...roots] })).pipe(
    Effect.zipRight(Effect.suspend(() =>
      Effect.forEach(
        Array.from(env.entries.values()).flatMap((entry) =>
          entry.status === "connected" && entry.session?.announcesRoots === true ? [entry.session] : []
        ),
        (session) => Effect.promise(() => session.sendRootsListChanged().catch(() => undefined)),
        { concurrency: "unbounded", discard: true }
      )
    )),
    Effect.withSpan("Mcp.setRoots")
  )

/** The service over the registry of the context, with the given way to get Tambo's MCP tokens. */
const makeServers = (
  options: MakeOptions,
  getMcpToken: Mcp.Service["getMcpToken"]
): Effect.Effect<Mcp.Service, ConfigError, ToolRegistry | Scope.Scope> =>
  Effect.gen(function*() {
    const env = yield* Env.make(options)
    // A request that finds its server gone drops the connection, which the
    // connection's life (below) owns, and a handle disconnects its own connection, which the set
    // of connections owns: the references back.
    const requests = Requests.make(
      env,
      (entry, session, error) => connection.markDropped(entry, session, error),
      (entry) => connections.disconnectEntry(entry)
    )
    const tools = Tools.make(env, requests.callForModel)
    const logging = Logging.make(env, requests)
    const connection = Connection.make(env, { oauth: OAuth.make(env), requests, logging, syncTools: tools.sync })
    const connections = Connections.make(env, {
      establish: connection.establish,
      syncTools: tools.sync,
      reregisterTools: tools.reregister,
      applyLogLevel: logging.apply
    })

    // Registered last, so it runs first when the layer closes: the
    // connections close (and their tools leave the registry) before the
    // fibers and the registry go.
    yield* Effect.addFinalizer(() => connections.closeAll)

    const resources = Resources.make({
      connected: () =>
        Array.from(env.entries.values()).flatMap((entry) =>
          entry.status === "connected" && entry.session !== undefined ? [{ entry, session: entry.session }] : []
        ),
      requestResent: requests.requestResent,
      options
    })

    // Nothing closes the service while it is built: `start` cannot fail here.
    for (const server of options.servers ?? []) yield* Effect.orDie(connections.start(server))

    return {
      connectMcpServer: connections.connect,
      disconnectMcpServer: connections.disconnect,
      updateMcpServerHandlers: connections.updateHandlers,
      getMcpClients: SubscriptionRef.get(env.connections),
      changes: env.connections.changes,
      setElicitationHandler: (handler) => Ref.update(env.handlers, (current) => ({ ...current, elicitation: handler })),
      setSamplingHandler: (handler) => Ref.update(env.handlers, (current) => ({ ...current, sampling: handler })),
      setUrlElicitationHandler: (handler) =>
        Ref.update(env.handlers, (current) => ({ ...current, urlElicitation: handler })),
      elicitationCompletions: Stream.fromPubSub(env.elicitationCompletions),
      getMcpToken,
      setMcpLogLevel: logging.setMcpLogLevel,
      logs: Stream.fromPubSub(env.logs),
      toolProgress: Stream.fromPubSub(env.toolProgress),
      currentToolProgress: (toolCallId) => Effect.sync(() => Option.fromNullable(env.callsInProgress.get(toolCallId))),
      setMcpRoots: (roots) => setRoots(env, roots),
      ...resources
    }
  })
