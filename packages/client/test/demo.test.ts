// The demo and the chat, run as a user runs them: child processes on the
// embedded testing server, their output read from a pipe.
import type { ChildProcessWithoutNullStreams } from "node:child_process"
import { describe, expect, it } from "vitest"
import { CLOUD_ENV, spawnCollecting, tsx } from "./processes.js"

const start = (script: string, env: Record<string, string> = {}, args: ReadonlyArray<string> = []) =>
  spawnCollecting(tsx, ["--conditions=tambo-source", script, ...args], { NO_COLOR: "1", ...env }, CLOUD_ENV)

const waitForOutput = async (output: { stdout: string; stderr: string }, text: string, timeoutMs = 15_000) => {
  const start = Date.now()
  while (!output.stdout.includes(text)) {
    if (Date.now() - start > timeoutMs) throw new Error(`no "${text}" in:\n${output.stdout}\nstderr:\n${output.stderr}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const send = (child: ChildProcessWithoutNullStreams, line: string) => child.stdin.write(`${line}\n`)

/**
 * `pnpm demo` with `args`, to its end: it exits 0 with nothing on stderr and plain text (a pipe gets
 * no escape sequences), and either backend plays the same opening: a reply, then a get_weather round
 * for Paris. Gives the output and the tool's result.
 */
const runDemo = async (args: ReadonlyArray<string> = []) => {
  const { output, exited } = start("scratchpad/demo.ts", {}, args)
  const code = await exited
  expect(output.stderr).toBe("")
  expect(code).toBe(0)
  const out = output.stdout
  expect(out).not.toContain("\x1b")
  expect(out).toContain("assistant> You said: Hi there!")
  expect(out).toContain("assistant> Let me check the weather in Paris.")
  expect(out).toContain('tool call: get_weather {"city":"Paris"}')
  const result = JSON.parse(/tool result: (.*)/.exec(out)![1]!)
  expect(result).toMatchObject({ city: "Paris", temperature: expect.any(Number) })
  return { out, result }
}

describe("pnpm demo", () => {
  it("streams a conversation with a tool round trip and a component, then exits 0", { timeout: 60_000 }, async () => {
    const { out, result } = await runDemo()
    expect(out).toContain("embedded testing server")
    // The props stream in one key at a time, ending with the tool's result.
    const props = [...out.matchAll(/component WeatherCard: (.*)/g)].map((m) => JSON.parse(m[1]!))
    expect(props[0]).toEqual({ city: "Paris" })
    expect(props.length).toBeGreaterThan(1)
    expect(JSON.parse(/component WeatherCard \(final\): (.*)/.exec(out)![1]!)).toEqual(result)
    expect(JSON.parse(/final WeatherCard props: (.*)/.exec(out)![1]!)).toEqual(result)
    expect(out).toMatch(/thread \S+: 6 messages/)
  })
})

describe("pnpm demo --agui", () => {
  it("the same conversation against the embedded AG-UI agent: text, then a get_weather round, then exits 0", { timeout: 60_000 }, async () => {
    const { out, result } = await runDemo(["--agui"])
    expect(out).toContain("embedded AG-UI agent")
    expect(result).toMatchObject({ conditions: expect.any(String) })
    expect(out).toContain(`assistant> Here is the weather in Paris: ${result.temperature}°, ${result.conditions}.`)
    // The client named the thread; the agent renders no component.
    expect(out).toMatch(/thread thr_\S+: 6 messages/)
    expect(out).not.toContain("WeatherCard")
  })
})

describe("pnpm chat", () => {
  it("answers piped messages and exits at the end of its input", { timeout: 60_000 }, async () => {
    const { child, output, exited } = start("scratchpad/chat.ts")
    child.stdin.end("Hi\nWhat is the weather in Oslo?\n")
    expect(await exited).toBe(0)
    expect(output.stderr).toBe("")
    expect(output.stdout).toContain("assistant> You said: Hi")
    expect(output.stdout).toContain('tool call: get_weather {"city":"Oslo"}')
    expect(output.stdout).toContain("component WeatherCard (final)")
    expect(output.stdout).toContain("bye")
  })

  it("Ctrl-C cancels the reply and keeps the chat going; twice at the prompt exits", { timeout: 60_000 }, async () => {
    const { child, output, exited } = start("scratchpad/chat.ts", { TAMBO_DEMO_PACE_MS: "60" })
    await waitForOutput(output, "talking to")
    send(child, "What is the weather in Paris?")
    await waitForOutput(output, "assistant> Let")
    child.kill("SIGINT")
    await waitForOutput(output, "(cancelled)")
    send(child, "Still there?")
    // The blank line after a reply: it finished.
    await waitForOutput(output, "assistant> You said: Still there?\n\n")
    child.kill("SIGINT")
    await waitForOutput(output, "(press Ctrl-C again to exit)")
    child.kill("SIGINT")
    expect(await exited).toBe(0)
    expect(output.stderr).toBe("")
    expect(output.stdout).not.toContain("tool result")
    expect(output.stdout).toContain("bye")
  })
})
