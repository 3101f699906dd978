/**
 * `useTamboPendingApprovals` and `useTamboPendingToolCalls`: the tool calls
 * a run waits on, for a human to approve or for the app to answer.
 *
 * @since 0.1.0
 */
import type {
  ClientState,
  PendingToolCallInfo,
  RunOptions,
  TamboStream,
  ToolCallResult
} from "@tambo-effect/client"
import { getThreadState, PLACEHOLDER_THREAD_ID } from "@tambo-effect/core/ClientState"
import { useCallback, useMemo, useSyncExternalStore } from "react"
import { useTamboContext } from "./internal/context.js"
import { useQuery } from "./internal/useQuery.js"
import { useThreadId } from "./internal/useThreadId.js"
import { useTamboSelector } from "./useTamboSelector.js"

/**
 * A tool call waiting for approval, and how to decide it.
 *
 * @since 0.1.0
 * @category Models
 */
export interface TamboPendingApproval extends PendingToolCallInfo {
  /**
   * Runs the call, with `args` instead of the model's if given (validated by
   * the tool's input schema). Throws a `ToolError` if it is no longer pending.
   */
  readonly approve: (args?: unknown) => void
  /**
   * Tells the model the user denied the call (with `reason`). Throws a
   * `ToolError` if it is no longer pending.
   */
  readonly deny: (reason?: string) => void
}

const NO_APPROVALS: ReadonlyArray<TamboPendingApproval> = []
const NO_CALLS: ReadonlyArray<PendingToolCallInfo> = []

/**
 * The tool calls that wait for approval on the current thread (or
 * `threadId`; a new conversation's local thread id is, once the server
 * named that thread, the thread it became, and once that thread was
 * forgotten or deleted none, with nothing listed): those the client's runs announced with a
 * `CLIENT_APPROVAL_REQUESTED` event (tools with `needsApproval`, when no
 * `onApproval` handler decides). Each item carries the call (`toolName`,
 * decoded `args`) and `approve(args?)` / `deny(reason?)`. An item goes once
 * it is decided or its run ended; the same array until then.
 *
 * @example
 * ```tsx
 * function Approvals() {
 *   const approvals = useTamboPendingApprovals()
 *   return approvals.map((call) => (
 *     <div key={call.toolCallId}>
 *       {call.toolName} {JSON.stringify(call.args)}
 *       <button onClick={() => call.approve()}>Allow</button>
 *       <button onClick={() => call.deny("Not now")}>Deny</button>
 *     </div>
 *   ))
 * }
 * ```
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboPendingApprovals = (threadId?: string): ReadonlyArray<TamboPendingApproval> => {
  const { handle } = useTamboContext("useTamboPendingApprovals")
  const id = useThreadId(handle, threadId)
  const all = useSyncExternalStore(handle.subscribe, handle.getPendingApprovals, handle.getPendingApprovals)
  return useMemo(() => {
    const mine = all.filter((info) => info.threadId === id)
    if (mine.length === 0) return NO_APPROVALS
    return mine.map((info): TamboPendingApproval => ({
      ...info,
      // By thread too: providers reuse call ids, and another thread may wait on the same one.
      approve: (args) =>
        handle.client().approveToolCall(
          info.toolCallId,
          args === undefined ? { threadId: info.threadId } : { args, threadId: info.threadId }
        ),
      deny: (reason) => handle.client().denyToolCall(info.toolCallId, reason, { threadId: info.threadId })
    }))
  }, [all, id, handle])
}

/**
 * What {@link useTamboPendingToolCalls} returns.
 *
 * @since 0.1.0
 * @category Models
 */
export interface UseTamboPendingToolCallsReturn {
  /** The thread (the one the server named, for a new conversation's local thread id it named). */
  readonly threadId: string
  /** The calls it waits on, arguments decoded and validated (`error` says why they are invalid). */
  readonly pendingToolCalls: ReadonlyArray<PendingToolCallInfo>
  /** The calls are being read (from the API for a thread the client does not know). */
  readonly isLoading: boolean
  readonly error: Error | undefined
  /**
   * Answers (some of) the calls and streams the rest of the run:
   * `client.continueRun(threadId, results, options)`.
   */
  readonly continueRun: (results: ReadonlyArray<ToolCallResult>, options?: Omit<RunOptions, "threadId">) => TamboStream
}

/**
 * The tool calls the current thread (or `threadId`; a new conversation's
 * local thread id is, once the server named that thread, the thread it
 * became; once that thread was forgotten or deleted, the id names none,
 * and `error` is the client's `ConfigError` saying so, nothing sent)
 * waits on for results from the app: what a run with `autoExecuteTools: false` ended with, also
 * after a reload (a thread the client does not know is loaded from the
 * API). Empty while a run of this client is in flight on the thread (its
 * calls are then executed, or wait for approval: see
 * {@link useTamboPendingApprovals}). Answer them with `continueRun`. The
 * server does not say which client a call is for: the calls of another
 * client's run (another tab's) waiting on its own tools show too, once a
 * read of the thread found them; nothing here executes them, and an answer
 * from here (or a new message, which answers them as cancelled) makes the
 * server refuse that run's results.
 *
 * @example
 * ```tsx
 * function ManualTools() {
 *   const { pendingToolCalls, continueRun } = useTamboPendingToolCalls()
 *   return pendingToolCalls.map((call) => (
 *     <button key={call.toolCallId} onClick={() => void continueRun([{ toolCallId: call.toolCallId, result: runTool(call) }])}>
 *       Run {call.toolName}
 *     </button>
 *   ))
 * }
 * ```
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboPendingToolCalls = (threadId?: string): UseTamboPendingToolCallsReturn => {
  const { handle } = useTamboContext("useTamboPendingToolCalls")
  const id = useThreadId(handle, threadId)
  // The calls as the state names them (`undefined`: the client does not know the thread).
  const named = useTamboSelector(
    useCallback((state: ClientState) => getThreadState(state, id)?.pendingToolCalls, [id])
  )
  const hasActiveRun = useCallback(() => handle.hasActiveRun(id), [handle, id])
  const running = useSyncExternalStore(handle.subscribe, hasActiveRun, hasActiveRun)
  const ids = named?.map((call) => call.toolCallId).join(",")
  // Decoded by the client (its registry knows the tools' schemas), read again when the calls change.
  // A local id the state holds no thread of is read too: the client refuses it (the thread it named
  // was forgotten or deleted), sending nothing, and the hook shows that error.
  const key = id === PLACEHOLDER_THREAD_ID || running || ids === ""
    ? undefined
    : `${id}\u0000${ids ?? "?"}`
  const query = useQuery(handle, key, () => handle.client().getPendingToolCalls(id), { keepData: true })
  const data = query.data
  const pendingToolCalls = useMemo(() => {
    if (key === undefined || data === undefined) return NO_CALLS
    const current = new Set(named?.map((call) => call.toolCallId))
    const calls = data.filter((call) => call.threadId === id && (named === undefined || current.has(call.toolCallId)))
    return calls.length === 0 ? NO_CALLS : calls
  }, [key, data, id, named])
  const continueRun = useCallback(
    (results: ReadonlyArray<ToolCallResult>, options?: Omit<RunOptions, "threadId">) =>
      handle.client().continueRun(id, results, options),
    [handle, id]
  )
  return useMemo(() => ({
    threadId: id,
    pendingToolCalls,
    isLoading: key !== undefined && query.isLoading,
    error: key === undefined ? undefined : query.error,
    continueRun
  }), [id, pendingToolCalls, key, query.isLoading, query.error, continueRun])
}
