// RFC 6902 for the component state endpoint. Errors carry fast-json-patch's names and messages,
// which the API reports as `Invalid JSON Patch: <message>`.
import type * as Wire from "../Wire.js"
import { deepEqual } from "./props.js"
import type { JsonPatchOperationBody } from "./schemas.js"

export class PatchError extends Error {
  constructor(
    override readonly name: string,
    message: string,
    readonly index: number,
    readonly operation: JsonPatchOperationBody
  ) {
    super(message)
  }
}

type Container = Record<string, unknown> | Array<unknown>

const isContainer = (u: unknown): u is Container => typeof u === "object" && u !== null

const unescape = (segment: string): string => segment.replace(/~1/g, "/").replace(/~0/g, "~")

const segments = (pointer: string): Array<string> | undefined =>
  pointer === "" ? [] : pointer.startsWith("/") ? pointer.slice(1).split("/").map(unescape) : undefined

const getChild = (container: Container, key: string): unknown =>
  Array.isArray(container) ? container[Number(key)] : Object.prototype.hasOwnProperty.call(container, key) ? container[key] : undefined

const hasChild = (container: Container, key: string): boolean =>
  Array.isArray(container) ? /^(0|[1-9]\d*)$/.test(key) && Number(key) < container.length : Object.prototype.hasOwnProperty.call(container, key)

/** The parent container of `pointer` and the last key, if the parent exists. */
const resolveParent = (root: unknown, pointer: string): { readonly parent: Container; readonly key: string } | undefined => {
  const parts = segments(pointer)
  if (parts === undefined || parts.length === 0) return undefined
  let node = root
  for (const part of parts.slice(0, -1)) {
    if (!isContainer(node) || !hasChild(node, part)) return undefined
    node = getChild(node, part)
  }
  return isContainer(node) ? { parent: node, key: parts[parts.length - 1]! } : undefined
}

const read = (root: unknown, pointer: string): { readonly found: boolean; readonly value: unknown } => {
  const parts = segments(pointer)
  if (parts === undefined) return { found: false, value: undefined }
  let node = root
  for (const part of parts) {
    if (!isContainer(node) || !hasChild(node, part)) return { found: false, value: undefined }
    node = getChild(node, part)
  }
  return { found: true, value: node }
}

const insert = (parent: Container, key: string, value: unknown): boolean => {
  if (Array.isArray(parent)) {
    const index = key === "-" ? parent.length : /^(0|[1-9]\d*)$/.test(key) ? Number(key) : -1
    if (index < 0 || index > parent.length) return false
    parent.splice(index, 0, value)
    return true
  }
  parent[key] = value
  return true
}

const removeChild = (parent: Container, key: string): void => {
  if (Array.isArray(parent)) parent.splice(Number(key), 1)
  else delete parent[key]
}

/** Applies `operations` to a copy of `document`; throws a PatchError on the first invalid one. */
export const applyPatch = (document: Wire.JsonObject, operations: ReadonlyArray<JsonPatchOperationBody>): Record<string, unknown> => {
  const root: Record<string, unknown> = structuredClone({ ...document })
  operations.forEach((operation, index) => {
    const fail = (name: string, message: string): never => {
      throw new PatchError(name, message, index, operation)
    }
    const needsValue = operation.op === "add" || operation.op === "replace" || operation.op === "test"
    if (needsValue && !("value" in operation)) {
      fail("OPERATION_VALUE_REQUIRED", "Operation `value` property is not present (applicable in `add`, `replace` and `test` operations)")
    }
    const value = structuredClone(operation.value)
    switch (operation.op) {
      case "add": {
        const target = resolveParent(root, operation.path)
        if (target === undefined || !insert(target.parent, target.key, value)) {
          fail("OPERATION_PATH_CANNOT_ADD", "Cannot perform an `add` operation at the desired path")
        }
        return
      }
      case "remove":
      case "replace": {
        const target = resolveParent(root, operation.path)
        if (target === undefined || !hasChild(target.parent, target.key)) {
          fail("OPERATION_PATH_UNRESOLVABLE", "Cannot perform the operation at a path that does not exist")
          return
        }
        if (operation.op === "remove") removeChild(target.parent, target.key)
        else if (Array.isArray(target.parent)) target.parent[Number(target.key)] = value
        else target.parent[target.key] = value
        return
      }
      case "test": {
        const current = read(root, operation.path)
        if (!current.found) fail("OPERATION_PATH_UNRESOLVABLE", "Cannot perform the operation at a path that does not exist")
        if (!deepEqual(current.value, value)) fail("TEST_OPERATION_FAILED", "Test operation failed")
        return
      }
      case "move":
      case "copy": {
        const from = operation.from
        const source = from === undefined ? { found: false, value: undefined } : read(root, from)
        if (from === undefined || !source.found) {
          fail("OPERATION_FROM_UNRESOLVABLE", "Cannot perform a `move` or `copy` operation from a path that does not exist")
          return
        }
        const moved = structuredClone(source.value)
        if (operation.op === "move") {
          const origin = resolveParent(root, from)
          if (origin !== undefined) removeChild(origin.parent, origin.key)
        }
        const target = resolveParent(root, operation.path)
        if (target === undefined || !insert(target.parent, target.key, moved)) {
          fail("OPERATION_PATH_CANNOT_ADD", "Cannot perform an `add` operation at the desired path")
        }
        return
      }
    }
  })
  return root
}
