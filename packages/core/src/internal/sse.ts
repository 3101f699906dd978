/**
 * A chunk-level Server-Sent Events decoder: bytes in, the `data` of each
 * complete event out, with no per-event promise or generator hop.
 *
 * It follows the WHATWG rules that matter for a JSON event stream: lines end
 * in LF, CRLF or CR; `data:` lines of one event are joined with LF; an empty
 * line dispatches; comments (`:`) and other fields are ignored.
 */

export interface SseDecoder {
  /** Feeds bytes; calls `onData` once per complete event, in order. */
  readonly push: (bytes: Uint8Array, onData: (data: string) => void) => void
  /** Ends the input; an event missing its blank line is returned as `pending`, not dispatched. */
  readonly end: () => { readonly pending: string | undefined }
}

export const makeSseDecoder = (): SseDecoder => {
  const text = new TextDecoder("utf-8")
  let buffer = ""
  // Data lines of the event being read; undefined while the event has none.
  let data: string | undefined
  // A CR at the end of the previous chunk: a following LF belongs to it.
  let skipLeadingLf = false

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
  }

  const push = (bytes: Uint8Array, onData: (data: string) => void) => {
    let input = text.decode(bytes, { stream: true })
    // Kept across reads that decode to nothing (empty reads, a BOM alone): a CRLF is one
    // line end however many reads split it.
    if (skipLeadingLf && input.length > 0) {
      skipLeadingLf = false
      if (input.charCodeAt(0) === 10) input = input.slice(1)
    }
    // What is left of earlier chunks holds no line end: scan only the new text.
    const scanned = buffer.length
    buffer = scanned === 0 ? input : buffer + input
    let position = 0
    const length = buffer.length
    // Found once and refreshed only when passed: a stream without CR costs one scan.
    let cr = buffer.indexOf("\r", scanned)
    while (position < length) {
      const lf = buffer.indexOf("\n", position < scanned ? scanned : position)
      if (cr !== -1 && cr < position) cr = buffer.indexOf("\r", position)
      let end: number
      let next: number
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        end = cr
        if (cr + 1 < length) {
          next = buffer.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1
        } else {
          next = cr + 1
          skipLeadingLf = true
        }
      } else if (lf !== -1) {
        // The common frame, `data: <json>` then a blank line: dispatched at once, one scan.
        if (data === undefined && buffer.charCodeAt(lf + 1) === 10 && buffer.startsWith("data:", position)) {
          const start = buffer.charCodeAt(position + 5) === 32 /* space */ ? position + 6 : position + 5
          position = lf + 2
          onData(buffer.slice(start < lf ? start : lf, lf))
          continue
        }
        end = lf
        next = lf + 1
      } else {
        break
      }
      line(buffer, position, end, onData)
      position = next
    }
    // What is left is at most a partial line; a plain slice would keep the whole chunk
    // alive (V8 shares the parent string) for as long as the stream waits: copied.
    buffer = position === 0 ? buffer : ("_" + buffer.slice(position)).slice(1)
  }

  const end = () => {
    const remaining = buffer + text.decode()
    buffer = ""
    // An unterminated last line still counts as a line of the pending event.
    if (remaining.length > 0) line(remaining, 0, remaining.length, () => {})
    const pending = data
    data = undefined
    return { pending }
  }

  return { push, end }
}
