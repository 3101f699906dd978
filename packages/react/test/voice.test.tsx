// @vitest-environment happy-dom
import { act, renderHook, waitFor } from "@testing-library/react"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { useTamboVoice } from "../src/index.js"
import { connection, sleep, until, useServer, wrapperFor } from "./helpers.js"

/** What a transcription waits for before it answers: at once, unless a test holds it. */
let held: Promise<void> = Promise.resolve()
/** Transcriptions the server answered. */
let answered = 0
const server = useServer({
  transcribe: async (audio) => {
    await held
    answered++
    return `You said ${audio.bytes.length} bytes`
  }
})

// happy-dom has no microphone: a stand-in for the browser's recorder, which "records" the bytes
// given to it. (The real MediaRecorder and a fake microphone are in the Chromium test.)
let recorded: Uint8Array<ArrayBuffer> = new Uint8Array()
const tracks: Array<{ stopped: boolean }> = []

const webm = (size: number) => {
  const bytes = new Uint8Array(size)
  bytes.set([0x1a, 0x45, 0xdf, 0xa3])
  return bytes
}

class StandInRecorder extends EventTarget {
  static isTypeSupported = (type: string) => type === "audio/webm"
  state: "inactive" | "recording" = "inactive"
  readonly mimeType: string
  constructor(_stream: unknown, options?: { mimeType?: string }) {
    super()
    this.mimeType = `${options?.mimeType ?? "audio/ogg"};codecs=opus`
  }
  start() {
    this.state = "recording"
  }
  stop() {
    this.state = "inactive"
    const data = new Blob([recorded], { type: this.mimeType })
    this.dispatchEvent(Object.assign(new Event("dataavailable"), { data }))
    this.dispatchEvent(new Event("stop"))
  }
}

let getUserMedia: (constraints: unknown) => Promise<unknown>

beforeEach(() => {
  tracks.length = 0
  recorded = webm(200)
  getUserMedia = async () => {
    const track = { stopped: false, stop: () => void (track.stopped = true) }
    tracks.push(track)
    return { getTracks: () => [track] }
  }
  vi.stubGlobal("MediaRecorder", StandInRecorder)
  Object.defineProperty(navigator, "mediaDevices", {
    configurable: true,
    value: { getUserMedia: (constraints: unknown) => getUserMedia(constraints) }
  })
})

afterEach(() => {
  vi.unstubAllGlobals()
})

describe("useTamboVoice", () => {
  it("records, stops, sends the audio for transcription and holds the transcript", async () => {
    const { result } = renderHook(useTamboVoice, { wrapper: wrapperFor(connection(server())) })
    expect(result.current.isSupported).toBe(true)
    expect(result.current.isRecording).toBe(false)
    act(() => result.current.startRecording())
    expect(result.current.isRecording).toBe(true)
    await waitFor(() => expect(tracks).toHaveLength(1))

    act(() => result.current.stopRecording())
    await waitFor(() => expect(result.current.transcript).toBe("You said 200 bytes"))
    expect(result.current.isRecording).toBe(false)
    expect(result.current.isTranscribing).toBe(false)
    expect(result.current.transcriptionError).toBeNull()
    // The microphone is let go once the recording ended.
    expect(tracks[0]?.stopped).toBe(true)
    const [audio] = server().transcriptions
    expect(audio?.type).toBe("audio/webm")
    expect([...audio!.bytes]).toEqual([...recorded])

    // A new recording clears the last transcript.
    act(() => result.current.startRecording())
    expect(result.current.transcript).toBeNull()
  })

  it("reports transcribing between the recording's end and the transcript", async () => {
    const { result } = renderHook(useTamboVoice, { wrapper: wrapperFor(connection(server())) })
    act(() => result.current.startRecording())
    await waitFor(() => expect(tracks).toHaveLength(1))
    const phases: Array<string> = []
    act(() => result.current.stopRecording())
    phases.push(result.current.isTranscribing ? "transcribing" : "other")
    await waitFor(() => expect(result.current.transcript).not.toBeNull())
    expect(phases).toEqual(["transcribing"])
  })

  it("a refused microphone is a mediaAccessError, and nothing is sent", async () => {
    getUserMedia = () => Promise.reject(Object.assign(new Error("Permission denied"), { name: "NotAllowedError" }))
    const { result } = renderHook(useTamboVoice, { wrapper: wrapperFor(connection(server())) })
    act(() => result.current.startRecording())
    await waitFor(() => expect(result.current.mediaAccessError).toBe("Permission denied"))
    expect(result.current.isRecording).toBe(false)
    expect(server().requests).toEqual([])
  })

  it("without MediaRecorder it is not supported and says so when asked to record", () => {
    vi.stubGlobal("MediaRecorder", undefined)
    const { result } = renderHook(useTamboVoice, { wrapper: wrapperFor(connection(server())) })
    expect(result.current.isSupported).toBe(false)
    act(() => result.current.startRecording())
    expect(result.current.mediaAccessError).toMatch(/cannot record/)
    expect(result.current.isRecording).toBe(false)
  })

  it("a failed transcription is a transcriptionError with the API's message", async () => {
    recorded = new TextEncoder().encode("not a recording")
    const { result } = renderHook(useTamboVoice, { wrapper: wrapperFor(connection(server())) })
    act(() => result.current.startRecording())
    await waitFor(() => expect(tracks).toHaveLength(1))
    act(() => result.current.stopRecording())
    await waitFor(() => expect(result.current.transcriptionError).toContain("not audio/webm audio"))
    expect(result.current.transcript).toBeNull()
    expect(result.current.isTranscribing).toBe(false)
  })

  it("nothing recorded is the client's EmptyAudio error, and nothing is sent", async () => {
    recorded = new Uint8Array()
    const { result } = renderHook(useTamboVoice, { wrapper: wrapperFor(connection(server())) })
    act(() => result.current.startRecording())
    await waitFor(() => expect(tracks).toHaveLength(1))
    act(() => result.current.stopRecording())
    await waitFor(() => expect(result.current.transcriptionError).toMatch(/empty/))
    expect(server().requests).toEqual([])
  })

  it("stopping before the microphone answered records nothing and lets the microphone go", async () => {
    let grant!: () => void
    getUserMedia = () =>
      new Promise((resolve) => {
        grant = () => {
          const track = { stopped: false, stop: () => void (track.stopped = true) }
          tracks.push(track)
          resolve({ getTracks: () => [track] })
        }
      })
    const { result } = renderHook(useTamboVoice, { wrapper: wrapperFor(connection(server())) })
    act(() => result.current.startRecording())
    act(() => result.current.stopRecording())
    await act(async () => grant())
    await waitFor(() => expect(result.current.isRecording).toBe(false))
    expect(tracks[0]?.stopped).toBe(true)
    expect(server().requests).toEqual([])
  })

  it("unmounting while recording lets the microphone go and sends nothing", async () => {
    const { result, unmount } = renderHook(useTamboVoice, { wrapper: wrapperFor(connection(server())) })
    act(() => result.current.startRecording())
    await waitFor(() => expect(tracks).toHaveLength(1))
    unmount()
    expect(tracks[0]?.stopped).toBe(true)
    expect(server().requests).toEqual([])
  })

  it("a new recording can start while the last one is transcribing: the last one's transcript is dropped", async () => {
    let answer!: () => void
    held = new Promise<void>((resolve) => (answer = resolve))
    try {
      const { result } = renderHook(useTamboVoice, { wrapper: wrapperFor(connection(server())) })
      act(() => result.current.startRecording())
      await waitFor(() => expect(result.current.isRecording).toBe(true))
      act(() => result.current.stopRecording())
      await waitFor(() => expect(result.current.isTranscribing).toBe(true))
      act(() => result.current.startRecording())
      await waitFor(() => expect(tracks).toHaveLength(2))
      expect(result.current).toMatchObject({ isRecording: true, isTranscribing: false })
      // The first transcription answers during the second recording: nothing of it shows.
      const before = answered
      answer()
      await until(() => answered > before, "the first transcription answered")
      // Its answer reaches the client.
      await sleep(50)
      expect(result.current).toMatchObject({ isRecording: true, transcript: null })
      recorded = webm(300)
      act(() => result.current.stopRecording())
      await waitFor(() => expect(result.current.transcript).toBe("You said 300 bytes"))
      expect(tracks.map((track) => track.stopped)).toEqual([true, true])
    } finally {
      held = Promise.resolve()
    }
  })

  it("a recorder that cannot start is a mediaAccessError: the microphone goes, and recording can be tried again", async () => {
    class Failing extends StandInRecorder {
      override start() {
        throw Object.assign(new Error("The stream is inactive"), { name: "InvalidStateError" })
      }
    }
    vi.stubGlobal("MediaRecorder", Failing)
    const { result } = renderHook(useTamboVoice, { wrapper: wrapperFor(connection(server())) })
    act(() => result.current.startRecording())
    await waitFor(() => expect(result.current.mediaAccessError).toBe("The stream is inactive"))
    expect(result.current.isRecording).toBe(false)
    expect(tracks.map((track) => track.stopped)).toEqual([true])
    vi.stubGlobal("MediaRecorder", StandInRecorder)
    act(() => result.current.startRecording())
    await waitFor(() => expect(result.current.isRecording).toBe(true))
    expect(result.current.mediaAccessError).toBeNull()
  })
})
