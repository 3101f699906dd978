// @vitest-environment happy-dom
import { act, renderHook, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import { messageImages, useMessageImages, useTambo, useTamboThreadInput } from "../src/index.js"
import { connection, useServer, wrapperFor } from "./helpers.js"

const server = useServer()

const useBoth = () => ({ input: useTamboThreadInput(), tambo: useTambo() })

/** A 1×1 PNG's first bytes: what matters is that they come back as they went. */
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])
const PNG_BASE64 = "iVBORw0KGgoAAAAN"
const png = (name: string) => new File([PNG], name, { type: "image/png" })

describe("images in useTamboThreadInput", () => {
  it("stages images, sends them after the text as resource blocks, and drops them once sent", async () => {
    server().setScript([Script.text("Nice")])
    const { result } = renderHook(useBoth, { wrapper: wrapperFor(connection(server())) })
    await act(() => result.current.input.addImage(png("a.png")))
    await act(() => result.current.input.addImages([png("b.png"), new File(["x"], "notes.txt", { type: "text/plain" })]))
    expect(result.current.input.images.map((image) => [image.name, image.type, image.dataUrl])).toEqual([
      ["a.png", "image/png", `data:image/png;base64,${PNG_BASE64}`],
      ["b.png", "image/png", `data:image/png;base64,${PNG_BASE64}`]
    ])
    act(() => result.current.input.removeImage(result.current.input.images[1]!.id))
    expect(result.current.input.images.map((image) => image.name)).toEqual(["a.png"])

    act(() => result.current.input.setValue("What is this?"))
    await act(() => result.current.input.submit())
    await waitFor(() => expect(result.current.input.images).toEqual([]))

    const sent = [
      { type: "text", text: "What is this?" },
      { type: "resource", resource: { name: "a.png", mimeType: "image/png", blob: PNG_BASE64 } }
    ]
    const run = server().requests.find((request) => request.method === "POST" && request.path === "/v1/threads/runs")
    expect((run?.body as { message: { content: unknown } }).message.content).toEqual(sent)
    const user = result.current.tambo.messages[0]!
    expect(user.content).toEqual(sent)
    expect(server().threads.get(result.current.tambo.currentThreadId)!.messages[0]!.content).toEqual(sent)

    const { result: images } = renderHook(() => useMessageImages(user))
    expect(images.current).toEqual([{ src: `data:image/png;base64,${PNG_BASE64}`, name: "a.png", mimeType: "image/png" }])
  })

  it("sends images without text", async () => {
    server().setScript([Script.text("A picture")])
    const { result } = renderHook(useBoth, { wrapper: wrapperFor(connection(server())) })
    await act(() => result.current.input.addImage(png("only.png")))
    await act(() => result.current.input.submit())
    expect(result.current.tambo.messages[0]!.content).toEqual([
      { type: "resource", resource: { name: "only.png", mimeType: "image/png", blob: PNG_BASE64 } }
    ])
  })

  it("refuses files that are not images, and an empty message", async () => {
    const { result } = renderHook(useTamboThreadInput, { wrapper: wrapperFor(connection(server())) })
    await expect(result.current.addImage(new File(["x"], "notes.txt", { type: "text/plain" }))).rejects.toThrow(
      "Only image files can be added"
    )
    await expect(result.current.addImages([new File(["x"], "a.txt", { type: "text/plain" })])).rejects.toThrow(
      "No image files given"
    )
    expect(result.current.images).toEqual([])
    await expect(result.current.submit()).rejects.toThrow("Message cannot be empty")
  })

  it("keeps the images of a failed send, and clearImages drops them", async () => {
    server().setScript([Script.httpError(500, { message: "boom" })])
    const { result } = renderHook(useTamboThreadInput, { wrapper: wrapperFor(connection(server())) })
    await act(() => result.current.addImage(png("kept.png")))
    await act(() => expect(result.current.submit()).rejects.toMatchObject({ _tag: "ApiError" }))
    expect(result.current.images.map((image) => image.name)).toEqual(["kept.png"])
    act(() => result.current.clearImages())
    expect(result.current.images).toEqual([])
  })

  it("a message sent while an earlier one is pending does not carry the earlier one's images, even on another thread", async () => {
    let firstEnds!: () => void
    const secondSent = new Promise<void>((resolve) => (firstEnds = resolve))
    // The first run streams until the second message was sent, however long that took.
    server().setScript((request) =>
      request.text === "first" ? [Script.text("re: first"), Script.hold(secondSent)] : [Script.text(`re: ${request.text}`)]
    )
    const { result } = renderHook(useBoth, { wrapper: wrapperFor(connection(server())) })
    await act(() => result.current.input.addImage(png("a.png")))
    act(() => result.current.input.setValue("first"))
    let first!: Promise<{ readonly threadId: string }>
    act(() => {
      first = result.current.input.submit()
    })
    await waitFor(() => expect(result.current.tambo.currentThreadId).toMatch(/^thr_/))
    // Shown until the run that sends them ended.
    expect(result.current.input.images.map((image) => image.name)).toEqual(["a.png"])
    act(() => void result.current.tambo.startNewThread())
    act(() => result.current.input.setValue("second"))
    const { threadId } = await act(() => result.current.input.submit())
    firstEnds()
    const firstThread = (await first).threadId
    expect(threadId).not.toBe(firstThread)
    expect(server().threads.get(threadId)!.messages[0]!.content).toEqual([{ type: "text", text: "second" }])
    expect(server().threads.get(firstThread)!.messages[0]!.content).toEqual([
      { type: "text", text: "first" },
      { type: "resource", resource: { name: "a.png", mimeType: "image/png", blob: PNG_BASE64 } }
    ])
    await waitFor(() => expect(result.current.input.images).toEqual([]))
  })
})

describe("messageImages", () => {
  it("reads image resources, with data or a URL, and nothing else", () => {
    expect(messageImages({
      content: [
        { type: "text", text: "hi" },
        { type: "resource", resource: { mimeType: "image/jpeg", blob: "AAAA", name: "x.jpg" } },
        { type: "resource", resource: { mimeType: "image/*", uri: "https://example.com/cat.png" } },
        { type: "resource", resource: { mimeType: "application/pdf", blob: "AAAA" } },
        { type: "resource", resource: { mimeType: "image/png" } }
      ]
    })).toEqual([
      { src: "data:image/jpeg;base64,AAAA", name: "x.jpg", mimeType: "image/jpeg" },
      { src: "https://example.com/cat.png", name: undefined, mimeType: "image/*" }
    ])
  })
})
