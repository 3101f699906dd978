/**
 * `pnpm bench`: the stream benchmarks, given this command's flags, then the
 * React render count. Each step's failure is the suite's.
 */
import { spawnSync } from "node:child_process"

const step = (args) => {
  const result = spawnSync("pnpm", args, { stdio: "inherit" })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

step(["--filter", "bench", "start", ...process.argv.slice(2)])
step(["--filter", "@tambo-effect/react", "measure:renders"])
