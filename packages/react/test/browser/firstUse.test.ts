/**
 * The example app (`scratchpad/react-chat`, built) in Chromium against the
 * testing server, for what a new user sees first: voice input through a
 * fake microphone, a status that stays busy through a tool round, a
 * refused send that keeps its text, a cancelled reply marked as such, a
 * layout that fits a phone, no empty bubbles after a reload, suggestions
 * under the last reply only.
 * Screenshots of the app at 1200 px and 420 px go to
 * `packages/react/test-output/`.
 */
import { Script } from "@tambo-effect/testing"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { FAKE_MICROPHONE_ARGS, outputDir, send, useExampleApp } from "./app.js"

// One Chromium and the served app for this file; skipped, saying why, where Chromium is missing outside CI.
const { openApp, skipped } = useExampleApp({ basePath: "/react-chat/", chromiumArgs: FAKE_MICROPHONE_ARGS })

const screenshot = (page: Page, name: string) => page.screenshot({ path: join(outputDir, `${name}.png`), fullPage: true })

const waitForStatus = (page: Page, status: "idle" | "streaming" | "waiting") =>
  page.locator(`[data-testid="status"][data-status="${status}"]`).waitFor()

/** The weather assistant (a tool call, then a card and a reply), slowed down so it is seen streaming. */
const weatherAssistant: Script.ScriptSource = async (request, context) => [
  Script.pace(20),
  ...(await Script.weatherAssistant(request, context))
]

/** Runs the weather assistant to its end: the card complete, the status idle. */
const askForWeather = async (page: Page) => {
  await send(page, "What is the weather in Paris?")
  await page.locator('[data-testid="weather-card"][data-complete="true"]').waitFor({ timeout: 15_000 })
  await waitForStatus(page, "idle")
}

describe.skipIf(skipped !== undefined)("react-chat for a new user, in Chromium", () => {
  it("voice: the microphone button records, the API transcribes, the transcript fills the input", async () => {
    const { api, errors, page } = await openApp({ transcribe: (audio) => `Weather in Paris, from ${audio.type}` })
    const voice = page.getByTestId("voice")
    await voice.click()
    await page.locator('[data-testid="voice"][data-recording="true"]').waitFor()
    // Let the fake microphone's tone be recorded for a moment.
    await page.waitForTimeout(700)
    await voice.click()
    await expect.poll(() => page.getByTestId("message-input").inputValue(), { timeout: 15_000 })
      .toBe("Weather in Paris, from audio/webm")
    await page.locator('[data-testid="voice"][data-recording="false"]').waitFor()
    // What arrived is a WebM recording (the server checks its header), sent as the API takes it.
    expect(api.transcriptions).toHaveLength(1)
    expect(api.transcriptions[0]!.filename).toBe("recording.webm")
    expect(api.transcriptions[0]!.bytes.length).toBeGreaterThan(100)
    expect(api.requests.filter((request) => request.method === "POST" && request.path === "/audio/transcribe")).toHaveLength(1)
    // The transcript is sent like typed text.
    await page.getByTestId("send").click()
    await expect.poll(() => page.locator('[data-testid="message"][data-role="user"]').last().textContent())
      .toBe("Weather in Paris, from audio/webm")
    expect(errors).toEqual([])
    await screenshot(page, "voice")
  })

  it("the status never shows idle during a run, through its tool round", async () => {
    const { api, errors, page } = await openApp({ script: weatherAssistant })
    // Every change of the page, as it happens: the status element's value after each mutation.
    await page.evaluate(() => {
      const seen: Array<string> = []
      const record = () => {
        const status = document.querySelector('[data-testid="status"]')?.getAttribute("data-status") ?? "none"
        if (seen.at(-1) !== status) seen.push(status)
      }
      record()
      new MutationObserver(record).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true })
      ;(window as unknown as { statuses: Array<string> }).statuses = seen
    })
    await askForWeather(page)
    // Both steps ran: the tool call, then the reply with its results.
    expect(api.requests.filter((request) => request.method === "POST" && request.path.endsWith("/runs"))).toHaveLength(2)
    const statuses = await page.evaluate(() => (window as unknown as { statuses: Array<string> }).statuses)
    expect(statuses[0]).toBe("idle")
    expect(statuses.slice(1, -1)).not.toContain("idle")
    expect(statuses.slice(1, -1).length).toBeGreaterThan(0)
    expect(statuses.at(-1)).toBe("idle")
    expect(errors).toEqual([])
  })

  it("a send the API refuses shows why, and puts the text back in the input to send again", async () => {
    const { errors, page } = await openApp(
      { script: [Script.httpError(500, { message: "The model is overloaded" })] },
      { expectedStatus: (response) => response.status() === 500 && new URL(response.url()).pathname === "/v1/threads/runs" }
    )
    await send(page, "What is the weather in Oslo?")
    await expect.poll(() => page.getByTestId("input-error").textContent(), { timeout: 10_000 }).toMatch(/overloaded/)
    expect(await page.getByTestId("message-input").inputValue()).toBe("What is the weather in Oslo?")
    expect(await page.getByTestId("send").isDisabled()).toBe(false)
    expect(errors).toEqual([])
  })

  it("a cancelled reply is marked cancelled", async () => {
    const words = Array.from({ length: 200 }, (_, i) => ` word${i}`)
    const { errors, page } = await openApp({ script: [Script.pace(80), Script.text(words), Script.hang()] })
    await send(page, "Talk slowly")
    const reply = page.locator('[data-testid="message"][data-role="assistant"]').last()
    await expect.poll(() => reply.textContent(), { timeout: 10_000 }).toMatch(/word2/)
    expect(await reply.getAttribute("data-cancelled")).toBe("false")
    await page.getByTestId("cancel").click()
    await waitForStatus(page, "idle")
    await expect.poll(() => reply.getAttribute("data-cancelled")).toBe("true")
    const note = reply.getByTestId("cancelled-note")
    expect(await note.isVisible()).toBe(true)
    expect(await note.textContent()).toMatch(/cancelled/i)
    // Only the cancelled reply.
    expect(await page.locator('[data-testid="message"][data-cancelled="true"]').count()).toBe(1)
    expect(errors).toEqual([])
  })

  it("after a reload, the tool call's message shows no empty bubble", async () => {
    // A tool call without text before it, as models often make.
    const { api, errors, page } = await openApp({
      script: (request) =>
        request.toolResults.length === 0
          ? [Script.toolCall("get_weather", { city: "Paris" })]
          : [Script.text("It is mild in Paris today.")]
    })
    await send(page, "What is the weather in Paris?")
    await expect.poll(() => page.getByTestId("message-text").last().textContent(), { timeout: 15_000 })
      .toBe("It is mild in Paris today.")
    await waitForStatus(page, "idle")
    const [thread] = api.threads.list()
    // The server stored the tool call with a text block of one space, as the API does.
    expect(thread!.messages.some((message) =>
      message.content.some((block) => block.type === "tool_use") &&
      message.content.some((block) => block.type === "text" && block.text === " ")
    )).toBe(true)

    await page.reload()
    await page.locator(`[data-testid="thread-item"][data-thread-id="${thread!.id}"]`).click()
    await expect.poll(() => page.getByTestId("message-text").last().textContent(), { timeout: 15_000 })
      .toBe("It is mild in Paris today.")
    expect(await page.locator('[data-testid="tool-call"]').count()).toBe(1)
    const texts = await page.getByTestId("message-text").allTextContents()
    expect(texts.filter((text) => text.trim() === "")).toEqual([])
    // Every message shown has something to show.
    const shown = await page.locator('[data-testid="message"]').evaluateAll((elements) =>
      elements.map((element) => (element as HTMLElement).innerText.trim()))
    expect(shown.length).toBeGreaterThan(1)
    expect(shown.filter((text) => text === "")).toEqual([])
    expect(errors).toEqual([])
  })

  it("suggestions: under the last assistant reply only, never asked for a tool call or a tool result", async () => {
    const { api, errors, page } = await openApp({ script: weatherAssistant })
    await askForWeather(page)
    await page.getByTestId("suggestion").first().waitFor({ timeout: 10_000 })
    const [thread] = api.threads.list()
    const messages = thread!.messages
    const reply = messages.at(-1)!
    expect(reply.role).toBe("assistant")
    expect(reply.content.every((block) => block.type !== "tool_use" && block.type !== "tool_result")).toBe(true)
    // Every suggestions request was for the final reply.
    const asked = api.requests.filter((request) => request.path.endsWith("/suggestions"))
    expect(asked.length).toBeGreaterThan(0)
    expect(asked.map((request) => request.path.split("/").at(-2))).toEqual(asked.map(() => reply.id))
    // Shown right under that reply's bubble.
    const placement = await page.evaluate(() => {
      const suggestions = document.querySelector('[data-testid="suggestions"]')
      const before = suggestions?.previousElementSibling
      const lastAssistant = [...document.querySelectorAll('[data-testid="message"][data-role="assistant"]')].at(-1)
      return { under: before !== null && before === lastAssistant, messageId: suggestions?.getAttribute("data-message-id") }
    })
    expect(placement).toEqual({ under: true, messageId: reply.id })
    expect(await page.getByTestId("suggestions").count()).toBe(1)
    expect(errors).toEqual([])
  })

  it("fits a phone: at 420 px nothing overflows and the send button is on screen; screenshots at 1200 and 420 px", async () => {
    const { errors, page } = await openApp({ script: weatherAssistant })
    await askForWeather(page)
    await page.getByTestId("suggestion").first().waitFor({ timeout: 10_000 })
    await screenshot(page, "app-1200")

    await page.setViewportSize({ width: 420, height: 800 })
    await page.getByTestId("message-input").fill("A long question about the weather in several cities at once")
    const layout = await page.evaluate(() => {
      const send = document.querySelector('[data-testid="send"]')!.getBoundingClientRect()
      return {
        scrollWidth: document.documentElement.scrollWidth,
        send: { left: send.left, right: send.right, top: send.top, bottom: send.bottom },
        viewport: { width: window.innerWidth, height: window.innerHeight }
      }
    })
    expect(layout.scrollWidth).toBeLessThanOrEqual(420)
    expect(layout.send.left).toBeGreaterThanOrEqual(0)
    expect(layout.send.right).toBeLessThanOrEqual(layout.viewport.width)
    expect(layout.send.top).toBeGreaterThanOrEqual(0)
    expect(layout.send.bottom).toBeLessThanOrEqual(layout.viewport.height)
    // The thread list is collapsed behind a toggle, and opens.
    const items = page.getByTestId("thread-item")
    expect(await items.first().isVisible()).toBe(false)
    await page.getByTestId("threads-toggle").click()
    expect(await items.first().isVisible()).toBe(true)
    await page.getByTestId("threads-toggle").click()
    await screenshot(page, "app-420")
    expect(errors).toEqual([])
  })
})
