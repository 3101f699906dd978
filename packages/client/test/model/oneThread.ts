// What the models of one thread behind a holding proxy share (twoClients.ts: two clients on the
// thread; onBusy.ts: overlapping runs of one client on it): the testing server with the thread,
// a HoldingProxy in front of it (where a request or an answer can be held), each run's script
// found by its message, a gate that holds a script, the sent-once check, and the sequence runner.
// What each model is (its commands, its world, its invariants) stays in its own module.
import { HoldingProxy, Script, startTestServer, type TestServer } from "@tambo-effect/testing"
import { FastCheck as fc } from "effect"
import type { TamboClient } from "../../src/index.js"
import { jwtFor } from "../helpers.js"
import { storeMatchesServer } from "./storeMatchesServer.js"
import * as Model from "./support.js"

// -----------------------------------------------------------------------------
// Gates
// -----------------------------------------------------------------------------

/** Holds a script (or a tool) until `open()`. */
export interface Gate {
  readonly opened: Promise<void>
  readonly open: () => void
}

/** A closed gate. */
export const gate = (): Gate => {
  let open: () => void = () => {}
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { opened, open }
}

/** Resolves once `opened` did, or once `signal` aborted (a cancelled run stops waiting). */
export const openedOrAborted = (opened: Promise<void> | undefined, signal: AbortSignal): Promise<unknown> =>
  Promise.race([opened, new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }))])

// -----------------------------------------------------------------------------
// The world
// -----------------------------------------------------------------------------

/** The user every client of the models is. */
const USER = "user-1"

/** The issuer of the user's tokens (what `jwtFor` signs them with). */
const TOKEN_ISSUER = "https://issuer.example"

/** The world of one thread: the server with the thread, the proxy in front of it, the scenarios. */
export class OneThreadWorld extends Model.ModelWorld<Script.ScriptFn> {
  /** The thread the model plays on: made on the server before the sequence, read by no client yet. */
  readonly threadId: string
  /** The user the server knows the clients as. */
  readonly owner: string
  /** How many user tokens were made: each one differs from those before. */
  private tokens = 0

  /** `signIn`: the model's clients sign the user in with a token they exchange (`userToken`), instead of a `userKey`. */
  constructor(
    readonly server: TestServer,
    readonly proxy: HoldingProxy.HoldingProxy,
    threadName: string,
    readonly signIn: "userKey" | "userToken" = "userKey"
  ) {
    super()
    // A token's user is known to the API by the issuer and subject of the token.
    this.owner = signIn === "userKey" ? USER : `oauth:user:${new URL(TOKEN_ISSUER).host}:${USER}`
    this.threadId = server.threads.create({ userKey: this.owner, name: threadName }).id
  }

  /** A token of the user the client has not had before (each one expires a second later). */
  userToken(): string {
    return jwtFor(USER, Math.floor(Date.now() / 1000) + 3600 + this.tokens++)
  }

  /** The options of a client of the model: the user, through the proxy, no retries, no naming of threads, a store of its own. */
  clientOptions() {
    const options = {
      apiKey: this.server.apiKey,
      tamboUrl: this.proxy.url,
      maxRetries: 0,
      autoGenerateThreadName: false,
      store: this.store()
    }
    return this.signIn === "userKey" ? { ...options, userKey: USER } : { ...options, userToken: this.userToken() }
  }

  /** The server's copy of the thread. */
  serverThread() {
    return this.server.threads.get(this.threadId)
  }

  /** Whether the server's thread has no run. */
  serverIdle(): boolean {
    return this.serverThread()?.runStatus === "idle"
  }

  /** The text of each user message the server took on the thread (default: the model's), in order. */
  userTexts(threadId: string = this.threadId): Array<string> {
    return (this.server.threads.get(threadId)?.messages ?? []).flatMap((message) =>
      message.role === "user" ? [message.content.map((c) => (c.type === "text" ? c.text : "")).join("")] : []
    )
  }

  /** Rejects with the diff unless `client`'s store holds the thread (default: the model's) as the server has it. */
  storeEqualsServer(client: TamboClient, threadId: string = this.threadId): Promise<void> {
    return storeMatchesServer(client.getState(), this.server, threadId, this.owner)
  }

  /** What the server plays for a run's request: the scenario its message names. */
  script(request: Script.RunRequest, context: Script.ScriptContext): ReturnType<Script.ScriptFn> {
    const scenario = this.scenarios.get(request.text)
    return scenario === undefined ? unknownScenario(request) : scenario(request, context)
  }
}

const unknownScenario = (request: Script.RunRequest): Script.Script => [Script.text(`unknown scenario ${request.text}`)]

// -----------------------------------------------------------------------------
// Invariants
// -----------------------------------------------------------------------------

/** sent-once: every message the server took, it took once; every run was cancelled (and asked to be) at most once. */
export const sentOnce = (world: OneThreadWorld): void => {
  const texts = new Map<string, number>()
  for (const text of world.userTexts()) texts.set(text, (texts.get(text) ?? 0) + 1)
  for (const [text, count] of texts) if (count > 1) throw new Error(`the message ${JSON.stringify(text)} is on the server ${count} times`)
  const cancelled = new Map<string, number>()
  for (const cancel of world.server.cancels) cancelled.set(cancel.runId, (cancelled.get(cancel.runId) ?? 0) + 1)
  for (const [runId, count] of cancelled) if (count > 1) throw new Error(`run ${runId} was cancelled ${count} times`)
  const deletes = new Map<string, number>()
  for (const request of world.server.requests) {
    if (request.method === "DELETE" && /\/runs\/[^/]+$/.test(request.path)) deletes.set(request.path, (deletes.get(request.path) ?? 0) + 1)
  }
  for (const [path, count] of deletes) if (count > 1) throw new Error(`DELETE ${path} was sent ${count} times`)
}

// -----------------------------------------------------------------------------
// Sequences
// -----------------------------------------------------------------------------

/** What a model of one thread is made of, besides its commands' own code. */
export interface ModelOptions<C, I extends string, W extends OneThreadWorld> {
  readonly invariants: Model.Invariants<I>
  /** The generator of one command. */
  readonly command: fc.Arbitrary<C>
  /** Plays one command (bounded by command-settles) and checks the invariants after it. */
  readonly step: (world: W, command: C) => Promise<void>
  /** The world of a sequence, over its server and proxy (it makes the model's clients). */
  readonly world: (server: TestServer, proxy: HoldingProxy.HoldingProxy) => W
  /** After the last command: lets what the server still holds end, and checks once more. */
  readonly windDown: (world: W) => Promise<void>
  /** Lets go of whatever is still held (after a failure, too), before the clients the world made (`track`) are destroyed. */
  readonly letGo: (world: W) => void
}

/**
 * The entry points of a model of one thread. `runSequence` (what the property runs) plays the
 * commands on a fresh world (a fresh server behind a fresh proxy; `sequenceAgainst` one that
 * notices a closed connection as it says, `runSequence` at once), then `windDown`, then `letGo`,
 * destroys every client the world made and closes the proxy and the server, and checks that the
 * clients left no handle open; unhandled rejections meanwhile are recorded in the world
 * (no-unhandled-rejection). A step that does not end fails command-settles naming it, and is
 * waited for, bounded, once the clients and the server went, so a shrink starts clean. `replay` plays a counterexample given as a table
 * of commands (`replayAgainst`, against such a server); `commandsArbitrary` is the property's generator.
 */
export const entryPoints = <C, I extends string, W extends OneThreadWorld>(model: ModelOptions<C, I, W>) => {
  const { invariants, step } = model
  const sequenceAgainst = (notice: Model.Notice) =>
  async (
    commands: Iterable<fc.AsyncCommand<object, W, boolean>>,
    checking: ReadonlySet<I> = invariants.defaults()
  ): Promise<void> => {
    invariants.use(checking)
    const before = Model.resourceCounts()
    let playing: W | undefined
    const server = await startTestServer({
      script: (request, context) => playing === undefined ? unknownScenario(request) : playing.script(request, context),
      noticeClosedConnection: notice
    })
    const proxy = await HoldingProxy.start(server)
    const world = model.world(server, proxy)
    playing = world
    await Model.playInWorld({
      invariants,
      world,
      play: async () => {
        await fc.asyncModelRun(() => ({ model: {}, real: world }), invariants.counted(commands))
        await invariants.liveness(model.windDown(world), "the wind-down")
      },
      letGo: () => model.letGo(world),
      close: async () => {
        playing = undefined
        await proxy.close()
        await server.close()
      }
    })
    await invariants.noOpenHandles(before, world.stores)
  }
  const replayAgainst = (notice: Model.Notice): (commands: ReadonlyArray<C>, checking?: ReadonlyArray<I>) => Promise<void> =>
    Model.replayer(step, sequenceAgainst(notice))
  const commandsArbitrary = (maxCommands: number, replayPath?: string) =>
    Model.modelCommands(model.command, step, maxCommands, replayPath)
  return {
    runSequence: sequenceAgainst("atOnce"),
    replay: replayAgainst("atOnce"),
    sequenceAgainst,
    replayAgainst,
    commandsArbitrary
  }
}
