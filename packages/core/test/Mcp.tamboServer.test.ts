import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { type McpEndpointContext, Script } from "@tambo-effect/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Mcp from "../src/Mcp.js"
import * as Tambo from "../src/Tambo.js"
import { runAll, tamboLayer, useServer } from "./helpers.js"

/** What the testing server's `/mcp` offers: a prompt that says who the token is for. */
const whoami = (server: McpServer, context: McpEndpointContext) => {
  server.registerPrompt("whoami", { description: "Who the token is for" }, () => ({
    messages: [{
      role: "user",
      content: { type: "text", text: "threadId" in context ? `thread ${context.threadId}` : `context ${context.contextKey}` }
    }]
  }))
}

const promptText = (result: Mcp.McpPromptResult) => {
  const content = result.messages[0]?.content
  return content !== undefined && content.type === "text" && "text" in content ? content.text : undefined
}

/** The connections, once Tambo's server is connected with a token other than `previous`'s. */
const tamboConnected = (previous?: string) =>
  Effect.flatMap(Mcp.Mcp, (mcp) =>
    mcp.changes.pipe(
      Stream.map((connections) =>
        Object.values(connections).find((c) => c.serverKey === "tambo" && c.status === "connected" && c.key !== previous)
      ),
      Stream.filter((c): c is Mcp.McpConnection => c !== undefined),
      Stream.runHead,
      Effect.flatten
    ))

describe("Tambo's own MCP server", () => {
  const server = useServer({ mcp: whoami })
  const noMcp = useServer({ mcpServers: false })

  it.live("is connected with a token for the current thread, and again with a new one when the thread changes", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const tambo = yield* Tambo.Tambo
      server().setScript([Script.text("hi")])
      // No thread yet, no context key: nothing to connect.
      expect(yield* mcp.getMcpClients).toEqual({})

      yield* runAll("first")
      const first = (yield* tambo.state).currentThreadId
      const connection = yield* tamboConnected()
      expect(connection.server).toMatchObject({ url: `${server().url}/mcp`, name: "__tambo_internal_mcp_server__" })
      const tokenRequest = server().requests.find((r) => r.path === "/auth/mcp/access-token")
      expect(tokenRequest?.body).toEqual({ threadId: first })
      expect(promptText(yield* mcp.getMcpPrompt("tambo", "whoami"))).toBe(`thread ${first}`)
      expect((yield* mcp.listMcpPrompts).map((p) => `${p.serverKey}:${p.name}`)).toEqual(["tambo:whoami"])

      yield* tambo.startNewThread
      yield* runAll("second")
      const second = (yield* tambo.state).currentThreadId
      expect(second).not.toBe(first)
      const next = yield* tamboConnected(connection.key)
      expect(promptText(yield* mcp.getMcpPrompt("tambo", "whoami"))).toBe(`thread ${second}`)
      // One connection at a time: the old token's is gone.
      expect(Object.keys(yield* mcp.getMcpClients)).toEqual([next.key])
      expect(server().mcpRequests.every((r) => "threadId" in r)).toBe(true)
    }).pipe(Effect.provide(tamboLayer(server(), { tamboMcpServer: true })), Effect.scoped))

  it.live("with a context key, is connected before any thread with a sessionless token", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      yield* tamboConnected()
      expect(server().requests.find((r) => r.path === "/auth/mcp/access-token")?.body).toEqual({ contextKey: "ctx-1" })
      expect(promptText(yield* mcp.getMcpPrompt("tambo", "whoami"))).toBe("context ctx-1")
    }).pipe(Effect.provide(tamboLayer(server(), { tamboMcpServer: { contextKey: "ctx-1" } })), Effect.scoped))

  it.live("followTamboServer connects it while its scope is open, and disconnects it when the scope closes", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const scope = yield* Scope.make()
      yield* Mcp.followTamboServer({ contextKey: "ctx-5" }).pipe(Scope.extend(scope))
      const connection = yield* tamboConnected()
      expect(connection.server.name).toBe(Mcp.TAMBO_SERVER_NAME)
      expect(promptText(yield* mcp.getMcpPrompt("tambo", "whoami"))).toBe("context ctx-5")
      yield* Scope.close(scope, Exit.void)
      expect(yield* mcp.getMcpClients).toEqual({})
      // Nothing connects it again: the current thread changes, and no token is asked for.
      const asked = server().requests.filter((r) => r.path === "/auth/mcp/access-token").length
      server().setScript([Script.text("hi")])
      yield* runAll("after")
      yield* Effect.sleep("50 millis")
      expect(server().requests.filter((r) => r.path === "/auth/mcp/access-token").length).toBe(asked)
      expect(yield* mcp.getMcpClients).toEqual({})
    }).pipe(Effect.provide(tamboLayer(server())), Effect.scoped))

  it.live("/mcp refuses requests without a valid MCP access token", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const post = (authorization?: string) =>
        Effect.promise(() =>
          fetch(`${server().url}/mcp`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              ...(authorization === undefined ? {} : { authorization })
            },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: 1,
              method: "initialize",
              params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } }
            })
          }).then((res) => res.status)
        )
      expect(yield* post()).toBe(401)
      expect(yield* post("Basic abc")).toBe(401)
      expect(yield* post("Bearer not-a-token")).toBe(401)
      const token = Option.getOrThrow((yield* mcp.getMcpToken("ctx-2")).token)
      expect(yield* post(`Bearer ${Redacted.value(token)}`)).toBe(200)
      expect(server().mcpRequests).toEqual([{ method: "POST", contextKey: "ctx-2" }])
    }).pipe(Effect.provide(tamboLayer(server())), Effect.scoped))

  it.live("a project without MCP servers gets no token, and nothing is connected", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      // The token endpoint answers `{}`.
      yield* Effect.gen(function*() {
        while (!noMcp().requests.some((r) => r.path === "/auth/mcp/access-token")) yield* Effect.sleep("5 millis")
      })
      expect(yield* mcp.getMcpClients).toEqual({})
    }).pipe(Effect.provide(tamboLayer(noMcp(), { tamboMcpServer: { contextKey: "ctx-3" } })), Effect.scoped))
})

describe("Tambo's MCP token", () => {
  // Tokens the server issues expire two seconds after they are issued.
  const shortLived = useServer({ mcp: whoami, now: () => Date.now() - (15 * 60 - 2) * 1000 })

  it.live("is renewed before it expires, and the server is connected again with the new one", () =>
    Effect.gen(function*() {
      const first = yield* tamboConnected()
      const second = yield* tamboConnected(first.key)
      expect(second.status).toBe("connected")
      expect(shortLived().requests.filter((r) => r.path === "/auth/mcp/access-token").length).toBeGreaterThanOrEqual(2)
      const mcp = yield* Mcp.Mcp
      expect(promptText(yield* mcp.getMcpPrompt("tambo", "whoami"))).toBe("context ctx-4")
    }).pipe(Effect.provide(tamboLayer(shortLived(), { tamboMcpServer: { contextKey: "ctx-4" } })), Effect.scoped))
})
