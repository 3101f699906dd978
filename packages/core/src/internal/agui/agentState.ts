/**
 * The agent's shared state, per thread: `STATE_SNAPSHOT` replaces it,
 * `STATE_DELTA` patches it (RFC 6902, through `internal/jsonPatch.ts`).
 *
 * Pure and total: a refused delta is an `AgUiError` value
 * (`InvalidStateDelta`) and leaves the state as it was, never a throw. A path
 * naming a prototype key (`__proto__`, `constructor`, `prototype`) is refused
 * before anything is applied, so no delta from the network can reach an
 * object's prototype.
 *
 * @since 0.2.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { JsonPatchOperation, type MessagesSnapshotEvent, type StateDeltaEvent, type StateSnapshotEvent } from "../../Events.js"
import { applyPatch } from "../jsonPatch.js"
import { AgUiError } from "./errors.js"
import * as Wire from "./wire.js"

/**
 * Each thread's agent state. Threads without one have none yet (an agent
 * that never sent state gets `{}` sent back).
 *
 * @since 0.2.0
 * @category Models
 */
export type AgentStates = ReadonlyMap<string, unknown>

/**
 * No thread has state.
 *
 * @since 0.2.0
 * @category Constructors
 */
export const empty: AgentStates = new Map()

const decodeOperations = Schema.decodeUnknownEither(Schema.Array(JsonPatchOperation))

const refused = (message: string, operationIndex?: number) =>
  new AgUiError({
    reason: "InvalidStateDelta",
    message,
    ...(operationIndex === undefined ? {} : { operationIndex })
  })

/**
 * One thread's state after a `STATE_SNAPSHOT` or `STATE_DELTA`.
 *
 * @since 0.2.0
 * @category Reducers
 */
export const applyStateEvent = (
  state: unknown,
  event: StateSnapshotEvent | StateDeltaEvent
): Either.Either<unknown, AgUiError> => {
  if (event.type === "STATE_SNAPSHOT") return Either.right(event.snapshot)
  const decoded = decodeOperations(event.delta)
  if (Either.isLeft(decoded)) {
    return Either.left(refused(`STATE_DELTA is not a JSON Patch: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`))
  }
  // applyPatch refuses a pointer through a prototype key before touching anything.
  const patched = applyPatch(state === undefined ? {} : state, decoded.right)
  return patched.ok
    ? Either.right(patched.value)
    : Either.left(
      refused(`STATE_DELTA refused: ${patched.reason} (operation ${patched.operationIndex})`, patched.operationIndex)
    )
}

/**
 * Every thread's state after an event on `threadId`; other threads' states
 * are the same values as before.
 *
 * @since 0.2.0
 * @category Reducers
 */
export const reduce = (
  states: AgentStates,
  threadId: string,
  event: StateSnapshotEvent | StateDeltaEvent
): Either.Either<AgentStates, AgUiError> =>
  Either.map(applyStateEvent(states.get(threadId), event), (state) => new Map(states).set(threadId, state))

/**
 * The thread's state, `{}` if the agent never sent one.
 *
 * @since 0.2.0
 * @category Getters
 */
export const get = (states: AgentStates, threadId: string): unknown => states.has(threadId) ? states.get(threadId) : {}

const decodeMessages = Schema.decodeUnknownEither(Schema.Array(Wire.Message))

/**
 * The conversation a `MESSAGES_SNAPSHOT` replaces the client's with, decoded
 * as AG-UI messages.
 *
 * @since 0.2.0
 * @category Decoding
 */
export const messagesOf = (event: MessagesSnapshotEvent): Either.Either<ReadonlyArray<Wire.Message>, AgUiError> =>
  Either.mapLeft(
    decodeMessages(event.messages),
    (error) =>
      new AgUiError({
        reason: "InvalidMessages",
        message: `MESSAGES_SNAPSHOT holds something that is not an AG-UI message: ${
          ParseResult.TreeFormatter.formatErrorSync(error)
        }`
      })
  )
