/**
 * `pnpm demo`: a short conversation through `@tambo-effect/client`, printed
 * live — streaming text, a client-side tool round trip, and a component
 * whose props stream in.
 *
 * Talks to Tambo Cloud when `TAMBO_API_KEY` is set (`TAMBO_URL`,
 * `TAMBO_USER_KEY` optional), otherwise to the embedded testing server.
 *
 * `pnpm demo --agui`: the same conversation against the embedded AG-UI agent
 * (`agent: { url }`): the text and the tool round, no component.
 */
import { TamboClient } from "@tambo-effect/client"
import {
  describeError,
  paceMillis,
  Printer,
  startAgentBackend,
  startBackend,
  stdoutOut,
  weatherCard,
  weatherTool
} from "./demo-support.js"

const conversation = ["Hi there!", "What is the weather in Paris?"]

const printer = new Printer(stdoutOut())
const backend = process.argv.includes("--agui") ? await startAgentBackend() : await startBackend(paceMillis())
printer.line(printer.paint("bold", `tambo-effect demo, talking to ${backend.label}`))
printer.line("")

const client = new TamboClient({ ...backend.options, tools: [weatherTool], components: [weatherCard] })
try {
  for (const message of conversation) {
    printer.user(message)
    for await (const element of client.run(message)) printer.event(element)
    printer.endLine()
    printer.line("")
  }
  const thread = client.getThread()!
  const cards = thread.messages.flatMap((m) => m.content).filter((c) => c.type === "component")
  printer.line(printer.paint("dim", `thread ${thread.id}: ${thread.messages.length} messages`))
  for (const card of cards) printer.line(printer.paint("dim", `final ${card.name} props: ${JSON.stringify(card.props)}`))
} catch (error) {
  printer.line(printer.paint("red", `demo failed: ${describeError(error)}`))
  process.exitCode = 1
} finally {
  await client.destroy()
  await backend.close()
}
