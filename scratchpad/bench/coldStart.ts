/**
 * The cold-start scenario: what a CLI or a serverless function pays before its
 * first answer. Each measure is a fresh `node` process (`coldChild.mjs`) that
 * loads a client's published build, as a user's code does (with `import`, and
 * with `require` as a CommonJS script does), and either exits or runs one
 * short conversation against the testing server and exits. Ours and
 * `@tambo-ai/client` alternate, the order swapped every round, so a slow
 * moment of a shared machine hits both; medians, not bests, since a user gets
 * a typical start, not the luckiest.
 */
import { spawn, spawnSync } from "node:child_process"
import { readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** The message the server answers with a short reply (see `scenarios.ts`). */
export const coldStartMessage = "cold start"

interface Sample {
  /** Wall time from spawning the process to its exit. */
  readonly wallMs: number
  /** Since the process started: the import done, and the run done (the import's figure when not run). */
  readonly importedMs: number
  readonly ranMs: number
  /** User and system CPU time of the whole process. */
  readonly cpuMs: number
  readonly maxRssMiB: number
}

const childPath = fileURLToPath(new URL("./coldChild.mjs", import.meta.url))
const packagesDir = fileURLToPath(new URL("../../packages/", import.meta.url))

/** One fresh process; resolves with its figures, rejects on a non-zero exit. */
const once = (args: ReadonlyArray<string>): Promise<Sample> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    // No execArgv: the parent runs under tsx with the source condition; a user's process has neither.
    const child = spawn(process.execPath, [childPath, ...args], {
      cwd: fileURLToPath(new URL(".", import.meta.url)),
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (data: string) => (out += data))
    child.once("error", reject)
    child.once("exit", (code) => {
      const wallMs = performance.now() - started
      if (code !== 0) return reject(new Error(`cold start ${args.join(" ")} exited with ${code}`))
      const { cpuMs, importedMs, maxRssKiB, ranMs } = JSON.parse(out) as {
        importedMs: number
        ranMs: number
        cpuMs: number
        maxRssKiB: number
      }
      resolve({ wallMs, importedMs, ranMs, cpuMs, maxRssMiB: maxRssKiB / 1024 })
    })
  })

const newestMtime = (dir: string): number => {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs)
  }
  return newest
}

/**
 * A user imports the published build (`dist/`): builds core and client when
 * their build is missing or older than their sources, so a stale build is
 * never what is measured.
 */
export const ensureBuilt = (): void => {
  const stale = ["core", "client"].some((name) => {
    // Node loads the client's standalone builds (dist/node, dist/node-cjs), made by the same `tsup` run.
    const builds = name === "client" ? [["node", "index.js"], ["node-cjs", "index.cjs"]] : [["index.js"]]
    try {
      const sources = newestMtime(join(packagesDir, name, "src"))
      return builds.some((path) => statSync(join(packagesDir, name, "dist", ...path)).mtimeMs < sources)
    } catch {
      return true
    }
  })
  if (!stale) return
  console.log("  (building core and client: the cold start imports their published build)")
  const result = spawnSync("pnpm", ["--filter", "@tambo-effect/core", "--filter", "@tambo-effect/client", "build"], {
    stdio: ["ignore", "ignore", "inherit"]
  })
  if (result.status !== 0) throw new Error("building core and client failed")
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/**
 * Runs `rounds` rounds and prints the medians: import only, then import and
 * one short run, each loaded with `import` and with `require`.
 * `COLD_START_BEFORE=<path to a client's dist/index.js>` adds that build as a
 * third contender of `import`, and `COLD_START_BEFORE_CJS=<path to a client's
 * dist/index.cjs>` one of `require`, for before/after comparisons.
 */
export const coldStart = async (server: { readonly url: string; readonly apiKey: string }, rounds: number) => {
  ensureBuilt()
  const contendersOf = (before: string | undefined): ReadonlyArray<{ readonly label: string; readonly arg: string }> => [
    { label: "ours", arg: "ours" },
    ...(before === undefined ? [] : [{ label: "before", arg: before }]),
    { label: "upstream", arg: "upstream" }
  ]
  const loaders: ReadonlyArray<{
    readonly label: string
    readonly flags: ReadonlyArray<string>
    readonly contenders: ReadonlyArray<{ readonly label: string; readonly arg: string }>
  }> = [
    { label: "import", flags: [], contenders: contendersOf(process.env.COLD_START_BEFORE) },
    { label: "require", flags: ["--require"], contenders: contendersOf(process.env.COLD_START_BEFORE_CJS) }
  ]
  const modes: ReadonlyArray<{ readonly label: string; readonly args: ReadonlyArray<string> }> = [
    { label: "import only", args: ["import"] },
    { label: "import + one run", args: ["run", server.url, server.apiKey, coldStartMessage] }
  ]
  console.log(`  (median of ${rounds} fresh processes each; ours and @tambo-ai/client alternated)`)
  for (const mode of modes) {
    console.log(`  ${mode.label}`)
    for (const loader of loaders) {
      const { contenders } = loader
      const samples = contenders.map((): Array<Sample> => [])
      for (let round = 0; round < rounds; round++) {
        const order = contenders.map((_, i) => i)
        if (round % 2 === 1) order.reverse()
        for (const i of order) samples[i]!.push(await once([...loader.flags, contenders[i]!.arg, ...mode.args]))
      }
      const upstreamWall = median(samples[contenders.length - 1]!.map((s) => s.wallMs))
      const upstreamCpu = median(samples[contenders.length - 1]!.map((s) => s.cpuMs))
      contenders.forEach(({ label }, i) => {
        const of = samples[i]!
        const wall = median(of.map((s) => s.wallMs))
        const cpu = median(of.map((s) => s.cpuMs))
        console.log(
          `    ${loader.label.padEnd(7)} ${label.padEnd(9)} ${wall.toFixed(0).padStart(5)} ms process, ${cpu.toFixed(0).padStart(4)} ms CPU` +
            `  (loaded at ${median(of.map((s) => s.importedMs)).toFixed(0).padStart(4)} ms` +
            (mode.args.length === 1 ? "" : `, run done at ${median(of.map((s) => s.ranMs)).toFixed(0).padStart(4)} ms`) +
            `)  peak RSS ${median(of.map((s) => s.maxRssMiB)).toFixed(0).padStart(4)} MiB` +
            (label === "upstream"
              ? ""
              : `  ${(wall / upstreamWall).toFixed(2)}x (CPU ${(cpu / upstreamCpu).toFixed(2)}x) @tambo-ai/client`)
        )
      })
    }
  }
}
