// @vitest-environment happy-dom
import { renderHook, screen, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { memo } from "react"
import { describe, expect, it } from "vitest"
import {
  PLACEHOLDER_THREAD_ID,
  type ReactTamboThreadMessage,
  type TamboToolUseContent,
  useTambo,
  useTamboSelector
} from "../src/index.js"
import {
  connection,
  holdingProxy,
  jwtFor,
  madeUpWeather,
  otherClientRunning,
  until,
  useServer,
  WeatherCard,
  weatherTool,
  whenRendered,
  wrapperFor
} from "./helpers.js"

const server = useServer()

const textOf = (message: ReactTamboThreadMessage | undefined): string =>
  (message?.content ?? []).flatMap((block) => (block.type === "text" ? [block.text] : [])).join("")

describe("useTambo", () => {
  it("streams a reply into the current thread", async () => {
    let goOn!: () => void
    const shown = new Promise<void>((resolve) => (goOn = resolve))
    // The reply goes on once the hook showed it streaming its first word, however long that took.
    server().setScript([Script.text("Hello"), Script.hold(shown), Script.text([",", " world"])])
    const { result } = renderHook(() => useTambo(), { wrapper: wrapperFor(connection(server())) })
    expect(result.current.currentThreadId).toBe(PLACEHOLDER_THREAD_ID)
    expect(result.current.isIdle).toBe(true)

    const stream = result.current.sendMessage("Hi")
    await waitFor(() => expect(result.current.isStreaming).toBe(true))
    await waitFor(() => expect(textOf(result.current.messages.at(-1))).toMatch(/^Hello/))
    expect(result.current.isIdle).toBe(false)
    goOn()
    const thread = await stream.thread
    await waitFor(() => expect(result.current.isIdle).toBe(true))

    expect(result.current.currentThreadId).toBe(thread.id)
    expect(result.current.thread?.thread.id).toBe(thread.id)
    expect(result.current.messages.map((message) => message.role)).toEqual(["user", "assistant"])
    expect(textOf(result.current.messages[0])).toBe("Hi")
    expect(textOf(result.current.messages[1])).toBe("Hello, world")
    expect(result.current.streamingState.status).toBe("idle")
  })

  it("runs the client-side tool and renders the generative component with its streamed props", async () => {
    // The weather assistant, slowed down so the props visibly stream.
    server().setScript(async (request, context) => [Script.pace(15), ...(await Script.weatherAssistant(request, context))])
    const loading: Array<string | undefined> = []
    const Card = {
      ...WeatherCard,
      loadingComponent: ({ city }: { readonly city?: string }) => {
        loading.push(city)
        return <div data-testid="weather-loading">{city}</div>
      }
    }
    const calls: Array<string> = []
    const tool = { ...weatherTool, tool: ({ city }: { readonly city: string }) => (calls.push(city), madeUpWeather(city)) }
    const Chat = () => {
      const { messages } = useTambo()
      return (
        <ul>
          {messages.map((message) => (
            <li key={message.id} data-role={message.role}>
              {message.content.map((block, index) =>
                block.type === "text"
                  ? <p key={index}>{block.text}</p>
                  : block.type === "component"
                  ? <div key={block.id}>{block.renderedComponent}</div>
                  : block.type === "tool_use"
                  ? <i key={block.id} data-testid="tool">{block.statusMessage}</i>
                  : null
              )}
            </li>
          ))}
        </ul>
      )
    }
    const { result } = renderHook(() => useTambo(), {
      wrapper: ({ children }) => {
        const Wrapper = wrapperFor(connection(server(), { tools: [tool], components: [Card] }))
        return <Wrapper><Chat />{children}</Wrapper>
      }
    })
    const thread = await result.current.sendMessage("What is the weather in Paris?").thread
    expect(calls).toEqual(["Paris"])

    const card = await screen.findByTestId("weather-card")
    expect(card.textContent).toBe("Paris: 21° sunny")
    expect(card.dataset["success"]).toBe("true")
    expect(screen.queryByTestId("weather-loading")).toBeNull()
    // While the props streamed, the loading component showed them partial.
    expect(loading).toContain("Paris")
    expect(screen.getByTestId("tool").textContent).toBe("Called get_weather")

    const messages = result.current.messages
    const toolUse = messages.flatMap((m) => m.content).find((b): b is TamboToolUseContent => b.type === "tool_use")
    expect(toolUse).toMatchObject({ name: "get_weather", input: { city: "Paris" }, hasCompleted: true })
    const component = messages.flatMap((m) => m.content).find((b) => b.type === "component")
    expect(component).toMatchObject({
      name: "WeatherCard",
      props: { city: "Paris", temperature: 21, conditions: "sunny" },
      streamingState: "done"
    })
    expect(thread.messages.length).toBe(messages.length)
  })

  it("cancels a slow run and settles", async () => {
    server().setScript([Script.pace(30), Script.text(["one", " two", " three", " four", " five", " six"]), Script.hang()])
    const { result } = renderHook(() => useTambo(), { wrapper: wrapperFor(connection(server())) })
    const stream = result.current.sendMessage("Count")
    const outcome = stream.thread.then(() => "finished", (error: Error) => error.name)
    await waitFor(() => expect(textOf(result.current.messages.at(-1))).toMatch(/two/))
    await result.current.cancel()
    expect(await outcome).toBe("AbortError")
    await waitFor(() => expect(result.current.isIdle).toBe(true))
    expect(result.current.thread?.thread.lastRunCancelled).toBe(true)
    await until(() => server().cancels.length === 1, "the server to record the cancel")
    expect(server().cancels[0]?.threadId).toBe(result.current.currentThreadId)
    // Cancelling when nothing runs does nothing.
    await result.current.cancel()
  })

  it("cancel in a new chat before the server answered the message: the server cancels the run once its answer names it, the message stays where the server has it, and the next message goes on that thread", async () => {
    let answer!: (script: Script.Script) => void
    const answered = new Promise<Script.Script>((resolve) => (answer = resolve))
    server().setScript(Script.beforeResponse((request) => request.text === "slow" ? answered : [Script.text(`re: ${request.text}`)]))
    const { result } = renderHook(() => useTambo(), { wrapper: wrapperFor(connection(server())) })
    const stopped = result.current.sendMessage("slow")
    await until(() => server().requests.some((request) => request.path === "/v1/threads/runs"), "the message's request")
    const cancelling = result.current.cancel()
    answer([Script.text("slow..."), Script.hang()])
    await cancelling
    await expect(stopped.thread).rejects.toMatchObject({ _tag: "AbortError", reason: "CancelledByClient" })
    expect(server().cancels.map((cancel) => cancel.reason)).toEqual(["user_cancelled"])
    const threadId = result.current.currentThreadId
    await waitFor(() => expect(result.current.messages.map((m) => textOf(m))).toContain("slow"))
    expect(server().threads.get(threadId)?.runStatus).toBe("idle")
    await result.current.sendMessage("next").thread
    await waitFor(() => expect(result.current.messages.map((m) => textOf(m)).slice(-2)).toEqual(["next", "re: next"]))
    expect(result.current.currentThreadId).toBe(threadId)
    expect(result.current.isIdle).toBe(true)
  })

  it("cancel of another client's run a read showed rejects when the server refuses to cancel it: the run goes on", async () => {
    const { other, id, busy } = await otherClientRunning(server(), [Script.text("working")])
    await until(() => server().threads.get(id)?.runStatus === "streaming", "the other client's run to stream")
    const proxy = await holdingProxy(server())
    const { result } = renderHook(() => useTambo(), { wrapper: wrapperFor(connection(server(), { tamboUrl: proxy.url })) })
    await result.current.switchThread(id)
    await waitFor(() => expect(result.current.isStreaming).toBe(true))
    const refused = proxy.holdRequest((request) => request.method === "DELETE")
    refused.fail(500, { title: "Internal Server Error", status: 500 })
    await expect(result.current.cancel()).rejects.toMatchObject({ _tag: "ApiError", status: 500 })
    // The run goes on, as the state still shows.
    expect(server().threads.get(id)?.runStatus).toBe("streaming")
    expect(result.current.isStreaming).toBe(true)
    await other.cancelRun(id)
    await busy.thread.catch(() => undefined)
    await other.destroy()
  })

  it("sending while a run streams: rejected by default, queued or interrupting on request", async () => {
    let secondGoesOn!: () => void
    const sent = new Promise<void>((resolve) => (secondGoesOn = resolve))
    // The second reply streams until the third message was sent, however long that took.
    server().setScript((request) => [
      Script.text("re: "),
      ...(request.text === "second" ? [Script.hold(sent)] : []),
      Script.text(request.text)
    ])
    const { result } = renderHook(() => useTambo(), { wrapper: wrapperFor(connection(server())) })
    await result.current.sendMessage("first").thread
    const running = result.current.sendMessage("second")
    await waitFor(() => expect(result.current.isStreaming).toBe(true))
    await expect(result.current.sendMessage("rejected").thread).rejects.toMatchObject({ _tag: "RunConflictError" })
    const third = result.current.sendMessage("third", { onBusy: "queue" })
    secondGoesOn()
    const queued = await third.thread
    await running.thread
    expect(queued.messages.map((m) => textOf(m))).toEqual(["first", "re: first", "second", "re: second", "third", "re: third"])

    server().setScript([Script.text("slow"), Script.hang()])
    const hanging = result.current.sendMessage("hang")
    await waitFor(() => expect(result.current.isStreaming).toBe(true))
    server().setScript([Script.text("took over")])
    const replaced = await result.current.sendMessage("take over", { onBusy: "interrupt" }).thread
    await expect(hanging.thread).rejects.toMatchObject({ name: "AbortError" })
    await waitFor(() => expect(textOf(result.current.messages.at(-1))).toBe("took over"))
    expect(replaced.id).toBe(result.current.currentThreadId)
  })

  it("in a new chat, a second message sent before the server named the thread: rejected by default, queued on request into the same thread, and the screen stays on it", async () => {
    let open!: () => void
    const opened = new Promise<void>((resolve) => (open = resolve))
    server().setScript(Script.beforeResponse(async (request) => {
      if (request.text === "first") await opened
      return [Script.text(["re: ", request.text])]
    }))
    const { result } = renderHook(() => useTambo(), { wrapper: wrapperFor(connection(server())) })
    const first = result.current.sendMessage("first")
    const created = () => server().requests.filter((r) => r.method === "POST" && r.path === "/v1/threads/runs")
    await until(() => created().length === 1, "the first request")
    expect(result.current.currentThreadId).toBe(PLACEHOLDER_THREAD_ID)
    await expect(result.current.sendMessage("rejected").thread).rejects.toMatchObject({ _tag: "RunConflictError" })
    const queued = result.current.sendMessage("second", { onBusy: "queue" })
    open()
    const [firstThread, secondThread] = await Promise.all([first.thread, queued.thread])
    expect(secondThread.id).toBe(firstThread.id)
    await waitFor(() => expect(result.current.messages.map((m) => textOf(m))).toEqual(["first", "re: first", "second", "re: second"]))
    expect(result.current.currentThreadId).toBe(firstThread.id)
    expect(created()).toHaveLength(1)
  })

  it("starts new threads and switches between them", async () => {
    server().setScript((request) => [Script.text(`Reply to ${request.text}`)])
    const { result } = renderHook(() => useTambo(), { wrapper: wrapperFor(connection(server())) })
    const first = await result.current.sendMessage("first").thread
    await waitFor(() => expect(result.current.messages).toHaveLength(2))

    const placeholder = result.current.startNewThread()
    await waitFor(() => expect(result.current.currentThreadId).toBe(placeholder))
    expect(result.current.messages).toEqual([])
    const second = await result.current.sendMessage("second").thread
    await waitFor(() => expect(textOf(result.current.messages.at(-1))).toBe("Reply to second"))
    expect(second.id).not.toBe(first.id)

    await result.current.switchThread(first.id)
    await waitFor(() => expect(result.current.currentThreadId).toBe(first.id))
    expect(textOf(result.current.messages.at(-1))).toBe("Reply to first")
  })

  it("keeps unchanged messages identical and re-renders only the components whose slice changed", async () => {
    const rendered: Array<string> = []
    // The second reply goes on after its first words once they rendered, so it renders more than
    // once however slow the machine.
    server().setScript((request) => {
      const [start, ...rest] = Script.chunks(`Reply to ${request.text}, at length.`, 12)
      return [Script.text(start!), ...(request.text === "two" ? [Script.hold(whenRendered(rendered, start!))] : []), Script.text(Script.chunks(rest.join(""), 3))]
    })
    const messageRenders = new Map<string, number>()
    const Message = memo(({ message }: { readonly message: ReactTamboThreadMessage }) => {
      messageRenders.set(message.id, (messageRenders.get(message.id) ?? 0) + 1)
      rendered.push(textOf(message))
      return <p>{textOf(message)}</p>
    })
    let threadCountRenders = 0
    const ThreadCount = () => {
      threadCountRenders++
      return <span>{useTamboSelector((state) => Object.keys(state.threadMap).length)}</span>
    }
    const Chat = () => {
      const { messages } = useTambo()
      return <>{messages.map((message) => <Message key={message.id} message={message} />)}</>
    }
    const { result } = renderHook(() => useTambo(), {
      wrapper: ({ children }) => {
        const Wrapper = wrapperFor(connection(server()))
        return <Wrapper><Chat /><ThreadCount />{children}</Wrapper>
      }
    })
    await result.current.sendMessage("one").thread
    await waitFor(() => expect(result.current.isIdle).toBe(true))
    const [userOne, replyOne] = result.current.messages
    const countAfterFirst = threadCountRenders
    const rendersOfFirst = { user: messageRenders.get(userOne!.id), reply: messageRenders.get(replyOne!.id) }

    await result.current.sendMessage("two").thread
    await waitFor(() => expect(result.current.messages).toHaveLength(4))
    await waitFor(() => expect(result.current.isIdle).toBe(true))
    // The first exchange kept its objects, so its message components did not render again.
    expect(result.current.messages[0]).toBe(userOne)
    expect(result.current.messages[1]).toBe(replyOne)
    expect(messageRenders.get(userOne!.id)).toBe(rendersOfFirst.user)
    expect(messageRenders.get(replyOne!.id)).toBe(rendersOfFirst.reply)
    // The streamed reply rendered several times, far fewer than its deltas were many (one per frame at most).
    expect(messageRenders.get(result.current.messages[3]!.id)).toBeGreaterThan(1)
    // A component reading only the number of threads did not render while the second run streamed.
    expect(threadCountRenders).toBe(countAfterFirst)
  })
})

describe("useTambo, as @tambo-ai/react's: registration, auth, renaming", () => {
  it("registerComponent and registerTool at runtime: offered to the model, rendered and called", async () => {
    server().setScript(async (request, context) => await Script.weatherAssistant(request, context))
    const calls: Array<string> = []
    const tool = { ...weatherTool, tool: ({ city }: { readonly city: string }) => (calls.push(city), madeUpWeather(city)) }
    const Chat = () => {
      const { messages } = useTambo()
      return <>{messages.flatMap((m) => m.content.flatMap((b) => (b.type === "component" ? [<div key={b.id}>{b.renderedComponent}</div>] : [])))}</>
    }
    const { result } = renderHook(() => useTambo(), {
      wrapper: ({ children }) => {
        const Wrapper = wrapperFor(connection(server()))
        return (
          <Wrapper>
            <Chat />
            {children}
          </Wrapper>
        )
      }
    })
    expect(Object.keys(result.current.componentList)).toEqual([])
    result.current.registerTool(tool)
    result.current.registerComponent(WeatherCard)
    await waitFor(() => expect(Object.keys(result.current.componentList)).toEqual(["WeatherCard"]))
    expect(Object.keys(result.current.toolRegistry)).toEqual(["get_weather"])
    await result.current.sendMessage("What is the weather in Paris?").thread
    expect(calls).toEqual(["Paris"])
    expect((await screen.findByTestId("weather-card")).textContent).toContain("Paris")
    const body = server().requests.find((r) => r.method === "POST" && r.path === "/v1/threads/runs")!.body as {
      readonly availableComponents?: ReadonlyArray<{ readonly name: string }>
      readonly tools?: ReadonlyArray<{ readonly name: string }>
    }
    expect(body.availableComponents?.map((c) => c.name)).toEqual(["WeatherCard"])
    expect(body.tools?.map((t) => t.name)).toEqual(["get_weather"])
  })

  it("a component's associatedTools are registered with it: offered to the model and called", async () => {
    server().setScript(async (request, context) => await Script.weatherAssistant(request, context))
    const calls: Array<string> = []
    const tool = { ...weatherTool, tool: ({ city }: { readonly city: string }) => (calls.push(city), madeUpWeather(city)) }
    const { result } = renderHook(() => useTambo(), {
      wrapper: wrapperFor(connection(server(), { components: [{ ...WeatherCard, associatedTools: [tool] }] }))
    })
    expect(Object.keys(result.current.toolRegistry)).toEqual(["get_weather"])
    await result.current.sendMessage("What is the weather in Oslo?").thread
    expect(calls).toEqual(["Oslo"])
    const body = server().requests.find((r) => r.method === "POST" && r.path === "/v1/threads/runs")!.body as {
      readonly tools?: ReadonlyArray<{ readonly name: string }>
    }
    expect(body.tools?.map((t) => t.name)).toEqual(["get_weather"])
  })

  it("authState and isIdentified: a userKey is identified; a user token once exchanged", async () => {
    const withKey = renderHook(() => useTambo(), { wrapper: wrapperFor(connection(server())) })
    await waitFor(() => expect(withKey.result.current.authState).toEqual({ status: "identified", source: "userKey" }))
    expect(withKey.result.current.isIdentified).toBe(true)
    const token = jwtFor("user-9", Math.floor(Date.now() / 1000) + 3600)
    const withToken = renderHook(() => useTambo(), {
      wrapper: wrapperFor(connection(server(), { userKey: undefined, userToken: token }))
    })
    await waitFor(() => expect(withToken.result.current.authState).toEqual({ status: "identified", source: "tokenExchange" }))
    expect(withToken.result.current.isIdentified).toBe(true)
  })

  it("cancelRun cancels the current run; updateThreadName renames on the server and in the state", async () => {
    server().setScript([Script.text("Partial"), Script.hang()])
    const { result } = renderHook(() => useTambo(), { wrapper: wrapperFor(connection(server())) })
    const stream = result.current.sendMessage("Hi")
    await waitFor(() => expect(result.current.isStreaming).toBe(true))
    await result.current.cancelRun()
    await expect(stream.thread).rejects.toMatchObject({ name: "AbortError" })
    await waitFor(() => expect(result.current.isIdle).toBe(true))
    const threadId = result.current.currentThreadId
    await result.current.updateThreadName(threadId, "Renamed")
    expect(server().threads.get(threadId)?.name).toBe("Renamed")
    await waitFor(() => expect(result.current.thread?.thread.name).toBe("Renamed"))
  })
})
