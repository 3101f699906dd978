/**
 * One cold start, in a fresh process: import a client as a user does (the
 * package's published build, no loader and no source condition), optionally
 * run one short conversation against the server, then print what it took
 * and exit. Plain JavaScript, so that nothing but the client is loaded.
 * With `--require`, the client is loaded with `require`, as a CommonJS
 * script does, and gets the package's CommonJS build.
 *
 *   node coldChild.mjs [--require] ours|upstream import
 *   node coldChild.mjs [--require] ours|upstream run <url> <apiKey> <message>
 *
 * Prints one JSON line: ms since the process started when the import was
 * done and when the run was done, the CPU time it used (user and system,
 * steadier than wall time on a busy machine) and its peak resident memory (`VmHWM` on Linux).
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"

const args = process.argv.slice(2)
const required = args[0] === "--require"
const [which, mode, url, apiKey, message] = required ? args.slice(1) : args

// A path (to a build of ours from elsewhere) is loaded as given: for before/after comparisons.
const specifier = which === "ours" ? "@tambo-effect/client" : which === "upstream" ? "@tambo-ai/client" : which
const { TamboClient } = required ? createRequire(import.meta.url)(specifier) : await import(specifier)
const imported = performance.now()

let ran = imported
if (mode === "run") {
  const client = new TamboClient({ apiKey, tamboUrl: url, userKey: "cold-start" })
  let events = 0
  for await (const _ of client.run(message)) events++
  if (events === 0) throw new Error(`${specifier}: the run streamed no event`)
  ran = performance.now()
  // Ours holds a runtime until destroyed; the official client has no such call.
  await client.destroy?.()
}

/**
 * The peak resident memory of this process's own image. On Linux, `VmHWM` of /proc/self/status:
 * getrusage's `maxRSS` can carry the spawning process's peak over (a bench parent that ran the
 * heavy scenarios showed every child, ours and upstream's alike, at its own 92 MiB).
 */
const peakRssKiB = () => {
  try {
    // Synchronous: an asynchronous read would start libuv's thread pool, and count its memory.
    const status = readFileSync("/proc/self/status", "utf8")
    const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(status)
    if (hwm !== null) return Number(hwm[1])
  } catch {
    // Not Linux: getrusage's figure.
  }
  return process.resourceUsage().maxRSS
}

const usage = process.cpuUsage()
process.stdout.write(
  JSON.stringify({
    importedMs: imported,
    ranMs: ran,
    cpuMs: (usage.user + usage.system) / 1000,
    maxRssKiB: peakRssKiB()
  }) + "\n"
)
process.exit(0)
