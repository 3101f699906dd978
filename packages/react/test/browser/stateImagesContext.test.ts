/**
 * The example app in Chromium against the testing server: the WeatherCard's
 * favourite (component state kept on the server), images in a message, and
 * the page and time context helpers. Each test ends with a screenshot in
 * `packages/react/test-output/`.
 */
import { Script, type TestServer } from "@tambo-effect/testing"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { outputDir, send, useExampleApp, waitForIdle } from "./app.js"

// One Chromium and the served app for this file; skipped, saying why, where Chromium is missing outside CI.
const { openApp, skipped } = useExampleApp()

const screenshot = (page: Page, name: string) => page.screenshot({ path: join(outputDir, `${name}.png`), fullPage: true })

/** The bodies of the run requests the server received, in order. */
const runBodies = (server: TestServer) =>
  server.requests
    .filter((request) => request.method === "POST" && /\/runs$/.test(request.path))
    .map((request) => request.body as { message: { content: Array<Record<string, unknown>>; additionalContext?: Record<string, any> } })

const openThread = (page: Page, threadId: string) =>
  page.locator(`[data-testid="thread-item"][data-thread-id="${threadId}"]`).click()

/** A 1×1 PNG. */
const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

describe.skipIf(skipped !== undefined)("react-chat in Chromium: component state, images, context", () => {
  it("the WeatherCard's favourite is kept on the server: it survives a switch of threads and a reload, and the model sees it", async () => {
    const histories: Array<ReadonlyArray<unknown>> = []
    const { api, errors, page } = await openApp({ script: async (request, context) => {
      histories.push(request.history.flatMap((message) => message.content))
      return /weather/i.test(request.text) || request.toolResults.length > 0
        ? Script.weatherAssistant(request, context)
        : [Script.text(`Reply to ${request.text}`)]
    } })
    await send(page, "What is the weather in Paris?")
    await page.locator('[data-testid="weather-card"][data-complete="true"]').waitFor({ timeout: 15_000 })
    await waitForIdle(page)
    const favourite = page.getByTestId("favourite")
    expect(await favourite.getAttribute("aria-pressed")).toBe("false")

    await favourite.click()
    expect(await favourite.getAttribute("aria-pressed")).toBe("true")
    const [thread] = api.threads.list()
    const stored = () =>
      api.threads.get(thread!.id)?.messages.flatMap((message) => message.content).find((block) => block.type === "component")
    await expect.poll(() => stored()?.type === "component" ? stored()?.state : undefined, { timeout: 10_000 }).toEqual({ favourite: true })
    await page.locator('[data-testid="favourite"][data-pending="false"]').waitFor()

    // Another thread, then back.
    await page.getByTestId("new-thread").click()
    await send(page, "hello")
    await page.getByText("Reply to hello").waitFor()
    await waitForIdle(page)
    await openThread(page, thread!.id)
    await expect.poll(() => page.getByTestId("favourite").getAttribute("aria-pressed")).toBe("true")

    // A reload reads the thread from the server.
    await page.reload()
    await page.getByTestId("message-input").waitFor()
    await openThread(page, thread!.id)
    await expect.poll(() => page.getByTestId("favourite").getAttribute("aria-pressed"), { timeout: 10_000 }).toBe("true")

    // The model sees the state in its next turn on the thread.
    await send(page, "Which city did I star?")
    await page.getByText("Reply to Which city did I star?").waitFor()
    expect(histories.at(-1)?.find((block) => (block as { type: string }).type === "component")).toMatchObject({
      state: { favourite: true }
    })
    expect(errors).toEqual([])
    await screenshot(page, "favourite")
  })

  it("an attached image is sent with the message, shown in it, and still there after a reload", async () => {
    const { api, errors, page } = await openApp({ script: [Script.text("Nice picture")] })
    await page.getByTestId("attach-image").setInputFiles({ name: "dot.png", mimeType: "image/png", buffer: Buffer.from(PNG_BASE64, "base64") })
    await page.getByTestId("staged-image").waitFor()
    await send(page, "What is in this picture?")
    await page.getByText("Nice picture").waitFor()
    await waitForIdle(page)

    const image = page.locator('[data-testid="message"][data-role="user"] [data-testid="message-image"]')
    await expect.poll(() => image.getAttribute("src")).toBe(`data:image/png;base64,${PNG_BASE64}`)
    expect(await image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1)
    expect(await page.getByTestId("staged-image").count()).toBe(0)
    const [body] = runBodies(api)
    expect(body!.message.content).toEqual([
      { type: "text", text: "What is in this picture?" },
      { type: "resource", resource: { name: "dot.png", mimeType: "image/png", blob: PNG_BASE64 } }
    ])

    await page.reload()
    await page.getByTestId("message-input").waitFor()
    await openThread(page, api.threads.list()[0]!.id)
    await expect.poll(() => image.getAttribute("src"), { timeout: 10_000 }).toBe(`data:image/png;base64,${PNG_BASE64}`)
    expect(errors).toEqual([])
    await screenshot(page, "image-message")
  })

  it("the page and time context helpers reach the server with every message", async () => {
    const { api, errors, page } = await openApp({ script: [Script.text("ok")] })
    await send(page, "Where am I?")
    await page.getByText("ok", { exact: true }).waitFor()
    const [body] = runBodies(api)
    const context = body!.message.additionalContext
    expect(context?.["userPage"]).toEqual({ url: page.url(), title: await page.title() })
    const timestamp = context?.["userTime"]?.timestamp as string
    expect(Number.isNaN(Date.parse(timestamp))).toBe(false)
    expect(errors).toEqual([])
  })
})
