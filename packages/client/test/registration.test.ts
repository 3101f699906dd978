import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { holdingProxy, makeClient, runMovedToLocalThread, useServer, waitFor, weatherTool } from "./helpers.js"

const server = useServer()

interface RunBody {
  readonly message: {
    readonly content: ReadonlyArray<{ type: string; isError?: boolean; content?: ReadonlyArray<{ text: string }> }>
  }
  readonly tools?: ReadonlyArray<{ name: string }>
}

const runBodies = () =>
  server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs")).map((r) => r.body as RunBody)

describe("tools registered and withdrawn at runtime", () => {
  it("unregisterTool withdraws a tool from the next run's request; an unknown name changes nothing", async () => {
    server().setScript([Script.text("ok")])
    const client = makeClient(server(), { tools: [weatherTool] })
    await client.run("first").thread
    client.unregisterTool("get_weather")
    client.unregisterTool("never_registered")
    await client.run("second").thread
    const [first, second] = runBodies()
    expect(first!.tools!.map((tool) => tool.name)).toEqual(["get_weather"])
    expect(second!.tools).toBeUndefined()
  })

  it("unregisterComponent withdraws a component from the next run's request; an unknown name changes nothing", async () => {
    server().setScript([Script.text("ok")])
    const card = { name: "Card", description: "A card", propsSchema: { type: "object" as const, properties: {} } }
    const client = makeClient(server(), { components: [card] })
    await client.run("first").thread
    client.unregisterComponent("Card")
    client.unregisterComponent("never_registered")
    await client.run("second").thread
    const [first, second] = server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs")).map((r) =>
      (r.body as { readonly availableComponents?: ReadonlyArray<{ readonly name: string }> }).availableComponents ?? []
    )
    expect(first!.map((component) => component.name)).toEqual(["Card"])
    expect(second).toEqual([])
  })

  it("getTools lists the registered tools by name, as they were given", () => {
    const client = makeClient(server(), { tools: [weatherTool] })
    expect(client.getTools()).toEqual({ get_weather: weatherTool })
    const echo = { name: "echo", description: "says it back", inputSchema: { type: "object" as const }, tool: (x: unknown) => x }
    client.registerTool(echo)
    expect(Object.keys(client.getTools())).toEqual(["get_weather", "echo"])
    expect(client.getTools().echo).toBe(echo)
    client.unregisterTool("get_weather")
    expect(Object.keys(client.getTools())).toEqual(["echo"])
  })

  it("onCallUnregisteredTool answers a call of a tool the app did not register: its return is the result", async () => {
    server().setScript((request) =>
      request.toolResults.length > 0
        ? [Script.text(`Got ${request.toolResults[0]!.text}`)]
        : [Script.toolCall("server_side_lookup", { query: "paris", limit: 2 }, { pending: true })]
    )
    const calls: Array<unknown> = []
    const client = makeClient(server(), {
      onCallUnregisteredTool: async (toolName, args) => {
        calls.push([toolName, args])
        return `looked up ${args.map((arg) => String(arg.parameterValue)).join(",")}`
      }
    })
    await client.run("Look it up").thread
    expect(calls).toEqual([[
      "server_side_lookup",
      [{ parameterName: "query", parameterValue: "paris" }, { parameterName: "limit", parameterValue: 2 }]
    ]])
    const continuation = runBodies()[1]!
    expect(continuation.message.content[0]).toMatchObject({ type: "tool_result", content: [{ text: "looked up paris,2" }] })
    expect(continuation.message.content[0]!.isError).toBeUndefined()
    // It answers unregistered names only, and the request never lists it as a tool.
    expect(runBodies()[0]!.tools).toBeUndefined()
  })

  it("without onCallUnregisteredTool, such a call gets an error result naming the tool", async () => {
    server().setScript((request) =>
      request.toolResults.length > 0
        ? [Script.text("done")]
        : [Script.toolCall("server_side_lookup", { query: "paris" }, { pending: true })]
    )
    const client = makeClient(server())
    await client.run("Look it up").thread
    const result = runBodies()[1]!.message.content[0]!
    expect(result.isError).toBe(true)
    expect(result.content![0]!.text).toContain("server_side_lookup")
  })

  it("an onCallUnregisteredTool that throws gives the model an error result", async () => {
    server().setScript((request) =>
      request.toolResults.length > 0
        ? [Script.text("done")]
        : [Script.toolCall("server_side_lookup", {}, { pending: true })]
    )
    const client = makeClient(server(), {
      onCallUnregisteredTool: () => {
        throw new Error("no such service")
      }
    })
    await client.run("Look it up").thread
    const result = runBodies()[1]!.message.content[0]!
    expect(result.isError).toBe(true)
    expect(result.content![0]!.text).toContain("no such service")
  })
})

/** An unsigned JWT for `sub` that expires at `exp` (seconds): the testing server exchanges it without verifying it. */
const jwtFor = (sub: string, exp: number) =>
  [
    Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url"),
    Buffer.from(JSON.stringify({ sub, iss: "https://issuer.example", exp })).toString("base64url"),
    "signature"
  ].join(".")

describe("subscribeToAuthState", () => {
  it("tells of each change of the auth state, until unsubscribed", async () => {
    const client = makeClient(server(), { userKey: undefined, userToken: jwtFor("alice", Math.floor(Date.now() / 1000) + 1_000) })
    const seen: Array<string> = []
    const unsubscribe = client.subscribeToAuthState(() => seen.push(client.getAuthState().status))
    await waitFor(() => client.getAuthState().status === "identified", "the exchange")
    await waitFor(() => seen.includes("identified"), "the change to be told")
    unsubscribe()
    const told = seen.length
    client.setUserToken(jwtFor("alice", Math.floor(Date.now() / 1000) + 2_000))
    await waitFor(() => client.getAuthState().status === "identified", "the second exchange")
    expect(seen.length).toBe(told)
  })

  // Long enough that the run below ends well before the held refresh's token expires, even on a busy machine.
  describe("with tokens that last 12 s", () => {
    const shortLived = useServer({ tokenTtlSeconds: 12, script: [Script.text("hi")] })

    it("a refresh of a token that still works is not told, and a run meanwhile carries that token", async () => {
      const proxy = await holdingProxy(shortLived())
      const client = makeClient(shortLived(), {
        tamboUrl: proxy.url,
        userKey: undefined,
        userToken: jwtFor("alice", Math.floor(Date.now() / 1000) + 1_000)
      })
      await waitFor(() => client.getAuthState().status === "identified", "the first exchange")
      const seen: Array<string> = []
      client.subscribeToAuthState(() => seen.push(client.getAuthState().status))
      // The refresh, at half the token's lifetime, is held.
      const refresh = proxy.holdRequest((request) => request.path === "/oauth/token")
      await refresh.arrived
      expect(client.getAuthState()).toEqual({ status: "identified", source: "tokenExchange" })
      // Sent while the refresh is held, with the token that still works.
      await client.run("hello").thread
      const exchanged = shortLived().requests.filter((r) => r.path === "/oauth/token")
      const runs = shortLived().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs"))
      expect(exchanged).toHaveLength(1)
      expect(runs).toHaveLength(1)
      expect(seen).toEqual([])
      refresh.release()
      await waitFor(() => shortLived().requests.filter((r) => r.path === "/oauth/token").length === 2, "the refresh")
    }, 20_000)
  })

  it("tells of a change made right after subscribing: a new user token is exchanging, then identified", async () => {
    const proxy = await holdingProxy(server())
    const now = Math.floor(Date.now() / 1000)
    const client = makeClient(server(), { tamboUrl: proxy.url, userKey: undefined, userToken: jwtFor("alice", now + 1_000) })
    await waitFor(() => client.getAuthState().status === "identified", "the first exchange")
    const held = proxy.holdRequest((request) => request.path === "/oauth/token")
    const seen: Array<string> = []
    client.subscribeToAuthState(() => seen.push(client.getAuthState().status))
    client.setUserToken(jwtFor("bob", now + 1_000))
    await held.arrived
    await waitFor(() => seen.includes("exchanging"), "the exchange to be told")
    held.release()
    await waitFor(() => seen.includes("identified"), "the new token to be told")
    expect(seen).toEqual(["exchanging", "identified"])
  })
})

describe("initialMessages", () => {
  const seed = [
    { role: "system" as const, content: [{ type: "text" as const, text: "Answer in French." }] }
  ]

  it("seed every thread the client creates; a run's own initialMessages replace them", async () => {
    server().setScript([Script.text("ok")])
    const client = makeClient(server(), { initialMessages: seed })
    const first = await client.run("hello").thread
    await client.run("again", { threadId: first.id }).thread
    client.startNewThread()
    const own = [{ role: "assistant" as const, content: [{ type: "text" as const, text: "Bonjour !" }] }]
    await client.run("other", { initialMessages: own }).thread
    const bodies = server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs"))
      .map((r) => r.body as { thread?: { initialMessages?: unknown } })
    expect(bodies.map((body) => body.thread?.initialMessages)).toEqual([seed, undefined, own])
  })

  it("getInitialMessages of a new conversation's local thread id, once the server named that thread, are the ones its run opened it with", async () => {
    server().setScript([Script.text("ok")])
    const proxy = await holdingProxy(server())
    const client = makeClient(server(), { tamboUrl: proxy.url, initialMessages: seed })
    const own = [{ role: "assistant" as const, content: [{ type: "text" as const, text: "Bonjour !" }] }]
    const { localId, stream, threadId } = await runMovedToLocalThread(client, proxy, () => client.run("hello", { initialMessages: own }))
    await stream.thread
    expect(client.getInitialMessages(threadId)).toEqual(own)
    expect(client.getInitialMessages(localId)).toEqual(own)
  })
})

describe("a component block's props for rendering", () => {
  it("getComponentProps reads them back through the registered component's schema: strict mode's nulls out, defaults in", async () => {
    server().setScript((request) => {
      const declared = request.availableComponents.find((component) => component.name === "Note")!.propsSchema
      return [
        Script.component("Note", [{ title: "Hi" }, Script.strictArgs(declared, { title: "Hi" }) as Record<string, unknown>]),
        Script.component("Unregistered", [{ a: null }])
      ]
    })
    const client = makeClient(server())
    client.registerComponent({
      name: "Note",
      description: "A note",
      propsSchema: z.object({ title: z.string(), subtitle: z.string().optional(), tone: z.enum(["calm", "loud"]).default("calm") })
    })
    const thread = await client.run("Note it").thread
    const blocks = thread.messages.flatMap((message) => message.content).filter((block) => block.type === "component")
    expect(blocks.map((block) => block.props)).toEqual([{ title: "Hi", subtitle: null, tone: null }, { a: null }])
    expect(blocks.map((block) => client.getComponentProps(block))).toEqual([{ title: "Hi", tone: "calm" }, { a: null }])
    // In `@tambo-ai/client`'s registration form too.
    client.registerComponent("Note", {
      description: "A note",
      props: { type: "object", properties: { title: { type: "string" }, subtitle: { type: "string" } }, required: ["title"] }
    })
    expect(client.getComponentProps(blocks[0]!)).toEqual({ title: "Hi", tone: null })
    await client.destroy()
  })
})
