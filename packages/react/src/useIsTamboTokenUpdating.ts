/**
 * `useIsTamboTokenUpdating`: whether requests wait for a user-token exchange.
 *
 * @since 0.2.0
 */
import { useSyncExternalStore } from "react"
import { useTamboContext } from "./internal/context.js"

const notUpdating = () => false

/**
 * Whether the provider's client is exchanging its user token for an access
 * token with none that still works held, so requests wait for it: the first
 * exchange, a rotated token, a re-exchange after a 401, a refresh still in
 * flight when the token held expired. A refresh in the background of a
 * token that still works (and its tries again after a passing failure) is
 * not an update: requests go on with that token meanwhile. Always `false`
 * with a `userKey`.
 *
 * @example
 * ```tsx
 * function Header() {
 *   const updating = useIsTamboTokenUpdating()
 *   return updating ? <Spinner label="Signing in…" /> : null
 * }
 * ```
 *
 * @since 0.2.0
 * @category Hooks
 */
export const useIsTamboTokenUpdating = (): boolean => {
  const { handle } = useTamboContext("useIsTamboTokenUpdating")
  return useSyncExternalStore(handle.subscribeToAuthState, handle.isUpdatingToken, notUpdating)
}
