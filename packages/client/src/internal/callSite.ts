/**
 * The stack a facade error shows: the frames of the call that failed, not
 * those of the fiber that failed it (pages of Effect's runtime that say
 * nothing about where the caller went wrong).
 */

/** Where a facade call was made. V8 formats the frames only when `stack` is read, so capturing costs little. */
export interface CallSite {
  readonly stack?: string | undefined
}

// V8 (Node, Chromium): frames below `above` only, after a header line. Elsewhere: every frame, no header.
const captureStackTrace: ((target: object, above?: Function) => void) | undefined =
  (Error as { captureStackTrace?: (target: object, above?: Function) => void }).captureStackTrace

/** The caller's frames, from the frame that called `above`. */
export const capture = (above: Function): CallSite => {
  if (captureStackTrace === undefined) return { stack: new Error().stack }
  const site: { stack?: string } = {}
  captureStackTrace(site, above)
  return site
}

/**
 * Gives `error` the stack of the call it answers: its name and message, then
 * the caller's frames. Its `cause` is left as it is.
 */
export const attach = <E>(error: E, site: CallSite): E => {
  if (!(error instanceof Error) || site.stack === undefined) return error
  const newline = site.stack.indexOf("\n")
  const frames = captureStackTrace === undefined ? site.stack : newline === -1 ? "" : site.stack.slice(newline + 1)
  Object.defineProperty(error, "stack", {
    value: `${Error.prototype.toString.call(error)}\n${frames}`,
    writable: true,
    enumerable: false,
    configurable: true
  })
  return error
}
