import type { TamboTool as UpstreamTamboTool } from "@tambo-ai/client"
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import type { TamboComponentContent, TamboThread } from "../src/index.js"
import { makeClient, texts, useServer, weatherCard, weatherTool } from "./helpers.js"

const server = useServer()

interface RunBody {
  readonly message: {
    readonly content: ReadonlyArray<{ type: string; toolUseId?: string; content?: ReadonlyArray<{ text: string }> }>
    readonly additionalContext?: Record<string, unknown>
  }
  readonly tools?: ReadonlyArray<{ name: string; inputSchema: unknown }>
  readonly availableComponents?: ReadonlyArray<{ name: string; propsSchema: unknown }>
}

const runBodies = () =>
  server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs")).map((r) => r.body as RunBody)

const toolResultText = (body: RunBody | undefined) => body?.message.content[0]?.content?.[0]?.text

describe("client-side tools", () => {
  it("a Zod 4 tool runs, its result reaches the server, and the run goes on", async () => {
    // The default script: get_weather, then a WeatherCard with the result's props.
    const client = makeClient(server(), { tools: [weatherTool], components: [weatherCard] })
    const types: Array<string> = []
    let last: TamboThread | undefined
    for await (const { event, snapshot } of client.run("What is the weather in Paris?")) {
      types.push(event.type === "CUSTOM" ? event.name : event.type)
      last = snapshot
    }
    expect(types.filter((t) => t === "RUN_STARTED")).toHaveLength(2)
    expect(types).toContain("tambo.run.awaiting_input")

    const [first, continuation] = runBodies()
    expect(first!.tools!.map((t) => t.name)).toEqual(["get_weather"])
    expect(first!.tools![0]!.inputSchema).toMatchObject({ type: "object", properties: { city: { type: "string" } } })
    expect(continuation!.message.content[0]).toMatchObject({ type: "tool_result" })
    expect(JSON.parse(toolResultText(continuation)!)).toEqual({ city: "Paris", temperature: 21, conditions: "sunny" })

    const component = last!.messages.flatMap((m) => m.content).find((c): c is TamboComponentContent =>
      c.type === "component"
    )
    expect(component).toMatchObject({
      name: "WeatherCard",
      props: { city: "Paris", temperature: 21, conditions: "sunny" },
      streamingState: "done"
    })
  })

  it("a TamboTool typed for @tambo-ai/client (JSON Schema input) registers and runs", async () => {
    const calls: Array<unknown> = []
    const upstreamTool: UpstreamTamboTool<{ city: string }, { forecast: string }> = {
      name: "get_weather",
      description: "Current weather in a city",
      inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      outputSchema: { type: "object", properties: { forecast: { type: "string" } } },
      tool: async (params) => {
        calls.push(params)
        return { forecast: `rain in ${params.city}` }
      }
    }
    const client = makeClient(server())
    client.registerTool(upstreamTool)
    const thread = await client.run("weather in Lyon please").thread
    expect(calls).toEqual([{ city: "Lyon" }])
    expect(JSON.parse(toolResultText(runBodies()[1])!)).toEqual({ forecast: "rain in Lyon" })
    // Without a registered WeatherCard, the script answers in text.
    expect(texts(thread.messages).at(-1)).toContain("rain in Lyon")
  })

  it("a component's props stream in, patch by patch", async () => {
    // Paced, so that each event arrives alone (events of one network read share a snapshot).
    server().setScript([
      Script.pace(15),
      Script.text("Here: "),
      Script.component("WeatherCard", [{ city: "Par" }, { city: "Paris" }, { city: "Paris", temperature: 21 }])
    ])
    const client = makeClient(server(), { components: [weatherCard] })
    const props: Array<unknown> = []
    for await (const { event, snapshot } of client.run("card")) {
      if (event.type === "CUSTOM" && event.name === "tambo.component.props_delta") {
        const block = snapshot.messages.at(-1)!.content.find((c) => c.type === "component")
        props.push(block?.type === "component" ? block.props : undefined)
      }
    }
    expect(props).toEqual([{ city: "Par" }, { city: "Paris" }, { city: "Paris", temperature: 21 }])
    expect(runBodies()[0]!.availableComponents!.map((c) => c.name)).toEqual(["WeatherCard"])
  })

  it("registerComponent takes a component, or @tambo-ai/client's (name, { description, props })", async () => {
    server().setScript([Script.text("ok")])
    const client = makeClient(server())
    client.registerComponent(weatherCard)
    client.registerComponent("Chart", {
      description: "A chart",
      props: { type: "object", properties: { title: { type: "string" } } },
      component: () => null
    })
    await client.run("components").thread
    const components = runBodies()[0]!.availableComponents!
    expect(components.map((c) => c.name)).toEqual(["WeatherCard", "Chart"])
    expect(components[1]!.propsSchema).toMatchObject({ properties: { title: { type: "string" } } })
  })

  it("autoExecuteTools: false ends the run at the tool call", async () => {
    let called = false
    const counting: typeof weatherTool = {
      ...weatherTool,
      tool: (args, context) => {
        called = true
        return weatherTool.tool(args, context)
      }
    }
    const client = makeClient(server(), { tools: [counting] })
    const thread = await client.run("weather in Rome?", { autoExecuteTools: false }).thread
    expect(called).toBe(false)
    expect(runBodies()).toHaveLength(1)
    expect(thread.messages.at(-1)!.content.some((c) => c.type === "tool_use")).toBe(true)
  })

  it("a run past maxSteps rejects with MaxStepsExceededError", async () => {
    server().setScript(() => [Script.toolCall("get_weather", { city: "Paris" })])
    const client = makeClient(server(), { tools: [weatherTool] })
    await expect(client.run("loop", { maxSteps: 2 }).thread).rejects.toMatchObject({
      _tag: "MaxStepsExceededError",
      maxSteps: 2
    })
  })

  it("a tool that throws answers the model with an error result; the run goes on", async () => {
    server().setScript((request) =>
      request.toolResults.length === 0
        ? [Script.toolCall("get_weather", { city: "Oslo" })]
        : [Script.text(`${request.toolResults[0]!.isError}: ${request.toolResults[0]!.text}`)]
    )
    const client = makeClient(server(), {
      tools: [{
        ...weatherTool,
        tool: () => {
          throw new Error("sensor offline")
        }
      }]
    })
    const thread = await client.run("weather").thread
    expect(texts(thread.messages).at(-1)).toMatch(/true: .*sensor offline/)
  })
})

describe("context", () => {
  it("context helpers, beforeRun and additionalContext reach every request", async () => {
    const beforeRunCalls: Array<string | undefined> = []
    const client = makeClient(server(), {
      tools: [weatherTool],
      contextHelpers: { page: () => ({ url: "/weather" }) },
      beforeRun: async ({ threadId, message, tools }) => {
        beforeRunCalls.push(threadId)
        const first = message.content[0]
        return { beforeRun: { text: first?.type === "text" ? first.text : "", tools: Object.keys(tools) } }
      }
    })
    client.addContextHelper("user", async () => ({ name: "Ada" }))
    client.addContextHelper("nothing", () => undefined)

    const thread = await client.run("weather in Paris", { additionalContext: { extra: 1 } }).thread
    const expected = {
      page: { url: "/weather" },
      user: { name: "Ada" },
      extra: 1,
      beforeRun: { text: "weather in Paris", tools: ["get_weather"] }
    }
    const [first, continuation] = runBodies()
    expect(first!.message.additionalContext).toEqual(expected)
    // The continuation with the tool results carries the same context.
    expect(continuation!.message.additionalContext).toEqual(expected)

    client.removeContextHelper("user")
    await client.run("again").thread
    expect(runBodies().at(-1)!.message.additionalContext).toEqual({
      page: { url: "/weather" },
      beforeRun: { text: "again", tools: ["get_weather"] }
    })
    expect(beforeRunCalls).toEqual([undefined, thread.id])
  })

  it("an InputMessage's own additionalContext is sent too", async () => {
    server().setScript([Script.text("ok")])
    const client = makeClient(server(), { contextHelpers: { page: () => ({ url: "/" }) } })
    await client.run({
      role: "user",
      content: [{ type: "text", text: "with context" }],
      additionalContext: { fromMessage: true }
    }).thread
    expect(runBodies()[0]!.message.additionalContext).toEqual({ fromMessage: true, page: { url: "/" } })
  })
})
