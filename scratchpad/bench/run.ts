/**
 * The benchmark suite: streams scripted runs through the testing server on
 * loopback and prints, per scenario, time, events per second, peak heap, the
 * share of its time spent in garbage collection, and the ratio to a floor that
 * only reads the SSE bytes and JSON.parses each frame. Figures, not
 * assertions: shared machines are noisy.
 *
 *   pnpm bench                 every scenario, ours and the floor
 *   pnpm bench --upstream      also @tambo-ai/client 1.1.3 (slow: minutes)
 *   pnpm bench --only text     scenarios whose name contains "text"
 *   pnpm bench --repeats 9     exactly 9 rounds (default: at least 12, and more, up to 100,
 *                              until the scenario has been measured for 4 s)
 *   pnpm bench --fold          consume each run with Stream.runFold, element by element
 *   pnpm bench --stream-floor  also the floor's requests read as an Effect Stream (see streamFloorRun)
 *   pnpm bench --no-reconcile  ours without the read of the thread at the end of each run
 *                              (reconcileAfterRun: false), to see what that read costs
 *   pnpm bench --floor-read    also the floor followed by one read of its thread (GET, JSON.parse),
 *                              the request ours makes at each run's end: ours over it is what the
 *                              SDK costs beyond the requests the protocol needs
 *   pnpm bench --only cold     the cold start alone: fresh processes importing the published
 *                              builds of ours and of @tambo-ai/client (see coldStart.ts)
 */
import { spawn } from "node:child_process"
import { PerformanceObserver } from "node:perf_hooks"
import { GCProfiler, getHeapStatistics } from "node:v8"
import { createInterface } from "node:readline"
import { Effect, ManagedRuntime, Stream } from "effect"
import { Tambo, TamboTransport } from "@tambo-effect/core"
import { coldStart, coldStartMessage } from "./coldStart.js"
import { scenarios } from "./scenarios.js"

interface Server {
  readonly url: string
  readonly apiKey: string
  readonly close: () => void
}

const args = process.argv.slice(2)
const withUpstream = args.includes("--upstream")
const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : undefined
const perElement = args.includes("--fold")
const withStreamFloor = args.includes("--stream-floor")
const reconcileAfterRun = !args.includes("--no-reconcile")
const withFloorRead = args.includes("--floor-read")
const repeats = args.includes("--repeats") ? Number(args[args.indexOf("--repeats") + 1]) : undefined
// Short scenarios get more rounds: a best of a few over ~100 ms of measuring is mostly noise.
// Long ones get at least 12: with 100 concurrent runs a round takes about half a second, and
// the ratio of the bests of the 6 rounds that fit in the budget moved by more than a quarter
// from one suite to the next.
const minRounds = repeats ?? 12
const maxRounds = repeats ?? 100
const measuringBudgetMs = 4_000

/** Starts the testing server in a child process (same conditions and loader as this one). */
const startServer = (): Promise<Server> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, new URL("./server.ts", import.meta.url).pathname], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    child.once("error", reject)
    createInterface({ input: child.stdout! }).once("line", (line) => {
      const { url, apiKey } = JSON.parse(line) as { url: string; apiKey: string }
      resolve({ url, apiKey, close: () => child.kill("SIGTERM") })
    })
  })

interface Measure {
  readonly ms: number
  readonly events: number
  readonly peakHeapMb: number
  /** Bytes allocated by that same run (what the collector saw go, and what was left), in MB. */
  readonly allocatedMb: number
  /** Of all its timed runs, the share of the time spent in garbage collection pauses. */
  readonly gcShare: number
  /** Per round, this time over the floor's time in the same round. */
  readonly roundRatios: ReadonlyArray<number>
}

/**
 * Garbage collection pauses, as the runtime reports them: start and duration,
 * in ms. A pause counts for the run it began in; it may also collect what the
 * run before left, so for scenarios of a few ms the split between contenders
 * is rough.
 */
const gcPauses: Array<{ readonly start: number; readonly duration: number }> = []
const recordPauses = (entries: ReadonlyArray<PerformanceEntry>) => {
  for (const entry of entries) gcPauses.push({ start: entry.startTime, duration: entry.duration })
}
const gcObserver = new PerformanceObserver((list) => recordPauses(list.getEntries()))
gcObserver.observe({ entryTypes: ["gc"] })

/** Milliseconds of garbage collection that started inside each window. */
const gcMsWithin = (windows: ReadonlyArray<{ readonly start: number; readonly end: number }>): number => {
  recordPauses(gcObserver.takeRecords())
  let total = 0
  for (const pause of gcPauses) {
    if (windows.some((w) => pause.start >= w.start && pause.start < w.end)) total += pause.duration
  }
  return total
}

interface Timed {
  readonly ms: number
  readonly events: number
  readonly start: number
  readonly end: number
}

/** Runs `f` once and returns its time, event count and window. */
const timeOnce = async (f: () => Promise<number>): Promise<Timed> => {
  const start = performance.now()
  const events = await f()
  const end = performance.now()
  return { ms: end - start, events, start, end }
}

/**
 * Runs `f` once from a collected heap, sampling the heap every 5 ms; returns the peak above the
 * start, and what the run allocated: unlike times, the same on a loaded machine as on an idle one.
 */
const heapOnce = async (f: () => Promise<number>): Promise<{ readonly peakMb: number; readonly allocatedMb: number }> => {
  globalThis.gc?.()
  const used = () => getHeapStatistics().used_heap_size
  const base = process.memoryUsage().heapUsed
  let peak = base
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed)
  }, 5)
  const profiler = new GCProfiler()
  profiler.start()
  const before = used()
  await f()
  const after = used()
  const collections = profiler.stop()?.statistics ?? []
  clearInterval(sampler)
  peak = Math.max(peak, process.memoryUsage().heapUsed)
  // Allocated: the heap's growth up to each collection, then up to the end.
  let allocated = 0
  let from = before
  for (const collection of collections) {
    allocated += collection.beforeGC.heapStatistics.usedHeapSize - from
    from = collection.afterGC.heapStatistics.usedHeapSize
  }
  allocated += after - from
  return { peakMb: (peak - base) / 1024 / 1024, allocatedMb: allocated / 1024 / 1024 }
}

/**
 * Measures the contenders of one scenario: rounds in which each runs once, in
 * turn (so a slow moment on a shared machine hits all of them alike), the
 * best time of each, and each round's ratio to the floor measured in the same
 * round (its median is steadier than a ratio of two bests taken at different
 * moments); then one more run each from a collected heap for the peak memory
 * and what the run allocated.
 * A forced collection is not part of any timed run: it also shrinks the young
 * generation, which then taxes whoever allocates first afterwards.
 */
const measureAll = async (
  contenders: ReadonlyArray<() => Promise<number>>
): Promise<{ readonly measures: Array<Measure>; readonly rounds: number }> => {
  const best: Array<Timed | undefined> = contenders.map(() => undefined)
  const windows: Array<Array<Timed>> = contenders.map(() => [])
  const roundRatios: Array<Array<number>> = contenders.map(() => [])
  const started = performance.now()
  let rounds = 0
  while (rounds < maxRounds && (rounds < minRounds || performance.now() - started < measuringBudgetMs)) {
    rounds++
    let floorMs = 0
    for (let i = 0; i < contenders.length; i++) {
      const result = await timeOnce(contenders[i]!)
      if (best[i] === undefined || result.ms < best[i]!.ms) best[i] = result
      windows[i]!.push(result)
      if (i === 0) floorMs = result.ms
      roundRatios[i]!.push(result.ms / floorMs)
    }
  }
  // Pauses are reported a little after they happen: let them arrive before counting.
  await new Promise((resolve) => setTimeout(resolve, 50))
  const gcShares = windows.map((timed) => gcMsWithin(timed) / timed.reduce((sum, t) => sum + t.ms, 0))
  gcPauses.length = 0
  const measures: Array<Measure> = []
  for (let i = 0; i < contenders.length; i++) {
    const { ms, events } = best[i]!
    const heap = await heapOnce(contenders[i]!)
    measures.push({
      ms,
      events,
      gcShare: gcShares[i]!,
      peakHeapMb: heap.peakMb,
      allocatedMb: heap.allocatedMb,
      roundRatios: roundRatios[i]!
    })
  }
  return { measures, rounds }
}

/**
 * The floor: fetch, split SSE frames, JSON.parse each; nothing else. With `read`, it then reads
 * the run's thread once (`GET /v1/threads/{id}`, JSON.parse), as ours does at a run's end.
 */
const floorRun = async (server: Server, scenario: string, threadIndex: number, read = false): Promise<number> => {
  const response = await fetch(`${server.url}/v1/threads/runs`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": server.apiKey },
    body: floorBody(scenario, threadIndex)
  })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  let events = 0
  let threadId: string | undefined
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    buffer += decoder.decode(value, { stream: true })
    let boundary = buffer.indexOf("\n\n")
    let start = 0
    while (boundary !== -1) {
      const frame = buffer.slice(start, boundary)
      if (frame.startsWith("data: ")) {
        const event = JSON.parse(frame.slice(6))
        if (threadId === undefined && event.type === "RUN_STARTED") threadId = event.threadId
        events++
      }
      start = boundary + 2
      boundary = buffer.indexOf("\n\n", start)
    }
    buffer = buffer.slice(start)
  }
  if (read && threadId !== undefined) {
    const thread = await fetch(`${server.url}/v1/threads/${threadId}?userKey=floor-${threadIndex}`, {
      headers: { "x-api-key": server.apiKey }
    })
    await thread.json()
  }
  return events
}

/** The request body of a floor run. */
const floorBody = (scenario: string, threadIndex: number) =>
  JSON.stringify({
    message: { role: "user", content: [{ type: "text", text: scenario }] },
    thread: { userKey: `floor-${threadIndex}` }
  })

/**
 * Delivers every event of a run to the consumer and counts them. By default it
 * reads chunk by chunk, as an Effect consumer that keeps up with a stream
 * does; `--fold` folds element by element instead, which adds
 * `Stream.runFold`'s own cost per event.
 */
const consume = <A, E>(events: Stream.Stream<A, E>): Effect.Effect<number, E> => {
  if (perElement) return Stream.runFold(events, 0, (n) => n + 1)
  return Effect.suspend(() => {
    let count = 0
    return Effect.map(
      Stream.runForEachChunk(events, (chunk) =>
        Effect.sync(() => {
          count += chunk.length
        })),
      () => count
    )
  })
}

/**
 * The floor's request read as an Effect Stream: the response's bytes through
 * the transport's public SSE decoder (which also validates each event),
 * consumed like ours. No HttpClient, spans, store or snapshots: what returning
 * an Effect Stream costs by itself, for reading our ratio against.
 */
const streamFloorRun = (server: Server, scenario: string, threadIndex: number): Effect.Effect<number, unknown> =>
  consume(TamboTransport.decodeSse(Stream.unwrap(Effect.map(
    Effect.tryPromise((signal) =>
      fetch(`${server.url}/v1/threads/runs`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": server.apiKey },
        body: floorBody(scenario, threadIndex),
        signal
      })
    ),
    (response) => Stream.fromReadableStream(() => response.body!, (cause) => cause)
  ))))

/** One run of ours. */
const oursRun = (tambo: Tambo.Tambo.Service, scenario: string): Effect.Effect<number, unknown> =>
  consume(tambo.run(scenario, { threadId: "placeholder" }))

/** One client for the whole suite: its construction is not what is measured. */
let runtime: ManagedRuntime.ManagedRuntime<Tambo.Tambo, unknown> | undefined

const runOurs = async (server: Server, scenario: string, runs: number): Promise<number> => {
  runtime ??= ManagedRuntime.make(
    Tambo.layer({ apiKey: server.apiKey, tamboUrl: server.url, userKey: "bench", reconcileAfterRun })
  )
  const program = Effect.gen(function* () {
    const tambo = yield* Tambo.Tambo
    const counts = yield* Effect.all(Array.from({ length: runs }, () => oursRun(tambo, scenario)), {
      concurrency: "unbounded"
    })
    return counts.reduce((a, b) => a + b, 0)
  })
  return runtime.runPromise(program)
}

const runStreamFloor = (server: Server, scenario: string, runs: number): Promise<number> =>
  Effect.runPromise(
    Effect.map(
      Effect.all(Array.from({ length: runs }, (_, i) => streamFloorRun(server, scenario, i)), {
        concurrency: "unbounded"
      }),
      (counts) => counts.reduce((a, b) => a + b, 0)
    )
  )

const runUpstream = async (server: Server, scenario: string, runs: number): Promise<number> => {
  const { TamboClient } = await import("@tambo-ai/client")
  const counts = await Promise.all(
    Array.from({ length: runs }, async () => {
      const client = new TamboClient({ apiKey: server.apiKey, tamboUrl: server.url, userKey: "upstream" })
      let n = 0
      for await (const _ of client.run(scenario)) n++
      return n
    })
  )
  return counts.reduce((a, b) => a + b, 0)
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const fmt = (m: Measure, floor?: Measure) =>
  `${m.ms.toFixed(0).padStart(7)} ms  ${(m.events / (m.ms / 1000)).toFixed(0).padStart(9)} ev/s  ` +
  `peak +${m.peakHeapMb.toFixed(1).padStart(6)} MB  alloc ${m.allocatedMb.toFixed(1).padStart(6)} MB  gc ${(m.gcShare * 100).toFixed(0).padStart(2)}%` +
  (floor === undefined
    ? ""
    : `  ${(m.ms / floor.ms).toFixed(2).padStart(6)}x floor` +
      ` (median of the rounds' own ratios ${median(m.roundRatios).toFixed(2)}x)`)

const main = async () => {
  const server = await startServer()
  try {
    console.log(
      `tambo-effect benchmarks (best of ${
        repeats ?? "12-100"
      } interleaved rounds; node ${process.version}; server in a child process)`
    )
    for (const scenario of scenarios) {
      if (only !== undefined && !scenario.name.includes(only)) continue
      console.log(`\n${scenario.name}`)
      const floorOf = async (read = false) => {
        const counts = await Promise.all(
          Array.from({ length: scenario.runs }, (_, i) => floorRun(server, scenario.name, i, read))
        )
        return counts.reduce((a, b) => a + b, 0)
      }
      const contenders: Array<{ readonly label: string; readonly run: () => Promise<number> }> = [
        { label: "floor", run: floorOf },
        { label: "ours", run: () => runOurs(server, scenario.name, scenario.runs) }
      ]
      if (withFloorRead) contenders.push({ label: "floor+read", run: () => floorOf(true) })
      if (withStreamFloor) {
        contenders.push({ label: "stream", run: () => runStreamFloor(server, scenario.name, scenario.runs) })
      }
      if (withUpstream && !scenario.upstreamTooSlow) {
        contenders.push({ label: "upstream", run: () => runUpstream(server, scenario.name, scenario.runs) })
      }
      const { measures, rounds } = await measureAll(contenders.map((contender) => contender.run))
      console.log(`  (best of ${rounds} rounds)`)
      measures.forEach((measure, i) =>
        console.log(`  ${contenders[i]!.label.padEnd(9)} ${fmt(measure, i === 0 ? undefined : measures[0])}`)
      )
    }
    if (only === undefined || coldStartMessage.includes(only)) {
      console.log(`\n${coldStartMessage}: a fresh process imports the client, runs once (or not) and exits`)
      await coldStart(server, repeats ?? 7)
    }
  } finally {
    gcObserver.disconnect()
    await runtime?.dispose()
    server.close()
  }
}

await main()
