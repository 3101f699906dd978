import * as Tool from "@tambo-effect/core/Tool"
import { AgUiAgent, HoldingProxy, Script, startTestServer, type TestServer, type TestServerOptions } from "@tambo-effect/testing"
import * as Schema from "effect/Schema"
import { afterAll, afterEach, beforeAll } from "vitest"
import { z } from "zod"
import {
  type AgentClientOptions,
  TamboClient,
  type TamboClientOptions,
  type TamboStream,
  type TamboTool
} from "../src/index.js"

/** What {@link useStarted} starts: a scripted server of `@tambo-effect/testing`. */
interface Started {
  readonly reset: () => void
  readonly close: () => Promise<void>
}

/** One `start()`ed server per test file, reset after each test and closed after the last. */
const useStarted = <S extends Started>(start: () => Promise<S>, what: string) => {
  let started: S | undefined
  beforeAll(async () => {
    started = await start()
  })
  afterEach(() => {
    started?.reset()
  })
  afterAll(async () => {
    await started?.close()
  })
  return () => {
    if (started === undefined) throw new Error(`${what} not started`)
    return started
  }
}

/** One testing server per test file; its state is reset after each test. */
export const useServer = (options: TestServerOptions = {}) => useStarted(() => startTestServer(options), "server")

const clients: Array<TamboClient> = []
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.destroy()))
})

/** A client of the testing server, destroyed after the test. */
export const makeClient = (server: TestServer, options: Partial<TamboClientOptions> = {}) => {
  const client = new TamboClient({
    apiKey: server.apiKey,
    tamboUrl: server.url,
    userKey: "user-1",
    maxRetries: 0,
    autoGenerateThreadName: false,
    ...options
  })
  clients.push(client)
  return client
}

/** One scripted AG-UI agent per test file; its script and requests are reset after each test. */
export const useAgent = (options: AgUiAgent.StartOptions = {}) => useStarted(() => AgUiAgent.start(options), "agent")

/** A client of a scripted AG-UI agent, or of a proxy in front of one (`headers` are the agent's), destroyed after the test. */
export const makeAgentClient = (
  agent: { readonly url: string },
  options: Partial<Omit<AgentClientOptions, "agent">> = {},
  headers?: Record<string, string>
) => {
  const client = new TamboClient({ agent: headers === undefined ? { url: agent.url } : { url: agent.url, headers }, ...options })
  clients.push(client)
  return client
}

/** An unsigned JWT for `sub` that expires at `exp` (seconds): the testing server exchanges it without verifying it. */
export const jwtFor = (sub: string, exp: number) =>
  [
    Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url"),
    Buffer.from(JSON.stringify({ sub, iss: "https://issuer.example", exp })).toString("base64url"),
    "signature"
  ].join(".")

/**
 * A new conversation's run that the server got and had not named a thread for yet when
 * `startNewThread()` moved it to a local thread of its own (its answer held by `proxy`, which
 * `client` goes through): the local id the state showed, and the thread the server then named.
 */
export const runMovedToLocalThread = async (
  client: TamboClient,
  proxy: HoldingProxy.HoldingProxy,
  start: () => TamboStream
) => {
  const answer = proxy.holdResponse((request) => request.method === "POST" && request.url.startsWith("/v1/threads/runs"))
  const stream = start()
  await answer.arrived
  client.startNewThread()
  const localId = Object.keys(client.getState().threadMap).find((id) => id.startsWith("local:"))
  if (localId === undefined) throw new Error("startNewThread() left no local thread of the run")
  answer.release()
  return { stream, localId, threadId: await stream.threadId }
}

/** Polls until `predicate` holds. */
export const waitFor = async (predicate: () => boolean, what = "condition", timeoutMs = 5_000) => {
  const start = Date.now()
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** What a promise settled with, for assertions on rejections. */
export const settle = <A>(promise: Promise<A>): Promise<{ ok: true; value: A } | { ok: false; error: any }> =>
  promise.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }))

/** The weather tool, declared with Zod 4. */
export const weatherTool: TamboTool<{ city: string }, { city: string; temperature: number; conditions: string }> = {
  name: "get_weather",
  description: "Current weather in a city",
  inputSchema: z.object({ city: z.string() }),
  outputSchema: z.object({ city: z.string(), temperature: z.number(), conditions: z.string() }),
  tool: ({ city }) => ({ city, temperature: 21, conditions: "sunny" })
}

export const weatherCard = {
  name: "WeatherCard",
  description: "Shows the weather in a city",
  propsSchema: z.object({ city: z.string(), temperature: z.number(), conditions: z.string() })
}

/** The texts of a thread's messages (the client's, or the testing server's), by role. */
export const texts = (
  messages: ReadonlyArray<{ readonly role: string; readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }> }>
) =>
  messages.map((message) =>
    `${message.role}: ${message.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("")}`
  )

/** Scripts `server` to ask for the weather in Paris, then to say what the tool answered. */
export const weatherScript = (server: TestServer) =>
  server.setScript((request) =>
    request.toolResults.length === 0
      ? [Script.text("Checking. "), Script.toolCall("get_weather", { city: "Paris" })]
      : [Script.text(`Result: ${request.toolResults[0]!.isError ? "error " : ""}${request.toolResults[0]!.text}`)]
  )

/**
 * Scripts `server` to ask for the weather in the city each message names, the call always
 * `call_0` (as a provider that counts per response names it), then to say what the tool answered.
 */
export const call0WeatherScript = (server: TestServer) =>
  server.setScript((request) =>
    request.toolResults.length === 0
      ? [Script.toolCall("get_weather", { city: request.text }, { id: "call_0" })]
      : [Script.text(`Result: ${request.toolResults[0]!.isError ? "error " : ""}${request.toolResults[0]!.text}`)]
  )

/** A weather tool that needs approval; each run of it pushes its city to `calls`. */
export const guardedWeather = (calls: Array<string>) =>
  Tool.make({
    name: "get_weather",
    description: "Current weather in a city",
    input: Schema.Struct({ city: Schema.String }),
    needsApproval: true,
    execute: ({ city }) => {
      calls.push(city)
      return { city, temperature: 21 }
    }
  })

const proxies: Array<HoldingProxy.HoldingProxy> = []
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()))
})

/** Starts a {@link HoldingProxy.HoldingProxy} in front of `target`, closed after the test. */
export const holdingProxy = async (target: { readonly url: string }): Promise<HoldingProxy.HoldingProxy> => {
  const proxy = await HoldingProxy.start(target)
  proxies.push(proxy)
  return proxy
}

/** Polls until `predicate` holds. */
export const until = async (predicate: () => boolean, what = "condition", timeoutMs = 10_000): Promise<void> => {
  const start = Date.now()
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/**
 * Settles once `predicate` holds; it starts looking when awaited (as a script's `Script.hold`
 * does when the run reaches it), not when made.
 */
export const whenTrue = (predicate: () => boolean, what: string): PromiseLike<void> => ({
  then: (onTrue, onNever) => until(predicate, what).then(onTrue, onNever)
})
