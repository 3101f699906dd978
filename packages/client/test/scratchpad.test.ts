/**
 * The README's first script: `scratchpad/hello.ts` runs as `pnpm scratch`
 * runs it (tsx, the `tambo-source` condition, from the repository's root),
 * so a script dropped beside it resolves `effect`, core, client and testing.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { resolve } from "node:path"

const repoDir = resolve(import.meta.dirname, "..", "..", "..")

describe("scratchpad", () => {
  it("hello.ts runs a conversation through the client and through core", async () => {
    const result = await new Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }>(
      (done) =>
        execFile(
          process.execPath,
          ["--conditions=tambo-source", "--import", "tsx", "scratchpad/hello.ts"],
          { cwd: repoDir, timeout: 50_000 },
          (error, stdout, stderr) =>
            done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
        )
    )
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    expect(result.stdout).toBe("client: Hello from the testing server.\ncore: Hello from the testing server.\n")
  }, 60_000)
})
