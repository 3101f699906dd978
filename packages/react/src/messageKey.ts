/**
 * The React key of a message.
 *
 * @since 0.1.0
 */
import type { TamboThreadMessage } from "@tambo-effect/client"

/**
 * The key to render a message under: stable for the message's lifetime in
 * the client. A message first shown under a local id (the user's message, a
 * reply that began with a tool call) gets the server's id once its run
 * ended, and keeps the local one as `key`; keying by `id` would remount its
 * element, and everything inside it, at that moment.
 *
 * @example
 * ```tsx
 * messages.map((message) => <Message key={messageKey(message)} message={message} />)
 * ```
 *
 * @since 0.1.0
 * @category Utils
 */
export const messageKey = (message: Pick<TamboThreadMessage, "id" | "key">): string => message.key ?? message.id
