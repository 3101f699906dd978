/**
 * `useTamboVoice`: record speech with the browser's `MediaRecorder` and
 * transcribe it through the Tambo API (`client.transcribe`).
 *
 * @since 0.2.0
 */
import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from "react"
import { useTamboContext } from "./internal/context.js"

/**
 * What {@link useTamboVoice} returns.
 *
 * @since 0.2.0
 * @category Models
 */
export interface UseTamboVoiceReturn {
  /**
   * Asks for the microphone (the first time) and starts recording; clears
   * the previous transcript and errors, and drops a transcription still in
   * flight. Does nothing while recording.
   */
  readonly startRecording: () => void
  /** Stops recording and sends what was recorded for transcription. */
  readonly stopRecording: () => void
  readonly isRecording: boolean
  /** The recording is being transcribed. */
  readonly isTranscribing: boolean
  /** The transcript of the last recording, once it arrived. */
  readonly transcript: string | null
  /** Why the last transcription failed (the error's message). */
  readonly transcriptionError: string | null
  /** Why the microphone could not be used: refused, absent, or no `MediaRecorder` in this browser. */
  readonly mediaAccessError: string | null
  /** Whether this browser can record at all (`MediaRecorder` and `getUserMedia`). */
  readonly isSupported: boolean
}

type Phase = "idle" | "starting" | "recording" | "transcribing"

interface VoiceState {
  readonly phase: Phase
  readonly transcript: string | null
  readonly transcriptionError: string | null
  readonly mediaAccessError: string | null
}

const INITIAL: VoiceState = { phase: "idle", transcript: null, transcriptionError: null, mediaAccessError: null }

/** The container the API transcribes and browsers record: WebM where the browser offers it. */
const PREFERRED_TYPE = "audio/webm"

const isSupported = (): boolean =>
  typeof MediaRecorder !== "undefined" &&
  typeof navigator !== "undefined" &&
  typeof navigator.mediaDevices?.getUserMedia === "function"

/** Support does not change while the page lives; the server renders "not supported". */
const neverChanges = () => () => {}
const notOnServer = () => false

const messageOf = (error: unknown): string =>
  error instanceof Error ? (error.message === "" ? error.name : error.message) : String(error)

/** What is live while a recording runs: released when it stops, fails or the component unmounts. */
interface Session {
  readonly id: number
  recorder: MediaRecorder | undefined
  stream: MediaStream | undefined
  /** Stopped before the microphone answered: the recording never starts. */
  stopped: boolean
  /** Recorded and sent: a new recording may start, and drops this one's transcript. */
  transcribing: boolean
  /** Aborts the transcription's request: a new recording, or unmounting, drops it. */
  readonly transcription: AbortController
}

const release = (session: Session) => {
  for (const track of session.stream?.getTracks() ?? []) track.stop()
  session.stream = undefined
}

/**
 * Records speech and transcribes it, as `@tambo-ai/react`'s hook does:
 * `startRecording()` asks for the microphone and records; `stopRecording()`
 * ends the recording and sends it to the API; `transcript` holds the text
 * once it arrived. A new recording, or unmounting, drops a transcription
 * still in flight and aborts its request; the microphone is released as
 * soon as a recording ends.
 *
 * @example
 * ```tsx
 * function VoiceButton() {
 *   const { startRecording, stopRecording, isRecording, transcript } = useTamboVoice()
 *   const { setValue } = useTamboThreadInput()
 *   useEffect(() => { if (transcript !== null) setValue(transcript) }, [transcript, setValue])
 *   return <button onClick={isRecording ? stopRecording : startRecording}>{isRecording ? "Stop" : "🎤"}</button>
 * }
 * ```
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useTamboVoice = (): UseTamboVoiceReturn => {
  const { handle } = useTamboContext("useTamboVoice")
  const [state, setState] = useState<VoiceState>(INITIAL)
  const session = useRef<Session | undefined>(undefined)
  const nextId = useRef(0)
  const supported = useSyncExternalStore(neverChanges, isSupported, notOnServer)

  /** The recorder could not be made or started (an inactive stream, say): the microphone goes, the error shows. */
  const failToStart = (current: Session, error: unknown) => {
    release(current)
    if (session.current !== current) return
    session.current = undefined
    setState({ ...INITIAL, mediaAccessError: messageOf(error) })
  }

  const startRecording = useCallback(() => {
    if (session.current !== undefined && !session.current.transcribing) return
    if (!isSupported()) {
      setState({ ...INITIAL, mediaAccessError: "This browser cannot record audio (no MediaRecorder or microphone access)" })
      return
    }
    // The last recording's transcription, still on its way, is dropped: its request too.
    session.current?.transcription.abort()
    const current: Session = {
      id: ++nextId.current,
      recorder: undefined,
      stream: undefined,
      stopped: false,
      transcribing: false,
      transcription: new AbortController()
    }
    session.current = current
    const isCurrent = () => session.current === current
    setState({ ...INITIAL, phase: "starting" })
    navigator.mediaDevices.getUserMedia({ audio: true }).then(
      (stream) => {
        current.stream = stream
        if (!isCurrent() || current.stopped) {
          release(current)
          if (isCurrent()) {
            session.current = undefined
            setState(INITIAL)
          }
          return
        }
        let recorder: MediaRecorder
        try {
          recorder = new MediaRecorder(
            stream,
            MediaRecorder.isTypeSupported(PREFERRED_TYPE) ? { mimeType: PREFERRED_TYPE } : undefined
          )
        } catch (error) {
          return failToStart(current, error)
        }
        current.recorder = recorder
        const chunks: Array<Blob> = []
        recorder.addEventListener("dataavailable", (event) => {
          if (event.data.size > 0) chunks.push(event.data)
        })
        recorder.addEventListener("stop", () => {
          release(current)
          if (!isCurrent()) return
          current.transcribing = true
          setState((previous) => ({ ...previous, phase: "transcribing" }))
          const audio = new Blob(chunks, { type: recorder.mimeType || PREFERRED_TYPE })
          handle.client().transcribe(audio, { signal: current.transcription.signal }).then(
            (transcript) => {
              if (!isCurrent()) return
              session.current = undefined
              setState({ ...INITIAL, transcript })
            },
            (error: unknown) => {
              if (!isCurrent()) return
              session.current = undefined
              setState({ ...INITIAL, transcriptionError: messageOf(error) })
            }
          )
        })
        try {
          recorder.start()
        } catch (error) {
          return failToStart(current, error)
        }
        setState((previous) => ({ ...previous, phase: "recording" }))
      },
      (error: unknown) => {
        if (!isCurrent()) return
        session.current = undefined
        setState({ ...INITIAL, mediaAccessError: messageOf(error) })
      }
    )
  }, [handle])

  const stopRecording = useCallback(() => {
    const current = session.current
    if (current === undefined) return
    current.stopped = true
    if (current.recorder?.state === "recording") current.recorder.stop()
  }, [])

  // Unmounting drops the session: the microphone is let go, a late transcript is ignored.
  useEffect(() => () => {
    const current = session.current
    session.current = undefined
    if (current === undefined) return
    current.stopped = true
    if (current.recorder?.state === "recording") current.recorder.stop()
    release(current)
    current.transcription.abort()
  }, [])

  return useMemo(() => ({
    startRecording,
    stopRecording,
    isRecording: state.phase === "recording" || state.phase === "starting",
    isTranscribing: state.phase === "transcribing",
    transcript: state.transcript,
    transcriptionError: state.transcriptionError,
    mediaAccessError: state.mediaAccessError,
    isSupported: supported
  }), [state, startRecording, stopRecording, supported])
}
