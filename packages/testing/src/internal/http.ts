import type { IncomingMessage, ServerResponse } from "node:http"
import { HttpFailure, nestError } from "./httpError.js"

/**
 * What the API's `cors: true` sends on every response. It exposes no headers: a page cannot read
 * a run's `X-Thread-Id` / `X-Run-Id`, only a server-side client can.
 */
export const corsHeaders: { readonly [name: string]: string } = {
  "Access-Control-Allow-Origin": "*"
}

export interface RequestContext {
  readonly req: IncomingMessage
  readonly res: ServerResponse
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
  readonly body: unknown
  /** The body as received: a multipart upload is parsed from its bytes. */
  readonly rawBytes: Buffer
  readonly params: { readonly [name: string]: string }
  /** The bearer token's context key, once the bearer guard ran. */
  bearer: string | undefined
}

/** A request's headers by lower-cased name, a repeated header's values joined with `, `. */
export const flattenHeaders = (req: IncomingMessage): { [name: string]: string } => {
  const out: { [name: string]: string } = {}
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value
  }
  return out
}

export const sendJson = (
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: { readonly [name: string]: string } = {}
): void => {
  if (res.headersSent) {
    res.end()
    return
  }
  const payload = typeof body === "string" ? body : JSON.stringify(body)
  res.writeHead(status, {
    ...corsHeaders,
    "Content-Type": typeof body === "string" ? "text/plain; charset=utf-8" : "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(payload).toString(),
    ...headers
  })
  res.end(payload)
}

export const sendEmpty = (res: ServerResponse, status: number, headers: { readonly [name: string]: string } = {}): void => {
  res.writeHead(status, { ...corsHeaders, ...headers })
  res.end()
}

export const sendFailure = (res: ServerResponse, failure: HttpFailure): void =>
  sendJson(res, failure.status, failure.body, failure.headers)

const BODY_LIMIT = 10 * 1024 * 1024

export const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > BODY_LIMIT) {
        reject(nestError(413, "request entity too large"))
        req.destroy()
        return
      }
      chunks.push(chunk)
    })
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

/** Like the API's body parsers: JSON and form bodies are parsed, anything else is `{}`. */
export const parseBody = (raw: string, contentType: string | undefined): unknown => {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase()
  if (type === "application/json" || type.endsWith("+json")) {
    if (raw.trim() === "") return {}
    try {
      return JSON.parse(raw)
    } catch (error) {
      throw nestError(400, error instanceof Error ? error.message : "Invalid JSON")
    }
  }
  if (type === "application/x-www-form-urlencoded") {
    const fields: { [key: string]: string } = {}
    for (const [key, value] of new URLSearchParams(raw)) fields[key] = value
    return fields
  }
  return {}
}

/** A field of a parsed body, if the body is an object and the field a string. */
export const bodyString = (body: unknown, key: string): string | undefined => {
  if (typeof body !== "object" || body === null) return undefined
  const value: unknown = Reflect.get(body, key)
  return typeof value === "string" ? value : undefined
}

export { HttpFailure }
