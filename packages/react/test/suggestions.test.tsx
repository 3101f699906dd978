// @vitest-environment happy-dom
import { act, renderHook, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import { useTambo, useTamboSuggestions } from "../src/index.js"
import { connection, otherClientRunning, useServer, wrapperFor } from "./helpers.js"

/** Generations held until the test lets them go, by the text of the thread's first message. */
const gates = new Map<string, { readonly open: () => void; readonly opened: Promise<void> }>()

const gate = (text: string) => {
  let open!: () => void
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  gates.set(text, { open, opened })
  return open
}

const server = useServer({
  suggestions: async ({ thread }) => {
    const first = thread.messages[0]?.content.find((part) => part.type === "text")
    const text = first !== undefined && "text" in first ? String(first.text) : ""
    await gates.get(text)?.opened
    return [{ title: `about ${text}`, detailedSuggestion: `Tell me more about ${text}` }]
  }
})

const mount = () =>
  renderHook(() => ({ suggestions: useTamboSuggestions(), tambo: useTambo() }), {
    wrapper: wrapperFor(connection(server()))
  })

/** Sends `text` on a new thread; resolves once its reply is in. */
const sendOnNewThread = async (result: ReturnType<typeof mount>["result"], text: string) => {
  act(() => {
    result.current.tambo.startNewThread()
  })
  await result.current.tambo.sendMessage(text).thread
}

const titles = (result: ReturnType<typeof mount>["result"]) => result.current.suggestions.suggestions.map((s) => s.title)

/** Until the server was asked to generate for the thread of `text` (its request is in). */
const generationAsked = (count: number) =>
  waitFor(() =>
    expect(server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/suggestions"))).toHaveLength(count)
  )

describe("useTamboSuggestions: what ends after something newer began", () => {
  it("a generation for the thread left, ending after the current one's, does not replace its suggestions", async () => {
    server().setScript([Script.text("A reply")])
    const openA = gate("apples")
    const openB = gate("bananas")
    const { result } = mount()
    await sendOnNewThread(result, "apples")
    await generationAsked(1)
    await sendOnNewThread(result, "bananas")
    await generationAsked(2)
    openB()
    await waitFor(() => expect(titles(result)).toEqual(["about bananas"]))
    openA()
    // What the thread left asked for arrives: the current thread keeps its own.
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(titles(result)).toEqual(["about bananas"])
    expect(result.current.suggestions.isGenerating).toBe(false)
  })

  it("a generation for the thread left, ending first, does not end the current one's isGenerating", async () => {
    server().setScript([Script.text("A reply")])
    const openA = gate("cherries")
    const openB = gate("dates")
    const { result } = mount()
    await sendOnNewThread(result, "cherries")
    await generationAsked(1)
    await sendOnNewThread(result, "dates")
    await generationAsked(2)
    await waitFor(() => expect(result.current.suggestions.isGenerating).toBe(true))
    openA()
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(result.current.suggestions.isGenerating).toBe(true)
    expect(titles(result)).toEqual([])
    openB()
    await waitFor(() => expect(titles(result)).toEqual(["about dates"]))
    expect(result.current.suggestions.isGenerating).toBe(false)
  })

  it("the accept state follows the latest accept, as a mutation's does: an earlier one's end changes nothing", async () => {
    let firstGoesOn!: () => void
    const secondRefused = new Promise<void>((resolve) => (firstGoesOn = resolve))
    // The first accept's run streams until the second accept was refused, however long that took.
    server().setScript((request) =>
      request.text.startsWith("slow") ? [Script.hold(secondRefused), Script.text("done")] : [Script.text("A reply")]
    )
    gate("figs")()
    const { result } = mount()
    await sendOnNewThread(result, "figs")
    await waitFor(() => expect(titles(result)).toEqual(["about figs"]))
    const [suggestion] = result.current.suggestions.suggestions
    let first!: Promise<unknown>
    let second!: Promise<unknown>
    act(() => {
      first = result.current.suggestions.accept({ suggestion: { ...suggestion!, detailedSuggestion: "slow one" }, shouldSubmit: true })
    })
    // The thread has a run: the second is refused at once.
    act(() => {
      second = result.current.suggestions.accept({ suggestion: { ...suggestion!, detailedSuggestion: "slow two" }, shouldSubmit: true })
    })
    await expect(second).rejects.toMatchObject({ _tag: "RunConflictError" })
    await waitFor(() => expect(result.current.suggestions.acceptError).toMatchObject({ _tag: "RunConflictError" }))
    firstGoesOn()
    await first
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(result.current.suggestions).toMatchObject({ isAccepting: false, acceptError: { _tag: "RunConflictError" } })
  })
})

describe("useTamboSuggestions: another client's run", () => {
  it("offers none for the reply another client's run is still writing, as a read of the thread shows it", async () => {
    // The other client's next reply: its text is stored, and the server then holds the run.
    const { other, id, busy } = await otherClientRunning(server(), [Script.text("Still writ")])
    await waitFor(() => expect(server().threads.get(id)?.messages.at(-1)?.content).toMatchObject([{ text: "Still writ" }]))
    const { result } = mount()
    await result.current.tambo.switchThread(id)
    await waitFor(() => expect(result.current.tambo.thread?.thread.status).toBe("streaming"))
    expect(result.current.tambo.messages.at(-1)?.content).toMatchObject([{ text: "Still writ" }])
    await expect(result.current.suggestions.generate()).resolves.toEqual([])

    await other.cancelRun(id)
    await busy.thread.catch(() => undefined)
    await result.current.tambo.client.fetchThread(id)
    await waitFor(() => expect(titles(result)).toEqual(["about one"]))
    await other.destroy()
  })
})
