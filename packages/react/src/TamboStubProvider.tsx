/**
 * `TamboStubProvider`: the hooks over a fixed thread, with no server, for
 * tests and stories.
 *
 * @since 0.2.0
 */
import {
  type ClientState,
  InMemoryStore,
  TamboClient,
  type TamboClientOptions,
  type TamboThread,
  type TamboThreadMessage,
  type ToolDefinition
} from "@tambo-effect/client"
import { makeThreadState } from "@tambo-effect/core/ClientState"
import { type ReactNode, useEffect, useRef, useState } from "react"
import { ClientHandle, useHandleClient, useRetainedHandle } from "./internal/clientHandle.js"
import { InputScope } from "./internal/context.js"
import { InputStore } from "./internal/inputStore.js"
import { TamboProvider } from "./TamboProvider.js"
import type { TamboComponent } from "./types.js"

/**
 * The props of {@link TamboStubProvider}: `@tambo-ai/react`'s.
 *
 * @since 0.2.0
 * @category Models
 */
export interface TamboStubProviderProps {
  readonly children?: ReactNode
  /** The thread shown: a whole thread, or only its messages. Default: no messages. */
  readonly thread?: TamboThread | { readonly messages: ReadonlyArray<TamboThreadMessage> } | undefined
  /** The thread's id. Default: `thread.id`, else `"stub_thread"`. */
  readonly threadId?: string | undefined
  /** Generative components, rendered in the messages. */
  readonly components?: ReadonlyArray<TamboComponent> | undefined
  readonly tools?: ReadonlyArray<ToolDefinition> | undefined
  readonly userKey?: string | undefined
  /** The input's initial text (`useTamboThreadInput`). */
  readonly inputValue?: string | undefined
  /** Shows the thread as streaming (`useTambo().isStreaming`). */
  readonly isStreaming?: boolean | undefined
  /** `useTamboThreadInput().submit`. Default: clears the input and resolves with the thread's id. */
  readonly onSubmit?: (() => Promise<{ readonly threadId: string }>) | undefined
  /** `useTamboThreadInput().setValue`, given the new text. Default: sets it. */
  readonly onSetValue?: ((value: string) => void) | undefined
  /** `useTambo().startNewThread`. Default: returns a new `stub_…` id and changes nothing. */
  readonly onStartNewThread?: (() => string) | undefined
  /** `useTambo().switchThread`. Default: changes nothing. */
  readonly onSwitchThread?: ((threadId: string | null) => void) | undefined
  /** Accepted for `@tambo-ai/react` compatibility: this SDK has no `initThread`, so it is never called. */
  readonly onInitThread?: ((threadId: string) => void) | undefined
}

type Overrides = Pick<TamboStubProviderProps, "onSubmit" | "onSetValue" | "onStartNewThread" | "onSwitchThread">

/** Nothing listens there: a request the app makes anyway (`sendMessage`) fails at once. */
const NOWHERE = "http://127.0.0.1:9"
const EPOCH = "1970-01-01T00:00:00.000Z"

const stateOf = (
  data: TamboStubProviderProps["thread"],
  threadId: string,
  isStreaming: boolean
): ClientState => {
  const thread: TamboThread = data !== undefined && "id" in data && "status" in data
    ? data
    : {
      id: threadId,
      messages: [...(data?.messages ?? [])],
      status: "idle",
      createdAt: EPOCH,
      updatedAt: EPOCH,
      lastRunCancelled: false
    }
  return {
    threadMap: {
      [threadId]: { ...makeThreadState(threadId, 0), thread, streaming: { status: isStreaming ? "streaming" : "idle" } }
    },
    currentThreadId: threadId
  }
}

/** A client whose thread changes go to the stub's props, not to a server. */
class StubClient extends TamboClient {
  readonly #overrides: () => Overrides

  constructor(options: TamboClientOptions, overrides: () => Overrides) {
    super(options)
    this.#overrides = overrides
  }

  override startNewThread(): string {
    return this.#overrides().onStartNewThread?.() ?? `stub_${Math.random().toString(36).slice(2, 12)}`
  }

  override switchThread(threadId: string): Promise<void> {
    this.#overrides().onSwitchThread?.(threadId)
    return Promise.resolve()
  }
}

/** The input of the stub: `onSetValue` and `onSubmit` instead of a run. */
class StubInputStore extends InputStore {
  readonly #overrides: () => Overrides
  readonly #threadId: () => string

  constructor(value: string, overrides: () => Overrides, threadId: () => string) {
    super()
    super.setValue(value)
    this.#overrides = overrides
    this.#threadId = threadId
  }

  override setValue(value: string): void {
    const onSetValue = this.#overrides().onSetValue
    if (onSetValue === undefined) super.setValue(value)
    else onSetValue(value)
  }

  override submit(): Promise<{ readonly threadId: string }> {
    const onSubmit = this.#overrides().onSubmit
    if (onSubmit !== undefined) return onSubmit()
    super.setValue("")
    return Promise.resolve({ threadId: this.#threadId() })
  }
}

/**
 * Renders its children with every Tambo hook working over a fixed thread,
 * without a server: `useTambo()` shows `thread`'s messages (generative
 * components rendered with `components`), `isStreaming` sets the run's
 * status, `useTamboThreadInput()` starts with `inputValue`. Submitting,
 * starting and switching threads call the `on…` props (by default they
 * change nothing on the thread). The thread follows the props when they
 * change. A call that needs a server (`sendMessage`, thread lists) fails
 * at once.
 *
 * @example
 * ```tsx
 * render(
 *   <TamboStubProvider thread={{ messages: [hello, reply] }} components={[WeatherCard]}>
 *     <Chat />
 *   </TamboStubProvider>
 * )
 * ```
 *
 * @since 0.2.0
 * @category Components
 */
export function TamboStubProvider(props: TamboStubProviderProps): ReactNode {
  const { children, components, inputValue = "", isStreaming = false, thread, tools, userKey } = props
  const threadId = props.threadId ?? (thread !== undefined && "id" in thread ? thread.id : "stub_thread")
  const latest = useRef({ props, threadId })
  latest.current = { props, threadId }
  const overrides = () => latest.current.props

  const [handle] = useState(() =>
    new ClientHandle(
      () =>
        new StubClient({
          apiKey: "stub",
          tamboUrl: NOWHERE,
          userKey: userKey ?? "stub-user",
          maxRetries: 0,
          autoGenerateThreadName: false,
          reconcileAfterRun: false,
          store: new InMemoryStore(stateOf(thread, threadId, isStreaming))
        }, overrides),
      "microtask"
    )
  )
  useRetainedHandle(handle)
  const client = useHandleClient(handle)
  useEffect(() => {
    client.getStore().setState(stateOf(thread, threadId, isStreaming))
  }, [client, thread, threadId, isStreaming])

  const [input] = useState(() => new StubInputStore(inputValue, overrides, () => latest.current.threadId))
  return (
    <TamboProvider client={client} components={components} tools={tools} updates="microtask">
      <InputScope input={input}>{children}</InputScope>
    </TamboProvider>
  )
}


