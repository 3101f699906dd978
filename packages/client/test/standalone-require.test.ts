/**
 * The build Node requires: `@tambo-effect/client` under the `node` and `require` conditions is a
 * standalone CommonJS build, one bundle with core, effect, @effect/platform and the typescript-sdk
 * inlined, and for each of the package's modules a file that re-exports its part of that bundle.
 * These tests build it from `tsup.config.ts` into a package of a temporary `node_modules`, as
 * `pnpm build` makes `dist/node-cjs`, beside the package's own `package.json`, and require it by
 * name in fresh processes, the way a user's CommonJS script does.
 */
import type { TestServer } from "@tambo-effect/testing"
import { copyFile, mkdir, readdir, readFile, rm } from "node:fs/promises"
import { join, relative } from "node:path"
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

let appDir: string
let outDir: string
let server: TestServer

/** CommonJS code in a fresh Node process started in the app's directory; resolves with its output. */
const node = (script: string) => runProcess(process.execPath, ["-e", script], { cwd: appDir })

/** A line for the scripts: whether any module of the MCP SDK has been required so far. */
const mcpLoaded = `Object.keys(require.cache).some((file) => file.includes("@modelcontextprotocol"))`

beforeAll(async () => {
  appDir = await scratchDir("standalone-require-")
  const installed = join(appDir, "node_modules", "@tambo-effect", "client")
  outDir = join(installed, "dist", "node-cjs")
  await mkdir(installed, { recursive: true })
  await copyFile(join(packageDir, "package.json"), join(installed, "package.json"))
  await buildStandalone("dist/node-cjs", outDir)
  server = await startWeatherServer()
}, 120_000)

afterAll(async () => {
  await server?.close()
  if (appDir !== undefined) await rm(appDir, { recursive: true, force: true })
})

/** The built files, relative to the build's directory. */
const builtFiles = async (dir: string): Promise<ReadonlyArray<string>> =>
  (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile() && entry.name.endsWith(".cjs"))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))

describe("the standalone CommonJS build for Node", () => {
  it("is what Node requires for @tambo-effect/client and its modules", async () => {
    const script = `console.log(JSON.stringify(["@tambo-effect/client", "@tambo-effect/client/errors", "@tambo-effect/client/SnapshotStrategy"].map((name) => require.resolve(name))))`
    const resolved: ReadonlyArray<string> = JSON.parse(await node(script))
    expect(resolved.map((file) => file.slice(file.indexOf("/dist/")))).toEqual([
      "/dist/node-cjs/index.cjs",
      "/dist/node-cjs/errors.cjs",
      "/dist/node-cjs/SnapshotStrategy.cjs"
    ])
  })

  it("is one copy of the code: each module's names are the package's, so instanceof holds across them", async () => {
    const script = `
      const client = require("@tambo-effect/client")
      const modules = ["errors", "Store", "SnapshotStrategy", "TamboClient", "TamboStream"]
      const differ = modules.flatMap((name) => {
        const module = require("@tambo-effect/client/" + name)
        return Object.keys(module).filter((key) => key in client && module[key] !== client[key]).map((key) => name + "." + key)
      })
      const { ApiError } = require("@tambo-effect/client/errors")
      const error = new client.ApiError({ reason: "NotFound", message: "no such thread", retryable: false })
      // TypeScript's and Babel's interop read __esModule, as on the composable CommonJS build's modules.
      const esModules = ["", ...modules.map((name) => "/" + name)].filter((path) => require("@tambo-effect/client" + path).__esModule === true)
      console.log(JSON.stringify({ differ, instanceOf: error instanceof ApiError, esModules: esModules.length, shared: Object.keys(require("@tambo-effect/client/errors")).length }))
    `
    const output = JSON.parse(await node(script))
    expect(output).toMatchObject({ differ: [], instanceOf: true, esModules: 6 })
    expect(output.shared).toBeGreaterThan(5)
    // One bundle holds the code; every module's file is a few lines that point into it.
    const sizes = await Promise.all((await builtFiles(outDir)).map(async (file) => [file, (await readFile(join(outDir, file))).length] as const))
    expect(sizes.filter(([, size]) => size > 1_000).map(([file]) => file)).toEqual(["internal/standalone.cjs"])
  })

  it("requires only Node's own modules, and the MCP SDK only in the code evaluated when a server connects", async () => {
    const required: Array<string> = []
    for (const file of await builtFiles(outDir)) {
      const code = await readFile(join(outDir, file), "utf8")
      for (const match of code.matchAll(/\brequire\(\s*["']([^"'.][^"']*)["']\s*\)/g)) required.push(match[1]!)
    }
    expect(required.filter((specifier) => !isNodeBuiltin(specifier) && !isMcpSdk(specifier))).toEqual([])
    expect(required.filter(isMcpSdk).length).toBeGreaterThan(0)
    expect(await node(`require("@tambo-effect/client"); console.log(${mcpLoaded})`)).toBe("false\n")
  })

  it("is ASCII, so that Node holds its source at one byte a character", async () => {
    expect(await nonAsciiFiles(outDir, await builtFiles(outDir))).toEqual([])
  })

  // The user's `effect` is another copy than the one inlined: values cross by effect's
  // `Symbol.for` type ids, as between two installed copies of one version.
  it("runs a conversation with a tool whose input is the user's own effect Schema; its errors are typed; the MCP SDK stays unloaded", async () => {
    const script = `
      const Schema = require("effect/Schema")
      const { TamboClient, isTamboClientError } = require("@tambo-effect/client")
      const { ApiError } = require("@tambo-effect/client/errors")
      const getWeather = {
        name: "get_weather",
        description: "Current weather in a city",
        inputSchema: Schema.Struct({ city: Schema.String }),
        tool: async ({ city }) => ({ city, temperature: 21, conditions: "sunny" })
      }
      const main = async () => {
        const client = new TamboClient({ apiKey: ${JSON.stringify(server.apiKey)}, tamboUrl: ${JSON.stringify(server.url)}, userKey: "standalone-require", tools: [getWeather] })
        let text = ""
        for await (const { event } of client.run("Hi")) if (event.type === "TEXT_MESSAGE_CONTENT") text += event.delta
        const failed = await client.fetchThread("no-such-thread").then(
          () => "no error",
          (error) => isTamboClientError(error) && error instanceof ApiError ? error._tag + ":" + error.reason : "untyped"
        )
        await client.destroy()
        console.log(JSON.stringify({ text, failed, mcpLoaded: ${mcpLoaded} }))
      }
      main().catch((error) => { console.error(error); process.exit(1) })
    `
    expect(JSON.parse(await node(script))).toEqual({
      text: weatherText,
      // The API answers a thread that is missing, or not the caller's, with 403.
      failed: "ApiError:Forbidden",
      mcpLoaded: false
    })
    expectWeatherRequests(server)
  }, 60_000)

  it("requires the MCP SDK when a server connects, and runs its tool", async () => {
    await withCalculator(async ({ mcp, tambo }) => {
      const script = `
        const { TamboClient } = require("@tambo-effect/client")
        const main = async () => {
          const client = new TamboClient({ apiKey: ${JSON.stringify(tambo.apiKey)}, tamboUrl: ${JSON.stringify(tambo.url)}, userKey: "standalone-require" })
          const connection = await client.connectMcpServer({ url: ${JSON.stringify(mcp.url)}, serverKey: "calc" })
          const thread = await client.run("add 2 and 40").thread
          await client.destroy()
          console.log(JSON.stringify({ status: connection.status, last: thread.messages.at(-1).content[0].text, mcpLoaded: ${mcpLoaded} }))
        }
        main().catch((error) => { console.error(error); process.exit(1) })
      `
      expect(JSON.parse(await node(script))).toEqual({ status: "connected", last: "sum: 42", mcpLoaded: true })
    })
  }, 60_000)
})
