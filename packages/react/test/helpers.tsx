import { cleanup } from "@testing-library/react"
import { createServer, type IncomingMessage, request as httpRequest } from "node:http"
import { startTestServer, type TestServer, type TestServerOptions } from "@tambo-effect/testing"
import * as Schema from "effect/Schema"
import type { ReactNode } from "react"
import { afterAll, afterEach, beforeAll } from "vitest"
import {
  isAbortError,
  type TamboClient,
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

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Whether a client was destroyed: its calls then throw an `AbortError` (this one reads, and changes nothing). */
export const isDestroyed = (client: TamboClient): boolean => {
  try {
    client.getTools()
    return false
  } catch (error) {
    return isAbortError(error)
  }
}

const proxies: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((close) => close()))
})

/** A loopback proxy in front of `target` that holds one request before passing it on, until released. */
export const holdingProxy = async (target: string) => {
  const to = new URL(target)
  let hold: { readonly matches: (request: IncomingMessage) => boolean; readonly arrive: () => void; readonly held: Promise<void> } | undefined
  let releaseHeld = () => {}
  const proxy = createServer((req, res) => {
    const forward = () =>
      req.pipe(httpRequest(
        { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers },
        (upstream) => {
          res.writeHead(upstream.statusCode ?? 502, upstream.headers)
          upstream.pipe(res)
        }
      ).on("error", () => res.destroy()))
    const held = hold?.matches(req) === true ? hold : undefined
    if (held === undefined) {
      forward()
      return
    }
    hold = undefined
    held.arrive()
    void held.held.then(forward)
  })
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
  proxies.push(async () => {
    releaseHeld()
    proxy.closeAllConnections()
    await new Promise((resolve) => proxy.close(resolve))
  })
  const address = proxy.address()
  return {
    url: `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`,
    holdNext: (matches: (request: IncomingMessage) => boolean) => {
      let arrive!: () => void
      const arrived = new Promise<void>((resolve) => (arrive = resolve))
      const held = new Promise<void>((resolve) => (releaseHeld = resolve))
      hold = { matches, arrive, held }
      return { arrived, release: () => releaseHeld() }
    }
  }
}
