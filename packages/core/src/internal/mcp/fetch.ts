/**
 * The `fetch` the MCP SDK's transports are given: it sends a `GET` again
 * when it went out on a socket the server had closed, and tells when a
 * Streamable HTTP session's event stream opened. Imports nothing of the SDK
 * but a type.
 *
 * @internal
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import { isRecord } from "effect/Predicate"

/**
 * Whether a request failed on a pooled keep-alive connection that the server had closed (it
 * restarted since): nothing reached the server, and Node's fetch does not retry a POST itself.
 *
 * @internal
 */
export const isStaleConnection = (error: unknown): boolean =>
  error instanceof TypeError && isRecord(error.cause) && error.cause["code"] === "UND_ERR_SOCKET"

/**
 * How a Streamable HTTP session's event stream (its `GET`) first went: open, not offered (any
 * answer but a 2xx: the server is there, and the session works without it), or the server could
 * not be reached.
 *
 * @internal
 */
export type EventStreamOutcome =
  | { readonly _tag: "Open" }
  | { readonly _tag: "None" }
  | { readonly _tag: "Failed"; readonly error: unknown }
  /** No answer yet, after the wait: `eventual` tells how it went. */
  | { readonly _tag: "Late"; readonly eventual: Promise<Exclude<EventStreamOutcome, { readonly _tag: "Late" }>> }

/**
 * The global `fetch`, with a `GET` tried once more when it went out on a pooled keep-alive
 * connection the server had closed (it restarted): a `GET` may be sent again.
 *
 * @internal
 */
export const fetchRetryingStaleGet: FetchLike = (url, init) =>
  fetch(url, init).catch((error: unknown) =>
    (init?.method ?? "GET") === "GET" && isStaleConnection(error) && init?.signal?.aborted !== true
      ? fetch(url, init)
      : Promise.reject(error)
  )

/** Whether a request of the Streamable HTTP transport is the `GET` of its event stream. */
const isEventStreamRequest = (init: RequestInit | undefined): boolean =>
  init?.method === "GET" && (new Headers(init.headers).get("accept") ?? "").includes("text/event-stream")

/**
 * Watches the event stream's `GET` through the transport's `fetch`, which is otherwise
 * `fetchRetryingStaleGet`. The first answer tells: a redirect counts as "not offered", even if the
 * followed request then opens a stream.
 *
 * @internal
 */
export const watchEventStream = () => {
  let started = false
  type Answer = Exclude<EventStreamOutcome, { readonly _tag: "Late" }>
  let report: (outcome: Answer) => void = () => undefined
  const first = new Promise<Answer>((resolve) => {
    report = resolve
  })
  const watchingFetch: FetchLike = async (url, init) => {
    if (!isEventStreamRequest(init)) return fetchRetryingStaleGet(url, init)
    started = true
    try {
      const response = await fetchRetryingStaleGet(url, init)
      report(response.ok ? { _tag: "Open" } : { _tag: "None" })
      return response
    } catch (error) {
      report({ _tag: "Failed", error })
      throw error
    }
  }
  /**
   * Once the handshake is done: the first `GET`'s outcome, or `Late` when it has none after
   * `waitMs`. The transport starts it within the handshake's last promise jobs, after a `202` to
   * `notifications/initialized`; a server that answered otherwise gets none, which one turn of the
   * event loop tells.
   */
  const outcome = (waitMs: number): Promise<EventStreamOutcome> =>
    new Promise((resolve) =>
      setTimeout(() => {
        if (!started) return resolve({ _tag: "None" })
        const late = setTimeout(() => resolve({ _tag: "Late", eventual: first }), waitMs)
        void first.then((answer) => {
          clearTimeout(late)
          resolve(answer)
        })
      }, 0)
    )
  return { fetch: watchingFetch, outcome }
}
