import type { InitialInputMessage } from "@tambo-effect/client"
import type { ReactTamboThreadMessage } from "../types.js"

const EPOCH = "1970-01-01T00:00:00.000Z"

const textOf = (content: ReadonlyArray<{ readonly type: string; readonly text?: string }>) =>
  content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("")

/** The same message objects for the same seeds: React keys and memos stay put. */
const shown = new WeakMap<ReadonlyArray<InitialInputMessage>, ReadonlyArray<ReactTamboThreadMessage>>()

const asMessages = (seeds: ReadonlyArray<InitialInputMessage>): ReadonlyArray<ReactTamboThreadMessage> => {
  let messages = shown.get(seeds)
  if (messages === undefined) {
    messages = seeds.map((seed, index) => ({
      id: `initial_${index}`,
      role: seed.role,
      content: [...seed.content],
      createdAt: EPOCH
    }))
    shown.set(seeds, messages)
  }
  return messages
}

/**
 * A thread's messages with the initial messages it was opened with in
 * front, until the thread (read from the server after its first run)
 * begins with them itself.
 *
 * @since 0.2.0
 * @category Internal
 */
export const withInitialMessages = (
  messages: ReadonlyArray<ReactTamboThreadMessage>,
  seeds: ReadonlyArray<InitialInputMessage> | undefined
): ReadonlyArray<ReactTamboThreadMessage> => {
  if (seeds === undefined || seeds.length === 0) return messages
  const present = seeds.every((seed, index) => {
    const message = messages[index]
    return message !== undefined && message.role === seed.role && textOf(message.content) === textOf(seed.content)
  })
  return present ? messages : [...asMessages(seeds), ...messages]
}
