/**
 * The prompts and resources of the connected MCP servers, and the
 * application's own resources (server key `"registry"`): listing, reading,
 * and the resources a message names read into it before it is sent.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import { identity } from "effect/Function"
import * as PubSub from "effect/PubSub"
import * as RcMap from "effect/RcMap"
import * as Stream from "effect/Stream"
import type {
  MakeOptions,
  McpCompletion,
  McpCompletionRef,
  McpPrompt,
  McpResource,
  McpResourceContents,
  McpResourceSpec,
  McpResourceTemplate
} from "../../Mcp.js"
import { McpError } from "../../TamboError.js"
import type * as Types from "../../Types.js"
import { callApp } from "../callbacks.js"
import type * as McpClient from "./client.js"
import type { ResourceWatch } from "./env.js"
import { describeError } from "../toolSupport.js"

/** The server key of the application's own resources. @internal */
export const REGISTRY_SERVER_KEY = "registry" as const

/** @internal */
export interface Deps<Entry extends { readonly serverKey: string; readonly watch: ResourceWatch | undefined }> {
  /** The connected servers, with their sessions. */
  readonly connected: () => ReadonlyArray<{ readonly entry: Entry; readonly session: McpClient.Session }>
  /**
   * A request on a server's session, failing with an `McpError` (and dropping a server found
   * unreachable); sent once more on the next session when the server forgot this one (it did not take it).
   */
  readonly requestResent: <A>(
    entry: Entry,
    session: McpClient.Session,
    what: string,
    send: (session: McpClient.Session, signal: AbortSignal) => Promise<A>
  ) => Effect.Effect<A, McpError>
  readonly options: Pick<MakeOptions, "resources" | "listResources" | "getResource">
}

type MessageContent = Types.TextContent | Types.ResourceContent | Types.ToolResultContent

/** Whether a message's content names a connected MCP server's resource, which is read before the message is sent. @internal */
export const namesMcpResource = (content: MessageContent): content is Types.ResourceContent =>
  content.type === "resource" && content.resource.serverKey !== undefined

/** @internal */
export const make = <Entry extends { readonly serverKey: string; readonly watch: ResourceWatch | undefined }>(
  deps: Deps<Entry>
) => {
  const notConnected = (serverKey: string) =>
    new McpError({
      reason: "NotConnected",
      message: `No MCP server with the key "${serverKey}" is connected`,
      serverKey
    })

  /** The session of the connected server with that key. */
  const sessionOf = (serverKey: string) =>
    Effect.suspend(() => {
      const found = deps.connected().find(({ entry }) => entry.serverKey === serverKey)
      return found === undefined ? Effect.fail(notConnected(serverKey)) : Effect.succeed(found)
    })

  /** Lists something on every connected server at once; a server whose listing fails is left out. */
  const listEach = <A, B>(
    what: string,
    list: (session: McpClient.Session) => (signal: AbortSignal) => Promise<ReadonlyArray<A>>,
    tag: (serverKey: string, item: A) => B
  ): Effect.Effect<ReadonlyArray<B>> =>
    Effect.suspend(() =>
      Effect.forEach(
        deps.connected(),
        ({ entry, session }) =>
          deps.requestResent(entry, session, what, (session, signal) => list(session)(signal)).pipe(
            Effect.map((items) => items.map((item) => tag(entry.serverKey, item))),
            Effect.catchAll((error) => Effect.as(Effect.logDebug(error.message), []))
          ),
        { concurrency: "unbounded" }
      )
    ).pipe(Effect.map((lists) => lists.flat()))

  const listMcpPrompts = listEach(
    "Listing the prompts",
    (session) => session.listPrompts,
    (serverKey, prompt): McpPrompt => ({ serverKey, ...prompt })
  ).pipe(Effect.withSpan("Mcp.listPrompts"))

  const getMcpPrompt = (serverKey: string, name: string, args: Readonly<Record<string, string>> = {}) =>
    Effect.flatMap(sessionOf(serverKey), ({ entry, session }) =>
      deps.requestResent(entry, session, `The prompt "${name}"`, (session, signal) => session.getPrompt(name, args, signal))).pipe(
        Effect.withSpan("Mcp.getPrompt", { attributes: { "mcp.server": serverKey, "mcp.prompt": name } })
      )

  const completeMcpArgument = (
    serverKey: string,
    ref: McpCompletionRef,
    argument: { readonly name: string; readonly value: string },
    context?: Readonly<Record<string, string>>
  ): Effect.Effect<McpCompletion, McpError> =>
    Effect.flatMap(sessionOf(serverKey), ({ entry, session }) =>
      deps.requestResent(
        entry,
        session,
        `Completing the argument "${argument.name}" of ${ref.type === "ref/prompt" ? `the prompt "${ref.name}"` : `"${ref.uri}"`}`,
        (session, signal) => session.complete(ref, argument, context, signal)
      )).pipe(
        Effect.withSpan("Mcp.complete", {
          attributes: { "mcp.server": serverKey, "mcp.ref": ref.type === "ref/prompt" ? ref.name : ref.uri, "mcp.argument": argument.name }
        })
      )

  const matches = (search: string | undefined) => {
    const needle = search?.trim().toLowerCase() ?? ""
    return (resource: McpResourceSpec) =>
      needle.length === 0 || resource.name.toLowerCase().includes(needle) ||
      resource.uri.toLowerCase().includes(needle) || (resource.title?.toLowerCase().includes(needle) ?? false)
  }

  const registryResources = (search: string | undefined): Effect.Effect<ReadonlyArray<McpResource>> =>
    Effect.gen(function*() {
      const listed = deps.options.listResources === undefined
        ? []
        : yield* callApp(() => deps.options.listResources!(search), identity).pipe(
          Effect.catchAll((error) => Effect.as(Effect.logDebug(`listResources failed: ${describeError(error)}`), []))
        )
      const own = (deps.options.resources ?? []).filter(matches(search))
      return [...own, ...listed].map((resource) => ({ ...resource, serverKey: REGISTRY_SERVER_KEY }))
    })

  const listMcpResources = (search?: string) =>
    Effect.zipWith(
      listEach(
        "Listing the resources",
        (session) => session.listResources,
        (serverKey, resource): McpResource => ({ serverKey, ...resource })
      ),
      registryResources(search),
      (servers, own) => [...servers.filter(matches(search)), ...own],
      { concurrent: true }
    ).pipe(Effect.withSpan("Mcp.listResources"))

  const listMcpResourceTemplates = listEach(
    "Listing the resource templates",
    (session) => session.listResourceTemplates,
    (serverKey, template): McpResourceTemplate => ({ serverKey, ...template })
  ).pipe(Effect.withSpan("Mcp.listResourceTemplates"))

  const readRegistryResource = (uri: string): Effect.Effect<McpResourceContents, McpError> => {
    const getResource = deps.options.getResource
    if (getResource === undefined) {
      return Effect.fail(
        new McpError({
          reason: "CallFailed",
          message: `The resource "${uri}" cannot be read: no getResource was given`,
          serverKey: REGISTRY_SERVER_KEY
        })
      )
    }
    return callApp(() => getResource(uri), identity).pipe(
      Effect.mapError((error) =>
        new McpError({
          reason: "CallFailed",
          message: `Reading the resource "${uri}" failed: ${describeError(error)}`,
          serverKey: REGISTRY_SERVER_KEY
        })
      )
    )
  }

  const readMcpResource = (serverKey: string, uri: string): Effect.Effect<McpResourceContents, McpError> =>
    (serverKey === REGISTRY_SERVER_KEY
      ? readRegistryResource(uri)
      : Effect.flatMap(sessionOf(serverKey), ({ entry, session }) =>
        deps.requestResent(entry, session, `Reading the resource "${uri}"`, (session, signal) => session.readResource(uri, signal)))
    ).pipe(Effect.withSpan("Mcp.readResource", { attributes: { "mcp.server": serverKey, "mcp.resource": uri } }))

  /**
   * The resource's contents, then again each time its server says it changed, subscribed on the
   * server while the stream runs; once only from a server that tells of no changes (or the app).
   * Fails with `Disconnected` when the session that was watched ends.
   */
  const watchMcpResource = (serverKey: string, uri: string): Stream.Stream<McpResourceContents, McpError> =>
    serverKey === REGISTRY_SERVER_KEY
      ? Stream.fromEffect(readRegistryResource(uri))
      : Stream.unwrapScoped(Effect.gen(function*() {
        const { entry, session } = yield* sessionOf(serverKey)
        const read = readMcpResource(serverKey, uri)
        const watch = entry.watch
        if (watch === undefined || !session.subscribesResources) return Stream.fromEffect(read)
        // Listening before subscribing: a change told right after the subscription is not missed.
        const updates = yield* PubSub.subscribe(watch.updates)
        yield* RcMap.get(watch.subscriptions, uri)
        return Stream.fromQueue(updates).pipe(
          Stream.filter((updated) => updated === uri),
          Stream.prepend(Chunk.of(uri)),
          Stream.mapEffect(() => read),
          // The queue ends with the session.
          Stream.concat(Stream.fail(
            new McpError({
              reason: "Disconnected",
              message: `The MCP server "${serverKey}" whose resource "${uri}" was watched is no longer connected`,
              serverKey
            })
          ))
        )
      })).pipe(Stream.withSpan("Mcp.watchResource", { attributes: { "mcp.server": serverKey, "mcp.resource": uri } }))

  const resolveContent = (content: Types.ResourceContent): Effect.Effect<ReadonlyArray<Types.ResourceContent>, McpError> => {
    const { serverKey, uri, name } = content.resource
    if (serverKey === undefined) return Effect.succeed([content])
    if (uri === undefined) {
      return Effect.fail(
        new McpError({ reason: "CallFailed", message: `A resource of server "${serverKey}" names no uri`, serverKey })
      )
    }
    return Effect.map(readMcpResource(serverKey, uri), ({ contents }) =>
      contents.map((part): Types.ResourceContent => ({
        type: "resource",
        resource: {
          uri: part.uri,
          ...(name === undefined ? {} : { name }),
          ...(part.mimeType === undefined ? {} : { mimeType: part.mimeType }),
          ...("text" in part ? { text: part.text } : { blob: part.blob })
        }
      })))
  }

  const resolveResources = <M extends { readonly content: ReadonlyArray<MessageContent> }>(
    message: M
  ): Effect.Effect<M, McpError> =>
    // Most messages name no MCP resource: they go through untouched.
    !message.content.some(namesMcpResource)
      ? Effect.succeed(message)
      : Effect.forEach(
        message.content,
        (content): Effect.Effect<ReadonlyArray<MessageContent>, McpError> =>
          namesMcpResource(content) ? resolveContent(content) : Effect.succeed([content]),
        { concurrency: "unbounded" }
      ).pipe(
        Effect.map((parts) => ({ ...message, content: parts.flat() })),
        Effect.withSpan("Mcp.resolveResources")
      )

  return {
    listMcpPrompts,
    getMcpPrompt,
    completeMcpArgument,
    listMcpResources,
    listMcpResourceTemplates,
    readMcpResource,
    watchMcpResource,
    resolveResources
  }
}
