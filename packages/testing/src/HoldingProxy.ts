/**
 * A loopback HTTP proxy in front of a server (a `TestServer`, usually) that passes every request
 * through unchanged, bodies and streamed responses chunk by chunk, except the ones a test asks it
 * to hold: a held request waits before it reaches the server, a held response waits after the
 * server answered, a held body waits after the answer's status and headers went to the client,
 * each until the test releases it (or fails it instead). This is how a test makes two things
 * overlap deterministically: a read that answers after a write, a run that starts while a token
 * exchange is still in flight, a run cancelled after its headers and before its first event.
 *
 * @example
 * ```ts
 * import { HoldingProxy, startTestServer } from "@tambo-effect/testing"
 *
 * const server = await startTestServer()
 * const proxy = await HoldingProxy.start(server)
 * // The next read of a thread reaches the server at once; its answer waits.
 * const read = proxy.holdResponse((request) => request.method === "GET" && request.path.startsWith("/v1/threads/"))
 * // ... point the client at proxy.url and read a thread ...
 * await read.arrived // the server answered
 * // ... change the thread meanwhile ...
 * read.release() // the old answer reaches the client now
 * await proxy.close()
 * ```
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as http from "node:http"
import type * as net from "node:net"
import { flattenHeaders } from "./internal/http.js"

/**
 * A request as the proxy matches it.
 *
 * @since 0.2.0
 * @category Models
 */
export interface ProxiedRequest {
  readonly method: string
  /** Path and query string as requested. */
  readonly url: string
  /** The path alone, without the query string. */
  readonly path: string
  /** Lower-cased header names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>
}

/**
 * Chooses the request to hold.
 *
 * @since 0.2.0
 * @category Models
 */
export type RequestMatcher = (request: ProxiedRequest) => boolean

/**
 * How a held request is held.
 *
 * @since 0.2.0
 * @category Models
 */
export interface HoldRequestOptions {
  /**
   * Whether a request whose client went while it was held still reaches the server once released,
   * as a request that was on its way when the client gave up on it arrives late: the server takes
   * it and answers, and its answer is read to its end and dropped. Off by default: such a request
   * never reaches the server.
   */
  readonly forwardAfterClientGone?: boolean
}

/**
 * One held request or response. `release`, `fail` and `reset` may come before it arrived: it is then
 * released (or failed) as soon as it comes.
 *
 * @since 0.2.0
 * @category Models
 */
export interface Held {
  /**
   * Resolves once the matched request came to the proxy (a held request) or the server's answer
   * to it came (a held response). Never resolves if no request matched before the proxy closed.
   */
  readonly arrived: Promise<void>
  /** Lets it go on: the request to the server, or the server's answer to the client. */
  readonly release: () => void
  /**
   * Answers it with `status` and `body` (JSON), and `headers` besides (a `Retry-After`, say),
   * instead. A held request then never reaches the server; a held response's answer from the
   * server is dropped.
   */
  readonly fail: (status?: number, body?: unknown, headers?: Readonly<Record<string, string>>) => void
  /**
   * Resets the client's connection instead (a TCP reset: its fetch fails with `ECONNRESET`, no
   * status). A held request then never reaches the server, as with a pooled connection the server
   * had closed; a held response's request did reach it (the server took it and answered), and its
   * connection to the server is closed too: the client cannot tell the two apart.
   */
  readonly reset: () => void
}

/**
 * One held body: the answer's status and headers went to the client, its body waits. `release`
 * and `fail` may come before the headers went out: it is then released (or failed) at once.
 *
 * @since 0.2.0
 * @category Models
 */
export interface HeldBody {
  /**
   * Resolves once the status and headers of the server's answer to the matched request went to
   * the client. Never resolves if no request matched (or its client went before the server
   * answered) before the proxy closed.
   */
  readonly arrived: Promise<void>
  /** Lets the body go on to the client, streamed chunk by chunk as the server sends it. */
  readonly release: () => void
  /**
   * Drops the connection mid-answer instead: the client, which has the headers, sees its
   * connection close, and the connection to the server is closed too.
   */
  readonly fail: () => void
}

/**
 * A running holding proxy.
 *
 * @since 0.2.0
 * @category Models
 */
export interface HoldingProxy {
  /** `http://127.0.0.1:<port>`, without a trailing slash: point the client here. */
  readonly url: string
  /**
   * Holds the next request that `matches` before it reaches the server; the others go through.
   * With `forwardAfterClientGone`, its release sends it to the server even if its client went
   * meanwhile (see `HoldRequestOptions`).
   */
  readonly holdRequest: (matches: RequestMatcher, options?: HoldRequestOptions) => Held
  /** Sends the next request that `matches` to the server and holds its answer; the others go through. */
  readonly holdResponse: (matches: RequestMatcher) => Held
  /**
   * Sends the next request that `matches` to the server and its answer's status and headers to
   * the client at once, and holds the answer's body; the others go through. A client that goes
   * while the body is held closes the connection to the server too.
   */
  readonly holdBody: (matches: RequestMatcher) => HeldBody
  /** How many requests were abandoned: their client went before their answer was sent. */
  readonly abandoned: () => number
  /**
   * Closes the proxy: what it still holds is ended (the client sees its connection close, a held
   * request never reaches the server), and every connection, to clients and to the server, is
   * destroyed. Resolves once the proxy is closed.
   */
  readonly close: () => Promise<void>
}

type Decision =
  | { readonly _tag: "Release" }
  | {
    readonly _tag: "Fail"
    readonly status: number
    readonly body: unknown
    readonly headers: Readonly<Record<string, string>>
  }
  | { readonly _tag: "Reset" }

interface Hold {
  readonly matches: RequestMatcher
  readonly kind: "request" | "response" | "body"
  readonly forwardAfterClientGone: boolean
  /** Called once the held thing came, with what to do once it is decided. */
  readonly arrive: (act: (decision: Decision) => void) => void
}

const makeHold = (
  kind: Hold["kind"],
  matches: RequestMatcher,
  forwardAfterClientGone = false
): { readonly hold: Hold; readonly held: Held } => {
  let arrived!: () => void
  let acting: ((decision: Decision) => void) | undefined
  let decision: Decision | undefined
  let done = false
  const settle = () => {
    if (done || acting === undefined || decision === undefined) return
    done = true
    acting(decision)
  }
  const decide = (next: Decision) => {
    if (decision !== undefined) return
    decision = next
    settle()
  }
  return {
    hold: {
      matches,
      kind,
      forwardAfterClientGone,
      arrive: (act) => {
        acting = act
        arrived()
        settle()
      }
    },
    held: {
      arrived: new Promise<void>((resolve) => (arrived = resolve)),
      release: () => decide({ _tag: "Release" }),
      fail: (status = 503, body = { message: "unavailable" }, headers = {}) =>
        decide({ _tag: "Fail", status, body, headers }),
      reset: () => decide({ _tag: "Reset" })
    }
  }
}

/**
 * The whole body of a request, kept whether or not its client stays; undefined if its client went
 * before sending all of it.
 */
const readBody = (req: http.IncomingMessage): Promise<Buffer | undefined> =>
  new Promise((resolve) => {
    const parts: Array<Buffer> = []
    req.on("data", (part: Buffer) => parts.push(part))
    req.on("end", () => resolve(Buffer.concat(parts)))
    req.on("close", () => resolve(req.complete ? Buffer.concat(parts) : undefined))
  })

/**
 * Starts a holding proxy on `127.0.0.1` (a free port) in front of `target` (a URL, or anything
 * with a `url`, such as a `TestServer`). Close it when done.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const start = (target: string | { readonly url: string }): Promise<HoldingProxy> => {
  const to = new URL(typeof target === "string" ? target : target.url)
  // Its own agent: no connection to the server outlives the proxy in a shared pool.
  const agent = new http.Agent({ keepAlive: false })
  const upstreams = new Set<http.ClientRequest>()
  const holds: Array<Hold> = []
  let abandoned = 0
  let closed = false

  const server = http.createServer((req, res) => {
    const request: ProxiedRequest = {
      method: req.method ?? "GET",
      url: req.url ?? "/",
      path: new URL(req.url ?? "/", "http://proxy").pathname,
      headers: flattenHeaders(req)
    }
    let gone = false
    // Ended by the proxy (a failed body, a server that dropped the answer, the proxy closing):
    // not a client that went.
    let dropped = false
    const drop = () => {
      dropped = true
      res.destroy()
    }
    let upstream: http.ClientRequest | undefined
    res.on("close", () => {
      if (res.writableFinished) return
      gone = true
      if (!dropped && !closed) abandoned++
      upstream?.destroy()
    })

    const forward = (onAnswer: (answer: http.IncomingMessage) => void, body?: Buffer) => {
      const sent = http.request(
        { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers, agent },
        (answer) => {
          // A connection dropped mid-answer reaches the client as a drop, not as a short answer.
          answer.on("close", () => {
            if (!answer.complete) drop()
          })
          onAnswer(answer)
        }
      )
      upstream = sent
      upstreams.add(sent)
      sent.on("close", () => upstreams.delete(sent))
      sent.on("error", drop)
      if (body === undefined) req.pipe(sent)
      else sent.end(body)
    }
    /** Sends the answer's status and headers; false if the client already went. */
    const sendHead = (answer: http.IncomingMessage) => {
      if (gone) {
        answer.resume()
        return false
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      // Headers go out now, not with the first chunk: a stream that stalls after them stalls after them.
      res.flushHeaders()
      return true
    }
    const pass = (answer: http.IncomingMessage) => {
      if (sendHead(answer)) answer.pipe(res)
    }
    const refuse = (decision: Exclude<Decision, { readonly _tag: "Release" }>) => {
      req.resume()
      if (decision._tag === "Reset") {
        dropped = true
        req.socket.resetAndDestroy()
        return
      }
      res.writeHead(decision.status, { ...decision.headers, "content-type": "application/json" })
      res.end(JSON.stringify(decision.body))
    }

    const index = holds.findIndex((hold) => hold.matches(request))
    const hold = index < 0 ? undefined : holds.splice(index, 1)[0]
    if (hold === undefined) {
      forward(pass)
    } else if (hold.kind === "request") {
      // Read now: a request whose client went has no body left to read later.
      const body = hold.forwardAfterClientGone ? readBody(req) : undefined
      const release = (onAnswer: (answer: http.IncomingMessage) => void) => {
        if (body === undefined) return forward(onAnswer)
        void body.then((bytes) => {
          if (bytes !== undefined && !closed) forward(onAnswer, bytes)
        })
      }
      hold.arrive((decision) => {
        if (closed) return
        if (gone) {
          // Nobody reads the late answer: the server's run goes on to its end all the same.
          if (decision._tag === "Release" && body !== undefined) release((answer) => answer.resume())
          return
        }
        if (decision._tag === "Release") release(pass)
        else refuse(decision)
      })
    } else if (hold.kind === "body") {
      forward((answer) => {
        if (!sendHead(answer)) return
        hold.arrive((decision) => {
          if (gone || closed) return
          if (decision._tag === "Release") {
            answer.pipe(res)
          } else {
            drop()
          }
        })
      })
    } else {
      forward((answer) =>
        hold.arrive((decision) => {
          if (gone || closed) return
          if (decision._tag === "Release") {
            pass(answer)
          } else {
            answer.resume()
            refuse(decision)
          }
        })
      )
    }
  })

  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      const hold = (kind: Hold["kind"]) => (matches: RequestMatcher, options?: HoldRequestOptions) => {
        const made = makeHold(kind, matches, options?.forwardAfterClientGone)
        if (!closed) holds.push(made.hold)
        return made.held
      }
      resolve({
        url: `http://127.0.0.1:${port}`,
        holdRequest: hold("request"),
        holdResponse: hold("response"),
        holdBody: (matches) => {
          const { arrived, fail, release } = hold("body")(matches)
          return { arrived, release, fail: () => fail() }
        },
        abandoned: () => abandoned,
        close: () =>
          new Promise<void>((done) => {
            closed = true
            holds.length = 0
            for (const upstream of upstreams) upstream.destroy()
            agent.destroy()
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
}

/**
 * A holding proxy in front of `target`, closed when the scope closes.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const scoped = (target: string | { readonly url: string }): Effect.Effect<HoldingProxy, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => start(target)),
    (proxy) => Effect.promise(() => proxy.close())
  )
