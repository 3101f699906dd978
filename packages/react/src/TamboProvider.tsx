/**
 * `TamboProvider`: holds one `TamboClient` for the subtree, and the
 * generative components it can render.
 *
 * @since 0.1.0
 */
import {
  type ClientState,
  type ContextHelperFn,
  createInitialState,
  InMemoryStore,
  McpError,
  TamboClient,
  type TamboClientOptions,
  type TamboStore,
  type ToolDefinition
} from "@tambo-effect/client"
import { type McpServerInfo, uniqueKey, type UrlElicitationHandler } from "@tambo-effect/core/Mcp"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import { type ReactNode, useCallback, useEffect, useId, useMemo, useRef, useState } from "react"
import { authStateBefore, ClientHandle, useHandleClient, useRetainedHandle } from "./internal/clientHandle.js"
import { useFollowShownRun } from "./internal/followShownRun.js"
import type { NotifyMode } from "./types.js"
import { type Contribution, TamboContext, type TamboContextValue, useTamboContext } from "./internal/context.js"
import { ElicitationStore, UrlElicitationStore } from "./internal/elicitationStore.js"
import { useInputStore } from "./internal/inputStore.js"
import { InteractableStore } from "./internal/interactableStore.js"
import { MessageRenderer } from "./internal/messageRenderer.js"
import { ComponentRenderer } from "./TamboComponentRenderer.js"
import type { TamboComponent, TamboConfig } from "./types.js"

/**
 * What every provider takes, whether it creates its client or is given one.
 *
 * @since 0.1.0
 * @category Models
 */
export interface TamboProviderBaseProps {
  readonly children?: ReactNode
  /** Generative components: sent to the model, and rendered in messages. */
  readonly components?: ReadonlyArray<TamboComponent> | undefined
  /** Client-side tools the model may call; registered again when the array changes. */
  readonly tools?: ReadonlyArray<ToolDefinition> | undefined
  /** Context sent with every run as `additionalContext[name]`; kept in sync with the client. */
  readonly contextHelpers?: Readonly<Record<string, ContextHelperFn>> | undefined
  /**
   * How often store changes reach React while a run streams: at most once
   * per animation frame (default), or at every client notification (at most
   * once per microtask). A change keeps the client.
   */
  readonly updates?: NotifyMode | undefined
}

/**
 * The provider's props: the options of the `TamboClient` it creates, or an
 * existing `client` (then the connection options are not accepted).
 *
 * @since 0.1.0
 * @category Models
 */
export type TamboProviderProps =
  & TamboProviderBaseProps
  & (
    | ({ readonly client: TamboClient } & { readonly [K in ConnectionKey]?: never })
    | (Omit<TamboClientOptions, "tools" | "components" | "contextHelpers"> & { readonly client?: undefined })
  )

type ConnectionKey = "apiKey" | "tamboUrl" | "environment" | "userKey" | "userToken" | "agent"

/**
 * Makes a Tambo client available to the hooks below it.
 *
 * Given the client's options (`apiKey`, `userKey` or `userToken`, `tamboUrl`,
 * `tools`, `mcpServers`, ...), it creates one `TamboClient` when first
 * needed and destroys it when unmounted; a change of `apiKey`, `tamboUrl`,
 * `environment` or `userKey` replaces it by a new one. A new `userToken`
 * (identity providers rotate them, about hourly) does not: the client takes
 * it in place (`client.setUserToken`), so runs in flight go on and threads
 * stay; only going from a `userToken` to none or back replaces the client.
 * To sign another user in, give the provider a new `key`: a new client,
 * whose store holds none of the last user's threads.
 * With `agent={{ url, headers? }}` instead of an API key and a user, the
 * client talks to that AG-UI agent (see the client's `AgentClientOptions`;
 * Tambo-only calls reject with a `NotSupportedError`); a change of
 * `agent.url` replaces it. Other options (the agent's `headers` too) are
 * read when the client is created. Given a `client`, it
 * uses it and leaves its lifetime to the app.
 *
 * `tools`, `components` and `contextHelpers` may change at any time: what
 * joined them (or changed) is registered with the client, and what left
 * them is withdrawn (but a tool the app registered since under the same
 * name, which a tool the provider already had does not replace).
 *
 * Safe under StrictMode (its double mount keeps one client) and in server
 * rendering (rendering creates no client; hooks see the initial state). A
 * client a render asked for (`useTamboClient()`) that never commits (a
 * server render, a render React throws away) is destroyed a microtask later.
 *
 * @example
 * ```tsx
 * <TamboProvider apiKey={apiKey} userKey="user-1" components={[WeatherCard]} tools={[getWeather]}>
 *   <Chat />
 * </TamboProvider>
 * // Any AG-UI agent: no API key, no user.
 * <TamboProvider agent={{ url: "http://localhost:8000/agent" }} tools={[getWeather]}>
 *   <Chat />
 * </TamboProvider>
 * ```
 *
 * @since 0.1.0
 * @category Components
 */
export function TamboProvider(props: TamboProviderProps): ReactNode {
  const { children, updates = "animationFrame" } = props
  // Components registered at runtime (`useTambo().registerComponent`) and what the registries
  // mounted below contribute join the props' own; of the same name, the props' wins, then a
  // registry's, then a runtime one.
  const [registered, setRegistered] = useState<ReadonlyArray<TamboComponent>>([])
  const registerComponent = useCallback((component: TamboComponent) => {
    setRegistered((previous) => [...previous.filter((c) => c.name !== component.name), component])
  }, [])
  const [contributions, setContributions] = useState<ReadonlyMap<string, Contribution>>(new Map())
  const contribute = useCallback((id: string, contribution: Contribution | undefined) => {
    setContributions((previous) => {
      const next = new Map(previous)
      if (contribution === undefined) next.delete(id)
      else next.set(id, contribution)
      return next
    })
  }, [])
  const contributed = useMemo(() => [...contributions.values()], [contributions])
  const all = useMemo(
    () => byName([...(props.components ?? []), ...contributed.flatMap((c) => c.components ?? []), ...registered]),
    [props.components, contributed, registered]
  )
  const components = useStableComponents(all)
  const contextHelpers = useMemo(
    () => contributed.length === 0
      ? props.contextHelpers
      : Object.assign({}, ...contributed.map((c) => c.contextHelpers ?? {}), props.contextHelpers) as Readonly<Record<string, ContextHelperFn>>,
    [props.contextHelpers, contributed]
  )
  const optionsRef = useRef(props)
  optionsRef.current = props

  const given = props.client
  const { apiKey, tamboUrl, environment, userKey, userToken } = props.client === undefined
    ? props
    : { apiKey: undefined, tamboUrl: undefined, environment: undefined, userKey: undefined, userToken: undefined }
  // The url, not the object: an inline `agent={{ url }}` is a new object at every render.
  const agentUrl = props.client === undefined ? props.agent?.url : undefined

  const hasUserToken = userToken !== undefined
  // Before the client: a client the provider creates takes its URL elicitations from its first connections.
  const [urlElicitation] = useState(() => new UrlElicitationStore())
  // `updates` is not among the deps: how changes reach React is no reason for a new client.
  const handle = useMemo(
    () => {
      // The conversation outlives a client: one destroyed while its tree was hidden (`<Activity>`,
      // a router keeping a page it left) is made again, on the same state, when the tree shows.
      if (given !== undefined) return new ClientHandle(given, updates)
      const store = storeOf(optionsRef.current) ?? new InMemoryStore(createInitialState())
      return new ClientHandle(
        () => createClient(optionsRef.current, urlElicitation.handler, store),
        updates,
        store,
        authStateBefore(optionsRef.current)
      )
    },
    [given, apiKey, tamboUrl, environment, userKey, hasUserToken, agentUrl]
  )
  useEffect(() => {
    handle.notifyMode = updates
  }, [handle, updates])
  // In the layout phase: a client one of the children's renders asked for is kept from the commit on.
  useRetainedHandle(handle)
  // A client created meanwhile already has the latest token: then this changes nothing.
  useEffect(() => {
    if (given === undefined && userToken !== undefined) handle.client().setUserToken(userToken)
  }, [handle, given, userToken])

  // Each tool is registered when it joins (or changes), not at every new array (an inline prop, a
  // registry unmounting): one the app registered since under its name stays the client's. What left
  // the props is withdrawn, so the model can no longer call a tool the app took away.
  const allTools = useMemo(
    () =>
      byName([
        ...(props.tools ?? []),
        ...contributed.flatMap((c) => c.tools ?? []),
        ...Array.from(components.values(), (c) => c.associatedTools ?? []).flat()
      ]),
    [props.tools, contributed, components]
  )
  // By name, the tool the provider registered: one the app registered since under that name
  // (`useTambo().registerTool`) is the app's, and stays when the props drop the name.
  const registeredTools = useRef<ReadonlyMap<string, ToolDefinition>>(new Map())
  useEffect(() => {
    const client = handle.liveClient()
    if (client === undefined) return
    const names = new Set(allTools.map((tool) => tool.name))
    const current = registeredTools.current.size === 0 ? {} : client.getTools()
    for (const [name, tool] of registeredTools.current) {
      if (!names.has(name) && current[name] === tool) client.unregisterTool(name)
    }
    const joined = allTools.filter((tool) => registeredTools.current.get(tool.name) !== tool)
    if (joined.length > 0) client.registerTools(joined)
    // A client made when the tree showed again: the app's own tools, as the last one held them.
    const appTools = handle.takeAppTools()
    if (appTools.length > 0) client.registerTools(appTools)
    registeredTools.current = new Map(allTools.map((tool) => [tool.name, tool]))
  }, [handle, allTools])
  const registeredComponents = useRef<ReadonlySet<string>>(new Set())
  useEffect(() => {
    const client = handle.liveClient()
    if (client === undefined) return
    for (const name of registeredComponents.current) if (!components.has(name)) client.unregisterComponent(name)
    for (const component of components.values()) client.registerComponent(availableComponent(component))
    registeredComponents.current = new Set(components.keys())
  }, [handle, components])

  // Before the context helpers: a `contextHelpers.interactables` of the app's replaces the built-in one.
  const [interactables] = useState(() => new InteractableStore())
  useEffect(() => {
    const client = handle.liveClient()
    return client === undefined ? undefined : interactables.attach(client)
  }, [handle, interactables])
  const previousHelpers = useRef<Readonly<Record<string, ContextHelperFn>>>({})
  useEffect(() => {
    const client = handle.liveClient()
    if (client === undefined) return
    const next = contextHelpers ?? {}
    for (const name of Object.keys(previousHelpers.current)) {
      if (!Object.hasOwn(next, name)) client.removeContextHelper(name)
    }
    for (const [name, helper] of Object.entries(next)) {
      if (previousHelpers.current[name] !== helper) client.addContextHelper(name, helper)
    }
    previousHelpers.current = next
  }, [handle, contextHelpers])
  // A new client (or a remount) registers everything afresh.
  useEffect(() => () => {
    registeredTools.current = new Map()
    registeredComponents.current = new Set()
    previousHelpers.current = {}
  }, [handle])

  const mcpServers = useMemo(
    () => [...(props.client === undefined ? props.mcpServers ?? [] : []), ...contributed.flatMap((c) => c.mcpServers ?? [])],
    [props.client, props.client === undefined ? props.mcpServers : undefined, contributed]
  )
  useMcpServers(handle, mcpServers)
  useFollowShownRun(handle)

  // A new client (another user, say) starts with an empty composer.
  const input = useInputStore(handle)
  const [elicitation] = useState(() => new ElicitationStore())
  // Elicitations wait for a form (or the user's consent to go to a URL) from the start, whether or not one is mounted yet.
  useEffect(() => elicitation.attach(handle), [handle, elicitation])
  useEffect(() => urlElicitation.attach(handle), [handle, urlElicitation])
  const renderer = useMemo(() => new MessageRenderer(ComponentRenderer, (name) => components.has(name)), [components])
  const initialMessages = useStableJson(props.client === undefined ? props.initialMessages : undefined)
  const { autoGenerateThreadName, autoGenerateNameThreshold } = props.client === undefined
    ? props
    : { autoGenerateThreadName: undefined, autoGenerateNameThreshold: undefined }
  const config = useMemo<TamboConfig>(
    () => ({ userKey, autoGenerateThreadName, autoGenerateNameThreshold, initialMessages }),
    [userKey, autoGenerateThreadName, autoGenerateNameThreshold, initialMessages]
  )
  const value = useMemo<TamboContextValue>(
    () => ({
      handle,
      components,
      renderer,
      input,
      elicitation,
      urlElicitation,
      interactables,
      initialMessages,
      config,
      registerComponent,
      contribute
    }),
    [handle, components, renderer, input, elicitation, urlElicitation, interactables, initialMessages, config, registerComponent, contribute]
  )
  return <TamboContext.Provider value={value}>{children}</TamboContext.Provider>
}

/**
 * Keeps the client's MCP servers in step with the `mcpServers` prop: the
 * client connects the first list when it is created; a later list connects
 * the servers it adds and disconnects those it drops, and gives a server
 * whose `handlers` changed its new ones (none: the client's) without
 * connecting it (a server whose connection failed is not tried again for
 * it: it keeps them for its next connect), one whose
 * `logLevel` changed its new level, and one whose `toolTimeout` or
 * `maxToolTime` changed its new bounds (a server that drops its
 * `logLevel` or a bound is connected again: a new session logs at its
 * server's own level, and its tools take the run's bounds); a server whose
 * connection failed is not connected again for a new level or bound, nor
 * for one dropped: it has no session to apply them to. A new bound no
 * timer can wait, which the client refuses for a live server, leaves it the
 * bounds it had and is reported with `console.error`; the new handlers and
 * level of the same change are taken all the same. Unmounting
 * does not disconnect them (StrictMode remounts at once): the client does,
 * when it is destroyed.
 */
const useMcpServers = (handle: ClientHandle, servers: TamboClientOptions["mcpServers"]) => {
  const previous = useRef<{ readonly handle: ClientHandle; readonly servers: ReadonlyMap<string, McpServerInfo> }>(undefined)
  /** The last change sent for each key: a connect that waits for a disconnect is dropped if a later one came. */
  const lastChange = useRef(new Map<string, object>())
  // Runs for every new list (an inline prop is one each render); only what changed is sent to the client.
  useEffect(() => {
    const current = new Map((servers ?? []).map((server) => [uniqueKey(server), server] as const))
    const client = handle.client()
    const before = previous.current?.handle === handle ? previous.current.servers : new Map<string, McpServerInfo>()
    for (const old of before.keys()) {
      if (current.has(old)) continue
      lastChange.current.set(old, {})
      void client.disconnectMcpServer(old).catch(() => undefined)
    }
    for (const [key, server] of current) {
      const known = before.get(key)
      if (
        known !== undefined && known.handlers === server.handlers && known.logLevel === server.logLevel &&
        sameDuration(known.toolTimeout, server.toolTimeout) && sameDuration(known.maxToolTime, server.maxToolTime)
      ) continue
      const handlersOnly = known !== undefined && known.logLevel === server.logLevel &&
        sameDuration(known.toolTimeout, server.toolTimeout) && sameDuration(known.maxToolTime, server.maxToolTime)
      // A level or a bound matters to a session only: a server whose connection failed has none, and
      // is not tried again for them (the next connect of it gives its own).
      if (handlersOnly || (known !== undefined && client.getMcpClients()[key]?.status === "failed")) {
        // Replaced on the session, never a connection (a server whose connection failed keeps
        // them for its next connect; a connect still waiting takes them).
        if (known.handlers !== server.handlers) {
          void client.updateMcpServerHandlers(key, server.handlers ?? {}).catch(() => undefined)
        }
        continue
      }
      const change = {}
      lastChange.current.set(key, change)
      // The handlers given last, also when they changed while this waited.
      const latestHandlers = () =>
        ((previous.current?.handle === handle ? previous.current.servers.get(key) : undefined) ?? server).handlers ?? {}
      const connect = () => client.connectMcpServer({ ...server, handlers: latestHandlers() })
      // A connect only changes the tool bounds and the log level it gives: dropping one takes a new
      // connection (a server cannot be told to forget a level: a new session was never asked for one).
      const dropsSetting = known !== undefined &&
        ((known.toolTimeout !== undefined && server.toolTimeout === undefined) ||
          (known.maxToolTime !== undefined && server.maxToolTime === undefined) ||
          (known.logLevel !== undefined && server.logLevel === undefined))
      const connectUnlessChanged = () => (lastChange.current.get(key) === change ? connect() : undefined)
      // A failed connection shows in its status (`useTamboMcpServers`). The client refuses a change of
      // a live server with a bound no timer can wait as a whole: that shows here, and what else
      // the same props changed (its handlers, its level) is still taken.
      const refused = (error: unknown) => {
        if (known === undefined || !(error instanceof McpError) || error.reason !== "Connect") return
        const status = client.getMcpClients()[key]?.status
        if (status === undefined || status === "failed") return
        console.error(
          `[tambo] mcpServers: MCP server "${error.serverKey ?? key}" keeps the tool bounds it had, the new ones are refused:`,
          error
        )
        if (lastChange.current.get(key) !== change) return
        if (known.handlers !== server.handlers) {
          void client.updateMcpServerHandlers(key, latestHandlers()).catch(() => undefined)
        }
        if (known.logLevel !== server.logLevel) {
          // Without bounds a connect keeps the ones the server has, and without handlers its handlers.
          const { handlers: _handlers, ...level } = server
          void client.connectMcpServer({ ...level, toolTimeout: undefined, maxToolTime: undefined }).catch(() => undefined)
        }
      }
      // (The last catch: a client destroyed meanwhile refuses every call.)
      void (dropsSetting ? client.disconnectMcpServer(key).then(connectUnlessChanged) : connect()).catch(refused)
        .catch(() => undefined)
    }
    previous.current = { handle, servers: current }
  }, [handle, servers])
}

/** Equal durations, however written (`"5 seconds"`, `5_000`, `Duration.seconds(5)`), or both absent. */
const sameDuration = (a: Duration.DurationInput | undefined, b: Duration.DurationInput | undefined): boolean => {
  if (Object.is(a, b)) return true
  if (a === undefined || b === undefined) return false
  const x = Duration.decodeUnknown(a)
  const y = Duration.decodeUnknown(b)
  return Option.isSome(x) && Option.isSome(y) && Duration.equals(x.value, y.value)
}

/** The app's own store, for a provider that creates its client. */
const storeOf = (props: TamboProviderProps): TamboStore<ClientState> | undefined =>
  props.client === undefined ? props.store : undefined

const createClient = (
  props: TamboProviderProps,
  urlElicitationHandler: UrlElicitationHandler,
  store: TamboStore<ClientState>
): TamboClient => {
  if (props.client !== undefined) return props.client
  const { children: _children, components, updates: _updates, client: _client, ...options } = props
  const associated = (components ?? []).flatMap((component) => component.associatedTools ?? [])
  return new TamboClient({
    ...options,
    store,
    ...(associated.length === 0 ? {} : { tools: [...(options.tools ?? []), ...associated] }),
    components: (components ?? []).map(availableComponent),
    // A client a render asks for may never be committed (a server render, a hidden tree): its
    // network work starts once the handle holds it, or at its first run.
    deferStart: true,
    // The app's own, or the queue `useTamboMcpUrlElicitation` shows.
    mcpUrlElicitationHandler: options.mcpUrlElicitationHandler ?? urlElicitationHandler
  })
}

/** The first of each name: of the same name, the props' own come first. */
const byName = <A extends { readonly name: string }>(items: ReadonlyArray<A>): ReadonlyArray<A> => {
  const seen = new Set<string>()
  const first: Array<A> = []
  for (const item of items) {
    if (seen.has(item.name)) continue
    seen.add(item.name)
    first.push(item)
  }
  return first
}

const availableComponent = (component: TamboComponent) => ({
  name: component.name,
  description: component.description,
  propsSchema: component.propsSchema,
  ...(component.stateSchema === undefined ? {} : { stateSchema: component.stateSchema })
})

/** The same value as long as its JSON is the same (an inline array of messages, say). */
const useStableJson = <A,>(value: A): A => {
  const ref = useRef(value)
  if (ref.current !== value && JSON.stringify(ref.current) !== JSON.stringify(value)) ref.current = value
  return ref.current
}

/** The components by name; the same map as long as the entries are the same. */
const useStableComponents = (
  components: ReadonlyArray<TamboComponent> | undefined
): ReadonlyMap<string, TamboComponent> => {
  const ref = useRef<ReadonlyMap<string, TamboComponent>>(new Map())
  const next = new Map((components ?? []).map((component) => [component.name, component] as const))
  const previous = ref.current
  const same = next.size === previous.size && [...next].every(([name, component]) => {
    const old = previous.get(name)
    return old !== undefined && (old === component || (
      old.component === component.component &&
      old.loadingComponent === component.loadingComponent &&
      old.propsSchema === component.propsSchema &&
      old.stateSchema === component.stateSchema &&
      old.description === component.description &&
      old.associatedTools === component.associatedTools
    ))
  })
  if (!same) ref.current = next
  return ref.current
}

/**
 * The provider's `TamboClient`: to call what the hooks do not cover. It is
 * created now if it does not exist yet, and lives as long as the provider
 * is mounted; outside an event handler or effect, prefer the hooks. A
 * client made for a render that never commits (a server render, a render
 * React throws away) is destroyed a microtask after it: on the server it
 * serves the render itself, not work that outlives it (give the provider a
 * `client` for that).
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboClient = (): TamboClient => useHandleClient(useTamboContext("useTamboClient").handle)

/**
 * The provider's settings of the conversation: `userKey`,
 * `autoGenerateThreadName`, `autoGenerateNameThreshold`, `initialMessages`,
 * as its props gave them. Throws outside a provider.
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useTamboConfig = (): TamboConfig => useTamboContext("useTamboConfig").config

/**
 * `@tambo-ai/react`'s name for the layer that holds the client: here that is
 * {@link TamboProvider} itself, which takes its props (`apiKey`,
 * `tamboUrl`, `environment`, `userKey`, `userToken`) and all the others.
 *
 * @since 0.2.0
 * @category Components
 */
export const TamboClientProvider: (props: TamboProviderProps) => ReactNode = TamboProvider

/**
 * Props of {@link TamboRegistryProvider}.
 *
 * @since 0.2.0
 * @category Models
 */
export interface TamboRegistryProviderProps {
  readonly children?: ReactNode
  readonly tools?: ReadonlyArray<ToolDefinition> | undefined
  readonly components?: ReadonlyArray<TamboComponent> | undefined
  readonly mcpServers?: TamboClientOptions["mcpServers"]
}

/**
 * Tools, components and MCP servers for as long as a part of the page is
 * mounted (a settings page's own tools, say): inside a `TamboProvider`, they
 * join the provider's own, and leave when it unmounts or they leave its
 * props (the model can no longer call a tool that left). Of the same name,
 * the provider's props win.
 *
 * @example
 * ```tsx
 * <TamboRegistryProvider tools={[deleteAccount]} components={[AccountCard]}>
 *   <SettingsPage />
 * </TamboRegistryProvider>
 * ```
 *
 * @since 0.2.0
 * @category Components
 */
export function TamboRegistryProvider({ children, components, mcpServers, tools }: TamboRegistryProviderProps): ReactNode {
  useContribution("TamboRegistryProvider", { components, mcpServers, tools })
  return children
}

/**
 * Context helpers for as long as a part of the page is mounted: inside a
 * `TamboProvider`, they join the provider's own `contextHelpers` (which win
 * for the same name), and leave when it unmounts or they leave its props.
 *
 * @since 0.2.0
 * @category Components
 */
export function TamboContextHelpersProvider(
  { children, contextHelpers }: { readonly children?: ReactNode; readonly contextHelpers?: Readonly<Record<string, ContextHelperFn>> | undefined }
): ReactNode {
  useContribution("TamboContextHelpersProvider", { contextHelpers })
  return children
}

/** Adds `contribution` to the provider's registrations while mounted, and follows its changes. */
const useContribution = (name: string, contribution: Contribution) => {
  const { contribute } = useTamboContext(name)
  const id = useId()
  const { components, contextHelpers, mcpServers, tools } = contribution
  useEffect(() => {
    contribute(id, { components, contextHelpers, mcpServers, tools })
  }, [contribute, id, components, contextHelpers, mcpServers, tools])
  useEffect(() => () => contribute(id, undefined), [contribute, id])
}
