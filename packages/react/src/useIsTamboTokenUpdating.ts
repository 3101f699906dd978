/**
 * `useIsTamboTokenUpdating`: whether the user token is being exchanged.
 *
 * @since 0.2.0
 */
import { useSyncExternalStore } from "react"
import { useTamboContext } from "./internal/context.js"

const notUpdating = () => false

/**
 * Whether the provider's client is exchanging its user token for an access
 * token (the first exchange, a refresh before expiry, a rotated token, a
 * re-exchange after a 401). Always `false` with a `userKey`.
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
