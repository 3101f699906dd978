/**
 * `Auth` for an AG-UI agent, which needs no identity: always identified, and
 * the credentials a placeholder the transport ignores (the agent's own
 * credentials go in its `headers`).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Auth from "../../Auth.js"

const identified: Auth.AuthState = { status: "identified", source: "userKey" }

/** The `Auth` service of `AgUi.layerAuth`. */
export const auth: Auth.Auth.Service = Auth.Auth.of({
  state: Effect.succeed(identified),
  changes: Stream.make(identified),
  credentials: Effect.succeed({ _tag: "UserKey", userKey: "ag-ui" }),
  invalidate: () => Effect.void,
  setUserToken: () => Effect.void
})
