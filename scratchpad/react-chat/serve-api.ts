/**
 * A scripted Tambo API for the example app: `@tambo-effect/testing`'s
 * weather assistant (it calls the app's `get_weather` tool, then renders a
 * `WeatherCard`), on http://127.0.0.1:8787 with API key `test-api-key`.
 *
 *   pnpm --filter react-chat serve-api [--port 8787] [--pace 30]
 *
 * `--pace` slows every event down by that many milliseconds, to watch the
 * text and the props stream (and to have time to cancel).
 */
import { Script, startTestServer } from "@tambo-effect/testing"

const args = process.argv.slice(2)
const option = (name: string): string | undefined =>
  args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : undefined

const port = Number(option("port") ?? 8787)
const pace = Number(option("pace") ?? 0)

const server = await startTestServer({
  port,
  script: pace > 0
    ? async (request, context) => [Script.pace(pace), ...(await Script.weatherAssistant(request, context))]
    : Script.weatherAssistant
})
console.log(`Tambo test API on ${server.url} (API key "${server.apiKey}"); Ctrl-C to stop`)

const stop = () => {
  void server.close().then(() => process.exit(0))
}
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
