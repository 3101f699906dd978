#!/usr/bin/env node
/**
 * Rewrites imports from the barrels of `effect` and `@effect/platform` into
 * imports by module path: the barrel (`import { Effect, Schema } from
 * "effect"`) loads every module of the package when it is imported, while
 * `import * as Effect from "effect/Effect"` loads what it names (and bundlers
 * drop the rest).
 *
 *   node scripts/effect-imports.mjs                 rewrites packages/* /src
 *   node scripts/effect-imports.mjs FILE|DIR ...    rewrites those
 *   node scripts/effect-imports.mjs --check ...     changes nothing; lists the files it
 *                                                  would change and exits 1 if any
 *
 * `import { Effect, type Layer, pipe } from "effect"` becomes
 *
 *   import * as Effect from "effect/Effect"
 *   import type * as Layer from "effect/Layer"
 *   import { pipe } from "effect/Function"
 *
 * Idempotent: a file with no barrel import is left byte for byte, and a
 * namespace import the file already has is not added twice. Comments (JSDoc
 * examples) are not touched. A name that is no module of the package is
 * reported and its import left as it is.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")

/** The barrels, and the names each re-exports from one module rather than as a namespace. */
const barrels = {
  effect: { fromFunction: new Set(["absurd", "flow", "hole", "identity", "pipe", "unsafeCoerce"]) },
  "@effect/platform": { fromFunction: new Set() }
}

const args = process.argv.slice(2)
const check = args.includes("--check")
const targets = args.filter((arg) => !arg.startsWith("--"))

const sourceFiles = (path) => {
  if (statSync(path).isDirectory()) {
    return readdirSync(path, { withFileTypes: true }).flatMap((entry) =>
      entry.name === "node_modules" || entry.name === "dist" ? [] : sourceFiles(join(path, entry.name))
    )
  }
  return /\.(m|c)?tsx?$/.test(path) && !path.endsWith(".d.ts") ? [path] : []
}

const defaultTargets = () => {
  const packages = join(root, "packages")
  return readdirSync(packages)
    .map((name) => join(packages, name, "src"))
    .filter((dir) => existsSync(dir))
}

/** Whether `specifier` resolves from `file` (the module exists in the package the file sees). */
const resolves = (file, specifier) => {
  try {
    createRequire(file).resolve(specifier)
    return true
  } catch {
    return false
  }
}

const problems = []

/** The new text of `file`, or `undefined` when nothing changes. */
const rewrite = (file) => {
  const text = readFileSync(file, "utf8")
  if (!Object.keys(barrels).some((name) => text.includes(`"${name}"`) || text.includes(`'${name}'`))) return undefined
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const existing = new Set(
    source.statements.filter(ts.isImportDeclaration).map((node) => text.slice(node.getStart(source), node.end).replace(/;$/, ""))
  )
  const edits = []
  for (const node of source.statements) {
    if (!ts.isImportDeclaration(node) || !ts.isStringLiteral(node.moduleSpecifier)) continue
    const barrel = node.moduleSpecifier.text
    if (!Object.hasOwn(barrels, barrel)) continue
    const clause = node.importClause
    const named = clause?.namedBindings
    if (clause === undefined || clause.name !== undefined || named === undefined || !ts.isNamedImports(named)) {
      problems.push(`${relative(root, file)}: left as it is (not a plain named import): ${node.getText(source)}`)
      continue
    }
    const quote = text[node.moduleSpecifier.getStart(source)]
    const semicolon = node.getText(source).endsWith(";") ? ";" : ""
    const lines = []
    const kept = []
    const fromFunction = []
    for (const element of named.elements) {
      const imported = (element.propertyName ?? element.name).text
      const local = element.name.text
      const typeOnly = clause.isTypeOnly || element.isTypeOnly
      if (barrels[barrel].fromFunction.has(imported)) {
        fromFunction.push(`${element.isTypeOnly && !clause.isTypeOnly ? "type " : ""}${imported === local ? local : `${imported} as ${local}`}`)
        continue
      }
      const specifier = `${barrel}/${imported}`
      if (!resolves(file, specifier)) {
        problems.push(`${relative(root, file)}: "${imported}" is no module of ${barrel}; its import is left as it is`)
        kept.push(element.getText(source))
        continue
      }
      lines.push(`import ${typeOnly ? "type " : ""}* as ${local} from ${quote}${specifier}${quote}${semicolon}`)
    }
    if (fromFunction.length > 0) {
      lines.push(
        `import ${clause.isTypeOnly ? "type " : ""}{ ${fromFunction.join(", ")} } from ${quote}${barrel}/Function${quote}${semicolon}`
      )
    }
    if (kept.length > 0) {
      lines.push(`import ${clause.isTypeOnly ? "type " : ""}{ ${kept.join(", ")} } from ${quote}${barrel}${quote}${semicolon}`)
    }
    const fresh = lines.filter((line) => !existing.has(line.replace(/;$/, "")))
    edits.push({ start: node.getStart(source), end: node.end, text: fresh.join("\n") })
  }
  if (edits.length === 0) return undefined
  let out = text
  for (const edit of edits.sort((a, b) => b.start - a.start)) {
    // An import that only repeated existing ones goes with its line break.
    const end = edit.text === "" && out[edit.end] === "\n" ? edit.end + 1 : edit.end
    out = out.slice(0, edit.start) + edit.text + out.slice(end)
  }
  return out === text ? undefined : out
}

const files = (targets.length > 0 ? targets.map((target) => resolve(target)) : defaultTargets()).flatMap(sourceFiles)
const changed = []
for (const file of files) {
  const out = rewrite(file)
  if (out === undefined) continue
  changed.push(relative(root, file))
  if (!check) writeFileSync(file, out)
}
for (const problem of problems) console.error(problem)
if (changed.length === 0) {
  console.log("effect-imports: every import of effect and @effect/platform is by module path")
} else {
  console.log(`effect-imports: ${check ? "would rewrite" : "rewrote"} ${changed.length} file(s):`)
  for (const file of changed) console.log(`  ${file}`)
}
process.exit(check && changed.length > 0 ? 1 : 0)
