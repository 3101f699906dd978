/**
 * The build Node imports: `@tambo-effect/client` under the `node` and `import` conditions is a
 * standalone ES build with core, effect, @effect/platform and the typescript-sdk inlined (a fresh
 * process that imports the composable build loads ~590 ES modules before its first run). These
 * tests build it from `tsup.config.ts` into a temporary directory, as `pnpm build` makes
 * `dist/node`, then read its imports and run it in a fresh process the way a user's script does.
 */
import { Script, startTestServer, type TestServer } from "@tambo-effect/testing"
import { execFile } from "node:child_process"
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { builtinModules } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { build, type Options } from "tsup"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import configs from "../tsup.config.js"

const packageDir = join(import.meta.dirname, "..")

/** Node in a fresh process, without the workspace's source condition: as a user's script runs. */
const node = (args: ReadonlyArray<string>) =>
  new Promise<string>((resolve, reject) =>
    execFile(process.execPath, args, { cwd: packageDir, timeout: 60_000 }, (error, stdout, stderr) =>
      error === null ? resolve(stdout) : reject(new Error(`${error.message}\n${stderr}`))))

let outDir: string
let server: TestServer

beforeAll(async () => {
  const standalone = (configs as ReadonlyArray<Options>).find((options) => options.outDir === "dist/node")
  if (standalone === undefined) throw new Error("tsup.config.ts has no standalone build into dist/node")
  outDir = await mkdtemp(join(tmpdir(), "tambo-client-standalone-"))
  const sources = (await readdir(join(packageDir, "src"))).filter((name) => name.endsWith(".ts"))
  await build({
    ...standalone,
    config: false,
    silent: true,
    sourcemap: false,
    entry: sources.map((name) => join(packageDir, "src", name)),
    outDir
  })
  server = await startTestServer({ script: [Script.text("Hello from the standalone build")] })
}, 120_000)

afterAll(async () => {
  await server?.close()
  if (outDir !== undefined) await rm(outDir, { recursive: true, force: true })
})

/** Every specifier a built file imports (statically or with `import()`) that is not one of its own files. */
const packageImports = (code: string): ReadonlyArray<string> =>
  Array.from(
    code.matchAll(/^(?:import|export)\s(?:[^;]*?\bfrom\s*)?["']([^"'.][^"']*)["']|\bimport\(\s*["']([^"'.][^"']*)["']/gm),
    (match) => (match[1] ?? match[2])!
  )

const isNodeBuiltin = (specifier: string) => specifier.startsWith("node:") || builtinModules.includes(specifier)
const isMcpSdk = (specifier: string) => specifier.startsWith("@modelcontextprotocol/sdk/")

/** The files a file loads as it is evaluated: its static imports, not `import()`. */
const staticFiles = async (entry: string): Promise<ReadonlySet<string>> => {
  const seen = new Set<string>()
  const visit = async (file: string): Promise<void> => {
    if (seen.has(file)) return
    seen.add(file)
    const code = await readFile(join(outDir, file), "utf8")
    const local = code.matchAll(/^import\s(?:[^;]*?\bfrom\s*)?["']\.\/([^"']+)["']/gm)
    for (const match of local) await visit(match[1]!)
  }
  await visit(entry)
  return seen
}

describe("the standalone build for Node", () => {
  it("is what Node imports for @tambo-effect/client and its modules; require keeps the composable build", async () => {
    const script = "console.log(import.meta.resolve('@tambo-effect/client'), import.meta.resolve('@tambo-effect/client/SnapshotStrategy'))"
    const resolved = (await node(["--input-type=module", "-e", script])).trim().split(" ")
    expect(resolved.map((url) => url.slice(url.indexOf("/dist/")))).toEqual(["/dist/node/index.js", "/dist/node/SnapshotStrategy.js"])
    const required = await node(["-e", "console.log(require.resolve('@tambo-effect/client'))"])
    expect(required.trim().endsWith(join("client", "dist", "index.cjs"))).toBe(true)
  })

  it("imports only Node's own modules, and the MCP SDK only from a file loaded when a server connects", async () => {
    const files = (await readdir(outDir)).filter((name) => name.endsWith(".js"))
    const imports = new Map<string, ReadonlyArray<string>>()
    for (const file of files) imports.set(file, packageImports(await readFile(join(outDir, file), "utf8")))
    const foreign = Array.from(imports.values()).flat().filter((specifier) => !isNodeBuiltin(specifier) && !isMcpSdk(specifier))
    expect(foreign).toEqual([])
    const loaded = await staticFiles("index.js")
    expect(Array.from(loaded).filter((file) => imports.get(file)?.some(isMcpSdk))).toEqual([])
    // The MCP client is there, for the first server to load.
    expect(Array.from(imports.values()).flat().filter(isMcpSdk).length).toBeGreaterThan(0)
  })

  it("runs a conversation in a fresh process", async () => {
    const script = `
      const { TamboClient, isTamboClientError } = await import(${JSON.stringify(pathToFileURL(join(outDir, "index.js")).href)})
      const client = new TamboClient({ apiKey: ${JSON.stringify(server.apiKey)}, tamboUrl: ${JSON.stringify(server.url)}, userKey: "standalone" })
      let text = ""
      for await (const { event } of client.run("Hi")) if (event.type === "TEXT_MESSAGE_CONTENT") text += event.delta
      const failed = await client.fetchThread("no-such-thread").then(() => "no error", (error) => isTamboClientError(error) ? error._tag : "untyped")
      await client.destroy()
      console.log(JSON.stringify({ text, failed }))
    `
    const output = await node(["--input-type=module", "-e", script])
    expect(JSON.parse(output)).toEqual({ text: "Hello from the standalone build", failed: "ApiError" })
  }, 60_000)
})
