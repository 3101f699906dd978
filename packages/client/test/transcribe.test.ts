import { describe, expect, it } from "vitest"
import { TranscriptionError } from "../src/index.js"
import { makeClient, settle, useServer } from "./helpers.js"

const server = useServer({ transcribe: (audio) => `heard ${audio.bytes.length} bytes` })

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

  it("rejects audio it will not send with core's TranscriptionError", async () => {
    const client = makeClient(server())
    const result = await settle(client.transcribe(new Blob([], { type: "audio/webm" })))
    expect(result.ok).toBe(false)
    expect(result.ok ? undefined : result.error).toBeInstanceOf(TranscriptionError)
    expect(result.ok ? undefined : result.error.reason).toBe("EmptyAudio")
    expect(server().requests).toEqual([])
  })
})
