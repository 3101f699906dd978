import TamboAI from "@tambo-ai/typescript-sdk"
import type { ClientOptions } from "@tambo-ai/typescript-sdk"
import type { TestServer } from "../src/index.js"

export const USER = "user-1"

/** An event as the SDK yields it, with its fields readable. */
export type Ev = { readonly type: string; readonly [key: string]: unknown }

const toEvent = (value: object): Ev => {
  const type: unknown = Reflect.get(value, "type")
  if (typeof type !== "string") throw new Error(`event without a type: ${JSON.stringify(value)}`)
  return { ...value, type }
}

export const client = (server: TestServer, options: ClientOptions = {}): TamboAI =>
  new TamboAI({ apiKey: server.apiKey, baseURL: server.url, ...options })

export const userMessage = (text: string) => ({ role: "user" as const, content: [{ type: "text" as const, text }] })

export const collect = async (stream: AsyncIterable<object>): Promise<Array<Ev>> => {
  const events: Array<Ev> = []
  for await (const event of stream) events.push(toEvent(event))
  return events
}

/** Reads events until `stop` says so (then leaves the loop, which aborts the request). */
export const collectUntil = async (stream: AsyncIterable<object>, stop: (event: Ev) => boolean): Promise<Array<Ev>> => {
  const events: Array<Ev> = []
  for await (const raw of stream) {
    const event = toEvent(raw)
    events.push(event)
    if (stop(event)) break
  }
  return events
}

export const str = (value: object, key: string): string => {
  const field: unknown = Reflect.get(value, key)
  if (typeof field !== "string") throw new Error(`expected a string at ${key} in ${JSON.stringify(value)}`)
  return field
}

export const field = (value: unknown, ...path: ReadonlyArray<string | number>): unknown => {
  let node: unknown = value
  for (const key of path) {
    if (typeof node !== "object" || node === null) return undefined
    node = Reflect.get(node, key)
  }
  return node
}

export const types = (events: ReadonlyArray<Ev>): Array<string> =>
  events.map((event) => (event.type === "CUSTOM" ? `CUSTOM:${String(event["name"])}` : event.type))

export const textOf = (events: ReadonlyArray<Ev>): string =>
  events.filter((event) => event.type === "TEXT_MESSAGE_CONTENT").map((event) => str(event, "delta")).join("")

export const waitFor = async (predicate: () => boolean, timeoutMillis = 5_000): Promise<void> => {
  const deadline = Date.now() + timeoutMillis
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error("condition not met in time")
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** Runs `promise` and returns what it rejected with (fails if it resolved). */
export const rejection = async (promise: PromiseLike<unknown>): Promise<unknown> => {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error("expected a rejection")
}

/** Splits an SSE body into its frames, checking each is exactly `data: <json>\n\n`. */
export const frames = (body: string): Array<string> => {
  if (!body.endsWith("\n\n")) throw new Error("body does not end with a blank line")
  return body.slice(0, -2).split("\n\n")
}

export const parseFrame = (frame: string): Ev => {
  if (!frame.startsWith("data: ")) throw new Error(`not a data frame: ${frame}`)
  const parsed: unknown = JSON.parse(frame.slice("data: ".length))
  if (typeof parsed !== "object" || parsed === null) throw new Error(`not an object: ${frame}`)
  return toEvent(parsed)
}

export const post = (server: TestServer, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": server.apiKey, ...headers },
    body: JSON.stringify(body)
  })

export const getJson = async (response: Response): Promise<unknown> => {
  const parsed: unknown = await response.json()
  return parsed
}

/** A one-shot signal: `fired` resolves once `fire()` is called. */
export const latch = (): { readonly fire: () => void; readonly fired: Promise<void> } => {
  let fire!: () => void
  const fired = new Promise<void>((resolve) => {
    fire = resolve
  })
  return { fire, fired }
}
