/**
 * OAuth for servers that ask for it (`McpServerInfo.oauth`): each server's
 * state (client registration, tokens, PKCE verifier) kept across its
 * sessions and, with `storage`, across page loads; the user's authorization
 * asked of the application, outside the connect timeout.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { isRecord } from "effect/Predicate"
import type { McpOAuthOptions } from "../../Mcp.js"
import { McpError } from "../../TamboError.js"
import { positiveDuration } from "../config.js"
import { describeError } from "../toolSupport.js"
import type * as McpClient from "./client.js"
import type * as Deadline from "./deadline.js"
import { connectFailure, type Entry, type Env } from "./env.js"
import { runHandler, serve } from "./handlers.js"

const DEFAULT_AUTHORIZE_TIMEOUT = Duration.minutes(10)

/** The OAuth state saved by `McpOAuthOptions.storage`; what is not an object of the expected fields is dropped. */
const decodeOAuthState = (json: string): Partial<McpClient.OAuthStore> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(json)
  } catch {
    return {}
  }
  if (!isRecord(parsed)) return {}
  return {
    ...(isRecord(parsed["tokens"]) && typeof parsed["tokens"]["access_token"] === "string"
      ? { tokens: { ...parsed["tokens"], access_token: parsed["tokens"]["access_token"], token_type: String(parsed["tokens"]["token_type"] ?? "bearer") } }
      : {}),
    ...(isRecord(parsed["clientInformation"]) && typeof parsed["clientInformation"]["client_id"] === "string"
      ? { clientInformation: { ...parsed["clientInformation"], client_id: parsed["clientInformation"]["client_id"] } }
      : {}),
    ...(typeof parsed["codeVerifier"] === "string" ? { codeVerifier: parsed["codeVerifier"] } : {})
  }
}

/** Asks the application for the user's authorization: a code, within `authorizeTimeout`, off the connect deadline. */
const authorize = (
  env: Env,
  entry: Entry,
  oauth: McpOAuthOptions,
  authorizeTimeout: Duration.Duration,
  deadline: Deadline.Deadline
) =>
(authorizationUrl: URL, signal: AbortSignal): Promise<string> => {
  // The handler's signal: aborted with the connection's, and when nothing waits for its code any more.
  const controller = new AbortController()
  const abort = () => controller.abort(signal.reason)
  if (signal.aborted) abort()
  else signal.addEventListener("abort", abort, { once: true })
  const settled = () => signal.removeEventListener("abort", abort)
  return serve(env, entry, "Mcp.authorize", controller.signal, (context) =>
    Effect.flatMap(runHandler(() => oauth.onAuthorize(authorizationUrl.href, context)), (code) =>
      typeof code === "string" && code.length > 0
        ? Effect.succeed(code)
        : Effect.fail(new McpError({ reason: "Connect", message: "onAuthorize gave no authorization code" }))).pipe(
      Effect.timeoutFail({
        duration: authorizeTimeout,
        onTimeout: () =>
          new McpError({
            reason: "Connect",
            message: `The user did not authorize within authorizeTimeout (${Duration.format(authorizeTimeout)})`,
            serverKey: entry.serverKey
          })
      }),
      deadline.suspendDuring
    )).then(
      (code) => {
        settled()
        return code
      },
      (error: unknown) => {
        settled()
        controller.abort()
        throw error
      }
    )
}

/**
 * The OAuth state of the service: each server's by key, and the
 * authorization codes already exchanged (a code is good once).
 *
 * @internal
 * @since 0.2.0
 * @category Constructors
 */
export const make = (env: Env) => {
  const stores = new Map<string, McpClient.OAuthStore>()
  const usedCodes = new Set<string>()
  // By key: a code whose exchange failed before the authorization server judged it, for the next attempt.
  const keptCodes = new Map<string, string>()

  /** The server's state: from memory, else from the application's storage, else empty. */
  const storeOf = (entry: Entry, oauth: McpOAuthOptions): Effect.Effect<McpClient.OAuthStore, McpError> =>
    Effect.gen(function*() {
      const known = stores.get(entry.key)
      if (known !== undefined) return known
      const store: McpClient.OAuthStore = { clientInformation: undefined, tokens: undefined, codeVerifier: undefined }
      const storage = oauth.storage
      if (storage !== undefined) {
        const saved = yield* runHandler(() => storage.get(entry.key)).pipe(
          Effect.mapError((error) => connectFailure(entry, `reading the OAuth storage: ${describeError(error)}`))
        )
        if (typeof saved === "string") Object.assign(store, decodeOAuthState(saved))
      }
      stores.set(entry.key, store)
      return store
    })

  /** The authorization code given for this server, unless it was used already; else one kept from a failed exchange. */
  const takeCode = (entry: Entry, oauth: McpOAuthOptions): string | undefined => {
    const given = typeof oauth.authorizationCode === "function"
      ? oauth.authorizationCode(entry.key)
      : oauth.authorizationCode
    const kept = keptCodes.get(entry.key)
    keptCodes.delete(entry.key)
    if (given === undefined || usedCodes.has(given)) return kept
    usedCodes.add(given)
    return given
  }

  /** What the MCP client needs to authorize with the entry's server; `undefined` for a server without OAuth. */
  const optionsFor = (
    entry: Entry,
    deadline: Deadline.Deadline
  ): Effect.Effect<McpClient.OAuthOptions | undefined, McpError> =>
    Effect.gen(function*() {
      const oauth = entry.server.oauth
      if (oauth === undefined) return undefined
      // Checked before anything is asked: one no timer can wait would end the sign-in at once, or never.
      const authorizeTimeout = yield* positiveDuration("authorizeTimeout", oauth.authorizeTimeout, DEFAULT_AUTHORIZE_TIMEOUT)
        .pipe(Effect.mapError((error) => connectFailure(entry, error.message)))
      const store = yield* storeOf(entry, oauth)
      const storage = oauth.storage
      return {
        redirectUrl: oauth.redirectUrl,
        clientName: oauth.clientName ?? env.clientInfo.name,
        scope: oauth.scope,
        store,
        authorizationCode: takeCode(entry, oauth),
        persist: () =>
          storage === undefined
            ? Promise.resolve()
            : env.runPromise(runHandler(() => storage.set(entry.key, JSON.stringify(store))).pipe(Effect.ignore)),
        authorize: authorize(env, entry, oauth, authorizeTimeout, deadline),
        keepCode: (code: string) => void keptCodes.set(entry.key, code)
      }
    })

  return { optionsFor }
}
