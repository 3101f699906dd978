/**
 * The benchmark suite: streams scripted runs through the testing server on
 * loopback and prints, per scenario, time, events per second, peak heap and
 * the ratio to a floor that only reads the SSE bytes and JSON.parses each
 * frame. Figures, not assertions: shared machines are noisy.
 *
 *   pnpm bench                 every scenario, ours and the floor
 *   pnpm bench --upstream      also @tambo-ai/client 1.1.3 (slow: minutes)
 *   pnpm bench --only text     scenarios whose name contains "text"
 */
import { Effect, Stream } from "effect"
import { Tambo } from "@tambo-effect/core"
import { Script, startTestServer, type TestServer } from "@tambo-effect/testing"

interface Scenario {
  readonly name: string
  readonly script: Script.Script
  /** Concurrent runs, each on its own thread. */
  readonly runs: number
  /** Skip the upstream client (it would take minutes). */
  readonly upstreamTooSlow?: boolean
}

const args = process.argv.slice(2)
const withUpstream = args.includes("--upstream")
const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : undefined
const repeats = Number(args.includes("--repeats") ? args[args.indexOf("--repeats") + 1] : 3)

const toolArgs = (bytes: number) => ({ data: "x".repeat(bytes - 12) })

const propsSnapshots = (count: number) => {
  const snapshots: Array<Record<string, unknown>> = []
  for (let i = 1; i <= count; i++) snapshots.push({ title: "Forecast", points: i, label: `point ${i}` })
  return snapshots
}

const scenarios: ReadonlyArray<Scenario> = [
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

interface Measure {
  readonly ms: number
  readonly events: number
  readonly peakHeapMb: number
}

/** Samples the heap while `f` runs; reports the best of `repeats` times. */
const measure = async (f: () => Promise<number>): Promise<Measure> => {
  let best: Measure | undefined
  for (let i = 0; i < repeats; i++) {
    globalThis.gc?.()
    const base = process.memoryUsage().heapUsed
    let peak = base
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().heapUsed)
    }, 5)
    const start = performance.now()
    const events = await f()
    const ms = performance.now() - start
    clearInterval(sampler)
    peak = Math.max(peak, process.memoryUsage().heapUsed)
    const result = { ms, events, peakHeapMb: (peak - base) / 1024 / 1024 }
    if (best === undefined || result.ms < best.ms) best = result
  }
  return best!
}

/** The floor: fetch, split SSE frames, JSON.parse each; nothing else. */
const floorRun = async (server: TestServer, threadIndex: number): Promise<number> => {
  const response = await fetch(`${server.url}/v1/threads/runs`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": server.apiKey },
    body: JSON.stringify({
      message: { role: "user", content: [{ type: "text", text: "go" }] },
      thread: { userKey: `floor-${threadIndex}` }
    })
  })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  let events = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    buffer += decoder.decode(value, { stream: true })
    let boundary = buffer.indexOf("\n\n")
    let start = 0
    while (boundary !== -1) {
      const frame = buffer.slice(start, boundary)
      if (frame.startsWith("data: ")) {
        JSON.parse(frame.slice(6))
        events++
      }
      start = boundary + 2
      boundary = buffer.indexOf("\n\n", start)
    }
    buffer = buffer.slice(start)
  }
  return events
}

const oursRun = (tambo: Tambo.Tambo.Service) =>
  Stream.runFold(tambo.run("go", { threadId: "placeholder" }), 0, (n) => n + 1)

const runOurs = async (server: TestServer, runs: number): Promise<number> => {
  const program = Effect.gen(function* () {
    const tambo = yield* Tambo.Tambo
    const counts = yield* Effect.all(Array.from({ length: runs }, () => oursRun(tambo)), {
      concurrency: "unbounded"
    })
    return counts.reduce((a, b) => a + b, 0)
  })
  // A client per concurrent run, like independent users; one for a single run.
  return Effect.runPromise(
    program.pipe(
      Effect.provide(Tambo.layer({ apiKey: server.apiKey, tamboUrl: server.url, userKey: "bench", maxRetries: 0 }))
    )
  )
}

const runUpstream = async (server: TestServer, runs: number): Promise<number> => {
  const { TamboClient } = await import("@tambo-ai/client")
  const counts = await Promise.all(
    Array.from({ length: runs }, async () => {
      const client = new TamboClient({ apiKey: server.apiKey, tamboUrl: server.url, userKey: "upstream" })
      let n = 0
      for await (const _ of client.run("go")) n++
      return n
    })
  )
  return counts.reduce((a, b) => a + b, 0)
}

const fmt = (m: Measure, floor?: Measure) =>
  `${m.ms.toFixed(0).padStart(7)} ms  ${(m.events / (m.ms / 1000)).toFixed(0).padStart(9)} ev/s  ` +
  `peak +${m.peakHeapMb.toFixed(1).padStart(6)} MB` +
  (floor === undefined ? "" : `  ${(m.ms / floor.ms).toFixed(2).padStart(6)}x floor`)

const main = async () => {
  const server = await startTestServer()
  try {
    console.log(`tambo-effect benchmarks (best of ${repeats}; node ${process.version})`)
    for (const scenario of scenarios) {
      if (only !== undefined && !scenario.name.includes(only)) continue
      server.setScript(scenario.script)
      console.log(`\n${scenario.name}`)
      const floor = await measure(async () => {
        const counts = await Promise.all(Array.from({ length: scenario.runs }, (_, i) => floorRun(server, i)))
        return counts.reduce((a, b) => a + b, 0)
      })
      console.log(`  floor     ${fmt(floor)}`)
      const ours = await measure(() => runOurs(server, scenario.runs))
      console.log(`  ours      ${fmt(ours, floor)}`)
      if (withUpstream && !scenario.upstreamTooSlow) {
        const upstream = await measure(() => runUpstream(server, scenario.runs))
        console.log(`  upstream  ${fmt(upstream, floor)}`)
      }
      server.reset()
    }
  } finally {
    await server.close()
  }
}

await main()
