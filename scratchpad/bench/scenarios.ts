/** The benchmark scenarios: scripts the testing server plays, chosen by the run's message text. */
import { Script } from "@tambo-effect/testing"

export interface Scenario {
  readonly name: string
  readonly script: Script.Script
  /** Concurrent runs, each creating its own thread. */
  readonly runs: number
  /** Skip @tambo-ai/client: it would take minutes (quadratic argument parsing). */
  readonly upstreamTooSlow?: boolean
}

const toolArgs = (bytes: number) => ({ data: "x".repeat(bytes - 12) })

const propsSnapshots = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ title: "Forecast", points: i + 1, label: `point ${i + 1}` }))

export const scenarios: ReadonlyArray<Scenario> = [
  { name: "100k text deltas", script: [Script.text(Array.from({ length: 100_000 }, () => "tok "))], runs: 1 },
  {
    name: "100 KB tool arguments in 50-char deltas",
    script: [Script.toolCall("store", toolArgs(100_000), { chunkSize: 50, pending: false })],
    runs: 1
  },
  {
    name: "200 KB tool arguments in 50-char deltas",
    script: [Script.toolCall("store", toolArgs(200_000), { chunkSize: 50, pending: false })],
    runs: 1,
    upstreamTooSlow: true
  },
  { name: "5,000 component props patches", script: [Script.component("Chart", propsSnapshots(5_000))], runs: 1 },
  {
    name: "100 concurrent runs x 2,000 deltas",
    script: [Script.text(Array.from({ length: 2_000 }, () => "tok "))],
    runs: 100
  }
]

/** The cold start's run (see `coldStart.ts`): a short reply, as a CLI's first question gets. */
const coldStartScript: Script.Script = [Script.text(["Hello", ", ", "how can I help?"])]

/** The server's script: the scenario named by the message. */
export const byMessage: Script.ScriptFn = (request) =>
  request.text === "cold start"
    ? coldStartScript
    : scenarios.find((s) => s.name === request.text)?.script ?? [Script.text("unknown scenario")]
