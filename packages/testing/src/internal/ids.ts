import { randomBytes, randomUUID } from "node:crypto"

/** Database-style ids (`thr_`, `run_`, `msg_`, `sug_`, `call_`): a prefix and random base64url. */
export const makeId = (prefix: string): string => prefix + randomBytes(12).toString("base64url")

/** The temporary ids the API's model client generates (`message-<uuid>`); the API never rewrites some of them. */
export const temporaryId = (): string => `message-${randomUUID()}`

export const uuid = (): string => randomUUID()
