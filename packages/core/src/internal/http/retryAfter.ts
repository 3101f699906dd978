/**
 * `Retry-After` (RFC 9110 §10.2.3): a number of seconds, or an HTTP-date.
 */

/** How long the server asked to wait, in milliseconds; `undefined` if it did not say (or said nonsense). */
export const parseRetryAfter = (value: string | null | undefined, now: number): number | undefined => {
  if (value === undefined || value === null) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  const date = Date.parse(text)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}
