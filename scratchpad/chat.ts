/**
 * `pnpm chat`: an interactive chat in the terminal through
 * `@tambo-effect/client`. Type a message and watch the reply stream, with
 * tool calls, their results and component props.
 *
 * Ctrl-C during a reply cancels it (on the server too) and keeps the chat
 * going; Ctrl-C at the prompt right after, or twice, exits. So do Ctrl-D
 * and `/exit`. `/new` starts a new thread.
 *
 * Talks to Tambo Cloud when `TAMBO_API_KEY` is set, otherwise to the
 * embedded testing server (ask it about the weather in some city).
 */
import { createInterface } from "node:readline"
import { Writable } from "node:stream"
import { isAbortError, TamboClient, type TamboStream } from "@tambo-effect/client"
import { describeError, paceMillis, Printer, startBackend, stdoutOut, weatherCard, weatherTool } from "./demo-support.js"

const printer = new Printer(stdoutOut())
const backend = await startBackend(paceMillis())
const client = new TamboClient({ ...backend.options, tools: [weatherTool], components: [weatherCard] })
const interactive = process.stdin.isTTY === true

printer.line(printer.paint("bold", `tambo-effect chat, talking to ${backend.label}`))
printer.line(printer.paint("dim", "Ctrl-C cancels a reply; Ctrl-C twice, Ctrl-D or /exit quits; /new starts a new thread."))

/**
 * Where readline echoes what is typed: the terminal, except while a reply streams, when the
 * echo would land inside the reply. What is typed then is kept by readline all the same: a
 * line sent is answered after the reply (and shown then as a `you>` line), a line begun is
 * shown again with the prompt.
 */
let echoing = true
const echo = new Writable({
  write(chunk: Buffer | string, _encoding, done) {
    if (echoing) process.stdout.write(chunk)
    done()
  }
})
Object.defineProperties(echo, {
  isTTY: { get: () => process.stdout.isTTY },
  columns: { get: () => process.stdout.columns }
})
process.stdout.on("resize", () => echo.emit("resize"))

const rl = createInterface({ input: process.stdin, output: echo, terminal: interactive })
rl.setPrompt(printer.paint("cyan", "you> "))

/** Lines typed while a reply streams wait their turn; `shown` once they were echoed. */
const pending: Array<{ readonly line: string; readonly shown: boolean }> = []
let current: TamboStream | undefined
let busy = false
/** Quitting: drop what is pending. (At the end of piped input, it is answered first.) */
let quitting = false
let closed = false
/** A Ctrl-C was just pressed: the next one at the prompt exits. */
let armed = false

const prompt = () => {
  echoing = true
  // Keeps what was typed meanwhile on the line, after the prompt.
  if (interactive && !closed) rl.prompt(true)
}

/**
 * A spinner and "thinking…" while the reply has not started: from the message's sending to the
 * reply's first event, and again while a tool round's results go to the model. On a terminal
 * only (elsewhere a line cannot be taken back); it is erased before anything else is printed.
 */
const thinking = () => {
  if (!printer.out.tty) return { start: () => {}, stop: () => {} }
  const frames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
  let frame = 0
  let timer: ReturnType<typeof setInterval> | undefined
  const draw = () => printer.out.write(`\r\x1b[2K${printer.paint("dim", `${frames[frame++ % frames.length]} thinking…`)}`)
  return {
    start: () => {
      if (timer !== undefined) return
      printer.endLine()
      draw()
      timer = setInterval(draw, 80)
    },
    stop: () => {
      if (timer === undefined) return
      clearInterval(timer)
      timer = undefined
      printer.out.write("\r\x1b[2K")
    }
  }
}

const reply = async (message: string, shown: boolean) => {
  if (!shown) printer.user(message)
  const stream = client.run(message)
  current = stream
  const spinner = thinking()
  spinner.start()
  try {
    for await (const element of stream) {
      if (element.event.type === "RUN_STARTED") {
        // A continuation prints the tool results it carries, then waits for the model.
        printer.event(element)
        spinner.start()
      } else {
        spinner.stop()
        printer.event(element)
      }
    }
    spinner.stop()
    printer.endLine()
  } catch (error) {
    spinner.stop()
    if (isAbortError(error)) printer.line(printer.paint("dim", "(cancelled)"))
    else printer.line(printer.paint("red", `error: ${describeError(error)}`))
  } finally {
    current = undefined
    printer.line("")
  }
}

const handle = async ({ line, shown }: { readonly line: string; readonly shown: boolean }) => {
  const message = line.trim()
  if (message === "") return
  if (message === "/exit") return quit()
  if (message === "/new") {
    client.startNewThread()
    return printer.line(printer.paint("dim", "(new thread)"))
  }
  await reply(message, shown)
}

const drain = async () => {
  if (busy) return
  busy = true
  echoing = false
  while (pending.length > 0 && !quitting) await handle(pending.shift()!)
  busy = false
  if (closed) await shutdown()
  else prompt()
}

rl.on("line", (line) => {
  armed = false
  // On a terminal a line typed at the prompt was echoed there; in a pipe nothing is echoed.
  pending.push({ line, shown: interactive && echoing })
  void drain()
})

const interrupt = () => {
  if (current !== undefined) {
    current.abort()
    armed = true
    return
  }
  if (armed) return quit()
  armed = true
  printer.endLine()
  printer.line(printer.paint("dim", "(press Ctrl-C again to exit)"))
  prompt()
}
// On a terminal readline reports Ctrl-C; in a pipe it arrives as a signal.
rl.on("SIGINT", interrupt)
process.on("SIGINT", interrupt)

const quit = () => {
  quitting = true
  pending.length = 0
  current?.abort()
  rl.close()
}

let shutdownStarted = false
const shutdown = async () => {
  if (shutdownStarted) return
  shutdownStarted = true
  printer.endLine()
  printer.line(printer.paint("dim", "bye"))
  process.off("SIGINT", interrupt)
  await client.destroy()
  await backend.close()
}

rl.on("close", () => {
  closed = true
  // A reply in flight (or pending input) finishes first; `drain` shuts down after it.
  if (!busy) void shutdown()
})

prompt()
