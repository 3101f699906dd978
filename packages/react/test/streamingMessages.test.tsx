// @vitest-environment happy-dom
import { render, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import {
  type ReactTamboThreadMessage,
  SnapshotStrategy,
  type TamboStream,
  type TamboThreadMessage,
  useTambo,
  useTamboStreamingMessages,
  type UseTamboStreamingMessagesOptions
} from "../src/index.js"
import { connection, until, useServer, whenRendered, wrapperFor } from "./helpers.js"

const server = useServer()

const SENTENCE = "The quick brown fox jumps over the lazy dog, then naps in the warm afternoon sun."
/** Word pieces as a model streams them: a leading space starts a word. */
const DELTAS = SENTENCE.split(/(?= )/u).flatMap((word) => (word.length > 4 ? [word.slice(0, 3), word.slice(3)] : [word]))

const replyOf = (messages: ReadonlyArray<TamboThreadMessage>): string => {
  const message = messages.filter((m) => m.role === "assistant").at(-1)
  return (message?.content ?? []).flatMap((block) => (block.type === "text" ? [block.text] : [])).join("")
}

/**
 * Counts a run's events, and collects the texts of the snapshots several
 * text deltas shared (deltas the network delivered together share their
 * chunk's snapshot, which may run into the next word). The iterator is
 * created now, before any event arrived.
 */
const readEvents = async (stream: TamboStream): Promise<{ readonly count: number; readonly coalesced: Set<string> }> => {
  let count = 0
  const deltas = new Map<object, { text: string; count: number }>()
  for await (const { event, snapshot } of stream) {
    count++
    if (event.type !== "TEXT_MESSAGE_CONTENT") continue
    const entry = deltas.get(snapshot) ?? { text: replyOf(snapshot.messages), count: 0 }
    entry.count++
    deltas.set(snapshot, entry)
  }
  return { count, coalesced: new Set([...deltas.values()].filter((entry) => entry.count > 1).map((entry) => entry.text)) }
}

/** The reply's text as each reader rendered it, render by render. */
interface Renders {
  readonly transcript: Array<string>
  readonly live: Array<string>
}

/** The reply's first `n` deltas. */
const prefix = (n: number) => DELTAS.slice(0, n).join("")

/**
 * The reply delta by delta: after each delta `i` the run waits until every `[rendered, text]`
 * that `shown(i)` gives was rendered, so each delta lands in a frame of its own and each render
 * a test counts on happens, however slow the machine.
 */
const deltaByDelta = (shown: (i: number) => ReadonlyArray<readonly [rendered: ReadonlyArray<string>, text: string]>) => () =>
  DELTAS.flatMap((delta, i) => [Script.text(delta), ...shown(i).map((pair) => Script.hold(whenRendered(...pair)))])

/**
 * Renders a transcript with `options` next to a live `useTambo()` reader,
 * sends one message, and reports what each rendered (into `renders`, which
 * a script may watch).
 */
const renderRun = async (options: UseTamboStreamingMessagesOptions, renders: Renders = { transcript: [], live: [] }) => {
  const { live, transcript } = renders
  let send: ((text: string) => TamboStream) | undefined
  const Transcript = () => {
    const { messages } = useTamboStreamingMessages(options)
    transcript.push(replyOf(messages))
    return <p data-testid="transcript">{replyOf(messages)}</p>
  }
  const Live = () => {
    const { messages, sendMessage } = useTambo()
    send = sendMessage
    live.push(replyOf(messages))
    return null
  }
  const Wrapper = wrapperFor(connection(server()))
  const view = render(<Wrapper><Transcript /><Live /></Wrapper>)
  await until(() => send !== undefined, "mount")
  const before = { transcript: transcript.length, live: live.length }
  const stream = send!("go")
  const events = readEvents(stream)
  await stream.thread
  await waitFor(() => expect(view.getByTestId("transcript").textContent).toBe(SENTENCE))
  await waitFor(() => expect(live.at(-1)).toBe(SENTENCE))
  const { coalesced, count } = await events
  return {
    events: count,
    coalesced,
    transcript: transcript.slice(before.transcript),
    live: live.slice(before.live),
    view
  }
}

describe("useTamboStreamingMessages", () => {
  it("throttle: renders far fewer times than the run has events, and ends with the whole text", async () => {
    expect(DELTAS.join("")).toBe(SENTENCE)
    const renders: Renders = { transcript: [], live: [] }
    const half = Math.floor(DELTAS.length / 2)
    // Each delta goes on once the live reader showed the text up to it, so that reader renders
    // once a delta however slow the machine; after the first half the run waits for the
    // throttle to show it, so text shows while the run streams.
    server().setScript(deltaByDelta((i) => [
      [renders.live, prefix(i + 1)],
      ...(i + 1 === half ? [[renders.transcript, prefix(half)] as const] : [])
    ]))
    const { events, live, transcript } = await renderRun({ strategy: SnapshotStrategy.throttle("1 second") }, renders)
    expect(events).toBeGreaterThan(DELTAS.length)
    expect(transcript.length).toBeLessThan(DELTAS.length / 3)
    expect(transcript.length).toBeLessThan(live.length)
    expect(transcript.at(-1)).toBe(SENTENCE)
    // Text showed while it streamed, not only at the end.
    expect(transcript.some((text) => text.length > 0 && text !== SENTENCE)).toBe(true)
  })

  it("wordBoundary: renders only whole words", async () => {
    const renders: Renders = { transcript: [], live: [] }
    // Each delta goes on once the live reader showed it, and a delta that starts a word once the
    // transcript showed the words before it: every word shows there, whatever the machine's speed.
    server().setScript(deltaByDelta((i) => [
      [renders.live, prefix(i + 1)],
      ...(i > 0 && DELTAS[i]!.startsWith(" ") ? [[renders.transcript, prefix(i)] as const] : [])
    ]))
    const { coalesced, live, transcript } = await renderRun({ strategy: SnapshotStrategy.wordBoundary }, renders)
    expect(transcript.at(-1)).toBe(SENTENCE)
    const partial = transcript.filter((text) => text.length > 0 && text !== SENTENCE && !coalesced.has(text))
    expect(partial.length).toBeGreaterThan(3)
    for (const text of partial) {
      expect(SENTENCE.startsWith(text)).toBe(true)
      expect(SENTENCE[text.length]).toBe(" ")
    }
    // The live reader saw words cut in half.
    expect(live.some((text) => text.length > 0 && SENTENCE.startsWith(text) && SENTENCE[text.length] !== " " && text !== SENTENCE)).toBe(true)
  })

  it("without a strategy it follows the state, like useTambo().messages; the user message shows at once", async () => {
    const renders: Renders = { transcript: [], live: [] }
    // Each delta goes on once the transcript showed it, so it renders once a delta.
    server().setScript(deltaByDelta((i) => [[renders.transcript, prefix(i + 1)]]))
    const { transcript, view } = await renderRun({}, renders)
    expect(transcript.at(-1)).toBe(SENTENCE)
    expect(transcript.length).toBeGreaterThan(3)
    view.unmount()
  })

  it("shows the user's message before the reply starts, and the given thread", async () => {
    let replyStarts!: () => void
    // The reply starts once the transcript showed the user's message, however long that took.
    server().setScript([Script.hold(new Promise<void>((resolve) => (replyStarts = resolve))), Script.pace(5), Script.text(DELTAS)])
    const seen: Array<ReadonlyArray<string>> = []
    let send: ((text: string) => TamboStream) | undefined
    const Transcript = () => {
      const { messages } = useTamboStreamingMessages({ strategy: SnapshotStrategy.debounce("1 second") })
      seen.push(messages.map((m) => m.role))
      send = useTambo().sendMessage
      return null
    }
    let other: ReadonlyArray<ReactTamboThreadMessage> = []
    const Other = ({ threadId }: { readonly threadId: string }) => {
      other = useTamboStreamingMessages({ threadId, strategy: SnapshotStrategy.wordBoundary }).messages
      return null
    }
    const Wrapper = wrapperFor(connection(server()))
    const view = render(<Wrapper><Transcript /></Wrapper>)
    await until(() => send !== undefined, "mount")
    const stream = send!("hello")
    await waitFor(() => expect(seen.at(-1)).toEqual(["user"]))
    replyStarts()
    const thread = await stream.thread
    await waitFor(() => expect(seen.at(-1)).toEqual(["user", "assistant"]))

    // The same thread by id, from another component under the same provider.
    view.rerender(<Wrapper><Transcript /><Other threadId={thread.id} /></Wrapper>)
    await waitFor(() => expect(replyOf(other)).toBe(SENTENCE))
  })
})
