// Switching from @tambo-ai/client is a change of import: code written against
// its types compiles against this package. Checked by the type checker
// (`tsc -p packages/client`); the test bodies only make sure the file runs.
import type * as Upstream from "@tambo-ai/client"
import { describe, expect, expectTypeOf, it } from "vitest"
import { z } from "zod"
import {
  type APIError,
  type ComponentContextTool,
  type ComponentContextToolMetadata,
  type ComponentRegistry,
  type DefineToolFn,
  type JSONSchemaLite,
  type RegisteredComponent,
  type RegisterToolFn,
  type RegisterToolsFn,
  type TamboComponent,
  type TamboToolAssociations,
  type TamboToolJSONSchema,
  type TamboToolRegistry,
  type TamboToolStandardSchema,
  type TamboToolUnknown,
  type UnsupportedSchemaTamboTool,
  type ComponentEndEvent,
  type ComponentPropsDeltaEvent,
  type ComponentStartEvent,
  type ContextHelpers,
  isTamboCustomEvent,
  type ListResourceItem,
  MCPClient,
  MCPTransport,
  type McpConnectionInfo,
  type McpConnectionStatus,
  type MessageGetResponse,
  type MessageListResponse,
  type MessageParentEvent,
  type NormalizedMcpServerInfo,
  type ParameterSpec,
  type PendingToolCallEvent,
  type RateLimitError,
  type ReadResourceResult,
  type ResourceSource,
  type StreamEvent,
  type SuggestionGenerateParams,
  type SuggestionGenerateResponse,
  type SuggestionListResponse,
  type TamboAIError,
  TamboClient,
  type TamboClientOptions,
  type TamboStream,
  type TamboThread,
  type TamboToolDisplayProps,
  type ThreadCreateResponse,
  type ThreadListResponse,
  type ThreadRetrieveResponse,
  type ToolAnnotations
} from "../src/index.js"

/** The methods whose upstream signatures ours can stand in for. */
type UpstreamMethods = Pick<
  Upstream.TamboClient,
  | "switchThread"
  | "startNewThread"
  | "getThread"
  | "listThreads"
  | "fetchThread"
  | "registerTool"
  | "registerTools"
  | "registerComponent"
  | "subscribe"
  | "getAuthState"
  | "cancelRun"
  | "updateThreadName"
  | "generateThreadName"
  | "addContextHelper"
  | "removeContextHelper"
>

describe("compatibility with @tambo-ai/client's types", () => {
  it("a client stands in for upstream's, method by method", () => {
    expectTypeOf<TamboClient>().toExtend<UpstreamMethods>()
    expect(typeof TamboClient).toBe("function")
  })

  it("upstream-typed options are accepted", () => {
    const tools: Array<Upstream.TamboTool> = []
    // Handlers typed with the MCP SDK's own request types are the exception: see the next test.
    const mcpServers: Array<Omit<Upstream.McpServerInfo, "handlers">> = [{ url: "https://example.com/mcp" }]
    const options: TamboClientOptions = {
      apiKey: "key",
      environment: "staging",
      userKey: "user",
      tools,
      mcpServers,
      beforeRun: async ({ threadId, message }) => {
        void threadId
        void message.content
      }
    }
    expect(options.tools).toBe(tools)
  })

  it("an MCP server's handlers written as upstream's README writes them compile", () => {
    const options: TamboClientOptions = {
      apiKey: "key",
      userKey: "user",
      mcpServers: [{
        url: "https://example.com/mcp",
        transport: MCPTransport.HTTP,
        handlers: {
          elicitation: async (request, extra) => {
            extra.signal.addEventListener("abort", () => undefined)
            void request.params.message
            void Object.keys(request.params.requestedSchema.properties)
            return { action: "accept", content: { name: "Ada" } }
          },
          sampling: async (request) => ({
            model: "local",
            role: "assistant",
            content: { type: "text", text: `${request.params.messages.length} messages` }
          })
        }
      }]
    }
    expect(options.mcpServers).toHaveLength(1)
  })

  it("threads, stream elements and promises have upstream's shapes", () => {
    expectTypeOf<TamboThread>().toExtend<Upstream.TamboThread>()
    expectTypeOf<Upstream.TamboThread>().toExtend<TamboThread>()
    expectTypeOf<TamboStream["thread"]>().toExtend<Promise<Upstream.TamboThread>>()
    expectTypeOf<StreamEvent["snapshot"]>().toExtend<Upstream.TamboThread>()
    // Both ways of consuming a run, written as for upstream.
    const consume = async (stream: TamboStream) => {
      for await (const { event, snapshot } of stream) {
        if (event.type === "TEXT_MESSAGE_CONTENT") void event.delta
        void snapshot.messages.length
      }
      const thread: Upstream.TamboThread = await stream.thread
      stream.abort()
      return thread
    }
    expect(typeof consume).toBe("function")
  })

  it("Tambo's custom events have upstream's names and fields; their arrays are read-only", () => {
    expectTypeOf<ComponentStartEvent>().toExtend<Upstream.ComponentStartEvent>()
    expectTypeOf<ComponentEndEvent>().toExtend<Upstream.ComponentEndEvent>()
    expectTypeOf<MessageParentEvent>().toExtend<Upstream.MessageParentEvent>()
    expectTypeOf<PendingToolCallEvent>().toExtend<Upstream.PendingToolCallEvent>()
    expectTypeOf<ComponentPropsDeltaEvent["value"]["operations"][number]["path"]>().toEqualTypeOf<string>()
    // Written as upstream's users write it: the guard on a stream's event, then its name.
    const describeEvent = (event: StreamEvent["event"]): string =>
      isTamboCustomEvent(event)
        ? event.name === "tambo.component.start" ? `rendering ${event.value.componentName}` : event.name
        : event.type
    expect(describeEvent({ type: "CUSTOM", name: "tambo.component.end", value: { componentId: "c1" } })).toBe("tambo.component.end")
  })

  it("an MCPClient is created and used as upstream's is", () => {
    expectTypeOf<MCPClient>().toExtend<
      Pick<Upstream.MCPClient, "close" | "getInstructions" | "getServerVersion" | "getServerCapabilities">
    >()
    // Upstream's README usage, and its positional arguments with handlers written inline.
    const use = async () => {
      const mcp = await MCPClient.create("https://mcp.example.com/mcp", MCPTransport.HTTP, { "x-team": "blue" }, undefined, undefined, {
        elicitation: async (request, extra) => {
          extra.signal.throwIfAborted()
          return { action: "accept", content: { answer: request.params.message } }
        }
      })
      const tools = await mcp.listTools()
      const result = await mcp.callTool(tools[0]!.name, { a: 1 })
      mcp.updateElicitationHandler(undefined)
      await mcp.close()
      return result.content
    }
    expect(typeof use).toBe("function")
  })

  it("an upstream InputMessage can be sent", () => {
    const send = (client: TamboClient, message: Upstream.InputMessage) => client.run(message)
    expect(typeof send).toBe("function")
  })

  it("tools and components typed with upstream's model types are this package's", () => {
    const byStandardSchema: Upstream.TamboToolStandardSchema<z.ZodObject<{ city: z.ZodString }>, z.ZodNumber> = {
      name: "temperature",
      description: "The temperature in a city",
      tool: ({ city }) => city.length,
      inputSchema: z.object({ city: z.string() }),
      outputSchema: z.number()
    }
    const byJsonSchema: Upstream.TamboToolJSONSchema<[{ text: string }], string> = {
      name: "echo",
      description: "Echoes",
      tool: ({ text }) => text,
      inputSchema: { type: "object", properties: { text: { type: "string" } } },
      outputSchema: { type: "string" }
    }
    const ours: [TamboToolStandardSchema<z.ZodObject<{ city: z.ZodString }>, z.ZodNumber>, TamboToolJSONSchema<
      [{ text: string }],
      string
    >] = [byStandardSchema, byJsonSchema]
    const registry: TamboToolRegistry = { temperature: byStandardSchema, echo: byJsonSchema }
    const card: Upstream.RegisteredComponent = {
      name: "Card",
      description: "A card",
      props: { type: "object", properties: { title: { type: "string" } } },
      contextTools: [],
      component: null
    }
    const components: ComponentRegistry = { Card: card }
    const component: TamboComponent = {
      name: "Card",
      description: "A card",
      component: null,
      propsSchema: z.object({ title: z.string() })
    } satisfies Upstream.TamboComponent
    const register = (client: TamboClient) => {
      client.registerTools(ours)
      client.registerComponent("Card", components["Card"]!)
    }
    expectTypeOf<Upstream.TamboToolUnknown>().toExtend<TamboToolUnknown>()
    expectTypeOf<Upstream.JSONSchemaLite>().toExtend<JSONSchemaLite>()
    expect([Object.keys(registry), component.name, typeof register]).toEqual([["temperature", "echo"], "Card", "function"])
  })

  it("the names upstream gives its shapes resolve here (checked by the type checker)", () => {
    type Names = [
      APIError,
      ComponentContextToolMetadata,
      ContextHelpers,
      ListResourceItem,
      McpConnectionInfo,
      McpConnectionStatus,
      MessageGetResponse,
      MessageListResponse,
      NormalizedMcpServerInfo,
      ParameterSpec,
      RateLimitError,
      ReadResourceResult,
      ResourceSource,
      SuggestionGenerateParams,
      SuggestionGenerateResponse,
      SuggestionListResponse,
      TamboAIError,
      TamboToolDisplayProps,
      ThreadCreateResponse,
      ThreadListResponse,
      ThreadRetrieveResponse,
      ToolAnnotations,
      ComponentContextTool,
      DefineToolFn,
      RegisterToolFn,
      RegisterToolsFn,
      RegisteredComponent,
      TamboToolAssociations,
      UnsupportedSchemaTamboTool
    ]
    expectTypeOf<Names["length"]>().toEqualTypeOf<29>()
    // Upstream's enum of MCP transports, and its values where a transport is taken.
    expectTypeOf(MCPTransport.HTTP).toEqualTypeOf<`${Upstream.MCPTransport.HTTP}`>()
    expect(MCPTransport).toEqual({ SSE: "sse", HTTP: "http" })
  })
})
