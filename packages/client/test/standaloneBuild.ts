/**
 * What the tests of the two standalone builds (`standalone.test.ts` for `import`,
 * `standalone-require.test.ts` for `require`) share: the build made from `tsup.config.ts` into a
 * directory of their own, the conversation they run in a fresh process, and what that
 * conversation must have sent.
 */
import { Script, startTestServer, type TestServer } from "@tambo-effect/testing"
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, readdir, readFile } from "node:fs/promises"
import { builtinModules } from "node:module"
import { join } from "node:path"
import { build, type Options } from "tsup"
import { expect } from "vitest"
import { startMcpServer } from "../../core/test/mcp/server.js"
import { calculator } from "../../core/test/mcp/tools.js"
import configs from "../tsup.config.js"

/** The client package's directory. */
export const packageDir = join(import.meta.dirname, "..")

/**
 * Runs `file` with `args` in a fresh process, in `cwd` (with `env`, else this process's); resolves
 * with its output, rejects with its error output.
 */
export const runProcess = (
  file: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env?: NodeJS.ProcessEnv }
): Promise<string> =>
  new Promise<string>((resolve, reject) =>
    execFile(file, args, { cwd: options.cwd, env: options.env ?? process.env, timeout: 60_000 }, (error, stdout, stderr) =>
      error === null ? resolve(stdout) : reject(new Error(`${error.message}\n${stderr}`))))

/**
 * A fresh directory for a build, inside the package's `node_modules`, so that what the build
 * leaves external (the MCP SDK) resolves as it would in an app.
 */
export const scratchDir = async (prefix: string): Promise<string> => {
  const cache = join(packageDir, "node_modules", ".cache")
  await mkdir(cache, { recursive: true })
  return mkdtemp(join(cache, prefix))
}

/** Builds the `tsup.config.ts` build whose output is `configOutDir` (as `pnpm build` does) into `outDir`. */
export const buildStandalone = async (configOutDir: "dist/node" | "dist/node-cjs", outDir: string): Promise<void> => {
  const standalone = (configs as ReadonlyArray<Options>).find((options) => options.outDir === configOutDir)
  if (standalone === undefined) throw new Error(`tsup.config.ts has no standalone build into ${configOutDir}`)
  const sources = (await readdir(join(packageDir, "src"))).filter((name) => name.endsWith(".ts"))
  await build({
    ...standalone,
    config: false,
    silent: true,
    sourcemap: false,
    entry: sources.map((name) => join(packageDir, "src", name)),
    outDir
  })
}

/** The testing server for the conversation both tests run: a reply, a `get_weather` call, a reply. */
export const startWeatherServer = (): Promise<TestServer> =>
  startTestServer({
    script: [
      Script.text("Let me check."),
      Script.toolCall("get_weather", { city: "Paris" }),
      Script.text("The weather in Paris is sunny.")
    ]
  })

/** What the conversation streams as text. */
export const weatherText = "Let me check.The weather in Paris is sunny."

interface RunBody {
  readonly message: { readonly content: ReadonlyArray<{ readonly content?: ReadonlyArray<{ readonly text: string }> }> }
  readonly tools?: ReadonlyArray<{ readonly inputSchema: unknown }>
}

/**
 * The conversation sent the tool's input schema (the user's own effect Schema, as JSON Schema)
 * and, in the continuation, what the tool returned.
 */
export const expectWeatherRequests = (server: TestServer): void => {
  const runs = server.requests.filter((request) => request.method === "POST" && request.path.endsWith("/runs"))
  const [first, continuation] = runs.map((request) => request.body as RunBody)
  expect(first?.tools?.[0]?.inputSchema).toMatchObject({ type: "object", properties: { city: { type: "string" } }, required: ["city"] })
  expect(JSON.parse(continuation?.message.content[0]?.content?.[0]?.text ?? "null")).toEqual({ city: "Paris", temperature: 21, conditions: "sunny" })
}

/**
 * An MCP server with the calculator's tools, and a testing server whose model calls its `add` with
 * 2 and 40, then answers `sum: <the result>`; both closed after `f`.
 */
export const withCalculator = async <A>(
  f: (servers: { readonly mcp: { readonly url: string }; readonly tambo: TestServer }) => Promise<A>
): Promise<A> => {
  const mcp = await startMcpServer({ setup: calculator })
  const tambo = await startTestServer({
    script: (request) =>
      request.toolResults.length === 0
        ? [Script.toolCall("add", { a: 2, b: 40 })]
        : [Script.text(`sum: ${request.toolResults[0]!.text}`)]
  })
  try {
    return await f({ mcp, tambo })
  } finally {
    await Promise.all([mcp.close(), tambo.close()])
  }
}

/** A specifier of one of Node's own modules. */
export const isNodeBuiltin = (specifier: string): boolean => specifier.startsWith("node:") || builtinModules.includes(specifier)

/** A specifier into the MCP SDK, which both builds leave external. */
export const isMcpSdk = (specifier: string): boolean => specifier.startsWith("@modelcontextprotocol/sdk/")

/**
 * The files of `files` (under `dir`) that hold a character outside ASCII. Node keeps a module's
 * source in memory whole, and V8 stores a source with any such character at two bytes a character.
 */
export const nonAsciiFiles = async (dir: string, files: ReadonlyArray<string>): Promise<ReadonlyArray<string>> => {
  const found: Array<string> = []
  for (const file of files) {
    if (/[^\x00-\x7f]/.test(await readFile(join(dir, file), "utf8"))) found.push(file)
  }
  return found
}
