// The facade passes the stream's bounds on: a server that never answers fails the run promptly.
import { HostileServer } from "@tambo-effect/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { isTamboClientError, TamboClient } from "../src/index.js"

describe("the client's timeouts and limits", () => {
  let server: HostileServer.HostileServer
  beforeAll(async () => {
    server = await HostileServer.start()
  })
  afterAll(() => server.close())

  it("firstByteTimeout: a server that never answers rejects the run with a TransportError Timeout, once the bounded search for the new conversation's thread told nothing", async () => {
    server.respond(HostileServer.silent())
    const client = new TamboClient({ apiKey: "k", userKey: "u", tamboUrl: server.url, firstByteTimeout: 150 })
    try {
      const error = await client.run("hi").thread.catch((e: unknown) => e)
      expect(isTamboClientError(error) && { name: error.name, reason: error.reason }).toEqual({
        name: "TransportError",
        reason: "Timeout"
      })
      expect((error as Error).message).toContain("firstByteTimeout (150 ms)")
      // The new conversation's thread is looked for, within its bound: the silent server tells nothing.
      expect((error as Error).message).toContain("its thread could not be told: the server's threads did not answer within 3s")
    } finally {
      await client.destroy()
    }
  })

  it("maxFrameBytes: an event over it rejects the run with a DecodeError FrameTooLarge", async () => {
    server.respond(HostileServer.frameOfSize(5000, { chunkBytes: 512 }))
    const client = new TamboClient({ apiKey: "k", userKey: "u", tamboUrl: server.url, maxFrameBytes: 1000 })
    try {
      const error = await client.run("hi").thread.catch((e: unknown) => e)
      expect(isTamboClientError(error) && { name: error.name, reason: error.reason }).toEqual({
        name: "DecodeError",
        reason: "FrameTooLarge"
      })
    } finally {
      await client.destroy()
    }
  })

  it("an option that is not positive is a ConfigError from the constructor", () => {
    expect(() => new TamboClient({ apiKey: "k", userKey: "u", idleTimeout: 0 })).toThrow(/idleTimeout/)
  })
})
