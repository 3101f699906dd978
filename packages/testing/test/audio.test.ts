// POST /audio/transcribe through the real SDK (`beta.audio.transcribe`) and plain fetch.
import TamboAI from "@tambo-ai/typescript-sdk"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../src/index.js"
import { client } from "./helpers.js"

let server: TestServer
let sdk: TamboAI
beforeEach(async () => {
  server = await startTestServer({ transcribe: (audio) => `${audio.bytes.length} bytes of ${audio.type}` })
  sdk = client(server)
})
afterEach(() => server.close())

const webm = (size = 32) => {
  const bytes = new Uint8Array(size)
  bytes.set([0x1a, 0x45, 0xdf, 0xa3])
  return bytes
}

/** Posts a multipart form as a browser would; returns the status and body text. */
const post = async (form: FormData | undefined, headers: Record<string, string> = {}) => {
  const response = await fetch(`${server.url}/audio/transcribe`, {
    method: "POST",
    headers: { "x-api-key": server.apiKey, ...headers },
    ...(form === undefined ? {} : { body: form })
  })
  return { status: response.status, text: await response.text() }
}

const formWith = (bytes: Uint8Array<ArrayBuffer>, type: string, name = "recording.webm") => {
  const form = new FormData()
  form.append("file", new Blob([bytes], { type }), name)
  return form
}

describe("POST /audio/transcribe", () => {
  it("answers the SDK's beta.audio.transcribe with the transcript, and records the file", async () => {
    const file = new File([webm(64)], "note.webm", { type: "audio/webm" })
    const transcript = await sdk.beta.audio.transcribe({ file })
    expect(transcript).toBe("64 bytes of audio/webm")
    expect(server.transcriptions.map(({ filename, type, bytes }) => ({ filename, type, size: bytes.length })))
      .toEqual([{ filename: "note.webm", type: "audio/webm", size: 64 }])
    server.reset()
    expect(server.transcriptions).toEqual([])
  })

  it("refuses what the API refuses, with its 400s", async () => {
    const noFile = new FormData()
    noFile.append("other", "x")
    expect(await post(noFile)).toMatchObject({ status: 400, text: expect.stringContaining("File is required") })
    expect(await post(undefined, { "content-type": "application/json" })).toMatchObject({ status: 400 })
    expect(await post(formWith(webm(), "text/plain"))).toMatchObject({
      status: 400,
      text: expect.stringContaining("Unsupported file type: text/plain")
    })
    // A MediaRecorder's own type, parameters included, is not one the API lists.
    expect((await post(formWith(webm(), "audio/webm;codecs=opus"))).status).toBe(400)
    expect(await post(formWith(new Uint8Array(), "audio/webm"))).toMatchObject({
      status: 400,
      text: expect.stringContaining("buffer is empty")
    })
    expect(await post(formWith(new TextEncoder().encode("hello"), "audio/webm"))).toMatchObject({
      status: 400,
      text: expect.stringContaining("not audio/webm audio")
    })
    expect(server.transcriptions).toEqual([])
  })

  it("checks only the API key", async () => {
    const response = await fetch(`${server.url}/audio/transcribe`, { method: "POST", body: formWith(webm(), "audio/webm") })
    expect(response.status).toBe(403)
  })

  it("an empty transcript is the API's 400 for silent audio", async () => {
    await server.close()
    server = await startTestServer({ transcribe: () => "" })
    expect(await post(formWith(webm(), "audio/webm"))).toMatchObject({
      status: 400,
      text: expect.stringContaining("Empty transcription")
    })
  })
})
