// `POST /audio/transcribe`: a multipart upload with one file in the field `file`, checked as the
// API checks it (present, not empty, at most 25 MB, an audio type it transcribes), answered with
// the transcript as a plain-text body. On top, the file must start as its format does: a test
// that sends something other than recorded audio learns it here.
import type { RecordedAudio } from "../TestServer.js"
import { sendJson, type RequestContext } from "./http.js"
import { badRequest } from "./httpError.js"
import type { ServerState } from "./state.js"

const MAX_BYTES = 25 * 1024 * 1024

const ALLOWED = [
  "audio/mpeg",
  "audio/mp3",
  "audio/wav",
  "audio/wave",
  "audio/mp4",
  "audio/m4a",
  "audio/x-m4a",
  "audio/webm",
  "video/mp4"
]

const startsWith = (bytes: Uint8Array, prefix: ReadonlyArray<number>): boolean =>
  prefix.every((byte, index) => bytes[index] === byte)

/** The first bytes each checked format starts with: WebM's EBML header, RIFF, an MP3 frame or ID3 tag. */
const looksLike = (type: string, bytes: Uint8Array): boolean => {
  switch (type) {
    case "audio/webm":
      return startsWith(bytes, [0x1a, 0x45, 0xdf, 0xa3])
    case "audio/wav":
    case "audio/wave":
      return startsWith(bytes, [0x52, 0x49, 0x46, 0x46])
    case "audio/mpeg":
    case "audio/mp3":
      return startsWith(bytes, [0x49, 0x44, 0x33]) || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)
    default:
      return true
  }
}

const readFile = async (ctx: RequestContext): Promise<RecordedAudio> => {
  const contentType = ctx.req.headers["content-type"] ?? ""
  if (!contentType.toLowerCase().startsWith("multipart/form-data")) throw badRequest("Multipart: Boundary not found")
  let form: FormData
  try {
    form = await new Request("http://localhost/", {
      method: "POST",
      headers: { "content-type": contentType },
      body: new Uint8Array(ctx.rawBytes)
    }).formData()
  } catch {
    throw badRequest("Multipart: Unexpected end of form")
  }
  const file = form.get("file")
  if (file === null || typeof file === "string") throw badRequest("File is required")
  return {
    filename: file.name,
    type: file.type,
    bytes: new Uint8Array(await file.arrayBuffer())
  }
}

export const handleTranscribe = async (state: ServerState, ctx: RequestContext): Promise<void> => {
  const audio = await readFile(ctx)
  if (audio.bytes.length > MAX_BYTES) throw badRequest(`File too large. Maximum size allowed is 25MB`)
  if (!ALLOWED.includes(audio.type)) {
    throw badRequest(`Unsupported file type: ${audio.type || "unknown"}. Supported types: ${ALLOWED.join(", ")}`)
  }
  if (audio.bytes.length === 0) throw badRequest("Failed to transcribe audio: Invalid audio data - buffer is empty")
  if (!looksLike(audio.type, audio.bytes)) {
    throw badRequest(`Failed to transcribe audio: the file is not ${audio.type} audio`)
  }
  state.transcriptions.push(audio)
  const transcript = await state.transcribe(audio)
  if (transcript.trim() === "") {
    throw badRequest("Failed to transcribe audio: Empty transcription received - audio might be silent or invalid")
  }
  // The API returns the string from its controller: the body is the transcript itself.
  sendJson(ctx.res, 201, transcript)
}
