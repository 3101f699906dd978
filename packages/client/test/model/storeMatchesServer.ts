// The store-equals-server invariant of the model-based test: the comparison core's tests use, over
// the facade's state (the same `ClientState`).
import type { TestServer } from "@tambo-effect/testing"
import { storeEqualsServer } from "../../../core/test/storeEqualsServer.js"
import type { ClientState } from "../../src/index.js"

export { CLIENT_ONLY_FIELDS } from "../../../core/test/storeEqualsServer.js"

/**
 * Asserts that the thread `threadId` in the client's state equals the server's, as
 * `GET /v1/threads/{id}` with its messages returns it (to `userKey`, the thread's owner), but for the
 * fields only the client keeps.
 * Rejects with the diff otherwise.
 */
export const storeMatchesServer = (state: ClientState, server: TestServer, threadId: string, userKey?: string): Promise<void> =>
  storeEqualsServer(state, server, threadId, userKey)
