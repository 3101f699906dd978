import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

const here = import.meta.dirname

describe("README", () => {
  it("its example runs: streamed text, then the thread", { timeout: 60_000 }, async () => {
    const readme = readFileSync(join(here, "..", "README.md"), "utf8")
    const code = /```ts\n([\s\S]*?)```/.exec(readme)![1]!
    const dir = mkdtempSync(join(here, ".readme-"))
    try {
      const file = join(dir, "example.ts")
      writeFileSync(file, code)
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ["--conditions=tambo-source", "--import", "tsx", file],
        { cwd: join(here, ".."), encoding: "utf8", timeout: 50_000 }
      )
      expect(stdout).toContain("Let me check the weather in Paris.")
      expect(stdout).toMatch(/\(\d+ messages\)/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
