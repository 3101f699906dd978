/**
 * The example app's interactable note in Chromium, against a scripted
 * testing server: the model rewrites it through its update tool, and the
 * user's edit reaches the model with the next message. Each test ends with
 * a screenshot in `packages/react/test-output/`.
 */
import { Script } from "@tambo-effect/testing"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { outputDir, send, useExampleApp, waitForIdle } from "./app.js"

// One Chromium and the served app for this file; skipped, saying why, where Chromium is missing outside CI.
const { openApp, skipped } = useExampleApp()

const assistantText = (page: Page) =>
  page.locator('[data-testid="message"][data-role="assistant"] [data-testid="message-text"]').last().textContent()

interface NoteContext {
  readonly components: ReadonlyArray<{ readonly id: string; readonly componentName: string; readonly props: { readonly text?: string } }>
}

/** The note as the model was told about it in a request. */
const noteInContext = (body: unknown) =>
  (body as { message?: { additionalContext?: { interactables?: NoteContext } } })?.message?.additionalContext
    ?.interactables?.components.find((component) => component.componentName === "Note")

describe.skipIf(skipped !== undefined)("react-chat's interactable note in Chromium", () => {
  it("the model rewrites the note through its update tool", async () => {
    const { api, errors, page } = await openApp({ script: (request) => {
      if (request.toolResults.length > 0) return [Script.text(`I rewrote your note: ${request.toolResults[0]!.text}`)]
      // The tool's name carries the note's id, which the page chose: read it from the request.
      const tool = request.tools.find((candidate) => candidate.name.startsWith("update_component_props_Note-"))
      if (tool === undefined) return [Script.text("I see no note.")]
      const componentId = tool.name.slice("update_component_props_".length)
      return [Script.toolCall(tool.name, { componentId, newProps: { text: "Buy oat milk, call Sam at 5." } })]
    } })
    await expect.poll(() => page.getByTestId("note-text").textContent()).toBe("Buy milk, call Sam.")
    await send(page, "Make my note more precise")

    await expect.poll(() => page.getByTestId("note-text").textContent(), { timeout: 15_000 })
      .toBe("Buy oat milk, call Sam at 5.")
    await expect.poll(() => assistantText(page), { timeout: 15_000 }).toBe("I rewrote your note: Updated successfully")
    await waitForIdle(page)
    // The model was shown the note before it changed it.
    const first = api.requests.find((request) => request.method === "POST" && request.path.endsWith("/runs"))
    expect(noteInContext(first?.body)?.props).toEqual({ text: "Buy milk, call Sam." })
    expect(errors).toEqual([])
    await page.screenshot({ path: join(outputDir, "interactable-note-rewritten.png"), fullPage: true })
  })

  it("the user's edit of the note reaches the next request", async () => {
    const { api, errors, page } = await openApp({ script: [Script.text("Noted.")] })
    await page.getByTestId("note-edit").click()
    await page.getByTestId("note-editor").fill("Pick up the parcel before noon.")
    await page.getByTestId("note-edit").click()
    await expect.poll(() => page.getByTestId("note-text").textContent()).toBe("Pick up the parcel before noon.")

    await send(page, "What does my note say?")
    await expect.poll(() => assistantText(page), { timeout: 15_000 }).toBe("Noted.")
    await waitForIdle(page)
    const run = api.requests.find((request) => request.method === "POST" && request.path.endsWith("/runs"))
    const note = noteInContext(run?.body)
    expect(note?.props).toEqual({ text: "Pick up the parcel before noon." })
    expect(note?.id).toMatch(/^Note-/)
    expect(errors).toEqual([])
    await page.screenshot({ path: join(outputDir, "interactable-note-edited.png"), fullPage: true })
  })
})
