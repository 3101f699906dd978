// @vitest-environment happy-dom
import { act, renderHook, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import {
  currentPageContextHelper,
  currentTimeContextHelper,
  useTambo,
  useTamboClient,
  useTamboContextAttachment,
  useTamboContextHelpers,
  useTamboInteractable,
  useTamboThreadInput
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

  it("a helper that gives null sends nothing in a run, as getAdditionalContext shows", async () => {
    server().setScript([Script.text("ok")])
    const { result } = renderHook(() => ({ helpers: useTamboContextHelpers(), tambo: useTambo() }), {
      wrapper: wrapperFor(connection(server()))
    })
    act(() => {
      // Untyped code may give null, as upstream's helpers may.
      result.current.helpers.addContextHelper("none", (() => null) as unknown as () => undefined)
      result.current.helpers.addContextHelper("page", () => ({ url: "/orders" }))
    })
    await expect(result.current.helpers.getAdditionalContext()).resolves.toEqual([
      { name: "page", context: { url: "/orders" } }
    ])
    await result.current.tambo.sendMessage("hi").thread
    expect(sentContexts()).toEqual([{ page: { url: "/orders" } }])
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

  it("a message the server refused gives its attachments back with its text: the retry sends them", async () => {
    server().setScript([Script.httpError(500, { message: "boom" })])
    const { result } = renderHook(
      () => ({ attach: useTamboContextAttachment(), input: useTamboThreadInput() }),
      { wrapper: wrapperFor(connection(server())) }
    )
    let attached!: ReturnType<typeof result.current.attach.addContextAttachment>
    act(() => {
      attached = result.current.attach.addContextAttachment({ context: "contents of notes.txt", displayName: "notes.txt" })
      result.current.input.setValue("read this")
    })
    await act(() => expect(result.current.input.submit()).rejects.toMatchObject({ _tag: "ApiError" }))
    await waitFor(() => expect(result.current.input.isPending).toBe(false))
    expect(result.current.input.value).toBe("read this")
    expect(result.current.attach.attachments).toEqual([attached])

    server().setScript([Script.text("ok")])
    await act(() => result.current.input.submit())
    await waitFor(() => expect(result.current.attach.attachments).toEqual([]))
    expect(sentContexts()).toEqual([
      { contextAttachments: [{ id: attached.id, context: "contents of notes.txt", displayName: "notes.txt" }] },
      { contextAttachments: [{ id: attached.id, context: "contents of notes.txt", displayName: "notes.txt" }] }
    ])
  })

  // The same rule whichever way the message goes: the hook's sendMessage, or the client's own run.
  for (
    const [name, sender] of [
      ["a message sendMessage sent", (hooks: { tambo: ReturnType<typeof useTambo> }) => hooks.tambo.sendMessage],
      ["a run of the provider's client's own run", (hooks: { client: ReturnType<typeof useTamboClient> }) => (message: string) => hooks.client.run(message)]
    ] as const
  ) {
    it(`${name} that the server refused gives its attachments and selections back: the next message carries them`, async () => {
      server().setScript([Script.httpError(503, { message: "busy" })])
      const { result } = renderHook(
        () => ({
          attach: useTamboContextAttachment(),
          interactable: useTamboInteractable(),
          tambo: useTambo(),
          client: useTamboClient()
        }),
        { wrapper: wrapperFor(connection(server())) }
      )
      const send = (message: string) => sender(result.current)(message).thread
      let attached!: ReturnType<typeof result.current.attach.addContextAttachment>
      let id = ""
      act(() => {
        attached = result.current.attach.addContextAttachment({ context: "contents of notes.txt", displayName: "notes.txt" })
        id = result.current.interactable.addInteractableComponent({ name: "Counter", description: "A counter", props: { count: 1 } })
        result.current.interactable.setInteractableSelected(id, true)
      })
      await act(() => expect(send("read this")).rejects.toMatchObject({ _tag: "ApiError" }))
      await waitFor(() => expect(result.current.attach.attachments).toEqual([attached]))
      expect(result.current.interactable.getInteractableComponent(id)?.isSelected).toBe(true)

      server().setScript([Script.text("ok")])
      await act(() => send("read this"))
      await waitFor(() => expect(result.current.attach.attachments).toEqual([]))
      expect(result.current.interactable.getInteractableComponent(id)?.isSelected).toBe(false)
      const sent = { id: attached.id, context: "contents of notes.txt", displayName: "notes.txt" }
      expect(sentContexts().map((context) => (context as { contextAttachments?: unknown } | undefined)?.contextAttachments)).toEqual([[sent], [sent]])
    })
  }

  for (
    const [name, sender] of [
      ["a message of sendMessage", (hooks: { tambo: ReturnType<typeof useTambo> }) => hooks.tambo.sendMessage],
      ["a run of the client's own run", (hooks: { client: ReturnType<typeof useTamboClient> }) => (message: string) => hooks.client.run(message)]
    ] as const
  ) {
    it(`${name} stopped before it reached the server gives its attachments back; one that reached it keeps them taken`, async () => {
      let asked!: () => void
      let helperAsked = new Promise<void>((resolve) => (asked = resolve))
      let hold = true
      const { result } = renderHook(() => ({ attach: useTamboContextAttachment(), client: useTamboClient(), tambo: useTambo() }), {
        wrapper: wrapperFor(connection(server(), {
          contextHelpers: {
            // Holds the run while its context is built.
            slow: () => {
              asked()
              return hold ? new Promise<undefined>(() => {}) : undefined
            }
          }
        }))
      })
      const send = (message: string) => sender(result.current)(message)
      let attached!: ReturnType<typeof result.current.attach.addContextAttachment>
      act(() => {
        attached = result.current.attach.addContextAttachment({ context: "first" })
      })
      let stopped!: Promise<unknown>
      act(() => {
        stopped = send("read this").thread.catch((error: Error) => error.name)
      })
      await helperAsked
      await waitFor(() => expect(result.current.attach.attachments).toEqual([]))
      await act(() => result.current.tambo.cancel())
      await expect(stopped).resolves.toBe("AbortError")
      await waitFor(() => expect(result.current.attach.attachments).toEqual([attached]))
      expect(server().requests.filter((request) => request.method === "POST")).toEqual([])

      // Sent, then stopped once the server has the message: the attachments went with it.
      hold = false
      helperAsked = new Promise<void>((resolve) => (asked = resolve))
      server().setScript([Script.text("Thinking"), Script.hang()])
      const sent = send("read this")
      await waitFor(() => expect(result.current.tambo.isStreaming).toBe(true))
      await act(() => result.current.tambo.cancel())
      await expect(sent.thread).rejects.toMatchObject({ _tag: "AbortError" })
      expect(result.current.attach.attachments).toEqual([])
      expect(sentContexts().map((context) => (context as { contextAttachments?: unknown } | undefined)?.contextAttachments)).toEqual([
        [{ id: attached.id, context: "first" }]
      ])
    })
  }

  describe("sendMessage gives a message's attachments back exactly when the message is not in the store after its run", () => {
    const sendWith = async (reply: Script.Script) => {
      server().setScript((request) => request.text === "read this" ? reply : [Script.text("ok")])
      const { result } = renderHook(
        () => ({ attach: useTamboContextAttachment(), tambo: useTambo() }),
        { wrapper: wrapperFor(connection(server())) }
      )
      let attached!: ReturnType<typeof result.current.attach.addContextAttachment>
      act(() => {
        attached = result.current.attach.addContextAttachment({ context: "contents of notes.txt" })
      })
      const failed = await result.current.tambo.sendMessage("read this").thread.catch((error: { readonly _tag?: string }) => error._tag)
      return { result, attached, failed }
    }

    it("refused: they come back, to go with the message sent again", async () => {
      const { result, attached, failed } = await sendWith([Script.httpError(500, { message: "boom" })])
      expect(failed).toBe("ApiError")
      await waitFor(() => expect(result.current.attach.attachments).toEqual([attached]))
      expect(result.current.tambo.messages).toEqual([])
    })

    it("refused: they are back by the time the caller hears of it, so a retry from its handler carries them", async () => {
      server().setScript((request) => request.text === "read this" && sentContexts().length === 1 ? [Script.httpError(500, { message: "boom" })] : [Script.text("ok")])
      const { result } = renderHook(
        () => ({ attach: useTamboContextAttachment(), tambo: useTambo() }),
        { wrapper: wrapperFor(connection(server())) }
      )
      act(() => {
        result.current.attach.addContextAttachment({ context: "contents of notes.txt" })
      })
      const { sendMessage } = result.current.tambo
      await sendMessage("read this").thread.catch(() => sendMessage("read this").thread)
      const attachment = { contextAttachments: [expect.objectContaining({ context: "contents of notes.txt" })] }
      expect(sentContexts()).toEqual([attachment, attachment])
      await waitFor(() => expect(result.current.attach.attachments).toEqual([]))
    })

    it("taken, then failed: they stay gone, as the message is in the thread with them", async () => {
      const { result, failed } = await sendWith([Script.text("Partial"), Script.runError()])
      expect(failed).toBe("ApiError")
      // The message is in the thread: what it took is not given back, so the next message does not carry it again.
      await result.current.tambo.sendMessage("next").thread
      expect(sentContexts()).toEqual([{ contextAttachments: [expect.objectContaining({ context: "contents of notes.txt" })] }, undefined])
      expect(result.current.attach.attachments).toEqual([])
      expect(result.current.tambo.messages.filter((message) => message.role === "user")).toHaveLength(2)
    })
  })

  it("a message a beforeRun refused (nothing sent) gives its attachments back", async () => {
    const { result } = renderHook(
      () => ({ attach: useTamboContextAttachment(), input: useTamboThreadInput() }),
      {
        wrapper: wrapperFor(connection(server(), {
          beforeRun: () => {
            throw new Error("not now")
          }
        }))
      }
    )
    let attached!: ReturnType<typeof result.current.attach.addContextAttachment>
    act(() => {
      attached = result.current.attach.addContextAttachment({ context: "first" })
      result.current.input.setValue("read this")
    })
    await act(() => expect(result.current.input.submit()).rejects.toMatchObject({ _tag: "CallbackError" }))
    expect(server().requests.filter((request) => request.method === "POST")).toEqual([])
    expect(result.current.attach.attachments).toEqual([attached])
  })

  it("of two submits made at once, the one that fails gives back only what its own message took", async () => {
    // The second message is refused; the first, which carried the attachment, is sent.
    server().setScript((request) =>
      JSON.stringify(request.message.content).includes("second")
        ? [Script.httpError(500, { message: "boom" })]
        : [Script.text("ok")]
    )
    const { result } = renderHook(
      () => ({ attach: useTamboContextAttachment(), input: useTamboThreadInput() }),
      { wrapper: wrapperFor(connection(server())) }
    )
    act(() => {
      result.current.attach.addContextAttachment({ context: "contents of notes.txt" })
      result.current.input.setValue("first")
    })
    let first!: Promise<unknown>
    let second!: Promise<unknown>
    act(() => {
      first = result.current.input.submit()
      result.current.input.setValue("second")
      second = result.current.input.submit().catch((error: { readonly _tag?: string }) => error._tag)
    })
    expect(await second).toBe("ApiError")
    await first
    await waitFor(() => expect(result.current.input.isPending).toBe(false))
    expect(result.current.input.value).toBe("second")
    expect(sentContexts()).toContainEqual({ contextAttachments: [expect.objectContaining({ context: "contents of notes.txt" })] })
    expect(result.current.attach.attachments).toEqual([])
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
