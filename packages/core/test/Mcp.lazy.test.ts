/**
 * The MCP client library loads only when a server is connected: `Mcp.ts`
 * (and everything it imports statically) must not import
 * `@modelcontextprotocol/sdk`, so that applications without MCP servers do
 * not load it, and bundlers split it out of their main chunk.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { importsOf, staticClosure } from "./staticImports.js"

const packageDir = resolve(import.meta.dirname, "..")
const sourceDir = join(packageDir, "src")

const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
  new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((done) => {
    execFile(command, [...args], { cwd, timeout: 25_000 }, (error, stdout, stderr) =>
      done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }))
  })

describe("the MCP client loads lazily", () => {
  it("Mcp.ts and its static imports never import the MCP SDK; the client module is imported dynamically", async () => {
    const mcp = join(sourceDir, "Mcp.ts")
    const { files, packages } = await staticClosure(mcp)
    expect(Array.from(packages).filter((name) => name.startsWith("@modelcontextprotocol/"))).toEqual([])
    expect(files.has(join(sourceDir, "internal", "mcp", "client.ts"))).toBe(false)
    // One module of the implementation imports it, dynamically.
    const loader = join(sourceDir, "internal", "mcp", "load.ts")
    expect(files.has(loader)).toBe(true)
    expect((await importsOf(loader)).dynamic).toEqual(["./client.js"])
    // The module it loads is the one that holds the SDK.
    const client = await importsOf(join(sourceDir, "internal", "mcp", "client.ts"))
    expect(client.runtime.filter((name) => name.startsWith("@modelcontextprotocol/sdk/")).length).toBeGreaterThan(0)
  })

  it("a process where the MCP SDK cannot be resolved builds the service, and fails only when connecting", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mcp-lazy-"))
    try {
      const hooks = join(dir, "hooks.mjs")
      await writeFile(
        hooks,
        `export async function resolve(specifier, context, next) {
  if (specifier.startsWith("@modelcontextprotocol/")) throw new Error("blocked " + specifier)
  return next(specifier, context)
}
`
      )
      const register = join(dir, "register.mjs")
      await writeFile(
        register,
        `import { register } from "node:module"\nregister(${JSON.stringify(pathToFileURL(hooks).href)})\n`
      )
      const src = (name: string) => JSON.stringify(pathToFileURL(join(sourceDir, name)).href)
      const main = `const Effect = await import("effect/Effect")
const Layer = await import("effect/Layer")
const Mcp = await import(${src("Mcp.ts")})
const Tambo = await import(${src("Tambo.ts")})
const stack = Mcp.layer.pipe(
  Layer.provideMerge(Tambo.layer({ apiKey: "k", tamboUrl: "http://127.0.0.1:9", userKey: "u", maxRetries: 0 }))
)
const program = Effect.gen(function*() {
  const mcp = yield* Mcp.Mcp
  const before = yield* mcp.getMcpClients
  const error = yield* Effect.flip(mcp.connectMcpServer({ url: "http://127.0.0.1:9/mcp" }))
  return { before, error: { tag: error._tag, reason: error.reason, message: error.message } }
})
const result = await Effect.runPromise(Effect.provide(program, stack))
process.stdout.write(JSON.stringify(result))
`
      // Evaluated from the package directory, so that `effect` and `tsx` resolve as they do for the tests.
      const result = await run(
        process.execPath,
        ["--import", "tsx", "--import", pathToFileURL(register).href, "--input-type=module", "--eval", main],
        packageDir
      )
      expect(result.stderr).toBe("")
      expect(result.code).toBe(0)
      const output = JSON.parse(result.stdout)
      expect(output.before).toEqual({})
      expect(output.error).toMatchObject({ tag: "McpError", reason: "Connect" })
      expect(output.error.message).toContain("blocked @modelcontextprotocol/sdk")
      expect(output.error.message).toContain("Install \"@modelcontextprotocol/sdk\"")
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
