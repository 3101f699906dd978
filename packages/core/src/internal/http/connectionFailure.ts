/**
 * What a failed connection's cause says, as a message a person can act on:
 * `connection refused at <url>` rather than `fetch failed`.
 *
 * Node's fetch (undici) reports the system error's `code` a few causes deep
 * (`TypeError: fetch failed` → `Error { code }`), and the clients above it
 * (the platform's `HttpClient`, the typescript-sdk) wrap it again.
 */

import * as Cause from "effect/Cause"
import { isTamboError } from "../../TamboError.js"

export interface ConnectionFailure {
  readonly reason: "Connect" | "Timeout"
  readonly message: string
  /** The URL as it may be shown: no user info, query or fragment. */
  readonly url: string
}

/**
 * The URL without what may hold a secret (user info, query, fragment).
 * Our own URLs carry none, but `tamboUrl` is the user's.
 */
export const displayUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname}`
  } catch {
    // What does not parse may still hold a password before its host.
    return url.replace(/[?#].*$/s, "").replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/]*@/i, "$1")
  }
}

const URL_PATTERN = /\bhttps?:\/\/[^\s"'<>()]+/g

/** `text` with every URL in it as {@link displayUrl} shows it: a client's message may quote the request's URL whole. */
export const scrubUrls = (text: string): string => text.replace(URL_PATTERN, (url) => displayUrl(url))

const phrases: Record<string, readonly [ConnectionFailure["reason"], string]> = {
  ECONNREFUSED: ["Connect", "connection refused at"],
  ENOTFOUND: ["Connect", "host not found at"],
  EAI_AGAIN: ["Connect", "host not found at"],
  ECONNRESET: ["Connect", "connection reset at"],
  UND_ERR_SOCKET: ["Connect", "connection closed by the server at"],
  EPIPE: ["Connect", "connection closed by the server at"],
  EHOSTUNREACH: ["Connect", "host unreachable at"],
  ENETUNREACH: ["Connect", "host unreachable at"],
  ETIMEDOUT: ["Timeout", "connection timed out at"],
  UND_ERR_CONNECT_TIMEOUT: ["Timeout", "connection timed out at"],
  UND_ERR_HEADERS_TIMEOUT: ["Timeout", "no answer in time from"],
  UND_ERR_BODY_TIMEOUT: ["Timeout", "no answer in time from"]
}

/** The first `code` in the cause chain (and in an AggregateError's errors), and the deepest message. */
const inspect = (cause: unknown): { code: string | undefined; message: string | undefined } => {
  let message: string | undefined
  const queue: Array<unknown> = [cause]
  // Bounded: a cause chain may be cyclic.
  for (let seen = 0; queue.length > 0 && seen < 32; seen++) {
    const current = queue.shift()
    if (typeof current !== "object" || current === null) continue
    const code: unknown = (current as { readonly code?: unknown }).code
    if (typeof code === "string" && code.length > 0) return { code, message }
    const text: unknown = (current as { readonly message?: unknown }).message
    if (typeof text === "string" && text.length > 0) message = text
    const errors: unknown = (current as { readonly errors?: unknown }).errors
    if (Array.isArray(errors)) queue.push(...errors)
    if ("cause" in current) queue.push(current.cause)
  }
  return { code: undefined, message }
}

/**
 * Describes a connection that failed with `cause` while calling `url`.
 */
export const describeConnectionFailure = (cause: unknown, url: string): ConnectionFailure => {
  const shown = displayUrl(url)
  const { code, message } = inspect(cause)
  if (code === undefined) {
    return {
      reason: "Connect",
      message: `connection failed at ${shown}${message === undefined ? "" : `: ${scrubUrls(message)}`}`,
      url: shown
    }
  }
  const known = phrases[code]
  return known === undefined
    ? { reason: "Connect", message: `connection failed at ${shown} (${code})`, url: shown }
    : { reason: known[0], message: `${known[1]} ${shown}`, url: shown }
}

/** Whether the cause chain holds a system or undici error code: the connection itself failed. */
export const hasConnectionCode = (cause: unknown): boolean => inspect(cause).code !== undefined

/**
 * Codes of a connection that failed before the request went out: the server has none of it. A
 * reset, a closed socket or a timeout may come after the server took the whole request.
 */
const NOTHING_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT"])

/** Whether the cause chain shows the connection failed before the request went out. */
export const failedBeforeSending = (cause: unknown): boolean => {
  const { code } = inspect(cause)
  return code !== undefined && NOTHING_SENT.has(code)
}

/**
 * Whether `error` is the failure of a request that may have reached the server, with no answer:
 * not to be sent blindly again (`TransportError.mayHaveReachedServer`). The error itself, or the
 * copy a span's failure makes of it.
 */
export const mayHaveReachedServer = (error: unknown): boolean => {
  const original: unknown = Cause.originalError(error)
  return isTamboError(original) && original._tag === "TransportError" && original.mayHaveReachedServer === true
}
