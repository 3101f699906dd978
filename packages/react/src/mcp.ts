/**
 * MCP hooks: the provider's MCP servers, their prompts and resources, the
 * completions of prompt arguments, the progress of the model's calls of
 * their tools, and the elicitations they send, over the client's MCP
 * methods.
 *
 * @since 0.1.0
 */
import type { McpConnectionInfo } from "@tambo-effect/client"
import type {
  ElicitationResult,
  McpCompletion,
  McpCompletionRef,
  McpPrompt,
  McpPromptResult,
  McpResource,
  McpResourceContents,
  McpToolProgress
} from "@tambo-effect/core/Mcp"
import { useCallback, useEffect, useMemo, useState, useSyncExternalStore } from "react"
import { useTamboContext } from "./internal/context.js"
import type { PendingElicitation, PendingUrlElicitation } from "./internal/elicitationStore.js"
import { useQuery } from "./internal/useQuery.js"
import type { QueryState } from "./types.js"

/**
 * The MCP servers of the provider's client, with their status
 * (`connecting`, `connected`, `reconnecting`, `failed`), error, tools and,
 * while connected, their `client` (`callTool`, `listTools`, ... as
 * Promises); re-rendered when any of that changes.
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboMcpServers = (): ReadonlyArray<McpConnectionInfo> => {
  const { handle } = useTamboContext("useTamboMcpServers")
  const connections = useSyncExternalStore(handle.subscribeToMcpClients, handle.getMcpClients, handle.getMcpClients)
  return useMemo(() => Object.values(connections), [connections])
}

/**
 * Changes when the set of connected servers changes, or one of them says
 * the list of what is read (`version`) changed: what the reads are made again for.
 */
const useConnectedKey = (hook: string, version: "promptsVersion" | "resourcesVersion"): string => {
  const { handle } = useTamboContext(hook)
  const connections = useSyncExternalStore(handle.subscribeToMcpClients, handle.getMcpClients, handle.getMcpClients)
  return useMemo(
    () =>
      Object.values(connections)
        .filter((connection) => connection.status === "connected")
        .map((connection) => `${connection.key} ${connection[version]}`)
        .join("\n"),
    [connections, version]
  )
}

/**
 * The prompts of every connected MCP server (`{ serverKey, name,
 * description, arguments }`), read again when a server connects or leaves,
 * or says its prompts changed.
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboMcpPromptList = (): QueryState<ReadonlyArray<McpPrompt>> => {
  const { handle } = useTamboContext("useTamboMcpPromptList")
  const connected = useConnectedKey("useTamboMcpPromptList", "promptsVersion")
  return useQuery(handle, `prompts\n${connected}`, () => handle.client().listMcpPrompts(), { keepData: true })
}

/**
 * A prompt of a connected MCP server, fetched with its arguments (again when
 * they change, or a server says its prompts changed). Nothing is fetched
 * while `serverKey` or `name` is `undefined`.
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboMcpPrompt = (
  serverKey: string | undefined,
  name: string | undefined,
  args: Readonly<Record<string, string>> = {}
): QueryState<McpPromptResult> => {
  const { handle } = useTamboContext("useTamboMcpPrompt")
  const connected = useConnectedKey("useTamboMcpPrompt", "promptsVersion")
  const key = serverKey === undefined || name === undefined
    ? undefined
    : JSON.stringify([serverKey, name, Object.entries(args).sort(([a], [b]) => (a < b ? -1 : 1)), connected])
  return useQuery(handle, key, () => handle.client().getMcpPrompt(serverKey!, name!, args))
}

/**
 * The resources of every connected MCP server and the app's own (server key
 * `"registry"`), optionally filtered by `search`; read again when a server
 * connects or leaves, or says its resources changed.
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboMcpResourceList = (search?: string): QueryState<ReadonlyArray<McpResource>> => {
  const { handle } = useTamboContext("useTamboMcpResourceList")
  const connected = useConnectedKey("useTamboMcpResourceList", "resourcesVersion")
  return useQuery(handle, JSON.stringify(["resources", search ?? "", connected]), () => handle.client().listMcpResources(search), {
    keepData: true
  })
}

/**
 * The contents of a resource of a connected MCP server (or of the app),
 * kept up to date: a server that offers subscriptions is subscribed to the
 * resource while the hook is mounted, and its new contents show each time
 * it says they changed. Read again when a server says its resources
 * changed, or reconnects. Nothing is read while `serverKey` or `uri` is
 * `undefined`.
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboMcpResource = (
  serverKey: string | undefined,
  uri: string | undefined
): QueryState<McpResourceContents> => {
  const { handle } = useTamboContext("useTamboMcpResource")
  const connected = useConnectedKey("useTamboMcpResource", "resourcesVersion")
  const key = serverKey === undefined || uri === undefined ? undefined : JSON.stringify([serverKey, uri, connected])
  return useQuery(handle, key, () => handle.client().readMcpResource(serverKey!, uri!), {
    watch: (onData, onError) => handle.client().watchMcpResource(serverKey!, uri!, onData, onError)
  })
}

/**
 * The values a connected MCP server suggests for an argument of one of its
 * prompts (`{ type: "ref/prompt", name }`) or resource templates
 * (`{ type: "ref/resource", uri }`), for what was typed so far (`value`)
 * and the arguments already chosen (`context`): asked again as they change,
 * the last suggestions kept meanwhile. A server that offers no completions
 * suggests nothing. Nothing is asked while `serverKey` or `ref` is
 * `undefined`.
 *
 * @example
 * ```tsx
 * const { data } = useTamboMcpCompletion("docs", { type: "ref/prompt", name: "review" }, "language", typed)
 * return <datalist id="languages">{data?.values.map((value) => <option key={value} value={value} />)}</datalist>
 * ```
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useTamboMcpCompletion = (
  serverKey: string | undefined,
  ref: McpCompletionRef | undefined,
  argument: string,
  value: string,
  context?: Readonly<Record<string, string>>
): QueryState<McpCompletion> => {
  const { handle } = useTamboContext("useTamboMcpCompletion")
  const connected = useConnectedKey("useTamboMcpCompletion", "promptsVersion")
  const key = serverKey === undefined || ref === undefined
    ? undefined
    : JSON.stringify([
      serverKey,
      ref,
      argument,
      value,
      Object.entries(context ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)),
      connected
    ])
  return useQuery(
    handle,
    key,
    () => handle.client().completeMcpArgument(serverKey!, ref!, { name: argument, value }, context),
    { keepData: true }
  )
}

/**
 * The latest progress an MCP server told of the model's call `toolCallId`
 * (the id of the call's `tool_use` block): for a progress bar beside the
 * call while its tool runs. A component that mounts in the middle of a call
 * shows where it is at once; once the call ended it keeps the last notice
 * it saw. `undefined` until the server tells any, and for a tool that is
 * not an MCP server's.
 *
 * @example
 * ```tsx
 * const progress = useTamboMcpToolProgress(block.id)
 * return progress?.total ? <progress value={progress.progress} max={progress.total} /> : null
 * ```
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useTamboMcpToolProgress = (toolCallId: string | undefined): McpToolProgress | undefined => {
  const { handle } = useTamboContext("useTamboMcpToolProgress")
  const [progress, setProgress] = useState<McpToolProgress | undefined>(() =>
    toolCallId === undefined ? undefined : handle.getMcpToolProgress(toolCallId)
  )
  useEffect(() => {
    if (toolCallId === undefined) return undefined
    const release = handle.retain()
    const stop = handle.client().subscribeToMcpToolProgress((notice) => {
      if (notice.toolCallId === toolCallId) setProgress(notice)
    })
    // What the call told before this listened: since the first render, or before it for another id.
    setProgress((seen) => handle.getMcpToolProgress(toolCallId) ?? (seen?.toolCallId === toolCallId ? seen : undefined))
    return () => {
      stop()
      release()
    }
  }, [handle, toolCallId])
  return progress?.toolCallId === toolCallId ? progress : undefined
}

/**
 * What {@link useTamboMcpElicitation} returns.
 *
 * @since 0.1.0
 * @category Models
 */
export interface UseTamboMcpElicitationReturn {
  /** The oldest request waiting for the user, if any: its message and form. */
  readonly request: PendingElicitation | undefined
  /**
   * Sends the filled form, as the answer to `request` (the one returned with it): nothing once
   * that one left the queue, even when called later.
   */
  readonly accept: (content: NonNullable<ElicitationResult["content"]>) => void
  /** The user refuses (`request`, as `accept`). */
  readonly decline: () => void
  /** The user dismissed the request (`request`, as `accept`). */
  readonly cancel: () => void
}

/**
 * The requests for input MCP servers send (elicitations), one at a time.
 * The provider keeps them in a queue while no component uses this hook: an
 * elicitation that arrives meanwhile is shown as soon as one mounts. One
 * leaves the queue when answered, when the server gives up on it, or
 * (cancelled) when the provider unmounts. An app that set its own handler
 * (`useTamboClient().setMcpElicitationHandler`) before keeps it: then this
 * hook shows nothing.
 *
 * @example
 * ```tsx
 * const { request, accept, decline } = useTamboMcpElicitation()
 * if (request) return <Form schema={request.requestedSchema} onSubmit={accept} onCancel={decline} />
 * ```
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboMcpElicitation = (): UseTamboMcpElicitationReturn => {
  const { elicitation } = useTamboContext("useTamboMcpElicitation")
  const request = useSyncExternalStore(elicitation.subscribe, elicitation.getSnapshot, elicitation.getSnapshot)
  // Each answers the request it was returned with, not one shown after it.
  const accept = useCallback((content: NonNullable<ElicitationResult["content"]>) => {
    if (request !== undefined) elicitation.respond({ action: "accept", content }, request)
  }, [elicitation, request])
  const decline = useCallback(() => {
    if (request !== undefined) elicitation.respond({ action: "decline" }, request)
  }, [elicitation, request])
  const cancel = useCallback(() => {
    if (request !== undefined) elicitation.respond({ action: "cancel" }, request)
  }, [elicitation, request])
  return { request, accept, decline, cancel }
}

/**
 * What {@link useTamboMcpUrlElicitation} returns.
 *
 * @since 0.2.0
 * @category Models
 */
export interface UseTamboMcpUrlElicitationReturn {
  /** The oldest request waiting for the user's consent, if any: its message and URL. */
  readonly request: PendingUrlElicitation | undefined
  /**
   * The user agreed to go to the URL of `request` (the one returned with it; the app opens it);
   * the interaction goes on there. Nothing once that one left the queue, even when called later.
   */
  readonly accept: () => void
  /** The user refuses (`request`, as `accept`). */
  readonly decline: () => void
  /** The user dismissed the request (`request`, as `accept`). */
  readonly cancel: () => void
}

/**
 * The requests of MCP servers that the user go to a URL (URL-mode
 * elicitations: to sign in to a third party, to pay), one at a time. Show
 * the message and the whole URL, and open it only once the user agrees:
 * `accept` answers the server, the app opens the URL. Only `http` and
 * `https` URLs get here; others are declined before.
 *
 * The provider takes URL elicitations for the client it creates, so the
 * servers of `mcpServers` are told from their first connection; they wait
 * in a queue while no component uses this hook, and leave it when
 * answered, when the server gives up on them, or (cancelled) when the
 * provider unmounts. An app that gives its own handler
 * (`mcpUrlElicitationHandler`, or a server's `handlers.urlElicitation`)
 * keeps it: then this hook shows nothing of those requests. A client the
 * app passes as `client` tells only servers that connect after the
 * provider mounted.
 *
 * @example
 * ```tsx
 * const { request, accept, decline } = useTamboMcpUrlElicitation()
 * if (!request) return null
 * return (
 *   <dialog open>
 *     <p>{request.message}</p>
 *     <code>{request.url}</code>
 *     <button onClick={() => { window.open(request.url, "_blank", "noopener"); accept() }}>Open</button>
 *     <button onClick={decline}>No</button>
 *   </dialog>
 * )
 * ```
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useTamboMcpUrlElicitation = (): UseTamboMcpUrlElicitationReturn => {
  const { urlElicitation } = useTamboContext("useTamboMcpUrlElicitation")
  const request = useSyncExternalStore(urlElicitation.subscribe, urlElicitation.getSnapshot, urlElicitation.getSnapshot)
  // Each answers the request it was returned with: a consent never goes to another URL.
  const accept = useCallback(() => {
    if (request !== undefined) urlElicitation.respond({ action: "accept" }, request)
  }, [urlElicitation, request])
  const decline = useCallback(() => {
    if (request !== undefined) urlElicitation.respond({ action: "decline" }, request)
  }, [urlElicitation, request])
  const cancel = useCallback(() => {
    if (request !== undefined) urlElicitation.respond({ action: "cancel" }, request)
  }, [urlElicitation, request])
  return { request, accept, decline, cancel }
}

export type {
  /**
   * @since 0.1.0
   * @category Models
   */
  PendingElicitation,
  /**
   * @since 0.2.0
   * @category Models
   */
  PendingUrlElicitation
}
