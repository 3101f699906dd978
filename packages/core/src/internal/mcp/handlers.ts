/**
 * A server's requests to the client (elicitation, sampling, and the user's
 * authorization for OAuth) answered by the application's handlers, as the
 * Promises the MCP client awaits.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { identity } from "effect/Function"
import * as Ref from "effect/Ref"
import type {
  ElicitationRequest,
  ElicitationResult,
  HandlerResult,
  McpRequestContext,
  McpRoot,
  SamplingRequest,
  SamplingResult,
  UrlElicitationRequest,
  UrlElicitationResult
} from "../../Mcp.js"
import { McpError } from "../../TamboError.js"
import { callApp } from "../callbacks.js"
import type { Entry, Env } from "./env.js"

/**
 * Runs an application handler, whatever it returns; what goes wrong in it is its failure.
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const runHandler = <A>(call: () => HandlerResult<A>): Effect.Effect<A, unknown> => callApp(call, identity)

/** Fails once `signal` is aborted. */
const aborted = (signal: AbortSignal): Effect.Effect<never, McpError> =>
  Effect.async<never, McpError>((resume) => {
    const onAbort = () =>
      resume(Effect.fail(new McpError({ reason: "CallFailed", message: "The server cancelled the request" })))
    if (signal.aborted) return onAbort()
    signal.addEventListener("abort", onAbort, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", onAbort))
  })

const requestContext = (entry: Entry, signal: AbortSignal): McpRequestContext => ({
  key: entry.key,
  serverKey: entry.serverKey,
  server: entry.server,
  signal
})

/**
 * Runs a handler for a server's request, as a Promise the MCP client awaits;
 * the server cancelling the request (`signal`) interrupts it.
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const serve = <A>(
  env: Env,
  entry: Entry,
  span: string,
  signal: AbortSignal,
  body: (context: McpRequestContext) => Effect.Effect<A, unknown>
): Promise<A> =>
  env.runPromise(
    Effect.raceFirst(body(requestContext(entry, signal)), aborted(signal)).pipe(
      Effect.withSpan(span, { attributes: { "mcp.server": entry.serverKey } })
    )
  )

/**
 * Answers an elicitation with the server's handler or the service's; without one, declines.
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const elicit = (env: Env, entry: Entry) => (request: ElicitationRequest, signal: AbortSignal) =>
  serve(env, entry, "Mcp.elicitation", signal, (context) =>
    Effect.flatMap(Ref.get(env.handlers), (current) => {
      const handler = entry.server.handlers?.elicitation ?? current.elicitation
      return handler === undefined
        ? Effect.succeed<ElicitationResult>({ action: "decline" })
        : runHandler(() => handler(request, context))
    }))

/** Whether a URL may be put before the user: `http` and `https` only (never `javascript:`, `file:`, ...). */
const isWebUrl = (url: string): boolean => {
  try {
    const { protocol } = new URL(url)
    return protocol === "http:" || protocol === "https:"
  } catch {
    return false
  }
}

/**
 * Answers a URL elicitation with the server's handler or the service's;
 * without one (removed since the server was told the client takes them), or
 * for a URL that is not `http` or `https`, declines.
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const elicitUrl = (env: Env, entry: Entry) => (request: UrlElicitationRequest, signal: AbortSignal) =>
  serve(env, entry, "Mcp.urlElicitation", signal, (context) =>
    Effect.flatMap(Ref.get(env.handlers), (current): Effect.Effect<UrlElicitationResult, unknown> => {
      if (!isWebUrl(request.params.url)) {
        return Effect.as(
          Effect.logWarning(
            `MCP server "${entry.serverKey}" asked the user to go to a URL that is not http(s); declined: ` +
              JSON.stringify(request.params.url.slice(0, 200))
          ),
          { action: "decline" }
        )
      }
      const handler = entry.server.handlers?.urlElicitation ?? current.urlElicitation
      return handler === undefined ? Effect.succeed({ action: "decline" }) : runHandler(() => handler(request, context))
    }))

/**
 * Whether to announce URL elicitations to this server: a URL handler is set for it.
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const elicitsUrls = (env: Env, entry: Entry): Effect.Effect<boolean> =>
  Effect.map(
    Ref.get(env.handlers),
    (current) => entry.server.handlers?.urlElicitation !== undefined || current.urlElicitation !== undefined
  )

/**
 * Answers a sampling request with the server's handler or the service's; without one, fails.
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const sample = (env: Env, entry: Entry) => (request: SamplingRequest, signal: AbortSignal) =>
  serve(env, entry, "Mcp.sampling", signal, (context) =>
    Effect.flatMap(Ref.get(env.handlers), (current) => {
      const handler = entry.server.handlers?.sampling ?? current.sampling
      return handler === undefined
        ? Effect.fail(new McpError({ reason: "CallFailed", message: "No sampling handler is set" }))
        : runHandler<SamplingResult>(() => handler(request, context))
    }))

/**
 * Whether to announce the sampling capability to this server: a handler is set for it.
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const samples = (env: Env, entry: Entry): Effect.Effect<boolean> =>
  Effect.map(
    Ref.get(env.handlers),
    (current) => entry.server.handlers?.sampling !== undefined || current.sampling !== undefined
  )

/**
 * Whether to announce the roots capability to a server now connecting: roots are set.
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const offersRoots = (env: Env): Effect.Effect<boolean> =>
  Effect.map(Ref.get(env.handlers), (current) => current.roots !== undefined)

/**
 * Answers a server's `roots/list` with the roots set now (none once they were unset).
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const listRoots = (env: Env) => (): Promise<ReadonlyArray<McpRoot>> =>
  env.runPromise(Effect.map(Ref.get(env.handlers), (current) => current.roots ?? []))
