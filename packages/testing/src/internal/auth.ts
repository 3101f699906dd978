// The API's guards and token exchange: `x-api-key` (403 when missing or wrong), optional
// `Authorization: Bearer <token>` (401 when malformed, unknown or expired), and the v1 rule that a
// request names exactly one context: a `userKey` or a bearer token's user.
import { isRecord } from "effect/Predicate"
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import type { IncomingHttpHeaders } from "node:http"
import { badRequest, forbidden, unauthorized } from "./httpError.js"

export interface AccessTokenClaims {
  readonly sub: string
  readonly iss: string
  readonly aud: string
  readonly iat: number
  readonly exp: number
  readonly original_iss?: string
  readonly original_hd?: string
  readonly original_tid?: string
  readonly original_org_id?: string
}

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

export const checkApiKey = (headers: IncomingHttpHeaders, apiKey: string): void => {
  const sent = header(headers, "x-api-key")
  if (sent === undefined || sent === "" || sent !== apiKey) throw forbidden()
}

const base64urlJson = (value: unknown): string => Buffer.from(JSON.stringify(value), "utf8").toString("base64url")

const decodeSegment = (segment: string): unknown => JSON.parse(Buffer.from(segment, "base64url").toString("utf8"))

/** Signs and verifies the HS256 access tokens the token exchange issues. */
export class TokenIssuer {
  private readonly secret = randomBytes(32)

  constructor(readonly projectId: string) {}

  sign(claims: AccessTokenClaims): string {
    const unsigned = `${base64urlJson({ alg: "HS256" })}.${base64urlJson(claims)}`
    return `${unsigned}.${this.signature(unsigned)}`
  }

  private signature(unsigned: string): string {
    return createHmac("sha256", this.secret).update(unsigned).digest("base64url")
  }

  /** The token's claims if it is ours, for `audience`, intact and not expired at `nowSeconds`. */
  verify(token: string, nowSeconds: number, audience = "tambo"): AccessTokenClaims | undefined {
    const parts = token.split(".")
    if (parts.length !== 3) return undefined
    const [head, body, signature] = parts as [string, string, string]
    const expected = Buffer.from(this.signature(`${head}.${body}`))
    const actual = Buffer.from(signature)
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined
    let claims: unknown
    try {
      claims = decodeSegment(body)
    } catch {
      return undefined
    }
    if (!isRecord(claims)) return undefined
    const { sub, iss, aud, iat, exp } = claims
    if (typeof sub !== "string" || typeof iss !== "string" || typeof aud !== "string") return undefined
    if (typeof iat !== "number" || typeof exp !== "number") return undefined
    if (iss !== this.projectId || aud !== audience) return undefined
    // jose rejects a token whose `exp` is not in the future.
    if (exp <= nowSeconds) return undefined
    const optional = (key: string): { readonly [k: string]: string } => {
      const value = claims[key]
      return typeof value === "string" ? { [key]: value } : {}
    }
    return {
      sub,
      iss,
      aud,
      iat,
      exp,
      ...optional("original_iss"),
      ...optional("original_hd"),
      ...optional("original_tid"),
      ...optional("original_org_id")
    }
  }
}

/**
 * The context key a bearer token stands for: `oauth:user:<issuer host>[:<org>]:<sub>`, with the
 * organization from Google's `hd`, Microsoft's `tid` or an `org_id` claim.
 */
export const contextKeyOf = (claims: AccessTokenClaims): string => {
  const issuer = claims.original_iss
  if (issuer === undefined || issuer === "") return `oauth:user:${claims.sub}`
  let host: string
  try {
    host = new URL(issuer).hostname
  } catch {
    host = issuer.replace(/[^a-zA-Z0-9.-]/g, "_")
  }
  const hd = claims.original_hd?.trim()
  if (host === "accounts.google.com" && hd) return `oauth:user:${host}:${claims.original_hd}:${claims.sub}`
  const tid = claims.original_tid?.trim()
  const microsoft = host === "login.microsoftonline.com" || host.endsWith(".microsoftonline.com") || host === "sts.windows.net"
  if (microsoft && tid) return `oauth:user:${host}:${claims.original_tid}:${claims.sub}`
  if (claims.original_org_id?.trim()) return `oauth:user:${host}:${claims.original_org_id}:${claims.sub}`
  return `oauth:user:${host}:${claims.sub}`
}

/** The bearer's context key, or undefined without an `Authorization` header. */
export const checkBearer = (
  headers: IncomingHttpHeaders,
  issuer: TokenIssuer,
  nowSeconds: number
): string | undefined => {
  const authorization = header(headers, "authorization")
  if (authorization === undefined) return undefined
  if (!authorization.toLowerCase().startsWith("bearer ")) throw unauthorized("Invalid Authorization header format")
  const claims = issuer.verify(authorization.slice(7), nowSeconds)
  if (claims === undefined) throw unauthorized("Invalid bearer token")
  return contextKeyOf(claims)
}

/** The v1 API requires exactly one context identifier: a userKey or a bearer token. */
export const resolveV1Context = (userKey: unknown, bearerContextKey: string | undefined): string => {
  const trimmed = typeof userKey === "string" ? userKey.trim() : undefined
  if (trimmed === "") throw badRequest("userKey cannot be an empty string.")
  if (trimmed !== undefined && bearerContextKey !== undefined) {
    throw badRequest(
      "V1 APIs require exactly one context identifier: provide either userKey (query/body) or an OAuth bearer token with a context key (received both)."
    )
  }
  const contextKey = trimmed ?? bearerContextKey
  if (contextKey === undefined) {
    throw badRequest(
      "V1 APIs require exactly one context identifier: provide either userKey (query/body) or an OAuth bearer token with a context key (received neither)."
    )
  }
  return contextKey
}

/** The pre-v1 endpoints (MCP token, thread naming) accept at most one context source. */
export const resolveLegacyContext = (apiContextKey: string | undefined, bearerContextKey: string | undefined): string | undefined => {
  if (apiContextKey && bearerContextKey) {
    throw badRequest("Context key cannot be provided both via API parameter and OAuth bearer token. Use only one method.")
  }
  return bearerContextKey || apiContextKey || undefined
}

export interface SubjectIdentity {
  readonly sub: string
  readonly iss: string | undefined
  readonly hd: string | undefined
  readonly tid: string | undefined
  readonly orgId: string | undefined
  readonly exp: number | undefined
}

/**
 * What the API's default validation mode (none) makes of a subject token: a JWT is decoded without
 * verifying its signature (but an expired one is refused); anything else is an opaque token whose
 * hash becomes the subject.
 */
export const readSubjectToken = (token: string, nowSeconds: number): SubjectIdentity => {
  const parts = token.split(".")
  if (parts.length === 3) {
    let payload: unknown
    try {
      payload = decodeSegment(parts[1]!)
    } catch {
      payload = undefined
    }
    if (isRecord(payload)) {
      const text = (key: string): string | undefined => {
        const value = payload[key]
        return typeof value === "string" ? value : undefined
      }
      const exp = typeof payload["exp"] === "number" ? payload["exp"] : undefined
      if (exp !== undefined && exp < nowSeconds) throw unauthorized("Token has expired")
      const sub = text("sub")
      if (sub === undefined || sub === "") throw unauthorized("Subject token missing subject (sub)")
      return { sub, iss: text("iss"), hd: text("hd"), tid: text("tid"), orgId: text("org_id"), exp }
    }
  }
  const hash = createHash("sha256").update(token).digest("hex")
  return { sub: `opaque:${hash}`, iss: undefined, hd: undefined, tid: undefined, orgId: undefined, exp: undefined }
}
