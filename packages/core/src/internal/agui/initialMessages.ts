/**
 * `initialMessages` of a run that opens a new thread, as thread messages: an
 * AG-UI agent keeps no thread, so the client holds them (in the store) and
 * sends them before the user's message, where the Tambo API would seed the
 * thread with them.
 *
 * @internal
 */
import * as Predicate from "effect/Predicate"
import type * as Types from "../../Types.js"

/**
 * `messages` as thread messages, the n-th with id `idOf(n)`.
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const fromInitialMessages = (
  messages: ReadonlyArray<Types.InitialInputMessage>,
  idOf: (index: number) => string,
  createdAt?: string
): Array<Types.TamboThreadMessage> =>
  messages.map((message, index) => ({
    id: idOf(index),
    role: message.role,
    content: [...message.content],
    ...(createdAt === undefined ? {} : { createdAt }),
    ...(Predicate.isRecord(message.metadata) ? { metadata: message.metadata } : {})
  }))
