import { describe, expect, it } from "vitest"
import { makeSseDecoder } from "../src/internal/transport/sse.js"

const encode = (s: string) => new TextEncoder().encode(s)

const decodeAll = (parts: ReadonlyArray<string | Uint8Array>) => {
  const decoder = makeSseDecoder()
  const out: Array<string> = []
  for (const part of parts) decoder.push(typeof part === "string" ? encode(part) : part, (d) => out.push(d))
  return { out, pending: decoder.end().pending }
}

describe("SSE decoder", () => {
  it.each([
    ["one frame", ["data: {\"a\":1}\n\n"], ["{\"a\":1}"]],
    ["two frames in one chunk", ["data: 1\n\ndata: 2\n\n"], ["1", "2"]],
    ["a frame split across chunks", ["da", "ta: hel", "lo\n", "\n"], ["hello"]],
    ["CRLF line ends", ["data: x\r\n\r\ndata: y\r\n\r\n"], ["x", "y"]],
    ["CR line ends", ["data: x\r\rdata: y\r\r"], ["x", "y"]],
    ["a CRLF split between chunks", ["data: x\r", "\n\r", "\n"], ["x"]],
    ["multi-line data joined with LF", ["data: a\ndata: b\n\n"], ["a\nb"]],
    ["comments and other fields ignored", [": ping\nevent: message\nid: 7\ndata: z\n\n"], ["z"]],
    ["no space after the colon", ["data:raw\n\n"], ["raw"]],
    ["a blank line without data dispatches nothing", ["\n\n\ndata: q\n\n"], ["q"]],
    ["data with a colon inside", ["data: {\"url\":\"http://x\"}\n\n"], ["{\"url\":\"http://x\"}"]]
  ] as const)("%s", (_name, parts, expected) => {
    expect(decodeAll(parts).out).toEqual(expected)
  })

  // A CRLF is one line end however the reads fall, empty reads included (WHATWG SSE). Two
  // data lines are used so that counting the LF as a second line end shows: it would dispatch
  // the first line alone.
  const bom = new Uint8Array([0xef, 0xbb, 0xbf])
  const withBom = (s: string) => new Uint8Array([...bom, ...encode(s)])
  it.each<readonly [string, ReadonlyArray<string | Uint8Array>, ReadonlyArray<string>, string | undefined]>([
    ["CR | LF", ["data: a\r", "\ndata: b\r\n\r\n"], ["a\nb"], undefined],
    ["CR | empty | LF", ["data: a\r", "", "\ndata: b\r\n\r\n"], ["a\nb"], undefined],
    ["CR | empty | empty | LF", ["data: a\r", "", "", "\ndata: b\r\n\r\n"], ["a\nb"], undefined],
    ["a blank CRLF line split by empty reads", ["data: a\r\n\r", "", "\ndata: b\r\n\r\n"], ["a", "b"], undefined],
    ["CR at the very end of the stream", ["data: a\r"], [], "a"],
    ["CR then an empty read at the very end", ["data: a\r", ""], [], "a"],
    ["CR CR at the very end dispatches", ["data: a\r", "", "\r"], ["a"], undefined],
    ["lone CRs as line ends", ["data: a\rdata: b\r\rdata: c\r", "\r"], ["a\nb", "c"], undefined],
    ["a lone CR then a line in the next read", ["data: a\r", "", "data: b\r\r"], ["a\nb"], undefined],
    ["a BOM, then CR | empty | LF", [withBom("data: a\r"), "", "\ndata: b\r\n\r\n"], ["a\nb"], undefined],
    ["a BOM split across reads, then CR | LF", [bom.slice(0, 1), new Uint8Array(0), bom.slice(1), "data: a\r", "\n\r\n"], ["a"], undefined],
    ["a BOM alone, then a CRLF line split by an empty read", [bom, "data: a\r", "", "\ndata: b\r\n\r\n"], ["a\nb"], undefined]
  ])("line ends across reads: %s", (_name, parts, expected, pending) => {
    const result = decodeAll(parts)
    expect(result.out).toEqual(expected)
    expect(result.pending).toBe(pending)
  })

  it("decodes a multi-byte character split across chunks", () => {
    const bytes = encode("data: héllo ✓\n\n")
    const cut = bytes.indexOf(0xc3) + 1
    expect(decodeAll([bytes.slice(0, cut), bytes.slice(cut)]).out).toEqual(["héllo ✓"])
  })

  it("reports an unterminated event at the end", () => {
    const result = decodeAll(["data: 1\n\ndata: partial"])
    expect(result.out).toEqual(["1"])
    expect(result.pending).toBe("partial")
  })

  it("keeps a large frame arriving in many small chunks intact", () => {
    const payload = "x".repeat(200_000)
    const frame = `data: ${payload}\n\n`
    const parts: Array<string> = []
    for (let i = 0; i < frame.length; i += 1000) parts.push(frame.slice(i, i + 1000))
    const { out } = decodeAll(parts)
    expect(out).toHaveLength(1)
    expect(out[0]).toHaveLength(200_000)
  })
})

describe("SSE decoder: frame size", () => {
  const decodeLimited = (parts: ReadonlyArray<string>, maxFrameLength: number) => {
    const decoder = makeSseDecoder({ maxFrameLength })
    const out: Array<string> = []
    let accepted = true
    for (const part of parts) if (accepted) accepted = decoder.push(encode(part), (d) => out.push(d))
    return { out, accepted }
  }
  const pieces = (text: string, size: number) => {
    const parts: Array<string> = []
    for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size))
    return parts
  }

  it.each([1, 7, 1000])("a frame at the limit decodes, one over stops the decoder (reads of %i)", (size) => {
    const at = `data: ${"a".repeat(100)}\n\n`
    const over = `data: ${"b".repeat(101)}\n\n`
    expect(decodeLimited(pieces(at + at, size), 100)).toEqual({ out: ["a".repeat(100), "a".repeat(100)], accepted: true })
    const result = decodeLimited(pieces(at + over + at, size), 100)
    expect(result.out).toEqual(["a".repeat(100)])
    expect(result.accepted).toBe(false)
  })

  it.each([1, 7, 1000])("a comment or another field longer than the limit is no event over it (reads of %i)", (size) => {
    const at = `data: ${"a".repeat(100)}\n\n`
    const padding = `: ${"p".repeat(300)}\n`
    const id = `id: ${"i".repeat(300)}\n`
    const split = `data: ${"a".repeat(50)}\n${padding}data: ${"b".repeat(49)}\n\n`
    expect(decodeLimited(pieces(padding + at + id + at + split, size), 100)).toEqual({
      out: ["a".repeat(100), "a".repeat(100), `${"a".repeat(50)}\n${"b".repeat(49)}`],
      accepted: true
    })
  })

  it("counts every data line of a frame", () => {
    const frame = `data: ${"a".repeat(60)}\ndata: ${"b".repeat(60)}\n\n`
    expect(decodeLimited([frame], 100).accepted).toBe(false)
    expect(decodeLimited([frame], 121)).toEqual({ out: [`${"a".repeat(60)}\n${"b".repeat(60)}`], accepted: true })
  })

  it("a 20 MB frame in 64 KB reads decodes whole", () => {
    const payload = "x".repeat(20 * 1024 * 1024)
    const { out } = decodeAll(pieces(`data: ${payload}\n\n`, 65_536))
    expect(out).toHaveLength(1)
    expect(out[0] === payload).toBe(true)
  })
})
