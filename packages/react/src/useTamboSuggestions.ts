/**
 * `useTamboSuggestions`: suggested next messages for the current thread.
 *
 * @since 0.1.0
 */
import { type ClientState, isAbortError, type Suggestion, type TamboThreadMessage } from "@tambo-effect/client"
import { getCurrentThreadState, isLocalThreadId } from "@tambo-effect/core/ClientState"
import { useCallback, useEffect, useRef, useState } from "react"
import { useTamboContext } from "./internal/context.js"
import { shownRunStatus } from "./internal/selectors.js"
import { messageSentTo } from "./internal/unsent.js"
import type { AcceptSuggestionOptions, TamboQueryOptions } from "./types.js"
import { useQuery } from "./internal/useQuery.js"
import { useTamboSelector } from "./useTamboSelector.js"

/**
 * Options of {@link useTamboSuggestions}.
 *
 * @since 0.1.0
 * @category Models
 */
export interface UseTamboSuggestionsOptions {
  /** How many to generate (default 3). */
  readonly maxSuggestions?: number | undefined
  /** Generate suggestions when the latest assistant message has none (default `true`). */
  readonly autoGenerate?: boolean | undefined
  /**
   * How the suggestions are read again, by TanStack Query's names: with
   * `refetchOnWindowFocus: true` when the page becomes visible again (once
   * older than `staleTime`), and every `refetchInterval` ms. Neither by
   * default.
   *
   * @since 0.2.0
   */
  readonly queryOptions?: Omit<TamboQueryOptions, "enabled"> | undefined
}

/**
 * What {@link useTamboSuggestions} returns.
 *
 * @since 0.1.0
 * @category Models
 */
export interface UseTamboSuggestionsReturn {
  /** The suggestions for the latest assistant message (empty while a run is in progress). */
  readonly suggestions: ReadonlyArray<Suggestion>
  /** `suggestions` once read or generated for that message, by the name TanStack Query gives it; `undefined` before. @since 0.2.0 */
  readonly data: ReadonlyArray<Suggestion> | undefined
  /** Reading or generating. */
  readonly isLoading: boolean
  /** The suggestions are read (or generated) for that message. @since 0.2.0 */
  readonly isSuccess: boolean
  /** Reading them from the API. @since 0.2.0 */
  readonly isFetching: boolean
  /** The generation started last runs, for the latest assistant message. */
  readonly isGenerating: boolean
  /** Why the generation started last failed. @since 0.2.0 */
  readonly generateError: Error | undefined
  /**
   * The suggestion accepted last is being sent (`shouldSubmit`); as for a
   * mutation, an earlier accept's end changes nothing here. @since 0.2.0
   */
  readonly isAccepting: boolean
  /** Why sending the suggestion accepted last failed (a cancellation is not a failure). @since 0.2.0 */
  readonly acceptError: Error | undefined
  readonly isError: boolean
  readonly error: Error | undefined
  /** Generates suggestions for the latest assistant message again. */
  readonly generate: () => Promise<ReadonlyArray<Suggestion>>
  /** Puts the suggestion in the shared input (see `useTamboThreadInput`), and sends it if asked. */
  readonly accept: (options: AcceptSuggestionOptions) => Promise<void>
  readonly selectedSuggestionId: string | undefined
}

const NONE: ReadonlyArray<Suggestion> = []
const NOT_ACCEPTING = { pending: false, error: undefined } as const

interface Target {
  readonly threadId: string
  readonly messageId: string
  readonly key: string
}

/**
 * The ids the client gives messages the server has not named (yet): a
 * reply before its text message started, the user's message before the
 * server stored it. Tool call and tool result messages, which may carry
 * such ids too, are ruled out by their content.
 */
const LOCAL_MESSAGE_ID = /^(?:ephemeral_|local_)/

/**
 * A reply suggestions can be asked for: the assistant's, with text, and no
 * tool call or tool result in it (those the server may store under other
 * ids, and a run that stopped at one is not over for the user).
 */
const isReply = (message: TamboThreadMessage): boolean =>
  message.role === "assistant" &&
  !LOCAL_MESSAGE_ID.test(message.id) &&
  message.content.some((block) => block.type === "text" && block.text.length > 0) &&
  !message.content.some((block) => block.type === "tool_use" || block.type === "tool_result")

/**
 * The thread and message suggestions are for: the latest message, if it is
 * a reply the server knows and the thread is idle: no run of this client on
 * it, nor a run of another client that a read of the thread showed (it may
 * still be writing that message). (While a run's tools run, the thread is
 * idle too, but its latest message is the tool call or its result.)
 */
const selectTarget = (state: ClientState): Target | undefined => {
  const threadState = getCurrentThreadState(state)
  if (threadState === undefined || isLocalThreadId(state.currentThreadId)) return undefined
  if (shownRunStatus(threadState) !== "idle") return undefined
  const messages = threadState.thread.messages
  const latest = messages[messages.length - 1]
  if (latest === undefined || !isReply(latest)) return undefined
  return { threadId: state.currentThreadId, messageId: latest.id, key: `${state.currentThreadId}\u0000${latest.id}` }
}

const sameTarget = (a: Target | undefined, b: Target | undefined): boolean => a?.key === b?.key

/**
 * Suggested next messages for the latest assistant message of the current
 * thread: read from the API once the thread is idle, and generated when
 * there are none (unless `autoGenerate: false`).
 *
 * @example
 * ```tsx
 * const { suggestions, accept } = useTamboSuggestions()
 * suggestions.map((s) => <button key={s.id} onClick={() => void accept({ suggestion: s, shouldSubmit: true })}>{s.title}</button>)
 * ```
 *
 * @since 0.1.0
 * @category Hooks
 */
export const useTamboSuggestions = (options: UseTamboSuggestionsOptions = {}): UseTamboSuggestionsReturn => {
  const { maxSuggestions = 3, autoGenerate = true } = options
  const { handle, input } = useTamboContext("useTamboSuggestions")
  const target = useTamboSelector(selectTarget, sameTarget)
  const key = target?.key
  const [generated, setGenerated] = useState<{ readonly target: string; readonly list: ReadonlyArray<Suggestion> }>()
  const [generating, setGenerating] = useState<{ readonly target: string; readonly error: Error | undefined }>()
  const [selected, setSelected] = useState<string>()

  const { queryOptions = {} } = options
  const listed = useQuery(
    handle,
    key,
    () => target === undefined ? Promise.resolve(NONE) : handle.client().listSuggestions(target.messageId, target.threadId),
    {
      refetchOnFocusAfterMs: queryOptions.refetchOnWindowFocus === true ? queryOptions.staleTime ?? 0 : undefined,
      refetchIntervalMs: queryOptions.refetchInterval === false ? undefined : queryOptions.refetchInterval
    }
  )

  // The generation started last: one started before it (for the thread left, say) changes nothing shown when it ends.
  const latestGeneration = useRef<object | undefined>(undefined)
  const generateFor = useCallback(async (forTarget: Target): Promise<ReadonlyArray<Suggestion>> => {
    const generation = {}
    latestGeneration.current = generation
    setGenerating({ target: forTarget.key, error: undefined })
    try {
      const list = await handle.client().generateSuggestions(forTarget.messageId, forTarget.threadId, { maxSuggestions })
      if (latestGeneration.current === generation) {
        setGenerated({ target: forTarget.key, list })
        setGenerating(undefined)
      }
      return list
    } catch (error) {
      if (latestGeneration.current === generation) {
        setGenerating({ target: forTarget.key, error: error instanceof Error ? error : new Error(String(error)) })
      }
      throw error
    }
  }, [handle, maxSuggestions])

  // Generate once per message when the API has none.
  const autoGenerated = useRef<string | undefined>(undefined)
  const listedEmpty = listed.isSuccess && listed.data !== undefined && listed.data.length === 0
  useEffect(() => {
    if (!autoGenerate || target === undefined || !listedEmpty || autoGenerated.current === target.key) return
    autoGenerated.current = target.key
    generateFor(target).catch(() => undefined)
  }, [autoGenerate, target, listedEmpty, generateFor])

  useEffect(() => setSelected(undefined), [key])

  const generate = useCallback(
    () => (target === undefined ? Promise.resolve(NONE) : generateFor(target)),
    [target, generateFor]
  )
  const [accepting, setAccepting] = useState<{ readonly pending: boolean; readonly error: Error | undefined }>(
    NOT_ACCEPTING
  )
  // As a mutation's state: the accept made last is the one shown.
  const latestAccept = useRef<object | undefined>(undefined)
  const accept = useCallback(async ({ shouldSubmit = false, suggestion }: AcceptSuggestionOptions) => {
    input.setValue(suggestion.detailedSuggestion)
    setSelected(suggestion.id)
    if (!shouldSubmit) return
    const attempt = {}
    latestAccept.current = attempt
    setAccepting({ pending: true, error: undefined })
    try {
      const client = handle.client()
      const target = client.getState().currentThreadId
      await input.submit((text) => client.run(text), undefined, () => target, undefined, (message) => messageSentTo(client, target, message))
      if (latestAccept.current === attempt) setAccepting(NOT_ACCEPTING)
    } catch (error) {
      if (latestAccept.current === attempt) {
        setAccepting({ pending: false, error: isAbortError(error) || !(error instanceof Error) ? undefined : error })
      }
      throw error
    }
  }, [handle, input])

  const isGenerating = key !== undefined && generating?.target === key && generating.error === undefined
  const generateError = key !== undefined && generating?.target === key ? generating.error : undefined
  const suggestions = key === undefined
    ? NONE
    : generated?.target === key
    ? generated.list
    : listed.data ?? NONE
  const error = generateError ?? listed.error
  const hasData = key !== undefined && (generated?.target === key || listed.data !== undefined)
  return {
    suggestions,
    data: hasData ? suggestions : undefined,
    isLoading: listed.isLoading || isGenerating,
    isSuccess: hasData && error === undefined,
    isFetching: listed.isFetching,
    isGenerating,
    generateError,
    isAccepting: accepting.pending,
    acceptError: accepting.error,
    isError: error !== undefined,
    error,
    generate,
    accept,
    selectedSuggestionId: selected
  }
}
