/**
 * The build Node imports: `@tambo-effect/client` under the `node` and `import` conditions is a
 * standalone ES build with core, effect, @effect/platform and the typescript-sdk inlined (a fresh
 * process that imports the composable build loads ~590 ES modules before its first run). These
 * tests build it from `tsup.config.ts` into a temporary directory, as `pnpm build` makes
 * `dist/node`, then read its imports and run it in a fresh process the way a user's script does.
 */
import type { TestServer } from "@tambo-effect/testing"
import { readdir, readFile, rm } from "node:fs/promises"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  buildStandalone,
  expectWeatherRequests,
  isMcpSdk,
  isNodeBuiltin,
  nonAsciiFiles,
  packageDir,
  runProcess,
  scratchDir,
  startWeatherServer,
  weatherText,
  withCalculator
} from "./standaloneBuild.js"

/** Node in a fresh process, without the workspace's source condition: as a user's script runs. */
const node = (args: ReadonlyArray<string>) => runProcess(process.execPath, args, { cwd: packageDir })

let outDir: string
let server: TestServer

beforeAll(async () => {
  outDir = await scratchDir("standalone-")
  await buildStandalone("dist/node", outDir)
  server = await startWeatherServer()
}, 120_000)

afterAll(async () => {
  await server?.close()
  if (outDir !== undefined) await rm(outDir, { recursive: true, force: true })
})

/** Every specifier a built file imports (statically or with `import()`) that is not one of its own files. */
const packageImports = (code: string): ReadonlyArray<string> =>
  Array.from(
    code.matchAll(/(?:^|[;}])\s*(?:import|export)\b[^;"'()]*?["']([^"'.][^"']*)["']|\bimport\(\s*["']([^"'.][^"']*)["']/g),
    (match) => (match[1] ?? match[2])!
  )

/** The files a file loads as it is evaluated: its static imports, not `import()`. */
const staticFiles = async (entry: string): Promise<ReadonlySet<string>> => {
  const seen = new Set<string>()
  const visit = async (file: string): Promise<void> => {
    if (seen.has(file)) return
    seen.add(file)
    const code = await readFile(join(outDir, file), "utf8")
    const local = code.matchAll(/(?:^|[;}])\s*import\b[^;"'()]*?["']\.\/([^"']+)["']/g)
    for (const match of local) await visit(match[1]!)
  }
  await visit(entry)
  return seen
}

describe("the standalone build for Node", () => {
  it("is what Node imports for @tambo-effect/client and its modules; require has its own (standalone-require.test.ts)", async () => {
    const script = "console.log(import.meta.resolve('@tambo-effect/client'), import.meta.resolve('@tambo-effect/client/SnapshotStrategy'))"
    const resolved = (await node(["--input-type=module", "-e", script])).trim().split(" ")
    expect(resolved.map((url) => url.slice(url.indexOf("/dist/")))).toEqual(["/dist/node/index.js", "/dist/node/SnapshotStrategy.js"])
    // `require.resolve` checks that the file exists; the exports map is read instead, so that the
    // test holds before `pnpm build` too.
    const manifest = JSON.parse(await readFile(join(packageDir, "package.json"), "utf8"))
    expect(manifest.exports["."].require.default).toBe("./dist/index.cjs")
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

  it("is ASCII, so that Node holds its source at one byte a character", async () => {
    const files = (await readdir(outDir)).filter((name) => name.endsWith(".js"))
    expect(files.length).toBeGreaterThan(1)
    expect(await nonAsciiFiles(outDir, files)).toEqual([])
  })

  // The user's `effect` is another copy than the one inlined: values cross by effect's
  // `Symbol.for` type ids, as between two installed copies of one version.
  it("runs a conversation in a fresh process, with a tool whose input is the user's own effect Schema", async () => {
    const script = `
      import * as Schema from "effect/Schema"
      const { TamboClient, isTamboClientError } = await import(${JSON.stringify(pathToFileURL(join(outDir, "index.js")).href)})
      const getWeather = {
        name: "get_weather",
        description: "Current weather in a city",
        inputSchema: Schema.Struct({ city: Schema.String }),
        tool: ({ city }) => ({ city, temperature: 21, conditions: "sunny" })
      }
      const client = new TamboClient({ apiKey: ${JSON.stringify(server.apiKey)}, tamboUrl: ${JSON.stringify(server.url)}, userKey: "standalone", tools: [getWeather] })
      let text = ""
      for await (const { event } of client.run("Hi")) if (event.type === "TEXT_MESSAGE_CONTENT") text += event.delta
      const failed = await client.fetchThread("no-such-thread").then(() => "no error", (error) => isTamboClientError(error) ? error._tag : "untyped")
      await client.destroy()
      console.log(JSON.stringify({ text, failed }))
    `
    const output = await node(["--input-type=module", "-e", script])
    expect(JSON.parse(output)).toEqual({ text: weatherText, failed: "ApiError" })
    expectWeatherRequests(server)
  }, 60_000)

  it("runs beside the app's own core and effect: a core tool runs in it, core's guard knows its errors", async () => {
    const tsx = join(packageDir, "..", "..", "node_modules", ".bin", "tsx")
    const output = await runProcess(tsx, ["--conditions=tambo-source", join(import.meta.dirname, "fixtures", "standalone-beside-core.ts")], {
      cwd: packageDir,
      env: {
        ...process.env,
        STANDALONE_URL: pathToFileURL(join(outDir, "index.js")).href,
        TEST_API_KEY: server.apiKey,
        TEST_URL: server.url
      }
    })
    expect(JSON.parse(output)).toEqual({
      text: weatherText,
      isTamboError: true,
      tag: "ApiError",
      instanceOfCoreClass: false,
      instanceOfClientClass: true
    })
  }, 60_000)

  it("loads the MCP SDK when a server connects, and runs its tool", async () => {
    await withCalculator(async ({ mcp, tambo }) => {
      const script = `
        const { TamboClient } = await import(${JSON.stringify(pathToFileURL(join(outDir, "index.js")).href)})
        const client = new TamboClient({ apiKey: ${JSON.stringify(tambo.apiKey)}, tamboUrl: ${JSON.stringify(tambo.url)}, userKey: "standalone" })
        const connection = await client.connectMcpServer({ url: ${JSON.stringify(mcp.url)}, serverKey: "calc" })
        const thread = await client.run("add 2 and 40").thread
        await client.destroy()
        console.log(JSON.stringify({ status: connection.status, last: thread.messages.at(-1).content[0].text }))
      `
      expect(JSON.parse(await node(["--input-type=module", "-e", script]))).toEqual({ status: "connected", last: "sum: 42" })
    })
  }, 60_000)
})
