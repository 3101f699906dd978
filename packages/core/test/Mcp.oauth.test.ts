import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Mcp from "../src/Mcp.js"
import { tamboLayer, useServer } from "./helpers.js"
import { approve, oauthMcpServer } from "./mcp/oauthServer.js"
import { calculator } from "./mcp/tools.js"

const server = useServer()

const stack = () => Mcp.layer.pipe(Layer.provideMerge(tamboLayer(server())))
const stackWith = (options: Mcp.MakeOptions) => Mcp.layerWith(options).pipe(Layer.provideMerge(tamboLayer(server())))

const callText = (connection: Mcp.McpConnection, name: string, args: Record<string, unknown>) =>
  Effect.map(connection.client!.callTool(name, args), (result) =>
    result.content.map((block) => ("text" in block ? block.text : block.type)).join(""))

/** OAuth storage in a map, as a page's `localStorage` would keep it across a reload. */
const memoryStorage = () => {
  const saved = new Map<string, string>()
  const storage: Mcp.McpOAuthStorage = {
    get: (key) => saved.get(key),
    set: (key, value) => {
      if (value === undefined) saved.delete(key)
      else saved.set(key, value)
    }
  }
  return { saved, storage }
}

/**
 * A calculator behind OAuth; a page sends the user to authorize it (the page unloads: nothing comes
 * back to it), and the user approves: the code the redirect back carries, the verifier left in
 * `storage`.
 */
const approvedCode = Effect.gen(function*() {
  const protectedServer = yield* oauthMcpServer(calculator)
  const { storage } = memoryStorage()
  const redirectUrl = "http://127.0.0.1:1/callback"
  const server: Mcp.McpServerInfo = { url: protectedServer.url, serverKey: "calc" }
  let authorizationUrl: string | undefined
  yield* Effect.gen(function*() {
    const mcp = yield* Mcp.Mcp
    yield* Effect.fork(mcp.connectMcpServer({
      ...server,
      oauth: { redirectUrl, storage, onAuthorize: (url) => Effect.zipRight(Effect.sync(() => void (authorizationUrl = url)), Effect.never) }
    }))
    yield* Effect.gen(function*() {
      while (authorizationUrl === undefined) yield* Effect.sleep("5 millis")
    })
  }).pipe(Effect.provide(stack()), Effect.scoped)
  const code = yield* Effect.promise(() => approve(authorizationUrl!))
  return { protectedServer, storage, redirectUrl, server, code }
})

describe("MCP servers protected by OAuth", () => {
  it.live("the user authorizes the client once (PKCE), then the tokens are used and refreshed", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const protectedServer = yield* oauthMcpServer(calculator)
      const asked: Array<{ url: URL; serverKey: string }> = []
      const connection = yield* mcp.connectMcpServer({
        url: protectedServer.url,
        serverKey: "calc",
        oauth: {
          redirectUrl: "http://127.0.0.1:1/callback",
          clientName: "tests",
          onAuthorize: (authorizationUrl, context) => {
            asked.push({ url: new URL(authorizationUrl), serverKey: context.serverKey })
            return approve(authorizationUrl)
          }
        }
      })

      expect(connection.status).toBe("connected")
      expect(asked).toHaveLength(1)
      const [{ url, serverKey }] = asked as [{ url: URL; serverKey: string }]
      expect(serverKey).toBe("calc")
      expect(url.pathname).toBe("/authorize")
      expect(url.searchParams.get("code_challenge_method")).toBe("S256")
      expect(url.searchParams.get("code_challenge")).toEqual(expect.any(String))
      expect(url.searchParams.get("redirect_uri")).toBe("http://127.0.0.1:1/callback")
      expect(url.searchParams.get("state")).toMatch(/^[0-9a-f]{32}$/)
      expect(protectedServer.registrations()).toBe(1)
      expect(protectedServer.grants).toEqual(["authorization_code"])
      expect(yield* callText(connection, "add", { a: 1, b: 2 })).toBe("3")

      // The access token stops working: the client refreshes it without asking the user again.
      protectedServer.expireAccessTokens()
      expect(yield* callText(connection, "add", { a: 2, b: 2 })).toBe("4")
      expect(protectedServer.grants).toEqual(["authorization_code", "refresh_token"])
      expect(asked).toHaveLength(1)

      // Connecting again (a new session) reuses the tokens and the registration.
      yield* mcp.disconnectMcpServer(connection.key)
      const again = yield* mcp.connectMcpServer({
        url: protectedServer.url,
        serverKey: "calc",
        oauth: { redirectUrl: "http://127.0.0.1:1/callback", onAuthorize: () => Promise.reject(new Error("not again")) }
      })
      expect(again.status).toBe("connected")
      expect(protectedServer.registrations()).toBe(1)
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("without OAuth options, or when the user does not authorize, connecting fails with McpError Connect", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const protectedServer = yield* oauthMcpServer(calculator)
      const plain = yield* Effect.flip(mcp.connectMcpServer({ url: protectedServer.url }))
      expect(plain).toMatchObject({ _tag: "McpError", reason: "Connect" })
      expect(protectedServer.unauthorized()).toBeGreaterThan(0)

      yield* mcp.disconnectMcpServer({ url: protectedServer.url })
      const refused = yield* Effect.flip(mcp.connectMcpServer({
        url: protectedServer.url,
        oauth: { redirectUrl: "http://127.0.0.1:1/callback", onAuthorize: () => Effect.fail("the user said no") }
      }))
      expect(refused).toMatchObject({ _tag: "McpError", reason: "Connect" })
      expect(refused.message).toContain("the user said no")
      expect(protectedServer.grants).toEqual([])
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("each authorization asks with a state of its own", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const protectedServer = yield* oauthMcpServer(calculator)
      const states: Array<string | null> = []
      const oauth: Mcp.McpOAuthOptions = {
        redirectUrl: "http://127.0.0.1:1/callback",
        onAuthorize: (url) => {
          states.push(new URL(url).searchParams.get("state"))
          return Effect.fail("not now")
        }
      }
      yield* Effect.flip(mcp.connectMcpServer({ url: protectedServer.url, oauth }))
      yield* mcp.disconnectMcpServer({ url: protectedServer.url })
      yield* Effect.flip(mcp.connectMcpServer({ url: protectedServer.url, oauth }))
      expect(states).toHaveLength(2)
      expect(states[0]).toMatch(/^[0-9a-f]{32}$/)
      expect(states[1]).toMatch(/^[0-9a-f]{32}$/)
      expect(states[1]).not.toBe(states[0])
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("by full-page redirect: the state survives in storage, and the code from the redirect back finishes it", () =>
    Effect.gen(function*() {
      const protectedServer = yield* oauthMcpServer(calculator)
      const { saved, storage } = memoryStorage()
      const redirectUrl = "http://127.0.0.1:1/callback"
      // The first page: the user is sent away (the page unloads; nothing comes back to it).
      let authorizationUrl: string | undefined
      yield* Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const attempt = yield* Effect.fork(mcp.connectMcpServer({
          url: protectedServer.url,
          oauth: {
            redirectUrl,
            storage,
            onAuthorize: (url) => {
              authorizationUrl = url
              return Effect.never
            }
          }
        }))
        yield* Effect.gen(function*() {
          while (authorizationUrl === undefined) yield* Effect.sleep("5 millis")
        })
        yield* mcp.disconnectMcpServer({ url: protectedServer.url })
        yield* Effect.flip(attempt.await.pipe(Effect.flatten))
      }).pipe(Effect.provide(stack()), Effect.scoped)
      expect(JSON.parse(saved.values().next().value!)).toMatchObject({
        clientInformation: { client_id: expect.any(String) },
        codeVerifier: expect.any(String)
      })

      // The browser follows the authorization URL and comes back to a new page with the code.
      const code = yield* Effect.promise(() => approve(authorizationUrl!))
      yield* Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const connection = yield* mcp.connectMcpServer({
          url: protectedServer.url,
          oauth: {
            redirectUrl,
            storage,
            authorizationCode: code,
            onAuthorize: () => Effect.fail("not asked again")
          }
        })
        expect(connection.status).toBe("connected")
        expect(yield* callText(connection, "add", { a: 20, b: 1 })).toBe("21")
      }).pipe(Effect.provide(stack()), Effect.scoped)
      expect(protectedServer.grants).toEqual(["authorization_code"])
      expect(protectedServer.registrations()).toBe(1)
      expect(JSON.parse(saved.values().next().value!)).toMatchObject({ tokens: { access_token: expect.any(String) } })
    }).pipe(Effect.scoped))
  it.live("authorizationCode as a function is asked with the connection's key: the code goes to the server that asked for it", () =>
    Effect.gen(function*() {
      const { protectedServer, storage, redirectUrl, server, code } = yield* approvedCode

      const asked: Array<string> = []
      yield* Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const connection = yield* mcp.connectMcpServer({
          ...server,
          oauth: {
            redirectUrl,
            storage,
            authorizationCode: (key) => {
              asked.push(key)
              return key === Mcp.uniqueKey(server) ? code : undefined
            },
            onAuthorize: () => Effect.fail("not asked again")
          }
        })
        expect(connection.status).toBe("connected")
      }).pipe(Effect.provide(stack()), Effect.scoped)
      expect(asked).toEqual([Mcp.uniqueKey(server)])
      expect(protectedServer.grants).toEqual(["authorization_code"])
    }).pipe(Effect.scoped))

  it.live("a code whose exchange failed before the authorization server judged it (its token endpoint answered 503) is exchanged by the next connect instead of asking again", () =>
    Effect.gen(function*() {
      const { protectedServer, storage, redirectUrl, server, code } = yield* approvedCode

      // The page after the redirect back: the code is handed over once, as mcpOAuthRedirect does.
      let handed = false
      const oauth: Mcp.McpOAuthOptions = {
        redirectUrl,
        storage,
        authorizationCode: () => {
          if (handed) return undefined
          handed = true
          return code
        },
        onAuthorize: () => Effect.fail("asked again")
      }
      yield* Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        protectedServer.failTokenRequests(1)
        const first = yield* Effect.flip(mcp.connectMcpServer({ ...server, oauth }))
        expect(first).toMatchObject({ _tag: "McpError", reason: "Connect" })
        expect(first.message).toContain("503")
        yield* mcp.disconnectMcpServer(server)

        const connection = yield* mcp.connectMcpServer({ ...server, oauth })
        expect(connection.status).toBe("connected")
        expect(yield* callText(connection, "add", { a: 2, b: 3 })).toBe("5")
      }).pipe(Effect.provide(stack()), Effect.scoped)
      expect(protectedServer.grants).toEqual(["authorization_code"])
    }).pipe(Effect.scoped))

  it.live("a storage or authorizationCode that throws fails the connection with McpError Connect", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const protectedServer = yield* oauthMcpServer(calculator)
      const brokenStorage = yield* Effect.flip(mcp.connectMcpServer({
        url: protectedServer.url,
        oauth: {
          redirectUrl: "http://127.0.0.1:1/callback",
          storage: {
            get: () => {
              throw new Error("storage is disabled")
            },
            set: () => undefined
          },
          onAuthorize: approve
        }
      }))
      expect(brokenStorage).toMatchObject({ _tag: "McpError", reason: "Connect" })
      expect(brokenStorage.message).toContain("storage is disabled")

      yield* mcp.disconnectMcpServer({ url: protectedServer.url })
      const brokenCode = yield* Effect.flip(mcp.connectMcpServer({
        url: protectedServer.url,
        oauth: {
          redirectUrl: "http://127.0.0.1:1/callback",
          authorizationCode: () => {
            throw new Error("no code here")
          },
          onAuthorize: approve
        }
      }))
      expect(brokenCode).toMatchObject({ _tag: "McpError", reason: "Connect" })
      expect(brokenCode.message).toContain("no code here")
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("the time the user spends authorizing does not count against the connect timeout", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const protectedServer = yield* oauthMcpServer(calculator)
      const connection = yield* mcp.connectMcpServer({
        url: protectedServer.url,
        oauth: {
          redirectUrl: "http://127.0.0.1:1/callback",
          // Longer than the connect timeout: the user reads the consent page.
          onAuthorize: (authorizationUrl) => Effect.zipRight(Effect.sleep("800 millis"), Effect.promise(() => approve(authorizationUrl)))
        }
      })
      expect(connection.status).toBe("connected")
      expect(yield* callText(connection, "add", { a: 1, b: 1 })).toBe("2")
    }).pipe(Effect.provide(stackWith({ connectTimeout: "300 millis" })), Effect.scoped))

  it.live.each([
    [0, "positive"],
    [-1, "positive"],
    [Number.NaN, "positive"],
    ["soon", "positive"],
    [Infinity, "at most 2147483647 ms"],
    [2 ** 31, "at most 2147483647 ms"]
  ] as const)(
    "an authorizeTimeout of %s, which no timer can wait, fails the connect with an McpError naming it and its bound, before anything is asked",
    ([authorizeTimeout, bound]) =>
      Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const protectedServer = yield* oauthMcpServer(calculator)
        let asked = 0
        const error = yield* Effect.flip(mcp.connectMcpServer({
          url: protectedServer.url,
          oauth: {
            redirectUrl: "http://127.0.0.1:1/callback",
            // As a JavaScript caller may give it.
            authorizeTimeout: authorizeTimeout as Mcp.McpOAuthOptions["authorizeTimeout"],
            onAuthorize: () => {
              asked++
              return new Promise<string>(() => undefined)
            }
          }
        })).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("the connect never ended") }))
        expect(error).toMatchObject({ _tag: "McpError", reason: "Connect" })
        expect(error.message).toContain("authorizeTimeout")
        expect(error.message).toContain(bound)
        expect(asked).toBe(0)
        expect(protectedServer.registrations()).toBe(0)
        const [connection] = Object.values(yield* mcp.getMcpClients)
        expect(connection).toMatchObject({ status: "failed", error: { reason: "Connect" } })
      }).pipe(Effect.provide(stack()), Effect.scoped)
  )

  it.live("an authorization that outlasts authorizeTimeout fails the connection with an McpError naming it, and aborts the handler's signal", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const protectedServer = yield* oauthMcpServer(calculator)
      let signal: AbortSignal | undefined
      const error = yield* Effect.flip(mcp.connectMcpServer({
        url: protectedServer.url,
        oauth: {
          redirectUrl: "http://127.0.0.1:1/callback",
          authorizeTimeout: "200 millis",
          onAuthorize: (_url, context) => {
            signal = context.signal
            return new Promise<string>(() => undefined)
          }
        }
      }))
      // The handler is told to stop (and forget the sign-in it began).
      expect(signal?.aborted).toBe(true)
      expect(error).toMatchObject({ _tag: "McpError", reason: "Connect" })
      expect(error.message).toContain("authorizeTimeout")
      expect(protectedServer.grants).toEqual([])
      const [connection] = Object.values(yield* mcp.getMcpClients)
      expect(connection).toMatchObject({ status: "failed", error: { reason: "Connect" } })
    }).pipe(Effect.provide(stack()), Effect.scoped))
})
