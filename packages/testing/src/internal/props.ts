import type { PropsDelta } from "../Script.js"
import type * as Wire from "../Wire.js"

/** RFC 6901: `~` and `/` must be escaped in a pointer segment. */
export const escapePointerSegment = (key: string): string =>
  key.includes("~") || key.includes("/") ? key.replace(/~/g, "~0").replace(/\//g, "~1") : key

export const deepEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false
    if (!deepEqual(Reflect.get(a, k), Reflect.get(b, k))) return false
  }
  return true
}

/**
 * The API's component streaming: it diffs successive parses of the growing props JSON at the top
 * level only, so a key is added once and then replaced whole on every change.
 */
export const diffProps = (snapshots: ReadonlyArray<Wire.JsonObject>): Array<PropsDelta> => {
  const out: Array<PropsDelta> = []
  const seen = new Set<string>()
  const status: Record<string, Wire.PropStreamingStatus> = {}
  let previous: Wire.JsonObject = {}
  let previousKeys: ReadonlyArray<string> = []
  for (const current of snapshots) {
    const operations: Array<Wire.JsonPatchOperation> = []
    const updates: Record<string, Wire.PropStreamingStatus> = {}
    const newKeys: Array<string> = []
    for (const key of Object.keys(current)) {
      const value = current[key]
      const path = `/${escapePointerSegment(key)}`
      if (!seen.has(key)) {
        operations.push({ op: "add", path, value })
        updates[key] = "started"
        newKeys.push(key)
      } else if (!Object.prototype.hasOwnProperty.call(previous, key)) {
        operations.push({ op: "add", path, value })
        updates[key] = "streaming"
      } else if (!deepEqual(previous[key], value)) {
        operations.push({ op: "replace", path, value })
        if (status[key] !== "done") updates[key] = "streaming"
      }
    }
    for (const key of Object.keys(previous)) {
      if (!Object.prototype.hasOwnProperty.call(current, key)) {
        operations.push({ op: "remove", path: `/${escapePointerSegment(key)}` })
        delete status[key]
      }
    }
    // A prop is done once a newer prop has started (the API cannot know earlier).
    if (newKeys.length > 0) {
      for (const key of previousKeys) {
        if (status[key] !== undefined && status[key] !== "done" && !newKeys.includes(key)) status[key] = "done"
      }
    }
    Object.assign(status, updates)
    previousKeys = Object.keys(current)
    for (const key of previousKeys) seen.add(key)
    previous = current
    if (operations.length > 0) out.push({ operations, streamingStatus: { ...status } })
  }
  return out
}
