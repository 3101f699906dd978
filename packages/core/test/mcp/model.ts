// The model-based test of MCP connections (Mcp.model.test.ts) and the replays of its
// counterexamples (Mcp.counterexamples.test.ts): the commands, the model that says what each must
// leave, the real MCP servers the commands act on, and the invariants checked after every command.
//
// A sequence plays its commands against ONE `Mcp` service (over the `ToolRegistry` `Tambo.layer`
// wires, a fast reconnect schedule) and three real MCP servers on loopback (two Streamable HTTP,
// one HTTP+SSE) plus a URL nothing listens on. After every command it waits, with a bounded poll,
// for the service to settle where the model says, and fails naming the invariant that did not hold.
import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js"
import { SetLevelRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as z from "zod"
import type * as Auth from "../../src/Auth.js"
import * as Mcp from "../../src/Mcp.js"
import type { McpError } from "../../src/TamboError.js"
import type { TamboTransport } from "../../src/TamboTransport.js"
import * as ToolExecutor from "../../src/ToolExecutor.js"
import * as ToolRegistry from "../../src/ToolRegistry.js"
import { startMcpServer, type TestMcpServer, unusedUrl } from "./server.js"

// ---------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------

/** The three servers: 0 and 1 speak Streamable HTTP, 2 the older HTTP+SSE. */
export type Index = 0 | 1 | 2

const INDICES: ReadonlyArray<Index> = [0, 1, 2]

const TRANSPORTS: Readonly<Record<Index, Mcp.McpTransport>> = { 0: "http", 1: "http", 2: "sse" }

/** The tools a server may add to and remove from its list; every server always has `echo`. */
export const DYNAMIC_TOOLS = ["t1", "t2", "t3"] as const

/** A tool that may come and go. */
export type Dynamic = (typeof DYNAMIC_TOOLS)[number]

/** A tool of a server: `block` answers only once the server went away (a call in flight during a crash). */
export type ToolName = "echo" | "block" | Dynamic

/** The log levels a sequence asks servers for. */
export const LOG_LEVELS = ["debug", "warning", "error"] as const

/** A log level a sequence asks for. */
export type LogLevel = (typeof LOG_LEVELS)[number]

/** The tool timeouts a sequence gives servers: long enough never to cut a call here. */
export const TOOL_TIMEOUTS = ["1 minute", "2 minutes"] as const

/** A tool timeout a sequence gives. */
export type ToolTimeout = (typeof TOOL_TIMEOUTS)[number]

/** What a sequence does, one step at a time: plain data, printed as a counterexample. */
export type Command =
  /** `connectMcpServer` of a server (asking it for a log level, giving it a tool timeout). */
  | {
    readonly kind: "connect"
    readonly server: Index
    readonly logLevel?: LogLevel
    readonly toolTimeout?: ToolTimeout
  }
  /** Two `connectMcpServer`s of one server at once. */
  | { readonly kind: "connectTwice"; readonly server: Index }
  /** `connectMcpServer` of a URL nothing listens on. */
  | { readonly kind: "connectDead" }
  /** `disconnectMcpServer` of a server (or of the dead URL). */
  | { readonly kind: "disconnect"; readonly server: Index | "dead" }
  /** `connectMcpServer` forked, then `disconnectMcpServer` once the server heard from it. */
  | { readonly kind: "disconnectWhileConnecting"; readonly server: Index }
  /**
   * `connectMcpServer` forked; the server crashes once it received `after` requests of it (the
   * handshake's, the event stream's, the listing's), and comes back at once with `restart`; then
   * the connect is awaited.
   */
  | {
    readonly kind: "killWhileConnecting"
    readonly server: Index
    readonly after: number
    readonly restart: boolean
  }
  /**
   * The executor calls the server's `block` (when connected); the server crashes while it runs
   * (and comes back at once with `restart`).
   */
  | { readonly kind: "crashDuringCall"; readonly server: Index; readonly restart: boolean }
  /** The server goes away (crashes: its sockets are destroyed, nothing is said). */
  | { readonly kind: "kill"; readonly server: Index }
  /** A server that went away comes back on the same port, with no sessions. */
  | { readonly kind: "restart"; readonly server: Index }
  /** The server crashes and comes back at once: its sessions are gone. */
  | { readonly kind: "bounce"; readonly server: Index }
  /**
   * The server forgets its sessions (it restarted behind a proxy): it answers 404 to their
   * requests. With `keepStreams` their event streams stay open, so the client learns of it only
   * at its next request; otherwise the sessions are closed, and their streams end.
   */
  | { readonly kind: "forget"; readonly server: Index; readonly keepStreams: boolean }
  /** The server's dynamic tools become `tools` (it says `tools/list_changed` to its sessions). */
  | { readonly kind: "setTools"; readonly server: Index; readonly tools: ReadonlyArray<Dynamic> }
  /** The executor calls the name a tool of the server has (or would have), as a run does. */
  | { readonly kind: "call"; readonly server: Index; readonly tool: ToolName }
  /** `echo` through the `client` handle of the server's last connection (stale or not). */
  | { readonly kind: "callHandle"; readonly server: Index }
  /** `setMcpLogLevel` of the server's connection (of a key no connection has, without one). */
  | { readonly kind: "setLogLevel"; readonly server: Index; readonly level: LogLevel }
  /**
   * `updateMcpServerHandlers` of the server's connection (its own elicitation handler replaced),
   * alone or at once with a `disconnectMcpServer` of it.
   */
  | { readonly kind: "updateHandlers"; readonly server: Index; readonly disconnecting: boolean }
  /**
   * The elicitation handler replaced through the `client` handle of the server's last connection
   * (stale or not): on its own session only.
   */
  | { readonly kind: "updateHandle"; readonly server: Index }

const index: FastCheck.Arbitrary<Index> = FastCheck.constantFrom(0, 1, 2)

const logLevel: FastCheck.Arbitrary<LogLevel> = FastCheck.constantFrom(...LOG_LEVELS)

/** The commands, the common ones more often. */
export const commandArbitrary: FastCheck.Arbitrary<Command> = FastCheck.oneof(
  { weight: 4, arbitrary: FastCheck.record({ kind: FastCheck.constant("connect" as const), server: index }) },
  {
    weight: 1,
    arbitrary: FastCheck.record({ kind: FastCheck.constant("connect" as const), server: index, logLevel })
  },
  {
    weight: 1,
    arbitrary: FastCheck.record({
      kind: FastCheck.constant("connect" as const),
      server: index,
      toolTimeout: FastCheck.constantFrom(...TOOL_TIMEOUTS)
    })
  },
  { weight: 1, arbitrary: FastCheck.record({ kind: FastCheck.constant("connectTwice" as const), server: index }) },
  { weight: 1, arbitrary: FastCheck.record({ kind: FastCheck.constant("connectDead" as const) }) },
  {
    weight: 2,
    arbitrary: FastCheck.record({
      kind: FastCheck.constant("disconnect" as const),
      server: FastCheck.oneof({ weight: 5, arbitrary: index }, { weight: 1, arbitrary: FastCheck.constant("dead" as const) })
    })
  },
  { weight: 1, arbitrary: FastCheck.record({ kind: FastCheck.constant("disconnectWhileConnecting" as const), server: index }) },
  {
    weight: 1,
    arbitrary: FastCheck.record({
      kind: FastCheck.constant("killWhileConnecting" as const),
      server: index,
      after: FastCheck.integer({ min: 1, max: 4 }),
      restart: FastCheck.boolean()
    })
  },
  {
    weight: 1,
    arbitrary: FastCheck.record({
      kind: FastCheck.constant("crashDuringCall" as const),
      server: index,
      restart: FastCheck.boolean()
    })
  },
  { weight: 2, arbitrary: FastCheck.record({ kind: FastCheck.constant("kill" as const), server: index }) },
  { weight: 2, arbitrary: FastCheck.record({ kind: FastCheck.constant("restart" as const), server: index }) },
  { weight: 1, arbitrary: FastCheck.record({ kind: FastCheck.constant("bounce" as const), server: index }) },
  {
    weight: 2,
    arbitrary: FastCheck.record({
      kind: FastCheck.constant("forget" as const),
      server: index,
      keepStreams: FastCheck.boolean()
    })
  },
  {
    weight: 2,
    arbitrary: FastCheck.record({
      kind: FastCheck.constant("setTools" as const),
      server: index,
      tools: FastCheck.subarray([...DYNAMIC_TOOLS])
    })
  },
  {
    weight: 3,
    arbitrary: FastCheck.record({
      kind: FastCheck.constant("call" as const),
      server: index,
      tool: FastCheck.constantFrom<ToolName>("echo", ...DYNAMIC_TOOLS)
    })
  },
  { weight: 1, arbitrary: FastCheck.record({ kind: FastCheck.constant("callHandle" as const), server: index }) },
  {
    weight: 1,
    arbitrary: FastCheck.record({ kind: FastCheck.constant("setLogLevel" as const), server: index, level: logLevel })
  },
  {
    weight: 1,
    arbitrary: FastCheck.record({
      kind: FastCheck.constant("updateHandlers" as const),
      server: index,
      disconnecting: FastCheck.boolean()
    })
  },
  { weight: 1, arbitrary: FastCheck.record({ kind: FastCheck.constant("updateHandle" as const), server: index }) }
)

/**
 * A sequence: its commands, and whether the servers are given server keys (`s0`, `s1`, `s2`,
 * `dead`) or get the ones derived from their URLs (all `mcp`: `mcp`, `mcp-2`, ... by who came first).
 */
export interface Sequence {
  readonly derivedKeys: boolean
  readonly commands: ReadonlyArray<Command>
}

/** Sequences of commands. */
export const sequenceArbitrary = (maxCommands: number): FastCheck.Arbitrary<Sequence> =>
  FastCheck.record({
    derivedKeys: FastCheck.boolean(),
    commands: FastCheck.array(commandArbitrary, { minLength: 1, maxLength: maxCommands })
  })

// ---------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------

type Target = Index | "dead"

/** A connection as the model has it; `epoch` names its session (a new one on each (re)connection). */
interface ModelConnection {
  status: "connected" | "reconnecting" | "failed"
  epoch: number
  /** The level its server's sessions are to be asked for; none until one is asked for. */
  level?: LogLevel
  /** The tool timeout its server was given: its tools are then not bounded by the run's. */
  toolTimeout?: ToolTimeout
  /**
   * Its session was forgotten by its server, whose event stream stayed open: the client knows
   * nothing of it until its next request, and keeps the tools it had then (these).
   */
  forgotten?: ReadonlyArray<Dynamic>
}

/** What the service and the servers must show once a command settled. */
interface Model {
  readonly derivedKeys: boolean
  /** The server key of each connection. */
  readonly keys: Map<Target, string>
  readonly up: Record<Index, boolean>
  readonly tools: Record<Index, ReadonlyArray<Dynamic>>
  readonly connections: Map<Target, ModelConnection>
  /** The epoch of the session each kept `client` handle belongs to. */
  readonly handles: Map<Index, number>
  epochs: number
}

const initialModel = (derivedKeys: boolean): Model => ({
  derivedKeys,
  keys: new Map(),
  up: { 0: true, 1: true, 2: true },
  tools: { 0: [], 1: [], 2: [] },
  connections: new Map(),
  handles: new Map(),
  epochs: 0
})

/** The server key a target is given when keys are not derived. */
const givenKey = (target: Target) => (target === "dead" ? "dead" : `s${target}`)

const serverKeyOf = (model: Model, target: Target) => model.keys.get(target) ?? givenKey(target)

/** A new connection's server key: the given one, or the first of `mcp`, `mcp-2`, ... no other connection has. */
const assignKey = (model: Model, target: Target) => {
  if (!model.derivedKeys) return void model.keys.set(target, givenKey(target))
  const taken = new Set(
    Array.from(model.connections.keys()).flatMap((other) => (other === target ? [] : [serverKeyOf(model, other)]))
  )
  let key = "mcp"
  for (let n = 2; taken.has(key); n++) key = `mcp-${n}`
  model.keys.set(target, key)
}

const connectedServers = (model: Model): ReadonlyArray<Index> =>
  INDICES.filter((i) => model.connections.get(i)?.status === "connected")

const toolsOf = (model: Model, i: Index): ReadonlyArray<ToolName> => [
  "echo",
  "block",
  ...(model.connections.get(i)?.forgotten ?? model.tools[i])
]

/** The connection's next request finds its session forgotten: it is reconnected, on a new session. */
const renewForgotten = (model: Model, i: Index) => {
  const connection = model.connections.get(i)
  if (connection?.forgotten === undefined) return
  delete connection.forgotten
  connection.epoch = newEpoch(model)
}

/** The name a tool of a connected server is registered under: prefixed while several are connected. */
const registeredName = (model: Model, prefixed: boolean, i: Index, tool: ToolName) =>
  prefixed ? `${serverKeyOf(model, i)}__${tool}` : tool

/** Every registered name, and the server and tool it calls. */
const expectedRegistry = (model: Model): ReadonlyMap<string, { readonly server: Index; readonly tool: ToolName }> => {
  const connected = connectedServers(model)
  const names = new Map<string, { readonly server: Index; readonly tool: ToolName }>()
  for (const i of connected) {
    for (const tool of toolsOf(model, i)) names.set(registeredName(model, connected.length > 1, i, tool), { server: i, tool })
  }
  return names
}

/** A new session: a (re)connection. */
const newEpoch = (model: Model) => ++model.epochs

/** The server goes away: its connection is being reconnected. */
const killModel = (model: Model, i: Index) => {
  const connection = model.connections.get(i)
  if (connection?.status === "connected") connection.status = "reconnecting"
  if (connection !== undefined) delete connection.forgotten
  model.up[i] = false
}

/** The server is back: its connection is reconnected, on a new session. */
const restartModel = (model: Model, i: Index) => {
  const connection = model.connections.get(i)
  if (!model.up[i] && connection?.status === "reconnecting") {
    connection.status = "connected"
    connection.epoch = newEpoch(model)
  }
  model.up[i] = true
}

// ---------------------------------------------------------------------------
// The servers the commands act on
// ---------------------------------------------------------------------------

/** One MCP session on a server, with the handles of its dynamic tools and the log level it was asked for last. */
interface LiveSession {
  readonly server: McpServer
  readonly dynamic: Map<Dynamic, RegisteredTool>
  level: string | undefined
}

/** A real MCP server that the sequence starts, stops, and changes the tools of. */
interface Controlled {
  readonly index: Index
  readonly inner: TestMcpServer
  /** How to reach it, without a server key. */
  readonly info: Mcp.McpServerInfo
  /** The sessions open on it now (a crash abandons those it had). */
  readonly live: Set<LiveSession>
  tools: ReadonlyArray<Dynamic>
  up: boolean
  /** Calls of `block` received so far. */
  blocked: number
  /** How often `echo` ran, by the message it was given (each call gives its own). */
  readonly echoed: Map<string, number>
}

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] })

const registerDynamic = (index: Index, server: McpServer, tool: Dynamic) =>
  server.registerTool(tool, { description: `The tool ${tool}`, inputSchema: {} }, async () => text(`s${index}:${tool}`))

const startControlled = async (index: Index): Promise<Controlled> => {
  const state: { controlled: Controlled | undefined } = { controlled: undefined }
  const setup = (server: McpServer) => {
    const controlled = state.controlled!
    server.registerTool(
      "echo",
      { description: "Echoes a message", inputSchema: { message: z.string() } },
      async ({ message }) => {
        controlled.echoed.set(message, (controlled.echoed.get(message) ?? 0) + 1)
        return text(`s${index}:echo:${message}`)
      }
    )
    server.registerTool("block", { description: "Answers once the server went away", inputSchema: {} }, () => {
      controlled.blocked++
      return new Promise<never>(() => {})
    })
    const session: LiveSession = { server, dynamic: new Map(), level: undefined }
    server.server.registerCapabilities({ logging: {} })
    server.server.setRequestHandler(SetLevelRequestSchema, async (request) => {
      session.level = request.params.level
      return {}
    })
    for (const tool of controlled.tools) session.dynamic.set(tool, registerDynamic(index, server, tool))
    controlled.live.add(session)
    server.server.onclose = () => void controlled.live.delete(session)
  }
  const transport = TRANSPORTS[index]
  // `setup` runs per session, once the server is listening: `state` is set by then.
  const inner = await startMcpServer({ transport, name: `s${index}`, setup: (server) => setup(server) })
  const controlled: Controlled = {
    index,
    inner,
    info: { url: inner.url, transport },
    live: new Set(),
    tools: [],
    up: true,
    blocked: 0,
    echoed: new Map()
  }
  state.controlled = controlled
  return controlled
}

const killServer = async (controlled: Controlled) => {
  if (!controlled.up) return
  controlled.up = false
  // What it had is gone with it: the client cannot end those sessions.
  controlled.live.clear()
  await controlled.inner.kill()
}

/** The server forgets its sessions (see the `forget` command); nothing while it is down. */
const forgetSessions = async (controlled: Controlled, keepStreams: boolean) => {
  if (!controlled.up) return
  controlled.live.clear()
  await controlled.inner.forget({ keepStreams })
}

const restartServer = async (controlled: Controlled) => {
  if (controlled.up) return
  await controlled.inner.restart()
  controlled.up = true
}

/** The server's dynamic tools become `tools`; each open session tells its client (`tools/list_changed`). */
const setServerTools = (controlled: Controlled, tools: ReadonlyArray<Dynamic>) => {
  controlled.tools = DYNAMIC_TOOLS.filter((tool) => tools.includes(tool))
  for (const session of controlled.live) {
    for (const [tool, registered] of session.dynamic) {
      if (!tools.includes(tool)) {
        registered.remove()
        session.dynamic.delete(tool)
      }
    }
    for (const tool of controlled.tools) {
      if (!session.dynamic.has(tool)) session.dynamic.set(tool, registerDynamic(controlled.index, session.server, tool))
    }
  }
}

// ---------------------------------------------------------------------------
// Invariants
// ---------------------------------------------------------------------------

/** What a sequence checks, by name. */
export type Invariant =
  /** A command ends (no hang) and without a defect. */
  | "command-settles"
  /** A command's own result is what the model says (a connection, a tool's answer, a typed error). */
  | "command-outcome"
  /** The registry holds exactly the tools of the connected servers, under the names they get. */
  | "registry-matches"
  /** `getMcpClients`: the connections the model has, with their status, error, tools, client and log level. */
  | "connections-match"
  /** A server that is up has one session per connection to it, and no other. */
  | "sessions-match"
  /** A server ran each call it was sent at most once (a request sent again after a 404 was not taken before). */
  | "runs-at-most-once"
  /** A connected server's session was asked for the log level its connection has (none if it has none). */
  | "log-level-matches"
  /** Once the layer's scope closed, no session and no request (an event stream) is left open on any server. */
  | "no-session-left"
  /** Once the layer and the servers closed, no socket or timer of the sequence is left open. */
  | "no-open-handles"

/** Every invariant. */
export const INVARIANTS: ReadonlyArray<Invariant> = [
  "command-settles",
  "command-outcome",
  "registry-matches",
  "connections-match",
  "sessions-match",
  "runs-at-most-once",
  "log-level-matches",
  "no-session-left",
  "no-open-handles"
]

/** An invariant that did not hold, named, with where and what. */
export class InvariantError extends Error {
  constructor(readonly invariant: Invariant, readonly detail: string) {
    super(`invariant "${invariant}" failed: ${detail}`)
  }
}

interface Discrepancy {
  readonly invariant: Invariant
  readonly detail: string
}

/** How long a settling state is polled for, and how long a command may take (liveness bounds). */
const SETTLE_WITHIN = Duration.seconds(4)
const COMMAND_WITHIN = Duration.seconds(10)

// ---------------------------------------------------------------------------
// Playing a sequence
// ---------------------------------------------------------------------------

interface World {
  readonly mcp: Mcp.Mcp.Service
  readonly registry: ToolRegistry.ToolRegistry.Service
  readonly executor: ToolExecutor.ToolExecutor.Service
  readonly servers: Readonly<Record<Index, Controlled>>
  readonly dead: Mcp.McpServerInfo
  readonly handles: Map<Index, Mcp.McpClientHandle>
  readonly checking: ReadonlySet<Invariant>
  readonly derivedKeys: boolean
  calls: number
}

/** The server as `connectMcpServer` is given it: with its given server key, unless keys are derived. */
const infoOf = (world: World, target: Target): Mcp.McpServerInfo => {
  const info = target === "dead" ? world.dead : world.servers[target].info
  return world.derivedKeys ? info : { ...info, serverKey: givenKey(target) }
}

const keyOf = (world: World, target: Target) => Mcp.uniqueKey(infoOf(world, target))

const failWith = (invariant: Invariant, detail: string) => Effect.die(new InvariantError(invariant, detail))

/** Fails the sequence when `invariant` is checked and `ok` is false. */
const expectThat = (world: World, invariant: Invariant, ok: boolean, detail: () => string): Effect.Effect<void> =>
  ok || !world.checking.has(invariant) ? Effect.void : failWith(invariant, detail())

/** The command's effect within its liveness bound; a defect or a hang is a `command-settles` failure. */
const settles = <A, E>(world: World, command: Command, self: Effect.Effect<A, E>): Effect.Effect<Exit.Exit<A, E>> =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(self).pipe(Effect.timeoutOption(COMMAND_WITHIN))
    if (exit._tag === "None") {
      yield* expectThat(world, "command-settles", false, () => `${JSON.stringify(command)} did not end`)
      return yield* Effect.die(new Error("a command did not end"))
    }
    const value = exit.value
    if (Exit.isFailure(value) && Cause.isDie(value.cause)) {
      yield* expectThat(world, "command-settles", false, () => `${JSON.stringify(command)} died: ${Cause.pretty(value.cause)}`)
    }
    return value
  })

const errorOf = <A>(exit: Exit.Exit<A, McpError>): McpError | undefined =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined

/** What `connectMcpServer` of a server must answer, by the model before the command. */
const expectedConnect = (model: Model, i: Index): "connected" | "reconnecting" | "Connect" => {
  const status = model.connections.get(i)?.status
  if (status === "connected" || status === "reconnecting") return status
  return model.up[i] ? "connected" : "Connect"
}

/** Applies a connect of `i` (asking for `level`, giving `toolTimeout`) to the model. */
const connectModel = (model: Model, i: Index, level?: LogLevel, toolTimeout?: ToolTimeout) => {
  const expected = expectedConnect(model, i)
  const status = model.connections.get(i)?.status
  if (status === undefined || status === "failed") {
    // A new connection, with a key of its own.
    assignKey(model, i)
    model.connections.set(i, expected === "Connect" ? { status: "failed", epoch: -1 } : { status: "connected", epoch: newEpoch(model) })
  }
  const connection = model.connections.get(i)!
  if (level !== undefined && connection.status !== "failed") connection.level = level
  // A new connection takes what its connect gives; a known one, what a later connect gives.
  if (toolTimeout !== undefined && connection.status !== "failed") connection.toolTimeout = toolTimeout
  return expected
}

const checkConnectOutcome = (
  world: World,
  command: Command,
  exit: Exit.Exit<Mcp.McpConnection, McpError>,
  key: string,
  expected: "connected" | "reconnecting" | "Connect"
) => {
  const describe = () =>
    `${JSON.stringify(command)}: the model says ${expected}, it ended ${
      Exit.isSuccess(exit) ? `with status ${exit.value.status}` : `with ${exit.cause.toString()}`
    }`
  if (expected === "Connect") return expectThat(world, "command-outcome", errorOf(exit)?.reason === "Connect", describe)
  return expectThat(
    world,
    "command-outcome",
    Exit.isSuccess(exit) && exit.value.status === expected && exit.value.key === key &&
      (expected === "connected") === (exit.value.client !== undefined),
    describe
  )
}

/** Keeps the handle a connect gave, with the epoch of its session. */
const keepHandle = (world: World, model: Model, i: Index, exit: Exit.Exit<Mcp.McpConnection, McpError>) => {
  if (!Exit.isSuccess(exit) || exit.value.client === undefined) return
  world.handles.set(i, exit.value.client)
  model.handles.set(i, model.connections.get(i)?.epoch ?? -1)
}

/**
 * Waits until the server has received `count` requests more than `before`, is down, or the
 * attempt ended (a connection already made asks nothing).
 */
const heardFrom = (controlled: Controlled, before: number, count: number, attempt: Fiber.Fiber<unknown, unknown>) =>
  Effect.race(
    Effect.gen(function*() {
      while (controlled.up && controlled.inner.requests.length < before + count) yield* Effect.sleep("1 millis")
    }),
    Effect.asVoid(Fiber.await(attempt))
  )

/** An elicitation handler that declines. */
const declines: Mcp.ElicitationHandler = () => ({ action: "decline" })

/** Plays one command and checks its own outcome; updates the model. */
const play = (world: World, model: Model, command: Command): Effect.Effect<void> =>
  Effect.gen(function*() {
    switch (command.kind) {
      case "connect": {
        const i = command.server
        const prior = model.connections.get(i)
        // A new level is sent on the session at once: a forgotten one is found so, and renewed.
        const renews = prior?.forgotten !== undefined && command.logLevel !== undefined && prior.level !== command.logLevel
        const expected = connectModel(model, i, command.logLevel, command.toolTimeout)
        const info = {
          ...infoOf(world, i),
          ...(command.logLevel === undefined ? {} : { logLevel: command.logLevel }),
          ...(command.toolTimeout === undefined ? {} : { toolTimeout: command.toolTimeout })
        }
        const exit = yield* settles(world, command, world.mcp.connectMcpServer(info))
        // The background request that finds the session forgotten may come first.
        const renewing = renews && Exit.isSuccess(exit) && exit.value.status === "reconnecting"
        yield* checkConnectOutcome(world, command, exit, keyOf(world, i), renewing ? "reconnecting" : expected)
        keepHandle(world, model, i, exit)
        if (renews) renewForgotten(model, i)
        return
      }
      case "connectTwice": {
        const i = command.server
        const expected = connectModel(model, i)
        const info = infoOf(world, i)
        const both = Effect.all([world.mcp.connectMcpServer(info), world.mcp.connectMcpServer({ ...info })], {
          concurrency: "unbounded",
          mode: "either"
        })
        const exit = yield* settles(world, command, both)
        if (Exit.isFailure(exit)) return
        for (const either of exit.value) {
          const one = either._tag === "Right" ? Exit.succeed(either.right) : Exit.fail(either.left)
          yield* checkConnectOutcome(world, command, one, keyOf(world, i), expected)
          keepHandle(world, model, i, one)
        }
        return
      }
      case "connectDead": {
        assignKey(model, "dead")
        model.connections.set("dead", { status: "failed", epoch: -1 })
        const exit = yield* settles(world, command, world.mcp.connectMcpServer(infoOf(world, "dead")))
        return yield* expectThat(
          world,
          "command-outcome",
          errorOf(exit)?.reason === "Connect",
          () => `connecting a URL nothing listens on ended ${Exit.isSuccess(exit) ? "connected" : exit.cause.toString()}`
        )
      }
      case "disconnect": {
        model.connections.delete(command.server)
        yield* settles(world, command, world.mcp.disconnectMcpServer(keyOf(world, command.server)))
        return
      }
      case "disconnectWhileConnecting": {
        const i = command.server
        model.connections.delete(i)
        const controlled = world.servers[i]
        const before = controlled.inner.requests.length
        const attempt = yield* Effect.fork(world.mcp.connectMcpServer(infoOf(world, i)))
        yield* heardFrom(controlled, before, 1, attempt)
        yield* settles(world, command, world.mcp.disconnectMcpServer(infoOf(world, i)))
        const exit = yield* settles(world, command, Fiber.join(attempt))
        // The attempt may have won the race; either way it ends, with a connection or a typed error.
        const reason = errorOf(exit)?.reason
        yield* expectThat(
          world,
          "command-outcome",
          Exit.isSuccess(exit) || reason === "Disconnected" || reason === "Connect",
          () => `a connect interrupted by a disconnect ended with ${Exit.isFailure(exit) ? exit.cause.toString() : ""}`
        )
        if (Exit.isSuccess(exit) && exit.value.client !== undefined) {
          // A handle of a connection closed since: it must refuse.
          world.handles.set(i, exit.value.client)
          model.handles.set(i, -1)
        }
        return
      }
      case "killWhileConnecting": {
        const i = command.server
        const prior = model.connections.get(i)
        if (prior === undefined || prior.status === "failed") assignKey(model, i)
        const controlled = world.servers[i]
        const before = controlled.inner.requests.length
        const attempt = yield* Effect.fork(world.mcp.connectMcpServer(infoOf(world, i)))
        yield* heardFrom(controlled, before, command.after, attempt)
        yield* settles(world, command, Effect.promise(() => killServer(controlled)))
        if (command.restart) yield* settles(world, command, Effect.promise(() => restartServer(controlled)))
        const exit = yield* settles(world, command, Fiber.join(attempt))
        const reason = errorOf(exit)?.reason
        yield* expectThat(
          world,
          "command-outcome",
          Exit.isSuccess(exit) || reason === "Connect",
          () => `a connect during a crash ended with ${Exit.isFailure(exit) ? exit.cause.toString() : ""}`
        )
        // Whether the handshake was done when the server went decides the outcome; the model
        // follows it, then says where the connection must settle.
        model.up[i] = command.restart
        if (prior?.status === "connected" || prior?.status === "reconnecting" || Exit.isSuccess(exit)) {
          const connection = prior?.status === "connected" || prior?.status === "reconnecting"
            ? prior
            : { status: "connected" as const, epoch: -1 }
          connection.status = command.restart ? "connected" : "reconnecting"
          connection.epoch = newEpoch(model)
          delete (connection as ModelConnection).forgotten
          model.connections.set(i, connection)
        } else {
          model.connections.set(i, { status: "failed", epoch: -1 })
        }
        return
      }
      case "crashDuringCall": {
        const i = command.server
        const controlled = world.servers[i]
        const connected = connectedServers(model)
        const call = connected.includes(i)
          ? Option.some(registeredName(model, connected.length > 1, i, "block"))
          : Option.none()
        killModel(model, i)
        if (command.restart) restartModel(model, i)
        const crash = Effect.promise(() =>
          killServer(controlled).then(() => (command.restart ? restartServer(controlled) : undefined))
        )
        if (Option.isNone(call)) return yield* settles(world, command, crash)
        const n = ++world.calls
        const before = controlled.blocked
        const running = yield* Effect.fork(
          world.executor.execute([{ toolCallId: `call_${n}`, toolName: call.value, args: {} }])
        )
        yield* Effect.race(
          Effect.gen(function*() {
            while (controlled.blocked === before) yield* Effect.sleep("1 millis")
          }),
          Effect.asVoid(Fiber.await(running))
        )
        yield* settles(world, command, crash)
        const exit = yield* settles(world, command, Fiber.join(running))
        const result = Exit.isSuccess(exit) ? exit.value[0] : undefined
        return yield* expectThat(
          world,
          "command-outcome",
          result?.isError === true,
          () => `a call of "${call.value}" in flight when its server crashed ended with ${JSON.stringify(result)}`
        )
      }
      case "kill": {
        const i = command.server
        killModel(model, i)
        yield* settles(world, command, Effect.promise(() => killServer(world.servers[i])))
        return
      }
      case "restart": {
        const i = command.server
        restartModel(model, i)
        yield* settles(world, command, Effect.promise(() => restartServer(world.servers[i])))
        return
      }
      case "bounce": {
        const i = command.server
        const connection = model.connections.get(i)
        if (connection !== undefined && connection.status !== "failed") {
          connection.status = "connected"
          connection.epoch = newEpoch(model)
          delete connection.forgotten
        }
        model.up[i] = true
        const controlled = world.servers[i]
        yield* settles(world, command, Effect.promise(() => killServer(controlled).then(() => restartServer(controlled))))
        return
      }
      case "forget": {
        const i = command.server
        const controlled = world.servers[i]
        const connection = model.connections.get(i)
        // A session forgotten before (its stream kept) is not the server's to close any more.
        if (controlled.up && connection?.status === "connected" && connection.forgotten === undefined) {
          if (command.keepStreams) connection.forgotten = model.tools[i]
          else connection.epoch = newEpoch(model)
        }
        yield* settles(world, command, Effect.promise(() => forgetSessions(controlled, command.keepStreams)))
        return
      }
      case "setTools": {
        model.tools[command.server] = DYNAMIC_TOOLS.filter((tool) => command.tools.includes(tool))
        setServerTools(world.servers[command.server], command.tools)
        return
      }
      case "call": {
        const n = ++world.calls
        const connected = connectedServers(model)
        const prefixed = new Set([...connected, command.server]).size > 1
        const name = registeredName(model, prefixed, command.server, command.tool)
        const target = expectedRegistry(model).get(name)
        const call = {
          toolCallId: `call_${n}`,
          toolName: name,
          args: command.tool === "echo" ? { message: `m${n}` } : {}
        }
        const exit = yield* settles(world, command, world.executor.execute([call]))
        // A call on a forgotten session: sent again on the next one (Streamable HTTP), to the
        // tools the server has now; over HTTP+SSE, it fails. Either way the session is renewed.
        const forgotten = target !== undefined && model.connections.get(target.server)?.forgotten !== undefined
        const answered = target !== undefined &&
          (!forgotten ||
            (TRANSPORTS[target.server] === "http" &&
              (target.tool === "echo" || target.tool === "block" || model.tools[target.server].includes(target.tool))))
        if (target !== undefined) renewForgotten(model, target.server)
        if (Exit.isFailure(exit)) return
        const result = exit.value[0]
        const answer = result?.content.map((part) => (part.type === "text" ? part.text : "")).join("")
        const expected = target === undefined || !answered
          ? undefined
          : target.tool === "echo"
          ? `s${target.server}:echo:m${n}`
          : `s${target.server}:${target.tool}`
        return yield* expectThat(
          world,
          "command-outcome",
          expected === undefined ? result?.isError === true : result?.isError !== true && answer === expected,
          () =>
            `calling "${name}": the model says ${expected === undefined ? "an error result" : JSON.stringify(expected)}, ` +
            `got ${JSON.stringify(result)}`
        )
      }
      case "callHandle": {
        const i = command.server
        const handle = world.handles.get(i)
        if (handle === undefined) return
        const n = ++world.calls
        const connection = model.connections.get(i)
        const valid = connection?.status === "connected" && connection.epoch === model.handles.get(i)
        // On a forgotten session: sent again on the next (Streamable HTTP), or `Disconnected`.
        const answers = valid && (connection.forgotten === undefined || TRANSPORTS[i] === "http")
        if (valid) renewForgotten(model, i)
        const exit = yield* settles(world, command, handle.callTool("echo", { message: `m${n}` }))
        const answer = Exit.isSuccess(exit)
          ? exit.value.content.map((block) => ("text" in block ? block.text : "")).join("")
          : undefined
        const reason = errorOf(exit)?.reason
        return yield* expectThat(
          world,
          "command-outcome",
          answers ? answer === `s${i}:echo:m${n}` : reason === "NotConnected" || reason === "Disconnected",
          () =>
            `calling echo through the handle of server ${i}: the model says ${answers ? "an answer" : "an McpError"}, got ${
              Exit.isSuccess(exit) ? JSON.stringify(exit.value) : exit.cause.toString()
            }`
        )
      }
      case "setLogLevel": {
        const connection = model.connections.get(command.server)
        const serverKey = connection === undefined ? "nobody" : serverKeyOf(model, command.server)
        const kept = connection !== undefined && connection.status !== "failed"
        if (kept) connection.level = command.level
        // Sent on a forgotten session: once more on the next (Streamable HTTP), or `Disconnected`.
        const refused = kept && connection.forgotten !== undefined && TRANSPORTS[command.server] === "sse"
        if (kept && connection.status === "connected") renewForgotten(model, command.server)
        const exit = yield* settles(world, command, world.mcp.setMcpLogLevel(serverKey, command.level))
        return yield* expectThat(
          world,
          "command-outcome",
          refused ? errorOf(exit)?.reason === "Disconnected" : kept ? Exit.isSuccess(exit) : errorOf(exit)?.reason === "NotConnected",
          () =>
            `setting the log level of ${serverKey}: the model says ${refused ? "Disconnected" : kept ? "done" : "NotConnected"}, got ${
              Exit.isSuccess(exit) ? "done" : exit.cause.toString()
            }`
        )
      }
      case "updateHandle": {
        const i = command.server
        const handle = world.handles.get(i)
        if (handle === undefined) return
        const connection = model.connections.get(i)
        const valid = connection?.status === "connected" && connection.epoch === model.handles.get(i)
        const mine: Mcp.ElicitationHandler = () => ({ action: "decline" })
        const exit = yield* settles(world, command, handle.updateHandlers((handlers) => ({ ...handlers, elicitation: mine })))
        const now = (yield* world.mcp.getMcpClients)[keyOf(world, i)]?.server.handlers?.elicitation
        return yield* expectThat(
          world,
          "command-outcome",
          valid ? Exit.isSuccess(exit) && now === mine : errorOf(exit)?.reason === "NotConnected" && now !== mine,
          () =>
            `replacing a handler through the handle of server ${i}: the model says ${valid ? "replaced" : "NotConnected, left as it was"}, got ${
              Exit.isSuccess(exit) ? "done" : exit.cause.toString()
            }, ${now === mine ? "replaced" : "not replaced"}`
        )
      }
      case "updateHandlers": {
        const key = keyOf(world, command.server)
        // Never starts a connection: one disconnected at the same time stays disconnected.
        const update = world.mcp.updateMcpServerHandlers(key, (handlers) => ({ ...handlers, elicitation: declines }))
        if (!command.disconnecting) return yield* Effect.asVoid(settles(world, command, update))
        model.connections.delete(command.server)
        const both = Effect.all([world.mcp.disconnectMcpServer(key), update], { concurrency: "unbounded", discard: true })
        return yield* Effect.asVoid(settles(world, command, both))
      }
    }
  })

/** Where the service and the servers differ from the model now. */
const discrepancies = (world: World, model: Model): Effect.Effect<ReadonlyArray<Discrepancy>> =>
  Effect.gen(function*() {
    const found: Array<Discrepancy> = []
    const differ = (invariant: Invariant, detail: string) => {
      if (world.checking.has(invariant)) found.push({ invariant, detail })
    }
    const registry = expectedRegistry(model)

    const listed = yield* world.registry.list
    const names = listed.map((tool) => tool.name).sort()
    const expectedNames = Array.from(registry.keys()).sort()
    if (JSON.stringify(names) !== JSON.stringify(expectedNames)) {
      differ("registry-matches", `the registry holds ${JSON.stringify(names)}, the model says ${JSON.stringify(expectedNames)}`)
    }
    // A server given a tool timeout bounds its tools' calls itself: the run's timeout does not apply to them.
    for (const tool of listed) {
      const owner = registry.get(tool.name)
      if (owner === undefined) continue
      const bounded = model.connections.get(owner.server)?.toolTimeout !== undefined
      if ((tool.timeout !== undefined && Duration.equals(tool.timeout, Duration.infinity)) !== bounded) {
        differ(
          "registry-matches",
          `${tool.name} has the timeout ${tool.timeout === undefined ? "none" : Duration.format(tool.timeout)}, ` +
            `the model says its server ${bounded ? "bounds it" : "does not bound it"}`
        )
      }
    }

    const clients = yield* world.mcp.getMcpClients
    const expectedKeys = new Map(Array.from(model.connections.keys(), (target) => [keyOf(world, target), target] as const))
    for (const key of Object.keys(clients)) {
      if (!expectedKeys.has(key)) differ("connections-match", `${key} is known, the model has no such connection`)
    }
    for (const [key, target] of expectedKeys) {
      const expected = model.connections.get(target)!
      const actual = clients[key]
      if (actual === undefined) {
        differ("connections-match", `${serverKeyOf(model, target)} is not known, the model says ${expected.status}`)
        continue
      }
      const what = `${serverKeyOf(model, target)} (the model says ${expected.status})`
      if (actual.status !== expected.status) differ("connections-match", `${what} is ${actual.status}`)
      if (actual.serverKey !== serverKeyOf(model, target)) differ("connections-match", `${what} has the server key ${actual.serverKey}`)
      if (expected.status !== "failed" && actual.logLevel !== expected.level) {
        differ("connections-match", `${what} shows the log level ${actual.logLevel}, the model says ${expected.level}`)
      }
      if (expected.status !== "failed" && actual.server.toolTimeout !== expected.toolTimeout) {
        differ(
          "connections-match",
          `${what} shows the tool timeout ${String(actual.server.toolTimeout)}, the model says ${expected.toolTimeout}`
        )
      }
      if ((actual.client !== undefined) !== (expected.status === "connected")) {
        differ("connections-match", `${what} ${actual.client === undefined ? "has no" : "has a"} client`)
      }
      if ((actual.error === undefined) !== (expected.status === "connected")) {
        differ("connections-match", `${what} has the error ${actual.error?.message}`)
      }
      if (expected.status === "failed" && actual.error?.reason !== "Connect") {
        differ("connections-match", `${what} failed with ${actual.error?.reason}, not Connect`)
      }
      const tools = actual.tools.map((tool) => `${tool.name}=${tool.registeredName}`).sort()
      const expectedTools = target !== "dead" && expected.status === "connected"
        ? toolsOf(model, target).map((tool) =>
          `${tool}=${registeredName(model, connectedServers(model).length > 1, target, tool)}`
        ).sort()
        : []
      if (JSON.stringify(tools) !== JSON.stringify(expectedTools)) {
        differ("connections-match", `${what} lists ${JSON.stringify(tools)}, the model says ${JSON.stringify(expectedTools)}`)
      }
    }

    for (const i of INDICES) {
      const twice = Array.from(world.servers[i].echoed).filter(([, runs]) => runs > 1)
      if (twice.length > 0) differ("runs-at-most-once", `s${i} ran echo more than once for ${JSON.stringify(twice)}`)
    }
    for (const i of INDICES) {
      const controlled = world.servers[i]
      if (!controlled.up) continue
      const held = model.connections.get(i)
      const expected = held?.status === "connected" && held.forgotten === undefined ? 1 : 0
      if (controlled.live.size !== expected) {
        differ("sessions-match", `s${i} has ${controlled.live.size} open sessions, the model says ${expected}`)
      }
      const connection = model.connections.get(i)
      if (connection?.status === "connected") {
        for (const session of controlled.live) {
          if (session.level !== connection.level) {
            differ("log-level-matches", `s${i}'s session was asked for ${session.level}, the model says ${connection.level}`)
          }
        }
      }
    }
    return found
  })

/** Polls until nothing differs from the model, within a bound; then fails with what still differs. */
const settled = (world: World, model: Model, after: string) =>
  Effect.gen(function*() {
    const deadline = (yield* Clock.currentTimeMillis) + Duration.toMillis(SETTLE_WITHIN)
    while (true) {
      const found = yield* discrepancies(world, model)
      if (found.length === 0) return
      if ((yield* Clock.currentTimeMillis) > deadline) {
        return yield* failWith(found[0]!.invariant, `after ${after}: ${found.map((d) => d.detail).join("; ")}`)
      }
      yield* Effect.sleep("5 millis")
    }
  })

/** The process's open handles, by type. */
const resourceCounts = () => {
  const counts = new Map<string, number>()
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1)
  return counts
}

const excess = (before: ReadonlyMap<string, number>) =>
  Array.from(resourceCounts()).filter(([type, count]) => count > (before.get(type) ?? 0))

/** Polls `done` within the settle bound; whether it came true. */
const eventually = (done: () => boolean) =>
  Effect.gen(function*() {
    const deadline = (yield* Clock.currentTimeMillis) + Duration.toMillis(SETTLE_WITHIN)
    while (!done()) {
      if ((yield* Clock.currentTimeMillis) > deadline) return false
      yield* Effect.sleep("5 millis")
    }
    return true
  })

/** The options of the `Mcp` service of every sequence: a fast reconnect, a short connect timeout. */
export const MCP_OPTIONS: Mcp.MakeOptions = {
  reconnectSchedule: Schedule.spaced("20 millis"),
  connectTimeout: "3 seconds"
}

/**
 * Plays a sequence's commands against a fresh `Mcp` service (over `base`: the registry, transport and auth
 * `Tambo.layer` wires) and fresh servers, checking the invariants (all by default) after every
 * command, then that closing the layer and the servers leaves nothing open. The service's
 * warnings go to the failure's message, not to the console.
 */
export const runSequence = (
  base: Layer.Layer<ToolRegistry.ToolRegistry | TamboTransport | Auth.Auth, unknown>,
  sequence: Sequence,
  invariants: ReadonlyArray<Invariant> = INVARIANTS
): Effect.Effect<void> => {
  const logs: Array<string> = []
  const capture = Logger.make(({ message }) => void logs.push(Array.isArray(message) ? message.join(" ") : String(message)))
  return Effect.gen(function*() {
    const before = resourceCounts()
    const servers = yield* Effect.promise(() => Promise.all(INDICES.map(startControlled)))
    const deadUrl = yield* unusedUrl
    const scope = yield* Scope.make()
    const closeServers = Effect.promise(() => Promise.all(servers.map((server) => server.inner.close())))
    yield* Effect.gen(function*() {
      const layer = Mcp.layerWith(MCP_OPTIONS).pipe(Layer.provideMerge(base))
      const context = yield* Layer.buildWithScope(layer, scope).pipe(Effect.orDie)
      const registry = Context.get(context, ToolRegistry.ToolRegistry)
      const world: World = {
        mcp: Context.get(context, Mcp.Mcp),
        registry,
        executor: yield* ToolExecutor.make.pipe(Effect.provideService(ToolRegistry.ToolRegistry, registry)),
        servers: { 0: servers[0]!, 1: servers[1]!, 2: servers[2]! },
        dead: { url: deadUrl },
        handles: new Map(),
        checking: new Set(invariants),
        derivedKeys: sequence.derivedKeys,
        calls: 0
      }
      const model = initialModel(sequence.derivedKeys)
      for (const [n, command] of sequence.commands.entries()) {
        yield* play(world, model, command)
        yield* settled(world, model, `command ${n} ${JSON.stringify(command)}`)
      }

      yield* Scope.close(scope, Exit.void)
      const closed = yield* eventually(() =>
        servers.every((server) => server.live.size === 0 && server.inner.openRequests === 0)
      )
      yield* expectThat(world, "no-session-left", closed, () =>
        `open after the layer closed: ${
          servers.map((server) => `s${server.index}: ${server.live.size} sessions, ${server.inner.openRequests} requests`)
            .join(", ")
        }`)
      yield* closeServers
      const released = yield* eventually(() => excess(before).length === 0)
      yield* expectThat(world, "no-open-handles", released, () =>
        `open after the layer and the servers closed: ${JSON.stringify(excess(before))}`)
    }).pipe(Effect.ensuring(Effect.zipRight(Scope.close(scope, Exit.void), closeServers)))
  }).pipe(
    Effect.catchAllDefect((defect) =>
      Effect.die(
        defect instanceof InvariantError && logs.length > 0
          ? new InvariantError(defect.invariant, `${defect.detail}\n  the service logged: ${logs.join(" | ")}`)
          : defect
      )
    ),
    Effect.provide(Logger.replace(Logger.defaultLogger, capture))
  )
}
