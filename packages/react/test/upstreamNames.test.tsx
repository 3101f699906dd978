// @vitest-environment happy-dom
// Code written against `@tambo-ai/react` 1.3 imports its names from this package: every name that
// package exports is exported here, and the providers and hooks among them behave as their names
// promise, against the testing server.
import { act, fireEvent, render, renderHook, screen, waitFor } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import * as TamboReact from "../src/index.js"
import {
  type AcceptSuggestionOptions,
  type APIError,
  ComponentContentProvider,
  type ComponentContentContext,
  type ComponentContextToolMetadata,
  type ComponentRegistry,
  type ContextHelpers,
  type ListResourceItem,
  MCPTransport,
  type MessageGetResponse,
  type MessageListResponse,
  type MessageRole,
  type NormalizedMcpServerInfo,
  type ParameterSpec,
  type RateLimitError,
  type ReadResourceResult,
  type RegisteredComponent,
  type ResourceContent,
  type ResourceSource,
  type SuggestionGenerateParams,
  type SuggestionGenerateResponse,
  type SuggestionListResponse,
  type TamboAIError,
  type TamboAuthState,
  type TamboComponent,
  type TamboConfig,
  TamboMessageProvider,
  TamboProvider,
  TamboThreadInputProvider,
  type TamboThreadInputContextProps,
  type TamboThreadMessage,
  type TamboToolDisplayProps,
  type ThreadCreateResponse,
  type ThreadListResponse,
  type ThreadRetrieveResponse,
  type ToolAnnotations,
  type ToolChoice,
  useComponentContent,
  useTambo,
  useTamboComponentState,
  useTamboConfig,
  useTamboCurrentComponent,
  useTamboCurrentMessage,
  useTamboThreadInput
} from "../src/index.js"
import { connection, useServer, wrapperFor } from "./helpers.js"

const server = useServer()

/** The values `@tambo-ai/react` 1.3 exports (`react-sdk/src/v1/index.ts`); its types are imported above. */
const UPSTREAM_VALUES = [
  "ComponentContentProvider",
  "ComponentRenderer",
  "MCPTransport",
  "TamboClientProvider",
  "TamboContextHelpersProvider",
  "TamboMessageProvider",
  "TamboProvider",
  "TamboRegistryProvider",
  "TamboStubProvider",
  "TamboThreadInputProvider",
  "currentPageContextHelper",
  "currentTimeContextHelper",
  "defineTool",
  "useComponentContent",
  "useCurrentInteractablesSnapshot",
  "useIsTamboTokenUpdating",
  "useMessageImages",
  "useTambo",
  "useTamboClient",
  "useTamboComponentState",
  "useTamboConfig",
  "useTamboContextAttachment",
  "useTamboContextHelpers",
  "useTamboCurrentComponent",
  "useTamboCurrentMessage",
  "useTamboInteractable",
  "useTamboStreamStatus",
  "useTamboSuggestions",
  "useTamboThread",
  "useTamboThreadInput",
  "useTamboThreadList",
  "useTamboVoice",
  "withTamboInteractable"
] as const


// Each upstream type name resolves: this is checked by the typecheck, and fails it if one goes.
type UpstreamTypes = [
  AcceptSuggestionOptions,
  APIError,
  ComponentContentContext,
  ComponentContextToolMetadata,
  ComponentRegistry,
  ContextHelpers,
  ListResourceItem,
  MessageGetResponse,
  MessageListResponse,
  MessageRole,
  NormalizedMcpServerInfo,
  ParameterSpec,
  RateLimitError,
  ReadResourceResult,
  RegisteredComponent,
  ResourceContent,
  ResourceSource,
  SuggestionGenerateParams,
  SuggestionGenerateResponse,
  SuggestionListResponse,
  TamboAIError,
  TamboAuthState,
  TamboConfig,
  TamboThreadInputContextProps,
  TamboToolDisplayProps,
  ThreadCreateResponse,
  ThreadListResponse,
  ThreadRetrieveResponse,
  ToolAnnotations,
  ToolChoice
]
const upstreamTypeCount: UpstreamTypes["length"] = 30

describe("the names of @tambo-ai/react", () => {
  it("every value it exports is exported here", () => {
    const exported = TamboReact as Record<string, unknown>
    expect(UPSTREAM_VALUES.filter((name) => exported[name] === undefined)).toEqual([])
    expect(upstreamTypeCount).toBe(30)
  })

  it("MCPTransport names the transports an MCP server's transport takes", () => {
    expect(MCPTransport).toEqual({ SSE: "sse", HTTP: "http" })
    const servers: ReadonlyArray<TamboReact.McpServerInfo> = [
      { url: "http://127.0.0.1:1/mcp", transport: MCPTransport.HTTP },
      { url: "http://127.0.0.1:1/sse", transport: MCPTransport.SSE }
    ]
    expect(servers.map((s) => s.transport)).toEqual(["http", "sse"])
  })
})

describe("useTamboConfig", () => {
  it("returns the provider's settings of the conversation, as given", () => {
    const initialMessages = [{ role: "system" as const, content: [{ type: "text" as const, text: "Be brief." }] }]
    const { result } = renderHook(() => useTamboConfig(), {
      wrapper: wrapperFor(connection(server(), { userKey: "user-7", autoGenerateNameThreshold: 5, initialMessages }))
    })
    const config: TamboConfig = result.current
    expect(config).toEqual({ userKey: "user-7", autoGenerateThreadName: false, autoGenerateNameThreshold: 5, initialMessages })
  })

  it("throws outside a provider", () => {
    expect(() => renderHook(() => useTamboConfig())).toThrow("useTamboConfig must be used inside a <TamboProvider>")
  })
})

describe("TamboThreadInputProvider", () => {
  function Composer({ name }: { readonly name: string }) {
    const { setValue, submit, value } = useTamboThreadInput()
    return (
      <div>
        <input data-testid={`${name}-input`} value={value} onChange={(e) => setValue(e.target.value)} />
        <button type="button" data-testid={`${name}-send`} onClick={() => void submit()}>send</button>
      </div>
    )
  }

  it("gives its tree a composer of its own: its value and its submission are not the outer one's", async () => {
    server().setScript((request) => [Script.text(`re: ${request.text}`)])
    const Wrapper = wrapperFor(connection(server()))
    const { result } = renderHook(() => useTambo(), {
      wrapper: ({ children }) => (
        <Wrapper>
          <Composer name="main" />
          <TamboThreadInputProvider>
            <Composer name="side" />
          </TamboThreadInputProvider>
          {children}
        </Wrapper>
      )
    })
    fireEvent.change(screen.getByTestId("main-input"), { target: { value: "from main" } })
    fireEvent.change(screen.getByTestId("side-input"), { target: { value: "from side" } })
    expect((screen.getByTestId("main-input") as HTMLInputElement).value).toBe("from main")
    expect((screen.getByTestId("side-input") as HTMLInputElement).value).toBe("from side")
    fireEvent.click(screen.getByTestId("side-send"))
    await waitFor(() => expect(result.current.messages.map((m) => m.role)).toEqual(["user", "assistant"]))
    await waitFor(() => expect(result.current.isIdle).toBe(true))
    // The side composer sent and cleared its own value; the main one kept its draft.
    expect((screen.getByTestId("side-input") as HTMLInputElement).value).toBe("")
    expect((screen.getByTestId("main-input") as HTMLInputElement).value).toBe("from main")
    expect(server().requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs")).map((r) =>
      (r.body as { message: { content: ReadonlyArray<{ text?: string }> } }).message.content[0]?.text
    )).toEqual(["from side"])
  })
})

describe("TamboMessageProvider", () => {
  const message: TamboThreadMessage = {
    id: "msg_given",
    role: "assistant",
    createdAt: "2026-01-01T00:00:00.000Z",
    content: [
      { type: "text", text: "Here:" },
      { type: "component", id: "comp_given", name: "Card", props: { title: "Oslo" } }
    ]
  }

  function Inspect() {
    const current = useTamboCurrentMessage()
    const component = useTamboCurrentComponent()
    return <span data-testid="inspect">{`${current.id} ${component?.componentId} ${component?.componentName} ${JSON.stringify(component?.props)}`}</span>
  }

  it("gives its tree the message, and its first component", () => {
    render(
      <TamboProvider {...connection(server())}>
        <TamboMessageProvider message={message}>
          <Inspect />
        </TamboMessageProvider>
      </TamboProvider>
    )
    expect(screen.getByTestId("inspect").textContent).toBe(`msg_given comp_given Card {"title":"Oslo"}`)
  })

  it("with interactableMetadata: the component is that interactable", () => {
    function Interactable() {
      const component = useTamboCurrentComponent()
      return <span data-testid="interactable">{`${component?.interactableId} ${component?.componentName} ${component?.description}`}</span>
    }
    render(
      <TamboProvider {...connection(server())}>
        <TamboMessageProvider
          message={{ ...message, content: [] }}
          interactableMetadata={{ id: "note-1", componentName: "Note", description: "a note" }}
        >
          <Interactable />
        </TamboMessageProvider>
      </TamboProvider>
    )
    expect(screen.getByTestId("interactable").textContent).toBe("note-1 Note a note")
  })

  it("a component rendered inside it reads its own message: the nearest wins", async () => {
    function Card() {
      const current = useTamboCurrentMessage()
      return <span data-testid="card-message">{current.id}</span>
    }
    const CardComponent: TamboComponent = {
      name: "Card",
      description: "A card",
      propsSchema: { type: "object", properties: { title: { type: "string" } } },
      component: Card
    }
    server().setScript([Script.component("Card", { title: "Rome" })])
    function Chat() {
      const { messages } = useTambo()
      return (
        <TamboMessageProvider message={message}>
          <Inspect />
          {messages.flatMap((m) => m.content.flatMap((b) => (b.type === "component" ? [<div key={b.id}>{b.renderedComponent}</div>] : [])))}
        </TamboMessageProvider>
      )
    }
    const { result } = renderHook(() => useTambo(), {
      wrapper: ({ children }) => (
        <TamboProvider {...connection(server(), { components: [CardComponent] })}>
          <Chat />
          {children}
        </TamboProvider>
      )
    })
    await act(() => result.current.sendMessage("a card").thread)
    const rendered = await screen.findByTestId("card-message")
    const reply = result.current.messages.at(-1)!
    expect(rendered.textContent).toBe(reply.id)
    expect(screen.getByTestId("inspect").textContent).toMatch(/^msg_given /)
  })
})

describe("ComponentContentProvider and useComponentContent", () => {
  function OwnStar() {
    const where = useComponentContent()
    const [favourite, setFavourite] = useTamboComponentState("favourite", false, 10)
    return (
      <button type="button" data-testid="own-star" aria-pressed={favourite} onClick={() => setFavourite(true)}>
        {`${where.componentName} ${where.componentId} ${where.messageId === "" ? "" : "in a message"}`}
      </button>
    )
  }

  it("a block the app renders itself: the component hooks read and write that block", async () => {
    server().setScript([Script.component("Star", { title: "Lima" }, { id: "comp_own", state: { favourite: false } })])
    // No component registered under that name: the app renders the block itself.
    function Chat() {
      const { currentThreadId, messages } = useTambo()
      const reply = messages.find((m) => m.content.some((b) => b.type === "component"))
      const block = reply?.content.find((b) => b.type === "component")
      if (reply === undefined || block?.type !== "component") return null
      return (
        <ComponentContentProvider threadId={currentThreadId} messageId={reply.id} componentId={block.id} componentName={block.name}>
          <OwnStar />
        </ComponentContentProvider>
      )
    }
    const { result } = renderHook(() => useTambo(), {
      wrapper: ({ children }) => (
        <TamboProvider {...connection(server())}>
          <Chat />
          {children}
        </TamboProvider>
      )
    })
    const { id: threadId } = await act(() => result.current.sendMessage("a card").thread)
    const star = await screen.findByTestId("own-star")
    expect(star.textContent).toBe("Star comp_own in a message")
    expect(star.getAttribute("aria-pressed")).toBe("false")
    fireEvent.click(star)
    await waitFor(() =>
      expect(server().threads.get(threadId)?.messages.flatMap((m) => m.content).find((b) => b.type === "component")?.state)
        .toEqual({ favourite: true })
    )
    expect(screen.getByTestId("own-star").getAttribute("aria-pressed")).toBe("true")
  })

  it("useComponentContent throws outside a rendered component", () => {
    expect(() => renderHook(() => useComponentContent(), { wrapper: wrapperFor(connection(server())) })).toThrow(
      "useComponentContent must be used inside a component rendered by Tambo"
    )
  })
})
