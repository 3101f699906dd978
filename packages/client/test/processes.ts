// A child process of the scripts in `scratchpad/`, as the demo and chat tests start them: its
// output collected as it comes, and killed if it has not exited within 50 s.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { join } from "node:path"

export const root = join(import.meta.dirname, "../../..")
export const tsx = join(root, "node_modules/.bin/tsx")

export interface Started {
  readonly child: ChildProcessWithoutNullStreams
  readonly output: { stdout: string; stderr: string }
  readonly exited: Promise<number | null>
}

/** `command args` from the repository's root, with `env` added to this process's (minus `unset`). */
export const spawnCollecting = (
  command: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  unset: ReadonlyArray<string>
): Started => {
  const base = { ...process.env }
  for (const name of unset) delete base[name]
  const child = spawn(command, [...args], { cwd: root, env: { ...base, ...env }, stdio: ["pipe", "pipe", "pipe"] })
  const output = { stdout: "", stderr: "" }
  child.stdout.on("data", (data: Buffer) => (output.stdout += data.toString()))
  child.stderr.on("data", (data: Buffer) => (output.stderr += data.toString()))
  const exited = new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 50_000)
    child.on("exit", (code) => {
      clearTimeout(timer)
      resolve(code)
    })
  })
  return { child, output, exited }
}

/** The variables that would send a script to Tambo Cloud instead of the embedded server. */
export const CLOUD_ENV = ["TAMBO_API_KEY", "TAMBO_URL", "TAMBO_USER_KEY"] as const
