/**
 * The example app (`scratchpad/react-chat`, built) in Chromium with an MCP
 * server behind OAuth on loopback (core's test server: the MCP SDK's own
 * auth router, which approves at once and redirects back with a code). The
 * app's server entry uses `mcpOAuthRedirect()`: the page goes to the
 * authorization server, comes back, exchanges the code and connects.
 */
import { Script } from "@tambo-effect/testing"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { oauthMcpServer } from "../../../core/test/mcp/oauthServer.js"
import { prompter } from "../../../core/test/mcp/tools.js"
import { outputDir, useExampleApp } from "./app.js"

// One Chromium and the served app for this file; skipped, saying why, where Chromium is missing outside CI.
const { openApp, skipped } = useExampleApp()

/** The prompts the app's `/` menu lists. */
const promptNames = async (page: Page) => {
  await page.getByTestId("message-input").fill("/")
  await page.getByTestId("prompt-menu").waitFor()
  const items = page.getByTestId("prompt-item")
  await expect.poll(() => items.count(), { timeout: 15_000 }).toBeGreaterThan(0)
  return (await items.allTextContents()).map((text) => text.split(" ")[0])
}

describe.skipIf(skipped !== undefined)("an MCP server behind OAuth, authorized by full-page redirect", () => {
  it("the page goes to the authorization server and back, the code is exchanged, and the server's prompts show", async () => {
    const scope = await Effect.runPromise(Scope.make())
    try {
      const mcp = await Effect.runPromise(Scope.extend(oauthMcpServer(prompter), scope))
      const { errors, page, requests, url } = await openApp({ script: () => [Script.text("Noted")] }, {
        mcpUrl: mcp.url,
        // The MCP server's first answer is the 401 that starts the authorization; it does not serve GET streams.
        expectedStatus: (response) =>
          new URL(response.url()).pathname === "/mcp" && (response.status() === 401 || response.status() === 405)
      })
      const authorizations = () => requests.filter((request) => request.pathname === "/authorize")

      // Sent away to the authorization server (PKCE), and back to the app's page with a code.
      await expect.poll(() => authorizations().length, { timeout: 15_000 }).toBe(1)
      const [authorization] = authorizations() as [URL]
      expect(authorization.searchParams.get("code_challenge_method")).toBe("S256")
      // The answer must carry the state the page sent: the page checks it before using the code.
      expect(authorization.searchParams.get("state")).toMatch(/^[0-9a-f]{32}$/)
      expect(authorization.searchParams.get("redirect_uri")).toBe(url.split("?")[0])
      await expect.poll(() => mcp.grants, { timeout: 15_000 }).toEqual(["authorization_code"])
      // The address bar is the one the user left: no code in it.
      await expect.poll(() => page.url()).toBe(url)

      expect(await promptNames(page)).toEqual(["/review", "/hello"])
      expect(mcp.registrations()).toBe(1)

      // A reload reuses the stored tokens: no second authorization.
      await page.reload()
      expect(await promptNames(page)).toEqual(["/review", "/hello"])
      expect(authorizations()).toHaveLength(1)
      expect(mcp.grants).toEqual(["authorization_code"])
      expect(errors).toEqual([])
      await page.screenshot({ path: join(outputDir, "mcp-oauth.png"), fullPage: true })
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})
