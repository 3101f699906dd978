/**
 * An MCP server protected by OAuth on loopback, built from the MCP SDK's own
 * server-side auth: `mcpAuthRouter` (metadata, dynamic client registration,
 * authorize, token with PKCE and refresh) and `requireBearerAuth` in front of
 * a Streamable HTTP endpoint. The authorization server approves every
 * request at once (no login page): `/authorize` redirects straight to the
 * client's redirect URI with a code.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js"
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js"
import type { AuthorizationParams, OAuthServerProvider } from "@modelcontextprotocol/sdk/server/auth/provider.js"
import { getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from "@modelcontextprotocol/sdk/server/auth/router.js"
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js"
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import type { OAuthClientInformationFull, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface OAuthMcpServer {
  readonly url: string
  /** The grant types the token endpoint served, in order. */
  readonly grants: ReadonlyArray<string>
  /** How many clients registered dynamically. */
  readonly registrations: () => number
  /** Every access token issued so far stops working (as when they expire). */
  readonly expireAccessTokens: () => void
  /** Requests to `/mcp` answered 401. */
  readonly unauthorized: () => number
  /** The next `count` requests to the token endpoint are answered 503 (the authorization server briefly down). */
  readonly failTokenRequests: (count: number) => void
}

class Provider implements OAuthServerProvider {
  readonly clients = new Map<string, OAuthClientInformationFull>()
  readonly codes = new Map<string, { readonly client: OAuthClientInformationFull; readonly params: AuthorizationParams }>()
  readonly accessTokens = new Map<string, AuthInfo>()
  readonly refreshTokens = new Map<string, string>()

  constructor(readonly grants: Array<string>) {}

  readonly clientsStore = {
    getClient: (clientId: string) => this.clients.get(clientId),
    registerClient: (client: Omit<OAuthClientInformationFull, "client_id" | "client_id_issued_at">) => {
      const full: OAuthClientInformationFull = { ...client, client_id: randomUUID(), client_id_issued_at: Math.floor(Date.now() / 1000) }
      this.clients.set(full.client_id, full)
      return full
    }
  }

  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: { redirect: (url: string) => void }) {
    const code = randomUUID()
    this.codes.set(code, { client, params })
    const target = new URL(params.redirectUri)
    target.searchParams.set("code", code)
    if (params.state !== undefined) target.searchParams.set("state", params.state)
    res.redirect(target.href)
  }

  async challengeForAuthorizationCode(_client: OAuthClientInformationFull, code: string) {
    const found = this.codes.get(code)
    if (found === undefined) throw new Error("Invalid authorization code")
    return found.params.codeChallenge
  }

  private issue(clientId: string): OAuthTokens {
    const access = randomUUID()
    const refresh = randomUUID()
    this.accessTokens.set(access, { token: access, clientId, scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 3600 })
    this.refreshTokens.set(refresh, clientId)
    return { access_token: access, token_type: "bearer", expires_in: 3600, refresh_token: refresh }
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string) {
    const found = this.codes.get(code)
    if (found === undefined || found.client.client_id !== client.client_id) throw new Error("Invalid authorization code")
    this.grants.push("authorization_code")
    this.codes.delete(code)
    return this.issue(client.client_id)
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string) {
    if (this.refreshTokens.get(refreshToken) !== client.client_id) throw new Error("Invalid refresh token")
    this.grants.push("refresh_token")
    this.refreshTokens.delete(refreshToken)
    return this.issue(client.client_id)
  }

  async verifyAccessToken(token: string) {
    const info = this.accessTokens.get(token)
    if (info === undefined) throw new InvalidTokenError("Invalid or expired token")
    return info
  }
}

const listen = (server: ReturnType<typeof createServer>): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))
  })

/** An OAuth-protected MCP server for the enclosing scope; `setup` registers what each session offers. */
export const oauthMcpServer = (setup: (server: McpServer) => void): Effect.Effect<OAuthMcpServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const grants: Array<string> = []
      const provider = new Provider(grants)
      let unauthorized = 0
      let failingTokenRequests = 0
      const http = createServer()
      const port = await listen(http)
      const base = new URL(`http://127.0.0.1:${port}`)
      const mcpUrl = new URL("/mcp", base)
      const app = createMcpExpressApp()
      // Open to pages of other origins (the browser tests): the auth router's endpoints do this themselves.
      app.use("/mcp", (req: IncomingMessage, res: ServerResponse, next: () => void) => {
        res.setHeader("Access-Control-Allow-Origin", "*")
        res.setHeader("Access-Control-Expose-Headers", "WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version")
        if (req.method !== "OPTIONS") return next()
        res.writeHead(204, {
          "Access-Control-Allow-Methods": "GET, POST, DELETE",
          "Access-Control-Allow-Headers": req.headers["access-control-request-headers"] ?? "*"
        }).end()
      })
      app.use("/token", (_req: IncomingMessage, res: ServerResponse, next: () => void) => {
        if (failingTokenRequests === 0) return next()
        failingTokenRequests--
        res.writeHead(503, { "Access-Control-Allow-Origin": "*" }).end("down for a moment")
      })
      app.use(mcpAuthRouter({ provider, issuerUrl: base, resourceServerUrl: mcpUrl }))
      const bearer = requireBearerAuth({
        verifier: provider,
        resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl)
      })
      app.all("/mcp", (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => {
        res.on("finish", () => {
          if (res.statusCode === 401) unauthorized++
        })
        bearer(req as never, res as never, next)
      }, async (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => {
        if (req.method !== "POST") {
          res.writeHead(405).end()
          return
        }
        // Stateless: a server per request.
        const server = new McpServer({ name: "oauth-mcp-server", version: "1.0.0" })
        setup(server)
        const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true })
        res.on("close", () => void transport.close().then(() => server.close()))
        await server.connect(transport)
        await transport.handleRequest(req, res, req.body)
      })
      http.on("request", app)
      return {
        http,
        server: {
          url: mcpUrl.href,
          grants,
          registrations: () => provider.clients.size,
          expireAccessTokens: () => provider.accessTokens.clear(),
          unauthorized: () => unauthorized,
          failTokenRequests: (count: number) => {
            failingTokenRequests = count
          }
        }
      }
    }),
    ({ http }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          http.close(() => resolve())
          http.closeAllConnections()
        })
      )
  ).pipe(Effect.map(({ server }) => server))

/**
 * What a user's browser does with an authorization URL here: follows it to
 * the redirect and hands back the code it carries.
 */
export const approve = async (authorizationUrl: string): Promise<string> => {
  const response = await fetch(authorizationUrl, { redirect: "manual" })
  const location = response.headers.get("location")
  if (location === null) throw new Error(`no redirect from ${authorizationUrl} (${response.status})`)
  const code = new URL(location).searchParams.get("code")
  if (code === null) throw new Error(`no code in ${location}`)
  return code
}
