/**
 * The failures that are AG-UI's own. Until the AG-UI transport is wired into
 * the run loop this class lives here; it then joins `TamboError.ts` and the
 * `TamboError` union (and the client's error table). It carries TamboError's
 * TypeId already, so `isTamboError` knows it.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import { TypeId } from "../../TamboError.js"

/**
 * - `InvalidInput`: the conversation, tools or context cannot be sent as a
 *   `RunAgentInput` (a value JSON cannot carry, two tools of one name, a tool
 *   result for a call the conversation does not have).
 * - `InvalidStateDelta`: a `STATE_DELTA` that is not a JSON Patch, names a
 *   prototype key (`__proto__`, `constructor`, `prototype`), or fails to
 *   apply; `operationIndex` says which operation.
 * - `InvalidMessages`: a `MESSAGES_SNAPSHOT` whose messages are not AG-UI
 *   messages.
 *
 * @since 0.2.0
 * @category Errors
 */
export class AgUiError extends Schema.TaggedError<AgUiError>("@tambo-effect/core/AgUiError")("AgUiError", {
  reason: Schema.Literal("InvalidInput", "InvalidStateDelta", "InvalidMessages"),
  message: Schema.String,
  operationIndex: Schema.optional(Schema.Number)
}) {
  /** @since 0.2.0 */
  readonly [TypeId]: TypeId = TypeId
}
