/**
 * A scripted Tambo API for the example app: `@tambo-effect/testing`'s
 * weather assistant (it calls the app's `get_weather` tool, then renders a
 * `WeatherCard`), on http://127.0.0.1:8787 with API key `test-api-key`.
 *
 *   pnpm --filter react-chat serve-api [--port 8787] [--pace 30]
 *
 * `--pace` slows every event down by that many milliseconds, to watch the
 * text and the props stream (and to have time to cancel).
 *
 * It also starts the example MCP server (a tool, a prompt, a resource, an
 * elicitation) on http://127.0.0.1:8788/mcp (`--mcp-port`), which the app
 * connects to: its prompts in the `/` menu, its resources in the `@` picker.
 * A message that mentions the note has the model rewrite the app's
 * interactable note.
 *
 *   pnpm --filter react-chat serve-api --agui [--port 8787]
 *
 * starts instead the scripted AG-UI agent of `@tambo-effect/testing`
 * (`AgUiAgent.scripts.weatherAssistant`: the same conversation, a
 * `get_weather` round for a message about the weather, an echo otherwise)
 * on http://127.0.0.1:8787/agent, for the app's `?agentUrl=`. No MCP server
 * then: the app shows no MCP UI against an agent.
 */
import { AgUiAgent, Script, startTestServer } from "@tambo-effect/testing"
import { startExampleMcpServer } from "./mcp-server.js"

const args = process.argv.slice(2)
const option = (name: string): string | undefined =>
  args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : undefined

const port = Number(option("port") ?? 8787)
const pace = Number(option("pace") ?? 0)
const mcpPort = Number(option("mcp-port") ?? 8788)

if (args.includes("--agui")) {
  const agent = await AgUiAgent.start({ port, script: AgUiAgent.scripts.weatherAssistant })
  console.log(`AG-UI agent on ${agent.url}; open the app with ?agentUrl=${encodeURIComponent(agent.url)}; Ctrl-C to stop`)
  const stopAgent = () => {
    void agent.close().then(() => process.exit(0))
  }
  process.on("SIGINT", stopAgent)
  process.on("SIGTERM", stopAgent)
} else {
  await serveTambo()
}

/** The scripted Tambo API and the example MCP server. */
async function serveTambo() {
  /** A message that mentions the note gets it rewritten (the note's update tool); anything else, the weather. */
  const assistant: Script.ScriptFn = async (request, context) => {
    const noteTool = request.tools.find((tool) => tool.name.startsWith("update_component_props_Note-"))
    if (noteTool === undefined || !/\bnote\b/i.test(request.text)) return Script.weatherAssistant(request, context)
    return request.toolResults.length > 0
      ? [Script.text("I rewrote your note.")]
      : [Script.toolCall(noteTool.name, {
        componentId: noteTool.name.slice("update_component_props_".length),
        newProps: { text: `Rewritten on request: ${request.text}` }
      })]
  }

  const server = await startTestServer({
    port,
    script: pace > 0 ? async (request, context) => [Script.pace(pace), ...(await assistant(request, context))] : assistant
  })
  const mcp = await startExampleMcpServer(mcpPort)
  console.log(`Tambo test API on ${server.url} (API key "${server.apiKey}"), MCP server on ${mcp.url}; Ctrl-C to stop`)

  const stop = () => {
    void Promise.all([server.close(), mcp.close()]).then(() => process.exit(0))
  }
  process.on("SIGINT", stop)
  process.on("SIGTERM", stop)
}
