/**
 * A chunk-level Server-Sent Events decoder: bytes in, the `data` of each
 * complete event out, with no per-event promise or generator hop.
 *
 * It follows the WHATWG rules that matter for a JSON event stream: lines end
 * in LF, CRLF or CR; `data:` lines of one event are joined with LF; an empty
 * line dispatches; comments (`:`) and other fields are ignored.
 *
 * Work is linear in the bytes: each read is scanned once, and a line that
 * spans reads is kept as its pieces, joined once when it ends.
 */

export interface SseDecoder {
  /**
   * Feeds bytes; calls `onData` once per complete event, in order. Returns
   * `false` once the event being read is longer than `maxFrameLength`: the
   * decoder then holds nothing more and ignores what it is fed.
   */
  readonly push: (bytes: Uint8Array, onData: (data: string) => void) => boolean
  /** Ends the input; an event missing its blank line is returned as `pending`, not dispatched. */
  readonly end: () => { readonly pending: string | undefined }
  /** The first characters of the event that went over the limit (for an error message). */
  readonly overLimitPrefix: () => string
}

const PREFIX_LENGTH = 64
// A line still being read is its data plus at most `data: `: checked against the limit plus
// this, and exactly once the line ends.
const FIELD_LENGTH = 6

export const makeSseDecoder = (options: { readonly maxFrameLength?: number } = {}): SseDecoder => {
  const max = options.maxFrameLength ?? Number.POSITIVE_INFINITY
  const text = new TextDecoder("utf-8")
  // The pieces of a line that has not ended yet, their total length, and its first characters.
  let pieces: Array<string> = []
  let piecesLength = 0
  let head = ""
  // Data lines of the event being read; undefined while the event has none.
  let data: string | undefined
  // A CR at the end of the previous chunk: a following LF belongs to it.
  let skipLeadingLf = false
  let overLimit = false
  let prefix = ""

  const exceeds = (length: number, start: string) => {
    if (length <= max) return false
    overLimit = true
    prefix = (data ?? start.replace(/^data: ?/, "")).slice(0, PREFIX_LENGTH)
    pieces = []
    piecesLength = 0
    data = undefined
    return true
  }

  // A line still being read counts against the limit only if it is a `data` line (or may still
  // be one): a long comment or other field is no part of an event.
  const pendingExceeds = (): boolean =>
    (head.length >= 5 ? head.startsWith("data:") : "data:".startsWith(head)) &&
    exceeds(piecesLength + (data?.length ?? 0) - FIELD_LENGTH, pieces[0]!)

  // A line is `text` from `start` to `end`: indices, so a line costs one slice (its data).
  const line = (text: string, start: number, end: number, onData: (data: string) => void) => {
    const length = end - start
    if (length === 0) {
      if (data !== undefined) {
        const dispatched = data
        data = undefined
        onData(dispatched)
      }
      return
    }
    // Only `data` matters here; other fields and comments (`:`) are ignored.
    if (length < 4 || !text.startsWith("data", start)) return
    let chunk: string
    if (length === 4) {
      chunk = ""
    } else if (text.charCodeAt(start + 4) === 58 /* : */) {
      chunk = text.slice(text.charCodeAt(start + 5) === 32 /* space */ && length > 5 ? start + 6 : start + 5, end)
    } else {
      return
    }
    data = data === undefined ? chunk : data + "\n" + chunk
    exceeds(data.length, chunk)
  }

  /** Where the line that ends at `end` (a CR or LF of `input`) is followed by the next one. */
  const after = (input: string, end: number): number => {
    if (input.charCodeAt(end) !== 13 /* CR */) return end + 1
    if (end + 1 < input.length) return input.charCodeAt(end + 1) === 10 ? end + 2 : end + 1
    skipLeadingLf = true
    return end + 1
  }

  const lineEnd = (input: string, from: number): number => {
    const lf = input.indexOf("\n", from)
    const cr = input.indexOf("\r", from)
    return cr !== -1 && (lf === -1 || cr < lf) ? cr : lf
  }

  const push = (bytes: Uint8Array, onData: (data: string) => void): boolean => {
    if (overLimit) return false
    let input = text.decode(bytes, { stream: true })
    // Kept across reads that decode to nothing (empty reads, a BOM alone): a CRLF is one
    // line end however many reads split it.
    if (skipLeadingLf && input.length > 0) {
      skipLeadingLf = false
      if (input.charCodeAt(0) === 10) input = input.slice(1)
    }
    const length = input.length
    let position = 0
    if (pieces.length > 0) {
      // The rest of a line begun in earlier reads.
      const end = lineEnd(input, 0)
      if (end === -1) {
        pieces.push(input)
        piecesLength += length
        if (head.length < 5) head = (head + input).slice(0, 5)
        return !pendingExceeds()
      }
      pieces.push(input.slice(0, end))
      const whole = pieces.join("")
      pieces = []
      piecesLength = 0
      head = ""
      line(whole, 0, whole.length, onData)
      if (overLimit) return false
      position = after(input, end)
    }
    // Each found once and refreshed only when passed: a read is scanned once for each.
    let cr = input.indexOf("\r", position)
    let lf = input.indexOf("\n", position)
    while (position < length) {
      if (lf !== -1 && lf < position) lf = input.indexOf("\n", position)
      if (cr !== -1 && cr < position) cr = input.indexOf("\r", position)
      let end: number
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        end = cr
      } else if (lf !== -1) {
        // The common frame, `data: <json>` then a blank line: dispatched at once, one scan.
        if (data === undefined && input.charCodeAt(lf + 1) === 10 && input.startsWith("data:", position)) {
          const start = input.charCodeAt(position + 5) === 32 /* space */ ? position + 6 : position + 5
          if (lf - start > max) return !exceeds(lf - start, input.slice(start, start + PREFIX_LENGTH))
          position = lf + 2
          onData(input.slice(start < lf ? start : lf, lf))
          continue
        }
        end = lf
      } else {
        break
      }
      line(input, position, end, onData)
      if (overLimit) return false
      position = after(input, end)
    }
    if (position < length) {
      // At most a partial line is left; a plain slice would keep the whole chunk alive (V8
      // shares the parent string) for as long as the stream waits: copied.
      const rest = position === 0 ? input : ("_" + input.slice(position)).slice(1)
      pieces.push(rest)
      piecesLength = rest.length
      head = rest.slice(0, 5)
      return !pendingExceeds()
    }
    return true
  }

  const end = () => {
    const remaining = pieces.join("") + text.decode()
    pieces = []
    piecesLength = 0
    head = ""
    // An unterminated last line still counts as a line of the pending event.
    if (remaining.length > 0 && !overLimit) line(remaining, 0, remaining.length, () => {})
    const pending = overLimit ? undefined : data
    data = undefined
    return { pending }
  }

  return { push, end, overLimitPrefix: () => prefix }
}
