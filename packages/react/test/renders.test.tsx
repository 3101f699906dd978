// @vitest-environment happy-dom
/**
 * Render counts per 1,000 streamed text deltas (a measurement; the
 * assertions only bound it loosely, nothing is timed). The table is printed
 * when the file runs as `pnpm --filter @tambo-effect/react measure:renders`
 * (also a step of `pnpm bench`); `pnpm test` only checks the bounds.
 *
 * Frames are simulated at 60 Hz (happy-dom's requestAnimationFrame fires at
 * once, a browser's once per display frame).
 */
import { render } from "@testing-library/react"
import { Console } from "node:console"
import { Writable } from "node:stream"
import { Script } from "@tambo-effect/testing"
import { memo, Profiler } from "react"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type NotifyMode, type ReactTamboThreadMessage, useTambo, useTamboClient } from "../src/index.js"
import { connection, until, useServer, wrapperFor } from "./helpers.js"

const server = useServer()
const DELTAS = 1000

/** Whether this run is the measurement (`measure:renders`), rather than a test among the others. */
const measuring = process.env["npm_lifecycle_event"] === "measure:renders"

/** `console.table`'s layout as plain text: vitest's console would color it, and a log file gets the escapes. */
const plainTable = (rows: ReadonlyArray<Record<string, string | number>>): string => {
  let text = ""
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString()
      done()
    }
  })
  new Console({ stdout: sink, colorMode: false }).table(rows)
  return text
}

const realFrame = globalThis.requestAnimationFrame
const realCancel = globalThis.cancelAnimationFrame
beforeAll(() => {
  globalThis.requestAnimationFrame = (callback) => setTimeout(() => callback(performance.now()), 16) as unknown as number
  globalThis.cancelAnimationFrame = (handle) => clearTimeout(handle)
})
afterAll(() => {
  globalThis.requestAnimationFrame = realFrame
  globalThis.cancelAnimationFrame = realCancel
})

interface Measure {
  readonly notifications: number
  readonly chatRenders: number
  readonly messageRenders: number
  readonly commits: number
  readonly text: string
  readonly millis: number
}

const measure = async (updates: NotifyMode, paceMillis: number): Promise<Measure> => {
  server().setScript([
    ...(paceMillis > 0 ? [Script.pace(paceMillis)] : []),
    Script.text(Array.from({ length: DELTAS }, (_, i) => `${i % 10}`))
  ])
  let notifications = 0
  let chatRenders = 0
  let messageRenders = 0
  let commits = 0
  let send: ((text: string) => Promise<unknown>) | undefined
  let latest: ReadonlyArray<ReactTamboThreadMessage> = []

  const Message = memo(({ message }: { readonly message: ReactTamboThreadMessage }) => {
    if (message.role === "assistant") messageRenders++
    return <p>{message.content.map((block) => (block.type === "text" ? block.text : "")).join("")}</p>
  })
  const Chat = () => {
    chatRenders++
    const client = useTamboClient()
    const { messages, sendMessage } = useTambo()
    latest = messages
    send = async (text) => {
      const unsubscribe = client.subscribe(() => notifications++)
      try {
        return await sendMessage(text).thread
      } finally {
        unsubscribe()
      }
    }
    return <>{messages.map((message) => <Message key={message.id} message={message} />)}</>
  }
  const Wrapper = wrapperFor(connection(server(), { updates }))
  const view = render(
    <Wrapper>
      <Profiler id="chat" onRender={() => commits++}>
        <Chat />
      </Profiler>
    </Wrapper>
  )
  await until(() => send !== undefined, "mount")
  const before = { chatRenders, messageRenders, commits }
  const started = performance.now()
  await send!("go")
  // Let the last frame flush.
  await until(() => (latest.at(-1)?.content[0] as { text?: string } | undefined)?.text?.length === DELTAS, "last delta")
  const result = {
    notifications,
    chatRenders: chatRenders - before.chatRenders,
    messageRenders: messageRenders - before.messageRenders,
    commits: commits - before.commits,
    text: (latest.at(-1)?.content[0] as { text?: string } | undefined)?.text ?? "",
    millis: Math.round(performance.now() - started)
  }
  view.unmount()
  return result
}

describe(`renders per ${DELTAS} streamed deltas`, () => {
  it("stays far below one render per delta", async () => {
    const rows: Array<Record<string, string | number>> = []
    for (const paceMillis of [0, 1]) {
      for (const updates of ["animationFrame", "microtask"] as const) {
        const result = await measure(updates, paceMillis)
        expect(result.text).toHaveLength(DELTAS)
        rows.push({
          stream: paceMillis === 0 ? "burst (no delay)" : `paced ${paceMillis} ms/delta`,
          updates,
          "client notifications": result.notifications,
          "useTambo renders": result.chatRenders,
          "streamed message renders": result.messageRenders,
          "React commits": result.commits,
          "run ms": result.millis
        })
      }
    }
    if (measuring) {
      console.log(
        `\nRenders per ${DELTAS} streamed text deltas (React ${(await import("react")).version}, 60 Hz simulated frames):\n` +
          plainTable(rows)
      )
    }
    for (const row of rows) {
      const renders = Number(row["useTambo renders"])
      // Never more than one render per client notification (+ the user message), nor per delta.
      expect(renders).toBeLessThanOrEqual(Number(row["client notifications"]) + 2)
      if (row["updates"] === "animationFrame") expect(renders).toBeLessThan(DELTAS / 2)
    }
  }, 60_000)
})
