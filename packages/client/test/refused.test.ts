// A message refused before any event (an HTTP error, a connection refused) was not taken: through the
// facade, the run's promises reject with the typed error, getState() no longer shows the message, and
// sending it again sends it once; against the Tambo API and an AG-UI agent, on a new conversation and
// on a known thread.
import { AgUiAgent, Script } from "@tambo-effect/testing"
import { afterEach, describe, expect, it } from "vitest"
import type { TamboClient } from "../src/index.js"
import { holdingProxy, makeAgentClient, makeClient, settle, texts, useServer } from "./helpers.js"

const server = useServer()

type Refusal = "500" | "refused"
const refusals: ReadonlyArray<Refusal> = ["500", "refused"]
const expected: Record<Refusal, object> = {
  "500": { _tag: "ApiError", status: 500 },
  refused: { _tag: "TransportError" }
}

/** Every message of every thread in the client's state. */
const shown = (client: TamboClient) =>
  Object.values(client.getState().threadMap).flatMap((thread) => texts(thread.thread.messages))

/**
 * Sends "hello" on `target`, refused by `refuse`; checks the run's promises reject with the typed
 * error and the state shows no more than before.
 */
const sendRefused = async (client: TamboClient, target: string, refusal: Refusal, refuse: () => Promise<void>) => {
  const before = shown(client)
  await refuse()
  const stream = client.run("hello", { threadId: target })
  const [thread, messages] = await Promise.all([settle(stream.thread), settle(stream.messages)])
  expect(thread).toMatchObject({ ok: false, error: expected[refusal] })
  expect(messages).toMatchObject({ ok: false, error: expected[refusal] })
  expect(shown(client)).toEqual(before)
}

/** What a thread with the message sent once holds, after "first" if it was known. */
const sentOnce = (known: boolean) => [
  ...(known ? ["user: first", "assistant: re: first"] : []),
  "user: hello",
  "assistant: re: hello"
]

describe("a message refused before any event, through the facade", () => {
  const agents: Array<AgUiAgent.AgUiAgent> = []
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((agent) => agent.close()))
  })
  /** A scripted agent answering "re: <text>", on `port` if given. */
  const echoAgent = async (port?: number) => {
    const agent = await AgUiAgent.start({ port, script: (request) => [AgUiAgent.text(`re: ${request.lastUserText}`)] })
    agents.push(agent)
    return agent
  }

  for (const known of [false, true]) {
    const where = known ? "on a known thread" : "on a new conversation"

    it.each(refusals)(`the Tambo API (%s) ${where}: the run rejects with the typed error, the state no longer shows it, and sent again it goes once`, async (refusal) => {
      server().setScript((request) => [Script.text(`re: ${request.text}`)])
      const proxy = await holdingProxy(server())
      const client = makeClient(server(), { tamboUrl: proxy.url })
      const target = known ? (await client.run("first").thread).id : client.getState().currentThreadId
      await sendRefused(client, target, refusal, async () => {
        if (refusal === "refused") await proxy.close()
        else proxy.holdRequest((request) => request.method === "POST").fail(500, { message: "down" })
      })
      // Sent again: by the same client through the proxy, or by another straight to the server.
      const again = refusal === "refused" ? makeClient(server()) : client
      const thread = await again.run("hello", { threadId: target }).thread
      expect(texts(thread.messages)).toEqual(sentOnce(known))
      expect(texts(server().threads.get(thread.id)!.messages)).toEqual(sentOnce(known))
    })

    it.each(refusals)(`an AG-UI agent (%s) ${where}: the run rejects with the typed error, the state no longer shows it, and sent again it goes once`, async (refusal) => {
      const agent = await echoAgent()
      const proxy = await holdingProxy(agent)
      const client = makeAgentClient(proxy)
      const target = known ? (await client.run("first").thread).id : client.getState().currentThreadId
      await sendRefused(client, target, refusal, async () => {
        if (refusal === "refused") await proxy.close()
        else proxy.holdRequest((request) => request.method === "POST").fail(500, { message: "down" })
      })
      // The conversation is the client's: sent again by the same client, to an agent at the same
      // address, it holds the message once.
      const answering = refusal === "refused" ? await echoAgent(Number(new URL(proxy.url).port)) : agent
      const thread = await client.run("hello", { threadId: target }).thread
      expect(texts(thread.messages)).toEqual(sentOnce(known))
      const sent = answering.requests.at(-1)!.input!.messages
      expect(sent.filter((message) => message.role === "user").map((message) => message.content)).toEqual([
        ...(known ? ["first"] : []),
        "hello"
      ])
    })
  }
})
