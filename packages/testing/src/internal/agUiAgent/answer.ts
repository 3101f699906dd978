/**
 * One request to the AG-UI agent, answered: a CORS preflight is allowed (and not recorded);
 * anything else is recorded, then refused with a JSON error or run, its script played as an event
 * stream. What the agent keeps between requests (the requests, the script, the count of runs) is
 * an `AgentState`.
 */
import type * as http from "node:http"
import type * as AgUiAgent from "../../AgUiAgent.js"
import { flattenHeaders } from "../http.js"
import { answerPreflight, CORS, isPreflight, sendJson } from "./http.js"
import { contentType, play } from "./play.js"
import { decode, requestOf } from "./request.js"

/** What the agent keeps between requests; `reset` goes back to `initial`. */
export interface AgentState {
  readonly requests: Array<AgUiAgent.RecordedRequest>
  readonly initial: AgUiAgent.ScriptSource
  script: AgUiAgent.ScriptSource
  /** Valid runs answered so far: the next run's `ScriptContext.runIndex`. */
  runIndex: number
}

/** Answers one request whose body was read in full; resolves once the answer is over. */
export const answer = async (
  state: AgentState,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  body: string,
  ended: Promise<"completed" | "closed">
): Promise<void> => {
  const headers = flattenHeaders(request)
  // A browser's preflight is the browser's business, not a request to the agent: not recorded.
  if (isPreflight(request.method, headers)) return answerPreflight(response, headers)
  const decoded = decode(request.method, body)
  state.requests.push({
    method: request.method ?? "GET",
    url: request.url ?? "/",
    headers,
    body,
    input: decoded._tag === "Valid" ? decoded.input : undefined,
    issues: decoded._tag === "Valid" ? [] : decoded.issues,
    ended
  })
  if (decoded._tag === "Refused") return sendJson(response, decoded.status, decoded.body)
  const { input } = decoded
  const context: AgUiAgent.ScriptContext = { runIndex: state.runIndex++ }
  const script = state.script
  const steps = typeof script === "function" ? await script(requestOf(input, headers), context) : script
  const first = steps[0]
  if (first?._tag === "HttpError") return sendJson(response, first.status, first.body)
  response.writeHead(200, { ...CORS, "content-type": contentType, "cache-control": "no-cache" })
  response.flushHeaders()
  await play(steps, input, response, request.socket)
}
