// `forgetThread`: a thread leaves the store, not the server, and comes back when it is used again.
import { AgUiAgent, HoldingProxy, Script } from "@tambo-effect/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as AgUi from "../src/AgUi.js"
import * as ClientState from "../src/ClientState.js"
import * as Tambo from "../src/Tambo.js"
import { expectStoreEqualsServer, runAll, tamboLayer, useServer } from "./helpers.js"

const server = useServer()

/** A server that finds no name for a thread (an empty one) while `refuseNaming` is set. */
let refuseNaming = false
/** Until it settles, the server's naming waits (a model taking its time). */
let namingHeld: Promise<void> = Promise.resolve()
/** How many names the server made (stored as soon as made). */
let namesMade = 0
const naming = useServer({
  threadName: async (messages) => {
    await namingHeld
    namesMade++
    if (refuseNaming) return ""
    const first = messages[0]?.content[0]
    return first?.type === "text" ? first.text : "unnamed"
  }
})

/** A finished run on a new thread, and the client's current thread moved off it. */
const ranAndLeft = Effect.gen(function*() {
  server().setScript([Script.text("First answer.")])
  const events = yield* runAll("first question")
  const threadId = events.at(-1)!.threadId
  const tambo = yield* Tambo.Tambo
  yield* tambo.startNewThread
  return { tambo, threadId }
})

describe("forgetThread", () => {
  it.live("drops a thread from the store only; the next run on it brings the whole thread back, equal to the server's", () =>
    Effect.gen(function*() {
      const { tambo, threadId } = yield* ranAndLeft
      expect(yield* tambo.forgetThread(threadId)).toBe(true)
      expect((yield* tambo.state).threadMap[threadId]).toBeUndefined()
      // Not on the server: nothing was sent to forget it.
      expect(server().requests.filter((request) => request.method === "DELETE")).toEqual([])
      expect(server().threads.get(threadId)?.messages).toHaveLength(2)
      // Forgetting it again, or a thread never known, does nothing.
      expect(yield* tambo.forgetThread(threadId)).toBe(false)
      expect(yield* tambo.forgetThread("thr_unknown")).toBe(false)

      server().setScript([Script.text("Second answer.")])
      yield* runAll("second question", { threadId })
      expect((yield* tambo.state).threadMap[threadId]?.thread.messages).toHaveLength(4)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("fetchThread reads a forgotten thread back", () =>
    Effect.gen(function*() {
      const { tambo, threadId } = yield* ranAndLeft
      yield* tambo.forgetThread(threadId)
      const thread = yield* tambo.fetchThread(threadId)
      expect(thread.messages).toHaveLength(2)
      yield* expectStoreEqualsServer(tambo, server(), threadId)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("refuses the current thread and a thread not yet saved", () =>
    Effect.gen(function*() {
      const { tambo, threadId } = yield* ranAndLeft
      yield* tambo.switchThread(threadId)
      expect(yield* tambo.forgetThread(threadId)).toBe(false)
      expect(yield* tambo.forgetThread(ClientState.PLACEHOLDER_THREAD_ID)).toBe(false)
      expect((yield* tambo.state).threadMap[threadId]).toBeDefined()
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("refuses a thread a run is on; once the run ended it can go", () =>
    Effect.gen(function*() {
      const { tambo, threadId } = yield* ranAndLeft
      server().setScript([Script.text("Working on it."), Script.hang()])
      const started = yield* Deferred.make<void>()
      const fiber = yield* tambo.run("more", { threadId }).pipe(
        Stream.tap(() => Deferred.succeed(started, undefined)),
        Stream.runDrain,
        Effect.fork
      )
      yield* Deferred.await(started)
      expect(yield* tambo.forgetThread(threadId)).toBe(false)
      yield* Fiber.interrupt(fiber)
      expect(yield* tambo.forgetThread(threadId)).toBe(true)
    }).pipe(Effect.provide(tamboLayer(server()))))

  it.live("refuses an AG-UI agent's threads: their conversation lives only in the client", () =>
    Effect.gen(function*() {
      const agent = yield* AgUiAgent.scoped({ script: AgUiAgent.scripts.text })
      yield* Effect.gen(function*() {
        const events = yield* runAll("hello")
        const threadId = events.at(-1)!.threadId
        const tambo = yield* Tambo.Tambo
        yield* tambo.startNewThread
        expect(yield* tambo.forgetThread(threadId)).toBe(false)
        expect((yield* tambo.state).threadMap[threadId]).toBeDefined()
      }).pipe(Effect.provide(AgUi.layer({ url: agent.url })))
    }).pipe(Effect.scoped))
})

describe("forgetThread and automatic naming", () => {
  const namings = () => naming().requests.filter((request) => request.path.endsWith("/generate-name")).length
  const until = (done: Effect.Effect<boolean>) =>
    Effect.gen(function*() {
      while (!(yield* done)) yield* Effect.sleep("10 millis")
    }).pipe(Effect.timeout("5 seconds"), Effect.orDie)
  const namedAs = (tambo: Tambo.Tambo.Service, threadId: string) =>
    Effect.map(tambo.state, (state) => state.threadMap[threadId]?.thread.name)

  it.live("a thread the API found no name for is not asked again while the store holds it; forgotten and used again, it is", () =>
    Effect.gen(function*() {
      const tambo = yield* Tambo.Tambo
      refuseNaming = true
      naming().setScript([Script.text("ok")])
      const threadId = (yield* runAll("name me")).at(-1)!.threadId
      // Two messages: the threshold. The naming is asked for in the background, and finds none.
      yield* until(Effect.sync(() => namings() === 1))
      yield* runAll("again", { threadId })
      yield* Effect.sleep("100 millis")
      expect(namings()).toBe(1)
      expect(yield* namedAs(tambo, threadId)).toBeFalsy()

      yield* tambo.startNewThread
      expect(yield* tambo.forgetThread(threadId)).toBe(true)
      refuseNaming = false
      yield* runAll("and again", { threadId })
      yield* until(Effect.sync(() => namings() === 2))
      yield* until(Effect.map(namedAs(tambo, threadId), (name) => name === "name me"))
    }).pipe(
      Effect.ensuring(Effect.sync(() => {
        refuseNaming = false
      })),
      Effect.provide(tamboLayer(naming(), { autoGenerateThreadName: true, autoGenerateNameThreshold: 2 }))
    ))

  it.live("a thread whose automatic naming failed (the API's error, a dropped connection) is asked a name again after its next run", () =>
    Effect.gen(function*() {
      const proxy = yield* HoldingProxy.scoped(naming())
      yield* Effect.gen(function*() {
        const tambo = yield* Tambo.Tambo
        const refused = proxy.holdRequest((request) => request.path.endsWith("/generate-name"))
        refused.fail(400)
        naming().setScript([Script.text("ok")])
        const threadId = (yield* runAll("name me")).at(-1)!.threadId
        yield* Effect.promise(() => refused.arrived)
        yield* runAll("again", { threadId })
        yield* until(Effect.map(namedAs(tambo, threadId), (name) => name === "name me"))
        expect(namings()).toBe(1)
        yield* expectStoreEqualsServer(tambo, naming(), threadId)
      }).pipe(Effect.provide(tamboLayer(naming(), { tamboUrl: proxy.url, autoGenerateThreadName: true, autoGenerateNameThreshold: 2 })))
    }).pipe(Effect.scoped))

  it.live("a rename while the thread's automatic name is being made wins, in the store and on the server", () =>
    Effect.gen(function*() {
      const tambo = yield* Tambo.Tambo
      let answer: () => void = () => {}
      namingHeld = new Promise((resolve) => {
        answer = resolve
      })
      naming().setScript([Script.text("ok")])
      const threadId = (yield* runAll("name me")).at(-1)!.threadId
      yield* until(Effect.sync(() => namings() === 1))
      yield* tambo.updateThreadName(threadId, "my own name")
      // The naming ends after the rename: the server's name is the generated one now.
      const made = namesMade
      answer()
      yield* until(Effect.sync(() => namesMade > made))
      yield* until(Effect.sync(() => naming().threads.get(threadId)?.name === "my own name"))
      yield* until(Effect.map(namedAs(tambo, threadId), (name) => name === "my own name"))
      // Read again: what the server holds is the rename, and so does the store.
      yield* tambo.fetchThread(threadId)
      expect(naming().threads.get(threadId)?.name).toBe("my own name")
      expect(yield* namedAs(tambo, threadId)).toBe("my own name")
    }).pipe(
      Effect.ensuring(Effect.sync(() => {
        namingHeld = Promise.resolve()
      })),
      Effect.provide(tamboLayer(naming(), { autoGenerateThreadName: true, autoGenerateNameThreshold: 2 }))
    ))
})
