import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "@effect/vitest"
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { GetPromptRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Layer from "effect/Layer"
import * as Mcp from "../src/Mcp.js"
import { runAll, tamboLayer, useServer } from "./helpers.js"
import { mcpServer } from "./mcp/server.js"
import { all, calculator, counter, echo, library, prompter, sleeper } from "./mcp/tools.js"

const server = useServer()

const stack = (options: Mcp.MakeOptions = {}) => Mcp.layerWith(options).pipe(Layer.provideMerge(tamboLayer(server())))

describe("MCP prompts", () => {
  it.live("lists the prompts of every connected server, and fetches one with its arguments", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const docs = yield* mcpServer({ setup: all(prompter, calculator) })
      const plain = yield* mcpServer({ setup: echo("plain") })
      yield* mcp.connectMcpServer({ url: docs.url, serverKey: "docs" })
      // A server without prompts contributes none (and is not asked).
      yield* mcp.connectMcpServer({ url: plain.url, serverKey: "plain" })

      const prompts = yield* mcp.listMcpPrompts
      expect(prompts).toEqual([
        {
          serverKey: "docs",
          name: "review",
          title: "Code review",
          description: "Reviews a piece of code",
          arguments: [
            { name: "code", description: "The code to review", required: true },
            { name: "language", required: false }
          ]
        },
        { serverKey: "docs", name: "hello", description: "Says hello", arguments: [] }
      ])
      expect(plain.requests.filter((r) => r.method === "POST").length).toBeGreaterThan(0)

      const review = yield* mcp.getMcpPrompt("docs", "review", { code: "x = 1", language: "python" })
      expect(review).toEqual({
        description: "A review request",
        messages: [{ role: "user", content: { type: "text", text: "Review this python: x = 1" } }]
      })
      const hello = yield* mcp.getMcpPrompt("docs", "hello")
      expect(hello.messages).toEqual([{ role: "assistant", content: { type: "text", text: "Hello!" } }])
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("an unknown server key, an unknown prompt or a missing argument is a typed McpError", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const docs = yield* mcpServer({ setup: prompter })
      yield* mcp.connectMcpServer({ url: docs.url, serverKey: "docs" })
      expect(yield* Effect.flip(mcp.getMcpPrompt("nope", "review"))).toMatchObject({
        _tag: "McpError",
        reason: "NotConnected",
        serverKey: "nope"
      })
      const unknown = yield* Effect.flip(mcp.getMcpPrompt("docs", "missing"))
      expect(unknown).toMatchObject({ _tag: "McpError", reason: "CallFailed", serverKey: "docs" })
      expect(unknown.message).toContain("missing")
      const invalid = yield* Effect.flip(mcp.getMcpPrompt("docs", "review", {}))
      expect(invalid).toMatchObject({ _tag: "McpError", reason: "CallFailed" })
      // The connection is still fine.
      expect((yield* mcp.getMcpClients)[Mcp.uniqueKey({ url: docs.url })]?.status).toBe("connected")
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a malformed answer is a CallFailed of that request: the connection and its other calls go on", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const odd = yield* mcpServer({
        setup: all(sleeper(), (session) => {
          session.server.registerCapabilities({ prompts: {} })
          // Not a role the protocol knows: the answer fails the MCP SDK's schema.
          session.server.setRequestHandler(GetPromptRequestSchema, async () =>
            ({ messages: [{ role: "robot", content: { type: "text", text: "beep" } }] }) as never)
        })
      })
      const connection = yield* mcp.connectMcpServer({ url: odd.url, serverKey: "odd" })
      const other = yield* Effect.fork(Effect.either(connection.client!.callTool("sleep", { ms: 300 })))
      yield* Effect.sleep("50 millis")
      const error = yield* Effect.flip(mcp.getMcpPrompt("odd", "any"))
      expect(error).toMatchObject({ _tag: "McpError", reason: "CallFailed", serverKey: "odd" })
      expect((yield* Fiber.join(other))._tag).toBe("Right")
      expect((yield* mcp.getMcpClients)[connection.key]?.status).toBe("connected")
      expect(odd.sessions).toEqual({ opened: 1, closed: 0 })
    }).pipe(Effect.provide(stack({ reconnectSchedule: Schedule.spaced("1 hour") })), Effect.scoped))
})

describe("MCP prompts and resources that change", () => {
  it.live("a server that says its prompts or its resources changed shows a new version of them, each on its own", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const sessions: Array<McpServer> = []
      const docs = yield* mcpServer({
        setup: (server) => {
          sessions.push(server)
          all(prompter, library)(server)
        }
      })
      const connection = yield* mcp.connectMcpServer({ url: docs.url, serverKey: "docs" })
      expect(connection).toMatchObject({ promptsVersion: 0, resourcesVersion: 0 })
      const versions = Effect.map(mcp.getMcpClients, (clients) => {
        const { promptsVersion, resourcesVersion } = clients[connection.key]!
        return { promptsVersion, resourcesVersion }
      })
      const until = (expected: { promptsVersion: number; resourcesVersion: number }) =>
        Effect.gen(function*() {
          while (!Equal.equals(Data.struct(yield* versions), Data.struct(expected))) yield* Effect.sleep("10 millis")
        }).pipe(Effect.timeout("5 seconds"))

      // The server adds a prompt: `notifications/prompts/list_changed`.
      sessions[0]!.registerPrompt("bye", { description: "Says goodbye" }, () => ({
        messages: [{ role: "assistant", content: { type: "text", text: "Bye!" } }]
      }))
      yield* until({ promptsVersion: 1, resourcesVersion: 0 })
      expect((yield* mcp.listMcpPrompts).map((prompt) => prompt.name)).toEqual(["review", "hello", "bye"])

      // Then a resource: `notifications/resources/list_changed`.
      sessions[0]!.registerResource("changelog", "file:///changelog.md", { mimeType: "text/markdown" }, async (uri) => ({
        contents: [{ uri: uri.href, text: "# Changes" }]
      }))
      yield* until({ promptsVersion: 1, resourcesVersion: 1 })
      expect((yield* mcp.listMcpResources()).map((resource) => resource.uri)).toContain("file:///changelog.md")
    }).pipe(Effect.provide(stack()), Effect.scoped))
})

describe("MCP resources watched", () => {
  const bump = (connection: Mcp.McpConnection) => connection.client!.callTool("bump")
  /** Until the server heard the subscription end, after its start. */
  const untilUnsubscribed = (log: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      while (log.length < 2) yield* Effect.sleep("10 millis")
      expect(log).toEqual(["subscribe file:///counter.txt", "unsubscribe file:///counter.txt"])
    }).pipe(Effect.timeout("5 seconds"))
  const texts = (contents: Mcp.McpResourceContents) => contents.contents.map((part) => ("text" in part ? part.text : ""))
  /** A counting server (refusing its first `refused` subscriptions), connected as `counting`; `log` hears it. */
  const counting = (refused = 0) =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const log: Array<string> = []
      const server = yield* mcpServer({ setup: counter(log, refused) })
      const connection = yield* mcp.connectMcpServer({ url: server.url, serverKey: "counting" })
      return { mcp, log, server, connection }
    })
  /** Watches the counter in a fiber of its own: each contents seen goes to the queue, as its texts. */
  const watchCounter = (mcp: Mcp.Mcp.Service) =>
    Effect.gen(function*() {
      const seen = yield* Queue.unbounded<ReadonlyArray<string>>()
      const fiber = yield* Effect.fork(
        Stream.runForEach(mcp.watchMcpResource("counting", "file:///counter.txt"), (contents) => Queue.offer(seen, texts(contents)))
      )
      return { next: Queue.take(seen), fiber }
    })

  it.live("a watched resource gives its contents, then its contents again at each change; the subscription ends with the stream", () =>
    Effect.gen(function*() {
      const { connection, log, mcp } = yield* counting()
      const watching = yield* watchCounter(mcp)
      expect(yield* watching.next).toEqual(["0"])
      yield* bump(connection)
      expect(yield* watching.next).toEqual(["1"])
      yield* bump(connection)
      expect(yield* watching.next).toEqual(["2"])
      yield* Fiber.interrupt(watching.fiber)
      yield* untilUnsubscribed(log)
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("two watchers of one resource share one subscription, which ends with the last of them", () =>
    Effect.gen(function*() {
      const { connection, log, mcp } = yield* counting()
      const first = yield* watchCounter(mcp)
      const second = yield* watchCounter(mcp)
      expect(yield* first.next).toEqual(["0"])
      expect(yield* second.next).toEqual(["0"])
      yield* bump(connection)
      expect(yield* first.next).toEqual(["1"])
      expect(yield* second.next).toEqual(["1"])
      yield* Fiber.interrupt(first.fiber)
      yield* bump(connection)
      expect(yield* second.next).toEqual(["2"])
      expect(log).toEqual(["subscribe file:///counter.txt"])
      yield* Fiber.interrupt(second.fiber)
      yield* untilUnsubscribed(log)
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a refused subscription fails the watch with CallFailed; watching again subscribes anew", () =>
    Effect.gen(function*() {
      const { connection, log, mcp } = yield* counting(1)
      const error = yield* Effect.flip(Stream.runDrain(mcp.watchMcpResource("counting", "file:///counter.txt")))
      expect(error).toMatchObject({ _tag: "McpError", reason: "CallFailed", serverKey: "counting" })
      expect(error.message).toContain("not now")
      // The connection is unharmed, and the next watch works.
      expect((yield* mcp.getMcpClients)[connection.key]?.status).toBe("connected")
      const watching = yield* watchCounter(mcp)
      expect(yield* watching.next).toEqual(["0"])
      yield* bump(connection)
      expect(yield* watching.next).toEqual(["1"])
      yield* Fiber.interrupt(watching.fiber)
      yield* untilUnsubscribed(log)
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a server without subscriptions gives the contents once; a server that goes away ends the watch with Disconnected", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const docs = yield* mcpServer({ setup: library })
      yield* mcp.connectMcpServer({ url: docs.url, serverKey: "docs" })
      const once = yield* Stream.runCollect(mcp.watchMcpResource("docs", "file:///readme.md"))
      expect(Array.from(once, texts)).toEqual([["# Hello"]])

      const { server: dying } = yield* counting()
      const watching = yield* watchCounter(mcp)
      expect(yield* watching.next).toEqual(["0"])
      yield* Effect.promise(() => dying.kill())
      const error = yield* Fiber.join(watching.fiber).pipe(Effect.flip, Effect.timeout("5 seconds"))
      expect(error).toMatchObject({ _tag: "McpError", reason: "Disconnected", serverKey: "counting" })
      expect(yield* Effect.flip(Stream.runDrain(mcp.watchMcpResource("nope", "file:///x")))).toMatchObject({
        reason: "NotConnected"
      })
    }).pipe(Effect.provide(stack({ reconnectSchedule: Schedule.spaced("1 hour") })), Effect.scoped))
})

describe("MCP resources", () => {
  it.live("lists the resources and templates of the connected servers and the app's own, and reads them", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const files = yield* mcpServer({ setup: library })
      yield* mcp.connectMcpServer({ url: files.url, serverKey: "files" })

      expect(yield* mcp.listMcpResources()).toEqual([
        {
          serverKey: "files",
          uri: "file:///readme.md",
          name: "readme",
          title: "README",
          description: "The readme",
          mimeType: "text/markdown"
        },
        { serverKey: "files", uri: "file:///logo.png", name: "logo", mimeType: "image/png" },
        { serverKey: "registry", uri: "app://settings", name: "settings", mimeType: "application/json" },
        { serverKey: "registry", uri: "app://found/readme", name: "found: readme" }
      ])
      expect(yield* mcp.listMcpResources("logo")).toEqual([
        { serverKey: "files", uri: "file:///logo.png", name: "logo", mimeType: "image/png" },
        { serverKey: "registry", uri: "app://found/logo", name: "found: logo" }
      ])
      expect(yield* mcp.listMcpResourceTemplates).toEqual([
        { serverKey: "files", uriTemplate: "note://{id}", name: "note", description: "A note by id", mimeType: "text/plain" }
      ])

      expect(yield* mcp.readMcpResource("files", "file:///readme.md")).toEqual({
        contents: [{ uri: "file:///readme.md", mimeType: "text/markdown", text: "# Hello" }]
      })
      expect(yield* mcp.readMcpResource("files", "file:///logo.png")).toEqual({
        contents: [{ uri: "file:///logo.png", mimeType: "image/png", blob: "iVBORw0KGgo=" }]
      })
      expect(yield* mcp.readMcpResource("files", "note://42")).toEqual({
        contents: [{ uri: "note://42", mimeType: "text/plain", text: "note 42" }]
      })
      expect(yield* mcp.readMcpResource("registry", "app://settings")).toEqual({
        contents: [{ uri: "app://settings", text: "{\"theme\":\"dark\"}" }]
      })
    }).pipe(Effect.provide(stack(appResources)), Effect.scoped))

  it.live("reading from an unknown server, an unknown resource, or the app without getResource is a typed McpError", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const files = yield* mcpServer({ setup: library })
      yield* mcp.connectMcpServer({ url: files.url, serverKey: "files" })
      expect(yield* Effect.flip(mcp.readMcpResource("nope", "file:///readme.md"))).toMatchObject({
        _tag: "McpError",
        reason: "NotConnected"
      })
      expect(yield* Effect.flip(mcp.readMcpResource("files", "file:///missing"))).toMatchObject({
        _tag: "McpError",
        reason: "CallFailed",
        serverKey: "files"
      })
      expect(yield* Effect.flip(mcp.readMcpResource("registry", "app://x"))).toMatchObject({
        _tag: "McpError",
        reason: "CallFailed",
        serverKey: "registry"
      })
    }).pipe(Effect.provide(stack()), Effect.scoped))

  it.live("a message naming MCP resources is sent with their contents, in the form the API accepts", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const files = yield* mcpServer({ setup: library })
      yield* mcp.connectMcpServer({ url: files.url, serverKey: "files" })
      server().setScript([Script.text("seen")])

      yield* runAll(
        {
          role: "user",
          content: [
            { type: "text", text: "Look at these" },
            { type: "resource", resource: { uri: "file:///readme.md", serverKey: "files", name: "readme" } },
            { type: "resource", resource: { uri: "file:///logo.png", serverKey: "files" } },
            { type: "resource", resource: { uri: "app://settings", serverKey: "registry" } },
            { type: "resource", resource: { uri: "https://example.com/a.txt", text: "inline" } }
          ]
        } as never
      )

      const run = server().requests.find((r) => r.path.endsWith("/runs"))!
      expect((run.body as { message: { content: unknown } }).message.content).toEqual([
        { type: "text", text: "Look at these" },
        {
          type: "resource",
          resource: { uri: "file:///readme.md", name: "readme", mimeType: "text/markdown", text: "# Hello" }
        },
        { type: "resource", resource: { uri: "file:///logo.png", mimeType: "image/png", blob: "iVBORw0KGgo=" } },
        { type: "resource", resource: { uri: "app://settings", text: "{\"theme\":\"dark\"}" } },
        { type: "resource", resource: { uri: "https://example.com/a.txt", text: "inline" } }
      ])
    }).pipe(Effect.provide(tamboLayer(server(), appResources)), Effect.scoped))

  it.live("a message naming a resource that cannot be read fails with McpError before anything is sent", () =>
    Effect.gen(function*() {
      server().setScript([Script.text("never")])
      const error = yield* Effect.flip(runAll(
        {
          role: "user",
          content: [{ type: "resource", resource: { uri: "file:///readme.md", serverKey: "gone" } }]
        } as never
      ))
      expect(error).toMatchObject({ _tag: "McpError", reason: "NotConnected", serverKey: "gone" })
      expect(server().requests.filter((r) => r.path.endsWith("/runs"))).toEqual([])
    }).pipe(Effect.provide(stack()), Effect.scoped))
})

describe("MCP resources of the app that throw", () => {
  it.live("a listResources or getResource that throws is treated as one that rejects: left out of the list, a typed McpError when read", () =>
    Effect.gen(function*() {
      const mcp = yield* Mcp.Mcp
      const listed = yield* mcp.listMcpResources()
      expect(listed.map((resource) => resource.uri)).toEqual(["app://settings"])
      expect(yield* Effect.flip(mcp.readMcpResource(Mcp.REGISTRY_SERVER_KEY, "app://settings"))).toMatchObject({
        _tag: "McpError",
        reason: "CallFailed",
        serverKey: "registry"
      })
    }).pipe(
      Effect.provide(stack({
        resources: appResources.resources,
        listResources: () => {
          throw new Error("the index is down")
        },
        getResource: () => {
          throw new Error("the store is down")
        }
      })),
      Effect.scoped
    ))
})

const appResources = {
  resources: [{ uri: "app://settings", name: "settings", mimeType: "application/json" }],
  listResources: (search?: string) => [{ uri: `app://found/${search ?? "readme"}`, name: `found: ${search ?? "readme"}` }],
  getResource: (uri: string) =>
    Promise.resolve({ contents: [{ uri, text: JSON.stringify({ theme: "dark" }) }] })
}
