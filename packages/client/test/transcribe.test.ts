import { describe, expect, it } from "vitest"
import { AbortError, TranscriptionError } from "../src/index.js"
import { holdingProxy, makeClient, settle, until, useServer } from "./helpers.js"

/** Holds the server's transcripts while set: a transcription in flight. */
let held: Promise<void> | undefined
const server = useServer({
  transcribe: async (audio) => {
    await held
    return `heard ${audio.bytes.length} bytes`
  }
})

const webm = (size: number) => {
  const bytes = new Uint8Array(size)
  bytes.set([0x1a, 0x45, 0xdf, 0xa3])
  return new Blob([bytes], { type: "audio/webm;codecs=opus" })
}

describe("client.transcribe", () => {
  it("resolves with the server's transcript of the audio", async () => {
    const client = makeClient(server())
    await expect(client.transcribe(webm(120))).resolves.toBe("heard 120 bytes")
    expect(server().transcriptions.map((audio) => [audio.filename, audio.type])).toEqual([["recording.webm", "audio/webm"]])
  })

  it("a signal aborted while the server transcribes rejects at once with an AbortError (SignalAborted); the client goes on", async () => {
    const client = makeClient(server())
    let release!: () => void
    held = new Promise((resolve) => {
      release = resolve
    })
    try {
      const controller = new AbortController()
      const transcribing = settle(client.transcribe(webm(64), { signal: controller.signal }))
      await until(() => server().requests.some((r) => r.path === "/audio/transcribe"), "the upload to arrive")
      controller.abort("the user recorded again")
      const result = await transcribing
      expect(result.ok ? undefined : result.error).toBeInstanceOf(AbortError)
      expect(result.ok ? undefined : result.error).toMatchObject({ reason: "SignalAborted" })
    } finally {
      release()
      held = undefined
    }
    await expect(client.transcribe(webm(32))).resolves.toBe("heard 32 bytes")
  })

  it("a signal aborted while the upload is held aborts its request", async () => {
    const proxy = await holdingProxy(server())
    const client = makeClient(server(), { tamboUrl: proxy.url })
    const upload = proxy.holdRequest((request) => request.url === "/audio/transcribe")
    const controller = new AbortController()
    const transcribing = settle(client.transcribe(webm(64), { signal: controller.signal }))
    await upload.arrived
    controller.abort()
    expect(await transcribing).toMatchObject({ ok: false, error: { _tag: "AbortError", reason: "SignalAborted" } })
    await until(() => proxy.abandoned() === 1, "the request to be aborted")
  })

  it("a signal aborted before the call rejects with an AbortError (SignalAborted), and nothing is sent", async () => {
    const client = makeClient(server())
    const result = await settle(client.transcribe(webm(64), { signal: AbortSignal.abort() }))
    expect(result.ok ? undefined : result.error).toMatchObject({ _tag: "AbortError", reason: "SignalAborted" })
    expect(server().requests).toEqual([])
  })

  it("rejects audio it will not send with core's TranscriptionError", async () => {
    const client = makeClient(server())
    const result = await settle(client.transcribe(new Blob([], { type: "audio/webm" })))
    expect(result.ok).toBe(false)
    expect(result.ok ? undefined : result.error).toBeInstanceOf(TranscriptionError)
    expect(result.ok ? undefined : result.error.reason).toBe("EmptyAudio")
    expect(server().requests).toEqual([])
  })
})
