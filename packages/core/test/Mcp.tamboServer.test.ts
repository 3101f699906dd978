import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { type McpEndpointContext, Script } from "@tambo-effect/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Mcp from "../src/Mcp.js"
import * as Tambo from "../src/Tambo.js"
import * as ToolRegistry from "../src/ToolRegistry.js"
import { runAll, tamboLayer, useServer } from "./helpers.js"
import { mcpServer } from "./mcp/server.js"
import { echo } from "./mcp/tools.js"

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

describe("Tambo's own MCP server, while the MCP service is busy", () => {
  const server = useServer({ mcp: whoami })

  it.live("a thread switch that cuts short the disconnect of the old token's connection leaves it to the next one: no old-token connection stays", () =>
    Effect.gen(function*() {
      // While `holding`, a registration waits at the gate: the MCP service's lock stays taken.
      let holding = false
      const registering = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      yield* Effect.addFinalizer(() => Deferred.succeed(gate, undefined))
      const registry = Layer.effect(
        ToolRegistry.ToolRegistry,
        Effect.map(ToolRegistry.make, (registry) =>
          ToolRegistry.ToolRegistry.of({
            ...registry,
            register: (tool) =>
              holding
                ? Effect.zipRight(Effect.zipRight(Deferred.succeed(registering, undefined), Deferred.await(gate)), registry.register(tool))
                : registry.register(tool)
          }))
      )
      // Tells when a disconnect is asked for, and when one is cut short.
      const disconnecting = yield* Deferred.make<void>()
      const cut = yield* Deferred.make<void>()
      const telling = Layer.effect(
        Mcp.Mcp,
        Effect.map(Mcp.Mcp, (mcp) =>
          Mcp.Mcp.of({
            ...mcp,
            disconnectMcpServer: (key) =>
              Effect.zipRight(Deferred.succeed(disconnecting, undefined), mcp.disconnectMcpServer(key)).pipe(
                Effect.onInterrupt(() => Deferred.succeed(cut, undefined))
              )
          }))
      )
      const layer = telling.pipe(Layer.provide(Mcp.layer), Layer.provide(registry), Layer.provideMerge(tamboLayer(server())))
      yield* Effect.gen(function*() {
        const mcp = yield* Mcp.Mcp
        const tambo = yield* Tambo.Tambo
        server().setScript([Script.text("hi")])
        yield* runAll("first")
        const first = (yield* tambo.state).currentThreadId
        yield* tambo.startNewThread
        yield* runAll("second")
        yield* Mcp.followTamboServer({})
        const old = yield* tamboConnected()

        // Another server's tools wait to be registered, holding the lock.
        holding = true
        const other = yield* mcpServer({ setup: echo("other") })
        const connecting = yield* Effect.fork(mcp.connectMcpServer({ url: other.url, serverKey: "other" }))
        yield* Deferred.await(registering)
        // The first thread's token came: the old token's connection is being disconnected, waiting for the lock.
        yield* tambo.switchThread(first)
        yield* Deferred.await(disconnecting)
        // No thread now: what was going on for the first thread is cut short.
        yield* tambo.startNewThread
        yield* Deferred.await(cut)
        holding = false
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(connecting)

        // Nothing of Tambo's server stays connected, with either token.
        yield* mcp.changes.pipe(
          Stream.takeUntil((connections) => Object.values(connections).every((c) => c.serverKey !== "tambo")),
          Stream.runDrain,
          Effect.timeout("5 seconds"),
          Effect.orDie
        )
        const connections = yield* mcp.getMcpClients
        expect(connections[old.key]).toBeUndefined()
        expect(Object.values(connections).map((c) => c.serverKey)).toEqual(["other"])
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped))
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
