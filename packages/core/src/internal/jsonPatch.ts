/**
 * RFC 6902 JSON Patch over plain JSON values.
 *
 * Immutable with structural sharing: only the containers along a patched path
 * are copied, everything else is shared with the input. Total: a failing
 * patch returns a reason and leaves the input untouched. Paths naming
 * `__proto__`, `constructor` or `prototype` are refused, so a patch received
 * from the network can never reach `Object.prototype`.
 *
 * @since 0.1.0
 */

/**
 * One RFC 6902 operation.
 *
 * @since 0.1.0
 * @category Models
 */
export type Operation =
  | { readonly op: "add"; readonly path: string; readonly value: unknown }
  | { readonly op: "remove"; readonly path: string }
  | { readonly op: "replace"; readonly path: string; readonly value: unknown }
  | { readonly op: "move"; readonly from: string; readonly path: string }
  | { readonly op: "copy"; readonly from: string; readonly path: string }
  | { readonly op: "test"; readonly path: string; readonly value: unknown }

/**
 * The outcome of {@link applyPatch}: the new document, or why the patch was
 * refused and which operation failed.
 *
 * @since 0.1.0
 * @category Models
 */
export type PatchResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: string; readonly operationIndex: number }

/**
 * Whether a pointer segment could reach an object's prototype chain.
 * Compared directly: a segment is usually a fresh string, which a set lookup
 * would hash first.
 *
 * @since 0.1.0
 * @category Guards
 */
export const isHostileSegment = (segment: string): boolean =>
  segment === "__proto__" || segment === "constructor" || segment === "prototype"

type Pointer = { readonly ok: true; readonly tokens: ReadonlyArray<string> } | { readonly ok: false; readonly reason: string }

/**
 * Splits an RFC 6901 JSON Pointer into unescaped segments.
 *
 * @since 0.1.0
 * @category Parsing
 */
export const parsePointer = (pointer: string): Pointer => {
  // A component's props are patched at the same few paths over and over. Only short
  // pointers are kept: a long one is rare, and the cache must not hold megabytes of them.
  if (pointer.length > POINTER_CACHE_MAX_LENGTH) return parseUncached(pointer)
  const cached = pointerCache.get(pointer)
  if (cached !== undefined) return cached
  const parsed = parseUncached(pointer)
  if (pointerCache.size >= POINTER_CACHE_SIZE) pointerCache.clear()
  pointerCache.set(pointer, parsed)
  return parsed
}

const POINTER_CACHE_SIZE = 512
const POINTER_CACHE_MAX_LENGTH = 256
const pointerCache = new Map<string, Pointer>()

const parseUncached = (pointer: string): Pointer => {
  if (pointer === "") return { ok: true, tokens: [] }
  if (pointer.charCodeAt(0) !== 47 /* / */) return { ok: false, reason: `path "${pointer}" does not start with "/"` }
  const raw = pointer.slice(1).split("/")
  const tokens: Array<string> = new Array(raw.length)
  for (let i = 0; i < raw.length; i++) {
    const segment = raw[i]!
    let token = segment
    if (segment.includes("~")) {
      // "~" must be followed by 0 or 1; anything else is not a valid pointer.
      if (/~(?![01])/.test(segment)) return { ok: false, reason: `path "${pointer}" has an invalid "~" escape` }
      token = segment.replace(/~1/g, "/").replace(/~0/g, "~")
    }
    if (isHostileSegment(token)) return { ok: false, reason: `path "${pointer}" names the forbidden segment "${token}"` }
    tokens[i] = token
  }
  return { ok: true, tokens: Object.freeze(tokens) }
}

type Container = Array<unknown> | Record<string, unknown>

const isContainer = (u: unknown): u is Container => typeof u === "object" && u !== null

const arrayIndexPattern = /^(?:0|[1-9][0-9]*)$/

/** A strict array index (no sign, no leading zeros), or -1. */
const arrayIndex = (token: string): number => (arrayIndexPattern.test(token) ? Number(token) : -1)

class PatchFailure {
  constructor(readonly reason: string) {}
}

// Failing deep inside a path walk is simplest as an early exit; `applyPatch`
// catches it, so nothing escapes the module.
const fail = (reason: string): never => {
  throw new PatchFailure(reason)
}

const getChild = (container: Container, token: string, pointer: string): unknown => {
  if (Array.isArray(container)) {
    const index = arrayIndex(token)
    if (index < 0 || index >= container.length) return fail(`path "${pointer}" does not exist`)
    return container[index]
  }
  // Own properties only: "toString" must not resolve to Object.prototype's.
  if (!Object.hasOwn(container, token)) return fail(`path "${pointer}" does not exist`)
  return container[token]
}

const valueAt = (root: unknown, tokens: ReadonlyArray<string>, pointer: string): unknown => {
  let current = root
  for (let i = 0; i < tokens.length; i++) {
    if (!isContainer(current)) return fail(`path "${pointer}" does not exist`)
    current = getChild(current, tokens[i]!, pointer)
  }
  return current
}

/**
 * Applies operations in order. Containers created by this call are tracked in
 * `owned` so a second operation on the same path mutates the copy made by the
 * first instead of copying again.
 */
class Patcher {
  root: unknown
  // Made on the first copy: most patches copy one or two containers.
  private owned: Set<object> | undefined = undefined

  constructor(root: unknown) {
    this.root = root
  }

  private own(container: Container): Container {
    if (this.owned === undefined) this.owned = new Set()
    else if (this.owned.has(container)) return container
    const copy: Container = Array.isArray(container) ? container.slice() : { ...container }
    this.owned.add(copy)
    return copy
  }

  /** Copies the containers from the root to the parent of the last token and returns that parent. */
  private parentForWrite(tokens: ReadonlyArray<string>, pointer: string): Container {
    if (!isContainer(this.root)) return fail(`path "${pointer}" does not exist`)
    let parent = this.own(this.root)
    this.root = parent
    for (let i = 0; i < tokens.length - 1; i++) {
      const token = tokens[i]!
      const child = getChild(parent, token, pointer)
      if (!isContainer(child)) return fail(`path "${pointer}" does not exist`)
      const copy = this.own(child)
      if (copy !== child) setChild(parent, token, copy)
      parent = copy
    }
    return parent
  }

  add(tokens: ReadonlyArray<string>, pointer: string, value: unknown): void {
    if (tokens.length === 0) {
      this.root = value
      return
    }
    const parent = this.parentForWrite(tokens, pointer)
    const last = tokens[tokens.length - 1]!
    if (Array.isArray(parent)) {
      if (last === "-") {
        parent.push(value)
        return
      }
      const index = arrayIndex(last)
      if (index < 0 || index > parent.length) return fail(`path "${pointer}" is out of bounds`)
      parent.splice(index, 0, value)
      return
    }
    setChild(parent, last, value)
  }

  remove(tokens: ReadonlyArray<string>, pointer: string): unknown {
    if (tokens.length === 0) return fail("cannot remove the document root")
    const parent = this.parentForWrite(tokens, pointer)
    const last = tokens[tokens.length - 1]!
    const removed = getChild(parent, last, pointer)
    if (Array.isArray(parent)) parent.splice(arrayIndex(last), 1)
    else delete parent[last]
    return removed
  }

  replace(tokens: ReadonlyArray<string>, pointer: string, value: unknown): void {
    if (tokens.length === 0) {
      this.root = value
      return
    }
    const parent = this.parentForWrite(tokens, pointer)
    const last = tokens[tokens.length - 1]!
    getChild(parent, last, pointer)
    if (Array.isArray(parent)) parent[arrayIndex(last)] = value
    else setChild(parent, last, value)
  }
}

// Keys reaching here passed the hostile-segment check, so plain assignment
// cannot hit the `__proto__` setter.
const setChild = (container: Container, token: string, value: unknown): void => {
  if (Array.isArray(container)) container[arrayIndex(token)] = value
  else container[token] = value
}

/**
 * Structural equality of JSON values (the RFC 6902 `test` semantics).
 *
 * @since 0.1.0
 * @category Utils
 */
export const deepEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (!isContainer(a) || !isContainer(b)) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  for (const key of keys) {
    if (!Object.hasOwn(b, key) || !deepEqual(a[key], b[key])) return false
  }
  return true
}

// A copied value must not alias a container this patch may still mutate.
const deepClone = (u: unknown): unknown => {
  if (!isContainer(u)) return u
  if (Array.isArray(u)) return u.map(deepClone)
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(u)) {
    Object.defineProperty(out, key, { value: deepClone(u[key]), writable: true, enumerable: true, configurable: true })
  }
  return out
}

const pointerOf = (u: unknown): Pointer =>
  typeof u === "string" ? parsePointer(u) : { ok: false, reason: "pointer is not a string" }

const isPrefix = (prefix: ReadonlyArray<string>, tokens: ReadonlyArray<string>): boolean => {
  if (prefix.length >= tokens.length) return false
  for (let i = 0; i < prefix.length; i++) if (prefix[i] !== tokens[i]) return false
  return true
}

const applyOne = (patcher: Patcher, operation: Operation): void => {
  const op: unknown = operation.op
  const path = pointerOf(operation.path)
  if (!path.ok) return fail(path.reason)
  const pointer = operation.path
  switch (op) {
    case "add":
    case "replace":
    case "test": {
      const value = "value" in operation ? operation.value : undefined
      if (value === undefined) return fail(`"${op}" at "${pointer}" has no value`)
      if (op === "add") patcher.add(path.tokens, pointer, value)
      else if (op === "replace") patcher.replace(path.tokens, pointer, value)
      else if (!deepEqual(valueAt(patcher.root, path.tokens, pointer), value)) fail(`test at "${pointer}" failed`)
      return
    }
    case "remove": {
      patcher.remove(path.tokens, pointer)
      return
    }
    case "move":
    case "copy": {
      const fromPointer = "from" in operation ? operation.from : undefined
      const from = pointerOf(fromPointer)
      if (!from.ok) return fail(from.reason)
      const source = String(fromPointer)
      if (op === "copy") {
        patcher.add(path.tokens, pointer, deepClone(valueAt(patcher.root, from.tokens, source)))
        return
      }
      if (source === pointer) {
        valueAt(patcher.root, from.tokens, source)
        return
      }
      if (isPrefix(from.tokens, path.tokens)) return fail(`cannot move "${source}" into its own child "${pointer}"`)
      const moved = patcher.remove(from.tokens, source)
      patcher.add(path.tokens, pointer, moved)
      return
    }
    default:
      return fail(`unknown operation "${String(op)}"`)
  }
}

/**
 * Applies a JSON Patch to a document without mutating it.
 *
 * Atomic: if any operation fails the result carries the reason and the index
 * of the failing operation, and nothing of the input was changed.
 *
 * @since 0.1.0
 * @category Patching
 */
export const applyPatch = (document: unknown, operations: ReadonlyArray<Operation>): PatchResult => {
  const patcher = new Patcher(document)
  let index = 0
  try {
    for (; index < operations.length; index++) applyOne(patcher, operations[index]!)
    return { ok: true, value: patcher.root }
  } catch (error) {
    // Anything else (e.g. a stack overflow on an absurdly deep value) still
    // must not escape: the caller records it and moves on.
    const reason = error instanceof PatchFailure ? error.reason : `patch could not be applied: ${String(error)}`
    return { ok: false, reason, operationIndex: index }
  }
}
