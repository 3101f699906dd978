// The model-based test of `MCPClient`: fast-check generates how a client is created (transport,
// handlers given to `create`) and sequences of commands (tool calls, elicitations, sampling
// requests, new or removed handlers, the server crashing and coming back, `close`), played
// against ONE `MCPClient` and a real MCP server on loopback. After every command what the call
// settled with is what the model says: a sum, the current handler's answer, a declined
// elicitation, a refused sampling request, or an `McpError` while the server is down or the
// client closed. After the sequence, closing leaves no session open on the server.
//
// Seeded, so a failure reproduces. Environment, for longer or targeted local runs:
//   MODEL_RUNS (default 40), MODEL_MAX_COMMANDS (default 8), MODEL_SEED (default 53);
//   MODEL_PATH and MODEL_REPLAY_PATH: the `path` and `replayPath` a failure prints, to replay it.
// A counterexample it shrinks to becomes a named test in ../mcpClient.test.ts.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { FastCheck as fc } from "effect"
import { describe, expect } from "vitest"
import { startMcpServer } from "../../../core/test/mcp/server.js"
import { all, calculator, greeter, summarizer } from "../../../core/test/mcp/tools.js"
import { MCPClient, type MCPHandlers } from "../../src/index.js"
import { eventually, modelProperty, settle, sleep } from "./support.js"

const NAMES = ["Ada", "Grace", "Alan"] as const
const REPLIES = ["short", "shorter"] as const

type Command =
  | { readonly kind: "add"; readonly a: number; readonly b: number }
  | { readonly kind: "elicit" }
  | { readonly kind: "sample" }
  | { readonly kind: "setElicitation"; readonly name: (typeof NAMES)[number] | undefined }
  | { readonly kind: "setSampling"; readonly reply: (typeof REPLIES)[number] | undefined }
  | { readonly kind: "kill" }
  | { readonly kind: "restart" }
  | { readonly kind: "close" }

interface Start {
  readonly transport: "http" | "sse"
  readonly name: (typeof NAMES)[number] | undefined
  readonly reply: (typeof REPLIES)[number] | undefined
}

const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constant("add" as const), a: fc.integer({ min: 0, max: 99 }), b: fc.integer({ min: 0, max: 99 }) }),
  fc.constant({ kind: "elicit" as const }),
  fc.constant({ kind: "sample" as const }),
  fc.record({ kind: fc.constant("setElicitation" as const), name: fc.constantFrom(...NAMES, undefined) }),
  fc.record({ kind: fc.constant("setSampling" as const), reply: fc.constantFrom(...REPLIES, undefined) }),
  fc.constant({ kind: "kill" as const }),
  fc.constant({ kind: "restart" as const }),
  fc.constant({ kind: "close" as const })
)

const sequenceArbitrary = (maxCommands: number) =>
  fc.tuple(
    fc.record({
      transport: fc.constantFrom("http" as const, "sse" as const),
      name: fc.constantFrom(...NAMES, undefined),
      reply: fc.constantFrom(...REPLIES, undefined)
    }),
    fc.array(commandArbitrary, { maxLength: maxCommands })
  )

/** What the model holds: whether the server is up, the client closed, and its handlers. */
interface Model {
  up: boolean
  closed: boolean
  /** The server was killed once: from then on, which session the client is on depends on when it saw the drop. */
  killed: boolean
  name: string | undefined
  reply: string | undefined
}

const textOf = (result: { readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }> }) =>
  result.content.map((block) => block.text ?? "").join("")

const elicitation = (name: string): MCPHandlers["elicitation"] => () => ({ action: "accept", content: { name } })
const sampling = (reply: string): MCPHandlers["sampling"] => () => ({
  model: "m",
  role: "assistant",
  content: { type: "text", text: reply }
})

/** What a call of the server must give while it is up and the client open, per the model. */
const expected = (model: Model, command: Command): string | "isError" => {
  switch (command.kind) {
    case "add":
      return String(command.a + command.b)
    case "elicit":
      return model.name === undefined ? "No name (decline)" : `Hello, ${model.name}!`
    default:
      return model.reply === undefined ? "isError" : `Summary: ${model.reply}`
  }
}

const callOf = (client: MCPClient, command: Command & { readonly kind: "add" | "elicit" | "sample" }) =>
  command.kind === "add"
    ? client.callTool("add", { a: command.a, b: command.b })
    : command.kind === "elicit"
    ? client.callTool("greet", {})
    : client.callTool("summarize", { text: "a long text" })

const runSequence = async ([start, commands]: readonly [Start, ReadonlyArray<Command>]): Promise<void> => {
  // The sessions open on the server now: a crash abandons those it had (the client cannot end them).
  const live = new Set<McpServer>()
  const server = await startMcpServer({
    setup: (session) => {
      all(calculator, greeter, summarizer)(session)
      live.add(session)
      session.server.onclose = () => void live.delete(session)
    },
    transport: start.transport
  })
  const model: Model = { up: true, closed: false, killed: false, name: start.name, reply: start.reply }
  const handlers: Partial<MCPHandlers> = {
    ...(start.name === undefined ? {} : { elicitation: elicitation(start.name) }),
    ...(start.reply === undefined ? {} : { sampling: sampling(start.reply) })
  }
  const client = await MCPClient.create(server.url, start.transport, undefined, undefined, undefined, handlers)
  try {
    for (const [step, command] of commands.entries()) {
      const at = `step ${step} (${JSON.stringify(command)})`
      switch (command.kind) {
        case "kill":
          if (model.up) await server.kill()
          live.clear()
          model.up = false
          model.killed = true
          break
        case "restart":
          if (!model.up) await server.restart()
          model.up = true
          break
        case "close":
          await client.close()
          model.closed = true
          break
        case "setElicitation":
          client.updateElicitationHandler(command.name === undefined ? undefined : elicitation(command.name))
          model.name = command.name
          break
        case "setSampling": {
          // Each session is told as it opens whether the client samples: a handler can come back
          // on the session it was removed on, never on one told otherwise. Once the server was
          // killed, when the client sees its session end is not the model's to say.
          const settled = (() => {
            try {
              client.updateSamplingHandler(command.reply === undefined ? undefined : sampling(command.reply))
              return "set"
            } catch {
              return "refused"
            }
          })()
          if (command.reply !== undefined && model.reply === undefined) {
            if (start.reply === undefined || model.closed) {
              expect(settled, `${at}: a sampling handler is refused on a session told the client does not sample`).toBe("refused")
            } else if (!model.killed) {
              expect(settled, `${at}: a sampling handler comes back on the session it was removed on`).toBe("set")
            }
          } else {
            expect(settled, `${at}: a sampling handler is replaced or removed`).toBe("set")
          }
          if (settled === "set") model.reply = command.reply
          break
        }
        default: {
          if (model.closed || !model.up) {
            const settled = await settle(callOf(client, command))
            expect(settled.ok, `${at}: a call fails while the server is down or the client closed`).toBe(false)
            if (!settled.ok) expect(settled.error, at).toMatchObject({ _tag: "McpError" })
            if (model.closed && !settled.ok) expect(settled.error, at).toMatchObject({ reason: "NotConnected" })
            break
          }
          // Up and open: the call answers as the model says, once the client has reconnected.
          let result: string | "isError" | undefined
          for (let waited = 0; result === undefined && waited < 15_000; waited += 100) {
            const settled = await settle(callOf(client, command))
            if (settled.ok) result = settled.value.isError === true ? "isError" : textOf(settled.value)
            else await sleep(100)
          }
          expect(result, `${at}: the call's answer`).toBe(expected(model, command))
        }
      }
    }
  } finally {
    await client.close()
    const closed = await eventually(() => live.size === 0, 5_000)
    expect(closed, `no session is left open on the server: ${live.size} are`).toBe(true)
    await server.close()
  }
}

describe("MCPClient, model-based", () => {
  modelProperty({ runs: 40, seed: 53, maxCommands: 8 }, sequenceArbitrary, runSequence)
})
