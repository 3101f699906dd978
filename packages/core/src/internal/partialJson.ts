/**
 * Best-effort parsing of a JSON prefix, for tool arguments that are still
 * streaming.
 *
 * What an incomplete input yields:
 * - an unterminated string: the characters so far (a cut escape is dropped);
 * - an unterminated object or array: the members completed so far, plus a
 *   partial last value; a key without a value is left out;
 * - a cut number: its longest valid prefix (`1.` → 1, `-` → nothing);
 * - a cut literal: the literal it starts (`tr` → true, `n` → null).
 *
 * Input that stops being a JSON prefix ends the parse there, keeping what was
 * built; trailing text after a complete value is ignored. Never throws, runs
 * in linear time without recursion (nesting depth cannot overflow the stack),
 * and returns `undefined` when nothing could be parsed.
 *
 * @since 0.1.0
 */

type Frame =
  | { readonly kind: "array"; readonly value: Array<unknown> }
  | { readonly kind: "object"; readonly value: Record<string, unknown>; key: string | undefined }

/** A string token: its decoded text, and whether the closing quote was seen. */
interface StringToken {
  readonly text: string
  readonly complete: boolean
  /** Set when the string ended at an invalid escape: the parse stops there. */
  readonly invalid: boolean
  readonly end: number
}

const isWhitespace = (code: number): boolean => code === 32 || code === 10 || code === 13 || code === 9

const isDigit = (code: number): boolean => code >= 48 && code <= 57

const simpleEscapes: Readonly<Record<string, string>> = {
  "\"": "\"",
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t"
}

const hexPattern = /^[0-9a-fA-F]{4}$/

/** Reads a string whose opening quote is at `start`. */
const readString = (text: string, start: number): StringToken => {
  let pos = start + 1
  let out = ""
  // Each search resumes only once the cursor passed its last hit, so a long
  // string full of escapes is still scanned once.
  let quote = text.indexOf("\"", pos)
  let backslash = text.indexOf("\\", pos)
  for (;;) {
    if (quote !== -1 && quote < pos) quote = text.indexOf("\"", pos)
    if (backslash !== -1 && backslash < pos) backslash = text.indexOf("\\", pos)
    if (backslash !== -1 && (quote === -1 || backslash < quote)) {
      out += text.slice(pos, backslash)
      const kind = text.charAt(backslash + 1)
      if (kind === "") return { text: out, complete: false, invalid: false, end: text.length }
      if (kind === "u") {
        const hex = text.slice(backslash + 2, backslash + 6)
        if (hex.length < 4) {
          return hexPattern.test(hex.padEnd(4, "0"))
            ? { text: out, complete: false, invalid: false, end: text.length }
            : { text: out, complete: false, invalid: true, end: backslash }
        }
        if (!hexPattern.test(hex)) return { text: out, complete: false, invalid: true, end: backslash }
        out += String.fromCharCode(parseInt(hex, 16))
        pos = backslash + 6
        continue
      }
      const escaped = Object.hasOwn(simpleEscapes, kind) ? simpleEscapes[kind] : undefined
      if (escaped === undefined) return { text: out, complete: false, invalid: true, end: backslash }
      out += escaped
      pos = backslash + 2
      continue
    }
    if (quote === -1) return { text: out + text.slice(pos), complete: false, invalid: false, end: text.length }
    return { text: out + text.slice(pos, quote), complete: true, invalid: false, end: quote + 1 }
  }
}

const numberPattern = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y
const numberPrefixPattern = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?/y

/** Reads a number at `start`: its value (if any valid prefix) and where it ends. */
const readNumber = (text: string, start: number): { readonly value: number | undefined; readonly end: number; readonly atEnd: boolean } => {
  // Find the whole run of number-ish characters first, so a cut number at the
  // end of input can fall back to its longest valid prefix.
  let end = start
  while (end < text.length) {
    const c = text.charCodeAt(end)
    if (isDigit(c) || c === 45 || c === 43 || c === 46 || c === 101 || c === 69) end++
    else break
  }
  numberPattern.lastIndex = start
  const full = numberPattern.exec(text)
  if (full !== null && numberPattern.lastIndex === end) {
    return { value: Number(full[0]), end, atEnd: end === text.length }
  }
  if (end === text.length) {
    numberPrefixPattern.lastIndex = start
    const prefix = numberPrefixPattern.exec(text)
    return { value: prefix === null ? undefined : Number(prefix[0]), end, atEnd: true }
  }
  // Malformed in the middle of the input: not a JSON prefix.
  if (full !== null) return { value: Number(full[0]), end: numberPattern.lastIndex, atEnd: false }
  return { value: undefined, end: start, atEnd: false }
}

const literals: ReadonlyArray<readonly [string, unknown]> = [
  ["true", true],
  ["false", false],
  ["null", null]
]

const readLiteral = (text: string, start: number): { readonly value: unknown; readonly end: number; readonly found: boolean } => {
  for (const [word, value] of literals) {
    if (text.startsWith(word, start)) return { value, end: start + word.length, found: true }
    const rest = text.slice(start, start + word.length)
    if (start + rest.length === text.length && rest.length > 0 && word.startsWith(rest)) {
      return { value, end: text.length, found: true }
    }
  }
  return { value: undefined, end: start, found: false }
}

const setKey = (target: Record<string, unknown>, key: string, value: unknown): void => {
  // Plain assignment of "__proto__" would replace the prototype; JSON.parse
  // creates an own property instead, and so do we.
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  } else {
    target[key] = value
  }
}

/**
 * Parses a possibly incomplete JSON text into the best value it describes so
 * far; `undefined` when there is none.
 *
 * @since 0.1.0
 * @category Parsing
 */
export const parsePartialJson = (text: string): unknown => {
  if (typeof text !== "string") return undefined
  const length = text.length
  const stack: Array<Frame> = []
  let root: unknown = undefined
  let hasRoot = false
  let pos = 0

  const skip = (): void => {
    while (pos < length && isWhitespace(text.charCodeAt(pos))) pos++
  }

  /** Puts a value into the innermost container (or makes it the root). */
  const attach = (value: unknown): void => {
    const top = stack[stack.length - 1]
    if (top === undefined) {
      root = value
      hasRoot = true
    } else if (top.kind === "array") {
      top.value.push(value)
    } else if (top.key !== undefined) {
      setKey(top.value, top.key, value)
      top.key = undefined
    }
  }

  // `expectValue`: the next token is a value (start, after "[", ",", ":");
  // otherwise it is a separator or a closing bracket.
  let expectValue = true

  parse: while (true) {
    skip()
    if (pos >= length) break
    const top = stack[stack.length - 1]
    const code = text.charCodeAt(pos)

    if (!expectValue) {
      if (top === undefined) break // a complete root value: ignore the rest
      if (code === 44 /* , */) {
        pos++
        expectValue = true
        if (top.kind === "object") {
          // Read the next key now, so "expectValue" below always means a value.
          skip()
          if (pos >= length) break
          if (text.charCodeAt(pos) !== 34) break
          const key = readString(text, pos)
          if (!key.complete) break
          pos = key.end
          skip()
          if (pos >= length || text.charCodeAt(pos) !== 58 /* : */) break
          pos++
          top.key = key.text
        }
        continue
      }
      if ((code === 93 /* ] */ && top.kind === "array") || (code === 125 /* } */ && top.kind === "object")) {
        pos++
        stack.pop()
        continue
      }
      break
    }

    // A value is expected here.
    if (code === 123 /* { */) {
      pos++
      const value: Record<string, unknown> = {}
      attach(value)
      const frame: Frame = { kind: "object", value, key: undefined }
      stack.push(frame)
      skip()
      if (pos >= length) break
      if (text.charCodeAt(pos) === 125) {
        pos++
        stack.pop()
        expectValue = false
        continue
      }
      if (text.charCodeAt(pos) !== 34) break
      const key = readString(text, pos)
      if (!key.complete) break
      pos = key.end
      skip()
      if (pos >= length || text.charCodeAt(pos) !== 58) break
      pos++
      frame.key = key.text
      continue
    }
    if (code === 91 /* [ */) {
      pos++
      const value: Array<unknown> = []
      attach(value)
      stack.push({ kind: "array", value })
      skip()
      if (pos < length && text.charCodeAt(pos) === 93) {
        pos++
        stack.pop()
        expectValue = false
      }
      continue
    }
    if (code === 34 /* " */) {
      const token = readString(text, pos)
      attach(token.text)
      if (!token.complete) break
      pos = token.end
      expectValue = false
      continue
    }
    if (code === 45 || isDigit(code)) {
      const token = readNumber(text, pos)
      if (token.value !== undefined) attach(token.value)
      if (token.atEnd || token.value === undefined) break parse
      pos = token.end
      expectValue = false
      continue
    }
    const literal = readLiteral(text, pos)
    if (!literal.found) break
    attach(literal.value)
    pos = literal.end
    expectValue = false
  }

  return hasRoot ? root : undefined
}
