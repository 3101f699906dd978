import { startTestServer, type TestServer, type TestServerOptions } from "@tambo-effect/testing"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { createHash } from "node:crypto"
import * as net from "node:net"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { afterAll, afterEach, beforeAll, expect } from "vitest"
import * as Auth from "../src/Auth.js"
import * as ClientState from "../src/ClientState.js"
import * as Tambo from "../src/Tambo.js"
import * as TamboConfig from "../src/TamboConfig.js"
import type * as Transport from "../src/TamboTransport.js"
import * as ThreadStore from "../src/ThreadStore.js"
import * as Tool from "../src/Tool.js"
import * as ToolExecutor from "../src/ToolExecutor.js"
import * as ToolRegistry from "../src/ToolRegistry.js"
import type * as Types from "../src/Types.js"
import { storeEqualsServer } from "./storeEqualsServer.js"

/** A tool the runs of the tests call: the weather in a city, always the same. */
export const weather = Tool.make({
  name: "get_weather",
  description: "Current weather in a city",
  input: Schema.Struct({ city: Schema.String }),
  execute: ({ city }) => Effect.succeed({ city, temperature: 21 })
})

/** A tool of no required arguments that needs approval, and the arguments it ran with. */
export const resetTool = () => {
  const resets: Array<unknown> = []
  const reset = Tool.make({
    name: "reset",
    description: "Resets everything",
    input: Schema.Struct({ force: Schema.optional(Schema.Boolean) }),
    needsApproval: true,
    execute: (args) => Effect.sync(() => resets.push(args)).pipe(Effect.as("reset done"))
  })
  return { reset, resets }
}

/** One testing server for a test file, its script reset after each test. */
export const useServer = (options: TestServerOptions = {}) => {
  const ref: { current: TestServer | undefined } = { current: undefined }
  beforeAll(async () => {
    ref.current = await startTestServer(options)
  })
  afterEach(() => {
    ref.current?.reset()
  })
  afterAll(async () => {
    await ref.current?.close()
  })
  return () => {
    if (ref.current === undefined) throw new Error("server not started")
    return ref.current
  }
}

/**
 * A testing server whose clock moves a second each time it is read: each change of a thread is
 * later than the one before, so a time of change the store missed shows.
 */
export const useTickingServer = () => {
  let ticks = Date.parse("2026-01-01T00:00:00Z")
  return useServer({ now: () => (ticks += 1_000) })
}

export type TamboLayer = Layer.Layer<Tambo.Tambo, unknown>

/** The full SDK against a testing server. */
export const tamboLayer = (
  server: TestServer,
  options: Partial<Parameters<typeof Tambo.layer>[0]> = {}
) =>
  Tambo.layer({
    apiKey: server.apiKey,
    tamboUrl: server.url,
    userKey: "user-1",
    maxRetries: 0,
    ...options
  })

/**
 * `Tambo` over `transport` (the real one, or one wrapping it) against `server` (or a proxy of it at
 * `tamboUrl`), with the other services it needs; they stay in the context, so a test reaches the
 * executor's ledger too.
 */
export const tamboOver = (
  server: TestServer,
  transport: Layer.Layer<Transport.TamboTransport, never, TamboConfig.TamboConfig | HttpClient.HttpClient>,
  tamboUrl: string = server.url
) =>
  Layer.scoped(Tambo.Tambo, Tambo.make()).pipe(
    Layer.provideMerge(Layer.mergeAll(
      transport,
      Auth.layer.pipe(Layer.provide(transport)),
      ThreadStore.layer,
      ToolExecutor.layer.pipe(Layer.provideMerge(ToolRegistry.layer))
    )),
    Layer.provide(TamboConfig.layer({ apiKey: server.apiKey, tamboUrl, userKey: "user-1", maxRetries: 0 })),
    Layer.provide(FetchHttpClient.layer)
  )

/** Runs a message to the end and returns every element. */
export const runAll = (message: string, options?: Tambo.RunOptions) =>
  Effect.flatMap(Tambo.Tambo, (tambo) =>
    Stream.runCollect(tambo.run(message, options)).pipe(Effect.map(Chunk.toReadonlyArray)))

/** Roles and content of a message list, without ids and timestamps. */
export const shape = (messages: ReadonlyArray<Types.TamboThreadMessage>) =>
  messages.map((m) => ({ role: m.role, content: m.content.map(contentShape) }))

const contentShape = (c: Types.Content): unknown => {
  switch (c.type) {
    case "text":
      return { type: "text", text: c.text }
    case "tool_use":
      return { type: "tool_use", id: c.id, name: c.name, input: c.input }
    case "tool_result":
      return { type: "tool_result", toolUseId: c.toolUseId, isError: c.isError ?? false, content: c.content }
    case "component":
      return { type: "component", id: c.id, name: c.name, props: c.props }
    default:
      return c
  }
}

/** The server's thread in the same shape. */
export const serverShape = (server: TestServer, threadId: string) => {
  const thread = server.threads.get(threadId)
  if (thread === undefined) throw new Error(`server has no thread ${threadId}`)
  return thread.messages.map((m) => ({
    role: m.role,
    content: m.content.map((c) => contentShape(c as Types.Content))
  }))
}

export const threadOf = (state: ClientState.ClientState, threadId: string) => {
  const thread = state.threadMap[threadId]
  if (thread === undefined) throw new Error(`no thread ${threadId} in the store`)
  return thread
}

/**
 * The own fields of an error. Errors that crossed a span are proxies whose
 * span graph deep equality would walk forever.
 */
/** Polls (real time) until `predicate` holds: what the server did, which no event tells the client. */
export const until = (predicate: () => boolean): Effect.Effect<void> =>
  Effect.gen(function* () {
    while (!predicate()) yield* Effect.sleep("5 millis")
  }).pipe(Effect.timeout("5 seconds"), Effect.orDie)

/** Waits (in real time) until the test clock holds a sleep that wakes at `at`. */
export const sleepScheduledAt = (at: number) =>
  Effect.gen(function* () {
    while (!Chunk.toReadonlyArray(yield* TestClock.sleeps()).includes(at)) {
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
    }
  })

/**
 * Moves the test clock on by `step` each time it holds a sleep due within `step`, until `done`:
 * a wait (a retry's) is passed once it began, however long what came before it took, and a
 * longer one (a timeout's) is left alone.
 */
export const passSleepsUntil = (step: Duration.DurationInput, done: () => boolean) =>
  Effect.gen(function* () {
    const within = Duration.toMillis(step)
    while (!done()) {
      const now = yield* Clock.currentTimeMillis
      const due = Chunk.toReadonlyArray(yield* TestClock.sleeps()).some((wake) => wake <= now + within)
      if (due) yield* TestClock.adjust(step)
      else yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
    }
  })

/**
 * A script's hold for `count` runs at once: each run's hold is let go once all of them reached it,
 * so the runs overlap however slow the machine is.
 */
export const together = (count: number): () => Promise<void> => {
  let reached = 0
  let allReached!: () => void
  const all = new Promise<void>((resolve) => (allReached = resolve))
  return () => {
    if (++reached === count) allReached()
    return all
  }
}

export const fields = (error: Error): Record<string, unknown> => ({ ...error, message: error.message })

/**
 * A full garbage collection, without starting Node with `--expose-gc`: the
 * flag set now exposes `gc` to a context made after it.
 */
export const collectGarbage: Effect.Effect<void> = Effect.sync(() => {
  v8.setFlagsFromString("--expose-gc")
  const gc = vm.runInNewContext("gc") as () => void
  gc()
})

/**
 * Reads a stream in a fiber, keeping only weak references to what it reads
 * (`refs` picks them from each element); resolves once `count` elements were
 * read, with the fiber still reading.
 */
export const readWeakly = <A, E>(
  stream: Stream.Stream<A, E>,
  count: number,
  refs: (element: A) => ReadonlyArray<object>
) =>
  Effect.gen(function* () {
    const read: Array<WeakRef<object>> = []
    let elements = 0
    const fiber = yield* Effect.fork(Stream.runForEach(stream, (element) =>
      Effect.sync(() => {
        elements++
        for (const ref of refs(element)) read.push(new WeakRef(ref))
      })))
    while (elements < count) yield* Effect.sleep("5 millis")
    return { read, fiber }
  })

/** How many of `refs` a full collection left alive. */
export const aliveAfterCollection = (refs: ReadonlyArray<WeakRef<object>>) =>
  Effect.map(collectGarbage, () => refs.filter((ref) => ref.deref() !== undefined).length)

/**
 * How many of `refs` a reader waiting for more keeps alive: collected again until none are (for
 * up to 5 seconds), since a reader lets go of the last it read only once it got back to waiting,
 * however long the machine takes to get there, while one that keeps any keeps it for good.
 */
export const aliveWhileWaiting = (refs: ReadonlyArray<WeakRef<object>>) =>
  Effect.gen(function* () {
    let alive = yield* aliveAfterCollection(refs)
    for (let tries = 0; alive > 0 && tries < 500; tries++) {
      yield* Effect.sleep("10 millis")
      alive = yield* aliveAfterCollection(refs)
    }
    return alive
  })

/** A minimal Zustand-like store, as an app would hand to `layerExternal` or `Tambo.layer({ store })`. */
export const externalStore = (): ThreadStore.ExternalStore<ClientState.ClientState> => {
  let state = ClientState.initial
  const listeners = new Set<() => void>()
  return {
    getState: () => state,
    setState: (next) => {
      state = next
      for (const listener of listeners) listener()
    },
    subscribe: (listener) => {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    }
  }
}

export { CLIENT_ONLY_FIELDS } from "./storeEqualsServer.js"

/**
 * Asserts that the store's thread equals the server's (see `storeEqualsServer`).
 */
export const expectStoreEqualsServer = (
  tambo: Tambo.Tambo.Service,
  server: TestServer,
  threadId: string,
  userKey = "user-1"
): Effect.Effect<void> =>
  Effect.flatMap(tambo.state, (state) => Effect.promise(() => storeEqualsServer(state, server, threadId, userKey)))

/** A port nothing listens on: bound, then let go (a connection to it is refused). */
export const closedPort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as net.AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** The texts of the thread's messages, as the store holds them (none for a thread it does not hold). */
export const textsOf = (tambo: Tambo.Tambo.Service, threadId: string) =>
  Effect.map(tambo.state, (state) =>
    (state.threadMap[threadId]?.thread.messages ?? []).flatMap((m) => m.content.flatMap((c) => (c.type === "text" ? [c.text] : [])))
  )

/**
 * A new conversation's run held before its request, then moved to a local thread of its own by
 * `startNewThread`: the local id the store shows for it, the effect that lets the run go on, and
 * the run's fiber.
 */
export const runInLocalThread = (message: string, options?: Tambo.RunOptions) =>
  Effect.gen(function* () {
    const tambo = yield* Tambo.Tambo
    const entered = yield* Deferred.make<void>()
    const released = yield* Deferred.make<void>()
    const run = yield* Effect.fork(runAll(message, {
      ...options,
      threadId: ClientState.PLACEHOLDER_THREAD_ID,
      beforeRun: () => Effect.zipRight(Deferred.succeed(entered, undefined), Deferred.await(released))
    }))
    yield* Deferred.await(entered)
    yield* tambo.startNewThread
    const localId = Object.keys((yield* tambo.state).threadMap).find((id) => id.startsWith(ClientState.LOCAL_THREAD_PREFIX))!
    expect(localId).toBeDefined()
    return { localId, release: Deferred.succeed(released, undefined), run }
  })

/** Waits until `fiber` is suspended: a run waiting for its thread, or for its credentials. */
export const suspended = <A, E>(fiber: Fiber.RuntimeFiber<A, E>): Effect.Effect<void> =>
  Effect.flatMap(Fiber.status(fiber), (status) =>
    status._tag === "Suspended" ? Effect.void : Effect.zipRight(Effect.yieldNow(), suspended(fiber)))

/** The context the testing server gives an opaque subject token's user. */
export const contextKeyOf = (userToken: string) =>
  `oauth:user:opaque:${createHash("sha256").update(userToken).digest("hex")}`
