import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { createServer, type RequestListener, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import * as Tambo from "../src/Tambo.js"
import * as Transcription from "../src/Transcription.js"
import { tamboLayer, useServer } from "./helpers.js"

let transcript = "What is the weather in Paris?"
const server = useServer({ transcribe: () => transcript })

/** The first bytes of a WebM file (the EBML header's id), then some payload. */
const webm = (size = 64) => {
  const bytes = new Uint8Array(size)
  bytes.set([0x1a, 0x45, 0xdf, 0xa3])
  for (let i = 4; i < size; i++) bytes[i] = i % 251
  return bytes
}

const transcribe = (audio: Blob, options?: Transcription.TranscribeOptions, layer?: ReturnType<typeof tamboLayer>) =>
  Transcription.transcribe(audio, options).pipe(Effect.provide(layer ?? tamboLayer(server())))

const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.flip(effect)

/** A server of our own on loopback for the scope: its URL. */
const listen = (handler: RequestListener) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.async<Server>((resume) => {
        const server = createServer(handler)
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) => Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
    ),
    (server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  )

describe("Transcription.transcribe", () => {
  it.live("uploads the audio as multipart field `file` and returns the server's transcript", () =>
    Effect.gen(function* () {
      transcript = "Hello from the microphone"
      const bytes = webm(300)
      // What a MediaRecorder says: the type has a codecs parameter, which the API would refuse.
      const text = yield* transcribe(new Blob([bytes], { type: "audio/webm;codecs=opus" }))
      expect(text).toBe("Hello from the microphone")
      const [received] = server().transcriptions
      expect(received?.filename).toBe("recording.webm")
      expect(received?.type).toBe("audio/webm")
      expect([...received!.bytes]).toEqual([...bytes])
      const request = server().requests.find((r) => r.path === "/audio/transcribe")
      expect(request?.method).toBe("POST")
      expect(request?.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/)
      expect(request?.headers["x-api-key"]).toBe(server().apiKey)
    }))

  it.live("sends a File under its own name, and a given filename wins", () =>
    Effect.gen(function* () {
      transcript = "named"
      yield* transcribe(new File([webm()], "memo.webm", { type: "audio/webm" }))
      yield* transcribe(new Blob([webm()], { type: "audio/webm" }), { filename: "note.webm" })
      expect(server().transcriptions.map((audio) => audio.filename)).toEqual(["memo.webm", "note.webm"])
    }))

  it.live("a blob without a type is sent as the type its file name implies", () =>
    Effect.gen(function* () {
      transcript = "typed by name"
      const text = yield* transcribe(new Blob([webm()]), { filename: "clip.webm" })
      expect(text).toBe("typed by name")
      expect(server().transcriptions[0]?.type).toBe("audio/webm")
    }))

  it.live("empty audio is a TranscriptionError (EmptyAudio), and nothing is sent", () =>
    Effect.gen(function* () {
      const error = yield* failureOf(transcribe(new Blob([], { type: "audio/webm" })))
      expect(error._tag).toBe("TranscriptionError")
      expect(error._tag === "TranscriptionError" && error.reason).toBe("EmptyAudio")
      expect(server().requests).toEqual([])
    }))

  it.live("a type the API does not transcribe is a TranscriptionError (UnsupportedType), and nothing is sent", () =>
    Effect.gen(function* () {
      const error = yield* failureOf(transcribe(new Blob(["hello"], { type: "text/plain" })))
      expect(error._tag === "TranscriptionError" && error.reason).toBe("UnsupportedType")
      expect(error.message).toContain("text/plain")
      const untyped = yield* failureOf(transcribe(new Blob(["hello"])))
      expect(untyped._tag === "TranscriptionError" && untyped.reason).toBe("UnsupportedType")
      expect(server().requests).toEqual([])
    }))

  it("audio over 25 MB is a TranscriptionError (TooLarge)", () => {
    const big = new Blob([new Uint8Array(Transcription.MAX_AUDIO_BYTES + 1)], { type: "audio/webm" })
    const result = Transcription.validate(big)
    expect(Either.isLeft(result) && result.left.reason).toBe("TooLarge")
    expect(Transcription.validate(new Blob([webm()], { type: "audio/webm;codecs=opus" }))).toEqual(Either.right("audio/webm"))
  })

  it.live("audio the server cannot read is its 400, an ApiError (BadRequest) with its message", () =>
    Effect.gen(function* () {
      const error = yield* failureOf(transcribe(new Blob(["not audio at all"], { type: "audio/webm" })))
      expect(error._tag).toBe("ApiError")
      expect(error._tag === "ApiError" && error.status).toBe(400)
      expect(error.message).toContain("not audio/webm audio")
      expect(server().transcriptions).toEqual([])
    }))

  it.live("silent audio (the server's empty transcription) is its 400", () =>
    Effect.gen(function* () {
      transcript = "  "
      const error = yield* failureOf(transcribe(new Blob([webm()], { type: "audio/webm" })))
      expect(error._tag === "ApiError" && error.reason).toBe("BadRequest")
      expect(error.message).toContain("Empty transcription")
    }))

  it.live("a wrong API key is the API's 403", () =>
    Effect.gen(function* () {
      const error = yield* failureOf(
        transcribe(new Blob([webm()], { type: "audio/webm" }), {}, tamboLayer(server(), { apiKey: "wrong" }))
      )
      expect(error._tag === "ApiError" && error.status).toBe(403)
    }))

  it.live("a JSON string answer is taken; an empty 2xx answer is a TranscriptionError (EmptyTranscript)", () =>
    Effect.gen(function* () {
      // A server of our own: the testing server never answers an empty transcript with a 2xx.
      let answer: { readonly type: string; readonly body: string } = { type: "application/json", body: "\"from json\"" }
      const url = yield* listen((_request, response) => {
        _request.resume()
        _request.on("end", () => response.writeHead(201, { "content-type": answer.type }).end(answer.body))
      })
      const layer = Tambo.layer({ apiKey: "k", tamboUrl: url, userKey: "user-1", maxRetries: 0 })
      const audio = new Blob([webm()], { type: "audio/webm" })
      expect(yield* transcribe(audio, {}, layer)).toBe("from json")
      answer = { type: "text/html; charset=utf-8", body: "  \n" }
      const error = yield* failureOf(transcribe(audio, {}, layer))
      expect(error._tag === "TranscriptionError" && error.reason).toBe("EmptyTranscript")
      answer = { type: "application/json", body: "{\"text\":1}" }
      const invalid = yield* failureOf(transcribe(audio, {}, layer))
      expect(invalid._tag === "DecodeError" && invalid.reason).toBe("InvalidResponse")
    }).pipe(Effect.scoped))

  it.live("a redirect to another origin is a TransportError (Redirect) naming it without its query, not followed", () =>
    Effect.gen(function* () {
      let followed = false
      const elsewhere = yield* listen((request, response) => {
        followed = true
        request.resume()
        response.writeHead(200, { "content-type": "text/plain" }).end("not this one")
      })
      const url = yield* listen((request, response) => {
        request.resume()
        response.writeHead(307, { location: `${elsewhere}/audio/transcribe?token=secret` }).end()
      })
      const layer = Tambo.layer({ apiKey: "k", tamboUrl: url, userKey: "user-1", maxRetries: 0 })
      const error = yield* failureOf(transcribe(new Blob([webm()], { type: "audio/webm" }), {}, layer))
      expect(error._tag === "TransportError" && error.reason).toBe("Redirect")
      expect(error._tag === "TransportError" && error.method).toBe("POST")
      expect(error._tag === "TransportError" && error.status).toBe(307)
      expect(error._tag === "TransportError" && error.location).toBe(`${elsewhere}/audio/transcribe`)
      expect(followed).toBe(false)
    }).pipe(Effect.scoped))
})
