// @vitest-environment happy-dom
import { render, renderHook, screen, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import * as Schema from "effect/Schema"
import { StrictMode } from "react"
import { describe, expect, expectTypeOf, it } from "vitest"
import { z } from "zod"
import {
  defineTool,
  TamboProvider,
  type TamboProviderProps,
  useIsTamboTokenUpdating,
  useTambo,
  useTamboClient
} from "../src/index.js"
import { connection, holdingProxy, jwtFor, useServer, wrapperFor } from "./helpers.js"

const server = useServer()

interface RunBody {
  readonly message: {
    readonly content: ReadonlyArray<{ type: string; isError?: boolean; content?: ReadonlyArray<{ text: string }> }>
  }
  readonly tools?: ReadonlyArray<{ name: string; inputSchema: unknown }>
}

const runBodies = () =>
  server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs")).map((r) => r.body as RunBody)

describe("useIsTamboTokenUpdating", () => {
  it("is true while the user token is exchanged, then false; a rotated token is exchanged again", async () => {
    const seen: Array<boolean> = []
    let props: TamboProviderProps = connection(server(), {
      userKey: undefined,
      userToken: jwtFor("alice")
    })
    const Wrapper = ({ children }: { readonly children?: React.ReactNode }) => <TamboProvider {...props}>{children}</TamboProvider>
    const { rerender, result } = renderHook(() => {
      const updating = useIsTamboTokenUpdating()
      if (seen.at(-1) !== updating) seen.push(updating)
      return updating
    }, { wrapper: Wrapper })
    await waitFor(() => expect(seen).toEqual([false, true, false]))

    props = { ...props, userToken: jwtFor("alice", Math.floor(Date.now() / 1000) + 2_000) } as TamboProviderProps
    rerender()
    await waitFor(() => expect(seen).toEqual([false, true, false, true, false]))
    expect(result.current).toBe(false)
    expect(server().requests.filter((r) => r.path === "/oauth/token" && r.method === "POST")).toHaveLength(2)
  })

  describe("with tokens that last 8 s", () => {
    const shortLived = useServer({ tokenTtlSeconds: 8 })

    it("stays false while a token that still works is refreshed", async () => {
      const proxy = await holdingProxy(shortLived())
      const seen: Array<boolean> = []
      const props = connection(shortLived(), {
        tamboUrl: proxy.url,
        userKey: undefined,
        userToken: jwtFor("alice")
      })
      const { result } = renderHook(() => {
        const updating = useIsTamboTokenUpdating()
        if (seen.at(-1) !== updating) seen.push(updating)
        return updating
      }, { wrapper: wrapperFor(props) })
      await waitFor(() => expect(seen).toEqual([false, true, false]))
      // The refresh, at half the token's lifetime, is held: nothing waits for it.
      const refresh = proxy.holdRequest((request) => request.path === "/oauth/token")
      await refresh.arrived
      expect(result.current).toBe(false)
      refresh.release()
      await waitFor(() =>
        expect(shortLived().requests.filter((r) => r.path === "/oauth/token" && r.method === "POST")).toHaveLength(2)
      )
      expect(seen).toEqual([false, true, false])
    }, 15_000)
  })

  it("is false with a userKey", () => {
    const { result } = renderHook(() => useIsTamboTokenUpdating(), { wrapper: wrapperFor(connection(server())) })
    expect(result.current).toBe(false)
  })
})

describe("a committed provider's client", () => {
  it("exchanges its userToken once and connects its MCP servers once, under StrictMode too, and says identified from the exchange", async () => {
    const tokenExchanges = () => server().requests.filter((r) => r.path === "/oauth/token" && r.method === "POST")
    const UsesClient = () => {
      // Asked for while rendering: the client the commit keeps is this one.
      const client = useTamboClient()
      const { authState } = useTambo()
      return <p data-testid="auth">{client.backend} {authState.status} {authState.status === "identified" ? authState.source : ""}</p>
    }
    render(
      <StrictMode>
        <TamboProvider
          {...connection(server(), {
            userKey: undefined,
            userToken: jwtFor("alice"),
            mcpServers: [{ url: `${server().url}/mcp`, serverKey: "project" }]
          })}
        >
          <UsesClient />
        </TamboProvider>
      </StrictMode>
    )
    await waitFor(() => expect(screen.getByTestId("auth").textContent).toBe("tambo identified tokenExchange"))
    // One MCP session: a single initialize (waited for itself: another request to /mcp, a CORS preflight, may come first).
    const initializes = () =>
      server().requests.filter((r) =>
        r.path === "/mcp" && r.method === "POST" && (r.body as { method?: string } | undefined)?.method === "initialize"
      )
    await waitFor(() => expect(initializes().length).toBeGreaterThan(0))
    expect(tokenExchanges()).toHaveLength(1)
    expect(initializes()).toHaveLength(1)
  })
})

describe("defineTool", () => {
  it("types the tool's parameters from its schema; without one the tool takes no arguments", async () => {
    const calls: Array<string> = []
    const weather = defineTool({
      name: "get_weather",
      description: "Current weather in a city",
      inputSchema: z.object({ city: z.string() }),
      tool: ({ city }) => {
        expectTypeOf(city).toEqualTypeOf<string>()
        calls.push(city)
        return { city, temperature: 21 }
      }
    })
    const effectTool = defineTool({
      name: "count",
      description: "Counts",
      inputSchema: Schema.Struct({ n: Schema.Number }),
      tool: ({ n }) => n + 1
    })
    expectTypeOf(effectTool.tool).parameter(0).toEqualTypeOf<{ readonly n: number }>()
    const now = defineTool({ name: "now", description: "The time", tool: () => "noon" })
    expect(now.inputSchema).toEqual({ type: "object", properties: {}, required: [] })

    server().setScript((request) =>
      request.toolResults.length > 0 ? [Script.text("done")] : [Script.toolCall("get_weather", { city: "Paris" })]
    )
    const { result } = renderHook(() => useTambo(), {
      wrapper: wrapperFor(connection(server(), { tools: [weather, effectTool, now] }))
    })
    await result.current.sendMessage("Weather?").thread
    expect(calls).toEqual(["Paris"])
    expect(runBodies()[0]!.tools!.map((tool) => tool.name)).toEqual(["get_weather", "count", "now"])
    expect(runBodies()[0]!.tools![2]!.inputSchema).toMatchObject({ type: "object", properties: {} })
  })
})

describe("TamboProvider's onCallUnregisteredTool", () => {
  it("answers the model's call of a tool the app did not register", async () => {
    server().setScript((request) =>
      request.toolResults.length > 0
        ? [Script.text(`Got ${request.toolResults[0]!.text}`)]
        : [Script.toolCall("lookup_order", { orderId: "A-1" }, { pending: true })]
    )
    const calls: Array<unknown> = []
    const { result } = renderHook(() => useTambo(), {
      wrapper: wrapperFor(connection(server(), {
        onCallUnregisteredTool: async (toolName, args) => {
          calls.push([toolName, args])
          return "shipped"
        }
      }))
    })
    await result.current.sendMessage("Where is my order?").thread
    expect(calls).toEqual([["lookup_order", [{ parameterName: "orderId", parameterValue: "A-1" }]]])
    expect(runBodies()[1]!.message.content[0]).toMatchObject({ type: "tool_result", content: [{ text: "shipped" }] })
    await waitFor(() => expect(result.current.isIdle).toBe(true))
  })
})
