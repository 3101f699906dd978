/**
 * The AG-UI agent's HTTP answers that are not a stream: a JSON body (an error, a refused request)
 * and the answer to a browser's CORS preflight. Every answer may be read from any origin: the
 * example app calls the agent from a page.
 */
import { Buffer } from "node:buffer"
import type * as http from "node:http"

/** The header every answer carries. */
export const CORS = { "access-control-allow-origin": "*" } as const

/** Answers with `status` and `body` as JSON. */
export const sendJson = (response: http.ServerResponse, status: number, body: unknown): void => {
  const payload = JSON.stringify(body)
  response.writeHead(status, {
    ...CORS,
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(payload).toString()
  })
  response.end(payload)
}

/** Whether a request is a browser's CORS preflight (an `OPTIONS` asking for a method). */
export const isPreflight = (method: string | undefined, headers: Readonly<Record<string, string>>): boolean =>
  method === "OPTIONS" && headers["access-control-request-method"] !== undefined

/** Allows the preflight's `POST` with the headers it asks for. */
export const answerPreflight = (response: http.ServerResponse, headers: Readonly<Record<string, string>>): void => {
  const requested = headers["access-control-request-headers"]
  response.writeHead(204, {
    ...CORS,
    "access-control-allow-methods": "POST",
    ...(requested === undefined ? {} : { "access-control-allow-headers": requested }),
    "access-control-max-age": "600",
    "content-length": "0"
  })
  response.end()
}
