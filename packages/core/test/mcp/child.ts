/**
 * A test MCP server in a process of its own, for tests whose environment
 * cannot host one (a DOM environment replaces the `Request` and `Response`
 * the server's transport builds on). Run as
 * `node --import tsx child.ts <fixture>...`; prints `{ "url": ... }` on one
 * line once it listens, serves `/__stats` (sessions opened and closed), and
 * stops its sessions and exits on SIGTERM.
 */
import { startMcpServer } from "./server.js"
import {
  all,
  calculator,
  chatty,
  completer,
  counter,
  greeter,
  impatientGreeter,
  library,
  prompter,
  publisher,
  summarizer,
  urlElicitor,
  worker
} from "./tools.js"

const fixtures = {
  calculator,
  chatty: chatty(),
  completer,
  counter: counter(),
  greeter,
  impatientGreeter,
  library,
  prompter,
  publisher,
  summarizer,
  urlElicitor,
  worker
}
const names = process.argv.slice(2).filter((name): name is keyof typeof fixtures => Object.hasOwn(fixtures, name))
const server = await startMcpServer({ setup: all(...names.map((name) => fixtures[name])) })
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`)
// A stop, not a crash: the sessions' streams end cleanly before the process exits.
process.on("SIGTERM", () => {
  void server.close().then(() => process.exit(0))
})
