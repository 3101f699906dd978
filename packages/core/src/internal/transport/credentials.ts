/**
 * How a request says whom it acts for: a user key goes in its parameters or
 * body, a bearer token (from a user token's exchange) in its headers.
 *
 * @internal
 */
import * as Redacted from "effect/Redacted"
import type { Credentials } from "../../TamboTransport.js"

/** The user key the request names, when it acts for one. */
export const userKeyOf = (credentials: Credentials): string | undefined =>
  credentials._tag === "UserKey" ? credentials.userKey : undefined

/** The headers of a request acting for a bearer token; none for a user key. */
export const headersOf = (credentials: Credentials): Record<string, string> =>
  credentials._tag === "Bearer" ? { authorization: `Bearer ${Redacted.value(credentials.token)}` } : {}

/** The parameters of a REST call, with the user key when the credentials carry one. */
export const withUserKey = <A extends object>(params: A, credentials: Credentials): A & { userKey?: string } =>
  credentials._tag === "UserKey" ? { ...params, userKey: credentials.userKey } : params
