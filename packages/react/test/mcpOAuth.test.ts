// @vitest-environment happy-dom
/**
 * `mcpOAuthRedirect`'s way there and back on one page, without a server:
 * which code it takes from the address bar, for which connection, and what
 * it does with a refusal. The whole flow against a real authorization server
 * is in `browser/mcpOAuth.test.ts`.
 */
import type { McpRequestContext } from "@tambo-effect/core/Mcp"
import * as Effect from "effect/Effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { mcpOAuthRedirect } from "../src/index.js"

const APP = `${window.location.origin}/app/index.html`

const context = (key: string): McpRequestContext => ({
  key,
  serverKey: "docs",
  server: { url: "http://127.0.0.1:1/mcp" },
  signal: new AbortController().signal
})

/** What a handler returns, as a Promise (the helper returns Promises). */
const settle = <A>(u: A | PromiseLike<A> | Effect.Effect<A, unknown>): Promise<A> =>
  Effect.isEffect(u) ? Effect.runPromise(u as Effect.Effect<A, unknown>) : Promise.resolve(u)

/** An authorization URL as the MCP client builds it, with the `state` the answer must carry. */
const AUTHORIZE = "http://127.0.0.1:1/authorize?client_id=x&state=s"

/**
 * The page leaves for the authorization server at `authorizationUrl` (as `location.assign` would),
 * and comes back to `url`.
 */
const leaveAndComeBack = async (key: string, url: string, authorizationUrl = AUTHORIZE) => {
  const assigned: Array<string> = []
  const assign = window.location.assign
  Object.defineProperty(window.location, "assign", { configurable: true, value: (to: string) => void assigned.push(to) })
  try {
    const pending = settle(mcpOAuthRedirect().onAuthorize(authorizationUrl, context(key)))
    expect(assigned).toEqual([authorizationUrl])
    // The page would unload here: nothing waits on it.
    void pending.catch(() => undefined)
  } finally {
    Object.defineProperty(window.location, "assign", { configurable: true, value: assign })
  }
  window.history.replaceState(null, "", url)
}

beforeEach(() => {
  window.history.replaceState(null, "", `${APP}?tamboUrl=x#chat`)
})

afterEach(() => {
  window.sessionStorage.clear()
  window.localStorage.clear()
})

describe("mcpOAuthRedirect", () => {
  it("redirects back to the page (origin and path); the code goes to the connection that asked, once, and the address the user left comes back", async () => {
    expect(mcpOAuthRedirect().redirectUrl).toBe(APP)
    await leaveAndComeBack("server-a", `${APP}?code=abc&state=s`)

    const oauth = mcpOAuthRedirect()
    expect(window.location.href).toBe(`${APP}?tamboUrl=x#chat`)
    const code = oauth.authorizationCode as (key: string) => string | undefined
    expect(code("server-b")).toBeUndefined()
    expect(code("server-a")).toBe("abc")
    expect(code("server-a")).toBeUndefined()
    // Asked again on the same page after its code: it would go round in circles.
    await expect(settle(oauth.onAuthorize("http://127.0.0.1:1/authorize", context("server-a")))).rejects.toThrow(
      /did not authorize/
    )
  })

  it("a code in the address bar that this tab did not go for is left alone", () => {
    window.history.replaceState(null, "", `${APP}?code=planted`)
    const oauth = mcpOAuthRedirect()
    expect(window.location.href).toBe(`${APP}?code=planted`)
    expect((oauth.authorizationCode as (key: string) => string | undefined)("server-a")).toBeUndefined()
  })

  it("a refusal comes back as an error of that connection instead of another redirect", async () => {
    await leaveAndComeBack("server-a", `${APP}?error=access_denied&error_description=No%20thanks&state=s`)
    const oauth = mcpOAuthRedirect()
    expect(window.location.href).toBe(`${APP}?tamboUrl=x#chat`)
    expect((oauth.authorizationCode as (key: string) => string | undefined)("server-a")).toBeUndefined()
    await expect(settle(oauth.onAuthorize("http://127.0.0.1:1/authorize", context("server-a")))).rejects.toThrow(
      "The authorization was refused (access_denied: No thanks)"
    )
  })

  for (
    const [name, back] of [
      ["an answer with a state other than the one this tab sent", `${APP}?code=planted&state=other`],
      ["an answer without a state", `${APP}?code=planted`]
    ] as const
  ) {
    it(`${name} is not used: that connection fails once, then asks again`, async () => {
      await leaveAndComeBack("server-a", back)
      const oauth = mcpOAuthRedirect()
      expect(window.location.href).toBe(`${APP}?tamboUrl=x#chat`)
      expect((oauth.authorizationCode as (key: string) => string | undefined)("server-a")).toBeUndefined()
      await expect(settle(oauth.onAuthorize(AUTHORIZE, context("server-a")))).rejects.toThrow(
        "The answer that came back was not for this sign-in (its state did not match): it was not used"
      )
      const assigned: Array<string> = []
      const assign = window.location.assign
      Object.defineProperty(window.location, "assign", { configurable: true, value: (to: string) => void assigned.push(to) })
      try {
        void settle(oauth.onAuthorize(AUTHORIZE, context("server-a"))).catch(() => undefined)
        expect(assigned).toEqual([AUTHORIZE])
      } finally {
        Object.defineProperty(window.location, "assign", { configurable: true, value: assign })
      }
    })
  }

  it("a sign-in left for without a state (by an earlier version) takes the code that comes back", async () => {
    await leaveAndComeBack("server-a", `${APP}?code=abc`, "http://127.0.0.1:1/authorize?client_id=x")
    const oauth = mcpOAuthRedirect()
    expect((oauth.authorizationCode as (key: string) => string | undefined)("server-a")).toBe("abc")
  })

  it("a page the browser restores from its back/forward cache (the user came back without signing in) fails the sign-in at once and forgets it", async () => {
    const assign = window.location.assign
    Object.defineProperty(window.location, "assign", { configurable: true, value: () => undefined })
    try {
      const outcome = settle(mcpOAuthRedirect().onAuthorize("http://127.0.0.1:1/authorize", context("server-a"))).then(
        () => "authorized",
        (error: Error) => error.message
      )
      expect(window.sessionStorage.getItem("tambo-mcp-oauth:pending")).not.toBeNull()
      // A page shown afresh (not restored) is not the user coming back.
      window.dispatchEvent(Object.assign(new Event("pageshow"), { persisted: false }))
      window.dispatchEvent(Object.assign(new Event("pageshow"), { persisted: true }))
      const settled = await Promise.race([outcome, new Promise((resolve) => setTimeout(() => resolve("still waiting"), 0))])
      expect(settled).toMatch(/sign-in was left unfinished/)
      expect(window.sessionStorage.getItem("tambo-mcp-oauth:pending")).toBeNull()
    } finally {
      Object.defineProperty(window.location, "assign", { configurable: true, value: assign })
    }
  })

  it("a page loaded again without an answer (Back from the authorization server) fails that connection once instead of sending the user back there", async () => {
    await leaveAndComeBack("server-a", `${APP}?tamboUrl=x#chat`)
    // Asked again on the page that left (a render while it unloads): the sign-in is still going.
    mcpOAuthRedirect()
    const key = "tambo-mcp-oauth:pending"
    expect(JSON.parse(window.sessionStorage.getItem(key)!)).toMatchObject({ key: "server-a" })
    // The next page load is another one: what this tab left then was left by an earlier load.
    window.sessionStorage.setItem(key, JSON.stringify({ ...JSON.parse(window.sessionStorage.getItem(key)!), page: "earlier" }))
    const oauth = mcpOAuthRedirect()
    expect(window.sessionStorage.getItem(key)).toBeNull()
    expect((oauth.authorizationCode as (key: string) => string | undefined)("server-a")).toBeUndefined()
    const assigned: Array<string> = []
    const assign = window.location.assign
    Object.defineProperty(window.location, "assign", { configurable: true, value: (to: string) => void assigned.push(to) })
    try {
      await expect(settle(oauth.onAuthorize("http://127.0.0.1:1/authorize", context("server-a")))).rejects.toThrow(
        /left unfinished/
      )
      expect(assigned).toEqual([])
      // Once: the next connect asks again.
      void settle(oauth.onAuthorize("http://127.0.0.1:1/authorize", context("server-a"))).catch(() => undefined)
      expect(assigned).toEqual(["http://127.0.0.1:1/authorize"])
      expect(JSON.parse(window.sessionStorage.getItem(key)!)).toMatchObject({ key: "server-a" })
    } finally {
      Object.defineProperty(window.location, "assign", { configurable: true, value: assign })
    }
  })

  it("a sign-in the connection stops waiting for (authorizeTimeout, a disconnect) is forgotten: a later code in the address bar is not taken for it", async () => {
    const assign = window.location.assign
    Object.defineProperty(window.location, "assign", { configurable: true, value: () => undefined })
    const controller = new AbortController()
    try {
      void settle(mcpOAuthRedirect().onAuthorize("http://127.0.0.1:1/authorize", { ...context("server-a"), signal: controller.signal }))
      controller.abort()
      expect(window.sessionStorage.getItem("tambo-mcp-oauth:pending")).toBeNull()
      window.history.replaceState(null, "", `${APP}?code=the-apps-own`)
      mcpOAuthRedirect()
      expect(window.location.href).toBe(`${APP}?code=the-apps-own`)
    } finally {
      Object.defineProperty(window.location, "assign", { configurable: true, value: assign })
    }
  })

  it("keeps the tokens in localStorage (or the storage given), under its prefix", async () => {
    const saved = new Map<string, string>()
    const storage = {
      getItem: (key: string) => saved.get(key) ?? null,
      setItem: (key: string, value: string) => void saved.set(key, value),
      removeItem: (key: string) => void saved.delete(key)
    }
    await settle(mcpOAuthRedirect({ storage, keyPrefix: "p:" }).storage!.set("k", "{}"))
    expect([...saved]).toEqual([["p:k", "{}"]])
    await settle(mcpOAuthRedirect().storage!.set("k", "{\"tokens\":1}"))
    expect(window.localStorage.getItem("tambo-mcp-oauth:k")).toBe("{\"tokens\":1}")
    expect(await settle(mcpOAuthRedirect().storage!.get("k"))).toBe("{\"tokens\":1}")
  })
})
