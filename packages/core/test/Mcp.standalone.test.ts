// The MCP service without the Tambo API (`Mcp.makeStandalone`), against real MCP servers.
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Mcp from "../src/Mcp.js"
import { mcpServer } from "./mcp/server.js"
import { all, calculator, echo, greeter } from "./mcp/tools.js"

describe("Mcp.makeStandalone", () => {
  it.scoped("connects a server, lists and calls its tools, with no Tambo API and no registry given", () =>
    Effect.gen(function*() {
      const server = yield* mcpServer({ setup: all(calculator, greeter) })
      const mcp = yield* Mcp.makeStandalone()
      const connection = yield* mcp.connectMcpServer({ url: server.url })
      expect(connection.status).toBe("connected")
      expect(connection.tools.map((tool) => tool.name).sort()).toEqual(["add", "divide", "explode", "greet", "math.square"])
      const result = yield* connection.client!.callTool("add", { a: 2, b: 40 })
      expect(result.content).toEqual([{ type: "text", text: "42" }])
      expect((yield* connection.client!.listTools).length).toBe(connection.tools.length)
    }))

  it.scoped("has no Tambo MCP token to give: getMcpToken fails with a ConfigError", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.makeStandalone()
      const error = yield* Effect.flip(mcp.getMcpToken("user-1"))
      expect(error._tag).toBe("ConfigError")
      expect(error.message).toContain("standalone")
    }))

  it.effect("as a layer: its connections end with its scope, and the server sees the session closed", () =>
    Effect.gen(function*() {
      const outer = yield* Scope.make()
      const server = yield* Scope.extend(mcpServer({ setup: calculator }), outer)
      const scope = yield* Scope.make()
      const mcp = Context.get(yield* Layer.buildWithScope(Mcp.layerStandalone(), scope), Mcp.Mcp)
      yield* mcp.connectMcpServer({ url: server.url })
      expect(server.sessions.opened).toBe(1)
      yield* Scope.close(scope, Exit.void)
      // Streamable HTTP: the session is ended on the server (a DELETE) before the transport closes.
      for (let waited = 0; server.sessions.closed < 1 && waited < 2_000; waited += 10) yield* Effect.sleep(10)
      expect(server.sessions.closed).toBe(1)
      yield* Scope.close(outer, Exit.void)
    }))

  it.live("a connect while the service closes fails with McpError Disconnected, and opens no session on the server", () =>
    Effect.gen(function*() {
      // Its session takes a moment to end (a slow DELETE), so closing takes a moment.
      const slow = yield* mcpServer({
        setup: calculator,
        beforeSessionRequest: async (request) => {
          if (request.method === "DELETE") await new Promise((resolve) => setTimeout(resolve, 500))
        }
      })
      const other = yield* mcpServer({ setup: echo("other") })
      const scope = yield* Scope.make()
      const mcp = Context.get(yield* Layer.buildWithScope(Mcp.layerStandalone(), scope), Mcp.Mcp)
      yield* mcp.connectMcpServer({ url: slow.url })
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      // The service is closing once the slow server was asked to end its session.
      while (!slow.requests.some((request) => request.method === "DELETE")) yield* Effect.sleep("5 millis")
      // E.g. a UI that connects a server while the app tears the client down.
      const late = yield* Effect.either(mcp.connectMcpServer({ url: other.url })).pipe(Effect.timeout("5 seconds"))
      yield* Fiber.join(closing)
      expect(Either.isLeft(late) && late.left).toMatchObject({ _tag: "McpError", reason: "Disconnected" })
      expect(other.sessions).toEqual({ opened: 0, closed: 0 })
      expect(yield* mcp.getMcpClients).toEqual({})
    }).pipe(Effect.scoped), 20_000)

  it.live("a connect once the service closed fails with McpError Disconnected", () =>
    Effect.gen(function*() {
      const other = yield* mcpServer({ setup: echo("other") })
      const scope = yield* Scope.make()
      const mcp = Context.get(yield* Layer.buildWithScope(Mcp.layerStandalone(), scope), Mcp.Mcp)
      yield* Scope.close(scope, Exit.void)
      const error = yield* Effect.flip(mcp.connectMcpServer({ url: other.url })).pipe(Effect.timeout("5 seconds"))
      expect(error).toMatchObject({ _tag: "McpError", reason: "Disconnected" })
      expect(other.sessions.opened).toBe(0)
    }).pipe(Effect.scoped), 20_000)
})
