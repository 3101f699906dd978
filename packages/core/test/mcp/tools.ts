/** Tools the test MCP servers offer. */
import { completable } from "@modelcontextprotocol/sdk/server/completable.js"
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js"
import {
  ElicitResultSchema,
  type LoggingLevel,
  LoggingLevelSchema,
  RootsListChangedNotificationSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
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

/**
 * `wait`: answers `opened` once `opened` resolves, unless the client cancels the call first;
 * `arrived` hears each call as it reaches the server, `ended` how it ended there (`opened`, or
 * `cancelled` by the client). A call that must outlast a bound waits here for the test, not for a
 * number of milliseconds.
 */
export const gate = (
  opened: Promise<void>,
  arrived: () => void = () => undefined,
  ended: (ending: "opened" | "cancelled") => void = () => undefined
) =>
(server: McpServer) => {
  server.registerTool(
    "wait",
    { description: "Waits until the gate opens", inputSchema: {} },
    (_args, { signal }) => {
      arrived()
      return new Promise((resolve) => {
        let settled = false
        const end = (ending: "opened" | "cancelled") => {
          if (settled) return
          settled = true
          ended(ending)
          resolve(text(ending))
        }
        void opened.then(() => end("opened"))
        signal.addEventListener("abort", () => end("cancelled"), { once: true })
      })
    }
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

/** `greet_hastily`: the server gives up on its elicitation as soon as it sent it (the client's handler sees it cancelled). */
export const hastyGreeter = (server: McpServer) => {
  server.registerTool("greet_hastily", { description: "Asks the user's name and gives up at once", inputSchema: {} }, async () => {
    const giveUp = new AbortController()
    const answer = server.server.elicitInput({
      mode: "form",
      message: "What is your name? (hasty)",
      requestedSchema: { type: "object", properties: { name: { type: "string", title: "Name" } }, required: ["name"] }
    }, { signal: giveUp.signal }).catch(() => undefined)
    giveUp.abort("gave up")
    return text((await answer) === undefined ? "No name (gave up)" : "Answered")
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

/**
 * A server that offers logging, and `chatty`, which logs one message at each level (logger
 * `chatty`, data `{ n, level }`) that the session's level lets through. `levels` hears each
 * `logging/setLevel` the server gets; with `refuse`, the server refuses them; with `hangFirst`, it
 * never answers the first one (nor takes its level).
 */
export const chatty = (
  levels: Array<LoggingLevel> = [],
  { hangFirst = false, refuse = false }: { readonly refuse?: boolean; readonly hangFirst?: boolean } = {}
) =>
(server: McpServer) => {
  let hang = hangFirst
  let threshold: LoggingLevel | undefined
  const severity = (level: LoggingLevel) => LoggingLevelSchema.options.indexOf(level)
  server.server.registerCapabilities({ logging: {} })
  server.server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    if (refuse) throw new Error("no levels today")
    if (hang) {
      hang = false
      return new Promise<never>(() => {})
    }
    threshold = request.params.level
    levels.push(request.params.level)
    return {}
  })
  server.registerTool("chatty", { description: "Logs at every level", inputSchema: { n: z.number() } }, async ({ n }) => {
    for (const level of LoggingLevelSchema.options) {
      if (threshold !== undefined && severity(level) < severity(threshold)) continue
      await server.server.notification({ method: "notifications/message", params: { level, logger: "chatty", data: { n, level } } })
    }
    return text("said")
  })
}

/**
 * `work`: tells its progress `steps` times, `gapMs` apart (when the caller asked for it), then
 * answers `done`, or `done, unasked` when no progress was asked for.
 */
export const worker = (server: McpServer) => {
  server.registerTool(
    "work",
    { description: "Works in steps", inputSchema: { steps: z.number(), gapMs: z.number() } },
    async ({ steps, gapMs }, extra) => {
      const token = extra._meta?.progressToken
      for (let step = 1; step <= steps; step++) {
        await new Promise((resolve) => setTimeout(resolve, gapMs))
        if (token !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress: step, total: steps, message: `step ${step}` }
          })
        }
      }
      return text(token === undefined ? "done, unasked" : "done")
    }
  )
}

/**
 * `step`: tells its progress `steps` times, each once the test let it (`next` takes the call's
 * ask for its next notice; calling what it gives sends that notice), then answers `done`; a
 * cancelled call stops there. A bound each notice restarts is then moved past on the test clock
 * between notices, rather than raced by a number of milliseconds.
 */
export const stepper = () => {
  const asks = Effect.runSync(Queue.unbounded<() => void>())
  const pass = (signal: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      signal.addEventListener("abort", () => reject(signal.reason), { once: true })
      asks.unsafeOffer(resolve)
    })
  const setup = (server: McpServer) => {
    server.registerTool(
      "step",
      { description: "Works in steps the test paces", inputSchema: { steps: z.number() } },
      async ({ steps }, extra) => {
        const token = extra._meta?.progressToken
        for (let step = 1; step <= steps; step++) {
          await pass(extra.signal)
          if (token !== undefined) {
            await extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken: token, progress: step, total: steps, message: `step ${step}` }
            })
          }
        }
        return text("done")
      }
    )
  }
  return { setup, next: Queue.take(asks) }
}

const NAMES = ["Ada", "Alan", "Barbara", "Grace"]

/**
 * Completions: the prompt `greet`, whose `name` completes from a list of names by prefix and
 * whose `title` completes from the name chosen (`context`); the template `people://{name}`,
 * whose `name` completes the same way.
 */
export const completer = (server: McpServer) => {
  const byPrefix = (value: string) => NAMES.filter((name) => name.toLowerCase().startsWith(value.toLowerCase()))
  server.registerPrompt(
    "greet",
    {
      description: "Greets someone",
      argsSchema: {
        name: completable(z.string(), byPrefix),
        title: completable(z.string(), (value, context) =>
          (context?.arguments?.["name"] === "Grace" ? ["Admiral", "Dr."] : ["Dr.", "Ms.", "Mr."]).filter((title) =>
            title.startsWith(value)
          ))
      }
    },
    ({ name, title }) => ({ messages: [{ role: "user", content: { type: "text", text: `Hello, ${title} ${name}` } }] })
  )
  server.registerResource(
    "person",
    new ResourceTemplate("people://{name}", { list: undefined, complete: { name: byPrefix } }),
    { mimeType: "text/plain" },
    async (uri, { name }) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: String(name) }] })
  )
}

/**
 * `roots`: answers the client's roots (`roots/list`) as JSON, or the error asking for them gave.
 * `changes` hears each `notifications/roots/list_changed`.
 */
export const rootsReader = (changes: Array<string> = []) => (server: McpServer) => {
  server.server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
    changes.push("roots changed")
  })
  server.registerTool("roots", { description: "Lists the client's roots", inputSchema: {} }, async () => {
    try {
      const { roots } = await server.server.listRoots()
      return text(JSON.stringify(roots))
    } catch (error) {
      return { isError: true, content: [{ type: "text" as const, text: String(error) }] }
    }
  })
}

/** `meta`: answers the `_meta` its request carried, as JSON (`{}` without one). */
export const metaReader = (server: McpServer) => {
  server.registerTool("meta", { description: "Shows the request's _meta", inputSchema: {} }, async (_, extra) =>
    text(JSON.stringify(extra._meta ?? {})))
}

/**
 * `sign_in`: asks the user to go to `url` (a URL-mode elicitation named `elicitationId`),
 * answers the user's action, and once accepted says the elicitation finished; or answers why it
 * could not ask.
 */
export const urlElicitor = (server: McpServer) => {
  server.registerTool(
    "sign_in",
    { description: "Signs in through the browser", inputSchema: { url: z.string(), elicitationId: z.string() } },
    async ({ elicitationId, url }) => {
      try {
        // Sent as is: the MCP SDK's own `elicitInput` would refuse some URLs before they leave the server.
        const answer = await server.server.request(
          { method: "elicitation/create", params: { mode: "url", message: "Sign in to Acme", url, elicitationId } },
          ElicitResultSchema
        )
        if (answer.action === "accept") await server.server.createElicitationCompletionNotifier(elicitationId)()
        return text(answer.action)
      } catch (error) {
        return text(`could not ask: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
  )
}
