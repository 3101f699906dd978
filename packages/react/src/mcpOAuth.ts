/**
 * OAuth for MCP servers in the browser, by full-page redirect: the page goes
 * to the authorization server and comes back to the app with a code.
 *
 * @since 0.1.0
 */
import type { McpOAuthOptions, McpOAuthStorage } from "@tambo-effect/core/Mcp"

/**
 * The part of the Web Storage API (`localStorage`, `sessionStorage`) that
 * {@link mcpOAuthRedirect} uses.
 *
 * @since 0.1.0
 * @category Models
 */
export type McpOAuthWebStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">

/**
 * The options of {@link mcpOAuthRedirect}.
 *
 * @since 0.1.0
 * @category Models
 */
export interface McpOAuthRedirectOptions {
  /**
   * Where the authorization server sends the user back: a page of the app
   * that renders the provider and calls `mcpOAuthRedirect` on load. It is
   * registered with the authorization server, so keep it stable. Default:
   * the current page's origin and path (no query, no hash).
   */
  readonly redirectUrl?: string | undefined
  /**
   * Where the client registration, the tokens and the PKCE verifier are
   * kept, so that they survive the redirect and later visits. Default
   * `localStorage`. (The authorization in progress is kept per tab, in
   * `sessionStorage`.)
   */
  readonly storage?: McpOAuthWebStorage | undefined
  /** Prefix of the storage keys. Default `"tambo-mcp-oauth:"`. */
  readonly keyPrefix?: string | undefined
  /** Passed on: the client's name at the authorization server. */
  readonly clientName?: string | undefined
  /** Passed on: the scope to ask for. */
  readonly scope?: string | undefined
  /** Passed on: how long the authorization may take. Default 10 minutes. */
  readonly authorizeTimeout?: McpOAuthOptions["authorizeTimeout"]
}

/**
 * The authorization this tab left for: which connection, the address to come back to, the page
 * load that left and the `state` the answer must carry (each absent in entries written before it
 * was kept).
 */
interface Pending {
  readonly key: string
  readonly returnTo: string
  readonly page?: string | undefined
  readonly state?: string | undefined
}

/**
 * What the redirect back brought, kept until the connection it is for takes it: a code, an error,
 * nothing (`left`: a later page load came without an answer, the user came back another way), or
 * an answer to another sign-in (`foreign`: its `state` was not the one this tab sent).
 */
type Arrival =
  | { readonly key: string; readonly code: string }
  | { readonly key: string; readonly error: string }
  | { readonly key: string; readonly left: true }
  | { readonly key: string; readonly foreign: true }

/** This page load: a pending authorization of an earlier one that comes back without an answer was left. */
const PAGE_LOAD = Math.random().toString(36).slice(2)

/** The query parameters an authorization response adds (RFC 6749 §4.1.2, RFC 9207). */
const RESPONSE_PARAMS = ["code", "state", "error", "error_description", "error_uri", "iss"]

const readJson = (storage: McpOAuthWebStorage | undefined, key: string): unknown => {
  try {
    const text = storage?.getItem(key)
    return text == null ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

const parseUrl = (text: string): URL | undefined => {
  try {
    return new URL(text)
  } catch {
    return undefined
  }
}

const isObject = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null

const readPending = (storage: McpOAuthWebStorage | undefined, key: string): Pending | undefined => {
  const u = readJson(storage, key)
  return isObject(u) && typeof u["key"] === "string" && typeof u["returnTo"] === "string"
    ? {
      key: u["key"],
      returnTo: u["returnTo"],
      page: typeof u["page"] === "string" ? u["page"] : undefined,
      state: typeof u["state"] === "string" ? u["state"] : undefined
    }
    : undefined
}

const readArrival = (storage: McpOAuthWebStorage | undefined, key: string): Arrival | undefined => {
  const u = readJson(storage, key)
  if (!isObject(u) || typeof u["key"] !== "string") return undefined
  if (typeof u["code"] === "string") return { key: u["key"], code: u["code"] }
  if (typeof u["error"] === "string") return { key: u["key"], error: u["error"] }
  if (u["left"] === true) return { key: u["key"], left: true }
  if (u["foreign"] === true) return { key: u["key"], foreign: true }
  return undefined
}

const sessionStorageOrUndefined = (): McpOAuthWebStorage | undefined => {
  try {
    return globalThis.sessionStorage
  } catch {
    // Storage disabled (some privacy modes throw on access).
    return undefined
  }
}

const localStorageOrUndefined = (): McpOAuthWebStorage | undefined => {
  try {
    return globalThis.localStorage
  } catch {
    return undefined
  }
}

/**
 * If this page load is the redirect back from an authorization this tab
 * started, moves the code (or the error) from the address bar into the
 * tab's storage, for the connection it is for, and puts the address the
 * user left back in the address bar.
 */
const takeRedirectBack = (tab: McpOAuthWebStorage | undefined, prefix: string): void => {
  const pending = readPending(tab, `${prefix}pending`)
  if (pending === undefined || typeof window === "undefined") return
  const here = new URL(window.location.href)
  const code = here.searchParams.get("code")
  const error = here.searchParams.get("error")
  if (code === null && error === null) {
    // Left by an earlier page load, and this one brought no answer: the user came back without
    // signing in (Back to a page loaded again, another way in). Asked again, the connection would
    // send the user straight back to the authorization server; it fails instead.
    if (pending.page !== undefined && pending.page !== PAGE_LOAD) {
      tab?.setItem(`${prefix}arrival`, JSON.stringify({ key: pending.key, left: true }))
      tab?.removeItem(`${prefix}pending`)
    }
    return
  }
  // An answer without the state this tab sent is not to its request: its code is not used.
  const arrival: Arrival = pending.state !== undefined && here.searchParams.get("state") !== pending.state
    ? { key: pending.key, foreign: true }
    : code !== null
    ? { key: pending.key, code }
    : {
      key: pending.key,
      error: [error, here.searchParams.get("error_description")].filter((part) => part !== null).join(": ")
    }
  tab?.setItem(`${prefix}arrival`, JSON.stringify(arrival))
  tab?.removeItem(`${prefix}pending`)
  const left = parseUrl(pending.returnTo)
  if (left !== undefined && left.origin === here.origin) {
    window.history.replaceState(window.history.state, "", left.href)
  } else {
    for (const param of RESPONSE_PARAMS) here.searchParams.delete(param)
    window.history.replaceState(window.history.state, "", here.href)
  }
}

/**
 * OAuth for an MCP server (`McpServerInfo.oauth`) by full-page redirect,
 * for browser apps. When the server asks for authorization, the page saves
 * where it was and goes to the authorization server (`location.assign`);
 * the user comes back to `redirectUrl` with a code, which the next
 * connection exchanges (PKCE, with the verifier kept in `storage`) before
 * connecting; the code leaves the address bar (`history.replaceState`),
 * which shows the address the user left again. The tokens stay in
 * `storage`: later visits connect without asking, and refresh them. An
 * answer whose `state` is not the one this tab sent (a link to another
 * sign-in, planted to connect the user to someone else's account) is not
 * used: that connection fails once, and the next one asks again.
 *
 * Call it when the page loads, before anything reads the address bar (at
 * module level, or where the provider's `mcpServers` are built): that is
 * when it takes the code from the redirect back. An authorization the user
 * refused comes back as an error: that connection then fails (an
 * `McpError` in its status) instead of asking again. So does a sign-in
 * the user leaves by going Back to a page the browser restores from its
 * back/forward cache: at once, not after `authorizeTimeout`; and one the
 * user comes back from without an answer to a page loaded again (Back,
 * another way in): that connection fails once, rather than sending the user
 * straight back to the authorization server. A sign-in the
 * connection stops waiting for is forgotten. One result may serve several
 * servers: the code goes to the connection that asked for it.
 *
 * @example
 * ```tsx
 * const oauth = mcpOAuthRedirect()
 * const mcpServers = [{ url: "https://mcp.example.com/mcp", oauth }]
 * <TamboProvider apiKey={apiKey} userKey={userKey} mcpServers={mcpServers}>…</TamboProvider>
 * ```
 *
 * @since 0.1.0
 * @category MCP
 */
export const mcpOAuthRedirect = (options: McpOAuthRedirectOptions = {}): McpOAuthOptions => {
  const prefix = options.keyPrefix ?? "tambo-mcp-oauth:"
  const tab = sessionStorageOrUndefined()
  const storage = options.storage ?? localStorageOrUndefined()
  try {
    takeRedirectBack(tab, prefix)
  } catch {
    // Storage that refuses writes: the code stays unused, and the connection asks again.
  }
  const redirectUrl = options.redirectUrl ??
    (typeof window === "undefined" ? "" : `${window.location.origin}${window.location.pathname}`)

  /** What the redirect back brought for this connection, taken once. */
  const takeArrival = (key: string): Arrival | undefined => {
    const arrival = readArrival(tab, `${prefix}arrival`)
    if (arrival === undefined || arrival.key !== key) return undefined
    tab?.removeItem(`${prefix}arrival`)
    return arrival
  }

  const persistent: McpOAuthStorage = {
    get: (key) => storage?.getItem(`${prefix}${key}`) ?? undefined,
    set: (key, value) => {
      if (value === undefined) storage?.removeItem(`${prefix}${key}`)
      else storage?.setItem(`${prefix}${key}`, value)
    }
  }

  // The connections that came back with a code on this page load: asked again, they would loop.
  const returned = new Set<string>()

  return {
    redirectUrl,
    storage: persistent,
    ...(options.clientName === undefined ? {} : { clientName: options.clientName }),
    ...(options.scope === undefined ? {} : { scope: options.scope }),
    ...(options.authorizeTimeout === undefined ? {} : { authorizeTimeout: options.authorizeTimeout }),
    authorizationCode: (key) => {
      const arrival = readArrival(tab, `${prefix}arrival`)
      if (arrival === undefined || arrival.key !== key || !("code" in arrival)) return undefined
      if (takeArrival(key) === undefined) return undefined
      returned.add(key)
      return arrival.code
    },
    onAuthorize: (authorizationUrl, context) => {
      const arrival = takeArrival(context.key)
      if (arrival !== undefined && "error" in arrival) {
        return Promise.reject(new Error(`The authorization was refused (${arrival.error})`))
      }
      if (arrival !== undefined && "left" in arrival) {
        return Promise.reject(new Error("The sign-in was left unfinished: the page loaded again without an authorization"))
      }
      if (arrival !== undefined && "foreign" in arrival) {
        return Promise.reject(
          new Error("The answer that came back was not for this sign-in (its state did not match): it was not used")
        )
      }
      if (returned.has(context.key)) {
        return Promise.reject(new Error("The code the authorization server sent back did not authorize this client"))
      }
      // Without storage, what the page keeps for the way back would be lost with it: it would go round again.
      if (typeof window === "undefined" || tab === undefined || storage === undefined) {
        return Promise.reject(new Error("mcpOAuthRedirect needs a browser window with localStorage and sessionStorage"))
      }
      const state = parseUrl(authorizationUrl)?.searchParams.get("state") ?? undefined
      const pending: Pending = { key: context.key, returnTo: window.location.href, page: PAGE_LOAD, state }
      tab.setItem(`${prefix}pending`, JSON.stringify(pending))
      // The page unloads: the answer comes with the next page load. Unless the page comes back
      // from the back/forward cache: the user left the authorization server without signing in.
      return new Promise<string>((_resolve, reject) => {
        const forget = () => {
          window.removeEventListener("pageshow", restored)
          context.signal.removeEventListener("abort", forget)
          try {
            if (readPending(tab, `${prefix}pending`)?.key === context.key) tab.removeItem(`${prefix}pending`)
          } catch {
            // Storage that refuses: what is left there is for the next load to ignore.
          }
        }
        const restored = (event: PageTransitionEvent) => {
          if (!event.persisted) return
          forget()
          reject(new Error("The sign-in was left unfinished: the page came back without an authorization"))
        }
        window.addEventListener("pageshow", restored)
        // The connection stopped waiting (authorizeTimeout, a disconnect): the sign-in is over.
        context.signal.addEventListener("abort", forget)
        window.location.assign(authorizationUrl)
      })
    }
  }
}
