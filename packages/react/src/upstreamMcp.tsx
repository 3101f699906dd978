/**
 * `@tambo-effect/react/mcp`: what `@tambo-ai/react/mcp` exports, by its
 * names and in its shapes, for code written against it: servers as
 * `{ ...info, key, serverType, client }` (or `connectionError`), prompts and
 * resources as `{ server, prompt }` / `{ server, resource }` entries under
 * prefixed names (`serverKey:name`, `serverKey:uri`), the elicitation as
 * `{ elicitation, resolveElicitation }`, and `TamboMcpProvider`.
 *
 * Underneath are the main entry's MCP hooks: `TamboProvider` connects the
 * servers of its `mcpServers` whether or not a `TamboMcpProvider` is
 * mounted, and these hooks work without one. New code can use the main
 * entry's hooks, which take server keys and give the client's MCP types.
 *
 * @since 0.2.0
 */
import type {
  ElicitationContextState,
  ListResourceItem,
  McpConnectionInfo,
  McpServerClient,
  NormalizedMcpServerInfo,
  ServerType,
  TamboClient,
  TamboElicitationRequest,
  TamboElicitationResponse
} from "@tambo-effect/client"
import type {
  ElicitationRequest,
  ElicitationResult,
  HandlerResult,
  McpPromptResult,
  McpPromptSpec,
  McpRequestContext,
  McpResourceContents,
  SamplingHandler,
  SamplingRequest,
  SamplingResult
} from "@tambo-effect/core/Mcp"
import { REGISTRY_SERVER_KEY, TAMBO_SERVER_NAME } from "@tambo-effect/core/Mcp"
import { type ReactNode, useCallback, useEffect, useMemo, useRef, useSyncExternalStore } from "react"
import { useTamboContext } from "./internal/context.js"
import * as Hooks from "./mcp.js"
import type { QueryState } from "./types.js"

export {
  /**
   * @since 0.2.0
   * @category Constants
   */
  MCPTransport
} from "@tambo-effect/client"
// The client's, each documented where it is declared.
export type {
  /**
   * @since 0.2.0
   * @category Models
   */
  ElicitationRequestedSchema,
  /**
   * @since 0.2.0
   * @category Models
   */
  ListResourceItem,
  /**
   * @since 0.2.0
   * @category Models
   */
  MCPElicitationHandler,
  /**
   * @since 0.2.0
   * @category Models
   */
  MCPHandlers,
  /**
   * @since 0.2.0
   * @category Models
   */
  MCPSamplingHandler,
  /**
   * @since 0.2.0
   * @category Models
   */
  McpServerClient,
  /**
   * @since 0.2.0
   * @category Models
   */
  McpServerInfo,
  /**
   * @since 0.2.0
   * @category Models
   */
  NormalizedMcpServerInfo,
  /**
   * @since 0.2.0
   * @category Models
   */
  PrimitiveSchemaDefinition,
  /**
   * @since 0.2.0
   * @category Models
   */
  TamboElicitationRequest,
  /**
   * @since 0.2.0
   * @category Models
   */
  TamboElicitationResponse
} from "@tambo-effect/client"

// ---------------------------------------------------------------------------
// Servers
// ---------------------------------------------------------------------------

/**
 * A server as the hooks of this entry show it: its settings, with its
 * transport and server key resolved, the key of its connection, and
 * whether it is one of the app's (`browser-side`) or Tambo's own
 * (`tambo-internal`).
 *
 * @since 0.2.0
 * @category Models
 */
export interface McpServerConfig extends NormalizedMcpServerInfo {
  /** The key of its connection (URL, transport and headers). */
  readonly key: string
  readonly serverType: ServerType
}

/**
 * A connected server, with its `client` (the client's `McpServerClient`:
 * `listTools()`, `callTool()`, `getServerVersion()`,
 * `getServerCapabilities()`, `getInstructions()`,
 * `updateElicitationHandler()`, `updateSamplingHandler()`, `close()`).
 *
 * @since 0.2.0
 * @category Models
 */
export interface ConnectedMcpServer extends McpServerConfig {
  readonly client: McpServerClient
}

/**
 * A server that could not be connected, with the reason (an `McpError`).
 *
 * @since 0.2.0
 * @category Models
 */
export interface FailedMcpServer extends McpServerConfig {
  readonly client?: never
  readonly connectionError: Error
}

/**
 * A connected or a failed server.
 *
 * @since 0.2.0
 * @category Models
 */
export type McpServer = ConnectedMcpServer | FailedMcpServer

/** The shown form of each connection, kept while the connection object is the same. */
const shown = new WeakMap<McpConnectionInfo, McpServer>()

/** A server's settings as this entry shows them, from a connection or a request's context (both carry these). */
const configOf = ({ key, server, serverKey }: Pick<McpConnectionInfo, "key" | "server" | "serverKey">): McpServerConfig => ({
  ...server,
  transport: server.transport ?? "http",
  serverKey,
  key,
  serverType: server.name === TAMBO_SERVER_NAME ? "tambo-internal" : "browser-side"
})

const serverOf = (connection: McpConnectionInfo): McpServer | undefined => {
  const known = shown.get(connection)
  if (known !== undefined) return known
  let server: McpServer
  if (connection.status === "connected" && connection.client !== undefined) {
    server = { ...configOf(connection), client: connection.client }
  } else if (connection.status === "failed" && connection.error !== undefined) {
    server = { ...configOf(connection), connectionError: connection.error }
  } else {
    // Connecting, or reconnecting after a drop: shown once it is connected (or has failed).
    return undefined
  }
  shown.set(connection, server)
  return server
}

/**
 * The MCP servers of the provider, connected or failed (one connecting, or
 * reconnecting after a drop, is left out until it is connected again):
 * those of its `mcpServers`, those a `TamboRegistryProvider` adds, and
 * Tambo's own while a `TamboMcpProvider` (or the `tamboMcpServer` option)
 * connects it. A connected server's `client` calls its tools.
 *
 * @example
 * ```tsx
 * const servers = useTamboMcpServers()
 * return <ul>{servers.map((s) => <li key={s.key}>{s.serverKey}: {s.client ? "connected" : s.connectionError.message}</li>)}</ul>
 * ```
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useTamboMcpServers = (): Array<McpServer> => {
  const { handle } = useTamboContext("useTamboMcpServers")
  const connections = useSyncExternalStore(handle.subscribeToMcpClients, handle.getMcpClients, handle.getMcpClients)
  return useMemo(() => Object.values(connections).flatMap((connection) => serverOf(connection) ?? []), [connections])
}

/** The connected servers by server key. */
const useConnectedByKey = (): ReadonlyMap<string, ConnectedMcpServer> => {
  const servers = useTamboMcpServers()
  return useMemo(
    () => new Map(servers.flatMap((server) => (server.client === undefined ? [] : [[server.serverKey, server] as const]))),
    [servers]
  )
}

// ---------------------------------------------------------------------------
// Prompts and resources
// ---------------------------------------------------------------------------

/**
 * What a list hook of this entry returns: the fields of the main entry's
 * query state, with `data` always an array, `error` `null` without one, and
 * `errors` (at most the one).
 *
 * @since 0.2.0
 * @category Models
 */
export interface McpListQuery<T> extends Omit<QueryState<ReadonlyArray<T>>, "data" | "error" | "refetch"> {
  readonly data: Array<T>
  readonly error: Error | null
  readonly errors: Array<Error>
  /** Always `false`: reads are not paused offline. */
  readonly isPaused: boolean
  /** Reads again; resolves once the list was read. */
  readonly refetch: () => Promise<void>
}

/**
 * What a hook of this entry that reads one thing returns: the main entry's
 * query state, with `error` `null` without one.
 *
 * @since 0.2.0
 * @category Models
 */
export interface McpQuery<A> extends Omit<QueryState<A>, "error"> {
  readonly error: Error | null
}

const listQuery = <A, T>(state: QueryState<ReadonlyArray<A>>, data: Array<T>): McpListQuery<T> => {
  const { data: _data, error, refetch, ...rest } = state
  return {
    ...rest,
    data,
    error: error ?? null,
    errors: error === undefined ? [] : [error],
    isPaused: false,
    refetch
  }
}

const query = <A,>(state: QueryState<A>): McpQuery<A> => ({ ...state, error: state.error ?? null })

/** Splits `serverKey:rest` (server keys have no `:`). */
const splitPrefixed = (prefixed: string | undefined): { readonly serverKey: string; readonly rest: string } | undefined => {
  const colon = prefixed?.indexOf(":") ?? -1
  return colon <= 0 ? undefined : { serverKey: prefixed!.slice(0, colon), rest: prefixed!.slice(colon + 1) }
}

/**
 * A prompt of a connected server, as listed.
 *
 * @since 0.2.0
 * @category Models
 */
export type ListPromptItem = McpPromptSpec

/**
 * A prompt and its server. The prompt's `name` is prefixed with the
 * server's key (`serverKey:name`), as `useTamboMcpPrompt` takes it.
 *
 * @since 0.2.0
 * @category Models
 */
export interface ListPromptEntry {
  readonly server: ConnectedMcpServer
  readonly prompt: ListPromptItem
}

/**
 * The prompts of every connected server, each with its server, named
 * `serverKey:name`; with `search`, those whose name contains it (any case).
 * Read again when a server connects or leaves, or says its prompts changed.
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useTamboMcpPromptList = (search?: string): McpListQuery<ListPromptEntry> => {
  const state = Hooks.useTamboMcpPromptList()
  const servers = useConnectedByKey()
  const entries = useMemo(() => {
    const needle = search?.toLowerCase() ?? ""
    return (state.data ?? []).flatMap(({ serverKey, ...prompt }): Array<ListPromptEntry> => {
      const server = servers.get(serverKey)
      const name = `${serverKey}:${prompt.name}`
      return server === undefined || !name.toLowerCase().includes(needle) ? [] : [{ server, prompt: { ...prompt, name } }]
    })
  }, [state.data, servers, search])
  return listQuery(state, entries)
}

/**
 * A prompt fetched with its arguments, by its prefixed name
 * (`serverKey:name`, as `useTamboMcpPromptList` names it); nothing is read
 * while the name is `undefined` or names no connected server.
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useTamboMcpPrompt = (
  promptName: string | undefined,
  args: Readonly<Record<string, string>> = {}
): McpQuery<McpPromptResult> => {
  const servers = useConnectedByKey()
  const target = splitPrefixed(promptName)
  const known = target !== undefined && servers.has(target.serverKey)
  return query(Hooks.useTamboMcpPrompt(known ? target.serverKey : undefined, known ? target.rest : undefined, args))
}

/**
 * One of the app's own resources (`server: null`).
 *
 * @since 0.2.0
 * @category Models
 */
export interface RegistryResourceEntry {
  readonly server: null
  readonly resource: ListResourceItem
}

/**
 * A resource of a connected server.
 *
 * @since 0.2.0
 * @category Models
 */
export interface McpResourceEntry {
  readonly server: ConnectedMcpServer
  readonly resource: ListResourceItem
}

/**
 * A resource and where it is. Its `uri` is prefixed with the server's key
 * (`serverKey:uri`; `registry:uri` for the app's own), as
 * `useTamboMcpResource` takes it.
 *
 * @since 0.2.0
 * @category Models
 */
export type ListResourceEntry = RegistryResourceEntry | McpResourceEntry

/**
 * Whether a resource is a server's (not the app's own).
 *
 * @since 0.2.0
 * @category Guards
 */
export const isMcpResourceEntry = (entry: ListResourceEntry): entry is McpResourceEntry => entry.server !== null

/**
 * The app's own resources, then those of every connected server, each with
 * its server (`null` for the app's), its `uri` prefixed (`registry:uri`,
 * `serverKey:uri`); with `search`, those whose name or URI contains it (the
 * app's `listResources` is given it). Read again when a server connects or
 * leaves, or says its resources changed.
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useTamboMcpResourceList = (search?: string): McpListQuery<ListResourceEntry> => {
  const state = Hooks.useTamboMcpResourceList(search)
  const servers = useConnectedByKey()
  const entries = useMemo(() => {
    const all = (state.data ?? []).flatMap(({ serverKey, ...resource }): Array<ListResourceEntry> => {
      const prefixed = { ...resource, uri: `${serverKey}:${resource.uri}` }
      if (serverKey === REGISTRY_SERVER_KEY) return [{ server: null, resource: prefixed }]
      const server = servers.get(serverKey)
      return server === undefined ? [] : [{ server, resource: prefixed }]
    })
    // The app's own first, as upstream lists them.
    return [...all.filter((entry) => entry.server === null), ...all.filter(isMcpResourceEntry)]
  }, [state.data, servers])
  return listQuery(state, entries)
}

/**
 * A resource's contents, by its prefixed URI (`serverKey:uri`, or
 * `registry:uri` for the app's own), kept up to date as the main entry's
 * `useTamboMcpResource` keeps them; nothing is read while the URI is
 * `undefined` or names no connected server.
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useTamboMcpResource = (resourceUri: string | undefined): McpQuery<McpResourceContents> => {
  const servers = useConnectedByKey()
  const target = splitPrefixed(resourceUri)
  const known = target !== undefined && (target.serverKey === REGISTRY_SERVER_KEY || servers.has(target.serverKey))
  return query(Hooks.useTamboMcpResource(known ? target.serverKey : undefined, known ? target.rest : undefined))
}

// ---------------------------------------------------------------------------
// Elicitation
// ---------------------------------------------------------------------------

/**
 * The oldest elicitation waiting for the user (`message`, `requestedSchema`,
 * and `signal`, aborted when the server gives up on it), and
 * `resolveElicitation`, which answers it; both `null` while none waits. The
 * provider keeps them in a queue, as the main entry's
 * `useTamboMcpElicitation` shows them.
 *
 * @example
 * ```tsx
 * const { elicitation, resolveElicitation } = useTamboMcpElicitation()
 * if (!elicitation) return null
 * return <button onClick={() => resolveElicitation?.({ action: "accept", content: { ok: true } })}>{elicitation.message}</button>
 * ```
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useTamboMcpElicitation = (): ElicitationContextState => {
  const { elicitation: store } = useTamboContext("useTamboMcpElicitation")
  const pending = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot)
  const resolve = useCallback((response: TamboElicitationResponse) => {
    // Only the request it was given for: a later one waits for its own answer.
    if (store.getSnapshot() === pending) store.respond(response)
  }, [store, pending])
  return useMemo((): ElicitationContextState => {
    if (pending === undefined) return { elicitation: null, resolveElicitation: null }
    const elicitation: TamboElicitationRequest = {
      message: pending.message,
      requestedSchema: pending.requestedSchema,
      signal: pending.signal
    }
    return { elicitation, resolveElicitation: resolve }
  }, [pending, resolve])
}

/**
 * {@link useTamboMcpElicitation}, by the name `@tambo-ai/react` used first.
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useTamboElicitationContext: () => ElicitationContextState = useTamboMcpElicitation

// ---------------------------------------------------------------------------
// The provider
// ---------------------------------------------------------------------------

/**
 * Handlers for the requests of every server without handlers of its own,
 * told which server asks.
 *
 * @since 0.2.0
 * @category Models
 */
export interface ProviderMCPHandlers {
  readonly elicitation?:
    | ((request: ElicitationRequest, extra: McpRequestContext, serverInfo: McpServerConfig) => HandlerResult<ElicitationResult>)
    | undefined
  readonly sampling?:
    | ((request: SamplingRequest, extra: McpRequestContext, serverInfo: McpServerConfig) => HandlerResult<SamplingResult>)
    | undefined
}

/**
 * The sampling handlers of each client's mounted `TamboMcpProvider`s, in the order they mounted,
 * and the client's handler before the first of them: a provider that leaves hands over to the
 * latest one still mounted (which may have mounted before it left), never to one gone.
 */
const samplingProviders = new WeakMap<TamboClient, {
  readonly before: SamplingHandler | undefined
  readonly mounted: Array<SamplingHandler>
}>()

/**
 * For code written against `@tambo-ai/react`, where this provider connects
 * the MCP servers: here `TamboProvider` connects them itself, and this
 * provider adds, for as long as it is mounted:
 *
 * - Tambo's own MCP server (`<tamboUrl>/mcp`: the prompts and resources of
 *   the project's MCP servers), with an MCP access token for the current
 *   thread, or for `contextKey` while no thread is current (the provider's
 *   `tamboMcpServer` option does the same for the client's life);
 * - `handlers.elicitation`, which answers the elicitations of the servers
 *   without handlers of their own instead of the queue
 *   `useTamboMcpElicitation` shows;
 * - `handlers.sampling`, for their sampling requests. A server is told the
 *   client samples when it connects: mount this provider with the
 *   `TamboProvider` for its servers to be asked.
 *
 * A handler is told the request, its context (`signal`) and the server
 * that asks. Of several providers mounted at once, the one mounted last
 * answers; when it unmounts, the latest of the others still mounted does
 * again. An AG-UI agent has no MCP server of Tambo's: only the handlers
 * apply.
 *
 * @example
 * ```tsx
 * <TamboProvider apiKey={apiKey} userKey={userKey} mcpServers={servers}>
 *   <TamboMcpProvider contextKey="support-page">
 *     <Chat />
 *   </TamboMcpProvider>
 * </TamboProvider>
 * ```
 *
 * @since 0.2.0
 * @category Components
 */
export function TamboMcpProvider({ children, contextKey, handlers }: {
  readonly handlers?: ProviderMCPHandlers | undefined
  readonly contextKey?: string | undefined
  readonly children?: ReactNode
}): ReactNode {
  const { elicitation: store, handle } = useTamboContext("TamboMcpProvider")

  useEffect(() => {
    const client = handle.client()
    return client.backend === "tambo" ? client.followTamboMcpServer({ contextKey }) : undefined
  }, [handle, contextKey])

  // The latest handlers answer; installing them again only when one comes or goes.
  const latest = useRef(handlers)
  latest.current = handlers
  const elicits = handlers?.elicitation !== undefined
  const samples = handlers?.sampling !== undefined

  useEffect(() => {
    if (!elicits) return
    return store.override((request, context) =>
      latest.current?.elicitation !== undefined
        ? latest.current.elicitation(request, context, configOf(context))
        : { action: "decline" })
  }, [store, elicits])

  useEffect(() => {
    if (!samples) return
    const client = handle.client()
    const sampling = (request: SamplingRequest, context: McpRequestContext) => {
      const handler = latest.current?.sampling
      if (handler === undefined) throw new Error("No sampling handler is set")
      return handler(request, context, configOf(context))
    }
    const providers = samplingProviders.get(client) ?? { before: client.getMcpSamplingHandler(), mounted: [] }
    samplingProviders.set(client, providers)
    providers.mounted.push(sampling)
    client.setMcpSamplingHandler(sampling)
    return () => {
      providers.mounted.splice(providers.mounted.indexOf(sampling), 1)
      if (providers.mounted.length === 0) samplingProviders.delete(client)
      try {
        // The provider mounted last of those still mounted answers; with none, what the client had before them.
        if (client.getMcpSamplingHandler() === sampling) {
          client.setMcpSamplingHandler(providers.mounted.at(-1) ?? providers.before)
        }
      } catch {
        // The client is already destroyed: nothing to undo.
      }
    }
  }, [handle, samples])

  return children
}
