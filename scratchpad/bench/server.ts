/** The testing server in its own process, so the client's work is measured alone. */
import { startTestServer } from "@tambo-effect/testing"
import { byMessage } from "./scenarios.js"

const server = await startTestServer({ script: byMessage })
process.stdout.write(JSON.stringify({ url: server.url, apiKey: server.apiKey }) + "\n")
process.on("SIGTERM", () => void server.close().then(() => process.exit(0)))
