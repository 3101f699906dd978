// Switching from @tambo-ai/client is a change of import: code written against
// its types compiles against this package. Checked by the type checker
// (`tsc -p packages/client`); the test bodies only make sure the file runs.
import type * as Upstream from "@tambo-ai/client"
import { describe, expect, expectTypeOf, it } from "vitest"
import {
  type StreamEvent,
  TamboClient,
  type TamboClientOptions,
  type TamboStream,
  type TamboThread
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
    const mcpServers: Array<Upstream.McpServerInfo> = [{ url: "https://example.com/mcp" }]
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

  it("an upstream InputMessage can be sent", () => {
    const send = (client: TamboClient, message: Upstream.InputMessage) => client.run(message)
    expect(typeof send).toBe("function")
  })
})
