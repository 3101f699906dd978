// @vitest-environment happy-dom
import { fireEvent, render, screen, waitFor } from "@testing-library/react"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { ComponentType } from "react"
import { describe, expect, it } from "vitest"
import { sleep, useServer } from "./helpers.js"

const here = import.meta.dirname
const server = useServer()

describe("README", () => {
  it("its example chats, calls the tool and renders the WeatherCard", async () => {
    const readme = readFileSync(join(here, "..", "README.md"), "utf8")
    const code = /```tsx\n([\s\S]*?)```/.exec(readme)![1]!
    const dir = mkdtempSync(join(here, ".readme-"))
    try {
      const file = join(dir, "example.tsx")
      writeFileSync(file, code.replace(`from "@tambo-effect/react"`, `from "../../src/index.js"`))
      const { App } = (await import(/* @vite-ignore */ file)) as {
        App: ComponentType<{ readonly apiKey: string; readonly tamboUrl?: string }>
      }
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
})
