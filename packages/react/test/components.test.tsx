// @vitest-environment happy-dom
import { render, renderHook, screen, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import * as Schema from "effect/Schema"
import { z } from "zod"
import type { ReactNode } from "react"
import { describe, expect, it, vi } from "vitest"
import {
  ComponentRenderer,
  type StreamStatus,
  type TamboComponent,
  type TamboComponentContent,
  type TamboCurrentComponent,
  useTambo,
  useTamboCurrentComponent,
  useTamboCurrentMessage,
  useTamboStreamStatus
} from "../src/index.js"
import { connection, useServer, wrapperFor } from "./helpers.js"

const server = useServer()

interface CardProps {
  readonly title?: string
  readonly body?: string
}

/** Renders every component block of the current thread. */
const Blocks = ({ fallback }: { readonly fallback?: ReactNode }) => {
  const { currentThreadId, messages } = useTambo()
  return (
    <>
      {messages.flatMap((message) =>
        message.content.flatMap((block) =>
          block.type === "component"
            ? [
              <div key={block.id} data-testid={`block-${block.name}`}>
                {block.renderedComponent ?? (
                  <ComponentRenderer
                    content={block}
                    threadId={currentThreadId}
                    messageId={message.id}
                    fallback={fallback}
                  />
                )}
              </div>
            ]
            : []
        )
      )}
    </>
  )
}

const mount = (components: ReadonlyArray<TamboComponent>, fallback?: ReactNode) =>
  renderHook(() => useTambo(), {
    wrapper: ({ children }) => {
      const Wrapper = wrapperFor(connection(server(), { components }))
      return (
        <Wrapper>
          <Blocks fallback={fallback} />
          {children}
        </Wrapper>
      )
    }
  })

describe("rendered components", () => {
  it("know their message and themselves", async () => {
    server().setScript([Script.text("Here:"), Script.component("Card", [{ title: "Hi" }, { title: "Hi", body: "there" }])])
    const seen: Array<{ readonly message: string; readonly component: TamboCurrentComponent | null }> = []
    const Card: TamboComponent<CardProps> = {
      name: "Card",
      description: "A card",
      propsSchema: { type: "object", properties: { title: { type: "string" }, body: { type: "string" } } },
      component: ({ body, title }) => {
        const message = useTamboCurrentMessage()
        const component = useTamboCurrentComponent()
        seen.push({ message: message.id, component })
        return <p>{title} {body}</p>
      }
    }
    const { result } = mount([Card])
    await result.current.sendMessage("Show a card").thread
    await waitFor(() => expect(screen.getByTestId("block-Card").textContent).toBe("Hi there"))
    const reply = result.current.messages.at(-1)!
    const last = seen.at(-1)!
    expect(last.message).toBe(reply.id)
    expect(last.component).toMatchObject({
      componentName: "Card",
      props: { title: "Hi", body: "there" },
      streamingState: "done",
      messageId: reply.id,
      threadId: result.current.currentThreadId
    })
    expect(last.component?.componentId).toBe((reply.content[1] as TamboComponentContent).id)
  })

  it("report the streaming status of their props", async () => {
    server().setScript([
      Script.pace(25),
      Script.component("Card", [{ title: "A" }, { title: "A long" }, { title: "A long title", body: "B" }, { title: "A long title", body: "Body" }])
    ])
    const statuses: Array<{ readonly stream: StreamStatus; readonly title?: string; readonly body?: string }> = []
    const describeProp = (status: { isPending: boolean; isStreaming: boolean; isSuccess: boolean } | undefined) =>
      status === undefined ? undefined : status.isSuccess ? "success" : status.isStreaming ? "streaming" : "pending"
    const Card: TamboComponent<CardProps> = {
      name: "Card",
      description: "A card",
      propsSchema: { type: "object", properties: { title: { type: "string" }, body: { type: "string" } } },
      component: () => {
        const { propStatus, streamStatus } = useTamboStreamStatus<CardProps>()
        const title = describeProp(propStatus.title)
        const body = describeProp(propStatus.body)
        statuses.push({ stream: streamStatus, ...(title === undefined ? {} : { title }), ...(body === undefined ? {} : { body }) })
        return null
      }
    }
    const { result } = mount([Card])
    await result.current.sendMessage("Show a card").thread
    await waitFor(() => expect(statuses.at(-1)?.stream.isSuccess).toBe(true))
    const phases = statuses.map(({ body, stream, title }) =>
      `${stream.isPending ? "pending" : stream.isStreaming ? "streaming" : stream.isSuccess ? "success" : "?"}:${title ?? "-"}/${body ?? "-"}`
    )
    // In order, without repeats: the title streams, completes when the body starts, and all is done at the end.
    const distinct = phases.filter((phase, index) => phase !== phases[index - 1])
    expect(distinct).toContain("streaming:streaming/-")
    expect(distinct).toContain("streaming:success/streaming")
    expect(distinct.at(-1)).toBe("success:success/success")
    expect(distinct.indexOf("streaming:streaming/-")).toBeLessThan(distinct.indexOf("streaming:success/streaming"))
    expect(statuses.at(-1)?.stream).toMatchObject({ isError: false, isPending: false, isStreaming: false })
  })

  it("settle when the run is cancelled while their props stream", async () => {
    // A component that starts, gets half its props, and never ends.
    const custom = (name: string, value: Record<string, unknown>) => Script.event({ type: "CUSTOM", name, value })
    server().setScript([
      custom("tambo.component.start", { messageId: "msg_partial", componentId: "comp_partial", componentName: "Card" }),
      custom("tambo.component.props_delta", { componentId: "comp_partial", operations: [{ op: "add", path: "/title", value: "Half" }] }),
      Script.hang()
    ])
    let last: StreamStatus | undefined
    const Card: TamboComponent<CardProps> = {
      name: "Card",
      description: "A card",
      propsSchema: { type: "object", properties: { title: { type: "string" } } },
      component: () => {
        last = useTamboStreamStatus().streamStatus
        return null
      }
    }
    const { result } = mount([Card])
    result.current.sendMessage("Show a card").thread.catch(() => undefined)
    await waitFor(() => expect(last?.isStreaming).toBe(true))
    await result.current.cancel()
    // The client closes the components a cancelled run left open: they settle with the props they got.
    await waitFor(() => expect(last?.isStreaming).toBe(false))
    expect(last).toMatchObject({ isPending: false, isSuccess: true })
    expect(result.current.thread?.thread.lastRunCancelled).toBe(true)
  })

  it("one that throws while rendering shows nothing, the rest of the thread renders, and it renders again once its block changed", async () => {
    // React reports what a boundary caught on the console; that is expected here.
    const quiet = vi.spyOn(console, "error").mockImplementation(() => {})
    try {
      const custom = (name: string, value: Record<string, unknown>) => Script.event({ type: "CUSTOM", name, value })
      server().setScript([
        Script.text("Here:"),
        custom("tambo.component.start", { messageId: "msg_card", componentId: "comp_card", componentName: "Card" }),
        custom("tambo.component.props_delta", { componentId: "comp_card", operations: [{ op: "add", path: "/title", value: "Half" }] }),
        Script.hang()
      ])
      // Written for complete props only: it throws on the partial ones.
      const Card: TamboComponent<CardProps> = {
        name: "Card",
        description: "A card",
        propsSchema: { type: "object", properties: { title: { type: "string" } } },
        component: ({ title }) => {
          if (useTamboStreamStatus().streamStatus.isStreaming) throw new Error("not a whole card yet")
          return <b>{title}</b>
        }
      }
      const Texts = () => {
        const { messages } = useTambo()
        return <p data-testid="texts">{messages.flatMap((m) => m.content.flatMap((b) => (b.type === "text" ? [b.text] : []))).join(" ")}</p>
      }
      const { result } = renderHook(() => useTambo(), {
        wrapper: ({ children }) => {
          const Wrapper = wrapperFor(connection(server(), { components: [Card] }))
          return (
            <Wrapper>
              <Texts />
              <Blocks />
              {children}
            </Wrapper>
          )
        }
      })
      result.current.sendMessage("Show a card").thread.catch(() => undefined)
      await waitFor(() => expect(result.current.messages.at(-1)?.content.some((b) => b.type === "component")).toBe(true))
      await waitFor(() => expect(screen.getByTestId("texts").textContent).toBe("Show a card Here:"))
      expect(screen.getByTestId("block-Card").textContent).toBe("")
      await result.current.cancel()
      // The cancelled run's block settles with the props it got: a new version, rendered again.
      await waitFor(() => expect(screen.getByTestId("block-Card").textContent).toBe("Half"))
      expect(screen.getByTestId("texts").textContent).toBe("Show a card Here:")
    } finally {
      quiet.mockRestore()
    }
  })

  it("receive their props decoded by an Effect Schema once complete", async () => {
    server().setScript([Script.component("Stamp", [{ at: "2024-05-01T10:00:00.000Z", label: "x" }])])
    const Stamp: TamboComponent<{ readonly at: Date; readonly label: string }> = {
      name: "Stamp",
      description: "A date",
      propsSchema: Schema.Struct({ at: Schema.Date, label: Schema.String }),
      component: ({ at, label }) => <time>{label}:{at instanceof Date ? at.getUTCFullYear() : "not a date"}</time>
    }
    const { result } = mount([Stamp])
    await result.current.sendMessage("Stamp it").thread
    await waitFor(() => expect(screen.getByTestId("block-Stamp").textContent).toBe("x:2024"))
  })

  it("accept a Standard Schema (Zod 4): sent as JSON Schema, props decoded once complete", async () => {
    server().setScript([Script.component("Price", [{ amount: "12.5" }, { amount: "12.5", currency: "eur" }])])
    const Price: TamboComponent<{ readonly amount: number; readonly currency: string }> = {
      name: "Price",
      description: "A price",
      propsSchema: z.object({ amount: z.coerce.number(), currency: z.string().transform((c) => c.toUpperCase()) }),
      component: ({ amount, currency }) => <span>{typeof amount === "number" ? amount.toFixed(2) : "?"} {currency}</span>
    }
    const { result } = mount([Price])
    await result.current.sendMessage("Price it").thread
    await waitFor(() => expect(screen.getByTestId("block-Price").textContent).toBe("12.50 EUR"))
    const run = server().requests.find((request) => request.method === "POST" && request.path.endsWith("/runs"))
    expect((run?.body as { availableComponents: Array<unknown> }).availableComponents).toEqual([
      expect.objectContaining({
        name: "Price",
        propsSchema: expect.objectContaining({ type: "object", properties: expect.objectContaining({ amount: expect.anything() }) })
      })
    ])
  })

  it("receive their props as their schema wrote them: the nulls of the API's strict mode left out, defaults in", async () => {
    server().setScript((request) => {
      const declared = request.availableComponents.find((component) => component.name === "Note")!.propsSchema
      const sent = Script.strictArgs(declared, { title: "Hi" }) as Record<string, unknown>
      // What the model sends in strict mode: every prop, null where it means none.
      expect(sent).toEqual({ title: "Hi", subtitle: null, tone: null })
      // Paced: each step of the props renders on its own, however loaded the machine.
      return [Script.pace(20), Script.component("Note", [{ title: "Hi" }, { title: "Hi", subtitle: null }, sent])]
    })
    const received: Array<Record<string, unknown>> = []
    const Note: TamboComponent<{ readonly title: string; readonly subtitle?: string; readonly tone: "calm" | "loud" }> = {
      name: "Note",
      description: "A note",
      propsSchema: z.object({
        title: z.string(),
        subtitle: z.string().optional(),
        tone: z.enum(["calm", "loud"]).default("calm")
      }),
      component: (props) => {
        received.push({ ...props })
        return <p>{props.title}|{props.subtitle ?? "none"}|{props.tone ?? "?"}</p>
      }
    }
    const { result } = mount([Note])
    await result.current.sendMessage("Note it").thread
    await waitFor(() => expect(screen.getByTestId("block-Note").textContent).toBe("Hi|none|calm"))
    expect(received.length).toBeGreaterThan(1)
    for (const props of received) expect(Object.values(props)).not.toContain(null)
    expect(received.at(-1)).toEqual({ title: "Hi", tone: "calm" })
    // The store keeps what the server sent.
    const block = result.current.messages.at(-1)!.content.find((b) => b.type === "component")
    expect(block?.type === "component" && block.props).toEqual({ title: "Hi", subtitle: null, tone: null })
  })

  it("render nothing, or a fallback, for a name nobody registered", async () => {
    server().setScript([Script.component("Unknown", [{ a: 1 }])])
    const { result } = mount([], <em>unknown component</em>)
    await result.current.sendMessage("Surprise me").thread
    await waitFor(() => expect(screen.getByTestId("block-Unknown").textContent).toBe("unknown component"))
    const block = result.current.messages.at(-1)!.content.find((b) => b.type === "component")
    expect(block).toMatchObject({ renderedComponent: null })
  })

  it("re-render only when their own block changed", async () => {
    server().setScript([
      Script.text("Intro"),
      Script.component("Card", [{ title: "Fixed" }]),
      Script.pace(10),
      Script.text([" and", " more", " text", " after", " the", " card"])
    ])
    let renders = 0
    const Card: TamboComponent<CardProps> = {
      name: "Card",
      description: "A card",
      propsSchema: { type: "object", properties: { title: { type: "string" } } },
      component: ({ title }) => {
        renders++
        return <b>{title}</b>
      }
    }
    const { result } = mount([Card])
    await result.current.sendMessage("Card then text").thread
    await waitFor(() => expect(result.current.isIdle).toBe(true))
    const reply = result.current.messages.at(-1)!
    // Once the run ended the message is as the server stored it: its text in one block, first.
    expect(reply.content.map((block) => block.type)).toEqual(["text", "component"])
    expect(reply.content[0]).toEqual({ type: "text", text: "Intro and more text after the card" })
    // Rendered while its props arrived, not again for the six text deltas that followed in its message.
    expect(renders).toBeLessThanOrEqual(3)
  })

  it("tell hooks used outside a rendered component", () => {
    expect(() => renderHook(() => useTamboCurrentMessage(), { wrapper: wrapperFor(connection(server())) })).toThrow(
      /inside a component rendered by Tambo/
    )
    const { result } = renderHook(() => useTamboCurrentComponent(), { wrapper: wrapperFor(connection(server())) })
    expect(result.current).toBeNull()
    expect(() => render(<ComponentRenderer content={{ type: "component", id: "c", name: "x", props: {} }} threadId="t" messageId="m" />))
      .toThrow(/inside a <TamboProvider>/)
  })
})
