// @vitest-environment happy-dom
import { fireEvent, render, screen, waitFor } from "@testing-library/react"
import { AgUiAgent } from "@tambo-effect/testing"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { ComponentType } from "react"
import { describe, expect, it } from "vitest"
import { TamboProvider } from "../src/index.js"
import { connection, sleep, useServer } from "./helpers.js"
import { useMcpServers } from "./mcpServers.js"

const here = import.meta.dirname
const server = useServer()
const startMcp = useMcpServers()

/** The first `tsx` block after `heading` (or the README's first), imported as a module of its own. */
const importBlock = async <M,>(heading: string | undefined, dir: string): Promise<M> => {
  const readme = readFileSync(join(here, "..", "README.md"), "utf8")
  const from = heading === undefined ? 0 : readme.indexOf(heading)
  expect(from, `the README has ${heading}`).toBeGreaterThanOrEqual(0)
  const code = /```tsx\n([\s\S]*?)```/.exec(readme.slice(from))![1]!
  const file = join(dir, "example.tsx")
  writeFileSync(
    file,
    code.replace(`from "@tambo-effect/react/mcp"`, `from "../../src/upstreamMcp.js"`)
      .replace(`from "@tambo-effect/react"`, `from "../../src/index.js"`)
  )
  return (await import(/* @vite-ignore */ file)) as M
}

describe("README", () => {
  it("its example chats, calls the tool and renders the WeatherCard", async () => {
    const dir = mkdtempSync(join(here, ".readme-"))
    try {
      const { App } = await importBlock<{ App: ComponentType<{ readonly apiKey: string; readonly tamboUrl?: string }> }>(
        undefined,
        dir
      )
      render(<App apiKey={server().apiKey} tamboUrl={server().url} />)
      fireEvent.change(screen.getByPlaceholderText("Ask about the weather"), {
        target: { value: "What is the weather in Paris?" }
      })
      fireEvent.click(screen.getByText("Send"))
      await waitFor(() => expect(screen.getByText("Paris: 18°C, cloudy")).toBeTruthy(), { timeout: 10_000 })
      expect(screen.getByText("Let me check the weather in Paris.")).toBeTruthy()
      expect(screen.getByText("Here is the weather in Paris.")).toBeTruthy()
      // The client names the thread in the background once it has enough messages: let that finish.
      await waitFor(() => expect(server().threads.list()[0]?.name).toBeTruthy())
      await sleep(50)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("its @tambo-effect/react/mcp example lists the prompts of a server by their prefixed names, inside a TamboMcpProvider", async () => {
    const mcp = await startMcp("prompter")
    const dir = mkdtempSync(join(here, ".readme-"))
    try {
      const { McpPanel } = await importBlock<{
        McpPanel: ComponentType<{ readonly onPick: (name: string) => void }>
      }>("### `@tambo-effect/react/mcp`", dir)
      const picked: Array<string> = []
      render(
        <TamboProvider {...connection(server(), { mcpServers: [{ url: mcp.url, serverKey: "docs" }] })}>
          <McpPanel onPick={(name) => picked.push(name)} />
        </TamboProvider>
      )
      expect(screen.getByText("Loading prompts…")).toBeTruthy()
      fireEvent.click(await screen.findByText("docs:review", undefined, { timeout: 10_000 }))
      expect(picked).toEqual(["docs:review"])
      expect(screen.getByText("docs:hello")).toBeTruthy()
      // The provider asked for a token for its context key (Tambo's own server).
      await waitFor(() =>
        expect(server().requests.filter((r) => r.method === "POST" && r.path === "/auth/mcp/access-token").map((r) => r.body))
          .toEqual([{ contextKey: "support" }])
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("its AG-UI example talks to the scripted agent: a get_weather round, and the agent state sent with the next run", async () => {
    const agent = await AgUiAgent.start({ script: AgUiAgent.scripts.weatherAssistant })
    const dir = mkdtempSync(join(here, ".readme-"))
    try {
      const { AgentApp } = await importBlock<{ AgentApp: ComponentType<{ readonly agentUrl: string }> }>("## Any AG-UI agent", dir)
      render(<AgentApp agentUrl={agent.url} />)
      const ask = (text: string) => {
        fireEvent.change(screen.getByPlaceholderText("Ask the agent"), { target: { value: text } })
        fireEvent.click(screen.getByText("Send"))
      }
      ask("What is the weather in Paris?")
      await waitFor(() => expect(screen.getByText("Here is the weather in Paris: 18°, cloudy.")).toBeTruthy(), { timeout: 10_000 })
      fireEvent.click(screen.getByText("Unit: celsius"))
      await waitFor(() => expect(screen.getByText("Unit: fahrenheit")).toBeTruthy())
      ask("Thanks!")
      await waitFor(() => expect(agent.requests).toHaveLength(3))
      expect(agent.requests[2]!.input?.state).toEqual({ unit: "fahrenheit" })
      await waitFor(() => expect(screen.getByText("You said: Thanks!")).toBeTruthy())
    } finally {
      rmSync(dir, { recursive: true, force: true })
      await agent.close()
    }
  })
})
