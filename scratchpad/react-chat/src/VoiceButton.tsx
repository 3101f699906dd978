/**
 * Voice input: the microphone button records (`useTamboVoice`), the API
 * transcribes, and the transcript fills the message input for the user to
 * check and send.
 */
import { useTamboThreadInput, useTamboVoice } from "@tambo-effect/react"
import { useEffect } from "react"

/** Drawn, not an emoji: not every system has an emoji font. */
const MicrophoneIcon = () => (
  <svg width="16" height="16" viewBox="0 0 16 16" aria-hidden="true">
    <rect x="5.5" y="1.5" width="5" height="8.5" rx="2.5" fill="currentColor" />
    <path d="M3.5 7.5a4.5 4.5 0 0 0 9 0M8 12v2.5" fill="none" stroke="currentColor" strokeWidth="1.4" strokeLinecap="round" />
  </svg>
)

export function VoiceButton({ disabled }: { readonly disabled: boolean }) {
  const { isRecording, isSupported, isTranscribing, mediaAccessError, startRecording, stopRecording, transcript, transcriptionError } =
    useTamboVoice()
  const { setValue } = useTamboThreadInput()
  useEffect(() => {
    if (transcript !== null) setValue(transcript)
  }, [transcript, setValue])
  const error = mediaAccessError ?? transcriptionError
  const label = isRecording ? "Stop recording" : isTranscribing ? "Transcribing…" : "Speak your message"
  return (
    <>
      <button
        type="button"
        className="voice"
        data-testid="voice"
        data-recording={String(isRecording)}
        data-transcribing={String(isTranscribing)}
        aria-pressed={isRecording}
        aria-label={label}
        title={isSupported ? label : "This browser cannot record audio"}
        disabled={!isSupported || isTranscribing || (disabled && !isRecording)}
        onClick={isRecording ? stopRecording : startRecording}
      >
        {isRecording ? <span className="voice-stop" /> : isTranscribing ? "…" : <MicrophoneIcon />}
      </button>
      {error === null ? null : <p className="error" data-testid="voice-error">{error}</p>}
    </>
  )
}
