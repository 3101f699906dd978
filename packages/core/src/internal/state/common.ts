/**
 * What every part of the reducer shares: thread ids, the bookkeeping a thread
 * carries for the reducer, timestamps and own-key record access.
 *
 * @internal
 */
import type { StreamingState } from "../../Types.js"
import type { ThreadState } from "../../ClientState.js"

export const PLACEHOLDER_THREAD_ID = "placeholder"

export const LOCAL_THREAD_PREFIX = "local:"

export const MAX_ANOMALIES = 50

/**
 * Where a tool call or component block sits.
 */
export interface BlockPosition {
  readonly message: number
  readonly block: number
}

/**
 * Tool arguments received so far, and how long they were when last parsed.
 */
export interface ToolArgs {
  readonly raw: string
  readonly parsedLength: number
}

/**
 * The accumulator's bookkeeping. Not part of the public shape of a thread;
 * treat it as opaque. It is rebuilt from the messages whenever it does not
 * match them (for example after a state was serialised and restored).
 */
export interface ThreadInternal {
  /** Message id → position in `thread.messages`. */
  readonly messageIndex: ReadonlyMap<string, number>
  /** `t<toolCallId>` / `c<componentId>` → position of the block. */
  readonly blockIndex: ReadonlyMap<string, BlockPosition>
  /** How many messages the indexes describe. */
  readonly indexedCount: number
  /** Tool calls whose arguments are still streaming. */
  readonly toolArgs: ReadonlyMap<string, ToolArgs>
  /** Components whose props are still streaming. */
  readonly openComponents: ReadonlyArray<string>
  /**
   * Calls whose arguments ended as text that is not a JSON object (cut short or malformed), as it
   * arrived, until the call is answered or started again, its run ends without it pending, or a
   * read of the thread shows the server waits on it no more: their `input` shows what it parses to
   * as far as it goes, which no tool is run on.
   */
  readonly invalidToolArgs?: ReadonlyMap<string, string>
  /** The message whose reasoning chunk is still open (started, not ended): its run's end ends it. */
  readonly openReasoning?: string
  /** An assistant message created to hold reasoning before its text started. */
  readonly ephemeralMessageId?: string
  /** On the placeholder: where its run went once the server named the thread. */
  readonly redirectTo?: string
  /**
   * Messages added locally (USER_MESSAGE, TOOL_RESULTS) under local ids; a
   * later LOAD_THREAD_MESSAGES swaps each for the server's copy.
   */
  readonly optimisticMessageIds?: ReadonlyArray<string>
  /**
   * Position of the user message that opened the current turn. A message the
   * server names with an id from before it belongs to an earlier reply.
   */
  readonly turnStart?: number
  /** Ids the server reused from an earlier turn → the message of this turn that holds their events. */
  readonly messageAliases?: ReadonlyMap<string, string>
  /** This turn's messages whose text ended (TEXT_MESSAGE_END) and did not start again. */
  readonly endedMessages?: ReadonlySet<string>
}

const EPOCH_ISO = "1970-01-01T00:00:00.000Z"

/** Epoch milliseconds → ISO 8601; total: what `Date` cannot represent maps to the epoch. */
export const toIsoString = (epochMs: number): string => {
  const date = new Date(Number.isFinite(epochMs) ? Math.trunc(epochMs) : 0)
  return Number.isNaN(date.getTime()) ? EPOCH_ISO : date.toISOString()
}

export const getOwn = <A>(record: Readonly<Record<string, A>>, key: string): A | undefined =>
  Object.hasOwn(record, key) ? record[key] : undefined

// Plain assignment of "__proto__" would replace the prototype of the map.
export const setOwn = <A>(record: Record<string, A>, key: string, value: A): void => {
  if (key === "__proto__") {
    Object.defineProperty(record, key, { value, writable: true, enumerable: true, configurable: true })
  } else {
    record[key] = value
  }
}

/**
 * A copy of a thread map. Key by key rather than a spread: a map of a few dozen threads or more
 * is a dictionary in V8, which a spread copies more slowly (scratchpad/bench/NOTES.md).
 */
export const copyRecord = <A>(record: Readonly<Record<string, A>>): Record<string, A> => {
  const copy: Record<string, A> = {}
  const keys = Object.keys(record)
  for (let i = 0; i < keys.length; i++) setOwn(copy, keys[i]!, record[keys[i]!]!)
  return copy
}

export const isPlainObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

export const emptyIndex: ReadonlyMap<never, never> = new Map<never, never>()

const emptyInternal: ThreadInternal = {
  messageIndex: emptyIndex,
  blockIndex: emptyIndex,
  indexedCount: 0,
  toolArgs: emptyIndex,
  openComponents: []
}

export const idleStreaming: StreamingState = { status: "idle" }

/** An empty, idle thread created at `at` (epoch milliseconds). */
export const freshThreadState = (threadId: string, at: number): ThreadState => {
  const createdAt = toIsoString(at)
  return {
    thread: {
      id: threadId,
      messages: [],
      status: "idle",
      createdAt,
      updatedAt: createdAt,
      lastRunCancelled: false
    },
    streaming: idleStreaming,
    pendingToolCalls: [],
    anomalies: [],
    internal: emptyInternal
  }
}
