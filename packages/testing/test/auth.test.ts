// API key, context identifiers, the OAuth token exchange and the MCP token, through the real SDK.
import { createHash } from "node:crypto"
import TamboAI from "@tambo-ai/typescript-sdk"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Script, startTestServer, type TestServer } from "../src/index.js"
import { client, collect, field, rejection, str, USER, userMessage } from "./helpers.js"

const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
const ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token"
const ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"

/** An unsigned JWT: the API's default validation mode only decodes subject tokens. */
const jwt = (claims: object): string =>
  [{ alg: "RS256", typ: "JWT" }, claims].map((part) => Buffer.from(JSON.stringify(part)).toString("base64url")).join(".") + ".sig"

let server: TestServer
let clock: number
beforeEach(async () => {
  clock = Date.parse("2025-06-01T12:00:00.000Z")
  server = await startTestServer({ script: [Script.text("ok")], tokenTtlSeconds: 600, now: () => clock })
})
afterEach(() => server.close())

describe("API key", () => {
  it("answers a wrong key with 403 Forbidden resource on every route", async () => {
    const sdk = client(server, { apiKey: "wrong-key" })
    const list = await rejection(sdk.threads.list({ userKey: USER }))
    expect(list).toBeInstanceOf(TamboAI.PermissionDeniedError)
    expect(field(list, "status")).toBe(403)
    expect(field(list, "error")).toEqual({ message: "Forbidden resource", error: "Forbidden", statusCode: 403 })
    const run = await rejection(sdk.threads.runs.create({ message: userMessage("Hi"), thread: { userKey: USER } }))
    expect(run).toBeInstanceOf(TamboAI.PermissionDeniedError)
    const token = await rejection(sdk.beta.auth.getToken({ grant_type: TOKEN_EXCHANGE, subject_token: "t", subject_token_type: ACCESS_TOKEN }))
    expect(token).toBeInstanceOf(TamboAI.PermissionDeniedError)
    expect(server.threads.list()).toEqual([])
  })
})

describe("context identifiers", () => {
  it("requires a userKey or a bearer token on v1 calls (400)", async () => {
    const sdk = client(server)
    const list = await rejection(sdk.threads.list())
    expect(list).toBeInstanceOf(TamboAI.BadRequestError)
    expect(field(list, "error")).toEqual({
      message:
        "V1 APIs require exactly one context identifier: provide either userKey (query/body) or an OAuth bearer token with a context key (received neither).",
      error: "Bad Request",
      statusCode: 400
    })
    const run = await rejection(sdk.threads.runs.create({ message: userMessage("Hi") }))
    expect(run).toBeInstanceOf(TamboAI.BadRequestError)
    // A top-level userKey is not read when creating a thread with a run: only thread.userKey is.
    const topLevel = await rejection(sdk.threads.runs.create({ message: userMessage("Hi"), userKey: USER }))
    expect(field(topLevel, "error", "message")).toContain("(received neither)")
    const empty = await rejection(sdk.threads.list({ userKey: "  " }))
    expect(field(empty, "error", "message")).toBe("userKey cannot be an empty string.")
  })

  it("rejects a userKey together with a bearer token (400)", async () => {
    const exchanged = await client(server).beta.auth.getToken({ grant_type: TOKEN_EXCHANGE, subject_token: "opaque", subject_token_type: ACCESS_TOKEN })
    const both = await rejection(client(server, { bearer: exchanged.access_token }).threads.list({ userKey: USER }))
    expect(field(both, "error", "message")).toContain("(received both)")
  })
})

describe("OAuth token exchange", () => {
  it("exchanges an opaque user token for an access token that identifies the user", async () => {
    const sdk = client(server)
    const exchanged = await sdk.beta.auth.getToken({ grant_type: TOKEN_EXCHANGE, subject_token: "opaque-user-token", subject_token_type: ACCESS_TOKEN })
    expect(exchanged).toEqual({
      access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      token_type: "Bearer",
      expires_in: 600,
      issued_token_type: ACCESS_TOKEN
    })
    const request = server.requests.at(-1)
    expect(request).toMatchObject({ method: "POST", path: "/oauth/token" })
    expect(request?.headers["content-type"]).toBe("application/x-www-form-urlencoded")
    expect(request?.body).toEqual({ grant_type: TOKEN_EXCHANGE, subject_token: "opaque-user-token", subject_token_type: ACCESS_TOKEN })

    const asUser = client(server, { bearer: exchanged.access_token })
    const thread = await asUser.threads.create({})
    const hash = createHash("sha256").update("opaque-user-token").digest("hex")
    expect(thread.userKey).toBe(`oauth:user:opaque:${hash}`)
    const events = await collect(await asUser.threads.runs.create({ message: userMessage("Hi") }))
    expect(server.threads.get(str(events[0]!, "threadId"))?.userKey).toBe(`oauth:user:opaque:${hash}`)
    expect((await asUser.threads.list()).threads).toHaveLength(2)
    // The same user by userKey is someone else.
    expect((await sdk.threads.list({ userKey: USER })).threads).toHaveLength(0)
  })

  it("derives the user from a JWT subject token and never outlives it", async () => {
    const nowSeconds = Math.floor(clock / 1000)
    const exchanged = await client(server).beta.auth.getToken({
      grant_type: TOKEN_EXCHANGE,
      subject_token: jwt({ iss: "https://accounts.google.com", sub: "12345", hd: "example.com", exp: nowSeconds + 120 }),
      subject_token_type: ID_TOKEN
    })
    expect(exchanged.expires_in).toBe(120)
    const thread = await client(server, { bearer: exchanged.access_token }).threads.create({})
    expect(thread.userKey).toBe("oauth:user:accounts.google.com:example.com:12345")
  })

  it("answers 401 once the access token expired, or for an unknown one", async () => {
    const exchanged = await client(server).beta.auth.getToken({ grant_type: TOKEN_EXCHANGE, subject_token: "u", subject_token_type: ACCESS_TOKEN })
    const asUser = client(server, { bearer: exchanged.access_token })
    await expect(asUser.threads.list()).resolves.toMatchObject({ threads: [] })
    clock += 599_000
    await expect(asUser.threads.list()).resolves.toMatchObject({ threads: [] })
    clock += 1_000
    const expired = await rejection(asUser.threads.list())
    expect(expired).toBeInstanceOf(TamboAI.AuthenticationError)
    expect(field(expired, "error")).toEqual({ message: "Invalid bearer token", error: "Unauthorized", statusCode: 401 })

    const forged = await rejection(client(server, { bearer: `${exchanged.access_token}x` }).threads.list())
    expect(forged).toBeInstanceOf(TamboAI.AuthenticationError)
    const malformed = await fetch(`${server.url}/v1/threads`, { headers: { "x-api-key": server.apiKey, authorization: "Basic abc" } })
    expect(malformed.status).toBe(401)
    expect(await malformed.json()).toMatchObject({ message: "Invalid Authorization header format" })
  })

  it("validates the exchange request like the API", async () => {
    const sdk = client(server)
    const grant = await rejection(sdk.beta.auth.getToken({ grant_type: "password", subject_token: "t", subject_token_type: ACCESS_TOKEN }))
    expect(field(grant, "error", "message")).toBe("Invalid grant_type. Must be 'urn:ietf:params:oauth:grant-type:token-exchange'")
    const type = await rejection(sdk.beta.auth.getToken({ grant_type: TOKEN_EXCHANGE, subject_token: "t", subject_token_type: "saml" }))
    expect(field(type, "error", "message")).toBe(
      "Invalid subject_token_type. Must be one of: urn:ietf:params:oauth:token-type:access_token, urn:ietf:params:oauth:token-type:id_token"
    )
    const missing = await rejection(sdk.beta.auth.getToken({ grant_type: TOKEN_EXCHANGE, subject_token: "", subject_token_type: ACCESS_TOKEN }))
    expect(field(missing, "error", "message")).toEqual(["subject_token should not be empty"])
    const expired = await rejection(sdk.beta.auth.getToken({
      grant_type: TOKEN_EXCHANGE,
      subject_token: jwt({ sub: "a", exp: Math.floor(clock / 1000) - 1 }),
      subject_token_type: ID_TOKEN
    }))
    expect(expired).toBeInstanceOf(TamboAI.AuthenticationError)
    expect(field(expired, "error", "message")).toBe("Token has expired")
  })
})

describe("MCP access token", () => {
  it("issues session tokens for a thread and sessionless ones for a context", async () => {
    const sdk = client(server)
    const thread = await sdk.threads.create({ userKey: USER })
    const session = await sdk.beta.auth.getMcpToken({ threadId: thread.id })
    expect(session).toEqual({ mcpAccessToken: expect.any(String), expiresAt: clock + 15 * 60_000, hasSession: true })
    const sessionless = await sdk.beta.auth.getMcpToken({ contextKey: USER })
    expect(sessionless).toMatchObject({ hasSession: false })
    expect(server.requests.at(-1)).toMatchObject({ path: "/auth/mcp/access-token", body: { contextKey: USER } })

    const unknownThread = await rejection(sdk.beta.auth.getMcpToken({ threadId: "thr_missing" }))
    expect(unknownThread).toBeInstanceOf(TamboAI.NotFoundError)
    const noContext = await rejection(sdk.beta.auth.getMcpToken({}))
    expect(field(noContext, "error", "message")).toBe(
      "Context key is required for sessionless tokens (provide in body or use Bearer token authentication)"
    )
    // An MCP token is not an access token.
    const misuse = await rejection(client(server, { bearer: String(sessionless.mcpAccessToken) }).threads.list())
    expect(misuse).toBeInstanceOf(TamboAI.AuthenticationError)
  })

  it("uses the bearer's user, and answers {} when the project has no MCP servers", async () => {
    const exchanged = await client(server).beta.auth.getToken({ grant_type: TOKEN_EXCHANGE, subject_token: "u", subject_token_type: ACCESS_TOKEN })
    await expect(client(server, { bearer: exchanged.access_token }).beta.auth.getMcpToken({})).resolves.toMatchObject({ hasSession: false })

    await server.close()
    server = await startTestServer({ mcpServers: false })
    await expect(client(server).beta.auth.getMcpToken({ contextKey: USER })).resolves.toEqual({})
  })
})
