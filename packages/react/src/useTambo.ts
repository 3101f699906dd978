/**
 * `useTambo`: the current thread and what to do with it.
 *
 * @since 0.1.0
 */
import type {
  InputMessage,
  RunOptions,
  StreamingState,
  TamboAuthState,
  TamboClient,
  TamboStream,
  ThreadState,
  ToolCallResult,
  ToolDefinition
} from "@tambo-effect/client"
import { getCurrentThreadState } from "@tambo-effect/core/ClientState"
import { useCallback, useMemo, useSyncExternalStore } from "react"
import { useTamboContext } from "./internal/context.js"
import { withInitialMessages } from "./internal/initialMessages.js"
import { takeMessageContext, withTakenContext } from "./internal/messageContext.js"
import { followThread, leftUnsent, messageSentTo } from "./internal/unsent.js"
import type { ReactTamboThreadMessage, TamboComponent } from "./types.js"
import { useTamboRunStatus } from "./useTamboRunStatus.js"
import { useTamboSelector } from "./useTamboSelector.js"
import { selectCurrentThreadId, shownRunStatus } from "./internal/selectors.js"

/**
 * What `useTambo()` returns.
 *
 * @since 0.1.0
 * @category Models
 */
export interface UseTamboReturn {
  /** The provider's client (created on first use). */
  readonly client: TamboClient
  /** The current thread's id: the placeholder until a new conversation's first run started. */
  readonly currentThreadId: string
  /** The current thread and its run (`undefined` only for an unknown id). */
  readonly thread: ThreadState | undefined
  /** Its messages; component blocks carry `renderedComponent`. The same array until they change. */
  readonly messages: ReadonlyArray<ReactTamboThreadMessage>
  /** The run's progress as the state has it (`idle` between two steps of a run; see `isIdle`). */
  readonly streamingState: StreamingState
  /**
   * No run in progress: not even between two steps of a run of this client,
   * nor a run of another client that a read of the thread showed (see
   * `useTamboRunStatus`).
   */
  readonly isIdle: boolean
  /** A run is streaming. */
  readonly isStreaming: boolean
  /** A run is waiting: for its first event, or for client-side tools between two steps. */
  readonly isWaiting: boolean
  /**
   * Sends a message on the current thread (a new one on the placeholder).
   * The returned stream can be ignored: the state updates by itself; its
   * promises reject only if read. The message carries the context
   * attachments and the interactables' selections, as a submit of
   * `useTamboThreadInput` does: they come back exactly when the message is
   * not in the thread once its run ended (refused, or stopped before it
   * reached the thread); a message the server took keeps them, even when
   * its run then failed.
   */
  readonly sendMessage: (message: string | InputMessage, options?: RunOptions) => TamboStream
  /**
   * Answers the tool calls a run waits on (with `autoExecuteTools: false`;
   * see `useTamboPendingToolCalls`) and streams the rest of the run, on the
   * current thread unless `options.threadId` names another.
   */
  readonly continueRun: (results: ReadonlyArray<ToolCallResult>, options?: RunOptions) => TamboStream
  /**
   * Approves a tool call waiting for approval, optionally with edited
   * arguments (see `useTamboPendingApprovals`). Providers reuse call ids:
   * `threadId` says which thread's call. Throws a `ToolError` if none waits
   * under that id, or if, without `threadId`, calls of several threads do.
   */
  readonly approveToolCall: (
    toolCallId: string,
    options?: { readonly args?: unknown; readonly threadId?: string | undefined }
  ) => void
  /** Denies a tool call waiting for approval; the model is told, with `reason`. `threadId` and errors as `approveToolCall`. */
  readonly denyToolCall: (toolCallId: string, reason?: string, options?: { readonly threadId?: string | undefined }) => void
  /**
   * Cancels the current thread's run, also another client's that a read of
   * the thread showed (rejecting if the server did not cancel that one);
   * resolves at once when there is none.
   */
  readonly cancel: () => Promise<void>
  /** Shows a new conversation (the next message creates its thread); returns the placeholder's id. */
  readonly startNewThread: () => string
  /** Makes a thread current, loading it if needed. */
  readonly switchThread: (threadId: string) => Promise<void>
  /**
   * `cancel`, by the name `@tambo-ai/react` gives it.
   *
   * @since 0.2.0
   */
  readonly cancelRun: () => Promise<void>
  /**
   * Renames a thread on the server and in the state.
   *
   * @since 0.2.0
   */
  readonly updateThreadName: (threadId: string, name: string) => Promise<void>
  /**
   * Adds a tool the model may call, for the client's lifetime (and the
   * client made when a tree hidden by `<Activity>` shows again).
   *
   * @since 0.2.0
   */
  readonly registerTool: (tool: ToolDefinition) => void
  /**
   * Adds tools the model may call, for the client's lifetime (and the
   * client made when a tree hidden by `<Activity>` shows again).
   *
   * @since 0.2.0
   */
  readonly registerTools: (tools: ReadonlyArray<ToolDefinition>) => void
  /**
   * Adds a generative component: rendered like the provider's `components`
   * (a prop of the same name wins) and offered to the model, for the
   * provider's lifetime.
   *
   * @since 0.2.0
   */
  readonly registerComponent: (component: TamboComponent) => void
  /**
   * The components the provider renders, by name.
   *
   * @since 0.2.0
   */
  readonly componentList: Readonly<Record<string, TamboComponent>>
  /**
   * The tools the client offers the model, by name.
   *
   * @since 0.2.0
   */
  readonly toolRegistry: Readonly<Record<string, ToolDefinition>>
  /**
   * Who the client acts for: `identified`, `exchanging` a user token, `error`, `invalid`, `unauthenticated`.
   * Before the provider's client is made (a server render, the first render) it is what that
   * client starts as: `identified` with a `userKey` or an `agent`, `exchanging` with a `userToken`.
   *
   * @since 0.2.0
   */
  readonly authState: TamboAuthState
  /**
   * Whether `authState` is `identified`.
   *
   * @since 0.2.0
   */
  readonly isIdentified: boolean
}

const IDLE: StreamingState = { status: "idle" }
const NO_MESSAGES: ReadonlyArray<ReactTamboThreadMessage> = []

/**
 * The current thread: its messages (with generative components rendered),
 * its run's state, and the actions on it (all stable: the same functions
 * for the provider's lifetime). Re-renders when the current thread changed,
 * at most once per animation frame while it streams; for a narrower slice,
 * use {@link useTamboSelector}, and for a transcript updated by a strategy
 * (per word, a few times a second) `useTamboStreamingMessages`.
 *
 * @example
 * ```tsx
 * function Chat() {
 *   const { messages, isStreaming, cancel } = useTambo()
 *   return (
 *     <>
 *       {messages.map((message) => <Message key={messageKey(message)} message={message} />)}
 *       {isStreaming && <button onClick={() => void cancel()}>Stop</button>}
 *     </>
 *   )
 * }
 * ```
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTambo = (): UseTamboReturn => {
  const { components, handle, initialMessages, interactables, registerComponent, renderer } = useTamboContext("useTambo")
  const currentThreadId = useTamboSelector(selectCurrentThreadId)
  const thread = useTamboSelector(getCurrentThreadState)
  const rawMessages = thread?.thread.messages
  const rendered = useMemo(
    () => (rawMessages === undefined ? NO_MESSAGES : renderer.render(rawMessages, currentThreadId)),
    [renderer, rawMessages, currentThreadId]
  )
  const seeds = handle.getInitialMessages(currentThreadId, initialMessages)
  const messages = useMemo(() => withInitialMessages(rendered, seeds), [rendered, seeds])
  const authState = useSyncExternalStore(handle.subscribeToAuthState, handle.authState, handle.authState)
  const componentList = useMemo(() => Object.fromEntries(components), [components])
  const cancel = useCallback(async () => {
    const client = handle.client()
    const state = client.getState()
    const cancelling = client.cancelRun(state.currentThreadId)
    // An idle thread may still have a run of ours starting (nothing streamed yet), which the
    // client cancels; if not, the client asks the server about its last run, which is over. A run
    // the thread shows (ours, or another client's a read found) is cancelled or the caller hears why.
    if (shownRunStatus(getCurrentThreadState(state)) !== "idle") return cancelling
    await cancelling.catch(() => undefined)
  }, [handle])
  const actions = useMemo(() => ({
    sendMessage: (message: string | InputMessage, options?: RunOptions) => {
      const client = handle.client()
      const target = options?.threadId ?? client.getState().currentThreadId
      // Taken for this message (not by the helpers as its run starts), so a message left unsent gives them back.
      const taken = takeMessageContext(handle, client, interactables)
      const sentTo = messageSentTo(client, target, message)
      const stream = client.run(message, withTakenContext(options, taken.additionalContext))
      const endedOn = followThread(stream, target)
      stream.thread.catch((error: unknown) => {
        if (leftUnsent(error, sentTo, endedOn)) taken.giveBack()
      })
      return stream
    },
    continueRun: (results: ReadonlyArray<ToolCallResult>, options: RunOptions = {}) => {
      const client = handle.client()
      const { threadId = client.getState().currentThreadId, ...rest } = options
      return client.continueRun(threadId, results, rest)
    },
    approveToolCall: (toolCallId: string, options?: { readonly args?: unknown; readonly threadId?: string | undefined }) =>
      handle.client().approveToolCall(toolCallId, options),
    denyToolCall: (toolCallId: string, reason?: string, options?: { readonly threadId?: string | undefined }) =>
      handle.client().denyToolCall(toolCallId, reason, options),
    cancel,
    cancelRun: cancel,
    startNewThread: () => handle.client().startNewThread(),
    switchThread: (threadId: string) => handle.client().switchThread(threadId),
    updateThreadName: (threadId: string, name: string) => handle.client().updateThreadName(threadId, name),
    registerTool: (tool: ToolDefinition) => handle.registerTools([tool]),
    registerTools: (tools: ReadonlyArray<ToolDefinition>) => handle.registerTools(tools),
    registerComponent
  }), [handle, interactables, registerComponent])
  const streamingState = thread?.streaming ?? IDLE
  const status = useTamboRunStatus(currentThreadId)
  return useMemo(() => ({
    get client() {
      return handle.client()
    },
    // Read when read: tools registered since the last render are in.
    get toolRegistry() {
      return handle.client().getTools()
    },
    componentList,
    authState,
    isIdentified: authState.status === "identified",
    currentThreadId,
    thread,
    messages,
    streamingState,
    isIdle: status === "idle",
    isStreaming: status === "streaming",
    isWaiting: status === "waiting",
    ...actions
  }), [handle, componentList, authState, currentThreadId, thread, messages, streamingState, status, actions])
}
