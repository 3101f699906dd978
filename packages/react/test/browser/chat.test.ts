/**
 * The example app (`scratchpad/react-chat`, built) in Chromium against a
 * scripted testing server: typing, streaming text, a generative component
 * fed by a client-side tool, cancelling, switching threads. Each test ends
 * with a screenshot in `packages/react/test-output/`.
 */
import { Script } from "@tambo-effect/testing"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { startExampleMcpServer, WEATHER_GUIDE } from "../../../../scratchpad/react-chat/mcp-server.js"
import { outputDir, send, useExampleApp } from "./app.js"

// One Chromium and the served app for this file; skipped, saying why, where Chromium is missing outside CI.
const { openApp, skipped } = useExampleApp()

const screenshot = (page: Page, name: string) => page.screenshot({ path: join(outputDir, `${name}.png`), fullPage: true })

const assistantText = (page: Page) =>
  page.locator('[data-testid="message"][data-role="assistant"] [data-testid="message-text"]').last().textContent()

/**
 * The end of an exchange: the suggestions for the reply are asked for too (their requests
 * count), nothing went wrong, and a screenshot.
 */
const endsWithSuggestions = async (
  { aborted, errors, page }: { readonly aborted: ReadonlyArray<string>; readonly errors: ReadonlyArray<string>; readonly page: Page },
  name: string
) => {
  await page.getByTestId("suggestion").first().waitFor({ timeout: 10_000 })
  expect(errors).toEqual([])
  expect(aborted).toEqual([])
  await screenshot(page, name)
}

const waitForStatus = (page: Page, status: "idle" | "streaming" | "waiting") =>
  page.locator(`[data-testid="status"][data-status="${status}"]`).waitFor()

describe.skipIf(skipped !== undefined)(`react-chat in Chromium${skipped === undefined ? "" : ` (skipped: ${skipped})`}`, () => {
  it("sends a message and streams the reply in", async () => {
    const words = "The quick brown fox jumps over the lazy dog, again and again.".match(/\s*\S+/g)!
    const { aborted, errors, page } = await openApp({ script: [Script.pace(60), Script.text(words)] })
    await send(page, "Tell me something")

    const user = page.locator('[data-testid="message"][data-role="user"]')
    await expect.poll(() => user.last().textContent()).toBe("Tell me something")
    await expect(page.getByTestId("message-input").inputValue()).resolves.toBe("")

    // Watch the text grow: several distinct lengths before the end.
    const seen = new Set<string>()
    const full = words.join("")
    const deadline = Date.now() + 15_000
    while (Date.now() < deadline) {
      const text = (await assistantText(page).catch(() => null)) ?? ""
      if (text !== "") seen.add(text)
      if (text === full) break
      await page.waitForTimeout(25)
    }
    expect([...seen].at(-1)).toBe(full)
    expect(seen.size).toBeGreaterThanOrEqual(3)
    await waitForStatus(page, "idle")
    expect(await page.locator('[data-testid="message"]').count()).toBe(2)
    await endsWithSuggestions({ aborted, errors, page }, "streams-text")
  })

  it("calls the get_weather tool and renders the WeatherCard with its streamed props", async () => {
    const { aborted, api, errors, page } = await openApp({
      script: async (request, context) => [Script.pace(40), ...(await Script.weatherAssistant(request, context))]
    })
    await send(page, "What is the weather in Paris?")

    const card = page.getByTestId("weather-card")
    await card.waitFor({ timeout: 15_000 })
    await page.locator('[data-testid="weather-card"][data-complete="true"]').waitFor()
    await waitForStatus(page, "idle")
    expect(await page.getByTestId("weather-city").textContent()).toBe("Paris")
    // The tool's made-up weather came back as the card's props.
    const toolResult = api.requests
      .map((request) => request.body as { message?: { content?: Array<{ type: string; content?: Array<{ text?: string }> }> } })
      .flatMap((body) => body?.message?.content ?? [])
      .find((block) => block.type === "tool_result")
    const weather = JSON.parse(toolResult?.content?.[0]?.text ?? "{}") as { temperature: number; conditions: string }
    expect(await page.getByTestId("weather-temperature").textContent()).toBe(`${weather.temperature}°C`)
    expect(await page.getByTestId("weather-conditions").textContent()).toContain(weather.conditions)
    expect(await page.locator('[data-testid="tool-call"][data-completed="true"]').count()).toBe(1)
    expect(await page.getByTestId("weather-card-loading").count()).toBe(0)
    await endsWithSuggestions({ aborted, errors, page }, "weather-card")
  })

  it("cancels a slow run and settles", async () => {
    const words = Array.from({ length: 200 }, (_, i) => ` word${i}`)
    const { aborted, api, errors, page } = await openApp({ script: [Script.pace(100), Script.text(words), Script.hang()] })
    await send(page, "Talk slowly")
    await expect.poll(() => assistantText(page).catch(() => ""), { timeout: 10_000 }).toMatch(/word2/)

    await page.getByTestId("cancel").click()
    await waitForStatus(page, "idle")
    await expect.poll(() => page.getByTestId("cancel").isDisabled()).toBe(true)
    await expect.poll(() => api.cancels.length, { timeout: 10_000 }).toBe(1)
    expect(api.cancels[0]?.threadId).toBe(api.threads.list()[0]?.id)

    // Nothing more arrives.
    const settled = await assistantText(page)
    await page.waitForTimeout(400)
    expect(await assistantText(page)).toBe(settled)
    expect(settled!.length).toBeLessThan(words.join("").length)
    // The app is usable again.
    await expect.poll(async () => {
      await page.getByTestId("message-input").fill("Again")
      return page.getByTestId("send").isEnabled()
    }).toBe(true)
    expect(errors).toEqual([])
    // At most the cancelled run's own stream, which the client closed itself.
    expect(aborted.filter((request) => request !== "POST /v1/threads/runs")).toEqual([])
    expect(aborted.length).toBeLessThanOrEqual(1)
    await screenshot(page, "cancelled")
  })

  it("starts a new thread and switches back to the first one", async () => {
    const { aborted, api, errors, page } = await openApp({ script: (request) => [Script.text(`Reply to ${request.text}`)] })
    await send(page, "first message")
    await expect.poll(() => assistantText(page)).toBe("Reply to first message")
    const items = page.getByTestId("thread-item")
    await expect.poll(() => items.count()).toBe(1)

    await page.getByTestId("new-thread").click()
    await expect.poll(() => page.locator('[data-testid="message"]').count()).toBe(0)
    await send(page, "second message")
    await expect.poll(() => assistantText(page)).toBe("Reply to second message")
    await expect.poll(() => items.count()).toBe(2)

    const [first] = api.threads.list()
    await page.locator(`[data-testid="thread-item"][data-thread-id="${first!.id}"]`).click()
    await expect.poll(() => page.getByTestId("messages").getAttribute("data-thread-id")).toBe(first!.id)
    await expect.poll(() => assistantText(page)).toBe("Reply to first message")
    expect(await page.locator('[data-testid="message"][data-role="user"]').textContent()).toBe("first message")
    expect(errors).toEqual([])
    expect(aborted).toEqual([])
    await screenshot(page, "switched-thread")
  })

  it("MCP: a / menu of prompts fills the input, an @ picker attaches a resource, an elicitation shows a form", async () => {
    const mcp = await startExampleMcpServer()
    try {
      const { api, errors, page } = await openApp({
        script: (request) =>
          request.toolResults.length > 0
            ? [Script.text(`Got ${request.toolResults[0]!.text}`)]
            : request.text.includes("units")
            ? [Script.toolCall("ask_units", {})]
            : [Script.text("Noted")]
      }, { mcpUrl: mcp.url })

      await page.getByTestId("message-input").fill("/")
      await page.getByTestId("prompt-menu").waitFor()
      const item = page.getByTestId("prompt-item")
      await expect.poll(() => item.count(), { timeout: 15_000 }).toBe(1)
      expect(await item.textContent()).toContain("weather_report")
      await item.click()
      await expect.poll(() => page.getByTestId("message-input").inputValue()).toBe("Give me a short weather report for Paris.")

      await page.getByTestId("message-input").fill("Use this @")
      await page.getByTestId("resource-picker").waitFor()
      await page.getByTestId("resource-item").first().click()
      await expect.poll(() => page.getByTestId("attachment").textContent()).toContain("Weather guide")
      await page.getByTestId("send").click()
      await expect.poll(() => assistantText(page)).toBe("Noted")
      const sent = api.requests
        .map((request) => request.body as { message?: { content?: Array<{ type: string; resource?: { text?: string } }> } })
        .flatMap((body) => body?.message?.content ?? [])
      expect(sent.find((block) => block.type === "resource")?.resource?.text).toBe(WEATHER_GUIDE)

      await send(page, "Ask me about units")
      await page.getByTestId("elicitation").waitFor({ timeout: 15_000 })
      await page.getByTestId("elicitation-field").fill("metric")
      await page.getByTestId("elicitation-accept").click()
      await expect.poll(() => assistantText(page), { timeout: 15_000 }).toBe("Got Units: metric")
      expect(await page.getByTestId("elicitation").count()).toBe(0)
      expect(errors).toEqual([])
      await screenshot(page, "mcp")
    } finally {
      await mcp.close()
    }
  })
})
