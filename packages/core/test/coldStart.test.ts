/**
 * What an import of the SDK costs before its first run: the public entries
 * do not load the MCP SDK (it loads when a server is connected:
 * `Mcp.lazy.test.ts`), and every package imports `effect` and
 * `@effect/platform` by module path, never through their barrels, which load
 * every module of the package (`scripts/effect-imports.mjs`).
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { join, resolve } from "node:path"
import { staticClosure } from "./staticImports.js"

const repoDir = resolve(import.meta.dirname, "..", "..", "..")
const packagesDir = join(repoDir, "packages")

const lazyPackages = ["@modelcontextprotocol/sdk"]
const isLazy = (specifier: string) => lazyPackages.some((name) => specifier === name || specifier.startsWith(`${name}/`))

describe("cold start", () => {
  it.each(["core", "client", "react"])("%s's entry does not load the MCP SDK on import", async (name) => {
    const { packages } = await staticClosure(join(packagesDir, name, "src", "index.ts"))
    expect(Array.from(packages).filter(isLazy)).toEqual([])
  })

  it("no package source imports the barrel of effect or @effect/platform", async () => {
    const result = await new Promise<{ readonly code: number; readonly output: string }>((done) =>
      execFile(process.execPath, [join(repoDir, "scripts", "effect-imports.mjs"), "--check"], { cwd: repoDir }, (error, stdout, stderr) =>
        done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, output: stdout + stderr })))
    expect(result.output).toContain("every import of effect and @effect/platform is by module path")
    expect(result.code).toBe(0)
  })
})
