/**
 * The example app (`scratchpad/react-chat`, built) in Chromium against the scripted AG-UI agent
 * (`?agentUrl=`): a reply, a frontend tool round run in the page, and the Tambo-only UI hidden.
 * Ends with a screenshot in `packages/react/test-output/`.
 */
import { AgUiAgent } from "@tambo-effect/testing"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { outputDir, send, useExampleApp, waitForIdle } from "./app.js"

const { openAgentApp, skipped } = useExampleApp()

const assistantTexts = (page: Page) =>
  page.locator('[data-testid="message"][data-role="assistant"] [data-testid="message-text"]').allTextContents()

describe.skipIf(skipped !== undefined)("react-chat against an AG-UI agent, in Chromium", () => {
  it("a reply and a get_weather round are rendered; threads are the page's; no Tambo-only UI", { timeout: 60_000 }, async () => {
    const { agent, errors, page } = await openAgentApp(AgUiAgent.scripts.weatherAssistant)

    await send(page, "Hi there!")
    await page.getByText("You said: Hi there!").waitFor()
    await waitForIdle(page)

    await send(page, "What is the weather in Paris?")
    await page.getByText("Let me check the weather in Paris.").waitFor()
    await page.locator('[data-testid="tool-call"][data-completed="true"]').waitFor()
    await page.getByText(/^Here is the weather in Paris: -?\d+°, \w+\.$/).waitFor()
    await waitForIdle(page)

    expect(await assistantTexts(page)).toEqual([
      "You said: Hi there!",
      "Let me check the weather in Paris.",
      expect.stringMatching(/^Here is the weather in Paris: /)
    ])
    // Three runs, each with the whole conversation; the third carries the tool's result.
    expect(agent.requests.map((request) => request.input?.messages.map((message) => message.role))).toEqual([
      ["user"],
      ["user", "assistant", "user"],
      ["user", "assistant", "user", "assistant", "tool"]
    ])
    expect(agent.requests[1]!.input?.tools.map((tool) => tool.name)).toContain("get_weather")
    const result = agent.requests[2]!.input?.messages.at(-1)
    expect(JSON.parse(String(result?.content))).toMatchObject({ city: "Paris", temperature: expect.any(Number) })

    // The thread list is this page's; suggestions, voice and the MCP menus are not there.
    await expect(page.locator('[data-testid="thread-list"][data-backend="ag-ui"] [data-testid="thread-item"]').count()).resolves.toBe(1)
    await expect(page.getByTestId("voice").count()).resolves.toBe(0)
    await expect(page.getByTestId("suggestions").count()).resolves.toBe(0)
    await page.getByTestId("message-input").fill("/")
    await expect(page.getByTestId("prompt-menu").count()).resolves.toBe(0)

    await page.screenshot({ path: join(outputDir, "agent-weather.png"), fullPage: true })
    expect(errors).toEqual([])
  })
})
