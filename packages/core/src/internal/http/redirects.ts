/**
 * Which redirects a request follows. Credentials ride on every request
 * (`x-api-key`, a bearer token), so none goes to another origin; a request
 * keeps its method and body, so only 307/308 are followed for one with a
 * body (301/302/303 would turn it into a GET); and a few hops at most.
 */
import { TransportError } from "../../TamboError.js"
import { displayUrl } from "./connectionFailure.js"

/** Hops a request follows before the next redirect is refused. */
export const MAX_REDIRECTS = 5

export const isRedirect = (status: number): boolean => status >= 300 && status < 400

export type RedirectDecision =
  | { readonly _tag: "Follow"; readonly url: string }
  | {
    readonly _tag: "Refuse"
    readonly status: number
    /** The target without user info, query or fragment; undefined if the answer named none. */
    readonly location: string | undefined
    readonly message: string
  }

/** What to do with a `status` answer to `method from`, after `hops` redirects already followed. */
export const decideRedirect = (
  status: number,
  location: string | null | undefined,
  from: string,
  method: string,
  hops: number
): RedirectDecision => {
  let target: URL | undefined
  try {
    target = location === null || location === undefined ? undefined : new URL(location, from)
  } catch {
    target = undefined
  }
  const shown = target === undefined ? undefined : displayUrl(target.href)
  const refuse = (why: string): RedirectDecision => ({
    _tag: "Refuse",
    status,
    location: shown,
    message: `The server redirected ${method} ${displayUrl(from)}${status === 0 ? "" : ` (${status})`}${
      shown === undefined ? "" : ` to ${shown}`
    }: not followed, ${why}`
  })
  // A browser answers `redirect: "manual"` with an opaque response: status 0, no location.
  if (status === 0) return refuse("the browser does not show where it leads")
  if (target === undefined) return refuse("it names no valid location")
  if (target.origin !== new URL(from).origin) return refuse("another origin gets no credentials")
  const keepsMethod = status === 307 || status === 308
  const bodiless = method === "GET" || method === "HEAD"
  if (!keepsMethod && !bodiless) return refuse(`a ${status} would turn the ${method} into a GET`)
  if (!keepsMethod && status !== 301 && status !== 302 && status !== 303) return refuse("not a redirect to follow")
  if (hops >= MAX_REDIRECTS) return refuse(`after ${MAX_REDIRECTS} redirects`)
  return { _tag: "Follow", url: target.href }
}

/** Thrown by {@link sameOriginFetch} for a redirect it does not follow; the caller types it. */
export class RedirectRefused extends Error {
  constructor(readonly decision: Extract<RedirectDecision, { _tag: "Refuse" }>) {
    super(decision.message)
    this.name = "RedirectRefused"
  }
}

/**
 * A `fetch` that follows only the redirects {@link decideRedirect} allows and
 * throws {@link RedirectRefused} for the others. (A browser hides a
 * redirect's target from `redirect: "manual"`: there, every redirect is
 * refused.)
 */
export const sameOriginFetch = (base?: typeof globalThis.fetch): typeof globalThis.fetch =>
  async (input, init) => {
    const send = base ?? globalThis.fetch
    let url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url
    const method = (init?.method ?? (typeof input === "object" && "method" in input ? input.method : "GET")).toUpperCase()
    for (let hops = 0;; hops++) {
      const response = await send(url, { ...init, redirect: "manual" })
      if (!isRedirect(response.status) && response.type !== "opaqueredirect") return response
      const decision = decideRedirect(response.status, response.headers.get("location"), url, method, hops)
      // The redirect's own body is not read: let go of it.
      await response.body?.cancel().catch(() => undefined)
      if (decision._tag === "Refuse") throw new RedirectRefused(decision)
      url = decision.url
    }
  }

/** The `TransportError` (`Redirect`) of a refused redirect. */
export const redirectError = (
  refused: RedirectRefused | Extract<RedirectDecision, { _tag: "Refuse" }>,
  method: string,
  url: string
): TransportError => {
  const decision = refused instanceof RedirectRefused ? refused.decision : refused
  return new TransportError({
    reason: "Redirect",
    message: decision.message,
    method,
    url: displayUrl(url),
    status: decision.status,
    ...(decision.location === undefined ? {} : { location: decision.location })
  })
}
