import { Script, type TestServer } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import type { TamboClient, TamboStream } from "../src/index.js"
import { makeClient, settle, texts, until, useServer } from "./helpers.js"

const server = useServer()

/**
 * The server's answer to the message `held` (its status, headers and first event) waits until
 * `answer` is called, with what the script gives then: the server took the request and holds the
 * thread's run lock, the client has no name for the run yet. Other messages are answered at once.
 */
const holdingAnswerTo = (testServer: TestServer, held: string) => {
  let answer!: (script: Script.Script) => void
  const answered = new Promise<Script.Script>((resolve) => (answer = resolve))
  let came = false
  testServer.setScript(Script.beforeResponse((request) => {
    if (request.text !== held) return [Script.text(`re: ${request.text}`)]
    came = true
    return answered
  }))
  return { answer, arrived: until(() => came, "the held request") }
}

/** A client with a thread that has one finished run. */
const clientWithThread = async () => {
  const client = makeClient(server())
  server().setScript([Script.text("hi")])
  const threadId = (await client.run("first").thread).id
  return { client, threadId }
}

const rejectedAsStopped = async (stream: TamboStream, reason: string) => {
  const ended = await settle(stream.thread)
  expect(ended.ok ? ended.value : ended.error).toMatchObject({ _tag: "AbortError", reason })
}

/** `stop` pressed while the server holds its answer to the message `text` of `client` on `threadId`. */
const stoppedBeforeAnswer = async (
  client: TamboClient,
  threadId: string,
  text: string,
  stop: (stream: TamboStream) => Promise<void>
) => {
  const { answer, arrived } = holdingAnswerTo(server(), text)
  const stream = client.run(text, { threadId })
  await arrived
  const stopping = stop(stream)
  return { answer, stream, stopping }
}

describe("a Stop before the server answered the run's request", () => {
  for (
    const [name, reason, stop] of [
      ["abort()", "Aborted", (_client: TamboClient, stream: TamboStream) => {
        stream.abort()
        return stream.thread.then(() => undefined, () => undefined)
      }],
      ["cancelRun()", "CancelledByClient", (client: TamboClient) => client.cancelRun()]
    ] as const
  ) {
    it(`${name}, the answer coming at once: the server cancels the run for the user, the message stays as the server has it, and the next message runs`, async () => {
      const { client, threadId } = await clientWithThread()
      const { answer, stream, stopping } = await stoppedBeforeAnswer(client, threadId, "slow", (s) => stop(client, s))
      answer([Script.text("slow..."), Script.hang()])
      await stopping
      await rejectedAsStopped(stream, reason)
      await until(() => server().threads.get(threadId)?.runStatus === "idle", "the server's run to end")
      expect(server().cancels.map((c) => [c.threadId, c.reason])).toEqual([[threadId, "user_cancelled"]])
      const next = await client.run("next", { threadId }).thread
      // What the server kept of the stopped run (its message, the reply's start) stays, once.
      expect(texts(next.messages)).toEqual(texts(server().threads.get(threadId)!.messages))
      expect(texts(next.messages).filter((text) => text === "user: slow")).toHaveLength(1)
      expect(texts(next.messages).slice(-2)).toEqual(["user: next", "assistant: re: next"])
    })
  }

  it("abort() at once on a new conversation whose request the API refuses meanwhile: the run rejects with the AbortError, its message leaves getState() as a refused one does, and the next message runs", async () => {
    const client = makeClient(server())
    const { answer, arrived } = holdingAnswerTo(server(), "refused")
    const stream = client.run("refused")
    await arrived
    stream.abort()
    answer([Script.httpError(503, { message: "busy" })])
    await rejectedAsStopped(stream, "Aborted")
    const shown = Object.values(client.getState().threadMap).flatMap((state) => texts(state.thread.messages))
    expect(shown).not.toContain("user: refused")
    expect(client.hasActiveRun()).toBe(false)
    const next = await client.run("next").thread
    expect(texts(next.messages)).toEqual(["user: next", "assistant: re: next"])
  })

  for (
    const [name, stop] of [
      ["abort()", (_client: TamboClient, stream: TamboStream) => stream.abort()],
      ["cancelRun()", (client: TamboClient, _stream: TamboStream, threadId: string) => void client.cancelRun(threadId)]
    ] as const
  ) {
    it(`${name} of a message still starting on a thread that shows another client's run ends the message alone: that run goes on`, async () => {
      const other = makeClient(server())
      server().setScript([Script.text("first")])
      const threadId = (await other.run("one").thread).id
      server().setScript([Script.text("working"), Script.hang()])
      const busy = other.run("two", { threadId })
      await until(() => server().threads.get(threadId)?.runStatus === "streaming", "the other client's run to stream")
      let started!: () => void
      const starting = new Promise<void>((resolve) => (started = resolve))
      const client = makeClient(server(), { beforeRun: () => (started(), new Promise<void>(() => {})) })
      await client.fetchThread(threadId)
      const stream = client.run("mine", { threadId })
      await starting
      stop(client, stream, threadId)
      await settle(stream.thread)
      expect(server().cancels).toEqual([])
      expect(server().threads.get(threadId)?.runStatus).toBe("streaming")
      await other.cancelRun(threadId)
      await settle(busy.thread)
    })
  }
})
