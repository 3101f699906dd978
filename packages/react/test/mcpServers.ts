// Real MCP servers for the React tests, each in a process of its own: happy-dom's `Request` and
// `Response` cannot carry the MCP server transport in the test's own process.
import { cleanup, waitFor } from "@testing-library/react"
import { type ChildProcess, spawn } from "node:child_process"
import { resolve } from "node:path"
import { createInterface } from "node:readline"
import { afterEach, expect } from "vitest"

export interface ChildMcpServer {
  readonly url: string
  /** Sessions opened and closed so far. */
  readonly sessions: () => Promise<{ readonly opened: number; readonly closed: number }>
  /** The server stops (its sessions end) and its process exits. */
  readonly stop: () => void
  readonly stopped: () => boolean
}

/** The fixtures of core's MCP tests a server can offer. */
export type Fixture =
  | "calculator"
  | "chatty"
  | "completer"
  | "counter"
  | "greeter"
  | "impatientGreeter"
  | "library"
  | "prompter"
  | "publisher"
  | "summarizer"
  | "urlElicitor"
  | "worker"

const coreDir = resolve(import.meta.dirname, "../../core")

/**
 * Starts servers offering the named fixtures; after each test, the providers unmount, the
 * servers wait for their sessions to be closed (a client that did not close one fails the
 * test), and their processes end.
 */
export const useMcpServers = () => {
  const children: Array<{ readonly process: ChildProcess; readonly server: ChildMcpServer }> = []
  afterEach(async () => {
    // The providers go first, and their clients close their sessions: a server that died under a
    // live client would be reconnected to (and the browser would log the refused connections).
    cleanup()
    for (const { process: child, server: mcp } of children.splice(0)) {
      if (!mcp.stopped()) {
        await waitFor(async () => {
          const { opened, closed } = await mcp.sessions()
          expect(closed).toBe(opened)
        }, { timeout: 10_000 })
      }
      child.kill("SIGKILL")
    }
  })
  return async (...fixtures: ReadonlyArray<Fixture>): Promise<ChildMcpServer> => {
    const child = spawn(process.execPath, ["--import", "tsx", "test/mcp/child.ts", ...fixtures], {
      cwd: coreDir,
      stdio: ["ignore", "pipe", "inherit"]
    })
    const line = await new Promise<string>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! })
      lines.once("line", resolve)
      child.once("exit", (code) => reject(new Error(`the MCP server exited (${code})`)))
    })
    const { url } = JSON.parse(line) as { readonly url: string }
    let stopped = false
    const server: ChildMcpServer = {
      url,
      sessions: () => fetch(new URL("/__stats", url)).then((res) => res.json()),
      stop: () => {
        stopped = true
        child.kill("SIGTERM")
      },
      stopped: () => stopped
    }
    children.push({ process: child, server })
    return server
  }
}
