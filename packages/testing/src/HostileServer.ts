/**
 * A loopback HTTP server that answers with faults: silence, a stall after the
 * headers or after some frames, a status with headers (429 + `Retry-After`),
 * a redirect, one huge frame, raw bytes. It implements no API: each request
 * gets the next fault of its script, which is how an app is tested against a
 * broken or hostile server (timeouts, retries, redirects, limits).
 *
 * @example
 * ```ts
 * import { HostileServer } from "@tambo-effect/testing"
 *
 * const server = await HostileServer.start()
 * // The first request is rate limited, the second never answered.
 * server.respond(HostileServer.status(429, { headers: { "retry-after": "2" } }), HostileServer.silent())
 * // ... point the client at server.url ...
 * await server.close()
 * ```
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { Buffer } from "node:buffer"
import * as http from "node:http"
import type * as net from "node:net"
import { flattenHeaders } from "./internal/http.js"

/**
 * What the server does with one request.
 *
 * - `Silent`: accepts the request and never answers.
 * - `Reset`: resets the connection (TCP RST) without answering.
 * - `Answer`: writes a status, headers and `chunks` (in order), then ends the
 *   response, or stalls with the connection open if `stall` is set.
 * - `Raw`: writes `chunks` as they are on the socket (no HTTP framing), then
 *   closes it, or stalls if `stall` is set.
 *
 * @since 0.2.0
 * @category Models
 */
export type Fault =
  | { readonly _tag: "Silent" }
  | { readonly _tag: "Reset" }
  | {
    readonly _tag: "Answer"
    readonly status: number
    readonly headers: Readonly<Record<string, string>>
    readonly chunks: ReadonlyArray<string | Uint8Array>
    readonly stall: boolean
  }
  | { readonly _tag: "Raw"; readonly chunks: ReadonlyArray<string | Uint8Array>; readonly stall: boolean }

/**
 * One request the server received.
 *
 * @since 0.2.0
 * @category Models
 */
export interface HostileRequest {
  readonly method: string
  /** Path and query string as requested. */
  readonly url: string
  /** Lower-cased header names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * A running hostile server.
 *
 * @since 0.2.0
 * @category Models
 */
export interface HostileServer {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly url: string
  /** Every request received, in order. */
  readonly requests: ReadonlyArray<HostileRequest>
  /**
   * Scripts the answers: the n-th request from now gets the n-th fault, and
   * the last fault answers every request after it. A function chooses per
   * request. Forgets the requests recorded so far.
   */
  readonly respond: (...faults: ReadonlyArray<Fault | ((request: HostileRequest) => Fault)>) => void
  /** Closes the server and every connection it holds open. */
  readonly close: () => Promise<void>
}

/**
 * Accepts the request and never answers: no status, no headers.
 *
 * @since 0.2.0
 * @category Faults
 */
export const silent = (): Fault => ({ _tag: "Silent" })

/**
 * Resets the connection (TCP RST) without answering.
 *
 * @since 0.2.0
 * @category Faults
 */
export const reset = (): Fault => ({ _tag: "Reset" })

/**
 * Answers `status` with `headers` and `body`, then ends the response.
 *
 * @since 0.2.0
 * @category Faults
 */
export const status = (
  code: number,
  options: { readonly headers?: Readonly<Record<string, string>>; readonly body?: string | Uint8Array } = {}
): Fault => ({
  _tag: "Answer",
  status: code,
  headers: options.headers ?? {},
  chunks: options.body === undefined ? [] : [options.body],
  stall: false
})

/**
 * Redirects: `status` (301, 302, 303, 307, 308) with `Location: location`.
 *
 * @since 0.2.0
 * @category Faults
 */
export const redirect = (code: number, location: string): Fault => status(code, { headers: { location } })

const eventStream = { "content-type": "text/event-stream", "cache-control": "no-cache" }

/** A frame on the wire: each line of `data` a `data:` line, then a blank line. */
const frameText = (data: string) => `data: ${data.split("\n").join("\ndata: ")}\n\n`

/**
 * Answers 200 with an event stream of `frames` (each the `data` of one
 * server-sent event, usually JSON) and ends it; with `stall`, keeps the
 * connection open after the last frame instead.
 *
 * @since 0.2.0
 * @category Faults
 */
export const frames = (
  data: ReadonlyArray<string>,
  options: { readonly stall?: boolean; readonly headers?: Readonly<Record<string, string>> } = {}
): Fault => ({
  _tag: "Answer",
  status: 200,
  headers: { ...eventStream, ...options.headers },
  chunks: data.map(frameText),
  stall: options.stall ?? false
})

/**
 * Answers 200 with event-stream headers, then stalls: no byte of the body.
 *
 * @since 0.2.0
 * @category Faults
 */
export const headersThenStall = (headers?: Readonly<Record<string, string>>): Fault =>
  frames([], { stall: true, ...(headers === undefined ? {} : { headers }) })

/**
 * Writes `data` frames, then stalls with the connection open.
 *
 * @since 0.2.0
 * @category Faults
 */
export const framesThenStall = (data: ReadonlyArray<string>, headers?: Readonly<Record<string, string>>): Fault =>
  frames(data, { stall: true, ...(headers === undefined ? {} : { headers }) })

/**
 * The `data` of an AG-UI `CUSTOM` event padded to exactly `bytes` bytes (at
 * least 40): a valid event a client ignores, as large as asked.
 *
 * @since 0.2.0
 * @category Faults
 */
export const paddedEvent = (bytes: number): string => {
  const head = `{"type":"CUSTOM","name":"padding","value":"`
  const tail = `"}`
  return head + "x".repeat(Math.max(0, bytes - head.length - tail.length)) + tail
}

/**
 * Answers 200 with one event of `bytes` bytes of data (see {@link paddedEvent}),
 * written in writes of `chunkBytes` (default 64 KiB), then ends the stream.
 *
 * @since 0.2.0
 * @category Faults
 */
export const frameOfSize = (bytes: number, options: { readonly chunkBytes?: number } = {}): Fault => {
  const text = Buffer.from(frameText(paddedEvent(bytes)))
  const size = Math.max(1, options.chunkBytes ?? 65_536)
  const chunks: Array<Uint8Array> = []
  for (let at = 0; at < text.length; at += size) chunks.push(text.subarray(at, at + size))
  return { _tag: "Answer", status: 200, headers: eventStream, chunks, stall: false }
}

/**
 * Writes `chunks` on the socket as they are, with no HTTP framing (a status
 * line and headers are the caller's to write, or not), then closes it; with
 * `stall`, keeps it open.
 *
 * @since 0.2.0
 * @category Faults
 */
export const raw = (chunks: ReadonlyArray<string | Uint8Array>, options: { readonly stall?: boolean } = {}): Fault => ({
  _tag: "Raw",
  chunks,
  stall: options.stall ?? false
})

/**
 * Starts a hostile server on `127.0.0.1` (a free port). Until scripted with
 * `respond`, every request is answered `silent()`.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const start = (): Promise<HostileServer> => {
  const sockets = new Set<net.Socket>()
  const requests: Array<HostileRequest> = []
  let script: ReadonlyArray<Fault | ((request: HostileRequest) => Fault)> = [silent()]
  let next = 0

  const answer = (fault: Fault, response: http.ServerResponse, socket: net.Socket) => {
    switch (fault._tag) {
      case "Silent":
        return
      case "Reset":
        socket.resetAndDestroy()
        return
      case "Raw":
        for (const chunk of fault.chunks) socket.write(chunk)
        if (!fault.stall) socket.end()
        return
      case "Answer":
        response.writeHead(fault.status, { ...fault.headers })
        // Headers go out now, not with the first chunk: a stall after them is a stall after them.
        response.flushHeaders()
        for (const chunk of fault.chunks) response.write(chunk)
        if (!fault.stall) response.end()
    }
  }

  const server = http.createServer((request, response) => {
    const parts: Array<Buffer> = []
    request.on("data", (part: Buffer) => parts.push(part))
    request.on("end", () => {
      const recorded: HostileRequest = {
        method: request.method ?? "GET",
        url: request.url ?? "/",
        headers: flattenHeaders(request),
        body: Buffer.concat(parts).toString("utf8")
      }
      requests.push(recorded)
      const step = script[Math.min(next++, script.length - 1)] ?? silent()
      answer(typeof step === "function" ? step(recorded) : step, response, request.socket)
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        respond: (...faults) => {
          script = faults.length === 0 ? [silent()] : faults
          next = 0
          requests.length = 0
        },
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })
}

/**
 * A hostile server closed when the scope closes.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const scoped: Effect.Effect<HostileServer, never, Scope.Scope> = Effect.acquireRelease(
  Effect.promise(start),
  (server) => Effect.promise(() => server.close())
)
