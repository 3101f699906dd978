// The README's quick start, verbatim, so the documented example keeps working.
import TamboAI from "@tambo-ai/typescript-sdk"
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterEach, beforeEach, expect, it } from "vitest"
import { Script, startTestServer, type TestServer } from "../src/index.js"

let server: TestServer
beforeEach(async () => {
  server = await startTestServer()
})
afterEach(() => server.close())

it("streams a scripted reply and records the request", async () => {
  server.setScript([Script.text(["Hello", ", world"])])
  const client = new TamboAI({ apiKey: server.apiKey, baseURL: server.url })

  const stream = await client.threads.runs.create({
    message: { role: "user", content: [{ type: "text", text: "Hi" }] },
    thread: { userKey: "user-1" }
  })
  const types: Array<string> = []
  for await (const event of stream) types.push(event.type)

  expect(types).toEqual([
    "RUN_STARTED",
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "RUN_FINISHED"
  ])
  expect(server.requests[0]).toMatchObject({
    method: "POST",
    path: "/v1/threads/runs",
    body: { thread: { userKey: "user-1" } }
  })
  const [thread] = server.threads.list()
  expect(thread?.messages.map((message) => message.role)).toEqual(["user", "assistant"])
})

/** The first example under `heading` in the README, run as a file of its own: its code and what it printed. */
const runExample = async (heading: string) => {
  const readme = readFileSync(join(import.meta.dirname, "..", "README.md"), "utf8")
  const from = readme.indexOf(heading)
  expect(from).toBeGreaterThanOrEqual(0)
  const code = /```ts\n([\s\S]*?)```/.exec(readme.slice(from))![1]!
  const dir = mkdtempSync(join(import.meta.dirname, ".readme-"))
  try {
    const file = join(dir, "example.ts")
    writeFileSync(file, code)
    const { stdout } = await promisify(execFile)(process.execPath, ["--conditions=tambo-source", "--import", "tsx", file], {
      cwd: join(import.meta.dirname, ".."),
      encoding: "utf8",
      timeout: 50_000
    })
    return { code, stdout }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

// What an example prints is what it says it prints.
it("the AG-UI agent's example POSTs a RunAgentInput and gets the scripted events", async () => {
  const { code, stdout } = await runExample("## A scripted AG-UI agent")
  const printed = /\/\/ (RUN_STARTED .*)/.exec(code)![1]!
  expect(stdout).toContain(printed)
  expect(stdout).toContain("1 completed")
}, 60_000)

it("the holding proxy's example holds an answer of the server until released", async () => {
  const { stdout } = await runExample("## A holding proxy")
  expect(stdout.trim().split("\n")).toEqual(["the server answered; the client received it: false", "then: 200"])
}, 60_000)
