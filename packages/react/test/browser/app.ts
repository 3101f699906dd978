/**
 * What the browser tests need: the example app built (`scratchpad/react-chat`),
 * served by a tiny static server, and Chromium driven by playwright-core.
 */
import { accessSync, constants, createReadStream } from "node:fs"
import { mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { extname, join, normalize, resolve, sep } from "node:path"
import { AgUiAgent, startTestServer, type TestServer, type TestServerOptions } from "@tambo-effect/testing"
import { type BrowserContext, chromium, type Page, type Response } from "playwright-core"
import { afterAll, afterEach, beforeAll } from "vitest"

const repo = resolve(import.meta.dirname, "../../../..")
export const appDir = join(repo, "scratchpad/react-chat")
export const distDir = join(appDir, "dist")
/** Screenshots go here (git-ignored). */
export const outputDir = resolve(import.meta.dirname, "../../test-output")

/** The Chromium the browser tests drive: `$CHROMIUM_PATH`, or Debian's (what CI installs). */
export const chromiumPath = process.env["CHROMIUM_PATH"] || "/usr/bin/chromium"

/**
 * Why the browser tests cannot run on this machine (no executable Chromium at
 * {@link chromiumPath}), or `undefined` when they can.
 */
export const chromiumMissing = (): string | undefined => {
  try {
    accessSync(chromiumPath, constants.X_OK)
    return undefined
  } catch {
    return `no Chromium at ${chromiumPath}: install it (Debian: apt-get install chromium) or set CHROMIUM_PATH`
  }
}

/**
 * CI must run the browser tests: there a missing Chromium fails them. On a
 * developer's machine they are skipped, with the reason in their name.
 */
export const skipBrowserTests = (): string | undefined => (process.env["CI"] ? undefined : chromiumMissing())
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic"
]

/** What the built app depends on: when any of it is newer than `dist/`, the app is built again. */
const sources = [
  join(appDir, "src"),
  join(appDir, "index.html"),
  join(appDir, "vite.config.ts"),
  join(repo, "packages/core/src"),
  join(repo, "packages/client/src"),
  join(repo, "packages/react/src")
]

const newestMtime = async (path: string): Promise<number> => {
  const info = await stat(path).catch(() => undefined)
  if (info === undefined) return 0
  if (!info.isDirectory()) return info.mtimeMs
  const entries = await readdir(path)
  const times = await Promise.all(entries.map((entry) => newestMtime(join(path, entry))))
  return Math.max(info.mtimeMs, ...times)
}

/** Held while one test file builds the app: files run in parallel, and share `dist/`. */
const buildLock = join(appDir, ".build-lock")
/** A lock older than this was left by a process that died. */
const STALE_LOCK_MS = 5 * 60_000

const withBuildLock = async <A>(f: () => Promise<A>): Promise<A> => {
  for (;;) {
    const taken = await mkdir(buildLock).then(() => true, () => false)
    if (taken) break
    const age = await stat(buildLock).then((info) => Date.now() - info.mtimeMs, () => 0)
    if (age > STALE_LOCK_MS) await rm(buildLock, { recursive: true, force: true })
    else await new Promise((resolve) => setTimeout(resolve, 200))
  }
  try {
    return await f()
  } finally {
    await rm(buildLock, { recursive: true, force: true })
  }
}

/** Builds the example app with vite's `build()` unless `dist/` is newer than everything it is made of. */
export const ensureAppBuilt = (): Promise<"built" | "fresh"> =>
  withBuildLock(async () => {
    const built = await stat(join(distDir, "index.html")).then((info) => info.mtimeMs, () => 0)
    const newest = Math.max(...(await Promise.all(sources.map(newestMtime))))
    if (built > newest) return "fresh"
    const { build } = await import("vite")
    // Under the test runner NODE_ENV is "test": the app is built with React's development build
    // (its checks run in the browser tests), about 1 MB where the app's own build is 830 kB.
    await build({ root: appDir, logLevel: "warn", build: { sourcemap: false, chunkSizeWarningLimit: 1536 } })
    return "built"
  })

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon"
}

/**
 * A static file server on 127.0.0.1 (a free port) serving `root` under `prefix`: the app must
 * not assume it lives at `/`.
 */
export const serveStatic = async (
  root: string,
  prefix = "/"
): Promise<{ readonly url: string; readonly close: () => Promise<void> }> => {
  const server: Server = createServer((request, response) => {
    const fullPath = decodeURIComponent(new URL(request.url ?? "/", "http://localhost").pathname)
    if (!fullPath.startsWith(prefix)) {
      response.writeHead(404).end()
      return
    }
    const path = `/${fullPath.slice(prefix.length)}`
    const file = normalize(join(root, path.endsWith("/") ? `${path}index.html` : path))
    if (!file.startsWith(root + sep) && file !== root) {
      response.writeHead(403).end()
      return
    }
    stat(file).then(
      (info) => {
        if (!info.isFile()) throw new Error("not a file")
        response.writeHead(200, { "content-type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream" })
        createReadStream(file).pipe(response)
      },
      () => response.writeHead(404).end()
    ).catch(() => response.writeHead(404).end())
  })
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}${prefix.replace(/\/$/, "")}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections()
        server.close(() => done())
      })
  }
}

/**
 * What a page needs to record audio without a person or a microphone: the
 * permission prompt answered yes, and a fake microphone (a steady tone).
 */
export const FAKE_MICROPHONE_ARGS: ReadonlyArray<string> = ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream"]

/** Chromium with a fresh profile, removed on close; `extraArgs` are added to its command line. */
export const launchBrowser = async (
  extraArgs: ReadonlyArray<string> = []
): Promise<{ readonly context: BrowserContext; readonly close: () => Promise<void> }> => {
  const missing = chromiumMissing()
  if (missing !== undefined) throw new Error(`The browser tests need Chromium: ${missing}`)
  const profile = await mkdtemp(join(tmpdir(), "tambo-react-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: [...CHROMIUM_ARGS, ...extraArgs],
    viewport: { width: 1100, height: 760 }
  })
  return {
    context,
    close: async () => {
      await context.close()
      await rm(profile, { recursive: true, force: true })
    }
  }
}

/** How {@link useExampleApp}'s `openApp` opens the app. */
export interface OpenOptions {
  readonly viewport?: { readonly width: number; readonly height: number } | undefined
  /** The MCP server the app connects. Default: none. */
  readonly mcpUrl?: string | undefined
  /** A response of 400 or more that the test expects (not an error). */
  readonly expectedStatus?: ((response: Response) => boolean) | undefined
}

/**
 * What a browser test file shares: the app built and served under `basePath`, one Chromium
 * for the file (with `chromiumArgs`), and the page and testing server (or AG-UI agent) of each
 * test, closed after it. Skipped, saying why, where Chromium is missing outside CI.
 */
export const useExampleApp = (
  options: { readonly basePath?: string; readonly chromiumArgs?: ReadonlyArray<string> } = {}
) => {
  const skipped = skipBrowserTests()
  let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined
  let site: Awaited<ReturnType<typeof serveStatic>> | undefined
  let api: TestServer | undefined
  let agent: AgUiAgent.AgUiAgent | undefined
  let page: Page | undefined

  beforeAll(async () => {
    if (skipped !== undefined) return
    await ensureAppBuilt()
    await mkdir(outputDir, { recursive: true })
    site = await serveStatic(distDir, options.basePath ?? "/some/path/react-chat/")
    browser = await launchBrowser(options.chromiumArgs)
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    await site?.close()
  })

  afterEach(async () => {
    await page?.close()
    page = undefined
    await api?.close()
    api = undefined
    await agent?.close()
    agent = undefined
  })

  /** The app's address for a testing server, and the MCP server it connects (none by default). */
  const appUrl = (server: TestServer, mcpUrl = "") =>
    `${site!.url}/index.html?${new URLSearchParams({ tamboUrl: server.url, apiKey: server.apiKey, userKey: "browser-user", mcpUrl })}`

  /**
   * The app on a testing server started with `serverOptions`, in a page of `viewport`, connected
   * to the MCP server at `mcpUrl`. `errors` collects what normal use must not produce (page
   * errors, console errors, failed requests, responses of 400 or more unless `expectedStatus`
   * says the test expects them); `aborted` the requests the app aborted itself (a cancel's);
   * `requests` every request the page made, from its first.
   */
  const openApp = async (serverOptions: TestServerOptions, options: OpenOptions = {}) => {
    api = await startTestServer(serverOptions)
    const url = appUrl(api, options.mcpUrl)
    return { api, url, ...(await openPage(url, options)) }
  }

  /** The app on a scripted AG-UI agent playing `script` (`?agentUrl=`), as {@link openApp}. */
  const openAgentApp = async (script: AgUiAgent.ScriptSource, viewport?: { readonly width: number; readonly height: number }) => {
    agent = await AgUiAgent.start({ script })
    const { page, errors } = await openPage(`${site!.url}/index.html?${new URLSearchParams({ agentUrl: agent.url })}`, { viewport })
    return { agent, page, errors }
  }

  const openPage = async (url: string, options: OpenOptions) => {
    page = await browser!.context.newPage()
    if (options.viewport !== undefined) await page.setViewportSize(options.viewport)
    const errors: Array<string> = []
    const aborted: Array<string> = []
    const requests: Array<URL> = []
    page.on("pageerror", (error) => errors.push(error.message))
    page.on("console", (message) => {
      // Chromium logs each response of 400 or more too: the "response" listener judges those.
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource: the server responded")) {
        errors.push(`console: ${message.text()}`)
      }
    })
    page.on("request", (request) => requests.push(new URL(request.url())))
    page.on("response", (response) => {
      if (response.status() >= 400 && options.expectedStatus?.(response) !== true) {
        errors.push(`${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`)
      }
    })
    page.on("requestfailed", (request) => {
      const what = `${request.method()} ${new URL(request.url()).pathname}`
      if (request.failure()?.errorText === "net::ERR_ABORTED") aborted.push(what)
      else errors.push(`failed ${what}: ${request.failure()?.errorText}`)
    })
    await page.goto(url)
    await page.getByTestId("message-input").waitFor()
    return { page, errors, aborted, requests }
  }

  return { skipped, openApp, openAgentApp }
}

/** Types `text` into the app's message input and sends it. */
export const send = async (page: Page, text: string) => {
  await page.getByTestId("message-input").fill(text)
  await page.getByTestId("send").click()
}

/** Until the app shows its run status idle. */
export const waitForIdle = (page: Page) => page.locator('[data-testid="status"][data-status="idle"]').waitFor()
