/**
 * What a source file loads before any of its code runs: its imports that
 * remain at runtime (`import type` ones are erased), followed through the
 * package's own files. Read from the sources with the TypeScript parser.
 */
import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { dirname, join, resolve } from "node:path"
import ts from "typescript"

const packagesDir = resolve(import.meta.dirname, "..", "..")

export interface Imports {
  /** Specifiers of imports that remain at runtime (`import type` ones are erased). */
  readonly runtime: ReadonlyArray<string>
  /** Specifiers of `import()` expressions. */
  readonly dynamic: ReadonlyArray<string>
}

export const importsOf = async (file: string): Promise<Imports> => {
  const source = ts.createSourceFile(file, await readFile(file, "utf8"), ts.ScriptTarget.Latest, true)
  const runtime: Array<string> = []
  const dynamic: Array<string> = []
  const allTypeOnly = (clause: ts.ImportClause) =>
    clause.isTypeOnly ||
    (clause.name === undefined && clause.namedBindings !== undefined &&
      ts.isNamedImports(clause.namedBindings) && clause.namedBindings.elements.length > 0 &&
      clause.namedBindings.elements.every((element) => element.isTypeOnly))
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      if (node.importClause === undefined || !allTypeOnly(node.importClause)) runtime.push(node.moduleSpecifier.text)
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      if (!node.isTypeOnly) runtime.push(node.moduleSpecifier.text)
    } else if (
      ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined && ts.isStringLiteral(node.arguments[0])
    ) {
      dynamic.push(node.arguments[0].text)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return { runtime, dynamic }
}

/** The source file a relative `.js` import names: `.ts`, or `.tsx`. */
const sourceOf = (path: string): string => {
  const ts = path.replace(/\.js$/, ".ts")
  return existsSync(ts) ? ts : `${ts}x`
}

/** Where a workspace package's import resolves in its sources (`tambo-source`), if it is one. */
const workspaceSource = (specifier: string): string | undefined => {
  const match = /^@tambo-effect\/([^/]+)(?:\/(.+))?$/.exec(specifier)
  if (match === null) return undefined
  return join(packagesDir, match[1]!, "src", `${match[2] ?? "index"}.ts`)
}

/**
 * The files and packages `entry` loads before any of its code runs; imports
 * of workspace packages are followed into their sources.
 */
export const staticClosure = async (entry: string) => {
  const files = new Set<string>()
  const packages = new Set<string>()
  const pending = [entry]
  while (pending.length > 0) {
    const file = pending.pop()!
    if (files.has(file)) continue
    files.add(file)
    for (const specifier of (await importsOf(file)).runtime) {
      const workspace = workspaceSource(specifier)
      if (specifier.startsWith(".")) pending.push(sourceOf(resolve(dirname(file), specifier)))
      else if (workspace !== undefined) pending.push(workspace)
      else packages.add(specifier)
    }
  }
  return { files, packages }
}
