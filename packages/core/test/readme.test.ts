import { describe, expect, it } from "vitest"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { execFileSync } from "node:child_process"
import { mkdtempSync, writeFileSync, rmSync } from "node:fs"
import { dirname, join } from "node:path"

const here = dirname(fileURLToPath(import.meta.url))

describe("README", () => {
  it("its example runs and prints the streamed reply", () => {
    const readme = readFileSync(join(here, "..", "README.md"), "utf8")
    const code = readme.match(/```ts\n([\s\S]*?)```/)![1]!
    const dir = mkdtempSync(join(here, ".readme-"))
    try {
      const file = join(dir, "example.ts")
      writeFileSync(file, code)
      const out = execFileSync(process.execPath, ["--conditions=tambo-source", "--import", "tsx", file], {
        cwd: join(here, ".."),
        encoding: "utf8",
        timeout: 60_000
      })
      expect(out).toMatch(/\(\d+ messages\)/)
      expect(out.length).toBeGreaterThan(20)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
