// The package's two entry points (`.` and `./mcp`) as built, ES and CommonJS: the hooks of one find
// the provider of the other. Rendered on the server, in a fresh Node process (the test runner's
// module resolution is not an app's).
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { promisify } from "node:util"
import { build, type Options } from "tsup"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import config from "../tsup.config.js"

const packageDir = join(import.meta.dirname, "..")

/** A page: the main entry's provider, and inside it the `./mcp` entry's hooks. */
const script = (load: string) => `
${load}
const React = require("react")
const { renderToString } = require("react-dom/server")
function Servers() {
  const servers = mcp.useTamboMcpServers()
  const { elicitation } = mcp.useTamboMcpElicitation()
  const prompts = mcp.useTamboMcpPromptList()
  return React.createElement("p", null, servers.length + " " + String(elicitation) + " " + prompts.data.length)
}
const page = React.createElement(index.TamboProvider, { apiKey: "key", tamboUrl: "http://127.0.0.1:9", userKey: "user-1" },
  React.createElement(Servers))
process.stdout.write(renderToString(page))
`

describe("the built entry points", () => {
  let outDir = ""
  beforeAll(async () => {
    // Inside the package's `node_modules`, so that what the build leaves external resolves as in an app.
    const cache = join(packageDir, "node_modules", ".cache")
    await mkdir(cache, { recursive: true })
    outDir = await mkdtemp(join(cache, "entries-"))
    // The config's entries are relative to the package; the tests may run from the repository's root.
    const entry = Object.fromEntries(
      Object.entries((config as Options).entry as Record<string, string>).map(([name, path]) => [name, join(packageDir, path)])
    )
    await build({
      ...(config as Options),
      entry,
      config: false,
      silent: true,
      dts: false,
      sourcemap: false,
      outDir,
      // The workspace's packages (and effect) inlined from their sources, as its own tools read them: no
      // dependence on their builds. React stays external, one copy for both entries, as in an app.
      noExternal: [/^@tambo-effect\//, /^effect(\/|$)/, /^@tambo-ai\/typescript-sdk(\/|$)/],
      external: ["react", "react-dom", /^@modelcontextprotocol\/sdk(\/|$)/],
      esbuildOptions(options) {
        options.conditions = ["tambo-source"]
      }
    })
  }, 60_000)
  afterAll(async () => {
    await rm(outDir, { recursive: true, force: true })
  })

  const render = async (file: string, load: string) => {
    await writeFile(join(outDir, file), script(load))
    // No inherited NODE_OPTIONS: the test runner's source conditions would resolve the sources.
    const env = { ...process.env }
    delete env["NODE_OPTIONS"]
    const { stdout } = await promisify(execFile)(process.execPath, [join(outDir, file)], { cwd: outDir, env })
    return stdout
  }

  it("CommonJS: each entry is a bundle of its own, and the ./mcp hooks find the main entry's provider", async () => {
    const html = await render(
      "page.cjs",
      `const index = require("./index.cjs"); const mcp = require("./mcp.cjs")`
    )
    expect(html).toBe("<p>0 null 0</p>")
  })

  it("ES modules: the entries share their modules through a chunk", async () => {
    const html = await render(
      "page.mjs",
      `import { createRequire } from "node:module"; const require = createRequire(import.meta.url)
const index = await import("./index.js"); const mcp = await import("./mcp.js")`
    )
    expect(html).toBe("<p>0 null 0</p>")
  })
})
