import { describe, expect, it } from "vitest"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const readme = readFileSync(join(here, "..", "README.md"), "utf8")

/** The first `ts` block after `heading` (or the README's first), run as a file of its own. */
const runBlock = (heading?: string): string => {
  const from = heading === undefined ? 0 : readme.indexOf(heading)
  expect(from, `the README has ${heading}`).toBeGreaterThanOrEqual(0)
  const code = readme.slice(from).match(/```ts\n([\s\S]*?)```/)![1]!
  const dir = mkdtempSync(join(here, ".readme-"))
  try {
    const file = join(dir, "example.ts")
    writeFileSync(file, code)
    return execFileSync(process.execPath, ["--conditions=tambo-source", "--import", "tsx", file], {
      cwd: join(here, ".."),
      encoding: "utf8",
      timeout: 60_000
    })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe("README", () => {
  it("its example runs and prints the streamed reply", () => {
    const out = runBlock()
    expect(out).toMatch(/\(\d+ messages\)/)
    expect(out.length).toBeGreaterThan(20)
  })

  it("its many-users example gives each user their own reply and threads", () => {
    const out = runBlock("## Serving many users")
    expect(out).toContain("alice: You said: Hi, I am Alice")
    expect(out).toContain("bob: You said: Hi, I am Bob")
    expect(out).toContain("threads: 1 1")
  })

  it("its AG-UI example runs a tool round against the scripted agent and sets the thread's agent state", () => {
    const out = runBlock("## AG-UI agents")
    expect(out).toContain("Let me check the weather in Paris.")
    expect(out).toContain("Here is the weather in Paris: 21°, sunny.")
    expect(out).toContain("(4 messages)")
    expect(out).toContain('state: {"unit":"celsius"}')
  })

  it("its MCP example hears a server's log messages and a call's progress", () => {
    const out = runBlock("## MCP servers")
    expect(out).toContain("progress 1/3")
    expect(out).toContain("progress 3/3")
    expect(out).toContain("3 pages indexed")
    expect(out).toContain("indexer info: indexed page 1")
    expect(out).toContain("indexer info: indexed page 3")
  })

  it("its testing example wires TestServer.layer into Tambo.layer", () => {
    const out = runBlock("## Testing with `@tambo-effect/testing`")
    expect(out).toContain("1 run request(s)")
    expect(out).toMatch(/value: 2/)
  })
})
