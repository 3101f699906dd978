import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

const here = import.meta.dirname

/** The first `ts` block after `heading` (or the README's first), run as a file of its own. */
const runBlock = async (heading?: string): Promise<string> => {
  const readme = readFileSync(join(here, "..", "README.md"), "utf8")
  const from = heading === undefined ? 0 : readme.indexOf(heading)
  expect(from, `the README has ${heading}`).toBeGreaterThanOrEqual(0)
  const code = /```ts\n([\s\S]*?)```/.exec(readme.slice(from))![1]!
  const dir = mkdtempSync(join(here, ".readme-"))
  try {
    const file = join(dir, "example.ts")
    writeFileSync(file, code)
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--conditions=tambo-source", "--import", "tsx", file],
      { cwd: join(here, ".."), encoding: "utf8", timeout: 50_000 }
    )
    return stdout
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe("README", () => {
  it("its example runs: streamed text, then the thread", { timeout: 60_000 }, async () => {
    const stdout = await runBlock()
    expect(stdout).toContain("Let me check the weather in Paris.")
    expect(stdout).toMatch(/\(\d+ messages\)/)
  })

  it("its MCPClient example connects to the MCP server it starts and calls its tool", { timeout: 60_000 }, async () => {
    const stdout = await runBlock("## One MCP server on its own: `MCPClient`")
    expect(stdout).toContain("tools: add")
    expect(stdout).toContain("2 + 40 = 42")
  })

  it("its AG-UI example runs a tool round against the scripted agent and sets the agent state", { timeout: 60_000 }, async () => {
    const stdout = await runBlock("## An AG-UI agent instead of the Tambo API")
    expect(stdout).toContain("Let me check the weather in Paris.")
    expect(stdout).toContain("Here is the weather in Paris: 21°, sunny.")
    expect(stdout).toMatch(/thr_\w+: 4 messages/)
    expect(stdout).toContain('state: {"unit":"celsius"}')
  })
})
