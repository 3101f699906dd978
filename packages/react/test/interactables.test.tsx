// @vitest-environment happy-dom
import { act, fireEvent, render, renderHook, screen, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { useState } from "react"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import {
  TamboProvider,
  ToolDefinitionError,
  useCurrentInteractablesSnapshot,
  useTambo,
  useTamboCurrentComponent,
  useTamboComponentState,
  useTamboContextHelpers,
  useTamboCurrentMessage,
  useTamboInteractable,
  useTamboThreadInput,
  withTamboInteractable
} from "../src/index.js"
import { connection, useServer, wrapperFor } from "./helpers.js"

const server = useServer()

interface RunBody {
  readonly message: {
    readonly content: ReadonlyArray<{ type: string; isError?: boolean; content?: ReadonlyArray<{ text: string }> }>
    readonly additionalContext?: { readonly interactables?: { readonly components: ReadonlyArray<Record<string, unknown>> } }
  }
  readonly tools?: ReadonlyArray<{ name: string; inputSchema: Record<string, any> }>
}

const runBodies = () =>
  server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs")).map((r) => r.body as RunBody)

function NoteView({ text, onEdit }: { readonly text: string; readonly onEdit?: (text: string) => void }) {
  const current = useTamboCurrentComponent()
  return (
    <textarea
      data-testid="note"
      data-component-id={current?.componentId}
      value={text}
      onChange={(event) => onEdit?.(event.target.value)}
    />
  )
}

const Note = withTamboInteractable(NoteView, {
  componentName: "Note",
  description: "A note the user is writing",
  propsSchema: z.object({ text: z.string() }),
  stateSchema: z.object({ pinned: z.boolean() })
})

/** A page whose note's text lives in the parent: the user's edits and the model's land there. */
function Page({ initial = "first draft", show = true }: { readonly initial?: string; readonly show?: boolean }) {
  const [text, setText] = useState(initial)
  const [updates, setUpdates] = useState(0)
  return (
    <>
      {show && (
        <Note
          interactableId="Note-1"
          text={text}
          onEdit={setText}
          onPropsUpdate={(props) => {
            setText(String(props["text"]))
            setUpdates((n) => n + 1)
          }}
        />
      )}
      <output data-testid="parent-text">{text}</output>
      <output data-testid="updates">{updates}</output>
    </>
  )
}

const noteValue = () => (screen.getByTestId("note") as HTMLTextAreaElement).value

/** Renders the page with `useTambo` alongside, to send messages. */
const renderPage = (page = <Page />) =>
  renderHook(() => useTambo(), {
    wrapper: ({ children }) => {
      const Wrapper = wrapperFor(connection(server()))
      return <Wrapper>{page}{children}</Wrapper>
    }
  })

describe("withTamboInteractable", () => {
  it("registers the note's tools and tells the model about it with every message", async () => {
    server().setScript([Script.text("ok")])
    const { result } = renderPage()
    await waitFor(() => expect(screen.getByTestId("note").dataset["componentId"]).toBe("Note-1"))
    await result.current.sendMessage("What does my note say?").thread

    const [body] = runBodies()
    expect(body!.tools!.map((tool) => tool.name).sort()).toEqual([
      "get_all_interactable_components",
      "get_interactable_component_by_id",
      "remove_interactable_component",
      "update_component_props_Note-1",
      "update_component_state_Note-1"
    ])
    const propsTool = body!.tools!.find((tool) => tool.name === "update_component_props_Note-1")!
    expect(propsTool.inputSchema).toMatchObject({
      type: "object",
      properties: { componentId: { type: "string" }, newProps: { type: "object", properties: { text: { type: "string" } } } },
      required: ["componentId", "newProps"]
    })
    // Partial: no prop of the note is required in an update.
    expect(propsTool.inputSchema["properties"].newProps.required).toBeUndefined()
    expect(body!.message.additionalContext?.interactables).toEqual({
      components: [{
        id: "Note-1",
        componentName: "Note",
        description: "A note the user is writing",
        props: { text: "first draft" },
        propsSchema: "Available: change it with update_component_props_Note-1",
        state: {},
        isSelected: false,
        stateSchema: "Available: change it with update_component_state_Note-1"
      }]
    })
  })

  it("the model rewrites the note: it re-renders with the new props, and the parent hears of it", async () => {
    server().setScript((request) =>
      request.toolResults.length > 0
        ? [Script.text(`Done: ${request.toolResults[0]!.text}`)]
        : [Script.toolCall("update_component_props_Note-1", { componentId: "Note-1", newProps: { text: "rewritten" } })]
    )
    const { result } = renderPage()
    await waitFor(() => expect(noteValue()).toBe("first draft"))
    await result.current.sendMessage("Rewrite my note").thread
    await waitFor(() => expect(noteValue()).toBe("rewritten"))
    expect(screen.getByTestId("parent-text").textContent).toBe("rewritten")
    expect(screen.getByTestId("updates").textContent).toBe("1")
    const result0 = runBodies()[1]!.message.content[0]!
    expect(result0.isError).toBeUndefined()
    expect(result0.content![0]!.text).toBe("Updated successfully")
  })

  it("props that do not match the schema, or another component's id, change nothing and tell the model why", async () => {
    server().setScript((request) =>
      request.toolResults.length > 0
        ? [Script.text("noted")]
        : [
          Script.toolCall("update_component_props_Note-1", { componentId: "Note-1", newProps: { text: 42 } }),
          Script.toolCall("update_component_props_Note-1", { componentId: "Note-2", newProps: { text: "x" } }, {
            id: "call_1"
          })
        ]
    )
    const { result } = renderPage()
    await waitFor(() => expect(noteValue()).toBe("first draft"))
    await result.current.sendMessage("Break my note").thread
    const [invalid, elsewhere] = runBodies()[1]!.message.content
    expect(invalid!.isError).toBe(true)
    expect(invalid!.content![0]!.text).toMatch(/newProps\.text/)
    expect(elsewhere!.isError).toBe(true)
    expect(elsewhere!.content![0]!.text).toContain("Note-2")
    expect(noteValue()).toBe("first draft")
    expect(screen.getByTestId("updates").textContent).toBe("0")
  })

  it("the user's edit is what the model reads next", async () => {
    server().setScript([Script.text("ok")])
    const { result } = renderPage()
    await waitFor(() => expect(noteValue()).toBe("first draft"))
    fireEvent.change(screen.getByTestId("note"), { target: { value: "edited by hand" } })
    await waitFor(() => expect(noteValue()).toBe("edited by hand"))
    await result.current.sendMessage("And now?").thread
    expect(runBodies()[0]!.message.additionalContext?.interactables?.components[0]!["props"]).toEqual({
      text: "edited by hand"
    })
  })

  it("useTamboComponentState in an interactable is its state on the page: the model reads it and its tool sets it", async () => {
    function PinView({ label }: { readonly label: string }) {
      const [pinned, setPinned, { isPending }] = useTamboComponentState("pinned", false)
      return (
        <button data-testid="pin" aria-pressed={pinned} data-pending={isPending} onClick={() => setPinned((p) => !p)}>
          {label}
        </button>
      )
    }
    const Pin = withTamboInteractable(PinView, {
      componentName: "Pin",
      description: "A pin",
      propsSchema: z.object({ label: z.string() }),
      stateSchema: z.object({ pinned: z.boolean() })
    })
    const pressed = () => screen.getByTestId("pin").getAttribute("aria-pressed")
    const stateSent = (index: number) =>
      runBodies()[index]!.message.additionalContext?.interactables?.components[0]!["state"]
    server().setScript((request, context) =>
      context.threadRunIndex === 0
        ? [Script.text("seen")]
        : request.toolResults.length > 0
        ? [Script.text("unpinned")]
        : [Script.toolCall("update_component_state_Pin-1", { componentId: "Pin-1", newState: { pinned: false } })]
    )
    const { result } = renderPage(<Pin interactableId="Pin-1" label="pin me" />)
    await waitFor(() => expect(pressed()).toBe("false"))
    // The initial value is on the page from the start; the user's change at once, with no server call.
    await result.current.sendMessage("What is pinned?").thread
    expect(stateSent(0)).toEqual({ pinned: false })
    fireEvent.click(screen.getByTestId("pin"))
    expect(pressed()).toBe("true")
    expect(screen.getByTestId("pin").getAttribute("data-pending")).toBe("false")
    await result.current.sendMessage("Unpin it").thread
    expect(stateSent(1)).toEqual({ pinned: true })
    await waitFor(() => expect(pressed()).toBe("false"))
    expect(server().requests.some((r) => r.path.includes("/components/"))).toBe(false)
  })

  it("the model lists, reads and removes interactables with the tools over all of them", async () => {
    server().setScript((request, context) =>
      context.threadRunIndex > 0
        ? [Script.text("ok")]
        : request.toolResults.length > 0
        ? [Script.text("done")]
        : [
          Script.toolCall("get_all_interactable_components", {}, { id: "call_a" }),
          Script.toolCall("get_interactable_component_by_id", { componentId: "Note-1" }, { id: "call_b" }),
          Script.toolCall("get_interactable_component_by_id", { componentId: "Nope" }, { id: "call_c" }),
          Script.toolCall("remove_interactable_component", { componentId: "Note-1" }, { id: "call_d" })
        ]
    )
    const { result } = renderPage()
    await waitFor(() => expect(noteValue()).toBe("first draft"))
    const thread = await result.current.sendMessage("What is on the page?").thread
    const [all, one, none, removed] = runBodies()[1]!.message.content.map((block) => JSON.parse(block.content![0]!.text))
    const note = { id: "Note-1", componentName: "Note", description: "A note the user is writing", props: { text: "first draft" }, state: {} }
    expect(all).toEqual({ components: [note] })
    expect(one).toEqual({ success: true, component: note })
    expect(none).toMatchObject({ success: false })
    expect(removed).toEqual({ success: true, componentId: "Note-1", removedComponent: note })
    // Still on the page, no longer interactable: the next message carries neither its tools nor its context.
    expect(noteValue()).toBe("first draft")
    await result.current.sendMessage("And now?", { threadId: thread.id }).thread
    const next = runBodies()[2]!
    expect(next.tools).toBeUndefined()
    expect(next.message.additionalContext?.interactables).toBeUndefined()
  })

  it("the model changes the state; useTamboInteractable shows it", async () => {
    server().setScript((request) =>
      request.toolResults.length > 0
        ? [Script.text("pinned")]
        : [Script.toolCall("update_component_state_Note-1", { componentId: "Note-1", newState: { pinned: true } })]
    )
    let seen: ReturnType<typeof useTamboInteractable> | undefined
    const Probe = () => {
      seen = useTamboInteractable()
      return null
    }
    const { result } = renderPage(<><Page /><Probe /></>)
    await waitFor(() => expect(seen?.interactableComponents.length).toBe(1))
    await result.current.sendMessage("Pin it").thread
    await waitFor(() => expect(seen?.getInteractableComponentState("Note-1")).toEqual({ pinned: true }))
    expect(seen?.interactableComponents[0]?.state).toEqual({ pinned: true })
  })

  it("inside, useTamboCurrentMessage gives a message of its own, holding only the component", async () => {
    const Badge = withTamboInteractable(({ label }: { readonly label: string }) => {
      const message = useTamboCurrentMessage()
      const block = message.content[0]
      return <span data-testid="badge">{`${message.id} ${block?.type === "component" ? block.name : ""} ${label}`}</span>
    }, { componentName: "Badge", description: "A badge" })
    render(<TamboProvider {...connection(server())}><Badge interactableId="Badge-1" label="new" /></TamboProvider>)
    await waitFor(() => expect(screen.getByTestId("badge").textContent).toBe("Badge-1 Badge new"))
  })

  it("unmounting withdraws the tools and the context", async () => {
    server().setScript([Script.text("ok")])
    const Toggle = () => {
      const [show, setShow] = useState(true)
      return (
        <>
          <button data-testid="hide" onClick={() => setShow(false)} />
          <Page show={show} />
        </>
      )
    }
    const { result } = renderPage(<Toggle />)
    await waitFor(() => expect(noteValue()).toBe("first draft"))
    fireEvent.click(screen.getByTestId("hide"))
    await waitFor(() => expect(screen.queryByTestId("note")).toBeNull())
    await result.current.sendMessage("Anything there?").thread
    const [body] = runBodies()
    expect(body!.tools).toBeUndefined()
    expect(body!.message.additionalContext?.interactables).toBeUndefined()
  })
})

describe("useTamboInteractable", () => {
  it("adds, selects for one message, and removes a component by hand", async () => {
    server().setScript([Script.text("ok")])
    const { result } = renderHook(() => ({ interactable: useTamboInteractable(), tambo: useTambo() }), {
      wrapper: wrapperFor(connection(server()))
    })
    let id = ""
    act(() => {
      id = result.current.interactable.addInteractableComponent({
        name: "Counter",
        description: "A counter",
        props: { count: 1, onClick: () => undefined }
      })
    })
    expect(id).toMatch(/^Counter-[a-z0-9]+$/)
    // Functions are not data: not stored.
    expect(result.current.interactable.getInteractableComponent(id)?.props).toEqual({ count: 1 })
    act(() => result.current.interactable.setInteractableSelected(id, true))
    await result.current.tambo.sendMessage("this one").thread
    await result.current.tambo.sendMessage("and again").thread
    const [first, second] = runBodies()
    expect(first!.message.additionalContext?.interactables?.components[0]!["isSelected"]).toBe(true)
    expect(second!.message.additionalContext?.interactables?.components[0]!["isSelected"]).toBe(false)
    expect(result.current.interactable.getInteractableComponentsByName("Counter").map((c) => c.id)).toEqual([id])

    act(() => result.current.interactable.removeInteractableComponent(id))
    expect(result.current.interactable.interactableComponents).toEqual([])
  })

  it("a selection is shown by getAdditionalContext, not taken: the next message still carries it", async () => {
    server().setScript([Script.text("ok")])
    const { result } = renderHook(
      () => ({ interactable: useTamboInteractable(), helpers: useTamboContextHelpers(), tambo: useTambo() }),
      { wrapper: wrapperFor(connection(server())) }
    )
    let id = ""
    act(() => {
      id = result.current.interactable.addInteractableComponent({ name: "Counter", description: "A counter", props: { count: 1 } })
    })
    act(() => result.current.interactable.setInteractableSelected(id, true))
    const shown = await result.current.helpers.getAdditionalContext()
    expect(shown).toEqual([{ name: "interactables", context: { components: [expect.objectContaining({ id, isSelected: true })] } }])
    expect(result.current.interactable.getInteractableComponent(id)?.isSelected).toBe(true)
    await result.current.tambo.sendMessage("this one").thread
    expect(runBodies()[0]!.message.additionalContext?.interactables?.components[0]!["isSelected"]).toBe(true)
  })

  it("a message the server refused gives its selections back with its text: the retry still carries them", async () => {
    server().setScript([Script.httpError(503, { message: "busy" })])
    const { result } = renderHook(() => ({ interactable: useTamboInteractable(), input: useTamboThreadInput() }), {
      wrapper: wrapperFor(connection(server()))
    })
    let id = ""
    act(() => {
      id = result.current.interactable.addInteractableComponent({ name: "Counter", description: "A counter", props: { count: 1 } })
      result.current.interactable.setInteractableSelected(id, true)
      result.current.input.setValue("this one")
    })
    await act(() => expect(result.current.input.submit()).rejects.toMatchObject({ _tag: "ApiError" }))
    await waitFor(() => expect(result.current.input.isPending).toBe(false))
    expect(result.current.input.value).toBe("this one")
    expect(result.current.interactable.getInteractableComponent(id)?.isSelected).toBe(true)

    server().setScript([Script.text("ok")])
    await act(() => result.current.input.submit())
    expect(result.current.interactable.getInteractableComponent(id)?.isSelected).toBe(false)
    expect(runBodies().map((body) => body.message.additionalContext?.interactables?.components[0]!["isSelected"])).toEqual([
      true,
      true
    ])
  })

  it("an id no tool name may hold throws a ToolDefinitionError", () => {
    const { result } = renderHook(() => useTamboInteractable(), { wrapper: wrapperFor(connection(server())) })
    const add = (id: string) => () =>
      result.current.addInteractableComponent({ id, name: "Note", description: "A note", props: {} })
    expect(add("has spaces")).toThrow(ToolDefinitionError)
    expect(add("x".repeat(38))).toThrow(expect.objectContaining({ reason: "InvalidName" }))
    expect(result.current.interactableComponents).toEqual([])
  })

  it("a props schema that is not a schema throws a ToolDefinitionError and adds nothing", () => {
    const { result } = renderHook(() => useTamboInteractable(), { wrapper: wrapperFor(connection(server())) })
    const add = () =>
      result.current.addInteractableComponent({
        name: "Note",
        description: "A note",
        props: {},
        propsSchema: (() => "not a schema") as never
      })
    expect(add).toThrow(ToolDefinitionError)
    expect(add).toThrow(expect.objectContaining({ reason: "UnsupportedSchema" }))
    expect(result.current.interactableComponents).toEqual([])
  })
})

describe("useCurrentInteractablesSnapshot", () => {
  it("is a copy: changing it changes nothing", async () => {
    let snapshot: ReturnType<typeof useCurrentInteractablesSnapshot> = []
    let live: ReturnType<typeof useTamboInteractable> | undefined
    const Probe = () => {
      snapshot = useCurrentInteractablesSnapshot()
      live = useTamboInteractable()
      return null
    }
    render(
      <TamboProvider {...connection(server())}>
        <Page />
        <Probe />
      </TamboProvider>
    )
    await waitFor(() => expect(snapshot.length).toBe(1))
    snapshot[0]!.props["text"] = "mutated"
    expect(live?.getInteractableComponent("Note-1")?.props).toEqual({ text: "first draft" })
    expect(noteValue()).toBe("first draft")
  })
})
