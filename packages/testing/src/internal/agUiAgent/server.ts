/**
 * The AG-UI agent's HTTP server on `127.0.0.1`: each request's body read in full and handed to
 * `answer`, with a promise of how the exchange ended; a failure of the answer is a 500 (or, once
 * the stream started, a closed connection); the open sockets kept so that `close` ends them; and
 * the `AgUiAgent` handle over the agent's state.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { Buffer } from "node:buffer"
import * as http from "node:http"
import type * as net from "node:net"
import type * as AgUiAgent from "../../AgUiAgent.js"
import { type AgentState, answer } from "./answer.js"
import { sendJson } from "./http.js"
import { scripts } from "./scripts.js"

/** Reads a request's body, then answers it. */
const receive = (state: AgentState, request: http.IncomingMessage, response: http.ServerResponse): void => {
  const parts: Array<Buffer> = []
  let settle: (outcome: "completed" | "closed") => void = () => {}
  const ended = new Promise<"completed" | "closed">((resolve) => {
    settle = resolve
  })
  response.on("finish", () => settle("completed"))
  response.on("close", () => settle("closed"))
  // A client that goes away mid-answer is part of the script's world, not a failure of the server.
  response.on("error", () => {})
  request.on("data", (part: Buffer) => parts.push(part))
  request.on("end", () => {
    answer(state, request, response, Buffer.concat(parts).toString("utf8"), ended).catch((error: unknown) => {
      if (!response.headersSent) {
        sendJson(response, 500, { error: error instanceof Error ? error.message : String(error) })
      } else {
        response.destroy()
      }
    })
  })
}

/** `AgUiAgent.start`. */
export const start = (options: AgUiAgent.StartOptions = {}): Promise<AgUiAgent.AgUiAgent> => {
  const sockets = new Set<net.Socket>()
  const initial = options.script ?? scripts.text
  const state: AgentState = { requests: [], initial, script: initial, runIndex: 0 }
  const server = http.createServer((request, response) => receive(state, request, response))
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}/agent`,
        requests: state.requests,
        setScript: (next) => {
          state.script = next
        },
        reset: () => {
          state.script = state.initial
          state.runIndex = 0
          state.requests.length = 0
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

/** `AgUiAgent.scoped`. */
export const scoped = (options: AgUiAgent.StartOptions = {}): Effect.Effect<AgUiAgent.AgUiAgent, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(() => start(options)), (agent) => Effect.promise(() => agent.close()))
