import { cleanup } from "@testing-library/react"
import { HoldingProxy, Script, startTestServer, type TestServer, type TestServerOptions } from "@tambo-effect/testing"
import * as Schema from "effect/Schema"
import { createConnection, createServer } from "node:net"
import type { ReactNode } from "react"
import { afterAll, afterEach, beforeAll } from "vitest"
import {
  isAbortError,
  TamboClient,
  type TamboComponent,
  TamboProvider,
  type TamboProviderProps,
  type TamboTool,
  useTamboStreamStatus
} from "../src/index.js"

// Rendering outside `act` is what a streaming app does; React's act warnings would only be noise.
;(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = false

afterEach(() => {
  cleanup()
})

/** One testing server per test file; its state is reset after each test. */
export const useServer = (options: TestServerOptions = {}) => {
  let server: TestServer | undefined
  beforeAll(async () => {
    server = await startTestServer(options)
  })
  afterEach(() => {
    server?.reset()
  })
  afterAll(async () => {
    await server?.close()
  })
  return () => {
    if (server === undefined) throw new Error("server not started")
    return server
  }
}

export const madeUpWeather = (city: string) => ({ city, temperature: 21, conditions: "sunny" })

/** The weather tool, declared with Effect Schema. */
export const weatherTool: TamboTool<{ readonly city: string }> = {
  name: "get_weather",
  description: "Gets the current weather in a city",
  inputSchema: Schema.Struct({ city: Schema.String }),
  tool: ({ city }: { readonly city: string }) => madeUpWeather(city)
}

interface WeatherProps {
  readonly city?: string
  readonly temperature?: number
  readonly conditions?: string
}

function WeatherCardView({ city, conditions, temperature }: WeatherProps) {
  const { streamStatus } = useTamboStreamStatus<WeatherProps>()
  return (
    <div data-testid="weather-card" data-success={String(streamStatus.isSuccess)}>
      {city}: {temperature}° {conditions}
    </div>
  )
}

/** The component the weather assistant streams, declared with a JSON Schema. */
export const WeatherCard: TamboComponent<WeatherProps> = {
  name: "WeatherCard",
  description: "Shows the weather in a city",
  propsSchema: {
    type: "object",
    properties: { city: { type: "string" }, temperature: { type: "number" }, conditions: { type: "string" } },
    required: ["city"]
  },
  component: WeatherCardView,
  loadingComponent: ({ city }) => <div data-testid="weather-loading">Loading {city}</div>
}

/** Provider props for the testing server. */
export const connection = (server: TestServer, extra: Partial<TamboProviderProps> = {}): TamboProviderProps => ({
  apiKey: server.apiKey,
  tamboUrl: server.url,
  userKey: "user-1",
  maxRetries: 0,
  autoGenerateThreadName: false,
  ...extra
} as TamboProviderProps)

/** A client of the testing server made by the app, with the provider props `connection` gives. */
export const clientFor = (server: TestServer): TamboClient =>
  new TamboClient({
    apiKey: server.apiKey,
    tamboUrl: server.url,
    userKey: "user-1",
    maxRetries: 0,
    autoGenerateThreadName: false
  })

/** A wrapper for `renderHook` / `render`. */
export const wrapperFor = (props: TamboProviderProps) => ({ children }: { readonly children?: ReactNode }) => (
  <TamboProvider {...props}>{children}</TamboProvider>
)

/** Polls until `predicate` holds. */
export const until = async (predicate: () => boolean, what = "condition", timeoutMs = 10_000) => {
  const start = Date.now()
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/**
 * Settles once `rendered` holds `text`; it starts looking when awaited (as a script's `hold`
 * does when the run reaches it), not when made.
 */
export const whenRendered = (rendered: ReadonlyArray<string>, text: string): PromiseLike<void> => ({
  then: (onShown, onNever) => until(() => rendered.includes(text), `"${text}" rendered`).then(onShown, onNever)
})

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * An unsigned JWT for `sub` that expires at `exp` (seconds; by default in 1,000 s): the testing
 * server exchanges it without verifying it.
 */
export const jwtFor = (sub: string, exp = Math.floor(Date.now() / 1000) + 1_000) =>
  [
    Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url"),
    Buffer.from(JSON.stringify({ sub, iss: "https://issuer.example", exp })).toString("base64url"),
    "signature"
  ].join(".")

/** Whether a client was destroyed: its calls then throw an `AbortError` (this one reads, and changes nothing). */
export const isDestroyed = (client: TamboClient): boolean => {
  try {
    client.getTools()
    return false
  } catch (error) {
    return isAbortError(error)
  }
}

const proxies: Array<HoldingProxy.HoldingProxy> = []
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()))
})

/** Starts a {@link HoldingProxy.HoldingProxy} in front of `target`, closed after the test. */
export const holdingProxy = async (target: string | { readonly url: string }): Promise<HoldingProxy.HoldingProxy> => {
  const proxy = await HoldingProxy.start(target)
  proxies.push(proxy)
  return proxy
}

/**
 * A proxy to `target` that counts the connections clients open through it: a request the
 * client gave up on at once (before it was sent) still opened one.
 */
export const countingProxy = async (target: string) => {
  const { hostname, port } = new URL(target)
  let connections = 0
  let probes = 0
  const open = new Set<{ destroy: () => void }>()
  /** The remote ports of the connections accepted, and who waits for a port to be. */
  const accepted = new Set<number>()
  const waiting = new Map<number, () => void>()
  const proxy = createServer((socket) => {
    connections++
    const remotePort = socket.remotePort ?? -1
    accepted.add(remotePort)
    waiting.get(remotePort)?.()
    const upstream = createConnection({ host: hostname, port: Number(port) })
    open.add(socket).add(upstream)
    socket.pipe(upstream).pipe(socket)
    socket.on("error", () => upstream.destroy())
    upstream.on("error", () => socket.destroy())
  })
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
  const address = proxy.address()
  if (address === null || typeof address === "string") throw new Error("the proxy has no port")
  return {
    url: `http://127.0.0.1:${address.port}`,
    /**
     * The connections clients opened so far. The proxy accepts connections in order: once a
     * probe of its own is accepted, every one opened before it is counted.
     */
    opened: () =>
      new Promise<number>((resolve) => {
        probes++
        const probe = createConnection({ host: "127.0.0.1", port: address.port }, () => {
          const done = () => {
            probe.destroy()
            resolve(connections - probes)
          }
          const localPort = probe.localPort ?? -2
          if (accepted.has(localPort)) done()
          else waiting.set(localPort, done)
        })
        probe.on("error", () => undefined)
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy()
        proxy.close(() => resolve())
      })
  }
}

/**
 * Another client of the same user (another tab): it finishes a first run on a new thread, then
 * starts a second there that the server holds once `reply` is sent. The caller waits for what it
 * needs of that run on the server, and destroys `other`.
 */
export const otherClientRunning = async (server: TestServer, reply: Script.Script) => {
  const other = clientFor(server)
  server.setScript([Script.text("first")])
  const { id } = await other.run("one").thread
  server.setScript([...reply, Script.hang()])
  const busy = other.run("two", { threadId: id })
  return { other, id, busy }
}
