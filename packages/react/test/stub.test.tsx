// @vitest-environment happy-dom
import { act, render, renderHook, screen, waitFor } from "@testing-library/react"
import type { ReactNode } from "react"
import { describe, expect, it } from "vitest"
import {
  type TamboStubProviderProps,
  type TamboThreadMessage,
  TamboStubProvider,
  useTambo,
  useTamboThreadInput
} from "../src/index.js"
import { WeatherCard } from "./helpers.js"

const at = "2026-01-01T00:00:00.000Z"
const messages: Array<TamboThreadMessage> = [
  { id: "m1", role: "user", content: [{ type: "text", text: "Weather in Paris?" }], createdAt: at },
  {
    id: "m2",
    role: "assistant",
    content: [
      { type: "text", text: "Here it is" },
      { type: "component", id: "c1", name: "WeatherCard", props: { city: "Paris", temperature: 21, conditions: "sunny" } }
    ],
    createdAt: at
  }
]

const stubWrapper = (props: Omit<TamboStubProviderProps, "children">) => ({ children }: { readonly children?: ReactNode }) => (
  <TamboStubProvider {...props}>{children}</TamboStubProvider>
)

describe("TamboStubProvider", () => {
  it("shows the given messages, with generative components rendered, and no run", () => {
    const { result } = renderHook(() => useTambo(), {
      wrapper: stubWrapper({ thread: { messages }, components: [WeatherCard] })
    })
    expect(result.current.currentThreadId).toBe("stub_thread")
    expect(result.current.messages.map((message) => message.id)).toEqual(["m1", "m2"])
    expect(result.current.isIdle).toBe(true)
    const component = result.current.messages[1]!.content[1]!
    render(<TamboStubProvider components={[WeatherCard]}>{component.type === "component" && component.renderedComponent}</TamboStubProvider>)
    expect(screen.getByTestId("weather-card").textContent).toBe("Paris: 21° sunny")
  })

  it("takes a whole thread and its id, shows it streaming, and follows new props", async () => {
    const thread = {
      id: "thread_123",
      messages: messages.slice(0, 1),
      status: "idle" as const,
      createdAt: at,
      updatedAt: at,
      lastRunCancelled: false
    }
    let props: Omit<TamboStubProviderProps, "children"> = { thread, isStreaming: true }
    const Wrapper = ({ children }: { readonly children?: ReactNode }) => <TamboStubProvider {...props}>{children}</TamboStubProvider>
    const { rerender, result } = renderHook(() => useTambo(), { wrapper: Wrapper })
    expect(result.current.currentThreadId).toBe("thread_123")
    expect(result.current.isStreaming).toBe(true)
    expect(result.current.messages.map((message) => message.id)).toEqual(["m1"])

    props = { thread: { ...thread, messages }, isStreaming: false }
    rerender()
    await waitFor(() => expect(result.current.messages.map((message) => message.id)).toEqual(["m1", "m2"]))
    expect(result.current.isIdle).toBe(true)
  })

  it("the input starts with inputValue; submit clears it and resolves with the thread's id, by default", async () => {
    const { result } = renderHook(() => useTamboThreadInput(), { wrapper: stubWrapper({ inputValue: "draft" }) })
    expect(result.current.value).toBe("draft")
    act(() => result.current.setValue((previous) => `${previous}!`))
    expect(result.current.value).toBe("draft!")
    let submitted: { readonly threadId: string } | undefined
    await act(async () => {
      submitted = await result.current.submit()
    })
    expect(submitted).toEqual({ threadId: "stub_thread" })
    expect(result.current.value).toBe("")
  })

  it("calls onSubmit, onSetValue, onStartNewThread and onSwitchThread instead", async () => {
    const calls: Array<string> = []
    const { result } = renderHook(() => ({ input: useTamboThreadInput(), tambo: useTambo() }), {
      wrapper: stubWrapper({
        thread: { messages },
        onSubmit: async () => (calls.push("submit"), { threadId: "t_custom" }),
        onSetValue: (value) => calls.push(`set ${value}`),
        onStartNewThread: () => (calls.push("new"), "t_new"),
        onSwitchThread: (threadId) => calls.push(`switch ${threadId}`)
      })
    })
    act(() => result.current.input.setValue("hello"))
    await expect(result.current.input.submit()).resolves.toEqual({ threadId: "t_custom" })
    expect(result.current.tambo.startNewThread()).toBe("t_new")
    await result.current.tambo.switchThread("t_other")
    expect(calls).toEqual(["set hello", "submit", "new", "switch t_other"])
    // The thread stays as the props say.
    expect(result.current.tambo.currentThreadId).toBe("stub_thread")
    expect(result.current.tambo.messages).toHaveLength(2)
  })

  it("without onStartNewThread, starting a thread returns a stub id and leaves the thread shown", () => {
    const { result } = renderHook(() => useTambo(), { wrapper: stubWrapper({ thread: { messages } }) })
    expect(result.current.startNewThread()).toMatch(/^stub_/)
    expect(result.current.currentThreadId).toBe("stub_thread")
  })
})
