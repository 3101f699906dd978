/**
 * Pure helpers of the MCP module: server keys, the names MCP tools get in
 * the registry, and the conversion of MCP tool results into tool result
 * parts. Nothing here touches the MCP SDK.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import type { McpContentBlock, McpServerInfo, McpToolResult } from "../../Mcp.js"
import type * as Tool from "../../Tool.js"
import type * as Types from "../../Types.js"
import { isRecord } from "effect/Predicate"
import { checkDuration } from "../config.js"
import { describeError } from "../toolSupport.js"

/**
 * A 53-bit string hash (two interleaved 32-bit multiplicative hashes), as
 * hex. Not cryptographic: it keeps header values out of connection keys and
 * shortens over-long tool names.
 *
 * @internal
 */
export const hash = (text: string): string => {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ code, 2654435761)
    h2 = Math.imul(h2 ^ code, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0")
}

/**
 * Identifies a connection: URL, transport and headers. Header names are
 * compared case-insensitively and their order does not matter; the headers
 * enter the key hashed, so a key never carries a secret header value.
 *
 * @internal
 */
export const uniqueKey = (
  url: string,
  transport: string,
  headers: Readonly<Record<string, string>> | undefined
): string => {
  const entries = Object.entries(headers ?? {})
  if (entries.length === 0) return `${url}|${transport}`
  const normalised = entries
    .map(([name, value]) => [name.toLowerCase(), value] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `${url}|${transport}|h${hash(JSON.stringify(normalised))}`
}

/** Host labels that say nothing about which service it is. */
const GENERIC_LABELS = new Set(["www", "api", "mcp", "app", "staging", "dev", "prod", "server"])

const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/

/**
 * A short, readable key for a server, from its URL's host: its most
 * specific meaningful label (`https://mcp.linear.app/mcp` → `linear`).
 * IP addresses give `mcp`.
 *
 * @internal
 */
export const deriveServerKey = (url: string): string => {
  let hostname: string
  try {
    hostname = new URL(url).hostname.toLowerCase()
  } catch {
    return sanitizeKey(url)
  }
  if (hostname.startsWith("[") || IPV4.test(hostname)) return "mcp"
  let labels = hostname.split(".").filter((label) => label.length > 0)
  // Drop the public suffix: one label (`.com`), or two short ones (`.co.uk`).
  if (labels.length >= 3 && labels.at(-1)!.length <= 3 && labels.at(-2)!.length <= 3) labels = labels.slice(0, -2)
  else if (labels.length >= 2) labels = labels.slice(0, -1)
  for (let i = labels.length - 1; i >= 0; i--) {
    if (!GENERIC_LABELS.has(labels[i]!)) return sanitizeKey(labels[i]!)
  }
  return sanitizeKey(labels.at(-1) ?? hostname)
}

/**
 * A server key in the tool-name charset (letters, digits, `_`, `-`), with
 * no `__` (the prefix separator) inside.
 *
 * @internal
 */
export const sanitizeKey = (key: string): string => {
  const cleaned = key.replace(/[^A-Za-z0-9_-]+/g, "_").replace(/_{2,}/g, "_").replace(/^_+|_+$/g, "")
  return cleaned.length > 0 ? cleaned.slice(0, 32) : "mcp"
}

/**
 * The separator between a server key and a tool name, as upstream uses it.
 *
 * @internal
 */
export const PREFIX_SEPARATOR = "__"

/** Most model providers cap function names at 64 characters. */
const MAX_TOOL_NAME_LENGTH = 64

/**
 * The name an MCP tool is registered under: its own name with every
 * character outside the API's charset replaced by `_`, prefixed with
 * `<serverKey>__` when several servers are connected, and shortened (with a
 * hash of the full name) past 64 characters.
 *
 * @internal
 */
export const registeredToolName = (serverKey: string, toolName: string, prefixed: boolean): string => {
  const base = toolName.replace(/[^A-Za-z0-9_-]/g, "_")
  const name = prefixed ? `${serverKey}${PREFIX_SEPARATOR}${base.length > 0 ? base : "tool"}` : base.length > 0 ? base : "tool"
  if (name.length <= MAX_TOOL_NAME_LENGTH) return name
  const suffix = `_${hash(`${serverKey}\u0000${toolName}`).slice(-8)}`
  return name.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length) + suffix
}

/**
 * A name not in `taken`: `name`, else `name_2`, `name_3`, ...
 *
 * @internal
 */
export const distinctName = (name: string, taken: (candidate: string) => boolean): string => {
  if (!taken(name)) return name
  for (let n = 2;; n++) {
    const suffix = `_${n}`
    const candidate = name.length + suffix.length > MAX_TOOL_NAME_LENGTH
      ? name.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length) + suffix
      : name + suffix
    if (!taken(candidate)) return candidate
  }
}

// ---------------------------------------------------------------------------
// Tool results
// ---------------------------------------------------------------------------

const jsonText = (value: unknown): string => {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch (error) {
    return describeError(error)
  }
}

/** A resource with the string fields of `source` that are present. */
const resource = (
  source: Readonly<Record<string, unknown>>,
  fields: ReadonlyArray<"uri" | "name" | "mimeType" | "description" | "text" | "blob">
): Types.Resource => {
  const out: Types.Resource = {}
  for (const field of fields) {
    const value = source[field]
    if (typeof value === "string") out[field] = value
  }
  return out
}

const toPart = (block: McpContentBlock): Tool.ToolResultPart | undefined => {
  const record: Readonly<Record<string, unknown>> = { ...block }
  switch (block.type) {
    case "text":
      return typeof record["text"] === "string" && record["text"].length > 0
        ? { type: "text", text: record["text"] }
        : undefined
    case "image":
    case "audio":
      if (typeof record["data"] !== "string") return { type: "text", text: jsonText(block) }
      return { type: "resource", resource: { ...resource(record, ["mimeType"]), blob: record["data"], name: block.type } }
    case "resource_link":
      return typeof record["uri"] === "string"
        ? { type: "resource", resource: resource(record, ["uri", "name", "mimeType", "description"]) }
        : { type: "text", text: jsonText(block) }
    case "resource": {
      const embedded = record["resource"]
      return isRecord(embedded)
        ? { type: "resource", resource: resource(embedded, ["uri", "mimeType", "text", "blob"]) }
        : { type: "text", text: jsonText(block) }
    }
    default:
      return { type: "text", text: jsonText(block) }
  }
}

/**
 * The parts a successful MCP tool result is sent back as: text blocks as
 * text, images, audio and resources as resource blocks. A result without
 * content sends its `structuredContent` as JSON text.
 *
 * @internal
 */
export const resultParts = (result: McpToolResult): ReadonlyArray<Tool.ToolResultPart> => {
  const parts: Array<Tool.ToolResultPart> = []
  for (const block of result.content) {
    const part = toPart(block)
    if (part !== undefined) parts.push(part)
  }
  if (parts.length > 0) return parts
  if (result.structuredContent !== undefined) return [{ type: "text", text: jsonText(result.structuredContent) }]
  return [{ type: "text", text: "(no content)" }]
}

/**
 * The text of an MCP error result: its text blocks, joined.
 *
 * @internal
 */
export const errorText = (result: McpToolResult): string => {
  const texts: Array<string> = []
  for (const block of result.content) {
    const record: Record<string, unknown> = { ...block }
    if (block.type === "text" && typeof record["text"] === "string" && record["text"].length > 0) {
      texts.push(record["text"])
    }
  }
  if (texts.length > 0) return texts.join("\n")
  if (result.structuredContent !== undefined) return jsonText(result.structuredContent)
  return "the tool reported an error without details"
}

/**
 * How the model's calls of a server's tools are bounded when its info gives `toolTimeout`: the
 * longest wait for a word from the server (`idle`), and in all (`max`).
 *
 * @internal
 */
export interface ToolBounds {
  readonly idle: Duration.Duration
  readonly max: Duration.Duration
}

const DEFAULT_MAX_TOOL_TIME = Duration.minutes(10)

const bound = (input: unknown, name: string) => checkDuration(name, input, { infinite: true })

/**
 * The server's tool bounds: none without `toolTimeout`, or why they are not valid (each bound given
 * is checked, `maxToolTime` also without `toolTimeout`: a later connect may give that).
 *
 * @internal
 */
export const toolBounds = (
  server: Pick<McpServerInfo, "toolTimeout" | "maxToolTime">
): Either.Either<ToolBounds | undefined, string> =>
  Either.map(
    Either.all({
      idle: server.toolTimeout === undefined ? Either.right(undefined) : bound(server.toolTimeout, "toolTimeout"),
      max: server.maxToolTime === undefined ? Either.right(DEFAULT_MAX_TOOL_TIME) : bound(server.maxToolTime, "maxToolTime")
    }),
    ({ idle, max }) => (idle === undefined ? undefined : { idle, max })
  )

/**
 * Bounds of the same durations (or both none).
 *
 * @internal
 */
export const sameToolBounds = (a: ToolBounds | undefined, b: ToolBounds | undefined): boolean =>
  a === undefined || b === undefined
    ? a === b
    : Duration.equals(a.idle, b.idle) && Duration.equals(a.max, b.max)
