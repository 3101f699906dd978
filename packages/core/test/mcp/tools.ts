/** Tools the test MCP servers offer. */
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js"
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as z from "zod"

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] })

/** `add`, `divide` (an `isError` result on division by zero), `explode` (throws), `math.square`. */
export const calculator = (server: McpServer) => {
  server.registerTool(
    "add",
    { description: "Adds two numbers", inputSchema: { a: z.number(), b: z.number().describe("The second term") } },
    async ({ a, b }) => text(String(a + b))
  )
  server.registerTool(
    "divide",
    { description: "Divides a by b", inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) =>
      b === 0 ? { isError: true, content: [{ type: "text" as const, text: "Cannot divide by zero" }] } : text(String(a / b))
  )
  server.registerTool("explode", { description: "Always throws", inputSchema: {} }, async () => {
    throw new Error("the detonator went off")
  })
  server.registerTool(
    "math.square",
    { description: "Squares a number", inputSchema: { x: z.number() } },
    async ({ x }) => text(String(x * x))
  )
}

/**
 * `sleep`: answers `slept` after `ms` milliseconds, unless the client cancels the call first;
 * `seen` hears how each call ended on the server (`slept`, or `cancelled` by the client).
 */
export const sleeper = (seen: (ending: "slept" | "cancelled") => void = () => undefined) => (server: McpServer) => {
  server.registerTool(
    "sleep",
    { description: "Sleeps", inputSchema: { ms: z.number() } },
    ({ ms }, { signal }) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => {
          seen("slept")
          resolve(text("slept"))
        }, ms)
        signal.addEventListener("abort", () => {
          clearTimeout(timer)
          seen("cancelled")
          resolve(text("cancelled"))
        }, { once: true })
      })
  )
}

/** `echo`, answering with the server's name. */
export const echo = (name: string) => (server: McpServer) => {
  server.registerTool(
    "echo",
    { description: "Echoes a message", inputSchema: { message: z.string() } },
    async ({ message }) => text(`${name}: ${message}`)
  )
}

/** `greet`: asks the user's name by elicitation. */
export const greeter = (server: McpServer) => {
  server.registerTool("greet", { description: "Greets the user by name", inputSchema: {} }, async () => {
    const answer = await server.server.elicitInput({
      mode: "form",
      message: "What is your name?",
      requestedSchema: { type: "object", properties: { name: { type: "string", title: "Name" } }, required: ["name"] }
    })
    return text(answer.action === "accept" ? `Hello, ${String(answer.content?.["name"])}!` : `No name (${answer.action})`)
  })
}

/** `greet`, but the server gives up on its elicitation after 300 ms (it tells the client, which cancels its handler). */
export const impatientGreeter = (server: McpServer) => {
  server.registerTool("greet", { description: "Greets the user by name", inputSchema: {} }, async () => {
    const answer = await server.server.elicitInput({
      mode: "form",
      message: "What is your name? (quick)",
      requestedSchema: { type: "object", properties: { name: { type: "string", title: "Name" } }, required: ["name"] }
    }, { timeout: 300 }).catch(() => undefined)
    return text(answer === undefined ? "No name (gave up)" : `Answered: ${answer.action}`)
  })
}

/** `summarize`: asks the client's model for a summary by sampling. */
export const summarizer = (server: McpServer) => {
  server.registerTool(
    "summarize",
    { description: "Summarizes a text", inputSchema: { text: z.string() } },
    async ({ text: input }) => {
      const result = await server.server.createMessage({
        messages: [{ role: "user", content: { type: "text", text: `Summarize: ${input}` } }],
        maxTokens: 50
      })
      return text(result.content.type === "text" ? `Summary: ${result.content.text}` : "no text")
    }
  )
}

/** Several fixtures on one server. */
export const all = (...setups: ReadonlyArray<(server: McpServer) => void>) => (server: McpServer) => {
  for (const setup of setups) setup(server)
}

/** `unlock`: adds the tool `secret` to the server's list (which then says its list changed). */
export const unlocker = (server: McpServer) => {
  server.registerTool("unlock", { description: "Unlocks the secret tool", inputSchema: {} }, async () => {
    if (!server.isConnected()) return text("not connected")
    server.registerTool("secret", { description: "The secret tool", inputSchema: {} }, async () => text("42"))
    return text("unlocked")
  })
}

/**
 * `publish`: adds the prompt `bye` and the resource `file:///changelog.md` to the session's
 * server, which then says its prompts and its resources changed. Offers one prompt and one
 * resource from the start (a server announces those capabilities before it connects).
 */
export const publisher = (server: McpServer) => {
  server.registerPrompt("hello", { description: "Says hello" }, () => ({
    messages: [{ role: "assistant", content: { type: "text", text: "Hello!" } }]
  }))
  server.registerResource("readme", "file:///readme.md", { mimeType: "text/markdown" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/markdown", text: "# Hello" }]
  }))
  server.registerTool("publish", { description: "Adds a prompt and a resource", inputSchema: {} }, async () => {
    server.registerPrompt("bye", { description: "Says goodbye" }, () => ({
      messages: [{ role: "assistant", content: { type: "text", text: "Bye!" } }]
    }))
    server.registerResource("changelog", "file:///changelog.md", { mimeType: "text/markdown" }, async (uri) => ({
      contents: [{ uri: uri.href, mimeType: "text/markdown", text: "# Changes" }]
    }))
    return text("published")
  })
}

/**
 * The resource `file:///counter.txt` (the count), which subscribers hear of when it changes, and
 * the tool `bump` that counts one more. `log` hears the subscriptions and unsubscriptions; the
 * first `refused` subscriptions are refused.
 */
export const counter = (log: Array<string> = [], refused = 0) => (server: McpServer) => {
  let count = 0
  let refuse = refused
  const subscribed = new Set<string>()
  server.registerResource("counter", "file:///counter.txt", { mimeType: "text/plain" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: String(count) }]
  }))
  server.server.registerCapabilities({ resources: { subscribe: true } })
  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    if (refuse-- > 0) throw new Error("not now")
    subscribed.add(request.params.uri)
    log.push(`subscribe ${request.params.uri}`)
    return {}
  })
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscribed.delete(request.params.uri)
    log.push(`unsubscribe ${request.params.uri}`)
    return {}
  })
  server.registerTool("bump", { description: "Counts one more", inputSchema: {} }, async () => {
    count++
    for (const uri of subscribed) await server.server.sendResourceUpdated({ uri })
    return text(String(count))
  })
}

/** Prompts: `review` (arguments `code`, optional `language`) and `hello` (none). */
export const prompter = (server: McpServer) => {
  server.registerPrompt(
    "review",
    {
      title: "Code review",
      description: "Reviews a piece of code",
      argsSchema: { code: z.string().describe("The code to review"), language: z.string().optional() }
    },
    ({ code, language }) => ({
      description: "A review request",
      messages: [{ role: "user", content: { type: "text", text: `Review this ${language ?? "code"}: ${code}` } }]
    })
  )
  server.registerPrompt("hello", { description: "Says hello" }, () => ({
    messages: [{ role: "assistant", content: { type: "text", text: "Hello!" } }]
  }))
}

/** Resources: `file:///readme.md` (text), `file:///logo.png` (blob), and the template `note://{id}`. */
export const library = (server: McpServer) => {
  server.registerResource(
    "readme",
    "file:///readme.md",
    { title: "README", description: "The readme", mimeType: "text/markdown" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/markdown", text: "# Hello" }] })
  )
  server.registerResource(
    "logo",
    "file:///logo.png",
    { mimeType: "image/png" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "image/png", blob: "iVBORw0KGgo=" }] })
  )
  server.registerResource(
    "note",
    new ResourceTemplate("note://{id}", { list: undefined }),
    { description: "A note by id", mimeType: "text/plain" },
    async (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: `note ${String(id)}` }] })
  )
}
