// `pnpm chat` on a terminal: the script runs in a pseudo-terminal (util-linux's `script`), typed
// keys go in as a person's would, and what the terminal shows comes back out, echo included.
import type { ChildProcessWithoutNullStreams } from "node:child_process"
import { existsSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { CLOUD_ENV, spawnCollecting, tsx } from "./processes.js"

const SCRIPT = "/usr/bin/script"

/** What the terminal shows, without colours and cursor moves (a line's `\r` redraws stay). */
const plain = (text: string) => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")

/** The chat in a pseudo-terminal (util-linux `script`): what it writes is in `output.stdout`. */
const startOnTerminal = (env: Record<string, string>) =>
  spawnCollecting(
    SCRIPT,
    ["--quiet", "--flush", "--return", "--command", `${tsx} --conditions=tambo-source scratchpad/chat.ts`, "/dev/null"],
    { TERM: "xterm", ...env },
    [...CLOUD_ENV, "NO_COLOR"]
  )

const waitForScreen = async (output: { stdout: string; stderr: string }, text: string | RegExp, timeoutMs = 20_000) => {
  const start = Date.now()
  const found = () => (typeof text === "string" ? plain(output.stdout).includes(text) : text.test(plain(output.stdout)))
  while (!found()) {
    if (Date.now() - start > timeoutMs) throw new Error(`no ${String(text)} on the screen:\n${plain(output.stdout)}\nstderr:\n${output.stderr}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** Keys typed one by one, as a person types them. */
const type = async (child: ChildProcessWithoutNullStreams, text: string) => {
  for (const key of text) {
    child.stdin.write(key)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

describe.skipIf(!existsSync(SCRIPT))("pnpm chat on a terminal", () => {
  it("shows thinking… until the first token; what is typed during a reply waits for its end, then is the next you> line", {
    timeout: 60_000
  }, async () => {
    const { child, exited, output } = startOnTerminal({ TAMBO_DEMO_PACE_MS: "60" })
    await waitForScreen(output, "you> ")
    await type(child, "What is the weather in Paris?\r")
    await waitForScreen(output, "assistant> Let")
    // Typed (and sent) while the reply streams.
    await type(child, "Still there?\r")
    await waitForScreen(output, "assistant> You said: Still there?")
    await type(child, "/exit\r")
    expect(await exited).toBe(0)

    const screen = plain(output.stdout)
    const asked = screen.indexOf("What is the weather in Paris?")
    const thinking = screen.indexOf("thinking…", asked)
    const firstToken = screen.indexOf("assistant> Let")
    expect(thinking).toBeGreaterThan(asked)
    expect(thinking).toBeLessThan(firstToken)
    // The spinner is erased (the line rewritten from its start) before anything else is printed.
    expect(screen).not.toMatch(/thinking…[^\r]/)
    // It shows again while the tool's result goes to the model.
    const toolResult = screen.indexOf("tool result:")
    const answer = screen.indexOf("assistant> Here is the weather")
    expect(answer).toBeGreaterThan(toolResult)
    expect(screen.slice(toolResult, answer)).toContain("thinking…")
    // Nothing typed landed inside the reply: it shows up once, after the reply's end.
    const replyEnd = screen.indexOf("component WeatherCard (final)")
    expect(replyEnd).toBeGreaterThan(firstToken)
    expect(screen.indexOf("Still there?")).toBeGreaterThan(replyEnd)
    expect(screen).toMatch(/you> Still there\?\r?\n/)
    expect(output.stderr).toBe("")
  })
})
