/**
 * Where a parsed JSON value has an own `__proto__` key. `JSON.parse` makes
 * it a plain own property, but any later copy with assignment semantics
 * (`out[key] = value`, a spread into a schema's output, `Object.assign`)
 * turns it into the copy's prototype: the tool would then read keys the
 * model never sent as its own (`args.approved`). Found at the boundary, such
 * arguments are refused before any copy is made.
 */

/** The path (`options[0]`) of the first object with an own `__proto__` key, or undefined. */
export const findProtoKey = (value: unknown): string | undefined => {
  const stack: Array<readonly [unknown, string]> = [[value, ""]]
  while (stack.length > 0) {
    const [current, path] = stack.pop()!
    if (typeof current !== "object" || current === null) continue
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], `${path}[${i}]`])
      continue
    }
    if (Object.prototype.hasOwnProperty.call(current, "__proto__")) return path === "" ? "the top level" : path
    const keys = Object.keys(current)
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!
      stack.push([(current as Record<string, unknown>)[key], path === "" ? key : `${path}.${key}`])
    }
  }
  return undefined
}
