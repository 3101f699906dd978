// @vitest-environment happy-dom
import { act, renderHook, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import {
  currentPageContextHelper,
  currentTimeContextHelper,
  useTambo,
  useTamboContextAttachment,
  useTamboContextHelpers
} from "../src/index.js"
import { connection, useServer, wrapperFor } from "./helpers.js"

const server = useServer()

/** The `additionalContext` of every run request, in order. */
const sentContexts = () =>
  server().requests
    .filter((request) => request.method === "POST" && /\/runs$/.test(request.path))
    .map((request) => (request.body as { message: { additionalContext?: unknown } }).message.additionalContext)

describe("useTamboContextHelpers", () => {
  it("adds and removes helpers at runtime, next to the provider's", async () => {
    server().setScript([Script.text("ok")])
    const page = () => ({ url: "/orders" })
    const { result } = renderHook(() => ({ helpers: useTamboContextHelpers(), tambo: useTambo() }), {
      wrapper: wrapperFor(connection(server(), { contextHelpers: { page } }))
    })
    const order = () => ({ id: 7 })
    act(() => result.current.helpers.addContextHelper("order", order))
    expect(result.current.helpers.getContextHelpers()).toEqual({ page, order })
    await expect(result.current.helpers.getAdditionalContext()).resolves.toEqual([
      { name: "page", context: { url: "/orders" } },
      { name: "order", context: { id: 7 } }
    ])
    await result.current.tambo.sendMessage("first").thread

    act(() => result.current.helpers.removeContextHelper("order"))
    await result.current.tambo.sendMessage("second").thread
    expect(sentContexts()).toEqual([{ page: { url: "/orders" }, order: { id: 7 } }, { page: { url: "/orders" } }])
  })

  it("leaves out what gives nothing or fails, in getAdditionalContext", async () => {
    const { result } = renderHook(useTamboContextHelpers, { wrapper: wrapperFor(connection(server())) })
    act(() => {
      result.current.addContextHelper("nothing", () => undefined)
      result.current.addContextHelper("broken", () => {
        throw new Error("no")
      })
      result.current.addContextHelper("later", async () => ({ ready: true }))
    })
    await expect(result.current.getAdditionalContext()).resolves.toEqual([{ name: "later", context: { ready: true } }])
  })
})

describe("useTamboContextAttachment", () => {
  it("sends the attachments with the next message only, as contextAttachments", async () => {
    server().setScript([Script.text("ok")])
    const { result } = renderHook(
      () => ({ attach: useTamboContextAttachment(), helpers: useTamboContextHelpers(), tambo: useTambo() }),
      { wrapper: wrapperFor(connection(server())) }
    )
    let first!: ReturnType<typeof result.current.attach.addContextAttachment>
    act(() => {
      first = result.current.attach.addContextAttachment({ context: "contents of notes.txt", displayName: "notes.txt", type: "file" })
      result.current.attach.addContextAttachment({ context: "dropped" })
    })
    const dropped = result.current.attach.attachments[1]!
    act(() => result.current.attach.removeContextAttachment(dropped.id))
    expect(result.current.attach.attachments).toEqual([first])
    // Shown, not taken.
    await expect(result.current.helpers.getAdditionalContext()).resolves.toEqual([
      { name: "contextAttachments", context: [first] }
    ])
    expect(result.current.attach.attachments).toEqual([first])

    await result.current.tambo.sendMessage("read this").thread
    await waitFor(() => expect(result.current.attach.attachments).toEqual([]))
    await result.current.tambo.sendMessage("and now?").thread
    expect(sentContexts()).toEqual([
      { contextAttachments: [{ id: first.id, context: "contents of notes.txt", displayName: "notes.txt", type: "file" }] },
      undefined
    ])
  })

  it("clearContextAttachments drops them all", () => {
    const { result } = renderHook(useTamboContextAttachment, { wrapper: wrapperFor(connection(server())) })
    act(() => {
      result.current.addContextAttachment({ context: "a" })
      result.current.addContextAttachment({ context: "b" })
    })
    expect(result.current.attachments).toHaveLength(2)
    act(() => result.current.clearContextAttachments())
    expect(result.current.attachments).toEqual([])
  })
})

describe("built-in context helpers", () => {
  it("send the page and the time under the names they are registered with", async () => {
    server().setScript([Script.text("ok")])
    document.title = "Orders"
    const { result } = renderHook(useTambo, {
      wrapper: wrapperFor(connection(server(), {
        contextHelpers: { userPage: currentPageContextHelper, userTime: currentTimeContextHelper }
      }))
    })
    await result.current.sendMessage("where am I?").thread
    const [context] = sentContexts() as Array<{ userPage: unknown; userTime: { timestamp: string } }>
    expect(context!.userPage).toEqual({ url: window.location.href, title: "Orders" })
    expect(Number.isNaN(Date.parse(context!.userTime.timestamp))).toBe(false)
  })
})
